//! Every instruction at its edge values, address formation, and the core state rules
//! (registers persist across tasks, R0 init, IP 0 at task start, the end of a core's part).
//!
//! Two-operand cases run sixteen at a time: core i loads its operands x, y from M[2i] and
//! M[2i+1] (R0 is initialised to 2i by the control frame) and executes `op r8, r9, r10`.
//! Expected values come from hand tables and from the plain reference functions below.

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::Instr;

/// Operands that cover every wrap and sign boundary of an 8-bit value.
const EDGES: [u8; 9] = [0x00, 0x01, 0x02, 0x07, 0x7F, 0x80, 0x81, 0xFE, 0xFF];

/// Run `op r8, r9, r10` (any instruction reading r8, r9) for each pair; returns each case's
/// final register file.
fn eval_pairs<B: Backend>(mk: Mk<B>, op: Instr, pairs: &[(u8, u8)]) -> Vec<[u8; 16]> {
    let mut out = Vec::new();
    for chunk in pairs.chunks(16) {
        let mut mem = vec![0u8; 32];
        let mut control = cf(0);
        for (i, &(x, y)) in chunk.iter().enumerate() {
            mem[2 * i] = x;
            mem[2 * i + 1] = y;
            control.active |= 1 << i;
            control = control.r0(i, 2 * i as u8);
        }
        let body = [
            ld(0, 1, 8),      // r8 = M[{r1, r0}] = M[2i]   (r1 is 0)
            set_const(1, 12), // r12 = 1
            add(0, 12, 13),   // r13 = 2i + 1
            ld(13, 1, 9),     // r9 = M[2i + 1]
            op,               // the instruction under test
            ready(),
        ];
        let r = run_ok(
            mk,
            &Image::new().group(control, &[&body]),
            &mem,
            &in_order(),
        );
        out.extend(r.registers[..chunk.len()].iter().copied());
    }
    out
}

/// Every pair of EDGES.
fn grid() -> Vec<(u8, u8)> {
    EDGES
        .iter()
        .flat_map(|&x| EDGES.iter().map(move |&y| (x, y)))
        .collect()
}

/// Check hand-worked (x, y, r10) triples and the whole grid against `reference`.
fn check_binary<B: Backend>(
    mk: Mk<B>,
    op: Instr,
    hand: &[(u8, u8, u8)],
    reference: fn(u8, u8) -> u8,
) {
    let pairs: Vec<(u8, u8)> = hand.iter().map(|&(x, y, _)| (x, y)).collect();
    for (regs, &(x, y, want)) in eval_pairs(mk, op, &pairs).iter().zip(hand) {
        assert_eq!(regs[10], want, "{op}: x={x:#04x} y={y:#04x}");
        assert_eq!(
            (regs[8], regs[9]),
            (x, y),
            "{op} must not touch its sources"
        );
    }
    let g = grid();
    for (regs, &(x, y)) in eval_pairs(mk, op, &g).iter().zip(&g) {
        assert_eq!(regs[10], reference(x, y), "{op}: x={x:#04x} y={y:#04x}");
    }
}

// Plain reference functions, written from decisions.md with integer arithmetic.
fn ref_add(x: u8, y: u8) -> u8 {
    ((u32::from(x) + u32::from(y)) % 256) as u8
}
fn ref_sub(x: u8, y: u8) -> u8 {
    ((256 + u32::from(x) - u32::from(y)) % 256) as u8
}
// Written as the rule reads, not as the emulator computes it (checked_div).
#[allow(clippy::manual_checked_ops)]
fn ref_div(x: u8, y: u8) -> u8 {
    if y == 0 {
        0xFF
    } else {
        x / y
    }
}
fn ref_cmpge(x: u8, y: u8) -> u8 {
    if u32::from(x) >= u32::from(y) {
        1
    } else {
        0
    }
}

pub fn add_wraps<B: Backend>(mk: Mk<B>) {
    let hand = [
        (0x00, 0x00, 0x00),
        (0x01, 0x02, 0x03),
        (0x7F, 0x01, 0x80),
        (0xF0, 0x20, 0x10),
        (0xFF, 0x01, 0x00),
        (0x80, 0x80, 0x00),
        (0xFF, 0xFF, 0xFE),
    ];
    check_binary(mk, add(8, 9, 10), &hand, ref_add);
}

pub fn sub_wraps<B: Backend>(mk: Mk<B>) {
    let hand = [
        (0x05, 0x05, 0x00),
        (0x05, 0x03, 0x02),
        (0x01, 0x02, 0xFF),
        (0x00, 0xFF, 0x01),
        (0x10, 0x20, 0xF0),
        (0x80, 0x01, 0x7F),
        (0x00, 0x80, 0x80),
    ];
    check_binary(mk, sub(8, 9, 10), &hand, ref_sub);
}

pub fn div_unsigned_and_by_zero<B: Backend>(mk: Mk<B>) {
    let hand = [
        (0x07, 0x00, 0xFF),
        (0x00, 0x00, 0xFF),
        (0xC8, 0x07, 0x1C), // 200 / 7 = 28
        (0x03, 0x04, 0x00),
        (0xFF, 0x01, 0xFF),
        (0xFF, 0xFF, 0x01),
        (0x80, 0x02, 0x40), // unsigned: 128 / 2 = 64, not -64
        (0xFE, 0x7F, 0x02),
    ];
    check_binary(mk, div(8, 9, 10), &hand, ref_div);
}

pub fn cmpge_unsigned<B: Backend>(mk: Mk<B>) {
    let hand = [
        (0x05, 0x05, 1),
        (0x04, 0x05, 0),
        (0x06, 0x05, 1),
        (0x80, 0x7F, 1), // signed compare would say 0
        (0x7F, 0x80, 0),
        (0x00, 0xFF, 0),
        (0xFF, 0x00, 1),
        (0x00, 0x00, 1),
    ];
    check_binary(mk, cmpge(8, 9, 10), &hand, ref_cmpge);
}

pub fn and_or_xor<B: Backend>(mk: Mk<B>) {
    check_binary(
        mk,
        and(8, 9, 10),
        &[(0xF0, 0x3C, 0x30), (0xFF, 0x00, 0x00), (0xA5, 0xFF, 0xA5)],
        |x, y| x & y,
    );
    check_binary(
        mk,
        or(8, 9, 10),
        &[(0xF0, 0x3C, 0xFC), (0x00, 0x00, 0x00), (0xA5, 0x5A, 0xFF)],
        |x, y| x | y,
    );
    check_binary(
        mk,
        xor(8, 9, 10),
        &[(0xF0, 0x3C, 0xCC), (0xFF, 0xFF, 0x00), (0xA5, 0xFF, 0x5A)],
        |x, y| x ^ y,
    );
}

pub fn mul_writes_low_and_high<B: Backend>(mk: Mk<B>) {
    // (x, y, low -> r10, high -> r11)
    let hand = [
        (0xFF, 0xFF, 0x01, 0xFE), // 65025 = 0xFE01
        (0xC8, 0x03, 0x58, 0x02), // 600 = 0x0258
        (0x10, 0x10, 0x00, 0x01), // 256
        (0x00, 0xFF, 0x00, 0x00),
        (0x0F, 0x11, 0xFF, 0x00), // 255
        (0x80, 0x02, 0x00, 0x01),
    ];
    let pairs: Vec<(u8, u8)> = hand.iter().map(|&(x, y, _, _)| (x, y)).collect();
    for (regs, &(x, y, lo, hi)) in eval_pairs(mk, mul(8, 9, 10), &pairs).iter().zip(&hand) {
        assert_eq!((regs[10], regs[11]), (lo, hi), "mul {x:#04x} * {y:#04x}");
    }
    let g = grid();
    for (regs, &(x, y)) in eval_pairs(mk, mul(8, 9, 10), &g).iter().zip(&g) {
        let p = u32::from(x) * u32::from(y);
        assert_eq!(
            (regs[10], regs[11]),
            ((p % 256) as u8, (p / 256) as u8),
            "mul {x:#04x} * {y:#04x}"
        );
    }
}

pub fn mul_into_r15_writes_r0<B: Backend>(mk: Mk<B>) {
    // 0xC8 * 0x03 = 0x0258: r15 = 0x58, r0 = 0x02 (R0 was initialised to 0x77 first).
    let img = Image::new().group(
        cf(1).r0(0, 0x77),
        &[&[
            set_const(0xC8, 8),
            set_const(0x03, 9),
            mul(8, 9, 15),
            ready(),
        ]],
    );
    let r = simple(mk, &img);
    assert_eq!(r.registers[0][15], 0x58);
    assert_eq!(r.registers[0][0], 0x02);
}

pub fn mul_reads_sources_before_writing<B: Backend>(mk: Mk<B>) {
    // 0x10 * 0x20 = 0x0200. `mul r8, r9, r8` writes r8 = 0x00, r9 = 0x02.
    // `mul r12, r13, r11` writes r11 = 0x00 and r12 (a source) = 0x02.
    let img = Image::new().group(
        cf(1),
        &[&[
            set_const(0x10, 8),
            set_const(0x20, 9),
            mul(8, 9, 8),
            set_const(0x10, 12),
            set_const(0x20, 13),
            mul(12, 13, 11),
            ready(),
        ]],
    );
    let r = simple(mk, &img);
    assert_eq!((r.registers[0][8], r.registers[0][9]), (0x00, 0x02));
    assert_eq!((r.registers[0][11], r.registers[0][12]), (0x00, 0x02));
    assert_eq!(r.registers[0][13], 0x20);
}

pub fn shifts_take_an_immediate<B: Backend>(mk: Mk<B>) {
    // 0xA5 = 1010_0101, shifted by k = 0..7, worked by hand.
    let right = [0xA5, 0x52, 0x29, 0x14, 0x0A, 0x05, 0x02, 0x01];
    let left = [0xA5, 0x4A, 0x94, 0x28, 0x50, 0xA0, 0x40, 0x80];
    for k in 0..8u8 {
        // Core 5: r0..r7 hold the core id 5 (set_const with d < 8), so if the field were a
        // register number, every shift would be by 5.
        let mut body = vec![set_const(0xA5, 8)];
        body.extend((0..8).map(|d| set_const(0, d)));
        body.extend([rshft(8, k, 10), lshft(8, k, 11), ready()]);
        let r = simple(mk, &Image::new().group(cf(1 << 5), &[&body]));
        assert_eq!(r.registers[5][10], right[usize::from(k)], "rshft by {k}");
        assert_eq!(r.registers[5][11], left[usize::from(k)], "lshft by {k}");
    }
}

pub fn shift_ignores_bit3_of_its_field<B: Backend>(mk: Mk<B>) {
    // Raw words: opc, a = r8, b = field, c. Field 9 -> k 1, 8 -> k 0, 15 -> k 7, 12 -> k 4.
    let img = Image::new().control(cf(1).ifs(1)).words(&[
        0xCA58, // set_const 0xA5, r8
        0x689A, // rshft r8, field 9, r10
        0x688B, // rshft r8, field 8, r11
        0x68FC, // rshft r8, field 15, r12
        0x78CD, // lshft r8, field 12, r13
        0x789E, // lshft r8, field 9, r14
        0xF000, // ready
    ]);
    let r = simple(mk, &img);
    let g = r.registers[0];
    assert_eq!(g[10], 0x52);
    assert_eq!(g[11], 0xA5);
    assert_eq!(g[12], 0x01);
    assert_eq!(g[13], 0x50);
    assert_eq!(g[14], 0x4A);
}

pub fn set_const_both_modes<B: Backend>(mk: Mk<B>) {
    let mut body: Vec<Instr> = (0..8).map(|d| set_const(0xAB, d)).collect();
    body.extend([
        set_const(0xAB, 8),
        set_const(0x00, 9),
        set_const(0x5C, 12),
        set_const(0xFF, 15),
        ready(),
    ]);
    let r = simple(mk, &Image::new().group(cf(0xFFFF), &[&body]));
    for (id, g) in r.registers.iter().enumerate() {
        assert_eq!(
            &g[..8],
            &[id as u8; 8],
            "core {id}: r0..r7 hold the core id"
        );
        assert_eq!((g[8], g[9], g[12], g[15]), (0xAB, 0x00, 0x5C, 0xFF));
        assert_eq!((g[10], g[11], g[13], g[14]), (0, 0, 0, 0));
    }
}

pub fn bnz_not_taken_falls_through<B: Backend>(mk: Mk<B>) {
    // r8 is 0: IP0 bnz (not taken), IP1, IP2, IP3 ready: 4 instructions in cycles 5..8.
    let img = Image::new().group(
        cf(1),
        &[&[bnz(8, 2), set_const(0x11, 9), set_const(0x22, 10), ready()]],
    );
    let r = simple(mk, &img);
    assert_eq!((r.registers[0][9], r.registers[0][10]), (0x11, 0x22));
    assert_eq!(r.instructions, 4);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 8)]);
    assert_eq!(r.cycles, 9);
}

pub fn bnz_taken_jumps<B: Backend>(mk: Mk<B>) {
    // r8 = 1: set_const, bnz -> IP3 (skips IP2), set_const, ready: 4 instructions, 5..8.
    let img = Image::new().group(
        cf(1),
        &[&[
            set_const(1, 8),
            bnz(8, 3),
            set_const(0x11, 9),
            set_const(0x22, 10),
            ready(),
        ]],
    );
    let r = simple(mk, &img);
    assert_eq!((r.registers[0][9], r.registers[0][10]), (0x00, 0x22));
    assert_eq!(r.instructions, 4);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 8)]);
}

pub fn bnz_backward_loop<B: Backend>(mk: Mk<B>) {
    // r8 = 3, r9 = 1; IP2 sub, IP3 bnz -> 2 runs three times; 2 + 3*2 + 1 = 9 instructions.
    let img = Image::new().group(
        cf(1),
        &[&[
            set_const(3, 8),
            set_const(1, 9),
            sub(8, 9, 8),
            bnz(8, 2),
            ready(),
        ]],
    );
    let r = simple(mk, &img);
    assert_eq!(r.registers[0][8], 0);
    assert_eq!(r.instructions, 9);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 13)]);
    assert_eq!(r.cycles, 14);
}

pub fn cores_leaving_a_loop_keep_their_registers<B: Backend>(mk: Mk<B>) {
    // Core k loops k + 1 times, counting in r9, then leaves by `ready` while the cores with
    // more trips go on writing r8 and r9. 4 + 3 (k + 1) + 1 = 3k + 8 instructions, from
    // cycle 5 to 3k + 12.
    let img = Image::new().group(
        cf(0xFFFF),
        &[&[
            set_const(0, 1), // r1 = core id
            set_const(1, 14),
            xor(9, 9, 9),
            add(1, 14, 8), // r8 = id + 1 trips
            add(9, 14, 9), // IP 4: r9 += 1
            sub(8, 14, 8),
            bnz(8, 4),
            ready(),
        ]],
    );
    let r = simple(mk, &img);
    for k in 0..16 {
        assert_eq!(
            r.registers[k][9],
            k as u8 + 1,
            "core {k} counted its own trips"
        );
        assert_eq!(r.registers[k][8], 0, "core {k}");
        assert_eq!(r.registers[k][1], k as u8, "core {k}");
    }
    assert_eq!(instructions(&r), std::array::from_fn(|k| 3 * k as u64 + 8));
    assert_eq!(timeline(&r), vec![(1, 1, 5, 57)]);
    assert_eq!(r.cycles, 58);
}

pub fn bnz_ignores_low_bits<B: Backend>(mk: Mk<B>) {
    // 0xE83F: bnz r8 -> 3 with bits 3:0 = 0xF (ignored).
    let img = Image::new().control(cf(1).ifs(1)).words(&[
        0xC018, // set_const 0x01, r8
        0xE83F, // bnz 3, r8
        0xC119, // set_const 0x11, r9 (skipped)
        0xF000, // ready
    ]);
    let r = simple(mk, &img);
    assert_eq!(r.registers[0][9], 0);
    assert_eq!(r.instructions, 3);
}

pub fn bnz_at_ip15_taken_loops_not_taken_ends<B: Backend>(mk: Mk<B>) {
    // IP0 r8 = 3, IP1 r9 = 1, IP2..IP13 nop, IP14 sub, IP15 bnz -> 14.
    // 14 instructions, then (sub, bnz) three times; the third bnz is not taken and, being
    // at IP 15, ends the part: 14 + 6 = 20 instructions in cycles 5..24.
    let mut body = vec![set_const(3, 8), set_const(1, 9)];
    body.extend(vec![nop(); 12]);
    body.extend([sub(8, 9, 8), bnz(8, 14)]);
    assert_eq!(body.len(), 16);
    let r = simple(mk, &Image::new().group(cf(1), &[&body]));
    assert_eq!(r.registers[0][8], 0);
    assert_eq!(r.instructions, 20);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 24)]);
    assert_eq!(r.cycles, 25);
}

pub fn ready_ends_the_part<B: Backend>(mk: Mk<B>) {
    // set_const, ready; the set_const after ready never runs. 2 instructions, end 6.
    let img = Image::new().group(
        cf(1),
        &[&[set_const(1, 8), ready(), set_const(2, 8), set_const(3, 9)]],
    );
    let r = simple(mk, &img);
    assert_eq!((r.registers[0][8], r.registers[0][9]), (1, 0));
    assert_eq!(r.instructions, 2);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 6)]);
    assert_eq!(r.cycles, 7);
}

pub fn part_ends_after_ip15<B: Backend>(mk: Mk<B>) {
    // 15 nops and a set_const at IP15: 16 instructions in cycles 5..20.
    let mut body = vec![nop(); 15];
    body.push(set_const(0x3C, 10));
    let r = simple(mk, &Image::new().group(cf(1), &[&body]));
    assert_eq!(r.registers[0][10], 0x3C);
    assert_eq!(r.instructions, 16);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 20)]);
    assert_eq!(r.cycles, 21);
}

pub fn nop_ignores_operand_bits<B: Backend>(mk: Mk<B>) {
    let img = Image::new()
        .control(cf(1).ifs(1))
        .words(&[0x0FFF, 0x0123, 0x0ABC, 0xF000]);
    let r = simple(mk, &img);
    assert_eq!(r.registers[0], [0u8; 16]);
    assert!(r.memory.iter().all(|&b| b == 0));
    assert_eq!(r.instructions, 4);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 8)]);
}

pub fn address_uses_low_nibble_of_r0_to_r3<B: Backend>(mk: Mk<B>) {
    // R0 = 0x35: only its low nibble (5) selects the bank; the low byte is r8 = 0x67.
    // Decoy at 0x367 catches a high register that uses the wrong nibble.
    let mem = memory(&[(0x567, 0x99), (0x367, 0x33), (0x067, 0x11)]);
    let img = Image::new().group(
        cf(1).r0(0, 0x35),
        &[&[
            set_const(0x67, 8),
            add(0, 15, 1), // r1 = r0 (r15 is 0)
            add(0, 15, 2),
            add(0, 15, 3),
            ld(8, 0, 9),
            ld(8, 1, 10),
            ld(8, 2, 11),
            ld(8, 3, 12),
            set_const(0xC4, 13),
            st(13, 2, 9), // M[0x5C4] = 0x99
            ready(),
        ]],
    );
    let r = run_ok(mk, &img, &mem, &in_order());
    let g = r.registers[0];
    assert_eq!((g[9], g[10], g[11], g[12]), (0x99, 0x99, 0x99, 0x99));
    assert_eq!(r.memory[0x5C4], 0x99);
    assert_eq!(r.memory[0x367], 0x33);
    // The memory image is bank-major: byte i of the image is address i.
    assert_eq!(r.memory[0x567], 0x99);
}

pub fn memory_image_shorter_than_sm_is_zero_filled<B: Backend>(mk: Mk<B>) {
    // A 3-byte image; the load of 0x002 sees it and 0xFFF is zero.
    let img = Image::new().group(
        cf(1).r0(0, 0x0F),
        &[&[
            set_const(0x02, 8),
            ld(8, 1, 9), // r1 = 0: address 0x002
            set_const(0xFF, 10),
            ld(10, 0, 11), // address 0xFFF
            ready(),
        ]],
    );
    let r = run_ok(mk, &img, &[1, 2, 3], &in_order());
    assert_eq!((r.registers[0][9], r.registers[0][11]), (3, 0));
    assert_eq!(&r.memory[..4], &[1, 2, 3, 0]);
    assert_eq!(r.memory.len(), 4096);
}

pub fn registers_persist_across_tasks<B: Backend>(mk: Mk<B>) {
    // Task 1 sets r8 = 7 on core 3; task 2 (same group) doubles it; task 3 (a new group)
    // adds r8 and r9. Core 4 never runs and keeps zeros.
    let img = Image::new()
        .group(
            cf(1 << 3),
            &[&[set_const(7, 8), ready()], &[add(8, 8, 9), ready()]],
        )
        .group(cf(1 << 3), &[&[add(8, 9, 10), ready()]]);
    let r = simple(mk, &img);
    let g = r.registers[3];
    assert_eq!((g[8], g[9], g[10]), (7, 14, 21));
    assert_eq!(r.registers[4], [0u8; 16]);
    assert_eq!(r.cores[3].tasks, 3);
}

pub fn ip_is_zero_at_task_start<B: Backend>(mk: Mk<B>) {
    // Task 1 ends by ready at IP2; task 2 starts at IP 0 (set_const r9), not IP 3.
    let img = Image::new().group(
        cf(1),
        &[
            &[set_const(1, 8), nop(), ready(), set_const(0x33, 10)],
            &[set_const(2, 9), ready(), nop(), set_const(0x44, 11)],
        ],
    );
    let r = simple(mk, &img);
    let g = r.registers[0];
    assert_eq!((g[8], g[9], g[10], g[11]), (1, 2, 0, 0));
}

pub fn r0_init_needs_both_vectors<B: Backend>(mk: Mk<B>) {
    // Group 1: all cores, R0[i] = 0xA0 + i. Group 2: active {0, 1, 2}, Init_R0_Vect
    // {0, 2, 3} with R0 = 0x10 + i. Only cores 0 and 2 (in both) change.
    let mut g1 = cf(0xFFFF);
    for i in 0..16 {
        g1 = g1.r0(i, 0xA0 + i as u8);
    }
    let g2 = cf(cores(&[0, 1, 2])).r0(0, 0x10).r0(2, 0x12).r0(3, 0x13);
    let img = Image::new()
        .group(g1, &[&[ready()]])
        .group(g2, &[&[ready()]]);
    let r = simple(mk, &img);
    let r0: Vec<u8> = r.registers.iter().map(|g| g[0]).collect();
    let mut want: Vec<u8> = (0..16).map(|i| 0xA0 + i as u8).collect();
    want[0] = 0x10;
    want[2] = 0x12;
    assert_eq!(r0, want);
}

pub fn r0_init_without_instruction_frames<B: Backend>(mk: Mk<B>) {
    // A CF with IF_Num = 0 still initialises R0; cores 5 and 9 never run a task.
    let img = Image::new().group(cf(cores(&[5, 9])).r0(5, 0x55).r0(9, 0x99), &[]);
    let r = simple(mk, &img);
    assert_eq!((r.registers[5][0], r.registers[9][0]), (0x55, 0x99));
    assert!(r.tasks.is_empty());
    assert_eq!(r.instructions, 0);
    assert_eq!(r.cycles, 1);
}
