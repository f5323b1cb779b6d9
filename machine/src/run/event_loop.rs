//! The spec dialect's run loop, `Run`: the coordinator that always serves the earliest
//! pending event in the (cycle, core id) order of decisions.md. Its parts are their own
//! types: the scheduler driver, the livelock proofs, the telemetry and the lock waits.

use super::driver::Driver;
use super::proofs::Proofs;
use super::telemetry::Telemetry;
use crate::backend::{shares_banks, Backend, CoreExit, DirectBounds, GroupShape, Port, PortEnd};
use crate::config::{Config, TaskLog, INSTRUCTION_CYCLES};
use crate::cores::{CoreTable, Mode, Part};

use crate::event_key::EventKey;
use crate::frame::InstrFrame;
use crate::frame_table::FrameTable;
use crate::held::Held;
use crate::isa::{Flow, MemOp};
use crate::livelock::FrameLoops;
use crate::lock_wait::LockWaits;
use crate::memory::{bank_of, FaultRule, Refusal, SharedMemory, Stall, Wakes, BANKS};
use crate::observe::{Event, Executed, Observer, Progress, StallCause};
use crate::report::{CoreCounters, CoreWait, RunError, RunFailure, RunReport, UnfinishedCore};
use crate::scheduler::{Step, TaskScheduler, Wait};
use crate::semantics::execute;
use crate::semantics::{Access, Concrete, Effect};
use crate::stop::StopCause;
use crate::task_memory::{FrameSource, TaskMemory};

#[derive(Clone, Copy, PartialEq, Eq)]
enum SchedulerState {
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
struct SchedulerBound {
    before: [EventKey; 16],
    state: SchedulerState,
}

/// The limits a run works within: the watchdog at most [`Config::MAX_CYCLE_LIMIT`], checkpoints at
/// least a cycle apart.
pub(super) fn bounded(config: &Config) -> Config {
    Config {
        max_cycles: config.max_cycles.min(Config::MAX_CYCLE_LIMIT),
        checkpoint_cycles: config.checkpoint_cycles.max(1),
        ..*config
    }
}

/// One run of the machine, to its end or its failure. A failure comes with the number of
/// task records the observer took as the run went, and with the state as the run left it,
/// which for a fault or a livelock is not yet the state as its cycle began.
pub(super) fn run_once<B: Backend, O: Observer>(
    backend: &mut B,
    source: &mut dyn FrameSource,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, (Box<RunFailure>, usize)> {
    let mut run = Run::new(
        Held::Lent(backend),
        Held::Lent(source),
        memory,
        config,
        Held::Lent(observer),
    );
    let outcome = run.go();
    run.conclude(outcome)
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
            proofs: Proofs::default(),
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
                    RunError::Stopped { cycle, .. } => *cycle,
                    RunError::TaskLogFull { cycle, .. } => *cycle,
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
    backend: Held<'a, B>,
    config: Config,
    /// The task scheduler and what the loop keeps to drive it ([`Driver`]).
    driver: Driver<'a>,
    memory: SharedMemory,
    cores: CoreTable<B::Code>,
    counters: [CoreCounters; 16],
    /// The per-bank bounds compiled code reads; lent to each port.
    bounds: DirectBounds,
    /// Every distinct instruction frame issued, decoded and prepared once.
    frame_table: FrameTable<B::Code>,
    /// Every core's lock wait and the stall ledger; lent to each port.
    waits: LockWaits,
    /// Loop watches and checkpoints: the livelock proofs ([`Proofs`]).
    proofs: Proofs,
    /// What the observer hears and asks: events, progress, stops, executed instructions
    /// ([`Telemetry`]).
    tele: Telemetry<'a, O>,
}

impl<B: Backend, O: Observer> Run<'_, B, O> {
    fn go(&mut self) -> Result<(), RunError> {
        let mut ts = SchedulerBound {
            before: [EventKey::from_raw(0); 16],
            state: SchedulerState::Blocked,
        };
        let mut ts_fresh = false;
        loop {
            // The scheduler's bound stays valid as cores advance (it is a lower bound on its
            // next decision); it is recomputed when a core's end may let it act, or when the
            // earliest core event reaches it.
            if O::WANTS_PROGRESS && self.tele.stopped.is_none() && self.poll_stop() {
                ts_fresh = false;
            }
            let mut earliest = self.cores.earliest(None);
            if !ts_fresh
                || earliest.map_or(ts.state == SchedulerState::Pending, |k| {
                    k >= ts.before[usize::from(k.core())]
                })
            {
                ts = self.advance_scheduler(false)?;
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
                self.advance_scheduler(true)?;
                return Err(self.limit_reached());
            }
            // Every event of a checkpoint cycle offers the checkpoint, since a core may come
            // to it (a task starting there) after the first; past it, the next one is due.
            let cycle = key.cycle();
            if cycle >= self.proofs.next_checkpoint {
                let every = self.config.checkpoint_cycles;
                if cycle % every == 0 {
                    if ts.state == SchedulerState::Pending {
                        ts = self.advance_scheduler(true)?;
                    }
                    if self.checkpoint(cycle) {
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
                    Some(group) => self.run_cores(group, i, true, &ts),
                    None => self.run_cores(1 << i, i, false, &ts),
                },
                // Cores parked at one access in one cycle go on as a group where the backend
                // takes it. If the first of them makes no progress (its access stalls on a
                // lock held outside the group, faults or conflicts), nothing else moved,
                // and the loop performs it itself.
                Mode::Parked { bank_retry: false } => match self.group_of(i) {
                    Some(group) if group != 1 << i => {
                        self.run_cores(group, i, true, &ts);
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

    /// Let the scheduler act until it must wait on cores. Returns the event key before which
    /// no newly issued core can act, and the scheduler's state. Unless `settle`, and where
    /// no observer could tell, it stops after issuing a task whose bound is known without
    /// asking it again ([`SchedulerState::Pending`]): in a stream of short tasks that
    /// second step would only say it waits for the task just issued.
    fn advance_scheduler(&mut self, settle: bool) -> Result<SchedulerBound, RunError> {
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
                    let entry = self.frame_table.entry(&bytes, |b| {
                        InstrFrame::decode_in(b, dialect)
                            .expect("instruction frames are checked as they are read")
                    });
                    let code = match &entry.code {
                        None => self.backend.prepare(&entry.frame),
                        Some(code) => self.backend.reissue(code),
                    }
                    .map_err(|e| RunError::Backend {
                        frame: Some(frame),
                        message: e.to_string(),
                    })?;
                    entry.code = Some(code.clone());
                    let part = Part {
                        instrs: entry.frame.instrs,
                        frame,
                        start,
                        sync: entry.sync,
                        cyclic: entry.cyclic,
                    };
                    let frame_banks = &entry.banks;
                    self.cores.start(mask, code, &part, |id, regs| {
                        frame_banks.as_ref().map_or(0, |b| b.for_core(id, regs))
                    });
                    for c in lanes_of(mask) {
                        self.driver.lb[c] = start;
                        self.counters[c].tasks += 1;
                        self.counters[c].ran = true;
                    }
                    // Events and the instruction log tell the order of the scheduler's
                    // decisions among the cores' actions, so they see every step as it
                    // comes. Task records do not: each is handed over in issue order once
                    // its task has ended, and a deferred step issues the same tasks later
                    // (before any record after them can be final, and before the watchdog
                    // or a checkpoint reads the scheduler).
                    let unobserved = !O::WANTS_EVENTS && !O::WANTS_EXECUTED;
                    if unobserved && !settle {
                        if let Some(bound) = self.driver.ts.next_start_bound() {
                            // The bound must be ahead of the next event, as a step's is.
                            if self.cores.earliest(None).is_some_and(|k| k < bound) {
                                return Ok(SchedulerBound {
                                    before: [bound; 16],
                                    state: SchedulerState::Pending,
                                });
                            }
                        }
                    }
                }
                Step::Blocked { before } => {
                    return Ok(SchedulerBound {
                        before,
                        state: SchedulerState::Blocked,
                    });
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
                    return Ok(SchedulerBound {
                        before: [EventKey::NEVER; 16],
                        state: SchedulerState::Done,
                    })
                }
                Step::Limit => {
                    return Ok(SchedulerBound {
                        before: [EventKey::NEVER; 16],
                        state: SchedulerState::Limit,
                    })
                }
            }
        }
    }

    fn observe_wait(&mut self, frame: usize, wait: Option<Wait>) {
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
    fn observe_locks(&mut self) {
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

    /// Lower bounds on the end of every running core's part, for the scheduler: a core with
    /// an event ends no earlier than it; a sleeper wakes no earlier than the lock holder's
    /// next event (only the holder's st_sync wakes it).
    fn refresh_bounds(&mut self) {
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
    fn first_opener(&self, bank: usize) -> EventKey {
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
    fn wake_key(&self, bank: usize) -> Option<EventKey> {
        self.memory
            .bank_lock(bank)
            .map(|(h, _)| self.cores.key(usize::from(h)))
    }

    /// For each bank, the earliest event of a core outside `running` that may touch it: its
    /// own next event, or for a sleeper its lock holder's (it wakes no earlier). A newly
    /// issued task may touch any bank, so nothing passes the scheduler's bound.
    fn bank_horizon(&self, running: u16, ts_bound: EventKey) -> [u64; BANKS] {
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
            match self.cores.mode(j) {
                Mode::Idle => {}
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

    /// The group core `i` (the earliest event) leads: every core at the same IP of the same
    /// frame in the same cycle, runnable or parked there (a parked core is stopped before
    /// that instruction, so running it from there performs its access), if the backend
    /// takes it. Where `i` is parked, the other cores of its frame in that cycle (or, in a
    /// frame without atomic sequences, the next), at any IP, join as a cohort if they could
    /// take turns on memory with it: in a frame with atomic sequences, or where the banks
    /// the cores may touch overlap. Cores
    /// at different instructions of one cycle then take turns inside the backend instead
    /// of one access per trip through the loop (groups a cycle apart in one bank, as where
    /// a `bnz` parted them by one instruction, leapfrog each other at every access).
    fn group_of(&self, i: usize) -> Option<u16> {
        if !self.backend.takes_groups() {
            return None;
        }
        let (frame, state) = (self.cores.part(i).frame, &self.cores.state[i]);
        let parked = matches!(self.cores.mode(i), Mode::Parked { .. });
        let sync = self.cores.part(i).sync;
        // Where cores leapfrog on plain accesses; with atomic sequences the cohort of one
        // cycle measured faster (a histogram's cores two cycles apart, 3%).
        let joins_next = !sync;
        let (mut at_ip, mut others) = (0u16, 0u16);
        let (mut at_ip_banks, mut other_banks) = (0u16, 0u16);
        // `i` has the earliest event, so the others of its cycle have higher ids; only a
        // cohort takes cores of the next cycle, whatever their ids.
        let candidates = if parked {
            self.cores.groupable()
        } else {
            self.cores.groupable() & (u16::MAX << i)
        };
        for j in lanes_of(candidates) {
            let other = &self.cores.state[j];
            if self.cores.part(j).frame != frame {
                continue;
            }
            let same_cycle = other.cycle == state.cycle && j >= i;
            if same_cycle && other.ip == state.ip {
                at_ip |= 1 << j;
                at_ip_banks |= self.cores.banks[j];
            } else if parked && (same_cycle || (joins_next && other.cycle == state.cycle + 1)) {
                others |= 1 << j;
                other_banks |= self.cores.banks[j];
            }
        }
        let mut group = at_ip;
        let mut seen = at_ip_banks;
        if others != 0
            && (sync || at_ip_banks & other_banks != 0 || shares_banks(&self.cores.banks, others))
        {
            group |= others;
            seen |= other_banks;
        }
        // How the group's banks overlap matters only where it touches memory.
        let (mut shares, mut own_banks) = (false, true);
        if seen != 0 {
            shares = shares_banks(&self.cores.banks, group);
            for j in lanes_of(group) {
                own_banks &= self.cores.banks[j] & !(1 << j) == 0;
            }
        }
        let shape = GroupShape {
            cores: group,
            touches_memory: seen != 0,
            shares_banks: shares,
            own_banks,
            one_ip: group == at_ip,
        };
        self.backend.takes_group(shape).then_some(group)
    }

    /// Run `cores`: one core alone through [`Backend::run_core`], or a group together
    /// through [`Backend::run_group`]; then apply what became of each core. `lead` is the
    /// core of `cores` whose event is the earliest: a cohort's cores a cycle behind it may
    /// have lower ids.
    fn run_cores(&mut self, cores: u16, lead: usize, together: bool, ts: &SchedulerBound) {
        // A parked retry that runs is no longer the loop's to settle.
        self.waits.run(cores);
        if self.tele.steps(self.cores.state[lead].cycle) {
            self.tele.begin_steps(&self.memory);
        }
        let ts_bound = lanes_of(cores)
            .map(|j| ts.before[j])
            .min()
            .unwrap_or(EventKey::NEVER);
        let horizon = self.bank_horizon(cores, ts_bound);
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
        if let Some(stops) = &self.tele.stops {
            let frame = self.cores.part(lead).frame;
            let mask = stops.breaks.get(&frame).copied().unwrap_or(0);
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
            self.tele.observer.event(stall.event());
        }
        // Cores whose parts ended are ended together (a group usually ends as one).
        let (mut ended, mut by_ready) = (0u16, 0u16);
        for j in lanes_of(cores) {
            match exits[j] {
                Some(CoreExit::Asleep) => {
                    debug_assert!(asleep & (1 << j) != 0, "core {j} exits asleep");
                    self.asleep(j);
                }
                Some(CoreExit::Ended { by_ready: r }) => {
                    ended |= 1 << j;
                    by_ready |= u16::from(r) << j;
                }
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
        let first = self.cores.state[ending.trailing_zeros() as usize].cycle - 1;
        let (mut together, mut last) = (0u16, first);
        for i in lanes_of(ending) {
            let end = self.cores.state[i].cycle - 1;
            if end == first {
                together |= 1 << i;
            } else {
                self.driver.ts.cores_ended(1 << i, end);
            }
            last = last.max(end);
            let start = self.cores.part(i).start;
            self.counters[i].busy += end + 1 - start;
            self.tele.observer.event(Event::CorePart {
                core: i as u8,
                frame: self.cores.part(i).frame,
                start,
                end,
            });
        }
        self.driver.ts.cores_ended(together, first);
        self.cores.end(ending);
        self.driver.ends += 1;
        self.driver.last_core_cycle =
            Some(self.driver.last_core_cycle.map_or(last, |l| l.max(last)));
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

    /// Report core `i`'s instruction since `before`, if it executed one.
    fn log_executed(&mut self, i: usize, before: &crate::backend::CoreState) {
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
        let cores = &self.cores;
        let slept = self
            .waits
            .settle(&mut self.memory, bank, holder, opened, |j| {
                let key = cores.key(j);
                (matches!(cores.mode(j), Mode::Parked { .. })
                    && key.cycle() < self.config.max_cycles)
                    .then_some(key)
            });
        for j in lanes_of(slept) {
            self.asleep(j);
        }
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
            self.tele.observer.event(stall.event());
            self.cores.park_at(w, at, false);
        }
    }

    fn fault(&self, i: usize, rule: FaultRule, cycle: u64, addr: Option<u16>) -> RunError {
        RunError::Fault {
            rule,
            frame: self.cores.part(i).frame,
            core: i as u8,
            ip: self.cores.state[i].ip,
            cycle,
            addr,
        }
    }

    /// Every event before checkpoint `cycle` is done, and the earliest is in it. Show each
    /// runnable core of a frame that can loop, stopped there, to its loop watch (a core
    /// cannot pass a checkpoint without stopping at it: `run_cores` limits it there), and the
    /// progress bar the cycle. Returns whether a core was proven to loop for ever; it is then
    /// [`Mode::Looping`], and reported when it is the earliest event.
    fn checkpoint(&mut self, cycle: u64) -> bool {
        if O::WANTS_PROGRESS && cycle > self.tele.progress_cycle {
            self.tele.progress_cycle = cycle;
            let progress = self.progress();
            self.tele.observer.progress(progress);
            self.tele.pending_polls += 1;
        }
        let mut proven = false;
        for j in 0..16 {
            let part = self.cores.part(j);
            let state = &self.cores.state[j];
            // Only before a register instruction: there a core is runnable in every engine
            // (before a memory instruction it may be parked in one and runnable in another).
            if !part.cyclic
                || state.cycle != cycle
                || self.cores.mode(j) != Mode::Runnable
                || part.instrs[usize::from(state.ip & 0xF)].is_memory()
            {
                continue;
            }
            if let Some(p) = self.proofs.watch[j].checkpoint(
                &part.instrs,
                (part.frame, part.start),
                state.id,
                state.regs,
                state.ip,
                cycle,
                self.config.checkpoint_cycles,
            ) {
                self.cores.set_mode(
                    j,
                    Mode::Looping {
                        period: p.period,
                        polls: false,
                    },
                );
                proven = true;
            }
        }
        proven || self.frozen_checkpoint(cycle)
    }

    /// The frozen-memory proof at checkpoint `cycle` (see `livelock`), made at the first
    /// event of the checkpoint, when every running core of a frame that can loop stands at
    /// it and none has acted in it.
    fn frozen_checkpoint(&mut self, cycle: u64) -> bool {
        if self.proofs.machine_checked == Some(cycle) {
            return false;
        }
        self.proofs.machine_checked = Some(cycle);
        let mut running = Vec::new();
        let mut frozen = self.driver.ts.next_frame().is_none();
        for j in 0..16 {
            if !frozen {
                break;
            }
            let (part, state) = (self.cores.part(j), &self.cores.state[j]);
            match self.cores.mode(j) {
                Mode::Idle | Mode::Sleeping { .. } => {}
                Mode::Runnable | Mode::Parked { bank_retry: false }
                    if part.cyclic
                        && state.cycle == cycle
                        && FrameLoops::of(&part.instrs).read_only >> (state.ip & 0xF) & 1 != 0 =>
                {
                    running.push((j as u8, (state.regs, state.ip)));
                }
                _ => frozen = false,
            }
        }
        frozen &= !running.is_empty();
        let every = self.config.checkpoint_cycles;
        let Some(period) = self
            .proofs
            .machine_watch
            .checkpoint(frozen, running, cycle, every)
        else {
            return false;
        };
        let first = (0..16)
            .find(|&j| matches!(self.cores.mode(j), Mode::Runnable | Mode::Parked { .. }))
            .expect("a frozen machine has a running core");
        self.cores.set_mode(
            first,
            Mode::Looping {
                period,
                polls: true,
            },
        );
        true
    }

    /// Where the run stands, for the progress bar.
    fn progress(&self) -> Progress {
        Progress {
            frames: self.driver.frames_done,
            tasks: self.driver.ts.summary.tasks,
            instructions: self.cores.state.iter().map(|c| c.instructions).sum(),
            cycle: self.tele.progress_cycle,
        }
    }

    /// Core `i` was proven to repeat every `period` cycles (see [`Run::checkpoint`]).
    fn livelock(&mut self, i: usize, period: u64, polls: bool) -> RunError {
        let RunError::Watchdog {
            cores, next_frame, ..
        } = self.watchdog()
        else {
            unreachable!("watchdog() makes a watchdog report")
        };
        RunError::Livelock {
            core: i as u8,
            frame: self.cores.part(i).frame,
            ip: self.cores.state[i].ip,
            period,
            polls,
            cycle: self.cores.state[i].cycle,
            cores,
            next_frame,
        }
    }

    /// Whether the observer asks to stop the run; if it does, the watchdog limit comes down
    /// to the cycle the run has reached: the earliest pending event, or any later cycle a
    /// core or the scheduler has already acted in. Asked only where the observer hears of
    /// progress, so at most once a frame or a checkpoint.
    fn poll_stop(&mut self) -> bool {
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
    fn stop_where_reached(&mut self, cause: StopCause) {
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

    /// The run reached its watchdog limit: the watchdog, or the stop that lowered it.
    fn limit_reached(&mut self) -> RunError {
        let watchdog = self.watchdog();
        match (self.tele.stopped, watchdog) {
            (
                Some(cause),
                RunError::Watchdog {
                    limit,
                    cores,
                    next_frame,
                },
            ) => RunError::Stopped {
                cause,
                cycle: limit,
                cores,
                next_frame,
            },
            (_, w) => w,
        }
    }

    fn watchdog(&mut self) -> RunError {
        let mut cores = Vec::new();
        for i in 0..16 {
            let part = self.cores.part(i);
            let core = &self.cores.state[i];
            let wait = match self.cores.mode(i) {
                Mode::Idle => continue,
                Mode::Runnable if core.cycle == part.start => {
                    CoreWait::NotStarted { start: part.start }
                }
                Mode::Runnable
                | Mode::Parked { bank_retry: false }
                | Mode::Faulted { .. }
                | Mode::Looping { .. } => CoreWait::Running,
                Mode::Parked { bank_retry: true } => CoreWait::BankConflict,
                Mode::Sleeping { bank, .. } => {
                    let since = self.waits.since(i);
                    let (holder, addr) = self.memory.bank_lock(bank).unwrap_or((i as u8, 0));
                    CoreWait::Lock {
                        addr,
                        holder,
                        since,
                    }
                }
            };
            cores.push(UnfinishedCore {
                core: i as u8,
                frame: part.frame,
                ip: core.ip,
                wait,
            });
        }
        RunError::Watchdog {
            limit: self.config.max_cycles,
            cores,
            next_frame: self.driver.ts.next_frame(),
        }
    }

    fn end_cycle(&self) -> u64 {
        let last = match (self.driver.ts.last_activity(), self.driver.last_core_cycle) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        last.map_or(0, |l| l + 1)
    }

    fn report(&mut self) -> RunReport {
        self.report_tasks(false)
    }

    /// The run's report; with `keep`, the task records stay for a later report.
    fn report_tasks(&mut self, keep: bool) -> RunReport {
        let mut counters = self.counters;
        for (i, (c, core)) in counters.iter_mut().zip(&self.cores.state).enumerate() {
            c.instructions = core.instructions;
            c.lock_stalls = self.waits.charged(i);
            c.stalls += c.lock_stalls;
        }
        RunReport {
            backend: self.backend.name().to_string(),
            config: Config {
                max_cycles: self.tele.asked_limit,
                ..self.config
            },
            dialect: self.driver.ts.frames().dialect(),
            cycles: self.end_cycle(),
            registers: std::array::from_fn(|i| self.cores.state[i].regs),
            memory: self.memory.bytes(),
            tasks: if keep {
                self.driver.ts.records()
            } else {
                self.driver.ts.take_records()
            },
            task_summary: self.driver.ts.summary.clone(),
            instructions: counters.iter().map(|c| c.instructions).sum(),
            stalls: counters.iter().map(|c| c.stalls).sum(),
            cores: counters,
            memory_stats: self.memory.stats(),
        }
    }
}

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

    /// The state so far (registers, memory, counters, tasks kept), with `cycles` the cycle
    /// the run is paused at.
    pub(crate) fn snapshot(&mut self, cycle: u64) -> RunReport {
        let mut report = self.report_tasks(true);
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

    /// Write `byte` at `addr` between cycles: the host's write, not a core's access.
    pub(crate) fn poke(&mut self, addr: u16, byte: u8) {
        self.memory.poke(addr, byte);
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

/// The cores of a mask, lowest first (one step per core, not per bit).
fn lanes_of(cores: u16) -> impl Iterator<Item = usize> {
    let mut rest = cores;
    std::iter::from_fn(move || {
        let j = rest.trailing_zeros() as usize;
        rest &= rest.wrapping_sub(1);
        (j < 16).then_some(j)
    })
}
