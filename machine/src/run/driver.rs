//! What the run loop keeps to drive the task scheduler: the scheduler itself, a lower bound
//! on each running core's end (which the scheduler's decisions wait on), and the counts
//! that tell the loop the scheduler may act again.

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
