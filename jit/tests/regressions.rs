//! Programs that once broke the JIT, kept as they were found (shrunk by `gpu16 fuzz`) and
//! with a hand-worked variant, so the bug cannot come back unnoticed.

mod common;

use common::run_on;
use gpu16_gen::image::Image;
use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Jit};
use gpu16_machine::engine::isa::{AluOp, Instr};
use gpu16_machine::{Config, ControlFrame, Fence, IssuePolicy, Program};

/// The JIT and `auto` (compiling at once) must report exactly what the interpreter does.
fn agree(p: &Program, config: &Config) -> gpu16_machine::RunReport {
    let want = run_on(&mut Interpreter::new(), p, &[], config);
    assert_eq!(run_on(&mut Jit::new(), p, &[], config), want, "jit");
    assert_eq!(
        run_on(&mut Auto::with_threshold(1), p, &[], config),
        want,
        "auto"
    );
    want.expect("the program completes")
}

/// Found by fuzzing (seed 257, shrunk to 2 frames): a frame whose IP 0 is a bnz target.
/// The br_table that enters a frame at its IP shared one BlockCall between its default and
/// entry 0; SSA construction appended arguments to it for the loop head, and the code
/// generator first miscompiled it silently, later panicked ("range start index 1 out of
/// range"). The image is byte for byte the reproducer: core 15, `ready` at IP 0 and
/// `bnz 0, r0` at IP 1, the rest `ready`.
#[test]
fn loop_head_at_ip_0_seed_257() {
    let mut image = vec![0u8; 64];
    image[0] = 0x01; // IF_Num 1, fence no
    image[3] = 0x80; // Core_Active_Vect 0x8000
    let r0 = [
        0x76, 0x3f, 0x63, 0x43, 0x53, 0x90, 0x38, 0xf6, 0x53, 0x1b, 0x18, 0x39, 0xe4, 0x91, 0x7c,
        0x28,
    ];
    image[16..32].copy_from_slice(&r0); // Init_R0 values, Init_R0_Vect 0: not applied
    for slot in 0..16 {
        image[32 + 2 * slot + 1] = 0xf0; // ready
    }
    image[32 + 3] = 0xe0; // slot 1: bnz 0, r0 (0xe000)
    let p = Program::from_image(&image).unwrap();
    for issue in [IssuePolicy::InOrder, IssuePolicy::Lookahead] {
        let config = Config {
            issue,
            max_cycles: 1253,
            ..Config::default()
        };
        let r = agree(&p, &config);
        // CF at 0, broadcast 1-4, core 15's ready at 5.
        assert_eq!(r.cycles, 6);
        assert_eq!(r.instructions, 1);
    }
}

/// The same shape doing work: a loop whose head is IP 0, run five times from R0 = 5.
/// Worked by hand: 4 instructions an iteration from cycle 5, so 20 (cycles 5..24), then the
/// `ready` at 25; r9 counts the iterations and r0 ends at 0.
#[test]
fn counted_loop_with_its_head_at_ip_0() {
    let code = [
        Instr::SetConst { k: 1, d: 14 },
        Instr::Alu {
            op: AluOp::Add,
            a: 9,
            b: 14,
            c: 9,
        },
        Instr::Alu {
            op: AluOp::Sub,
            a: 0,
            b: 14,
            c: 0,
        },
        Instr::Bnz { a: 0, target: 0 },
        Instr::Ready,
    ];
    // Core 0's R0 starts at 5.
    let img = Image::new().group(ControlFrame::new(0, Fence::No, 1, &[(0, 5)]), &[&code]);
    let r = agree(&img.program(), &Config::default());
    assert_eq!(r.cycles, 26);
    assert_eq!(r.instructions, 21);
    assert_eq!(r.registers[0][9], 5);
    assert_eq!(r.registers[0][0], 0);
    assert_eq!(r.registers[0][14], 1);
}
