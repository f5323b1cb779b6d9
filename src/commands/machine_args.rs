//! The machine options shared by every command that runs programs.

use super::value_enums::{DialectArg, EngineArg};
use clap::{Args, ValueEnum};
use gpu16::machine::{Config, Dialect, IssuePolicy, Timing};
use gpu16::{BackendKind, Engine, Hotness, Runner};

// The watchdog's bounds, by the names this file uses.
const DEFAULT_MAX_CYCLES: u64 = Config::DEFAULT_MAX_CYCLES;
const MAX_CYCLE_LIMIT: u64 = Config::MAX_CYCLE_LIMIT;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Issue {
    InOrder,
    Lookahead,
}

#[derive(Args, Clone, Debug)]
pub struct MachineArgs {
    /// How the program's words and frames are read, and which task scheduler runs them.
    #[arg(long, value_enum, value_name = "DIALECT", default_value_t = DialectArg(Dialect::Spec))]
    pub dialect: DialectArg,
    /// Task scheduler issue policy.
    #[arg(long, value_enum, default_value_t = Issue::InOrder)]
    pub issue: Issue,
    /// Model bank conflicts (a bank serves one row a cycle).
    #[arg(long)]
    pub bank_conflicts: bool,
    /// Watchdog: stop with an error if the run reaches this many cycles (at most 2^58).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CYCLES,
          value_parser = clap::value_parser!(u64).range(..=MAX_CYCLE_LIMIT))]
    pub max_cycles: u64,
    #[arg(long, value_name = "KEY=VALUE,...", value_parser = gpu16::timing::parse,
          help = gpu16::timing::help())]
    pub timing: Option<Timing>,
    /// How compiled code (jit, auto) runs the cores of a task; the interpreter always runs
    /// one core at a time. Results are the same with every engine.
    #[arg(long, value_enum, value_name = "ENGINE", default_value_t = EngineArg(Engine::default()))]
    pub jit_engine: EngineArg,
    /// With `--backend auto`: compile a frame exactly at its ISSUES-th issue or after
    /// INSTRUCTIONS interpreted instructions, on the running thread, so the switch to
    /// compiled code falls at the same point of every run (`fuzz` reproducers give it).
    /// Default: 1000 issues or 80,000 instructions, compiled in the background. Results
    /// are the same whatever the thresholds.
    #[arg(long, value_name = "ISSUES,INSTRUCTIONS", value_parser = parse_hotness)]
    pub auto_hot: Option<Hotness>,
}

/// `ISSUES,INSTRUCTIONS` (or `ISSUES` alone, with the default instruction count).
fn parse_hotness(s: &str) -> Result<Hotness, String> {
    let (issues, instructions) = match s.split_once(',') {
        Some((i, n)) => (i, Some(n)),
        None => (s, None),
    };
    let issues = issues
        .trim()
        .parse::<u32>()
        .map_err(|_| format!("`{issues}` is not an issue count (0 to {})", u32::MAX))?;
    let instructions = match instructions {
        Some(n) => n
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("`{n}` is not an instruction count (0 to {})", u64::MAX))?,
        None => Hotness::default().instructions,
    };
    Ok(Hotness {
        issues,
        instructions,
    })
}

/// Option `name` (a `Config` field's name) set to `value` as the CLI spells it, for
/// `gpu16::dialect::check_config`'s errors: `--issue lookahead`, or `--bank-conflicts` for
/// a switch (`None`).
fn flag(name: &str, value: Option<&str>) -> String {
    let flag = format!("--{}", name.replace('_', "-"));
    match value {
        Some(value) => format!("{flag} {value}"),
        None => flag,
    }
}

impl MachineArgs {
    /// `backend` with the chosen engine.
    pub fn runner(&self, backend: BackendKind) -> Runner {
        Runner {
            backend,
            engine: self.jit_engine.0,
            hot: self.auto_hot,
        }
    }

    /// The dialect `--dialect` selects.
    pub fn dialect(&self) -> Dialect {
        self.dialect.0
    }

    /// The machine configuration the flags select, checked against the dialect: the slot
    /// model's timing keys need `--dialect mcst`, whose scheduler has no lookahead and whose
    /// banks are the slot model's (`--timing round_robin=1`), not `--bank-conflicts`. The
    /// error is a usage error.
    pub fn checked_config(&self) -> Result<Config, String> {
        let config = self.config();
        gpu16::dialect::check_config(&config, self.dialect(), flag)?;
        Ok(config)
    }

    /// The machine configuration the flags select, unchecked ([`MachineArgs::checked_config`]).
    pub fn config(&self) -> Config {
        Config {
            issue: match self.issue {
                Issue::InOrder => IssuePolicy::InOrder,
                Issue::Lookahead => IssuePolicy::Lookahead,
            },
            bank_conflicts: self.bank_conflicts,
            max_cycles: self.max_cycles,
            timing: self.timing.unwrap_or_default(),
            ..Config::default()
        }
    }
}
