//! The one way the commands write to stdout, and what a failed write means.
//!
//! A closed pipe (`gpu16 disasm big.bin | head`) is not an error: whoever reads has what they
//! wanted, so the write stops quietly and the command exits with the status it would have
//! had. Any other failure (a full disk, `> /dev/full`) is an error the caller turns into its
//! command's status. Rust ignores SIGPIPE, so a closed pipe shows up as `BrokenPipe` here
//! instead of killing the process.
//!
//! clap's `--help` and `--version` text goes to stdout too, so it follows the same rule
//! ([`clap_message`]) rather than clap's own, which ignores a failed write and exits 0.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Stdout could not be written, for a reason other than a closed pipe.
#[derive(Debug)]
pub struct StdoutError(pub io::Error);

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write to standard output: {}", self.0)
    }
}

/// Where a command's text goes once an output file has taken stdout (`run --dump-mem -`):
/// stderr, out of the data's way.
static REPORT_TO_STDERR: AtomicBool = AtomicBool::new(false);

/// From now on, [`emit`] writes to stderr: stdout carries an output file's data.
pub fn report_to_stderr() {
    REPORT_TO_STDERR.store(true, Ordering::Relaxed);
}

/// Write `text` to stdout (stderr after [`report_to_stderr`]) and flush it. A closed pipe
/// counts as success.
pub fn emit(text: &str) -> Result<(), StdoutError> {
    if REPORT_TO_STDERR.load(Ordering::Relaxed) {
        let mut err = io::stderr().lock();
        return quiet_on_closed_pipe(err.write_all(text.as_bytes()).and_then(|()| err.flush()));
    }
    let mut out = io::stdout().lock();
    quiet_on_closed_pipe(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// Stdout for a command that has more to do after printing: it writes until a write fails,
/// then stops writing and keeps that first error for the end, so the command can still
/// finish its work and report both.
#[derive(Debug, Default)]
pub struct Stdout {
    failed: Option<StdoutError>,
}

impl Stdout {
    /// [`emit`] `text`, unless an earlier write failed.
    pub fn print(&mut self, text: &str) {
        if self.failed.is_none() {
            self.failed = emit(text).err();
        }
    }

    /// Take the result of writes made another way (a writer that went on during a run), as
    /// [`Stdout::print`] takes its own: a closed pipe is success, and an earlier failure is
    /// the one kept.
    pub fn wrote(&mut self, written: io::Result<()>) {
        if self.failed.is_none() {
            self.failed = quiet_on_closed_pipe(written).err();
        }
    }

    /// The first failed write, if any.
    pub fn finish(self) -> Result<(), StdoutError> {
        self.failed.map_or(Ok(()), Err)
    }
}

/// What clap stopped parsing for: a usage error goes to stderr with status 2 as clap does
/// it; `--help` or `--version` text goes to stdout, status 0, or 1 with
/// `error: cannot write to standard output: <reason>` if stdout cannot take it.
///
/// With `--json` among the arguments, a usage error also prints the object of a command that
/// never started on stdout, `{"error": MESSAGE, "stage": "usage"}` (MESSAGE is clap's up to
/// its usage line, on one line, without `error: `), as the commands' own usage errors do, so that a
/// script reading stdout gets an object for every failure.
pub fn clap_message(e: clap::Error) -> ExitCode {
    if e.use_stderr() {
        if std::env::args_os().any(|a| a == "--json") {
            let text = e.to_string();
            let lines: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let message = lines.join(" ");
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            let v = super::json_out::not_run("usage", message, None);
            let _ = emit(&format!("{v}\n"));
        }
        e.exit();
    }
    let written = e.print().and_then(|()| io::stdout().flush());
    match quiet_on_closed_pipe(written) {
        Ok(()) => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1)),
        Err(failed) => {
            stderr_line!("error: {failed}");
            ExitCode::from(1)
        }
    }
}

/// A write's result, with a closed pipe turned into success.
fn quiet_on_closed_pipe(written: io::Result<()>) -> Result<(), StdoutError> {
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(StdoutError),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_success_and_other_errors_are_not() {
        assert!(quiet_on_closed_pipe(Ok(())).is_ok());
        assert!(quiet_on_closed_pipe(Err(io::ErrorKind::BrokenPipe.into())).is_ok());
        let full = quiet_on_closed_pipe(Err(io::Error::from_raw_os_error(28))).unwrap_err();
        assert!(
            full.to_string()
                .starts_with("cannot write to standard output: No space left on device"),
            "{full}"
        );
    }
}
