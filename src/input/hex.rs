//! `$readmemh`-style hex texts: 16-bit program words and shared-memory bytes, with `//`,
//! `#`, `;` and `/* */` comments and `@addr` lines that move the address. Every error names
//! the line and column; an `@addr` past what the text may describe is refused before
//! anything is allocated for it.

use super::{err, InputError};
use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::MEMORY_BYTES;
use std::path::Path;

/// The most 16-bit words a `.hex` program may describe: 2^22 words, an image of 8 MiB
/// (262,144 frames). An `@addr` costs the file a few bytes but the process 2 bytes for every
/// word it skips, so this bound is what keeps a tiny file from allocating much: at the limit
/// the image and the program loaded from it take about 17 MiB. Longer programs are given as
/// binary images (up to [`super::limits::PROGRAM_IMAGE`]).
pub(crate) const MAX_PROGRAM_WORDS: usize = 1 << 22;

/// `text` with each `/* ... */` comment blanked out (newlines kept, so lines and columns of
/// what remains do not move), as `$readmemh` allows. An unterminated comment is an error
/// naming where it opens.
pub(super) fn blank_block_comments(path: &Path, text: &str) -> Result<String, InputError> {
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
pub(super) fn hex_tokens(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
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

/// The address of an `@addr` token below `end`, or the message saying why it is not one.
/// `unit` and `of` name what is addressed, for the message ("word", "a .hex program").
fn address(tok: &str, end: usize, unit: &str, of: &str) -> Result<usize, String> {
    let digits = &tok[1..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("`{tok}` is not an address (hex digits after `@`)"));
    }
    // Too many digits for a u64 is past the end as surely as a large value.
    match u64::from_str_radix(digits, 16) {
        Ok(a) if a < end as u64 => Ok(a as usize),
        _ => Err(format!(
            "`{tok}` is past the last {unit} address {:#x} of {of}",
            end - 1
        )),
    }
}

/// `$readmemh`-style 16-bit words in address order; word i of a frame is bytes 2i, 2i+1
/// (little-endian), so 16 words make one 32-byte frame. `@addr` (hex, in words, below
/// [`MAX_PROGRAM_WORDS`]) moves to another address; words skipped over are zero. `/* */`
/// comments may span lines.
pub(crate) fn parse_hex_words(path: &Path, text: &str) -> Result<Vec<u8>, InputError> {
    let of = format!("a .hex program (at most {MAX_PROGRAM_WORDS} words)");
    let text = blank_block_comments(path, text)?;
    let mut image: Vec<u8> = Vec::new();
    let mut addr = 0usize;
    for (line, col, tok) in hex_tokens(&text) {
        let at = |m: String| err(path, format!("line {line}, column {col}: {m}"));
        if tok.starts_with('@') {
            addr = address(tok, MAX_PROGRAM_WORDS, "word", &of).map_err(at)?;
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
                "word past the last word address {:#x} of {of}",
                MAX_PROGRAM_WORDS - 1
            )));
        }
        // Below the bound, so the image grows to at most 8 MiB.
        if image.len() < 2 * addr + 2 {
            image.resize(2 * addr + 2, 0);
        }
        image[2 * addr..2 * addr + 2].copy_from_slice(&w.to_le_bytes());
        addr += 1;
    }
    if !image.len().is_multiple_of(FRAME_BYTES) {
        return Err(err(
            path,
            format!(
                "{} words is not a whole number of frames (16 words each)",
                image.len() / 2
            ),
        ));
    }
    Ok(image)
}

/// One hex byte of a `$readmemh` text: 1 or 2 hex digits, `_` allowed between them as in
/// Verilog, and a `0x` prefix tolerated. An `x` or `z` digit (unknown or floating) is an
/// error of its own.
pub(super) fn byte(tok: &str) -> Result<u8, String> {
    let bare = match tok.get(..2) {
        Some("0x" | "0X") if tok.len() > 2 => &tok[2..],
        _ => tok,
    };
    let digits: String = bare.chars().filter(|&c| c != '_').collect();
    let unknown = |c: char| matches!(c, 'x' | 'X' | 'z' | 'Z' | '?');
    if digits.chars().any(unknown) && digits.chars().all(|c| c.is_ascii_hexdigit() || unknown(c)) {
        return Err(format!(
            "`{tok}` has an x or z digit: a byte must be a known value"
        ));
    }
    if digits.is_empty() || digits.len() > 2 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!("`{tok}` is not a hex byte (1 or 2 hex digits)"));
    }
    u8::from_str_radix(&digits, 16).map_err(|_| format!("`{tok}` is not a hex byte"))
}

/// The bytes of a `$readmemh` text of `size` bytes: each with the line it was given on.
/// `@addr` is hex, below `size`; `unit` names an address in messages ("address", "row"),
/// and a row given twice is an error (a bank file gives each row once).
pub(super) fn parse_bytes(
    path: &Path,
    text: &str,
    size: usize,
    unit: &str,
) -> Result<Vec<Option<(u8, usize)>>, InputError> {
    let text = blank_block_comments(path, text)?;
    let mut out: Vec<Option<(u8, usize)>> = vec![None; size];
    let mut addr = 0usize;
    for (line, col, tok) in hex_tokens(&text) {
        let at = |m: String| err(path, format!("line {line}, column {col}: {m}"));
        if let Some(digits) = tok.strip_prefix('@') {
            let valid = digits.bytes().any(|b| b.is_ascii_hexdigit())
                && digits.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_');
            if !valid {
                return Err(at(format!(
                    "`{tok}` is not an address (hex digits after `@`)"
                )));
            }
            // Too many digits for a u64 is past the end as surely as a large value.
            addr = match u64::from_str_radix(&digits.replace('_', ""), 16) {
                Ok(a) if a < size as u64 => a as usize,
                _ => {
                    return Err(at(format!(
                        "`{tok}` is past the last {unit} {:#x}",
                        size - 1
                    )))
                }
            };
            continue;
        }
        let b = byte(tok).map_err(at)?;
        if addr >= size {
            return Err(at(format!("a byte past the last {unit} {:#x}", size - 1)));
        }
        if let Some((_, first)) = out[addr] {
            if unit == "row" {
                return Err(at(format!(
                    "row {addr:#04x} is given twice (first on line {first})"
                )));
            }
        }
        out[addr] = Some((b, line));
        addr += 1;
    }
    Ok(out)
}

/// A `$readmemh` text of shared memory: hex bytes, `@addr` (hex, below 4096) to move,
/// `//`, `#`, `;` and `/* */` comments. Gives the 4096 bytes, those it does not give zero.
#[cfg(test)] // Only the tests read a memory text with no file behind it.
pub(crate) fn parse_memory_text(path: &Path, text: &str) -> Result<Vec<u8>, InputError> {
    parse_memory(path, text).map(|(bytes, _)| bytes)
}

/// [`parse_memory_text`], and one past the highest address the text gave (0 if none).
pub(super) fn parse_memory(path: &Path, text: &str) -> Result<(Vec<u8>, usize), InputError> {
    let given = parse_bytes(path, text, MEMORY_BYTES, "address")?;
    let len = given.iter().rposition(Option::is_some).map_or(0, |a| a + 1);
    Ok((given.iter().map(|b| b.map_or(0, |(v, _)| v)).collect(), len))
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
    }

    #[test]
    fn a_program_address_past_the_bound_is_refused_where_it_stands() {
        let past = |text: &str| parse_hex_words(Path::new("p.hex"), text).unwrap_err();
        // The reported 14-byte file: it used to allocate 400 MB.
        assert_eq!(
            past("@3ffffff 0000\n").to_string(),
            "p.hex: line 1, column 1: `@3ffffff` is past the last word address 0x3fffff of \
             a .hex program (at most 4194304 words)"
        );
        // More digits than a u64 holds is past the bound too, not "not an address".
        assert!(past("\n @ffffffffffffffffffffff")
            .to_string()
            .starts_with("p.hex: line 2, column 2: `@ffffffffffffffffffffff` is past"));
        assert!(past("@zz").to_string().contains("is not an address"));
        assert!(past("@+10").to_string().contains("is not an address"));
        // The last word may be written; the one after it may not.
        let e = past("@3fffff 0000 0000");
        assert!(
            e.to_string()
                .starts_with("p.hex: line 1, column 14: word past the last word"),
            "{e}"
        );
        let b = parse_hex_words(Path::new("p.hex"), "@3fffff 0000").unwrap();
        assert_eq!(b.len(), 2 * MAX_PROGRAM_WORDS);
    }

    #[test]
    fn hex_memory_with_addresses() {
        let m = parse_memory_text(Path::new("m.hex"), "01 0x02\n@100 ff").unwrap();
        assert_eq!(m.len(), 4096);
        assert_eq!((m[0], m[1], m[0x100]), (1, 2, 0xff));
        assert_eq!(m.iter().filter(|&&b| b != 0).count(), 3);
        let e = parse_memory_text(Path::new("m.hex"), "00\n@1000").unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.hex: line 2, column 1: `@1000` is past the last address 0xfff"
        );
        let e = parse_memory_text(Path::new("m.hex"), "@fff 01 02").unwrap_err();
        assert!(
            e.to_string().contains("column 9: a byte past the last"),
            "{e}"
        );
    }

    #[test]
    fn bytes_and_their_errors() {
        assert_eq!(byte("a5"), Ok(0xa5));
        assert_eq!(byte("5"), Ok(5));
        assert_eq!(byte("f_f"), Ok(0xff));
        assert_eq!(byte("0x21"), Ok(0x21));
        assert_eq!(byte("0XfF"), Ok(0xff));
        assert!(byte("xz").unwrap_err().contains("x or z digit"));
        assert!(byte("1x").unwrap_err().contains("x or z digit"));
        assert!(byte("0x").unwrap_err().contains("x or z digit"));
        assert!(byte("0x1z").unwrap_err().contains("x or z digit"));
        assert!(byte("123").unwrap_err().contains("not a hex byte"));
        assert!(byte("0x123").unwrap_err().contains("not a hex byte"));
        assert!(byte("g1").unwrap_err().contains("not a hex byte"));
    }
}
