//! Shared-memory images read by the one rule (`gpu16::input::memory`), end to end through
//! the CLI: `--mem` and `--expect-mem` by extension, by content, by `--mem-format`, from
//! stdin; what `--dump-mem` and `gen --mem-out` write reads back; and the refusals.
//!
//! The program copies byte 0x010 to 0x020 and adds one to it at 0x021, so the hand-worked
//! final memory of an initial 0x29 at 0x010 is 0x29 at 0x010 and 0x020, 0x2a at 0x021.

mod common;

use common::{gpu16, gpu16_with_stdin, s, scratch, stderr, stdout};
use std::path::{Path, PathBuf};

const COPY: &str = "\
.cf mask=1
.if
    set_const 0x10, r8
    ld [r8, r0], r9
    set_const 0x20, r10
    st [r10, r0], r9
    set_const 1, r11
    add r9, r11, r9
    set_const 0x21, r10
    st [r10, r0], r9
";

/// The text of an initial memory with 0x29 at 0x010, as a testbench might write it.
const TEXT: &str = "// initial memory\n@10\n29\n";

/// The hand-worked final memory as `--json` prints it (8192 hex characters).
fn expected_memory() -> String {
    let mut m = vec![0u8; 4096];
    m[0x10] = 0x29;
    m[0x20] = 0x29;
    m[0x21] = 0x2a;
    m.iter().map(|b| format!("{b:02x}")).collect()
}

fn setup(test: &str) -> (PathBuf, PathBuf) {
    let d = scratch("memory_images", test);
    let program = d.join("copy.s");
    std::fs::write(&program, COPY).unwrap();
    (d, program)
}

fn json_memory(out: &std::process::Output) -> String {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(out), stderr(out)));
    assert_eq!(v.get("error"), None, "{v}");
    v["memory"].as_str().unwrap().to_string()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn readmemh_text_is_read_as_text_under_every_text_name_and_by_content() {
    let (d, program) = setup("text");
    for name in ["m.hex", "m.mem", "m.vmem", "m.txt", "m.MEM", "m.data", "m"] {
        let mem = write(&d, name, TEXT.as_bytes());
        let out = gpu16(&["run", s(&program), "--mem", s(&mem), "--json"]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert_eq!(json_memory(&out), expected_memory(), "{name}");
    }
    // The same image raw, under a raw name or none.
    let mut raw = vec![0u8; 0x11];
    raw[0x10] = 0x29;
    for name in ["m.bin", "m.raw", "m.img"] {
        let mem = write(&d, name, &raw);
        let out = gpu16(&["run", s(&program), "--mem", s(&mem), "--json"]);
        assert_eq!(json_memory(&out), expected_memory(), "{name}");
    }
}

#[test]
fn stdin_is_read_by_the_same_rule() {
    let (_d, program) = setup("stdin");
    let args = ["run", s(&program), "--mem", "-", "--json"];
    assert_eq!(
        json_memory(&gpu16_with_stdin(&args, TEXT.into())),
        expected_memory()
    );
    let mut raw = vec![0u8; 0x11];
    raw[0x10] = 0x29;
    assert_eq!(
        json_memory(&gpu16_with_stdin(&args, raw)),
        expected_memory()
    );
    // --mem-format hex says so outright; --mem-format raw takes the text's bytes: byte
    // 0x010 of "00 00 00 00 00 00 29" is the ASCII '0' of the sixth pair (0x30).
    let mut hex = args.to_vec();
    hex.extend(["--mem-format", "hex"]);
    assert_eq!(
        json_memory(&gpu16_with_stdin(&hex, TEXT.into())),
        expected_memory()
    );
    let mut raw_args = args.to_vec();
    raw_args.extend(["--mem-format", "raw"]);
    let m = json_memory(&gpu16_with_stdin(
        &raw_args,
        b"00 00 00 00 00 00 29".to_vec(),
    ));
    assert_eq!(&m[0x20..0x22], "30");
    assert_eq!(&m[0x40..0x44], "3031");
}

#[test]
fn the_format_flag_overrides_the_name() {
    let (d, program) = setup("flag");
    // Text in a .bin file: raw by its name, text when told.
    let mem = write(&d, "m.bin", TEXT.as_bytes());
    let out = gpu16(&[
        "run",
        s(&program),
        "--mem",
        s(&mem),
        "--mem-format",
        "hex",
        "--json",
    ]);
    assert_eq!(json_memory(&out), expected_memory());
    let out = gpu16(&["run", s(&program), "--mem", s(&mem), "--json"]);
    let m = json_memory(&out);
    assert_eq!(&m[..4], "2f2f", "the raw bytes of `//`");
    // Raw bytes in a .mem file: refused as text, read when told raw.
    let mut raw = vec![0u8; 0x11];
    raw[0x10] = 0x29;
    let mem = write(&d, "raw.mem", &raw);
    let out = gpu16(&["run", s(&program), "--mem", s(&mem)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}: line 1, column 1: control byte 0x00 in a $readmemh text; this is \
             no $readmemh text, though its name says so: a raw memory image needs \
             --mem-format raw (or a .bin or .raw name)\n",
            s(&mem)
        )
    );
    let out = gpu16(&[
        "run",
        s(&program),
        "--mem",
        s(&mem),
        "--mem-format",
        "raw",
        "--json",
    ]);
    assert_eq!(json_memory(&out), expected_memory());
    // The same flag on diff and debug.
    let out = gpu16(&["diff", s(&program), "--mem", s(&mem), "--mem-format", "raw"]);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "identical\n".into())
    );
    // A format without a memory file is a usage error.
    let out = gpu16(&["run", s(&program), "--mem-format", "raw"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--mem"), "{}", stderr(&out));
}

/// A `$readmemh` text under a text name with a byte that is not UTF-8 in a comment (issue
/// 33): refused with the line and column of the byte, and never pointed to
/// `--mem-format raw`, which would take the text's bytes as memory. Line 2 is `01 02 //
/// caf` and the byte: 12 characters before it, column 13. Asked outright (`--mem-format
/// hex`), the flag is named as before: the file may be raw after all. In `01 02 // b`
/// and a bell, the bell is column 11.
#[test]
fn a_stray_byte_in_a_text_memory_file_is_named_and_not_taken_for_raw() {
    let (d, program) = setup("stray_byte");
    let mem = write(&d, "nu.mem", b"@0\n01 02 // caf\xe9\n");
    let out = gpu16(&["run", s(&program), "--mem", s(&mem)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}: line 2, column 13: not UTF-8 text (byte 0xe9); a $readmemh text \
             holds UTF-8 text only, comments included: remove or replace the byte\n",
            s(&mem)
        )
    );
    let ctl = write(&d, "ctl.mem", b"@0\n01 02 // b\x07ell\n");
    let out = gpu16(&["run", s(&program), "--expect-mem", s(&ctl)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}: line 2, column 11: control byte 0x07 in a $readmemh text; a \
             $readmemh text holds no control byte but tab, line feed, carriage return and \
             form feed, comments included: remove or replace the byte\n",
            s(&ctl)
        )
    );
    let out = gpu16(&["run", s(&program), "--mem", s(&mem), "--mem-format", "hex"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).ends_with("(byte 0xe9); a raw memory image needs --mem-format raw\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn text_that_is_not_readmemh_under_a_neutral_name_is_refused_naming_the_flag() {
    let (d, program) = setup("ambiguous");
    let mem = write(&d, "notes.dat", b"hello, memory\n");
    let out = gpu16(&["run", s(&program), "--mem", s(&mem)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}: cannot tell how to read this memory image: it is text, but not \
             $readmemh text (line 1, column 1: `hello,` is not a hex byte (1 or 2 hex \
             digits)); give --mem-format raw to take its bytes as they are, or fix the text\n",
            s(&mem)
        )
    );
    let out = gpu16(&["run", s(&program), "--mem", s(&mem), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stage"], "load");
    assert_eq!(v["file"], s(&mem));
}

#[test]
fn program_and_memory_cannot_both_read_stdin() {
    let (_d, program) = setup("two_stdins");
    let _ = program;
    for args in [
        vec!["run", "-", "--mem", "-"],
        vec!["diff", "-", "--mem", "-"],
        vec!["debug", "-", "--mem", "-"],
    ] {
        let out = gpu16_with_stdin(&args, Vec::new());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("PROGRAM - and --mem - both read stdin"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn what_dump_mem_writes_expect_mem_reads_back() {
    let (d, program) = setup("round_trip");
    let mem = write(&d, "init.mem", TEXT.as_bytes());
    for name in ["final.mem", "final.hex", "final.bin", "final.out"] {
        let dump = d.join(name);
        let out = gpu16(&[
            "run",
            s(&program),
            "--mem",
            s(&mem),
            "--dump-mem",
            s(&dump),
            "-q",
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let written = std::fs::read(&dump).unwrap();
        let is_text = name.ends_with(".mem") || name.ends_with(".hex");
        assert_eq!(written.len() != 4096, is_text, "{name}");
        if is_text {
            // Rows 0x010 and 0x020 are the only ones not all zero.
            let text = String::from_utf8(written).unwrap();
            let zeros = |n: usize| " 00".repeat(n);
            let body: Vec<&str> = text.lines().skip(1).collect();
            assert_eq!(
                body,
                [
                    "@010".to_string(),
                    format!("29{}", zeros(15)),
                    format!("29 2a{}", zeros(14))
                ],
                "{name}"
            );
        }
        let out = gpu16(&[
            "run",
            s(&program),
            "--mem",
            s(&mem),
            "--expect-mem",
            s(&dump),
            "-q",
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
    }
    // A dump whose text says otherwise is a mismatch, read as text under a neutral name.
    let wrong = write(&d, "wrong.dump", b"@20 29 2b\n@10 29\n");
    let expect_wrong = |more: &[&str]| {
        let mut args = vec![
            "run",
            s(&program),
            "--mem",
            s(&mem),
            "--expect-mem",
            s(&wrong),
        ];
        args.extend(more);
        args.push("-q");
        gpu16(&args)
    };
    let out = expect_wrong(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = stdout(&out) + &stderr(&out);
    assert!(report.contains("0x021"), "{report}");
    // --expect-mem-format raw takes the same file's bytes: then nearly everything differs.
    let out = expect_wrong(&["--expect-mem-format", "raw"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn gen_writes_its_memory_in_the_format_its_name_says() {
    let d = scratch("memory_images", "gen");
    let (prog, raw, text) = (d.join("g.bin"), d.join("g.raw"), d.join("g.mem"));
    for mem in [&raw, &text] {
        let out = gpu16(&[
            "gen",
            "--seed",
            "5",
            "--profile",
            "memory",
            "-o",
            s(&prog),
            "--mem-out",
            s(mem),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    assert!(std::fs::read_to_string(&text)
        .unwrap()
        .starts_with("// gpu16 shared memory"));
    let run = |mem: &Path| json_memory(&gpu16(&["run", s(&prog), "--mem", s(mem), "--json"]));
    assert_eq!(run(&raw), run(&text));
    // Independent of the reader: the raw file's bytes are the text's, zero-extended.
    let mut want = std::fs::read(&raw).unwrap();
    want.resize(4096, 0);
    let hex = String::from_utf8(std::fs::read(&text).unwrap()).unwrap();
    let mut got = vec![0u8; 4096];
    let mut at = 0usize;
    for tok in hex
        .lines()
        .filter(|l| !l.starts_with("//"))
        .flat_map(str::split_whitespace)
    {
        match tok.strip_prefix('@') {
            Some(a) => at = usize::from_str_radix(a, 16).unwrap(),
            None => {
                got[at] = u8::from_str_radix(tok, 16).unwrap();
                at += 1;
            }
        }
    }
    assert_eq!(got, want);
}
