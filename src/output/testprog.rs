//! Small hand-built programs for the output writers' tests, each with its timing worked out
//! by hand in a comment so the tests can state exact counts and cycles. The library's
//! writers and the binary's (`src/run_output/`) both include it, so it names no `crate::`
//! path.

use gpu16_machine::engine::isa::{Instr, MemOp};
use gpu16_machine::{Config, ControlFrame, Fence, InstrFrame, Program, RunReport};

pub(crate) fn cf(if_num: u8, fence: Fence, active: u16, init: &[(usize, u8)]) -> [u8; 32] {
    ControlFrame::new(if_num, fence, active, init).encode()
}

/// An instruction frame: `code`, then nops.
pub(crate) fn iff(code: &[Instr]) -> [u8; 32] {
    InstrFrame::padded(code, Instr::Nop).bytes()
}

pub(crate) fn program(frames: &[[u8; 32]]) -> Program {
    Program::from_frames(frames.to_vec()).expect("a well-formed test program")
}

pub(crate) fn mem(op: MemOp, a: u8, hi: u8, r: u8) -> Instr {
    Instr::Mem { op, a, hi, r }
}

pub(crate) fn set(k: u8, d: u8) -> Instr {
    Instr::SetConst { k, d }
}

/// `n` nops and a ready: a task part of n + 1 cycles.
pub(crate) fn work(n: usize) -> [u8; 32] {
    let mut code = vec![Instr::Nop; n];
    code.push(Instr::Ready);
    iff(&code)
}

/// The spec's example 1 (example 2 with `first_fence` = no): CF0 on 0x0f0f with IF0..IF3,
/// CF1 (acq) on 0xf0f0 with IF4, IF5; every IF is 3 nops and a ready (4 cycles).
///
/// In order, example 1: CF0 in cycle 0; frame 1 broadcast 1-4, runs 5-8; frame 2 waits
/// 5-8 (cores busy; the acq fence is satisfied in the same cycle and the machine names the
/// cores), broadcast 9-12, runs 13-16; frame 3: 17-20, 21-24; frame 4: 25-28, 29-32; CF1
/// waits 29-32 for the acq task of frame 4 and runs in 33; frame 6: 34-37, 38-41; frame 7
/// waits 38-41, broadcast 42-45, runs 46-49. 50 cycles.
pub(crate) fn spec_example(first_fence: Fence) -> Program {
    let mut frames = vec![cf(4, first_fence, 0x0f0f, &[])];
    frames.extend([work(3); 4]);
    frames.push(cf(2, Fence::Acq, 0xf0f0, &[]));
    frames.extend([work(3); 2]);
    program(&frames)
}

/// Cores 0 and 1 increment byte 0x105 in an atomic sequence (R0 = 1 from the CF).
///
/// CF in 0, broadcast 1-4, both start in 5: set_const (5); core 0 ld_sync in 6 opens the
/// sequence, core 1's ld_sync in 6 stalls; core 0 add (7), st_sync (8) closes it and core 1
/// (a higher id) retries in 8 and opens its own; core 0 ready in 9; core 1 add 9, st_sync 10,
/// ready 11. Core 1 stalled in cycles 6 and 7. Each sequence held 2 cycles. 12 cycles.
pub(crate) fn lock_pair() -> Program {
    program(&[
        cf(1, Fence::No, 0b11, &[(0, 1), (1, 1)]),
        iff(&[
            set(5, 8),
            mem(MemOp::LdSync, 8, 0, 9),
            Instr::Alu {
                op: gpu16_machine::engine::isa::AluOp::Add,
                a: 9,
                b: 8,
                c: 9,
            },
            mem(MemOp::StSync, 8, 0, 9),
            Instr::Ready,
        ]),
    ])
}

/// Cores 0, 1, 2 each store their id to byte `id` of bank 0 in cycle 6. With the bank-conflict
/// model: core 0 is served in 6, core 1 in 7, core 2 in 8 (it stalls in 6 and 7); the readies
/// follow in 7, 8, 9. 10 cycles.
pub(crate) fn bank_trio() -> Program {
    program(&[
        cf(1, Fence::No, 0b111, &[]),
        iff(&[set(0, 2), mem(MemOp::St, 2, 0, 2), Instr::Ready]),
    ])
}

pub(crate) fn run(p: &Program, config: &Config) -> RunReport {
    // The reference interpreter, as `gpu16::run(BackendKind::Interp, ..)` runs it.
    let mut interp = gpu16_interp::Interpreter::new();
    gpu16_machine::run(&mut interp, p, &[], config).expect("the test program runs")
}

pub(crate) fn run_default(p: &Program) -> RunReport {
    run(p, &Config::default())
}

/// One task of each fence kind on cores 0, 1, 2.
///
/// CF0 (acq, core 0) in 0; frame 1 (2 nops, ready) broadcast 1-4, runs 5-7. CF2 (no, core 1)
/// waits 5-7 for the acq task and runs in 8; frame 3 (3 nops, ready) broadcast 9-12, runs
/// 13-16. CF4 (rel, core 2) in 13; frame 5 (ready) is a rel task: waits 14-16 for frame 3,
/// broadcast 17-20, runs in 21. 22 cycles; waits: acq 3, rel 3.
pub(crate) fn fences() -> Program {
    program(&[
        cf(1, Fence::Acq, 0b001, &[]),
        work(2),
        cf(1, Fence::No, 0b010, &[]),
        work(3),
        cf(1, Fence::Rel, 0b100, &[]),
        work(0),
    ])
}
