//! Unnamed temporary files: created in `$TMPDIR` and unlinked at once, so they live as long
//! as their handle and nothing is left behind however the process ends. A long run keeps
//! what would otherwise grow with its length here (a stream read from stdin, the human
//! report's task table), on disk rather than in memory.

use std::fs::File;
use std::io;

/// A new unnamed file open for reading and writing; `what` names it while it briefly has a
/// name (`gpu16-<what>-<pid>-<n>`). An error says where it could not be made: "cannot
/// make a temporary file in $TMPDIR (/path): why" (or "in /tmp ($TMPDIR is not set)").
pub fn unnamed_file(what: &str) -> io::Result<File> {
    make_unnamed(what).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot make a temporary file in {}: {e}", place()),
        )
    })
}

/// Where temporary files are made, as a message names it: `$TMPDIR (/path)`, or
/// `/tmp ($TMPDIR is not set)`.
pub(crate) fn place() -> String {
    let dir = std::env::temp_dir();
    match std::env::var_os("TMPDIR") {
        Some(_) => format!("$TMPDIR ({})", crate::shown::path(&dir)),
        None => format!("{} ($TMPDIR is not set)", crate::shown::path(&dir)),
    }
}

fn make_unnamed(what: &str) -> io::Result<File> {
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
        "no free name for it",
    ))
}
