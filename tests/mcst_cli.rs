//! The MCST dialect through the built binary (`asm`, `disasm`, `check` and `gen` with
//! `--dialect mcst`) and the MCST generator over many seeds: every program it writes loads
//! in the dialect, disassembles to source that re-assembles to the same bytes, ends with a
//! halt the task scheduler reaches, and runs to it.

mod common;

use common::{gpu16, s, stderr, stdout};
use gpu16_asm::{assemble_in, disassemble, lint};
use gpu16_gen::{generate_in, Profile};
use gpu16_machine::{Dialect, Program};
use std::path::PathBuf;

fn scratch(test: &str) -> PathBuf {
    common::scratch("mcst_cli", test)
}

/// The peer's forms: a set_const into r1 (a constant), into r8 (the core id), a store with
/// r8 as the bank register, a register shift; then the halt at frame 2.
const PROGRAM: &str = "\
.cf mask=0x0003
.if
    set_const 0x04, r1
    set_const 0, r8
    rshft r1, r1, r2
    st [r1, r8], r2
.halt
";

/// PROGRAM encoded by hand from mcst-dialect.md sections 2 and 3.1.
fn expected_image() -> Vec<u8> {
    let mut img = vec![0u8; 96];
    img[0] = 0x01; // IF_Num 1, fence no
    img[2] = 0x03; // mask 3
    let words = [0xc041u16, 0xc008, 0x6112, 0xd182];
    for i in 0..16 {
        let w = words.get(i).copied().unwrap_or(0xf000);
        img[32 + 2 * i..34 + 2 * i].copy_from_slice(&w.to_le_bytes());
    }
    img[65] = 0x42; // stop | NextCF 2
    img
}

#[test]
fn asm_disasm_and_check_take_the_dialect() {
    let d = scratch("asm");
    let src = d.join("p.s");
    std::fs::write(&src, PROGRAM).unwrap();
    let out = gpu16(&["asm", "--dialect", "mcst", s(&src)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bin = d.join("p.bin");
    assert_eq!(std::fs::read(&bin).unwrap(), expected_image());

    // The spec dialect refuses r8 as a bank register and `.halt`.
    let out = gpu16(&[
        "asm",
        "--dialect",
        "spec",
        s(&src),
        "-o",
        s(&d.join("q.bin")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("`.halt`"), "{}", stderr(&out));

    let out = gpu16(&["disasm", "--dialect", "mcst", s(&bin)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("st [r1, r8], r2"), "{text}");
    assert!(text.contains("rshft r1, r1, r2"), "{text}");
    assert!(text.contains(".halt"), "{text}");
    let again = d.join("again.s");
    std::fs::write(&again, &text).unwrap();
    let out = gpu16(&[
        "asm",
        "--dialect",
        "mcst",
        s(&again),
        "-o",
        s(&d.join("again.bin")),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(d.join("again.bin")).unwrap(),
        expected_image()
    );

    // The same image read as the spec's: 0xd182 is st with reserved mode 2, a load error.
    let out = gpu16(&["disasm", s(&bin)]);
    assert_eq!(out.status.code(), Some(1));

    for program in [&src, &bin] {
        let out = gpu16(&["check", "--dialect", "mcst", s(program)]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).ends_with("3 frames, no errors, 0 warnings\n"),
            "{}",
            stdout(&out)
        );
    }
    // Without the halt, check says the run never ends.
    let nohalt = d.join("nohalt.s");
    std::fs::write(&nohalt, PROGRAM.replace(".halt\n", "")).unwrap();
    let out = gpu16(&["check", "--dialect", "mcst", s(&nohalt)]);
    assert!(out.status.success());
    assert!(
        stdout(&out).contains("never reaches a halt"),
        "{}",
        stdout(&out)
    );

    let out = gpu16(&["asm", "--dialect", "vliw", s(&src)]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn gen_writes_mcst_programs() {
    let d = scratch("gen");
    let bin = d.join("g.bin");
    let out = gpu16(&["gen", "--dialect", "mcst", "--seed", "7", "-o", s(&bin)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let image = std::fs::read(&bin).unwrap();
    assert_eq!(
        image,
        generate_in(7, 3, Profile::Mixed, Dialect::Mcst).image
    );
    let out = gpu16(&["disasm", "--dialect", "mcst", s(&bin)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(".halt"));
    let out = gpu16(&["check", "--dialect", "mcst", s(&bin)]);
    assert!(out.status.success(), "{}", stderr(&out));

    // The spec's output for a seed is not the mcst one, and is what `generate` gives.
    let spec = d.join("s.bin");
    assert!(gpu16(&["gen", "--seed", "7", "-o", s(&spec)])
        .status
        .success());
    assert_eq!(
        std::fs::read(&spec).unwrap(),
        gpu16_gen::generate(7, 3, Profile::Mixed).image
    );

    for bad in [&["--groups", "13"][..], &["--break", "length"][..]] {
        let mut args = vec!["gen", "--dialect", "mcst", "--seed", "1", "-o", s(&bin)];
        args.extend(bad);
        let out = gpu16(&args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr(&out));
    }
}

#[test]
fn two_hundred_generated_mcst_programs_assemble_load_and_halt() {
    let mut interp = gpu16_interp::Interpreter::new();
    let config = gpu16_machine::Config {
        max_cycles: 10_000_000,
        ..Default::default()
    };
    for seed in 0..200u64 {
        let profile = Profile::ALL[seed as usize % Profile::ALL.len()];
        let groups = 1 + seed as usize % gpu16_gen::MCST_MAX_GROUPS;
        let g = generate_in(seed, groups, profile, Dialect::Mcst);
        let p = Program::from_image_in(&g.image, Dialect::Mcst)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(p.len() <= 64, "seed {seed}: {} frames", p.len());
        let text = disassemble(&p);
        assert!(!text.contains("_sync"), "seed {seed}\n{text}");
        assert!(
            text.trim_end().lines().last().unwrap().starts_with(".halt"),
            "seed {seed}\n{text}"
        );
        let a = assemble_in(&text, "g.s", Dialect::Mcst)
            .unwrap_or_else(|d| panic!("seed {seed}: {d}\n{text}"));
        assert_eq!(a.program.image(), g.image, "seed {seed}\n{text}");
        // The scheduler reads the layout as written and reaches the halt.
        let walk: Vec<String> = lint(&p)
            .into_iter()
            .map(|f| f.message)
            .filter(|m| {
                m.contains("never reach") || m.contains("reads this instruction frame as a control")
            })
            .collect();
        assert!(walk.is_empty(), "seed {seed}: {walk:?}");
        let report = gpu16_machine::run(&mut interp, &p, &g.memory, &config)
            .unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        assert!(report.cycles > 0);
    }
}

/// The bundled example, as the README shows it: sixteen stores to bank 0. Under mcst-rtl:
/// broadcast from 1, set_const in 8, stores granted one a cycle from core 1 (9) to core 15
/// (23) and core 0 (24), core 0's ready in 25: 26 cycles; core 0 stores last. Under
/// decisions.md's latencies: set_const 5, store 6, ready 7: 8 cycles.
#[test]
fn the_bundled_example_runs_as_the_readme_says() {
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/mcst_bank0.s");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", s(&example), "--dialect", "mcst", "--json", "-q"];
        args.extend_from_slice(extra);
        let o = gpu16(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()
    };
    let rtl = run(&["--timing", "mcst-rtl"]);
    assert_eq!(rtl["cycles"], 26);
    assert_eq!(
        (
            rtl["tasks"][0]["start"].clone(),
            rtl["tasks"][0]["end"].clone()
        ),
        (8.into(), 25.into())
    );
    let memory = rtl["memory"].as_str().unwrap();
    for core in 0..16 {
        assert_eq!(&memory[2 * core..2 * core + 2], format!("{core:02x}"));
    }
    assert_eq!(run(&[])["cycles"], 8);
    // A program with no reachable halt gets a warning before it runs.
    let d = scratch("no_halt");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("loop.s");
    std::fs::write(&p, ".cf mask=1\n.if\nready\n").unwrap();
    let run_loop = |extra: &[&str]| {
        let mut args = vec!["run", s(&p), "--dialect", "mcst", "-q"];
        args.extend_from_slice(extra);
        gpu16(&args)
    };
    let o = run_loop(&["--max-cycles", "1000", "--tasks", "none"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("never reaches a stop frame"),
        "{}",
        stderr(&o)
    );
    // The livelock proof: CF 0 in cycle 0, its broadcast in 1..=4 (TP to 2 as it is
    // delivered), then the 62 zero frames as empty control frames, one a cycle from cycle
    // 5, frame 63 in cycle 66, so TP is back at frame 0 after cycle 66. The core's task
    // (start 5, `ready` in 5) ended long before.
    assert!(
        stderr(&o).contains(
            ": livelock: the task scheduler's walk reaches no halt (.halt) nor any stop \
             frame that could end the run: it goes round control frames 0, 2..63 for ever; \
             the run stopped at cycle 67, after it came back to frame 0; no core was running"
        ),
        "{}",
        stderr(&o)
    );
    // Below that cycle, the watchdog stops it first.
    let o = run_loop(&["--max-cycles", "60", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["error"]["rule"], "watchdog");
    assert_eq!(v["error"]["limit"], 60);
    // The same proof on every engine, with its frames and cycle under --json.
    for backend in ["interp", "jit", "auto"] {
        let o = run_loop(&["--json", "--backend", backend]);
        assert_eq!(o.status.code(), Some(1), "{backend}");
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let e = &v["error"];
        assert_eq!(
            (&e["rule"], &e["frame"], &e["cycle"], &v["cycles"]),
            (&"livelock".into(), &0.into(), &67.into(), &67.into()),
            "{backend}"
        );
        let walk: Vec<u64> = [0].into_iter().chain(2..64).collect();
        assert_eq!(e["walk"], serde_json::json!(walk), "{backend}");
        assert_eq!(e["same_state_at"], serde_json::Value::Null, "{backend}");
        assert_eq!(v["task_summary"]["tasks"], 1, "{backend}");
    }
}

/// Issue 33 (F22): a loop that runs a task and has a frame sync that always finds the core
/// idle used to go on to the watchdog (214 s at the default limit). Hand-worked in
/// `machine/tests/mcst.rs::a_frame_sync_that_always_finds_its_cores_idle_stops_as_a_livelock`:
/// the scheduler is back at frame 0 in the same state in cycles 6 and 13, so the run stops
/// as cycle 14 begins, on every engine.
#[test]
fn a_loop_whose_state_repeats_stops_as_a_livelock() {
    let d = scratch("same_state");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("sync_loop.s");
    std::fs::write(
        &p,
        ".cf mask=1\n.if\nready\n.cf mask=0\n.cf mask=0 next=0 stop\n",
    )
    .unwrap();
    for backend in ["interp", "jit", "auto"] {
        let o = gpu16(&[
            "run",
            s(&p),
            "--dialect",
            "mcst",
            "-q",
            "--json",
            "--backend",
            backend,
        ]);
        assert_eq!(o.status.code(), Some(1), "{backend}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let e = &v["error"];
        assert_eq!(
            (&e["rule"], &e["frame"], &e["cycle"], &e["same_state_at"]),
            (&"livelock".into(), &0.into(), &14.into(), &6.into()),
            "{backend}"
        );
        assert_eq!(e["walk"], serde_json::json!([0, 2, 3]), "{backend}");
        assert_eq!(v["task_summary"]["tasks"], 2, "{backend}");
    }
    let o = gpu16(&["run", s(&p), "--dialect", "mcst", "-q"]);
    assert!(
        stderr(&o).contains(
            ": livelock: the task scheduler's walk reaches no halt (.halt), and its frame \
             syncs find every core idle: it came back to frame 0 with the registers, memory \
             and scheduler as they were when it came there in cycle 6, so it goes round \
             control frames 0, 2, 3 for ever; the run stopped at cycle 14"
        ),
        "{}",
        stderr(&o)
    );
}

/// Under round robin a later core can store first: cores 0 and 1 store their R0 (1 and 2)
/// at 0x40 in cycle 9; bank 0 grants core 1 in 9 and core 0 in 10, so the byte is 1 and its
/// last writer is core 0 at cycle 10 (the cycle memory served it, not the slot's start).
#[test]
fn expect_mem_names_the_store_that_round_robin_served_last() {
    let d = scratch("rr_writer");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("rr.s");
    std::fs::write(
        &p,
        ".cf mask=0x0003 r0=0:1,1:2\n.if\n    set_const 0x40, r1\n    st [r1, r2], r0\n    ready\n.halt\n",
    )
    .unwrap();
    let mut expected = vec![0u8; 4096];
    expected[0x40] = 2;
    let dump = d.join("expected.bin");
    std::fs::write(&dump, &expected).unwrap();
    let o = gpu16(&[
        "run",
        s(&p),
        "--dialect",
        "mcst",
        "--timing",
        "mcst-rtl",
        "-q",
        "--expect-mem",
        s(&dump),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("0x040     0  0x40      0x02    0x01  core 0, frame 1, IP 1, cycle 10"),
        "{out}"
    );
    // diff compares the interpreter's stepped slots with the JIT's compiled ones.
    let o = gpu16(&["diff", s(&p), "--dialect", "mcst", "--timing", "mcst-rtl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "identical\n");
}

/// What the mcst dialect refuses of a configuration is a usage error naming the CLI's flags,
/// word for word, in every command that runs a program. (The Python API's errors come from
/// the same check, `gpu16::dialect::check_config`, naming its own arguments instead:
/// python/tests/test_mcst.py.)
#[test]
fn dialect_refusals_name_the_flags() {
    let p = scratch("refusals").join("p.s");
    std::fs::write(&p, ".cf mask=1\n.if\n    ready\n").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["--dialect", "mcst", "--issue", "lookahead"],
            "error: --issue lookahead: the mcst dialect's task scheduler is in-order only\n",
        ),
        (
            &["--dialect", "mcst", "--bank-conflicts"],
            "error: --bank-conflicts is the spec dialect's bank model; the mcst dialect's is \
             --timing round_robin=1 (part of --timing mcst-rtl)\n",
        ),
        (
            &["--timing", "fill=2"],
            "error: timing keys fill (or the mcst-rtl profile) belong to the MCST dialect's \
             slot model: give --dialect mcst\n",
        ),
    ];
    for cmd in ["run", "diff"] {
        for (flags, want) in cases {
            let mut args = vec![cmd, s(&p)];
            args.extend_from_slice(flags);
            let o = gpu16(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            assert_eq!(stderr(&o), want, "{args:?}");
            assert!(stdout(&o).is_empty(), "{args:?}");
        }
    }
}
