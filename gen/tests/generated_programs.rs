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

/// The groups of an image, walked positionally: (control frame, instruction frame count).
fn layout(image: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < image.len() / 32 {
        let n = usize::from(image[i * 32] & 0x3F);
        out.push((i, n));
        i += n + 1;
    }
    out
}

fn word(image: &[u8], frame: usize, slot: usize) -> u16 {
    let at = frame * 32 + 2 * slot;
    u16::from_le_bytes([image[at], image[at + 1]])
}

#[test]
fn each_violation_breaks_its_rule() {
    for v in Violation::ALL {
        // Where the rule was broken, over the seeds: it must not always be the same place.
        let mut frames = std::collections::BTreeSet::new();
        let mut ips = std::collections::BTreeSet::new();
        for seed in 0..40 {
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
                    // Exactly one control frame has fence bits 3, and the load names it.
                    let bad: Vec<usize> = layout(&g.image)
                        .into_iter()
                        .map(|(cf, _)| cf)
                        .filter(|&cf| g.image[cf * 32] >> 6 == 3)
                        .collect();
                    assert_eq!(bad.len(), 1, "seed {seed}");
                    assert_eq!(
                        loaded.unwrap_err(),
                        LoadError::ReservedFence { frame: bad[0] }
                    );
                    frames.insert(bad[0]);
                }
                Violation::ReservedMode => {
                    // Exactly one ld/st word of an instruction frame has mode 2 or 3.
                    let mut bad = Vec::new();
                    for (cf, n) in layout(&g.image) {
                        for f in cf + 1..=cf + n {
                            for slot in 0..16 {
                                let w = word(&g.image, f, slot);
                                if matches!(w >> 12, 0xb | 0xd) && (w >> 6) & 3 >= 2 {
                                    bad.push((f, slot));
                                }
                            }
                        }
                    }
                    assert_eq!(bad.len(), 1, "seed {seed}");
                    let (frame, slot) = bad[0];
                    assert!(
                        matches!(loaded, Err(LoadError::ReservedMode { frame: f, slot: s, .. }) if (f, s) == (frame, slot)),
                        "seed {seed}: {loaded:?}, expected frame {frame} slot {slot}"
                    );
                    frames.insert(frame);
                    ips.insert(slot);
                }
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
                    if let RunError::Fault { frame, ip, .. } = err {
                        let is_if = layout(&g.image)
                            .iter()
                            .any(|&(cf, n)| frame > cf && frame <= cf + n);
                        assert!(is_if, "seed {seed}: frame {frame} is no instruction frame");
                        // The instruction at the faulting IP is the one that breaks the rule.
                        let w = word(&g.image, frame, usize::from(ip).min(15));
                        let opc = w >> 12;
                        let mode = (w >> 6) & 3;
                        let fits = match v {
                            Violation::StSyncWithoutSequence | Violation::StSyncWrongAddress => {
                                opc == 0xd && mode == 1
                            }
                            Violation::LdSyncWhileHolding => opc == 0xb && mode == 1,
                            Violation::AccessWhileHolding => matches!(opc, 0xb | 0xd) && mode == 0,
                            Violation::ReadyWhileHolding => opc == 0xf,
                            _ => true,
                        };
                        assert!(fits, "seed {seed}: word {w:04x} at frame {frame} IP {ip}");
                        frames.insert(frame);
                        ips.insert(usize::from(ip));
                    }
                }
            }
        }
        match v {
            Violation::Length | Violation::GroupPastEnd | Violation::EndlessLoop => {}
            Violation::ReservedFence => assert!(frames.len() >= 3, "{v:?}: {frames:?}"),
            Violation::FrameEndWhileHolding => assert!(frames.len() >= 3, "{v:?}: {frames:?}"),
            _ => assert!(
                frames.len() >= 3 && ips.len() >= 5,
                "{v:?}: frames {frames:?}, IPs {ips:?}"
            ),
        }
    }
}
