//! Cores of one task at different instructions, touching one byte with plain `ld` and `st`:
//! their accesses interleave in (cycle, core id) order, whatever the engine does with cores
//! that parted ways (groups taking turns through the run loop, or a cohort the engine steps
//! cycle by cycle, which cores a cycle behind join in their cycle).
//!
//! Every core of a task runs `halves(skip)`: the odd cores jump over `skip` nops, so from
//! the bnz on they run `skip` instructions ahead of the even ones, and then three rounds of
//! a non-atomic increment of byte 0x000 (`ld`, `add`, `st`, `sub`, `bnz`). Updates are lost
//! or not exactly as the order of the accesses says.

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::{Config, RunReport};

/// r1 = core id, r14 = 1, r3 = id & 1, r2 = 0 (the address), r8 = 3 rounds; the odd cores
/// jump over `skip` nops to the loop at 6 + skip, which counts r8 down around
/// `ld [r2, r2], r10; add r10, r14, r10; st [r2, r2], r10`.
fn halves(skip: u8) -> Vec<Instr> {
    let head = 6 + skip;
    let mut code = vec![
        set_const(0, 1),
        set_const(1, 14),
        and(1, 14, 3),
        xor(2, 2, 2),
        set_const(3, 8),
        bnz(3, head),
    ];
    code.extend((0..skip).map(|_| nop()));
    code.extend([
        ld(2, 2, 10),
        add(10, 14, 10),
        st(2, 2, 10),
        sub(8, 14, 8),
        bnz(8, head),
        ready(),
    ]);
    code
}

fn run_halves<B: Backend>(mk: Mk<B>, skip: u8, config: &Config) -> RunReport {
    let img = Image::new().group(cf(0xFFFF), &[&halves(skip)]);
    run_ok(mk, &img, &[], config)
}

pub fn halves_a_cycle_apart_leapfrog_in_one_byte<B: Backend>(mk: Mk<B>) {
    // The task starts at 5 and the bnz is at 10. Odd cores: ld 11, st 13, ld 16, st 18,
    // ld 21, st 23, ready 26. Even cores, one cycle behind: ld 12, st 14, ld 17, st 19,
    // ld 22, st 24, ready 27. Each even ld comes a cycle before the odd st it would
    // otherwise see: every core loads 0, 1, 2 and stores 1, 2, 3.
    for config in [in_order(), lookahead()] {
        let r = run_halves(mk, 1, &config);
        assert_eq!(r.memory[0], 3);
        for k in 0..16 {
            assert_eq!(r.registers[k][10], 3, "core {k}");
            // 6 + 15 + 1, and the even cores' nop.
            assert_eq!(r.cores[k].instructions, 22 + (k as u64 + 1) % 2, "core {k}");
        }
        assert_eq!(r.cycles, 28);
        assert_eq!(timeline(&r), vec![(1, 1, 5, 27)]);
        assert_eq!(r.stalls, 0);
    }
}

pub fn halves_two_instructions_apart_meet_in_core_order<B: Backend>(mk: Mk<B>) {
    // Odd cores: ld 11, st 13, ld 16, st 18, ld 21, st 23, ready 26. Even cores, two
    // cycles behind: ld 13, st 15, ld 18, st 20, ld 23, st 25, ready 28. In 13, 18 and 23
    // the even loads and odd stores alternate in core order: core 0 loads before any store
    // of the cycle, cores 2..14 load what core 1 (and the odd core below each) stored.
    //   11: odd cores load 0.          13: core 0 loads 0, the others load 1; M = 1.
    //   15: core 0 stores 1, cores 2..14 store 2: M = 2.
    //   16: odd cores load 2.          18: core 0 loads 2, the others load 3; M = 3.
    //   20: M = 4.   21: odd cores load 4.   23: core 0 loads 4, the others 5; M = 5.
    //   25: core 0 stores 5, cores 2..14 store 6: M = 6.
    let r = run_halves(mk, 2, &in_order());
    assert_eq!(r.memory[0], 6);
    assert_eq!(r.registers[0][10], 5);
    for k in 1..16 {
        let want = if k % 2 == 1 { 5 } else { 6 };
        assert_eq!(r.registers[k][10], want, "core {k}");
    }
    for k in 0..16 {
        assert_eq!(
            r.cores[k].instructions,
            22 + 2 * ((k as u64 + 1) % 2),
            "core {k}"
        );
    }
    assert_eq!(r.cycles, 29);
    assert_eq!(r.instructions, 8 * 22 + 8 * 24);
}
