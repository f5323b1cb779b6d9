//! `--timeout` where a command can block before (or after) its work: an input that is a
//! FIFO no one writes blocks its reader in `open` and `read`, an output that is a FIFO no
//! one reads blocks its writer in `open`. Nothing polls a stop signal there, so these
//! guards end the process instead ([`crate::stop::deadline`]), with the command's status
//! and, under `--json`, its `{"error", "stage", "file"}` object. Shared by `run`, `diff`,
//! `asm`, `check` and `disasm`. Regular files are read and written as long as they take:
//! no guard is armed unless one of the paths is a FIFO.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether one of `paths` is a FIFO, whose open blocks until the other end opens (a
/// regular file's never does; looking does not open it).
pub fn any_fifo<P: AsRef<Path>>(paths: &[P]) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        paths
            .iter()
            .any(|p| std::fs::metadata(p.as_ref()).is_ok_and(|m| m.file_type().is_fifo()))
    }
    #[cfg(not(unix))]
    {
        let _ = paths;
        false
    }
}

/// With `--timeout` and an input that is a FIFO, a guard under which the limit also ends
/// the loading: an open or a read that blocks (a FIFO no one writes) is a load error naming
/// the timeout, exit `status` (the command's for a load error; with `--json`, after its
/// `{"error", "stage": "load"}` object), where no run polls the stop signal yet. Regular
/// files load as long as they take, as before: the limit is the run's.
pub fn loading_deadline(
    timeout: Option<Duration>,
    json: bool,
    program: &Path,
    inputs: &[Option<&PathBuf>],
    status: i32,
) -> Option<crate::stop::Deadline> {
    let given: Vec<&PathBuf> = inputs.iter().flatten().copied().collect();
    if !any_fifo(&given) {
        return None;
    }
    let limit = timeout?;
    let program = program.to_path_buf();
    Some(crate::stop::deadline(limit, move || {
        let message = format!(
            "timeout: the inputs of {} were not read within --timeout {}s (an input that is \
             a FIFO no one writes blocks its reader)",
            gpu16::shown::path(&program),
            limit.as_secs_f64()
        );
        if json {
            let v = super::json_out::not_run("load", &message, Some(&program));
            let _ = super::emit(&format!("{v}\n"));
        }
        stderr_line!("error: {message}");
        crate::run_output::file::remove_staged();
        std::process::exit(status);
    }))
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
