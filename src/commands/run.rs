//! `gpu16 run`: load a program and a memory image, check and prepare the output files, run,
//! write the outputs (for a failed run too) and print the report.

use super::deadlines::{loading_deadline, writing_deadline};
use super::json_out::{refuse, refuse_with, Unloaded};
use super::machine_args::MachineArgs;
use super::memory_args::MemoryArgs;
use super::outputs::{check_distinct, source_inputs, Named};
use super::see_args::SeeArgs;
use super::stdout::Stdout;
use super::value_enums::{BackendArg, FormatArg, MemoryFormatArg};
use super::{CliError, Finished};
use crate::progress::ProgressDisplay;
use crate::run_output::events::Recorder;
use crate::run_output::expect::{self, Writers};
use crate::run_output::file::{is_stdout, names_stdout, OutputFile};
use crate::run_output::json_stream::JsonStream;
use crate::run_output::run_files::{self, Planned, RunFile, Written};
use crate::run_output::see::{Outcome, SeeOptions};
use crate::run_output::task_spool::TaskSpool;
use crate::stop::StopSignal;
use clap::{Args, ValueEnum};
use gpu16::input::dump::{load_register_dump, MemoryDump};
use gpu16::input::stream::FrameStream;
use gpu16::input::{InputError, ProgramFormat};
use gpu16::machine::{Config, Dialect, Observer, RunError, StopCause, TaskLog};
use gpu16::output;
use gpu16::output::exec_log::ExecLog;
use gpu16::{BackendKind, ProgramInput, Runner};
use serde_json::{json, Value};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Copy, ValueEnum)]
pub enum Tasks {
    None,
    Summary,
    All,
}

#[derive(Args)]
pub struct RunArgs {
    /// Program: .bin/.tm (raw 32-byte frames, at most 1 GiB), .hex (16-bit words: at most
    /// 2^22 of them, in at most 256 MiB of text) or .s/.asm (assembly, at most 16 MiB); `-`
    /// reads stdin (a raw image unless --format says otherwise). A raw image is read as a
    /// stream of frames as the run reaches them, so its length costs no memory.
    pub program: PathBuf,
    /// The program's format, whatever its name says (for `-`, stdin, the default is bin).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    #[command(flatten)]
    pub memory: MemoryArgs,
    /// Execution backend.
    #[arg(long, value_enum, default_value_t = BackendArg(BackendKind::Auto))]
    pub backend: BackendArg,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// How much of the task timeline to keep and print.
    #[arg(long, value_enum, default_value_t = Tasks::All)]
    pub tasks: Tasks,
    /// Print one JSON object on stdout instead of the report (also when the run fails or
    /// cannot start: it then has an `error` key).
    #[arg(long)]
    pub json: bool,
    /// Write the final shared memory (4096 bytes) to FILE; for a failed run, the memory when
    /// it stopped. Raw bytes, or $readmemh text for a name ending .hex, .mem, .vmem or .txt
    /// (as --mem and --expect-mem read it back).
    #[arg(long, value_name = "FILE")]
    pub dump_mem: Option<PathBuf>,
    /// No progress bar and no timing line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Wall-clock limit in seconds (a decimal number, at most 1e9): past it the run ends
    /// like the watchdog, at the cycle it reached, with every unfinished core listed, and
    /// exits 1, also while a program read from stdin waits for input; an input that blocks
    /// as it is opened or read (a FIFO no one writes) is a load error at the limit (status
    /// 1), and an output that blocks (a FIFO no one reads) is given the limit once more
    /// from the run's end. Ctrl-C (or SIGTERM, SIGHUP) ends a run the same way, and exits
    /// 130; a second one, or one once the run is over (while outputs are written), exits at
    /// once (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP), leaving the files named as
    /// they were.
    #[arg(long, value_name = "SECS", value_parser = crate::stop::parse_timeout)]
    pub timeout: Option<std::time::Duration>,
    /// Write one line per executed instruction to FILE (`-`: stdout, before the report), in
    /// (cycle, core id) order: `CYCLE CORE FRAME IP  instruction  effect`. The run executes
    /// one instruction per core at a time while it logs, which is slow.
    #[arg(long, value_name = "FILE")]
    pub exec_log: Option<PathBuf>,
    /// Lines the execution log keeps: the first N (1..=10,000,000).
    #[arg(long, value_name = "N", default_value_t = ExecLog::DEFAULT_LIMIT,
          value_parser = clap::value_parser!(u64).range(1..=ExecLog::MAX_LIMIT))]
    pub exec_log_limit: u64,
    /// Compare the final shared memory with FILE, an RTL simulation's dump, and exit 1 if
    /// they differ, listing each differing byte with its bank, row and last writer. FILE is
    /// raw bytes (.bin, .raw: at most 4096; zero past its end), a $readmemh text (.hex,
    /// .mem, .vmem, .txt: hex bytes, @addr, // comments; x/z digits refused; under another
    /// name, text that parses as one), or 16 bank files of 256
    /// rows: a directory, or a quoted pattern such as 'dump/bank*.hex', the files in natural
    /// order of their names being banks 0..15 (docs/expect.md). The run then executes one
    /// instruction per core at a time, to know each byte's last writer.
    #[arg(long, value_name = "FILE")]
    pub expect_mem: Option<PathBuf>,
    /// How to read a single-file --expect-mem, whatever its name says: `hex` ($readmemh
    /// text) or `raw` (bytes).
    #[arg(long, value_enum, value_name = "FORMAT", requires = "expect_mem")]
    pub expect_mem_format: Option<MemoryFormatArg>,
    /// Compare the final registers with FILE and exit 1 if they differ: 16 lines of 16 hex
    /// bytes, line k being core k's r0..r15, separated by spaces, tabs or commas (blank lines
    /// and // comments skipped). Like --expect-mem, it slows the run to name each
    /// register's last writer.
    #[arg(long, value_name = "FILE")]
    pub expect_regs: Option<PathBuf>,
    #[command(flatten)]
    pub see: SeeArgs,
}

/// `gpu16 run`: status 0 for a run that finished, 1 for a load error, a failed run or an
/// output that cannot be written, 2 for outputs naming an input or each other. Outputs are
/// checked before the run and written after it, finished or failed.
pub fn run(args: RunArgs) -> Result<Finished, CliError> {
    let json = args.json;
    let loaded =
        |e: gpu16::input::InputError| refuse(json, "load", CliError::failed(&e), Some(&e.path));
    let machine = args
        .machine
        .checked_config()
        .map_err(|e| refuse(json, "usage", CliError::usage(e), None))?;
    let others = [
        ("--expect-mem", args.expect_mem.as_ref()),
        ("--expect-regs", args.expect_regs.as_ref()),
    ]
    .into_iter()
    .filter_map(|(flag, path)| Some(Named::new(flag, path?)))
    .collect::<Vec<_>>();
    let inputs = args.memory.inputs(&args.program, &others);
    let loading = loading_deadline(args.timeout, json, &inputs, 1);
    // Looks at the files an assembly source includes, so it goes under the deadline.
    args.memory
        .check_streams(&args.program, &others)
        .map_err(|e| refuse(json, "usage", CliError::usage(e), None))?;
    let dialect = args.machine.dialect();
    let format =
        ProgramFormat::of_input(&args.program, args.format.map(|f| f.0)).map_err(loaded)?;
    let see = args.see.clone().options();
    // A raw image is read as a stream unless something needs it whole: the mcst dialect's
    // scheduler wraps through its task memory, the timeline names groups, and --expect-*
    // names each byte's last writer by its frame.
    let streams = format == ProgramFormat::Binary
        && dialect == Dialect::Spec
        && !see.needs_program()
        && args.expect_mem.is_none()
        && args.expect_regs.is_none();
    // A streamed image has no `.data`: only assembly source does.
    let (mut stream, program, source_map, data) = if streams {
        let stream = FrameStream::open(&args.program).map_err(loaded)?;
        (Some(stream), None, None, None)
    } else {
        let l = super::json_out::load_program(&args.program, format, dialect, json).map_err(
            |u| match u {
                Unloaded::Input(e) => loaded(e),
                Unloaded::Assembly { error, diagnostics } => {
                    let (object, error) =
                        super::json_out::assembly_failed_to_load(&error.path, &diagnostics);
                    refuse_with(&object, error)
                }
            },
        )?;
        (None, Some(l.program), l.source_map, l.memory)
    };
    if program.as_ref().is_some_and(|p| !p.can_end()) {
        stderr_line!(
            "warning: {}: the task scheduler never reaches a stop frame (.halt), so it goes \
             round the same frames for ever: the run stops as a livelock after one lap, or \
             at the watchdog (--max-cycles) if a core never ends its task",
            gpu16::shown::path(&args.program)
        );
    }
    // Stop frames that are frame syncs on a walk that runs no task never end it either.
    if program
        .as_ref()
        .is_some_and(|p| p.can_end() && !gpu16_asm::may_end(p))
    {
        stderr_line!(
            "warning: {}: the task scheduler reaches only stop frames that are frame syncs \
             (no .halt) and runs no task, so no core is ever busy for one of them to wait on: \
             the run stops as a livelock after one lap",
            gpu16::shown::path(&args.program)
        );
    }
    if let Some(mem) = &args.memory.mem {
        loading.reading("--mem", mem);
    }
    let memory = args.memory.load_for(&args.program, data).map_err(loaded)?;
    let expect_mem = match &args.expect_mem {
        Some(p) => Some({
            loading.reading("--expect-mem", p);
            MemoryDump::load(
                p,
                args.expect_mem_format.map(|f| f.0),
                "--expect-mem-format",
            )
            .map_err(loaded)?
        }),
        None => None,
    };
    let expect_regs = match &args.expect_regs {
        Some(p) => Some({
            loading.reading("--expect-regs", p);
            load_register_dump(p).map_err(loaded)?
        }),
        None => None,
    };
    drop(loading);
    let mut expected_files = Vec::new();
    if let Some(dump) = &expect_mem {
        for f in &dump.files {
            expected_files.push(Named::new("--expect-mem", f));
        }
    }
    if let Some(p) = &args.expect_regs {
        expected_files.push(Named::new("--expect-regs", p));
    }
    let config = Config {
        tasks: match args.tasks {
            Tasks::None => TaskLog::None,
            Tasks::Summary => TaskLog::Summary,
            Tasks::All => TaskLog::All,
        },
        ..machine
    };
    let planned = plan(&args, &see, expected_files)
        .map_err(|(stage, e, file)| refuse(json, stage, e, file.as_deref()))?;
    let stop = StopSignal::new();
    if let Some(limit) = args.timeout {
        stop.arm_timeout(limit);
    }
    // A stream from stdin that stalls still ends at the timeout or Ctrl-C.
    if let Some(stream) = stream.as_mut() {
        let stop = stop.clone();
        stream.stop_on(move || stop.cause());
    }
    // Without a handler Ctrl-C kills the process, which is no worse: only a run reports.
    // The handler listens while the run goes; once it is over a signal ends the process at
    // once, removing the temporary files of the outputs being written.
    let listening = stop.on_ctrl_c();
    let started = Instant::now();
    let total_frames = match (&program, &stream) {
        (Some(p), _) => p.len() as u64,
        (None, Some(s)) => s.known_frames().unwrap_or(0),
        (None, None) => 0,
    };
    let mut progress = (ProgressDisplay::new(total_frames, args.quiet), stop.clone());
    let runner = args.machine.runner(args.backend.0);
    let mut exec_log = args
        .exec_log
        .as_ref()
        .map(|_| ExecLog::new(args.exec_log_limit));
    let mut writers = match &program {
        Some(p) if expect_mem.is_some() || expect_regs.is_some() => {
            Some(Writers::new(p, expect_mem.is_some(), expect_regs.is_some()))
        }
        _ => None,
    };
    let p = match (&program, stream.as_mut()) {
        (Some(program), _) => ProgramInput::Whole(program),
        (None, Some(stream)) => ProgramInput::Stream(stream),
        (None, None) => unreachable!("a program is loaded whole or streamed"),
    };
    // `--json --tasks all` writes its object as the run goes, keeping no task (issue 12).
    // Where the execution log is to come before it on stdout, the object goes to an
    // unnamed temporary file instead and is copied out after the log (issue 33: kept in
    // memory, a long run's tasks took gigabytes); without one, it is kept whole as before.
    // (Clap keeps the timeline, the other text that would come first, from --json.)
    let json_out = if json && config.tasks == TaskLog::All {
        if args.exec_log.as_deref() == Some(Path::new("-")) {
            JsonOut::spool()
        } else {
            Some(JsonOut::Stdout(BufWriter::with_capacity(
                1 << 16,
                io::stdout(),
            )))
        }
    } else {
        None
    };
    let mut json_stream = json_out.map(JsonStream::new);
    // The human report's task table goes to a temporary file as the run goes, so a long
    // stream's table is never held (without one, the report keeps it as before).
    let mut task_spool = (!json && config.tasks == TaskLog::All)
        .then(TaskSpool::new)
        .and_then(Result::ok);
    let (log, w) = (exec_log.as_mut(), writers.as_mut());
    let (r, m, c) = (runner, &memory[..], &config);
    let (outcome, mut events) = match (json_stream.as_mut(), task_spool.as_mut()) {
        (Some(s), _) => observed(&see, (r, p, m, c), &mut (&mut progress, s), log, w),
        (None, Some(s)) => observed(&see, (r, p, m, c), &mut (&mut progress, s), log, w),
        (None, None) => observed(&see, (r, p, m, c), &mut progress, log, w),
    };
    progress.0.finish();
    drop(listening);
    // A stream found malformed (or unreadable) as it was read is refused as the image
    // loaded whole would have been: no report and no output file.
    // If its JSON object had begun (tasks streamed before the malformed part was read), the
    // refusal's keys close that object.
    if let Err(failure) = &outcome {
        if let RunError::Load(e) = &failure.error {
            let e = InputError {
                path: args.program.clone(),
                message: e.to_string(),
            };
            return Err(match json_stream.take().filter(JsonStream::opened) {
                Some(begun) => {
                    let error = CliError::failed(&e);
                    let v = super::json_out::not_run("load", &error.to_string(), Some(&e.path));
                    let mut out = Stdout::default();
                    print_json(&mut out, Some(begun), v);
                    match out.finish() {
                        Ok(()) => error,
                        Err(stdout) => error.and(stdout),
                    }
                }
                None => loaded(e),
            });
        }
    }
    let wall = started.elapsed();
    // An output that blocks as it is opened (a FIFO no one reads) is given --timeout once
    // more, from here: the run may have used the first up.
    let outputs: Vec<&Path> = planned.iter().map(|p| p.output.path()).collect();
    let writing = writing_deadline(args.timeout, json, &outputs, " after the run", 1);
    let written = run_files::write(&planned, &mut events, exec_log.as_ref(), &outcome);
    drop(writing);
    let mut unwritten: Vec<String> = written
        .iter()
        .filter_map(|w| w.result.as_ref().err().map(ToString::to_string))
        .collect();
    let mut out = Stdout::default();
    if let Some(log) = &exec_log {
        if args.exec_log.as_deref() == Some(Path::new("-")) {
            let mut text = Vec::new();
            let _ = log.write(&mut text);
            out.print(&String::from_utf8_lossy(&text));
        }
        if let Some(note) = log.cut_note() {
            stderr_line!("{note}");
        }
    }
    if let Some(program) = &program {
        if let Some(chart) = see.timeline(&mut events, program, &outcome) {
            out.print(&chart);
        }
    }
    if let Some(note) = see.cut_note(&events) {
        stderr_line!("{note}");
    }
    let state = crate::run_output::see::state_of(&outcome);
    let mem_diffs = expect_mem
        .as_ref()
        .map(|d| expect::memory_diffs(&d.bytes, &state.memory[..], writers.as_ref()));
    let reg_diffs = expect_regs
        .as_ref()
        .map(|e| expect::register_diffs(e, &state.registers, writers.as_ref()));
    let mut compared = String::new();
    if let (Some(p), Some(d)) = (&args.expect_mem, &mem_diffs) {
        compared += &expect::memory_text(p, d, memory.len());
    }
    if let (Some(p), Some(d)) = (&args.expect_regs, &reg_diffs) {
        compared += &expect::register_text(p, d);
    }
    let differs = differences(&args, mem_diffs.as_deref(), reg_diffs.as_deref());
    let add_expected = |v: &mut serde_json::Value| {
        if let (Some(p), Some(dump), Some(d)) = (&args.expect_mem, &expect_mem, &mem_diffs) {
            v["expect_mem"] = expect::memory_json(p, dump, d);
        }
        if let (Some(p), Some(d)) = (&args.expect_regs, &reg_diffs) {
            v["expect_regs"] = expect::register_json(p, d);
        }
    };
    let failed = match &outcome {
        Ok(report) => {
            if json {
                // An output that could not be written is the error to report first.
                let mut v = run_files::run_document(&outcome, source_map.as_ref(), &written);
                add_expected(&mut v);
                if let (None, Some(d)) = (v.get("error"), &differs) {
                    v["error"] = json!({"rule": "expect", "message": d});
                }
                print_json(&mut out, json_stream.take(), v);
            } else {
                let (head, body) = output::human::TaskTable::around(report, &memory);
                out.print(&head);
                // The task table: spooled as the run went, or kept in the report.
                let spooled = match task_spool.take() {
                    Some(spool) => spool.copy(|text| out.print(text)),
                    None if config.tasks == TaskLog::All && !report.tasks.is_empty() => {
                        out.print(output::human::TaskTable::HEADING);
                        out.print(&output::human::TaskTable::of(&report.tasks));
                        Ok(())
                    }
                    None => Ok(()),
                };
                // The comparison goes before the wall-time line, which stays last.
                let sep = if compared.is_empty() { "" } else { "\n" };
                let wall_line = wall_line(report, wall.as_secs_f64(), args.quiet);
                out.print(&format!("{body}{sep}{compared}{wall_line}"));
                if let Err(e) = spooled {
                    unwritten.push(format!("the task table's temporary file: {e}"));
                }
            }
            (!unwritten.is_empty()).then(|| CliError::failed(unwritten.join("\nerror: ")))
        }
        Err(failure) => {
            if json {
                let mut v = run_files::run_document(&outcome, source_map.as_ref(), &written);
                add_expected(&mut v);
                print_json(&mut out, json_stream.take(), v);
            } else {
                // The state when the run stopped, compared all the same.
                out.print(&compared);
            }
            let message = failed_run(
                output::human::failure(&args.program, &failure.error, source_map.as_ref()),
                &written,
                &unwritten,
            );
            Some(match failure.error {
                RunError::Stopped {
                    cause: StopCause::Interrupt,
                    ..
                } => CliError::Interrupted(message),
                _ => CliError::failed(message),
            })
        }
    };
    if failed.is_none() {
        if let Some(d) = &differs {
            stderr_line!("error: {d}");
        }
    }
    match (failed, out.finish()) {
        (None, Ok(())) if differs.is_some() => Ok(Finished::Differs),
        (None, Ok(())) => Ok(Finished::Success),
        (None, Err(stdout)) => Err(CliError::failed(stdout)),
        (Some(e), Ok(())) => Err(e),
        (Some(e), Err(stdout)) => Err(e.and(stdout)),
    }
}

/// A run's arguments: the runner, the program, the initial memory and the configuration.
type RunOf<'a> = (Runner, ProgramInput<'a>, &'a [u8], &'a Config);

/// Run with `observer`, adding the execution log and the last writers when asked: separate
/// paths, as only an observer that wants each instruction makes the run go one instruction
/// at a time.
fn observed<O: Observer>(
    see: &SeeOptions,
    (r, p, m, c): RunOf<'_>,
    observer: &mut O,
    exec_log: Option<&mut ExecLog>,
    writers: Option<&mut Writers>,
) -> (Outcome, Option<Recorder>) {
    match (exec_log, writers) {
        (None, None) => see.run(r, p, m, c, observer),
        (Some(log), None) => see.run(r, p, m, c, &mut (observer, log)),
        (None, Some(w)) => see.run(r, p, m, c, &mut (observer, w)),
        (Some(log), Some(w)) => see.run(r, p, m, c, &mut (observer, (log, w))),
    }
}

/// Where `run --json --tasks all` writes its object as the run goes: stdout, or an unnamed
/// temporary file copied to stdout once the run is over (when the execution log comes
/// first there).
enum JsonOut {
    /// Stdout, buffered.
    Stdout(BufWriter<io::Stdout>),
    /// The temporary file, buffered, and a second handle on it to read it back.
    Spool(BufWriter<std::fs::File>, std::fs::File),
}

impl JsonOut {
    /// A spool in a new unnamed temporary file; `None` if none can be made (the object is
    /// then kept in memory, as it was before there was a spool).
    fn spool() -> Option<JsonOut> {
        let file = gpu16::scratch::unnamed_file("json").ok()?;
        let reader = file.try_clone().ok()?;
        Some(JsonOut::Spool(
            BufWriter::with_capacity(1 << 16, file),
            reader,
        ))
    }
}

impl io::Write for JsonOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            JsonOut::Stdout(w) => w.write(buf),
            JsonOut::Spool(w, _) => w.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            JsonOut::Stdout(w) => w.flush(),
            JsonOut::Spool(w, _) => w.flush(),
        }
    }
}

/// Print the `--json` object `v`: after the tasks `stream` wrote during the run (copied
/// from its spool, if it has one), or whole.
fn print_json(out: &mut Stdout, stream: Option<JsonStream<JsonOut>>, v: Value) {
    let Some(mut stream) = stream else {
        return out.print(&format!("{v}\n"));
    };
    let spool = match stream.writer() {
        JsonOut::Spool(_, reader) => reader.try_clone().map(Some),
        JsonOut::Stdout(_) => Ok(None),
    };
    let finished = stream.finish(v);
    out.wrote(finished.and(spool).and_then(|spool| match spool {
        Some(mut file) => {
            use std::io::Seek;
            file.seek(io::SeekFrom::Start(0))?;
            let mut stdout = io::stdout().lock();
            io::copy(&mut file, &mut stdout)?;
            io::Write::flush(&mut stdout)
        }
        None => Ok(()),
    }));
}

/// The wall-time line that ends the human report, unless `quiet`.
fn wall_line(report: &gpu16::machine::RunReport, secs: f64, quiet: bool) -> String {
    if quiet {
        return String::new();
    }
    let rate = if secs > 0.0 {
        report.instructions as f64 / secs
    } else {
        0.0
    };
    format!(
        "\nwall {:.3} ms, {:.1} M emulated instructions/s\n",
        secs * 1e3,
        rate / 1e6
    )
}

/// The one-line summary of the differences from the expected state, if there are any:
/// `the final state differs from the expected one: 2 of 4096 bytes (--expect-mem m.hex),
/// 1 of 256 registers (--expect-regs r.txt)`.
fn differences(
    args: &RunArgs,
    mem: Option<&[expect::MemoryDiff]>,
    regs: Option<&[expect::RegisterDiff]>,
) -> Option<String> {
    let mut parts = Vec::new();
    if let (Some(p), Some(d)) = (&args.expect_mem, mem.filter(|d| !d.is_empty())) {
        parts.push(format!(
            "{} of 4096 bytes (--expect-mem {})",
            d.len(),
            gpu16::shown::path(p)
        ));
    }
    if let (Some(p), Some(d)) = (&args.expect_regs, regs.filter(|d| !d.is_empty())) {
        parts.push(format!(
            "{} of 256 registers (--expect-regs {})",
            d.len(),
            gpu16::shown::path(p)
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "the final state differs from the expected one: {}",
            parts.join(", ")
        )
    })
}

/// The message of a failed run: the file (or source location) and the failure, then which
/// outputs hold the state at the failure and which could not be written.
fn failed_run(mut message: String, written: &[Written], unwritten: &[String]) -> String {
    if let Some(wrote) = run_files::wrote(written) {
        message += &format!("\n{wrote}");
    }
    for e in unwritten {
        message += &format!("\nerror: {e}");
    }
    message
}

/// Why the run cannot start: the stage (`load`, `usage`, `output`), the error and the file
/// it names.
type Refusal = (&'static str, CliError, Option<PathBuf>);

/// The files this run writes, checked against its inputs and each other and prepared, before
/// it starts.
fn plan(args: &RunArgs, see: &SeeOptions, expected: Vec<Named>) -> Result<Vec<Planned>, Refusal> {
    let wanted: Vec<(&'static str, RunFile, &PathBuf)> = [
        ("--dump-mem", RunFile::MemoryDump, args.dump_mem.as_ref()),
        (
            "--mem-png",
            RunFile::MemoryPicture(see.palette, see.png_scale),
            see.mem_png.as_ref(),
        ),
        ("--trace", RunFile::Trace, see.trace.as_ref()),
        ("--vcd", RunFile::Waveform, see.vcd.as_ref()),
        (
            "--exec-log",
            RunFile::ExecLog,
            args.exec_log.as_ref().filter(|p| p.as_os_str() != "-"),
        ),
    ]
    .into_iter()
    .filter_map(|(flag, file, path)| Some((flag, file, path?)))
    .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    // An output on stdout: the data has stdout, so the report moves to stderr; with
    // --json or `--exec-log -` stdout is taken already.
    if let Some((flag, _, _)) = wanted.iter().find(|(_, _, p)| names_stdout(p)) {
        let taken = if args.json {
            Some("--json")
        } else if args.exec_log.as_deref().is_some_and(is_stdout) {
            Some("--exec-log -")
        } else {
            None
        };
        if let Some(other) = taken {
            let e = format!("{flag} - and {other} both write stdout: give one of them a file");
            return Err(("usage", CliError::usage(e), None));
        }
        super::stdout::report_to_stderr();
    }
    let mut inputs = source_inputs("PROGRAM", &args.program);
    if let Some(m) = &args.memory.mem {
        inputs.push(Named::new("--mem", m));
    }
    inputs.extend(expected);
    let outputs: Vec<Named> = wanted.iter().map(|(f, _, p)| Named::new(*f, p)).collect();
    check_distinct(&inputs, &outputs).map_err(|e| ("usage", CliError::usage(e), None))?;
    wanted
        .into_iter()
        .map(|(flag, file, path)| {
            let output = OutputFile::prepare(path)
                .map_err(|e| ("output", CliError::failed(&e), Some(path.clone())))?;
            Ok(Planned { flag, file, output })
        })
        .collect()
}
