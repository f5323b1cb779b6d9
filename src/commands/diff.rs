//! `gpu16 diff`: run a program on two backends and print `identical` or the first
//! divergence.

use super::machine_args::MachineArgs;
use clap::Args;
use gpu16::diff::{first_divergence, locate};
use gpu16::input::{load_memory, load_program};
use gpu16::machine::Config;
use gpu16::BackendKind;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct DiffArgs {
    /// Program: .bin/.tm, .hex or assembly.
    pub program: PathBuf,
    /// Initial shared memory.
    #[arg(long, value_name = "SM")]
    pub mem: Option<PathBuf>,
    /// The two backends to compare.
    #[arg(long, value_enum, num_args = 2, value_names = ["A", "B"], default_values_t = BackendKind::DIFF_PAIR)]
    pub backends: Vec<BackendKind>,
    #[command(flatten)]
    pub machine: MachineArgs,
}

pub fn diff(args: DiffArgs) -> Result<ExitCode, String> {
    let program = load_program(&args.program).map_err(|e| e.to_string())?;
    let memory = match &args.mem {
        Some(p) => load_memory(p).map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    let config = args.machine.config();
    let (a, b) = (args.backends[0], args.backends[1]);
    let ra = gpu16::run(a, &program, &memory, &config);
    let rb = gpu16::run(b, &program, &memory, &config);
    match first_divergence(a.name(), &ra, b.name(), &rb) {
        None => {
            super::emit("identical\n");
            Ok(ExitCode::SUCCESS)
        }
        Some(d) => {
            super::emit(&format!("divergence: {d}\n"));
            // Rerun both with the watchdog earlier and earlier to find when it starts.
            let cycles = |o: &gpu16::diff::Outcome| match o {
                Ok(r) => r.cycles,
                Err(f) => f.state.cycles,
            };
            let upper = cycles(&ra)
                .max(cycles(&rb))
                .clamp(1, config.max_cycles.max(1));
            let run_to = |limit: u64| {
                let c = Config {
                    max_cycles: limit,
                    ..config
                };
                (
                    gpu16::run(a, &program, &memory, &c),
                    gpu16::run(b, &program, &memory, &c),
                )
            };
            if let Some(l) = locate(a.name(), b.name(), upper, run_to) {
                let at = l.core.map_or(String::new(), |(core, frame, ip)| {
                    format!(" (core {core}: frame {frame}, IP {ip})")
                });
                super::emit(&format!(
                    "first seen with the watchdog at cycle {} (the runs agree with it at {}){at}: {}\n",
                    l.limit,
                    l.limit - 1,
                    l.divergence
                ));
            }
            Ok(ExitCode::from(1))
        }
    }
}
