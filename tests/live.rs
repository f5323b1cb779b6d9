//! A live machine (`gpu16::live`) paused anywhere gives an unpaused run's results.
//!
//! The reference is `gpu16::run` of the same program, an independent path (one call of the
//! run loop, no pause): stepping a generated program to its end, in steps of 1, 7 or 1000
//! cycles, on every backend and engine, in both dialects and every profile (faults, the
//! watchdog and livelocks included), must give its report or failure bit for bit, and the
//! events taken step by step must be the run's events. Host writes are checked on
//! hand-worked programs whose results follow from the written byte.

mod common;

use common::every_runner;
use gpu16::fuzz::Case;
use gpu16::live::machine;
use gpu16::machine::live::{Live, Status, WriteError};
use gpu16::{BackendKind, Runner};
use gpu16_asm::assemble;
use gpu16_gen::Profile;
use gpu16_machine::{Config, Dialect, Event, Program, RunError};

/// Events in one canonical order: a run reports them as its cores reach them, which
/// depends on how far each ran ahead, not only on the machine.
fn sorted(mut events: Vec<Event>) -> Vec<String> {
    let mut v: Vec<String> = events.drain(..).map(|e| format!("{e:?}")).collect();
    v.sort();
    v
}

fn stepped(
    runner: Runner,
    program: &Program,
    memory: &[u8],
    config: &Config,
    step: u64,
) -> (
    Result<gpu16_machine::RunReport, Box<gpu16_machine::RunFailure>>,
    Vec<Event>,
) {
    let mut m = machine(runner, program.clone(), memory, config).expect("the backend starts");
    let mut events = Vec::new();
    let mut last = m.cycle();
    loop {
        let status = m.step(step);
        let (mut e, dropped) = m.take_events();
        assert_eq!(dropped, 0);
        events.append(&mut e);
        match status {
            Status::Paused(c) => {
                assert_eq!(c, last + step, "a step of {step} from {last}");
                assert_eq!(m.cycle(), c);
                last = c;
            }
            Status::Ended | Status::Failed => break,
        }
        same_but_tasks(&mut *m);
    }
    same_but_tasks(&mut *m);
    (m.report(), events)
}

/// `report_without_tasks` is `report` with no task records, and leaves them for the next
/// report.
fn same_but_tasks(m: &mut dyn Live) {
    let strip = |mut outcome: Result<gpu16_machine::RunReport, Box<gpu16_machine::RunFailure>>| {
        match &mut outcome {
            Ok(r) => r.tasks.clear(),
            Err(f) => f.state.tasks.clear(),
        }
        outcome
    };
    let full = m.report();
    let lean = m.report_without_tasks();
    assert!(
        strip(full.clone()) == lean,
        "report_without_tasks at cycle {}",
        m.cycle()
    );
    assert!(m.report() == full, "the records stay for a later report");
}

fn check_dialect(dialect: Dialect, seeds: std::ops::Range<u64>) -> usize {
    let mut compared = 0;
    for seed in seeds {
        for profile in Profile::ALL {
            let c = Case::new_in(seed, Some(profile), dialect);
            let Ok(program) = Program::from_image_in(&c.image, dialect) else {
                continue;
            };
            let config = Config {
                max_cycles: c.config.max_cycles.min(20_000),
                ..c.config
            };
            let mut events: Vec<Event> = Vec::new();
            let reference = gpu16::run_observed(
                BackendKind::Interp,
                &program,
                &c.memory,
                &config,
                &mut events,
            );
            let reference_events = sorted(events);
            for (k, runner) in every_runner().into_iter().enumerate() {
                let step = [1, 7, 1000][(seed as usize + k) % 3];
                let (mut outcome, events) = stepped(runner, &program, &c.memory, &config, step);
                // Reports name their backend.
                match &mut outcome {
                    Ok(r) => r.backend = "interp".into(),
                    Err(f) => f.state.backend = "interp".into(),
                }
                assert!(
                    outcome == reference,
                    "{dialect:?} seed {seed} {profile:?} {runner:?} in steps of {step}: {:?}\nvs \
                     run: {:?}",
                    outcome
                        .as_ref()
                        .map(|r| r.cycles)
                        .map_err(|f| f.error.to_string()),
                    reference
                        .as_ref()
                        .map(|r| r.cycles)
                        .map_err(|f| f.error.to_string()),
                );
                assert_eq!(
                    sorted(events),
                    reference_events,
                    "{dialect:?} seed {seed} {profile:?} {runner:?}: events in steps of {step}"
                );
                compared += 1;
            }
        }
    }
    compared
}

#[test]
fn stepping_a_spec_program_to_its_end_gives_the_run() {
    assert!(check_dialect(Dialect::Spec, 5_100_000..5_100_012) > 200);
}

#[test]
fn stepping_an_mcst_program_to_its_end_gives_the_run() {
    assert!(check_dialect(Dialect::Mcst, 5_200_000..5_200_006) > 100);
}

/// The MCST livelock proof by the machine's state (issue 33, F22) holds across pauses:
/// stepping a loop whose state repeats at once, and one whose count in memory byte 0 must
/// wrap first (ten empty CFs let its task end before the frame sync), gives the run's
/// livelock at the run's cycle, on every runner and step size.
#[test]
fn stepping_an_mcst_loop_whose_state_repeats_gives_the_runs_livelock() {
    let counting = format!(
        ".cf mask=1\n.if\nset_const 1, r2\nld [r3, r4], r1\nadd r1, r2, r1\n\
         st [r3, r4], r1\nready\n{}.cf mask=0 next=0 stop\n",
        ".cf mask=0\n".repeat(10)
    );
    let sources = [
        ".cf mask=1\n.if\nready\n.cf mask=0\n.cf mask=0 next=0 stop\n".to_string(),
        counting,
    ];
    for source in &sources {
        let program = gpu16_asm::assemble_in(source, "loop.s", Dialect::Mcst)
            .expect("assembles")
            .program;
        let config = Config::default();
        let reference = gpu16::run(BackendKind::Interp, &program, &[], &config);
        let Err(f) = &reference else {
            panic!("the loop ended")
        };
        assert!(
            matches!(
                f.error,
                RunError::EndlessWalk {
                    same_state_at: Some(_),
                    ..
                }
            ),
            "{}",
            f.error
        );
        for runner in every_runner() {
            for step in [1, 7, 1000] {
                let (mut outcome, _) = stepped(runner, &program, &[], &config, step);
                if let Err(f) = &mut outcome {
                    f.state.backend = "interp".into();
                }
                assert!(
                    outcome == reference,
                    "{runner:?} in steps of {step}: {:?}",
                    outcome.map(|r| r.cycles).map_err(|f| f.error.to_string())
                );
            }
        }
    }
}

/// Core 0 counts r9 down from 200 (two instructions a round: about 400 cycles), then loads
/// the byte at bank 0, row 0 into r5 and stores it at bank 1, row 0.
const LATE_LOAD: &str = "\
.cf mask=1
.if
    set_const 200, r9
    set_const 1, r8
    xor r4, r4, r4
    xor r1, r1, r1
loop:
    sub r9, r8, r9
    bnz loop, r9
    ld [r4, r1], r5
    add r1, r8, r2
    st [r4, r2], r5
    ready
";

fn program(source: &str) -> Program {
    assemble(source, "live.s").expect("assembles").program
}

/// A machine on the interpreter running `source` from zero memory.
fn interpreted(source: &str) -> Box<dyn Live> {
    machine(
        BackendKind::Interp,
        program(source),
        &[],
        &Config::default(),
    )
    .unwrap()
}

#[test]
fn a_host_write_before_the_load_is_what_the_core_loads() {
    for runner in every_runner() {
        let mut m = machine(runner, program(LATE_LOAD), &[7], &Config::default()).unwrap();
        assert_eq!(m.step(50), Status::Paused(50));
        // Bank 0, row 0 is byte address 0; bank 1, row 0 is 0x100.
        m.write_memory(0, &[0xA5]).unwrap();
        assert_eq!(m.run_until(u64::MAX), Status::Ended);
        let r = m.report().unwrap();
        assert_eq!(r.registers[0][5], 0xA5, "{runner:?}");
        assert_eq!(r.memory[0x100], 0xA5, "{runner:?}");
        assert_eq!(r.memory[0], 0xA5, "{runner:?}");
        assert_eq!(m.write_memory(0, &[1]), Err(WriteError::Finished));
    }
}

#[test]
fn a_paused_machine_shows_the_state_as_its_cycle_begins() {
    // In cycle 5 (the part starts there) core 0 executes `set_const 200, r9`, one
    // instruction a cycle, so as cycle 7 begins it has executed two: r9 is 200, r8 1.
    let mut m = interpreted(LATE_LOAD);
    assert_eq!(m.run_until(5), Status::Paused(5));
    assert_eq!(m.report().unwrap().registers[0][9], 0);
    let cores = m.unfinished();
    assert_eq!(cores.len(), 1);
    assert_eq!((cores[0].core, cores[0].ip), (0, 0));
    assert_eq!(m.run_until(7), Status::Paused(7));
    let r = m.report().unwrap();
    assert_eq!((r.registers[0][9], r.registers[0][8]), (200, 1));
    assert_eq!(r.cycles, 7);
    assert_eq!(m.unfinished()[0].ip, 2);
}

/// Core 0 waits about 200 cycles, loads bank 0, row 0, and takes the lock of bank 2,
/// row 0: where the byte it loaded is nonzero, it ends its part holding the lock (a
/// fault); else it closes the sequence.
const LOCK_BY_BYTE: &str = "\
.cf mask=1
.if
    set_const 100, r10
    set_const 1, r8
loop:
    sub r10, r8, r10
    bnz loop, r10
    xor r1, r1, r1
    xor r4, r4, r4
    ld [r4, r1], r5
    set_const 2, r9
    xor r2, r2, r2
    add r2, r9, r2
    ld_sync [r4, r2], r6
    bnz skip, r5
    st_sync [r4, r2], r6
skip:
    ready
";

#[test]
fn a_fault_after_a_host_write_reports_the_state_with_the_write() {
    // Unwritten, the byte is zero and the run ends.
    let plain = gpu16::run(
        BackendKind::Interp,
        &program(LOCK_BY_BYTE),
        &[],
        &Config::default(),
    );
    assert!(plain.is_ok());
    // Written nonzero, the same run faults: the run from an initial memory with that byte
    // is the reference for the failure (the write precedes every access to it).
    let reference = gpu16::run(
        BackendKind::Interp,
        &program(LOCK_BY_BYTE),
        &[3],
        &Config::default(),
    )
    .unwrap_err();
    assert!(matches!(reference.error, RunError::Fault { .. }));
    for runner in every_runner() {
        let mut m = machine(runner, program(LOCK_BY_BYTE), &[], &Config::default()).unwrap();
        m.step(20);
        m.write_memory(0, &[3]).unwrap();
        assert_eq!(m.step(100_000), Status::Failed, "{runner:?}");
        let mut failure = m.report().unwrap_err();
        failure.state.backend = reference.state.backend.clone();
        assert_eq!(failure.error, reference.error, "{runner:?}");
        assert_eq!(failure.state, reference.state, "{runner:?}");
        assert_eq!(m.cycle(), reference.state.cycles);
    }
}

#[test]
fn locks_show_the_open_sequence() {
    let mut m = interpreted(LOCK_BY_BYTE);
    // The ld_sync follows 208 instructions from cycle 5 (2, the loop's 200, then 6), one
    // a cycle: it executes in cycle 213, and the lock is held from 214 on.
    m.run_until(213);
    assert_eq!(m.locks(), vec![]);
    m.run_until(214);
    assert_eq!(m.locks(), vec![(2, 0, 0x200)]);
}

#[test]
fn bad_writes_are_refused() {
    let mut m = interpreted(LATE_LOAD);
    assert_eq!(
        m.write_memory(4095, &[1, 2]),
        Err(WriteError::OutOfRange { addr: 4095, len: 2 })
    );
    assert_eq!(
        m.write_memory(usize::MAX, &[1]),
        Err(WriteError::OutOfRange {
            addr: usize::MAX,
            len: 1
        })
    );
    assert_eq!(m.write_memory(4096, &[]), Ok(()));
    assert_eq!(m.write_memory(4095, &[9]), Ok(()));
    assert_eq!(m.report().unwrap().memory[4095], 9);
}

#[test]
fn going_back_or_nowhere_does_nothing() {
    let mut m = interpreted(LATE_LOAD);
    assert_eq!(m.step(0), Status::Paused(0));
    assert_eq!(m.run_until(30), Status::Paused(30));
    assert_eq!(m.run_until(10), Status::Paused(30));
    let max = Config {
        max_cycles: 40,
        ..Config::default()
    };
    let mut m = machine(BackendKind::Interp, program(LATE_LOAD), &[], &max).unwrap();
    assert_eq!(m.run_until(1000), Status::Failed);
    assert!(matches!(
        m.report().unwrap_err().error,
        RunError::Watchdog { limit: 40, .. }
    ));
    assert_eq!(m.cycle(), 40);
}
