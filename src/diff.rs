//! Comparing two runs of the same program: the first field in which they differ, with the
//! cycle, core, IP, register or address that locates it. Backends must agree on everything
//! but their name.

use gpu16_machine::{RunError, RunFailure, RunReport, UnfinishedCore};
use std::fmt::Write;

/// The outcome of one run.
pub type Outcome = Result<RunReport, Box<RunFailure>>;

fn describe_error(e: &RunError) -> String {
    match e {
        RunError::Fault {
            rule,
            frame,
            core,
            ip,
            cycle,
            addr,
        } => format!(
            "fault {} (frame {frame}, core {core}, IP {ip}, cycle {cycle}, addr {addr:?})",
            rule.name()
        ),
        other => other.to_string(),
    }
}

/// Describe the first difference between two outcomes, naming the two sides `a` and `b`;
/// `None` if they are identical (backend names aside).
pub fn first_divergence(a_name: &str, a: &Outcome, b_name: &str, b: &Outcome) -> Option<String> {
    let (ra, rb) = match (a, b) {
        (Ok(ra), Ok(rb)) => (ra, rb),
        (Err(fa), Err(fb)) => {
            if fa.error != fb.error {
                return Some(format!(
                    "error: {a_name}: {}; {b_name}: {}",
                    describe_error(&fa.error),
                    describe_error(&fb.error)
                ));
            }
            // The same failure must leave the same machine behind.
            return first_state_divergence(a_name, &fa.state, b_name, &fb.state)
                .map(|d| format!("state at the failure: {d}"));
        }
        (Ok(_), Err(f)) => {
            return Some(format!(
                "outcome: {a_name} finished; {b_name} failed: {}",
                describe_error(&f.error)
            ))
        }
        (Err(f), Ok(_)) => {
            return Some(format!(
                "outcome: {a_name} failed: {}; {b_name} finished",
                describe_error(&f.error)
            ))
        }
    };
    first_state_divergence(a_name, ra, b_name, rb)
}

/// The first field in which two reports differ (backend names aside).
fn first_state_divergence(
    a_name: &str,
    ra: &RunReport,
    b_name: &str,
    rb: &RunReport,
) -> Option<String> {
    let mut s = String::new();
    if ra.cycles != rb.cycles {
        let _ = write!(s, "cycles: {a_name} {}, {b_name} {}", ra.cycles, rb.cycles);
        return Some(s);
    }
    for core in 0..16 {
        for r in 0..16 {
            let (x, y) = (ra.registers[core][r], rb.registers[core][r]);
            if x != y {
                return Some(format!(
                    "registers: core {core} r{r}: {a_name} 0x{x:02x}, {b_name} 0x{y:02x}"
                ));
            }
        }
    }
    if let Some(addr) = (0..ra.memory.len()).find(|&i| ra.memory[i] != rb.memory[i]) {
        return Some(format!(
            "memory: address 0x{addr:03x} (bank {}, row {}): {a_name} 0x{:02x}, {b_name} 0x{:02x}",
            addr >> 8,
            addr & 0xFF,
            ra.memory[addr],
            rb.memory[addr]
        ));
    }
    if ra.tasks.len() != rb.tasks.len() {
        return Some(format!(
            "tasks: {a_name} {} tasks, {b_name} {}",
            ra.tasks.len(),
            rb.tasks.len()
        ));
    }
    for (i, (x, y)) in ra.tasks.iter().zip(&rb.tasks).enumerate() {
        if x != y {
            return Some(format!(
                "task #{i} (frame {}): {a_name} {x:?}, {b_name} {y:?}",
                x.frame
            ));
        }
    }
    for core in 0..16 {
        let (x, y) = (ra.cores[core], rb.cores[core]);
        if x != y {
            return Some(format!(
                "core {core} counters: {a_name} {x:?}, {b_name} {y:?}"
            ));
        }
    }
    if ra.instructions != rb.instructions || ra.stalls != rb.stalls {
        return Some(format!(
            "counts: {a_name} {} instructions {} stalls, {b_name} {} instructions {} stalls",
            ra.instructions, ra.stalls, rb.instructions, rb.stalls
        ));
    }
    if ra.task_summary != rb.task_summary {
        return Some(format!(
            "task summary: {a_name} {:?}, {b_name} {:?}",
            ra.task_summary, rb.task_summary
        ));
    }
    if ra.memory_stats != rb.memory_stats {
        return Some(format!(
            "memory statistics: {a_name} {:?}, {b_name} {:?}",
            ra.memory_stats, rb.memory_stats
        ));
    }
    None
}

/// Where two runs first disagree in time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The smallest watchdog limit at which the runs differ: they agree when nothing may
    /// execute in cycle `limit - 1` or later. (The JIT runs a straight-line segment only
    /// when all of it fits below the limit, so the wrong instruction may be a few cycles
    /// before `limit - 1`, in the same segment.)
    pub limit: u64,
    /// The first difference between the two runs stopped at `limit`.
    pub divergence: String,
    /// The first core whose state differs there, where it was: (core, frame, IP).
    pub core: Option<(u8, usize, u8)>,
}

/// Find when a divergence first shows. `run_to(limit)` runs both backends with the watchdog
/// at `limit`, so nothing executes in cycle `limit` or later; `upper` is a limit at which
/// they differ. A binary search finds the smallest such limit. `None` if they agree at
/// `upper`.
pub fn locate(
    a_name: &str,
    b_name: &str,
    upper: u64,
    run_to: impl Fn(u64) -> (Outcome, Outcome),
) -> Option<Located> {
    let differ = |limit: u64| {
        let (a, b) = run_to(limit);
        first_divergence(a_name, &a, b_name, &b).map(|d| (d, a, b))
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
    let (divergence, a, b) = found;
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
        divergence,
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
    use gpu16_machine::{ControlFrame, Fence, Instr, InstrFrame, Program};

    fn outcome() -> Outcome {
        let cf = ControlFrame {
            if_num: 1,
            fence: Fence::No,
            active: 3,
            init_vect: 0,
            init_r0: [0; 16],
            reserved_header: 0,
            reserved: [0; 10],
        };
        let mut code = [Instr::Ready; 16];
        code[0] = Instr::SetConst { k: 5, d: 9 };
        let image: Vec<u8> = cf
            .encode()
            .into_iter()
            .chain(InstrFrame::from_instrs(code).bytes())
            .collect();
        let p = Program::from_image(&image).unwrap();
        gpu16_machine::run(
            &mut gpu16_interp::Interpreter::new(),
            &p,
            &[],
            &Default::default(),
        )
    }

    #[test]
    fn identical_runs_have_no_divergence() {
        assert_eq!(first_divergence("a", &outcome(), "b", &outcome()), None);
    }

    #[test]
    fn names_the_register_and_the_address() {
        let a = outcome();
        let mut b = outcome();
        b.as_mut().unwrap().registers[1][9] = 6;
        assert_eq!(
            first_divergence("a", &a, "b", &b).unwrap(),
            "registers: core 1 r9: a 0x05, b 0x06"
        );
        let mut c = outcome();
        c.as_mut().unwrap().memory[0x123] = 1;
        assert_eq!(
            first_divergence("a", &a, "c", &c).unwrap(),
            "memory: address 0x123 (bank 1, row 35): a 0x00, c 0x01"
        );
        let mut d = outcome();
        d.as_mut().unwrap().cycles += 1;
        assert!(first_divergence("a", &a, "d", &d)
            .unwrap()
            .starts_with("cycles:"));
    }

    /// Both runs stopped by the watchdog at `limit`, core 1 at frame 1, IP 4; from cycle
    /// 37 on, b's core 1 r9 differs.
    fn stopped_at(limit: u64) -> (Outcome, Outcome) {
        let stop = |bad: bool| -> Outcome {
            let mut state = outcome().unwrap();
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
                        wait: gpu16_machine::CoreWait::Running,
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

    #[test]
    fn the_same_failure_with_different_state_diverges() {
        let failed = |byte: u8| -> Outcome {
            let mut state = outcome().unwrap();
            state.memory[0x010] = byte;
            Err(Box::new(RunFailure {
                error: RunError::Watchdog {
                    limit: 7,
                    cores: Vec::new(),
                    next_frame: None,
                },
                state,
            }))
        };
        assert_eq!(first_divergence("a", &failed(1), "b", &failed(1)), None);
        assert_eq!(
            first_divergence("a", &failed(1), "b", &failed(2)).unwrap(),
            "state at the failure: memory: address 0x010 (bank 0, row 16): a 0x01, b 0x02"
        );
    }
}
