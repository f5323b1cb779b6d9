//! `gpu16 asm`, `gpu16 disasm` and `gpu16 check`: thin shells over the gpu16-asm crate that
//! choose files and formats, print diagnostics and set the exit status.

use super::{emit, CliError, Finished};
use clap::Args;
use gpu16::input::{load_program, ProgramFormat};
use gpu16::machine::Program;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct AsmArgs {
    /// Assembly source file.
    pub source: PathBuf,
    /// Output file (default: SOURCE with the extension .bin, or stdout with --hex).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Write 16-bit hex words (one frame a line, loadable as .hex) instead of raw bytes.
    #[arg(long)]
    pub hex: bool,
}

#[derive(Args)]
pub struct DisasmArgs {
    /// Program image (.bin, .tm or .hex).
    pub image: PathBuf,
    /// Write the source here instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Program (.bin, .tm, .hex or assembly).
    pub program: PathBuf,
}

/// Report diagnostics on stderr with a count; the exit status says they were errors.
fn fail(diags: &gpu16_asm::Diagnostics) -> Finished {
    let n = diags.errors();
    eprint!("{diags}");
    eprintln!("{n} error{}", if n == 1 { "" } else { "s" });
    Finished::Reported
}

/// `$readmemh`-style words, one frame a line, readable by `gpu16 run prog.hex`.
fn hex_text(program: &Program) -> String {
    let mut out = String::new();
    for f in 0..program.len() {
        let words: Vec<String> = program
            .raw(f)
            .chunks(2)
            .map(|c| format!("{:04x}", u16::from_le_bytes([c[0], c[1]])))
            .collect();
        out.push_str(&format!("{} // frame {f}\n", words.join(" ")));
    }
    out
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes)
        .map_err(|e| CliError::Failed(format!("{}: cannot write: {e}", path.display())))
}

/// `gpu16 asm`: status 0, or 1 for errors in the source or an output it cannot write.
pub fn asm(args: AsmArgs) -> Result<Finished, CliError> {
    let assembly = match gpu16_asm::assemble_file(&args.source) {
        Ok(a) => a,
        Err(d) => return Ok(fail(&d)),
    };
    let program = &assembly.program;
    let out = match (&args.output, args.hex) {
        (None, true) => {
            emit(&hex_text(program)).map_err(CliError::failed)?;
            return Ok(Finished::Success);
        }
        (Some(p), _) => p.clone(),
        (None, false) => args.source.with_extension("bin"),
    };
    if out == args.source {
        return Err(CliError::Failed(format!(
            "{}: the output would overwrite the source; name one with -o",
            out.display()
        )));
    }
    if args.hex {
        write(&out, hex_text(program).as_bytes())?;
    } else {
        write(&out, &program.image())?;
    }
    emit(&format!(
        "{}: {} frames ({} bytes) -> {}\n",
        args.source.display(),
        program.len(),
        program.len() * 32,
        out.display()
    ))
    .map_err(CliError::failed)?;
    Ok(Finished::Success)
}

/// `gpu16 disasm`: status 0, or 1 for a bad image or an output it cannot write.
pub fn disasm(args: DisasmArgs) -> Result<Finished, CliError> {
    let program = load_program(&args.image).map_err(CliError::failed)?;
    let text = gpu16_asm::disassemble(&program);
    match &args.output {
        Some(p) => write(p, text.as_bytes())?,
        None => emit(&text).map_err(CliError::failed)?,
    }
    Ok(Finished::Success)
}

/// `gpu16 check`: status 0 with or without warnings, 1 for load errors or a stdout it
/// cannot write.
pub fn check(args: CheckArgs) -> Result<Finished, CliError> {
    let name = args.program.display().to_string();
    let is_source = matches!(
        ProgramFormat::of(&args.program),
        Ok(ProgramFormat::Assembly)
    );
    let (program, map) = if is_source {
        match gpu16_asm::assemble_file(&args.program) {
            Ok(a) => (a.program, Some(a.source_map)),
            Err(d) => return Ok(fail(&d)),
        }
    } else {
        match load_program(&args.program) {
            Ok(p) => (p, None),
            Err(e) => {
                eprintln!("{e}");
                eprintln!("1 error");
                return Ok(Finished::Reported);
            }
        }
    };
    let findings = gpu16_asm::check(&program, map.as_ref(), &name);
    let n = findings.warnings();
    emit(&format!(
        "{findings}{name}: {} frames, no errors, {n} warning{}\n",
        program.len(),
        if n == 1 { "" } else { "s" }
    ))
    .map_err(CliError::failed)?;
    Ok(Finished::Success)
}
