//! The bodies of the coverage-guided fuzz targets in `fuzz/`, here so that there is one
//! definition of each: cargo-fuzz calls them with the inputs it invents, and
//! `tests/fuzz_corpus.rs` replays the committed corpus through them on stable Rust. Each
//! returns normally for every input; a panic (or a stack overflow, or a hang) is the bug the
//! fuzzer looks for.

use crate::BackendKind;
use gpu16_machine::{Config, IssuePolicy, Program};
use std::path::Path;

/// The watchdog of the `image` target: enough for a few hundred tasks, short enough that an
/// endless loop costs the fuzzer a few milliseconds.
const IMAGE_MAX_CYCLES: u64 = 20_000;

/// Arbitrary bytes as a program image: loading must refuse a bad image with an error, and
/// running a good one on the interpreter must end (finished, faulted or stopped by the
/// watchdog) without a panic.
pub fn image(data: &[u8]) {
    if let Ok(program) = Program::from_image(data) {
        let config = Config {
            max_cycles: IMAGE_MAX_CYCLES,
            ..Config::default()
        };
        let _ = crate::run(BackendKind::Interp, &program, &[], &config);
    }
}

/// What every `.include` of the `assembly` target reads: a small file that defines a
/// constant, so the include path is exercised without touching the file system (an input
/// naming `/dev/zero` must not make the fuzzer read it).
const INCLUDED: &str = ".equ INCLUDED, 1\n";

/// Arbitrary text as assembly source: the assembler must report problems as diagnostics,
/// never panic. Inputs that are not UTF-8 are skipped: the CLI refuses them before the
/// assembler sees them.
pub fn assembly(data: &[u8]) {
    if let Ok(source) = std::str::from_utf8(data) {
        let include = |_: &Path| Ok(INCLUDED.to_string());
        let _ = gpu16_asm::assemble_with(source, "fuzz.s", &include);
    }
}

/// Arbitrary program images through both backends of [`BackendKind::DIFF_PAIR`]. The first
/// byte picks the machine options (bit 0: lookahead issue, bit 1: bank conflicts, bits 7:2:
/// a watchdog of 1 + 500 × that many cycles), the rest is the image; shorter inputs are
/// skipped.
///
/// # Panics
///
/// When the backends diverge (a load error both share is agreement), naming the divergence.
pub fn diff(data: &[u8]) {
    let Some((&opts, image)) = data.split_first() else {
        return;
    };
    if image.is_empty() {
        return;
    }
    let config = Config {
        issue: if opts & 1 == 0 {
            IssuePolicy::InOrder
        } else {
            IssuePolicy::Lookahead
        },
        bank_conflicts: opts & 2 != 0,
        max_cycles: 1 + u64::from(opts >> 2) * 500,
        ..Config::default()
    };
    let [a, b] = BackendKind::DIFF_PAIR;
    if let Some(d) = super::diverge(a, b, image, &[], &config) {
        panic!("backends diverge: {d}");
    }
}
