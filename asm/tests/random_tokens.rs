//! Random token streams as source: lines of mnemonics, registers, directives, numbers
//! (huge ones too), operators, labels, strings and garbage characters. Whatever comes, the
//! assembler answers without panicking, soon, and with diagnostics that are short and safe
//! to print.

use gpu16_asm::assemble_with;
use proptest::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Tokens that start a statement, biased toward what the assembler knows.
const HEADS: &[&str] = &[
    "nop",
    "add",
    "sub",
    "mul",
    "div",
    "cmpge",
    "rshft",
    "lshft",
    "and",
    "or",
    "xor",
    "ld",
    "ld_sync",
    "st",
    "st_sync",
    "set_const",
    "bnz",
    "ready",
    ".cf",
    ".if",
    ".word",
    ".equ",
    ".reg",
    ".repeat",
    ".end",
    ".endr",
    ".include",
    ".bogus",
    "loop:",
    "a:",
    "ADD",
    "NOP",
];

/// Tokens anywhere in a line.
const TOKENS: &[&str] = &[
    "r0",
    "r1",
    "r3",
    "r8",
    "r15",
    "r16",
    "R9",
    "k",
    "x",
    "acc",
    "loop",
    "a",
    "mask=1",
    "mask=0xffff",
    "fence=acq",
    "fence=rel",
    "fence=maybe",
    "r0=0:5",
    "r0_vect=3",
    "reserved=6:1",
    "mask",
    "=",
    "0",
    "1",
    "2",
    "7",
    "15",
    "16",
    "255",
    "-128",
    "65535",
    "9223372036854775807",
    "99999999999999999999",
    "0x",
    "0x7fffffffffffffff",
    "0b2",
    "1_000",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<<",
    ">>",
    "&",
    "|",
    "^",
    "~",
    "(",
    ")",
    "((",
    "))",
    ",",
    "[",
    "]",
    ":",
    "\"x.inc\"",
    "\"self.inc\"",
    "\"nope\"",
    "\"",
    ";",
    "//",
    "\0",
    "\x1b[2J",
    "\r",
    "\t",
    "é",
    "\u{feff}",
    "\u{202e}",
    "$",
    "@",
    "#",
    "\\",
    "..",
];

/// Whole valid lines, so that streams reach frames, loops and includes that work.
const LINES: &[&str] = &[
    ".cf mask=1",
    ".cf mask=0xffff fence=acq r0=1:2",
    ".if",
    "nop",
    "add r1, r2, r3",
    "set_const k, r9",
    "bnz loop, r1",
    "loop:",
    ".repeat 3, k",
    ".repeat 2",
    ".end",
    ".equ x, 1 << k",
    ".reg acc, r9",
    ".include \"x.inc\"",
    ".word 0x1234",
];

/// One line: a head (or none) and up to eight more tokens, joined by single spaces or not.
fn line() -> impl Strategy<Value = String> {
    let head = prop_oneof![
        3 => prop::sample::select(HEADS),
        1 => prop::sample::select(TOKENS),
        3 => prop::sample::select(LINES),
    ];
    let rest = prop_oneof![
        1 => Just(Vec::new()),
        2 => prop::collection::vec((prop::sample::select(TOKENS), any::<bool>()), 0..8),
    ];
    (head, rest).prop_map(|(head, rest)| {
        let mut s = head.to_string();
        for (tok, spaced) in rest {
            if spaced {
                s.push(' ');
            }
            s.push_str(tok);
        }
        s
    })
}

/// Well-formed programs: frames of statements in balanced `.repeat` blocks, so that the
/// streams that assemble are exercised too (random lines almost never do).
fn program() -> impl Strategy<Value = Vec<String>> {
    let leaf = prop::sample::select(
        &[
            "nop",
            "add r1, r2, r3",
            "set_const 3, r9",
            ".equ x, 1 << 3",
            ".reg acc, r9",
            "add acc, r1, acc",
            ".if",
            ".cf mask=1",
            ".word 0x1234",
            ".include \"x.inc\"",
        ][..],
    )
    .prop_map(|l| vec![l.to_string()]);
    let body = leaf.prop_recursive(3, 24, 4, |inner| {
        (1..4u8, prop::collection::vec(inner, 1..4)).prop_map(|(n, parts)| {
            let mut lines = vec![format!(".repeat {n}, k")];
            lines.extend(parts.into_iter().flatten());
            lines.push(".end".into());
            lines
        })
    });
    prop::collection::vec(body, 0..6).prop_map(|parts| {
        let mut lines = vec![".cf mask=1".to_string(), ".if".to_string()];
        lines.extend(parts.into_iter().flatten());
        lines
    })
}

/// Included files: a small valid one, one that includes itself, and one of garbage.
fn load(path: &Path) -> Result<String, String> {
    match path.to_str() {
        Some("x.inc") => Ok(".cf mask=1\n.if\nnop\n".into()),
        Some("self.inc") => Ok(".repeat 2\n.include \"self.inc\"\n.end\n".into()),
        Some("nope") => Ok("\0\x1b(((\n.end\n".into()),
        _ => Err("no such file".into()),
    }
}

proptest! {
    // Failures print their smallest input; nothing is written next to the sources.
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_token_stream_is_answered_soon_and_safely(
        lines in prop_oneof![
            prop::collection::vec(line(), 0..40),
            prop::collection::vec(prop::sample::select(LINES).prop_map(String::from), 0..40),
            program(),
        ],
        bom in any::<bool>(),
    ) {
        let mut src = if bom { "\u{feff}".to_string() } else { String::new() };
        src.push_str(&lines.join("\n"));
        let start = Instant::now();
        let result = assemble_with(&src, "p.s", &load);
        prop_assert!(start.elapsed() < Duration::from_secs(10), "slow: {src:?}");
        if let Err(d) = result {
            prop_assert!(!d.is_empty());
            for x in &d.0 {
                let text = x.to_string();
                prop_assert!(text.len() < 1500, "long: {text}");
                prop_assert!(
                    text.chars().all(|c| c == '\n' || c == '\t' || !c.is_control()),
                    "unsafe: {text:?}"
                );
            }
        }
    }
}
