//! Generated programs keep their promises: they load, they run to completion without a
//! fault under every machine option, the same seed gives the same bytes, and each
//! rule-breaking program breaks exactly its rule.

use gpu16_gen::{generate, generate_violating, Profile, Violation};
use gpu16_interp::Interpreter;
use gpu16_machine::{run, Config, IssuePolicy, LoadError, Program, RunError};

fn configs() -> Vec<Config> {
    let mut v = Vec::new();
    for issue in [IssuePolicy::InOrder, IssuePolicy::Lookahead] {
        for bank_conflicts in [false, true] {
            v.push(Config {
                issue,
                bank_conflicts,
                // Generated programs are short; a generous limit still fails fast on a hang.
                max_cycles: 10_000_000,
                ..Config::default()
            });
        }
    }
    v
}

#[test]
fn valid_programs_load_and_finish_under_every_option() {
    for profile in Profile::ALL {
        for seed in 0..60 {
            let g = generate(seed, 1 + (seed as usize % 5), profile);
            let p = Program::from_image(&g.image)
                .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", profile.name()));
            for cfg in configs() {
                if let Err(f) = run(&mut Interpreter::new(), &p, &g.memory, &cfg) {
                    panic!("{} seed {seed} {cfg:?}: {}", profile.name(), f.error);
                }
            }
        }
    }
}

#[test]
fn same_seed_same_bytes() {
    let a = generate(12345, 6, Profile::Mixed);
    let b = generate(12345, 6, Profile::Mixed);
    assert_eq!(a, b);
    assert_ne!(a, generate(12346, 6, Profile::Mixed));
}

#[test]
fn each_violation_breaks_its_rule() {
    for v in Violation::ALL {
        for seed in 0..20 {
            let g = generate_violating(seed, 3, Profile::Mixed, v);
            let loaded = Program::from_image(&g.image);
            let name = v.name();
            match v {
                Violation::Length => assert!(matches!(loaded, Err(LoadError::Length { .. }))),
                Violation::GroupPastEnd => {
                    assert!(
                        matches!(loaded, Err(LoadError::GroupPastEnd { .. })),
                        "{loaded:?}"
                    )
                }
                Violation::ReservedFence => {
                    assert_eq!(loaded.unwrap_err(), LoadError::ReservedFence { frame: 0 })
                }
                Violation::ReservedMode => assert!(
                    matches!(loaded, Err(LoadError::ReservedMode { frame: 1, .. })),
                    "{loaded:?}"
                ),
                _ => {
                    let p = loaded.unwrap();
                    let cfg = Config {
                        max_cycles: 20_000,
                        ..Config::default()
                    };
                    let err = run(&mut Interpreter::new(), &p, &g.memory, &cfg)
                        .expect_err(name)
                        .error;
                    let expected = if v == Violation::EndlessLoop {
                        "watchdog"
                    } else {
                        name
                    };
                    assert_eq!(err.rule_name(), expected, "seed {seed}: {err}");
                    if let RunError::Fault { frame, .. } = err {
                        assert_eq!(frame, 1);
                    }
                }
            }
        }
    }
}
