//! `gpu16 asm`, `gpu16 disasm` and `gpu16 check`: thin shells over the gpu16-asm crate that
//! choose files and formats, print diagnostics and set the exit status.

use clap::Args;
use gpu16::input::{load_program, ProgramFormat};
use gpu16::machine::Program;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
fn fail(diags: &gpu16_asm::Diagnostics) -> ExitCode {
    let n = diags.errors();
    eprint!("{diags}");
    eprintln!("{n} error{}", if n == 1 { "" } else { "s" });
    ExitCode::from(1)
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

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

pub fn asm(args: AsmArgs) -> Result<ExitCode, String> {
    let assembly = match gpu16_asm::assemble_file(&args.source) {
        Ok(a) => a,
        Err(d) => return Ok(fail(&d)),
    };
    let program = &assembly.program;
    let out = match (&args.output, args.hex) {
        (None, true) => {
            super::emit(&hex_text(program));
            return Ok(ExitCode::SUCCESS);
        }
        (Some(p), _) => p.clone(),
        (None, false) => args.source.with_extension("bin"),
    };
    if out == args.source {
        return Err(format!(
            "{}: the output would overwrite the source; name one with -o",
            out.display()
        ));
    }
    if args.hex {
        write(&out, hex_text(program).as_bytes())?;
    } else {
        write(&out, &program.image())?;
    }
    super::emit(&format!(
        "{}: {} frames ({} bytes) -> {}\n",
        args.source.display(),
        program.len(),
        program.len() * 32,
        out.display()
    ));
    Ok(ExitCode::SUCCESS)
}

pub fn disasm(args: DisasmArgs) -> Result<ExitCode, String> {
    let program = load_program(&args.image).map_err(|e| e.to_string())?;
    let text = gpu16_asm::disassemble(&program);
    match &args.output {
        Some(p) => write(p, text.as_bytes())?,
        None => super::emit(&text),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn check(args: CheckArgs) -> Result<ExitCode, String> {
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
                return Ok(ExitCode::from(1));
            }
        }
    };
    let findings = gpu16_asm::check(&program, map.as_ref(), &name);
    let n = findings.warnings();
    super::emit(&format!(
        "{findings}{name}: {} frames, no errors, {n} warning{}\n",
        program.len(),
        if n == 1 { "" } else { "s" }
    ));
    Ok(ExitCode::SUCCESS)
}
