//! Hostile inputs (issue 33): every one gets a clear error, a non-zero status, bounded time
//! and memory, and costs no file.

mod common;

use common::{gpu16_with_stdin, s, scratch, stderr};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `/dev/zero` as the debugger's commands: NUL bytes, no newline, no end.
#[cfg(unix)]
#[test]
fn debug_ends_a_session_on_dev_zero() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["debug", "examples/counter.s"])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("error: standard input is not a stream of commands: it holds a NUL byte"),
        "{text}"
    );
}

/// Lines of 5000 bytes, more of them than a session takes in a row, then a command that
/// must never be reached: the session ends after the 16th with status 1, each one answered.
#[test]
fn debug_ends_a_session_after_sixteen_over_long_lines_in_a_row() {
    let mut input = Vec::new();
    for _ in 0..1000 {
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.push(b'\n');
    }
    input.extend(b"regs 0\n");
    let out = gpu16_with_stdin(&["debug", "examples/counter.s", "--json"], input);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let replies: Vec<&str> = text.lines().collect();
    assert_eq!(replies.len(), 16, "{text}");
    for r in replies {
        assert_eq!(r, r#"{"error":"a command line is at most 4096 bytes"}"#);
    }
    let err = stderr(&out);
    assert!(
        err.contains("16 lines in a row are longer than 4096 bytes; the session ends"),
        "{err}"
    );
}

/// Over-long lines between good commands are answered and the session goes on; one line
/// of 2 MiB without an end ends it.
#[test]
fn debug_answers_a_few_over_long_lines_and_ends_on_an_endless_one() {
    let mut input = Vec::new();
    for _ in 0..20 {
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.extend(b"\nmem 0 1\n");
    }
    input.extend(b"quit\n");
    let out = gpu16_with_stdin(&["debug", "examples/counter.s"], input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("0x000: 00").count(), 20, "{text}");

    let input = vec![b'y'; 2 << 20];
    let out = gpu16_with_stdin(&["debug", "examples/counter.s"], input);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("a line is longer than 1 MiB"), "{err}");
}

/// `diff --timeout`: a program that would run for days gives no verdict, status 2, soon.
#[test]
fn diff_stops_at_its_timeout_without_a_verdict() {
    let d = scratch("hostile_inputs", "diff_timeout");
    let src = d.join("busy.s");
    std::fs::write(&src, common::BUSY).unwrap();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["diff", s(&src), "--max-cycles", "288230376151711744"])
        .args(["--timeout", "0.5"])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        stderr(&out),
        "error: timeout: the runs passed the wall-clock limit (--timeout) before they ended, \
         so the backends could not be compared\n"
    );
    // The same parser as run's: no zero, no negative number.
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["diff", s(&src), "--timeout", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not in the range of a timeout"));
    // A comparison that ends in time is not touched.
    let out = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["diff", "examples/counter.s", "--timeout", "600"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "identical\n");
}

/// Each core counts down 255 times from 255: about 2 million instructions, which finish.
const LONG: &str = "\
.cf mask=0xffff
.if
    set_const 1, r9
    set_const 255, r10
outer:
    set_const 255, r8
inner:
    sub r8, r9, r8
    bnz inner, r8
    sub r10, r9, r10
    bnz outer, r10
    ready
";

/// The temporary files `gpu16` stages its outputs in (`.gpu16-PID-N.tmp`) in `dir`, with
/// their sizes.
fn staged_files(dir: &Path) -> Vec<(String, u64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            let len = e.metadata().ok()?.len();
            (name.starts_with(".gpu16-") && name.ends_with(".tmp")).then_some((name, len))
        })
        .collect()
}

#[cfg(unix)]
fn sigterm(pid: u32) {
    let sent = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// SIGTERM while the execution log is being written: the process ends at once (status
/// 130), its temporary file is removed, and the file the log was to replace is untouched
/// (or, if the signal came after it was renamed into place, the whole new log).
#[cfg(unix)]
#[test]
fn sigterm_while_an_output_is_written_leaves_no_temporary_file() {
    let d = scratch("hostile_inputs", "sigterm_write");
    let src = d.join("long.s");
    std::fs::write(&src, LONG).unwrap();
    let log = d.join("exec.log");
    std::fs::write(&log, "old\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["run", s(&src), "-q", "--exec-log", s(&log)])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    // The staged log with bytes in it (the probe before the run is empty).
    let mut caught = false;
    while Instant::now() < deadline && child.try_wait().unwrap().is_none() {
        if staged_files(&d).iter().any(|(_, len)| *len > 0) {
            sigterm(child.id());
            caught = true;
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(caught, "the log was never seen being written");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(staged_files(&d), Vec::<(String, u64)>::new());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text == "old\n" || text.starts_with("5 0 1 0  set_const 0x01, r9  r9=0x01\n"),
        "{}",
        &text[..text.len().min(200)]
    );
}

/// SIGTERM during the run stops it as Ctrl-C does: the state where it stopped is reported
/// and written (status 130), and no temporary file is left.
#[cfg(unix)]
#[test]
fn sigterm_during_a_run_stops_it_like_ctrl_c() {
    let d = scratch("hostile_inputs", "sigterm_run");
    let src = d.join("busy.s");
    std::fs::write(&src, common::BUSY).unwrap();
    let dump = d.join("mem.bin");
    let child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["run", s(&src), "-q", "--json", "--dump-mem", s(&dump)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Time enough for the handler to be installed, even on a loaded machine.
    std::thread::sleep(Duration::from_millis(1000));
    sigterm(child.id());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["rule"], "interrupted");
    assert_eq!(std::fs::metadata(&dump).unwrap().len(), 4096);
    assert_eq!(staged_files(&d), Vec::<(String, u64)>::new());
}

/// A program on stdin that stalls (a pipe kept open, nothing written) still ends at the
/// timeout: status 1, with run's timeout message, at cycle 0, as no frame came.
#[test]
fn a_timeout_ends_a_run_waiting_for_stdin() {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["run", "-", "-q", "--timeout", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pipe = child.stdin.take().unwrap();
    // Waiting for the child while its stdin stays open; a child that never ends is killed
    // after 30 s and fails the test.
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if child.try_wait().unwrap().is_none() {
        child.kill().unwrap();
    }
    let out = child.wait_with_output().unwrap();
    drop(pipe);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.starts_with(
            "error: -: timeout: the run passed its wall-clock limit and stopped at cycle 0"
        ),
        "{text}"
    );
}

/// A FIFO no one writes, as the program or as `--mem`: opening it blocks, and `--timeout`
/// ends `run` (status 1) and `diff` (status 2, no verdict) all the same, naming the
/// timeout, with `--json`'s load object too. A FIFO no one reads, as an output, blocks its
/// writer: `--timeout` holds once more from the run's end.
#[cfg(unix)]
#[test]
fn a_timeout_ends_a_command_blocked_opening_a_fifo() {
    let dir = scratch("hostile", "fifo");
    let fifo = dir.join("nobody.bin");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let program = dir.join("p.s");
    std::fs::write(&program, ".cf mask=1\n.if\n    ready\n").unwrap();
    let inputs = "error: timeout: the inputs of ";
    let cases: [(Vec<&str>, i32, &str); 5] = [
        (vec!["run", s(&fifo), "--timeout", "1"], 1, inputs),
        (
            vec!["run", s(&program), "--mem", s(&fifo), "--timeout", "1"],
            1,
            inputs,
        ),
        (vec!["diff", s(&fifo), "--timeout", "1"], 2, inputs),
        (vec!["run", s(&fifo), "--timeout", "1", "--json"], 1, inputs),
        (
            vec![
                "run",
                s(&program),
                "--dump-mem",
                s(&fifo),
                "-q",
                "--timeout",
                "1",
            ],
            1,
            "error: timeout: the outputs were not written",
        ),
    ];
    for (args, status, says) in cases {
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A child that never ends is killed after 30 s and fails the test.
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(started.elapsed() < Duration::from_secs(20), "{args:?}");
        assert_eq!(
            out.status.code(),
            Some(status),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).starts_with(says), "{args:?}: {}", stderr(&out));
        if args.contains(&"--json") {
            let v: serde_json::Value =
                serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
            assert_eq!(v["stage"], "load");
        }
    }
}
