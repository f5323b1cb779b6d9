//! Arbitrary text as assembly source: the assembler must report problems, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(source) = std::str::from_utf8(data) {
        let _ = gpu16_asm::assemble(source, "fuzz.s");
    }
});
