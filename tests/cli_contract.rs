//! The contracts scripts rely on, through the built binary: the `--json` keys of `run` with
//! hand-worked values, exit statuses and messages of failed runs and bad files, memory
//! images, and the `gen`, `diff` and `fuzz` commands.

mod common;

use common::{gpu16, s, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn scratch(test: &str) -> PathBuf {
    common::scratch("cli_contract", test)
}

// common::TWO_STORES, worked by hand: the CF takes cycle 0, the broadcast cycles 1-4, the
// cores run set_const at 5, 6, 7, the store at 8 and the `ready` fill at 9. So 10 cycles,
// 5 instructions a core, one task (frame 1) 5..9.
use common::TWO_STORES;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).expect("stdout is one JSON object")
}

#[test]
fn run_json_has_the_contract_keys_with_hand_worked_values() {
    let d = scratch("json");
    let src = write(&d, "two.s", TWO_STORES);
    for backend in ["interp", "jit", "auto"] {
        let o = gpu16(&["run", s(&src), "--json", "--backend", backend]);
        assert!(o.status.success(), "{backend}: {}", stderr(&o));
        let j = json_of(&o);
        assert_eq!(j["backend"], backend);
        assert_eq!(j["cycles"], 10);
        assert_eq!(j["instructions"], 10);
        assert_eq!(j["stalls"], 0);
        let regs = j["registers"].as_array().unwrap();
        assert_eq!(regs.len(), 16);
        for (core, r) in regs.iter().enumerate() {
            let r: Vec<u64> = r
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            assert_eq!(r.len(), 16);
            let mut want = vec![0u64; 16];
            if core < 2 {
                want[1] = core as u64;
                want[8] = 3;
                want[9] = 0x2a;
            }
            assert_eq!(r, want, "{backend}: core {core}");
        }
        let mem = j["memory"].as_str().unwrap();
        assert_eq!(mem.len(), 8192);
        assert!(mem
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
        for (addr, byte) in [(0x003, "2a"), (0x103, "2a"), (0x004, "00"), (0x203, "00")] {
            assert_eq!(&mem[2 * addr..2 * addr + 2], byte, "address {addr:#x}");
        }
        assert_eq!(mem.matches("2a").count(), 2);
        let tasks = j["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0]["frame"], 1);
        assert_eq!(tasks[0]["mask"], 3);
        assert_eq!(tasks[0]["start"], 5);
        assert_eq!(tasks[0]["end"], 9);
    }
}

#[test]
fn an_unkept_task_list_is_null_not_empty() {
    let d = scratch("tasklog");
    let src = write(&d, "two.s", TWO_STORES);
    for (log, tasks_null) in [("all", false), ("summary", true), ("none", true)] {
        let o = gpu16(&["run", s(&src), "--json", "--tasks", log]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j = json_of(&o);
        assert_eq!(j["task_log"], log);
        let obj = j.as_object().unwrap();
        for key in [
            "cycles",
            "registers",
            "memory",
            "tasks",
            "instructions",
            "stalls",
            "backend",
            "stats",
        ] {
            assert!(obj.contains_key(key), "--tasks {log}: key `{key}` missing");
        }
        assert_eq!(j["tasks"].is_null(), tasks_null, "--tasks {log}");
        assert_eq!(j["task_summary"]["tasks"], 1);
    }
}

#[test]
fn a_runtime_fault_exits_1_naming_file_frame_core_ip_and_rule() {
    let d = scratch("fault");
    // Core 0's st_sync at IP 1 (cycle 6) has no open sequence.
    let src = write(
        &d,
        "fault.s",
        ".cf mask=1\n.if\n    nop\n    st_sync [r0, r0], r0\n",
    );
    let o = gpu16(&["run", s(&src), "-q"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("fault.s"), "{e}");
    assert!(e.contains("frame 1, core 0, IP 1, cycle 6"), "{e}");
    assert!(e.contains("st_sync with no open atomic sequence"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    // With --json the state and the error still go to stdout.
    let o = gpu16(&["run", s(&src), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let j = json_of(&o);
    assert_eq!(j["error"]["core"], 0);
    assert_eq!(j["error"]["ip"], 1);
    assert_eq!(j["error"]["frame"], 1);
    assert_eq!(j["cycles"], 6);
}

#[test]
fn bad_images_exit_1_naming_the_file_and_frame() {
    let d = scratch("images");
    // A control frame with fence 3 (header bits 7:6) and IF_Num 1, then one IF.
    let mut img = vec![0u8; 64];
    img[0] = 0xC1;
    img[2] = 1;
    let bin = d.join("fence3.bin");
    std::fs::write(&bin, &img).unwrap();
    let o = gpu16(&["run", s(&bin)]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("fence3.bin") && e.contains("frame 0"), "{e}");
    assert!(e.contains("fence"), "{e}");

    let short = d.join("short.tm");
    std::fs::write(&short, [0u8; 40]).unwrap();
    let o = gpu16(&["run", s(&short)]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("short.tm") && e.contains("multiple of"), "{e}");

    let o = gpu16(&["run", s(&d.join("missing.bin"))]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.bin"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["run"],
        vec!["run", "x.s", "--backend", "fast"],
        vec!["run", "x.s", "--max-cycles", "1000000000000000000"],
        vec!["gen", "--seed", "1", "--groups", "0", "-o", "x.bin"],
        vec!["fuzz", "--count", "1", "--shard", "3/3"],
    ] {
        let o = gpu16(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn hex_program_and_hex_memory_with_addresses() {
    let d = scratch("hex");
    // CF: IF_Num 1, mask 0x0001. IF, encoded by hand: set_const 0x10, r8 (0xc108), then
    // ld [r8, r1], r9 (0xb819: a = 8, mode 0, s1 = 1, c = 9) loads byte 0x010.
    let prog = write(
        &d,
        "p.hex",
        "// control frame\n0001 0001 0000 0000 0000 0000 0000 0000\n0000 0000 0000 0000 0000 0000 0000 0000\n\
         c108 b819 f000 f000 f000 f000 f000 f000 f000 f000 f000 f000 f000 f000 f000 f000 // IF\n",
    );
    // Byte 0x010 = 0x5c through an @address line.
    let mem = write(&d, "m.hex", "@010\n5c\n");
    let o = gpu16(&["run", s(&prog), "--mem", s(&mem), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json_of(&o);
    assert_eq!(j["registers"][0][9], 0x5c);
    assert_eq!(j["registers"][0][8], 0x10);
}

#[test]
fn gen_is_deterministic_and_diff_and_fuzz_agree() {
    let d = scratch("gen");
    let (a, b) = (d.join("a.bin"), d.join("b.bin"));
    let (ma, mb) = (d.join("a.mem"), d.join("b.mem"));
    for (out, mem) in [(&a, &ma), (&b, &mb)] {
        let o = gpu16(&[
            "gen",
            "--seed",
            "42",
            "--profile",
            "atomics",
            "-o",
            s(out),
            "--mem-out",
            s(mem),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let bytes = std::fs::read(&a).unwrap();
    assert_eq!(bytes, std::fs::read(&b).unwrap(), "same seed, same program");
    assert_eq!(std::fs::read(&ma).unwrap(), std::fs::read(&mb).unwrap());
    assert!(!bytes.is_empty() && bytes.len() % 32 == 0);
    let o = gpu16(&["gen", "--seed", "43", "--profile", "atomics", "-o", s(&b)]);
    assert!(o.status.success());
    assert_ne!(
        bytes,
        std::fs::read(&b).unwrap(),
        "another seed, another program"
    );

    for extra in [&[][..], &["--issue", "lookahead", "--bank-conflicts"][..]] {
        let mut args = vec![
            "diff",
            s(&a),
            "--mem",
            s(&ma),
            "--backends",
            "interp",
            "auto",
        ];
        args.extend_from_slice(extra);
        let o = gpu16(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o), "identical\n");
    }

    // Shard 1 of 4 of 40 seeds is seeds 1, 5, ..., 37: ten programs.
    let o = gpu16(&[
        "fuzz", "--count", "40", "--shard", "1/4", "--jobs", "2", "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("10 programs, no divergence between interp and jit"),
        "{out}"
    );
}

#[test]
fn auto_hot_sets_where_auto_compiles_and_never_the_result() {
    // examples/counter.s: 342 cycles, 880 instructions, 16 x 10 increments at 0x000 (the
    // README's hand-checked run), whatever the thresholds: compiled at the first issue, at
    // the first interpreted instruction, or never.
    let counter = format!("{}/examples/counter.s", env!("CARGO_MANIFEST_DIR"));
    for hot in [
        "1,1",
        "1",
        "0,0",
        "1000,80000",
        "4294967295,18446744073709551615",
    ] {
        let o = gpu16(&[
            "run",
            &counter,
            "--backend",
            "auto",
            "--auto-hot",
            hot,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{hot}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            (v["cycles"].as_u64(), v["instructions"].as_u64()),
            (Some(342), Some(880))
        );
        assert_eq!(&v["memory"].as_str().unwrap()[..2], "a0", "{hot}");
    }
    for bad in ["", "x", "1,", "-1", "1,2,3", "4294967296"] {
        let o = gpu16(&["run", &counter, &format!("--auto-hot={bad}")]);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&o).contains("--auto-hot"), "{bad:?}: {}", stderr(&o));
    }
}

#[cfg(unix)]
#[test]
fn control_characters_in_file_names_are_escaped_in_messages() {
    let d = scratch("control_names");
    let evil = d.join("evil\x1b[2J\nname.s");
    std::fs::copy(
        format!("{}/examples/counter.s", env!("CARGO_MANIFEST_DIR")),
        &evil,
    )
    .unwrap();
    let shown = s(&evil).replace('\x1b', "\\x1b").replace('\n', "\\n");
    // A watchdog message names the program and each core's location.
    let o = gpu16(&["run", s(&evil), "--max-cycles", "20"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(!err.contains('\x1b'), "{err:?}");
    assert!(
        err.starts_with(&format!("error: {shown}: watchdog")),
        "{err:?}"
    );
    assert!(err.contains(&format!("({shown}:14:5)")), "{err:?}");
    // A file that cannot be read, and an output that cannot be written.
    let missing = d.join("no\x07such\r.s");
    let o = gpu16(&["run", s(&missing)]);
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}: cannot read: No such file or directory (os error 2)\n",
            s(&missing).replace('\x07', "\\x07").replace('\r', "\\r")
        )
    );
    let o = gpu16(&[
        "run",
        s(&evil),
        "--dump-mem",
        &format!("{}/x\x1b/m.bin", s(&d)),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        !stderr(&o).contains('\x1b') && stderr(&o).contains("x\\x1b"),
        "{}",
        stderr(&o)
    );
    // `check`'s summary line, and `asm`'s note on a --mem-out without `.data`.
    let o = gpu16(&["check", s(&evil)]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        format!("{shown}: 2 frames, no errors, 0 warnings\n")
    );
    let image = d.join("i.bin");
    let o = gpu16(&[
        "asm",
        s(&evil),
        "-o",
        s(&image),
        "--mem-out",
        s(&d.join("m.bin")),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).starts_with(&format!("note: {shown} has no `.data` directive")),
        "{}",
        stderr(&o)
    );
    let o = gpu16(&["check", s(&image)]);
    assert!(!stdout(&o).contains('\x1b'), "{}", stdout(&o));
}

#[test]
fn png_scale_sizes_the_memory_picture() {
    let d = scratch("png_scale");
    let counter = format!("{}/examples/counter.s", env!("CARGO_MANIFEST_DIR"));
    let png = d.join("m.png");
    for (scale, side) in [("1", 64u32), ("2", 128), ("32", 2048)] {
        let o = gpu16(&[
            "run",
            &counter,
            "-q",
            "--mem-png",
            s(&png),
            "--png-scale",
            scale,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // The IHDR chunk: width and height, big-endian, at bytes 16..24 of a PNG.
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[16..20], &side.to_be_bytes(), "scale {scale}");
        assert_eq!(&bytes[20..24], &side.to_be_bytes(), "scale {scale}");
    }
    for bad in ["0", "33"] {
        let o = gpu16(&["run", &counter, "--mem-png", s(&png), "--png-scale", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
    }
    let o = gpu16(&["run", &counter, "--png-scale", "2"]);
    assert_eq!(o.status.code(), Some(2), "--png-scale needs --mem-png");
}

#[test]
fn a_byte_that_is_not_utf8_is_named_by_line_and_column() {
    // Latin-1 `é` (0xe9) in a comment on line 3, after 13 characters.
    let d = scratch("not_utf8");
    let src = d.join("l1.s");
    std::fs::write(&src, b".cf mask=1\n.if\n    nop ; caf\xe9\n").unwrap();
    let o = gpu16(&["run", s(&src)]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}: line 3, column 14: not UTF-8 text (byte 0xe9)\n",
            s(&src)
        )
    );
}
