//! Snapshots of a live machine (issue 32): going back to any cycle from the snapshot
//! before it, and a new run going on from a snapshot with any backend, give what a run
//! from cycle 0 gives.
//!
//! The reference is `gpu16::run` of the same program and a live machine without
//! snapshots paused at the same cycle: independent paths (one call of the run loop; no
//! snapshot taken or restored). Generated programs of every profile (faults, the watchdog,
//! livelocks, locks and bank conflicts included) on every backend and engine; snapshots
//! taken every 1, 7 and 64 cycles, so that they fall inside tasks, lock waits and
//! conflicts.

mod common;

use common::every_runner;
use gpu16::fuzz::Case;
use gpu16::live::machine;
use gpu16::machine::live::Status;
use gpu16::{BackendKind, Runner};
use gpu16_gen::Profile;
use gpu16_machine::{Config, Dialect, Program, RunFailure, RunReport, TaskLog};

type Outcome = Result<RunReport, Box<RunFailure>>;

/// The outcome with the backend's name made the interpreter's (reports name theirs).
fn named(mut outcome: Outcome) -> Outcome {
    match &mut outcome {
        Ok(r) => r.backend = "interp".into(),
        Err(f) => f.state.backend = "interp".into(),
    }
    outcome
}

fn cycles(outcome: &Outcome) -> Result<u64, String> {
    outcome
        .as_ref()
        .map(|r| r.cycles)
        .map_err(|f| f.error.to_string())
}

/// The generated cases of `seeds` that load, with a watchdog short enough for a test.
fn cases(seeds: std::ops::Range<u64>) -> Vec<(String, Program, Vec<u8>, Config)> {
    let mut v = Vec::new();
    for seed in seeds {
        for profile in Profile::ALL {
            let c = Case::new_in(seed, Some(profile), Dialect::Spec);
            let Ok(program) = Program::from_image_in(&c.image, Dialect::Spec) else {
                continue;
            };
            let config = Config {
                max_cycles: c.config.max_cycles.min(20_000),
                ..c.config
            };
            v.push((
                format!("seed {seed} {profile:?}"),
                program,
                c.memory,
                config,
            ));
        }
    }
    v
}

/// The machine as `cycle` begins, from a live machine without snapshots: its report
/// while paused there, or the outcome of a run that ends first.
fn paused_at(
    runner: Runner,
    program: &Program,
    memory: &[u8],
    config: &Config,
    cycle: u64,
) -> Outcome {
    let mut m = machine(runner, program.clone(), memory, config).expect("the backend starts");
    m.run_until(cycle);
    m.report()
}

#[test]
fn going_back_to_any_cycle_gives_the_machine_a_run_from_the_start_gives() {
    let mut compared = 0;
    for (name, program, memory, config) in cases(5_300_000..5_300_006) {
        let reference = gpu16::run(BackendKind::Interp, &program, &memory, &config);
        let end = match &reference {
            Ok(r) => r.cycles,
            Err(f) => f.state.cycles,
        };
        for (k, runner) in every_runner().into_iter().enumerate() {
            let every = [1, 7, 64][k % 3];
            let mut m = machine(runner, program.clone(), &memory, &config).expect("starts");
            m.keep_snapshots(every);
            // Forward to the end, in one move: the snapshots are taken on the way.
            m.run_until(u64::MAX);
            assert!(
                named(m.report()) == reference,
                "{name} {runner:?} every {every}: with snapshots {:?} vs run {:?}",
                cycles(&m.report()),
                cycles(&reference)
            );
            // Back to cycles before the end, latest first and then earlier, each compared
            // with a machine paused there; then on to the end again.
            for target in [end * 2 / 3, end / 3 + 1, 1, end.saturating_sub(1)] {
                if target >= m.cycle() {
                    continue;
                }
                let status = m.go_back(target).expect("a snapshot at or before it");
                let expected = paused_at(runner, &program, &memory, &config, target);
                assert!(
                    named(m.report()) == named(expected.clone()),
                    "{name} {runner:?} every {every}: back to {target} ({status:?}): {:?} vs \
                     {:?}",
                    cycles(&m.report()),
                    cycles(&expected)
                );
                compared += 1;
            }
            m.run_until(u64::MAX);
            assert!(
                named(m.report()) == reference,
                "{name} {runner:?} every {every}: on to the end after going back: {:?} vs {:?}",
                cycles(&m.report()),
                cycles(&reference)
            );
        }
    }
    assert!(compared > 300, "{compared} cycles gone back to");
}

#[test]
fn a_run_resumed_from_a_snapshot_on_any_backend_gives_the_whole_run() {
    let mut compared = 0;
    for (name, program, memory, config) in cases(5_400_000..5_400_005) {
        let config = Config {
            tasks: TaskLog::Summary,
            ..config
        };
        let reference = gpu16::run(BackendKind::Interp, &program, &memory, &config);
        let runners = every_runner();
        for (k, runner) in runners.iter().enumerate() {
            let mut m = machine(*runner, program.clone(), &memory, &config).expect("starts");
            m.keep_snapshots([1, 7, 64][k % 3]);
            m.run_until(u64::MAX);
            let taken = m.snapshot_cycles();
            assert!(!taken.is_empty() && taken[0] == 0, "{name}: {taken:?}");
            for (j, &at) in taken.iter().enumerate().step_by(5) {
                let snapshot = m.snapshot_at_or_before(at).expect("kept");
                assert_eq!(snapshot.cycle(), at);
                // On another backend than the one that took it.
                let other = runners[(k + j + 1) % runners.len()];
                let resumed = other
                    .resume_observed(&program, snapshot, &config, &mut ())
                    .expect("the snapshot starts a run of its configuration");
                assert!(
                    named(resumed.clone()) == reference,
                    "{name}: from cycle {at} of {runner:?} on {other:?}: {:?} vs {:?}",
                    cycles(&resumed),
                    cycles(&reference)
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 200, "{compared} resumed runs");
}

#[test]
fn a_snapshot_starts_no_run_of_another_configuration_or_with_every_task_logged() {
    let (_, program, memory, config) = cases(5_500_000..5_500_001).remove(0);
    let config = Config {
        tasks: TaskLog::None,
        ..config
    };
    let mut m = machine(BackendKind::Interp, program.clone(), &memory, &config).expect("starts");
    m.keep_snapshots(1);
    let snapshot = m.snapshot_at_or_before(0).expect("taken at once");
    let all = Config {
        tasks: TaskLog::All,
        ..config
    };
    let summary = Config {
        tasks: TaskLog::Summary,
        ..config
    };
    let other = Config {
        bank_conflicts: !config.bank_conflicts,
        ..config
    };
    for c in [all, summary, other] {
        assert!(!snapshot.resumes(&c));
        assert!(gpu16::Runner::from(BackendKind::Interp)
            .resume_observed(&program, snapshot, &c, &mut ())
            .is_none());
    }
    let longer = Config {
        max_cycles: config.max_cycles * 2,
        ..config
    };
    assert!(snapshot.resumes(&longer));
}

/// Four cores count in r1 for ever (the livelock test's program).
const COUNTING: &str = "\
.cf mask=0xf
.if
    set_const 1, r9
loop:
    add r1, r9, r1
    bnz loop, r9
";

#[test]
fn going_back_needs_a_snapshot_and_an_earlier_cycle() {
    let program = gpu16_asm::assemble(COUNTING, "counting.s")
        .expect("assembles")
        .program;
    let config = Config::default();
    let mut m = machine(BackendKind::Interp, program.clone(), &[], &config).expect("starts");
    m.run_until(5);
    assert_eq!(m.go_back(2), None, "no snapshots kept");
    m.keep_snapshots(4);
    assert_eq!(m.snapshot_cycles(), vec![5], "the first where it stands");
    assert_eq!(m.go_back(3), None, "none at or before 3");
    assert_eq!(m.go_back(5), None, "not before where it stands");
    assert_eq!(m.run_until(40), Status::Paused(40));
    assert_eq!(
        m.snapshot_cycles(),
        vec![5, 8, 12, 16, 20, 24, 28, 32, 36, 40]
    );
    assert_eq!(m.go_back(9), Some(Status::Paused(9)));
    assert_eq!(
        m.snapshot_cycles(),
        vec![5, 8],
        "the later ones are forgotten"
    );
    // Past 64 snapshots the spacing doubles, dropping every other one.
    assert_eq!(m.run_until(4 * 70), Status::Paused(280));
    let kept = m.snapshot_cycles();
    assert!(kept.len() <= 64, "{kept:?}");
    assert_eq!(&kept[..3], &[8, 16, 24], "{kept:?}");
    assert_eq!(kept.last(), Some(&280), "{kept:?}");
}

/// A livelock is proven over checkpoints that come before and after a snapshot: four cores
/// add 1 to r1 for ever (a loop of register instructions whose registers repeat every 512
/// cycles), checkpoints 64 cycles apart. Every run resumed from a snapshot, on every
/// backend, stops at the livelock the whole run stops at, as does a machine gone back.
#[test]
fn a_livelock_proven_across_a_snapshot_is_the_whole_runs() {
    let program = gpu16_asm::assemble(COUNTING, "livelock.s")
        .expect("assembles")
        .program;
    let config = Config {
        checkpoint_cycles: 64,
        tasks: TaskLog::Summary,
        ..Config::default()
    };
    let reference = gpu16::run(BackendKind::Interp, &program, &[], &config);
    let Err(f) = &reference else {
        panic!("the loops ended")
    };
    assert!(
        matches!(f.error, gpu16_machine::RunError::Livelock { .. }),
        "{}",
        f.error
    );
    for runner in every_runner() {
        let mut m = machine(runner, program.clone(), &[], &config).expect("starts");
        m.keep_snapshots(7);
        m.run_until(u64::MAX);
        assert!(
            named(m.report()) == reference,
            "{runner:?}: {:?}",
            cycles(&m.report())
        );
        for at in m.snapshot_cycles() {
            let snapshot = m.snapshot_at_or_before(at).expect("kept");
            let resumed = runner
                .resume_observed(&program, snapshot, &config, &mut ())
                .expect("starts");
            assert!(
                named(resumed.clone()) == reference,
                "{runner:?} from cycle {at}: {:?} vs {:?}",
                cycles(&resumed),
                cycles(&reference)
            );
        }
        let before = m.snapshot_cycles()[1] + 3;
        m.go_back(before).expect("kept");
        m.run_until(u64::MAX);
        assert!(
            named(m.report()) == reference,
            "{runner:?} after going back to {before}"
        );
    }
}

/// Four cores take turns on one lock, incrementing the byte at 0x005 (row r14 = 5, bank
/// r1 = 0: never set) 255 * 255 times each (over 300,000 cycles: past 64 snapshots 4096
/// cycles apart, so the debugger's spacing doubles), then end.
const CONTENDED: &str = "\
.cf mask=0x000f
.if
    set_const 1, r8
    set_const 0xff, r12
    set_const 5, r14
outer:
    set_const 0xff, r11
inner:
    ld_sync [r14, r1], r9
    add r9, r8, r9
    st_sync [r14, r1], r9
    sub r11, r8, r11
    bnz inner, r11
    sub r12, r8, r12
    bnz outer, r12
    ready
";

fn session(program: &Program, runner: Runner) -> gpu16::debugger::Session {
    gpu16::debugger::Session::new(
        program.clone(),
        None,
        Vec::new(),
        runner,
        Config::default(),
        true,
    )
}

/// What a session says of where it stands.
fn looks(s: &mut gpu16::debugger::Session) -> Vec<String> {
    [
        "where",
        "regs",
        "locks",
        "x/4 0x004",
        "when 0x005",
        "when r9 core 2",
        "reverse-stepi 3",
    ]
    .iter()
    .map(|c| s.execute(c).text)
    .collect()
}

/// A debugging session that hops back and forth over a long contended run (so every move
/// back goes from a snapshot, and the searches behind `when` and `reverse-stepi` run from
/// snapshots) answers at each cycle what a new session that keeps no snapshot
/// (`search_exhaustively`: every run from cycle 0) and only stepped forward to it answers:
/// the machine there, the locks, the last writes and the last instruction.
#[test]
fn a_session_going_back_and_forth_answers_as_one_that_only_went_forward() {
    let program = gpu16_asm::assemble(CONTENDED, "contended.s")
        .expect("assembles")
        .program;
    let end = gpu16::run(BackendKind::Interp, &program, &[], &Config::default())
        .expect("it ends")
        .cycles;
    assert!(end > 64 * 4096, "{end} cycles");
    for runner in [
        Runner::from(BackendKind::Interp),
        Runner::from(BackendKind::Auto),
    ] {
        let mut hopping = session(&program, runner);
        hopping.execute(&format!("step {end}"));
        let mut at = hopping.execute("where").text;
        assert!(
            at.contains("\"end\"") || at.contains(&end.to_string()),
            "{at}"
        );
        let mut here = end;
        for target in [
            end / 2,
            end / 3,
            end - 5,
            1000,
            70_000,
            69_999,
            3,
            end / 2 + 4097,
            // Last, back to a snapshot inside the lock waits: the end is run from there.
            end / 3 + 1,
        ] {
            let moved = if target < here {
                hopping
                    .execute(&format!("reverse-step {}", here - target))
                    .text
            } else {
                hopping.execute(&format!("step {}", target - here)).text
            };
            assert!(moved.contains(&format!("\"cycle\":{target}")), "{moved}");
            here = target;
            let mut forward = session(&program, runner);
            forward.search_exhaustively(true);
            forward.execute(&format!("step {target}"));
            let (seen, expected) = (looks(&mut hopping), looks(&mut forward));
            assert_eq!(seen, expected, "{runner:?} at cycle {target}");
            // `reverse-stepi` moved both: back to the target.
            let back_at = hopping_cycle(&mut hopping);
            at = hopping.execute(&format!("step {}", target - back_at)).text;
            assert!(at.contains(&format!("\"cycle\":{target}")), "{at}");
        }
        // On to the end from the last snapshot gone back to: the end's report (its
        // counters and stalls, which the views above do not show) is the whole run's.
        let mut forward = session(&program, runner);
        forward.search_exhaustively(true);
        assert_eq!(
            hopping.execute("continue").text,
            forward.execute("continue").text,
            "{runner:?}: the end"
        );
    }
}

/// The cycle a session stands at.
fn hopping_cycle(s: &mut gpu16::debugger::Session) -> u64 {
    let v: serde_json::Value = serde_json::from_str(s.execute("where").text.trim()).expect("json");
    v["cycle"].as_u64().expect("a cycle")
}

/// Events in one canonical order (a run reports them as its cores reach them).
fn sorted(events: Vec<gpu16_machine::Event>) -> Vec<String> {
    let mut v: Vec<String> = events.iter().map(|e| format!("{e:?}")).collect();
    v.sort();
    v
}

/// A machine keeping snapshots reports, move by move, the events of the whole run: a
/// failing move's events come from a second run from the snapshot before the move (not
/// from cycle 0), and taking snapshots adds none. Generated programs of every profile, and
/// programs that break each runtime rule (faults).
#[test]
fn a_machine_keeping_snapshots_reports_the_runs_events() {
    let (mut compared, mut failed) = (0, 0);
    let mut all = cases(5_600_000..5_600_003);
    for seed in 0..3u64 {
        for v in gpu16_gen::Violation::ALL
            .into_iter()
            .filter(|v| !v.breaks_loading())
        {
            let g = gpu16_gen::generate_violating(seed, 8, Profile::Mixed, v);
            let program = Program::from_image(&g.image).expect("loads");
            let config = Config {
                max_cycles: 20_000,
                ..Config::default()
            };
            all.push((
                format!("seed {seed} {}", v.name()),
                program,
                g.memory,
                config,
            ));
        }
    }
    for (name, program, memory, config) in all {
        let mut events = Vec::new();
        let reference =
            gpu16::run_observed(BackendKind::Interp, &program, &memory, &config, &mut events);
        let reference_events = sorted(events);
        for (k, runner) in every_runner().into_iter().enumerate() {
            let mut m = machine(runner, program.clone(), &memory, &config).expect("starts");
            m.keep_snapshots([1, 7, 64][k % 3]);
            let mut seen = Vec::new();
            loop {
                let status = m.step(100);
                seen.append(&mut m.take_events().0);
                if status != Status::Paused(m.cycle()) {
                    break;
                }
            }
            assert!(named(m.report()) == reference, "{name} {runner:?}");
            assert_eq!(sorted(seen), reference_events, "{name} {runner:?}");
            compared += 1;
            if matches!(
                &reference,
                Err(f) if matches!(f.error, gpu16_machine::RunError::Fault { .. })
            ) {
                failed += 1;
            }
        }
    }
    assert!(
        compared >= 150 && failed >= 50,
        "{compared} runs, {failed} faults"
    );
}
