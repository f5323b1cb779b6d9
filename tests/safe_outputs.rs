//! The files and objects gpu16 writes, through the built binary, one test per class: outputs
//! are checked before any work, never overwrite an input or each other, never leave a part
//! of a file or lose the old one; a failed run still writes what it was asked for and says
//! so; stdout failures are errors except a closed pipe (help and version included); and
//! `--json` gives one object on every path: unfinished tasks with `"end": null`, the
//! watchdog's cores as objects, and a load error as an `error` string.

mod common;

use common::{gpu16, s, stderr, stdout};
use serde_json::Value;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn scratch(test: &str) -> PathBuf {
    common::scratch("safe_outputs", test)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).expect("stdout is one JSON object")
}

/// The names in `dir`, sorted: no temporary or partial file may be among them.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// One core stores in a loop forever (a store, so no livelock check can cut it short): with
/// a watchdog of 2^40 cycles the run would take hours, so a command that fails at once did
/// not run it.
const ENDLESS: &str =
    ".cf mask=1\n.if\n    set_const 1, r9\nloop:\n    st [r0, r0], r9\n    bnz loop, r9\n";
const LONG: &str = "1099511627776";

/// Core 0 stores 0x2a at address 3 (cycle 8), then its `st_sync` without a sequence faults.
const STORE_THEN_FAULT: &str = "\
.cf mask=1
.if
    set_const 0, r1
    set_const 3, r8
    set_const 0x2a, r9
    st [r8, r1], r9
    st_sync [r0, r0], r0
";

/// Counter: sixteen cores on one lock, stopped by the watchdog at cycle 100 with cores
/// running and cores stalled on the lock.
fn counter() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/counter.s")
}

fn assert_status(o: &Output, status: i32) {
    assert_eq!(o.status.code(), Some(status), "stderr: {}", stderr(o));
}

#[test]
fn outputs_are_checked_before_any_work_and_nothing_is_written() {
    let d = scratch("before");
    let endless = write(&d, "endless.s", ENDLESS);
    let missing = d.join("missing/m.bin");
    let started = Instant::now();
    // The trace could be written, the memory dump could not: neither is, and the endless
    // run never starts.
    let o = gpu16(&[
        "run",
        s(&endless),
        "--max-cycles",
        LONG,
        "--trace",
        s(&d.join("t.json")),
        "--dump-mem",
        s(&missing),
    ]);
    assert_status(&o, 1);
    assert!(started.elapsed() < Duration::from_secs(20));
    let e = stderr(&o);
    assert!(
        e.starts_with(&format!("error: {}: cannot write: directory ", s(&missing)))
            && e.contains("does not exist"),
        "{e}"
    );
    // A directory, or a file in place of the directory, is refused the same way.
    for bad in [d.clone(), endless.join("m.bin")] {
        let o = gpu16(&["run", s(&endless), "--max-cycles", LONG, "--vcd", s(&bad)]);
        assert_status(&o, 1);
        assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
    }
    // gen writes neither of its pair; asm and disasm nothing; fuzz refuses a reproducer
    // directory it could not create before its campaign.
    let o = gpu16(&[
        "gen",
        "--seed",
        "1",
        "-o",
        s(&d.join("g.bin")),
        "--mem-out",
        s(&missing),
    ]);
    assert_status(&o, 1);
    let o = gpu16(&["asm", s(&endless), "-o", s(&missing)]);
    assert_status(&o, 1);
    let o = gpu16(&[
        "fuzz",
        "--count",
        "100000000",
        "--quiet",
        "--out",
        s(&endless.join("repro")),
    ]);
    assert_status(&o, 2);
    assert!(stderr(&o).contains("is not a directory"), "{}", stderr(&o));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(names(&d), ["endless.s"]);
}

#[test]
fn a_command_that_fails_keeps_the_previous_file_whole() {
    let d = scratch("previous");
    let old = d.join("out.bin");
    std::fs::write(&old, b"previous contents").unwrap();
    let bad = write(&d, "bad.s", ".cf mask=1\n.if\n    bogus r1\n");
    let fault = write(&d, "fault.s", STORE_THEN_FAULT);
    // A source with errors, an image that does not load.
    assert_status(&gpu16(&["asm", s(&bad), "-o", s(&old)]), 1);
    assert_status(&gpu16(&["run", s(&bad), "--dump-mem", s(&old)]), 1);
    assert_status(&gpu16(&["disasm", s(&bad), "-o", s(&old)]), 1);
    assert_eq!(std::fs::read(&old).unwrap(), b"previous contents");
    // A file replaced keeps its place and nothing else is left behind.
    assert_status(&gpu16(&["run", s(&fault), "--dump-mem", s(&old)]), 1);
    assert_eq!(std::fs::read(&old).unwrap().len(), 4096);
    assert_eq!(names(&d), ["bad.s", "fault.s", "out.bin"]);
    // A device that fails every write is an error naming it, not a success. (A write that
    // fails midway into a regular file is unit-tested in src/output/file.rs.)
    let o = gpu16(&["gen", "--seed", "1", "-o", "/dev/full"]);
    assert_status(&o, 1);
    assert!(
        stderr(&o).starts_with("error: /dev/full: cannot write: No space left"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_output_naming_an_input_or_another_output_is_a_usage_error() {
    let d = scratch("names");
    let prog = write(&d, "p.s", STORE_THEN_FAULT);
    let lib = write(&d, "lib.s", ".equ K = 3\n");
    let main = write(
        &d,
        "main.s",
        &format!(".include \"lib.s\"\n{STORE_THEN_FAULT}"),
    );
    let mem = d.join("m.bin");
    std::fs::write(&mem, [1u8; 16]).unwrap();
    std::fs::hard_link(&mem, d.join("alias.bin")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    let before = |p: &Path| std::fs::read(p).unwrap();
    let (prog0, lib0, mem0) = (before(&prog), before(&lib), before(&mem));
    let cases: Vec<(Vec<String>, [&str; 2])> = vec![
        // Spelled differently, through `..`.
        (
            vec![
                "run".into(),
                s(&prog).into(),
                "--dump-mem".into(),
                format!("{}/sub/../p.s", s(&d)),
            ],
            ["--dump-mem", "PROGRAM"],
        ),
        // A hard link to the memory image.
        (
            vec![
                "run".into(),
                s(&prog).into(),
                "--mem".into(),
                s(&mem).into(),
                "--mem-png".into(),
                s(&d.join("alias.bin")).into(),
            ],
            ["--mem-png", "--mem"],
        ),
        // A file the program includes.
        (
            vec![
                "run".into(),
                s(&main).into(),
                "--trace".into(),
                s(&lib).into(),
            ],
            ["--trace", ".include"],
        ),
        (
            vec!["asm".into(), s(&main).into(), "-o".into(), s(&lib).into()],
            ["-o", ".include"],
        ),
        // Two outputs, one file.
        (
            vec![
                "run".into(),
                s(&prog).into(),
                "--trace".into(),
                s(&d.join("f")).into(),
                "--vcd".into(),
                format!("{}/./f", s(&d)),
            ],
            ["--trace", "--vcd"],
        ),
        (
            vec![
                "gen".into(),
                "--seed".into(),
                "1".into(),
                "-o".into(),
                s(&d.join("g")).into(),
                "--mem-out".into(),
                s(&d.join("g")).into(),
            ],
            ["-o", "--mem-out"],
        ),
    ];
    for (args, [a, b]) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = gpu16(&args);
        assert_status(&o, 2);
        let e = stderr(&o);
        assert!(
            e.starts_with(&format!("error: {a} ")) && e.contains(&format!(" and {b} ")),
            "{args:?}: {e}"
        );
        assert!(e.contains("name the same file"), "{e}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&prog, d.join("link.s")).unwrap();
        let o = gpu16(&["run", s(&prog), "--vcd", s(&d.join("link.s"))]);
        assert_status(&o, 2);
    }
    assert_eq!(before(&prog), prog0);
    assert_eq!(before(&lib), lib0);
    assert_eq!(before(&mem), mem0);
    assert!(!d.join("f").exists() && !d.join("g").exists());
    // `--json` says so too, with the stage.
    let o = gpu16(&["run", s(&prog), "--json", "--dump-mem", s(&prog)]);
    assert_status(&o, 2);
    assert_eq!(json_of(&o)["stage"], "usage");
    // Two outputs to a device that keeps nothing are fine.
    let o = gpu16(&[
        "run",
        s(&counter()),
        "-q",
        "--trace",
        "/dev/null",
        "--vcd",
        "/dev/null",
    ]);
    assert_status(&o, 0);
}

/// Run with stdout on /dev/full, where every write fails with "no space left".
fn into_dev_full(args: &[&str]) -> Output {
    let full = File::options().write(true).open("/dev/full").unwrap();
    Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(args)
        .stdout(Stdio::from(full))
        .output()
        .unwrap()
}

/// Run with stdout on a pipe whose reading end is closed before the command writes.
fn into_closed_pipe(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn stdout_that_fails_is_an_error_on_every_path_and_a_closed_pipe_is_not() {
    let d = scratch("stdout");
    let fault = write(&d, "fault.s", STORE_THEN_FAULT);
    let bad = write(&d, "bad.s", ".cf mask=1\n.if\n    bogus r1\n");
    for args in [&["--help"][..], &["--version"], &["run", "--help"]] {
        let o = into_dev_full(args);
        assert_status(&o, 1);
        assert!(
            stderr(&o).starts_with("error: cannot write to standard output: No space left"),
            "{args:?}: {}",
            stderr(&o)
        );
        let o = into_closed_pipe(args);
        assert_status(&o, 0);
        assert_eq!(stderr(&o), "", "{args:?}");
    }
    // A failed run, and a run that never started, report their own error and the stdout's.
    for (args, first) in [
        (&["run", s(&fault), "--json"][..], "st_sync"),
        (&["run", s(&bad), "--json"], "assembly failed"),
    ] {
        let o = into_dev_full(args);
        assert_status(&o, 1);
        let e = stderr(&o);
        assert!(e.contains(first), "{e}");
        assert!(
            e.contains("\nerror: cannot write to standard output: No space left"),
            "{e}"
        );
        let o = into_closed_pipe(args);
        assert_status(&o, 1);
        assert!(!stderr(&o).contains("standard output"), "{}", stderr(&o));
    }
}

#[test]
fn a_failed_run_writes_its_outputs_and_says_so() {
    let d = scratch("fault");
    let fault = write(&d, "fault.s", STORE_THEN_FAULT);
    let (m, t, v, p) = (
        d.join("m.bin"),
        d.join("t.json"),
        d.join("w.vcd"),
        d.join("p.png"),
    );
    let o = gpu16(&[
        "run",
        s(&fault),
        "--dump-mem",
        s(&m),
        "--trace",
        s(&t),
        "--vcd",
        s(&v),
        "--mem-png",
        s(&p),
    ]);
    assert_status(&o, 1);
    let e = stderr(&o);
    assert!(e.contains("st_sync"), "{e}");
    assert!(
        e.contains(&format!(
            "\nwrote memory dump to {}, memory picture to {}, trace to {}, waveform to {}",
            s(&m),
            s(&p),
            s(&t),
            s(&v)
        )),
        "{e}"
    );
    // The memory at the fault: the store before it landed.
    let dump = std::fs::read(&m).unwrap();
    assert_eq!(dump.len(), 4096);
    assert_eq!(
        (dump[3], dump.iter().filter(|&&b| b != 0).count()),
        (0x2a, 1)
    );
    let trace: Value = serde_json::from_slice(&std::fs::read(&t).unwrap()).unwrap();
    assert!(trace.is_object() || trace.is_array());
    assert!(std::fs::read_to_string(&v).unwrap().starts_with('$'));
    assert!(std::fs::read(&p).unwrap().starts_with(b"\x89PNG"));
    // With --json, `outputs` lists them.
    let o = gpu16(&["run", s(&fault), "--json", "--dump-mem", s(&m)]);
    assert_status(&o, 1);
    let j = json_of(&o);
    assert_eq!(j["error"]["rule"], "st_sync-without-sequence");
    assert_eq!(
        j["outputs"],
        serde_json::json!([{"flag": "--dump-mem", "file": s(&m), "written": true}])
    );
}

#[test]
fn json_has_an_object_on_every_path() {
    let d = scratch("json");
    // The watchdog stops counter.s mid-task: the task has no end, the cores are objects.
    let o = gpu16(&["run", s(&counter()), "--json", "--max-cycles", "100"]);
    assert_status(&o, 1);
    let j = json_of(&o);
    assert_eq!(j["tasks"][0]["start"], 5);
    assert!(j["tasks"][0]["end"].is_null(), "{}", j["tasks"]);
    let cores = j["error"]["cores"].as_array().unwrap();
    assert_eq!(cores.len(), 16);
    // counter.s line 14 is the `ld_sync` at IP 4, line 15 the `add` at IP 5.
    let line = |n: u64| serde_json::json!({"file": s(&counter()), "line": n, "col": 5});
    assert_eq!(
        cores[13],
        serde_json::json!({"core": 13, "frame": 1, "ip": 4, "state": "stalled",
                           "addr": 0, "holder": 12, "since": 99, "location": line(14)})
    );
    assert_eq!(
        cores[12],
        serde_json::json!({"core": 12, "frame": 1, "ip": 5, "state": "running",
                           "location": line(15)})
    );
    // A finished task keeps its end.
    let o = gpu16(&["run", s(&counter()), "--json"]);
    assert_status(&o, 0);
    assert!(json_of(&o)["tasks"][0]["end"].is_u64());

    // A file that does not load: one object with an `error` string and the file, status 1,
    // and the same message on stderr.
    let bad_asm = write(&d, "bad.s", ".cf mask=1\n.if\n    bogus r1\n");
    let short = d.join("short.bin");
    std::fs::write(&short, [0u8; 33]).unwrap();
    let big_mem = d.join("big.mem");
    std::fs::write(&big_mem, [0u8; 5000]).unwrap();
    for (args, file) in [
        (vec!["run", s(&bad_asm), "--json"], &bad_asm),
        (vec!["run", s(&short), "--json"], &short),
        (
            vec!["run", s(&counter()), "--mem", s(&big_mem), "--json"],
            &big_mem,
        ),
    ] {
        let o = gpu16(&args);
        assert_status(&o, 1);
        let out = stdout(&o);
        assert_eq!(out.lines().count(), 1, "{out}");
        let j = json_of(&o);
        let error = j["error"].as_str().expect("error is a string");
        assert!(error.starts_with(s(file)), "{error}");
        assert_eq!(j["file"], s(file));
        assert_eq!(j["stage"], "load");
        assert_eq!(stderr(&o), format!("error: {error}\n"));
    }
}
