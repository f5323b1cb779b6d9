//! `gpu16 gen`: write a generated program (and its memory image) for a seed.

use super::{CliError, Finished};
use clap::Args;
use gpu16_gen::{generate, generate_violating, Profile, Violation};
use std::path::PathBuf;

#[derive(Args)]
pub struct GenArgs {
    /// Seed: the same seed gives the same bytes on every machine.
    #[arg(long)]
    pub seed: u64,
    /// Number of full control-frame groups (at least 1); a program the profile pads into a
    /// stream past the 64-frame task memory has short groups besides.
    #[arg(long, default_value_t = 3,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub groups: usize,
    /// What to favour: alu, memory, atomics, scheduler or mixed.
    #[arg(long, default_value = "mixed", value_parser = parse_profile)]
    pub profile: Profile,
    /// Break exactly one rule: st_sync-without-sequence, st_sync-wrong-address,
    /// ld_sync-while-holding, access-while-holding, ready-while-holding,
    /// frame-end-while-holding, length, group-past-end, reserved-fence, reserved-mode,
    /// endless-loop.
    #[arg(long = "break", value_name = "RULE", value_parser = parse_violation)]
    pub violation: Option<Violation>,
    /// Output program image (32-byte frames).
    #[arg(short = 'o', long = "out", value_name = "OUT.bin")]
    pub out: PathBuf,
    /// Also write the matching random shared-memory image.
    #[arg(long, value_name = "MEM.bin")]
    pub mem_out: Option<PathBuf>,
}

pub fn parse_profile(s: &str) -> Result<Profile, String> {
    Profile::from_name(s).ok_or_else(|| {
        let names: Vec<_> = Profile::ALL.iter().map(|p| p.name()).collect();
        format!("unknown profile `{s}` (one of {})", names.join(", "))
    })
}

fn parse_violation(s: &str) -> Result<Violation, String> {
    Violation::from_name(s).ok_or_else(|| {
        let names: Vec<_> = Violation::ALL.iter().map(|v| v.name()).collect();
        format!("unknown rule `{s}` (one of {})", names.join(", "))
    })
}

/// `gpu16 gen`: status 0, or 1 for an output it cannot write.
pub fn gen(args: GenArgs) -> Result<Finished, CliError> {
    let g = match args.violation {
        Some(v) => generate_violating(args.seed, args.groups, args.profile, v),
        None => generate(args.seed, args.groups, args.profile),
    };
    let write = |path: &PathBuf, bytes: &[u8]| {
        std::fs::write(path, bytes)
            .map_err(|e| CliError::Failed(format!("{}: cannot write: {e}", path.display())))
    };
    write(&args.out, &g.image)?;
    if let Some(m) = &args.mem_out {
        write(m, &g.memory)?;
    }
    Ok(Finished::Success)
}
