//! Assembler, disassembler and checker for gpu16 programs. Source text goes through the
//! lexer, the directive expander and the frame builder to a
//! [`Program`](gpu16_machine::Program); the disassembler
//! turns any loadable image back into source that re-assembles to the same bytes; the
//! checker lints a program, from source or binary. Every entry point has a form for each
//! [`Dialect`] (`assemble_in`, ...); the plain ones are the spec's. `docs/assembly.md` is
//! the reference.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod assemble;
mod blocks;
mod check;
mod cursor;
mod data;
pub mod diagnostics;
mod disasm;
mod excerpt;
mod lexer;
pub mod limits;
mod macros;
mod operands;
mod report;
mod source;

pub use assemble::{Assembly, FrameSource, SourceMap, MAX_GROUP};
pub use check::{check, lint, lint_set_const, warnings, Finding};
/// The expression language's binary operators: how tightly each binds, and its value.
pub use cursor::{binary, precedence};
pub use diagnostics::{Diagnostic, Diagnostics, Expansion, Severity, Span};
pub use disasm::{
    control_line, control_line_in, disassemble, frame_lines, frame_lines_in, frame_lines_labelled,
};
pub use excerpt::escape;
pub use gpu16_machine::Dialect;

use limits::MAX_FILE_BYTES;
use std::io::Read;
use std::path::Path;

/// The text of the file at `path`, read through a reader that stops one byte past
/// [`MAX_FILE_BYTES`], so an endless file (`/dev/zero`) fails at once instead of filling
/// the memory.
fn read_file(path: &Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(source::too_big());
    }
    String::from_utf8(bytes).map_err(|_| "the file is not UTF-8 text".to_string())
}

/// Assemble `source` (named `file` in diagnostics) in the spec dialect. `.include` paths
/// are read from the file system, relative to `file`'s directory.
pub fn assemble(source: &str, file: &str) -> Result<Assembly, Diagnostics> {
    assemble_with(source, file, &read_file)
}

/// [`assemble`] in `dialect`: its instruction forms and `.cf` fields, and its program
/// loaded as the dialect reads it ([`Program::dialect`](gpu16_machine::Program::dialect)).
pub fn assemble_in(source: &str, file: &str, dialect: Dialect) -> Result<Assembly, Diagnostics> {
    assemble_with_in(source, file, &read_file, dialect)
}

/// Assemble in the spec dialect with `load` reading included files (tests give an
/// in-memory one). Whatever `load` returns is held to the limits of [`limits`] like a file
/// read from disk.
pub fn assemble_with(
    source: &str,
    file: &str,
    load: &dyn Fn(&Path) -> Result<String, String>,
) -> Result<Assembly, Diagnostics> {
    assemble_with_in(source, file, load, Dialect::Spec)
}

/// [`assemble_with`] in `dialect`.
pub fn assemble_with_in(
    source: &str,
    file: &str,
    load: &dyn Fn(&Path) -> Result<String, String>,
    dialect: Dialect,
) -> Result<Assembly, Diagnostics> {
    let mut ex = source::Expander::new(load);
    ex.env.dialect = dialect;
    ex.file(source, file);
    let mut report = std::mem::take(&mut ex.report);
    // Items cut short by a limit would only make frames with more (false) problems.
    let assembly = if report.stopped() || ex.exhausted() {
        None
    } else {
        assemble::build(std::mem::take(&mut ex.items), file, dialect, &mut report).map(|a| {
            Assembly {
                memory: ex.data.take().map(data::Data::image),
                ..a
            }
        })
    };
    let diags = report.finish(file);
    match assembly {
        Some(a) if diags.is_empty() => Ok(a),
        _ => Err(Diagnostics(diags)),
    }
}

/// Read and assemble the file at `path` in the spec dialect.
pub fn assemble_file(path: &Path) -> Result<Assembly, Diagnostics> {
    assemble_file_in(path, Dialect::Spec)
}

/// Read and assemble the file at `path` in `dialect`.
pub fn assemble_file_in(path: &Path, dialect: Dialect) -> Result<Assembly, Diagnostics> {
    let name = path.display().to_string();
    match read_file(path) {
        Ok(text) => assemble_in(&text, &name, dialect),
        Err(e) => Err(Diagnostics(vec![Diagnostic::bare(
            Severity::Error,
            name,
            format!("cannot read: {e}"),
        )])),
    }
}
