//! The gpu16 machine model: the instruction set, task-memory frames, shared memory with its
//! locks, the task scheduler and timing model, the run loop over a backend trait, and the
//! reports a run produces.
//!
//! This root is the embedding API: load a [`Program`] (or stream one through a
//! [`FrameSource`]), [`run()`] it with a [`Config`] on a backend, and read the [`RunReport`]
//! or the [`RunFailure`]; an [`Observer`] hears every [`Event`] as it happens, and
//! [`live`] steps a run from outside. Backends (the interpreter, the JIT) plug in through
//! [`engine`], the module for backend authors, which embedders do not need.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod config;
mod cores;
pub mod dialect;
pub mod engine;
mod event_key;
pub mod frame;
mod group;
mod held;
pub mod live;
mod livelock;
mod lock_wait;
mod mcst;
pub mod observe;
pub mod report;
pub mod run;
pub mod scheduler;
pub mod stop;
pub mod task_memory;

// The engine's modules, by their short names inside this crate.
pub(crate) use engine::{backend, banks, frame_table, isa, memory, semantics, slot_run};

pub use config::{Config, IssuePolicy, SlotTiming, TaskLog, Timing};
pub use dialect::Dialect;
pub use engine::memory::{FaultRule, MemoryStats, MEMORY_BYTES};
pub use frame::{ControlFrame, Fence, FrameKind, InstrFrame, LoadError, Program};
pub use observe::{Event, Executed, Observer, Progress, StallCause, StopNote, Stops};
pub use report::{CoreCounters, CoreWait, RunError, RunFailure, RunReport, UnfinishedCore};
pub use run::{run, run_observed, run_stream_observed, Snapshot};
pub use scheduler::{TaskRecord, TaskSummary, WaitCause};
pub use stop::StopCause;
pub use task_memory::FrameSource;
