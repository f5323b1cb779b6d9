//! What the run loop keeps to drive the task scheduler: the scheduler itself, a lower bound
//! on each running core's end (which the scheduler's decisions wait on), the counts that
//! tell the loop the scheduler may act again, and where the scheduler stands as the loop
//! last asked it. The loop's step of it is `scheduling.rs`.

use crate::event_key::EventKey;
use crate::scheduler::TaskScheduler;

/// The task scheduler and the loop's view of it.
pub(crate) struct Driver<'a> {
    pub(crate) ts: TaskScheduler<'a>,
    /// For a core running a task: a lower bound on the cycle of its last instruction.
    pub(crate) lb: [u64; 16],
    pub(crate) frames_done: u64,
    /// Core parts ended so far: a change tells the loop the scheduler may act.
    pub(crate) ends: u64,
    pub(crate) last_core_cycle: Option<u64>,
}

impl<'a> Driver<'a> {
    /// Drive `ts` from the start.
    pub(crate) fn new(ts: TaskScheduler<'a>) -> Self {
        Driver {
            ts,
            lb: [0; 16],
            frames_done: 0,
            ends: 0,
            last_core_cycle: None,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SchedulerState {
    Blocked,
    Done,
    Limit,
    /// It issued a task and was not asked again yet: the bound is the weaker one of
    /// [`TaskScheduler::next_start_bound`], and the loop asks it again before anything that
    /// reads its state (a checkpoint, the watchdog), as it does where the bound is reached.
    Pending,
}

/// Where the scheduler stands, as the loop last asked it: its state, and for each core the
/// event key before which no core of a task it has yet to issue can act.
#[derive(Clone, Copy)]
pub(super) struct SchedulerBound {
    pub(super) before: [EventKey; 16],
    pub(super) state: SchedulerState,
    /// What bounds memory accesses of a task yet to issue beyond `before`
    /// ([`TaskScheduler::first_access_bound`]), worked out when a run first needs it.
    pub(super) touch: Touch,
}

/// The bound on memory accesses of tasks yet to issue, for cores `before` bounds at all.
/// Only the port's bank horizon reads it: events still wait for `before`, so the loop
/// serves them in order, while a core already running may access memory up to it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Touch {
    /// Nothing more than `before` is known (the lookahead policy, or no task to come).
    Before,
    /// Not worked out yet: the first frame not yet processed is processed in this cycle
    /// at the earliest.
    From(u64),
    /// Worked out: no core of a task yet to issue touches memory before this key.
    Key(EventKey),
}
