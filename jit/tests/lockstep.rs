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

/// A JIT that counts the groups the run loop hands it.
struct CountingGroups {
    jit: Jit,
    groups: usize,
}

/// No slot code of its own (these tests run the spec dialect).
impl gpu16_machine::engine::slot_run::SlotCompiler for CountingGroups {}

impl gpu16_machine::engine::backend::Backend for CountingGroups {
    type Code = <Jit as gpu16_machine::engine::backend::Backend>::Code;
    fn name(&self) -> &'static str {
        "jit"
    }
    fn prepare(
        &mut self,
        frame: &InstrFrame,
    ) -> Result<Self::Code, gpu16_machine::engine::backend::BackendError> {
        self.jit.prepare(frame)
    }
    fn reissue(
        &mut self,
        code: &Self::Code,
    ) -> Result<Self::Code, gpu16_machine::engine::backend::BackendError> {
        self.jit.reissue(code)
    }
    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut gpu16_machine::engine::backend::CoreState,
        port: &mut gpu16_machine::engine::backend::Port<'_>,
    ) -> gpu16_machine::engine::backend::CoreExit {
        self.jit.run_core(code, core, port)
    }
    fn takes_groups(&self) -> bool {
        self.jit.takes_groups()
    }
    fn takes_group(&self, group: gpu16_machine::engine::backend::GroupShape) -> bool {
        self.jit.takes_group(group)
    }
    fn run_group(
        &mut self,
        code: &Self::Code,
        group: u16,
        cores: &mut [gpu16_machine::engine::backend::CoreState; 16],
        port: &mut gpu16_machine::engine::backend::Port<'_>,
    ) -> [Option<gpu16_machine::engine::backend::CoreExit>; 16] {
        self.groups += 1;
        self.jit.run_group(code, group, cores, port)
    }
}

#[test]
fn a_stream_of_looping_memory_tasks_enters_lockstep_code_once_a_task() {
    use gpu16_machine::engine::isa::MemOp;
    // Three tasks of 16 cores, one after another: each loops 20 times over a load, an
    // add and a store of its own bank's next row. After issuing a task the run loop
    // defers the scheduler's next step, whose bound (the next broadcast) the task's
    // accesses pass in its first trip; the step, asked before the task runs, says the
    // next task waits for these cores, so each task runs to its end in one entry.
    let body = [
        Instr::SetConst { k: 0, d: 1 },  // r1 = core id: the bank
        Instr::SetConst { k: 20, d: 8 }, // trips
        Instr::SetConst { k: 1, d: 14 },
        Instr::Mem {
            op: MemOp::Ld,
            a: 9,
            hi: 1,
            r: 10,
        },
        Instr::Alu {
            op: AluOp::Add,
            a: 10,
            b: 14,
            c: 10,
        },
        Instr::Mem {
            op: MemOp::St,
            a: 9,
            hi: 1,
            r: 10,
        },
        Instr::Alu {
            op: AluOp::Add,
            a: 9,
            b: 14,
            c: 9,
        },
        Instr::Alu {
            op: AluOp::Sub,
            a: 8,
            b: 14,
            c: 8,
        },
        Instr::Bnz { a: 8, target: 3 },
        Instr::Ready,
    ];
    let task = InstrFrame::padded(&body, Instr::Ready).bytes();
    let cf = ControlFrame::new(3, Fence::No, 0xFFFF, &[]).encode();
    let p = Program::from_frames(vec![cf, task, task, task]).unwrap();
    let mut counting = CountingGroups {
        jit: jit(Engine::Lockstep),
        groups: 0,
    };
    let r = run(&mut counting, &p, &[], &Config::default()).unwrap();
    assert_eq!(counting.groups, 3);
    // r9 runs on from task to task: rows 0..59 of every bank were each incremented once.
    for bank in 0..16 {
        for row in 0..256 {
            let want = u8::from(row < 60);
            assert_eq!(r.memory[bank * 256 + row], want, "bank {bank} row {row}");
        }
    }
    let reference = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap();
    assert_eq!(r.cycles, reference.cycles);
    assert_eq!(r.memory, reference.memory);
    assert_eq!(r.registers, reference.registers);
}

/// One task of `code` on the cores of `mask`, R0 = `r0(k)` on core k of the mask.
fn task_on(mask: u16, r0: impl Fn(usize) -> u8, code: &[Instr]) -> Program {
    let inits: Vec<(usize, u8)> = (0..16)
        .filter(|k| mask & (1 << k) != 0)
        .map(|k| (k, r0(k)))
        .collect();
    let cf = ControlFrame::new(1, Fence::No, mask, &inits).encode();
    Program::from_frames(vec![cf, InstrFrame::padded(code, Instr::Ready).bytes()]).unwrap()
}

fn alu(op: AluOp, a: u8, b: u8, c: u8) -> Instr {
    Instr::Alu { op, a, b, c }
}

#[test]
fn every_core_of_a_group_gets_its_own_registers_back_and_the_others_none() {
    // A frame of two registers (moved one by one) and one of seven (moved by the lane
    // file's transposition), on every core and on a group of 14, where cores 0 and 15 keep the
    // zeros they start with. Worked out per core by `want` below, not by any backend.
    let few = [alu(AluOp::Add, 0, 0, 1)];
    let many = [
        alu(AluOp::Add, 0, 0, 1),
        alu(AluOp::Xor, 1, 0, 2),
        Instr::SetConst { k: 9, d: 11 }, // d >= 8: the constant
        Instr::SetConst { k: 0, d: 3 },  // d < 8: the core id
        alu(AluOp::Sub, 2, 11, 4),
        alu(AluOp::And, 4, 1, 5),
        alu(AluOp::Add, 5, 3, 5),
    ];
    let want = |core: usize, r0: u8, many: bool| -> [u8; 16] {
        let mut r = [0u8; 16];
        r[0] = r0;
        r[1] = r0.wrapping_add(r0);
        if many {
            r[2] = r[1] ^ r0;
            r[11] = 9;
            r[3] = core as u8;
            r[4] = r[2].wrapping_sub(9);
            r[5] = (r[4] & r[1]).wrapping_add(core as u8);
        }
        r
    };
    let r0 = |k: usize| (37 * k + 101) as u8;
    for mask in [0xFFFF_u16, 0x7FFE] {
        for (code, is_many) in [(&few[..], false), (&many[..], true)] {
            let p = task_on(mask, r0, code);
            for engine in [Engine::Lockstep, Engine::Adaptive] {
                let (r, _) = on(engine, &p);
                for k in 0..16 {
                    let expected = if mask & (1 << k) != 0 {
                        want(k, r0(k), is_many)
                    } else {
                        [0; 16]
                    };
                    assert_eq!(
                        r.registers[k], expected,
                        "{engine:?} mask {mask:#06x} many {is_many} core {k}"
                    );
                    let ran = if mask & (1 << k) != 0 {
                        code.len() as u64 + 1
                    } else {
                        0
                    };
                    assert_eq!(r.cores[k].instructions, ran, "{engine:?} core {k}");
                }
            }
        }
    }
}

#[test]
fn cores_of_a_full_group_that_leave_at_different_ready_keep_what_they_had() {
    // Every core counts R0 = k % 3 + 1 down, adding R0 to r5 and one to r6 in each trip,
    // with r7 = r5 ^ r6 after it: six registers, so the lane file moves them by its
    // transposition, and the cores leave the group at three different `ready`s.
    let code = [
        Instr::SetConst { k: 1, d: 14 },
        alu(AluOp::Add, 5, 0, 5), // IP 1
        alu(AluOp::Add, 6, 14, 6),
        alu(AluOp::Sub, 0, 14, 0),
        Instr::Bnz { a: 0, target: 1 },
        alu(AluOp::Xor, 5, 6, 7),
        Instr::Ready,
    ];
    let p = task_on(0xFFFF, |k| (k % 3 + 1) as u8, &code);
    for engine in [Engine::Lockstep, Engine::Adaptive] {
        let (r, _) = on(engine, &p);
        for k in 0..16 {
            let n = (k % 3 + 1) as u8;
            let sum = n * (n + 1) / 2;
            let mut want = [0u8; 16];
            (want[5], want[6], want[7], want[14]) = (sum, n, sum ^ n, 1);
            assert_eq!(r.registers[k], want, "{engine:?} core {k}");
            // set_const, 4 instructions a trip, the xor and the ready.
            assert_eq!(
                r.cores[k].instructions,
                3 + 4 * u64::from(n),
                "{engine:?} core {k}"
            );
        }
    }
}
