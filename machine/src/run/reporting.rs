//! The run loop's side of telemetry: progress, stop polling, the executed-instruction log and
//! the scheduler's and locks' events, told to the observer from the machine's state.

use super::event_loop::Run;
use crate::backend::{Backend, CoreState};
use crate::cores::Mode;
use crate::event_key::EventKey;
use crate::observe::{Event, Executed, Observer, Progress};
use crate::scheduler::Wait;
use crate::stop::StopCause;

/// The run loop's side of telemetry: what it tells the observer of the machine's state.
impl<B: Backend, O: Observer> Run<'_, B, O> {
    /// Checkpoint `cycle` is reached: the progress bar hears of it, once.
    pub(super) fn progress_at_checkpoint(&mut self, cycle: u64) {
        if O::WANTS_PROGRESS && cycle > self.tele.progress_cycle {
            self.tele.progress_cycle = cycle;
            let progress = self.progress();
            self.tele.observer.progress(progress);
            self.tele.pending_polls += 1;
        }
    }

    /// Where the run stands, for the progress bar.
    pub(super) fn progress(&self) -> Progress {
        Progress {
            frames: self.driver.frames_done,
            tasks: self.driver.ts.summary.tasks,
            instructions: self.cores.state.iter().map(|c| c.instructions).sum(),
            cycle: self.tele.progress_cycle,
        }
    }

    /// Whether the observer asks to stop the run; if it does, the watchdog limit comes down
    /// to the cycle the run has reached: the earliest pending event, or any later cycle a
    /// core or the scheduler has already acted in. Asked only where the observer hears of
    /// progress, so at most once a frame or a checkpoint.
    pub(super) fn poll_stop(&mut self) -> bool {
        if !O::WANTS_PROGRESS || self.tele.pending_polls == 0 {
            return false;
        }
        self.tele.pending_polls = 0;
        let Some(cause) = self.tele.observer.stop_requested() else {
            return false;
        };
        self.stop_where_reached(cause);
        true
    }

    /// Bring the watchdog limit down to the cycle the run has reached (see
    /// [`Run::poll_stop`]), to end the run as stopped by `cause`.
    pub(super) fn stop_where_reached(&mut self, cause: StopCause) {
        let mut reached = self.cores.earliest(None).map_or(0, EventKey::cycle);
        for j in 0..16 {
            if matches!(self.cores.mode(j), Mode::Runnable | Mode::Parked { .. }) {
                reached = reached.max(self.cores.state[j].cycle);
            }
        }
        if let Some(t) = self.driver.ts.last_activity() {
            reached = reached.max(t + 1);
        }
        if let Some(c) = self.driver.last_core_cycle {
            reached = reached.max(c + 1);
        }
        let limit = self.config.max_cycles.min(reached);
        self.config.max_cycles = limit;
        self.driver.ts.lower_limit(limit);
        self.tele.stopped = Some(cause);
    }

    /// Report core `i`'s instruction since `before`, if it executed one.
    pub(super) fn log_executed(&mut self, i: usize, before: &CoreState) {
        if self.cores.state[i].instructions == before.instructions {
            return;
        }
        let instr = self.cores.part(i).instrs[usize::from(before.ip & 0xF)];
        let e = Executed::between(
            instr,
            self.cores.part(i).frame,
            before,
            &self.cores.state[i],
        );
        if self
            .tele
            .executed
            .first()
            .is_some_and(|f| f.cycle != e.cycle)
        {
            self.tele.report_executed();
        }
        self.tele.executed.push(e);
    }

    pub(super) fn observe_wait(&mut self, frame: usize, wait: Option<Wait>) {
        if let Some(w) = wait {
            self.tele.observer.event(Event::SchedulerWait {
                frame,
                from: w.from,
                to: w.to,
                cause: w.cause,
            });
        }
    }

    /// Hand the sequences closed since the last call to the observer.
    pub(super) fn observe_locks(&mut self) {
        if let Some(log) = &mut self.memory.closed {
            for (core, addr, from, to) in log.drain(..) {
                self.tele.observer.event(Event::LockHeld {
                    core,
                    addr,
                    from,
                    to,
                });
            }
        }
    }
}
