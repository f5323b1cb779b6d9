//! Livelock: a run proven never to end stops early, at a checkpoint, with the same list of
//! unfinished cores the watchdog gives. The proofs (docs/semantics.md, "Livelock"): a core
//! whose registers and IP repeat with register instructions only in between, seen at
//! checkpoints (Brent's schedule: the state saved at the 1st, 2nd, 4th, ... checkpoint since
//! the core was first seen) or found by a replay of 1/1024 of the cycles it has looped; and a
//! machine whose memory is frozen (every frame issued, no store reachable) whose running
//! cores repeat together. Every cycle below is worked out by hand from the program.

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::{Config, CoreWait, Event, Fence, RunError, RunFailure, UnfinishedCore};

/// Checkpoints every 16 cycles, and a watchdog far beyond the cycles worked out here.
fn every_16() -> Config {
    Config {
        checkpoint_cycles: 16,
        max_cycles: 100_000,
        ..Config::default()
    }
}

struct Livelock {
    core: u8,
    frame: usize,
    ip: u8,
    period: u64,
    polls: bool,
    cycle: u64,
    cores: Vec<UnfinishedCore>,
}

fn livelock(f: &RunFailure) -> Livelock {
    match f.error.clone() {
        RunError::Livelock {
            core,
            frame,
            ip,
            period,
            polls,
            cycle,
            cores,
            next_frame: None,
        } => Livelock {
            core,
            frame,
            ip,
            period,
            polls,
            cycle,
            cores,
        },
        other => panic!("expected a livelock, got {other}"),
    }
}

fn running(core: u8, ip: u8) -> UnfinishedCore {
    UnfinishedCore {
        core,
        frame: 1,
        ip,
        wait: CoreWait::Running,
    }
}

pub fn register_spin_is_proven_at_its_second_checkpoint<B: Backend>(mk: Mk<B>) {
    // Core 2: IP0 at 5, then IP1 at even cycles and IP2 (bnz -> 1) at odd ones. Seen first
    // at checkpoint 16 (IP1, r8 = 1), the same at 32: proven there; the loop is 2 cycles.
    let img = Image::new().group(cf(1 << 2), &[&[set_const(1, 8), nop(), bnz(8, 1)]]);
    let f = run(mk, &img, &[], &every_16()).unwrap_err();
    let l = livelock(&f);
    assert_eq!(
        (l.core, l.frame, l.ip, l.period, l.polls),
        (2, 1, 1, 2, false)
    );
    assert_eq!(l.cycle, 32);
    assert_eq!(l.cores, vec![running(2, 1)]);
    // The state is the machine's when cycle 32 began: 27 instructions (5..31).
    assert_eq!((f.state.cycles, f.state.instructions), (32, 27));
    // A watchdog at or before the proof's cycle comes first.
    let w = run(
        mk,
        &img,
        &[],
        &Config {
            max_cycles: 32,
            ..every_16()
        },
    )
    .unwrap_err();
    assert!(
        matches!(w.error, RunError::Watchdog { limit: 32, .. }),
        "{}",
        w.error
    );
    let l = run(
        mk,
        &img,
        &[],
        &Config {
            max_cycles: 33,
            ..every_16()
        },
    )
    .unwrap_err();
    assert_eq!(livelock(&l).cycle, 32);
}

pub fn checkpoints_follow_brents_schedule<B: Backend>(mk: Mk<B>) {
    // Core 0 loops over IPs 1, 2, 3 from cycle 6: at cycle c it is at IP 1 + (c - 6) % 3.
    // Checkpoints 16, 32, 48, ... show IPs 2, 3, 1, 2, 3, 1, 2, 3. The state is saved at the
    // 0th, 1st, 2nd and 4th checkpoint since the first (16, 32, 48, 80): IP 3 saved at 80
    // comes back at 128, 48 cycles on; the exact period is 3.
    let img = Image::new().group(cf(1), &[&[set_const(1, 8), nop(), nop(), bnz(8, 1)]]);
    let f = run(mk, &img, &[], &every_16()).unwrap_err();
    let l = livelock(&f);
    assert_eq!((l.core, l.ip, l.period, l.cycle), (0, 3, 3, 128));
    assert_eq!(f.state.instructions, 123);
}

pub fn replay_proves_a_holder_that_spins_before_its_st_sync<B: Backend>(mk: Mk<B>) {
    // Core 0 locks 0x000 at 5 and spins on IP2 from 7; its st_sync at IP3 stays reachable,
    // so only a replay proves the spin: at checkpoint 16 + 64 * 16 = 1040 the core has
    // looped 1024 cycles since first seen, and a replay of 1024 / 1024 = 1 step meets its
    // state again. Core 1's ld_sync at 5 sleeps on the lock from then on.
    let img = Image::new().group(
        cf(0b11),
        &[&[
            ld_sync(8, 1, 10),
            set_const(1, 9),
            bnz(9, 2),
            st_sync(8, 1, 10),
            ready(),
        ]],
    );
    let f = run(mk, &img, &[], &every_16()).unwrap_err();
    let l = livelock(&f);
    assert_eq!((l.core, l.ip, l.period, l.cycle), (0, 2, 1, 1040));
    assert_eq!(
        l.cores,
        vec![
            running(0, 2),
            UnfinishedCore {
                core: 1,
                frame: 1,
                ip: 0,
                wait: CoreWait::Lock {
                    addr: 0x000,
                    holder: 0,
                    since: 5
                }
            }
        ]
    );
    // Core 0: 5..1039.
    assert_eq!(f.state.instructions, 1035);
}

pub fn cores_polling_frozen_memory_are_proven_together<B: Backend>(mk: Mk<B>) {
    // Cores 0 and 1 wait for M[0] to become nonzero: ld at IP0, cmpge (0 >= M[0]) at IP1,
    // bnz back at IP2, at cycle c on IP (c - 5) % 3. Every frame is issued and nothing can
    // store: memory is frozen. Checkpoints show IPs 2, 0, 1, 2, 0, 1, 2, 0 from 16; the pair
    // saved at 80 (IP 0) comes back at 128. Core 0, the lowest, is named.
    let img = Image::new().group(cf(0b11), &[&[ld(8, 1, 10), cmpge(8, 10, 11), bnz(11, 0)]]);
    let f = run(mk, &img, &[], &every_16()).unwrap_err();
    let l = livelock(&f);
    assert_eq!(
        (l.core, l.ip, l.period, l.polls, l.cycle),
        (0, 0, 48, true, 128)
    );
    assert_eq!(l.cores, vec![running(0, 0), running(1, 0)]);
    assert_eq!(f.state.instructions, 2 * 123);
    // A store the cores can still reach thaws memory: no proof, the watchdog ends the run.
    let img = Image::new().group(
        cf(0b11),
        &[&[ld(8, 1, 10), cmpge(8, 10, 11), bnz(11, 0), st(8, 1, 11)]],
    );
    let w = run(
        mk,
        &img,
        &[],
        &Config {
            max_cycles: 3000,
            ..every_16()
        },
    )
    .unwrap_err();
    assert!(matches!(w.error, RunError::Watchdog { .. }), "{}", w.error);
}

pub fn loops_that_end_are_never_livelocks<B: Backend>(mk: Mk<B>) {
    // r8 counts 200 down by 1 over a 2-instruction loop: the part ends at 5 + 2 + 400 - 1,
    // whatever the checkpoints; a checkpoint every cycle stops the core at each of them.
    let img = Image::new().group(
        cf(0xFFFF),
        &[&[
            set_const(200, 8),
            set_const(1, 9),
            sub(8, 9, 8),
            bnz(8, 2),
            ready(),
        ]],
    );
    for every in [1, 7, 16, 1 << 16] {
        let config = Config {
            checkpoint_cycles: every,
            ..Config::default()
        };
        let r = run_ok(mk, &img, &[], &config);
        assert_eq!(r.cycles, 5 + 2 + 400 + 1, "every {every}");
        assert_eq!(r.instructions, 16 * 403, "every {every}");
    }
}

pub fn a_livelock_reports_the_events_complete_before_its_cycle<B: Backend>(mk: Mk<B>) {
    // Cores 2 and 3 (R0 = 1) start at 5: IP0 and IP1 at 5 and 6, the bnz at 7. Core 3 jumps
    // to IP6 and spins there (IP6 at even cycles, IP7 at odd ones), proven at checkpoint 32.
    // Core 2 counts r10 down from 16, a sub and a bnz per round (8..39), and would end at 40.
    // The run reports what happened before cycle 32, as its state does: core 2's part, which
    // it may have run on to end while core 3 waited for its turn at the checkpoint, is not
    // among them.
    let mut body = count_down_unless_r0(16);
    body.extend([nop(), bnz(9, 6)]);
    let img = Image::new().group(cf(0b1100).r0(3, 1), &[&body]);
    let (failure, events) = failed_with_events(mk, &img, &every_16());
    let l = livelock(&failure);
    assert_eq!((l.core, l.ip, l.period, l.cycle), (3, 6, 2, 32));
    assert_eq!(l.cores, vec![running(2, 3), running(3, 6)]);
    assert_eq!(
        events,
        vec![
            Event::ControlFrame { frame: 0, cycle: 0 },
            Event::Broadcast {
                frame: 1,
                mask: 0b1100,
                fence: Fence::No,
                from: 1,
                to: 4,
            },
        ]
    );
}
