//! Shared-memory images: the one rule that says how a memory file is read, for `--mem`,
//! `--expect-mem`, the Python API and its scoreboard alike, and how the files gpu16 writes
//! (`run --dump-mem`, `gen --mem-out`) follow it, so what it writes it reads back.
//!
//! - A format given by the user (`--mem-format hex|raw`, Python's `memory_format=`) wins.
//! - Otherwise the extension decides: `.hex`, `.mem`, `.vmem` and `.txt` are `$readmemh`
//!   text, `.bin` and `.raw` are raw bytes.
//! - Otherwise (another extension, none, or `-` for stdin) the content decides: bytes that
//!   are not text (a NUL, a control character, invalid UTF-8) are raw; text that parses as
//!   `$readmemh` is text. Text that does not parse could be either (a raw image that happens
//!   to hold printable bytes, or a text with a typo), so it is an error that names the flag
//!   that settles it, never a silent guess.
//!
//! A raw image is at most 4096 bytes (`limits::MEMORY_IMAGE`), a text at most 1 MiB
//! (`limits::MEMORY_HEX`); memory past the image is zero.

use super::hex::parse_memory;
use super::limits::{self, read, read_capped, Limit};
use super::{err, InputError};
use gpu16_machine::MEMORY_BYTES;
use std::path::Path;

/// The extensions of a memory file read as `$readmemh` text (in any case).
pub(crate) const TEXT_EXTENSIONS: [&str; 4] = ["hex", "mem", "vmem", "txt"];

/// The extensions of a memory file read as raw bytes (in any case).
pub(crate) const RAW_EXTENSIONS: [&str; 2] = ["bin", "raw"];

/// How a shared-memory image is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryFormat {
    /// `$readmemh` text: hex bytes, `@addr` to move, comments.
    Hex,
    /// Raw bytes: byte i is address i.
    Raw,
}

impl MemoryFormat {
    /// Both formats, in the order `--mem-format` lists them.
    pub const ALL: [MemoryFormat; 2] = [MemoryFormat::Hex, MemoryFormat::Raw];

    /// The name the flag takes and reports print: `hex` or `raw`.
    pub fn name(self) -> &'static str {
        match self {
            MemoryFormat::Hex => "hex",
            MemoryFormat::Raw => "raw",
        }
    }

    /// The format of a memory file gpu16 writes at `path`: `$writememh`-style text where the
    /// extension names a text (`.hex`, `.mem`, `.vmem`, `.txt`), raw bytes otherwise (`-`,
    /// `.bin`, any other name).
    /// Reading a file written as `format.encode(memory)` back gives `memory`, zero-extended
    /// to 4096 bytes.
    pub fn written_at(path: &Path) -> MemoryFormat {
        MemoryFormat::of_extension(path).unwrap_or(MemoryFormat::Raw)
    }

    /// `memory` (at most 4096 bytes; zero past its end) as a file in this format. The text is
    /// `$writememh`-style: a comment, then for each 16-byte row that is not all zero, its
    /// 16 hex bytes, with `@addr` wherever rows were skipped. Reading either back gives
    /// `memory`, zero-extended to 4096 bytes.
    pub fn encode(self, memory: &[u8]) -> Vec<u8> {
        let memory = &memory[..memory.len().min(MEMORY_BYTES)];
        match self {
            MemoryFormat::Raw => memory.to_vec(),
            MemoryFormat::Hex => {
                use std::fmt::Write;
                let mut text = String::from(
                    "// gpu16 shared memory ($readmemh): hex bytes from @addr; unlisted bytes are 0\n",
                );
                let mut next = 0;
                for (row, bytes) in memory.chunks(16).enumerate() {
                    if bytes.iter().all(|&b| b == 0) {
                        continue;
                    }
                    let at = row * 16;
                    if at != next {
                        let _ = writeln!(text, "@{at:03x}");
                    }
                    let line: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
                    text.push_str(&line.join(" "));
                    text.push('\n');
                    next = at + bytes.len();
                }
                text.into_bytes()
            }
        }
    }

    /// The format `path`'s extension names, if it names one ([`TEXT_EXTENSIONS`],
    /// [`RAW_EXTENSIONS`]); `None` for another extension, none, or `-`.
    pub(crate) fn of_extension(path: &Path) -> Option<MemoryFormat> {
        let ext = path.extension()?.to_str()?;
        let is = |list: &[&str]| list.iter().any(|e| ext.eq_ignore_ascii_case(e));
        if is(&TEXT_EXTENSIONS) {
            Some(MemoryFormat::Hex)
        } else if is(&RAW_EXTENSIONS) {
            Some(MemoryFormat::Raw)
        } else {
            None
        }
    }

    /// The most bytes a file in this format may have.
    fn limit(self) -> Limit {
        match self {
            MemoryFormat::Hex => limits::MEMORY_HEX,
            MemoryFormat::Raw => limits::MEMORY_IMAGE,
        }
    }
}

/// A shared-memory image as read: its 4096 bytes and the format they were read in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryImage {
    /// The 4096 bytes, address order (zero past what the file gave).
    pub bytes: Vec<u8>,
    /// How many of them the file gave: a raw image's length, or one past the highest
    /// address a text gave (0 for an empty file).
    pub given: usize,
    /// How the file was read.
    pub(crate) format: MemoryFormat,
}

impl MemoryImage {
    /// Read the memory image at `path` (`-`: stdin) by the module's rule: `format` if given,
    /// else the extension, else the content. `flag` names the option that gives the format
    /// (`--mem-format`, `memory_format=`), for the error of a file the content cannot decide.
    pub fn load(
        path: &Path,
        format: Option<MemoryFormat>,
        flag: &str,
    ) -> Result<MemoryImage, InputError> {
        let said = match format {
            Some(_) => Said::Flag(flag),
            None => Said::Name(flag),
        };
        let named = format.or_else(|| MemoryFormat::of_extension(path));
        let ((bytes, given), format) = match named {
            Some(format) => (
                decode(path, &read(path, format.limit())?, format, said)?,
                format,
            ),
            None => {
                // The larger of the two limits bounds the read; the content then says which
                // format, and so which limit, applies.
                let (bytes, more) = read_capped(path, limits::MEMORY_HEX.bytes)?;
                if more {
                    let format = if is_text(&bytes) {
                        MemoryFormat::Hex
                    } else {
                        MemoryFormat::Raw
                    };
                    return Err(limits::too_large_input(path, format.limit()));
                }
                let format = sniff(path, &bytes, flag)?;
                (decode(path, &bytes, format, Said::Content)?, format)
            }
        };
        Ok(MemoryImage {
            bytes,
            given,
            format,
        })
    }

    /// The memory image of `bytes` handed over in memory (a Python caller's), named `name` in
    /// errors, read by the same rule as a file: `format` if given, else by content. `flag`
    /// names the argument that gives the format.
    pub fn from_bytes(
        name: &Path,
        bytes: &[u8],
        format: Option<MemoryFormat>,
        flag: &str,
    ) -> Result<MemoryImage, InputError> {
        let (format, said) = match format {
            Some(f) => (f, Said::Flag(flag)),
            None => {
                limits::check(name, limits::MEMORY_HEX, bytes.len() as u64)?;
                (sniff(name, bytes, flag)?, Said::Content)
            }
        };
        limits::check(name, format.limit(), bytes.len() as u64)?;
        let (bytes, given) = decode(name, bytes, format, said)?;
        Ok(MemoryImage {
            bytes,
            given,
            format,
        })
    }
}

/// What said the format a memory image is read in, for the advice an error in it gets.
#[derive(Clone, Copy, Debug)]
enum Said<'a> {
    /// The user's flag (or argument), named here: maybe the file is of the other format.
    Flag(&'a str),
    /// The file's extension: a text name is meant as text, so for a text with a stray
    /// byte the advice is to fix the text, never to read it as bytes (which would silently
    /// take the text as memory). Only a file that is no text at all is pointed to the
    /// flag, named here.
    Name(&'a str),
    /// The content: only text that parses is read as text.
    Content,
}

/// The 4096 bytes of `bytes` read in `format` (as `said` said), and how many of them it
/// gave.
fn decode(
    path: &Path,
    bytes: &[u8],
    format: MemoryFormat,
    said: Said,
) -> Result<(Vec<u8>, usize), InputError> {
    match format {
        MemoryFormat::Raw => {
            limits::check(path, limits::MEMORY_IMAGE, bytes.len() as u64)?;
            let mut out = bytes.to_vec();
            out.resize(MEMORY_BYTES, 0);
            Ok((out, bytes.len()))
        }
        MemoryFormat::Hex => {
            let advice = |what: &str| match said {
                Said::Flag(flag) => format!("; a raw memory image needs {flag} raw"),
                Said::Name(flag) if !text_but_for_bytes(path, bytes) => format!(
                    "; this is no $readmemh text, though its name says so: a raw memory \
                     image needs {flag} raw (or a .bin or .raw name)"
                ),
                Said::Name(_) | Said::Content => format!(
                    "; a $readmemh text holds {what}, comments included: remove or replace \
                     the byte"
                ),
            };
            let text = std::str::from_utf8(bytes).map_err(|e| {
                let at = limits::not_utf8(bytes, e.valid_up_to());
                err(path, format!("{at}{}", advice("UTF-8 text only")))
            })?;
            if let Some(at) = bytes.iter().position(|&b| !is_text_byte(b)) {
                let (line, col) = limits::line_col(bytes, at);
                return Err(err(
                    path,
                    format!(
                        "line {line}, column {col}: control byte {:#04x} in a $readmemh \
                         text{}",
                        bytes[at],
                        advice("no control byte but tab, line feed, carriage return and form feed")
                    ),
                ));
            }
            parse_memory(path, text)
        }
    }
}

/// Whether `bytes` are a `$readmemh` text but for bytes that text cannot hold (a stray
/// Latin-1 letter in a comment, a control byte): it has no NUL byte, which no text file
/// holds, and with each of the others read as a space the text parses. A raw image under
/// a text name is no such text (its bytes make no hex text, or hold a zero).
fn text_but_for_bytes(path: &Path, bytes: &[u8]) -> bool {
    if bytes.contains(&0) {
        return false;
    }
    let text: String = String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| match c {
            '\u{fffd}' => ' ',
            c if c.is_ascii() && !is_text_byte(c as u8) => ' ',
            c => c,
        })
        .collect();
    parse_memory(path, &text).is_ok()
}

/// Whether `bytes` (all of a file, or its first part) is text: UTF-8 with no control
/// characters but tab, line feed, carriage return and form feed. A cut-off UTF-8
/// character at the very end counts as text (the read may have stopped inside it).
fn is_text(bytes: &[u8]) -> bool {
    let valid = match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    valid && bytes.iter().all(|&b| is_text_byte(b))
}

/// Whether `b` may stand in a text: not a control character, but for tab, line feed,
/// carriage return and form feed.
fn is_text_byte(b: u8) -> bool {
    b >= 0x20 && b != 0x7f || matches!(b, b'\t' | b'\n' | b'\r' | 0x0c)
}

/// The format of `bytes`, whose name says none: raw unless it is text; text that parses
/// as `$readmemh` is hex; other text is an error naming `flag`.
fn sniff(path: &Path, bytes: &[u8], flag: &str) -> Result<MemoryFormat, InputError> {
    if !is_text(bytes) {
        return Ok(MemoryFormat::Raw);
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        // Text cut off mid-character: only a read that stopped at its limit does that, and
        // the caller refuses such an input as too large.
        return Ok(MemoryFormat::Hex);
    };
    match parse_memory(path, text) {
        Ok(_) => Ok(MemoryFormat::Hex),
        Err(e) => Err(err(
            path,
            format!(
                "cannot tell how to read this memory image: it is text, but not $readmemh \
                 text ({}); give {flag} raw to take its bytes as they are, or fix the text",
                e.message
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(bytes: &[u8], format: Option<MemoryFormat>) -> Result<MemoryImage, String> {
        MemoryImage::from_bytes(Path::new("m"), bytes, format, "--mem-format")
            .map_err(|e| e.message)
    }

    #[test]
    fn extensions_name_formats_in_any_case() {
        for (name, format) in [
            ("a.hex", Some(MemoryFormat::Hex)),
            ("a.MEM", Some(MemoryFormat::Hex)),
            ("a.vmem", Some(MemoryFormat::Hex)),
            ("dir/a.txt", Some(MemoryFormat::Hex)),
            ("a.bin", Some(MemoryFormat::Raw)),
            ("a.Raw", Some(MemoryFormat::Raw)),
            ("a.dat", None),
            ("a", None),
            ("-", None),
        ] {
            assert_eq!(
                MemoryFormat::of_extension(Path::new(name)),
                format,
                "{name}"
            );
        }
    }

    #[test]
    fn binary_content_is_raw() {
        let m = image(&[0, 1, 2, 0xff], None).unwrap();
        assert_eq!((m.format, m.given), (MemoryFormat::Raw, 4));
        assert_eq!(
            (m.bytes.len(), m.bytes[1], m.bytes[3], m.bytes[4]),
            (4096, 1, 0xff, 0)
        );
        // One control byte makes a text-looking image raw.
        let m = image(b"12 34\x01", None).unwrap();
        assert_eq!((m.format, m.bytes[0]), (MemoryFormat::Raw, b'1'));
    }

    #[test]
    fn readmemh_content_is_text() {
        let m = image(b"// data\n@10 aa bb\r\n0c\n", None).unwrap();
        assert_eq!((m.format, m.given), (MemoryFormat::Hex, 0x13));
        assert_eq!(
            (m.bytes[0x10], m.bytes[0x11], m.bytes[0x12]),
            (0xaa, 0xbb, 0x0c)
        );
        assert_eq!(m.bytes.iter().filter(|&&b| b != 0).count(), 3);
    }

    #[test]
    fn text_that_does_not_parse_is_an_error_naming_the_flag() {
        let e = image(b"hello world\n", None).unwrap_err();
        assert!(
            e.starts_with("cannot tell how to read this memory image"),
            "{e}"
        );
        assert!(
            e.contains("line 1, column 1: `hello` is not a hex byte"),
            "{e}"
        );
        assert!(e.contains("--mem-format raw"), "{e}");
        // The flag settles it either way.
        let m = image(b"hello world\n", Some(MemoryFormat::Raw)).unwrap();
        assert_eq!(&m.bytes[..5], b"hello");
        let e = image(b"hello world\n", Some(MemoryFormat::Hex)).unwrap_err();
        assert_eq!(
            e,
            "line 1, column 1: `hello` is not a hex byte (1 or 2 hex digits)"
        );
    }

    #[test]
    fn a_given_format_overrides_content() {
        // Text bytes taken raw: the ASCII codes, not the values they spell.
        let m = image(b"01 02", Some(MemoryFormat::Raw)).unwrap();
        assert_eq!(&m.bytes[..5], b"01 02");
        let e = image(&[0xff, 0xfe], Some(MemoryFormat::Hex)).unwrap_err();
        assert!(
            e.contains("not UTF-8 text") && e.contains("--mem-format raw"),
            "{e}"
        );
    }

    #[test]
    fn each_format_keeps_its_limit() {
        let e = image(&[0u8; 4097], None).unwrap_err();
        assert!(
            e.contains("a raw memory image may have at most 4096 bytes"),
            "{e}"
        );
        // A text may be longer than 4096 bytes: its comments cost no memory.
        let long = format!("{}\n01\n", "// ".repeat(3000));
        assert_eq!(image(long.as_bytes(), None).unwrap().bytes[0], 1);
    }

    #[test]
    fn what_is_written_reads_back() {
        let mut memory = vec![0u8; 4096];
        memory[0] = 1;
        memory[0x11] = 0xab;
        memory[0xfff] = 0xff;
        let text = String::from_utf8(MemoryFormat::Hex.encode(&memory)).unwrap();
        let body: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            body,
            [
                "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
                "00 ab 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
                "@ff0",
                "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 ff",
            ]
        );
        for format in MemoryFormat::ALL {
            let file = format.encode(&memory[..]);
            assert_eq!(image(&file, None).unwrap().bytes, memory, "{format:?}");
        }
        // A short image: zero past its end, either way.
        let short = MemoryFormat::Hex.encode(&[7, 8]);
        assert_eq!(&image(&short, None).unwrap().bytes[..3], &[7, 8, 0]);
        assert_eq!(
            MemoryFormat::written_at(Path::new("d.VMEM")),
            MemoryFormat::Hex
        );
        assert_eq!(
            MemoryFormat::written_at(Path::new("d.dat")),
            MemoryFormat::Raw
        );
        assert_eq!(MemoryFormat::written_at(Path::new("-")), MemoryFormat::Raw);
    }

    #[test]
    fn an_empty_image_is_zero_memory() {
        let m = image(b"", None).unwrap();
        assert_eq!(m.bytes, vec![0u8; 4096]);
    }
}
