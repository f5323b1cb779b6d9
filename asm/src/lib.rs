//! Assembler, disassembler and checker for gpu16 programs. Source text goes through the
//! lexer, the directive expander and the frame builder to a [`Program`]; the disassembler
//! turns any loadable image back into source that re-assembles to the same bytes; the
//! checker lints a program, from source or binary. `docs/assembly.md` is the reference.

#![forbid(unsafe_code)]

mod assemble;
mod check;
mod cursor;
pub mod diagnostics;
mod disasm;
mod excerpt;
mod lexer;
pub mod limits;
mod operands;
mod report;
mod source;

pub use assemble::{Assembly, FrameSource, SourceMap, MAX_GROUP};
pub use check::{check, lint, Finding};
pub use diagnostics::{Diagnostic, Diagnostics, Severity, Span};
pub use disasm::{control_line, disassemble, frame_lines};

use std::path::Path;

fn read_file(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

/// Assemble `source` (named `file` in diagnostics). `.include` paths are read from the
/// file system, relative to `file`'s directory.
pub fn assemble(source: &str, file: &str) -> Result<Assembly, Diagnostics> {
    assemble_with(source, file, &read_file)
}

/// Assemble with `load` reading included files (tests give an in-memory one).
pub fn assemble_with(
    source: &str,
    file: &str,
    load: &dyn Fn(&Path) -> Result<String, String>,
) -> Result<Assembly, Diagnostics> {
    let mut ex = source::Expander::new(load);
    ex.file(source, file);
    let mut report = std::mem::take(&mut ex.report);
    // Past the limit of diagnostics the assembler stops: the frames would only add more.
    let assembly = if report.stopped() {
        None
    } else {
        assemble::build(std::mem::take(&mut ex.items), file, &mut report)
    };
    let diags = report.finish(file);
    match assembly {
        Some(a) if diags.is_empty() => Ok(a),
        _ => Err(Diagnostics(diags)),
    }
}

/// Read and assemble the file at `path`.
pub fn assemble_file(path: &Path) -> Result<Assembly, Diagnostics> {
    let name = path.display().to_string();
    match read_file(path) {
        Ok(text) => assemble(&text, &name),
        Err(e) => Err(Diagnostics(vec![Diagnostic::bare(
            Severity::Error,
            name,
            format!("cannot read: {e}"),
        )])),
    }
}
