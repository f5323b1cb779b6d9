//! What the binary-level tests share: running the built `gpu16`, a scratch directory per
//! test, and paths as arguments.

#![allow(dead_code)] // each test binary uses its own subset

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Run the built binary with `args`; $COLUMNS is removed so output does not depend on the
/// terminal the tests run in.
pub fn gpu16(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("the binary runs")
}

/// Run the built binary with `args` and `input` on its stdin, written from a thread as a
/// pipe would be (a command that stops reading early closes it: not an error here).
pub fn gpu16_with_stdin(args: &[&str], input: Vec<u8>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(args)
        .env_remove("COLUMNS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// A fresh scratch directory named after the test binary and the test.
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{suite}-{test}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every backend and JIT engine a program can run on: the interpreter, `auto`, and the JIT
/// with each of its engines. Tests that demand one answer from all of them iterate this.
pub fn every_runner() -> Vec<gpu16::Runner> {
    use gpu16::{BackendKind, Engine, Runner};
    let mut v: Vec<Runner> = vec![BackendKind::Interp.into(), BackendKind::Auto.into()];
    for engine in [Engine::Adaptive, Engine::Lockstep, Engine::PerCore] {
        v.push(Runner {
            backend: BackendKind::Jit,
            engine,
            hot: None,
        });
    }
    v
}

/// Every core adds 1 to r1 and stores it, forever: nothing proves it endless (it writes
/// memory), so only the watchdog, a timeout or Ctrl-C ends it.
pub const BUSY: &str = "\
.cf mask=0xffff
.if
    set_const 1, r9
    xor r2, r2, r2
loop:
    add r1, r9, r1
    st [r1, r2], r1
    bnz loop, r9
";

/// Two cores store 0x2a in their own bank at row 3 (`asm` and `check` tests encode its
/// image by hand).
pub const TWO_STORES: &str = "\
; two cores store 0x2a at their own bank, row 3
.cf mask=0x0003
.if
    set_const 0, r1
    set_const 3, r8
    set_const 0x2a, r9
    st [r8, r1], r9
";
