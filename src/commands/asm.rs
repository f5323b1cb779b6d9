//! `gpu16 asm`, `gpu16 disasm` and `gpu16 check`: thin shells over the gpu16-asm crate that
//! choose files and formats, print diagnostics and set the exit status. Each takes
//! `--dialect spec|mcst`: how source is assembled and images are read.

use super::outputs::{check_distinct, source_inputs, write_together, Named};
use super::value_enums::DialectArg;
use super::{emit, CliError, Finished};
use clap::Args;
use gpu16::input::{load_program_in, ProgramFormat};
use gpu16::machine::Program;
use gpu16::output::file::OutputFile;
use std::path::PathBuf;

#[derive(Args)]
pub struct AsmArgs {
    /// Assembly source file (at most 16 MiB, as is each file it includes).
    pub source: PathBuf,
    /// Output file (default: SOURCE with the extension .bin, or stdout with --hex).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Write 16-bit hex words (one frame a line, loadable as .hex) instead of raw bytes.
    #[arg(long)]
    pub hex: bool,
    /// The ISA dialect the source is written in.
    #[arg(long, value_enum, default_value = "spec")]
    pub dialect: DialectArg,
}

#[derive(Args)]
pub struct DisasmArgs {
    /// Program image (.bin or .tm: at most 1 GiB; .hex: at most 2^22 words).
    pub image: PathBuf,
    /// Write the source here instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The ISA dialect the image is read in (its source re-assembles in the same one).
    #[arg(long, value_enum, default_value = "spec")]
    pub dialect: DialectArg,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Program (.bin or .tm: at most 1 GiB; .hex: at most 2^22 words; assembly: at most
    /// 16 MiB).
    pub program: PathBuf,
    /// The ISA dialect the program is written in.
    #[arg(long, value_enum, default_value = "spec")]
    pub dialect: DialectArg,
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

/// The output file `output` names, checked against `inputs` (a usage error, status 2) and
/// prepared (status 1 if it cannot be written), before the command does its work.
fn output_file(inputs: &[Named], output: &Named) -> Result<OutputFile, CliError> {
    check_distinct(inputs, std::slice::from_ref(output)).map_err(CliError::usage)?;
    OutputFile::prepare(&output.path).map_err(CliError::failed)
}

fn write(file: &OutputFile, bytes: &[u8]) -> Result<(), CliError> {
    write_together(&[(file, bytes)]).map_err(CliError::failed)
}

/// `gpu16 asm`: status 0, 1 for errors in the source or an output it cannot write, 2 for
/// an output naming the source or a file it includes.
pub fn asm(args: AsmArgs) -> Result<Finished, CliError> {
    let out = match (&args.output, args.hex) {
        (None, true) => None,
        (Some(p), _) => Some(Named::new("-o", p)),
        (None, false) => Some(Named::new(
            "-o (default)",
            &args.source.with_extension("bin"),
        )),
    };
    let file = match &out {
        Some(out) => Some(output_file(&source_inputs("SOURCE", &args.source), out)?),
        None => None,
    };
    let assembly = match gpu16::input::assemble_file_in(&args.source, args.dialect.0) {
        Ok(a) => a,
        Err(d) => return Ok(fail(&d)),
    };
    let program = &assembly.program;
    let Some(file) = file else {
        emit(&hex_text(program)).map_err(CliError::failed)?;
        return Ok(Finished::Success);
    };
    if args.hex {
        write(&file, hex_text(program).as_bytes())?;
    } else {
        write(&file, &program.image())?;
    }
    emit(&format!(
        "{}: {} frames ({} bytes) -> {}\n",
        args.source.display(),
        program.len(),
        program.len() * 32,
        file.path().display()
    ))
    .map_err(CliError::failed)?;
    Ok(Finished::Success)
}

/// `gpu16 disasm`: status 0, 1 for a bad image or an output it cannot write, 2 for an
/// output naming the image.
pub fn disasm(args: DisasmArgs) -> Result<Finished, CliError> {
    let file = match &args.output {
        Some(p) => Some(output_file(
            &source_inputs("IMAGE", &args.image),
            &Named::new("-o", p),
        )?),
        None => None,
    };
    let program = load_program_in(&args.image, args.dialect.0).map_err(CliError::failed)?;
    let text = gpu16_asm::disassemble(&program);
    match &file {
        Some(file) => write(file, text.as_bytes())?,
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
        match gpu16::input::assemble_file_in(&args.program, args.dialect.0) {
            Ok(a) => (a.program, Some(a.source_map)),
            Err(d) => return Ok(fail(&d)),
        }
    } else {
        match load_program_in(&args.program, args.dialect.0) {
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
