//! The task scheduler and timing model: CF and broadcast latencies, task issue/start/end
//! cycles, the spec's examples 1 and 2 under both issue policies, each fence, core-mask
//! serialisation, R0-init waits, the lookahead rules and window, and the run's cycle count.
//!
//! Notation in the comments: a task is (frame, issue, start, end). A CF processed at t takes
//! cycle t; an IF issued at t is broadcast in t..t+3 and its cores start at t+4; a body of
//! `len(n)` executes n instructions, so a task starting at s ends at s+n-1 and its cores are
//! free from s+n.

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::{Config, Fence, Timing};

type Row = (usize, u64, u64, u64);

fn check<B: Backend>(mk: Mk<B>, img: &Image, config: &Config, tasks: &[Row], cycles: u64) {
    let r = run_ok(mk, img, &[], config);
    assert_eq!(timeline(&r), tasks, "tasks (frame, issue, start, end)");
    assert_eq!(r.cycles, cycles, "run cycles");
}

pub fn single_task_timing<B: Backend>(mk: Mk<B>) {
    // CF at 0, broadcast 1..4, ready at 5; the run's last activity is cycle 5.
    let img = Image::new().group(cf(1), &[&[ready()]]);
    let r = simple(mk, &img);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 5)]);
    assert_eq!(r.cycles, 6);
    assert_eq!(r.instructions, 1);
    assert_eq!(r.tasks[0].mask, 1);
    assert_eq!(r.tasks[0].fence, Fence::No);
}

/// The spec's examples: CF0(4 IFs, 0x0F0F, fence0), IF0..IF3 of 10 instructions,
/// CF1(2 IFs, 0xF0F0, acq), IF4, IF5 of 3 instructions. Frames: CF0 0, IF0..IF3 1..4,
/// CF1 5, IF4 6, IF5 7.
fn example(fence0: Fence) -> Image {
    let a = len(10);
    let b = len(3);
    Image::new()
        .group(cf(0x0F0F).fence(fence0), &[&a, &a, &a, &a])
        .group(cf(0xF0F0).fence(Fence::Acq), &[&b, &b])
}

/// Example 1 (CF0 acq) is strictly serial under both policies: each IF waits for the
/// previous one (same cores, and the acq task must finish); CF1 waits for IF3 (acq).
const EXAMPLE1: [Row; 6] = [
    (1, 1, 5, 14),
    (2, 15, 19, 28),
    (3, 29, 33, 42),
    (4, 43, 47, 56),
    // CF1 at 57 (IF3, acq, ended 56)
    (6, 58, 62, 64),
    // IF5 waits for IF4 (acq, and the same cores)
    (7, 65, 69, 71),
];

pub fn example1_in_order<B: Backend>(mk: Mk<B>) {
    check(mk, &example(Fence::Acq), &in_order(), &EXAMPLE1, 72);
}

pub fn example1_lookahead<B: Backend>(mk: Mk<B>) {
    check(mk, &example(Fence::Acq), &lookahead(), &EXAMPLE1, 72);
}

pub fn example2_in_order<B: Backend>(mk: Mk<B>) {
    // IF0..IF3 serial as in example 1. IF3 is broadcast 43..46, so CF1 is processed at 47
    // (fence no: nothing to wait for) and IF4 (disjoint cores) is issued at 48: it runs
    // 52..54 while IF3 runs 47..56. IF5 waits for IF4 (acq, same cores): 55.
    check(
        mk,
        &example(Fence::No),
        &in_order(),
        &[
            (1, 1, 5, 14),
            (2, 15, 19, 28),
            (3, 29, 33, 42),
            (4, 43, 47, 56),
            (6, 48, 52, 54),
            (7, 55, 59, 61),
        ],
        62,
    );
}

pub fn example2_lookahead<B: Backend>(mk: Mk<B>) {
    // At 5 IF1 waits for its cores (free at 15); it has no fence, so the TS looks past it
    // (and IF2, IF3) to CF1, processed at 5. IF4 (disjoint from the waiting 0x0F0F) is
    // issued at 6 and runs 10..12. IF5 waits for the acq IF4: issued 13, runs 17..19.
    // IF1 goes at 17 (TS busy broadcasting IF5 until 16), then IF2, IF3 back to back.
    check(
        mk,
        &example(Fence::No),
        &lookahead(),
        &[
            (1, 1, 5, 14),
            (6, 6, 10, 12),
            (7, 13, 17, 19),
            (2, 17, 21, 30),
            (3, 31, 35, 44),
            (4, 45, 49, 58),
        ],
        59,
    );
}

pub fn lookahead_acq_blocks_only_later_frames<B: Backend>(mk: Mk<B>) {
    // Example 2 with every IF 3 instructions long. IF0 runs 5..7; CF1 at 5; the acq IF4 is
    // issued at 6 (runs 10..12). IF1, earlier in program order than IF4, is not held back by
    // it: issued at 10 (cores free since 8). IF5 is: it waits for IF4 (13) and goes at 14.
    let b = len(3);
    let img = Image::new()
        .group(cf(0x0F0F), &[&b, &b, &b, &b])
        .group(cf(0xF0F0).fence(Fence::Acq), &[&b, &b]);
    check(
        mk,
        &img,
        &lookahead(),
        &[
            (1, 1, 5, 7),
            (6, 6, 10, 12),
            (2, 10, 14, 16),
            (7, 14, 18, 20),
            (3, 18, 22, 24),
            (4, 25, 29, 31),
        ],
        32,
    );
}

/// Group A on core 0 (10 instructions) with fence `fa`, then group B on core 1 (3
/// instructions) with fence `fb`. Frames: CF 0, IF 1, CF 2, IF 3.
fn two_groups(fa: Fence, fb: Fence) -> Image {
    Image::new()
        .group(cf(1).fence(fa), &[&len(10)])
        .group(cf(2).fence(fb), &[&len(3)])
}

pub fn fence_no_lets_disjoint_tasks_overlap<B: Backend>(mk: Mk<B>) {
    // CF2 at 5 (right after IF1's broadcast), IF3 issued at 6 while IF1 runs.
    for config in [in_order(), lookahead()] {
        check(
            mk,
            &two_groups(Fence::No, Fence::No),
            &config,
            &[(1, 1, 5, 14), (3, 6, 10, 12)],
            15,
        );
    }
}

pub fn fence_acq_blocks_every_later_frame<B: Backend>(mk: Mk<B>) {
    // IF1 (acq) ends at 14: CF2 is processed only at 15, IF3 issued at 16.
    for config in [in_order(), lookahead()] {
        check(
            mk,
            &two_groups(Fence::Acq, Fence::No),
            &config,
            &[(1, 1, 5, 14), (3, 16, 20, 22)],
            23,
        );
    }
}

pub fn fence_acq_does_not_wait_for_earlier_tasks<B: Backend>(mk: Mk<B>) {
    // Core 0: IF1 (no fence, 1..14). Core 1: IF3 acq, issued at 6 while IF1 runs, ends 12.
    // Core 2: CF4 waits for the acq IF3 only: processed at 13, IF5 issued at 14.
    let img = Image::new()
        .group(cf(1), &[&len(10)])
        .group(cf(2).fence(Fence::Acq), &[&len(3)])
        .group(cf(4), &[&len(3)]);
    for config in [in_order(), lookahead()] {
        check(
            mk,
            &img,
            &config,
            &[(1, 1, 5, 14), (3, 6, 10, 12), (5, 14, 18, 20)],
            21,
        );
    }
}

pub fn fence_rel_waits_for_every_earlier_task<B: Backend>(mk: Mk<B>) {
    // CF2 is processed at 5, but the rel IF3 waits until IF1 (disjoint cores) ends at 14.
    for config in [in_order(), lookahead()] {
        check(
            mk,
            &two_groups(Fence::No, Fence::Rel),
            &config,
            &[(1, 1, 5, 14), (3, 15, 19, 21)],
            22,
        );
    }
}

pub fn fence_rel_does_not_hold_back_later_tasks<B: Backend>(mk: Mk<B>) {
    // A rel task with nothing before it is issued at once; the next group overlaps it.
    for config in [in_order(), lookahead()] {
        check(
            mk,
            &two_groups(Fence::Rel, Fence::No),
            &config,
            &[(1, 1, 5, 14), (3, 6, 10, 12)],
            15,
        );
    }
}

pub fn fence_rel_applies_to_each_if_of_the_group<B: Backend>(mk: Mk<B>) {
    // IF3 (rel) waits for IF1: 15. IF4 (rel) waits for IF3: 22.
    let img = Image::new()
        .group(cf(1), &[&len(10)])
        .group(cf(2).fence(Fence::Rel), &[&len(3), &len(3)]);
    check(
        mk,
        &img,
        &in_order(),
        &[(1, 1, 5, 14), (3, 15, 19, 21), (4, 22, 26, 28)],
        29,
    );
}

pub fn same_mask_serialises<B: Backend>(mk: Mk<B>) {
    // Two IFs on cores {0, 1}: the second is broadcast only once both cores are free (10).
    let img = Image::new().group(cf(0b11), &[&len(5), &len(2)]);
    check(mk, &img, &in_order(), &[(1, 1, 5, 9), (2, 10, 14, 15)], 16);
}

pub fn overlapping_masks_serialise_disjoint_do_not<B: Backend>(mk: Mk<B>) {
    // {0,1} then {1,2}: the shared core 1 is free at 10. {0,1} then {2,3}: issued at 6.
    let overlap = Image::new()
        .group(cf(0b0011), &[&len(5)])
        .group(cf(0b0110), &[&len(2)]);
    check(
        mk,
        &overlap,
        &in_order(),
        &[(1, 1, 5, 9), (3, 10, 14, 15)],
        16,
    );
    let disjoint = Image::new()
        .group(cf(0b0011), &[&len(5)])
        .group(cf(0b1100), &[&len(2)]);
    check(
        mk,
        &disjoint,
        &in_order(),
        &[(1, 1, 5, 9), (3, 6, 10, 11)],
        12,
    );
}

pub fn a_core_is_free_after_its_own_part<B: Backend>(mk: Mk<B>) {
    // Task 1 on {0, 1}: core 1 (R0 = 1) jumps straight to ready and ends at 6; core 0 runs
    // 4 instructions and ends at 8 (the task's end). Task 3 on core 1 alone is issued at 7.
    let img = Image::new()
        .group(cf(0b11).r0(1, 1), &[&[bnz(0, 3), nop(), nop(), ready()]])
        .group(cf(0b10), &[&[ready()]]);
    let r = simple(mk, &img);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 8), (3, 7, 11, 11)]);
    assert_eq!(r.cycles, 12);
    assert_eq!((r.cores[0].instructions, r.cores[1].instructions), (4, 3));
}

pub fn empty_mask_task<B: Backend>(mk: Mk<B>) {
    // An IF with no cores is broadcast 1..4; its start = end = 4 (the last broadcast cycle).
    let alone = Image::new().group(cf(0), &[&[ready()]]);
    check(mk, &alone, &in_order(), &[(1, 1, 4, 4)], 5);
    // Even with fence acq it is finished at 4, so CF2 is processed at 5 and IF3 issued at 6.
    let then = Image::new()
        .group(cf(0).fence(Fence::Acq), &[&[ready()]])
        .group(cf(1), &[&[ready()]]);
    let r = simple(mk, &then);
    assert_eq!(timeline(&r), vec![(1, 1, 4, 4), (3, 6, 10, 10)]);
    assert_eq!(r.cycles, 11);
    assert_eq!(r.instructions, 1);
}

pub fn cf_r0_init_waits_for_its_cores<B: Backend>(mk: Mk<B>) {
    // IF1 on core 0 runs 5..20 and copies R0 into r8 at IP15 (cycle 20). CF2 initialises
    // core 0's R0 to 0x42, so it waits until core 0 is free: 21. IF3 issued at 22.
    let mut long = vec![nop(); 15];
    long.push(add(0, 15, 8));
    let img = Image::new()
        .group(cf(1), &[&long])
        .group(cf(1).r0(0, 0x42), &[&[add(0, 15, 9), ready()]]);
    let r = simple(mk, &img);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 20), (3, 22, 26, 27)]);
    assert_eq!(r.cycles, 28);
    assert_eq!((r.registers[0][8], r.registers[0][9]), (0x00, 0x42));
    // Without the init, CF2 is processed at 5 and IF3 waits only for core 0: issued at 21.
    let img = Image::new()
        .group(cf(1), &[&long])
        .group(cf(1), &[&[add(0, 15, 9), ready()]]);
    let r = simple(mk, &img);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 20), (3, 21, 25, 26)]);
}

pub fn cf_r0_init_waits_only_for_initialised_cores<B: Backend>(mk: Mk<B>) {
    // CF2 is active on core 2 with Init_R0_Vect {0, 2}: only core 2 is initialised, so it
    // does not wait for the busy core 0 (processed at 5), and core 0's R0 stays 0.
    let img = Image::new()
        .group(cf(1), &[&len(16)])
        .group(cf(1 << 2).r0(0, 0x50).r0(2, 0x52), &[&[ready()]]);
    let r = simple(mk, &img);
    assert_eq!(timeline(&r), vec![(1, 1, 5, 20), (3, 6, 10, 10)]);
    assert_eq!((r.registers[0][0], r.registers[2][0]), (0x00, 0x52));
}

pub fn run_cycles_count_a_trailing_cf<B: Backend>(mk: Mk<B>) {
    // A final CF (no IFs) that initialises core 0's R0 waits for IF1 (ends 14): cycle 15 is
    // the last activity, so the run takes 16 cycles.
    let img = Image::new()
        .group(cf(1), &[&len(10)])
        .group(cf(1).r0(0, 9), &[]);
    let r = simple(mk, &img);
    assert_eq!(r.cycles, 16);
    assert_eq!(r.registers[0][0], 9);
    // Without the init it is processed at 5 and the run ends with IF1: 15 cycles.
    let img = Image::new().group(cf(1), &[&len(10)]).group(cf(1), &[]);
    assert_eq!(simple(mk, &img).cycles, 15);
}

pub fn lookahead_passes_a_waiting_unfenced_if<B: Backend>(mk: Mk<B>) {
    // Core 0: IF1 (10), IF2 (3). Core 1: IF4 (3).
    let img = Image::new()
        .group(cf(1), &[&len(10), &len(3)])
        .group(cf(2), &[&len(3)]);
    // In order: IF2 at 15 (core 0 free), CF3 at 19, IF4 at 20.
    check(
        mk,
        &img,
        &in_order(),
        &[(1, 1, 5, 14), (2, 15, 19, 21), (4, 20, 24, 26)],
        27,
    );
    // Lookahead: IF2 waits; CF3 at 5, IF4 at 6; IF2 at 15.
    check(
        mk,
        &img,
        &lookahead(),
        &[(1, 1, 5, 14), (4, 6, 10, 12), (2, 15, 19, 21)],
        22,
    );
}

pub fn lookahead_does_not_pass_a_fenced_frame<B: Backend>(mk: Mk<B>) {
    // As in `lookahead_passes_a_waiting_unfenced_if` but group 1 is rel: the waiting IF2
    // (rel, waits for IF1) has a fence, so nothing passes it: CF3 at 19, IF4 at 20, exactly
    // the in-order timeline.
    let img = |fence| {
        Image::new()
            .group(cf(1).fence(fence), &[&len(10), &len(3)])
            .group(cf(2), &[&len(3)])
    };
    check(
        mk,
        &img(Fence::Rel),
        &lookahead(),
        &[(1, 1, 5, 14), (2, 15, 19, 21), (4, 20, 24, 26)],
        27,
    );
    // With acq, CF3 must in addition wait for the acq IF2 to finish (21): CF3 at 22.
    check(
        mk,
        &img(Fence::Acq),
        &lookahead(),
        &[(1, 1, 5, 14), (2, 15, 19, 21), (4, 23, 27, 29)],
        30,
    );
}

pub fn lookahead_never_passes_an_unprocessed_cf<B: Backend>(mk: Mk<B>) {
    // CF2 initialises core 0's R0 and must wait for IF1 (free at 15). CF4 and IF5 (core 1)
    // could run earlier, but the TS does not look past an unprocessed CF.
    let img = Image::new()
        .group(cf(1), &[&len(10)])
        .group(cf(1).r0(0, 1), &[&len(3)])
        .group(cf(2), &[&len(3)]);
    let want = [(1, 1, 5, 14), (3, 16, 20, 22), (5, 21, 25, 27)];
    check(mk, &img, &in_order(), &want, 28);
    check(mk, &img, &lookahead(), &want, 28);
}

pub fn lookahead_needs_disjointness_from_waiting_ifs<B: Backend>(mk: Mk<B>) {
    // IF3 on {0, 1} waits for core 0 (busy with IF1 until 14). IF5 on core 1 finds core 1
    // free but overlaps the waiting IF3, so it goes after it (core 1 free at 22).
    let blocked = Image::new()
        .group(cf(1), &[&len(10)])
        .group(cf(0b11), &[&len(3)])
        .group(cf(0b10), &[&len(3)]);
    check(
        mk,
        &blocked,
        &lookahead(),
        &[(1, 1, 5, 14), (3, 15, 19, 21), (5, 22, 26, 28)],
        29,
    );
    // Control: IF5 on core 2 is disjoint; CF2 at 5, CF4 at 6, IF5 issued at 7.
    let free = Image::new()
        .group(cf(1), &[&len(10)])
        .group(cf(0b11), &[&len(3)])
        .group(cf(0b100), &[&len(3)]);
    check(
        mk,
        &free,
        &lookahead(),
        &[(1, 1, 5, 14), (5, 7, 11, 13), (3, 15, 19, 21)],
        22,
    );
}

pub fn lookahead_waits_for_an_unfinished_task_sharing_its_cores<B: Backend>(mk: Mk<B>) {
    // Task 1 on {0, 1}: core 1 (R0 = 1) jumps to ready and is free at 7; core 0 runs 16
    // instructions (5..20). IF3 on core 0 waits. IF5 on core 1 would pass it, but its core
    // is in the mask of task 1, which is unfinished until 20 (decisions.md: a later IF's
    // cores must be disjoint from every earlier unfinished task). At 21 IF3 goes first
    // (21-24, runs at 25); IF5 is then the oldest frame (CF4 was processed at 6) and goes
    // at 25, running at 29. In-order processes CF4 only after IF3, so IF5 goes at 26.
    let mut split = vec![bnz(0, 15)];
    split.extend(vec![nop(); 14]);
    split.push(ready());
    let img = Image::new()
        .group(cf(0b11).r0(1, 1), &[&split])
        .group(cf(0b01), &[&len(1)])
        .group(cf(0b10), &[&len(1)]);
    check(
        mk,
        &img,
        &lookahead(),
        &[(1, 1, 5, 20), (3, 21, 25, 25), (5, 25, 29, 29)],
        30,
    );
    check(
        mk,
        &img,
        &in_order(),
        &[(1, 1, 5, 20), (3, 21, 25, 25), (5, 26, 30, 30)],
        31,
    );
    // The same stream where task 1 is on core 0 only: IF5 shares no core with it and
    // passes IF3 at 7 (CF2 at 5, CF4 at 6).
    let img = Image::new()
        .group(cf(0b01), &[&split])
        .group(cf(0b01), &[&len(1)])
        .group(cf(0b10), &[&len(1)]);
    check(
        mk,
        &img,
        &lookahead(),
        &[(1, 1, 5, 20), (5, 7, 11, 11), (3, 21, 25, 25)],
        26,
    );
}

pub fn lookahead_cf_init_must_be_disjoint_from_waiting_ifs<B: Backend>(mk: Mk<B>) {
    // IF3 on {0, 1} waits for core 0 and copies R0 to r9. CF4 initialises core 1's R0, which
    // the waiting IF3 will use: CF4 may not go first. So core 1 sees its old R0 (0) in IF3,
    // CF4 waits for core 1 to be free (21) and IF5 sees 0x55.
    let img = Image::new()
        .group(cf(1), &[&len(10)])
        .group(cf(0b11), &[&[add(0, 15, 9), ready()]])
        .group(cf(0b10).r0(1, 0x55), &[&[add(0, 15, 8), ready()]]);
    let r = run_ok(mk, &img, &[], &lookahead());
    assert_eq!(
        timeline(&r),
        vec![(1, 1, 5, 14), (3, 15, 19, 20), (5, 22, 26, 27)]
    );
    assert_eq!(r.cycles, 28);
    assert_eq!((r.registers[1][9], r.registers[1][8]), (0x00, 0x55));
}

pub fn lookahead_rel_waits_for_earlier_unprocessed_frames<B: Backend>(mk: Mk<B>) {
    // Core 0: IF1 (10), IF2 (3, waiting until 15). Group 3 (core 1) is rel: CF3 is processed
    // at 5 but IF4 may go only after IF2 is issued and every task finished: 22.
    let img = Image::new()
        .group(cf(1), &[&len(10), &len(3)])
        .group(cf(2).fence(Fence::Rel), &[&len(3)]);
    check(
        mk,
        &img,
        &lookahead(),
        &[(1, 1, 5, 14), (2, 15, 19, 21), (4, 22, 26, 28)],
        29,
    );
}

pub fn lookahead_earliest_eligible_frame_goes_first<B: Backend>(mk: Mk<B>) {
    // Core 0: IF1 (6, runs 5..10), IF2 (1). Core 1: IF4 (1), IF5 (1).
    // CF3 at 5, IF4 at 6 (runs 10). At 11 both IF2 (core 0) and IF5 (core 1) are eligible:
    // the earlier frame, IF2, goes first; IF5 follows when the TS is free at 15.
    let img = Image::new()
        .group(cf(1), &[&len(6), &len(1)])
        .group(cf(2), &[&len(1), &len(1)]);
    check(
        mk,
        &img,
        &lookahead(),
        &[
            (1, 1, 5, 10),
            (4, 6, 10, 10),
            (2, 11, 15, 15),
            (5, 15, 19, 19),
        ],
        20,
    );
    // In order for contrast.
    check(
        mk,
        &img,
        &in_order(),
        &[
            (1, 1, 5, 10),
            (2, 11, 15, 15),
            (4, 16, 20, 20),
            (5, 21, 25, 25),
        ],
        26,
    );
}

/// Core 0: IF1 loops 203 instructions (runs 5..207), IF2 (1) waits behind it. Then `cfs`
/// control frames with no IFs, then a group on core 1 with one 1-instruction IF.
fn window_image(cfs: usize) -> Image {
    let looping = [
        set_const(100, 8),
        set_const(1, 9),
        sub(8, 9, 8),
        bnz(8, 2),
        ready(),
    ];
    let mut img = Image::new().group(cf(1), &[&looping, &len(1)]);
    for _ in 0..cfs {
        img = img.group(cf(0), &[]);
    }
    img.group(cf(2), &[&len(1)])
}

pub fn lookahead_window_is_64_frames<B: Backend>(mk: Mk<B>) {
    // The oldest unprocessed frame is IF2 (frame 2); the window is frames 2..=65.
    // 61 empty CFs (frames 3..63), CF 64 and its IF at frame 65: inside the window. The 62
    // CFs are processed at 5..66, the IF issued at 67.
    let inside = window_image(61);
    assert_eq!(inside.frames(), 66);
    let r = run_ok(mk, &inside, &[], &lookahead());
    assert_eq!(
        timeline(&r),
        vec![(1, 1, 5, 207), (65, 67, 71, 71), (2, 208, 212, 212)]
    );
    assert_eq!(r.cycles, 213);
    // One more CF: the IF is frame 66, outside the window until IF2 is processed at 208.
    let outside = window_image(62);
    let r = run_ok(mk, &outside, &[], &lookahead());
    assert_eq!(
        timeline(&r),
        vec![(1, 1, 5, 207), (2, 208, 212, 212), (66, 212, 216, 216)]
    );
    assert_eq!(r.cycles, 217);
}

pub fn lookahead_window_of_one_is_in_order<B: Backend>(mk: Mk<B>) {
    let config = Config {
        timing: Timing {
            lookahead_window: 1,
            ..Timing::default()
        },
        ..lookahead()
    };
    let img = Image::new()
        .group(cf(1), &[&len(10), &len(3)])
        .group(cf(2), &[&len(3)]);
    check(
        mk,
        &img,
        &config,
        &[(1, 1, 5, 14), (2, 15, 19, 21), (4, 20, 24, 26)],
        27,
    );
}

pub fn last_task_of_a_tied_end_is_the_one_issued_last<B: Backend>(mk: Mk<B>) {
    // IF1 runs 5..10 (five nops and ready); CF2 at 5; IF3 (one ready) is issued at 6 and
    // runs at 10. Both end in cycle 10: the summary's last task is IF3, issued later,
    // whichever of the two cores is the lower one (engines see the two ends in either order).
    let mut long = vec![nop(); 5];
    long.push(ready());
    for (first, second) in [(1u16 << 1, 1u16), (1, 1 << 1)] {
        let img = Image::new()
            .group(cf(first), &[&long])
            .group(cf(second), &[&[ready()]]);
        let r = run_ok(mk, &img, &[], &in_order());
        assert_eq!(timeline(&r), vec![(1, 1, 5, 10), (3, 6, 10, 10)]);
        let last = r.task_summary.last.expect("a last task");
        assert_eq!(
            (last.frame, last.issue, last.end),
            (3, 6, 10),
            "masks {first:#x}, {second:#x}"
        );
    }
}
