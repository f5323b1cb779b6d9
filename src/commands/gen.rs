//! `gpu16 gen`: write a generated program (and its memory image) for a seed, in the spec
//! dialect or (`--dialect mcst`) the MCST one.

use super::deadlines::writing_deadline;
use super::json_out::{self, refuse};
use super::outputs::{check_distinct, write_together, Named};
use super::value_enums::DialectArg;
use super::{CliError, Finished};
use crate::run_output::file::{is_stdout, OutputFile};
use clap::Args;
use gpu16::input::MemoryFormat;
use gpu16::machine::Dialect;
use gpu16_gen::{generate_in, generate_violating, Profile, Violation, MAX_GROUPS, MCST_MAX_GROUPS};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The arguments of `gpu16 gen`.
#[derive(Args)]
pub struct GenArgs {
    /// Seed: the same seed gives the same bytes on every machine.
    #[arg(long)]
    pub seed: u64,
    /// Number of full control-frame groups, 1 to 65536 (a group is at most 5 frames); a
    /// program the profile pads into a stream past the 64-frame task memory has short
    /// groups besides.
    #[arg(long, default_value_t = 3,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=MAX_GROUPS as u64))]
    pub groups: usize,
    /// What to favour: alu, memory, atomics, scheduler, mixed or private.
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
    /// Also write the matching random shared-memory image: $readmemh text for a name
    /// ending .hex, .mem, .vmem or .txt, raw bytes otherwise (as --mem reads it back).
    #[arg(long, value_name = "MEM.bin")]
    pub mem_out: Option<PathBuf>,
    /// The ISA dialect of the program. An mcst program has at most 12 groups (64 frames
    /// with its final `.halt` frame) and no atomic sequences; `--break` is spec-only.
    #[arg(long, value_enum, default_value = "spec")]
    pub dialect: DialectArg,
    /// Print one JSON object on stdout saying what was written (the files must not be
    /// stdout).
    ///
    /// Keys: `files`, one object per file written, `{"flag": "-o" or "--mem-out", "file",
    /// "bytes"}`; `frames`, the program's frames; `seed`. A command that stops before it
    /// writes (flags that cannot go together, an output it cannot write) prints
    /// `{"error", "stage", "file"}` as `run --json` does, `stage` being `usage` or
    /// `output`, with the same status as without --json.
    #[arg(long)]
    pub json: bool,
    /// Give up after SECS (status 1, and --json's `output` object) while an output is a FIFO
    /// no one reads: it blocks this command where nothing else would end it, as with
    /// `run --timeout`.
    #[arg(long, value_name = "SECS", value_parser = crate::stop::parse_timeout)]
    pub timeout: Option<std::time::Duration>,
}

pub fn parse_profile(s: &str) -> Result<Profile, String> {
    Profile::parse(s)
}

fn parse_violation(s: &str) -> Result<Violation, String> {
    Violation::from_name(s).ok_or_else(|| {
        let names: Vec<_> = Violation::ALL.iter().map(|v| v.name()).collect();
        format!("unknown rule `{s}` (one of {})", names.join(", "))
    })
}

/// `gpu16 gen`: status 0, 1 for an output it cannot write, 2 for `-o` and `--mem-out`
/// naming one file. The program and its memory image are put in place together, or neither
/// is.
pub fn gen(args: GenArgs) -> Result<Finished, CliError> {
    let json = args.json;
    let usage = |message: String| refuse(json, "usage", CliError::usage(message), None);
    let dialect = args.dialect.0;
    if dialect == Dialect::Mcst {
        if args.violation.is_some() {
            return Err(usage(
                "--break makes a program that breaks a rule of the spec dialect; it cannot be combined with --dialect mcst".into(),
            ));
        }
        if args.groups > MCST_MAX_GROUPS {
            return Err(usage(format!(
                "--groups {} is too many for --dialect mcst: at most {MCST_MAX_GROUPS} groups fit its 64-frame task memory",
                args.groups
            )));
        }
    }
    let mut named = vec![Named::new("-o", &args.out)];
    if let Some(m) = &args.mem_out {
        named.push(Named::new("--mem-out", m));
    }
    check_distinct(&[], &named).map_err(usage)?;
    if let Some(n) = named.iter().find(|n| json && is_stdout(&n.path)) {
        return Err(usage(format!(
            "--json and {} - both write stdout: give {} a file",
            n.flag, n.flag
        )));
    }
    let output_failed = |e: crate::run_output::file::OutputError| {
        refuse(json, "output", CliError::failed(&e), Some(&e.path))
    };
    let outputs: Vec<&Path> = named.iter().map(|n| n.path.as_path()).collect();
    let _writing = writing_deadline(args.timeout, json, &outputs, "", 1);
    let files = named
        .iter()
        .map(|n| OutputFile::prepare(&n.path))
        .collect::<Result<Vec<_>, _>>()
        .map_err(output_failed)?;
    let g = match args.violation {
        Some(v) => generate_violating(args.seed, args.groups, args.profile, v),
        None => generate_in(args.seed, args.groups, args.profile, dialect),
    };
    let memory = args
        .mem_out
        .as_deref()
        .map(|m| MemoryFormat::written_at(m).encode(&g.memory));
    let contents = [&g.image[..], memory.as_deref().unwrap_or_default()];
    let pairs: Vec<(&OutputFile, &[u8])> = files.iter().zip(contents).collect();
    write_together(&pairs).map_err(output_failed)?;
    if json {
        let written: Vec<_> = named
            .iter()
            .zip(&pairs)
            .map(|(n, (_, bytes))| {
                json!({"flag": n.flag, "file": n.path.display().to_string(), "bytes": bytes.len()})
            })
            .collect();
        json_out::print(&json!({
            "files": written,
            "frames": g.image.len() / 32,
            "seed": args.seed,
        }))?;
    }
    Ok(Finished::Success)
}
