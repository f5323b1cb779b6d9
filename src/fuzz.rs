//! Fuzz cases: each seed names one generated program, memory image and machine
//! configuration, so a campaign is a range of seeds that any machine can split and replay.
//! [`targets`] holds the bodies of the coverage-guided fuzz targets.

pub mod targets;

use crate::diff::{first_divergence, Outcome};
use crate::Runner;
use gpu16_gen::rng::Rng;
use gpu16_gen::{generate, generate_violating, shrink, Profile, Violation};
use gpu16_machine::{Config, IssuePolicy, Program, RunError, RunFailure, RunReport};
use std::panic::AssertUnwindSafe;

/// One generated test case.
#[derive(Clone, Debug)]
pub struct Case {
    /// The seed that names it: the same seed gives the same case on every machine.
    pub seed: u64,
    /// The generator profile the program was drawn from.
    pub profile: Profile,
    /// The one rule the program breaks on purpose, if any (about one case in ten).
    pub violation: Option<Violation>,
    /// The program image, a whole number of 32-byte frames.
    pub image: Vec<u8>,
    /// The shared-memory image it starts from (at most 4096 bytes; the rest is zero).
    pub memory: Vec<u8>,
    /// The machine options: issue policy, bank conflicts and a watchdog limit, which is
    /// sometimes small so that the watchdog's exact stop is tested too.
    pub config: Config,
}

/// The case a seed names. `profile` fixes the profile; `None` picks one per seed.
pub fn case(seed: u64, profile: Option<Profile>) -> Case {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let profile = profile.unwrap_or_else(|| rng.pick(&Profile::ALL));
    let groups = rng.range(1, 6) as usize;
    let violation = rng.chance(10).then(|| rng.pick(&Violation::ALL));
    let g = match violation {
        Some(v) => generate_violating(seed, groups, profile, v),
        None => generate(seed, groups, profile),
    };
    let max_cycles = if violation == Some(Violation::EndlessLoop) || rng.chance(8) {
        // A limit that lands anywhere in a run exercises the watchdog's exact stop.
        rng.range(1, 4000)
    } else {
        1_000_000
    };
    let config = Config {
        issue: if rng.chance(50) {
            IssuePolicy::InOrder
        } else {
            IssuePolicy::Lookahead
        },
        bank_conflicts: rng.chance(40),
        max_cycles,
        ..Config::default()
    };
    Case {
        seed,
        profile,
        violation,
        image: g.image,
        memory: g.memory,
        config,
    }
}

/// Load and run an image on a backend; a load error is an outcome both sides must share. A
/// panic is a bug, and an outcome too (a failure naming it), so that it is reported and
/// shrunk like any divergence instead of ending the campaign.
pub fn outcome(
    backend: impl Into<Runner>,
    image: &[u8],
    memory: &[u8],
    config: &Config,
) -> Result<Outcome, String> {
    let backend = backend.into();
    let program = Program::from_image(image).map_err(|e| e.to_string())?;
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

/// The first divergence between two backends on an image, if any.
pub fn diverge(
    a: impl Into<Runner>,
    b: impl Into<Runner>,
    image: &[u8],
    memory: &[u8],
    config: &Config,
) -> Option<String> {
    let (a, b) = (a.into(), b.into());
    match (
        outcome(a, image, memory, config),
        outcome(b, image, memory, config),
    ) {
        (Err(x), Err(y)) if x == y => None,
        (Err(x), Err(y)) => Some(format!("load: {}: {x}; {}: {y}", a.name(), b.name())),
        (Ok(x), Ok(y)) => first_divergence(&a.name(), &x, &b.name(), &y),
        _ => Some("load: only one backend accepted the image".into()),
    }
}

/// Shrink a diverging image and memory while the two backends still diverge.
pub fn shrink_divergence(
    a: impl Into<Runner>,
    b: impl Into<Runner>,
    image: &[u8],
    memory: &[u8],
    config: &Config,
) -> (Vec<u8>, Vec<u8>) {
    let (a, b) = (a.into(), b.into());
    shrink(image, memory, |img, mem| {
        diverge(a, b, img, mem, config).is_some()
    })
}
