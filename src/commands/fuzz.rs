//! `gpu16 fuzz`: generate programs from a range of seeds and diff two backends on each, on
//! every core, stopping at the first divergence with a shrunk reproducer. Status 0 when no
//! program diverged, 1 on a divergence, 2 when it could not compare.

use super::bounds::{MAX_COUNT, MAX_JOBS};
use super::gen::parse_profile;
use super::json_out::refuse;
use super::outputs::write_together;
use super::stdout::StdoutError;
use super::value_enums::{BackendArg, DialectArg, EngineArg};
use super::{emit, CliError, Finished};
use crate::run_output::file::{check_directory, OutputFile};
use clap::Args;
use gpu16::fuzz::{diverge_in, shrink_divergence_in, Case};
use gpu16::machine::Dialect;
use gpu16::{BackendKind, Engine, Runner};
use gpu16_gen::Profile;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct FuzzArgs {
    /// Programs to generate and diff (before sharding), at most 2^48.
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=MAX_COUNT))]
    pub count: u64,
    /// Worker threads, 1 to 256 (default: all cores).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=MAX_JOBS as u64))]
    pub jobs: Option<usize>,
    /// Run only shard I of K (0-based): seeds whose index is I modulo K.
    #[arg(long, value_name = "I/K", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// First seed of the campaign.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The dialect of the generated programs. Under `mcst` each case also draws its timing:
    /// the default, `mcst-rtl`, or a random slot model.
    #[arg(long, value_enum, value_name = "DIALECT", default_value_t = DialectArg(Dialect::Spec))]
    pub dialect: DialectArg,
    /// Only this profile (default: a profile per seed).
    #[arg(long, value_parser = parse_profile)]
    pub profile: Option<Profile>,
    /// The two backends to compare.
    #[arg(long, value_enum, num_args = 2, value_names = ["A", "B"], default_values_t = BackendArg::DIFF_PAIR)]
    pub backends: Vec<BackendArg>,
    /// How compiled code (jit, auto) runs the cores of a task; the interpreter always runs
    /// one core at a time.
    #[arg(long, value_enum, value_name = "ENGINE", default_value_t = EngineArg(Engine::default()))]
    pub jit_engine: EngineArg,
    /// Where a shrunk reproducer is written (created when one is; checked before the
    /// campaign starts).
    #[arg(long, value_name = "DIR", default_value = "fuzz-repro")]
    pub out: PathBuf,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Print one JSON object: `programs`, `seconds`, `backends` ([A, B], as reports name
    /// them), `dialect` and `divergence`: null, or {`seed`, `profile`, `violation` (null or
    /// the rule), `first`, `frames` (of the shrunk program), `shrunk`, `program` and `memory`
    /// (the reproducer's files), `reproduce` (the `gpu16 diff` command)}. A campaign that
    /// cannot compare prints {`error`, `stage`}.
    #[arg(long)]
    pub json: bool,
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (i, k) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}` is not I/K"))?;
    let i: u64 = i.parse().map_err(|_| format!("`{i}` is not a number"))?;
    let k: u64 = k.parse().map_err(|_| format!("`{k}` is not a number"))?;
    if k == 0 || i >= k {
        return Err(format!("shard {i}/{k}: need 0 <= I < K"));
    }
    Ok((i, k))
}

/// `gpu16 fuzz`. Every error is [`CliError::CannotCompare`]: the campaign did not give a
/// verdict it could report.
pub fn fuzz(args: FuzzArgs) -> Result<Finished, CliError> {
    let json = args.json;
    campaign(args).map_err(|e| refuse(json, "compare", e, None))
}

/// The campaign [`fuzz`] runs.
fn campaign(args: FuzzArgs) -> Result<Finished, CliError> {
    // A campaign may run for hours: know now that its reproducer can be written.
    check_directory(&args.out).map_err(CliError::cannot_compare)?;
    let runner = |backend| Runner {
        backend,
        engine: args.jit_engine.0,
        hot: None,
    };
    let (a, b) = (runner(args.backends[0].0), runner(args.backends[1].0));
    let (shard, shards) = args.shard.unwrap_or((0, 1));
    // This shard's seeds, generated as the workers ask, so a campaign of any length needs
    // no memory for its seed list.
    let programs = if args.count > shard {
        (args.count - shard).div_ceil(shards)
    } else {
        0
    };
    let seed_of = |n: u64| args.seed.wrapping_add(shard + n * shards);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()
        .map_err(|e| CliError::cannot_compare(format!("cannot start worker threads: {e}")))?;
    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(programs)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} programs  {per_sec}  eta {eta}")
            .map_err(CliError::cannot_compare)?,
    );
    let started = Instant::now();
    // Panics inside a run become reported divergences (see `outcome_in` in the library's
    // `fuzz.rs`); keep their default printout, one backtrace per shrinking step, off the
    // terminal.
    let _quiet = QuietPanics::new();
    // `find_map_first`: with many workers the report is still the lowest diverging seed,
    // the same on every run.
    let found = pool.install(|| {
        (0..programs).into_par_iter().find_map_first(|n| {
            let c = Case::new_in(seed_of(n), args.profile, args.dialect.0);
            let (a, b) = (c.runner(a), c.runner(b));
            let d = diverge_in(a, b, &c.image, &c.memory, &c.config, c.dialect);
            bar.inc(1);
            d.map(|d| (c, d))
        })
    });
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let Some((case, first)) = found else {
        let dialect = match args.dialect.0 {
            Dialect::Spec => String::new(),
            d => format!(" in the {d} dialect"),
        };
        let text = if args.json {
            format!(
                "{}\n",
                json!({
                    "programs": programs,
                    "seconds": secs,
                    "backends": [a.name(), b.name()],
                    "dialect": args.dialect.0.name(),
                    "divergence": Value::Null,
                })
            )
        } else {
            format!(
                "{} programs{dialect}, no divergence between {} and {} ({:.1} s, {:.0} programs/s)\n",
                programs,
                a.name(),
                b.name(),
                secs,
                programs as f64 / secs.max(1e-9)
            )
        };
        emit(&text).map_err(CliError::cannot_compare)?;
        return Ok(Finished::Success);
    };
    let (a, b) = (case.runner(a), case.runner(b));
    let (image, memory) =
        shrink_divergence_in(a, b, &case.image, &case.memory, &case.config, case.dialect);
    let shrunk =
        diverge_in(a, b, &image, &memory, &case.config, case.dialect).unwrap_or(first.clone());
    let found = Found {
        a,
        b,
        case,
        first,
        image,
        memory,
        shrunk,
    };
    if !args.json {
        return report(&found, &args.out, &mut emit);
    }
    let mut text = String::new();
    let finished = report(&found, &args.out, &mut |t: &str| {
        text.push_str(t);
        Ok(())
    })?;
    let c = &found.case;
    let reproduce = text
        .lines()
        .find_map(|l| l.strip_prefix("reproduce: "))
        .unwrap_or_default();
    let (prog, mem) = reproducer_files(&args.out, c.seed);
    let v = json!({
        "programs": programs,
        "seconds": secs,
        "backends": [found.a.name(), found.b.name()],
        "dialect": c.dialect.name(),
        "divergence": {
            "seed": c.seed,
            "profile": c.profile.name(),
            "violation": c.violation.map(|v| v.name()),
            "first": found.first,
            "frames": found.image.len() / 32,
            "shrunk": found.shrunk,
            "program": prog.display().to_string(),
            "memory": mem.display().to_string(),
            "reproduce": reproduce,
        },
    });
    emit(&format!("{v}\n")).map_err(CliError::cannot_compare)?;
    Ok(finished)
}

/// The files a reproducer of seed `seed` is written to in `dir`: the program and its memory.
fn reproducer_files(dir: &Path, seed: u64) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("seed-{seed}.bin")),
        dir.join(format!("seed-{seed}.mem.bin")),
    )
}

/// A diverging case and its shrunk reproducer.
struct Found {
    /// The backends compared.
    a: Runner,
    b: Runner,
    /// The lowest diverging seed's case.
    case: Case,
    /// How it diverged.
    first: String,
    /// The shrunk program image and memory, which still diverge.
    image: Vec<u8>,
    memory: Vec<u8>,
    /// How the shrunk reproducer diverges.
    shrunk: String,
}

/// Write the reproducer of `found` into `dir`, print the divergence and the `gpu16 diff`
/// command that replays it through `out`: [`Finished::Reported`], or
/// [`CliError::CannotCompare`] naming the file or stdout that could not be written.
fn report(
    found: &Found,
    dir: &Path,
    out: &mut impl FnMut(&str) -> Result<(), StdoutError>,
) -> Result<Finished, CliError> {
    let c = &found.case;
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::cannot_compare(format!("{}: cannot create: {e}", dir.display())))?;
    let (prog, mem) = reproducer_files(dir, c.seed);
    let prog_file = OutputFile::prepare(&prog).map_err(CliError::cannot_compare)?;
    let mem_file = OutputFile::prepare(&mem).map_err(CliError::cannot_compare)?;
    write_together(&[(&prog_file, &found.image), (&mem_file, &found.memory)])
        .map_err(CliError::cannot_compare)?;
    let cfg = &c.config;
    let auto = [found.a, found.b]
        .iter()
        .any(|r| r.backend == BackendKind::Auto);
    let auto_hot = match auto {
        true => format!("--auto-hot {},{} ", c.hot.issues, c.hot.instructions),
        false => String::new(),
    };
    let dialect = match c.dialect {
        Dialect::Spec => String::new(),
        d => format!(
            "--dialect {d} --timing {} ",
            gpu16::timing::spec(&cfg.timing)
        ),
    };
    out(&format!(
        "divergence at seed {} (profile {}, violation {:?}): {}\nshrunk to {} frames: {}\nreproduce: gpu16 diff {} --mem {} --backends {} {} --jit-engine {} {dialect}{auto_hot}--issue {} {}--max-cycles {}\n",
        c.seed,
        c.profile.name(),
        c.violation.map(|v| v.name()),
        found.first,
        found.image.len() / 32,
        found.shrunk,
        prog.display(),
        mem.display(),
        found.a.backend.name(),
        found.b.backend.name(),
        found.a.engine.name(),
        cfg.issue.name(),
        if cfg.bank_conflicts { "--bank-conflicts " } else { "" },
        cfg.max_cycles
    ))
    .map_err(CliError::cannot_compare)?;
    Ok(Finished::Reported)
}

/// Silences the panic printout until dropped, then puts the previous hook back.
struct QuietPanics(Option<PanicHook>);

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send>;

impl QuietPanics {
    fn new() -> QuietPanics {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        QuietPanics(Some(previous))
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        if let Some(previous) = self.0.take() {
            std::panic::set_hook(previous);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu16::BackendKind;

    /// A divergence as the campaign would find it (the backends never diverge, so this one
    /// is made up), for seed 5's case shrunk to one frame.
    fn found() -> Found {
        found_in(Dialect::Spec)
    }

    fn found_in(dialect: Dialect) -> Found {
        Found {
            a: BackendKind::Interp.into(),
            b: BackendKind::Jit.into(),
            case: Case::new_in(5, None, dialect),
            first: "cycles: interp 9, jit 10".into(),
            image: vec![1; 32],
            memory: vec![2; 3],
            shrunk: "cycles: interp 1, jit 2".into(),
        }
    }

    fn scratch(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpu16-fuzz-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_divergence_exits_1_with_a_reproducer() {
        let dir = scratch("found");
        let mut text = String::new();
        let finished = report(&found(), &dir, &mut |t: &str| {
            text.push_str(t);
            Ok(())
        });
        assert_eq!(finished.unwrap().status(), 1);
        assert_eq!(std::fs::read(dir.join("seed-5.bin")).unwrap(), [1; 32]);
        assert_eq!(std::fs::read(dir.join("seed-5.mem.bin")).unwrap(), [2; 3]);
        assert!(text.starts_with("divergence at seed 5 (profile "), "{text}");
        assert!(
            text.contains("shrunk to 1 frames: cycles: interp 1, jit 2\n"),
            "{text}"
        );
        assert!(
            text.contains(" --backends interp jit --jit-engine adaptive --issue "),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_mcst_reproducer_names_the_dialect_and_the_timing() {
        let dir = scratch("mcst");
        let found = found_in(Dialect::Mcst);
        let timing = gpu16::timing::spec(&found.case.config.timing);
        let mut text = String::new();
        report(&found, &dir, &mut |t: &str| {
            text.push_str(t);
            Ok(())
        })
        .unwrap();
        assert!(
            text.contains(&format!(
                " --dialect mcst --timing {timing} --issue in-order "
            )),
            "{text}"
        );
        assert!(!text.contains("--bank-conflicts"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_auto_reproducer_gives_the_cases_thresholds() {
        let dir = scratch("auto");
        let mut found = found();
        found.b = BackendKind::Auto.into();
        let hot = found.case.hot;
        let mut text = String::new();
        report(&found, &dir, &mut |t: &str| {
            text.push_str(t);
            Ok(())
        })
        .unwrap();
        let flag = format!(" --auto-hot {},{} ", hot.issues, hot.instructions);
        assert!(text.contains(&flag), "{text}");
        // Without auto on either side the flag would only be noise.
        let mut text = String::new();
        report(&found_in(Dialect::Spec), &dir, &mut |t: &str| {
            text.push_str(t);
            Ok(())
        })
        .unwrap();
        assert!(!text.contains("--auto-hot"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_reproducer_cannot_compare() {
        // The directory's place is taken by a file.
        let dir = scratch("blocked");
        std::fs::write(&dir, b"").unwrap();
        let e = report(&found(), &dir, &mut |_: &str| Ok(())).unwrap_err();
        assert_eq!(e.status(), 2);
        assert!(
            e.to_string()
                .contains(&format!("{}: cannot create", dir.display())),
            "{e}"
        );
        std::fs::remove_file(&dir).unwrap();
    }
}
