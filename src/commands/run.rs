//! `gpu16 run`: load a program and a memory image, run them, print the report.

use super::machine_args::MachineArgs;
use clap::{Args, ValueEnum};
use gpu16::input::{load_memory, load_program};
use gpu16::machine::{Config, TaskLog};
use gpu16::output;
use gpu16::progress::ProgressDisplay;
use gpu16::BackendKind;
use std::path::PathBuf;
use std::process::ExitCode;
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
    #[arg(long, value_enum, default_value_t = BackendKind::Auto)]
    pub backend: BackendKind,
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
    pub see: output::see::SeeArgs,
}

pub fn run(args: RunArgs) -> Result<ExitCode, String> {
    let program = load_program(&args.program).map_err(|e| e.to_string())?;
    let memory = match &args.mem {
        Some(p) => load_memory(p).map_err(|e| e.to_string())?,
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
    let (outcome, mut events) =
        args.see
            .run(args.backend, &program, &memory, &config, &mut progress);
    progress.finish();
    let wall = started.elapsed();
    args.see.write(&mut events, &program, &outcome)?;
    match outcome {
        Ok(report) => {
            if let Some(path) = &args.dump_mem {
                std::fs::write(path, &report.memory[..])
                    .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
            }
            if args.json {
                super::emit(&format!("{}\n", output::json::report(&report)));
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
                super::emit(&text);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(failure) => {
            if args.json {
                super::emit(&format!("{}\n", output::json::failure(&failure)));
            }
            Err(format!("{}: {}", args.program.display(), failure.error))
        }
    }
}
