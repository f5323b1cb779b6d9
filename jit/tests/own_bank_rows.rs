//! Own-bank rows: where core k of a lockstep group reads or writes bank k, all in one row,
//! lockstep code moves the row as one vector. Hand-worked programs check the bytes, the
//! per-bank access counts and the registers against worked values and the interpreter, and
//! `Jit::row_accesses` says whether the row path was taken.

use gpu16_interp::Interpreter;
use gpu16_jit::{Engine, Jit, JitOptions};
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::frame::{ControlFrame, Fence, InstrFrame};
use gpu16_machine::{run, Config, FaultRule, Program, RunError, RunReport};

fn jit(engine: Engine) -> Jit {
    Jit::with_options(JitOptions {
        engine,
        ..JitOptions::default()
    })
    .unwrap()
}

/// One task of `code` on the cores of `mask`, core k starting with R0 = k + 1.
fn program(mask: u16, code: &[Instr]) -> Program {
    let r0: Vec<(usize, u8)> = (0..16).map(|k| (k, k as u8 + 1)).collect();
    let cf = ControlFrame::new(1, Fence::No, mask, &r0).encode();
    Program::from_frames(vec![cf, InstrFrame::padded(code, Instr::Ready).bytes()]).unwrap()
}

fn mem(op: MemOp, a: u8, hi: u8, r: u8) -> Instr {
    Instr::Mem { op, a, hi, r }
}

fn alu(op: AluOp, a: u8, b: u8, c: u8) -> Instr {
    Instr::Alu { op, a, b, c }
}

/// Every byte distinct from its neighbours, so a row written back whole shows any byte it
/// should not have changed.
fn image() -> Vec<u8> {
    (0..4096).map(|a| (a * 7 + a / 256) as u8).collect()
}

/// Run on the interpreter and on the JIT's lockstep and adaptive engines; all must agree.
/// Returns the lockstep run and its row accesses.
fn agree(p: &Program, memory: &[u8]) -> (RunReport, u64) {
    let want = run(&mut Interpreter::new(), p, memory, &Config::default()).unwrap();
    let mut out = None;
    for engine in [Engine::Lockstep, Engine::Adaptive] {
        let mut j = jit(engine);
        let r = run(&mut j, p, memory, &Config::default()).unwrap();
        assert_eq!(r.registers, want.registers, "{engine:?}");
        assert_eq!(r.memory, want.memory, "{engine:?}");
        assert_eq!(r.cores, want.cores, "{engine:?}");
        assert_eq!(r.memory_stats, want.memory_stats, "{engine:?}");
        assert_eq!(r.cycles, want.cycles, "{engine:?}");
        out.get_or_insert((r, j.row_accesses()));
    }
    out.unwrap()
}

/// r1 = core id (the bank), r9 = 3 (the row); M[bank k, row 3] += 5.
fn add_five_to_row_three() -> Vec<Instr> {
    vec![
        Instr::SetConst { k: 0, d: 1 },
        Instr::SetConst { k: 3, d: 9 },
        mem(MemOp::Ld, 9, 1, 10),
        Instr::SetConst { k: 5, d: 11 },
        alu(AluOp::Add, 10, 11, 10),
        mem(MemOp::St, 9, 1, 10),
        Instr::Ready,
    ]
}

#[test]
fn a_row_of_own_banks_is_read_and_written_whole() {
    let img = image();
    let (r, rows) = agree(&program(0xFFFF, &add_five_to_row_three()), &img);
    for k in 0..16usize {
        let addr = k << 8 | 3;
        assert_eq!(r.memory[addr], img[addr].wrapping_add(5), "bank {k}");
        assert_eq!(r.registers[k][10], img[addr].wrapping_add(5));
        assert_eq!(r.memory_stats.accesses_per_bank[k], 2, "bank {k}");
    }
    let mut others = r.memory.to_vec();
    let mut before = img.clone();
    for k in 0..16 {
        others[k << 8 | 3] = 0;
        before[k << 8 | 3] = 0;
    }
    assert_eq!(others, before, "no other byte changed");
    assert_eq!(rows, 32, "the ld and the st of 16 cores, as rows");
}

#[test]
fn a_partial_group_leaves_the_other_banks_of_the_row_alone() {
    let img = image();
    let (r, rows) = agree(&program(0x5555, &add_five_to_row_three()), &img);
    for k in 0..16usize {
        let addr = k << 8 | 3;
        let want = if k % 2 == 0 {
            img[addr].wrapping_add(5)
        } else {
            img[addr]
        };
        assert_eq!(r.memory[addr], want, "bank {k}");
        let count = if k % 2 == 0 { 2 } else { 0 };
        assert_eq!(r.memory_stats.accesses_per_bank[k], count, "bank {k}");
    }
    assert_eq!(rows, 16);
}

#[test]
fn different_rows_take_the_lane_by_lane_path() {
    // r9 = core id as well: core k reaches row k of bank k, not one row.
    let mut code = add_five_to_row_three();
    code[1] = Instr::SetConst { k: 0, d: 2 };
    code[2] = mem(MemOp::Ld, 2, 1, 10);
    code[5] = mem(MemOp::St, 2, 1, 10);
    let img = image();
    let (r, rows) = agree(&program(0xFFFF, &code), &img);
    for k in 0..16usize {
        let addr = k << 8 | k;
        assert_eq!(r.memory[addr], img[addr].wrapping_add(5), "bank {k}");
    }
    assert_eq!(rows, 0);
}

#[test]
fn lanes_leaving_at_ready_keep_the_row_path_for_the_rest() {
    // Core k adds 1 to M[bank k, row i] for rows i = 0..=k (R0 = k + 1 rounds), then leaves
    // at ready. The lowest lane leaves first, each with the row it had reached, so the
    // group's one row must be read from a lane still in it.
    let code = [
        Instr::SetConst { k: 0, d: 1 },
        Instr::SetConst { k: 1, d: 14 },
        mem(MemOp::Ld, 9, 1, 10), // IP 2; r9 starts at 0
        alu(AluOp::Add, 10, 14, 10),
        mem(MemOp::St, 9, 1, 10),
        alu(AluOp::Add, 9, 14, 9),
        alu(AluOp::Sub, 0, 14, 0),
        Instr::Bnz { a: 0, target: 2 },
        Instr::Ready,
    ];
    let img = vec![0u8; 4096];
    let (r, rows) = agree(&program(0xFFFF, &code), &img);
    let mut total = 0;
    for k in 0..16usize {
        for row in 0..16usize {
            let want = u8::from(row <= k);
            assert_eq!(r.memory[k << 8 | row], want, "bank {k} row {row}");
        }
        assert_eq!(r.memory_stats.accesses_per_bank[k], 2 * (k as u64 + 1));
        total += 2 * (k as u64 + 1);
    }
    assert_eq!(rows, total, "every access went as a row");
}

#[test]
fn a_core_holding_a_lock_faults_on_its_plain_access() {
    // Every core opens a sequence on its own bank (row 7), then a plain ld of row 3 faults:
    // core 0 first, in cycle 8 (IP 0 in 5, the ld_sync in 6, set_const in 7, the ld in 8).
    let code = [
        Instr::SetConst { k: 0, d: 1 },
        mem(MemOp::LdSync, 12, 1, 10), // r12 = 0: row 0
        Instr::SetConst { k: 3, d: 9 },
        mem(MemOp::Ld, 9, 1, 10),
        Instr::Ready,
    ];
    let p = program(0xFFFF, &code);
    let want = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap_err();
    for engine in [Engine::Lockstep, Engine::Adaptive] {
        let got = run(&mut jit(engine), &p, &[], &Config::default()).unwrap_err();
        assert_eq!(got.error, want.error, "{engine:?}");
        assert_eq!(
            got.state.memory_stats, want.state.memory_stats,
            "{engine:?}"
        );
    }
    match want.error {
        RunError::Fault {
            rule, core, cycle, ..
        } => {
            assert_eq!(rule, FaultRule::AccessWhileHolding { held: 0x000 });
            assert_eq!((core, cycle), (0, 8));
        }
        other => panic!("expected a fault, got {other}"),
    }
}

/// Shared rows: every core reads row 5 of bank (id + `d`) mod 16 (`d` in r11), or with
/// `broadcast` all of them bank 2's (r2 = 2 for everyone).
fn read_row_five(broadcast: bool, d: u8) -> Vec<Instr> {
    let hi = if broadcast { 2 } else { 1 };
    vec![
        Instr::SetConst { k: 0, d: 1 },
        Instr::SetConst { k: d, d: 11 },
        alu(AluOp::Add, 1, 11, 1), // r1 = id + d
        Instr::SetConst { k: 2, d: 8 },
        alu(AluOp::Or, 8, 8, 2), // r2 = 2
        Instr::SetConst { k: 5, d: 9 },
        mem(MemOp::Ld, 9, hi, 10),
        Instr::Ready,
    ]
}

#[test]
fn a_row_read_through_a_rotation_of_the_banks_is_one_vector() {
    let img = image();
    for d in [1u8, 15, 7] {
        for mask in [0xFFFF, 0x0FF0] {
            let (r, rows) = agree(&program(mask, &read_row_five(false, d)), &img);
            for k in 0..16usize {
                if mask & (1 << k) == 0 {
                    continue;
                }
                let bank = (k + usize::from(d)) % 16;
                assert_eq!(r.registers[k][10], img[bank << 8 | 5], "d {d} core {k}");
            }
            // Each active core's load reached bank id + d once.
            for b in 0..16usize {
                let reader = (b + 16 - usize::from(d)) % 16;
                let want = u64::from(mask & (1 << reader) != 0);
                assert_eq!(r.memory_stats.accesses_per_bank[b], want, "d {d} bank {b}");
            }
            assert_eq!(rows, u64::from(mask.count_ones()), "d {d}: the row path");
        }
    }
}

#[test]
fn a_byte_every_core_reads_is_one_vector() {
    let img = image();
    let (r, rows) = agree(&program(0xFFFF, &read_row_five(true, 0)), &img);
    for k in 0..16 {
        assert_eq!(r.registers[k][10], img[2 << 8 | 5], "core {k}");
    }
    assert_eq!(r.memory_stats.accesses_per_bank[2], 16);
    assert_eq!(r.memory_stats.accesses_per_bank.iter().sum::<u64>(), 16);
    assert_eq!(rows, 16, "the row path");
}
