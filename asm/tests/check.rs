//! Every lint of `check`, each at its exact source line and column, on binaries as
//! `frame, instruction` locations, and the programs that must stay silent.

use gpu16_asm::{assemble, check, lint, lint_set_const, warnings as as_warnings, Severity};
use gpu16_machine::Program;

/// The warnings of `src` as (line, col, message).
fn warnings(src: &str) -> Vec<(usize, usize, String)> {
    let a = assemble(src, "p.s").unwrap_or_else(|d| panic!("{d}"));
    let d = check(&a.program, Some(&a.source_map), "p.s");
    assert!(d.0.iter().all(|x| x.severity == Severity::Warning));
    d.0.iter()
        .map(|x| {
            let (l, c) = x.position().unwrap();
            (l, c, x.message.clone())
        })
        .collect()
}

fn only(src: &str) -> (usize, usize, String) {
    let w = warnings(src);
    assert_eq!(w.len(), 1, "{w:?}");
    w.into_iter().next().unwrap()
}

const HEAD: &str = ".cf mask=1\n.if\n";

#[test]
fn reserved_bits_in_instructions_and_control_frames() {
    assert_eq!(
        only(&format!("{HEAD}    .word 0x0123\n")),
        (
            3,
            11,
            "instruction word 0x0123 has ignored bits set (0x0123); it runs as `nop`".into()
        )
    );
    let (l, c, m) = only(".cf mask=1 reserved=1:0x80,9:2\n.if\n");
    assert_eq!((l, c), (1, 1));
    assert!(m.starts_with("control frame has reserved bits set"), "{m}");
}

#[test]
fn masks_of_zero_and_r0_outside_the_mask() {
    assert_eq!(
        only("; nothing here\n.cf mask=0\n.if\n"),
        (
            2,
            1,
            "mask is 0: the 1 instruction frame of this group run on no core".into()
        )
    );
    assert_eq!(
        only(".cf mask=0x0001 r0=0:1,5:2\n.if\n"),
        (
            1,
            1,
            "R0 init for cores 5 that are not in the mask has no effect".into()
        )
    );
}

#[test]
fn group_past_the_task_memory() {
    // 40 pairs of (.cf, .if): the group of the 33rd `.cf` starts at frame 64.
    let src = ".repeat 40\n  .cf mask=1\n  .if\n.end\n";
    let (l, c, m) = only(src);
    assert_eq!((l, c), (2, 3));
    assert!(
        m.starts_with("this group runs to frame 65, past the 64-frame task memory"),
        "{m}"
    );
    // A group that crosses frame 63 -> 64 is reported at its own `.cf`.
    let src = ".cf mask=1\n.repeat 62\n.if\n.end\n.cf mask=2\n.if\n.if\n";
    assert_eq!(only(src).0, 5);
    // Exactly 64 frames fit.
    assert!(warnings(".cf mask=1\n.repeat 62\n.if\n.end\n.cf mask=2\n").is_empty());
}

#[test]
fn set_const_into_low_registers() {
    assert_eq!(
        only(&format!("{HEAD}  set_const 5, r3\n")),
        (
            3,
            3,
            "set_const into r3 loads the core id, not 0x05: only r8..r15 take a constant".into()
        )
    );
    assert!(warnings(&format!("{HEAD}set_const 0, r3\nset_const 5, r8\n")).is_empty());
}

/// `lint_set_const` (what `gpu16 asm` warns about) gives only the `set_const` findings,
/// at the places and with the words `check` gives them, among other lints it leaves out.
#[test]
fn set_const_alone_as_asm_reports_it() {
    // Frame 1: a set_const into r3 at IP 1, an unreachable instruction after `ready`;
    // frame 3: one into r7 at IP 0 and a mask of 0 on its control frame (frame 2).
    let src = ".cf mask=1\n.if\nnop\nset_const 0x10, r3\nready\nadd r1, r1, r1\n\
               .cf mask=0\n.if\nset_const 1, r7\n";
    let a = assemble(src, "p.s").unwrap_or_else(|d| panic!("{d}"));
    let found: Vec<(usize, Option<usize>, String)> = lint_set_const(&a.program)
        .into_iter()
        .map(|f| (f.frame, f.slot, f.message))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                1,
                Some(1),
                "set_const into r3 loads the core id, not 0x10: only r8..r15 take a constant"
                    .to_string()
            ),
            (
                3,
                Some(0),
                "set_const into r7 loads the core id, not 0x01: only r8..r15 take a constant"
                    .to_string()
            ),
        ]
    );
    let d = as_warnings(lint_set_const(&a.program), Some(&a.source_map), "p.s");
    let at: Vec<_> = d.0.iter().map(|x| x.position().unwrap()).collect();
    assert_eq!(at, vec![(4, 1), (9, 1)]);
    assert_eq!(lint(&a.program).len(), 4, "{:?}", lint(&a.program));
    // A binary has no source map: `file: frame F, instruction S`.
    let d = as_warnings(lint_set_const(&a.program), None, "p.bin");
    assert_eq!(
        d.to_string(),
        "p.bin: frame 1, instruction 1: warning: set_const into r3 loads the core id, not 0x10: only r8..r15 take a constant\n\
         p.bin: frame 3, instruction 0: warning: set_const into r7 loads the core id, not 0x01: only r8..r15 take a constant\n"
    );
}

#[test]
fn memory_and_ready_inside_an_atomic_sequence() {
    let src = format!("{HEAD}ld_sync [r4, r1], r2\nld [r5, r1], r3\nst [r5, r1], r3\nready\n");
    let w = warnings(&src);
    assert_eq!(
        w,
        vec![
            (
                4,
                1,
                "ld inside the atomic sequence opened by ld_sync at instruction 0".into()
            ),
            (
                5,
                1,
                "st inside the atomic sequence opened by ld_sync at instruction 0".into()
            ),
            (
                6,
                1,
                "ready inside the atomic sequence opened by ld_sync at instruction 0".into()
            ),
        ]
    );
    assert_eq!(
        only(&format!(
            "{HEAD}ld_sync [r4, r1], r2\nld_sync [r5, r1], r3\nst_sync [r5, r1], r3\n"
        )),
        (
            4,
            1,
            "ld_sync inside the atomic sequence opened at instruction 0 (sequences do not nest)"
                .into()
        )
    );
    assert_eq!(
        only(&format!("{HEAD}nop\nst_sync [r4, r1], r2\n")),
        (
            4,
            1,
            "st_sync with no open atomic sequence (no ld_sync before it)".into()
        )
    );
}

#[test]
fn a_sequence_that_reaches_the_end_of_the_frame() {
    // The sequence is open when the `ready` fill at slot 1 runs.
    assert_eq!(
        only(&format!("{HEAD}ld_sync [r4, r1], r2\n")),
        (2, 1, "instruction 1 (`ready` fill): ready inside the atomic sequence opened by ld_sync at instruction 0".into())
    );
    // Sixteen instructions: the last one falls off the frame while holding.
    let src = format!(
        "{HEAD}ld_sync [r4, r1], r2\n{}",
        "add r2, r2, r2\n".repeat(15)
    );
    assert_eq!(
        only(&src),
        (18, 1, "the atomic sequence opened by ld_sync at instruction 0 can reach the end of the frame without st_sync".into())
    );
    // Only one path holds: the bnz may skip the st_sync.
    let src =
        format!("{HEAD}ld_sync [r4, r1], r2\nbnz out, r2\nst_sync [r4, r1], r2\nout: ready\n");
    assert_eq!(only(&src).0, 6);
}

#[test]
fn unreachable_instructions() {
    assert_eq!(
        only(&format!("{HEAD}ready\nadd r1, r2, r3\nsub r1, r2, r3\n")),
        (4, 1, "instructions 1..2 are unreachable".into())
    );
    assert_eq!(
        only(&format!(
            "{HEAD}bnz 2, r1\nready\nadd r1, r2, r3\nready\nxor r1, r1, r1\n"
        )),
        (7, 1, "instruction 4 is unreachable".into())
    );
}

#[test]
fn correct_programs_are_silent() {
    let src = "
.cf mask=0xffff fence=acq r0=0:1
.if
    set_const 0, r1
    set_const 3, r9
loop:
    ld_sync [r4, r1], r5
    add r5, r9, r5
    st_sync [r4, r1], r5
    sub r9, r9, r9
    bnz loop, r9
    ld [r4, r1], r5
";
    assert!(warnings(src).is_empty(), "{:?}", warnings(src));
}

#[test]
fn binaries_are_checked_by_frame_and_instruction() {
    let mut img = vec![0u8; 64];
    img[0] = 1;
    img[2] = 1;
    // slot 0: ld_sync [r4, r1], r2 = 0xb452; slot 1: ready while holding.
    img[32..34].copy_from_slice(&0xb452u16.to_le_bytes());
    img[34..36].copy_from_slice(&0xf000u16.to_le_bytes());
    let p = Program::from_image(&img).unwrap();
    // Slots 2..15 are zero words (nop) behind a ready: fill, not unreachable code.
    assert_eq!(lint(&p).len(), 1);
    let d = check(&p, None, "p.bin");
    assert_eq!(
        d.to_string(),
        "p.bin: frame 1, instruction 1: warning: ready inside the atomic sequence opened by ld_sync at instruction 0\n"
    );
}
