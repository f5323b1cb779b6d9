//! What a run's observer hears and asks, apart from the machine itself: events are sent
//! by the run loop through it, and it keeps progress reports and stop requests, the log of
//! executed instructions in (cycle, core id) order, and a debugger's stops.

use crate::event_key::EventKey;
use crate::held::Held;
use crate::memory::SharedMemory;
use crate::observe::{Executed, Observer, StopNote, Stops};
use crate::stop::StopCause;

/// A run's telemetry: see the module docs.
pub(crate) struct Telemetry<'a, O: Observer> {
    pub(crate) observer: Held<'a, O>,
    /// Why the run was stopped from outside, once it was; the watchdog limit is then lowered
    /// to the cycle the run had reached, and `asked_limit` keeps the one the config asked.
    pub(crate) stopped: Option<StopCause>,
    pub(crate) asked_limit: u64,
    /// Progress reports since the observer was last asked whether to stop.
    pub(crate) pending_polls: u32,
    /// Every run of cores executes one instruction each, reported to the observer
    /// ([`Observer::executed`]), until it has enough.
    pub(crate) stepping: bool,
    /// The instructions of the latest cycle executed, not yet reported: groups of one cycle
    /// run in the order of their lowest cores, so the cycle's instructions are put in core
    /// order before they are reported.
    pub(crate) executed: Vec<Executed>,
    /// The last checkpoint reported to the progress bar.
    pub(crate) progress_cycle: u64,
    /// Task records handed to the observer as the run went ([`Observer::WANTS_TASKS`]).
    pub(crate) tasks_delivered: usize,
    /// A debugger's stops ([`Observer::stops`]), and the earliest (cycle, core) a core came
    /// to one, as a raw event key.
    pub(crate) stops: Option<Box<Stops>>,
    pub(crate) stop_noted: u64,
    /// The first cycle whose instructions the observer wants ([`Observer::executed_from`]),
    /// and whether the run has come to it.
    pub(crate) executed_from: u64,
    pub(crate) began_steps: bool,
}

impl<'a, O: Observer> Telemetry<'a, O> {
    /// Telemetry for a run of `observer`, with a debugger's `stops`, instructions wanted
    /// from `executed_from`, and the watchdog limit the config asks.
    #[inline]
    pub(crate) fn new(
        observer: Held<'a, O>,
        stops: Option<Box<Stops>>,
        executed_from: u64,
        asked_limit: u64,
    ) -> Self {
        Telemetry {
            observer,
            stopped: None,
            asked_limit,
            pending_polls: 0,
            stepping: O::WANTS_EXECUTED,
            executed: Vec::new(),
            progress_cycle: 0,
            tasks_delivered: 0,
            stops,
            stop_noted: u64::MAX,
            executed_from,
            began_steps: false,
        }
    }

    /// Whether instructions of `cycle` are reported one at a time to the observer.
    #[inline]
    pub(crate) fn steps(&self, cycle: u64) -> bool {
        O::WANTS_EXECUTED && self.stepping && cycle >= self.executed_from
    }

    /// Before the first instruction reported: memory as its cycle begins, since every
    /// core has run up to that cycle (the earliest event) and none past it.
    #[inline]
    pub(crate) fn begin_steps(&mut self, memory: &SharedMemory) {
        if !self.began_steps {
            self.began_steps = true;
            let memory = memory.bytes();
            self.observer.executed_memory(&memory);
        }
    }

    /// A core came to a debugger's breakpoint in `cycle` (`at`: the core, frame and IP), or
    /// a watched byte was written (`at` is `None`; `cycle` is `u64::MAX` where none was):
    /// tell the observer of the earliest in (cycle, core) order, and ask it soon whether to
    /// stop.
    #[inline]
    pub(crate) fn note_stop(&mut self, cycle: u64, at: Option<(u8, usize, u8)>) {
        if cycle == u64::MAX {
            return;
        }
        let key = EventKey::new(cycle, at.map_or(0, |(core, _, _)| core)).raw();
        if key < self.stop_noted {
            self.stop_noted = key;
            self.observer.stop_noted(StopNote { cycle, at });
            self.pending_polls += 1;
        }
    }

    /// Report the buffered instructions of one cycle in core order.
    #[inline]
    pub(crate) fn report_executed(&mut self) {
        self.executed.sort_unstable_by_key(|e| e.core);
        for e in std::mem::take(&mut self.executed) {
            if self.stepping && !self.observer.executed(&e) {
                self.stepping = false;
            }
        }
    }
}
