//! When a divergence first shows: a binary search over the watchdog limit for the first
//! cycle at which two backends' runs differ, and the first core that differs there. Only
//! `gpu16 diff` locates; the library says what differs ([`gpu16::diff::divergence`]).

use crate::run_output::see::Outcome;
use gpu16::diff::{divergence, Divergence};
use gpu16::machine::{RunError, RunReport, UnfinishedCore};

/// Where two runs first disagree in time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Located {
    /// The smallest watchdog limit at which the runs differ: they agree when nothing may
    /// execute in cycle `limit - 1` or later. (The JIT runs a straight-line segment only
    /// when all of it fits below the limit, so the wrong instruction may be a few cycles
    /// before `limit - 1`, in the same segment.)
    pub(crate) limit: u64,
    /// The first difference between the two runs stopped at `limit`.
    pub(crate) divergence: String,
    /// The same difference, with its fields.
    pub(crate) detail: Divergence,
    /// The first core whose state differs there, where it was: (core, frame, IP).
    pub(crate) core: Option<(u8, usize, u8)>,
}

/// Find when a divergence first shows. `run_to(limit)` runs both backends with the watchdog
/// at `limit`, so nothing executes in cycle `limit` or later; `upper` is a limit at which
/// they differ. A binary search finds the smallest such limit. `None` if they agree at
/// `upper`.
pub(crate) fn locate(
    a_name: &str,
    b_name: &str,
    upper: u64,
    run_to: impl Fn(u64) -> (Outcome, Outcome),
) -> Option<Located> {
    let differ = |limit: u64| {
        let (a, b) = run_to(limit);
        divergence(a_name, &a, b_name, &b).map(|d| (d, a, b))
    };
    let (mut hi, mut found) = (upper, differ(upper)?);
    // With limit 0 nothing runs: both show the initial machine.
    let mut lo = 0;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match differ(mid) {
            Some(f) => (hi, found) = (mid, f),
            None => lo = mid,
        }
    }
    let (detail, a, b) = found;
    let core = first_core_differing(&a, &b).and_then(|c| {
        let RunError::Watchdog { cores, .. } = &a.as_ref().err()?.error else {
            return None;
        };
        cores
            .iter()
            .find(|u: &&UnfinishedCore| usize::from(u.core) == c)
            .map(|u| (u.core, u.frame, u.ip))
    });
    Some(Located {
        limit: hi,
        divergence: detail.to_string(),
        detail,
        core,
    })
}

/// The lowest core whose registers or counters differ between two outcomes.
fn first_core_differing(a: &Outcome, b: &Outcome) -> Option<usize> {
    let state = |o: &Outcome| -> RunReport {
        match o {
            Ok(r) => r.clone(),
            Err(f) => f.state.clone(),
        }
    };
    let (ra, rb) = (state(a), state(b));
    (0..16).find(|&c| ra.registers[c] != rb.registers[c] || ra.cores[c] != rb.cores[c])
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu16::machine::{Config, CoreWait, RunFailure};

    /// A finished machine with core 1's r9 = 5, as both backends leave it.
    fn state() -> RunReport {
        let mut r = RunReport::initial("interp", Config::default(), &[]);
        r.registers[1][9] = 5;
        r
    }

    /// Both runs stopped by the watchdog at `limit`, core 1 at frame 1, IP 4; from cycle
    /// 37 on, b's core 1 r9 differs.
    fn stopped_at(limit: u64) -> (Outcome, Outcome) {
        let stop = |bad: bool| -> Outcome {
            let mut state = state();
            if bad {
                state.registers[1][9] ^= 0xFF;
            }
            state.cycles = limit;
            Err(Box::new(RunFailure {
                error: RunError::Watchdog {
                    limit,
                    cores: vec![UnfinishedCore {
                        core: 1,
                        frame: 1,
                        ip: 4,
                        wait: CoreWait::Running,
                    }],
                    next_frame: None,
                },
                state,
            }))
        };
        (stop(false), stop(limit > 37))
    }

    #[test]
    fn locate_finds_the_first_cycle_and_core() {
        let l = locate("a", "b", 1000, stopped_at).unwrap();
        assert_eq!(l.limit, 38);
        assert_eq!(l.core, Some((1, 1, 4)));
        assert!(l
            .divergence
            .starts_with("state at the failure: registers: core 1 r9"));
        assert_eq!(locate("a", "b", 30, stopped_at), None);
    }
}
