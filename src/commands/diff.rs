//! `gpu16 diff`: run a program on two backends and print `identical` or the first
//! divergence. Status 0 when identical, 1 on a divergence, 2 when it could not compare.

use super::machine_args::MachineArgs;
use super::memory_args::MemoryArgs;
use super::stdout::StdoutError;
use super::value_enums::BackendArg;
use super::{emit, CliError, Finished};
use clap::Args;
use gpu16::diff::{first_divergence, locate, Outcome};
use gpu16::input::{load_program_full, ProgramFormat};
use gpu16::machine::{Config, RunError};
use gpu16::stop::StopSignal;
use gpu16::Runner;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct DiffArgs {
    /// Program: .bin/.tm (at most 1 GiB), .hex (at most 2^22 words) or assembly (at most
    /// 16 MiB).
    pub program: PathBuf,
    #[command(flatten)]
    pub memory: MemoryArgs,
    /// The two backends to compare.
    #[arg(long, value_enum, num_args = 2, value_names = ["A", "B"], default_values_t = BackendArg::DIFF_PAIR)]
    pub backends: Vec<BackendArg>,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Wall-clock limit in seconds for the whole comparison (a decimal number, at most
    /// 1e9). Past it the runs stop and there is no verdict: status 2, with a message saying
    /// so. A limit passed while the cycle of a divergence already found is being located
    /// keeps the verdict (status 1), without that cycle.
    #[arg(long, value_name = "SECS", value_parser = gpu16::stop::parse_timeout)]
    pub timeout: Option<Duration>,
}

/// `gpu16 diff`. Every error is [`CliError::CannotCompare`]: without both runs there is no
/// verdict.
pub fn diff(args: DiffArgs) -> Result<Finished, CliError> {
    let config = args.machine.checked_config().map_err(CliError::usage)?;
    args.memory
        .check_stdin(&args.program)
        .map_err(CliError::usage)?;
    let format = ProgramFormat::of(&args.program).map_err(CliError::cannot_compare)?;
    let loaded = load_program_full(&args.program, format, args.machine.dialect())
        .map_err(CliError::cannot_compare)?;
    let program = loaded.program;
    let memory = args
        .memory
        .load_for(&args.program, loaded.memory)
        .map_err(CliError::cannot_compare)?;
    let (a, b) = (
        args.machine.runner(args.backends[0].0),
        args.machine.runner(args.backends[1].0),
    );
    let stop = StopSignal::new();
    if let Some(limit) = args.timeout {
        stop.arm_timeout(limit);
    }
    let run = |runner: Runner, config: &Config| {
        gpu16::run_observed(runner, &program, &memory, config, &mut stop.clone())
    };
    compare(a, b, &config, run, &mut emit)
}

/// Whether a run was stopped from outside (`--timeout`) rather than coming to its end.
fn stopped(o: &Outcome) -> bool {
    matches!(o, Err(f) if matches!(f.error, RunError::Stopped { .. }))
}

/// Run backends `a` and `b` through `run`, print the verdict through `out`, and say how it
/// came out: [`Finished::Success`] when the outcomes are identical, [`Finished::Reported`]
/// on a divergence, after locating the cycle where it first shows. A run stopped from
/// outside (`--timeout`) gives no verdict: [`CliError::CannotCompare`].
fn compare(
    a: Runner,
    b: Runner,
    config: &Config,
    run: impl Fn(Runner, &Config) -> Outcome,
    out: &mut impl FnMut(&str) -> Result<(), StdoutError>,
) -> Result<Finished, CliError> {
    let out = &mut |text: &str| out(text).map_err(CliError::cannot_compare);
    let ra = run(a, config);
    // The second run would stop at once: the first tells already.
    let rb = match stopped(&ra) {
        true => ra.clone(),
        false => run(b, config),
    };
    if stopped(&ra) || stopped(&rb) {
        return Err(CliError::cannot_compare(
            "timeout: the runs passed the wall-clock limit (--timeout) before they ended, \
             so the backends could not be compared",
        ));
    }
    let Some(d) = first_divergence(&a.name(), &ra, &b.name(), &rb) else {
        out("identical\n")?;
        return Ok(Finished::Success);
    };
    out(&format!("divergence: {d}\n"))?;
    // Rerun both with the watchdog earlier and earlier to find when it starts.
    let cycles = |o: &Outcome| match o {
        Ok(r) => r.cycles,
        Err(f) => f.state.cycles,
    };
    let upper = cycles(&ra)
        .max(cycles(&rb))
        .clamp(1, config.max_cycles.max(1));
    let run_to = |limit: u64| {
        let c = Config {
            max_cycles: limit,
            ..*config
        };
        (run(a, &c), run(b, &c))
    };
    // A rerun stopped from outside stops the search: its answer would mean nothing.
    let cut = std::cell::Cell::new(false);
    let run_to = |limit: u64| {
        let (x, y) = run_to(limit);
        cut.set(cut.get() || stopped(&x) || stopped(&y));
        (x, y)
    };
    let located = locate(&a.name(), &b.name(), upper, run_to);
    if cut.get() {
        out("first seen: not located: the search passed the wall-clock limit (--timeout)\n")?;
    } else if let Some(l) = located {
        let at = l.core.map_or(String::new(), |(core, frame, ip)| {
            format!(" (core {core}: frame {frame}, IP {ip})")
        });
        out(&format!(
            "first seen with the watchdog at cycle {} (the runs agree with it at {}){at}: {}\n",
            l.limit,
            l.limit - 1,
            l.divergence
        ))?;
    }
    Ok(Finished::Reported)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu16::machine::RunReport;
    use gpu16::BackendKind;

    /// A stand-in for the backends: both finish at cycle 30, but the JIT's core 3 ends with
    /// r5 = 7 once the watchdog lets it run past cycle 20.
    fn fake(runner: Runner, config: &Config) -> Outcome {
        let mut r = RunReport::initial(runner.backend.name(), *config, &[]);
        r.cycles = config.max_cycles.min(30);
        if runner.backend == BackendKind::Jit && config.max_cycles > 20 {
            r.registers[3][5] = 7;
        }
        Ok(r)
    }

    fn compare_to_text(a: BackendKind, b: BackendKind) -> (Result<Finished, CliError>, String) {
        let mut text = String::new();
        let config = Config::default();
        let finished = compare(a.into(), b.into(), &config, fake, &mut |t: &str| {
            text.push_str(t);
            Ok(())
        });
        (finished, text)
    }

    #[test]
    fn identical_outcomes_exit_0() {
        let (finished, text) = compare_to_text(BackendKind::Interp, BackendKind::Auto);
        assert_eq!(finished.unwrap().status(), 0);
        assert_eq!(text, "identical\n");
    }

    #[test]
    fn a_divergence_exits_1_and_is_located() {
        let (finished, text) = compare_to_text(BackendKind::Interp, BackendKind::Jit);
        assert_eq!(finished.unwrap().status(), 1);
        assert!(
            text.starts_with("divergence: registers: core 3 r5: interp 0x00, jit 0x07\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "first seen with the watchdog at cycle 21 (the runs agree with it at 20)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_stdout_error_is_returned() {
        let config = Config::default();
        let failed = compare(
            BackendKind::Interp.into(),
            BackendKind::Jit.into(),
            &config,
            fake,
            &mut |_| Err(StdoutError(std::io::Error::from_raw_os_error(28))),
        );
        let e = failed.unwrap_err();
        assert_eq!(e.status(), 2);
        assert!(e.to_string().starts_with("cannot write to standard output"));
    }

    /// `fake`, but the JIT's runs with the watchdog below `below` are stopped by a timeout
    /// at cycle 12.
    fn timed_out(below: u64) -> impl Fn(Runner, &Config) -> Outcome {
        move |runner, config| {
            if runner.backend != BackendKind::Jit || config.max_cycles >= below {
                return fake(runner, config);
            }
            let mut state = RunReport::initial(runner.backend.name(), *config, &[]);
            state.cycles = 12;
            Err(Box::new(gpu16::machine::RunFailure {
                error: RunError::Stopped {
                    cause: gpu16::machine::StopCause::Timeout,
                    cycle: 12,
                    cores: Vec::new(),
                    next_frame: None,
                },
                state,
            }))
        }
    }

    #[test]
    fn a_timeout_gives_no_verdict_and_exits_2() {
        let mut text = String::new();
        let config = Config::default();
        let a = BackendKind::Interp.into();
        let e = compare(
            a,
            BackendKind::Jit.into(),
            &config,
            timed_out(u64::MAX),
            &mut |t| {
                text.push_str(t);
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(e.status(), 2);
        assert_eq!(
            e.to_string(),
            "timeout: the runs passed the wall-clock limit (--timeout) before they ended, so \
             the backends could not be compared"
        );
        assert_eq!(text, "");
    }

    #[test]
    fn a_timeout_while_locating_keeps_the_verdict_without_the_cycle() {
        let mut text = String::new();
        let config = Config::default();
        let a = BackendKind::Interp.into();
        // The first runs (watchdog 2^32) are not stopped; the search's reruns below 2^31 are.
        let finished = compare(
            a,
            BackendKind::Jit.into(),
            &config,
            timed_out(1 << 31),
            &mut |t| {
                text.push_str(t);
                Ok(())
            },
        );
        assert_eq!(finished.unwrap().status(), 1);
        assert_eq!(
            text,
            "divergence: registers: core 3 r5: interp 0x00, jit 0x07\n\
             first seen: not located: the search passed the wall-clock limit (--timeout)\n"
        );
    }
}
