//! Arbitrary program images through both backends: any divergence is a crash.
#![no_main]

use gpu16::BackendKind;
use gpu16_machine::{Config, IssuePolicy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    // The first byte picks the machine options, the rest is the image.
    let opts = data[0];
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
    if let Some(d) = gpu16::fuzz::diverge(a, b, &data[1..], &[], &config) {
        panic!("backends diverge: {d}");
    }
});
