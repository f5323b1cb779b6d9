//! Checkpoints change nothing but speed, and a livelock is proven alike everywhere.
//!
//! The run loop stops every core of a frame that can loop at each multiple of
//! `Config::checkpoint_cycles` (docs/semantics.md, "Livelock"). On generated programs of every
//! profile, a run with checkpoints every 1, 3 or 64 cycles must give what the default gives,
//! bit for bit and cycle for cycle, on every backend and engine, unless one of the runs is a
//! livelock (proven earlier with denser checkpoints); livelocks, where they happen, must be
//! the same on every backend for the same spacing. The reference for each spacing is the
//! interpreter at the default spacing, an independent path through the run loop (a core that
//! stops every cycle goes through it once an instruction).

mod common;

use common::every_runner;
use gpu16::fuzz::Case;
use gpu16::{BackendKind, Runner};
use gpu16_gen::Profile;
use gpu16_machine::{Config, Program, RunError, RunFailure, RunReport};
use std::process::Command;

type Outcome = Result<RunReport, Box<RunFailure>>;

fn outcome(r: impl Into<Runner>, program: &Program, memory: &[u8], config: &Config) -> Outcome {
    // The spacing is part of the config each report echoes: compare the rest.
    let normal = |mut report: RunReport| {
        report.config.checkpoint_cycles = Config::default().checkpoint_cycles;
        report.backend.clear();
        report
    };
    match gpu16::run(r, program, memory, config) {
        Ok(report) => Ok(normal(report)),
        Err(mut f) => {
            f.state = normal(f.state);
            Err(f)
        }
    }
}

fn is_livelock(o: &Outcome) -> bool {
    matches!(o, Err(f) if matches!(f.error, RunError::Livelock { .. }))
}

#[test]
fn checkpoint_spacing_changes_no_result() {
    let per_profile = 24;
    let (mut compared, mut livelocks) = (0, 0);
    for (k, profile) in Profile::ALL.into_iter().enumerate() {
        let base = 40_000_000 + k as u64 * 1_000_000;
        for seed in base..base + per_profile {
            let c = Case::new(seed, Some(profile));
            let Ok(program) = Program::from_image(&c.image) else {
                continue;
            };
            // Generated loops are short: a modest watchdog keeps the suite quick.
            let config = Config {
                max_cycles: c.config.max_cycles.min(200_000),
                ..c.config
            };
            let reference = outcome(BackendKind::Interp, &program, &c.memory, &config);
            for every in [1, 3, 64] {
                let dense = Config {
                    checkpoint_cycles: every,
                    ..config
                };
                let mut first: Option<Outcome> = None;
                for r in every_runner() {
                    let o = outcome(r, &program, &c.memory, &dense);
                    if is_livelock(&o) {
                        livelocks += 1;
                    } else {
                        assert!(
                            o == reference,
                            "seed {seed}, every {every}, {r:?}: {:?}\nvs the default: {:?}",
                            o.as_ref()
                                .map(|r| r.cycles)
                                .map_err(|f| f.error.to_string()),
                            reference
                                .as_ref()
                                .map(|r| r.cycles)
                                .map_err(|f| f.error.to_string())
                        );
                        compared += 1;
                    }
                    match &first {
                        None => first = Some(o),
                        Some(f) => assert!(
                            *f == o,
                            "seed {seed}, every {every}: {r:?} differs from the interpreter"
                        ),
                    }
                }
            }
        }
    }
    assert!(compared > 1000, "only {compared} runs compared");
    eprintln!("{compared} runs equal to the default spacing, {livelocks} livelocks");
}

/// A 16-core spin under the default 2^32-cycle watchdog: proven endless at the second
/// checkpoint (2^19), where the run stops, instead of running 2^32 cycles.
#[test]
fn the_cli_reports_a_spinning_run_as_a_livelock_at_once() {
    let dir = std::env::temp_dir().join(format!("gpu16-checkpoints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("spin.s");
    std::fs::write(
        &src,
        ".cf mask=0xffff\n.if\n    set_const 1, r9\nspin:\n    bnz spin, r9\n",
    )
    .unwrap();
    for backend in ["interp", "jit", "auto"] {
        let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .args([
                "run",
                src.to_str().unwrap(),
                "--backend",
                backend,
                "-q",
                "--json",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{backend}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let e = &v["error"];
        assert_eq!(e["rule"], "livelock", "{backend}");
        assert_eq!(e["cycle"], 1 << 19, "{backend}");
        assert_eq!(e["period"], 1, "{backend}");
        assert_eq!(e["core"], 0, "{backend}");
        assert_eq!(e["polls"], false, "{backend}");
        assert_eq!(e["cores"][15]["state"], "running", "{backend}");
        assert_eq!(v["cycles"], 1 << 19, "{backend}");
        // Each core ran from cycle 5 up to the second checkpoint: 2^19 - 5 instructions.
        assert_eq!(v["instructions"], 16 * ((1u64 << 19) - 5), "{backend}");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(text.contains("livelock: core 0 (frame 1, IP 1)"), "{text}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
