//! Fuzz cases: each seed names one generated program, memory image, machine configuration
//! and the thresholds at which `auto` compiles (so the switch to compiled code is fuzzed
//! too), so a campaign is a range of seeds that any machine can split and replay.
//! [`targets`] holds the bodies of the coverage-guided fuzz targets.

pub mod targets;

use crate::diff::{first_divergence, Outcome};
use crate::{Hotness, Runner};
use gpu16_gen::rng::Rng;
use gpu16_gen::{generate_in, generate_violating, shrink, Profile, Violation};
use gpu16_machine::{
    Config, Dialect, IssuePolicy, Program, RunError, RunFailure, RunReport, SlotTiming, Timing,
};
use std::panic::AssertUnwindSafe;

/// One generated test case.
#[derive(Clone, Debug)]
pub struct Case {
    /// The seed that names it: the same seed gives the same case on every machine.
    pub seed: u64,
    /// The generator profile the program was drawn from.
    pub profile: Profile,
    /// The dialect the program is written in (and run in).
    pub dialect: Dialect,
    /// The one rule the program breaks on purpose, if any (about one case in ten).
    pub violation: Option<Violation>,
    /// The program image, a whole number of 32-byte frames.
    pub image: Vec<u8>,
    /// The shared-memory image it starts from (at most 4096 bytes; the rest is zero).
    pub memory: Vec<u8>,
    /// The machine options: issue policy, bank conflicts and a watchdog limit, which is
    /// sometimes small so that the watchdog's exact stop is tested too.
    pub config: Config,
    /// When `auto` compiles in this case ([`Case::runner`]): thresholds drawn per seed,
    /// 1 included, so that short programs are compiled too and the switch to compiled
    /// code falls in the middle of runs.
    pub hot: Hotness,
}

impl Case {
    /// The case a seed names in the spec dialect. `profile` fixes the profile; `None` picks
    /// one per seed.
    pub fn new(seed: u64, profile: Option<Profile>) -> Case {
        Case::new_in(seed, profile, Dialect::Spec)
    }

    /// The case a seed names in `dialect`. In the MCST dialect the program breaks no rule on
    /// purpose (the violations are the spec's), and the timing is the default, `mcst-rtl` or
    /// a random slot model (one case in three each), so that every bubble and latency rule
    /// meets compiled code.
    pub fn new_in(seed: u64, profile: Option<Profile>, dialect: Dialect) -> Case {
        let mut rng = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let profile = profile.unwrap_or_else(|| rng.pick(&Profile::ALL));
        let groups = rng.range(1, 6) as usize;
        let violation =
            (dialect == Dialect::Spec && rng.chance(10)).then(|| rng.pick(&Violation::ALL));
        let g = match violation {
            Some(v) => generate_violating(seed, groups, profile, v),
            None => generate_in(seed, groups, profile, dialect),
        };
        let max_cycles = if violation == Some(Violation::EndlessLoop) || rng.chance(8) {
            // A limit that lands anywhere in a run exercises the watchdog's exact stop.
            rng.range(1, 4000)
        } else {
            1_000_000
        };
        // The MCST scheduler is in-order only and its banks are the slot model's
        // (`crate::dialect::check_config`).
        let spec = dialect == Dialect::Spec;
        let config = Config {
            issue: if !spec || rng.chance(50) {
                IssuePolicy::InOrder
            } else {
                IssuePolicy::Lookahead
            },
            bank_conflicts: spec && rng.chance(40),
            max_cycles,
            timing: match dialect {
                Dialect::Spec => Timing::default(),
                Dialect::Mcst => mcst_timing(&mut rng),
            },
            ..Config::default()
        };
        Case {
            seed,
            profile,
            dialect,
            violation,
            image: g.image,
            memory: g.memory,
            config,
            hot: auto_hotness(seed),
        }
    }

    /// `runner` as this case runs it: `auto` compiles exactly at the case's thresholds.
    pub fn runner(&self, runner: Runner) -> Runner {
        Runner {
            hot: Some(self.hot),
            ..runner
        }
    }
}

/// The `auto` thresholds of the case `seed` names, from a random stream of their own, so
/// that every other draw of a seed's case is what it was before thresholds were drawn.
/// Low thresholds are the likelier: with the default ones a short program never compiles.
pub(crate) fn auto_hotness(seed: u64) -> Hotness {
    let mut rng = Rng::new(seed ^ 0x5DEE_CE66_D1CE_4E5B);
    Hotness {
        issues: rng.pick(&[1, 1, 2, 3, 5, 1000]),
        instructions: rng.pick(&[1, 2, 7, 30, 150, 80_000]),
    }
}

/// A timing for an MCST case: the default, `mcst-rtl`, or every slot latency drawn at
/// random within what `--timing` accepts for the rules it exercises.
fn mcst_timing(rng: &mut Rng) -> Timing {
    match rng.range(0, 2) {
        0 => Timing::default(),
        1 => Timing::mcst_rtl(),
        _ => Timing {
            control_frame_cycles: rng.range(1, 2),
            broadcast_cycles: rng.range(1, 6),
            slots: SlotTiming {
                pipeline_fill: rng.range(0, 4),
                ip15_end_cycles: rng.range(0, 1),
                taken_branch_bubbles: rng.range(0, 3),
                load_cycles: rng.range(1, 3),
                load_use_bubbles: rng.range(0, 1),
                branch_after_load_bubbles: rng.range(0, 1),
                bank_switch: rng.chance(50),
                round_robin: rng.chance(50),
            },
            ..Timing::default()
        },
    }
}

/// Load an image in `dialect` and run it on a backend; a load error is an outcome both
/// sides must share. A panic is a bug, and an outcome too (a failure naming it), so that it
/// is reported and shrunk like any divergence instead of ending the campaign.
pub(crate) fn outcome_in(
    backend: impl Into<Runner>,
    image: &[u8],
    memory: &[u8],
    config: &Config,
    dialect: Dialect,
) -> Result<Outcome, String> {
    let backend = backend.into();
    let program = Program::from_image_in(image, dialect).map_err(|e| e.to_string())?;
    let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
        crate::run(backend, &program, memory, config)
    }));
    Ok(ran.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Box::new(RunFailure {
            error: RunError::Internal {
                frame: None,
                message: format!("panicked: {message}"),
            },
            state: RunReport::initial(backend.backend.name(), *config, memory),
        }))
    }))
}

/// The first divergence between two backends on a spec-dialect image, if any.
pub(crate) fn diverge(
    a: impl Into<Runner>,
    b: impl Into<Runner>,
    image: &[u8],
    memory: &[u8],
    config: &Config,
) -> Option<String> {
    diverge_in(a, b, image, memory, config, Dialect::Spec)
}

/// The first divergence between two backends on an image of `dialect`, if any.
pub fn diverge_in(
    a: impl Into<Runner>,
    b: impl Into<Runner>,
    image: &[u8],
    memory: &[u8],
    config: &Config,
    dialect: Dialect,
) -> Option<String> {
    let (a, b) = (a.into(), b.into());
    match (
        outcome_in(a, image, memory, config, dialect),
        outcome_in(b, image, memory, config, dialect),
    ) {
        (Err(x), Err(y)) if x == y => None,
        (Err(x), Err(y)) => Some(format!("load: {}: {x}; {}: {y}", a.name(), b.name())),
        (Ok(x), Ok(y)) => first_divergence(&a.name(), &x, &b.name(), &y),
        _ => Some("load: only one backend accepted the image".into()),
    }
}

/// Shrink a diverging image of `dialect` and its memory while the two backends still
/// diverge (a candidate the dialect cannot load does not diverge, so is not taken).
pub fn shrink_divergence_in(
    a: impl Into<Runner>,
    b: impl Into<Runner>,
    image: &[u8],
    memory: &[u8],
    config: &Config,
    dialect: Dialect,
) -> (Vec<u8>, Vec<u8>) {
    let (a, b) = (a.into(), b.into());
    shrink(image, memory, |img, mem| {
        diverge_in(a, b, img, mem, config, dialect).is_some()
    })
}
