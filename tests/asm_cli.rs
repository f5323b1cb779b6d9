//! `gpu16 asm`, `disasm`, `check` and `run` on assembly, through the built binary: output
//! files and formats, exit statuses and diagnostics on stderr. A closed pipe on stdout is
//! `tests/stdout.rs`.

mod common;

use common::{gpu16, s};
use std::path::PathBuf;

fn scratch(test: &str) -> PathBuf {
    common::scratch("asm_cli", test)
}

/// The image of common::TWO_STORES, encoded by hand: CF (IF_Num 1, mask 3), then the IF.
fn expected_image() -> Vec<u8> {
    let mut img = vec![0u8; 64];
    img[0] = 0x01;
    img[2] = 0x03;
    let words = [0xc001u16, 0xc038, 0xc2a9, 0xd819];
    for i in 0..16 {
        let w = words.get(i).copied().unwrap_or(0xf000);
        img[32 + 2 * i..34 + 2 * i].copy_from_slice(&w.to_le_bytes());
    }
    img
}

#[test]
fn asm_writes_the_bin_next_to_the_source() {
    let d = scratch("default");
    let src = d.join("p.s");
    std::fs::write(&src, common::TWO_STORES).unwrap();
    let out = gpu16(&["asm", s(&src)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(d.join("p.bin")).unwrap(), expected_image());
    let other = d.join("q.img.bin");
    assert!(gpu16(&["asm", s(&src), "-o", s(&other)]).status.success());
    assert_eq!(std::fs::read(&other).unwrap(), expected_image());
}

#[test]
fn hex_output_loads_back_as_a_program() {
    let d = scratch("hex");
    let src = d.join("p.s");
    std::fs::write(&src, common::TWO_STORES).unwrap();
    let out = gpu16(&["asm", s(&src), "--hex"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("0001 0003 0000"), "{text}");
    let hex = d.join("p.hex");
    std::fs::write(&hex, &text).unwrap();
    let dis = gpu16(&["disasm", s(&hex)]);
    assert!(dis.status.success());
    let back = d.join("back.s");
    std::fs::write(&back, &dis.stdout).unwrap();
    assert!(gpu16(&["asm", s(&back)]).status.success());
    assert_eq!(std::fs::read(d.join("back.bin")).unwrap(), expected_image());
}

#[test]
fn disasm_round_trips_through_the_cli() {
    let d = scratch("disasm");
    let src = d.join("p.s");
    std::fs::write(&src, common::TWO_STORES).unwrap();
    assert!(gpu16(&["asm", s(&src)]).status.success());
    let dis = d.join("d.s");
    let out = gpu16(&["disasm", s(&d.join("p.bin")), "-o", s(&dis)]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(&dis).unwrap();
    assert!(text.contains("st [r8, r1], r9"), "{text}");
    assert!(!text.contains("ready"), "the ready fill is folded:\n{text}");
    assert!(gpu16(&["asm", s(&dis), "-o", s(&d.join("d.bin"))])
        .status
        .success());
    assert_eq!(std::fs::read(d.join("d.bin")).unwrap(), expected_image());
}

#[test]
fn errors_go_to_stderr_with_location_and_exit_1() {
    let d = scratch("errors");
    let src = d.join("bad.s");
    std::fs::write(&src, ".cf mask=1 fence=maybe\n.if\n  ld [r4, r7], r2\n").unwrap();
    for cmd in ["asm", "check", "run"] {
        let out = gpu16(&[cmd, s(&src)]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("bad.s:1:18: error: fence must be no, acq or rel"),
            "{cmd}: {err}"
        );
        assert!(
            err.contains("bad.s:3:11: error: the second address register of ld must be r0..r3\n      ld [r4, r7], r2\n              ^^"),
            "{cmd}: {err}"
        );
    }
    assert!(!d.join("bad.bin").exists());
}

#[test]
fn check_exits_0_with_warnings_and_1_on_load_errors() {
    let d = scratch("check");
    let src = d.join("w.s");
    std::fs::write(&src, ".cf mask=0\n.if\nset_const 7, r2\n").unwrap();
    let out = gpu16(&["check", s(&src)]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("w.s:1:1: warning: mask is 0"), "{text}");
    assert!(
        text.contains("w.s:3:1: warning: set_const into r2"),
        "{text}"
    );
    assert!(text.contains("2 warnings"), "{text}");
    let bin = d.join("short.bin");
    std::fs::write(&bin, [0u8; 33]).unwrap();
    let out = gpu16(&["check", s(&bin)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a multiple of the 32-byte frame size")
    );
    // A binary with a warning names frame and instruction.
    let mut img = expected_image();
    img[32..34].copy_from_slice(&0x0001u16.to_le_bytes());
    let bin = d.join("w.bin");
    std::fs::write(&bin, img).unwrap();
    let out = gpu16(&["check", s(&bin)]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout)
        .contains("w.bin: frame 1, instruction 0: warning: instruction word 0x0001"));
}

#[test]
fn run_takes_assembly_directly() {
    let d = scratch("run");
    let src = d.join("p.s");
    std::fs::write(&src, common::TWO_STORES).unwrap();
    let dump = d.join("mem.bin");
    let out = gpu16(&["run", s(&src), "--dump-mem", s(&dump)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = std::fs::read(&dump).unwrap();
    assert_eq!((m[3], m[0x103], m[0x203]), (0x2a, 0x2a, 0));
}

#[test]
fn refuses_to_overwrite_the_source() {
    let d = scratch("overwrite");
    let src = d.join("p.s");
    std::fs::write(&src, common::TWO_STORES).unwrap();
    let out = gpu16(&["asm", s(&src), "-o", s(&src)]);
    // An output naming an input is a usage error (tests/safe_outputs.rs has the rest).
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&src).unwrap(), common::TWO_STORES);
}

#[test]
fn bad_input_never_panics() {
    let d = scratch("fuzz");
    let inputs = [
        "\u{0}\u{1}",
        ".cf mask=((((",
        ".cf mask=1 << 99",
        ".cf mask=1/0",
        ".repeat 99999999999\n.end",
        ".include \"p.s\"",
        "\"",
        ".cf mask=1\n.if\nbnz , r1",
        ".cf mask=1 r0=1:\n.if\nld [r1",
        "é: .word 0x10000",
    ];
    for (i, text) in inputs.iter().enumerate() {
        let src = d.join("p.s");
        std::fs::write(&src, text).unwrap();
        for cmd in ["asm", "check"] {
            let out = gpu16(&[cmd, s(&src)]);
            assert_eq!(out.status.code(), Some(1), "input {i} {text:?}");
            assert!(
                !String::from_utf8_lossy(&out.stderr).contains("panicked"),
                "input {i}"
            );
        }
    }
}

/// `asm` warns, on stderr, about a constant into a register that loads the core id, in the
/// words and at the place `check` gives; the image and the status are those of a source
/// without the warning.
#[test]
fn asm_warns_about_set_const_into_a_core_id_register() {
    let d = scratch("set_const_warning");
    let src = d.join("p.s");
    // common::TWO_STORES with `set_const 5, r1` (line 4, column 5) for `set_const 0, r1`.
    std::fs::write(
        &src,
        common::TWO_STORES.replace("set_const 0, r1", "set_const 5, r1"),
    )
    .unwrap();
    let warning = format!(
        "{}:4:5: warning: set_const into r1 loads the core id, not 0x05: only r8..r15 take a constant\n        set_const 5, r1\n        ^^^^^^^^^\n",
        s(&src)
    );
    let out = gpu16(&["asm", s(&src)]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), warning);
    let bin = d.join("p.bin");
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}: 2 frames (64 bytes) -> {}\n", s(&src), s(&bin))
    );
    // set_const 5, r1 encodes as 0xc051 (set_const 0, r1 was 0xc001); the rest as before.
    let mut image = expected_image();
    image[32..34].copy_from_slice(&0xc051u16.to_le_bytes());
    assert_eq!(std::fs::read(&bin).unwrap(), image);
    // check says the same, on stdout.
    let out = gpu16(&["check", s(&src)]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{warning}{}: 2 frames, no errors, 1 warning\n", s(&src))
    );
    // With the image on stdout, the warning stays on stderr.
    let out = gpu16(&["asm", s(&src), "--hex"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), warning);
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .starts_with("0001 0003 0000"));
    // A constant of 0, or into r8..r15, is not warned about (common::TWO_STORES has both).
    std::fs::write(&src, common::TWO_STORES).unwrap();
    let out = gpu16(&["asm", s(&src)]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// In the mcst dialect r8..r15 take the core id, and asm warns about those.
#[test]
fn asm_warns_about_set_const_in_the_mcst_dialect_too() {
    let d = scratch("set_const_warning_mcst");
    let src = d.join("m.s");
    std::fs::write(
        &src,
        ".cf mask=1\n.if\n  set_const 9, r12\n  set_const 9, r3\n",
    )
    .unwrap();
    let out = gpu16(&["asm", s(&src), "--dialect", "mcst"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "{}:3:3: warning: set_const into r12 loads the core id, not 0x09: in the mcst dialect only r0..r7 take a constant\n      set_const 9, r12\n      ^^^^^^^^^\n",
            s(&src)
        )
    );
}
