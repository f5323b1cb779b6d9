//! The exit status of every command, decided by type rather than by message.
//!
//! A command returns `Result<Finished, CliError>`:
//! - `Ok(Finished::Success)`: status 0.
//! - `Ok(Finished::Reported)`: status 1. The command ran to its end and has already printed
//!   what it found: diagnostics (`asm`, `check`) or a divergence (`diff`, `fuzz`).
//! - `Ok(Finished::Differs)`: status 1. `run` finished and printed its report as usual, but
//!   the final state differs from `--expect-mem` or `--expect-regs`: the differences are
//!   in the report (and in `--json`, with `"error": {"rule": "expect", ...}`), and a line
//!   on stderr sums them up. A run that failed keeps its own status, its state compared
//!   all the same.
//! - `Err(CliError::Failed)`: status 1. `main` prints `error: <message>`. This covers a bad
//!   input file, a run that faulted or hit the watchdog, and an output that could not be
//!   written (or whose directory is missing, checked before the command starts its work).
//! - `Err(CliError::Usage)`: status 2, with the same message: flags that cannot go together
//!   which clap cannot see, such as an output naming an input or two outputs naming one file.
//! - `Err(CliError::Interrupted)`: status 130 (128 + SIGINT, as a shell reports Ctrl-C): a
//!   run the user stopped with Ctrl-C, reported like the watchdog.
//! - `Err(CliError::CannotCompare)`: status 2, with the same message. Only `diff` and `fuzz`
//!   return it, when they could not compare: they could not load the program or memory
//!   file, start their workers, write a reproducer or write to stdout.
//!
//! clap's own usage errors also exit with 2, before any command runs. `--help` and
//! `--version` exit with 0, or 1 if stdout cannot be written.

use std::fmt;
use std::process::ExitCode;

/// How a command that ran to its end came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    /// Status 0: the command did what was asked. For `diff` the runs are identical, for
    /// `fuzz` no program diverged.
    Success,
    /// Status 1: the command found a problem and has already reported it.
    Reported,
    /// Status 1: `run` finished, but its final state differs from the one `--expect-mem` or
    /// `--expect-regs` gave; the report and the differences are printed as usual.
    Differs,
}

impl Finished {
    /// The process exit status.
    pub fn status(self) -> u8 {
        match self {
            Finished::Success => 0,
            Finished::Reported | Finished::Differs => 1,
        }
    }
}

/// Why a command stopped early. The message names the file when a file is the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CliError {
    /// Status 1: the command failed (a bad input, a failed run, an output it cannot write).
    Failed(String),
    /// Status 2: `diff` or `fuzz` could not compare, so there is no verdict.
    CannotCompare(String),
    /// Status 2: the flags ask for something that cannot be done, such as an output that
    /// would overwrite an input.
    Usage(String),
    /// Status 130: the user stopped the command with Ctrl-C.
    Interrupted(String),
}

impl CliError {
    /// [`CliError::Failed`] with `reason` as its message.
    pub fn failed(reason: impl fmt::Display) -> CliError {
        CliError::Failed(reason.to_string())
    }

    /// [`CliError::CannotCompare`] with `reason` as its message.
    pub fn cannot_compare(reason: impl fmt::Display) -> CliError {
        CliError::CannotCompare(reason.to_string())
    }

    /// [`CliError::Usage`] with `reason` as its message.
    pub fn usage(reason: impl fmt::Display) -> CliError {
        CliError::Usage(reason.to_string())
    }

    /// The same error, with a second one that came after it (such as stdout failing while
    /// the first was reported) on a line of its own.
    pub fn and(self, then: impl fmt::Display) -> CliError {
        let add = |m: String| format!("{m}\nerror: {then}");
        match self {
            CliError::Failed(m) => CliError::Failed(add(m)),
            CliError::CannotCompare(m) => CliError::CannotCompare(add(m)),
            CliError::Usage(m) => CliError::Usage(add(m)),
            CliError::Interrupted(m) => CliError::Interrupted(add(m)),
        }
    }

    /// The process exit status.
    pub fn status(&self) -> u8 {
        match self {
            CliError::Failed(_) => 1,
            CliError::CannotCompare(_) | CliError::Usage(_) => 2,
            CliError::Interrupted(_) => 130,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Failed(m)
            | CliError::CannotCompare(m)
            | CliError::Usage(m)
            | CliError::Interrupted(m) => f.write_str(m),
        }
    }
}

/// The exit status of a command's result. An error is printed on stderr as
/// `error: <message>` first.
pub fn exit(result: Result<Finished, CliError>) -> ExitCode {
    ExitCode::from(match result {
        Ok(finished) => finished.status(),
        Err(e) => {
            stderr_line!("error: {e}");
            e.status()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(Finished::Success.status(), 0);
        assert_eq!(Finished::Reported.status(), 1);
        assert_eq!(Finished::Differs.status(), 1);
        assert_eq!(CliError::failed("x").status(), 1);
        assert_eq!(CliError::cannot_compare("x").status(), 2);
        assert_eq!(CliError::usage("x").status(), 2);
        assert_eq!(CliError::Interrupted("x".into()).status(), 130);
        let both = CliError::failed("p.s: fault").and("cannot write to standard output: full");
        assert_eq!(both.status(), 1);
        assert_eq!(
            both.to_string(),
            "p.s: fault\nerror: cannot write to standard output: full"
        );
        assert_eq!(
            CliError::cannot_compare("p.bin: gone").to_string(),
            "p.bin: gone"
        );
    }
}
