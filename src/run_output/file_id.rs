//! Whether two paths name the same file, so that an output never overwrites an input or
//! another output of the same command, however the paths are spelled.
//!
//! Two paths are the same file when their resolved places are equal (the directory with its
//! symbolic links and `..` resolved, plus the file name; for an existing file, the file's
//! own links resolved too), or, on Unix, when both exist and have the same device and inode,
//! which catches hard links as well. A file that exists but is not a regular file (a device
//! such as `/dev/null`, a FIFO) is never the same as anything: it is written in place and
//! keeps nothing, so two outputs may both go to `/dev/null`.
//!
//! `-` is the file behind stdin for an input ([`FileId::of_input`]) and behind stdout for
//! an output ([`FileId::of_output`]): `run - --dump-mem in.bin < in.bin` names one file
//! twice as surely as `run in.bin --dump-mem in.bin` does.

use std::fs;
use std::path::{Path, PathBuf};

/// What identifies the file a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileId {
    /// The path as written.
    spelled: PathBuf,
    /// The resolved place, if the path's directory exists.
    place: Option<PathBuf>,
    /// Device and inode of an existing file.
    node: Option<(u64, u64)>,
    /// It exists and is not a regular file.
    special: bool,
    /// It is a pipe, a FIFO or a socket: what is read from it is gone for other readers.
    stream: bool,
}

impl FileId {
    /// The identity of the file `path` names, existing or not.
    pub(crate) fn of(path: &Path) -> FileId {
        let meta = fs::metadata(path).ok();
        let place = fs::canonicalize(path).ok().or_else(|| {
            let name = path.file_name()?;
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(fs::canonicalize(dir).ok()?.join(name))
        });
        FileId {
            spelled: path.to_path_buf(),
            place,
            node: meta.as_ref().and_then(node),
            special: meta.as_ref().is_some_and(|m| !m.is_file()),
            stream: meta.as_ref().is_some_and(is_stream),
        }
    }

    /// The identity of an input `path`: for `-`, the file stdin reads.
    pub fn of_input(path: &Path) -> FileId {
        match path.as_os_str() == "-" {
            true => FileId::of_stream("<stdin>", std::io::stdin().as_fd_file()),
            false => FileId::of(path),
        }
    }

    /// The identity of an output `path`: for `-`, the file stdout writes.
    pub fn of_output(path: &Path) -> FileId {
        match path.as_os_str() == "-" {
            true => FileId::of_stream("<stdout>", std::io::stdout().as_fd_file()),
            false => FileId::of(path),
        }
    }

    /// The identity of a standard stream whose file is `file` (if it could be had).
    fn of_stream(name: &str, file: Option<fs::File>) -> FileId {
        let meta = file.and_then(|f| f.metadata().ok());
        FileId {
            spelled: PathBuf::from(name),
            place: None,
            node: meta.as_ref().and_then(node),
            special: meta.as_ref().is_none_or(|m| !m.is_file()),
            stream: meta.as_ref().is_some_and(is_stream),
        }
    }

    /// Whether the two name the same regular file (or the same place for one).
    pub fn same(&self, other: &FileId) -> bool {
        if self.special || other.special {
            return false;
        }
        if self.place.is_none() && other.place.is_none() {
            return self.spelled == other.spelled;
        }
        let places = self.place.is_some() && self.place == other.place;
        places || (self.node.is_some() && self.node == other.node)
    }
}

impl FileId {
    /// Whether two inputs would read one stream, which gives its bytes to one reader only,
    /// judged by what they are rather than how they are named: the same file (device and
    /// inode) that is a pipe, a FIFO or a socket, or that is the file stdin reads (`stdin`,
    /// [`FileId::of_input`] of `-`; see [`FileId::is_stdin`]), however it is named. Two
    /// names of another regular file, or of a device such as `/dev/null`, are two reads
    /// of it: never one stream.
    pub fn same_stream(&self, other: &FileId, stdin: &FileId) -> bool {
        match (self.node, other.node) {
            (Some(a), Some(b)) if a == b => self.stream || other.stream || self.is_stdin(stdin),
            _ => false,
        }
    }

    /// Whether it is a pipe, a FIFO or a socket.
    pub fn is_stream(&self) -> bool {
        self.stream
    }

    /// Whether this input reads the file stdin reads (`stdin`, [`FileId::of_input`] of
    /// `-`), however it is named: `-`, `/dev/stdin`, `/proc/self/fd/0`, the FIFO or the
    /// file stdin was redirected from. A device on stdin (a terminal, `/dev/null`) is not
    /// counted: it is no file a second reader would find used up.
    pub fn is_stdin(&self, stdin: &FileId) -> bool {
        self.node.is_some() && self.node == stdin.node && (stdin.stream || !stdin.special)
    }
}

/// Whether `meta` is a pipe, a FIFO or a socket.
#[cfg(unix)]
fn is_stream(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_fifo() || meta.file_type().is_socket()
}

#[cfg(not(unix))]
fn is_stream(_: &fs::Metadata) -> bool {
    false
}

/// A standard stream's file, to look at its metadata.
trait AsFdFile {
    fn as_fd_file(&self) -> Option<fs::File>;
}

#[cfg(unix)]
impl<T: std::os::fd::AsFd> AsFdFile for T {
    fn as_fd_file(&self) -> Option<fs::File> {
        self.as_fd().try_clone_to_owned().ok().map(fs::File::from)
    }
}

#[cfg(not(unix))]
impl<T> AsFdFile for T {
    fn as_fd_file(&self) -> Option<fs::File> {
        None
    }
}

#[cfg(unix)]
fn node(meta: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn node(_: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpu16-id-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("sub")).unwrap();
        d
    }

    fn same(a: &Path, b: &Path) -> bool {
        FileId::of(a).same(&FileId::of(b))
    }

    #[test]
    fn spellings_of_one_place_are_the_same_file() {
        let d = scratch("spelling");
        let a = d.join("a.bin");
        // Before and after the file exists.
        for _ in 0..2 {
            assert!(same(&a, &d.join("sub/../a.bin")));
            assert!(same(&a, &d.join("./a.bin")));
            assert!(!same(&a, &d.join("b.bin")));
            fs::write(&a, b"x").unwrap();
        }
        assert!(!same(&a, &d.join("sub/a.bin")));
        assert!(same(&d.join("no/dir/a.bin"), &d.join("no/dir/a.bin")));
        assert!(!same(&d.join("no/dir/a.bin"), &d.join("no/dir/b.bin")));
        fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn links_are_the_same_file_and_devices_never_are() {
        let d = scratch("links");
        let a = d.join("a.bin");
        fs::write(&a, b"x").unwrap();
        fs::hard_link(&a, d.join("hard.bin")).unwrap();
        std::os::unix::fs::symlink(&a, d.join("soft.bin")).unwrap();
        std::os::unix::fs::symlink(d.join("sub"), d.join("dirlink")).unwrap();
        assert!(same(&a, &d.join("hard.bin")));
        assert!(same(&a, &d.join("soft.bin")));
        assert!(same(&d.join("sub/c.bin"), &d.join("dirlink/c.bin")));
        assert!(!same(Path::new("/dev/null"), Path::new("/dev/null")));
        fs::remove_dir_all(&d).unwrap();
    }
}
