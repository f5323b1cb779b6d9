//! `gpu16 fuzz`: generate programs from a range of seeds and diff two backends on each, on
//! every core, stopping at the first divergence with a shrunk reproducer.

use super::gen::parse_profile;
use clap::Args;
use gpu16::fuzz::{case, diverge, shrink_divergence};
use gpu16::BackendKind;
use gpu16_gen::Profile;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct FuzzArgs {
    /// Programs to generate and diff (before sharding).
    #[arg(long)]
    pub count: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Run only shard I of K (0-based): seeds whose index is I modulo K.
    #[arg(long, value_name = "I/K", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// First seed of the campaign.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Only this profile (default: a profile per seed).
    #[arg(long, value_parser = parse_profile)]
    pub profile: Option<Profile>,
    /// The two backends to compare.
    #[arg(long, value_enum, num_args = 2, value_names = ["A", "B"], default_values_t = BackendKind::DIFF_PAIR)]
    pub backends: Vec<BackendKind>,
    /// Where a shrunk reproducer is written.
    #[arg(long, value_name = "DIR", default_value = "fuzz-repro")]
    pub out: PathBuf,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
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

pub fn fuzz(args: FuzzArgs) -> Result<ExitCode, String> {
    let (a, b) = (args.backends[0], args.backends[1]);
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
        .map_err(|e| format!("cannot start worker threads: {e}"))?;
    let bar = if args.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(programs)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} programs  {per_sec}  eta {eta}")
            .map_err(|e| e.to_string())?,
    );
    let started = Instant::now();
    // Panics inside a run become reported divergences (see `gpu16::fuzz::outcome`); keep
    // their default printout, one backtrace per shrinking step, off the terminal.
    let _quiet = QuietPanics::new();
    // `find_map_first`: with many workers the report is still the lowest diverging seed,
    // the same on every run.
    let found = pool.install(|| {
        (0..programs).into_par_iter().find_map_first(|n| {
            let c = case(seed_of(n), args.profile);
            let d = diverge(a, b, &c.image, &c.memory, &c.config);
            bar.inc(1);
            d.map(|d| (c, d))
        })
    });
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let Some((c, d)) = found else {
        super::emit(&format!(
            "{} programs, no divergence between {} and {} ({:.1} s, {:.0} programs/s)\n",
            programs,
            a.name(),
            b.name(),
            secs,
            programs as f64 / secs.max(1e-9)
        ));
        return Ok(ExitCode::SUCCESS);
    };
    let (image, memory) = shrink_divergence(a, b, &c.image, &c.memory, &c.config);
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("{}: cannot create: {e}", args.out.display()))?;
    let prog = args.out.join(format!("seed-{}.bin", c.seed));
    let mem = args.out.join(format!("seed-{}.mem.bin", c.seed));
    for (path, bytes) in [(&prog, &image), (&mem, &memory)] {
        std::fs::write(path, bytes)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    let after = diverge(a, b, &image, &memory, &c.config).unwrap_or(d.clone());
    let cfg = &c.config;
    super::emit(&format!(
        "divergence at seed {} (profile {}, violation {:?}): {d}\nshrunk to {} frames: {after}\nreproduce: gpu16 diff {} --mem {} --backends {} {} --issue {} {}--max-cycles {}\n",
        c.seed,
        c.profile.name(),
        c.violation.map(|v| v.name()),
        image.len() / 32,
        prog.display(),
        mem.display(),
        a.name(),
        b.name(),
        cfg.issue.name(),
        if cfg.bank_conflicts { "--bank-conflicts " } else { "" },
        cfg.max_cycles
    ));
    Ok(ExitCode::from(1))
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
