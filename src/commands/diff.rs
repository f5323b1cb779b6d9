//! `gpu16 diff`: run a program on two backends and print `identical` or the first
//! divergence. Status 0 when identical, 1 on a divergence, 2 when it could not compare.

use super::diff_json::{verdict, Search};
use super::diff_locate::locate;
use super::json_out::{self, not_run, refuse, refuse_with, Unloaded};
use super::machine_args::MachineArgs;
use super::memory_args::MemoryArgs;
use super::stdout::StdoutError;
use super::value_enums::{BackendArg, FormatArg};
use super::{emit, CliError, Finished};
use crate::run_output::see::Outcome;
use crate::stop::StopSignal;
use clap::Args;
use gpu16::diff::{divergence, Divergence};
use gpu16::input::{InputError, ProgramFormat};
use gpu16::machine::{Config, Program, RunError};
use gpu16::Runner;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct DiffArgs {
    /// Program: .bin/.tm (at most 1 GiB), .hex (at most 2^22 words) or assembly (at most
    /// 16 MiB); `-` reads stdin (a raw image unless --format says otherwise).
    pub program: PathBuf,
    /// The program's format, whatever its name says (for `-`, stdin, the default is bin).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    #[command(flatten)]
    pub memory: MemoryArgs,
    /// The two backends to compare.
    #[arg(long, value_enum, num_args = 2, value_names = ["A", "B"], default_values_t = BackendArg::DIFF_PAIR)]
    pub backends: Vec<BackendArg>,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Wall-clock limit in seconds for the whole comparison (a decimal number, at most
    /// 1e9). Past it the runs stop and there is no verdict: status 2, with a message saying
    /// so; also while an input blocks as it is opened or read (a FIFO no one writes). A
    /// limit passed while the cycle of a divergence already found is being located keeps
    /// the verdict (status 1), without that cycle.
    #[arg(long, value_name = "SECS", value_parser = crate::stop::parse_timeout)]
    pub timeout: Option<Duration>,
    /// Print one JSON object on stdout instead of text, with the same status.
    ///
    /// Keys: `program` (PROGRAM as given), `backends` ([A, B] as reports name them),
    /// `identical`, and `divergence`: null, or `{"text", "field", "at_failure", "values":
    /// [A's, B's], "located", "not_located"}` with `core`, `register`, `address` (`bank`,
    /// `row`), `task` and `frame` where the field has them. `field` is `error`, `outcome`,
    /// `cycles`, `registers`, `memory`, `task_count`, `task`, `core_counters`, `counts`,
    /// `task_summary` or `memory_stats`. `located` is null or `{"limit", "cycle", "core",
    /// "frame", "ip", "divergence"}`: the smallest watchdog limit at which the runs differ,
    /// the cycle the difference first shows in (`limit - 1`), where the first differing
    /// core was, and the difference there. No verdict prints `{"error", "stage", "file"}`
    /// as `run --json` does, `stage` being `usage`, `load`, `assemble` (with `errors`,
    /// `warnings` and `diagnostics` as `check --json` gives them) or `compare` (the
    /// `--timeout` passed).
    #[arg(long)]
    pub json: bool,
}

/// `gpu16 diff`. Every error is [`CliError::CannotCompare`] (a usage error
/// [`CliError::Usage`], both status 2): without both runs there is no verdict. With
/// `--json` each error is also printed as an object on stdout ([`refuse`]).
pub fn diff(args: DiffArgs) -> Result<Finished, CliError> {
    let json = args.json;
    let usage = |e: String| refuse(json, "usage", CliError::usage(e), None);
    let config = args.machine.checked_config().map_err(usage)?;
    let inputs = args.memory.inputs(&args.program, &[]);
    let loading = super::deadlines::loading_deadline(args.timeout, json, &inputs, 2);
    // Looks at the files an assembly source includes, so it goes under the deadline.
    args.memory
        .check_streams(&args.program, &[])
        .map_err(usage)?;
    let (program, data) = load(&args)?;
    if let Some(mem) = &args.memory.mem {
        loading.reading("--mem", mem);
    }
    let memory = args
        .memory
        .load_for(&args.program, data)
        .map_err(|e| refuse(json, "load", CliError::cannot_compare(&e), Some(&e.path)))?;
    drop(loading);
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
    if !json {
        return compare(a, b, &config, run, &mut emit);
    }
    let name = args.program.display().to_string();
    compare_json(a, b, &config, run, &name, &mut emit)
}

/// The program `args` names, in its dialect. With `--json`, assembly source that does not
/// assemble prints its diagnostics as objects, as `check --json` does, and anything else
/// that cannot be loaded `{"error", "stage": "load", "file"}`.
/// The program, and the memory its source's `.data` gives, if any.
fn load(args: &DiffArgs) -> Result<(Program, Option<Vec<u8>>), CliError> {
    let (path, dialect) = (&args.program, args.machine.dialect());
    let failed = |e: InputError| {
        refuse(
            args.json,
            "load",
            CliError::cannot_compare(&e),
            Some(&e.path),
        )
    };
    let format = ProgramFormat::of_input(path, args.format.map(|f| f.0)).map_err(failed)?;
    match json_out::load_program(path, format, dialect, args.json) {
        Ok(l) => Ok((l.program, l.memory)),
        Err(Unloaded::Input(e)) => Err(failed(e)),
        Err(Unloaded::Assembly { error, diagnostics }) => {
            let name = path.display().to_string();
            let mut object = json_out::assembly_failed(&name, &diagnostics);
            object["program"] = json!(name);
            // The message stderr gets is the one without --json.
            Err(refuse_with(&object, CliError::cannot_compare(error)))
        }
    }
}

/// Whether a run was stopped from outside (`--timeout`) rather than coming to its end.
fn stopped(o: &Outcome) -> bool {
    matches!(o, Err(f) if matches!(f.error, RunError::Stopped { .. }))
}

/// The message of a comparison stopped by `--timeout` before both runs ended.
const TIMED_OUT: &str = "timeout: the runs passed the wall-clock limit (--timeout) before they \
                         ended, so the backends could not be compared";

/// Run backends `a` and `b` through `run` and compare them: `None` when identical, else the
/// first divergence and how the search for the cycle where it first shows came out.
/// `found` hears of the divergence before that search, which may take long. A run stopped
/// from outside (`--timeout`) gives no verdict: [`CliError::CannotCompare`].
fn judge(
    a: Runner,
    b: Runner,
    config: &Config,
    run: impl Fn(Runner, &Config) -> Outcome,
    found: &mut impl FnMut(&Divergence) -> Result<(), CliError>,
) -> Result<Option<(Divergence, Search)>, CliError> {
    let ra = run(a, config);
    // The second run would stop at once: the first tells already.
    let rb = match stopped(&ra) {
        true => ra.clone(),
        false => run(b, config),
    };
    if stopped(&ra) || stopped(&rb) {
        return Err(CliError::cannot_compare(TIMED_OUT));
    }
    let Some(d) = divergence(&a.name(), &ra, &b.name(), &rb) else {
        return Ok(None);
    };
    found(&d)?;
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
    let search = match located {
        _ if cut.get() => Search::Cut,
        Some(l) => Search::Located(l),
        None => Search::Agreed,
    };
    Ok(Some((d, search)))
}

/// Compare `a` and `b` ([`judge`]) and print the verdict as text through `out`:
/// [`Finished::Success`] when the outcomes are identical, [`Finished::Reported`] on a
/// divergence, printed at once and then the cycle where it first shows.
fn compare(
    a: Runner,
    b: Runner,
    config: &Config,
    run: impl Fn(Runner, &Config) -> Outcome,
    out: &mut impl FnMut(&str) -> Result<(), StdoutError>,
) -> Result<Finished, CliError> {
    let out = &mut |text: &str| out(text).map_err(CliError::cannot_compare);
    let found = judge(a, b, config, run, &mut |d| {
        out(&format!("divergence: {d}\n"))
    })?;
    let Some((_, search)) = found else {
        out("identical\n")?;
        return Ok(Finished::Success);
    };
    match search {
        Search::Cut => {
            out("first seen: not located: the search passed the wall-clock limit (--timeout)\n")?
        }
        Search::Located(l) => {
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
        Search::Agreed => {}
    }
    Ok(Finished::Reported)
}

/// [`compare`], printing the verdict as one JSON object ([`verdict`]) once it is known; a
/// comparison that gives none prints `{"error", "stage": "compare"}`.
fn compare_json(
    a: Runner,
    b: Runner,
    config: &Config,
    run: impl Fn(Runner, &Config) -> Outcome,
    program: &str,
    out: &mut impl FnMut(&str) -> Result<(), StdoutError>,
) -> Result<Finished, CliError> {
    let found = match judge(a, b, config, run, &mut |_| Ok(())) {
        Ok(found) => found,
        Err(e) => {
            let v = not_run("compare", &e.to_string(), None);
            return Err(match out(&format!("{v}\n")) {
                Ok(()) => e,
                Err(stdout) => e.and(stdout),
            });
        }
    };
    let (a, b) = (a.name(), b.name());
    let v = verdict(program, [&a, &b], found.as_ref().map(|(d, s)| (d, s)));
    out(&format!("{v}\n")).map_err(CliError::cannot_compare)?;
    Ok(match found {
        None => Finished::Success,
        Some(_) => Finished::Reported,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu16::machine::RunReport;
    use gpu16::BackendKind;
    use serde_json::Value;

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
    fn compare_to_json(
        a: BackendKind,
        b: BackendKind,
        run: impl Fn(Runner, &Config) -> Outcome,
    ) -> (Result<Finished, CliError>, Value) {
        let mut text = String::new();
        let config = Config::default();
        let finished = compare_json(a.into(), b.into(), &config, run, "p.s", &mut |t: &str| {
            text.push_str(t);
            Ok(())
        });
        assert!(
            text.ends_with('\n') && text.matches('\n').count() == 1,
            "{text}"
        );
        (finished, serde_json::from_str(&text).unwrap())
    }

    #[test]
    fn json_of_identical_outcomes_exits_0() {
        let (finished, v) = compare_to_json(BackendKind::Interp, BackendKind::Auto, fake);
        assert_eq!(finished.unwrap().status(), 0);
        assert_eq!(
            v,
            json!({"program": "p.s", "backends": ["interp", "auto"], "identical": true, "divergence": null})
        );
    }

    #[test]
    fn json_of_a_divergence_names_field_values_and_cycle() {
        let (finished, v) = compare_to_json(BackendKind::Interp, BackendKind::Jit, fake);
        assert_eq!(finished.unwrap().status(), 1);
        // By hand from `fake`: core 3 r5 is 0 in interp, 7 in jit once the watchdog is
        // past 20, so the smallest limit that differs is 21 and the cycle 20; the runs
        // finish there (no watchdog error), so no core's place is known.
        let register = |text: &str| {
            json!({
                "text": text,
                "field": "registers",
                "at_failure": false,
                "core": 3,
                "register": 5,
                "values": [0, 7],
            })
        };
        let mut want = register("registers: core 3 r5: interp 0x00, jit 0x07");
        want["located"] = json!({
            "limit": 21,
            "cycle": 20,
            "core": null,
            "frame": null,
            "ip": null,
            "divergence": register("registers: core 3 r5: interp 0x00, jit 0x07"),
        });
        want["not_located"] = Value::Null;
        assert_eq!(
            v,
            json!({"program": "p.s", "backends": ["interp", "jit"], "identical": false, "divergence": want})
        );
    }

    #[test]
    fn json_of_a_timeout_is_an_error_object_and_exits_2() {
        let (e, v) = compare_to_json(BackendKind::Interp, BackendKind::Jit, timed_out(u64::MAX));
        let e = e.unwrap_err();
        assert_eq!(e.status(), 2);
        assert_eq!(v, json!({"error": e.to_string(), "stage": "compare"}));
    }

    #[test]
    fn json_of_a_timeout_while_locating_keeps_the_verdict() {
        let (finished, v) =
            compare_to_json(BackendKind::Interp, BackendKind::Jit, timed_out(1 << 31));
        assert_eq!(finished.unwrap().status(), 1);
        let d = &v["divergence"];
        assert_eq!(d["field"], "registers");
        assert_eq!(d["located"], Value::Null);
        assert_eq!(
            d["not_located"],
            "the search passed the wall-clock limit (--timeout)"
        );
    }
}
