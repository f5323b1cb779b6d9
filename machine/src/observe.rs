//! Events a run reports to an observer as it goes: the raw material of timelines, traces and
//! waveforms. Cores run ahead of one another, so events arrive grouped per core rather than
//! in global cycle order; each carries its cycles, and consumers order them as they need.

use crate::config::Config;
use crate::frame::Fence;

/// Why the task scheduler waited before processing a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitCause {
    /// The frame's cores (its mask, or a CF's R0-init cores) were busy.
    CoresBusy,
    /// An earlier acq task was unfinished.
    Acquire,
    /// The frame is a rel task and earlier tasks were unfinished.
    Release,
}

impl WaitCause {
    pub fn name(self) -> &'static str {
        match self {
            WaitCause::CoresBusy => "cores busy",
            WaitCause::Acquire => "acq fence",
            WaitCause::Release => "rel fence",
        }
    }
    pub(crate) fn index(self) -> usize {
        match self {
            WaitCause::CoresBusy => 0,
            WaitCause::Acquire => 1,
            WaitCause::Release => 2,
        }
    }
}

/// Why a core stalled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StallCause {
    Lock,
    BankConflict,
}

/// Something that happened during a run. Intervals are inclusive of both ends unless noted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The scheduler processed a control frame in `cycle`.
    ControlFrame { frame: usize, cycle: u64 },
    /// The scheduler broadcast an instruction frame's code in cycles `from..=to`.
    Broadcast {
        frame: usize,
        mask: u16,
        fence: Fence,
        from: u64,
        to: u64,
    },
    /// The scheduler was free but waited in cycles `from..to` (end exclusive) for `frame`.
    SchedulerWait {
        frame: usize,
        from: u64,
        to: u64,
        cause: WaitCause,
    },
    /// A core's part of the task of `frame` ran in cycles `start..=end`.
    CorePart {
        core: u8,
        frame: usize,
        start: u64,
        end: u64,
    },
    /// A core held the lock of `addr` from its ld_sync in `from` to its st_sync in `to`.
    LockHeld {
        core: u8,
        addr: u16,
        from: u64,
        to: u64,
    },
    /// A core stalled in cycles `from..to` (end exclusive).
    Stall {
        core: u8,
        from: u64,
        to: u64,
        cause: StallCause,
        addr: u16,
    },
}

/// How far a run has come, for progress displays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Frames the scheduler has processed.
    pub frames: u64,
    /// Tasks issued.
    pub tasks: u64,
    /// Instructions executed so far (cores may have run ahead of the scheduler).
    pub instructions: u64,
    /// The last checkpoint cycle the run has passed (every event before it is done); it
    /// moves during long frames, which run no scheduler step.
    pub cycle: u64,
}

/// Receives a run's events. Every method has a default that ignores them.
pub trait Observer {
    /// Whether the run should collect events at all (lets the no-op observer cost nothing).
    const WANTS_EVENTS: bool = true;
    /// Whether the run should report progress (once per processed frame).
    const WANTS_PROGRESS: bool = false;
    /// Called once before the run starts.
    fn start(&mut self, _config: &Config) {}
    fn event(&mut self, _event: Event) {}
    fn progress(&mut self, _progress: Progress) {}
    /// Asked where progress is reported (so only when [`Observer::WANTS_PROGRESS`]): a
    /// cause stops the run soon after, as [`RunError::Stopped`](crate::RunError::Stopped),
    /// like the watchdog would at the cycle the run had reached.
    fn stop_requested(&mut self) -> Option<StopCause> {
        None
    }
}

/// Why a run was stopped from outside the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StopCause {
    /// Its wall-clock limit passed (`--timeout`).
    Timeout,
    /// The user interrupted it (Ctrl-C).
    Interrupt,
}

impl StopCause {
    /// A short stable name: `timeout` or `interrupted`.
    pub fn name(self) -> &'static str {
        match self {
            StopCause::Timeout => "timeout",
            StopCause::Interrupt => "interrupted",
        }
    }
}

/// An observer lent to a run.
impl<T: Observer> Observer for &mut T {
    const WANTS_EVENTS: bool = T::WANTS_EVENTS;
    const WANTS_PROGRESS: bool = T::WANTS_PROGRESS;
    fn start(&mut self, config: &Config) {
        (**self).start(config);
    }
    fn event(&mut self, event: Event) {
        (**self).event(event);
    }
    fn progress(&mut self, progress: Progress) {
        (**self).progress(progress);
    }
    fn stop_requested(&mut self) -> Option<StopCause> {
        (**self).stop_requested()
    }
}

/// Two observers at once (say, a trace writer and a progress bar).
impl<A: Observer, B: Observer> Observer for (A, B) {
    const WANTS_EVENTS: bool = A::WANTS_EVENTS || B::WANTS_EVENTS;
    const WANTS_PROGRESS: bool = A::WANTS_PROGRESS || B::WANTS_PROGRESS;
    fn start(&mut self, config: &Config) {
        self.0.start(config);
        self.1.start(config);
    }
    fn event(&mut self, event: Event) {
        if A::WANTS_EVENTS {
            self.0.event(event);
        }
        if B::WANTS_EVENTS {
            self.1.event(event);
        }
    }
    fn progress(&mut self, progress: Progress) {
        self.0.progress(progress);
        self.1.progress(progress);
    }
    fn stop_requested(&mut self) -> Option<StopCause> {
        let a = if A::WANTS_PROGRESS {
            self.0.stop_requested()
        } else {
            None
        };
        a.or_else(|| {
            if B::WANTS_PROGRESS {
                self.1.stop_requested()
            } else {
                None
            }
        })
    }
}

/// The observer that ignores everything.
impl Observer for () {
    const WANTS_EVENTS: bool = false;
}

/// An observer that keeps every event.
impl Observer for Vec<Event> {
    fn event(&mut self, event: Event) {
        self.push(event);
    }
}
