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
