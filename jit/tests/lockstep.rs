//! The lockstep engine on hand-worked programs: a group whose cores leave one by one at a
//! `ready`, a group that splits for good at a `bnz`, and the engine choice of `adaptive`.

use gpu16_interp::Interpreter;
use gpu16_jit::{Engine, Jit, JitOptions};
use gpu16_machine::engine::isa::{AluOp, Instr};
use gpu16_machine::frame::{ControlFrame, Fence, InstrFrame};
use gpu16_machine::{run, Config, Program, RunReport};

fn jit(engine: Engine) -> Jit {
    Jit::with_options(JitOptions {
        engine,
        ..JitOptions::default()
    })
    .unwrap()
}

/// One task on cores 0..3 with R0 = k + 1 on core k.
fn program(code: &[Instr]) -> Program {
    let r0: Vec<(usize, u8)> = (0..4).map(|k| (k, k as u8 + 1)).collect();
    let cf = ControlFrame::new(1, Fence::No, 0xF, &r0).encode();
    Program::from_frames(vec![cf, InstrFrame::padded(code, Instr::Ready).bytes()]).unwrap()
}

fn on(engine: Engine, p: &Program) -> (RunReport, Jit) {
    let mut j = jit(engine);
    let r = run(&mut j, p, &[], &Config::default()).unwrap();
    (r, j)
}

#[test]
fn cores_leave_the_group_at_ready_one_by_one() {
    // Core k counts R0 = k + 1 down: k + 1 iterations of sub, bnz; then ready.
    let p = program(&[
        Instr::SetConst { k: 1, d: 14 },
        Instr::Alu {
            op: AluOp::Sub,
            a: 0,
            b: 14,
            c: 0,
        }, // IP 1
        Instr::Bnz { a: 0, target: 1 },
        Instr::Ready,
    ]);
    // CF in 0, broadcast 1-4, IP 0 in 5; iteration i: sub in 6 + 2i, bnz in 7 + 2i; core k's
    // last bnz in 7 + 2k, its ready in 8 + 2k: 2k + 4 instructions, busy 2k + 4 cycles.
    let (r, j) = on(Engine::Lockstep, &p);
    for k in 0..4u64 {
        assert_eq!(r.cores[k as usize].instructions, 2 * k + 4, "core {k}");
        assert_eq!(r.cores[k as usize].busy, 2 * k + 4, "core {k}");
        assert_eq!(r.registers[k as usize][0], 0);
    }
    assert_eq!((r.tasks[0].start, r.tasks[0].end, r.cycles), (5, 14, 15));
    assert_eq!(j.stats().lanes_compiled, 1);
    assert_eq!(j.stats().compiled, 0, "the per-core form was never needed");
    let want = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap();
    assert_eq!(r.cores, want.cores);
    assert_eq!(r.registers, want.registers);
}

#[test]
fn a_group_split_at_a_bnz_runs_on_as_two() {
    // Odd R0 (cores 0 and 2) jump from the bnz to IP 4; even R0 (cores 1 and 3) go through
    // IP 3 (r9 = 5) first. IP 0 in cycle 5, the and in 6, the bnz in 7; the odd cores run
    // IP 4 in 8 and ready in 9 (5 instructions), the even ones IP 3 in 8, IP 4 in 9 and
    // ready in 10 (6 instructions): the task ends in 10.
    let p = program(&[
        Instr::SetConst { k: 1, d: 8 },
        Instr::Alu {
            op: AluOp::And,
            a: 0,
            b: 8,
            c: 10,
        }, // r10 = R0 & 1
        Instr::Bnz { a: 10, target: 4 },
        Instr::SetConst { k: 5, d: 9 },
        Instr::SetConst { k: 7, d: 11 }, // IP 4: the odd cores skip IP 3
        Instr::Ready,
    ]);
    for engine in [Engine::Lockstep, Engine::Adaptive, Engine::PerCore] {
        let (r, _) = on(engine, &p);
        for k in 0..4usize {
            let odd_r0 = (k + 1) % 2 == 1;
            assert_eq!(
                r.registers[k][9],
                if odd_r0 { 0 } else { 5 },
                "{engine:?} core {k}"
            );
            assert_eq!(r.registers[k][11], 7, "{engine:?} core {k}");
            let n = if odd_r0 { 5 } else { 6 };
            assert_eq!(r.cores[k].instructions, n, "{engine:?} core {k}");
        }
        assert_eq!(r.tasks[0].end, 10, "{engine:?}");
    }
}

#[test]
fn adaptive_runs_register_code_and_own_bank_rows_in_lockstep_other_banks_per_core() {
    let compute = program(&[
        Instr::Alu {
            op: AluOp::Add,
            a: 0,
            b: 0,
            c: 9,
        },
        Instr::Ready,
    ]);
    let (_, j) = on(Engine::Adaptive, &compute);
    assert_eq!((j.stats().compiled, j.stats().lanes_compiled), (0, 1));
    // Core k stores R0 = k + 1 to bank `hi`'s register: its own bank k (the core id, r1)
    // runs in lockstep, as one row; bank k + 1 (R0) keeps each core to a bank of its own
    // that is not its id: per-core, accesses inline.
    for (hi, lockstep) in [(1, true), (0, false)] {
        let own = program(&[
            Instr::SetConst { k: 0, d: 1 },
            Instr::Mem {
                op: gpu16_machine::engine::isa::MemOp::St,
                a: 9,
                hi,
                r: 0,
            },
            Instr::Ready,
        ]);
        let (r, j) = on(Engine::Adaptive, &own);
        let forms = if lockstep { (0, 1) } else { (1, 0) };
        assert_eq!(
            (j.stats().compiled, j.stats().lanes_compiled),
            forms,
            "hi r{hi}"
        );
        assert_eq!(j.row_accesses(), if lockstep { 4 } else { 0 }, "hi r{hi}");
        for k in 0..4 {
            let bank = if lockstep { k } else { k + 1 };
            assert_eq!(r.memory[bank << 8], k as u8 + 1, "hi r{hi}");
        }
    }
}
