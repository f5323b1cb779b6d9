//! The machine options shared by every command that runs programs.

use super::value_enums::EngineArg;
use clap::{Args, ValueEnum};
use gpu16::machine::config::{DEFAULT_MAX_CYCLES, MAX_CYCLE_LIMIT};
use gpu16::machine::{Config, IssuePolicy, Timing};
use gpu16::{BackendKind, Engine, Runner};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Issue {
    InOrder,
    Lookahead,
}

#[derive(Args, Clone, Debug)]
pub struct MachineArgs {
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
}

impl MachineArgs {
    /// `backend` with the chosen engine.
    pub fn runner(&self, backend: BackendKind) -> Runner {
        Runner {
            backend,
            engine: self.jit_engine.0,
        }
    }

    /// The machine configuration the flags select.
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
