//! The run loop's step of the task scheduler ([`Run::advance_scheduler`]), with its
//! deferred step for streams of short tasks and when a deferred step is asked at once
//! ([`Run::long_past_pending`]), and the bounds on running cores it reads.

use super::driver::{SchedulerBound, SchedulerState, Touch};
use super::event_loop::Run;
use crate::backend::Backend;
use crate::config::TaskLog;
use crate::cores::{lanes_of, Mode, Part};
use crate::event_key::EventKey;
use crate::observe::{Event, Observer};
use crate::report::RunError;
use crate::scheduler::Step;

/// The loop's step of the scheduler, and the bounds it reads.
impl<B: Backend, O: Observer> Run<'_, B, O> {
    /// Let the scheduler act until it must wait on cores. Sets `ts` to the event key before
    /// which no newly issued core can act, and the scheduler's state (in place: the bound is
    /// 16 keys, and a stream of short tasks asks once a task). Unless `settle`, and where
    /// no observer could tell, it stops after issuing a task whose bound is known without
    /// asking it again ([`SchedulerState::Pending`]): in a stream of short tasks that
    /// second step would only say it waits for the task just issued.
    pub(super) fn advance_scheduler(
        &mut self,
        settle: bool,
        ts: &mut SchedulerBound,
    ) -> Result<(), RunError> {
        self.refresh_bounds();
        if O::WANTS_TASKS && self.config.tasks == TaskLog::All {
            let before = self.cores.earliest(None).map_or(u64::MAX, |k| k.cycle());
            while let Some(record) = self.driver.ts.pop_final(before) {
                self.tele.observer.task(&record);
                self.tele.tasks_delivered += 1;
            }
        }
        loop {
            let step = self.driver.ts.step(&self.driver.lb);
            if O::WANTS_PROGRESS && matches!(step, Step::Control { .. } | Step::Issue { .. }) {
                self.driver.frames_done += 1;
                let progress = self.progress();
                self.tele.observer.progress(progress);
                self.tele.pending_polls += 1;
            }
            match step {
                Step::Control { frame, cycle, wait } => {
                    self.observe_wait(frame, wait);
                    self.tele
                        .observer
                        .event(Event::ControlFrame { frame, cycle });
                    let cf = *self.driver.ts.frames().group_control(frame);
                    let m = cf.r0_init_mask();
                    for c in 0..16 {
                        if m & (1 << c) != 0 {
                            self.cores.state[c].regs[0] = cf.init_r0[c];
                        }
                    }
                }
                Step::Issue {
                    frame,
                    mask,
                    issue,
                    start,
                    wait,
                } => {
                    self.observe_wait(frame, wait);
                    if start > issue {
                        self.tele.observer.event(Event::Broadcast {
                            frame,
                            mask,
                            fence: self.driver.ts.frames().group_control(frame).fence,
                            from: issue,
                            to: start - 1,
                        });
                    }
                    let bytes = *self.driver.ts.frames().raw(frame);
                    let dialect = self.driver.ts.frames().dialect();
                    let entry = self.frame_table.entry_read(&bytes, dialect);
                    let code = match &entry.code {
                        None => self.backend.prepare(&entry.frame),
                        Some(code) => self.backend.reissue(code),
                    }
                    .map_err(|e| RunError::Backend {
                        frame: Some(frame),
                        message: e.to_string(),
                    })?;
                    entry.code = Some(code.clone());
                    // Under the bank-conflict model two accesses to one bank in a cycle
                    // interact whatever their bytes.
                    let private = !self.memory.bank_conflicts()
                        && entry.banks.as_ref().is_some_and(|b| b.private_bytes());
                    let part = || Part {
                        instrs: entry.frame.instrs,
                        words: entry.frame.words,
                        frame,
                        start,
                        sync: entry.sync,
                        cyclic: entry.cyclic,
                        private,
                    };
                    let frame_banks = &entry.banks;
                    self.cores.start(mask, code, part, |id, regs| {
                        frame_banks.as_ref().map_or(0, |b| b.for_core(id, regs))
                    });
                    for (c, counters) in self.counters.iter_mut().enumerate() {
                        let member = mask & (1 << c) != 0;
                        counters.tasks += u64::from(member);
                        counters.ran |= member;
                    }
                    let lb = &mut self.driver.lb;
                    *lb = std::array::from_fn(|c| if mask & (1 << c) != 0 { start } else { lb[c] });
                    // Events and the instruction log tell the order of the scheduler's
                    // decisions among the cores' actions, so they see every step as it
                    // comes. Task records do not: each is handed over in issue order once
                    // its task has ended, and a deferred step issues the same tasks later
                    // (before any record after them can be final, and before the watchdog
                    // or a checkpoint reads the scheduler).
                    let unobserved = !O::WANTS_EVENTS && !O::WANTS_EXECUTED;
                    if unobserved && !settle {
                        if let Some((bound, awaited)) = self.driver.ts.next_start_bound() {
                            // The bound must be ahead of the next event, as a step's is.
                            if self
                                .cores
                                .earliest(None)
                                .is_some_and(|k| k < bound || awaited & (1 << k.core()) != 0)
                            {
                                ts.before = std::array::from_fn(|c| {
                                    if awaited & (1 << c) != 0 {
                                        EventKey::NEVER
                                    } else {
                                        bound
                                    }
                                });
                                ts.state = SchedulerState::Pending;
                                // From the scheduler's clock: the next decision is at or after it.
                                ts.touch = Touch::From(0);
                                return Ok(());
                            }
                        }
                    }
                }
                Step::Blocked { before, from } => {
                    *ts = SchedulerBound {
                        before,
                        state: SchedulerState::Blocked,
                        touch: Touch::From(from),
                    };
                    return Ok(());
                }
                Step::Unreadable => {
                    // A source that gave up waiting for input because the run was stopped:
                    // the stop, where the run had come, not a load error.
                    if let Some(cause) = self.driver.ts.frames().stopped() {
                        self.stop_where_reached(cause);
                        return Err(self.limit_reached());
                    }
                    return Err(match self.driver.ts.load_error() {
                        Some(e) => RunError::Load(e),
                        None => RunError::Internal {
                            frame: None,
                            message: "the program stopped being readable without an error".into(),
                        },
                    });
                }
                Step::Done => {
                    *ts = SchedulerBound {
                        before: [EventKey::NEVER; 16],
                        state: SchedulerState::Done,
                        touch: Touch::Before,
                    };
                    return Ok(());
                }
                Step::Limit => {
                    *ts = SchedulerBound {
                        before: [EventKey::NEVER; 16],
                        state: SchedulerState::Limit,
                        touch: Touch::Before,
                    };
                    return Ok(());
                }
            }
        }
    }

    /// The key before which no core of a task yet to issue touches memory, for cores whose
    /// tightest scheduler bound is `before`: `before` itself, or later where the frames to
    /// come are known ([`TaskScheduler::first_access_bound`](crate::scheduler::TaskScheduler::first_access_bound),
    /// each instruction frame's first access from its bank analysis, found again when it is
    /// issued). Worked out once per bound, and only where a run is bounded by it at all. A
    /// task issued just now then runs its short frame to its end rather than parking at
    /// each access the next task's start bounds, long before that task could touch memory.
    pub(super) fn touch_bound(&mut self, ts: &mut SchedulerBound, before: EventKey) -> EventKey {
        if before.is_never() {
            return before;
        }
        if let Touch::From(from) = ts.touch {
            let (scheduler, table) = (&self.driver.ts, &mut self.frame_table);
            let dialect = scheduler.frames().dialect();
            let key = scheduler.first_access_bound(from, |bytes| {
                let entry = table.entry_read(bytes, dialect);
                entry.banks.as_ref().and_then(|b| b.first_access())
            });
            ts.touch = key.map_or(Touch::Before, Touch::Key);
        }
        match ts.touch {
            Touch::Key(key) => before.max(key),
            _ => before,
        }
    }

    /// Whether the core of `key` is about to run on past a deferred scheduler bound
    /// ([`SchedulerState::Pending`]: the next task's earliest start, a broadcast after the
    /// one just issued) with memory accesses, in a frame that can loop. Its accesses past
    /// that bound would hand it back to the loop only to ask the scheduler the step it
    /// deferred, and run it again; asked now, the step usually says the next task waits for
    /// these cores, and they run to their end in one go. Frames that cannot loop end
    /// within 16 cycles, mostly before the bound matters, so they keep the deferral; a core
    /// the bound does not reach (the next decision waits for it to end) has nothing to ask.
    pub(super) fn long_past_pending(&self, key: EventKey, ts: &SchedulerBound) -> bool {
        let i = usize::from(key.core());
        ts.state == SchedulerState::Pending
            && !ts.before[i].is_never()
            && self.cores.banks[i] != 0
            && self.cores.part(i).cyclic
    }

    /// Lower bounds on the end of every running core's part, for the scheduler: a core with
    /// an event ends no earlier than it; a sleeper wakes no earlier than the lock holder's
    /// next event (only the holder's st_sync wakes it).
    pub(super) fn refresh_bounds(&mut self) {
        self.driver.lb = [0; 16];
        for i in lanes_of(self.cores.busy()) {
            self.driver.lb[i] = match self.cores.mode(i) {
                Mode::Idle => 0,
                Mode::Runnable
                | Mode::Parked { .. }
                | Mode::Faulted { .. }
                | Mode::Looping { .. } => self.cores.key(i).cycle(),
                Mode::Sleeping { bank, .. } => {
                    let since = self.waits.since(i);
                    let wake = self
                        .wake_key(bank)
                        .unwrap_or_else(|| self.first_opener(bank));
                    since.max(wake.cycle())
                }
            };
        }
    }

    /// The earliest event of a core that may touch `bank`, so open a sequence there: none
    /// can open, let alone close, before it. Where no running core may, the earliest event
    /// of any (a task yet to be issued starts no earlier).
    pub(super) fn first_opener(&self, bank: usize) -> EventKey {
        (0..16)
            .filter(|&j| self.cores.banks[j] & (1 << bank) != 0)
            .map(|j| self.cores.key(j))
            .min()
            .filter(|k| !k.is_never())
            .or_else(|| self.cores.earliest(None))
            .unwrap_or(EventKey::from_raw(0))
    }

    /// The earliest a sleeper on `bank` can act: the lock holder's next event. `None` where
    /// the bank has no open sequence yet: sleepers of a herd are put to sleep on the
    /// sequence their first retry (a running core's) is about to open, and until then only
    /// the cores that may open it bound them ([`Run::first_opener`]).
    pub(super) fn wake_key(&self, bank: usize) -> Option<EventKey> {
        self.memory
            .bank_lock(bank)
            .map(|(h, _)| self.cores.key(usize::from(h)))
    }
}
