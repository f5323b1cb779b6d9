//! What `asm`, `check` and `gen` print with `--json`: one object on stdout, its diagnostics
//! as objects rather than text with carets, and a command that stopped early still one
//! object, with `error`, `stage` and `file` as `run --json` prints it
//! ([`not_run`]).

use super::{emit, CliError};
use gpu16::input::{
    assemble_source, load_program_full, read_source, InputError, LoadedProgram, ProgramFormat,
    SourceError,
};
use gpu16::machine::Dialect;
use gpu16_asm::{Diagnostic, Diagnostics, Finding};
use serde_json::{json, Value};
use std::path::Path;

/// Print `v` on stdout, one line. A stdout that cannot be written is the error.
pub fn print(v: &Value) -> Result<(), CliError> {
    emit(&format!("{v}\n")).map_err(CliError::failed)
}

/// The command stopped before its work: with `json`, print the object for it (`error` the
/// message stderr gets, `stage` what stopped it, `file` the file it names) and give back
/// the error, with a stdout that could not take the object added to it.
pub fn refuse(json: bool, stage: &str, error: CliError, file: Option<&Path>) -> CliError {
    if !json {
        return error;
    }
    let v = not_run(stage, &error.to_string(), file);
    match emit(&format!("{v}\n")) {
        Ok(()) => error,
        Err(stdout) => error.and(stdout),
    }
}

/// [`refuse`] with the object `v` already made.
pub fn refuse_with(v: &Value, error: CliError) -> CliError {
    match emit(&format!("{v}\n")) {
        Ok(()) => error,
        Err(stdout) => error.and(stdout),
    }
}

/// The `--json` object of assembly source `name` that did not assemble: `error` (`NAME: N
/// errors`), `stage` `assemble`, `file`, `errors`, `warnings` and `diagnostics` (one object
/// each, as [`diagnostic`] makes it), rather than the text with carets stderr gets.
pub fn assembly_failed(name: &str, d: &Diagnostics) -> Value {
    let list: Vec<Value> = d.0.iter().map(|x| diagnostic(x, name)).collect();
    json!({
        "error": format!("{name}: {}", errors_text(d.errors())),
        "stage": "assemble",
        "file": name,
        "errors": d.errors(),
        "warnings": d.warnings(),
        "diagnostics": list,
    })
}

/// Source at `path` that did not assemble, as `run --json` and `debug --json` report it: a
/// failure to load, as they always said, whose error (`PATH: assembly failed: N errors`)
/// is the object's `error` and the line stderr gets; the diagnostics are the object's, as
/// objects, rather than inside `error` with their carets.
pub fn assembly_failed_to_load(path: &Path, d: &Diagnostics) -> (Value, CliError) {
    let error = CliError::failed(InputError {
        path: path.to_path_buf(),
        message: format!("assembly failed: {}", errors_text(d.errors())),
    });
    let mut v = assembly_failed(&path.display().to_string(), d);
    v["stage"] = json!("load");
    v["error"] = json!(error.to_string());
    (v, error)
}

/// Why a program did not load ([`load_program`]).
pub enum Unloaded {
    /// It cannot be read, or is no program.
    Input(InputError),
    /// It is assembly source with errors: `error` is what stderr gets (the diagnostics as
    /// text), `diagnostics` the assembler's, for the `--json` object.
    Assembly {
        error: InputError,
        diagnostics: Diagnostics,
    },
}

/// The program at `path` in `format` (`-`: stdin), as `load_program_full` loads it; with
/// `json`, source with errors comes back with its diagnostics, for the `--json` of `run`,
/// `debug` and `diff`. The source is read once and assembled from
/// memory, so a FIFO works as a file.
pub fn load_program(
    path: &Path,
    format: ProgramFormat,
    dialect: Dialect,
    json: bool,
) -> Result<LoadedProgram, Unloaded> {
    if !json || format != ProgramFormat::Assembly {
        return load_program_full(path, format, dialect).map_err(Unloaded::Input);
    }
    let source = read_source(path).map_err(Unloaded::Input)?;
    match assemble_source(&source, path, dialect) {
        Ok(a) => Ok(LoadedProgram {
            program: a.program,
            source_map: Some(a.source_map),
            memory: a.memory,
        }),
        Err(SourceError::Input(e)) => Err(Unloaded::Input(e)),
        Err(SourceError::Assembly(d)) => Err(Unloaded::Assembly {
            error: InputError {
                path: path.to_path_buf(),
                message: format!("assembly failed\n{d}"),
            },
            diagnostics: d,
        }),
    }
}

/// [`refuse`] for an error about the output file `path`: a usage error (an output naming
/// an input) is stage `usage`, any other stage `output`, naming the file.
pub fn refuse_output(json: bool, error: CliError, path: &Path) -> CliError {
    match error {
        CliError::Usage(_) => refuse(json, "usage", error, None),
        _ => refuse(json, "output", error, Some(path)),
    }
}

/// One diagnostic: `severity` (`error`, `warning` or `note`), `file`, `line` and `column`
/// (from 1, the column in characters), `message` (without location or carets) and `notes`
/// (further messages about it: for a line of a macro body, where each enclosing expansion
/// was invoked, innermost first; otherwise `[]`). A problem
/// of a whole input has `line` and `column` null and `file` the input `input`.
pub fn diagnostic(d: &Diagnostic, input: &str) -> Value {
    let (file, line, column) = match &d.span {
        Some(s) => (json!(&*s.file), json!(s.line), json!(s.col)),
        None => (json!(input), Value::Null, Value::Null),
    };
    json!({
        "severity": d.severity.name(),
        "file": file,
        "line": line,
        "column": column,
        "message": d.message,
        "notes": d.notes(),
    })
}

/// [`diagnostic`] of a lint warning, with the `frame` it is about and its `instruction`
/// (the IP, 0..15; null for a finding about a control frame or a whole group), which a
/// binary image has instead of lines.
pub fn finding(d: &Diagnostic, f: &Finding, input: &str) -> Value {
    let mut v = diagnostic(d, input);
    v["frame"] = json!(f.frame);
    v["instruction"] = json!(f.slot);
    v
}

/// `"N error"` or `"N errors"`.
pub fn errors_text(n: usize) -> String {
    format!("{n} error{}", if n == 1 { "" } else { "s" })
}

/// `"N warning"` or `"N warnings"`.
pub fn warnings_text(n: usize) -> String {
    format!("{n} warning{}", if n == 1 { "" } else { "s" })
}

/// Why a run never started, for `--json`: `error` is the message stderr gets, `stage` says
/// what stopped it (`load`: a program or memory file; `usage`: the flags, such as an output
/// naming an input; `output`: an output file it cannot write) and `file` is the file the
/// message names, if one.
pub fn not_run(stage: &str, message: &str, file: Option<&Path>) -> Value {
    let mut v = json!({"error": message, "stage": stage});
    if let Some(file) = file {
        v["file"] = json!(file.display().to_string());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_never_started_has_an_error_string() {
        let v = not_run("load", "p.bin: cannot read", Some(Path::new("p.bin")));
        assert_eq!(
            v,
            json!({"error": "p.bin: cannot read", "stage": "load", "file": "p.bin"})
        );
        assert_eq!(
            not_run("usage", "x", None),
            json!({"error": "x", "stage": "usage"})
        );
    }
}
