//! How big each kind of input file may be, and the one way input files are read: through a
//! reader that takes at most the limit plus one byte, so an oversized or endless input
//! (`/dev/zero`, a FIFO that never closes) fails fast instead of filling memory.
//!
//! A regular file whose length is already past its limit is refused before a byte of it is
//! read; anything else (a device, a pipe, a file that grows while it is read) is refused as
//! soon as the byte past the limit arrives.

use super::{err, InputError};
use std::io::Read;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

/// The most bytes one kind of input file may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    /// What the file is, as the error names it: "a raw memory image".
    pub(crate) what: &'static str,
    /// The most bytes it may have.
    pub(crate) bytes: u64,
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// A raw shared-memory image: the 4096 bytes of shared memory. Longer files are an error
/// (memory past a shorter image is zero).
pub(crate) const MEMORY_IMAGE: Limit = Limit {
    what: "a raw memory image",
    bytes: gpu16_machine::MEMORY_BYTES as u64,
};

/// A `.hex` shared-memory text: it describes at most 4096 bytes, so 1 MiB leaves room for a
/// comment of about 250 characters on every byte.
pub(crate) const MEMORY_HEX: Limit = Limit {
    what: "a .hex memory text",
    bytes: MIB,
};

/// One bank file of an `--expect-mem` bank dump: 256 rows of one byte, so 256 KiB leaves
/// room for a comment of about 1000 characters on every row.
pub(crate) const BANK_HEX: Limit = Limit {
    what: "a bank dump file",
    bytes: 256 * KIB,
};

/// An `--expect-regs` register dump: 16 lines of 16 bytes, so 64 KiB leaves room for
/// comments.
pub(crate) const REGISTER_DUMP: Limit = Limit {
    what: "a register dump",
    bytes: 64 * KIB,
};

/// A binary program image (`.bin`, `.tm`, or stdin): 1 GiB, 33,554,432 frames. `gpu16 run`
/// reads an image as a stream and holds only the scheduler's window of it; the commands
/// that load an image whole (`disasm`, `check`, `debug`, `diff`, a run with `--timeline`
/// or `--expect-*`) hold it and the program's copy of its frames, about 2.1 GiB at the
/// limit.
pub(crate) const PROGRAM_IMAGE: Limit = Limit {
    what: "a program image",
    bytes: GIB,
};

/// A `.hex` program text. The image it may describe is bounded separately
/// ([`super::hex::MAX_PROGRAM_WORDS`]); the text may be larger for its comments.
pub(crate) const PROGRAM_HEX: Limit = Limit {
    what: "a .hex program text",
    bytes: 256 * MIB,
};

/// An assembly source, and each file it `.include`s: the assembler's own bound on one
/// source file (`gpu16_asm::limits::MAX_FILE_BYTES`, 16 MiB), so the CLI never reads more
/// of a file than the assembler would accept.
pub(crate) const SOURCE: Limit = Limit {
    what: "an assembly source",
    bytes: gpu16_asm::limits::MAX_FILE_BYTES as u64,
};

/// `bytes` for a reader: the count, and the largest binary unit that divides it if there is
/// one ("4096 bytes (4 KiB)", "100 bytes").
pub(crate) fn size(bytes: u64) -> String {
    let unit = [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")]
        .into_iter()
        .find(|&(u, _)| bytes >= u && bytes.is_multiple_of(u));
    match unit {
        Some((u, name)) => format!("{bytes} bytes ({} {name})", bytes / u),
        None => format!("{bytes} bytes"),
    }
}

/// The error for a file past `limit`; `len` is its length when it is known.
fn too_large(path: &Path, limit: Limit, len: Option<u64>) -> InputError {
    let has = match len {
        Some(len) => format!("this file has {len}"),
        None => "this input has more".to_string(),
    };
    too_large_has(path, limit, has)
}

/// The error for an input past `limit`, `has` saying how much it has.
fn too_large_has(path: &Path, limit: Limit, has: String) -> InputError {
    err(
        path,
        format!(
            "too large: {} may have at most {}; {has}",
            limit.what,
            size(limit.bytes)
        ),
    )
}

/// The bytes of the file at `path` (`-`: stdin), at most `limit.bytes` of them; a longer
/// input is an error naming the file and the limit, found after reading at most one byte
/// past it.
pub(crate) fn read(path: &Path, limit: Limit) -> Result<Vec<u8>, InputError> {
    let (bytes, more) = read_capped(path, limit.bytes)?;
    if more {
        return Err(too_large_input(path, limit));
    }
    Ok(bytes)
}

/// The length of the regular file at `path`, if it is one (not `-`, a device or a pipe).
fn known_length(path: &Path) -> Option<u64> {
    if path == Path::new("-") {
        return None;
    }
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// How much of a regular file past its cap [`read_capped`] reads.
pub(crate) const PEEK: u64 = 4096;

/// The first `cap` bytes of the file at `path` (`-`: stdin), and whether it has more. At
/// most one byte past `cap` is read, so an endless input costs `cap` bytes; of a regular
/// file already longer than `cap`, only its first [`PEEK`] bytes (at most `cap`), enough to
/// tell what kind of file it is.
pub(crate) fn read_capped(path: &Path, cap: u64) -> Result<(Vec<u8>, bool), InputError> {
    let cannot = |e: std::io::Error| err(path, format!("cannot read: {e}"));
    let mut bytes = Vec::new();
    let (input, known) = open(path)?;
    if known.is_some_and(|len| len > cap) {
        input
            .take(PEEK.min(cap))
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
        return Ok((bytes, true));
    }
    // The known length is at most the cap, so the capacity is too.
    bytes.reserve(known.unwrap_or(0) as usize);
    input
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    let more = bytes.len() as u64 > cap;
    bytes.truncate(cap as usize);
    Ok((bytes, more))
}

/// The file at `path` (`-`: stdin) opened for reading, and its length if it is a regular
/// file.
fn open(path: &Path) -> Result<(Box<dyn Read>, Option<u64>), InputError> {
    if path == Path::new("-") {
        return Ok((Box::new(std::io::stdin()), None));
    }
    let file = std::fs::File::open(path).map_err(|e| err(path, format!("cannot read: {e}")))?;
    let known = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    Ok((Box::new(file), known))
}

/// [`read`] of a binary image of `N`-byte frames, kept as frames as it is read: the same
/// bytes within the same limit, but a program holds its image as frames, so reading it
/// flat first would hold it twice. Gives the whole frames and the bytes past the last one
/// (0 to `N - 1`: the caller's error).
pub(crate) fn read_frames<const N: usize>(
    path: &Path,
    limit: Limit,
) -> Result<(Vec<[u8; N]>, usize), InputError> {
    let cannot = |e: std::io::Error| err(path, format!("cannot read: {e}"));
    let (input, known) = open(path)?;
    if known.is_some_and(|len| len > limit.bytes) {
        return Err(too_large(path, limit, known));
    }
    let mut input = std::io::BufReader::with_capacity(1 << 16, input.take(limit.bytes + 1));
    let mut frames: Vec<[u8; N]> = Vec::with_capacity(known.unwrap_or(0) as usize / N);
    let mut total = 0u64;
    loop {
        let mut frame = [0u8; N];
        let mut got = 0;
        while got < N {
            match input.read(&mut frame[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(cannot(e)),
            }
        }
        total += got as u64;
        if total > limit.bytes {
            return Err(too_large_input(path, limit));
        }
        if got < N {
            // Grown by doubling, the vector may have room it will never use.
            frames.shrink_to_fit();
            return Ok((frames, got));
        }
        frames.push(frame);
    }
}

/// The error for an input past `limit` whose length is not known (a pipe, a device, or a
/// file read only up to another limit): "this input has more".
pub(crate) fn too_large_input(path: &Path, limit: Limit) -> InputError {
    match known_length(path) {
        Some(len) if len > limit.bytes => too_large(path, limit, Some(len)),
        _ => too_large(path, limit, None),
    }
}

/// An input handed over in memory rather than read from a file (the bytes or text a Python
/// caller passes), of `len` bytes, held to `limit` like a file: past it, the error a file
/// gets, naming `name` and saying "this input has `len`".
pub(crate) fn check(name: &Path, limit: Limit, len: u64) -> Result<(), InputError> {
    if len > limit.bytes {
        return Err(too_large_has(name, limit, format!("this input has {len}")));
    }
    Ok(())
}

/// `read`, as UTF-8 text. Once [`read_each_input_once`] was called, an input that
/// cannot be read twice is read once and its text (or error) given again.
pub(crate) fn read_text(path: &Path, limit: Limit) -> Result<String, InputError> {
    let Some(key) = once_key(path) else {
        return read_text_now(path, limit);
    };
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(kept) = kept.as_mut() else {
        return read_text_now(path, limit);
    };
    if let Some((_, text)) = kept.iter().find(|(k, _)| *k == key) {
        // The error names the path given this time.
        return text.clone().map_err(|e| err(path, e.message));
    }
    let text = read_text_now(path, limit);
    kept.push((key, text.clone()));
    text
}

fn read_text_now(path: &Path, limit: Limit) -> Result<String, InputError> {
    String::from_utf8(read(path, limit)?).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        err(path, not_utf8(e.as_bytes(), at))
    })
}

/// The text inputs read once so far, by the device and inode of what was read; `None`
/// until [`read_each_input_once`].
type Kept = Vec<((u64, u64), Result<String, InputError>)>;

static KEPT: Mutex<Option<Kept>> = Mutex::new(None);

/// Start keeping inputs that cannot be read twice: [`super::read_each_input_once`].
pub(crate) fn read_each_input_once() {
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    kept.get_or_insert_with(Vec::new);
}

/// The device and inode of the input at `path` if it cannot be read twice (`-`, or
/// anything but a regular file); `None` for a regular file or a path that names nothing.
fn once_key(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let stdin = path == Path::new("-");
        let looked = if stdin { Path::new("/dev/stdin") } else { path };
        let meta = std::fs::metadata(looked).ok()?;
        (stdin || !meta.is_file()).then(|| (meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The message for `bytes` that are UTF-8 up to byte `at` and not at it: the line and
/// column (counted in characters) of the bad byte, and the byte, as text formats name
/// every other error.
pub(crate) fn not_utf8(bytes: &[u8], at: usize) -> String {
    let (line, col) = line_col(bytes, at);
    format!(
        "line {line}, column {col}: not UTF-8 text (byte {:#04x})",
        bytes[at]
    )
}

/// The line and column (from 1; the column counted in characters) of byte `at` of
/// `bytes`, which must be UTF-8 up to it.
pub(crate) fn line_col(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    // Valid UTF-8 up to `at`, so the characters before it on its line can be counted.
    let col = std::str::from_utf8(&before[line_start..]).map_or(0, |t| t.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("gpu16-limits-{}-{name}", std::process::id()))
    }

    const TINY: Limit = Limit {
        what: "a test input",
        bytes: 8,
    };

    #[test]
    fn a_file_at_the_limit_is_read_whole() {
        let p = scratch("at");
        std::fs::write(&p, [7u8; 8]).unwrap();
        assert_eq!(read(&p, TINY).unwrap(), [7u8; 8]);
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_file_past_the_limit_names_the_file_the_limit_and_its_length() {
        let p = scratch("past");
        std::fs::write(&p, [7u8; 9]).unwrap();
        let e = read(&p, TINY).unwrap_err();
        assert_eq!(e.path, p);
        assert_eq!(
            e.message,
            "too large: a test input may have at most 8 bytes; this file has 9"
        );
        std::fs::remove_file(&p).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_input_stops_one_byte_past_the_limit() {
        let e = read(Path::new("/dev/zero"), MEMORY_IMAGE).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: too large: a raw memory image may have at most 4096 bytes (4 KiB); \
             this input has more"
        );
    }

    #[test]
    fn an_image_is_read_as_frames_with_the_bytes_left_over() {
        let p = scratch("frames");
        std::fs::write(&p, (0..70u8).collect::<Vec<u8>>()).unwrap();
        let at = |bytes| Limit {
            what: "a test input",
            bytes,
        };
        // 70 bytes: frames 0..32 and 32..64, 6 bytes left over.
        let (frames, left) = read_frames::<32>(&p, at(70)).unwrap();
        assert_eq!((frames.len(), left), (2, 6));
        assert_eq!((frames[0][0], frames[1][0], frames[1][31]), (0, 32, 63));
        let e = read_frames::<32>(&p, at(64)).unwrap_err();
        assert_eq!(
            e.message,
            "too large: a test input may have at most 64 bytes; this file has 70"
        );
        std::fs::remove_file(&p).unwrap();
        #[cfg(unix)]
        {
            let e = read_frames::<32>(Path::new("/dev/zero"), TINY).unwrap_err();
            assert_eq!(
                e.message,
                "too large: a test input may have at most 8 bytes; this input has more"
            );
        }
    }

    #[test]
    fn an_input_in_memory_is_held_to_the_same_limit() {
        assert_eq!(check(Path::new("memory"), MEMORY_IMAGE, 4096), Ok(()));
        let e = check(Path::new("memory"), MEMORY_IMAGE, 4097).unwrap_err();
        assert_eq!(
            e.to_string(),
            "memory: too large: a raw memory image may have at most 4096 bytes (4 KiB); \
             this input has 4097"
        );
    }

    #[test]
    fn a_bad_byte_is_named_by_line_and_column() {
        // Line 3, after `; é ` (four characters, one of them two bytes).
        let bytes = b"nop\n\n; \xc3\xa9 \xff rest\n";
        // Valid up to the 0xff: "nop\n\n; " is 7 bytes, `é` 2 more and the space 1.
        assert_eq!(
            not_utf8(bytes, 10),
            "line 3, column 5: not UTF-8 text (byte 0xff)"
        );
        assert_eq!(
            not_utf8(b"\x80", 0),
            "line 1, column 1: not UTF-8 text (byte 0x80)"
        );
    }

    #[test]
    fn sizes_use_the_largest_unit_that_divides() {
        assert_eq!(size(PROGRAM_IMAGE.bytes), "1073741824 bytes (1 GiB)");
        assert_eq!(size(SOURCE.bytes), "16777216 bytes (16 MiB)");
        assert_eq!(size(4096), "4096 bytes (4 KiB)");
        assert_eq!(size(1000), "1000 bytes");
    }
}
