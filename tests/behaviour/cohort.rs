//! Cores of one task at several instructions in one cycle (a cohort: the compiled engines
//! run them as lanes with an IP each): their accesses to one bank reach memory in ascending
//! core id whatever their IPs, lanes that part and meet again run on as one, a fault among
//! them is the lowest id's, and a cycle limit or a checkpoint that falls while they are
//! apart changes nothing. The same holds for cores in lockstep (one IP), whose plain
//! accesses, performed by compiled code itself below the port's bound, reach memory lane by
//! lane in ascending core id and wait for another task's turns. Every value below is worked
//! out by hand from the program, or by a plain Rust function written for the test.

use crate::builder::*;
use crate::faults::fault;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::{Config, CoreWait, FaultRule, RunError, RunReport, UnfinishedCore};

/// The cores part three ways by bits 0 and 1 of their id and store their id to byte 0x000,
/// then load it (or, with `last` = `st_sync`, fault):
/// ```text
///  0 set_const 0, r1      ; id          6 bnz 9, r3          ; odd cores -> 9
///  1 set_const 1, r14                   7 bnz 9, r4          ; id 2 mod 4 -> 9
///  2 and r1, r14, r3      ; bit 0       8 nop                ; id 0 mod 4
///  3 set_const 2, r13                   9 st [r2, r2], r1    ; M[0] = id
///  4 and r1, r13, r4      ; bit 1      10 `last`
///  5 xor r2, r2, r2       ; 0          11 ready
/// ```
/// From the start at 5, IP i runs at 5 + i up to the split at 11. Odd cores: st 12, IP 10
/// at 13, ready 14. Cores 2 mod 4: IP 7 at 12, st 13, IP 10 at 14, ready 15. Cores 0 mod 4:
/// nop 13, st 14, IP 10 at 15, ready 16. In cycle 13 the three sets are at IPs 10, 9 and 8.
fn three_ways(last: Instr) -> Image {
    let body = [
        set_const(0, 1),
        set_const(1, 14),
        and(1, 14, 3),
        set_const(2, 13),
        and(1, 13, 4),
        xor(2, 2, 2),
        bnz(3, 9),
        bnz(4, 9),
        nop(),
        st(2, 2, 1),
        last,
        ready(),
    ];
    Image::new().group(cf(0xFFFF), &[&body])
}

/// Checkpoints every `every` cycles, so that the cores stop and go on from a checkpoint
/// while they are apart.
fn checkpoints(every: u64) -> Config {
    Config {
        checkpoint_cycles: every,
        ..in_order()
    }
}

pub fn lanes_at_three_ips_share_a_bank_in_one_cycle<B: Backend>(mk: Mk<B>) {
    // 12: the odd cores store 1, 3, .., 15: M = 15.
    // 13, in core order: 1 loads 15, 2 stores 2, 3 and 5 load 2, 6 stores 6, 7 and 9 load
    //     6, 10 stores 10, 11 and 13 load 10, 14 stores 14, 15 loads 14 (0 mod 4: nop).
    // 14: 0 stores 0, 2 loads 0, 4 stores 4, 6 loads 4, .., 12 stores 12, 14 loads 12.
    // 15: cores 0 mod 4 load 12.
    const LOADS: [u8; 16] = [12, 15, 0, 2, 12, 2, 4, 6, 12, 6, 8, 10, 12, 10, 12, 14];
    for config in [in_order(), lookahead(), checkpoints(1), checkpoints(3)] {
        let r = run_ok(mk, &three_ways(ld(2, 2, 10)), &[], &config);
        assert_eq!(r.memory[0], 12);
        for (k, &want) in LOADS.iter().enumerate() {
            assert_eq!(r.registers[k][10], want, "core {k}");
            // IPs 0..6 and 9..11, plus 7 for the even cores, plus 8 for 0 mod 4.
            let want = 10 + u64::from(k % 2 == 0) + u64::from(k % 4 == 0);
            assert_eq!(r.cores[k].instructions, want, "core {k}");
        }
        assert_eq!(r.cycles, 17);
        assert_eq!(timeline(&r), vec![(1, 1, 5, 16)]);
        assert_eq!(r.stalls, 0);
    }
}

pub fn a_fault_among_lanes_at_three_ips<B: Backend>(mk: Mk<B>) {
    // IP 10 is a st_sync with no sequence: the odd cores reach it at 13, core 1 first. In
    // cycle 13 core 0 (a nop) acts before core 1, but the state is the machine's when 13
    // began: after the odd cores' stores of 12 (M = 15), with 8 instructions run by every
    // core (IPs 0..6 and 9 for the odd ones, 0..7 for the even ones).
    for config in [in_order(), checkpoints(2)] {
        let failure = run(mk, &three_ways(st_sync(2, 2, 1)), &[], &config).unwrap_err();
        assert_eq!(
            fault(failure.error.clone()),
            (FaultRule::StSyncWithoutSequence, 1, 1, 10, 13, Some(0x000))
        );
        assert_eq!(failure.state.cycles, 13);
        assert_eq!(failure.state.memory[0], 15);
        for k in 0..16 {
            assert_eq!(failure.state.cores[k].instructions, 8, "core {k}");
        }
    }
}

pub fn a_cycle_limit_among_lanes_at_three_ips<B: Backend>(mk: Mk<B>) {
    // With a limit of 14 nothing runs in 14: the odd cores wait at their ready (IP 11),
    // cores 2 mod 4 at their load (10), cores 0 mod 4 at their store (9).
    let e = run_err(
        mk,
        &three_ways(ld(2, 2, 10)),
        &[],
        &Config {
            max_cycles: 14,
            ..in_order()
        },
    );
    let RunError::Watchdog {
        limit,
        cores,
        next_frame,
    } = e
    else {
        panic!("expected the watchdog, got {e}");
    };
    assert_eq!((limit, next_frame), (14, None));
    let want: Vec<_> = (0..16u8)
        .map(|k| UnfinishedCore {
            core: k,
            frame: 1,
            ip: match k % 4 {
                0 => 9,
                2 => 10,
                _ => 11,
            },
            wait: CoreWait::Running,
        })
        .collect();
    assert_eq!(cores, want);
}

pub fn lanes_that_part_and_meet_run_on_as_one<B: Backend>(mk: Mk<B>) {
    // The odd cores take a two-instruction path (nop; r5 = id + 1), the even ones another
    // (r5 = 2 id; bnz), and both reach IP 10 at 13. Three rounds from there, all together:
    // ld at 13 + 5r, st at 15 + 5r; core 15 stores last: M = 16, 32, 48 (r5 of core 15 is
    // 16). The last round loads 32. Ready at 28.
    let body = [
        set_const(0, 1),
        set_const(1, 14),
        and(1, 14, 3),
        xor(2, 2, 2),
        set_const(3, 8),
        bnz(3, 8),
        add(1, 1, 5),
        bnz(14, 10),
        nop(),
        add(1, 14, 5),
        ld(2, 2, 10),
        add(10, 5, 10),
        st(2, 2, 10),
        sub(8, 14, 8),
        bnz(8, 10),
        ready(),
    ];
    let img = Image::new().group(cf(0xFFFF), &[&body]);
    for config in [in_order(), lookahead(), checkpoints(1), checkpoints(4)] {
        let r = run_ok(mk, &img, &[], &config);
        assert_eq!(r.memory[0], 48);
        for k in 0..16u8 {
            let r5 = if k % 2 == 1 { k + 1 } else { 2 * k };
            assert_eq!(r.registers[usize::from(k)][5], r5, "core {k}");
            assert_eq!(r.registers[usize::from(k)][10], 32 + r5, "core {k}");
            // IPs 0..5, two of the paths, three rounds of five, ready.
            assert_eq!(r.cores[usize::from(k)].instructions, 24, "core {k}");
        }
        assert_eq!(r.cycles, 29);
        assert_eq!(r.stalls, 0);
    }
}

/// Task 1 (cores 0-7) loads byte 0x000 five times in two halves a cycle apart, summing
/// what it reads in r11, while task 2 (cores 8-15, a disjoint task issued at 6) stores
/// to it:
/// ```text
///  task 1, from 5                        task 2, from 10
///  0 set_const 0, r1   ; id              0 set_const 0, r1   ; id
///  1 set_const 1, r14                    1 xor r2, r2, r2
///  2 and r1, r14, r3   ; odd             2 st [r2, r2], r1   ; 12: M = 15
///  3 xor r2, r2, r2                      3 add r1, r1, r1
///  4 set_const 5, r8                     4 st [r2, r2], r1   ; 14: M = 30
///  5 bnz 7, r3         ; 10              5 add r1, r1, r1
///  6 nop               ; even: 11        6 st [r2, r2], r1   ; 16: M = 60
///  7 ld [r2, r2], r10  ; odd: 11, 15, 19, 23, 27; even: 12, 16, 20, 24, 28
///  8 add r11, r10, r11
///  9 sub r8, r14, r8
/// 10 bnz 7, r8
/// 11 ready
/// ```
/// In a cycle, cores 0-7 act before cores 8-15. Odd cores read 0 (11), 30 (15), then 60;
/// even cores 0 (12: before the stores of 12), 30 (16: before those of 16), then 60. Both
/// sum to 210. Task 1's halves are a cohort; its accesses must wait for task 2's turns.
pub fn lanes_apart_see_another_tasks_stores_in_their_cycle<B: Backend>(mk: Mk<B>) {
    let loads = [
        set_const(0, 1),
        set_const(1, 14),
        and(1, 14, 3),
        xor(2, 2, 2),
        set_const(5, 8),
        bnz(3, 7),
        nop(),
        ld(2, 2, 10),
        add(11, 10, 11),
        sub(8, 14, 8),
        bnz(8, 7),
        ready(),
    ];
    for r in beside_another_tasks_stores(mk, &loads) {
        for k in 0..8 {
            assert_eq!(r.registers[k][11], 210, "core {k}");
        }
        // Odd cores: bnz falls through at 30, ready at 31; even cores a cycle later.
        assert_eq!(timeline(&r), vec![(1, 1, 5, 32), (3, 6, 10, 17)]);
    }
}

/// Cores 0-7 run in lockstep (one IP) and load byte 0x000 five times, every four cycles:
/// ```text
/// 0 set_const 1, r14         4 add r11, r10, r11
/// 1 xor r2, r2, r2           5 sub r8, r14, r8
/// 2 set_const 5, r8          6 bnz 3, r8
/// 3 ld [r2, r2], r10         7 ready
/// ```
/// From the start at 5 the loads fall in cycles 8, 12, 16, 20 and 24. Cores 8-15 (a task
/// from cycle 10) store 15, 30, 60 there in cycles 12, 14 and 16, as in
/// `lanes_apart_see_another_tasks_stores_in_their_cycle`. In a cycle cores 0-7 act first, so
/// the loads read 0, 0, 30, 60 and 60: 150. The group's accesses must stop at the other
/// task's turns, whoever performs them.
pub fn lockstep_lanes_see_another_tasks_stores_in_their_cycle<B: Backend>(mk: Mk<B>) {
    let loads = [
        set_const(1, 14),
        xor(2, 2, 2),
        set_const(5, 8),
        ld(2, 2, 10),
        add(11, 10, 11),
        sub(8, 14, 8),
        bnz(8, 3),
        ready(),
    ];
    for r in beside_another_tasks_stores(mk, &loads) {
        for k in 0..8 {
            assert_eq!(r.registers[k][11], 150, "core {k}");
        }
        // Five loads by 8 cores, three stores by 8.
        assert_eq!(r.memory_stats.accesses_per_bank[0], 5 * 8 + 3 * 8);
        // The last bnz at 27, ready at 28.
        assert_eq!(timeline(&r), vec![(1, 1, 5, 28), (3, 6, 10, 17)]);
    }
}

/// Run task 1 on cores 0-7 (`loads`, from cycle 5) beside task 2 on cores 8-15, which
/// stores 15, 30 and 60 to byte 0x000 in cycles 12, 14 and 16 (see
/// `lanes_apart_see_another_tasks_stores_in_their_cycle`), in order, with lookahead and
/// with checkpoints every 4 cycles; check task 2's part of each report.
fn beside_another_tasks_stores<B: Backend>(mk: Mk<B>, loads: &[Instr]) -> Vec<RunReport> {
    let stores = [
        set_const(0, 1),
        xor(2, 2, 2),
        st(2, 2, 1),
        add(1, 1, 1),
        st(2, 2, 1),
        add(1, 1, 1),
        st(2, 2, 1),
        ready(),
    ];
    let image = Image::new()
        .group(cf(0x00FF), &[loads])
        .group(cf(0xFF00), &[&stores]);
    let runs = [in_order(), lookahead(), checkpoints(4)].map(|config| {
        let r = run_ok(mk, &image, &[], &config);
        assert_eq!(r.memory[0], 60);
        for k in 8..16 {
            assert_eq!(r.registers[k][1], (4 * k) as u8, "core {k}");
        }
        r
    });
    runs.into()
}

/// A lockstep gather and scatter: every core reads a table in bank 0 at a row its
/// register picks, writes its id into bank 1 at the row it read (cores that picked one row
/// collide: the highest id's write stays), reads that row back, and writes the result into
/// the table at the next row, four rounds:
/// ```text
/// 0 set_const 0, r1       ; id     5 ld [r1, r2], r10     ; r10 = T[r1]
/// 1 xor r2, r2, r2        ; 0      6 st [r10, r3], r1     ; B[r10] = r1
/// 2 set_const 1, r14               7 ld [r10, r3], r11    ; r11 = B[r10]
/// 3 add r2, r14, r3       ; 1      8 add r11, r14, r1     ; r1 = r11 + 1
/// 4 set_const 4, r8                9 st [r1, r2], r11     ; T[r1] = r11
///                                 10 sub r8, r14, r8
///                                 11 bnz 5, r8
///                                 12 ready
/// ```
/// Each access instruction reaches memory lane by lane in ascending core id, which
/// `gather_scatter_reference` plays out in plain Rust. From the start at 5, IP i runs at
/// 5 + i up to the loop; 4 rounds of 7 cycles from 10, ready at 38.
pub fn lockstep_gather_and_scatter_in_core_order<B: Backend>(mk: Mk<B>) {
    let body = [
        set_const(0, 1),
        xor(2, 2, 2),
        set_const(1, 14),
        add(2, 14, 3),
        set_const(4, 8),
        ld(1, 2, 10),
        st(10, 3, 1),
        ld(10, 3, 11),
        add(11, 14, 1),
        st(1, 2, 11),
        sub(8, 14, 8),
        bnz(8, 5),
        ready(),
    ];
    let image = Image::new().group(cf(0xFFFF), &[&body]);
    // Table rows 0..15: 5r mod 11, so that several cores pick one row.
    let table: Vec<(u16, u8)> = (0..16u16).map(|r| (r, (r * 5 % 11) as u8)).collect();
    let initial = memory(&table);
    let (want_memory, want_regs) = gather_scatter_reference(&initial);
    for config in [in_order(), lookahead(), checkpoints(4)] {
        let r = run_ok(mk, &image, &initial, &config);
        assert_eq!(r.memory[..], want_memory[..]);
        for (k, want) in want_regs.iter().enumerate() {
            for (reg, &want) in [1, 10, 11].into_iter().zip(want) {
                assert_eq!(r.registers[k][reg], want, "core {k} r{reg}");
            }
        }
        // Per round, two accesses to bank 0 and two to bank 1 by each of 16 cores.
        let mut accesses = [0; 16];
        (accesses[0], accesses[1]) = (4 * 2 * 16, 4 * 2 * 16);
        assert_eq!(r.memory_stats.accesses_per_bank, accesses);
        assert_eq!(timeline(&r), vec![(1, 1, 5, 38)]);
    }
}

/// `lockstep_gather_and_scatter_in_core_order`'s program in plain Rust: each instruction
/// for cores 0..15 in turn. Returns the memory and each core's r1, r10 and r11.
fn gather_scatter_reference(initial: &[u8]) -> (Vec<u8>, [[u8; 3]; 16]) {
    let at = |bank: u8, row: u8| (usize::from(bank) << 8) | usize::from(row);
    let mut m = initial.to_vec();
    let mut r1: [u8; 16] = std::array::from_fn(|k| k as u8);
    let (mut r10, mut r11) = ([0u8; 16], [0u8; 16]);
    for _ in 0..4 {
        for k in 0..16 {
            r10[k] = m[at(0, r1[k])];
        }
        for k in 0..16 {
            m[at(1, r10[k])] = r1[k];
        }
        for k in 0..16 {
            r11[k] = m[at(1, r10[k])];
        }
        for k in 0..16 {
            r1[k] = r11[k].wrapping_add(1);
        }
        for k in 0..16 {
            m[at(0, r1[k])] = r11[k];
        }
    }
    (m, std::array::from_fn(|k| [r1[k], r10[k], r11[k]]))
}
