//! Arbitrary program images through both backends: any divergence is a crash. The body is
//! `gpu16::fuzz::targets::diff`, which `tests/fuzz_corpus.rs` replays on stable Rust.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gpu16::fuzz::targets::diff(data));
