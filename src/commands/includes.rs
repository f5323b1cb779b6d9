//! The files an assembly source `.include`s, so that no output overwrites one. The program
//! has already been loaded; this assembles it once more with a loader that notes each file
//! it is asked for, which is what the assembler itself resolves (nested includes, includes
//! inside `.repeat`), and it is only done when the command writes files.

use gpu16::input::ProgramFormat;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// Every file `program` includes, directly or not, if it is assembly; none otherwise.
pub fn included_files(program: &Path) -> Vec<PathBuf> {
    if !matches!(ProgramFormat::of(program), Ok(ProgramFormat::Assembly)) {
        return Vec::new();
    }
    let Ok(source) = read(program) else {
        return Vec::new();
    };
    // Without the word there is no `.include` to find, and no second assembly is needed.
    let word = b"include";
    if !source
        .as_bytes()
        .windows(word.len())
        .any(|w| w.eq_ignore_ascii_case(word))
    {
        return Vec::new();
    }
    let seen = RefCell::new(Vec::new());
    let load = |p: &Path| {
        seen.borrow_mut().push(p.to_path_buf());
        read(p)
    };
    // Only the files matter here; loading reported any error already.
    let _ = gpu16_asm::assemble_with(&source, &program.display().to_string(), &load);
    let mut files = seen.into_inner();
    files.sort();
    files.dedup();
    files
}

/// A source read as the loader reads it, within its limit, so a file that changed since the
/// program was loaded cannot make this read without end.
fn read(path: &Path) -> Result<String, String> {
    gpu16::input::read_source(path).map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_includes_are_found_relative_to_their_includer() {
        let d = std::env::temp_dir().join(format!("gpu16-includes-{}", std::process::id()));
        std::fs::create_dir_all(d.join("lib")).unwrap();
        std::fs::write(
            d.join("main.s"),
            ".include \"lib/a.s\"\n.cf mask=1\n.if\n    nop\n",
        )
        .unwrap();
        std::fs::write(d.join("lib/a.s"), ".include \"b.s\"\n").unwrap();
        std::fs::write(d.join("lib/b.s"), ".equ X = 1\n").unwrap();
        let files = included_files(&d.join("main.s"));
        assert_eq!(files, [d.join("lib/a.s"), d.join("lib/b.s")]);
        assert!(included_files(&d.join("main.bin")).is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
