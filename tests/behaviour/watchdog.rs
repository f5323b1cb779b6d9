//! The watchdog: any instruction or scheduler processing in a cycle >= max_cycles stops the
//! run with the list of unfinished cores (frame, IP, running / not started / stalled on which
//! byte held by whom) and the first unprocessed frame. A run of exactly N cycles passes with
//! max_cycles = N and fails with N - 1.

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::{Config, CoreWait, RunError, UnfinishedCore};

fn watchdog(e: RunError) -> (u64, Vec<UnfinishedCore>, Option<usize>) {
    match e {
        RunError::Watchdog {
            limit,
            cores,
            next_frame,
        } => (limit, cores, next_frame),
        other => panic!("expected the watchdog, got {other}"),
    }
}

fn unfinished(core: u8, frame: usize, ip: u8, wait: CoreWait) -> UnfinishedCore {
    UnfinishedCore {
        core,
        frame,
        ip,
        wait,
    }
}

pub fn default_limit_is_2_pow_32<B: Backend>(_mk: Mk<B>) {
    assert_eq!(Config::default().max_cycles, 1 << 32);
}

pub fn register_loop_reports_the_exact_ip<B: Backend>(mk: Mk<B>) {
    // Core 2: IP0 at 5, then IP1 at even cycles and IP2 (bnz -> 1) at odd cycles from 6.
    let img = Image::new().group(cf(1 << 2), &[&[set_const(1, 8), nop(), bnz(8, 1)]]);
    let failure = run(mk, &img, &[], &limited(100)).unwrap_err();
    assert_eq!(
        watchdog(failure.error),
        (100, vec![unfinished(2, 1, 1, CoreWait::Running)], None)
    );
    // Cycles 5..99 executed: 95 instructions; the state's cycle count is the limit.
    assert_eq!(failure.state.instructions, 95);
    assert_eq!(failure.state.cycles, 100);
    let e = run_err(mk, &img, &[], &limited(101));
    assert_eq!(
        watchdog(e),
        (101, vec![unfinished(2, 1, 2, CoreWait::Running)], None)
    );
}

pub fn core_stalled_on_a_looping_holder<B: Backend>(mk: Mk<B>) {
    // Core 0 locks 0x000 at 5 and loops on IP2 from 7; core 1's ld_sync at 5 stalls forever.
    let img = Image::new().group(
        cf(0b11),
        &[&[ld_sync(8, 1, 10), set_const(1, 9), bnz(9, 2)]],
    );
    let e = run_err(mk, &img, &[], &limited(50));
    assert_eq!(
        watchdog(e),
        (
            50,
            vec![
                unfinished(0, 1, 2, CoreWait::Running),
                unfinished(
                    1,
                    1,
                    0,
                    CoreWait::Lock {
                        addr: 0x000,
                        holder: 0,
                        since: 5
                    }
                ),
            ],
            None
        )
    );
}

pub fn waiters_blocked_again_sleep_from_their_retry<B: Backend>(mk: Mk<B>) {
    // Cores 0..3 increment M[0] (IP0 set_const at 5, IP1 ld_sync at 6, add, st_sync, ready).
    // Core 0 wins at 6 and closes at 8; cores 1..3 retry in 8: core 1 wins and closes at 10,
    // cores 2 and 3 stall again and sleep from 8.
    let increment = [
        set_const(1, 11),
        ld_sync(8, 1, 10),
        add(10, 11, 10),
        st_sync(8, 1, 10),
        ready(),
    ];
    let img = Image::new().group(cf(0b1111), &[&increment]);
    let lock = |holder, since| CoreWait::Lock {
        addr: 0x000,
        holder,
        since,
    };
    let cases = [
        // Cycle 8 not begun: core 0's st_sync is due, the others sleep since 6.
        (
            8,
            vec![
                unfinished(0, 1, 3, CoreWait::Running),
                unfinished(1, 1, 1, lock(0, 6)),
                unfinished(2, 1, 1, lock(0, 6)),
                unfinished(3, 1, 1, lock(0, 6)),
            ],
        ),
        // Cycle 8 done: core 1 holds; cores 2 and 3 retried in 8 and sleep from there.
        (
            9,
            vec![
                unfinished(0, 1, 4, CoreWait::Running),
                unfinished(1, 1, 2, CoreWait::Running),
                unfinished(2, 1, 1, lock(1, 8)),
                unfinished(3, 1, 1, lock(1, 8)),
            ],
        ),
        // Cycle 9 done, 10 not begun: core 0 has ended, core 1's st_sync is due, and cores
        // 2 and 3 still sleep from their retry in 8 (no close since to wake them).
        (
            10,
            vec![
                unfinished(1, 1, 3, CoreWait::Running),
                unfinished(2, 1, 1, lock(1, 8)),
                unfinished(3, 1, 1, lock(1, 8)),
            ],
        ),
        (
            11,
            vec![
                unfinished(1, 1, 4, CoreWait::Running),
                unfinished(2, 1, 2, CoreWait::Running),
                unfinished(3, 1, 1, lock(2, 10)),
            ],
        ),
    ];
    for (limit, cores) in cases {
        let e = run_err(mk, &img, &[], &limited(limit));
        assert_eq!(watchdog(e), (limit, cores, None), "limit {limit}");
    }
    // At limit 10 each core has ended one sleep, 6 to 8 (cores 1 to 3), and cores 2 and 3
    // are in a second one, which the stop leaves uncounted.
    let failure = run(mk, &img, &[], &limited(10)).unwrap_err();
    let lock_stalls: Vec<u64> = failure.state.cores[..4]
        .iter()
        .map(|c| c.lock_stalls)
        .collect();
    assert_eq!(lock_stalls, [0, 2, 2, 2]);
    assert_eq!(failure.state.stalls, 6);
}

pub fn unprocessed_frame_is_reported<B: Backend>(mk: Mk<B>) {
    // The loop on core 0 never ends, so frame 2 (a CF for core 0's R0) is never processed.
    let img = Image::new()
        .group(cf(1), &[&[set_const(1, 8), bnz(8, 1)]])
        .group(cf(1).r0(0, 1), &[&[ready()]]);
    let (_, cores, next) = watchdog(run_err(mk, &img, &[], &limited(40)));
    assert_eq!(next, Some(2));
    assert_eq!(cores, vec![unfinished(0, 1, 1, CoreWait::Running)]);
}

pub fn exact_limit_for_a_core<B: Backend>(mk: Mk<B>) {
    // One ready at cycle 5: a 6-cycle run.
    let img = Image::new().group(cf(1), &[&[ready()]]);
    assert_eq!(run_ok(mk, &img, &[], &limited(6)).cycles, 6);
    let e = run_err(mk, &img, &[], &limited(5));
    assert_eq!(
        watchdog(e),
        (
            5,
            vec![unfinished(0, 1, 0, CoreWait::NotStarted { start: 5 })],
            None
        )
    );
    // The IP-15 loop of 20 instructions (5..24): 25 cycles; with 24 the last bnz is due.
    let mut body = vec![set_const(3, 8), set_const(1, 9)];
    body.extend(vec![nop(); 12]);
    body.extend([sub(8, 9, 8), bnz(8, 14)]);
    let img = Image::new().group(cf(1), &[&body]);
    assert_eq!(run_ok(mk, &img, &[], &limited(25)).cycles, 25);
    let e = run_err(mk, &img, &[], &limited(24));
    assert_eq!(
        watchdog(e),
        (24, vec![unfinished(0, 1, 15, CoreWait::Running)], None)
    );
}

pub fn exact_limit_for_the_scheduler<B: Backend>(mk: Mk<B>) {
    // A lone CF: processed at 0, a 1-cycle run.
    let img = Image::new().group(cf(1).r0(0, 3), &[]);
    assert_eq!(run_ok(mk, &img, &[], &limited(1)).cycles, 1);
    assert_eq!(
        watchdog(run_err(mk, &img, &[], &limited(0))),
        (0, vec![], Some(0))
    );
    // An empty-mask IF: broadcast 1..4, a 5-cycle run; with 4 the broadcast crosses it.
    let img = Image::new().group(cf(0), &[&[ready()]]);
    assert_eq!(run_ok(mk, &img, &[], &limited(5)).cycles, 5);
    assert_eq!(
        watchdog(run_err(mk, &img, &[], &limited(4))),
        (4, vec![], Some(1))
    );
    // A trailing CF that waits for core 0 (IF1 ends 14): processed at 15, a 16-cycle run.
    let img = Image::new()
        .group(cf(1), &[&len(10)])
        .group(cf(1).r0(0, 9), &[]);
    assert_eq!(run_ok(mk, &img, &[], &limited(16)).cycles, 16);
    assert_eq!(
        watchdog(run_err(mk, &img, &[], &limited(15))),
        (15, vec![], Some(2))
    );
}

pub fn frames_passed_before_the_limit_are_processed<B: Backend>(mk: Mk<B>) {
    // Under lookahead, CF6 (no R0 init) passes IF5, which waits for core 0. Cores 0 and 1:
    // frame 1 at 5; core 0: frame 3 (broadcast 6..9) in 10..17. CF2 at 5, CF4 at 10, CF6 at
    // 11, IF7 for core 1 issued at 12 (broadcast 12..15, start 16), IF5 issued at 18 (start
    // 22). The state at a limit holds every frame processed below it, however far core 0
    // had run when the scheduler last looked (it could not tell at 11 whether IF5 could go
    // then, and core 0 then ran on to the limit).
    let img = Image::new()
        .group(cf(0b11), &[&[ready()]])
        .group(cf(1), &[&len(8)])
        .group(cf(1), &[&[ready()]])
        .group(cf(2), &[&[ready()]]);
    let at = |limit: u64| match run(
        mk,
        &img,
        &[],
        &Config {
            max_cycles: limit,
            ..lookahead()
        },
    ) {
        Ok(r) => panic!(
            "run succeeded in {} cycles, expected the watchdog",
            r.cycles
        ),
        Err(f) => (f.state.task_summary.control_frames, watchdog(f.error)),
    };
    assert_eq!(
        at(11),
        (
            3,
            (11, vec![unfinished(0, 3, 1, CoreWait::Running)], Some(5))
        )
    );
    assert_eq!(
        at(12),
        (
            4,
            (12, vec![unfinished(0, 3, 2, CoreWait::Running)], Some(5))
        )
    );
    assert_eq!(
        at(16),
        (
            4,
            (
                16,
                vec![
                    unfinished(0, 3, 6, CoreWait::Running),
                    unfinished(1, 7, 0, CoreWait::NotStarted { start: 16 })
                ],
                Some(5)
            )
        )
    );
    let r = run_ok(mk, &img, &[], &lookahead());
    assert_eq!(r.cycles, 23);
    assert_eq!(r.task_summary.control_frames, 4);
    assert_eq!(
        timeline(&r),
        vec![
            (1, 1, 5, 5),
            (3, 6, 10, 17),
            (7, 12, 16, 16),
            (5, 18, 22, 22)
        ]
    );
}

pub fn bank_stalled_cores_are_reported<B: Backend>(mk: Mk<B>) {
    // Bank model on, cores 0..3 read rows 0..3 of bank 0 at 5: core k loads at 5 + k. With
    // the limit at 7: core 0 is done (ready at 6), core 1 loaded at 6 and its ready is due at
    // 7, cores 2 and 3 are retrying after bank conflicts.
    let mut control = cf(0b1111);
    for k in 0..4 {
        control = control.r0(k, k as u8);
    }
    let img = Image::new().group(control, &[&[ld(0, 1, 10), ready()]]);
    let config = Config {
        bank_conflicts: true,
        ..limited(7)
    };
    assert_eq!(
        watchdog(run_err(mk, &img, &[], &config)),
        (
            7,
            vec![
                unfinished(1, 1, 1, CoreWait::Running),
                unfinished(2, 1, 0, CoreWait::BankConflict),
                unfinished(3, 1, 0, CoreWait::BankConflict),
            ],
            None
        )
    );
}
