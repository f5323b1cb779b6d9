//! Every instruction at its edge values, through the full run loop, under the JIT, the
//! `auto` backend and the interpreter: the outcomes must be equal and match hand-worked values.

mod common;

use common::{on, run_on, single, Outcome};
use gpu16_gen::image::Image;
use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Jit};
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::{Config, CoreWait, Program, RunError, RunReport};

fn sc(k: u8, d: u8) -> Instr {
    Instr::SetConst { k, d }
}
fn alu(op: AluOp, a: u8, b: u8, c: u8) -> Instr {
    Instr::Alu { op, a, b, c }
}
fn mem(op: MemOp, a: u8, hi: u8, r: u8) -> Instr {
    Instr::Mem { op, a, hi, r }
}

/// Run under every backend; they must agree; return the interpreter's outcome.
fn all(p: &Program, mem: &[u8], config: &Config) -> Outcome {
    let want = run_on(&mut Interpreter::new(), p, mem, config);
    let jit = run_on(&mut Jit::new(), p, mem, config);
    assert_eq!(jit, want, "jit differs from the interpreter");
    let auto = run_on(&mut Auto::with_threshold(1), p, mem, config);
    assert_eq!(auto, want, "auto differs from the interpreter");
    want
}

fn ok(p: &Program) -> RunReport {
    all(p, &[], &Config::default()).expect("the program runs to completion")
}

/// Core 0's registers after running `instrs` alone.
fn regs(instrs: &[Instr]) -> [u8; 16] {
    ok(&single(1, instrs)).registers[0]
}

#[test]
fn alu_operations_wrap_at_eight_bits() {
    let r = regs(&[
        sc(200, 8),
        sc(100, 9),
        alu(AluOp::Add, 8, 9, 10), // 300 mod 256 = 44
        alu(AluOp::Sub, 9, 8, 11), // 100 - 200 = -100 = 156
        alu(AluOp::And, 8, 9, 12), // 0b11001000 & 0b01100100 = 0b01000000
        alu(AluOp::Or, 8, 9, 13),  // 0b11101100
        alu(AluOp::Xor, 8, 9, 14), // 0b10101100
    ]);
    assert_eq!(&r[8..15], &[200, 100, 44, 156, 0x40, 0xEC, 0xAC]);
}

#[test]
fn div_by_zero_is_ff_and_division_is_unsigned() {
    let r = regs(&[
        sc(200, 8),
        sc(7, 9),
        sc(0, 10),
        alu(AluOp::Div, 8, 9, 11),   // 28
        alu(AluOp::Div, 8, 10, 12),  // 0xFF
        alu(AluOp::Div, 10, 10, 13), // 0 / 0 = 0xFF
        alu(AluOp::Div, 9, 8, 14),   // 7 / 200 = 0
        alu(AluOp::Div, 8, 8, 15),   // 1
    ]);
    assert_eq!(&r[11..16], &[28, 0xFF, 0xFF, 0, 1]);
}

#[test]
fn cmpge_is_unsigned() {
    let r = regs(&[
        sc(0x80, 8),
        sc(0x7F, 9),
        alu(AluOp::Cmpge, 8, 9, 10), // 128 >= 127 unsigned (signed it would be 0)
        alu(AluOp::Cmpge, 9, 8, 11), // 0
        alu(AluOp::Cmpge, 8, 8, 12), // equal: 1
    ]);
    assert_eq!(&r[10..13], &[1, 0, 1]);
}

#[test]
fn mul_writes_the_high_byte_to_the_next_register_reading_sources_first() {
    let r = regs(&[
        sc(0xFF, 8),
        sc(0xFF, 9),
        Instr::Mul { a: 8, b: 9, c: 10 }, // 0xFE01
        sc(200, 12),
        sc(3, 13),
        // The sources are also the destinations: 600 = 0x0258.
        Instr::Mul {
            a: 12,
            b: 13,
            c: 12,
        },
        sc(16, 14),
        sc(17, 15),
        // R15 = low, R0 = high of 272 = 0x0110.
        Instr::Mul {
            a: 14,
            b: 15,
            c: 15,
        },
    ]);
    assert_eq!((r[10], r[11]), (0x01, 0xFE));
    assert_eq!((r[12], r[13]), (0x58, 0x02));
    assert_eq!((r[15], r[0]), (0x10, 0x01));
}

#[test]
fn shifts_take_the_immediate_modulo_eight() {
    // rshft r8 by b=9: bit b[3] is ignored, so k = 1. Raw words, since `Instr` masks k.
    let words = vec![
        sc(0x81, 8).encode(),
        0x6891, // rshft r8, 9, r1 -> 0x40
        0x7892, // lshft r8, 9, r2 -> 0x02
        0x6873, // rshft r8, 7, r3 -> 0x01
        0x7874, // lshft r8, 7, r4 -> 0x80
        0x6805, // rshft r8, 0, r5 -> 0x81
        0x0FFF, // nop with every operand bit set
    ];
    let img = Image::new().group_words(on(1), &[&words]);
    let r = ok(&img.program()).registers[0];
    assert_eq!(&r[1..6], &[0x40, 0x02, 0x01, 0x80, 0x81]);
}

#[test]
fn set_const_loads_the_core_id_below_r8() {
    let p = single(
        0b1010_0000_0010_0001,
        &[sc(0x2a, 3), sc(0x2a, 7), sc(0x2a, 8), sc(0xFF, 15)],
    );
    let rep = ok(&p);
    for core in [0usize, 5, 13, 15] {
        let r = rep.registers[core];
        assert_eq!(
            (r[3], r[7], r[8], r[15]),
            (core as u8, core as u8, 0x2a, 0xFF)
        );
    }
    assert_eq!(rep.registers[1], [0; 16], "inactive core untouched");
}

#[test]
fn bnz_loops_count_every_instruction_and_cycle() {
    // r9 = 5; loop: r10 += r14(=2); r9 -= r15(=1); bnz loop, r9; ready
    let p = single(
        1,
        &[
            sc(5, 9),
            sc(2, 14),
            sc(1, 15),
            alu(AluOp::Add, 10, 14, 10),
            alu(AluOp::Sub, 9, 15, 9),
            Instr::Bnz { a: 9, target: 3 },
            Instr::Ready,
        ],
    );
    let rep = ok(&p);
    assert_eq!(rep.registers[0][10], 10);
    // 3 + 5 * 3 + ready = 19 instructions, starting in cycle 5 (CF 1 + broadcast 4).
    assert_eq!(rep.cores[0].instructions, 19);
    assert_eq!(rep.cycles, 5 + 19);
}

#[test]
fn a_taken_bnz_at_ip_15_continues_and_a_frame_end_stops() {
    // ip0: r8 -= r9 (r9 = 1 after ip2 on first pass... set before) ; ip15: bnz 1, r8
    let mut f = vec![Instr::Nop; 16];
    f[0] = sc(3, 8);
    f[1] = sc(1, 9);
    f[2] = alu(AluOp::Sub, 8, 9, 8);
    f[15] = Instr::Bnz { a: 8, target: 2 };
    let rep = ok(&single(1, &f));
    // Passes with r8 = 2, 1, 0: 2 + 3 * 14 = 44 instructions; the last pass ends at IP 15.
    assert_eq!(rep.registers[0][8], 0);
    assert_eq!(rep.cores[0].instructions, 44);
    assert_eq!(rep.cycles, 5 + 44);
}

#[test]
fn loads_and_stores_use_the_low_nibble_of_the_high_register() {
    let mut memory = vec![0u8; 4096];
    memory[0x3_05] = 0x77;
    let p = single(
        1,
        &[
            sc(0x13, 8),               // R8 = 0x13: only the low nibble (3) counts
            alu(AluOp::Add, 8, 9, 1),  // R1 = 0x13
            sc(5, 10),                 // low byte
            mem(MemOp::Ld, 10, 1, 11), // R11 = M[0x305]
            sc(0xAB, 12),
            mem(MemOp::St, 10, 0, 12),    // M[0x005] = 0xAB (R0 = 0)
            mem(MemOp::LdSync, 8, 1, 13), // R13 = M[0x313]
            sc(0x5A, 14),
            mem(MemOp::StSync, 8, 1, 14), // M[0x313] = 0x5A
            Instr::Ready,
        ],
    );
    let rep = all(&p, &memory, &Config::default()).expect("completes");
    assert_eq!(rep.registers[0][11], 0x77);
    assert_eq!(rep.registers[0][13], 0);
    assert_eq!(rep.memory[0x005], 0xAB);
    assert_eq!(rep.memory[0x313], 0x5A);
    assert_eq!(rep.memory[0x305], 0x77);
    assert_eq!(rep.cores[0].instructions, 10);
}

#[test]
fn the_watchdog_names_the_ip_inside_a_register_loop() {
    // ip0: r8 = 1; ip1: r9 += r8; ip2: bnz 1, r8 — forever. Cycle 5 runs ip0, then ip1 in
    // even-offset cycles 6, 8, ... The limit 100 falls on ip1 after 47 adds.
    let p = single(
        1,
        &[
            sc(1, 8),
            alu(AluOp::Add, 9, 8, 9),
            Instr::Bnz { a: 8, target: 1 },
        ],
    );
    for limit in [100u64, 101] {
        let config = Config {
            max_cycles: limit,
            ..Config::default()
        };
        let fail = all(&p, &[], &config).expect_err("the loop never ends");
        let RunError::Watchdog { cores, .. } = &fail.error else {
            panic!("expected the watchdog, got {:?}", fail.error);
        };
        assert_eq!(cores.len(), 1);
        let want_ip = if limit == 100 { 1 } else { 2 };
        assert_eq!((cores[0].core, cores[0].ip), (0, want_ip));
        assert_eq!(cores[0].wait, CoreWait::Running);
        // Limit 101 also runs the add in cycle 100.
        let adds = if limit == 100 { 47 } else { 48 };
        assert_eq!(fail.state.registers[0][9], adds);
        assert_eq!(fail.state.cores[0].instructions, limit - 5);
    }
}

#[test]
fn a_limit_inside_the_first_segment_parks_before_any_instruction() {
    let p = single(0xFFFF, &[sc(1, 8), sc(2, 9), Instr::Ready]);
    for limit in 5..9u64 {
        let config = Config {
            max_cycles: limit,
            ..Config::default()
        };
        match all(&p, &[], &config) {
            Err(fail) => {
                let RunError::Watchdog { cores, .. } = &fail.error else {
                    panic!("expected the watchdog");
                };
                assert_eq!(cores.len(), 16);
                assert!(cores.iter().all(|c| u64::from(c.ip) == limit - 5));
            }
            Ok(rep) => assert_eq!(limit, 8, "only limit 8 lets 3 instructions finish: {rep:?}"),
        }
    }
}

#[test]
fn faults_are_reported_alike() {
    // st_sync without ld_sync; ready while holding; frame end while holding.
    let cases: Vec<Vec<Instr>> = vec![
        vec![mem(MemOp::StSync, 8, 0, 9)],
        vec![mem(MemOp::LdSync, 8, 0, 9), Instr::Ready],
        vec![mem(MemOp::LdSync, 8, 0, 9)],
        vec![mem(MemOp::LdSync, 8, 0, 9), mem(MemOp::Ld, 8, 0, 9)],
        vec![
            mem(MemOp::LdSync, 8, 0, 9),
            sc(1, 8),
            mem(MemOp::StSync, 8, 0, 9),
        ],
    ];
    for instrs in cases {
        let fail = all(&single(0b11, &instrs), &[], &Config::default()).expect_err("a fault");
        assert!(
            matches!(fail.error, RunError::Fault { .. }),
            "{:?}",
            fail.error
        );
    }
}

/// Core 0 stores five bytes in a loop while core 1 holds a lock (0x080 of `lock_bank`)
/// across one of those cycles, then reads its byte back. With `lock_bank` 0 the cores share
/// bank 0 and take turns; with 1 core 0 has bank 0 to itself and compiled code performs its
/// stores directly. Worked by hand: both start at 5. Core 0 stores r8 = 5, 4, 3, 2, 1 at
/// 0x000..0x004 in cycles 10, 14, 18, 22, 26 and ends with `ready` at 30 (26 instructions).
/// Core 1 runs nop at 10, ld_sync at 12 (the byte is 0), st_sync of 1 at 14 (after core 0's
/// store in that cycle, which touches another byte and proceeds), and reads 1 back at 15,
/// the frame's last slot (11 instructions). No stall; one lock held 14 - 12 = 2 cycles.
#[test]
fn plain_stores_beside_an_atomic_sequence_in_the_same_or_another_bank() {
    for lock_bank in [0u8, 1] {
        let hi = if lock_bank == 0 { 2 } else { 1 }; // r2 = 0, r1 = core id (1 on core 1)
        let code = [
            sc(0, 1),                        // 0: r1 = core id
            alu(AluOp::Xor, 2, 2, 2),        // 1: r2 = 0
            sc(5, 8),                        // 2: counter and value
            sc(1, 14),                       // 3
            Instr::Bnz { a: 1, target: 10 }, // 4: core 1 to its sequence
            mem(MemOp::St, 9, 1, 8),         // 5: core 0: M[r9] = r8 (bank r1 = 0)
            alu(AluOp::Add, 9, 14, 9),       // 6
            alu(AluOp::Sub, 8, 14, 8),       // 7
            Instr::Bnz { a: 8, target: 5 },  // 8
            Instr::Ready,                    // 9
            Instr::Nop,                      // 10: core 1
            sc(0x80, 10),                    // 11
            mem(MemOp::LdSync, 10, hi, 11),  // 12
            alu(AluOp::Add, 11, 14, 11),     // 13
            mem(MemOp::StSync, 10, hi, 11),  // 14
            mem(MemOp::Ld, 10, hi, 12),      // 15
        ];
        let r = ok(&single(0b11, &code));
        assert_eq!(r.cycles, 31, "lock bank {lock_bank}");
        assert_eq!(r.instructions, 37);
        assert_eq!(r.stalls, 0);
        assert_eq!(&r.memory[..6], &[5, 4, 3, 2, 1, 0]);
        let lock_addr = usize::from(lock_bank) << 8 | 0x80;
        assert_eq!(r.memory[lock_addr], 1);
        assert_eq!(r.registers[1][12], 1);
        let s = &r.memory_stats;
        let bank = usize::from(lock_bank);
        let mut accesses = [0u64; 16];
        accesses[0] += 5;
        accesses[bank] += 3;
        assert_eq!(s.accesses_per_bank, accesses);
        assert_eq!(s.lock_acquisitions_per_bank[bank], 1);
        assert_eq!(s.lock_hold_cycles_per_bank[bank], 2);
    }
}
