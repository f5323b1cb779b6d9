//! Arbitrary text as assembly source: the assembler must report problems, never panic. The
//! body is `gpu16::fuzz::targets::assembly`, which `tests/fuzz_corpus.rs` replays on stable
//! Rust.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gpu16::fuzz::targets::assembly(data));
