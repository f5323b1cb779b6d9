//! The compiled cohort (`cohort.rs`): lanes of one frame at several IPs, or some asleep on
//! a lock, run as vector lanes with an IP each. These programs are built to take that path
//! (the cache says its form was compiled) and are checked against hand-worked values and
//! the interpreter's whole report.

mod common;

use common::single;
use gpu16_interp::Interpreter;
use gpu16_jit::{Engine, Jit, JitOptions};
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::{run, Config, Program, RunReport};

fn decode(words: &[u16]) -> Vec<Instr> {
    words
        .iter()
        .map(|&w| Instr::decode(w).expect("an instruction word"))
        .collect()
}

fn on(engine: Engine, p: &Program) -> (RunReport, Jit) {
    let mut j = Jit::with_options(JitOptions {
        engine,
        ..JitOptions::default()
    })
    .unwrap();
    let r = run(&mut j, p, &[], &Config::default()).unwrap();
    (r, j)
}

/// The same report as the interpreter's, field by field that a user sees.
fn same_as_interpreter(r: &RunReport, p: &Program) {
    let want = run(&mut Interpreter::new(), p, &[], &Config::default()).unwrap();
    assert_eq!(r.memory, want.memory);
    assert_eq!(r.registers, want.registers);
    assert_eq!(r.cores, want.cores);
    assert_eq!(r.tasks, want.tasks);
    assert_eq!(
        (r.cycles, r.instructions, r.stalls),
        (want.cycles, want.instructions, want.stalls)
    );
}

#[test]
fn lanes_parted_by_a_bnz_in_one_bank_run_as_a_cohort() {
    // Bits 0 and 1 of the id part the cores three ways at IPs 6 and 7; each stores its id
    // to byte 0x000 (IP 9) and loads it back (IP 10). From the start at 5: odd cores store
    // at 12 and load at 13; cores 2 mod 4 store at 13, load at 14; cores 0 mod 4 (a nop at
    // 13) store at 14, load at 15. In core order within each cycle, the loads see:
    let p = single(
        0xFFFF,
        &decode(&[
            0xC001, // set_const 0, r1      ; id
            0xC01E, // set_const 1, r14
            0x81E3, // and r1, r14, r3      ; bit 0
            0xC02D, // set_const 2, r13
            0x81D4, // and r1, r13, r4      ; bit 1
            0xA222, // xor r2, r2, r2
            0xE390, // bnz 9, r3            ; odd cores
            0xE490, // bnz 9, r4            ; 2 mod 4
            0x0000, // nop                  ; 0 mod 4
            0xD221, // st [r2, r2], r1
            0xB22A, // ld [r2, r2], r10
            0xF000, // ready
        ]),
    );
    const LOADS: [u8; 16] = [12, 15, 0, 2, 12, 2, 4, 6, 12, 6, 8, 10, 12, 10, 12, 14];
    for engine in [Engine::Lockstep, Engine::Adaptive] {
        let (r, j) = on(engine, &p);
        assert_eq!(j.stats().cohorts_compiled, 1, "{engine:?}");
        assert_eq!(r.memory[0], 12, "{engine:?}");
        for (k, &want) in LOADS.iter().enumerate() {
            assert_eq!(r.registers[k][10], want, "{engine:?} core {k}");
        }
        assert_eq!(r.cycles, 17, "{engine:?}");
        same_as_interpreter(&r, &p);
    }
}

#[test]
fn pairs_contending_for_bins_sleep_and_wake_in_a_cohort() {
    // Core k adds 1 to bin (k / 2 + i) mod 16 (row 0 of that bank) in round i of 20, in an
    // ld_sync / st_sync sequence: the two cores of a pair meet at one bin, and the odd one
    // sleeps until the even one closes it.
    let p = single(
        0xFFFF,
        &decode(&[
            0xC001, // set_const 0, r1      ; id
            0x6111, // rshft r1, 1, r1      ; the pair's first bin
            0xA999, // xor r9, r9, r9       ; row 0
            0xC148, // set_const 20, r8     ; rounds
            0xC01E, // set_const 1, r14
            0xB95A, // ld_sync [r9, r1], r10
            0x1AEA, // add r10, r14, r10
            0xD95A, // st_sync [r9, r1], r10
            0x11E1, // add r1, r14, r1      ; next bin
            0x28E8, // sub r8, r14, r8
            0xE850, // bnz 5, r8
            0xF000, // ready
        ]),
    );
    // Every increment counts: bin x gets two for each (pair b, round i) with b + i = x
    // (mod 16).
    let mut bins = [0u8; 16];
    for b in 0..8 {
        for i in 0..20 {
            bins[(b + i) % 16] += 2;
        }
    }
    for engine in [Engine::Lockstep, Engine::Adaptive] {
        let (r, j) = on(engine, &p);
        assert_eq!(j.stats().cohorts_compiled, 1, "{engine:?}");
        for (x, &want) in bins.iter().enumerate() {
            assert_eq!(r.memory[x << 8], want, "{engine:?} bin {x}");
        }
        // 5 set-up instructions, 20 rounds of 6, ready.
        for k in 0..16 {
            assert_eq!(r.cores[k].instructions, 126, "{engine:?} core {k}");
        }
        assert!(r.stalls > 0, "the odd core of a pair waits");
        same_as_interpreter(&r, &p);
    }
}
