//! Stopping a run from outside: `--timeout` and Ctrl-C end it like the watchdog at the cycle
//! it had reached. What is checked is exact, not timed: whatever cycle the stop lands on,
//! the state reported must be the one a watchdog at that very cycle reports (an independent
//! path: a run with `--max-cycles` set to it), and every unfinished core is listed.

mod common;

use common::every_runner;
use gpu16_machine::{Config, Observer, RunError, StopCause};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gpu16-run-control-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", String::from_utf8_lossy(stdout));
    })
}

/// The stopped run's state equals a watchdog's at the cycle it stopped at.
fn same_as_the_watchdog_there(program: &str, stopped: &Value, backend: &str) {
    let cycle = stopped["error"]["cycle"].as_u64().unwrap();
    let limit = cycle.to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["run", program, "-q", "--json", "--backend", backend])
        .args(["--max-cycles", &limit])
        .output()
        .unwrap();
    let watchdog = json(&out.stdout);
    assert_eq!(watchdog["error"]["rule"], "watchdog");
    for key in [
        "cycles",
        "registers",
        "memory",
        "instructions",
        "stalls",
        "tasks",
    ] {
        assert_eq!(stopped[key], watchdog[key], "{key} at cycle {cycle}");
    }
    assert_eq!(stopped["error"]["cores"], watchdog["error"]["cores"]);
    // Every core ran from cycle 5 up to the stop: one instruction a cycle.
    assert_eq!(stopped["instructions"], 16 * (cycle - 5));
}

#[test]
fn a_timeout_ends_the_run_like_the_watchdog_where_it_had_come() {
    let d = scratch("timeout");
    let src = d.join("busy.s");
    std::fs::write(&src, common::BUSY).unwrap();
    let src = src.to_str().unwrap();
    for backend in ["interp", "auto"] {
        let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .args([
                "run",
                src,
                "-q",
                "--json",
                "--timeout",
                "0.3",
                "--backend",
                backend,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{backend}");
        let v = json(&out.stdout);
        assert_eq!(v["error"]["rule"], "timeout", "{backend}");
        assert_eq!(v["error"]["cores"].as_array().unwrap().len(), 16);
        // The config echoes the limit asked for, not the cycle the stop lowered it to.
        assert_eq!(v["config"]["max_cycles"], 1u64 << 32);
        same_as_the_watchdog_there(src, &v, backend);
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("timeout: the run passed its wall-clock limit"),
            "{text}"
        );
    }
    // A run that ends in time is not touched.
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["run", "examples/counter.s", "-q", "--timeout", "600"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    std::fs::remove_dir_all(&d).ok();
}

#[cfg(unix)]
#[test]
fn ctrl_c_ends_the_run_like_the_watchdog_and_exits_130() {
    let d = scratch("ctrl-c");
    let src = d.join("busy.s");
    std::fs::write(&src, common::BUSY).unwrap();
    let src = src.to_str().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["run", src, "-q", "--json", "--backend", "interp"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Time enough for the handler to be installed, even on a loaded machine.
    std::thread::sleep(Duration::from_millis(1000));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v = json(&out.stdout);
    assert_eq!(v["error"]["rule"], "interrupted");
    same_as_the_watchdog_there(src, &v, "interp");
    std::fs::remove_dir_all(&d).ok();
}

/// An observer that asks to stop at its `after`-th progress report.
struct StopAfter {
    after: u32,
    seen: u32,
}

impl Observer for StopAfter {
    const WANTS_EVENTS: bool = false;
    const WANTS_PROGRESS: bool = true;
    fn progress(&mut self, _: gpu16_machine::Progress) {
        self.seen += 1;
    }
    fn stop_requested(&mut self) -> Option<StopCause> {
        (self.seen >= self.after).then_some(StopCause::Timeout)
    }
    fn rewind_events(&mut self, _cycle: u64) {}
}

#[test]
fn every_backend_stops_where_the_watchdog_would_stop() {
    let program = gpu16_asm::assemble(common::BUSY, "busy.s").unwrap().program;
    let config = Config {
        checkpoint_cycles: 1000,
        ..Config::default()
    };
    for r in every_runner() {
        for after in [1, 2, 5, 40] {
            let mut stop = StopAfter { after, seen: 0 };
            let f = gpu16::run_observed(r, &program, &[], &config, &mut stop).unwrap_err();
            let RunError::Stopped {
                cause,
                cycle,
                cores,
                ..
            } = f.error.clone()
            else {
                panic!("{r:?}: expected a stop, got {}", f.error);
            };
            assert_eq!(cause, StopCause::Timeout);
            assert_eq!(cores.len(), 16);
            let watchdog = Config {
                max_cycles: cycle,
                ..config
            };
            let w = gpu16::run(r, &program, &[], &watchdog).unwrap_err();
            let RunError::Watchdog { cores: at, .. } = &w.error else {
                panic!("{}", w.error);
            };
            assert_eq!(&cores, at, "{r:?} after {after}");
            let mut state = f.state.clone();
            state.config.max_cycles = cycle;
            assert_eq!(state, w.state, "{r:?} after {after}: cycle {cycle}");
        }
    }
}
