//! Compiled code across checkpoints: the run loop stops every core of a looping frame at each
//! checkpoint, often in the middle of a segment where compiled code cannot be entered. The
//! interpreter must then take the core only to its next entry point, and compiled code go on
//! from there; before that fix, a long loop ran interpreted from its first checkpoint on.

mod common;

use common::{run_on, single};
use gpu16_interp::Interpreter;
use gpu16_jit::{Engine, Jit, JitOptions};
use gpu16_machine::engine::isa::{AluOp, Instr};
use gpu16_machine::Config;

/// 16 cores count r10 down from 250, and for each step r8 down from 200: about 100,000
/// cycles in loops of one and three instructions.
fn nested_loops() -> [Instr; 8] {
    let sub = |a, c| Instr::Alu {
        op: AluOp::Sub,
        a,
        b: 9,
        c,
    };
    [
        Instr::SetConst { k: 1, d: 9 },
        Instr::SetConst { k: 250, d: 10 },
        Instr::SetConst { k: 200, d: 8 },
        sub(8, 8),
        Instr::Bnz { a: 8, target: 3 },
        sub(10, 10),
        Instr::Bnz { a: 10, target: 2 },
        Instr::Ready,
    ]
}

#[test]
fn compiled_code_resumes_after_every_checkpoint() {
    let p = single(0xFFFF, &nested_loops());
    let every = 1024;
    let config = Config {
        checkpoint_cycles: every,
        ..Config::default()
    };
    let reference = run_on(&mut Interpreter::new(), &p, &[], &config);
    let report = reference.as_ref().expect("the loops end");
    for engine in [Engine::PerCore, Engine::Lockstep, Engine::Adaptive] {
        let mut jit = Jit::with_options(JitOptions {
            engine,
            ..JitOptions::default()
        })
        .unwrap();
        assert_eq!(run_on(&mut jit, &p, &[], &config), reference, "{engine:?}");
        // Per core and checkpoint, at most the rest of one segment (three instructions
        // here) is interpreted; everything else runs compiled.
        let checkpoints = report.cycles / every + 1;
        let bound = 16 * checkpoints * 3;
        assert!(
            jit.handed_over() <= bound,
            "{engine:?}: {} of {} instructions interpreted (bound {bound})",
            jit.handed_over(),
            report.instructions
        );
        assert!(
            report.instructions > 100 * bound,
            "the loops are long enough"
        );
    }
}
