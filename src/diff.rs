//! Comparing two runs of the same program: the first field in which they differ, with the
//! cycle, core, IP, register or address that locates it. Backends must agree on everything
//! but their name.

use gpu16_machine::MemoryStats;
use gpu16_machine::{CoreCounters, RunError, RunFailure, RunReport, TaskRecord, TaskSummary};
use std::fmt;

/// The outcome of one run.
pub(crate) type Outcome = Result<RunReport, Box<RunFailure>>;

/// A run's error as a divergence names it: a fault with all its fields, any other error
/// by its message.
pub(crate) fn describe_error(e: &RunError) -> String {
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

/// What differs first between two runs, with both sides' values (`[a, b]`, in the order
/// the runs were given). Its text ([`Divergence`]'s `Display`) is what `gpu16 diff` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    /// Both runs failed, with different errors (each described as `describe_error`).
    Error([String; 2]),
    /// One run finished and the other failed: `None` for the one that finished, the
    /// failure's description for the other.
    Outcome([Option<String>; 2]),
    /// The cycle counts.
    Cycles([u64; 2]),
    /// Register `register` of core `core`.
    Register {
        /// The core, 0..15.
        core: usize,
        /// The register, 0..15.
        register: usize,
        /// Its value in each run.
        values: [u8; 2],
    },
    /// The byte of shared memory at `address`.
    Memory {
        /// The address, 0..4095 (bank `address >> 8`, row `address & 0xFF`).
        address: usize,
        /// The byte in each run.
        values: [u8; 2],
    },
    /// The number of tasks logged.
    TaskCount([usize; 2]),
    /// The task logged `index`th (0 first), of instruction frame `frame` in the first run.
    Task {
        /// Its place in the task log.
        index: usize,
        /// Its instruction frame in the first run.
        frame: usize,
        /// The record in each run.
        values: Box<[TaskRecord; 2]>,
    },
    /// The per-core counters of core `core`.
    CoreCounters {
        /// The core, 0..15.
        core: usize,
        /// Its counters in each run.
        values: Box<[CoreCounters; 2]>,
    },
    /// The instruction and stall totals: `[instructions, stalls]` of each run.
    Counts([[u64; 2]; 2]),
    /// The aggregates over every task.
    TaskSummary(Box<[TaskSummary; 2]>),
    /// The memory statistics.
    MemoryStats(Box<[MemoryStats; 2]>),
}

impl Field {
    /// A stable short name of the kind of field, for `diff --json`'s `field`: `error`,
    /// `outcome`, `cycles`, `registers`, `memory`, `task_count`, `task`, `core_counters`,
    /// `counts`, `task_summary` or `memory_stats`.
    pub fn name(&self) -> &'static str {
        match self {
            Field::Error(_) => "error",
            Field::Outcome(_) => "outcome",
            Field::Cycles(_) => "cycles",
            Field::Register { .. } => "registers",
            Field::Memory { .. } => "memory",
            Field::TaskCount(_) => "task_count",
            Field::Task { .. } => "task",
            Field::CoreCounters { .. } => "core_counters",
            Field::Counts(_) => "counts",
            Field::TaskSummary(_) => "task_summary",
            Field::MemoryStats(_) => "memory_stats",
        }
    }
}

/// The first difference between two outcomes, with the names the caller gave the runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The names of the two runs (their backends), `[a, b]`.
    pub names: [String; 2],
    /// Both runs failed with the same error, and `field` differs in the state they left.
    pub at_failure: bool,
    /// What differs, with both values.
    pub field: Field,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b] = &self.names;
        if self.at_failure {
            f.write_str("state at the failure: ")?;
        }
        match &self.field {
            Field::Error([x, y]) => write!(f, "error: {a}: {x}; {b}: {y}"),
            Field::Outcome([None, Some(e)]) => write!(f, "outcome: {a} finished; {b} failed: {e}"),
            Field::Outcome([Some(e), _]) => write!(f, "outcome: {a} failed: {e}; {b} finished"),
            Field::Outcome([None, None]) => write!(f, "outcome: {a} finished; {b} finished"),
            Field::Cycles([x, y]) => write!(f, "cycles: {a} {x}, {b} {y}"),
            Field::Register {
                core,
                register,
                values: [x, y],
            } => write!(
                f,
                "registers: core {core} r{register}: {a} 0x{x:02x}, {b} 0x{y:02x}"
            ),
            Field::Memory {
                address,
                values: [x, y],
            } => write!(
                f,
                "memory: address 0x{address:03x} (bank {}, row {}): {a} 0x{x:02x}, {b} 0x{y:02x}",
                address >> 8,
                address & 0xFF
            ),
            Field::TaskCount([x, y]) => write!(f, "tasks: {a} {x} tasks, {b} {y}"),
            Field::Task {
                index,
                frame,
                values,
            } => {
                let [x, y] = &**values;
                write!(f, "task #{index} (frame {frame}): {a} {x:?}, {b} {y:?}")
            }
            Field::CoreCounters { core, values } => {
                let [x, y] = &**values;
                write!(f, "core {core} counters: {a} {x:?}, {b} {y:?}")
            }
            Field::Counts([[xi, xs], [yi, ys]]) => write!(
                f,
                "counts: {a} {xi} instructions {xs} stalls, {b} {yi} instructions {ys} stalls"
            ),
            Field::TaskSummary(v) => write!(f, "task summary: {a} {:?}, {b} {:?}", v[0], v[1]),
            Field::MemoryStats(v) => {
                write!(f, "memory statistics: {a} {:?}, {b} {:?}", v[0], v[1])
            }
        }
    }
}

/// Describe the first difference between two outcomes, naming the two sides `a` and `b`;
/// `None` if they are identical (backend names aside). The text of [`divergence`].
pub(crate) fn first_divergence(
    a_name: &str,
    a: &Outcome,
    b_name: &str,
    b: &Outcome,
) -> Option<String> {
    divergence(a_name, a, b_name, b).map(|d| d.to_string())
}

/// The first difference between two outcomes, naming the two sides `a` and `b`; `None` if
/// they are identical (backend names aside).
pub fn divergence(a_name: &str, a: &Outcome, b_name: &str, b: &Outcome) -> Option<Divergence> {
    let (field, at_failure) = match (a, b) {
        (Ok(ra), Ok(rb)) => (first_state_divergence(ra, rb)?, false),
        (Err(fa), Err(fb)) if fa.error != fb.error => (
            Field::Error([describe_error(&fa.error), describe_error(&fb.error)]),
            false,
        ),
        // The same failure must leave the same machine behind.
        (Err(fa), Err(fb)) => (first_state_divergence(&fa.state, &fb.state)?, true),
        (Ok(_), Err(f)) => (
            Field::Outcome([None, Some(describe_error(&f.error))]),
            false,
        ),
        (Err(f), Ok(_)) => (
            Field::Outcome([Some(describe_error(&f.error)), None]),
            false,
        ),
    };
    Some(Divergence {
        names: [a_name.to_string(), b_name.to_string()],
        at_failure,
        field,
    })
}

/// The first field in which two reports differ (backend names aside).
fn first_state_divergence(ra: &RunReport, rb: &RunReport) -> Option<Field> {
    if ra.cycles != rb.cycles {
        return Some(Field::Cycles([ra.cycles, rb.cycles]));
    }
    for core in 0..16 {
        for register in 0..16 {
            let (x, y) = (ra.registers[core][register], rb.registers[core][register]);
            if x != y {
                return Some(Field::Register {
                    core,
                    register,
                    values: [x, y],
                });
            }
        }
    }
    if let Some(address) = (0..ra.memory.len()).find(|&i| ra.memory[i] != rb.memory[i]) {
        return Some(Field::Memory {
            address,
            values: [ra.memory[address], rb.memory[address]],
        });
    }
    if ra.tasks.len() != rb.tasks.len() {
        return Some(Field::TaskCount([ra.tasks.len(), rb.tasks.len()]));
    }
    for (index, (x, y)) in ra.tasks.iter().zip(&rb.tasks).enumerate() {
        if x != y {
            return Some(Field::Task {
                index,
                frame: x.frame,
                values: Box::new([*x, *y]),
            });
        }
    }
    for core in 0..16 {
        let (x, y) = (ra.cores[core], rb.cores[core]);
        if x != y {
            return Some(Field::CoreCounters {
                core,
                values: Box::new([x, y]),
            });
        }
    }
    if ra.instructions != rb.instructions || ra.stalls != rb.stalls {
        return Some(Field::Counts([
            [ra.instructions, ra.stalls],
            [rb.instructions, rb.stalls],
        ]));
    }
    if ra.task_summary != rb.task_summary {
        return Some(Field::TaskSummary(Box::new([
            ra.task_summary.clone(),
            rb.task_summary.clone(),
        ])));
    }
    if ra.memory_stats != rb.memory_stats {
        return Some(Field::MemoryStats(Box::new([
            ra.memory_stats.clone(),
            rb.memory_stats.clone(),
        ])));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu16_machine::engine::isa::Instr;
    use gpu16_machine::{ControlFrame, Fence, InstrFrame, Program};

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
