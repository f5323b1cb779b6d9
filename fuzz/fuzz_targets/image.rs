//! Arbitrary bytes as a program image: loading and running must never panic.
#![no_main]

use gpu16_machine::{Config, Program};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(program) = Program::from_image(data) {
        let config = Config {
            max_cycles: 20_000,
            ..Config::default()
        };
        let _ = gpu16::run(gpu16::BackendKind::Interp, &program, &[], &config);
    }
});
