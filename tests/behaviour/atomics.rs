//! Atomic sequences: ld_sync/st_sync locking, arbitration by (cycle, core id), one open
//! sequence a bank (16 at once), which accesses a lock blocks, and the exact stall counts of
//! the sleep-until-close rule (a waiter w retries in the closing cycle r if w > closer, else
//! in r + 1; every cycle from its first stalled attempt to that retry is a stall).

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;

/// `M[0x000] += 1` atomically, after `set_const 1, r11`: 5 instructions per core.
fn increment() -> Vec<gpu16_machine::engine::isa::Instr> {
    vec![
        set_const(1, 11),
        ld_sync(8, 1, 10), // address {r1, r8} = 0x000 (both 0)
        add(10, 11, 10),
        st_sync(8, 1, 10),
        ready(),
    ]
}

pub fn contention_lowest_id_wins_in_the_same_cycle<B: Backend>(mk: Mk<B>) {
    // Cores 0..3 all reach ld_sync at 6. Core 0 wins and closes at 8; cores 1..3 retry in 8
    // (ids above 0): core 1 wins, closes at 10; cores 2, 3 retry in 10: core 2 wins, closes
    // at 12; core 3 retries in 12 and wins. Stalls 0, 2, 4, 6; ready at 9, 11, 13, 15.
    let r = simple(mk, &Image::new().group(cf(0b1111), &[&increment()]));
    assert_eq!(r.memory[0], 4);
    assert_eq!(&stalls(&r)[..4], &[0, 2, 4, 6]);
    assert_eq!(r.stalls, 12);
    assert_eq!(&instructions(&r)[..4], &[5, 5, 5, 5]);
    for k in 0..4 {
        assert_eq!(
            r.registers[k][10],
            k as u8 + 1,
            "core {k} saw {k} and wrote {}",
            k + 1
        );
        assert_eq!(r.cores[k].lock_stalls, 2 * k as u64);
        assert_eq!(r.cores[k].bank_stalls, 0);
    }
    assert_eq!(timeline(&r), vec![(1, 1, 5, 15)]);
    assert_eq!(r.cycles, 16);
}

/// Cores 0 and 1 increment M[0]; the core whose R0 is 1 skips a nop and gets there first.
fn staggered() -> Vec<gpu16_machine::engine::isa::Instr> {
    vec![
        set_const(1, 11),
        bnz(0, 3),
        nop(),
        ld_sync(8, 1, 10),
        add(10, 11, 10),
        st_sync(8, 1, 10),
        ready(),
    ]
}

pub fn waiter_above_the_closer_retries_in_the_closing_cycle<B: Backend>(mk: Mk<B>) {
    // Core 0 (R0 = 1): ld_sync 7, st_sync 9, ready 10. Core 1: ld_sync stalls at 8; core 0
    // closes at 9 and core 1 (id above) retries in 9 and wins: 1 stall; st_sync 11, ready 12.
    let r = simple(mk, &Image::new().group(cf(0b11).r0(0, 1), &[&staggered()]));
    assert_eq!(r.memory[0], 2);
    assert_eq!(&stalls(&r)[..2], &[0, 1]);
    assert_eq!(&instructions(&r)[..2], &[6, 7]);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 12)]);
    assert_eq!(r.cycles, 13);
}

pub fn waiter_below_the_closer_retries_next_cycle<B: Backend>(mk: Mk<B>) {
    // Core 1 (R0 = 1): ld_sync 7, st_sync 9, ready 10. Core 0: stalls at 8; core 1 closes at
    // 9 and core 0 (id below, it acted before the close) retries in 10: stalls 8, 9.
    // Core 0: ld_sync 10, add 11, st_sync 12, ready 13.
    let r = simple(mk, &Image::new().group(cf(0b11).r0(1, 1), &[&staggered()]));
    assert_eq!(r.memory[0], 2);
    assert_eq!(&stalls(&r)[..2], &[2, 0]);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 13)]);
    assert_eq!(r.cycles, 14);
}

/// Core i increments the byte {R0 >> 4, R0}: `rshft r0, 4, r1` makes r1 the bank.
fn bank_increment() -> Vec<gpu16_machine::engine::isa::Instr> {
    vec![
        rshft(0, 4, 1),
        ld_sync(0, 1, 10),
        set_const(1, 11),
        add(10, 11, 10),
        st_sync(0, 1, 10),
        ready(),
    ]
}

pub fn one_sequence_per_bank<B: Backend>(mk: Mk<B>) {
    // Core 0 locks 0x000, core 2 locks 0x110 (bank 1), both at 6. Core 1's ld_sync of 0x001
    // (another byte, same bank 0) stalls until core 0 closes at 9, retrying in 9: 3 stalls.
    let mem = memory(&[(0x000, 0x10), (0x001, 0x20), (0x110, 0x30)]);
    let img = Image::new().group(
        cf(0b111).r0(0, 0x00).r0(1, 0x01).r0(2, 0x10),
        &[&bank_increment()],
    );
    let r = run_ok(mk, &img, &mem, &in_order());
    assert_eq!(
        (r.memory[0x000], r.memory[0x001], r.memory[0x110]),
        (0x11, 0x21, 0x31)
    );
    assert_eq!(&stalls(&r)[..3], &[0, 3, 0]);
    assert_eq!(r.cores[1].lock_stalls, 3);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 13)]);
    assert_eq!(r.cycles, 14);
}

pub fn sixteen_sequences_in_sixteen_banks<B: Backend>(mk: Mk<B>) {
    // Core i locks (i << 8) | 0x11 * i at 6 and closes at 9: all 16 open at once, no stall.
    let mut control = cf(0xFFFF);
    let mut bytes = Vec::new();
    for i in 0..16u16 {
        control = control.r0(usize::from(i), (i * 0x11) as u8);
        bytes.push(((i << 8) | (i * 0x11), (3 * i) as u8));
    }
    let mem = memory(&bytes);
    let r = run_ok(
        mk,
        &Image::new().group(control, &[&bank_increment()]),
        &mem,
        &in_order(),
    );
    for i in 0..16u16 {
        assert_eq!(
            r.memory[usize::from((i << 8) | (i * 0x11))],
            (3 * i + 1) as u8
        );
    }
    assert_eq!(r.stalls, 0);
    assert_eq!(r.memory_stats.lock_acquisitions_per_bank, [1; 16]);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 10)]);
    assert_eq!(r.cycles, 11);
}

pub fn what_a_lock_blocks<B: Backend>(mk: Mk<B>) {
    // Core 0 holds 0x000 from 8 to its st_sync (0x5A) at 49. Later groups start at 10, 15,
    // 20, 25, 30 (each CF 5 cycles after the previous one):
    //  core 1 (10): st/ld of 0x001, another byte of the locked bank: no stall.
    //  core 2 (15): ld of 0x000 stalls 15..48, retries in 49 after the close: reads 0x5A.
    //  core 3 (20): st of 0x000 at 21 stalls 21..48, writes 0x77 in 49 (after core 2 read).
    //  core 4 (25): ld_sync of 0x002 at 26 (same bank) stalls 26..48, locks it in 49.
    //  core 5 (30): ld_sync of 0x100 (bank 1) proceeds.
    let mem = memory(&[(0x000, 0x01), (0x002, 0x22), (0x100, 0x44)]);
    let holder = [
        set_const(0x5A, 12),
        set_const(20, 9),
        set_const(1, 11),
        ld_sync(8, 1, 10), // 8
        sub(9, 11, 9),     // 9, 11, .. 47
        bnz(9, 4),         // 10, 12, .. 48
        st_sync(8, 1, 12), // 49
        ready(),           // 50
    ];
    let img = Image::new()
        .group(cf(1 << 0), &[&holder])
        .group(
            cf(1 << 1),
            &[&[
                set_const(0x01, 8),
                set_const(0x33, 11),
                st(8, 1, 11),
                ld(8, 1, 12),
                ready(),
            ]],
        )
        .group(cf(1 << 2), &[&[ld(8, 1, 12), ready()]])
        .group(cf(1 << 3), &[&[set_const(0x77, 13), st(8, 1, 13), ready()]])
        .group(
            cf(1 << 4),
            &[&[
                set_const(0x02, 8),
                ld_sync(8, 1, 10),
                st_sync(8, 1, 10),
                ready(),
            ]],
        )
        .group(
            cf(1 << 5).r0(5, 1),
            &[&[ld_sync(8, 0, 10), st_sync(8, 0, 10), ready()]],
        );
    let r = run_ok(mk, &img, &mem, &in_order());
    assert_eq!(
        timeline(&r),
        vec![
            (1, 1, 5, 50),
            (3, 6, 10, 14),
            (5, 11, 15, 50),
            (7, 16, 20, 50),
            (9, 21, 25, 51),
            (11, 26, 30, 32),
        ]
    );
    assert_eq!(r.cycles, 52);
    assert_eq!(&stalls(&r)[..6], &[0, 0, 34, 28, 23, 0]);
    assert_eq!(&instructions(&r)[..6], &[46, 5, 2, 3, 4, 3]);
    assert_eq!(r.registers[1][12], 0x33);
    assert_eq!(r.registers[2][12], 0x5A);
    assert_eq!(r.registers[4][10], 0x22);
    assert_eq!(r.registers[5][10], 0x44);
    assert_eq!(
        (
            r.memory[0x000],
            r.memory[0x001],
            r.memory[0x002],
            r.memory[0x100]
        ),
        (0x77, 0x33, 0x22, 0x44)
    );
}

pub fn st_sync_writes_and_releases<B: Backend>(mk: Mk<B>) {
    // A sequence that stores a different value than it loaded, then a plain ld of the byte
    // by the same core after the close (allowed: the core no longer holds it).
    let img = Image::new().group(
        cf(1),
        &[&[
            ld_sync(8, 1, 10),
            set_const(0xE7, 11),
            st_sync(8, 1, 11),
            ld(8, 1, 12),
            ld_sync(8, 1, 13), // a second sequence on the same byte
            st_sync(8, 1, 13),
            ready(),
        ]],
    );
    let r = run_ok(mk, &img, &memory(&[(0, 0x19)]), &in_order());
    let g = r.registers[0];
    assert_eq!((g[10], g[12], g[13]), (0x19, 0xE7, 0xE7));
    assert_eq!(r.memory[0], 0xE7);
    assert_eq!(r.memory_stats.lock_acquisitions_per_bank[0], 2);
    assert_eq!(r.stalls, 0);
}
