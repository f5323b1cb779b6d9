//! The task scheduler names why it waited: the constraint satisfied last (cores busy on a
//! tie). Pinned on hand-worked programs.

use gpu16_interp::Interpreter;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::{
    run_observed, Config, ControlFrame, Event, Fence, InstrFrame, Program, WaitCause,
};

fn cf(fence: Fence, active: u16) -> [u8; 32] {
    ControlFrame {
        if_num: 1,
        fence,
        active,
        init_vect: 0,
        init_r0: [0; 16],
        reserved_header: 0,
        reserved: [0; 10],
    }
    .encode()
}

fn work(nops: usize) -> [u8; 32] {
    let mut instrs = [Instr::Nop; 16];
    instrs[nops] = Instr::Ready;
    InstrFrame::from_instrs(instrs).bytes()
}

#[test]
fn acq_and_rel_waits_are_named_by_their_fence() {
    // CF0 (acq, core 0) in 0; frame 1 broadcast 1-4, runs 5-7. CF2 waits 5-7 for the acq
    // task, runs in 8; frame 3 broadcast 9-12, runs 13-16. CF4 (rel) in 13; frame 5 is a rel
    // task: waits 14-16 for frame 3, broadcast 17-20, runs in 21.
    let frames = vec![
        cf(Fence::Acq, 0b001),
        work(2),
        cf(Fence::No, 0b010),
        work(3),
        cf(Fence::Rel, 0b100),
        work(0),
    ];
    let program = Program::from_frames(frames).unwrap();
    let mut events: Vec<Event> = Vec::new();
    let r = run_observed(
        &mut Interpreter::new(),
        &program,
        &[],
        &Config::default(),
        &mut events,
    )
    .unwrap();
    assert_eq!(r.cycles, 22);
    assert_eq!(r.task_summary.wait_cycles, [0, 3, 3]);
    let waits: Vec<(usize, u64, u64, WaitCause)> = events
        .iter()
        .filter_map(|e| match *e {
            Event::SchedulerWait {
                frame,
                from,
                to,
                cause,
            } => Some((frame, from, to, cause)),
            _ => None,
        })
        .collect();
    assert_eq!(
        waits,
        [
            (2, 5, 8, WaitCause::Acquire),
            (5, 14, 17, WaitCause::Release)
        ]
    );
}

#[test]
fn a_wait_for_busy_cores_is_named_so() {
    // Two IFs on core 0 (no fence): frame 2 waits 5-7 while frame 1 runs 5-7.
    let mut c = cf(Fence::No, 1);
    c[0] = 2;
    let program = Program::from_frames(vec![c, work(2), work(0)]).unwrap();
    let r = gpu16_machine::run(&mut Interpreter::new(), &program, &[], &Config::default()).unwrap();
    assert_eq!(r.task_summary.wait_cycles, [3, 0, 0]);
    assert_eq!(r.cycles, 13);
}
