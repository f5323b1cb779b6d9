//! Tab completion of a debugger command line: command names, `info` subjects, the
//! program's labels (`break F:LABEL`) and source files (`break FILE:LINE`), and file names
//! after `source`. [`Completer::complete`] is what the terminal's line editor asks; it is a
//! plain function of the line, so tests call it directly.

use gpu16_asm::SourceMap;
use std::path::Path;

/// Every command's full name, as `help` lists them (aliases are not offered: a name
/// already typed in full is completed to itself).
pub(crate) const COMMANDS: &[&str] = &[
    "break",
    "continue",
    "core",
    "delete",
    "disasm",
    "display",
    "exit",
    "finish",
    "help",
    "info",
    "locks",
    "mem",
    "print",
    "quit",
    "regs",
    "restart",
    "reverse-continue",
    "reverse-finish",
    "reverse-step",
    "reverse-stepi",
    "run",
    "set",
    "source",
    "step",
    "stepi",
    "tasks",
    "undisplay",
    "until",
    "watch",
    "when",
    "where",
];

/// The subjects `info` takes.
pub(crate) const INFO_SUBJECTS: &[&str] = &[
    "breakpoints",
    "cores",
    "display",
    "locks",
    "tasks",
    "threads",
    "watchpoints",
];

/// The most candidates one completion offers (a directory of many files, a program of
/// many labels).
pub(crate) const MAX_CANDIDATES: usize = 1000;

/// The most directory entries read to complete one file name.
const MAX_ENTRIES: usize = 10_000;

/// What a session's command line can be completed with: its program's labels and source
/// files.
#[derive(Clone, Debug, Default)]
pub struct Completer {
    /// `F:LABEL` for every label of every instruction frame.
    labels: Vec<String>,
    /// The source files the program was assembled from, as the assembler named them.
    files: Vec<String>,
}

impl Completer {
    /// A completer for a program assembled with source map `map` (`None`: a program image,
    /// which has no labels or files).
    pub fn new(map: Option<&SourceMap>) -> Completer {
        let mut c = Completer::default();
        if let Some(map) = map {
            for (f, source) in map.frames.iter().enumerate() {
                for (name, slot) in &source.labels {
                    if *slot < 16 {
                        c.labels.push(format!("{f}:{name}"));
                    }
                }
                for span in std::iter::once(&source.span).chain(&source.slots) {
                    if !c.files.iter().any(|x| **x == *span.file) {
                        c.files.push(span.file.to_string());
                    }
                }
            }
        }
        c
    }

    /// The candidates for the word under the cursor of `line` (the cursor at byte `pos`),
    /// and the byte where that word starts (which each candidate replaces), sorted, at most
    /// `MAX_CANDIDATES`:
    /// - the first word: the command names it begins;
    /// - after `info`: the subjects;
    /// - after `break` (or `b`): `cycle`, the labels `F:LABEL` and the source files
    ///   `FILE:` (by their name as given and by their last component), and after a
    ///   location, `core` and `if`;
    /// - after `source`: the files and directories of the file system (a directory ends in
    ///   `/`).
    pub fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let mut pos = pos.min(line.len());
        while !line.is_char_boundary(pos) {
            pos -= 1;
        }
        let before = &line[..pos];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
        let word = &before[start..];
        let words: Vec<&str> = before[..start].split_whitespace().collect();
        let mut found: Vec<String> = match words.as_slice() {
            [] => starting(COMMANDS.iter().copied(), word),
            ["info" | "i"] => starting(INFO_SUBJECTS.iter().copied(), word),
            ["break" | "b"] => {
                let mut v = starting(["cycle"].into_iter(), word);
                v.extend(starting(self.labels.iter().map(String::as_str), word));
                for file in &self.files {
                    let base = Path::new(file)
                        .file_name()
                        .and_then(|b| b.to_str())
                        .unwrap_or(file);
                    for name in [file.as_str(), base] {
                        if name.starts_with(word) {
                            v.push(format!("{name}:"));
                        }
                    }
                }
                v
            }
            ["break" | "b", spec, ..] if *spec != "cycle" || words.len() > 2 => {
                let last = words.last().copied().unwrap_or("");
                if matches!(last, "if" | "core") {
                    Vec::new()
                } else {
                    starting(["core", "if"].into_iter(), word)
                }
            }
            ["source"] => files(word),
            _ => Vec::new(),
        };
        found.sort();
        found.dedup();
        found.truncate(MAX_CANDIDATES);
        (start, found)
    }
}

/// The names of `all` that begin with `word`.
fn starting<'a>(all: impl Iterator<Item = &'a str>, word: &str) -> Vec<String> {
    all.filter(|n| n.starts_with(word))
        .map(str::to_string)
        .collect()
}

/// The files and directories whose path begins with `word` (a directory with a `/` after
/// it), read from the directory `word` names (the current one if it names none).
fn files(word: &str) -> Vec<String> {
    let (dir, prefix) = match word.rfind('/') {
        Some(i) => (&word[..=i], &word[i + 1..]),
        None => ("", word),
    };
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() { "." } else { dir }) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.take(MAX_ENTRIES).flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        // Hidden files only when asked for.
        if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
            continue;
        }
        let slash = if entry.path().is_dir() { "/" } else { "" };
        found.push(format!("{dir}{name}{slash}"));
    }
    found
}
