//! Unnamed temporary files: created in `$TMPDIR` and unlinked at once, so they live as long
//! as their handle and nothing is left behind however the process ends. A long run keeps
//! what would otherwise grow with its length here (a stream read from stdin, the human
//! report's task table), on disk rather than in memory. It also keeps the list of named
//! temporary files staged beside an output's target (the binary's `run_output::file`), which a
//! signal removes ([`remove_staged`]).

use std::fs::{self, File};
use std::io;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A new unnamed file open for reading and writing; `what` names it while it briefly has a
/// name (`gpu16-<what>-<pid>-<n>`).
pub fn unnamed_file(what: &str) -> io::Result<File> {
    let dir = std::env::temp_dir();
    for n in 0..1000u32 {
        let path = dir.join(format!("gpu16-{what}-{}-{n}", std::process::id()));
        match File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                std::fs::remove_file(&path)?;
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free name for a temporary file in {}", dir.display()),
    ))
}

/// The temporary files this process has beside their targets: a path is added under the
/// lock as its file is created, and leaves it under the lock as the file is removed or
/// renamed, so a signal handler holding the lock sees exactly the files that exist.
static STAGED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The list of staged temporary files, locked: an output adds its file as it creates it
/// and takes it out as it renames or removes it.
pub fn staged() -> MutexGuard<'static, Vec<PathBuf>> {
    STAGED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Remove every temporary file this process has staged and not yet renamed or removed:
/// for a process about to end at once (a signal), which runs no destructors.
pub fn remove_staged() {
    let mut files = staged();
    for path in files.drain(..) {
        let _ = fs::remove_file(path);
    }
}
