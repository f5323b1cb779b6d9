//! Arbitrary bytes as a program image: loading and running must never panic. The body is
//! `gpu16::fuzz::targets::image`, which `tests/fuzz_corpus.rs` replays on stable Rust.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gpu16::fuzz::targets::image(data));
