//! Differential test: thousands of generated programs, across every profile, with rule
//! breaking and every machine option, must give identical outcomes on the interpreter, the
//! JIT and the auto backend. The reference is the interpreter; the cases are the same seeds
//! `gpu16 fuzz` uses, so a failure here reproduces with `gpu16 diff`.

use gpu16::fuzz::{diverge_in, shrink_divergence_in, Case};
use gpu16::machine::{Dialect, Event};
use gpu16::{BackendKind, Engine, Runner};
use gpu16_gen::Profile;

const PROGRAMS: u64 = 2400;

fn check(seeds: impl Iterator<Item = u64>, profile: Option<Profile>, b: impl Into<Runner>) -> u64 {
    let b = b.into();
    let mut n = 0;
    for seed in seeds {
        let c = Case::new(seed, profile);
        // `auto` compiles at the case's drawn thresholds, so short programs switch too.
        let b = c.runner(b);
        if let Some(d) = diverge_in(
            BackendKind::Interp,
            b,
            &c.image,
            &c.memory,
            &c.config,
            Dialect::Spec,
        ) {
            let (image, memory) = shrink_divergence_in(
                BackendKind::Interp,
                b,
                &c.image,
                &c.memory,
                &c.config,
                Dialect::Spec,
            );
            panic!(
                "seed {seed} ({:?}, {:?}, {:?}): {d}\nshrunk image: {image:02x?}\nmemory: {memory:02x?}",
                c.profile, c.violation, c.config
            );
        }
        n += 1;
    }
    n
}

#[test]
fn jit_equals_interpreter_on_every_profile() {
    let per = PROGRAMS / Profile::ALL.len() as u64;
    let mut total = 0;
    for (k, profile) in Profile::ALL.into_iter().enumerate() {
        let base = 7_000_000 + k as u64 * 1_000_000;
        total += check(base..base + per, Some(profile), BackendKind::Jit);
    }
    assert_eq!(total, PROGRAMS);
}

#[test]
fn every_jit_engine_equals_interpreter_on_every_profile() {
    let per = 600 / Profile::ALL.len() as u64;
    for engine in [Engine::Lockstep, Engine::PerCore] {
        let runner = Runner {
            backend: BackendKind::Jit,
            engine,
            hot: None,
        };
        for (k, profile) in Profile::ALL.into_iter().enumerate() {
            let base = 17_000_000 + k as u64 * 1_000_000;
            assert_eq!(check(base..base + per, Some(profile), runner), per);
        }
    }
}

#[test]
fn auto_lockstep_equals_interpreter_on_mixed_seeds() {
    let runner = Runner {
        backend: BackendKind::Auto,
        engine: Engine::Lockstep,
        hot: None,
    };
    assert_eq!(check(400..700, None, runner), 300);
}

#[test]
fn auto_equals_interpreter_on_mixed_seeds() {
    assert_eq!(check(0..400, None, BackendKind::Auto), 400);
}

#[test]
fn the_drawn_thresholds_make_auto_compile_short_programs() {
    // With the default thresholds (1000 issues, 80,000 instructions) a generated program,
    // a few frames issued once, is interpreted from start to end; with each case's drawn
    // thresholds most of them switch to compiled code, so the differential tests above
    // compare compiled code too. Counted on the backend itself, not through the run.
    let compiled = |seed: u64, hot: gpu16::Hotness| {
        let c = Case::new(seed, None);
        let Ok(program) = gpu16::machine::Program::from_image(&c.image) else {
            return false;
        };
        let mut auto = gpu16_jit::Auto::with_hotness(hot);
        let _ = gpu16::machine::run(&mut auto, &program, &c.memory, &c.config);
        auto.jit_built()
    };
    let seeds = 0..200u64;
    let by_default = seeds
        .clone()
        .filter(|&s| compiled(s, gpu16::Hotness::default()))
        .count();
    let drawn = seeds
        .clone()
        .filter(|&s| compiled(s, Case::new(s, None).hot))
        .count();
    assert_eq!(by_default, 0);
    assert!(drawn >= 120, "only {drawn} of 200 cases compiled a frame");
    // Threshold 1 is drawn, for issues and for instructions.
    let hots: Vec<gpu16::Hotness> = seeds.map(|s| Case::new(s, None).hot).collect();
    assert!(hots.iter().any(|h| h.issues == 1));
    assert!(hots.iter().any(|h| h.instructions == 1));
    assert_eq!(Case::new(77, None).hot, Case::new(77, None).hot);
}

#[test]
fn the_cases_cover_what_they_claim() {
    // The differential test is only as good as its cases: make sure the seeds above
    // produce faults, watchdog stops, both policies and bank conflicts.
    let mut faults = 0;
    let mut watchdogs = 0;
    let mut load_errors = 0;
    let mut lookahead = 0;
    let mut banks = 0;
    for seed in 0..600 {
        let c = Case::new(seed, None);
        lookahead += u32::from(c.config.issue == gpu16_machine::IssuePolicy::Lookahead);
        banks += u32::from(c.config.bank_conflicts);
        let Ok(program) = gpu16::machine::Program::from_image(&c.image) else {
            load_errors += 1;
            continue;
        };
        match gpu16::run(BackendKind::Interp, &program, &c.memory, &c.config) {
            Err(f) if f.error.rule_name() == "watchdog" => watchdogs += 1,
            Err(_) => faults += 1,
            Ok(_) => {}
        }
    }
    assert!(faults >= 10, "{faults} faults");
    assert!(watchdogs >= 10, "{watchdogs} watchdog stops");
    assert!(load_errors >= 5, "{load_errors} load errors");
    assert!(
        lookahead >= 200 && banks >= 150,
        "{lookahead} lookahead, {banks} bank"
    );
}

/// Programs a fuzz campaign once found diverging, shrunk and disassembled, with the machine
/// options of the campaign: every engine must agree with the interpreter on each.
#[test]
fn every_jit_engine_equals_interpreter_on_past_divergences() {
    use gpu16_machine::{Config, IssuePolicy};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions");
    let cases: [(&str, IssuePolicy, bool, &[u8]); 5] = [
        ("tied_end_in_order.s", IssuePolicy::InOrder, false, &[]),
        (
            "herd_sleepers_before_their_sequence.s",
            IssuePolicy::InOrder,
            false,
            &[],
        ),
        (
            "tied_end_lookahead_banks.s",
            IssuePolicy::Lookahead,
            true,
            &[0x76],
        ),
        (
            "frame_passed_before_a_fault_lookahead.s",
            IssuePolicy::Lookahead,
            false,
            &[],
        ),
        (
            "frame_passed_before_a_fault_lookahead_banks.s",
            IssuePolicy::Lookahead,
            true,
            &[],
        ),
    ];
    for (file, issue, bank_conflicts, memory) in cases {
        let path = format!("{dir}/{file}");
        let source = std::fs::read_to_string(&path).expect("the regression file");
        let image = gpu16_asm::assemble(&source, &path)
            .unwrap_or_else(|e| panic!("{file}: {e:?}"))
            .program
            .image();
        let config = Config {
            issue,
            bank_conflicts,
            max_cycles: 1_000_000,
            ..Config::default()
        };
        for engine in [Engine::PerCore, Engine::Lockstep, Engine::Adaptive] {
            for backend in [BackendKind::Jit, BackendKind::Auto] {
                let runner = Runner {
                    backend,
                    engine,
                    hot: None,
                };
                let d = diverge_in(
                    BackendKind::Interp,
                    runner,
                    &image,
                    memory,
                    &config,
                    Dialect::Spec,
                );
                assert_eq!(d, None, "{file} on {}", runner.name());
            }
        }
    }
}

/// What `run` returns, with every event it reported to the observer it is lent, as `Debug`
/// prints them and sorted: engines report events in their own order.
fn with_sorted_events<T>(run: impl FnOnce(&mut Vec<Event>) -> T) -> (T, Vec<String>) {
    let mut events: Vec<Event> = Vec::new();
    let result = run(&mut events);
    let mut events: Vec<String> = events.iter().map(|e| format!("{e:?}")).collect();
    events.sort();
    (result, events)
}

/// The interpreted group form (a group, and a cohort once a core of it falls asleep on a
/// lock) that the compiled engines fall back on is held to the per-core interpreter: the
/// same outcome and the same events on every profile.
#[test]
fn interpreter_in_lockstep_equals_interpreter_one_core_at_a_time() {
    use gpu16_interp::Interpreter;
    use gpu16_jit::GroupInterpreter;
    use gpu16_machine::engine::backend::Backend;
    use gpu16_machine::{run_observed, Program};
    let per = 6000 / Profile::ALL.len() as u64;
    for (k, profile) in Profile::ALL.into_iter().enumerate() {
        let base = 27_000_000 + k as u64 * 1_000_000;
        for seed in base..base + per {
            let c = Case::new(seed, Some(profile));
            let Ok(program) = Program::from_image(&c.image) else {
                continue;
            };
            fn run<B: Backend>(
                mut backend: B,
                program: &Program,
                c: &Case,
            ) -> (
                Result<gpu16_machine::RunReport, Box<gpu16_machine::RunFailure>>,
                Vec<String>,
            ) {
                with_sorted_events(|events| {
                    run_observed(&mut backend, program, &c.memory, &c.config, events)
                })
            }
            let (one, one_events) = run(Interpreter::new(), &program, &c);
            let (group, group_events) = run(GroupInterpreter::default(), &program, &c);
            // A failed run too: its events are those before its cycle, whichever engine
            // ran ahead of it (Observer::rewind_events).
            assert_eq!(
                one_events, group_events,
                "events, seed {seed} ({profile:?})"
            );
            assert_eq!(one, group, "seed {seed} ({profile:?})");
        }
    }
}

/// What an observer sees does not depend on the engine: every compiled engine reports the
/// interpreter's events, for a failed run too (those complete before its cycle), on every
/// profile with rule breaking, both policies and bank conflicts.
#[test]
fn every_engine_reports_the_interpreters_events() {
    use gpu16_machine::Program;
    let runners = [
        Runner {
            backend: BackendKind::Jit,
            engine: Engine::PerCore,
            hot: None,
        },
        Runner {
            backend: BackendKind::Jit,
            engine: Engine::Lockstep,
            hot: None,
        },
        Runner {
            backend: BackendKind::Auto,
            engine: Engine::Adaptive,
            hot: None,
        },
    ];
    let per = 480 / Profile::ALL.len() as u64;
    let mut failed = 0;
    for (k, profile) in Profile::ALL.into_iter().enumerate() {
        let base = 37_000_000 + k as u64 * 1_000_000;
        for seed in base..base + per {
            let c = Case::new(seed, Some(profile));
            let Ok(program) = Program::from_image(&c.image) else {
                continue;
            };
            let run = |runner: Runner| {
                with_sorted_events(|events| {
                    gpu16::run_observed(runner, &program, &c.memory, &c.config, events)
                        .map_err(|f| f.error)
                })
            };
            let (want, want_events) = run(BackendKind::Interp.into());
            failed += u32::from(want.is_err());
            for runner in runners {
                let (got, got_events) = run(runner);
                assert_eq!(
                    got.is_ok(),
                    want.is_ok(),
                    "seed {seed} ({profile:?}) on {}",
                    runner.name()
                );
                assert_eq!(
                    got_events,
                    want_events,
                    "events, seed {seed} ({profile:?}) on {}",
                    runner.name()
                );
            }
        }
    }
    assert!(failed >= 40, "only {failed} failed runs among the cases");
}

/// The MCST dialect: the JIT runs register-only slots ahead in compiled code, which must
/// agree with the interpreter's slot-by-slot stepping under the default timing, `mcst-rtl`
/// and random slot models, with watchdog limits anywhere (the cases `gpu16 fuzz --dialect
/// mcst` draws).
#[test]
fn jit_equals_interpreter_in_the_mcst_dialect() {
    let mut compared = 0;
    for seed in 40_000_000..40_000_600 {
        let c = Case::new_in(seed, None, Dialect::Mcst);
        let d = diverge_in(
            BackendKind::Interp,
            BackendKind::Jit,
            &c.image,
            &c.memory,
            &c.config,
            c.dialect,
        );
        assert!(
            d.is_none(),
            "seed {seed} ({:?}, timing {}): {}",
            c.profile,
            gpu16::timing::spec(&c.config.timing),
            d.unwrap_or_default()
        );
        compared += 1;
    }
    assert_eq!(compared, 600);
}

/// The compiled runners the program-file tests hold to the interpreter: each JIT engine,
/// and `auto` at the given hot thresholds.
fn compiled_runners(hot: gpu16::Hotness) -> [Runner; 4] {
    [
        (BackendKind::Jit, Engine::Lockstep),
        (BackendKind::Jit, Engine::PerCore),
        (BackendKind::Jit, Engine::Adaptive),
        (BackendKind::Auto, Engine::Adaptive),
    ]
    .map(|(backend, engine)| Runner {
        backend,
        engine,
        hot: (backend == BackendKind::Auto).then_some(hot),
    })
}

/// The spec's rule sets: both issue policies, the bank-conflict model off and on.
fn rule_sets(max_cycles: u64) -> [gpu16_machine::Config; 4] {
    use gpu16_machine::IssuePolicy;
    [
        (IssuePolicy::InOrder, false),
        (IssuePolicy::InOrder, true),
        (IssuePolicy::Lookahead, false),
        (IssuePolicy::Lookahead, true),
    ]
    .map(|(issue, bank_conflicts)| gpu16_machine::Config {
        max_cycles,
        issue,
        bank_conflicts,
        ..gpu16_machine::Config::default()
    })
}

/// The `.s` files of `dir` (relative to the package), sorted.
fn program_files(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "s"))
        .collect();
    files.sort();
    files
}

/// Every runner of `runners` gives the interpreter's outcome on `image` under each of
/// `configs`; returns how many runs were compared.
fn every_runner_agrees(
    name: &str,
    image: &[u8],
    memory: &[u8],
    configs: &[gpu16_machine::Config],
    dialect: Dialect,
    runners: [Runner; 4],
) -> usize {
    let mut compared = 0;
    for config in configs {
        for runner in runners {
            let d = diverge_in(BackendKind::Interp, runner, image, memory, config, dialect);
            assert_eq!(
                d,
                None,
                "{name} on {}, {:?} issue, bank conflicts {}, timing {}",
                runner.name(),
                config.issue,
                config.bank_conflicts,
                gpu16::timing::spec(&config.timing)
            );
            compared += 1;
        }
    }
    compared
}

/// The benchmark programs (`benches/classes/`) are the shapes the engines were made fast
/// for: every engine must give the interpreter's outcome on each, up to a watchdog that
/// keeps the suite short (a run it stops must leave the interpreter's state too), with the
/// bank-conflict model off and on and under both issue policies (the benchmarks run the
/// default only, so nothing else held their shapes to the other rules).
#[test]
fn every_engine_equals_interpreter_on_the_benchmark_classes() {
    let files = program_files("benches/classes");
    assert!(files.len() >= 16, "the classes and their other shapes");
    let runners = compiled_runners(gpu16::Hotness {
        issues: 2,
        instructions: 64,
    });
    let mut compared = 0;
    for path in &files {
        let name = path.display().to_string();
        let source = std::fs::read_to_string(path).expect("a benchmark program");
        let image = gpu16_asm::assemble(&source, &name)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"))
            .program
            .image();
        let configs = rule_sets(200_000);
        compared += every_runner_agrees(&name, &image, &[], &configs, Dialect::Spec, runners);
    }
    assert_eq!(compared, files.len() * 4 * 4);
}

/// The bundled examples are what a user runs first, each on its own memory image (the
/// generated cases and the benchmark classes start from other data): every engine must
/// give the interpreter's outcome on each, under both issue policies with the
/// bank-conflict model off and on, and the MCST example in its dialect under the default
/// timing and `mcst-rtl`. `tests/examples.rs` holds the interpreter's results to plain
/// Rust computations.
#[test]
fn every_engine_equals_interpreter_on_the_bundled_examples() {
    let files = program_files("examples");
    assert_eq!(files.len(), 11, "the examples in examples/");
    let runners = compiled_runners(gpu16::Hotness {
        issues: 1,
        instructions: 1,
    });
    let mut compared = 0;
    for path in files {
        let name = path.display().to_string();
        let mcst = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("mcst"));
        let dialect = if mcst { Dialect::Mcst } else { Dialect::Spec };
        let image = gpu16_asm::assemble_file_in(&path, dialect)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .program
            .image();
        let mem_path = path.with_extension("mem.hex");
        let memory = if mem_path.exists() {
            gpu16::input::load_memory(&mem_path).unwrap_or_else(|e| panic!("{name}: {e}"))
        } else {
            Vec::new()
        };
        let configs: Vec<_> = if mcst {
            ["default", "mcst-rtl"]
                .iter()
                .map(|t| gpu16_machine::Config {
                    timing: gpu16::timing::parse(t).expect("a timing"),
                    ..gpu16_machine::Config::default()
                })
                .collect()
        } else {
            rule_sets(gpu16_machine::Config::default().max_cycles).to_vec()
        };
        compared += every_runner_agrees(&name, &image, &memory, &configs, dialect, runners);
    }
    // 10 spec examples x 4 rule sets and the MCST one x 2 timings, on 4 runners.
    assert_eq!(compared, (10 * 4 + 2) * 4);
}
