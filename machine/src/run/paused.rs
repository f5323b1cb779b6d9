//! A run paused between calls of a live machine (`crate::live`): run on to a cycle, and
//! read or write the state where it stands.

use super::event_loop::Run;
use crate::backend::Backend;
use crate::held::Held;
use crate::memory::BANKS;
use crate::observe::Observer;
use crate::report::{KeptTasks, RunError, RunReport, UnfinishedCore};

/// What a live machine (`crate::live`) does with a spec-dialect run between calls.
impl<'a, B: Backend, O: Observer> Run<'a, B, O> {
    /// Run on until `cycle` begins, or the run ends or fails first: `Ok` where it ended,
    /// the watchdog at `cycle` where it paused there (below the watchdog the config
    /// asked). Pausing is the watchdog's stop, which leaves every core before the limit
    /// and the scheduler before any decision at or past it; raising the limit again
    /// leaves the run as it would have been, so paused runs give an unpaused run's results.
    pub(crate) fn run_until(&mut self, cycle: u64) -> Result<(), RunError> {
        let limit = cycle.min(self.tele.asked_limit);
        self.config.max_cycles = limit;
        self.driver.ts.set_limit(limit);
        self.go()
    }

    /// The watchdog the config asked for.
    pub(crate) fn asked_limit(&self) -> u64 {
        self.tele.asked_limit
    }

    /// The state so far (registers, memory, counters, the task records as `kept` says),
    /// with `cycles` the cycle the run is paused at.
    pub(crate) fn paused_report(&mut self, cycle: u64, kept: KeptTasks) -> RunReport {
        let mut report = self.report_tasks(kept);
        report.cycles = cycle;
        report
    }

    /// The cores whose parts have not ended, and what each waits for.
    pub(crate) fn unfinished(&mut self) -> Vec<UnfinishedCore> {
        match self.watchdog() {
            RunError::Watchdog { cores, .. } => cores,
            _ => unreachable!("watchdog() makes a watchdog report"),
        }
    }

    /// Every core's registers.
    pub(crate) fn registers(&self) -> [[u8; 16]; 16] {
        std::array::from_fn(|i| self.cores.state[i].regs)
    }

    /// The bytes of shared memory.
    pub(crate) fn memory(&self) -> Box<[u8; crate::memory::MEMORY_BYTES]> {
        self.memory.bytes()
    }

    /// The open sequence of each bank: (bank, holder core, locked address).
    pub(crate) fn locks(&self) -> Vec<(usize, u8, u16)> {
        (0..BANKS)
            .filter_map(|b| self.memory.bank_lock(b).map(|(h, a)| (b, h, a)))
            .collect()
    }

    /// The open sequence of each bank with the cycle of its `ld_sync`: (bank, holder core,
    /// locked address, cycle).
    pub(crate) fn locks_opened(&self) -> Vec<(usize, u8, u16, u64)> {
        (0..BANKS)
            .filter_map(|b| {
                let (h, a) = self.memory.bank_lock(b)?;
                Some((b, h, a, self.memory.opened_in(b)?))
            })
            .collect()
    }

    /// Write `byte` at `addr` between cycles: the host's write, not a core's access.
    pub(crate) fn poke(&mut self, addr: u16, byte: u8) {
        self.memory.poke(addr, byte);
    }

    /// Take the task log kept so far, in issue order (a run going back to a snapshot of
    /// itself takes its earlier records from it).
    pub(crate) fn take_records(&mut self) -> Vec<crate::scheduler::TaskRecord> {
        self.driver.ts.take_records()
    }

    /// Note where cores come to `stops` from now on, in place of the stops the observer
    /// asked for as the run started ([`Observer::stops`]); `None`: note nothing. Stops
    /// change how compiled code reaches them, never a result.
    pub(crate) fn set_stops(&mut self, stops: Option<crate::observe::Stops>) {
        self.tele.stops = stops.map(Box::new);
        self.tele.stop_noted = u64::MAX;
        self.memory.unwatch();
        if let Some(s) = self.tele.stops.as_deref().filter(|s| !s.watches.is_empty()) {
            self.memory.watch(&s.watches, s.from, s.also);
        }
    }

    /// The observer.
    pub(crate) fn observer(&self) -> &O {
        &self.tele.observer
    }

    /// The observer, to take what it kept.
    pub(crate) fn observer_mut(&mut self) -> &mut O {
        &mut self.tele.observer
    }

    /// The backend and the observer, the run over.
    pub(crate) fn into_parts(self) -> (Held<'a, B>, Held<'a, O>) {
        (self.backend, self.tele.observer)
    }
}
