//! Writing to stdout, through the built binary: a reader that closes the pipe early is not
//! an error (status as if it had read everything, nothing on stderr), any other failed write
//! is (`error: cannot write to standard output: ...`, status 1, or 2 for `diff` and `fuzz`).

mod common;

use common::{s, stderr};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scratch(test: &str) -> PathBuf {
    common::scratch("stdout", test)
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpu16"));
    c.args(args).env_remove("COLUMNS");
    c
}

/// Run with stdout on /dev/full, where every write fails with "no space left".
fn into_dev_full(args: &[&str]) -> Output {
    let full = File::options().write(true).open("/dev/full").unwrap();
    command(args)
        .stdout(Stdio::from(full))
        .output()
        .expect("the binary runs")
}

/// Run with stdout on a pipe whose reading end is closed before the command writes.
fn into_closed_pipe(args: &[&str]) -> Output {
    let mut child = command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

fn assert_cannot_write(o: &Output, status: i32) {
    assert_eq!(o.status.code(), Some(status), "{}", stderr(o));
    assert!(
        stderr(o).starts_with("error: cannot write to standard output: "),
        "{}",
        stderr(o)
    );
}

#[test]
fn a_full_stdout_is_an_error() {
    let counter = example("counter.s");
    for args in [
        &["run", s(&counter), "-q"][..],
        &["run", s(&counter), "--json"],
        &["run", s(&counter), "-q", "--timeline", "--width", "40"],
        &["disasm", s(&counter)],
        &["check", s(&counter)],
        &["asm", s(&counter), "--hex"],
    ] {
        assert_cannot_write(&into_dev_full(args), 1);
    }
    assert_cannot_write(&into_dev_full(&["diff", s(&counter)]), 2);
    assert_cannot_write(
        &into_dev_full(&["fuzz", "--count", "2", "--jobs", "1", "--quiet"]),
        2,
    );
}

#[test]
fn a_closed_pipe_is_a_quiet_success() {
    let d = scratch("pipe");
    // About 2 MB of disassembly: far more than a pipe buffers, so the writes must meet the
    // closed pipe.
    let group = format!(
        ".cf mask=1\n.repeat 15\n.if\n{}.end\n",
        "add r1, r2, r3\n".repeat(16)
    );
    let src = d.join("long.s");
    std::fs::write(&src, group.repeat(300)).unwrap();
    let counter = example("counter.s");
    for args in [
        &["disasm", s(&src)][..],
        &["run", s(&counter), "--json"],
        &["diff", s(&counter)],
    ] {
        let o = into_closed_pipe(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

#[test]
fn a_closed_pipe_keeps_a_failed_runs_status() {
    let d = scratch("fault");
    // Core 0's st_sync has no open sequence: a fault, status 1, reported on stderr.
    let src = d.join("fault.s");
    std::fs::write(&src, ".cf mask=1\n.if\n    st_sync [r0, r0], r0\n").unwrap();
    let o = into_closed_pipe(&["run", s(&src), "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("fault.s") && e.contains("st_sync"), "{e}");
    assert!(!e.contains("standard output"), "{e}");
}
