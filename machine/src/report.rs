//! What a run produces: the final state, the cycle count, the task timeline and counters on
//! success; on failure the rule that was broken (or the watchdog's list of unfinished cores)
//! together with the state at that point.

use crate::config::Config;
use crate::dialect::Dialect;
use crate::frame::LoadError;
use crate::memory::{FaultRule, MemoryStats, MEMORY_BYTES};
use crate::scheduler::{TaskRecord, TaskSummary};
use crate::stop::StopCause;
use std::fmt;

/// Per-core counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreCounters {
    /// Instructions the core executed, one per cycle it was not stalled.
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
    /// The name of the backend that ran it (`interp`, `jit` or `auto`).
    pub backend: String,
    /// The configuration it ran with.
    pub config: Config,
    /// The dialect its program was read in ([`crate::Program::dialect`]).
    pub dialect: Dialect,
    /// The run's length in cycles: 1 + the last cycle in which a core executed an
    /// instruction or the scheduler processed a frame (cycles it only waited do not count).
    /// For a failed run, the cycle it stopped at.
    pub cycles: u64,
    /// Every core's registers: `registers[core][r]` is register `r` of core `core`.
    pub registers: [[u8; 16]; 16],
    /// Shared memory, all 4096 bytes, indexed by address (bank * 256 + row).
    pub memory: Box<[u8; MEMORY_BYTES]>,
    /// Every task in issue order (empty unless the task log is `All`).
    pub tasks: Vec<TaskRecord>,
    /// Task counts and aggregates, kept whatever the task log.
    pub task_summary: TaskSummary,
    /// Instructions executed, summed over the cores.
    pub instructions: u64,
    /// Stalled cycles, summed over the cores (one per core per stalled cycle).
    pub stalls: u64,
    /// Each core's counters, indexed by core id.
    pub cores: [CoreCounters; 16],
    /// Per-bank access and lock counters of shared memory.
    pub memory_stats: MemoryStats,
}

impl RunReport {
    /// The state of a machine that has not run: for failures before the first cycle (in the
    /// spec dialect; set [`RunReport::dialect`] for another).
    pub fn initial(backend: &str, config: Config, memory: &[u8]) -> RunReport {
        let mut bytes = Box::new([0u8; MEMORY_BYTES]);
        let n = memory.len().min(MEMORY_BYTES);
        bytes[..n].copy_from_slice(&memory[..n]);
        RunReport {
            backend: backend.to_string(),
            config,
            dialect: Dialect::Spec,
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

/// What a report made while a run can still go on does with the task records kept so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeptTasks {
    /// Move them into the report: the run is over.
    Take,
    /// Copy them into the report, and keep them.
    Copy,
    /// Leave them out (the report's `tasks` is empty): a look between moves that must not
    /// cost the length of the log.
    Leave,
}

/// What an unfinished core was doing when the watchdog stopped the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoreWait {
    /// Executing; the instruction at `ip` was due in the limit cycle.
    Running,
    /// Its task was issued but its cores start only at this cycle.
    NotStarted {
        /// The cycle its first instruction is due in.
        start: u64,
    },
    /// Stalled on a byte locked by another core's atomic sequence.
    Lock {
        /// The locked byte's address.
        addr: u16,
        /// The core holding the lock.
        holder: u8,
        /// The first cycle it stalled in.
        since: u64,
    },
    /// Retrying after a bank conflict.
    BankConflict,
}

/// A core whose part of a task had not ended when the run stopped (watchdog, livelock,
/// or a stop from outside).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnfinishedCore {
    /// The core, 0..15.
    pub core: u8,
    /// The instruction frame of its task, by index in the program.
    pub frame: usize,
    /// The IP of its next instruction, 0..15.
    pub ip: u8,
    /// What it was doing.
    pub wait: CoreWait,
}

/// Why a run stopped without finishing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The program, read as the run went (a stream), turned out malformed or could not be
    /// read further: the error loading it whole would have given, or the read that failed.
    Load(LoadError),
    /// The program broke a runtime rule.
    Fault {
        /// The rule broken.
        rule: FaultRule,
        /// The instruction frame of the faulting core's task.
        frame: usize,
        /// The faulting core.
        core: u8,
        /// The IP of the faulting instruction.
        ip: u8,
        /// The cycle of the faulting instruction (the earliest fault in (cycle, core id)
        /// order is the one reported).
        cycle: u64,
        /// The address of the faulting access, if it was a memory instruction.
        addr: Option<u16>,
    },
    /// The run reached its cycle limit.
    Watchdog {
        /// The limit, [`Config::max_cycles`]: no activity may happen in this cycle or later.
        limit: u64,
        /// Every core whose part had not ended, with what it was doing.
        cores: Vec<UnfinishedCore>,
        /// The first frame the scheduler had not processed, if any.
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
        /// The looping core (the lowest, if `polls`).
        core: u8,
        /// The instruction frame it runs.
        frame: usize,
        /// Its IP at the checkpoint.
        ip: u8,
        /// The length of its loop in cycles.
        period: u64,
        /// Whether the proof is over all cores polling memory no one can write any more.
        polls: bool,
        /// The checkpoint cycle at which it was proven and the run stopped.
        cycle: u64,
        /// Every unfinished core, as the watchdog would list them at `cycle`.
        cores: Vec<UnfinishedCore>,
        /// The first frame the scheduler had not processed, if any.
        next_frame: Option<usize>,
    },
    /// The MCST dialect: the run was proven never to end. The task scheduler's walk over
    /// task memory reaches no halt, so it goes round a loop of control frames for ever:
    /// `walk`, from `frame`, where the loop begins. Either no frame sync on it could end
    /// the run ([`crate::frame::McstWalk::may_end`]), or (`same_state_at`) the machine came
    /// back to `frame` in the state it had there at an earlier cycle, every core idle. The
    /// run stopped at `cycle`, as it began after the scheduler came back to `frame`;
    /// `cores` lists every unfinished core as the watchdog would at that cycle.
    EndlessWalk {
        /// The frame the loop begins at, where the scheduler came back.
        frame: usize,
        /// The control frames of the loop, in the order the scheduler reads them.
        walk: Vec<usize>,
        /// The cycle at which the run stopped.
        cycle: u64,
        /// Every unfinished core, as the watchdog would list them at `cycle`.
        cores: Vec<UnfinishedCore>,
        /// Where the proof is the state's: the cycle of the earlier arrival at `frame` in
        /// the same state (cycle stamps relative to the arrival's), which the machine went
        /// round from without ending. `None` where the walk alone proves it.
        same_state_at: Option<u64>,
    },
    /// The run was stopped from outside (`cause`: a wall-clock limit, or the user) at
    /// `cycle`, where it had come: it ends as the watchdog would with that limit, with every
    /// unfinished core listed, and the state is the machine's when that cycle began.
    Stopped {
        /// Why it was stopped.
        cause: StopCause,
        /// The cycle it had reached, where it stopped.
        cycle: u64,
        /// Every unfinished core, as the watchdog would list them at `cycle`.
        cores: Vec<UnfinishedCore>,
        /// The first frame the scheduler had not processed, if any.
        next_frame: Option<usize>,
    },
    /// The task log that keeps every task ([`crate::TaskLog::All`]) reached its limit of
    /// `limit` tasks in `cycle`. Only the MCST dialect can issue tasks without end (its
    /// task pointer wraps over 64 frames), so only its log is bounded this way; a longer run
    /// keeps a summary (`--tasks summary`) or no log (`--tasks none`).
    TaskLogFull {
        /// The most tasks the log keeps.
        limit: usize,
        /// The cycle of the task past the limit, where the run stopped.
        cycle: u64,
    },
    /// The backend could not run the program (not the program's fault): the JIT cannot
    /// start on this host, or could not compile a frame. `frame` is the instruction frame
    /// it was preparing, if any.
    Backend {
        /// The instruction frame it was preparing, if any.
        frame: Option<usize>,
        /// What went wrong, for people.
        message: String,
    },
    /// The emulator broke one of its own invariants, or panicked (a bug, never the
    /// program's fault). `frame` is where it showed, if known.
    Internal {
        /// Where it showed, if known.
        frame: Option<usize>,
        /// What went wrong, for the bug report.
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
            RunError::EndlessWalk {
                frame,
                walk,
                cycle,
                cores,
                same_state_at,
            } => {
                let s = if walk.len() == 1 { "" } else { "s" };
                let frames = frame_runs(walk);
                match same_state_at {
                    None => write!(
                        f,
                        "livelock: the task scheduler's walk reaches no halt (.halt) nor any \
                         stop frame that could end the run: it goes round control frame{s} \
                         {frames} for ever; the run stopped at cycle {cycle}, after it came \
                         back to frame {frame}"
                    )?,
                    Some(at) => write!(
                        f,
                        "livelock: the task scheduler's walk reaches no halt (.halt), and its \
                         frame syncs find every core idle: it came back to frame {frame} with \
                         the registers, memory and scheduler as they were when it came there \
                         in cycle {at}, so it goes round control frame{s} {frames} for ever; \
                         the run stopped at cycle {cycle}"
                    )?,
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
            RunError::TaskLogFull { limit, cycle } => write!(
                f,
                "the task log is full: {limit} tasks by cycle {cycle}; the mcst dialect's \
                 scheduler can issue tasks without end (a program without .halt wraps to \
                 frame 0), so run longer with --tasks summary or --tasks none"
            ),
            RunError::Load(e) => write!(f, "{e}"),
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
            RunError::Livelock { .. } | RunError::EndlessWalk { .. } => "livelock",
            RunError::Stopped { cause, .. } => cause.name(),
            RunError::TaskLogFull { .. } => "task_log_full",
            RunError::Backend { .. } => "backend",
            RunError::Load(_) => "load",
            RunError::Internal { .. } => "internal",
        }
    }

    /// The frame the failure names, if any.
    pub fn frame(&self) -> Option<usize> {
        match self {
            RunError::Fault { frame, .. }
            | RunError::Livelock { frame, .. }
            | RunError::EndlessWalk { frame, .. } => Some(*frame),
            RunError::Watchdog { .. } | RunError::Stopped { .. } | RunError::TaskLogFull { .. } => {
                None
            }
            RunError::Backend { frame, .. } | RunError::Internal { frame, .. } => *frame,
            RunError::Load(e) => e.frame(),
        }
    }
}

impl std::error::Error for RunError {}

/// Frame numbers as a list with consecutive runs joined: `0, 2..63`.
fn frame_runs(frames: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < frames.len() {
        let mut j = i;
        while j + 1 < frames.len() && frames[j + 1] == frames[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => frames[i].to_string(),
            1 => format!("{}, {}", frames[i], frames[j]),
            _ => format!("{}..{}", frames[i], frames[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

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
    /// Why the run stopped.
    pub error: RunError,
    /// The machine when it stopped: for a fault, the state when the fault's cycle began;
    /// `cycles` is the cycle it stopped at.
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
