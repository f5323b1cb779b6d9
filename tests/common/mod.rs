//! What the binary-level tests share: running the built `gpu16`, a scratch directory per
//! test, and paths as arguments.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run the built binary with `args`; $COLUMNS is removed so output does not depend on the
/// terminal the tests run in.
pub fn gpu16(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("the binary runs")
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
        });
    }
    v
}
