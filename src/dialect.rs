//! What a dialect allows of a machine configuration: the one check `run`, `diff`, `debug`,
//! `fuzz` and the Python package apply before a run.

use gpu16_machine::{Config, Dialect, IssuePolicy};

/// Whether `config` can run a program of `dialect`: the slot model's timing keys (and the
/// `mcst-rtl` profile) need the mcst dialect (`timing::check`); the mcst task
/// scheduler is in-order only, and its banks are the slot model's (`round_robin`), not the
/// spec's bank-conflict model. The error names the option, for a usage error.
pub fn check_config(config: &Config, dialect: Dialect) -> Result<(), String> {
    crate::timing::check(&config.timing, dialect)?;
    if dialect == Dialect::Mcst {
        if config.issue != IssuePolicy::InOrder {
            return Err(
                "--issue lookahead: the mcst dialect's task scheduler is in-order only".into(),
            );
        }
        if config.bank_conflicts {
            return Err(
                "--bank-conflicts is the spec dialect's bank model; the mcst dialect's \
                        is --timing round_robin=1 (part of --timing mcst-rtl)"
                    .into(),
            );
        }
    }
    Ok(())
}
