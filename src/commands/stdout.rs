//! The one way the commands write to stdout, and what a failed write means.
//!
//! A closed pipe (`gpu16 disasm big.bin | head`) is not an error: whoever reads has what they
//! wanted, so the write stops quietly and the command exits with the status it would have
//! had. Any other failure (a full disk, `> /dev/full`) is an error the caller turns into its
//! command's status. Rust ignores SIGPIPE, so a closed pipe shows up as `BrokenPipe` here
//! instead of killing the process.

use std::fmt;
use std::io::{self, Write};

/// Stdout could not be written, for a reason other than a closed pipe.
#[derive(Debug)]
pub struct StdoutError(pub io::Error);

impl fmt::Display for StdoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write to standard output: {}", self.0)
    }
}

/// Write `text` to stdout and flush it. A closed pipe counts as success.
pub fn emit(text: &str) -> Result<(), StdoutError> {
    let mut out = io::stdout().lock();
    quiet_on_closed_pipe(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
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
