//! `--timeout` where a command can block before (or after) its work: an input that is a
//! FIFO no one writes blocks its reader in `open` and `read`, an output that is a FIFO no
//! one reads blocks its writer in `open`. Nothing polls a stop signal there, so these
//! guards end the process instead ([`crate::stop::deadline`]), with the command's status
//! and, under `--json`, its `{"error", "stage", "file"}` object. Shared by `run`, `diff`,
//! `asm`, `check` and `disasm`. Regular files are read and written as long as they take:
//! no guard is armed unless one of the paths is a FIFO.

use super::outputs::Named;
use gpu16::input::ProgramFormat;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Whether one of `paths` is a FIFO (or `-`, stdin, a pipe), whose open or read blocks
/// until the other end opens or writes (a regular file's never does; looking does not open
/// it).
pub fn any_fifo<P: AsRef<Path>>(paths: &[P]) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        paths.iter().any(|p| {
            let p = match p.as_ref() {
                p if p.as_os_str() == "-" => Path::new("/dev/stdin"),
                p => p,
            };
            std::fs::metadata(p).is_ok_and(|m| m.file_type().is_fifo())
        })
    }
    #[cfg(not(unix))]
    {
        let _ = paths;
        false
    }
}

/// The loading of a command's inputs under [`loading_deadline`]: what it reads now, which
/// the deadline's message names.
pub struct Loading {
    reading: Arc<Mutex<Named>>,
    _deadline: Option<crate::stop::Deadline>,
}

impl Loading {
    /// From now on the loading reads `input` (its flag and path): a deadline passed names it.
    pub fn reading(&self, flag: &str, path: &Path) {
        *self.reading.lock().unwrap_or_else(PoisonError::into_inner) = Named::new(flag, path);
    }
}

/// With `--timeout` and an input that is a FIFO (or stdin, a pipe), a guard under which the
/// limit also ends the loading of `inputs` (the first is read first; say when the next is,
/// with [`Loading::reading`]): an open or a read that blocks (a FIFO no one writes) is a
/// load error naming the timeout and the input being read, exit `status` (the command's
/// for a load error; with `--json`, after its `{"error", "stage": "load", "file"}`
/// object), where no run polls the stop signal yet. Regular files load as long as they
/// take, as before: the limit is the run's.
pub fn loading_deadline(
    timeout: Option<Duration>,
    json: bool,
    inputs: &[Named],
    status: i32,
) -> Loading {
    let first = inputs
        .first()
        .cloned()
        .unwrap_or_else(|| Named::new("PROGRAM", Path::new("-")));
    let reading = Arc::new(Mutex::new(first));
    let paths: Vec<&Path> = inputs.iter().map(|i| i.path.as_path()).collect();
    let deadline = match timeout {
        Some(limit) if any_fifo(&paths) => {
            let reading = reading.clone();
            Some(crate::stop::deadline(limit, move || {
                let input = reading
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                // A source's includes are read with it, under its name.
                let includes = match ProgramFormat::of(&input.path) {
                    Ok(ProgramFormat::Assembly) => " (or a file it includes)",
                    _ => "",
                };
                let message = format!(
                    "timeout: {}{includes} was not read within --timeout {}s (an input that \
                     is a FIFO or a pipe no one writes blocks its reader)",
                    input.shown(),
                    limit.as_secs_f64()
                );
                if json {
                    let v = super::json_out::not_run("load", &message, Some(&input.path));
                    let _ = super::emit(&format!("{v}\n"));
                }
                stderr_line!("error: {message}");
                crate::run_output::file::remove_staged();
                std::process::exit(status);
            }))
        }
        _ => None,
    };
    Loading {
        reading,
        _deadline: deadline,
    }
}

/// With `--timeout` and an output that is a FIFO, a guard under which the limit also ends
/// the writing of `outputs`: an open that blocks (a FIFO no one reads) is an error naming
/// the timeout, exit `status` (with `--json`, after a `{"error", "stage": "output"}`
/// object), removing the temporary files of the outputs staged so far. `when` says from
/// when the limit runs in the message (`" after the run"`, or empty).
pub fn writing_deadline<P: AsRef<Path>>(
    timeout: Option<Duration>,
    json: bool,
    outputs: &[P],
    when: &'static str,
    status: i32,
) -> Option<crate::stop::Deadline> {
    if !any_fifo(outputs) {
        return None;
    }
    let limit = timeout?;
    Some(crate::stop::deadline(limit, move || {
        let message = format!(
            "timeout: the outputs were not written within --timeout {}s{when} (an output \
             that is a FIFO no one reads blocks its writer)",
            limit.as_secs_f64()
        );
        if json {
            let v = super::json_out::not_run("output", &message, None);
            let _ = super::emit(&format!("{v}\n"));
        }
        stderr_line!("error: {message}");
        crate::run_output::file::remove_staged();
        std::process::exit(status);
    }))
}
