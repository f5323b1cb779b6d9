//! Macros (`.macro NAME p1, p2` ... `.endm`, `\p` in the body), their expansion-local
//! labels, their limits, and conditional assembly (`.when` / `.otherwise` / `.endwhen`).
//! Expected words are worked by hand from the encoding table of docs/assembly.md.

use gpu16_asm::limits::{MAX_MACRO_DEPTH, MAX_STATEMENTS};
use gpu16_asm::{assemble, Diagnostics};
use std::time::{Duration, Instant};

/// The 16 instruction words of frame `f`.
fn words(src: &str, f: usize) -> Vec<u16> {
    let a = assemble(src, "m.s").unwrap_or_else(|d| panic!("{d}"));
    a.program
        .raw(f)
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn errors(src: &str) -> Diagnostics {
    let start = Instant::now();
    let r = assemble(src, "m.s");
    assert!(start.elapsed() < Duration::from_secs(30));
    r.expect_err("expected errors")
}

const READY: u16 = 0xF000;

const INC: &str = ".macro inc reg, n
    set_const \\n, r15
    add \\reg, r15, \\reg
.endm
";

#[test]
fn parameters_substitute_by_name() {
    let src = format!("{INC}.cf mask=1\n.if\n    inc r9, 2\n    inc r10, 1 + 2\n");
    // set_const 2, r15 = c02f; add r9, r15, r9 = 19f9; set_const 3, r15 = c03f;
    // add r10, r15, r10 = 1afa
    assert_eq!(words(&src, 1)[..5], [0xC02F, 0x19F9, 0xC03F, 0x1AFA, READY]);
}

#[test]
fn names_are_case_insensitive_and_arguments_may_hold_commas_in_brackets() {
    let src = ".macro load addr, dst
    ld \\addr, \\dst
.endm
.cf mask=1
.if
    LOAD [r2, r1], r3
";
    // ld [r2, r1], r3 = b 2 1 3
    assert_eq!(words(src, 1)[0], 0xB213);
}

#[test]
fn labels_of_a_body_are_local_to_each_expansion() {
    let src = ".macro spin r
again:
    sub \\r, r8, \\r
    bnz again, \\r
.endm
.cf mask=1
.if
    set_const 1, r8
    spin r9
    spin r10
done:
    bnz done, r0
";
    // slot 0 set_const 1, r8 = c018; spin r9: again@1 = slot 1: sub r9, r8, r9 = 2989,
    // bnz 1, r9 = e910; spin r10: again@2 = slot 3: sub r10, r8, r10 = 2a8a,
    // bnz 3, r10 = ea30; done = slot 5: bnz 5, r0 = e050
    assert_eq!(
        words(src, 1)[..7],
        [0xC018, 0x2989, 0xE910, 0x2A8A, 0xEA30, 0xE050, READY]
    );
}

#[test]
fn a_body_may_jump_to_a_label_of_the_invoking_frame() {
    let src = ".macro leave_if r
    bnz out, \\r
.endm
.cf mask=1
.if
    leave_if r9
    nop
out:
    ready
";
    assert_eq!(words(src, 1)[..3], [0xE920, 0x0000, READY]);
}

#[test]
fn macros_invoke_macros_and_hold_frames() {
    let src = format!(
        "{INC}.macro task m, r
.cf mask=\\m
.if
    inc \\r, 5
.endm
    task 1, r8
    task 1 << 3, r9
"
    );
    let a = assemble(&src, "m.s").unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(a.program.len(), 4);
    assert_eq!(a.program.control(0).active, 1);
    assert_eq!(a.program.control(2).active, 8);
    assert_eq!(words(&src, 1)[..2], [0xC05F, 0x18F8]);
    assert_eq!(words(&src, 3)[..2], [0xC05F, 0x19F9]);
}

#[test]
fn a_diagnostic_in_an_expansion_names_the_macro_line_and_the_invocation() {
    let src = format!("{INC}.cf mask=1\n.if\n    inc r8, 300\n");
    let d = errors(&src);
    assert_eq!(d.0.len(), 1, "{d}");
    // `\n` stands at column 15 of line 2; the invocation's name at column 5 of line 7.
    assert_eq!(d.0[0].position(), Some((2, 15)));
    assert_eq!(d.0[0].message, "the constant must be -128..255, not 300");
    assert_eq!(
        d.0[0].notes(),
        ["in the expansion of macro `inc`, invoked at m.s:7:5"]
    );
    let text = d.to_string();
    assert!(
        text.contains("m.s:2:15: error: the constant must be -128..255, not 300\n"),
        "{text}"
    );
    assert!(
        text.contains("note: in the expansion of macro `inc`, invoked at m.s:7:5"),
        "{text}"
    );
}

#[test]
fn two_invocations_with_the_same_fault_are_two_diagnostics() {
    let src = format!("{INC}.cf mask=1\n.if\n    inc r8, 300\n    inc r9, 300\n");
    let d = errors(&src);
    assert_eq!(d.0.len(), 2, "{d}");
}

#[test]
fn nested_expansions_name_every_invocation_innermost_first() {
    let src = format!("{INC}.macro outer\n    inc r1x, 1\n.endm\n.cf mask=1\n.if\n    outer\n");
    let d = errors(&src);
    assert_eq!(d.0.len(), 1, "{d}");
    // `\reg` of `add \reg, ...` on line 3, column 9
    assert_eq!(d.0[0].position(), Some((3, 9)));
    assert_eq!(
        d.0[0].notes(),
        [
            "in the expansion of macro `inc`, invoked at m.s:6:5",
            "in the expansion of macro `outer`, invoked at m.s:10:5"
        ]
    );
}

/// The only diagnostic of `src`: (line, col, message).
fn only(src: &str) -> (usize, usize, String) {
    let d = errors(src);
    assert_eq!(d.0.len(), 1, "expected one diagnostic, got:\n{d}");
    let (l, c) = d.0[0].position().expect("has a position");
    (l, c, d.0[0].message.clone())
}

#[test]
fn structural_errors() {
    assert_eq!(
        only(".macro m\n    nop\n"),
        (1, 1, "`.macro` without a matching `.endm`".into())
    );
    assert_eq!(
        only(".cf mask=1\n.endm\n"),
        (2, 1, "`.endm` without a `.macro`".into())
    );
    assert_eq!(
        only(".macro m\n.macro n\n.endm\n.endm\n"),
        (
            2,
            1,
            "a macro cannot be defined inside a macro's body".into()
        )
    );
    assert_eq!(
        only(".macro add\n.endm\n"),
        (
            1,
            8,
            "`add` is an instruction: a macro needs another name".into()
        )
    );
    assert_eq!(
        only(".macro m a, a\n.endm\n"),
        (1, 13, "parameter `a` is given twice".into())
    );
    // a `.repeat` left open inside a body does not reach past `.endm`
    let (l, c, m) = only(".macro m\n.repeat 2\n.endm\n.end\n.cf mask=1\n");
    assert_eq!((l, c, m.as_str()), (4, 1, "`.end` without a `.repeat`"));
}

#[test]
fn wrong_argument_counts_and_empty_arguments() {
    let head = format!("{INC}.cf mask=1\n.if\n");
    assert_eq!(
        only(&format!("{head}    inc r1\n")),
        (
            7,
            5,
            "macro `inc` takes 2 arguments (reg, n), but 1 is given".into()
        )
    );
    assert_eq!(
        only(&format!("{head}    inc r1, 2, 3\n")),
        (
            7,
            5,
            "macro `inc` takes 2 arguments (reg, n), but 3 are given".into()
        )
    );
    assert_eq!(
        only(&format!("{head}    inc r1,, 3\n")),
        (7, 12, "argument 2 of macro `inc` is empty".into())
    );
}

#[test]
fn parameters_outside_a_body_or_unknown_are_errors() {
    assert_eq!(
        only(".cf mask=1\n.if\n    add \\a, r1, r2\n"),
        (
            3,
            9,
            "`\\a` is a macro parameter, but this line is not in a macro body".into()
        )
    );
    let (l, c, m) = only(".macro m a\n    add \\b, r1, r2\n.endm\n.cf mask=1\n.if\n    m r1\n");
    assert_eq!(
        (l, c, m.as_str()),
        (
            2,
            9,
            "`\\b` is not a parameter of macro `m` (its parameters: a)"
        )
    );
}

#[test]
fn endless_recursion_stops_at_the_depth_limit() {
    let d = errors(".macro m\n    m\n.endm\n.cf mask=1\n.if\n    m\n");
    assert_eq!(d.0.len(), 1, "{d}");
    assert_eq!(d.0[0].position(), Some((2, 5)));
    assert_eq!(
        d.0[0].message,
        format!("macro expansions nest deeper than {MAX_MACRO_DEPTH} levels (the limit of nested expansions): does `m` invoke itself without end?")
    );
    // Two invocations a level would be 2^64 expansions: the statement budget ends them.
    let d = errors(".macro m\n    m\n    m\n.endm\n.cf mask=1\n.if\n    m\n");
    assert!(d.0.iter().any(|d| d.message.contains("nest deeper")), "{d}");
}

#[test]
fn arguments_that_double_at_each_level_are_bounded() {
    let src = ".macro m x
    m (\\x) + (\\x)
.endm
.cf mask=1
.if
    m 1
";
    let d = errors(src);
    assert!(d.0.iter().any(|d| d.message.contains("tokens")), "{d}");
}

#[test]
fn a_huge_repeat_inside_a_macro_is_refused_at_its_count() {
    let src = format!(
        ".macro m\n.repeat {MAX_STATEMENTS}\n    nop\n.end\n.endm\n.cf mask=1\n.if\n    m\n    m\n"
    );
    let d = errors(&src);
    assert!(
        d.0.iter().any(|d| d
            .message
            .starts_with("this `.repeat` would go past the limit")),
        "{d}"
    );
}

#[test]
fn deep_nesting_of_macros_and_repeats_stays_on_the_stack() {
    // 63 macros each invoking the next inside a `.repeat 1`, and one `.repeat` around the
    // first invocation: 64 `.repeat`s and 64 expansions nested, the deepest both limits
    // allow together (in a test thread's stack, of a debug build).
    let mut src = String::new();
    for n in 0..63 {
        src.push_str(&format!(
            ".macro m{n}\n.repeat 1\n    m{}\n.end\n.endm\n",
            n + 1
        ));
    }
    src.push_str(".macro m63\n    nop\n.endm\n.cf mask=1\n.if\n");
    src.push_str(".repeat 1\n    m0\n.end\n");
    assert_eq!(words(&src, 1)[..2], [0x0000, READY]);
}

// ---- conditional assembly ----

fn when(src: &str) -> Vec<u16> {
    words(&format!(".equ four, 4\n.cf mask=1\n.if\n{src}"), 1)
}

#[test]
fn when_otherwise_endwhen() {
    // set_const 1, r8 = c018; set_const 2, r8 = c028
    let pick = |c: &str| {
        when(&format!(
            ".when {c}\n    set_const 1, r8\n.otherwise\n    set_const 2, r8\n.endwhen\n"
        ))[0]
    };
    assert_eq!(pick("four == 4"), 0xC018);
    assert_eq!(pick("four != 4"), 0xC028);
    assert_eq!(pick("0"), 0xC028);
    assert_eq!(pick("-3"), 0xC018);
    // without `.otherwise`
    assert_eq!(when(".when 0\n    nop\n.endwhen\n    ready\n")[0], READY);
    assert_eq!(when(".when 1\n    nop\n.endwhen\n")[0], 0x0000);
}

#[test]
fn when_nests_and_skips_what_it_does_not_assemble() {
    let src = ".when 1
  .when 0
    set_const 1, r8
  .otherwise
    set_const 2, r8
    .when 1
      set_const 3, r8
    .endwhen
  .endwhen
.otherwise
  this is not even an instruction
.endwhen
";
    assert_eq!(when(src)[..3], [0xC028, 0xC038, READY]);
}

#[test]
fn when_inside_repeat_with_its_counter() {
    // k = 0..3: even k gives set_const k, r8; odd k gives set_const k, r9
    let src = ".repeat 4, k\n.when k % 2 == 0\n    set_const k, r8\n.otherwise\n    set_const k, r9\n.endwhen\n.end\n";
    assert_eq!(when(src)[..5], [0xC008, 0xC019, 0xC028, 0xC039, READY]);
}

#[test]
fn when_ends_a_recursion_of_a_macro() {
    // count n: n nops, by recursion on \n - 1 (parenthesised, as the argument is tokens)
    let src = ".macro count n
.when (\\n) > 0
    nop
    count (\\n) - 1
.endwhen
.endm
    count 3
    ready
";
    assert_eq!(when(src)[..5], [0, 0, 0, READY, READY]);
}

#[test]
fn when_errors() {
    let head = ".cf mask=1\n.if\n";
    assert_eq!(
        only(&format!("{head}.when 1\n    nop\n")),
        (3, 1, "`.when` without a matching `.endwhen`".into())
    );
    assert_eq!(
        only(&format!("{head}.endwhen\n")),
        (3, 1, "`.endwhen` without a `.when`".into())
    );
    assert_eq!(
        only(&format!("{head}.otherwise\n")),
        (
            3,
            1,
            "`.otherwise` without a `.when` (or a second `.otherwise` of one `.when`)".into()
        )
    );
    assert_eq!(
        only(&format!(
            "{head}.when 0\n.otherwise\n.otherwise\n.endwhen\n"
        )),
        (
            5,
            1,
            "`.otherwise` without a `.when` (or a second `.otherwise` of one `.when`)".into()
        )
    );
    assert_eq!(
        only(&format!("{head}.when 1 / 0\n    nop\n.endwhen\n")),
        (3, 9, "division by zero in a constant expression".into())
    );
    assert_eq!(
        only(&format!("{head}.when nope\n.endwhen\n")),
        (3, 7, "`nope` is not defined (no `.equ nope`)".into())
    );
    assert_eq!(
        only(&format!("{head}.when 1 2\n.endwhen\n")),
        (3, 9, "unexpected `2` after the condition".into())
    );
}
