//! `gpu16 asm`, `gpu16 disasm` and `gpu16 check`: thin shells over the gpu16-asm crate that
//! choose files and formats, print diagnostics and set the exit status. Each takes
//! `--dialect spec|mcst`: how source is assembled and images are read.

use super::deadlines::{loading_deadline, writing_deadline};
use super::json_out::{self, errors_text, refuse, refuse_output, warnings_text};
use super::outputs::{check_distinct, source_inputs, write_together, Named};
use super::parts::{for_each_part, PartsError, PartsImage};
use super::value_enums::{DialectArg, FormatArg};
use super::{emit, CliError, Finished};
use crate::run_output::file::{is_stdout, OutputFile};
use clap::{Args, ValueEnum};
use gpu16::input::MemoryFormat;
use gpu16::input::{assemble_source, load_program_full, ProgramFormat, SourceError};
use gpu16::machine::{Dialect, Program};
use gpu16_asm::{Assembly, Diagnostic, Diagnostics, Severity};
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The arguments of `gpu16 asm`.
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
    /// Also write the initial shared memory the source's `.data` directives give (4096
    /// bytes; all zero, with a note, for a source without `.data`): raw bytes, or $readmemh
    /// text for a name ending .hex, .mem, .vmem or .txt (as --mem reads it back); `-` for
    /// stdout. Written together with the image: both or neither.
    #[arg(long, value_name = "FILE")]
    pub mem_out: Option<PathBuf>,
    /// Print one JSON object on stdout instead of text (the image must go to a file).
    ///
    /// Keys: `source` (SOURCE as given), `output` (the file written, or null), `mem_out`
    /// (the --mem-out file written, or null), `format` (`bin` or `hex`), `frames` (null if the source did not assemble), `errors`,
    /// `warnings` and `diagnostics`: one object each, `{"severity", "file", "line",
    /// "column", "message", "notes": [...]}` (line and column from 1, null for a problem
    /// of the whole file), with `frame` and `instruction` for a lint warning. Errors in the
    /// source add `"error": "SOURCE: N errors"` and `"stage": "assemble"` (status 1). A
    /// command that stops before (SOURCE unreadable, an output it cannot write or that
    /// names an input) prints `{"error", "stage", "file"}` as `run --json` does, `stage`
    /// being `load`, `output` or `usage`, with the same status as without --json.
    #[arg(long)]
    pub json: bool,
    /// Give up after SECS (status 1, and --json's `load` or `output` object) while SOURCE
    /// (or stdin) is a FIFO or pipe no one writes, or an output a FIFO no one reads: either
    /// blocks this command where nothing else would end it, as with `run --timeout`.
    #[arg(long, value_name = "SECS", value_parser = crate::stop::parse_timeout)]
    pub timeout: Option<std::time::Duration>,
}

/// The arguments of `gpu16 disasm`.
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
    /// Give up after SECS (status 1) while IMAGE (or stdin) is a FIFO or pipe no one
    /// writes, or the output a FIFO no one reads: either blocks this command where nothing
    /// else would end it, as with `run --timeout`.
    #[arg(long, value_name = "SECS", value_parser = crate::stop::parse_timeout)]
    pub timeout: Option<std::time::Duration>,
}

/// The arguments of `gpu16 check`.
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
    /// Print one JSON object on stdout instead of text.
    ///
    /// Keys: `program` (PROGRAM as given), `format` (`bin`, `hex` or `asm`), `frames`
    /// (null if it did not load), `errors`, `warnings` and `diagnostics`: one object each,
    /// `{"severity", "file", "line", "column", "message", "notes": [...]}` (line and column
    /// from 1; null for a binary image or a problem of the whole file), a lint warning
    /// with the `frame` it is about and its `instruction` (the IP, or null). Errors in
    /// assembly source add `"error": "PROGRAM: N errors"` and `"stage": "assemble"`
    /// (status 1). A program that cannot be read or loaded prints `{"error", "stage":
    /// "load", "file"}` as `run --json` does (status 1).
    #[arg(long)]
    pub json: bool,
    /// Give up after SECS (status 1, and --json's `load` object) while PROGRAM (or stdin)
    /// is a FIFO or pipe no one writes: it blocks this command where nothing else would end
    /// it, as with `run --timeout`.
    #[arg(long, value_name = "SECS", value_parser = crate::stop::parse_timeout)]
    pub timeout: Option<std::time::Duration>,
}

/// Report diagnostics on stderr with a count; the exit status says they were errors.
fn fail(diags: &Diagnostics) -> Finished {
    stderr_text!("{diags}");
    stderr_line!("{}", errors_text(diags.errors()));
    Finished::Reported
}

/// Source that cannot be read, as the one error diagnostic the assembler gives for it.
fn unreadable(e: gpu16::input::InputError) -> Diagnostics {
    let name = e.path.display().to_string();
    Diagnostics(vec![Diagnostic::bare(Severity::Error, name, e.message)])
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
/// an output naming the source or a file it includes. Warnings of `set_const` into a
/// register that takes the core id (the ones `check` gives) go to stderr (with --json, in
/// the object) and change neither the status nor the image.
pub fn asm(args: AsmArgs) -> Result<Finished, CliError> {
    let json = args.json;
    // Armed before the outputs are checked: that reads the source for the files it
    // includes (once: the loader is given the same text).
    let loading = loading_deadline(args.timeout, json, &[Named::new("SOURCE", &args.source)], 1);
    let from_stdin = is_stdout(&args.source);
    let out = match (&args.output, args.hex) {
        (None, true) => None,
        (Some(p), _) => Some(Named::new("-o", p)),
        (None, false) if from_stdin => {
            if std::io::stdout().is_terminal() {
                let e = CliError::usage(
                    "asm -: the image would go to the terminal: give -o FILE, or -o - to \
                     write it to stdout anyway",
                );
                return Err(refuse(json, "usage", e, None));
            }
            Some(Named::new("-o (default)", std::path::Path::new("-")))
        }
        (None, false) => Some(Named::new(
            "-o (default)",
            &args.source.with_extension("bin"),
        )),
    };
    if json && out.as_ref().is_none_or(|o| is_stdout(&o.path)) {
        let e =
            CliError::usage("--json and the image both write stdout: give -o FILE for the image");
        return Err(refuse(json, "usage", e, None));
    }
    let mem_out = args.mem_out.as_deref().map(|p| Named::new("--mem-out", p));
    if json && mem_out.as_ref().is_some_and(|m| is_stdout(&m.path)) {
        let e = CliError::usage("--json and --mem-out - both write stdout: give --mem-out a file");
        return Err(refuse(json, "usage", e, None));
    }
    let inputs = source_inputs("SOURCE", &args.source);
    if let Some(mem) = &mem_out {
        // The image and the memory must not overwrite each other (nor both go to stdout,
        // where `--hex` without -o writes the image).
        let image = out
            .clone()
            .unwrap_or_else(|| Named::new("--hex (stdout)", Path::new("-")));
        check_distinct(&inputs, &[image, mem.clone()])
            .map_err(|e| refuse(json, "usage", CliError::usage(e), None))?;
    }
    let file = match &out {
        Some(out) => {
            Some(output_file(&inputs, out).map_err(|e| refuse_output(json, e, &out.path))?)
        }
        None => None,
    };
    let mem_file = match &mem_out {
        Some(m) => Some(output_file(&inputs, m).map_err(|e| refuse_output(json, e, &m.path))?),
        None => None,
    };
    let name = args.source.display().to_string();
    let format = if args.hex { "hex" } else { "bin" };
    let assembled = assemble(&args.source, args.dialect);
    drop(loading);
    let assembly = match assembled {
        Ok(a) => a,
        Err(Stopped::Load(e)) if json => {
            return Err(refuse(json, "load", CliError::failed(&e), Some(&e.path)));
        }
        Err(Stopped::Load(e)) => return Ok(fail(&unreadable(e))),
        Err(Stopped::Diagnostics(d)) if json => {
            let failed = json_out::assembly_failed(&name, &d);
            let mut v = asm_json(&args, format, [None, None], None, &d, Vec::new());
            for key in ["error", "stage", "file", "diagnostics"] {
                v[key] = failed[key].clone();
            }
            json_out::print(&v)?;
            return Ok(Finished::Reported);
        }
        Err(Stopped::Diagnostics(d)) => return Ok(fail(&d)),
    };
    let program = &assembly.program;
    let findings = gpu16_asm::lint_set_const(program);
    let warnings = gpu16_asm::warnings(findings.clone(), Some(&assembly.source_map), &name);
    if !json {
        stderr_text!("{warnings}");
    }
    let memory = mem_file
        .as_ref()
        .map(|m| memory_out(&assembly, m, &name, json));
    let outputs: Vec<&Path> = [file.as_ref(), mem_file.as_ref()]
        .into_iter()
        .flatten()
        .map(OutputFile::path)
        .collect();
    let _writing = writing_deadline(args.timeout, json, &outputs, "", 1);
    let Some(file) = file else {
        if let (Some(m), Some(bytes)) = (&mem_file, &memory) {
            write(m, bytes).map_err(|e| refuse(json, "output", e, Some(m.path())))?;
        }
        emit(&hex_text(program)).map_err(CliError::failed)?;
        return Ok(Finished::Success);
    };
    let image = if args.hex {
        hex_text(program).into_bytes()
    } else {
        program.image()
    };
    let mut together: Vec<(&OutputFile, &[u8])> = vec![(&file, &image)];
    if let (Some(m), Some(bytes)) = (&mem_file, &memory) {
        together.push((m, bytes));
    }
    write_together(&together)
        .map_err(CliError::failed)
        .map_err(|e| refuse(json, "output", e, Some(file.path())))?;
    if json {
        let list = (warnings.0.iter().zip(&findings))
            .map(|(d, f)| json_out::finding(d, f, &name))
            .collect();
        let v = asm_json(
            &args,
            format,
            [Some(file.path()), mem_file.as_ref().map(OutputFile::path)],
            Some(program.len()),
            &warnings,
            list,
        );
        json_out::print(&v)?;
        return Ok(Finished::Success);
    }
    let summary = format!(
        "{}: {} frames ({} bytes) -> {}\n",
        gpu16::shown::path(&args.source),
        program.len(),
        program.len() * 32,
        gpu16::shown::path(file.path())
    );
    // Where the image or the memory went to stdout, the summary goes to stderr, out of
    // their way.
    if file.is_stdout() || mem_file.as_ref().is_some_and(OutputFile::is_stdout) {
        stderr_text!("{summary}");
    } else {
        emit(&summary).map_err(CliError::failed)?;
    }
    Ok(Finished::Success)
}

/// The bytes `--mem-out` writes to `file`: the source's `.data` image in the format the
/// file's name asks for; for a source without `.data`, all zero, with a note on stderr
/// (not under --json) so an empty image is not mistaken for the intended one.
fn memory_out(assembly: &Assembly, file: &OutputFile, name: &str, json: bool) -> Vec<u8> {
    let zero = vec![0; gpu16::machine::MEMORY_BYTES];
    let bytes = assembly.memory.as_ref().unwrap_or_else(|| {
        if !json {
            stderr_line!(
                "note: {} has no `.data` directive: --mem-out {} holds all-zero memory",
                gpu16::shown::path(std::path::Path::new(name)),
                gpu16::shown::path(file.path())
            );
        }
        &zero
    });
    MemoryFormat::written_at(file.path()).encode(bytes)
}

/// Why source did not assemble: it could not be read, or it has errors.
enum Stopped {
    /// SOURCE (not a file it includes) cannot be read, or is too large.
    Load(gpu16::input::InputError),
    /// The assembler's diagnostics, errors among them.
    Diagnostics(Diagnostics),
}

/// Read and assemble the source at `path` (`-`: stdin), it and the files it includes
/// within their limits.
fn assemble(path: &Path, dialect: DialectArg) -> Result<Assembly, Stopped> {
    let text = gpu16::input::read_source(path).map_err(Stopped::Load)?;
    assemble_source(&text, path, dialect.0).map_err(|e| match e {
        SourceError::Input(e) => Stopped::Load(e),
        SourceError::Assembly(d) => Stopped::Diagnostics(d),
    })
}

/// The `asm --json` object (see [`AsmArgs::json`]) with the objects `list` of `diags`;
/// `[output, mem_out]` are the files written.
fn asm_json(
    args: &AsmArgs,
    format: &str,
    [output, mem_out]: [Option<&Path>; 2],
    frames: Option<usize>,
    diags: &Diagnostics,
    list: Vec<Value>,
) -> Value {
    json!({
        "source": args.source.display().to_string(),
        "output": output.map(|p| p.display().to_string()),
        "mem_out": mem_out.map(|p| p.display().to_string()),
        "format": format,
        "frames": frames,
        "errors": diags.errors(),
        "warnings": diags.warnings(),
        "diagnostics": list,
    })
}

/// `gpu16 disasm`: status 0, 1 for a bad image or an output it cannot write, 2 for an
/// output naming the image.
pub fn disasm(args: DisasmArgs) -> Result<Finished, CliError> {
    let loading = loading_deadline(args.timeout, false, &[Named::new("IMAGE", &args.image)], 1);
    let file = match &args.output {
        Some(p) => Some(output_file(
            &source_inputs("IMAGE", &args.image),
            &Named::new("-o", p),
        )?),
        None => None,
    };
    let format =
        ProgramFormat::of_input(&args.image, args.format.map(|f| f.0)).map_err(CliError::failed)?;
    if let Some(image) = in_parts(&args.image, format, args.dialect).map_err(CliError::failed)? {
        drop(loading);
        return disasm_in_parts(&args, &image, file);
    }
    let program = load_program_full(&args.image, format, args.dialect.0)
        .map_err(CliError::failed)?
        .program;
    drop(loading);
    let text = gpu16_asm::disassemble(&program);
    let outputs: Vec<&Path> = file.iter().map(OutputFile::path).collect();
    let _writing = writing_deadline(args.timeout, false, &outputs, "", 1);
    match &file {
        Some(file) => write(file, text.as_bytes())?,
        None => emit(&text).map_err(CliError::failed)?,
    }
    Ok(Finished::Success)
}

/// Whether the program at `path` is read in parts ([`super::parts`]) rather than
/// whole: a raw spec-dialect image in a regular file. (An MCST image has at most 64
/// frames; stdin, a FIFO or a device have no length to give the header.)
fn in_parts(
    path: &Path,
    format: ProgramFormat,
    dialect: DialectArg,
) -> Result<Option<PartsImage<'_>>, gpu16::input::InputError> {
    if format != ProgramFormat::Binary || dialect.0 != Dialect::Spec {
        return Ok(None);
    }
    PartsImage::open(path)
}

/// [`disasm`] of an image read in parts, in memory independent of its size: the image is
/// read once to check it loads (so a bad one writes nothing), then again to write its
/// text part by part. On stdout a closed pipe (`| head`) ends the second read at once.
fn disasm_in_parts(
    args: &DisasmArgs,
    image: &PartsImage,
    file: Option<OutputFile>,
) -> Result<Finished, CliError> {
    let load = |e: PartsError<std::io::Error>| match e {
        PartsError::Load(e) => CliError::failed(&e),
        PartsError::Stopped(e) => CliError::failed(e),
    };
    for_each_part(image, |_, _, _| Ok::<(), std::io::Error>(())).map_err(load)?;
    let total = image.frames();
    let write_text = |w: &mut dyn Write| -> Result<(), PartsError<std::io::Error>> {
        w.write_all(gpu16_asm::disassembly_header(Dialect::Spec, total).as_bytes())
            .map_err(PartsError::Stopped)?;
        for_each_part(image, |part, base, total| {
            w.write_all(gpu16_asm::disassemble_part(part, base, total).as_bytes())
        })?;
        w.flush().map_err(PartsError::Stopped)
    };
    match file {
        Some(file) => {
            let outputs = [file.path()];
            let _writing = writing_deadline(args.timeout, false, &outputs, "", 1);
            let staged = file
                .stage(|w| {
                    write_text(w).map_err(|e| match e {
                        PartsError::Load(e) => e.to_string(),
                        PartsError::Stopped(e) => e.to_string(),
                    })
                })
                .map_err(CliError::failed)?;
            staged.commit().map_err(CliError::failed)?;
        }
        None => {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            match write_text(&mut out) {
                Ok(()) => {}
                Err(PartsError::Stopped(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(PartsError::Stopped(e)) => {
                    return Err(CliError::failed(super::stdout::StdoutError(e)))
                }
                Err(e) => return Err(load(e)),
            }
        }
    }
    Ok(Finished::Success)
}

/// [`check`]'s lints of an image read in parts, in memory independent of its size: the
/// image is read once to check it loads, then again for its lints, printed part by part:
/// as text, or with `json` as the `--json` object, written as it goes (its `diagnostics`
/// first, the counts after them; the keys in the order serde_json gives them), since a
/// large image may have millions of findings. A load error is the one loading the image
/// whole gives, and comes before anything is printed. Gives the findings' count and the
/// number of frames.
fn check_in_parts(
    image: &PartsImage,
    name: &str,
    json: Option<&str>,
) -> Result<(usize, usize), PartsError<CliError>> {
    for_each_part(image, |_, _, _| Ok::<(), CliError>(()))?;
    let print = |text: &str| emit(text).map_err(CliError::failed);
    if json.is_some() {
        print("{\"diagnostics\":[").map_err(PartsError::Stopped)?;
    }
    let (mut count, mut frames) = (0, 0);
    let mut past_tm_reported = false;
    for_each_part(image, |part, base, total| {
        frames = total;
        let findings = gpu16_asm::lint_part(part, base, total, &mut past_tm_reported);
        let diags = gpu16_asm::warnings(findings.clone(), None, name);
        if json.is_none() {
            count += diags.warnings();
            return print(&diags.to_string());
        }
        let mut text = String::new();
        for (d, f) in diags.0.iter().zip(&findings) {
            if count > 0 {
                text.push(',');
            }
            count += 1;
            text.push_str(&json_out::finding(d, f, name).to_string());
        }
        print(&text)
    })?;
    if let Some(format) = json {
        print(&format!(
            "],\"errors\":0,\"format\":{},\"frames\":{frames},\"program\":{},\"warnings\":{count}}}\n",
            json!(format),
            json!(name),
        ))
        .map_err(PartsError::Stopped)?;
    }
    Ok((count, frames))
}

/// `gpu16 check`: status 0 with or without warnings, 1 for load errors or a stdout it
/// cannot write.
pub fn check(args: CheckArgs) -> Result<Finished, CliError> {
    let json = args.json;
    let name = args.program.display().to_string();
    let load_failed = |e: gpu16::input::InputError| {
        if json {
            return Err(refuse(json, "load", CliError::failed(&e), Some(&e.path)));
        }
        stderr_line!("{e}");
        stderr_line!("1 error");
        Ok(Finished::Reported)
    };
    let format = match ProgramFormat::of_input(&args.program, args.format.map(|f| f.0)) {
        Ok(f) => f,
        Err(e) => return load_failed(e),
    };
    let format_name = FormatArg(format)
        .to_possible_value()
        .map_or(String::new(), |v| v.get_name().to_string());
    let loading = loading_deadline(
        args.timeout,
        json,
        &[Named::new("PROGRAM", &args.program)],
        1,
    );
    let image = match in_parts(&args.program, format, args.dialect) {
        Ok(image) => image,
        Err(e) => return load_failed(e),
    };
    if let Some(image) = image {
        drop(loading);
        let as_json = json.then_some(format_name.as_str());
        let (warnings, frames) = match check_in_parts(&image, &name, as_json) {
            Ok(found) => found,
            Err(PartsError::Load(e)) => return load_failed(e),
            Err(PartsError::Stopped(e)) => return Err(e),
        };
        if !json {
            emit(&format!(
                "{}: {frames} frames, no errors, {}\n",
                gpu16::shown::path(&args.program),
                warnings_text(warnings)
            ))
            .map_err(CliError::failed)?;
        }
        return Ok(Finished::Success);
    }
    let (program, map) = if format == ProgramFormat::Assembly {
        match assemble(&args.program, args.dialect) {
            Ok(a) => (a.program, Some(a.source_map)),
            Err(Stopped::Load(e)) if json => return load_failed(e),
            Err(Stopped::Load(e)) => return Ok(fail(&unreadable(e))),
            Err(Stopped::Diagnostics(d)) if json => {
                let mut v = json_out::assembly_failed(&name, &d);
                v["program"] = json!(name);
                v["format"] = json!(format_name);
                v["frames"] = Value::Null;
                json_out::print(&v)?;
                return Ok(Finished::Reported);
            }
            Err(Stopped::Diagnostics(d)) => return Ok(fail(&d)),
        }
    } else {
        match load_program_full(&args.program, format, args.dialect.0) {
            Ok(loaded) => (loaded.program, None),
            Err(e) => return load_failed(e),
        }
    };
    drop(loading);
    if json {
        let findings = gpu16_asm::lint(&program);
        let diags = gpu16_asm::warnings(findings.clone(), map.as_ref(), &name);
        let list: Vec<Value> = diags
            .0
            .iter()
            .zip(&findings)
            .map(|(d, f)| json_out::finding(d, f, &name))
            .collect();
        json_out::print(&json!({
            "program": name,
            "format": format_name,
            "frames": program.len(),
            "errors": 0,
            "warnings": diags.warnings(),
            "diagnostics": list,
        }))?;
        return Ok(Finished::Success);
    }
    let findings = gpu16_asm::check(&program, map.as_ref(), &name);
    emit(&format!(
        "{findings}{}: {} frames, no errors, {}\n",
        gpu16::shown::path(&args.program),
        program.len(),
        warnings_text(findings.warnings())
    ))
    .map_err(CliError::failed)?;
    Ok(Finished::Success)
}
