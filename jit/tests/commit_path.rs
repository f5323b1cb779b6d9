//! Every way an access reaches shared memory commits exactly as `SharedMemory::perform`
//! does: compiled code's inline plain ld/st, the memory callback through `Port::access`, and
//! the run loop performing a parked access. Each program's accesses are worked out by hand,
//! replayed in (cycle, core id) order through `perform` on a fresh memory, and the run's final
//! memory and per-bank counters (accesses, lock acquisitions, hold cycles) must equal the
//! replay's on every backend.

use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Jit};
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::engine::memory::Refusal;
use gpu16_machine::engine::memory::SharedMemory;
use gpu16_machine::frame::{ControlFrame, Fence, InstrFrame};
use gpu16_machine::{run, Config, Program};

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
fn sync_accesses_in_compiled_cohort_code_commit_as_perform_does() {
    // Sixteen cores, parted by a `bnz` into odd ones and even ones three cycles behind, so
    // that they run as a cohort at two IPs: core k opens and closes a sequence on byte
    // (bank k >> 1, row k & 1), which its pair shares the bank of, adding 1. The pairs never
    // meet (an odd core's sequence closes a cycle before its even partner's `ld_sync`), so
    // below the port's bound compiled code performs every sync access itself.
    let add = |a, b, c| Instr::Alu {
        op: AluOp::Add,
        a,
        b,
        c,
    };
    let sync = |op, r| Instr::Mem { op, a: 2, hi: 1, r };
    let code = [
        Instr::SetConst { k: 0, d: 1 }, // r1 = core id
        Instr::SetConst { k: 1, d: 9 }, // r9 = 1
        Instr::Alu {
            op: AluOp::And,
            a: 1,
            b: 9,
            c: 2,
        }, // r2 = id & 1: the row
        Instr::Shift {
            left: false,
            a: 1,
            k: 1,
            c: 1,
        }, // r1 = id >> 1: the bank
        Instr::Bnz { a: 2, target: 8 }, // odd cores go on at 8
        add(9, 9, 10),
        add(9, 9, 10),
        add(9, 9, 10),
        sync(MemOp::LdSync, 4),
        add(4, 9, 4),
        sync(MemOp::StSync, 4),
    ];
    let p = program(0xFFFF, &code);
    let image: Vec<u8> = (0..0x800u32).map(|a| (a * 7 + 3) as u8).collect();
    // The replay: odd core k in cycles t and t + 2, even core k in t + 3 and t + 5 (only the
    // order within a bank and the differences between cycles show in the bytes and
    // counters).
    let mut m = SharedMemory::new(&image, false);
    for (even, t) in [(false, 10u64), (true, 13)] {
        for k in (0u8..16).filter(|k| (k & 1 == 0) == even) {
            let addr = u16::from(k >> 1) << 8 | u16::from(k & 1);
            let byte = perform(&mut m, k, t, MemOp::LdSync, addr, 0);
            perform(&mut m, k, t + 2, MemOp::StSync, addr, byte.wrapping_add(1));
        }
    }
    let s = m.stats();
    assert_eq!(
        (
            s.lock_acquisitions_per_bank[3],
            s.lock_hold_cycles_per_bank[3],
            s.accesses_per_bank[3],
        ),
        (2, 4, 4),
        "hand-worked: two sequences of two cycles on bank 3"
    );
    pinned(&p, &image, &m);
}

#[test]
fn a_compiled_cohort_hands_the_lanes_after_a_stalled_one_to_the_port() {
    // Eight cores, the even ones a cycle behind the odd ones (a `bnz` skips an `add` for
    // the odd), each adding 1 to its own byte (bank 0, row k) in an atomic sequence. In the
    // odd cores' `ld_sync` cycle compiled code opens core 1's sequence itself and hands
    // cores 3, 5 and 7, which find bank 0's sequence open, to the port, where they sleep;
    // from then on the sequences follow one another through wake-ups. Whatever their order,
    // each byte gains 1 and each sequence is held two cycles (a holder never stalls).
    let code = [
        Instr::SetConst { k: 0, d: 2 }, // r2 = core id: the row
        Instr::SetConst { k: 1, d: 9 }, // r9 = 1
        Instr::Alu {
            op: AluOp::And,
            a: 2,
            b: 9,
            c: 3,
        }, // r3 = id & 1
        Instr::Alu {
            op: AluOp::Xor,
            a: 1,
            b: 1,
            c: 1,
        }, // r1 = 0: the bank
        Instr::Bnz { a: 3, target: 6 }, // odd cores skip the next instruction
        Instr::Alu {
            op: AluOp::Add,
            a: 9,
            b: 9,
            c: 10,
        },
        Instr::Mem {
            op: MemOp::LdSync,
            a: 2,
            hi: 1,
            r: 4,
        },
        Instr::Alu {
            op: AluOp::Add,
            a: 4,
            b: 9,
            c: 4,
        },
        Instr::Mem {
            op: MemOp::StSync,
            a: 2,
            hi: 1,
            r: 4,
        },
    ];
    let p = program(0x00FF, &code);
    let image: Vec<u8> = (0..16u8)
        .map(|a| a.wrapping_mul(29).wrapping_add(200))
        .collect();
    let mut m = SharedMemory::new(&image, false);
    for k in 0..8u8 {
        let t = 20 + 3 * u64::from(k);
        let byte = perform(&mut m, k, t, MemOp::LdSync, u16::from(k), 0);
        perform(
            &mut m,
            k,
            t + 2,
            MemOp::StSync,
            u16::from(k),
            byte.wrapping_add(1),
        );
    }
    let s = m.stats();
    assert_eq!(
        (
            s.lock_acquisitions_per_bank[0],
            s.lock_hold_cycles_per_bank[0],
            s.accesses_per_bank[0],
        ),
        (8, 16, 16),
        "hand-worked: eight sequences of two cycles on bank 0"
    );
    pinned(&p, &image, &m);
    // And the order: every core's cycles, instructions and stalls as the interpreter has
    // them.
    let interp = run(&mut Interpreter::new(), &p, &image, &Config::default()).unwrap();
    let jit = run(&mut Jit::new(), &p, &image, &Config::default()).unwrap();
    assert_eq!(
        (jit.cycles, jit.registers, jit.cores),
        (interp.cycles, interp.registers, interp.cores)
    );
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

/// The first 4 IPs of the two shared-bank tests below: r2 = core id, r1 = 6 (the bank),
/// r9 = 0x20 (the row).
fn shared_bank_setup() -> [Instr; 4] {
    [
        Instr::SetConst { k: 0, d: 2 },
        Instr::SetConst { k: 6, d: 8 },
        Instr::Alu {
            op: AluOp::Or,
            a: 8,
            b: 8,
            c: 1,
        },
        Instr::SetConst { k: 0x20, d: 9 },
    ]
}

/// The last 3 IPs of the two shared-bank tests below: every core stores its id at
/// M[6:0x20], loads it back into r4 and stores r4 at M[6:id].
fn shared_bank_tail() -> [Instr; 3] {
    [st(9, 1, 2), ld(9, 1, 4), st(2, 1, 4)]
}

/// The replay of the tail's last st: each of `cores` stores `value` at M[6:id] in `cycle`.
fn store_rows(replay: &mut SharedMemory, cores: std::ops::Range<u8>, cycle: u64, value: u8) {
    for core in cores {
        perform(
            replay,
            core,
            cycle,
            MemOp::St,
            0x600 | u16::from(core),
            value,
        );
    }
}

#[test]
fn a_group_in_one_bank_commits_in_core_order() {
    // All 16 cores at one IP, all in bank 6, no lock anywhere and no bank conflicts: the
    // lockstep group's plain accesses commit as a batch. IPs 0-3 in cycles 5-8, the st of
    // every core in 9, the ld in 10, the second st in 11. Core 15 stores last, so every
    // core loads 15.
    let mut code = shared_bank_setup().to_vec();
    code.extend(shared_bank_tail());
    let mut replay = SharedMemory::new(&[], false);
    for core in 0..16u8 {
        perform(&mut replay, core, 9, MemOp::St, 0x620, core);
    }
    for core in 0..16u8 {
        assert_eq!(perform(&mut replay, core, 10, MemOp::Ld, 0x620, 0), 15);
    }
    store_rows(&mut replay, 0..16u8, 11, 15);
    assert_eq!(replay.stats().accesses_per_bank[6], 48);
    pinned(&program(0xFFFF, &code), &[], &replay);
}

#[test]
fn a_group_in_one_bank_waits_for_a_lock_on_its_byte() {
    // Core 15 leaves the others at the bnz and holds M[6:0x20], the byte they use, in
    // cycles 12-13, so the memory's gate is closed for their ld. Cores 0-14: IPs 0-6 in
    // cycles 5-11, st 12 (before core 15's ld_sync in core order, so core 15 loads 14),
    // the ld stalls in 13 and retries in 14 (each waiter is below the closer, 15), st 15.
    // Core 15: ld_sync 12, st_sync 13 (M[6:0x20] = 15), ready 14. So cores 0-14 load 15.
    let mut code = shared_bank_setup().to_vec();
    code.extend([
        Instr::SetConst { k: 15, d: 10 }, // r10 = 15
        Instr::Alu {
            op: AluOp::Sub,
            a: 2,
            b: 10,
            c: 5,
        }, // r5 = id - 15: zero on core 15 only
        Instr::Bnz { a: 5, target: 10 },
        Instr::Mem {
            op: MemOp::LdSync,
            a: 9,
            hi: 1,
            r: 3,
        }, // 7: core 15 locks M[6:0x20]
        Instr::Mem {
            op: MemOp::StSync,
            a: 9,
            hi: 1,
            r: 2,
        }, // 8: M[6:0x20] = 15
        Instr::Ready, // 9
    ]);
    code.extend(shared_bank_tail());
    let mut replay = SharedMemory::new(&[], false);
    for core in 0..15u8 {
        perform(&mut replay, core, 12, MemOp::St, 0x620, core);
    }
    assert_eq!(perform(&mut replay, 15, 12, MemOp::LdSync, 0x620, 0), 14);
    for core in 0..15u8 {
        assert!(matches!(
            replay.perform(core, 13, MemOp::Ld, 0x620, 0),
            Err(Refusal::Stall(_))
        ));
    }
    perform(&mut replay, 15, 13, MemOp::StSync, 0x620, 15);
    for core in 0..15u8 {
        assert_eq!(perform(&mut replay, core, 14, MemOp::Ld, 0x620, 0), 15);
    }
    store_rows(&mut replay, 0..15u8, 15, 15);
    let s = replay.stats();
    assert_eq!(
        (
            s.accesses_per_bank[6],
            s.lock_acquisitions_per_bank[6],
            s.lock_hold_cycles_per_bank[6]
        ),
        (47, 1, 1)
    );
    pinned(&program(0xFFFF, &code), &[], &replay);
}
