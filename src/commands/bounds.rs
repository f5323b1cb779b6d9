//! The largest values of the flags that ask the process for a resource: threads, memory,
//! time. clap refuses a larger value as a usage error (status 2) naming the flag and the
//! range, before any work starts. `gen --groups` is bounded by `gpu16_gen::MAX_GROUPS`,
//! which the generator itself also enforces; `--max-cycles` is the watchdog and has its own
//! bound (`MAX_CYCLE_LIMIT`).

/// `fuzz --jobs`: worker threads. The pool starts every thread up front, so 100,000 of them
/// is minutes of spawning and gigabytes of stacks before the first program. A campaign is
/// CPU-bound, so threads past the host's cores gain nothing; 256 is above the cores of the
/// machines this runs on.
pub const MAX_JOBS: usize = 256;

/// `fuzz --count`: programs in a campaign, 2^48. A campaign keeps no per-program state, so
/// this is no memory bound: it refuses a count no machine could finish (2^48 programs at
/// 190 a second is 47,000 years), which is a typo rather than a plan.
pub const MAX_COUNT: u64 = 1 << 48;

/// `run --width`: columns of the `--timeline` chart (the chart's own bound, which `$COLUMNS`
/// obeys too).
pub use crate::run_output::timeline::MAX_WIDTH;

/// `run --trace-limit`: events kept for `--trace`, `--timeline` and `--vcd`. The recorder
/// holds up to twice the limit before it cuts, a few dozen bytes an event, so 10,000,000 (50
/// times the default) stays under a gigabyte (the test below checks it); a Chrome trace
/// that size is already more than the viewers open.
pub const MAX_TRACE_LIMIT: u64 = 10_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_at_the_trace_limit_stays_under_a_gigabyte() {
        let bytes = 2 * MAX_TRACE_LIMIT * std::mem::size_of::<gpu16::machine::Event>() as u64;
        assert!(bytes < 1 << 30, "{bytes}");
    }
}
