//! Reading the user's files: program images (raw `.bin`/`.tm`, `$readmemh`-style `.hex`
//! words, assembly source) and shared-memory images (raw or hex bytes). Every error names
//! the file and, for text formats, the line and column.

use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::memory::MEMORY_BYTES;
use gpu16_machine::Program;
use std::fmt;
use std::path::{Path, PathBuf};

/// A file the user gave that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for InputError {}

fn err(path: &Path, message: impl Into<String>) -> InputError {
    InputError {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, InputError> {
    std::fs::read(path).map_err(|e| err(path, format!("cannot read: {e}")))
}

fn read_text(path: &Path) -> Result<String, InputError> {
    let bytes = read(path)?;
    String::from_utf8(bytes).map_err(|e| {
        err(
            path,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// How a program file is read, by its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramFormat {
    Binary,
    Hex,
    Assembly,
}

impl ProgramFormat {
    pub fn of(path: &Path) -> Result<ProgramFormat, InputError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("bin" | "tm") => Ok(ProgramFormat::Binary),
            Some("hex") => Ok(ProgramFormat::Hex),
            Some("s" | "asm") => Ok(ProgramFormat::Assembly),
            _ => Err(err(
                path,
                "unknown program format: use .bin or .tm (raw image of 32-byte frames), .hex (16-bit words) or .s/.asm (assembly)",
            )),
        }
    }
}

/// Load a program image from any supported format.
pub fn load_program(path: &Path) -> Result<Program, InputError> {
    let image = match ProgramFormat::of(path)? {
        ProgramFormat::Binary => read(path)?,
        ProgramFormat::Hex => parse_hex_words(path, &read_text(path)?)?,
        ProgramFormat::Assembly => {
            let source = read_text(path)?;
            return gpu16_asm::assemble(&source, &path.display().to_string())
                .map(|a| a.program)
                .map_err(|d| err(path, format!("assembly failed\n{d}")));
        }
    };
    Program::from_image(&image).map_err(|e| err(path, e.to_string()))
}

/// `text` with each `/* ... */` comment blanked out (newlines kept, so lines and columns of
/// what remains do not move), as `$readmemh` allows. An unterminated comment is an error
/// naming where it opens.
fn blank_block_comments(path: &Path, text: &str) -> Result<String, InputError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("/*") {
        out.push_str(&rest[..open]);
        let Some(len) = rest[open + 2..].find("*/") else {
            let before = &text[..text.len() - rest.len() + open];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            return Err(err(
                path,
                format!("line {line}, column {col}: `/*` comment is never closed"),
            ));
        };
        let comment = &rest[open..open + 2 + len + 2];
        for c in comment.chars() {
            // As many spaces as the character has bytes: columns are byte offsets.
            match c {
                '\n' => out.push('\n'),
                _ => out.extend(std::iter::repeat_n(' ', c.len_utf8())),
            }
        }
        rest = &rest[open + comment.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Tokens of a hex text file with their 1-based line and column, comments (`//`, `#`, `;`)
/// removed.
fn hex_tokens(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    text.lines().enumerate().flat_map(|(ln, line)| {
        let code = ["//", "#", ";"]
            .iter()
            .filter_map(|c| line.find(c))
            .min()
            .map_or(line, |i| &line[..i]);
        let base = code.as_ptr() as usize;
        code.split_whitespace()
            .map(move |tok| (ln + 1, tok.as_ptr() as usize - base + 1, tok))
    })
}

/// The largest word address a program `.hex` may set with `@`: 4,194,304 frames.
const MAX_PROGRAM_WORDS: usize = 1 << 26;

/// `$readmemh`-style 16-bit words in address order; word i of a frame is bytes 2i, 2i+1
/// (little-endian), so 16 words make one 32-byte frame. `@addr` (hex, in words) moves to
/// another address; words skipped over are zero. `/* */` comments may span lines.
pub fn parse_hex_words(path: &Path, text: &str) -> Result<Vec<u8>, InputError> {
    let text = blank_block_comments(path, text)?;
    let mut words: Vec<u16> = Vec::new();
    let mut addr = 0usize;
    for (line, col, tok) in hex_tokens(&text) {
        let at = |m: String| err(path, format!("line {line}, column {col}: {m}"));
        if let Some(a) = tok.strip_prefix('@') {
            addr = usize::from_str_radix(a, 16)
                .ok()
                .filter(|&a| a < MAX_PROGRAM_WORDS)
                .ok_or_else(|| {
                    at(format!(
                        "`{tok}` is not a word address (hex, below {MAX_PROGRAM_WORDS:#x})"
                    ))
                })?;
            continue;
        }
        let digits = tok.strip_prefix("0x").unwrap_or(tok).replace('_', "");
        if digits.is_empty() || digits.len() > 4 {
            return Err(at(format!(
                "`{tok}` is not a 16-bit hex word (1 to 4 hex digits)"
            )));
        }
        let w = u16::from_str_radix(&digits, 16)
            .map_err(|_| at(format!("`{tok}` is not a hex word")))?;
        if addr >= MAX_PROGRAM_WORDS {
            return Err(at(format!(
                "word past the largest address {MAX_PROGRAM_WORDS:#x}"
            )));
        }
        if words.len() <= addr {
            words.resize(addr + 1, 0);
        }
        words[addr] = w;
        addr += 1;
    }
    let out: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    if !out.len().is_multiple_of(FRAME_BYTES) {
        return Err(err(
            path,
            format!(
                "{} words is not a whole number of frames (16 words each)",
                out.len() / 2
            ),
        ));
    }
    Ok(out)
}

/// Load a shared-memory image: raw bytes, or `.hex` bytes (`@addr` sets the address, as in
/// `$readmemh`). At most 4096 bytes; memory past the image is zero.
pub fn load_memory(path: &Path) -> Result<Vec<u8>, InputError> {
    let is_hex = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("hex"));
    let image = if is_hex {
        parse_hex_bytes(path, &blank_block_comments(path, &read_text(path)?)?)?
    } else {
        read(path)?
    };
    if image.len() > MEMORY_BYTES {
        return Err(err(
            path,
            format!(
                "memory image is {} bytes; shared memory holds {MEMORY_BYTES}",
                image.len()
            ),
        ));
    }
    Ok(image)
}

fn parse_hex_bytes(path: &Path, text: &str) -> Result<Vec<u8>, InputError> {
    let mut out = vec![0u8; MEMORY_BYTES];
    let mut addr = 0usize;
    let mut len = 0usize;
    for (line, col, tok) in hex_tokens(text) {
        let at = |m: String| err(path, format!("line {line}, column {col}: {m}"));
        if let Some(a) = tok.strip_prefix('@') {
            addr = usize::from_str_radix(a, 16)
                .ok()
                .filter(|&a| a < MEMORY_BYTES)
                .ok_or_else(|| at(format!("`{tok}` is not an address 0..fff")))?;
            continue;
        }
        let digits = tok.strip_prefix("0x").unwrap_or(tok);
        if digits.is_empty() || digits.len() > 2 {
            return Err(at(format!("`{tok}` is not a hex byte (1 or 2 hex digits)")));
        }
        let b =
            u8::from_str_radix(digits, 16).map_err(|_| at(format!("`{tok}` is not a hex byte")))?;
        if addr >= MEMORY_BYTES {
            return Err(at(format!(
                "byte past the end of the {MEMORY_BYTES}-byte memory"
            )));
        }
        out[addr] = b;
        addr += 1;
        len = len.max(addr);
    }
    out.truncate(len);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_words_are_little_endian_and_comments_skipped() {
        let text = "1123 // add\nf000 ffff\n".to_string() + &"0000 ".repeat(13);
        let b = parse_hex_words(Path::new("p.hex"), &text).unwrap();
        assert_eq!(&b[..6], &[0x23, 0x11, 0x00, 0xf0, 0xff, 0xff]);
        assert_eq!(b.len(), 32);
    }

    #[test]
    fn hex_errors_name_line_and_column() {
        let e = parse_hex_words(Path::new("p.hex"), "0000\n  zz").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.hex: line 2, column 3: `zz` is not a hex word"
        );
        let e = parse_hex_words(Path::new("p.hex"), "0000").unwrap_err();
        assert!(e.to_string().contains("not a whole number of frames"));
    }

    #[test]
    fn hex_words_with_addresses_and_block_comments() {
        // Words 0 and 1, then @10 (word 16: frame 1), a comment spanning two lines, then
        // word 17; everything else zero.
        let text = "0101 /* first */ 0202\n@10 /* two\n lines */ 1616 1717 @1f ffff";
        let b = parse_hex_words(Path::new("p.hex"), text).unwrap();
        assert_eq!(b.len(), 64);
        assert_eq!(&b[..4], &[0x01, 0x01, 0x02, 0x02]);
        assert_eq!(&b[32..36], &[0x16, 0x16, 0x17, 0x17]);
        assert_eq!(&b[62..64], &[0xff, 0xff]);
        assert!(b[4..32].iter().all(|&x| x == 0));
        let e = parse_hex_words(Path::new("p.hex"), "0000\n  /* open").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.hex: line 2, column 3: `/*` comment is never closed"
        );
        // Columns after a closed comment still count from the line's start.
        let e = parse_hex_words(Path::new("p.hex"), "/* x */ zz").unwrap_err();
        assert_eq!(
            e.to_string(),
            "p.hex: line 1, column 9: `zz` is not a hex word"
        );
        assert!(parse_hex_words(Path::new("p.hex"), "@ffffffff 0000").is_err());
    }

    #[test]
    fn hex_memory_with_addresses() {
        let m = parse_hex_bytes(Path::new("m.hex"), "01 02\n@100 ff").unwrap();
        assert_eq!(m.len(), 0x101);
        assert_eq!((m[0], m[1], m[0x100]), (1, 2, 0xff));
        assert!(parse_hex_bytes(Path::new("m.hex"), "@1000").is_err());
    }
}
