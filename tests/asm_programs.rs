//! The assembler's features for real programs through the built binary: `asm --mem-out`
//! (the `.data` image, raw or `$readmemh`), `run`, `debug` and `diff` starting from a
//! source's `.data` unless `--mem` is given, and diagnostics of macro expansions on stderr
//! and in `--json`. Expected bytes are worked by hand from the sources below.

mod common;

use common::{gpu16, gpu16_with_stdin, s, stderr, stdout};
use std::path::PathBuf;

fn scratch(test: &str) -> PathBuf {
    common::scratch("asm_programs", test)
}

/// Core 1 doubles byte 0x100 (bank 1, row 0) into 0x120, through a macro; `.data` gives
/// 0x100 = 21 and 0x110..0x111 = 10, 20 by bank and row. Expected: M[0x120] = 42 = 0x2a.
const DOUBLE: &str = "; core 1 doubles byte 0x100 into 0x120
.data 0x100, 21, 2
.data bank=1 row=0x10, 10, 20
.macro double from, to
    set_const \\from, r8
    set_const \\to, r11
    ld [r8, r1], r10
    add r10, r10, r10
    st [r11, r1], r10
.endm
.cf mask=2
.if
    set_const 0, r1          ; the core id, 1: the bank
.when 1 < 2
    double 0x00, 0x20
.otherwise
    double 0x01, 0x20
.endwhen
";

/// `$readmemh` text of the `.data` of DOUBLE, as the CLI writes memory (a comment line,
/// then each 16-byte row that is not all zero, `@addr` where rows were skipped).
const DOUBLE_HEX: &str =
    "// gpu16 shared memory ($readmemh): hex bytes from @addr; unlisted bytes are 0
@100
15 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00
0a 14 00 00 00 00 00 00 00 00 00 00 00 00 00 00
";

fn write_double(d: &std::path::Path) -> PathBuf {
    let src = d.join("double.s");
    std::fs::write(&src, DOUBLE).unwrap();
    src
}

#[test]
fn mem_out_writes_the_data_image_raw_or_as_text() {
    let d = scratch("mem_out");
    let src = write_double(&d);
    let (bin, raw, hex) = (d.join("p.bin"), d.join("m.bin"), d.join("m.hex"));
    let o = gpu16(&["asm", s(&src), "-o", s(&bin), "--mem-out", s(&raw)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let m = std::fs::read(&raw).unwrap();
    assert_eq!(m.len(), 4096);
    assert_eq!(m[0x100..0x102], [21, 2]);
    assert_eq!(m[0x110..0x112], [10, 20]);
    assert_eq!(m.iter().filter(|&&b| b != 0).count(), 4);
    let o = gpu16(&["asm", s(&src), "-o", s(&bin), "--mem-out", s(&hex)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&hex).unwrap(), DOUBLE_HEX);
    // `-`: stdout, with the image in its file
    let o = gpu16(&["asm", s(&src), "-o", s(&bin), "--mem-out", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout.len(), 4096);
    assert_eq!(o.stdout[0x100], 21);
}

#[test]
fn mem_out_never_overwrites_the_image_or_shares_stdout() {
    let d = scratch("mem_out_clash");
    let src = write_double(&d);
    let bin = d.join("p.bin");
    std::fs::write(&bin, b"keep").unwrap();
    let o = gpu16(&["asm", s(&src), "-o", s(&bin), "--mem-out", s(&bin)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("and --mem-out") && stderr(&o).contains("name the same file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&bin).unwrap(), b"keep");
    let o = gpu16(&["asm", s(&src), "--hex", "--mem-out", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("both write stdout"), "{}", stderr(&o));
    let o = gpu16(&["asm", s(&src), "--mem-out", s(&src)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&src).unwrap(), DOUBLE);
    let o = gpu16(&["asm", s(&src), "-o", s(&bin), "--json", "--mem-out", "-"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn mem_out_without_data_is_zero_with_a_note() {
    let d = scratch("mem_out_zero");
    let src = d.join("p.s");
    std::fs::write(&src, ".cf mask=1\n.if\n    nop\n").unwrap();
    let m = d.join("m.bin");
    let o = gpu16(&["asm", s(&src), "--mem-out", s(&m)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&m).unwrap(), vec![0u8; 4096]);
    assert!(
        stderr(&o).contains("has no `.data` directive"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_failed_assembly_writes_neither_file() {
    let d = scratch("mem_out_fail");
    let src = d.join("bad.s");
    std::fs::write(&src, ".data 0, 1\n.data 0, 2\n.cf mask=1\n").unwrap();
    let (bin, m) = (d.join("p.bin"), d.join("m.bin"));
    let o = gpu16(&["asm", s(&src), "-o", s(&bin), "--mem-out", s(&m)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "bad.s:2:10: error: address 0x000 (bank 0, row 0) already holds 0x01 from line 1; this gives 0x02"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!bin.exists() && !m.exists());
}

/// The final memory of `gpu16 run ARGS --dump-mem F`, and the run's stderr.
fn run_dump(d: &std::path::Path, args: &[&str]) -> (Vec<u8>, String) {
    let dump = d.join("final.bin");
    let _ = std::fs::remove_file(&dump);
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend(["--dump-mem", s(&dump)]);
    let o = gpu16(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    (std::fs::read(&dump).unwrap(), stderr(&o))
}

#[test]
fn run_starts_from_the_data_of_its_source() {
    let d = scratch("run_data");
    let src = write_double(&d);
    let (m, err) = run_dump(&d, &[s(&src)]);
    assert_eq!(m[0x120], 42);
    assert_eq!(m[0x100], 21);
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn mem_given_wins_over_the_data_with_a_warning() {
    let d = scratch("run_mem_wins");
    let src = write_double(&d);
    let mem = d.join("seven.hex");
    std::fs::write(&mem, "@100\n07\n").unwrap();
    let (m, err) = run_dump(&d, &[s(&src), "--mem", s(&mem)]);
    assert_eq!(m[0x120], 14);
    assert_eq!(m[0x110], 0, "the .data was ignored");
    assert!(
        err.contains(&format!(
            "warning: --mem {} is the initial memory: the `.data` directives of {} are ignored",
            mem.display(),
            src.display()
        )),
        "{err}"
    );
}

#[test]
fn an_image_has_no_data() {
    let d = scratch("run_image");
    let src = write_double(&d);
    let bin = d.join("p.bin");
    assert!(gpu16(&["asm", s(&src), "-o", s(&bin)]).status.success());
    let (m, err) = run_dump(&d, &[s(&bin)]);
    assert_eq!(m[0x120], 0);
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn debug_and_diff_start_from_the_data_too() {
    let d = scratch("debug_diff");
    let src = write_double(&d);
    let o = gpu16_with_stdin(
        &["debug", s(&src)],
        b"mem 0x110 2\ncontinue\nmem 0x120 1\nquit\n".to_vec(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("0x110: 0a 14\n"), "{text}");
    assert!(text.contains("0x120: 2a\n"), "{text}");
    let o = gpu16(&["diff", s(&src)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_macro_diagnostic_names_the_body_line_and_the_invocation() {
    let d = scratch("macro_diag");
    let src = d.join("m.s");
    std::fs::write(
        &src,
        ".macro put v\n    set_const \\v, r8\n.endm\n.cf mask=1\n.if\n    put 300\n",
    )
    .unwrap();
    let o = gpu16(&["asm", s(&src)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}:2:15: error: the constant must be -128..255, not 300\n        set_const \\v, r8\n                  ^^\n    note: in the expansion of macro `put`, invoked at {}:6:5\n",
            src.display(),
            src.display()
        )),
        "{err}"
    );
    let o = gpu16(&["asm", s(&src), "--json", "-o", s(&d.join("m.bin"))]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["diagnostics"][0]["line"], 2);
    assert_eq!(v["diagnostics"][0]["column"], 15);
    assert_eq!(
        v["diagnostics"][0]["notes"],
        serde_json::json!([format!(
            "in the expansion of macro `put`, invoked at {}:6:5",
            src.display()
        )])
    );
}
