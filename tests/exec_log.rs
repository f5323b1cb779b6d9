//! `run --exec-log`: one line per executed instruction, in (cycle, core id) order, with the
//! instruction and what it did. Hand-worked on a small program; on generated programs, the
//! log is the same on every backend and engine, in strict (cycle, core) order, one line per
//! counted instruction, and logging changes nothing else about the run.

use gpu16::fuzz::Case;
use gpu16::output::exec_log::{line, ExecLog};
mod common;

use common::every_runner;
use gpu16::BackendKind;
use gpu16_gen::Profile;
use gpu16_machine::{Config, Program};
use std::process::Command;

/// Cores 0 and 1: r8 = 0x21 at 5, store it at 0x021 at 6, load it into r9 at 7,
/// r8 * r8 = 0x441 into r11:r10 at 8, ready at 9.
const TINY: &str = "\
.cf mask=0x3
.if
    set_const 0x21, r8
    st [r8, r1], r8
    ld [r8, r1], r9
    mul r8, r8, r10
    ready
";

#[test]
fn a_hand_worked_log() {
    let d = std::env::temp_dir().join(format!("gpu16-exec-log-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let src = d.join("tiny.s");
    std::fs::write(&src, TINY).unwrap();
    let per_core = [
        (5, 0, "set_const 0x21, r8  r8=0x21"),
        (6, 1, "st [r8, r1], r8  mem[0x021]=0x21"),
        (7, 2, "ld [r8, r1], r9  r9=0x21 from 0x021"),
        (8, 3, "mul r8, r8, r10  r10=0x41 r11=0x04"),
        (9, 4, "ready"),
    ];
    let mut expected = String::new();
    for (cycle, ip, text) in per_core {
        for core in 0..2 {
            expected += &format!("{cycle} {core} 1 {ip}  {text}\n");
        }
    }
    for backend in ["interp", "jit", "auto"] {
        let log = d.join(format!("{backend}.log"));
        let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .args(["run", src.to_str().unwrap(), "-q", "--backend", backend])
            .args(["--exec-log", log.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{backend}");
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            expected,
            "{backend}"
        );
        // `-` puts it on stdout, before the report.
        let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .args(["run", src.to_str().unwrap(), "-q", "--backend", backend])
            .args(["--exec-log", "-"])
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(stdout.starts_with(&expected), "{backend}: {stdout}");
        assert!(stdout[expected.len()..].starts_with("cycles 10   instructions 10"));
    }
    // The first N lines, and a note.
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["run", src.to_str().unwrap(), "-q", "--exec-log", "-"])
        .args(["--exec-log-limit", "3"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let first3: String = expected.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert!(stdout.starts_with(&first3), "{stdout}");
    assert!(stdout[first3.len()..].starts_with("cycles"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cut at its limit of 3 lines"), "{stderr}");
    // A log may not overwrite an input, and its limit is bounded.
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args([
            "run",
            src.to_str().unwrap(),
            "--exec-log",
            src.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&src).unwrap(), TINY);
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args([
            "run",
            src.to_str().unwrap(),
            "--exec-log",
            "-",
            "--exec-log-limit",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn every_backend_logs_the_same_instructions_in_cycle_and_core_order() {
    let runners = every_runner();
    let mut logged = 0;
    for (k, profile) in Profile::ALL.into_iter().enumerate() {
        for seed in 0..8 {
            let c = Case::new(60_000_000 + k as u64 * 1000 + seed, Some(profile));
            let Ok(program) = Program::from_image(&c.image) else {
                continue;
            };
            let config = Config {
                max_cycles: c.config.max_cycles.min(20_000),
                ..c.config
            };
            let plain = gpu16::run(BackendKind::Interp, &program, &c.memory, &config);
            let mut first: Option<Vec<String>> = None;
            for r in &runners {
                let mut log = ExecLog::new(1 << 20);
                let outcome = gpu16::run_observed(*r, &program, &c.memory, &config, &mut log);
                let lines: Vec<String> = log.kept().iter().map(line).collect();
                // Logging changes nothing about the run.
                let (mut a, mut b) = (outcome.clone(), plain.clone());
                for o in [&mut a, &mut b] {
                    match o {
                        Ok(r) => r.backend.clear(),
                        Err(f) => f.state.backend.clear(),
                    }
                }
                assert!(a == b, "seed {seed} {r:?}: the logged run differs");
                let instructions = match &outcome {
                    Ok(report) => report.instructions,
                    Err(f) => f.state.instructions,
                };
                assert_eq!(lines.len() as u64, instructions, "seed {seed} {r:?}");
                let keys: Vec<(u64, u8)> = log.kept().iter().map(|e| (e.cycle, e.core)).collect();
                if let Some(i) = keys.windows(2).position(|w| w[0] >= w[1]) {
                    panic!(
                        "seed {seed} {r:?}: order at {i}: {:?}",
                        &lines[i.saturating_sub(3)..(i + 4).min(lines.len())]
                    );
                }
                match &first {
                    None => first = Some(lines),
                    Some(f) => assert!(*f == lines, "seed {seed}: {r:?} logs differently"),
                }
            }
            logged += first.map_or(0, |f| f.len());
        }
    }
    assert!(logged > 10_000, "only {logged} lines logged");
}
