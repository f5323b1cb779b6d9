//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the fuzz targets'
//! bodies (`gpu16::fuzz::targets`), so CI, which has only stable Rust and no cargo-fuzz,
//! still holds every target to every input found so far: each crash a fuzzer finds becomes
//! a corpus file, and this test its regression test. See `fuzz/README.md`.
//!
//! Each file runs on a thread named after it, so a panic, or a stack overflow (which aborts
//! the process), names the file on stderr; a panic also fails the test with the file's name.

use std::path::{Path, PathBuf};

/// A target's name and its body.
type Target = (&'static str, fn(&[u8]));

const TARGETS: [Target; 3] = [
    ("image", gpu16::fuzz::targets::image),
    ("assembly", gpu16::fuzz::targets::assembly),
    ("diff", gpu16::fuzz::targets::diff),
];

/// Every file of `fuzz/corpus/<target>/`, in name order; none if the directory is missing.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("the corpus directory lists").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Run `body` on every corpus file of `target`; the files that panicked, with the message.
fn replay(target: &str, body: fn(&[u8])) -> Vec<String> {
    let mut failed = Vec::new();
    for file in corpus(target) {
        let data = std::fs::read(&file).expect("a corpus file reads");
        let name = format!(
            "fuzz/corpus/{target}/{}",
            file.file_name().unwrap().to_string_lossy()
        );
        let ran = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || body(&data))
            .expect("a thread starts")
            .join();
        if let Err(payload) = ran {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            failed.push(format!("{name}: {message}"));
        }
    }
    failed
}

#[test]
fn every_corpus_file_passes_its_target() {
    let failed: Vec<String> = TARGETS
        .iter()
        .flat_map(|&(target, body)| replay(target, body))
        .collect();
    assert!(
        failed.is_empty(),
        "corpus files that fail:\n{}",
        failed.join("\n")
    );
}

#[test]
fn the_image_and_diff_corpora_are_there() {
    // An empty directory would make the replay pass without testing anything.
    for target in ["image", "diff"] {
        assert!(
            corpus(target).len() >= 5,
            "fuzz/corpus/{target}/ has {} files",
            corpus(target).len()
        );
    }
}
