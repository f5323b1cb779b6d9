//! The gpu16 machine model: the instruction set, task-memory frames, shared memory with its
//! locks, the task scheduler and timing model, the run loop over a backend trait, and the
//! reports a run produces. Backends (the interpreter, the JIT) plug in through [`Backend`].

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod backend;
pub mod banks;
pub mod config;
mod cores;
pub mod dialect;
mod event_key;
pub mod frame;
pub mod frame_table;
mod held;
pub mod isa;
pub mod live;
mod livelock;
mod lock_wait;
pub mod mcst;
pub mod memory;
pub mod observe;
pub mod report;
pub mod run;
pub mod scheduler;
pub mod semantics;
mod slot_run;
mod stop;
pub mod task_memory;

pub use backend::{
    retire, Backend, BackendError, CoreExit, CoreState, DirectAccess, DirectBounds, EventKey,
    GroupExit, GroupShape, Port, PortAccess,
};
pub use config::{Config, IssuePolicy, SlotTiming, TaskLog, Timing};
pub use dialect::Dialect;
pub use frame::{ControlFrame, Fence, FrameKind, InstrFrame, LoadError, Program};
pub use isa::{AluOp, Flow, Instr, MemOp};
pub use memory::{FaultRule, Performed, SharedMemory, Wakes};
pub use observe::{Event, Executed, Observer, Progress, StallCause, StopCause, StopNote, Stops};
pub use report::{CoreCounters, CoreWait, RunError, RunFailure, RunReport, UnfinishedCore};
pub use run::{run, run_observed, run_stream_observed};
pub use scheduler::{TaskRecord, TaskSummary, WaitCause};
pub use semantics::{Access, Effect, Semantics};
pub use slot_run::{SlotCode, SlotCompiler};
pub use task_memory::{FrameSource, ProgramFrames};
