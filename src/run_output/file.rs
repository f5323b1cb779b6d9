//! The one way gpu16 writes a file the user named (`run --dump-mem/--trace/--vcd/--mem-png`,
//! `asm -o`, `disasm -o`, `gen -o/--mem-out`, `fuzz`'s reproducers), so that a write that
//! fails never costs the user the file they had, and a long run never ends in an output it
//! cannot write.
//!
//! - [`OutputFile::prepare`] runs before any work: the file's directory must exist, be a
//!   directory and take a new file (a probe file is created there and removed at once), and
//!   a file already at the path must be a regular file that is not read-only. A device or a
//!   FIFO (`/dev/null`) is written in place instead: it cannot be replaced.
//! - [`OutputFile::stage`] writes the whole file to a temporary file beside it and flushes it
//!   to disk; [`Staged::commit`] renames it over the path. A reader, or a failure at any
//!   point, sees the old file or the new one, never a part of one, and the temporary file is
//!   removed whenever the new file is not committed. [`OutputFile::write`] does both.
//!
//! The probe is removed at once, rather than kept open through the run, so that a run
//! stopped with Ctrl-C leaves no stray file behind. Every temporary file is listed, from
//! its creation to its removal or rename, in a process-wide set, so that a process ending
//! at once on a signal removes the ones it has ([`remove_staged`], which
//! [`crate::stop::exit_at_once`] calls).
//!
//! `-` is stdout: written in place, after whatever the process printed there before.

use std::fmt;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The temporary files this process has beside their targets: a path is added under the
/// lock as its file is created, and leaves it under the lock as the file is removed or
/// renamed, so a signal handler holding the lock sees exactly the files that exist.
static STAGED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The list of staged temporary files, locked: an output adds its file as it creates it
/// and takes it out as it renames or removes it.
fn staged() -> MutexGuard<'static, Vec<PathBuf>> {
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

/// Remove a temporary file and forget it.
fn discard(temp: &Path) {
    let mut files = staged();
    let _ = fs::remove_file(temp);
    files.retain(|p| p != temp);
}

/// An output file that cannot be prepared or written, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputError {
    /// The file, as the user named it.
    pub path: PathBuf,
    /// Why it cannot be written.
    pub(crate) message: String,
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot write: {}",
            gpu16::shown::path(&self.path),
            self.message
        )
    }
}

impl std::error::Error for OutputError {}

/// A file checked to be writable, to be written later.
#[derive(Clone, Debug)]
pub struct OutputFile {
    /// The path as the user gave it, for messages.
    shown: PathBuf,
    /// The file that is replaced: the user's path with its directory (and, for an existing
    /// file, the file itself) resolved, so a symbolic link is written through, not replaced.
    target: PathBuf,
    /// A device or FIFO: opened and written in place.
    in_place: bool,
    /// The permissions of the file being replaced, which the new file keeps.
    permissions: Option<Permissions>,
    /// `-`: the process's stdout, written in place.
    stdout: bool,
}

impl OutputFile {
    /// Check that `path` can be written, without changing anything there.
    pub fn prepare(path: &Path) -> Result<OutputFile, OutputError> {
        let fail = |message: String| OutputError {
            path: path.to_path_buf(),
            message,
        };
        if names_stdout(path) {
            return Ok(OutputFile {
                shown: path.to_path_buf(),
                target: path.to_path_buf(),
                in_place: true,
                permissions: None,
                stdout: true,
            });
        }
        let existing = match fs::metadata(path) {
            Ok(meta) => Some(meta),
            // The directory is checked below, with a better message.
            Err(e) if missing(&e) => None,
            Err(e) => return Err(fail(e.to_string())),
        };
        let Some(meta) = existing else {
            if fs::symlink_metadata(path).is_ok() {
                return Err(fail(
                    "it is a symbolic link to a file that does not exist".into(),
                ));
            }
            let name = path
                .file_name()
                .ok_or_else(|| fail("the path names no file".into()))?;
            let dir = directory_of(path);
            let real_dir = fs::canonicalize(dir).map_err(|e| match missing(&e) {
                true => fail(format!(
                    "directory {} does not exist",
                    gpu16::shown::path(dir)
                )),
                false => fail(format!("directory {}: {e}", gpu16::shown::path(dir))),
            })?;
            if !real_dir.is_dir() {
                return Err(fail(format!(
                    "{} is not a directory",
                    gpu16::shown::path(dir)
                )));
            }
            probe(&real_dir).map_err(fail)?;
            return Ok(OutputFile {
                shown: path.to_path_buf(),
                target: real_dir.join(name),
                in_place: false,
                permissions: None,
                stdout: false,
            });
        };
        if meta.is_dir() {
            return Err(fail("it is a directory".into()));
        }
        if !meta.is_file() {
            return Ok(OutputFile {
                shown: path.to_path_buf(),
                target: path.to_path_buf(),
                in_place: true,
                permissions: None,
                stdout: false,
            });
        }
        if meta.permissions().readonly() {
            return Err(fail("the file is read-only".into()));
        }
        let target = fs::canonicalize(path).map_err(|e| fail(e.to_string()))?;
        probe(directory_of(&target)).map_err(fail)?;
        Ok(OutputFile {
            shown: path.to_path_buf(),
            target,
            in_place: false,
            permissions: Some(meta.permissions()),
            stdout: false,
        })
    }

    /// The path as the user named it.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Whether this is stdout (`-`).
    pub fn is_stdout(&self) -> bool {
        self.stdout
    }

    /// Write the file with `body` and put it in place: [`OutputFile::stage`], then
    /// [`Staged::commit`].
    pub(crate) fn write<E: fmt::Display>(
        &self,
        body: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
    ) -> Result<(), OutputError> {
        self.stage(body)?.commit()
    }

    /// Write the whole file with `body` to a temporary file beside it, flushed to disk. The
    /// path keeps its old contents until [`Staged::commit`]; dropping the [`Staged`] file
    /// instead removes it. A device or FIFO is written in place, at once.
    pub fn stage<E: fmt::Display>(
        &self,
        body: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
    ) -> Result<Staged<'_>, OutputError> {
        let fail = |message: String| OutputError {
            path: self.shown.clone(),
            message,
        };
        if self.in_place {
            let file = if self.stdout {
                stdout_file()
            } else {
                OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&self.target)
            }
            .map_err(|e| fail(e.to_string()))?;
            fill(file, body).map_err(fail)?;
            return Ok(Staged {
                output: self,
                temp: None,
            });
        }
        let (temp, file) = create_temp(directory_of(&self.target)).map_err(fail)?;
        // From here on the temporary file is removed unless it is committed.
        let staged = Staged {
            output: self,
            temp: Some(temp),
        };
        if let Some(permissions) = &self.permissions {
            file.set_permissions(permissions.clone())
                .map_err(|e| fail(e.to_string()))?;
        }
        fill(file, body).map_err(fail)?;
        Ok(staged)
    }
}

/// A file written in full beside its path, not yet in place.
#[derive(Debug)]
pub struct Staged<'a> {
    output: &'a OutputFile,
    /// The temporary file; `None` once committed, or for a file written in place.
    temp: Option<PathBuf>,
}

impl Staged<'_> {
    /// Rename the staged file over its path.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let Some(temp) = &self.temp else {
            return Ok(());
        };
        let mut files = staged();
        fs::rename(temp, &self.output.target).map_err(|e| OutputError {
            path: self.output.shown.clone(),
            message: e.to_string(),
        })?;
        files.retain(|p| p != temp);
        drop(files);
        self.temp = None;
        Ok(())
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            discard(&temp);
        }
    }
}

/// Write `body` into `file` and make sure it reached the disk: a full disk or a lost network
/// file system shows up here, before anything is renamed over the old file.
fn fill<E: fmt::Display>(
    file: File,
    body: impl FnOnce(&mut BufWriter<File>) -> Result<(), E>,
) -> Result<(), String> {
    let mut w = BufWriter::new(file);
    body(&mut w).map_err(|e| e.to_string())?;
    let file = w.into_inner().map_err(|e| e.error().to_string())?;
    match file.sync_all() {
        // Devices and FIFOs cannot be synced; what they took is all there is.
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
        other => other.map_err(|e| e.to_string()),
    }
}

/// Whether `path` is `-`, stdout.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Whether `path` names the process's stdout: `-`, or (on Unix) the very file stdout is,
/// such as `/proc/self/fd/1` or `/dev/stdout` with stdout redirected to a file. Replacing
/// that file would lose what goes to stdout (issue 33: `--dump-mem /proc/self/fd/1 >
/// so.txt` lost the report), so such an output is written to stdout, in place.
pub fn names_stdout(path: &Path) -> bool {
    if is_stdout(path) {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let (Ok(named), Ok(stdout)) = (fs::metadata(path), fs::metadata("/dev/stdout")) else {
            return false;
        };
        stdout.is_file() && named.dev() == stdout.dev() && named.ino() == stdout.ino()
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The process's stdout as a file of its own (what was printed through [`io::stdout`] is
/// flushed first, so it comes before).
fn stdout_file() -> io::Result<File> {
    use std::io::Write;
    io::stdout().flush()?;
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        Ok(File::from(io::stdout().as_fd().try_clone_to_owned()?))
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsHandle;
        Ok(File::from(io::stdout().as_handle().try_clone_to_owned()?))
    }
}

/// Whether a path does not exist, because its file or a directory on the way is missing or
/// is a file.
fn missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// The directory a path's file is in (`.` for a bare file name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Check that `dir` takes a new file by creating one and removing it.
fn probe(dir: &Path) -> Result<(), String> {
    let (temp, file) = create_temp(dir)?;
    drop(file);
    discard(&temp);
    Ok(())
}

/// A new, empty, hidden file in `dir` that no other process or thread has, listed among
/// the files [`remove_staged`] removes.
fn create_temp(dir: &Path) -> Result<(PathBuf, File), String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".gpu16-{}-{n}.tmp", std::process::id()));
        let mut files = staged();
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => {
                files.push(path.clone());
                return Ok((path, file));
            }
            // Left by a process that had this id before: try the next name.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => {}
            Err(e) => {
                return Err(format!(
                    "cannot create a file in directory {}: {e}",
                    dir.display()
                ))
            }
        }
    }
}

/// Check that `dir` exists and takes new files, or can be created: the nearest directory
/// above it that exists takes new files. Nothing is created.
pub fn check_directory(dir: &Path) -> Result<(), OutputError> {
    let fail = |message: String| OutputError {
        path: dir.to_path_buf(),
        message,
    };
    let mut at = dir;
    loop {
        match fs::metadata(at) {
            Ok(meta) if meta.is_dir() => return probe(at).map_err(fail),
            Ok(_) => {
                return Err(fail(format!(
                    "{} is not a directory",
                    gpu16::shown::path(at)
                )))
            }
            Err(e) if missing(&e) => at = directory_of(at),
            Err(e) => return Err(fail(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scratch(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpu16-file-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_replaces_the_file_whole() {
        let d = scratch("replace");
        let p = d.join("out.bin");
        fs::write(&p, b"old contents").unwrap();
        let out = OutputFile::prepare(&p).unwrap();
        out.write(|w| w.write_all(b"new")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(entries(&d), ["out.bin"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_write_that_fails_midway_keeps_the_old_file_and_leaves_nothing() {
        let d = scratch("midway");
        let p = d.join("out.bin");
        fs::write(&p, b"old contents").unwrap();
        let out = OutputFile::prepare(&p).unwrap();
        // Far more than the buffer holds, so part of it reaches the temporary file first.
        let e = out
            .write(|w| {
                w.write_all(&[7; 100_000])?;
                Err(io::Error::from_raw_os_error(28))
            })
            .unwrap_err();
        assert!(e
            .to_string()
            .starts_with(&format!("{}: cannot write: No space", p.display())));
        assert_eq!(fs::read(&p).unwrap(), b"old contents");
        assert_eq!(entries(&d), ["out.bin"]);
        // And for a file that did not exist: none afterwards.
        let q = d.join("new.bin");
        let out = OutputFile::prepare(&q).unwrap();
        assert!(out.write(|_| Err("encoder failed")).is_err());
        assert_eq!(entries(&d), ["out.bin"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_staged_file_dropped_uncommitted_is_removed() {
        let d = scratch("staged");
        let p = d.join("a.bin");
        let out = OutputFile::prepare(&p).unwrap();
        let staged = out.stage(|w| w.write_all(b"a")).unwrap();
        assert!(!p.exists());
        drop(staged);
        assert_eq!(entries(&d), Vec::<String>::new());
        out.stage(|w| w.write_all(b"a")).unwrap().commit().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"a");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unusable_paths_fail_before_anything_is_written() {
        let d = scratch("unusable");
        let missing = d.join("no/such/dir/out.bin");
        let e = OutputFile::prepare(&missing).unwrap_err();
        assert!(e.message.contains("does not exist"), "{e}");
        let e = OutputFile::prepare(&d).unwrap_err();
        assert_eq!(e.message, "it is a directory");
        let file = d.join("plain");
        fs::write(&file, b"").unwrap();
        let e = OutputFile::prepare(&file.join("out.bin")).unwrap_err();
        assert!(e.message.contains("not a directory"), "{e}");
        assert_eq!(entries(&d), ["plain"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_written_through_and_permissions_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let d = scratch("link");
        let real = d.join("real.bin");
        fs::write(&real, b"old").unwrap();
        fs::set_permissions(&real, Permissions::from_mode(0o640)).unwrap();
        let link = d.join("link.bin");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        OutputFile::prepare(&link)
            .unwrap()
            .write(|w| w.write_all(b"new"))
            .unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        let mode = fs::metadata(&real).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place() {
        let out = OutputFile::prepare(Path::new("/dev/null")).unwrap();
        out.write(|w| w.write_all(b"gone")).unwrap();
        assert!(Path::new("/dev/null").exists());
    }

    #[test]
    fn a_directory_to_create_is_checked_at_its_nearest_existing_ancestor() {
        let d = scratch("dir");
        assert!(check_directory(&d.join("a/b")).is_ok());
        assert!(!d.join("a").exists());
        let file = d.join("plain");
        fs::write(&file, b"").unwrap();
        let e = check_directory(&file.join("sub")).unwrap_err();
        assert!(e.message.contains("is not a directory"), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }
}
