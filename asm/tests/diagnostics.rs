//! Every diagnostic the assembler gives, with its exact line and column, and the promise
//! that one run reports every problem of the file.

use gpu16_asm::{assemble, Diagnostics};

fn errors(src: &str) -> Diagnostics {
    match assemble(src, "p.s") {
        Ok(_) => panic!("expected errors for:\n{src}"),
        Err(d) => d,
    }
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
fn second_address_register() {
    let src = format!("{HEAD}  ld [r4, r5], r2\n");
    assert_eq!(
        only(&src),
        (
            3,
            11,
            "the second address register of ld must be r0..r3".into()
        )
    );
    let src = format!("{HEAD}st_sync [r4, r9], r2\n");
    assert_eq!(
        only(&src).2,
        "the second address register of st_sync must be r0..r3"
    );
}

#[test]
fn too_many_instructions() {
    let src = format!("{HEAD}{}", "nop\n".repeat(17));
    // The 17th instruction is on line 2 + 17.
    assert_eq!(
        only(&src),
        (19, 1, "frame has 17 instructions (at most 16)".into())
    );
}

#[test]
fn undefined_label() {
    let src = format!("{HEAD}nop\n    bnz loop, r1\n.if\nloop: nop\n");
    assert_eq!(
        only(&src),
        (4, 9, "label `loop` is not defined in this frame".into())
    );
}

#[test]
fn bad_fence() {
    assert_eq!(
        only(".cf mask=1 fence=acquire\n"),
        (1, 18, "fence must be no, acq or rel".into())
    );
}

#[test]
fn group_of_64_frames() {
    let src = format!(".cf mask=1\n{}", ".if\n".repeat(64));
    let (l, c, m) = only(&src);
    assert_eq!((l, c), (65, 1));
    assert!(m.contains("at most 63"), "{m}");
    // 63 are fine.
    assert!(assemble(&format!(".cf mask=1\n{}", ".if\n".repeat(63)), "p.s").is_ok());
}

#[test]
fn operand_ranges_and_shapes() {
    assert_eq!(
        only(&format!("{HEAD}rshft r1, 8, r2\n")),
        (3, 11, "the shift amount must be 0..7, not 8".into())
    );
    assert_eq!(
        only(&format!("{HEAD}set_const 256, r9\n")),
        (3, 11, "the constant must be -128..255, not 256".into())
    );
    assert_eq!(only(&format!("{HEAD}bnz 16, r1\n")).0, 3);
    assert_eq!(
        only(&format!("{HEAD}add r1, r16, r3\n")),
        (3, 9, "no register `r16` (registers are r0..r15)".into())
    );
    assert_eq!(
        only(&format!("{HEAD}add r1, r2\n")),
        (
            3,
            11,
            "expected `,` after the second source register, found the end of the line".into()
        )
    );
    assert_eq!(
        only(&format!("{HEAD}add r1, r2, r3, r4\n")),
        (3, 15, "unexpected `,` after the operands of `add`".into())
    );
    assert_eq!(
        only(&format!("{HEAD}addd r1, r2, r3\n")).2,
        "unknown instruction `addd` (did you mean `add`?)"
    );
    assert_eq!(only(&format!("{HEAD}.word 0xb892\n")).1, 7);
    assert_eq!(
        only(&format!("{HEAD}set_const 0xzz, r9\n")),
        (
            3,
            11,
            "`0xzz` is not a number (decimal, 0x hex or 0b binary, at most 2^63-1)".into()
        )
    );
    assert_eq!(
        only(&format!("{HEAD}set_const K, r9\n")),
        (3, 11, "`K` is not defined (no `.equ K`)".into())
    );
}

/// The context of `expected ...` and `unexpected ... after ...` messages is formatted only
/// when the error is made (c633029): each still names the instruction or key it is about.
#[test]
fn expected_punctuation_names_its_context() {
    assert_eq!(
        only(&format!("{HEAD}ld r4, r1], r2\n")),
        (
            3,
            4,
            "expected `[` to open the address of `ld`, found `r4`".into()
        )
    );
    assert_eq!(
        only(&format!("{HEAD}st_sync r4, r1], r2\n")),
        (
            3,
            9,
            "expected `[` to open the address of `st_sync`, found `r4`".into()
        )
    );
    assert_eq!(
        only(".cf mask 1\n"),
        (1, 10, "expected `=` after `mask`, found `1`".into())
    );
    assert_eq!(
        only(&format!("{HEAD}ready r1\n")),
        (3, 7, "unexpected `r1` after the operands of `ready`".into())
    );
}

#[test]
fn control_frame_options() {
    assert_eq!(
        only(".cf fence=acq\n"),
        (
            1,
            1,
            "`.cf` needs `mask=` (the cores that run its frames)".into()
        )
    );
    assert_eq!(
        only(".cf mask=0x10000\n"),
        (1, 10, "mask must be 0..65535, not 65536".into())
    );
    assert_eq!(
        only(".cf mask=1 r0=16:1\n"),
        (1, 15, "a core number must be 0..15, not 16".into())
    );
    assert_eq!(only(".cf mask=1 colour=red\n").1, 12);
    assert_eq!(
        only(".cf mask=1 mask=2\n"),
        (1, 12, "`mask=` is given twice".into())
    );
}

#[test]
fn structure() {
    assert_eq!(
        only("add r1, r2, r3\n.cf mask=1\n"),
        (
            1,
            1,
            "instruction outside an instruction frame (start one with `.if`)".into()
        )
    );
    assert_eq!(only(".if\n.cf mask=1\n").0, 1);
    assert_eq!(
        only(&format!("{HEAD}a: nop\na: nop\n")),
        (
            4,
            1,
            "label `a` is already defined in this frame (line 3)".into()
        )
    );
    assert_eq!(
        only(&format!("{HEAD}bnz end, r1\n{}end:\n", "nop\n".repeat(15))),
        (
            3,
            5,
            "label `end` is past the last slot of the frame (slot 16)".into()
        )
    );
    assert_eq!(only(".repeat 2\n.cf mask=1\n").0, 1);
    assert_eq!(
        only(".cf mask=1\n.end\n"),
        (2, 1, "`.end` without a `.repeat`".into())
    );
    assert_eq!(only(".cf mask=1\n.bogus\n").0, 2);
    assert_eq!(only(".cf mask=1\n.include \"nope.inc\"\n").1, 10);
    let d = errors("; nothing\n");
    assert!(d.to_string().contains("no frames"), "{d}");
}

#[test]
fn every_problem_is_reported_with_a_caret() {
    let src = ".cf mask=1 fence=maybe\n.if\n  ld [r4, r5], r2\n  bnz nowhere, r1\n  add r1, r2\n";
    let d = errors(src);
    let pos: Vec<_> = d.0.iter().map(|x| x.position().unwrap()).collect();
    assert_eq!(pos, vec![(1, 18), (3, 11), (4, 7), (5, 13)]);
    let text = d.to_string();
    assert!(
        text.contains("p.s:3:11: error: the second address register of ld must be r0..r3\n      ld [r4, r5], r2\n              ^^\n"),
        "{text}"
    );
}

#[test]
fn an_error_inside_repeat_is_reported_once() {
    assert_eq!(
        only(".cf mask=1\n.repeat 5, k\n.if\n    rshft r1, 8, r2\n.end\n"),
        (4, 15, "the shift amount must be 0..7, not 8".into())
    );
}
