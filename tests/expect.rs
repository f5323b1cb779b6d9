//! `run --expect-mem` and `--expect-regs`: a hand-worked program, dumps of its final state
//! with known differences in each format, the exact lines and JSON of the differences with
//! their writers, the exit status, and malformed dumps.

mod common;

use common::{gpu16, s, scratch, stderr, stdout};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Cores 0 and 1. The control frame (frame 0, cycle 0) sets r0 of core 0 to 7 and of
/// core 1 to 9; the task (frame 1) is broadcast in cycles 1..4 and runs from cycle 5:
const PROGRAM: &str = "\
.cf mask=0x3 r0=0:7,1:9
.if
    set_const 0x21, r8   ; IP 0, cycle 5: r8 = 0x21
    set_const 0, r1      ; IP 1, cycle 6: r1 = the core id
    add r0, r8, r9       ; IP 2, cycle 7: r9 = r0 + 0x21: 0x28 on core 0, 0x2a on core 1
    st [r8, r1], r9      ; IP 3, cycle 8: mem[0x021] = 0x28, mem[0x121] = 0x2a
    st [r0, r2], r8      ; IP 4, cycle 9: mem[0x007] = mem[0x009] = 0x21
    set_const 0x40, r10  ; IP 5, cycle 10
    st [r10, r2], r1     ; IP 6, cycle 11: mem[0x040] = 0, then 1 (core 1 writes last)
    ready                ; IP 7, cycle 12
";

/// The initial image: 16 bytes, 0x55 at 0x005.
fn initial() -> Vec<u8> {
    let mut m = vec![0u8; 16];
    m[5] = 0x55;
    m
}

/// The final memory, worked out by hand above.
fn final_memory() -> Vec<u8> {
    let mut m = vec![0u8; 4096];
    for (a, v) in [
        (0x005, 0x55),
        (0x007, 0x21),
        (0x009, 0x21),
        (0x021, 0x28),
        (0x040, 0x01),
        (0x121, 0x2a),
    ] {
        m[a] = v;
    }
    m
}

/// The final memory with four differences: 0x005 (the initial image's byte, never written),
/// 0x021 (core 0's store), 0x040 (core 1's, the last of two) and 0x3ff (never written).
fn expected_memory() -> Vec<u8> {
    let mut m = final_memory();
    m[0x005] = 0x00;
    m[0x021] = 0x29;
    m[0x040] = 0x00;
    m[0x3ff] = 0x77;
    m
}

/// The text of the four differences, after the heading.
const MEM_DIFFS: &str = "   addr  bank   row  expected  actual  last written by
  0x005     0  0x05      0x00    0x55  never written (initial image)
  0x021     0  0x21      0x29    0x28  core 0, frame 1, IP 3, cycle 8
  0x040     0  0x40      0x00    0x01  core 1, frame 1, IP 6, cycle 11
  0x3ff     3  0xff      0x77    0x00  never written
";

fn mem_diffs_json() -> Value {
    json!([
        {"addr": 5, "bank": 0, "row": 5, "expected": 0, "actual": 0x55, "writer": null},
        {"addr": 0x21, "bank": 0, "row": 0x21, "expected": 0x29, "actual": 0x28,
         "writer": {"core": 0, "frame": 1, "ip": 3, "cycle": 8, "kind": "instruction"}},
        {"addr": 0x40, "bank": 0, "row": 0x40, "expected": 0, "actual": 1,
         "writer": {"core": 1, "frame": 1, "ip": 6, "cycle": 11, "kind": "instruction"}},
        {"addr": 0x3ff, "bank": 3, "row": 0xff, "expected": 0x77, "actual": 0, "writer": null},
    ])
}

struct Setup {
    dir: PathBuf,
    program: PathBuf,
    mem: PathBuf,
}

fn setup(test: &str) -> Setup {
    let dir = scratch("expect", test);
    let program = dir.join("p.s");
    std::fs::write(&program, PROGRAM).unwrap();
    let mem = dir.join("init.bin");
    std::fs::write(&mem, initial()).unwrap();
    Setup { dir, program, mem }
}

/// `$writememh` style: 16 bytes a line, an `@` line for each of the banks it writes, and
/// comments.
fn writememh(m: &[u8]) -> String {
    let mut t = String::from("// shared memory after the run\n");
    for bank in 0..16 {
        t += &format!("\n@{:x} /* bank {bank} */\n", bank * 256);
        for row in 0..16 {
            let a = bank * 256 + row * 16;
            let line: Vec<String> = m[a..a + 16].iter().map(|b| format!("{b:02x}")).collect();
            t += &line.join(" ");
            t += "\n";
        }
    }
    t
}

/// Bank k's file: one byte a line.
fn bank_file(m: &[u8], k: usize) -> String {
    m[k * 256..(k + 1) * 256]
        .iter()
        .map(|b| format!("{b:02X}\n"))
        .collect()
}

/// The three forms of `m` in `dir`: raw, hex, and 16 bank files in a directory and as a
/// pattern (names where plain order would put bank 10 before bank 2).
fn dumps(dir: &Path, m: &[u8]) -> Vec<(String, String)> {
    let raw = dir.join("mem.bin");
    std::fs::write(&raw, m).unwrap();
    let hex = dir.join("mem.hex");
    std::fs::write(&hex, writememh(m)).unwrap();
    let banks = dir.join("banks");
    std::fs::create_dir_all(&banks).unwrap();
    let mixed = dir.join("mixed");
    std::fs::create_dir_all(&mixed).unwrap();
    std::fs::write(mixed.join("README"), "not a bank").unwrap();
    for k in 0..16 {
        std::fs::write(banks.join(format!("bank{k}.hex")), bank_file(m, k)).unwrap();
        std::fs::write(mixed.join(format!("sm_b{k}.mem")), bank_file(m, k)).unwrap();
    }
    vec![
        ("raw".into(), s(&raw).into()),
        ("hex".into(), s(&hex).into()),
        ("banks".into(), s(&banks).into()),
        ("banks".into(), format!("{}/sm_b*.mem", s(&mixed))),
    ]
}

const BACKENDS: [&str; 3] = ["interp", "jit", "auto"];

#[test]
fn memory_differences_in_every_format() {
    let t = setup("memory");
    for (format, dump) in dumps(&t.dir, &expected_memory()) {
        for backend in BACKENDS {
            let args = [
                "run",
                s(&t.program),
                "-q",
                "--mem",
                s(&t.mem),
                "--backend",
                backend,
                "--expect-mem",
                &dump,
            ];
            let out = gpu16(&args);
            assert_eq!(out.status.code(), Some(1), "{dump} {backend}");
            let text = stdout(&out);
            let want = format!("\n--expect-mem {dump}: 4 differences\n{MEM_DIFFS}");
            assert!(text.ends_with(&want), "{dump} {backend}:\n{text}");
            // The report before it is the usual one.
            assert!(text.starts_with("cycles 13   instructions 16"), "{text}");
            assert_eq!(
                stderr(&out),
                format!(
                    "error: the final state differs from the expected one: 4 of 4096 bytes \
                     (--expect-mem {dump})\n"
                )
            );

            let out = gpu16(&[&args[..], &["--json"]].concat());
            assert_eq!(out.status.code(), Some(1), "{dump} {backend}");
            let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
            let e = &v["expect_mem"];
            assert_eq!(e["file"], json!(dump));
            assert_eq!(e["format"], json!(format));
            assert_eq!(e["files"].as_array().unwrap().len(), {
                if format == "banks" {
                    16
                } else {
                    1
                }
            });
            assert_eq!(e["differences"], json!(4));
            assert_eq!(e["diffs"], mem_diffs_json(), "{dump} {backend}");
            assert_eq!(v["error"]["rule"], json!("expect"));
            assert_eq!(v["cycles"], json!(13)); // the contract keys are all there
        }
    }
    // Bank files in natural order: sm_b2 is bank 2, sm_b10 bank 10.
    let v: Value = serde_json::from_str(&stdout(&gpu16(&[
        "run",
        s(&t.program),
        "--json",
        "--expect-mem",
        &format!("{}/mixed/sm_b*.mem", s(&t.dir)),
    ])))
    .unwrap();
    let files = v["expect_mem"]["files"].as_array().unwrap();
    assert!(files[2].as_str().unwrap().ends_with("/sm_b2.mem"));
    assert!(files[10].as_str().unwrap().ends_with("/sm_b10.mem"));
}

#[test]
fn a_matching_dump_exits_0() {
    let t = setup("match");
    for (_, dump) in dumps(&t.dir, &final_memory()) {
        for backend in BACKENDS {
            let out = gpu16(&[
                "run",
                s(&t.program),
                "-q",
                "--mem",
                s(&t.mem),
                "--backend",
                backend,
                "--expect-mem",
                &dump,
            ]);
            assert_eq!(out.status.code(), Some(0), "{dump} {backend}");
            assert!(
                stdout(&out).ends_with(&format!("\n--expect-mem {dump}: all 4096 bytes match\n"))
            );
            assert_eq!(stderr(&out), "");
        }
    }
    // A raw dump shorter than 4096 bytes is zero past its end; so are bytes a hex text does
    // not give.
    let short = t.dir.join("short.bin");
    std::fs::write(&short, &final_memory()[..0x122]).unwrap();
    let sparse = t.dir.join("sparse.mem");
    std::fs::write(
        &sparse,
        "@5 55 00 21 00 21\n@21 28 // core 0\n@40 01\n@121 2a\n",
    )
    .unwrap();
    for dump in [&short, &sparse] {
        let out = gpu16(&[
            "run",
            s(&t.program),
            "-q",
            "--mem",
            s(&t.mem),
            "--expect-mem",
            s(dump),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    }
}

#[test]
fn register_differences() {
    let t = setup("regs");
    let mut regs = [[0u8; 16]; 16];
    regs[0][..11].copy_from_slice(&[7, 0, 0, 0, 0, 0, 0, 0, 0x21, 0x28, 0x40]);
    regs[1][..11].copy_from_slice(&[9, 1, 0, 0, 0, 0, 0, 0, 0x21, 0x2a, 0x40]);
    let text = |regs: &[[u8; 16]; 16]| {
        let mut t = String::from("// core k: r0..r15\n");
        for (k, line) in regs.iter().enumerate() {
            let bytes: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
            t += &bytes.join(if k % 2 == 0 { " " } else { "," });
            t += "\n";
        }
        t
    };
    let good = t.dir.join("good.txt");
    std::fs::write(&good, text(&regs)).unwrap();
    // Three differences: r0 of core 0 (set by the control frame's R0 init), r9 of core 1
    // (its add) and r3 of core 5 (never written).
    regs[0][0] = 0x08;
    regs[1][9] = 0x2b;
    regs[5][3] = 0x01;
    let bad = t.dir.join("bad.txt");
    std::fs::write(&bad, text(&regs)).unwrap();
    for backend in BACKENDS {
        let run = |file: &Path, json: bool| {
            let mut args = vec!["run", s(&t.program), "-q", "--backend", backend];
            args.extend(["--expect-regs", s(file)]);
            if json {
                args.push("--json");
            }
            gpu16(&args)
        };
        let out = run(&good, false);
        assert_eq!(out.status.code(), Some(0), "{backend}");
        assert!(stdout(&out).ends_with(&format!(
            "\n--expect-regs {}: all 256 registers match\n",
            s(&good)
        )));
        let out = run(&bad, false);
        assert_eq!(out.status.code(), Some(1), "{backend}");
        let want = format!(
            "\n--expect-regs {}: 3 differences\n\
             \x20 core  reg  expected  actual  last written by\n\
             \x20    0   r0      0x08    0x07  R0 init of control frame 0, cycle 0\n\
             \x20    1   r9      0x2b    0x2a  core 1, frame 1, IP 2, cycle 7\n\
             \x20    5   r3      0x01    0x00  never written\n",
            s(&bad)
        );
        assert!(stdout(&out).ends_with(&want), "{backend}: {}", stdout(&out));
        assert!(stderr(&out).contains("3 of 256 registers (--expect-regs"));
        let out = run(&bad, true);
        assert_eq!(out.status.code(), Some(1));
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(
            v["expect_regs"],
            json!({
                "file": s(&bad),
                "differences": 3,
                "diffs": [
                    {"core": 0, "reg": 0, "expected": 8, "actual": 7,
                     "writer": {"core": 0, "frame": 0, "ip": null, "cycle": 0,
                                "kind": "r0_init"}},
                    {"core": 1, "reg": 9, "expected": 0x2b, "actual": 0x2a,
                     "writer": {"core": 1, "frame": 1, "ip": 2, "cycle": 7,
                                "kind": "instruction"}},
                    {"core": 5, "reg": 3, "expected": 1, "actual": 0, "writer": null},
                ],
            })
        );
        assert!(v.get("expect_mem").is_none());
    }
}

#[test]
fn a_failed_run_compares_the_state_where_it_stopped() {
    let t = setup("failed");
    let dump = t.dir.join("final.bin");
    std::fs::write(&dump, final_memory()).unwrap();
    // The watchdog at 11 cycles: the store of cycle 11 has not happened, and the run's own
    // failure is the status.
    let out = gpu16(&[
        "run",
        s(&t.program),
        "--mem",
        s(&t.mem),
        "--max-cycles",
        "11",
        "--expect-mem",
        s(&dump),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        format!(
            "--expect-mem {}: 1 difference\n\
             \x20  addr  bank   row  expected  actual  last written by\n\
             \x20 0x040     0  0x40      0x01    0x00  never written\n",
            s(&dump)
        )
    );
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    assert!(stderr(&out).contains("watchdog"));
}

#[test]
fn malformed_dumps_name_the_file_and_line() {
    let t = setup("malformed");
    let run = |flag: &str, file: &str| gpu16(&["run", s(&t.program), "-q", flag, file]);
    let check = |flag: &str, file: &Path, contents: &[u8], message: &str| {
        std::fs::write(file, contents).unwrap();
        let out = run(flag, s(file));
        assert_eq!(out.status.code(), Some(1), "{message}");
        assert_eq!(stderr(&out), format!("error: {}: {message}\n", s(file)));
        assert_eq!(stdout(&out), "");
    };
    check(
        "--expect-mem",
        &t.dir.join("x.hex"),
        b"00 01\n// x\n0x zz\n",
        "line 3, column 1: `0x` has an x or z digit: a byte must be a known value",
    );
    check(
        "--expect-mem",
        &t.dir.join("long.bin"),
        &[0u8; 4097],
        "too large: a raw memory image may have at most 4096 bytes (4 KiB); this file has 4097",
    );
    check(
        "--expect-mem",
        &t.dir.join("far.mem"),
        b"@ff0\n00\n@1000 01\n",
        "line 3, column 1: `@1000` is past the last address 0xfff",
    );
    check(
        "--expect-regs",
        &t.dir.join("r.txt"),
        format!("{}\n00 01\n", "00 ".repeat(16)).as_bytes(),
        "line 2: 2 values: each line gives one core's r0..r15, 16 hex bytes (this is core 1)",
    );
    // Bank files: 15 of them, then a bank with a row missing.
    let banks = t.dir.join("banks");
    std::fs::create_dir_all(&banks).unwrap();
    let full: String = (0..256).map(|_| "00\n").collect();
    for k in 0..15 {
        std::fs::write(banks.join(format!("b{k}.hex")), &full).unwrap();
    }
    let out = run("--expect-mem", s(&banks));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with(&format!(
            "error: {}: a bank dump needs exactly 16 bank files (bank k holds addresses \
             k*256..k*256+255, one byte a line), but 15 (b0.hex, b1.hex, b2.hex,",
            s(&banks)
        )),
        "{}",
        stderr(&out)
    );
    std::fs::write(banks.join("b15.hex"), &full[3..]).unwrap();
    let out = run("--expect-mem", s(&banks));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}: bank 15: 255 values: a bank file must give each of its 256 rows \
             once, one byte a line (row 0xff is missing)\n",
            s(&banks.join("b15.hex"))
        )
    );
    std::fs::write(banks.join("b15.hex"), format!("{}zx\n", &full[3..])).unwrap();
    let out = run("--expect-mem", s(&banks));
    assert!(
        stderr(&out).contains("b15.hex: bank 15: line 256, column 1: `zx` has an x or z digit"),
        "{}",
        stderr(&out)
    );
    let out = run("--expect-mem", &format!("{}/nothing*.hex", s(&banks)));
    assert!(
        stderr(&out).contains("but none match the pattern"),
        "{}",
        stderr(&out)
    );
    // With --json, one object naming the stage and the file.
    let out = gpu16(&[
        "run",
        s(&t.program),
        "--json",
        "--expect-regs",
        s(&t.dir.join("missing.txt")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["stage"], json!("load"));
    assert_eq!(v["file"], json!(s(&t.dir.join("missing.txt"))));
}

#[test]
fn an_output_must_not_overwrite_an_expected_dump() {
    let t = setup("outputs");
    let dump = t.dir.join("final.bin");
    std::fs::write(&dump, final_memory()).unwrap();
    let out = gpu16(&[
        "run",
        s(&t.program),
        "--expect-mem",
        s(&dump),
        "--dump-mem",
        s(&dump),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: --dump-mem {d} and --expect-mem {d} name the same file: an output must \
             not overwrite an input\n",
            d = s(&dump)
        )
    );
    assert_eq!(std::fs::read(&dump).unwrap(), final_memory());
}
