//! `gpu16 debug`'s command history kept across sessions, in a file of one command a line:
//! where it is ([`path`]), reading it ([`load`]) and writing it ([`save`]), each bounded to
//! [`MAX_ENTRIES`] commands. `gpu16 debug` keeps it only at a terminal (not with `--json`,
//! nor with commands piped in), and a file that cannot be read or written never ends the
//! session.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most commands the file keeps (the latest).
pub const MAX_ENTRIES: usize = 1000;

/// The longest line kept (a longer one is no command: commands are at most 4096 bytes).
const MAX_LINE: usize = 4096;

/// The most bytes read of a history file.
const MAX_BYTES: u64 = (MAX_ENTRIES * (MAX_LINE + 1)) as u64;

/// The environment variable that names the history file, or (set and empty) turns history
/// off.
const ENV: &str = "GPU16_HISTORY";

/// Where the history is kept, given the environment `env`: `$GPU16_HISTORY` if it is set
/// (`None`, no history, if it is empty), else `$XDG_STATE_HOME/gpu16/debug_history` (an
/// absolute `XDG_STATE_HOME`), else `$HOME/.local/state/gpu16/debug_history`, else nowhere.
pub fn path_in(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    if let Some(p) = env(ENV) {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    let file = Path::new("gpu16").join("debug_history");
    if let Some(state) = env("XDG_STATE_HOME").map(PathBuf::from) {
        if state.is_absolute() {
            return Some(state.join(file));
        }
    }
    let home = env("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".local/state").join(file))
}

/// [`path_in`] the process's environment.
pub fn path() -> Option<PathBuf> {
    path_in(|k| std::env::var_os(k))
}

/// The commands of the history file at `path`, oldest first: at most the last
/// [`MAX_ENTRIES`], blank and over-long lines left out. A file that is missing or cannot be
/// read is an empty history (and the error, for a file that exists).
pub fn load(path: &Path) -> Result<Vec<String>, std::io::Error> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut file = std::io::BufReader::new(file);
    // Only the end of a file too large to have been written here is read.
    if len > MAX_BYTES {
        use std::io::Seek;
        file.seek(std::io::SeekFrom::Start(len - MAX_BYTES))?;
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<String> = text
        .lines()
        .skip(usize::from(len > MAX_BYTES))
        .filter(|l| !l.trim().is_empty() && l.len() <= MAX_LINE && !l.contains('\0'))
        .map(str::to_string)
        .collect();
    let extra = lines.len().saturating_sub(MAX_ENTRIES);
    lines.drain(..extra);
    Ok(lines)
}

/// Write `entries` (oldest first; only the last [`MAX_ENTRIES`]) to the history file at
/// `path`, creating its directory: into a file beside it, then renamed over it, so a
/// session that ends mid-write leaves the old history whole.
pub fn save(path: &Path, entries: &[String]) -> Result<(), std::io::Error> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
    let start = entries.len().saturating_sub(MAX_ENTRIES);
    let mut text = String::new();
    for e in &entries[start..] {
        if !e.contains('\n') && !e.trim().is_empty() {
            text.push_str(e);
            text.push('\n');
        }
    }
    let written = std::fs::File::create(&temporary)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_lives_in_the_state_directory_and_is_bounded() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            path_in(env(&[("HOME", "/home/u")])),
            Some(PathBuf::from("/home/u/.local/state/gpu16/debug_history"))
        );
        assert_eq!(
            path_in(env(&[("HOME", "/home/u"), ("XDG_STATE_HOME", "/st")])),
            Some(PathBuf::from("/st/gpu16/debug_history"))
        );
        // A relative XDG_STATE_HOME is ignored, as the XDG rules say.
        assert_eq!(
            path_in(env(&[("HOME", "/home/u"), ("XDG_STATE_HOME", "st")])),
            Some(PathBuf::from("/home/u/.local/state/gpu16/debug_history"))
        );
        assert_eq!(
            path_in(env(&[("HOME", "/home/u"), ("GPU16_HISTORY", "/h/f")])),
            Some(PathBuf::from("/h/f"))
        );
        assert_eq!(
            path_in(env(&[("HOME", "/home/u"), ("GPU16_HISTORY", "")])),
            None
        );
        assert_eq!(path_in(env(&[])), None);

        let dir = std::env::temp_dir().join(format!("gpu16-history-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let file = dir.join("state/gpu16/debug_history");
        assert_eq!(load(&file).unwrap(), Vec::<String>::new());
        let entries: Vec<String> = (0..1500).map(|i| format!("step {i}")).collect();
        save(&file, &entries).unwrap();
        let back = load(&file).unwrap();
        assert_eq!(back.len(), MAX_ENTRIES);
        assert_eq!(back[0], "step 500");
        assert_eq!(back[999], "step 1499");
        // Blank and over-long lines in the file are left out.
        std::fs::write(
            &file,
            format!("break 1:2\n\n{}\ncontinue\n", "x".repeat(5000)),
        )
        .unwrap();
        assert_eq!(
            load(&file).unwrap(),
            vec!["break 1:2".to_string(), "continue".to_string()]
        );
        // A file that cannot be written is an error to warn about, not a panic.
        std::fs::write(dir.join("plain"), "").unwrap();
        assert!(save(&dir.join("plain/debug_history"), &entries).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
