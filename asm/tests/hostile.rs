//! Hostile input, one test per class: whatever the source, the assembler answers quickly
//! with diagnostics naming the limit it hit, and never overflows the stack, hangs or fills
//! the memory. The limits are the constants of `gpu16_asm::limits`.

use gpu16_asm::limits::{
    MAX_DIAGNOSTICS, MAX_EXPR_DEPTH, MAX_FILE_BYTES, MAX_INCLUDE_BYTES, MAX_INCLUDE_DEPTH,
    MAX_REPEAT_DEPTH, MAX_STATEMENTS,
};
use gpu16_asm::{assemble, assemble_with, Diagnostics, Severity};
use std::path::Path;
use std::time::{Duration, Instant};

/// The diagnostics of `src`, which must fail, in a time that shows nothing ran away
/// (generous: a debug build on a busy machine).
fn errors_with(src: &str, load: &dyn Fn(&Path) -> Result<String, String>) -> Diagnostics {
    let start = Instant::now();
    let result = assemble_with(src, "p.s", load);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
    match result {
        Ok(_) => panic!("expected errors"),
        Err(d) => d,
    }
}

fn no_files(path: &Path) -> Result<String, String> {
    Err(format!("no file {}", path.display()))
}

fn errors(src: &str) -> Diagnostics {
    errors_with(src, &no_files)
}

/// The only diagnostic of `src`: (line, col, message).
fn only(src: &str) -> (usize, usize, String) {
    let d = errors(src);
    assert_eq!(d.0.len(), 1, "expected one diagnostic, got:\n{d}");
    let (l, c) = d.0[0].position().expect("has a position");
    (l, c, d.0[0].message.clone())
}

const HEAD: &str = ".cf mask=1\n.if\n";

#[test]
fn deep_expressions_are_an_error_not_a_stack_overflow() {
    let depth = format!("nests deeper than {MAX_EXPR_DEPTH} levels");
    // The first token past the limit is where the error points: `.equ x, ` is 8 columns.
    let past = 8 + MAX_EXPR_DEPTH + 1;
    // 20,000 parentheses, 50,000 unary operators, 20,000 of each mixed (a line holds at
    // most MAX_LINE_TOKENS tokens).
    for (open, close, n) in [
        ("(", ")", 20_000),
        ("-", "", 50_000),
        ("~", "", 50_000),
        ("-(", ")", 20_000),
    ] {
        {
            let src = format!(".equ x, {}1{}\n", open.repeat(n), close.repeat(n));
            let (l, c, m) = only(&src);
            assert!(m.contains(&depth), "{m}");
            assert_eq!(l, 1);
            assert!(c <= past, "{open}: col {c}");
        }
    }
    // Exactly at the limit is fine, whatever mixes the levels.
    let at_limit = |open: &str| {
        let n = MAX_EXPR_DEPTH / open.len();
        let close = ")".repeat(open.matches('(').count() * n);
        format!("{HEAD}set_const {}1{close}, r9\n", open.repeat(n))
    };
    for open in ["(", "-", "~", "-(", "~-"] {
        assert!(assemble(&at_limit(open), "p.s").is_ok(), "{open}");
    }
    // One past it is an error at the token that opens the extra level.
    let src = format!(".equ x, {}1{}\n", "(".repeat(257), ")".repeat(257));
    assert_eq!(only(&src).1, past);
}

#[test]
fn constants_that_do_not_fit_64_bits_are_errors() {
    let max = i64::MAX;
    let overflow = "constant expression overflows 64 bits";
    // Each expression and the operator the error points at (its last one).
    for (expr, op) in [
        (format!("{max} + 1"), "+"),
        (format!("-{max} - 2"), " -"),
        (format!("{max} * 2"), "*"),
        (format!("(-{max} - 1) / -1"), "/"),
        (format!("-(-{max} - 1)"), "-("),
        ("1 << 63".to_string(), "<<"),
        ("3 << 62".to_string(), "<<"),
        ("-(1 << 62) << 2".to_string(), "<<"),
    ] {
        let (l, c, m) = only(&format!(".equ x, {expr}\n"));
        assert!(m.starts_with(overflow), "{expr}: {m}");
        let col = 9 + expr.rfind(op).unwrap() + usize::from(op.starts_with(' '));
        assert_eq!((l, c), (1, col), "{expr}: {m}");
    }
    assert_eq!(
        only(".equ x, 1 / (2 - 2)\n"),
        (1, 11, "division by zero in a constant expression".into())
    );
    assert_eq!(
        only(".equ x, 5 % 0\n").2,
        "division by zero in a constant expression"
    );
    assert_eq!(
        only(".equ x, 1 << 64\n").2,
        "shift by 64 is out of range (0..63)"
    );
    // What fits is still fine, to the last bit.
    let src = format!(
        ".equ a, -{max} - 1\n.equ b, a / 1 + {max} - -1 + (-1 << 63 >> 63) + a % -1\n.equ c, 1 << 62 | (-1 << 63)\n{HEAD}set_const b, r9\n"
    );
    assert!(assemble(&src, "p.s").is_ok());
}

#[test]
fn repeat_budget_counts_every_statement() {
    let statements = format!("more than {MAX_STATEMENTS} statements");
    // A count past the budget is refused before anything is expanded.
    let (_, c, m) = only(".repeat 99999999999\n.end\n");
    assert_eq!(c, 9);
    assert!(m.contains(&format!("0..{MAX_STATEMENTS}")), "{m}");
    // So is a loop whose own lines cannot fit, whatever lines they are.
    for body in [
        ".equ x, 1",
        ".reg acc, r9",
        "a:",
        "bogus",
        ".repeat 0\n.end",
    ] {
        let (l, c, m) = only(&format!(".repeat 600000\n{body}\n.end\n"));
        assert_eq!((l, c), (1, 9), "{body}");
        assert!(m.contains(&statements), "{m}");
    }
    // Nested loops of `.equ` lines run until the budget is spent; the error is at the
    // `.repeat` that would go past it.
    let src = ".repeat 1000\n.repeat 1000\n.repeat 1000, k\n.equ x, k\n.end\n.end\n.end\n";
    let (l, c, m) = only(src);
    assert_eq!((l, c), (3, 9));
    assert!(m.contains(&statements), "{m}");
    // Erroneous lines the same: each error once, then the budget's.
    let src = ".repeat 1000\n.repeat 1000\n.repeat 1000\nbogus r1\n.end\n.end\n.end\n";
    let d = errors(src);
    assert_eq!(d.0.len(), 2, "{d}");
    assert_eq!(d.0[0].position(), Some((3, 9)));
    assert!(d.0[0].message.contains(&statements), "{d}");
    assert_eq!(d.0[1].message, "unknown instruction `bogus`");
    // A file of more statements than the budget is refused as it is read.
    let (l, _, m) = only(&"nop\n".repeat(MAX_STATEMENTS + 1));
    assert_eq!(l, MAX_STATEMENTS + 1);
    assert!(m.contains(&statements), "{m}");
    // Nesting is bounded, and thousands of unclosed `.repeat`s cost linear time.
    let src = format!(
        "{}.equ x, 1\n{}",
        ".repeat 1\n".repeat(MAX_REPEAT_DEPTH + 1),
        ".end\n".repeat(MAX_REPEAT_DEPTH + 1)
    );
    let (l, _, m) = only(&src);
    assert_eq!(l, MAX_REPEAT_DEPTH + 1);
    assert!(
        m.contains(&format!("deeper than {MAX_REPEAT_DEPTH} levels")),
        "{m}"
    );
    let d = errors(&".repeat 1\n".repeat(50_000));
    assert_eq!(d.0.len(), MAX_DIAGNOSTICS + 1);
}

#[test]
fn diagnostics_are_capped_and_deduplicated() {
    // Distinct errors: the first MAX_DIAGNOSTICS, then a note that there are more.
    let d = errors(&"bogus\n".repeat(10_000));
    assert_eq!(d.0.len(), MAX_DIAGNOSTICS + 1);
    assert_eq!(d.errors(), MAX_DIAGNOSTICS);
    let note = &d.0[MAX_DIAGNOSTICS];
    assert_eq!(note.severity, Severity::Note);
    assert!(note
        .message
        .contains(&format!("first {MAX_DIAGNOSTICS} diagnostics")));
    assert_eq!(
        d.0[MAX_DIAGNOSTICS - 1].position(),
        Some((MAX_DIAGNOSTICS, 1))
    );
    // Repeated ones: each once.
    let d = errors(".repeat 5000\nbogus\nadd r1\n$\n.end\n");
    let lines: Vec<_> = d.0.iter().map(|x| x.position().unwrap().0).collect();
    assert_eq!(lines, [2, 3, 4], "{d}");
}

/// Whether every character of `text` is safe on a terminal.
fn printable(text: &str) -> bool {
    text.chars()
        .all(|c| c == '\n' || c == '\t' || !c.is_control())
}

#[test]
fn huge_lines_make_short_safe_diagnostics() {
    // A long line of NULs, another of terminal escapes, a valid statement with an error
    // far along its line, and an unterminated string of a megabyte.
    let esc = "\x1b[2J\x1b]0;pwned\x07\r".repeat(100_000);
    let far = format!("{HEAD}nop{} r1\n", " ".repeat(1 << 20));
    let string = format!(".include \"{}\n", "a".repeat(1 << 20));
    for (src, col) in [
        ("\0".repeat(16 << 20), 1),
        (esc.clone(), 1),
        (far, (1 << 20) + 5),
        (string, 10),
    ] {
        let d = errors(&src);
        let text = d.to_string();
        assert!(text.len() < 1500, "{} bytes:\n{text}", text.len());
        assert!(printable(&text), "{text:?}");
        let last = d.0.last().unwrap();
        assert_eq!(last.position().unwrap().1, col);
        assert!(last.span.as_ref().unwrap().text.chars().count() <= 102);
    }
    let d = errors(&esc);
    assert_eq!(d.0[0].message, "unexpected character `\\x1b`");
    assert!(d.to_string().starts_with(
        "p.s:1:1: error: unexpected character `\\x1b`\n    \\x1b[2J\\x1b]0;pwned\\x07\\r\\x1b"
    ));
    // The caret stands under the marked text in the excerpt.
    let line = format!("{HEAD}{}bogus r1\n", "\t".repeat(50) + &" ".repeat(500));
    let text = errors(&line).to_string();
    let mut rows = text.lines().skip(1);
    let (quoted, caret) = (rows.next().unwrap(), rows.next().unwrap());
    let at = caret.chars().position(|c| c == '^').unwrap();
    let marked: String = quoted.chars().skip(at).take(5).collect();
    assert_eq!(marked, "bogus", "{text}");
}

#[test]
fn byte_order_marks_are_ignored_at_the_start_of_a_file() {
    let bom = "\u{feff}";
    let src = format!("{bom}.cf mask=1\n.if\n.include \"x.inc\"\n");
    let load = |_: &Path| Ok(format!("{bom}nop ; included\n"));
    let a = assemble_with(&src, "p.s", &load).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(a.program.len(), 2);
    // Elsewhere it is an unexpected character, shown escaped.
    let (_, c, m) = only(&format!("{HEAD}nop {bom}\n"));
    assert_eq!((c, m.as_str()), (5, "unexpected character `\\u{feff}`"));
}

#[test]
fn includes_are_bounded_in_depth_and_bytes() {
    let src = format!("{HEAD}.include \"big.inc\"\n");
    // A loader returning a huge text is held to the limit as a file is.
    let huge = |_: &Path| Ok(";".repeat(MAX_FILE_BYTES + 1));
    let m = &errors_with(&src, &huge).0[0].message;
    assert!(
        m.contains(&format!("exceeds the limit of {MAX_FILE_BYTES} bytes")),
        "{m}"
    );
    // So is the total of all includes, an include inside `.repeat` counting every pass.
    let each = MAX_FILE_BYTES / 2;
    let passes = MAX_INCLUDE_BYTES / each + 1;
    let src = format!("{HEAD}.repeat {passes}\n.include \"half.inc\"\n.end\n");
    let half = |_: &Path| Ok(";".repeat(each));
    let d = errors_with(&src, &half);
    assert_eq!(d.0.len(), 1, "{d}");
    assert!(d.0[0]
        .message
        .contains(&format!("limit of {MAX_INCLUDE_BYTES} bytes in all")));
    // Depth: each file includes the next.
    let chain = |p: &Path| {
        let n: usize = p
            .to_str()
            .unwrap()
            .trim_end_matches(".inc")
            .parse()
            .unwrap();
        Ok(format!(".include \"{}.inc\"\n", n + 1))
    };
    let d = errors_with(&format!("{HEAD}.include \"0.inc\"\n"), &chain);
    assert!(
        d.0[0]
            .message
            .contains(&format!("deeper than {MAX_INCLUDE_DEPTH} levels")),
        "{d}"
    );
}

/// An endless file is read only to the limit, as an include and as the main file.
#[cfg(unix)]
#[test]
fn dev_zero_fails_fast() {
    let limit = format!("the file exceeds the limit of {MAX_FILE_BYTES} bytes");
    let start = Instant::now();
    let d = assemble(&format!("{HEAD}.include \"/dev/zero\"\n"), "p.s").unwrap_err();
    assert_eq!(d.0.len(), 1, "{d}");
    assert_eq!(
        d.0[0].message,
        format!("cannot include `/dev/zero`: {limit}")
    );
    let d = gpu16_asm::assemble_file(Path::new("/dev/zero")).unwrap_err();
    assert_eq!(d.0[0].message, format!("cannot read: {limit}"));
    assert!(start.elapsed() < Duration::from_secs(10));
}

/// Every limit on nesting at once (includes, `.repeat`s inside each, the deepest
/// expression at the bottom) fits a thread with a 1 MiB stack, half what tests get, even
/// in a debug build.
#[test]
fn the_deepest_nesting_fits_a_small_stack() {
    let per_file = MAX_REPEAT_DEPTH / MAX_INCLUDE_DEPTH;
    let half = MAX_EXPR_DEPTH / 2;
    let chain = move |p: &Path| {
        let n: usize = p
            .to_str()
            .unwrap()
            .trim_end_matches(".inc")
            .parse()
            .unwrap();
        let inner = if n + 1 < MAX_INCLUDE_DEPTH {
            format!(".include \"{}.inc\"\n", n + 1)
        } else {
            format!(
                "set_const {}1{}, r9\nbogus\n",
                "-(".repeat(half),
                ")".repeat(half)
            )
        };
        Ok(format!(
            "{}{inner}{}",
            ".repeat 1\n".repeat(per_file),
            ".end\n".repeat(per_file)
        ))
    };
    let run = move || assemble_with(&format!("{HEAD}.include \"0.inc\"\n"), "p.s", &chain);
    let d = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap()
        .unwrap_err();
    assert_eq!(d.0.len(), 1, "{d}");
    assert_eq!(d.0[0].message, "unknown instruction `bogus`");
}
