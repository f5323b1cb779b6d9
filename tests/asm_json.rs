//! `asm --json`, `check --json` and `gen --json` (and `run --json`'s and `diff --json`'s
//! assembly errors) through the built binary: one object on
//! stdout, compared whole with objects written out by hand (lines and columns counted by
//! hand from the sources below), and the exit statuses of the commands without --json.

mod common;

use common::stderr;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(test: &str) -> PathBuf {
    common::scratch("asm_json", test)
}

/// Run the binary in `dir`, so the files it names are the short names the objects hold.
fn gpu16_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(args)
        .current_dir(dir)
        .env_remove("COLUMNS")
        .output()
        .expect("the binary runs")
}

/// Stdout as one JSON object on one line.
fn object(o: &Output) -> Value {
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(text.ends_with('\n'), "{text:?}");
    assert_eq!(text.lines().count(), 1, "{text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_clean_assemble() {
    let d = scratch("clean");
    std::fs::write(d.join("p.s"), common::TWO_STORES).unwrap();
    let o = gpu16_in(&d, &["asm", "p.s", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(
        object(&o),
        json!({
            "source": "p.s",
            "output": "p.bin",
            "mem_out": null,
            "format": "bin",
            "frames": 2,
            "errors": 0,
            "warnings": 0,
            "diagnostics": [],
        })
    );
    assert_eq!(std::fs::read(d.join("p.bin")).unwrap().len(), 64);
    let o = gpu16_in(&d, &["asm", "p.s", "--hex", "-o", "p.hex", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(object(&o)["format"], "hex");
    assert_eq!(object(&o)["output"], "p.hex");
    assert!(std::fs::read_to_string(d.join("p.hex"))
        .unwrap()
        .starts_with("0001 0003 0000"));
}

/// Line 4: `    ld [r4, r9], r2`, r9 at column 13 (4 spaces, `ld [` and `r4, ` before it).
/// Line 5: `    bnz nowhere, r4`, the label at column 9.
const TWO_ERRORS: &str = "\
; two errors
.cf mask=1
.if
    ld [r4, r9], r2
    bnz nowhere, r4
";

#[test]
fn a_source_with_errors() {
    let d = scratch("errors");
    std::fs::write(d.join("bad.s"), TWO_ERRORS).unwrap();
    let diagnostics = json!([
        {
            "severity": "error",
            "file": "bad.s",
            "line": 4,
            "column": 13,
            "message": "the second address register of ld must be r0..r3",
            "notes": [],
        },
        {
            "severity": "error",
            "file": "bad.s",
            "line": 5,
            "column": 9,
            "message": "label `nowhere` is not defined in this frame",
            "notes": [],
        },
    ]);
    let o = gpu16_in(&d, &["asm", "bad.s", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(
        object(&o),
        json!({
            "source": "bad.s",
            "output": null,
            "mem_out": null,
            "format": "bin",
            "frames": null,
            "errors": 2,
            "warnings": 0,
            "diagnostics": diagnostics,
            "error": "bad.s: 2 errors",
            "stage": "assemble",
            "file": "bad.s",
        })
    );
    assert!(!d.join("bad.bin").exists());
    let o = gpu16_in(&d, &["check", "bad.s", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        object(&o),
        json!({
            "program": "bad.s",
            "format": "asm",
            "frames": null,
            "errors": 2,
            "warnings": 0,
            "diagnostics": diagnostics,
            "error": "bad.s: 2 errors",
            "stage": "assemble",
            "file": "bad.s",
        })
    );
    // `run --json`, `debug --json` and `diff --json` give the same diagnostic objects, not
    // one string with carets inside (issue 33). For `run` and `debug` it is a failure to
    // load, as it always was.
    let run_object = json!({
        "errors": 2,
        "warnings": 0,
        "diagnostics": diagnostics,
        "error": "bad.s: assembly failed: 2 errors",
        "stage": "load",
        "file": "bad.s",
    });
    let o = gpu16_in(&d, &["run", "bad.s", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(object(&o), run_object);
    // Stderr gets the object's error, as for every failure of `run --json`.
    assert_eq!(stderr(&o), "error: bad.s: assembly failed: 2 errors\n");
    let o = gpu16_in(&d, &["debug", "bad.s", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(object(&o), run_object);
    let o = gpu16_in(&d, &["diff", "bad.s", "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let mut diff_object = run_object;
    diff_object["program"] = json!("bad.s");
    diff_object["stage"] = json!("assemble");
    diff_object["error"] = json!("bad.s: 2 errors");
    assert_eq!(object(&o), diff_object);
}

/// Line 1: `.cf mask=0` (a mask of 0, reported at the `.cf`); line 3: a constant into r2,
/// which takes the core id.
const WARNINGS: &str = ".cf mask=0\n.if\nset_const 7, r2\n";

#[test]
fn a_check_with_warnings() {
    let d = scratch("check");
    std::fs::write(d.join("w.s"), WARNINGS).unwrap();
    let o = gpu16_in(&d, &["check", "w.s", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(
        object(&o),
        json!({
            "program": "w.s",
            "format": "asm",
            "frames": 2,
            "errors": 0,
            "warnings": 2,
            "diagnostics": [
                {
                    "severity": "warning",
                    "file": "w.s",
                    "line": 1,
                    "column": 1,
                    "message": "mask is 0: the 1 instruction frame of this group run on no core",
                    "notes": [],
                    "frame": 0,
                    "instruction": null,
                },
                {
                    "severity": "warning",
                    "file": "w.s",
                    "line": 3,
                    "column": 1,
                    "message": "set_const into r2 loads the core id, not 0x07: only r8..r15 take a constant",
                    "notes": [],
                    "frame": 1,
                    "instruction": 0,
                },
            ],
        })
    );
}

/// asm reports only the set_const warning of WARNINGS (not the mask of 0), as an object
/// like check's, and writes the image.
#[test]
fn an_assemble_with_a_warning() {
    let d = scratch("asm_warning");
    std::fs::write(d.join("w.s"), WARNINGS).unwrap();
    let o = gpu16_in(&d, &["asm", "w.s", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(
        object(&o),
        json!({
            "source": "w.s",
            "output": "w.bin",
            "mem_out": null,
            "format": "bin",
            "frames": 2,
            "errors": 0,
            "warnings": 1,
            "diagnostics": [
                {
                    "severity": "warning",
                    "file": "w.s",
                    "line": 3,
                    "column": 1,
                    "message": "set_const into r2 loads the core id, not 0x07: only r8..r15 take a constant",
                    "notes": [],
                    "frame": 1,
                    "instruction": 0,
                },
            ],
        })
    );
    assert_eq!(std::fs::read(d.join("w.bin")).unwrap().len(), 64);
}

#[test]
fn a_check_of_a_binary_has_frames_not_lines() {
    let d = scratch("check_bin");
    // The image of WARNINGS by hand: CF with IF_Num 1 and mask 0, then set_const 7, r2
    // (0xc072) and 15 `ready` words (0xf000).
    let mut image = vec![0u8; 64];
    image[0] = 0x01;
    image[32..34].copy_from_slice(&0xc072u16.to_le_bytes());
    for i in 1..16 {
        image[32 + 2 * i..34 + 2 * i].copy_from_slice(&0xf000u16.to_le_bytes());
    }
    std::fs::write(d.join("w.bin"), image).unwrap();
    let o = gpu16_in(&d, &["check", "w.bin", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = object(&o);
    assert_eq!(v["format"], "bin");
    assert_eq!(v["frames"], 2);
    assert_eq!(v["warnings"], 2);
    assert_eq!(
        v["diagnostics"][1],
        json!({
            "severity": "warning",
            "file": "w.bin",
            "line": null,
            "column": null,
            "message": "set_const into r2 loads the core id, not 0x07: only r8..r15 take a constant",
            "notes": [],
            "frame": 1,
            "instruction": 0,
        })
    );
}

/// `--mem-out` under `--json`: the object names the memory file beside the image (issue
/// 33); a source that does not assemble writes neither and names neither. `.data 0x20, 7`
/// puts 7 at byte 0x20 of 4096, every other byte 0.
#[test]
fn an_assemble_with_mem_out_names_the_memory_file() {
    let d = scratch("mem_out");
    std::fs::write(
        d.join("p.s"),
        format!(".data 0x20, 7\n{}", common::TWO_STORES),
    )
    .unwrap();
    let o = gpu16_in(&d, &["asm", "p.s", "--mem-out", "m.bin", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(
        object(&o),
        json!({
            "source": "p.s",
            "output": "p.bin",
            "mem_out": "m.bin",
            "format": "bin",
            "frames": 2,
            "errors": 0,
            "warnings": 0,
            "diagnostics": [],
        })
    );
    let mut memory = vec![0u8; 4096];
    memory[0x20] = 7;
    assert_eq!(std::fs::read(d.join("m.bin")).unwrap(), memory);
    std::fs::write(d.join("bad.s"), TWO_ERRORS).unwrap();
    let o = gpu16_in(&d, &["asm", "bad.s", "--mem-out", "bad.mem", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = object(&o);
    assert_eq!((&v["output"], &v["mem_out"]), (&Value::Null, &Value::Null));
    assert!(!d.join("bad.mem").exists() && !d.join("bad.bin").exists());
}

#[test]
fn a_command_that_stops_is_still_one_object() {
    let d = scratch("stops");
    std::fs::write(d.join("p.s"), common::TWO_STORES).unwrap();
    let cases: [(&[&str], i32, Value); 6] = [
        (
            &["asm", "nosuch.s", "--json"],
            1,
            json!({
                "error": "nosuch.s: cannot read: No such file or directory (os error 2)",
                "stage": "load",
                "file": "nosuch.s",
            }),
        ),
        (
            &["check", "nosuch.bin", "--json"],
            1,
            json!({
                "error": "nosuch.bin: cannot read: No such file or directory (os error 2)",
                "stage": "load",
                "file": "nosuch.bin",
            }),
        ),
        (
            &["check", "p.txt", "--json"],
            1,
            json!({
                "error": "p.txt: unknown program format: use .bin or .tm (raw image of 32-byte frames), .hex (16-bit words) or .s/.asm (assembly)",
                "stage": "load",
                "file": "p.txt",
            }),
        ),
        (
            &["asm", "p.s", "-o", "nodir/p.bin", "--json"],
            1,
            json!({
                "error": "nodir/p.bin: cannot write: directory nodir does not exist",
                "stage": "output",
                "file": "nodir/p.bin",
            }),
        ),
        (
            &["asm", "p.s", "-o", "p.s", "--json"],
            2,
            json!({
                "error": "-o p.s and SOURCE p.s name the same file: an output must not overwrite an input",
                "stage": "usage",
            }),
        ),
        (
            &["asm", "p.s", "--hex", "--json"],
            2,
            json!({
                "error": "--json and the image both write stdout: give -o FILE for the image",
                "stage": "usage",
            }),
        ),
    ];
    for (args, status, expected) in cases {
        let o = gpu16_in(&d, args);
        assert_eq!(o.status.code(), Some(status), "{args:?}: {}", stderr(&o));
        let v = object(&o);
        assert_eq!(v, expected, "{args:?}");
        // stderr has the message too, as `run --json` does.
        assert_eq!(
            stderr(&o),
            format!("error: {}\n", expected["error"].as_str().unwrap()),
            "{args:?}"
        );
    }
    assert!(!d.join("p.hex").exists());
}

#[test]
fn gen_says_what_it_wrote() {
    let d = scratch("gen");
    let o = gpu16_in(
        &d,
        &[
            "gen",
            "--seed",
            "7",
            "--groups",
            "2",
            "-o",
            "g.bin",
            "--mem-out",
            "m.bin",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let image = std::fs::read(d.join("g.bin")).unwrap();
    assert_eq!(image.len() % 32, 0);
    let memory = std::fs::read(d.join("m.bin")).unwrap();
    assert!(!memory.is_empty() && memory.len() <= 4096);
    assert_eq!(
        object(&o),
        json!({
            "files": [
                {"flag": "-o", "file": "g.bin", "bytes": image.len()},
                {"flag": "--mem-out", "file": "m.bin", "bytes": memory.len()},
            ],
            "frames": image.len() / 32,
            "seed": 7,
        })
    );
    // The loader counts the same frames.
    let c = gpu16_in(&d, &["check", "g.bin", "--json"]);
    assert_eq!(object(&c)["frames"], image.len() / 32);
    // --json changes nothing in the files.
    let o = gpu16_in(&d, &["gen", "--seed", "7", "--groups", "2", "-o", "h.bin"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, b"");
    assert_eq!(std::fs::read(d.join("h.bin")).unwrap(), image);
}

#[test]
fn gen_that_stops_is_still_one_object() {
    let d = scratch("gen_stops");
    let cases: [(&[&str], i32, Value); 3] = [
        (
            &["gen", "--seed", "1", "-o", "-", "--json"],
            2,
            json!({
                "error": "--json and -o - both write stdout: give -o a file",
                "stage": "usage",
            }),
        ),
        (
            &[
                "gen",
                "--seed",
                "1",
                "-o",
                "g.bin",
                "--mem-out",
                "g.bin",
                "--json",
            ],
            2,
            json!({
                "error": "-o g.bin and --mem-out g.bin name the same file: give each output its own",
                "stage": "usage",
            }),
        ),
        (
            &["gen", "--seed", "1", "-o", "nodir/g.bin", "--json"],
            1,
            json!({
                "error": "nodir/g.bin: cannot write: directory nodir does not exist",
                "stage": "output",
                "file": "nodir/g.bin",
            }),
        ),
    ];
    for (args, status, expected) in cases {
        let o = gpu16_in(&d, args);
        assert_eq!(o.status.code(), Some(status), "{args:?}: {}", stderr(&o));
        assert_eq!(object(&o), expected, "{args:?}");
    }
    assert!(!d.join("g.bin").exists());
}

/// `check --json` of a raw image, read in parts: its object is written as the findings come
/// (a large image may have millions), and is the same object. Three groups, each a control
/// frame of mask 1 (core 0) that initialises core 2's r0, and its one instruction frame.
#[test]
fn a_checked_image_writes_its_findings_as_objects() {
    let d = scratch("image");
    std::fs::write(d.join("g.s"), ".cf mask=1 r0=2:5\n.if\n    ready\n").unwrap();
    let o = gpu16_in(&d, &["asm", "g.s", "-o", "g.bin"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let group = std::fs::read(d.join("g.bin")).unwrap();
    std::fs::write(d.join("three.bin"), group.repeat(3)).unwrap();
    let finding = |frame: usize| {
        json!({
            "severity": "warning",
            "file": "three.bin",
            "line": null,
            "column": null,
            "frame": frame,
            "instruction": null,
            "message": "R0 init for cores 2 that are not in the mask has no effect",
            "notes": [],
        })
    };
    let o = gpu16_in(&d, &["check", "three.bin", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        object(&o),
        json!({
            "program": "three.bin",
            "format": "bin",
            "frames": 6,
            "errors": 0,
            "warnings": 3,
            "diagnostics": [finding(0), finding(2), finding(4)],
        })
    );
    // No finding: an empty list.
    std::fs::write(d.join("clean.s"), ".cf mask=1\n.if\n    ready\n").unwrap();
    gpu16_in(&d, &["asm", "clean.s", "-o", "clean.bin"]);
    let o = gpu16_in(&d, &["check", "clean.bin", "--json"]);
    assert_eq!(object(&o)["diagnostics"], json!([]));
    assert_eq!(object(&o)["warnings"], 0);
}

/// A usage error clap finds (a missing or bad flag) under `--json` prints the object of a
/// command that never started too, `stage` `usage`, besides clap's text on stderr.
#[test]
fn a_usage_error_under_json_is_an_object_too() {
    let d = scratch("usage");
    let o = gpu16_in(&d, &["gen", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        object(&o),
        json!({
            "error": "the following required arguments were not provided: --seed <SEED> \
                      --out <OUT.bin>",
            "stage": "usage",
        })
    );
    assert!(stderr(&o).starts_with("error: the following required arguments"));
    let o = gpu16_in(&d, &["run", "--json", "--max-cycles", "x", "p.s"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        object(&o),
        json!({
            "error": "invalid value 'x' for '--max-cycles <N>': invalid digit found in string",
            "stage": "usage",
        })
    );
    // Without --json, stdout stays empty.
    let o = gpu16_in(&d, &["gen"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}
