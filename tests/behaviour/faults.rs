//! The six runtime faults, each with its rule, frame, core, IP and cycle; a core's own fault
//! wins over a lock stall; and when several cores fault the earliest (cycle, core id) is the
//! one reported.
//!
//! Most faulting tasks run in a second group (frame 3) on core 3: group 1 is a one-cycle task
//! on core 0 (frames 0, 1), CF2 is processed at 5, IF3 broadcast 6..9, so IP k runs at 10 + k.

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::{Event, FaultRule, Fence, RunError};

/// A fault's rule, frame, core, IP, cycle and address.
pub type Fault = (FaultRule, usize, u8, u8, u64, Option<u16>);

/// The fields of `e`, which must be a fault.
pub fn fault(e: RunError) -> Fault {
    match e {
        RunError::Fault {
            rule,
            frame,
            core,
            ip,
            cycle,
            addr,
        } => (rule, frame, core, ip, cycle, addr),
        other => panic!("expected a fault, got {other}"),
    }
}

/// Group 1 on core 0, then `body` on core 3 (R0 = 2) as frame 3.
fn second_group(body: &[Instr]) -> Image {
    Image::new()
        .group(cf(1), &[&[ready()]])
        .group(cf(1 << 3).r0(3, 2), &[body])
}

fn fault_of<B: Backend>(mk: Mk<B>, img: &Image) -> Fault {
    fault(run_err(mk, img, &[], &in_order()))
}

pub fn st_sync_without_sequence<B: Backend>(mk: Mk<B>) {
    let f = fault_of(mk, &second_group(&[nop(), st_sync(8, 1, 10), ready()]));
    assert_eq!(
        f,
        (FaultRule::StSyncWithoutSequence, 3, 3, 1, 11, Some(0x000))
    );
}

pub fn st_sync_to_another_address<B: Backend>(mk: Mk<B>) {
    // Locks 0x000 at 10, then st_sync to 0x001 at 12.
    let body = [
        ld_sync(8, 1, 10),
        set_const(1, 8),
        st_sync(8, 1, 10),
        ready(),
    ];
    let f = fault_of(mk, &second_group(&body));
    assert_eq!(
        f,
        (
            FaultRule::StSyncWrongAddress { held: 0x000 },
            3,
            3,
            2,
            12,
            Some(0x001)
        )
    );
}

pub fn ld_sync_while_holding<B: Backend>(mk: Mk<B>) {
    // Locks 0x000 at 10; ld_sync of 0x200 (another bank, r0 = 2) at 11.
    let body = [ld_sync(8, 1, 10), ld_sync(8, 0, 11), ready()];
    let f = fault_of(mk, &second_group(&body));
    assert_eq!(
        f,
        (
            FaultRule::LdSyncWhileHolding { held: 0x000 },
            3,
            3,
            1,
            11,
            Some(0x200)
        )
    );
}

pub fn ld_while_holding<B: Backend>(mk: Mk<B>) {
    // ld of another byte at IP2, cycle 12.
    let body = [ld_sync(8, 1, 10), set_const(7, 8), ld(8, 1, 11), ready()];
    let f = fault_of(mk, &second_group(&body));
    assert_eq!(
        f,
        (
            FaultRule::AccessWhileHolding { held: 0x000 },
            3,
            3,
            2,
            12,
            Some(0x007)
        )
    );
}

pub fn st_while_holding<B: Backend>(mk: Mk<B>) {
    // A plain st even to the held byte itself, at IP1, cycle 11.
    let body = [ld_sync(8, 1, 10), st(8, 1, 10), ready()];
    let f = fault_of(mk, &second_group(&body));
    assert_eq!(
        f,
        (
            FaultRule::AccessWhileHolding { held: 0x000 },
            3,
            3,
            1,
            11,
            Some(0x000)
        )
    );
}

pub fn ready_while_holding<B: Backend>(mk: Mk<B>) {
    let body = [ld_sync(8, 1, 10), ready()];
    let f = fault_of(mk, &second_group(&body));
    assert_eq!(
        f,
        (
            FaultRule::ReadyWhileHolding { held: 0x000 },
            3,
            3,
            1,
            11,
            None
        )
    );
}

pub fn frame_end_while_holding<B: Backend>(mk: Mk<B>) {
    // ld_sync at IP5 (15); the part ends after IP15 (25) still holding.
    let mut body = vec![nop(); 5];
    body.push(ld_sync(8, 1, 10));
    body.extend(vec![nop(); 10]);
    assert_eq!(body.len(), 16);
    let f = fault_of(mk, &second_group(&body));
    assert_eq!(
        f,
        (
            FaultRule::FrameEndWhileHolding { held: 0x000 },
            3,
            3,
            15,
            25,
            None
        )
    );
}

pub fn fault_state_is_the_machine_at_the_fault<B: Backend>(mk: Mk<B>) {
    // A store at 11 happened; the fault is at 12; the state's cycle count is the fault cycle.
    let body = [
        set_const(0x66, 9),
        st(0, 1, 9), // M[0x002] (r0 = 2)
        st_sync(8, 1, 9),
        set_const(0x77, 10),
    ];
    let failure = run(mk, &second_group(&body), &[], &in_order()).unwrap_err();
    assert_eq!(
        fault(failure.error.clone()),
        (FaultRule::StSyncWithoutSequence, 3, 3, 2, 12, Some(0x000))
    );
    assert_eq!(failure.state.memory[2], 0x66);
    assert_eq!(failure.state.registers[3][9], 0x66);
    assert_eq!(failure.state.registers[3][10], 0x00);
    assert_eq!(failure.state.cycles, 12);
}

pub fn fault_state_leaves_out_what_other_cores_ran_ahead<B: Backend>(mk: Mk<B>) {
    // Cores 0 and 1 (R0 = 1) start at 5. Core 1 jumps to IP 3 and sets r9, r10, r11 in
    // 6, 7 and 8; core 0 faults at 6 (st_sync with no sequence). The state is the machine
    // when cycle 6 began: core 1 has run IP 0 only, whichever engine ran it ahead.
    let body = [
        bnz(0, 3),
        st_sync(8, 1, 10),
        ready(),
        set_const(0x11, 9),
        set_const(0x22, 10),
        set_const(0x33, 11),
        ready(),
    ];
    let img = Image::new().group(cf(0b11).r0(1, 1), &[&body]);
    let failure = run(mk, &img, &[], &in_order()).unwrap_err();
    assert_eq!(
        fault(failure.error.clone()),
        (FaultRule::StSyncWithoutSequence, 1, 0, 1, 6, Some(0x000))
    );
    assert_eq!(failure.state.cycles, 6);
    assert_eq!(&failure.state.registers[1][9..12], &[0, 0, 0]);
    assert_eq!(failure.state.cores[1].instructions, 1);
    assert_eq!(failure.state.cores[0].instructions, 1);
}

pub fn a_fault_reports_the_events_complete_before_its_cycle<B: Backend>(mk: Mk<B>) {
    // Cores 0 (R0 = 1) and 1 start frame 1 at 5: IP0 and IP1 at 5 and 6, the bnz at 7. Core
    // 0 jumps to IP6, locks 0x000 at 8, runs 5 nops (9..13) and faults at its ready in 14.
    // Core 1 counts r10 down from 60, a sub and a bnz per round (8..127), and would end at
    // 128. CF2 at 5, IF3 for core 2 broadcast 6..9, its part 10..11. The run reports what
    // happened before cycle 14, as its state does: core 1's part, which a core run ahead
    // would have ended, is not among them, and core 0's sequence never closed.
    let mut body = count_down_unless_r0(60);
    body.extend([
        ld_sync(8, 1, 10),
        nop(),
        nop(),
        nop(),
        nop(),
        nop(),
        ready(),
    ]);
    let img = Image::new()
        .group(cf(0b11).r0(0, 1), &[&body])
        .group(cf(1 << 2), &[&[nop(), ready()]]);
    let want = vec![
        Event::ControlFrame { frame: 0, cycle: 0 },
        Event::Broadcast {
            frame: 1,
            mask: 0b11,
            fence: Fence::No,
            from: 1,
            to: 4,
        },
        Event::ControlFrame { frame: 2, cycle: 5 },
        Event::Broadcast {
            frame: 3,
            mask: 0b100,
            fence: Fence::No,
            from: 6,
            to: 9,
        },
        Event::CorePart {
            core: 2,
            frame: 3,
            start: 10,
            end: 11,
        },
    ];
    for config in [in_order(), lookahead()] {
        let (failure, events) = failed_with_events(mk, &img, &config);
        assert_eq!(
            fault(failure.error),
            (
                FaultRule::ReadyWhileHolding { held: 0x000 },
                1,
                0,
                12,
                14,
                None
            )
        );
        assert_eq!(events, want, "{:?}", config.issue);
    }
}

pub fn a_fault_reports_the_frames_the_scheduler_passed_before_it<B: Backend>(mk: Mk<B>) {
    // Under lookahead: cores 0 and 1 run frame 1 at 5 (CF2 at 5 too); core 0 runs IF3
    // (broadcast 6..9) from 10, locks 0x000 at 13 and faults at its ready in 14. CF4 at 10;
    // IF5 waits for core 0, so CF6 passes it at 11, and IF7's broadcast for core 1 (12..15)
    // crosses the fault's cycle. CF6 is reported, however far core 0 had run when the
    // scheduler last looked (it could not tell at 11 whether IF5 could go); IF7 is not.
    let img = Image::new()
        .group(cf(0b11), &[&[ready()]])
        .group(cf(1), &[&[nop(), nop(), nop(), ld_sync(8, 1, 10), ready()]])
        .group(cf(1), &[&[ready()]])
        .group(cf(2), &[&[ready()]]);
    let (failure, events) = failed_with_events(mk, &img, &lookahead());
    assert_eq!(
        fault(failure.error),
        (
            FaultRule::ReadyWhileHolding { held: 0x000 },
            3,
            0,
            4,
            14,
            None
        )
    );
    let broadcast = |frame, mask, from| Event::Broadcast {
        frame,
        mask,
        fence: Fence::No,
        from,
        to: from + 3,
    };
    let part = |core, frame, start, end| Event::CorePart {
        core,
        frame,
        start,
        end,
    };
    let want = vec![
        Event::ControlFrame { frame: 0, cycle: 0 },
        broadcast(1, 0b11, 1),
        Event::ControlFrame { frame: 2, cycle: 5 },
        part(0, 1, 5, 5),
        part(1, 1, 5, 5),
        broadcast(3, 0b1, 6),
        Event::ControlFrame {
            frame: 4,
            cycle: 10,
        },
        Event::ControlFrame {
            frame: 6,
            cycle: 11,
        },
    ];
    assert_eq!(events, in_cycle_order(want));
}

pub fn own_fault_wins_over_a_lock_stall<B: Backend>(mk: Mk<B>) {
    // Core 0 locks 0x000 and core 1 (R0 = 1) locks 0x100, both at 5. Core 1 jumps to IP5 and
    // at 7 loads 0x000, which core 0 still holds (until 8): its own fault (ld while holding)
    // is reported at 7, not a stall followed by the fault at 8.
    let body = [
        ld_sync(8, 0, 10),
        bnz(0, 5),
        nop(),
        st_sync(8, 0, 10),
        ready(),
        ld(8, 1, 11),
        ready(),
    ];
    let img = Image::new().group(cf(0b11).r0(1, 1), &[&body]);
    let f = fault_of(mk, &img);
    assert_eq!(
        f,
        (
            FaultRule::AccessWhileHolding { held: 0x100 },
            1,
            1,
            5,
            7,
            Some(0x000)
        )
    );
}

pub fn same_cycle_faults_report_the_lowest_id<B: Backend>(mk: Mk<B>) {
    // Cores 2 and 5 both st_sync without a sequence at 5.
    let img = Image::new().group(cf(cores(&[2, 5])), &[&[st_sync(8, 1, 10), ready()]]);
    let f = fault_of(mk, &img);
    assert_eq!(f, (FaultRule::StSyncWithoutSequence, 1, 2, 0, 5, Some(0)));
}

pub fn an_earlier_cycle_wins_over_a_lower_id<B: Backend>(mk: Mk<B>) {
    // Core 1 (R0 = 1) skips the nop and reaches the bad st_sync at 6; core 0 at 7.
    let img = Image::new().group(
        cf(0b11).r0(1, 1),
        &[&[bnz(0, 2), nop(), st_sync(8, 1, 10), ready()]],
    );
    let f = fault_of(mk, &img);
    assert_eq!(f, (FaultRule::StSyncWithoutSequence, 1, 1, 2, 6, Some(0)));
}

pub fn a_ready_fault_and_a_memory_fault_in_one_cycle<B: Backend>(mk: Mk<B>) {
    // Path A (IP1..): nop 6, st_sync without a sequence 7. Path B (IP3..): ld_sync 6, ready
    // while holding 7. The core with R0 = 1 takes path B. Both faults are in cycle 7, so the
    // lower id wins whichever rule it broke.
    let body = [
        bnz(0, 3),
        nop(),
        st_sync(8, 1, 10),
        ld_sync(8, 1, 10),
        ready(),
    ];
    let b_on_0 = Image::new().group(cf(0b11).r0(0, 1), &[&body]);
    assert_eq!(
        fault_of(mk, &b_on_0),
        (FaultRule::ReadyWhileHolding { held: 0 }, 1, 0, 4, 7, None)
    );
    let b_on_1 = Image::new().group(cf(0b11).r0(1, 1), &[&body]);
    assert_eq!(
        fault_of(mk, &b_on_1),
        (FaultRule::StSyncWithoutSequence, 1, 0, 2, 7, Some(0))
    );
}

pub fn a_later_group_can_fault_first<B: Backend>(mk: Mk<B>) {
    // Core 0 (frame 1) locks at 5 and ends its frame holding at 20. Core 1 (frame 3, starts
    // at 10) faults at 11. The earlier fault, core 1's, is reported.
    let mut holder = vec![ld_sync(8, 1, 10)];
    holder.extend(vec![nop(); 15]);
    let img = Image::new()
        .group(cf(1), &[&holder])
        .group(cf(2), &[&[nop(), st_sync(8, 1, 10), ready()]]);
    let f = fault_of(mk, &img);
    assert_eq!(f, (FaultRule::StSyncWithoutSequence, 3, 1, 1, 11, Some(0)));
    // Alone, core 0's fault is the one reported.
    let img = Image::new().group(cf(1), &[&holder]);
    assert_eq!(
        fault_of(mk, &img),
        (
            FaultRule::FrameEndWhileHolding { held: 0 },
            1,
            0,
            15,
            20,
            None
        )
    );
}
