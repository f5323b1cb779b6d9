//! The files a command reads and writes, checked before it does any work: no output may name
//! an input or another output (a usage error, status 2, naming both flags), and every output
//! must be writable ([`OutputFile::prepare`]), so a long run never ends in a file it cannot
//! write and a mistyped flag never overwrites the program.

use super::includes::included_files;
use crate::run_output::file::{is_stdout, OutputError, OutputFile};
use crate::run_output::file_id::FileId;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file named on the command line, and the flag or argument that named it.
#[derive(Clone, Debug)]
pub struct Named {
    /// `--dump-mem`, `PROGRAM`, ...
    pub flag: String,
    pub path: PathBuf,
}

impl Named {
    pub fn new(flag: impl Into<String>, path: &Path) -> Named {
        Named {
            flag: flag.into(),
            path: path.to_path_buf(),
        }
    }

    /// The flag and the path, as a message shows them: `--mem nw.mem`.
    pub fn shown(&self) -> String {
        format!("{} {}", self.flag, gpu16::shown::path(&self.path))
    }
}

/// An error message if an output names the same file as an input or as another output.
pub fn check_distinct(inputs: &[Named], outputs: &[Named]) -> Result<(), String> {
    let ids: Vec<FileId> = outputs.iter().map(|o| FileId::of_output(&o.path)).collect();
    for input in inputs {
        let id = FileId::of_input(&input.path);
        if let Some(i) = ids.iter().position(|o| o.same(&id)) {
            return Err(format!(
                "{} and {} name the same file: an output must not overwrite an input",
                outputs[i].shown(),
                input.shown()
            ));
        }
    }
    let stdout: Vec<&Named> = outputs.iter().filter(|o| is_stdout(&o.path)).collect();
    if let [a, b, ..] = stdout[..] {
        return Err(format!(
            "{} and {} both write stdout: give one of them a file",
            a.shown(),
            b.shown()
        ));
    }
    for (i, a) in ids.iter().enumerate() {
        if let Some(j) = ids[i + 1..].iter().position(|b| a.same(b)) {
            return Err(format!(
                "{} and {} name the same file: give each output its own",
                outputs[i].shown(),
                outputs[i + 1 + j].shown()
            ));
        }
    }
    Ok(())
}

/// An error message if two of `inputs` read one stream, which gives its bytes only once:
/// both `-`, or both the file stdin reads however named (`-`, `/dev/stdin`, the file it was
/// redirected from), or both one pipe, FIFO or socket ([`FileId::same_stream`]), so an
/// input never silently gets what another one used up, or nothing.
pub fn one_reader_per_stream(inputs: &[Named]) -> Result<(), String> {
    let stdin = FileId::of_input(Path::new("-"));
    let ids: Vec<FileId> = inputs.iter().map(|i| FileId::of_input(&i.path)).collect();
    for (i, a) in inputs.iter().enumerate() {
        for (j, b) in inputs.iter().enumerate().skip(i + 1) {
            let (dash_a, dash_b) = (is_dash(&a.path), is_dash(&b.path));
            if dash_a && dash_b {
                return Err(format!(
                    "{} and {} both read stdin: at most one input may be `-`",
                    a.shown(),
                    b.shown()
                ));
            }
            let stdin_a = dash_a || ids[i].is_stdin(&stdin);
            let stdin_b = dash_b || ids[j].is_stdin(&stdin);
            if stdin_a && stdin_b {
                return Err(format!(
                    "{} and {} both read stdin, which can be read only once: at most one \
                     input may be `-` or another name of the file stdin is",
                    a.shown(),
                    b.shown()
                ));
            }
            if ids[i].same_stream(&ids[j], &stdin) {
                return Err(format!(
                    "{} and {} name one pipe or FIFO, which gives its bytes once: at most \
                     one input may read it",
                    a.shown(),
                    b.shown()
                ));
            }
        }
    }
    Ok(())
}

/// The first of `inputs` that reads stdin, by name (`-`) or as the file stdin reads
/// ([`FileId::is_stdin`]), if one does.
pub fn stdin_reader(inputs: &[Named]) -> Option<&Named> {
    let stdin = FileId::of_input(Path::new("-"));
    inputs
        .iter()
        .find(|i| is_dash(&i.path) || FileId::of_input(&i.path).is_stdin(&stdin))
}

/// Whether an input could be one stream with another input: `-`, the file stdin reads, or
/// a pipe, FIFO or socket. Only then do the files an assembly source includes need to be
/// looked at ([`with_included`]).
fn may_be_a_stream(path: &Path) -> bool {
    if is_dash(path) {
        return true;
    }
    let id = FileId::of_input(path);
    id.is_stream() || id.is_stdin(&FileId::of_input(Path::new("-")))
}

/// `inputs` (the program first), with the files the program includes if it is assembly
/// and another input could be one stream with one of them, or stdin could when the
/// command reads it itself (`stdin_used`: a debugger's commands), so that
/// [`one_reader_per_stream`] and [`stdin_reader`] see an `.include "/dev/stdin"` beside
/// `--mem -`. The source is assembled once more only then, and only if it has the word.
pub fn with_included(inputs: Vec<Named>, stdin_used: bool) -> Vec<Named> {
    let Some((program, others)) = inputs.split_first() else {
        return inputs;
    };
    // Stdin as a file some name can give: a pipe, a FIFO or a regular file, not a device.
    let stdin = stdin_used && {
        let id = FileId::of_input(Path::new("-"));
        id.is_stdin(&id)
    };
    if !stdin && !others.iter().any(|o| may_be_a_stream(&o.path)) {
        return inputs;
    }
    let mut all = inputs.clone();
    for file in included_files(&program.path) {
        all.push(Named::new(".include", &file));
    }
    all
}

fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The files of an assembly source (`SOURCE`, and each file it includes) as inputs.
pub fn source_inputs(flag: &str, source: &Path) -> Vec<Named> {
    let mut inputs = vec![Named::new(flag, source)];
    for file in included_files(source) {
        inputs.push(Named::new(".include", &file));
    }
    inputs
}

/// Write files that belong together (a program and its memory image): each is staged in
/// full first, and only when all are, put in place, so a failure leaves the old pair.
pub fn write_together(files: &[(&OutputFile, &[u8])]) -> Result<(), OutputError> {
    let staged = files
        .iter()
        .map(|(file, bytes)| file.stage(|w| w.write_all(bytes)))
        .collect::<Result<Vec<_>, _>>()?;
    staged.into_iter().try_for_each(|s| s.commit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_is_read_by_one_input_at_most() {
        let (p, m) = (
            Named::new("PROGRAM", Path::new("-")),
            Named::new("--mem", Path::new("-")),
        );
        let file = Named::new("--mem", Path::new("m.hex"));
        assert_eq!(one_reader_per_stream(&[p.clone(), file]), Ok(()));
        assert_eq!(
            one_reader_per_stream(&[p, m]),
            Err("PROGRAM - and --mem - both read stdin: at most one input may be `-`".into())
        );
    }

    #[test]
    fn collisions_name_both_flags() {
        let d = std::env::temp_dir().join(format!("gpu16-outputs-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("p.s");
        let n = |flag: &str, name: &str| Named::new(flag, &d.join(name));
        let e = check_distinct(&[n("PROGRAM", "p.s")], &[n("--dump-mem", "./p.s")]).unwrap_err();
        assert!(
            e.starts_with("--dump-mem ") && e.contains(&format!("and PROGRAM {}", p.display())),
            "{e}"
        );
        let e = check_distinct(
            &[],
            &[n("--trace", "f"), n("--mem-png", "g"), n("--vcd", "f")],
        )
        .unwrap_err();
        assert!(
            e.starts_with("--trace ") && e.contains(" and --vcd "),
            "{e}"
        );
        assert!(check_distinct(&[n("PROGRAM", "p.s")], &[n("--vcd", "f")]).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_pair_is_put_in_place_only_when_both_are_written() {
        let d = std::env::temp_dir().join(format!("gpu16-pair-{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        let (a, b) = (d.join("a.bin"), d.join("sub/b.bin"));
        std::fs::write(&a, b"old a").unwrap();
        let fa = OutputFile::prepare(&a).unwrap();
        let fb = OutputFile::prepare(&b).unwrap();
        write_together(&[(&fa, b"new a"), (&fb, b"new b")]).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"new a");
        assert_eq!(std::fs::read(&b).unwrap(), b"new b");
        // The second cannot be staged any more (its directory is gone): the first keeps its
        // old bytes.
        std::fs::remove_dir_all(d.join("sub")).unwrap();
        assert!(write_together(&[(&fa, b"newer a"), (&fb, b"x")]).is_err());
        assert_eq!(std::fs::read(&a).unwrap(), b"new a");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
