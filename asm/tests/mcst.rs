//! The MCST dialect in the assembler, disassembler and checker: every syntax difference
//! encodes to the word worked out by hand from mcst-dialect.md section 2 (opc 15:12, a 11:8,
//! b 7:4, c 3:0), `.cf next=`/`stop` and `.halt` set the header bits of section 3.1 (13:8
//! NextCF, 14 stop), each dialect refuses the other's forms with a hint, and
//! `asm` -> `disasm` -> `asm` gives the same bytes.

use gpu16_asm::{assemble, assemble_in, check, disassemble, lint, Dialect, Severity};
use gpu16_machine::engine::isa::{Instr, MemOp};
use gpu16_machine::Program;

fn mcst(src: &str) -> Program {
    assemble_in(src, "m.s", Dialect::Mcst)
        .unwrap_or_else(|d| panic!("{d}"))
        .program
}

/// The 16 words of frame 1 of `.cf mask=1; .if; body` in the mcst dialect.
fn words(body: &str) -> Vec<u16> {
    let img = mcst(&format!(".cf mask=1\n.if\n{body}\n.halt\n")).image();
    img[32..64]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn one(line: &str) -> u16 {
    words(line)[0]
}

/// The messages of the errors `src` gets in `dialect`.
fn errors(src: &str, dialect: Dialect) -> Vec<String> {
    let d = assemble_in(src, "e.s", dialect).expect_err("must fail");
    d.0.iter()
        .filter(|x| x.severity == Severity::Error)
        .map(|x| x.message.clone())
        .collect()
}

fn one_error(src: &str, dialect: Dialect) -> String {
    let e = errors(src, dialect);
    assert_eq!(e.len(), 1, "{e:?}");
    e.into_iter().next().unwrap()
}

#[test]
fn the_peer_programs_words() {
    // mcst-dialect.md section 2's examples.
    assert_eq!(one("ld [r6, r8], r0"), 0xb680);
    assert_eq!(one("st [r6, r8], r0"), 0xd680);
    assert_eq!(one("set_const 0x04, r1"), 0xc041);
    assert_eq!(one("set_const 0x00, r8"), 0xc008);
    // A register amount: opc 6 / 7, a = source, b = amount register, c = destination.
    assert_eq!(one("rshft r1, r2, r3"), 0x6123);
    assert_eq!(one("lshft r15, r8, r0"), 0x7f80);
    // mul has the spec's bits; only its meaning (one byte written) differs.
    assert_eq!(one("mul r1, r2, r3"), 0x3123);
    // Every register is a bank register: b = 15.
    assert_eq!(one("ld [r0, r15], r15"), 0xb0ff);
    // Unchanged forms.
    assert_eq!(one("add r1, r2, r3"), 0x1123);
    assert_eq!(one("bnz 7, r4"), 0xe470);
    assert_eq!(one(".word 0xd680"), 0xd680);
}

#[test]
fn words_decode_to_the_mcst_forms() {
    let p = mcst(".cf mask=1\n.if\nmul r1, r2, r3\nrshft r1, r2, r3\nset_const 4, r1\nst [r6, r8], r0\n.halt\n");
    let i = p.instr(1).instrs;
    assert_eq!(i[0], Instr::McstMul { a: 1, b: 2, c: 3 });
    assert_eq!(
        i[1],
        Instr::McstShift {
            left: false,
            a: 1,
            b: 2,
            c: 3
        }
    );
    assert_eq!(i[2], Instr::McstSetConst { k: 4, d: 1 });
    assert_eq!(
        i[3],
        Instr::Mem {
            op: MemOp::St,
            a: 6,
            hi: 8,
            r: 0
        }
    );
    assert_eq!(p.dialect(), Dialect::Mcst);
}

#[test]
fn next_and_stop_set_header_bits_13_8_and_14() {
    // Frame 0: IF_Num 1 (byte 0 = 0x01); byte 1 = NextCF 5 | stop 0x40 = 0x45.
    let img = mcst(".cf mask=0x0003 next=5 stop\n.if\nready\n.halt\n").image();
    assert_eq!(&img[0..4], &[0x01, 0x45, 0x03, 0x00]);
    // next= without stop, a constant expression, and fence bits beside them.
    let img = mcst(".equ N = 60\n.cf mask=1 fence=acq next=N + 3\n.halt\n").image();
    assert_eq!(&img[0..2], &[0x40, 0x3f]);
    // stop alone: NextCF 0.
    let img = mcst(".cf mask=1 stop\n.halt\n").image();
    assert_eq!(img[1], 0x40);
    // reserved=1: keeps only bit 15 beside next= and stop.
    let img = mcst(".cf mask=1 next=2 stop reserved=1:0x80\n.halt\n").image();
    assert_eq!(img[1], 0xc2);
}

#[test]
fn halt_at_frame_k_has_next_cf_k() {
    // CF 0, IF 1, CF 2, IF 3, IF 4, halt at 5: byte 0 = 0 (IF_Num 0, fence no), byte 1 =
    // 0x40 | 5, mask 0, every other byte 0.
    let p = mcst(".cf mask=1\n.if\nready\n.cf mask=2\n.if\n.if\n.halt\n");
    assert_eq!(p.len(), 6);
    let halt = p.raw(5);
    assert_eq!(halt[0], 0x00);
    assert_eq!(halt[1], 0x45);
    assert!(halt[2..].iter().all(|&b| b == 0));
    let cf = p.control(5);
    assert!(cf.stop());
    assert_eq!(cf.next_cf(), 5);
    assert_eq!(cf.if_num, 0);
    // A halt at frame 0.
    assert_eq!(&mcst(".halt\n").image()[0..2], &[0x00, 0x40]);
}

#[test]
fn sync_operations_are_errors() {
    let e = one_error(".cf mask=1\n.if\nld_sync [r1, r2], r3\n", Dialect::Mcst);
    assert!(
        e.contains("the mcst dialect has no atomic sequences"),
        "{e}"
    );
    assert!(e.contains("`ld`"), "{e}");
    let e = one_error(".cf mask=1\n.if\nst_sync [r1, r2], r3\n", Dialect::Mcst);
    assert!(
        e.contains("the mcst dialect has no atomic sequences"),
        "{e}"
    );
}

#[test]
fn shift_amounts_are_registers_in_mcst_and_immediates_in_spec() {
    let e = one_error(".cf mask=1\n.if\nrshft r1, 3, r2\n", Dialect::Mcst);
    assert!(e.contains("takes its amount in a register"), "{e}");
    let e = one_error(".cf mask=1\n.if\nlshft r1, r2, r3\n", Dialect::Spec);
    assert!(e.contains("immediate amount 0..7"), "{e}");
    assert!(e.contains("--dialect mcst"), "{e}");
    // A `.reg` alias is a register too.
    let e = one_error(
        ".reg amt, r2\n.cf mask=1\n.if\nrshft r1, amt, r3\n",
        Dialect::Spec,
    );
    assert!(e.contains("immediate amount"), "{e}");
    assert_eq!(one(".reg amt, r2\nrshft r1, amt, r3"), 0x6123);
}

#[test]
fn the_spec_keeps_its_high_register_rule() {
    let e = one_error(".cf mask=1\n.if\nld [r6, r8], r0\n", Dialect::Spec);
    assert_eq!(e, "the second address register of ld must be r0..r3");
}

#[test]
fn more_than_64_frames_is_an_error_naming_the_count() {
    // 32 groups of a CF and an IF, then a halt: 65 frames.
    let src = ".repeat 32\n.cf mask=1\n.if\n.end\n.halt\n";
    let e = one_error(src, Dialect::Mcst);
    assert!(e.contains("65 frames"), "{e}");
    assert!(e.contains("64"), "{e}");
    // 64 frames are fine; the same source is a valid spec program (a halt aside).
    let src = ".repeat 31\n.cf mask=1\n.if\n.end\n.cf mask=1\n.halt\n";
    assert_eq!(mcst(src).len(), 64);
    assert!(assemble(".repeat 40\n.cf mask=1\n.if\n.end\n", "s.s").is_ok());
}

#[test]
fn mcst_fields_under_the_spec_are_errors() {
    let e = one_error(".cf mask=1 next=5\n.if\n", Dialect::Spec);
    assert!(
        e.contains("mcst dialect") && e.contains("--dialect mcst"),
        "{e}"
    );
    let e = one_error(".cf mask=1 stop\n.if\n", Dialect::Spec);
    assert!(e.contains("mcst dialect"), "{e}");
    let e = one_error(".cf mask=1\n.if\n.halt\n", Dialect::Spec);
    assert!(e.contains("`.halt`") && e.contains("mcst"), "{e}");
}

#[test]
fn other_mcst_errors() {
    let e = one_error(".cf mask=1 next=64\n.halt\n", Dialect::Mcst);
    assert!(e.contains("0..63"), "{e}");
    let e = one_error(".cf mask=1 reserved=1:0x05\n.halt\n", Dialect::Mcst);
    assert!(e.contains("only bit 15"), "{e}");
    let e = one_error(".cf mask=1\n.if\n.halt\n.if\nready\n", Dialect::Mcst);
    assert!(e.contains("no instruction frames"), "{e}");
    let e = one_error(".cf mask=1 stop stop\n.halt\n", Dialect::Mcst);
    assert!(e.contains("twice"), "{e}");
}

#[test]
fn asm_disasm_asm_round_trips() {
    let src = "\
.cf mask=0xffff fence=acq r0=0:1,15:0xff
.if
    set_const 0x04, r1
    set_const 0, r8
    mul r1, r8, r2
    rshft r2, r1, r3
    lshft r2, r1, r4
loop:
    ld [r6, r8], r0
    st [r6, r15], r0
    sub r1, r1, r1
    bnz loop, r1
    .word 0xf00f
.cf mask=1 next=3 stop
.if
.cf mask=2 next=7 reserved=1:0x80,6:1
.halt
";
    let p = mcst(src);
    let text = disassemble(&p);
    assert!(text.contains("mcst dialect"), "{text}");
    assert!(text.contains(".halt"), "{text}");
    assert!(text.contains("next=3 stop"), "{text}");
    assert!(text.contains("rshft r2, r1, r3"), "{text}");
    assert!(text.contains("st [r6, r15], r0"), "{text}");
    let again = mcst(&text);
    assert_eq!(again.image(), p.image(), "{text}");
    // The halt at frame 5 comes back as `.halt`, and the stop frame with another NextCF as
    // a `.cf`.
    assert_eq!(text.matches(".halt").count(), 1, "{text}");
}

#[test]
fn random_mcst_images_round_trip() {
    // Any 64 frames load under mcst when no frame the scheduler reads has fence 3 and every
    // group fits; take simple layouts: CF, n IFs of random words, ...
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut loaded = 0;
    for _ in 0..200 {
        let frames = 1 + (next() % 64) as usize;
        let mut img = Vec::new();
        let mut left = frames;
        while left > 0 {
            let mut cf: Vec<u8> = (0..32).map(|_| next() as u8).collect();
            let n = (next() % left as u64) as u8;
            // Now and then the last group runs past the end (`if_num=`): IF_Num n + extra.
            let extra = if n as usize + 1 == left && next() % 4 == 0 {
                (1 + (next() % 8) as u8).min(63 - n)
            } else {
                0
            };
            cf[0] = ((next() % 3) as u8) << 6 | (n + extra);
            img.extend(cf);
            for _ in 0..n {
                img.extend((0..32).map(|_| next() as u8));
            }
            left -= 1 + n as usize;
        }
        let Ok(p) = Program::from_image_in(&img, Dialect::Mcst) else {
            continue; // a stop frame can send the scheduler to a fence-3 frame
        };
        loaded += 1;
        let text = disassemble(&p);
        let again =
            assemble_in(&text, "d.s", Dialect::Mcst).unwrap_or_else(|d| panic!("{d}\n{text}"));
        assert_eq!(again.program.image(), img, "{text}");
    }
    assert!(loaded >= 50, "only {loaded} of 200 images loaded");
}

#[test]
fn if_num_past_the_end_is_for_the_last_group_only() {
    // IF_Num 3 with one `.if`: frames 2 and 3 are task memory's zero frames.
    let p = mcst(".cf mask=1 if_num=3\n.if\nready\n");
    assert_eq!(p.len(), 2);
    assert_eq!(p.raw(0)[0], 0x03);
    let text = disassemble(&p);
    assert!(text.contains("if_num=3"), "{text}");
    assert_eq!(mcst(&text).image(), p.image());
    let w: Vec<String> = lint(&p).into_iter().map(|f| f.message).collect();
    assert!(w.iter().any(|m| m.contains("zero frames")), "{w:?}");
    // Equal to the count is allowed anywhere; more, only at the end; fewer, never.
    assert_eq!(mcst(".cf mask=1 if_num=1\n.if\n.halt\n").len(), 3);
    let e = one_error(".cf mask=1 if_num=2\n.if\n.halt\n", Dialect::Mcst);
    assert!(e.contains("only the program's last group"), "{e}");
    let e = one_error(".cf mask=1 if_num=1\n.if\n.if\n.halt\n", Dialect::Mcst);
    assert!(e.contains("has 2 instruction frames"), "{e}");
    // Not an option of the spec's `.cf`.
    let e = one_error(".cf mask=1 if_num=1\n.if\n", Dialect::Spec);
    assert!(e.contains("unknown option `if_num`"), "{e}");
}

#[test]
fn check_under_mcst() {
    let lints =
        |src: &str| -> Vec<String> { lint(&mcst(src)).into_iter().map(|f| f.message).collect() };
    // A clean program: no lock rules, halt at the end, set_const into r0..r7.
    assert_eq!(
        lints(".cf mask=1\n.if\nset_const 5, r1\nld [r1, r8], r2\nready\n.halt\n"),
        Vec::<String>::new()
    );
    // set_const into r8..r15 loads the core id.
    let w = lints(".cf mask=1\n.if\nset_const 5, r8\n.halt\n");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("only r0..r7 take a constant"), "{w:?}");
    // No halt: the scheduler walks the zero frames forever.
    let w = lints(".cf mask=1\n.if\nready\n");
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("never reaches a halt"), "{w:?}");
    // next= without stop does nothing.
    let w = lints(".cf mask=1 next=2\n.if\n.halt\n");
    assert!(
        w.iter().any(|m| m.contains("has no effect without `stop`")),
        "{w:?}"
    );
    // A stop frame whose NextCF lands inside a group, and frames it skips.
    let w = lints(".cf mask=1 next=2 stop\n.cf mask=1\n.if\n.if\n.halt\n");
    assert!(
        w.iter()
            .any(|m| m.contains("reads this instruction frame as a control frame")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|m| m.contains("frame 1 is never reached")),
        "{w:?}"
    );
    // Located at the source line of the frame.
    let a = assemble_in(
        ".cf mask=1\n.if\nset_const 5, r8\n.halt\n",
        "p.s",
        Dialect::Mcst,
    )
    .unwrap();
    let d = check(&a.program, Some(&a.source_map), "p.s");
    assert_eq!(d.0[0].position(), Some((3, 1)));
}

#[test]
fn the_examples_of_docs_assembly_md() {
    // "The MCST dialect": the words in its comments.
    let w = words(
        "set_const 0x04, r1\nset_const 0, r8\nset_const 6, r6\nst [r6, r8], r0\nld [r6, r8], r0\nrshft r1, r2, r3",
    );
    assert_eq!(&w[..6], &[0xc041, 0xc008, 0xc066, 0xd680, 0xb680, 0x6123]);
    // `.cf ... next=5 stop`: header 0x4501.
    let img = mcst(".cf mask=0x0003 next=5 stop\n.if\n    ready\n.halt\n").image();
    assert_eq!(u16::from_le_bytes([img[0], img[1]]), 0x4501);
    // `.halt` at frame 2: header 0x4200, all else 0.
    let img =
        mcst(".cf mask=1\n.if\nset_const 0x2a, r1\nset_const 0, r8\nst [r1, r8], r1\n.halt\n")
            .image();
    assert_eq!(u16::from_le_bytes([img[64], img[65]]), 0x4200);
    assert!(img[66..96].iter().all(|&b| b == 0));
}

/// Issue 33: two stop frames without instruction frames whose NextCF point at each other
/// (frame syncs, not halts) on a walk that runs no task: every core is always idle, so
/// each jumps on in one cycle and the run stops as a livelock after one lap. A frame sync after a
/// group may still end the run (the scheduler waits there for the group's cores).
#[test]
fn a_loop_of_frame_syncs_that_runs_no_task_never_halts() {
    let lints =
        |src: &str| -> Vec<String> { lint(&mcst(src)).into_iter().map(|f| f.message).collect() };
    let w = lints(".cf mask=1 stop next=1\n.cf mask=1 stop next=0\n");
    assert_eq!(
        w,
        [
            "the task scheduler never reaches a halt (`.halt`: a stop control frame with no \
          instruction frames whose NextCF is its own index), and its stop frames without \
          instruction frames end a run only where the scheduler waits there for a core or \
          comes by a group's NextCF, which a walk that runs no task never does: the run stops \
          as a livelock once the scheduler comes round its loop (or at the watchdog, if a task \
          never ends)"
        ]
    );
    // A stop group of mask 0 runs no task, but its last broadcast jumps to NextCF, and a
    // frame sync reached by a group's jump ends the run (mcst-dialect.md 3.4): no warning.
    let w = lints(".cf mask=0 stop next=2\n.if\n.cf mask=1 stop next=0\n");
    assert!(
        !w.iter().any(|m| m.contains("never reaches a halt")),
        "{w:?}"
    );
    // A group of mask 0 without the stop bit runs no task and jumps nowhere.
    let w = lints(".cf mask=0\n.if\n.cf mask=1 stop next=0\n");
    assert!(
        w.iter().any(|m| m.contains("never reaches a halt")),
        "{w:?}"
    );
    // With a task on the walk, the frame sync may end the run: no warning of that.
    let w = lints(".cf mask=1\n.if\nready\n.cf mask=1 stop next=0\n");
    assert!(
        !w.iter().any(|m| m.contains("never reaches a halt")),
        "{w:?}"
    );
}
