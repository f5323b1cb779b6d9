//! Expected final states, as an RTL simulation dumps them, for `run --expect-mem` and
//! `run --expect-regs` (the rules are `docs/expect.md`). This module owns reading them; the
//! comparison with a run is the binary's `run_output::expect`.
//!
//! A shared-memory dump is one of:
//! - one file, read by the rule every shared-memory image follows ([`super::memory`]): a
//!   raw file of at most 4096 bytes (byte i is address i; zero past its end), or a
//!   `$readmemh`/`$writememh` text (extension `.hex`, `.mem`, `.vmem` or `.txt`, or text
//!   content under another name): hex bytes, any number a line, `@addr` (hex, in bytes,
//!   below `@1000`) to move, `//` and `/* */` comments; addresses it does not give are
//!   zero; an `x`/`z` digit is an error;
//! - 16 bank files, one byte a line as a testbench writes each bank: a directory holding
//!   exactly those 16 files, or a pattern with `*`/`?` in its file name. The files are put
//!   in natural order of their names (digit runs compared as numbers: `bank2` before
//!   `bank10`) and the k-th is bank k, addresses k*256..k*256+255; each must give every one
//!   of its 256 rows exactly once.
//!
//! A register dump is 16 lines of 16 hex bytes: line k is core k's r0..r15, the bytes
//! separated by spaces, tabs or commas; blank lines and comments are skipped.
//!
//! Every error names the file and, in a text, the line (and column).

use super::hex::{blank_block_comments, byte, parse_bytes};
use super::limits::{self, read_text};
use super::memory::{MemoryFormat, MemoryImage};
use super::{err, InputError};
use gpu16_machine::MEMORY_BYTES;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

/// Rows of one bank, and the banks of shared memory.
const ROWS: usize = 256;
const BANKS: usize = 16;
/// The most directory entries a bank dump's directory (or pattern's directory) may have;
/// past it the listing stops with an error instead of reading on.
pub(crate) const MAX_DIR_ENTRIES: usize = 4096;

/// How a memory dump was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DumpFormat {
    /// Raw bytes.
    Raw,
    /// One `$readmemh` text.
    Hex,
    /// 16 bank files of 256 rows.
    Banks,
}

impl DumpFormat {
    /// The name reports use: `raw`, `hex` or `banks`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            DumpFormat::Raw => "raw",
            DumpFormat::Hex => "hex",
            DumpFormat::Banks => "banks",
        }
    }
}

/// An expected shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryDump {
    /// The 4096 expected bytes, address order.
    pub bytes: Vec<u8>,
    /// How it was given ([`MemoryDump::format`] names it).
    pub(crate) format: DumpFormat,
    /// The files read: the one file, or the 16 bank files in bank order.
    pub files: Vec<PathBuf>,
}

impl MemoryDump {
    /// How it was given, as reports name it: `raw`, `hex` or `banks`.
    pub fn format(&self) -> &'static str {
        self.format.name()
    }
}

/// Expected registers: `[core][reg]`.
pub(crate) type RegisterDump = [[u8; 16]; 16];

impl MemoryDump {
    /// Read an expected shared memory from `path`: a directory or a pattern of 16 bank files,
    /// or one file read by the shared-memory images' rule ([`super::memory`]): `format` if
    /// given, else its extension, else its content; `flag` names the option that gives the
    /// format, for a file its content cannot decide.
    pub fn load(
        path: &Path,
        format: Option<MemoryFormat>,
        flag: &str,
    ) -> Result<MemoryDump, InputError> {
        if path.is_dir() || (is_pattern(path) && !path.exists()) {
            let files = bank_files(path)?;
            let mut bytes = Vec::with_capacity(MEMORY_BYTES);
            for (k, file) in files.iter().enumerate() {
                let text = read_text(file, limits::BANK_HEX)?;
                let bank = parse_bank(file, &text)
                    .map_err(|e| err(&e.path, format!("bank {k}: {}", e.message)))?;
                bytes.extend_from_slice(&bank);
            }
            return Ok(MemoryDump {
                bytes,
                format: DumpFormat::Banks,
                files,
            });
        }
        let image = MemoryImage::load(path, format, flag)?;
        Ok(MemoryDump {
            bytes: image.bytes,
            format: match image.format {
                MemoryFormat::Hex => DumpFormat::Hex,
                MemoryFormat::Raw => DumpFormat::Raw,
            },
            files: vec![path.to_path_buf()],
        })
    }
}

/// Whether the file name of `path` has a wildcard (`*` or `?`).
fn is_pattern(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.contains(['*', '?']))
}

/// The 16 bank files of a directory (its regular files whose names do not start with `.`)
/// or of a pattern (the files its name matches), in natural order.
fn bank_files(path: &Path) -> Result<Vec<PathBuf>, InputError> {
    let (dir, pattern) = if path.is_dir() {
        (path.to_path_buf(), None)
    } else {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if dir.to_str().is_some_and(|d| d.contains(['*', '?'])) {
            return Err(err(
                path,
                "a bank-dump pattern may have wildcards (`*`, `?`) only in its file name",
            ));
        }
        (dir, Some(name.to_string()))
    };
    let cannot = |e: std::io::Error| err(&dir, format!("cannot list the bank files: {e}"));
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for (i, entry) in std::fs::read_dir(&dir).map_err(cannot)?.enumerate() {
        if i >= MAX_DIR_ENTRIES {
            return Err(err(
                &dir,
                format!("more than {MAX_DIR_ENTRIES} entries: not a bank-dump directory"),
            ));
        }
        let entry = entry.map_err(cannot)?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let wanted = match &pattern {
            Some(p) => matches(p.as_bytes(), name.as_bytes()),
            None => !name.starts_with('.'),
        };
        // Following links, as opening the file will.
        if wanted && entry.path().is_file() {
            let file = match &pattern {
                Some(_) => path.with_file_name(&name),
                None => path.join(&name),
            };
            files.push((name, file));
        }
    }
    files.sort_by(|a, b| natural(&a.0, &b.0));
    if files.len() != BANKS {
        let names: Vec<&str> = files.iter().take(20).map(|f| f.0.as_str()).collect();
        let more = if files.len() > names.len() {
            ", ..."
        } else {
            ""
        };
        let found = match files.len() {
            0 => "none".to_string(),
            n => format!("{n} ({}{more})", names.join(", ")),
        };
        let of = match pattern {
            Some(_) => "match the pattern",
            None => "are in the directory",
        };
        return Err(err(
            path,
            format!(
                "a bank dump needs exactly 16 bank files (bank k holds addresses \
                 k*256..k*256+255, one byte a line), but {found} {of}"
            ),
        ));
    }
    Ok(files.into_iter().map(|f| f.1).collect())
}

/// Whether `name` matches the glob `pattern`: `*` any run of characters, `?` any one byte.
fn matches(pattern: &[u8], name: &[u8]) -> bool {
    // The classic two-pointer match with one backtrack point: linear in practice, and
    // never worse than |pattern| * |name|.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// Natural order of file names: runs of digits compare as numbers (`b2` < `b10`), the rest
/// byte by byte; names equal that way (`b1`, `b01`) fall back to plain order.
pub(crate) fn natural(a: &str, b: &str) -> Ordering {
    fn runs(s: &str) -> impl Iterator<Item = (bool, &str)> {
        let mut rest = s;
        std::iter::from_fn(move || {
            let first = rest.bytes().next()?;
            let digit = first.is_ascii_digit();
            let len = rest
                .bytes()
                .position(|c| c.is_ascii_digit() != digit)
                .unwrap_or(rest.len());
            let (run, tail) = rest.split_at(len);
            rest = tail;
            Some((digit, run))
        })
    }
    let number = |r: &str| {
        let r = r.trim_start_matches('0');
        (r.len(), r.to_string())
    };
    let mut x = runs(a);
    let mut y = runs(b);
    loop {
        let o = match (x.next(), y.next()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((true, r)), Some((true, s))) => number(r).cmp(&number(s)),
            (Some((_, r)), Some((_, s))) => r.cmp(s),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
}

/// One bank file: each of its 256 rows given exactly once (in order, or placed by `@row`).
pub(crate) fn parse_bank(path: &Path, text: &str) -> Result<[u8; ROWS], InputError> {
    let given = parse_bytes(path, text, ROWS, "row")?;
    if let Some(missing) = given.iter().position(Option::is_none) {
        let n = given.iter().filter(|b| b.is_some()).count();
        return Err(err(
            path,
            format!(
                "{n} values: a bank file must give each of its 256 rows once, one byte a \
                 line (row {missing:#04x} is missing)"
            ),
        ));
    }
    let mut bank = [0u8; ROWS];
    for (row, b) in bank.iter_mut().zip(&given) {
        *row = b.map_or(0, |(v, _)| v);
    }
    Ok(bank)
}

/// Read expected registers from `path` (`parse_registers`).
pub fn load_register_dump(path: &Path) -> Result<RegisterDump, InputError> {
    parse_registers(path, &read_text(path, limits::REGISTER_DUMP)?)
}

/// 16 lines of 16 hex bytes: line k is core k's r0..r15. Bytes are separated by spaces, tabs
/// or commas; blank lines, `//`, `#`, `;` and `/* */` comments are skipped.
pub(crate) fn parse_registers(path: &Path, text: &str) -> Result<RegisterDump, InputError> {
    let text = blank_block_comments(path, text)?;
    let mut regs = [[0u8; 16]; 16];
    let mut core = 0usize;
    for (ln, line) in text.lines().enumerate() {
        let line_no = ln + 1;
        let code = ["//", "#", ";"]
            .iter()
            .filter_map(|c| line.find(c))
            .min()
            .map_or(line, |i| &line[..i]);
        let base = code.as_ptr() as usize;
        let toks: Vec<(usize, &str)> = code
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .map(|t| (t.as_ptr() as usize - base + 1, t))
            .collect();
        if toks.is_empty() {
            continue;
        }
        if core == 16 {
            return Err(err(
                path,
                format!("line {line_no}: a 17th line of registers (16 lines, one a core)"),
            ));
        }
        if toks.len() != 16 {
            return Err(err(
                path,
                format!(
                    "line {line_no}: {} values: each line gives one core's r0..r15, 16 hex \
                     bytes (this is core {core})",
                    toks.len()
                ),
            ));
        }
        for (r, (col, tok)) in toks.into_iter().enumerate() {
            regs[core][r] =
                byte(tok).map_err(|m| err(path, format!("line {line_no}, column {col}: {m}")))?;
        }
        core += 1;
    }
    if core != 16 {
        return Err(err(
            path,
            format!("{core} lines of registers: a register dump has 16, one a core (line k is core k's r0..r15)"),
        ));
    }
    Ok(regs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::parse_memory_text;

    #[test]
    fn natural_order_compares_numbers_as_numbers() {
        let mut names = vec![
            "bank10.hex",
            "bank2.hex",
            "bank1.hex",
            "bank01.hex",
            "a.hex",
        ];
        names.sort_by(|a, b| natural(a, b));
        assert_eq!(
            names,
            [
                "a.hex",
                "bank01.hex",
                "bank1.hex",
                "bank2.hex",
                "bank10.hex"
            ]
        );
    }

    #[test]
    fn patterns_match_names() {
        let m = |p: &str, n: &str| matches(p.as_bytes(), n.as_bytes());
        assert!(m("bank*.hex", "bank12.hex"));
        assert!(m("b?.mem", "b3.mem"));
        assert!(!m("b?.mem", "b13.mem"));
        assert!(m("*", "x"));
        assert!(!m("bank*.hex", "bank1.mem"));
        assert!(m("*a*b", "xaxxab"));
    }

    #[test]
    fn memory_text_with_addresses_and_comments() {
        let p = Path::new("m.hex");
        let m = parse_memory_text(p, "// dump\n01 02\n\n@ff0 /* row */ aa\n@0fff bb").unwrap();
        assert_eq!(m.len(), 4096);
        assert_eq!(
            (m[0], m[1], m[2], m[0xff0], m[0xfff]),
            (1, 2, 0, 0xaa, 0xbb)
        );
        let e = parse_memory_text(p, "00\n@fff 1 2").unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.hex: line 2, column 8: a byte past the last address 0xfff"
        );
        let e = parse_memory_text(p, "@1000").unwrap_err();
        assert!(e.to_string().contains("past the last address 0xfff"), "{e}");
        let e = parse_memory_text(p, "@g").unwrap_err();
        assert!(e.to_string().contains("not an address"), "{e}");
    }

    #[test]
    fn a_bank_gives_each_row_once() {
        let p = Path::new("b.hex");
        let full: String = (0..256).map(|i| format!("{i:02x}\n")).collect();
        let bank = parse_bank(p, &full).unwrap();
        assert_eq!(bank[0x7f], 0x7f);
        let e = parse_bank(p, &full[3..]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.hex: 255 values: a bank file must give each of its 256 rows once, one byte a \
             line (row 0xff is missing)"
        );
        let e = parse_bank(p, &format!("{full}00\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.hex: line 257, column 1: a byte past the last row 0xff"
        );
        let e = parse_bank(p, &format!("{full}@5 00\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.hex: line 257, column 4: row 0x05 is given twice (first on line 6)"
        );
    }

    #[test]
    fn registers_take_spaces_tabs_and_commas() {
        let p = Path::new("r.txt");
        let line = |k: u8| {
            (0..16u8)
                .map(|r| format!("{:02x}", k * 16 + r))
                .collect::<Vec<_>>()
        };
        let mut text = String::from("// core r0..r15\n\n");
        for k in 0..16u8 {
            let sep = [" ", "\t", ", ", ","][usize::from(k % 4)];
            text += &line(k).join(sep);
            text += "\n";
        }
        let regs = parse_registers(p, &text).unwrap();
        assert_eq!(regs[3][4], 0x34);
        assert_eq!(regs[15][15], 0xff);
        let e = parse_registers(p, &text.replacen("00 01", "00 0z", 1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "r.txt: line 3, column 4: `0z` has an x or z digit: a byte must be a known value"
        );
        let e = parse_registers(p, &text.replacen("00 01 ", "", 1)).unwrap_err();
        assert!(e.to_string().starts_with("r.txt: line 3: 14 values"), "{e}");
        let e = parse_registers(p, "00").unwrap_err();
        assert!(e.to_string().contains("line 1: 1 values"), "{e}");
        let short: String = text.lines().take(10).map(|l| format!("{l}\n")).collect();
        let e = parse_registers(p, &short).unwrap_err();
        assert!(
            e.to_string().starts_with("r.txt: 8 lines of registers"),
            "{e}"
        );
        let e = parse_registers(p, &format!("{text}00\n")).unwrap_err();
        assert!(
            e.to_string().starts_with("r.txt: line 19: a 17th line"),
            "{e}"
        );
    }
}
