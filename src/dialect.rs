//! What a dialect allows of a machine configuration: the one check `run`, `diff`, `debug`,
//! `fuzz` and the Python package apply before a run.

use gpu16_machine::{Config, Dialect, IssuePolicy};

/// Whether `config` can run a program of `dialect`: the slot model's timing keys (and the
/// `mcst-rtl` profile) need the mcst dialect (`timing::check`); the mcst task
/// scheduler is in-order only, and its banks are the slot model's (`round_robin`), not the
/// spec's bank-conflict model.
///
/// The error is a usage error that names the options as the caller's front end spells
/// them: `option(name, value)` is option `name` (`issue`, `bank_conflicts`, `timing`,
/// `dialect`: the names of [`Config`]'s fields and of the Python API's arguments) set to
/// `value`, or with `None` a switch turned on. The CLI writes `--issue lookahead` and
/// `--bank-conflicts`, the Python API `issue="lookahead"` and `bank_conflicts=True`, so
/// each names what its user typed.
pub fn check_config(
    config: &Config,
    dialect: Dialect,
    option: impl Fn(&str, Option<&str>) -> String,
) -> Result<(), String> {
    crate::timing::check(&config.timing, dialect, &option)?;
    if dialect == Dialect::Mcst {
        if config.issue != IssuePolicy::InOrder {
            return Err(format!(
                "{}: the mcst dialect's task scheduler is in-order only",
                option("issue", Some(IssuePolicy::Lookahead.name()))
            ));
        }
        if config.bank_conflicts {
            return Err(format!(
                "{} is the spec dialect's bank model; the mcst dialect's is {} (part of {})",
                option("bank_conflicts", None),
                option("timing", Some("round_robin=1")),
                option("timing", Some("mcst-rtl")),
            ));
        }
    }
    Ok(())
}
