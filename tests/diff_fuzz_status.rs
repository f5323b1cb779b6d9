//! The exit statuses of `gpu16 diff` and `gpu16 fuzz`, through the built binary: 0 when the
//! backends agree, 2 when the command could not compare (a missing or malformed program or
//! memory file, a reproducer directory it cannot create). No two backends diverge on
//! purpose, so status 1 (a divergence) is checked by the unit tests of
//! `src/commands/diff.rs` and `src/commands/fuzz.rs`.

mod common;

use common::{gpu16, s, stderr, stdout};
use std::path::{Path, PathBuf};

fn scratch(test: &str) -> PathBuf {
    common::scratch("diff_fuzz_status", test)
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

#[test]
fn diff_of_identical_runs_exits_0() {
    let o = gpu16(&["diff", s(&example("counter.s"))]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "identical\n");
    assert_eq!(stderr(&o), "");
}

#[test]
fn diff_without_a_program_exits_2_naming_it() {
    let d = scratch("missing");
    let missing = d.join("missing.bin");
    let o = gpu16(&["diff", s(&missing)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.starts_with("error: ") && e.contains(s(&missing)), "{e}");
    assert_eq!(stdout(&o), "");
}

#[test]
fn diff_of_a_malformed_image_exits_2_naming_it() {
    let d = scratch("malformed");
    let bin = d.join("short.bin");
    std::fs::write(&bin, [0u8; 33]).unwrap();
    let o = gpu16(&["diff", s(&bin)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("short.bin") && e.contains("not a multiple of the 32-byte frame size"),
        "{e}"
    );
}

#[test]
fn diff_without_its_memory_file_exits_2_naming_it() {
    let d = scratch("memory");
    let missing = d.join("missing.mem");
    let o = gpu16(&["diff", s(&example("counter.s")), "--mem", s(&missing)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(s(&missing)), "{}", stderr(&o));
}

#[test]
fn diff_usage_errors_exit_2() {
    let o = gpu16(&["diff", s(&example("counter.s")), "--backends", "interp"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn fuzz_without_a_divergence_exits_0() {
    let d = scratch("fuzz");
    let out = d.join("repro");
    let o = gpu16(&[
        "fuzz",
        "--count",
        "6",
        "--jobs",
        "2",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("6 programs, no divergence between interp and jit"),
        "{}",
        stdout(&o)
    );
    assert!(!out.exists(), "no reproducer without a divergence");
}

/// `--jit-engine` picks the engine the compiled backends use: every engine agrees with the
/// interpreter, fuzz names the engine it compared, and an unknown engine is a usage error.
#[test]
fn every_jit_engine_can_be_compared_with_the_interpreter() {
    for engine in ["lockstep", "percore", "adaptive"] {
        let o = gpu16(&[
            "diff",
            s(&example("histogram.s")),
            "--mem",
            s(&example("histogram.mem.hex")),
            "--jit-engine",
            engine,
        ]);
        assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
        assert_eq!(stdout(&o), "identical\n", "{engine}");
    }
    let o = gpu16(&[
        "fuzz",
        "--count",
        "8",
        "--quiet",
        "--jit-engine",
        "lockstep",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("8 programs, no divergence between interp and jit/lockstep ("),
        "{}",
        stdout(&o)
    );
    let o = gpu16(&["diff", s(&example("counter.s")), "--jit-engine", "vector"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn fuzz_json_is_one_object_with_its_verdict() {
    let d = common::scratch("diff_fuzz_status", "fuzz_json");
    let out = d.join("repro");
    let o = gpu16(&[
        "fuzz",
        "--count",
        "20",
        "--seed",
        "3",
        "--json",
        "--quiet",
        "--jobs",
        "1",
        "--backends",
        "interp",
        "auto",
        "--out",
        common::s(&out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["programs"], 20);
    assert_eq!(v["backends"], serde_json::json!(["interp", "auto"]));
    assert_eq!(v["dialect"], "spec");
    assert!(v["divergence"].is_null());
    assert!(v["seconds"].as_f64().is_some_and(|s| s >= 0.0));
    // A campaign that cannot compare (its reproducer directory cannot exist) is an object
    // with `error`, status 2.
    let o = gpu16(&["fuzz", "--count", "1", "--json", "--out", "/dev/null/repro"]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["stage"], "compare");
    assert!(v["error"]
        .as_str()
        .unwrap()
        .starts_with("/dev/null/repro: cannot write"));
}

/// The stdout of `o` as one JSON object on one line.
fn json_of(o: &std::process::Output) -> serde_json::Value {
    let out = stdout(o);
    assert_eq!(out.lines().count(), 1, "{out}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn diff_json_of_identical_runs_exits_0() {
    let p = example("counter.s");
    let o = gpu16(&["diff", s(&p), "--json", "--backends", "interp", "auto"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        json_of(&o),
        serde_json::json!({
            "program": s(&p),
            "backends": ["interp", "auto"],
            "identical": true,
            "divergence": null,
        })
    );
}

#[test]
fn diff_json_gives_assembly_errors_as_diagnostic_objects_and_exits_2() {
    let d = scratch("json_assemble");
    let src = d.join("bad.s");
    std::fs::write(&src, ".cf mask=1\n.if\n  add r1, r2\n  ready\n").unwrap();
    let o = gpu16(&["diff", s(&src), "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["stage"], "assemble");
    assert_eq!(v["errors"], 1);
    assert_eq!(v["error"], format!("{}: 1 error", s(&src)));
    let diag = &v["diagnostics"][0];
    assert_eq!(diag["file"], s(&src));
    assert_eq!(diag["line"], 3);
    assert_eq!(diag["column"], 13);
    assert_eq!(diag["severity"], "error");
    assert_eq!(diag["notes"], serde_json::json!([]));
    assert!(!diag["message"].as_str().unwrap().contains('^'), "{diag}");
    // stderr says what it says without --json.
    assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
}

#[test]
fn diff_json_of_a_missing_file_names_it_and_exits_2() {
    let d = scratch("json_missing");
    let missing = d.join("missing.bin");
    let o = gpu16(&["diff", s(&missing), "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["stage"], "load");
    assert_eq!(v["file"], s(&missing));
    let m = d.join("missing.mem");
    let o = gpu16(&["diff", s(&example("counter.s")), "--mem", s(&m), "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(json_of(&o)["file"], s(&m));
}

#[test]
fn diff_json_of_a_timeout_is_an_error_object_and_exits_2() {
    let d = scratch("json_timeout");
    let src = d.join("busy.s");
    // Runs for days: common::BUSY with a watchdog far past it.
    std::fs::write(&src, common::BUSY).unwrap();
    let o = gpu16(&[
        "diff",
        s(&src),
        "--json",
        "--max-cycles",
        "288230376151711744",
        "--timeout",
        "0.3",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["stage"], "compare");
    assert!(v["error"].as_str().unwrap().starts_with("timeout: "), "{v}");
}
