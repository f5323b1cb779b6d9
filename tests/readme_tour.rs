//! The README's tour is real output: every `$ ` command in its transcripts runs here, in a
//! scratch directory holding the examples and the few inputs the tour names, and what it
//! prints must be what the README shows. A transcript goes stale silently when a message or
//! a table changes; this is where that fails instead.
//!
//! The README's conventions, which the comparison follows:
//! - a line `...` stands for any number of lines (the README shortens long tables);
//! - `(gpu16) CMD` lines are debugger commands: they go to the command's stdin, and the
//!   debugger (reading a pipe, not a terminal) prints no prompt;
//! - `$ cat NAME` of a file that is neither in the repository nor made by an earlier
//!   command shows a file the reader is to write: the test writes what it shows (only for
//!   a plain relative NAME, so it writes nowhere but its scratch directory);
//! - stdout and stderr show together, as a terminal shows them;
//! - a `wall ...` line and a fuzz summary's `(N s, M programs/s)` carry the time of the
//!   machine that ran them and match any time.
//!
//! A few commands are listed in [`NOT_RUN`] with the reason each is not run here; the test
//! fails if one of them leaves the README, so that the list cannot hide a new transcript.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

/// Commands of the tour this test does not run, and why.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "gpu16 fuzz --count 1000000 --shard 11/100 --quiet",
        "10,000 compiled programs: minutes; `gpu16 fuzz` has its own tests",
    ),
    (
        "gpu16 fuzz --count 4000 --seed 910000000 --dialect mcst",
        "4,000 compiled programs: about a minute; the MCST fuzz has its own tests",
    ),
    (
        "cargo run --release --example observe",
        "a second cargo build inside the test run; tests/examples.rs runs the example",
    ),
    (
        "benches/steady.sh /work/old . auto benches/classes/reduction.s benches/classes/histogram.s",
        "needs a checkout of 6d9c98e and valgrind; a measurement, not a behaviour",
    ),
];

/// The inputs the tour names that are not in the repository, as the README describes them.
fn write_inputs(dir: &Path) {
    // "notes.dat": a text file that is not $readmemh text.
    std::fs::write(dir.join("notes.dat"), "hello, these are my notes\n").unwrap();
    // "tb/bank0.hex": an RTL's dump in which byte 3 of bank 0 reads 0x33 where
    // examples/mcst_bank0.s leaves core 3's id (each core k stores k at byte k).
    std::fs::create_dir_all(dir.join("tb")).unwrap();
    std::fs::write(
        dir.join("tb/bank0.hex"),
        "00 01 02 33 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f\n",
    )
    .unwrap();
}

/// One command of a transcript and what the README shows after it.
#[derive(Debug)]
struct Shown {
    /// README line number of the `$ ` line.
    line: usize,
    command: String,
    stdin: String,
    output: Vec<String>,
}

/// The transcripts of `text`: each `$ ` line in a fenced block, with the lines after it up
/// to the next `$ ` line or the end of the block (trailing blank lines dropped).
fn transcripts(text: &str) -> Vec<Shown> {
    let mut all = Vec::new();
    let mut in_block = false;
    let mut current: Option<Shown> = None;
    let close = |c: Option<Shown>, all: &mut Vec<Shown>| {
        if let Some(mut c) = c {
            while c.output.last().is_some_and(|l| l.trim().is_empty()) {
                c.output.pop();
            }
            all.push(c);
        }
    };
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            close(current.take(), &mut all);
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            close(current.take(), &mut all);
            current = Some(Shown {
                line: i + 1,
                command: command.to_string(),
                stdin: String::new(),
                output: Vec::new(),
            });
        } else if let Some(c) = current.as_mut() {
            match line.strip_prefix("(gpu16) ") {
                Some(cmd) => {
                    c.stdin.push_str(cmd);
                    c.stdin.push('\n');
                }
                None => c.output.push(line.to_string()),
            }
        }
    }
    close(current, &mut all);
    all
}

/// Whether `got` is what `shown` shows, `...` matching any run of lines.
fn matches(shown: &[String], got: &[&str]) -> bool {
    match shown.split_first() {
        None => got.is_empty(),
        Some((s, rest)) if s == "..." => (0..=got.len()).any(|k| matches(rest, &got[k..])),
        Some((s, rest)) => got
            .split_first()
            .is_some_and(|(g, more)| same_line(s, g) && matches(rest, more)),
    }
}

/// One shown line against one printed line: equal, or both a time of the machine that ran.
fn same_line(shown: &str, got: &str) -> bool {
    if shown == got {
        return true;
    }
    if shown.starts_with("wall ") && got.starts_with("wall ") {
        return true;
    }
    // A fuzz summary: the same words before its parenthesised time and rate.
    let timed = |l: &str| {
        l.rfind(" (")
            .filter(|_| l.ends_with(" programs/s)"))
            .map(|at| l[..at].to_string())
    };
    matches!((timed(shown), timed(got)), (Some(a), Some(b)) if a == b)
}

/// Whether `name` is a relative path of plain components (no `..`, no root, no spaces): a
/// file the test may write stays inside its scratch directory.
fn inside(name: &str) -> bool {
    use std::path::Component;
    !name.is_empty()
        && !name.contains(char::is_whitespace)
        && Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
}

/// Copy the directory `from` into `to`, files only one level deep (the examples are flat).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The documents whose transcripts run: the README and the guides in docs/. (The Python
/// package's README runs Python scripts; its own tests cover them.)
fn documents(root: &Path) -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    docs.insert(0, "README.md".to_string());
    docs
}

/// Run `shown.command` in `dir` through `sh`, stdout and stderr together, with the
/// debugger commands on stdin; the lines printed.
fn run_shown(shown: &Shown, dir: &Path, path: &str) -> String {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {}\n}} 2>&1", shown.command))
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("COLUMNS")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(shown.stdin.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

#[test]
fn every_transcript_prints_what_its_document_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = Path::new(env!("CARGO_BIN_EXE_gpu16")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let mut not_run_seen = vec![false; NOT_RUN.len()];
    let mut ran = 0;
    for doc in documents(root) {
        let shown = transcripts(&std::fs::read_to_string(root.join(&doc)).unwrap());
        if shown.is_empty() {
            continue;
        }
        // Each document in a directory of its own: one's outputs are not another's inputs.
        let dir = common::scratch("readme_tour", &doc.replace('/', "-"));
        copy_dir(&root.join("examples"), &dir.join("examples"));
        write_inputs(&dir);
        for s in &shown {
            if let Some(i) = NOT_RUN.iter().position(|(c, _)| *c == s.command) {
                not_run_seen[i] = true;
                continue;
            }
            if let Some(name) = s.command.strip_prefix("cat ").filter(|n| inside(n)) {
                let file = dir.join(name);
                if !file.exists() {
                    std::fs::write(&file, s.output.join("\n") + "\n").unwrap();
                    continue;
                }
            }
            let text = run_shown(s, &dir, &path);
            let got: Vec<&str> = text.lines().collect();
            ran += 1;
            if !matches(&s.output, &got) {
                failures.push(format!(
                    "{doc}:{}: `$ {}`\n--- the document shows:\n{}\n--- it prints:\n{}\n",
                    s.line,
                    s.command,
                    s.output.join("\n"),
                    got.join("\n")
                ));
            }
        }
    }
    for ((command, why), seen) in NOT_RUN.iter().zip(not_run_seen) {
        assert!(
            seen,
            "NOT_RUN lists `{command}` ({why}), which no document shows now: drop it"
        );
    }
    // The README alone has about twenty: fewer means the parser lost some.
    assert!(ran >= 15, "only {ran} transcripts ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_matcher_takes_elisions_and_times_and_nothing_else() {
    let v = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(matches(&v(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(matches(&v(&["a", "...", "d"]), &["a", "d"]));
    assert!(!matches(&v(&["a", "...", "d"]), &["a", "b", "c"]));
    assert!(!matches(&v(&["a", "b"]), &["a", "c"]));
    assert!(!matches(&v(&["a"]), &["a", "b"]));
    assert!(matches(
        &v(&["wall 0.176 ms, 26.8 M emulated instructions/s"]),
        &["wall 1.2 ms, 3.1 M emulated instructions/s"]
    ));
    assert!(matches(
        &v(&["10 programs, no divergence between interp and jit (5.2 s, 190 programs/s)"]),
        &["10 programs, no divergence between interp and jit (9.0 s, 85 programs/s)"]
    ));
    assert!(!matches(
        &v(&["10 programs, no divergence between interp and jit (5.2 s, 190 programs/s)"]),
        &["11 programs, no divergence between interp and jit (5.2 s, 190 programs/s)"]
    ));
    // A file the test writes for `$ cat NAME` stays in its directory.
    assert!(inside("bad.s") && inside("tb/bank0.hex"));
    assert!(!inside("/etc/passwd") && !inside("../x") && !inside("a/../../x"));
    assert!(!inside("a b") && !inside(""));
    let t = transcripts("x\n```\n$ a\nout\n\n$ b\n(gpu16) go\nsaid\n```\n$ not\n");
    assert_eq!(t.len(), 2);
    assert_eq!((t[0].command.as_str(), t[0].output.len()), ("a", 1));
    assert_eq!(
        (t[1].stdin.as_str(), t[1].output[0].as_str()),
        ("go\n", "said")
    );
}
