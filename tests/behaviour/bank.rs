//! The optional bank-conflict model: off by default; when on, a bank serves one access a
//! cycle in (cycle, core id) order, except that several reads (ld, ld_sync) of the same byte
//! in a cycle are served together. A conflicting access stalls one cycle and retries. Lock
//! stalls are decided before bank conflicts.

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::Instr;

/// Cores 0..n-1 with R0 = the given low address bytes, each running `ld [r0, r1], r10`.
fn loads(addrs: &[u8]) -> Image {
    let mut control = cf(0);
    for (i, &a) in addrs.iter().enumerate() {
        control.active |= 1 << i;
        control = control.r0(i, a);
    }
    Image::new().group(control, &[&[ld(0, 1, 10), ready()]])
}

fn preset() -> Vec<u8> {
    memory(&[(0, 0x40), (1, 0x41), (2, 0x42), (3, 0x43)])
}

pub fn same_bank_other_rows_take_turns<B: Backend>(mk: Mk<B>) {
    // Cores 0..3 read rows 0..3 of bank 0 at 5: one a cycle, in id order. Core k loads at
    // 5 + k after k stalls and is ready at 6 + k.
    let r = run_ok(mk, &loads(&[0, 1, 2, 3]), &preset(), &banked());
    assert_eq!(&stalls(&r)[..4], &[0, 1, 2, 3]);
    for k in 0..4 {
        assert_eq!(r.cores[k].bank_stalls, k as u64);
        assert_eq!(r.cores[k].lock_stalls, 0);
        assert_eq!(r.registers[k][10], 0x40 + k as u8);
    }
    assert_eq!(r.instructions, 8);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 9)]);
    assert_eq!(r.cycles, 10);
}

pub fn model_is_off_by_default<B: Backend>(mk: Mk<B>) {
    let r = run_ok(mk, &loads(&[0, 1, 2, 3]), &preset(), &in_order());
    assert_eq!(r.stalls, 0);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 6)]);
    assert_eq!(r.cycles, 7);
}

pub fn reads_of_one_byte_multicast<B: Backend>(mk: Mk<B>) {
    let r = run_ok(mk, &loads(&[3; 16]), &preset(), &banked());
    assert_eq!(r.stalls, 0);
    assert!(r.registers.iter().all(|g| g[10] == 0x43));
    assert_eq!(r.cycles, 7);
}

pub fn multicast_joins_the_first_served_byte<B: Backend>(mk: Mk<B>) {
    // Rows 0, 0, 1: cores 0 and 1 together at 5, core 2 at 6.
    let r = run_ok(mk, &loads(&[0, 0, 1]), &preset(), &banked());
    assert_eq!(&stalls(&r)[..3], &[0, 0, 1]);
    // Rows 0, 1, 0: core 1 conflicts; core 2 reads the byte already served and joins it.
    let r = run_ok(mk, &loads(&[0, 1, 0]), &preset(), &banked());
    assert_eq!(&stalls(&r)[..3], &[0, 1, 0]);
    assert_eq!(r.cycles, 8);
}

pub fn different_banks_do_not_conflict<B: Backend>(mk: Mk<B>) {
    // Core i reads (i << 8) | 0x05: `ld [r8, r0]` with r8 = 5, R0 = i.
    let mut control = cf(0xFFFF);
    let mut bytes = Vec::new();
    for i in 0..16u16 {
        control = control.r0(usize::from(i), i as u8);
        bytes.push(((i << 8) | 5, 0x80 | i as u8));
    }
    let img = Image::new().group(control, &[&[set_const(5, 8), ld(8, 0, 10), ready()]]);
    let r = run_ok(mk, &img, &memory(&bytes), &banked());
    assert_eq!(r.stalls, 0);
    for i in 0..16 {
        assert_eq!(r.registers[i][10], 0x80 | i as u8);
    }
}

pub fn writes_to_one_byte_take_turns<B: Backend>(mk: Mk<B>) {
    // Cores 0 and 1 store their id to 0x000 at 6; core 1 stalls once and stores at 7, so
    // its value is the last. Without the model both store at 6 (core 1 second).
    let img = Image::new().group(cf(0b11), &[&[set_const(0, 2), st(8, 1, 2), ready()]]);
    let r = run_ok(mk, &img, &[], &banked());
    assert_eq!(&stalls(&r)[..2], &[0, 1]);
    assert_eq!(r.memory[0], 1);
    assert_eq!(r.cycles, 9);
    let r = run_ok(mk, &img, &[], &in_order());
    assert_eq!(r.stalls, 0);
    assert_eq!(r.memory[0], 1);
    assert_eq!(r.cycles, 8);
}

/// Core 0 (R0 = 0) runs `first` at IP1, core 1 (R0 = 1) runs `second` at IP3, both at 6.
fn pair(first: Instr, second: Vec<Instr>) -> Image {
    let mut body = vec![bnz(0, 3), first, ready()];
    body.extend(second);
    Image::new().group(cf(0b11).r0(1, 1), &[&body])
}

pub fn a_read_and_a_write_of_one_byte_conflict<B: Backend>(mk: Mk<B>) {
    // Core 0 loads 0x000 at 6; core 1's store to it waits until 7 (core 0 read the old 0x99).
    let img = pair(ld(8, 1, 10), vec![st(8, 1, 0), ready()]);
    let r = run_ok(mk, &img, &memory(&[(0, 0x99)]), &banked());
    assert_eq!(&stalls(&r)[..2], &[0, 1]);
    assert_eq!((r.registers[0][10], r.memory[0]), (0x99, 1));
    assert_eq!(r.cycles, 9);
    // Core 0 stores 0 at 6; core 1's load waits until 7 and sees the 0.
    let img = pair(st(8, 1, 9), vec![ld(8, 1, 10), ready()]);
    let r = run_ok(mk, &img, &memory(&[(0, 0x99)]), &banked());
    assert_eq!(&stalls(&r)[..2], &[0, 1]);
    assert_eq!(r.registers[1][10], 0x00);
}

pub fn ld_sync_multicasts_with_ld<B: Backend>(mk: Mk<B>) {
    // Core 0 ld 0x000 and core 1 ld_sync 0x000 in cycle 6: both reads of one byte.
    let img = pair(
        ld(8, 1, 10),
        vec![ld_sync(8, 1, 10), st_sync(8, 1, 10), ready()],
    );
    let r = run_ok(mk, &img, &[], &banked());
    assert_eq!(r.stalls, 0);
    assert_eq!(r.cycles, 9);
    // With core 1's ld_sync on 0x001 (r0 = 1 as the low byte) it is another row: 1 stall.
    let img = pair(
        ld(0, 1, 10),
        vec![ld_sync(0, 1, 10), st_sync(0, 1, 10), ready()],
    );
    let r = run_ok(mk, &img, &[], &banked());
    assert_eq!(&stalls(&r)[..2], &[0, 1]);
    assert_eq!(r.cores[1].bank_stalls, 1);
    assert_eq!(r.cycles, 10);
}

pub fn lock_stall_is_decided_before_bank_conflict<B: Backend>(mk: Mk<B>) {
    // Core 0: ld_sync 0x000 at 6, set_const 7, st_sync 8, ready 9. Core 1 (R0 = 1): ld
    // 0x000 at 6 is a lock stall (not a bank stall); core 0 closes at 8 and core 1 retries
    // in 8, where the bank already served core 0's st_sync: a bank stall. It loads at 9 (the
    // 0x5A written) and is ready at 10.
    let mut body = vec![
        bnz(0, 5),
        ld_sync(8, 1, 10),
        set_const(0x5A, 12),
        st_sync(8, 1, 12),
        ready(),
    ];
    body.extend([ld(8, 1, 11), ready()]);
    let img = Image::new().group(cf(0b11).r0(1, 1), &[&body]);
    let r = run_ok(mk, &img, &[], &banked());
    assert_eq!(
        (r.cores[1].lock_stalls, r.cores[1].bank_stalls),
        (2, 1),
        "lock stalls 6, 7; bank stall 8"
    );
    assert_eq!(r.registers[1][11], 0x5A);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 10)]);
    // Model off: the retry in 8 proceeds.
    let r = run_ok(mk, &img, &[], &in_order());
    assert_eq!((r.cores[1].lock_stalls, r.cores[1].bank_stalls), (2, 0));
    assert_eq!(r.registers[1][11], 0x5A);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 9)]);
}
