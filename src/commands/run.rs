//! `gpu16 run`: load a program and a memory image, run them, print the report.

use super::machine_args::MachineArgs;
use super::see_args::SeeArgs;
use super::value_enums::BackendArg;
use super::{emit, CliError, Finished};
use clap::{Args, ValueEnum};
use gpu16::input::{load_memory, load_program};
use gpu16::machine::{Config, TaskLog};
use gpu16::output;
use gpu16::progress::ProgressDisplay;
use gpu16::BackendKind;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Clone, Copy, ValueEnum)]
pub enum Tasks {
    None,
    Summary,
    All,
}

#[derive(Args)]
pub struct RunArgs {
    /// Program: .bin/.tm (raw 32-byte frames), .hex (16-bit words) or .s/.asm (assembly).
    pub program: PathBuf,
    /// Initial shared memory: raw bytes (at most 4096) or .hex bytes; zero past its end.
    #[arg(long, value_name = "SM")]
    pub mem: Option<PathBuf>,
    /// Execution backend.
    #[arg(long, value_enum, default_value_t = BackendArg(BackendKind::Auto))]
    pub backend: BackendArg,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// How much of the task timeline to keep and print.
    #[arg(long, value_enum, default_value_t = Tasks::All)]
    pub tasks: Tasks,
    /// Print one JSON object on stdout instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Write the final shared memory (4096 bytes) to FILE.
    #[arg(long, value_name = "FILE")]
    pub dump_mem: Option<PathBuf>,
    /// No progress bar and no timing line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub see: SeeArgs,
}

/// `gpu16 run`: status 0 for a run that finished, 1 for a load error, a failed run or an
/// output that cannot be written.
pub fn run(args: RunArgs) -> Result<Finished, CliError> {
    let program = load_program(&args.program).map_err(CliError::failed)?;
    let memory = match &args.mem {
        Some(p) => load_memory(p).map_err(CliError::failed)?,
        None => Vec::new(),
    };
    let config = Config {
        tasks: match args.tasks {
            Tasks::None => TaskLog::None,
            Tasks::Summary => TaskLog::Summary,
            Tasks::All => TaskLog::All,
        },
        ..args.machine.config()
    };
    let started = Instant::now();
    let mut progress = ProgressDisplay::new(program.len() as u64, args.quiet);
    let see = args.see.options();
    let (outcome, mut events) = see.run(
        args.machine.runner(args.backend.0),
        &program,
        &memory,
        &config,
        &mut progress,
    );
    progress.finish();
    let wall = started.elapsed();
    see.write_files(&mut events, &outcome)
        .map_err(CliError::Failed)?;
    if let Some(chart) = see.timeline(&mut events, &program, &outcome) {
        emit(&chart).map_err(CliError::failed)?;
    }
    if let Some(note) = see.cut_note(&events) {
        eprintln!("{note}");
    }
    match outcome {
        Ok(report) => {
            if let Some(path) = &args.dump_mem {
                std::fs::write(path, &report.memory[..]).map_err(|e| {
                    CliError::Failed(format!("{}: cannot write: {e}", path.display()))
                })?;
            }
            if args.json {
                emit(&format!("{}\n", output::json::report(&report))).map_err(CliError::failed)?;
            } else {
                let secs = wall.as_secs_f64();
                let rate = if secs > 0.0 {
                    report.instructions as f64 / secs
                } else {
                    0.0
                };
                let mut text = output::human::report(&report, &memory);
                if !args.quiet {
                    text += &format!(
                        "\nwall {:.3} ms, {:.1} M emulated instructions/s\n",
                        secs * 1e3,
                        rate / 1e6
                    );
                }
                emit(&text).map_err(CliError::failed)?;
            }
            Ok(Finished::Success)
        }
        Err(failure) => {
            if args.json {
                emit(&format!("{}\n", output::json::failure(&failure)))
                    .map_err(CliError::failed)?;
            }
            Err(CliError::Failed(format!(
                "{}: {}",
                args.program.display(),
                failure.error
            )))
        }
    }
}
