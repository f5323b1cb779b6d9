//! `gpu16 asm`, `gpu16 disasm` and `gpu16 check`: thin shells over the gpu16-asm crate that
//! choose files and formats, print diagnostics and set the exit status. Each takes
//! `--dialect spec|mcst`: how source is assembled and images are read.

use super::outputs::{check_distinct, source_inputs, write_together, Named};
use super::value_enums::{DialectArg, FormatArg};
use super::{emit, CliError, Finished};
use clap::Args;
use gpu16::input::{load_program_as, program_format, ProgramFormat};
use gpu16::machine::Program;
use gpu16::output::file::{is_stdout, OutputFile};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args)]
pub struct AsmArgs {
    /// Assembly source file (at most 16 MiB, as is each file it includes); `-` reads stdin.
    pub source: PathBuf,
    /// Output file, `-` for stdout (default: SOURCE with the extension .bin; stdout with
    /// --hex, or for a source read from stdin when stdout is not a terminal).
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
    /// Program image (.bin or .tm: at most 1 GiB; .hex: at most 2^22 words); `-` reads
    /// stdin (a raw image unless --format says otherwise).
    pub image: PathBuf,
    /// The image's format, whatever its name says (for `-`, stdin, the default is bin).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    /// Write the source here instead of stdout (`-`: stdout).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The ISA dialect the image is read in (its source re-assembles in the same one).
    #[arg(long, value_enum, default_value = "spec")]
    pub dialect: DialectArg,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Program (.bin or .tm: at most 1 GiB; .hex: at most 2^22 words; assembly: at most
    /// 16 MiB); `-` reads stdin (a raw image unless --format says otherwise).
    pub program: PathBuf,
    /// The program's format, whatever its name says (for `-`, stdin, the default is bin).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    /// The ISA dialect the program is written in.
    #[arg(long, value_enum, default_value = "spec")]
    pub dialect: DialectArg,
}

/// Report diagnostics on stderr with a count; the exit status says they were errors.
fn fail(diags: &gpu16_asm::Diagnostics) -> Finished {
    let n = diags.errors();
    stderr_text!("{diags}");
    stderr_line!("{n} error{}", if n == 1 { "" } else { "s" });
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
    let from_stdin = is_stdout(&args.source);
    let out = match (&args.output, args.hex) {
        (None, true) => None,
        (Some(p), _) => Some(Named::new("-o", p)),
        (None, false) if from_stdin => {
            if std::io::stdout().is_terminal() {
                return Err(CliError::usage(
                    "asm -: the image would go to the terminal: give -o FILE, or -o - to \
                     write it to stdout anyway",
                ));
            }
            Some(Named::new("-o (default)", std::path::Path::new("-")))
        }
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
    let summary = format!(
        "{}: {} frames ({} bytes) -> {}\n",
        gpu16::output::shown::path(&args.source),
        program.len(),
        program.len() * 32,
        gpu16::output::shown::path(file.path())
    );
    // Where the image went to stdout, the summary goes to stderr, out of its way.
    if file.is_stdout() {
        stderr_text!("{summary}");
    } else {
        emit(&summary).map_err(CliError::failed)?;
    }
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
    let format = program_format(&args.image, args.format.map(|f| f.0)).map_err(CliError::failed)?;
    let (program, _) =
        load_program_as(&args.image, format, args.dialect.0).map_err(CliError::failed)?;
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
    let format = match program_format(&args.program, args.format.map(|f| f.0)) {
        Ok(f) => f,
        Err(e) => {
            stderr_line!("{e}");
            stderr_line!("1 error");
            return Ok(Finished::Reported);
        }
    };
    let (program, map) = if format == ProgramFormat::Assembly {
        match gpu16::input::assemble_file_in(&args.program, args.dialect.0) {
            Ok(a) => (a.program, Some(a.source_map)),
            Err(d) => return Ok(fail(&d)),
        }
    } else {
        match load_program_as(&args.program, format, args.dialect.0) {
            Ok((p, _)) => (p, None),
            Err(e) => {
                stderr_line!("{e}");
                stderr_line!("1 error");
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
