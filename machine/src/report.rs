//! What a run produces: the final state, the cycle count, the task timeline and counters on
//! success; on failure the rule that was broken (or the watchdog's list of unfinished cores)
//! together with the state at that point.

use crate::config::Config;
use crate::memory::{FaultRule, MemoryStats, MEMORY_BYTES};
use crate::observe::StopCause;
use crate::scheduler::{TaskRecord, TaskSummary};
use std::fmt;

/// Per-core counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreCounters {
    pub instructions: u64,
    /// One per stalled cycle (lock or bank conflict).
    pub stalls: u64,
    /// Cycles stalled on a lock.
    pub lock_stalls: u64,
    /// Cycles stalled on a bank conflict.
    pub bank_stalls: u64,
    /// Tasks this core took part in.
    pub tasks: u64,
    /// Cycles from the start to the end of each of its parts of tasks (stalls included).
    pub busy: u64,
    /// Whether the core ever ran a task.
    pub ran: bool,
}

/// The machine's state and history after a run (or at the point it failed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunReport {
    pub backend: String,
    pub config: Config,
    pub cycles: u64,
    pub registers: [[u8; 16]; 16],
    pub memory: Box<[u8; MEMORY_BYTES]>,
    /// Every task in issue order (empty unless the task log is `All`).
    pub tasks: Vec<TaskRecord>,
    pub task_summary: TaskSummary,
    pub instructions: u64,
    pub stalls: u64,
    pub cores: [CoreCounters; 16],
    pub memory_stats: MemoryStats,
}

impl RunReport {
    /// The state of a machine that has not run: for failures before the first cycle.
    pub fn initial(backend: &str, config: Config, memory: &[u8]) -> RunReport {
        let mut bytes = Box::new([0u8; MEMORY_BYTES]);
        let n = memory.len().min(MEMORY_BYTES);
        bytes[..n].copy_from_slice(&memory[..n]);
        RunReport {
            backend: backend.to_string(),
            config,
            cycles: 0,
            registers: [[0; 16]; 16],
            memory: bytes,
            tasks: Vec::new(),
            task_summary: TaskSummary::default(),
            instructions: 0,
            stalls: 0,
            cores: [CoreCounters::default(); 16],
            memory_stats: MemoryStats::default(),
        }
    }
}

/// What an unfinished core was doing when the watchdog stopped the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoreWait {
    /// Executing; the instruction at `ip` was due in the limit cycle.
    Running,
    /// Its task was issued but its cores start only at this cycle.
    NotStarted { start: u64 },
    /// Stalled on a byte locked by another core's atomic sequence.
    Lock { addr: u16, holder: u8, since: u64 },
    /// Retrying after a bank conflict.
    BankConflict,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnfinishedCore {
    pub core: u8,
    pub frame: usize,
    pub ip: u8,
    pub wait: CoreWait,
}

/// Why a run stopped without finishing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The program broke a runtime rule.
    Fault {
        rule: FaultRule,
        frame: usize,
        core: u8,
        ip: u8,
        cycle: u64,
        addr: Option<u16>,
    },
    /// The run reached its cycle limit.
    Watchdog {
        limit: u64,
        cores: Vec<UnfinishedCore>,
        next_frame: Option<usize>,
    },
    /// The run was proven never to end: core `core`, in `frame` at `ip`, repeats its
    /// registers and IP every `period` cycles with register instructions only, so its part,
    /// its task and the run can never end. Found at checkpoint `cycle`, where the run stops;
    /// `cores` lists every unfinished core as the watchdog would at that cycle.
    /// `polls`: the cores together repeat, reading memory that no core can write any more
    /// (the run has issued every frame, and no running core can reach a store); `core` is
    /// the lowest of them.
    Livelock {
        core: u8,
        frame: usize,
        ip: u8,
        period: u64,
        polls: bool,
        cycle: u64,
        cores: Vec<UnfinishedCore>,
        next_frame: Option<usize>,
    },
    /// The run was stopped from outside (`cause`: a wall-clock limit, or the user) at
    /// `cycle`, where it had come: it ends as the watchdog would with that limit, with every
    /// unfinished core listed, and the state is the machine's when that cycle began.
    Stopped {
        cause: StopCause,
        cycle: u64,
        cores: Vec<UnfinishedCore>,
        next_frame: Option<usize>,
    },
    /// The backend could not run the program (not the program's fault): the JIT cannot
    /// start on this host, or could not compile a frame. `frame` is the instruction frame
    /// it was preparing, if any.
    Backend {
        frame: Option<usize>,
        message: String,
    },
    /// The emulator broke one of its own invariants, or panicked (a bug, never the
    /// program's fault). `frame` is where it showed, if known.
    Internal {
        frame: Option<usize>,
        message: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Fault {
                rule,
                frame,
                core,
                ip,
                cycle,
                addr,
            } => {
                write!(
                    f,
                    "frame {frame}, core {core}, IP {ip}, cycle {cycle}: {rule}"
                )?;
                if let Some(a) = addr {
                    write!(f, " [access to 0x{a:03x}]")?;
                }
                Ok(())
            }
            RunError::Watchdog {
                limit,
                cores,
                next_frame,
            } => {
                write!(f, "watchdog: the run reached its limit of {limit} cycles")?;
                if let Some(n) = next_frame {
                    write!(f, "; the task scheduler had not processed frame {n}")?;
                }
                write_unfinished(f, cores)
            }
            RunError::Livelock {
                core,
                frame,
                ip,
                period,
                polls,
                cycle,
                cores,
                next_frame,
            } => {
                let s = if *period == 1 { "" } else { "s" };
                if *polls {
                    write!(
                        f,
                        "livelock: every running core (the first: core {core}, frame {frame}, \
                         IP {ip}) repeats its registers and IP every {period} cycle{s}, and none \
                         can write memory or end, so the run can never end; it stopped at \
                         cycle {cycle}"
                    )?;
                } else {
                    write!(
                        f,
                        "livelock: core {core} (frame {frame}, IP {ip}) repeats its registers \
                         and IP every {period} cycle{s} without touching memory, so its task \
                         can never end; the run stopped at cycle {cycle}"
                    )?;
                }
                if let Some(n) = next_frame {
                    write!(f, "; the task scheduler had not processed frame {n}")?;
                }
                write_unfinished(f, cores)
            }
            RunError::Stopped {
                cause,
                cycle,
                cores,
                next_frame,
            } => {
                match cause {
                    StopCause::Timeout => write!(
                        f,
                        "timeout: the run passed its wall-clock limit and stopped at cycle {cycle}"
                    )?,
                    StopCause::Interrupt => {
                        write!(f, "interrupted: the run was stopped at cycle {cycle}")?
                    }
                }
                if let Some(n) = next_frame {
                    write!(f, "; the task scheduler had not processed frame {n}")?;
                }
                write_unfinished(f, cores)
            }
            RunError::Backend { frame, message } => match frame {
                Some(frame) => write!(f, "frame {frame}: backend error: {message}"),
                None => write!(f, "backend error: {message}"),
            },
            RunError::Internal { frame, message } => {
                write!(f, "internal error (a bug in gpu16, please report it)")?;
                if let Some(frame) = frame {
                    write!(f, " at frame {frame}")?;
                }
                write!(f, ": {message}")
            }
        }
    }
}

impl RunError {
    /// A short stable name of the kind of failure.
    pub fn rule_name(&self) -> &'static str {
        match self {
            RunError::Fault { rule, .. } => rule.name(),
            RunError::Watchdog { .. } => "watchdog",
            RunError::Livelock { .. } => "livelock",
            RunError::Stopped { cause, .. } => cause.name(),
            RunError::Backend { .. } => "backend",
            RunError::Internal { .. } => "internal",
        }
    }

    /// The frame the failure names, if any.
    pub fn frame(&self) -> Option<usize> {
        match self {
            RunError::Fault { frame, .. } | RunError::Livelock { frame, .. } => Some(*frame),
            RunError::Watchdog { .. } | RunError::Stopped { .. } => None,
            RunError::Backend { frame, .. } | RunError::Internal { frame, .. } => *frame,
        }
    }
}

impl std::error::Error for RunError {}

/// The unfinished cores of a watchdog or livelock report, one line each.
fn write_unfinished(f: &mut fmt::Formatter<'_>, cores: &[UnfinishedCore]) -> fmt::Result {
    if cores.is_empty() {
        write!(f, "; no core was running")?;
    }
    for c in cores {
        write!(
            f,
            "\n  core {:>2}: frame {}, IP {}, ",
            c.core, c.frame, c.ip
        )?;
        match &c.wait {
            CoreWait::Running => write!(f, "running")?,
            CoreWait::NotStarted { start } => {
                write!(f, "not started (due to start in cycle {start})")?
            }
            CoreWait::Lock {
                addr,
                holder,
                since,
            } => write!(
                f,
                "stalled since cycle {since} on byte 0x{addr:03x}, locked by core {holder}"
            )?,
            CoreWait::BankConflict => write!(f, "stalled on a bank conflict")?,
        }
    }
    Ok(())
}

/// A failed run: the error and the machine's state when it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFailure {
    pub error: RunError,
    pub state: RunReport,
}

impl fmt::Display for RunFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for RunFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
