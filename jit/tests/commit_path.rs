//! Every way an access reaches shared memory commits exactly as `SharedMemory::perform`
//! does: compiled code's inline plain ld/st, the memory callback through `Port::access`, and
//! the run loop performing a parked access. Each program's accesses are worked out by hand,
//! replayed in (cycle, core id) order through `perform` on a fresh memory, and the run's final
//! memory and per-bank counters (accesses, lock acquisitions, hold cycles) must equal the
//! replay's on every backend.

use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Jit};
use gpu16_machine::frame::{ControlFrame, Fence, InstrFrame};
use gpu16_machine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::{run, Config, Program, SharedMemory};

fn program(mask: u16, code: &[Instr]) -> Program {
    let cf = ControlFrame::new(1, Fence::No, mask, &[]).encode();
    let f = InstrFrame::padded(code, Instr::Ready).bytes();
    Program::from_frames(vec![cf, f]).expect("a valid program")
}

fn st(a: u8, hi: u8, r: u8) -> Instr {
    Instr::Mem {
        op: MemOp::St,
        a,
        hi,
        r,
    }
}
fn ld(a: u8, hi: u8, r: u8) -> Instr {
    Instr::Mem {
        op: MemOp::Ld,
        a,
        hi,
        r,
    }
}

/// Run on every backend and compare memory and counters with the replay.
fn pinned(p: &Program, image: &[u8], replay: &SharedMemory) {
    let backends: [&mut dyn FnMut() -> gpu16_machine::RunReport; 3] = [
        &mut || run(&mut Interpreter::new(), p, image, &Config::default()).unwrap(),
        &mut || run(&mut Jit::new(), p, image, &Config::default()).unwrap(),
        &mut || run(&mut Auto::with_threshold(1), p, image, &Config::default()).unwrap(),
    ];
    for go in backends {
        let r = go();
        assert_eq!(r.memory, replay.bytes(), "{} memory", r.backend);
        assert_eq!(r.memory_stats, replay.stats(), "{} counters", r.backend);
    }
}

fn perform(m: &mut SharedMemory, core: u8, cycle: u64, op: MemOp, addr: u16, value: u8) -> u8 {
    m.perform(core, cycle, op, addr, value)
        .expect("the hand-worked access proceeds")
        .value
}

#[test]
fn inline_plain_accesses_commit_as_perform_does() {
    // One core alone in bank 3: compiled code performs every ld/st inline.
    let code = [
        Instr::SetConst { k: 3, d: 8 },
        Instr::Alu {
            op: AluOp::Or,
            a: 8,
            b: 8,
            c: 1,
        }, // r1 = 3: the bank
        Instr::SetConst { k: 10, d: 9 }, // r9 = row = 10, counting down
        Instr::SetConst { k: 1, d: 10 }, // r10 = 1
        st(9, 1, 9),                     // 4: M[3:r9] = r9
        ld(9, 1, 11),                    // 5: r11 = M[3:r9]
        Instr::Alu {
            op: AluOp::Sub,
            a: 9,
            b: 10,
            c: 9,
        },
        Instr::Bnz { a: 9, target: 4 },
    ];
    let p = program(1, &code);
    // CF in cycle 0, broadcast 1-4, instruction 0 in cycle 5; iteration i (r9 = 10 - i)
    // stores in cycle 9 + 4i and loads in 10 + 4i.
    let mut m = SharedMemory::new(&[], false);
    for i in 0..10u64 {
        let row = 10 - i as u8;
        perform(&mut m, 0, 9 + 4 * i, MemOp::St, 0x300 | u16::from(row), row);
        assert_eq!(
            perform(&mut m, 0, 10 + 4 * i, MemOp::Ld, 0x300 | u16::from(row), 0),
            row
        );
    }
    assert_eq!(m.stats().accesses_per_bank[3], 20);
    pinned(&p, &[], &m);
}

#[test]
fn parked_accesses_commit_as_perform_does() {
    // Cores 0 and 1 share bank 5, so they take turns: accesses are parked and performed
    // by the run loop in (cycle, core id) order.
    let code = [
        Instr::SetConst { k: 0, d: 2 }, // r2 = core id: the row
        Instr::SetConst { k: 5, d: 8 },
        Instr::Alu {
            op: AluOp::Or,
            a: 8,
            b: 8,
            c: 1,
        }, // r1 = 5: the bank
        st(2, 1, 2), // cycle 8: M[5:id] = id
        ld(2, 1, 3), // cycle 9
        st(3, 1, 8), // cycle 10: M[5:id] = 5
    ];
    let p = program(0b11, &code);
    let mut m = SharedMemory::new(&[], false);
    for core in 0..2u8 {
        perform(&mut m, core, 8, MemOp::St, 0x500 | u16::from(core), core);
    }
    for core in 0..2u8 {
        assert_eq!(
            perform(&mut m, core, 9, MemOp::Ld, 0x500 | u16::from(core), 0),
            core
        );
    }
    for core in 0..2u8 {
        perform(&mut m, core, 10, MemOp::St, 0x500 | u16::from(core), 5);
    }
    assert_eq!(m.stats().accesses_per_bank[5], 6);
    pinned(&p, &[], &m);
}

#[test]
fn sync_accesses_through_the_port_commit_as_perform_does() {
    // ld_sync/st_sync always go through the port (the callback from compiled code).
    let code = [
        Instr::SetConst { k: 0, d: 2 }, // r2 = core id = 0: the row
        Instr::SetConst { k: 7, d: 8 },
        Instr::Alu {
            op: AluOp::Or,
            a: 8,
            b: 8,
            c: 1,
        }, // r1 = 7: the bank
        Instr::SetConst { k: 1, d: 10 },
        Instr::Mem {
            op: MemOp::LdSync,
            a: 2,
            hi: 1,
            r: 3,
        }, // cycle 9
        Instr::Alu {
            op: AluOp::Add,
            a: 3,
            b: 10,
            c: 3,
        },
        Instr::Mem {
            op: MemOp::StSync,
            a: 2,
            hi: 1,
            r: 3,
        }, // cycle 11
    ];
    let p = program(1, &code);
    let mut image = vec![0u8; 0x701];
    image[0x700] = 41;
    let mut m = SharedMemory::new(&image, false);
    assert_eq!(perform(&mut m, 0, 9, MemOp::LdSync, 0x700, 0), 41);
    perform(&mut m, 0, 11, MemOp::StSync, 0x700, 42);
    let s = m.stats();
    assert_eq!(
        (
            s.lock_acquisitions_per_bank[7],
            s.lock_hold_cycles_per_bank[7]
        ),
        (1, 2)
    );
    pinned(&p, &image, &m);
}

#[test]
fn own_bank_rows_commit_as_perform_does() {
    // All 16 cores, core k in bank k, row 5: IP0 (r1 = core id) in 5, IP1 (r9 = 5) in 6, the
    // ld in 7, the doubling in 8, the st in 9. The JIT runs the task in lockstep and moves
    // each row of the 16 banks as one vector.
    let code = [
        Instr::SetConst { k: 0, d: 1 },
        Instr::SetConst { k: 5, d: 9 },
        ld(9, 1, 10),
        Instr::Alu {
            op: AluOp::Add,
            a: 10,
            b: 10,
            c: 10,
        },
        st(9, 1, 10),
    ];
    let mut image = vec![0u8; 4096];
    for k in 0..16usize {
        image[k << 8 | 5] = k as u8 + 1;
    }
    let mut replay = SharedMemory::new(&image, false);
    let mut loaded = [0u8; 16];
    for k in 0..16u8 {
        let addr = u16::from(k) << 8 | 5;
        loaded[usize::from(k)] = perform(&mut replay, k, 7, MemOp::Ld, addr, 0);
    }
    for k in 0..16u8 {
        let addr = u16::from(k) << 8 | 5;
        let doubled = loaded[usize::from(k)].wrapping_mul(2);
        perform(&mut replay, k, 9, MemOp::St, addr, doubled);
    }
    pinned(&program(0xFFFF, &code), &image, &replay);
}
