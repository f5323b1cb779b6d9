//! The spec dialect's run loop, `Run`: the coordinator that always serves the earliest
//! pending event in the (cycle, core id) order of decisions.md. Its parts are their own
//! types: the scheduler driver, the livelock proofs, the telemetry and the lock waits.

use super::driver::{Driver, SchedulerBound, SchedulerState, Touch};
use super::proofs::Proofs;
use super::telemetry::Telemetry;
use super::Start;
use crate::backend::{Backend, CoreExit, DirectBounds, GroupShape, Port, PortEnd};
use crate::config::{Config, TaskLog, INSTRUCTION_CYCLES};
use crate::cores::{lanes_of, CoreTable, Mode};
use crate::event_key::EventKey;

use crate::frame_table::FrameTable;
use crate::held::Held;
use crate::isa::{Flow, MemOp};
use crate::lock_wait::{Herd, LockWaits};
use crate::memory::{bank_of, FaultRule, Refusal, SharedMemory, Stall, Wakes, BANKS};
use crate::observe::{lock_stall_event, Event, Observer, StallCause};
use crate::report::{CoreCounters, RunError, RunFailure, RunReport};
use crate::scheduler::TaskScheduler;
use crate::semantics::execute;
use crate::semantics::{Access, Concrete, Effect};
use crate::task_memory::{FrameSource, TaskMemory};

/// The limits a run works within: the watchdog at most [`Config::MAX_CYCLE_LIMIT`], checkpoints at
/// least a cycle apart.
pub(super) fn bounded(config: &Config) -> Config {
    Config {
        max_cycles: config.max_cycles.min(Config::MAX_CYCLE_LIMIT),
        checkpoint_cycles: config.checkpoint_cycles.max(1),
        ..*config
    }
}

/// One run of the machine from `start`, to its end or its failure. A failure comes with
/// the number of task records the observer took as the run went, and with the state as
/// the run left it, which for a fault or a livelock is not yet the state as its cycle
/// began. `None` where `start` is a snapshot that cannot start this run.
pub(super) fn run_once<B: Backend, O: Observer>(
    backend: &mut B,
    source: &mut dyn FrameSource,
    start: Start<'_>,
    config: &Config,
    observer: &mut O,
) -> Option<Result<RunReport, (Box<RunFailure>, usize)>> {
    let mut run = match start {
        Start::Image(memory) => Run::new(
            Held::Lent(backend),
            Held::Lent(source),
            memory,
            config,
            Held::Lent(observer),
        ),
        Start::Snapshot(snapshot) => Run::resume(
            Held::Lent(backend),
            Held::Lent(source),
            snapshot,
            config,
            Held::Lent(observer),
            Vec::new(),
        )
        .ok()?,
    };
    let outcome = run.go();
    Some(run.conclude(outcome))
}

impl<'a, B: Backend, O: Observer> Run<'a, B, O> {
    /// A run before its first cycle (the observer told it starts).
    pub(crate) fn new(
        backend: Held<'a, B>,
        source: Held<'a, dyn FrameSource + 'a>,
        memory: &[u8],
        config: &Config,
        mut observer: Held<'a, O>,
    ) -> Self {
        observer.start(config);
        let config = bounded(config);
        let mut shared = SharedMemory::new(memory, config.bank_conflicts);
        if O::WANTS_EVENTS {
            shared.closed = Some(Vec::new());
        }
        let stops = observer.stops().map(Box::new);
        if let Some(s) = stops.as_deref().filter(|s| !s.watches.is_empty()) {
            shared.watch(&s.watches, s.from, s.also);
        }
        let executed_from = observer.executed_from();
        Run {
            driver: Driver::new(TaskScheduler::new(TaskMemory::new(source), &config)),
            backend,
            config,
            memory: shared,
            tele: Telemetry::new(observer, stops, executed_from, config.max_cycles),
            cores: CoreTable::new(),
            counters: [CoreCounters::default(); 16],
            bounds: DirectBounds::default(),
            frame_table: FrameTable::new(),
            waits: LockWaits::new(O::WANTS_EVENTS),
            proofs: Proofs::new(config.checkpoint_cycles),
        }
    }

    /// The run's report for how [`Run::go`] ended. A failure comes with the number of task
    /// records the observer took as the run went, and with the state as the run left it,
    /// which for a fault or a livelock is not yet the state as its cycle began.
    pub(crate) fn conclude(
        &mut self,
        outcome: Result<(), RunError>,
    ) -> Result<RunReport, (Box<RunFailure>, usize)> {
        let config = self.config;
        let run = self;
        // A fault or a livelock leaves the state as its cycle began (see below), so the log
        // leaves out the instructions lower cores executed in that cycle; a fault's are handed
        // to the observer apart, after the log.
        let mut before_fault = Vec::new();
        if let Err(RunError::Fault { cycle, core, .. }) = &outcome {
            before_fault = run
                .tele
                .executed
                .iter()
                .filter(|e| e.cycle == *cycle && e.core < *core)
                .copied()
                .collect();
            before_fault.sort_unstable_by_key(|e| e.core);
        }
        if let Err(RunError::Fault { cycle, .. } | RunError::Livelock { cycle, .. }) = &outcome {
            run.tele.executed.retain(|e| e.cycle < *cycle);
        }
        run.tele.report_executed();
        if run.tele.stepping {
            for e in &before_fault {
                run.tele.observer.executed_before_fault(e);
            }
        }
        let streams_tasks = O::WANTS_TASKS && config.tasks == TaskLog::All;
        let failure = match outcome {
            Ok(()) => {
                let mut report = run.report();
                if streams_tasks {
                    for record in std::mem::take(&mut report.tasks) {
                        run.tele.observer.task(&record);
                    }
                }
                return Ok(report);
            }
            Err(error) => {
                let cycle = match &error {
                    RunError::Fault { cycle, .. } | RunError::Livelock { cycle, .. } => *cycle,
                    RunError::Watchdog { limit, .. } => *limit,
                    RunError::Stopped { cycle, .. }
                    | RunError::TaskLogFull { cycle, .. }
                    | RunError::EndlessWalk { cycle, .. } => *cycle,
                    RunError::Backend { .. } | RunError::Internal { .. } | RunError::Load(_) => {
                        run.end_cycle()
                    }
                };
                // A run that ends before its whole program was read still refuses a malformed
                // one, as loading the image whole would have (not a run stopped from outside).
                let error = match error {
                    RunError::Stopped { .. } | RunError::TaskLogFull { .. } | RunError::Load(_) => {
                        error
                    }
                    _ => run.driver.ts.load_error().map_or(error, RunError::Load),
                };
                let mut state = run.report();
                state.cycles = cycle;
                Box::new(RunFailure { error, state })
            }
        };
        Err((failure, run.tele.tasks_delivered))
    }
}

/// The spec dialect's run: a coordinator of the machine's parts, each in a type of its own.
pub(crate) struct Run<'a, B: Backend, O: Observer> {
    pub(super) backend: Held<'a, B>,
    pub(super) config: Config,
    /// The task scheduler and what the loop keeps to drive it ([`Driver`]).
    pub(super) driver: Driver<'a>,
    pub(super) memory: SharedMemory,
    pub(super) cores: CoreTable<B::Code>,
    pub(super) counters: [CoreCounters; 16],
    /// The per-bank bounds compiled code reads; lent to each port.
    pub(super) bounds: DirectBounds,
    /// Every distinct instruction frame issued, decoded and prepared once.
    pub(super) frame_table: FrameTable<B::Code>,
    /// Every core's lock wait and the stall ledger; lent to each port.
    pub(super) waits: LockWaits,
    /// Loop watches and checkpoints: the livelock proofs ([`Proofs`]).
    pub(super) proofs: Proofs,
    /// What the observer hears and asks: events, progress, stops, executed instructions
    /// ([`Telemetry`]).
    pub(super) tele: Telemetry<'a, O>,
}

impl<B: Backend, O: Observer> Run<'_, B, O> {
    pub(super) fn go(&mut self) -> Result<(), RunError> {
        let mut ts = SchedulerBound {
            before: [EventKey::from_raw(0); 16],
            state: SchedulerState::Blocked,
            touch: Touch::Before,
        };
        let mut ts_fresh = false;
        loop {
            // The scheduler's bound stays valid as cores advance (it is a lower bound on its
            // next decision); it is recomputed when a core's end may let it act, or when the
            // earliest core event reaches it. A deferred bound is asked again before a
            // long run past it (`long_past_pending`); each such ask issues a task or leaves
            // the bound not deferred, so the asking ends.
            if O::WANTS_PROGRESS && self.tele.stopped.is_none() && self.poll_stop() {
                ts_fresh = false;
            }
            let mut earliest = self.cores.earliest(None);
            while !ts_fresh
                || earliest.map_or(ts.state == SchedulerState::Pending, |k| {
                    k >= ts.before[usize::from(k.core())] || self.long_past_pending(k, &ts)
                })
            {
                self.advance_scheduler(false, &mut ts)?;
                ts_fresh = true;
                earliest = self.cores.earliest(None);
            }
            let Some(key) = earliest else {
                return match ts.state {
                    SchedulerState::Done => Ok(()),
                    SchedulerState::Limit => Err(self.limit_reached()),
                    SchedulerState::Blocked | SchedulerState::Pending => Err(RunError::Internal {
                        frame: self.driver.ts.next_frame(),
                        message: "the scheduler waits on no running core".into(),
                    }),
                };
            };
            if key.cycle() >= self.config.max_cycles {
                // Every core waits at or past the limit, so every decision the scheduler
                // can take before it is now known, whatever its last bound left open: the
                // state at the limit holds every frame processed in a cycle below it.
                self.advance_scheduler(true, &mut ts)?;
                return Err(self.limit_reached());
            }
            // Every event of a checkpoint cycle offers the checkpoint, since a core may come
            // to it (a task starting there) after the first; past it, the next one is due.
            let cycle = key.cycle();
            if cycle >= self.proofs.next_checkpoint {
                let every = self.config.checkpoint_cycles;
                if cycle % every == 0 {
                    if ts.state == SchedulerState::Pending {
                        self.advance_scheduler(true, &mut ts)?;
                    }
                    self.progress_at_checkpoint(cycle);
                    let frames_left = self.driver.ts.next_frame().is_some();
                    if self.proofs.checkpoint(&mut self.cores, cycle, frames_left) {
                        continue;
                    }
                } else {
                    self.proofs.next_checkpoint = (cycle / every + 1).saturating_mul(every);
                }
            }
            let i = usize::from(key.core());
            debug_assert!(
                key < ts.before[i],
                "event {key:?} at or past the scheduler bound {:?}, fresh {ts_fresh}",
                ts.before[i]
            );
            let ends = self.driver.ends;
            match self.cores.mode(i) {
                Mode::Faulted { rule, cycle } => return Err(self.fault(i, rule, cycle, None)),
                Mode::Looping { period, polls } => return Err(self.livelock(i, period, polls)),
                Mode::Runnable => match self.group_of(i) {
                    Some(group) => self.run_cores(group, i, true, &mut ts),
                    None => self.run_cores(1 << i, i, false, &mut ts),
                },
                // Cores parked at one access in one cycle go on as a group where the backend
                // takes it. If the first of them makes no progress (its access stalls on a
                // lock held outside the group, faults or conflicts), nothing else moved,
                // and the loop performs it itself.
                Mode::Parked { bank_retry: false } => match self.group_of(i) {
                    Some(group) if group != 1 << i => {
                        self.run_cores(group, i, true, &mut ts);
                        if self.cores.mode(i) == (Mode::Parked { bank_retry: false })
                            && self.cores.key(i) == key
                        {
                            self.perform_parked(i)?;
                        }
                    }
                    _ => self.perform_parked(i)?,
                },
                Mode::Parked { .. } => self.perform_parked(i)?,
                Mode::Idle | Mode::Sleeping { .. } => {
                    return Err(RunError::Internal {
                        frame: Some(self.cores.part(i).frame),
                        message: format!("core {i} has an event but is idle or asleep"),
                    })
                }
            }
            if self.driver.ends != ends {
                ts_fresh = false;
            }
        }
    }

    /// The cores of `running`'s task (all of them, `running` included) where the bytes its
    /// frame's cores touch are private ([`Part::private`](crate::cores::Part::private)): they never meet in memory, so
    /// their accesses need not take turns among themselves. Else 0.
    fn private_task(&self, running: u16) -> u16 {
        let part = self.cores.part(running.trailing_zeros() as usize & 0xF);
        if part.private {
            self.cores.frame_cores(part.frame)
        } else {
            0
        }
    }

    /// For each bank, the earliest event of a core outside `running` that may touch it: its
    /// own next event, or for a sleeper its lock holder's (it wakes no earlier). A newly
    /// issued task may touch any bank, so nothing passes the scheduler's bound. The other
    /// cores of a task with private bytes (`private`) do not count: no access of theirs
    /// meets one of `running`'s. A fault or a loop of theirs still does.
    fn bank_horizon(&self, running: u16, private: u16, ts_bound: EventKey) -> [u64; BANKS] {
        let mut any = ts_bound;
        let mut h = [EventKey::NEVER; BANKS];
        let mut add = |key: EventKey, banks: u16| {
            if banks == 0xFFFF {
                any = any.min(key);
            } else {
                let mut m = banks;
                while m != 0 {
                    let b = m.trailing_zeros() as usize;
                    h[b] = h[b].min(key);
                    m &= m - 1;
                }
            }
        };
        // Sleepers count per sequence, since they share their holder's key: the banks
        // each bank's sleepers may touch once they wake.
        let mut sleepers = [0u16; BANKS];
        let mut asleep = 0u16;
        for j in lanes_of(self.cores.busy() & !running) {
            let mine = private & (1 << j) != 0;
            match self.cores.mode(j) {
                Mode::Idle => {}
                Mode::Runnable | Mode::Parked { .. } | Mode::Sleeping { .. } if mine => {}
                Mode::Runnable | Mode::Parked { .. } => add(self.cores.key(j), self.cores.banks[j]),
                Mode::Faulted { .. } | Mode::Looping { .. } => add(self.cores.key(j), 0xFFFF),
                Mode::Sleeping { bank, .. } => {
                    sleepers[bank] |= self.cores.banks[j];
                    asleep |= 1 << bank;
                }
            }
        }
        while asleep != 0 {
            let bank = asleep.trailing_zeros() as usize;
            asleep &= asleep - 1;
            match self.memory.bank_lock(bank) {
                // A sleeper on a sequence one of `running` holds wakes only when that core
                // closes it through the port, which then tightens the horizon itself.
                Some((holder, _)) if running & (1 << holder) != 0 => {}
                Some((holder, _)) => add(self.cores.key(usize::from(holder)), sleepers[bank]),
                None => {}
            }
        }
        h.map(|x| x.min(any).raw())
    }

    /// The cores that run with core `i`, the earliest event, where the backend takes them
    /// as a group ([`GroupShape::led_by`]).
    fn group_of(&self, i: usize) -> Option<u16> {
        if !self.backend.takes_groups() {
            return None;
        }
        let shape = GroupShape::led_by(&self.cores, i);
        self.backend.takes_group(shape).then_some(shape.cores)
    }

    /// Run `cores`: one core alone through [`Backend::run_core`], or a group together
    /// through [`Backend::run_group`]; then apply what became of each core. `lead` is the
    /// core of `cores` whose event is the earliest: a cohort's cores a cycle behind it may
    /// have lower ids.
    fn run_cores(&mut self, cores: u16, lead: usize, together: bool, ts: &mut SchedulerBound) {
        // A parked retry that runs is no longer the loop's to settle.
        self.waits.run(cores);
        if self.tele.steps(self.cores.state[lead].cycle) {
            self.tele.begin_steps(&self.memory);
        }
        let ts_bound = lanes_of(cores)
            .map(|j| ts.before[j])
            .min()
            .unwrap_or(EventKey::NEVER);
        let private = self.private_task(cores);
        let touch = self.touch_bound(ts, ts_bound);
        let horizon = self.bank_horizon(cores, private, touch);
        let code = self.cores.codes[usize::from(self.cores.code_of[lead])]
            .as_ref()
            .expect("a runnable core has code");
        // Cores of a frame that can loop stop at the next checkpoint (see `checkpoint`); the
        // cores of one run all run the lead's frame.
        let mut limit = self.config.max_cycles;
        if self.cores.part(lead).cyclic {
            let every = self.config.checkpoint_cycles;
            let cycle = self.cores.state[lead].cycle;
            limit = limit.min((cycle / every + 1).saturating_mul(every));
        }
        let stepped = self.tele.steps(self.cores.state[lead].cycle);
        if O::WANTS_EXECUTED && self.tele.stepping && !stepped {
            // Full speed up to the first cycle the observer wants, one at a time from it.
            limit = limit.min(self.tele.executed_from);
        }
        let before = if stepped {
            limit = limit.min(self.cores.state[lead].cycle + INSTRUCTION_CYCLES);
            Some(self.cores.state.clone())
        } else {
            None
        };
        let mut port = Port::new(
            &mut self.memory,
            horizon,
            &self.cores.banks,
            &self.bounds,
            limit,
            cores,
            &mut self.waits,
        );
        port.set_private(private);
        if let Some(stops) = &self.tele.stops {
            let frame = self.cores.part(lead).frame;
            // Once a core came to a stop, coming to one later changes nothing: the run's
            // cores past that cycle run as in a plain run.
            let noted = EventKey::from_raw(self.tele.stop_noted).cycle();
            let mask = match stops.breaks.get(&frame) {
                Some(&mask) if self.cores.state[lead].cycle <= noted => mask,
                _ => 0,
            };
            port.set_stops(mask, stops.from, stops.skip);
        }
        let exits = if together {
            self.backend
                .run_group(code, cores, &mut self.cores.state, &mut port)
        } else {
            let mut exits: [Option<CoreExit>; 16] = [None; 16];
            let core = &mut self.cores.state[lead];
            exits[lead] = Some(self.backend.run_core(code, core, &mut port));
            exits
        };
        let PortEnd {
            mut woken,
            opened,
            asleep,
            stopped_at,
            stopped_ip,
        } = port.finish();
        if self.tele.stops.is_some() {
            let frame = self.cores.part(lead).frame;
            if stopped_at != u64::MAX {
                let key = EventKey::from_raw(stopped_at);
                self.tele
                    .note_stop(key.cycle(), Some((key.core(), frame, stopped_ip)));
            }
            self.tele.note_stop(self.memory.first_watched_write(), None);
        }
        if let Some(before) = before {
            for j in lanes_of(cores) {
                self.log_executed(j, &before[j]);
            }
        }
        while woken != 0 {
            let w = woken.trailing_zeros() as usize;
            woken &= woken - 1;
            self.wake(w as u8, self.waits.retry_at(w));
        }
        for stall in self.waits.drain_log() {
            self.tele.observer.event(lock_stall_event(stall));
        }
        // Cores whose parts ended are ended together (a group usually ends as one).
        // Over all 16 exits without a branch first: in a short task every core ends, and
        // only the others need a step each (in core order, as before).
        let (mut ended, mut by_ready) = (0u16, 0u16);
        for (j, exit) in exits.iter().enumerate() {
            let (end, ready) = match exit {
                Some(CoreExit::Ended { by_ready }) => (1, u16::from(*by_ready)),
                _ => (0, 0),
            };
            ended |= end << j;
            by_ready |= ready << j;
        }
        ended &= cores;
        by_ready &= cores;
        for j in lanes_of(cores & !ended) {
            match exits[j] {
                Some(CoreExit::Asleep) => {
                    debug_assert!(asleep & (1 << j) != 0, "core {j} exits asleep");
                    self.asleep(j);
                }
                Some(CoreExit::Ended { .. }) => unreachable!("core {j}'s end is in `ended`"),
                Some(exit) => self.after_exit(j, exit),
                None => self.cores.set_mode(j, Mode::Runnable),
            }
        }
        if ended != 0 {
            self.end_parts(ended, by_ready);
        }
        let mut opened = opened;
        while opened != 0 {
            let bank = opened.trailing_zeros() as usize;
            opened &= opened - 1;
            self.settle(bank);
        }
        self.observe_locks();
    }

    fn after_exit(&mut self, i: usize, exit: CoreExit) {
        match exit {
            // Stopped at a checkpoint before a register instruction: it simply goes on.
            CoreExit::Parked
                if !self.cores.part(i).instrs[usize::from(self.cores.state[i].ip & 0xF)]
                    .is_memory() =>
            {
                self.cores.set_mode(i, Mode::Runnable)
            }
            CoreExit::Parked => self.cores.set_mode(i, Mode::Parked { bank_retry: false }),
            CoreExit::Asleep => unreachable!("run_cores puts a core to sleep from its port"),
            CoreExit::Ended { by_ready } => {
                self.end_parts(1 << i, u16::from(by_ready) << i);
            }
        }
    }

    /// The parts of `cores` ended, each after the instruction before its cycle (by `ready`
    /// for the cores of `by_ready`). A core that still holds a lock faults instead. The
    /// others leave their tasks; the scheduler hears of all that end in one cycle at once.
    fn end_parts(&mut self, cores: u16, by_ready: u16) {
        let holding = cores & self.memory.holders();
        for i in lanes_of(holding) {
            let held = self.memory.held(i as u8).expect("a holder holds a lock");
            let rule = if by_ready & (1 << i) != 0 {
                FaultRule::ReadyWhileHolding { held }
            } else {
                FaultRule::FrameEndWhileHolding { held }
            };
            let end = self.cores.state[i].cycle - 1;
            self.cores.set_mode(i, Mode::Faulted { rule, cycle: end });
        }
        let ending = cores & !holding;
        if ending == 0 {
            return;
        }
        let lead = ending.trailing_zeros() as usize;
        let first = self.cores.state[lead].cycle - 1;
        let (mut together, mut last) = (0u16, first);
        // Most often the cores are one task's, ending in one cycle (a group ends as one):
        // its part is looked up once, and nothing is compared again a core.
        let one_task = lanes_of(ending).all(|i| {
            self.cores.state[i].cycle - 1 == first
                && self.cores.code_of[i] == self.cores.code_of[lead]
        });
        if one_task {
            let (start, frame) = (self.cores.part(lead).start, self.cores.part(lead).frame);
            for i in lanes_of(ending) {
                self.note_part(i, frame, start, first);
            }
            together = ending;
        } else {
            // The cores of a task share its part: looked up once a task, in core order all
            // the same.
            let mut task = (usize::MAX, 0, 0);
            for i in lanes_of(ending) {
                let end = self.cores.state[i].cycle - 1;
                if end == first {
                    together |= 1 << i;
                } else {
                    self.driver.ts.cores_ended(1 << i, end);
                }
                last = last.max(end);
                let slot = usize::from(self.cores.code_of[i]);
                if slot != task.0 {
                    task = (slot, self.cores.part(i).start, self.cores.part(i).frame);
                }
                let (_, start, frame) = task;
                self.note_part(i, frame, start, end);
            }
        }
        self.driver.ts.cores_ended(together, first);
        self.cores.end(ending);
        self.driver.ends += 1;
        self.driver.last_core_cycle =
            Some(self.driver.last_core_cycle.map_or(last, |l| l.max(last)));
    }

    /// Core `i`'s part of `frame`, from `start` to `end`, is over: its busy cycles and the
    /// observer's event.
    #[inline(always)]
    fn note_part(&mut self, i: usize, frame: usize, start: u64, end: u64) {
        self.counters[i].busy += end + 1 - start;
        self.tele.observer.event(Event::CorePart {
            core: i as u8,
            frame,
            start,
            end,
        });
    }

    /// The access of the memory instruction parked core `i` stopped at. Executing a memory
    /// instruction only reads registers; `complete` writes the loaded byte.
    fn parked_access(&self, i: usize) -> Result<Access<u8>, RunError> {
        let core = &self.cores.state[i];
        let instr = self.cores.part(i).instrs[usize::from(core.ip & 0xF)];
        let mut regs = core.regs;
        match execute(instr, &mut regs, core.id) {
            Effect::Memory(access) => Ok(access),
            _ => Err(RunError::Internal {
                frame: Some(self.cores.part(i).frame),
                message: format!(
                    "core {i} parked at IP {} which is not a memory instruction",
                    core.ip
                ),
            }),
        }
    }

    /// Perform the memory instruction a parked core stopped at; it is the earliest event.
    fn perform_parked(&mut self, i: usize) -> Result<(), RunError> {
        let access = self.parked_access(i)?;
        let cycle = self.cores.state[i].cycle;
        let before = self.tele.steps(cycle).then(|| self.cores.state[i].clone());
        if before.is_some() {
            self.tele.begin_steps(&self.memory);
        }
        self.waits.run(1 << i);
        if let Some(stops) = &self.tele.stops {
            let mask = stops
                .breaks
                .get(&self.cores.part(i).frame)
                .copied()
                .unwrap_or(0);
            let ip = self.cores.state[i].ip & 0xF;
            if mask >> ip & 1 != 0 && cycle >= stops.from && Some(cycle) != stops.skip {
                let frame = self.cores.part(i).frame;
                self.tele.note_stop(cycle, Some((i as u8, frame, ip)));
            }
        }
        let addr = access.address();
        let value = access.value.unwrap_or(0);
        match self.memory.perform(i as u8, cycle, access.op, addr, value) {
            Ok(performed) => {
                let core = &mut self.cores.state[i];
                let mut regs = Concrete {
                    regs: &mut core.regs,
                    core_id: core.id,
                };
                access.complete(&mut regs, performed.value);
                let exit = core.retire(Flow::Next);
                if let Some(before) = before {
                    self.log_executed(i, &before);
                }
                match exit {
                    Some(exit) => self.after_exit(i, exit),
                    None => self.cores.set_mode(i, Mode::Runnable),
                }
                self.wake_all(performed.wakes);
                if access.op == MemOp::LdSync {
                    self.settle(bank_of(addr));
                }
                if self.tele.stops.is_some() {
                    self.tele.note_stop(self.memory.first_watched_write(), None);
                }
                self.observe_locks();
            }
            Err(Refusal::Stall(Stall::Lock { .. })) => self.sleep(i, access.op, cycle, addr),
            Err(Refusal::Stall(Stall::BankConflict)) => {
                self.counters[i].stalls += 1;
                self.counters[i].bank_stalls += 1;
                self.tele.observer.event(Event::Stall {
                    core: i as u8,
                    from: cycle,
                    to: cycle + 1,
                    cause: StallCause::BankConflict,
                    addr,
                });
                self.cores.park_at(i, cycle + 1, true);
            }
            Err(Refusal::Fault(rule)) => return Err(self.fault(i, rule, cycle, Some(addr))),
        }
        Ok(())
    }

    /// Core `i`'s access in `cycle` to `addr` stalled on a lock: it sleeps from `cycle` until
    /// the sequence closes.
    fn sleep(&mut self, i: usize, op: MemOp, cycle: u64, addr: u16) {
        self.waits.sleep(&mut self.memory, i as u8, op, addr, cycle);
        self.asleep(i);
    }

    /// Core `i`, asleep in [`LockWaits`], sleeps in the run loop's view too.
    fn asleep(&mut self, i: usize) {
        let addr = self.waits.access(i).1;
        self.cores.set_mode(
            i,
            Mode::Sleeping {
                bank: bank_of(addr),
                addr,
            },
        );
    }

    /// A sequence just opened on `bank`: the retrying cores it blocks before they retry go
    /// back to sleep now ([`LockWaits::settle`]).
    fn settle(&mut self, bank: usize) {
        let (Some((holder, _)), Some(opened)) =
            (self.memory.bank_lock(bank), self.memory.opened_in(bank))
        else {
            return;
        };
        let herd = Table {
            cores: &mut self.cores,
            bank,
            max_cycles: self.config.max_cycles,
        };
        let slept = self
            .waits
            .settle(&mut self.memory, bank, holder, opened, herd);
        self.cores.mark_asleep(slept);
    }

    fn wake_all(&mut self, wakes: Wakes) {
        for (w, at) in wakes.iter() {
            self.wake(w, at);
        }
    }

    /// A sleeper retries in `at`; every cycle since its first stalled attempt was a stall.
    fn wake(&mut self, w: u8, at: u64) {
        let w = usize::from(w);
        if let Mode::Sleeping { .. } = self.cores.mode(w) {
            let stall = self.waits.wake_to_retry(w as u8, at);
            self.tele.observer.event(lock_stall_event(stall));
            self.cores.park_at(w, at, false);
        }
    }
}

/// The run loop's core table as a settling herd meets it ([`Herd`]).
struct Table<'t, C> {
    cores: &'t mut CoreTable<C>,
    /// The bank whose sequence the herd waits on.
    bank: usize,
    max_cycles: u64,
}

impl<C> Herd for Table<'_, C> {
    fn parked(&self, j: usize) -> Option<EventKey> {
        let key = self.cores.key(j);
        (matches!(self.cores.mode(j), Mode::Parked { .. }) && key.cycle() < self.max_cycles)
            .then_some(key)
    }

    fn asleep(&mut self, j: usize, addr: u16) {
        self.cores.place_asleep(
            j,
            Mode::Sleeping {
                bank: self.bank,
                addr,
            },
        );
    }
}
