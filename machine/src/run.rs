//! The run loop: drives the task scheduler and a backend's cores in the (cycle, core id)
//! order of decisions.md. Cores run natively until a memory instruction that another core
//! could observe; the loop then always serves the earliest pending event (a parked memory
//! access, a deferred fault, the watchdog), so every backend sees the same interleaving.

use crate::backend::{event_key, retire, Backend, CoreExit, CoreState, Port};
use crate::banks::FrameBanks;
use crate::config::{Config, MAX_CYCLE_LIMIT};
use crate::frame::{FrameKind, InstrFrame, Program};
use crate::isa::{address, Flow, Instr, FRAME_INSTRS};
use crate::memory::{bank_of, Attempt, FaultRule, SharedMemory, Stall, BANKS};
use crate::observe::{Event, Observer, Progress, StallCause};
use crate::report::{CoreCounters, CoreWait, RunError, RunFailure, RunReport, UnfinishedCore};
use crate::scheduler::{Step, TaskScheduler, Wait};
use std::collections::HashMap;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Idle,
    /// Runs from its IP in its cycle.
    Runnable,
    /// Stopped before the memory instruction at its IP (or at the cycle limit); the loop
    /// performs the access in its turn. `bank_retry` after a bank-conflict stall.
    Parked {
        bank_retry: bool,
    },
    /// Asleep until the open sequence on `bank` closes; stalled since `since`.
    Sleeping {
        bank: usize,
        since: u64,
        addr: u16,
    },
    /// Broke a rule in `cycle`; reported when that is the earliest event.
    Faulted {
        rule: FaultRule,
        cycle: u64,
    },
}

struct Slot<C> {
    mode: Mode,
    code: Option<C>,
    instrs: [Instr; FRAME_INSTRS],
    frame: usize,
    start: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SchedulerState {
    Blocked,
    Done,
    Limit,
}

/// Run `program` on a machine whose shared memory starts as `memory` (zero past its end).
pub fn run<B: Backend>(
    backend: &mut B,
    program: &Program,
    memory: &[u8],
    config: &Config,
) -> Result<RunReport, Box<RunFailure>> {
    run_observed(backend, program, memory, config, &mut ())
}

/// [`run`], reporting every [`Event`] to `observer` as it happens.
pub fn run_observed<B: Backend, O: Observer>(
    backend: &mut B,
    program: &Program,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, Box<RunFailure>> {
    let mut config = *config;
    observer.start(&config);
    let mut shared = SharedMemory::new(memory, config.bank_conflicts);
    if O::WANTS_EVENTS {
        shared.closed = Some(Vec::new());
    }
    config.max_cycles = config.max_cycles.min(MAX_CYCLE_LIMIT);
    let mut run = Run {
        ts: TaskScheduler::new(program, &config),
        backend,
        program,
        config,
        memory: shared,
        observer,
        cores: std::array::from_fn(|i| CoreState {
            id: i as u8,
            ..CoreState::default()
        }),
        slots: (0..16)
            .map(|_| Slot {
                mode: Mode::Idle,
                code: None,
                instrs: [Instr::Nop; FRAME_INSTRS],
                frame: 0,
                start: 0,
            })
            .collect(),
        lb: [0; 16],
        counters: [CoreCounters::default(); 16],
        last_core_cycle: None,
        frames_done: 0,
        keys: [u64::MAX; 16],
        ends: 0,
        banks: [0; 16],
        bank_cache: HashMap::new(),
    };
    let outcome = run.go();
    outcome.map(|()| run.report()).map_err(|error| {
        let cycle = match &error {
            RunError::Fault { cycle, .. } => *cycle,
            RunError::Watchdog { limit, .. } => *limit,
            RunError::Backend { .. } => run.end_cycle(),
        };
        let mut state = run.report();
        state.cycles = cycle;
        Box::new(RunFailure { error, state })
    })
}

struct Run<'a, B: Backend, O: Observer> {
    backend: &'a mut B,
    observer: &'a mut O,
    program: &'a Program,
    config: Config,
    ts: TaskScheduler<'a>,
    memory: SharedMemory,
    cores: [CoreState; 16],
    slots: Vec<Slot<B::Code>>,
    /// For a core running a task: a lower bound on the cycle of its last instruction.
    lb: [u64; 16],
    counters: [CoreCounters; 16],
    last_core_cycle: Option<u64>,
    frames_done: u64,
    /// Each core's event key (`u64::MAX` when it has none).
    keys: [u64; 16],
    /// Core parts ended so far: a change tells the loop the scheduler may act.
    ends: u64,
    /// The banks each core's current task can touch.
    banks: [u16; 16],
    bank_cache: HashMap<[u16; FRAME_INSTRS], Rc<FrameBanks>>,
}

/// Frames whose bank analysis is kept; the cache starts over when it is full.
const BANK_CACHE_FRAMES: usize = 4096;

impl<B: Backend, O: Observer> Run<'_, B, O> {
    fn go(&mut self) -> Result<(), RunError> {
        let limit = self.config.max_cycles;
        let mut ts = ([0; 16], SchedulerState::Blocked);
        let mut ts_fresh = false;
        loop {
            // The scheduler's bound stays valid as cores advance (it is a lower bound on its
            // next decision); it is recomputed when a core's end may let it act, or when the
            // earliest core event reaches it.
            let mut earliest = self.earliest(None);
            if !ts_fresh || earliest.is_some_and(|(k, i)| k >= ts.0[i]) {
                ts = self.advance_scheduler()?;
                ts_fresh = true;
                earliest = self.earliest(None);
            }
            let Some((key, i)) = earliest else {
                return match ts.1 {
                    SchedulerState::Done => Ok(()),
                    SchedulerState::Limit => Err(self.watchdog()),
                    SchedulerState::Blocked => Err(RunError::Backend {
                        frame: self.ts.next_frame().unwrap_or(0),
                        message: "internal: the scheduler waits on no running core".into(),
                    }),
                };
            };
            if key >> 4 >= limit {
                return Err(self.watchdog());
            }
            debug_assert!(key < ts.0[i], "event {key:#x} (cycle {}, core {i}) at or past the scheduler bound {:#x} (cycle {}), fresh {ts_fresh}", key >> 4, ts.0[i], ts.0[i] >> 4);
            let ends = self.ends;
            match self.slots[i].mode {
                Mode::Faulted { rule, cycle } => return Err(self.fault(i, rule, cycle, None)),
                Mode::Runnable => self.run_core(i, ts.0[i]),
                Mode::Parked { .. } => self.perform_parked(i)?,
                Mode::Idle | Mode::Sleeping { .. } => unreachable!("not an event"),
            }
            if self.ends != ends {
                ts_fresh = false;
            }
        }
    }

    /// Let the scheduler act until it must wait on cores. Returns the event key before which
    /// no newly issued core can act, and the scheduler's state.
    fn advance_scheduler(&mut self) -> Result<([u64; 16], SchedulerState), RunError> {
        self.refresh_bounds();
        loop {
            let step = self.ts.step(&self.lb);
            if O::WANTS_PROGRESS && matches!(step, Step::Control { .. } | Step::Issue { .. }) {
                self.frames_done += 1;
                self.observer.progress(Progress {
                    frames: self.frames_done,
                    tasks: self.ts.summary.tasks,
                    instructions: self.cores.iter().map(|c| c.instructions).sum(),
                });
            }
            match step {
                Step::Control { frame, cycle, wait } => {
                    self.observe_wait(frame, wait);
                    self.observer.event(Event::ControlFrame { frame, cycle });
                    let cf = self.program.control(frame);
                    let m = cf.r0_init_mask();
                    for c in 0..16 {
                        if m & (1 << c) != 0 {
                            self.cores[c].regs[0] = cf.init_r0[c];
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
                        self.observer.event(Event::Broadcast {
                            frame,
                            mask,
                            fence: self.program.control(self.control_of(frame)).fence,
                            from: issue,
                            to: start - 1,
                        });
                    }
                    let f = self.program.instr(frame);
                    let frame_banks = self.frame_banks(&f);
                    let code = self.backend.prepare(&f).map_err(|e| RunError::Backend {
                        frame,
                        message: e.0,
                    })?;
                    for c in 0..16 {
                        if mask & (1 << c) != 0 {
                            let slot = &mut self.slots[c];
                            debug_assert_eq!(slot.mode, Mode::Idle);
                            slot.mode = Mode::Runnable;
                            slot.code = Some(code.clone());
                            slot.instrs = f.instrs;
                            slot.frame = frame;
                            slot.start = start;
                            self.cores[c].ip = 0;
                            self.cores[c].cycle = start;
                            self.banks[c] = frame_banks
                                .as_ref()
                                .map_or(0, |b| b.for_core(c as u8, &self.cores[c].regs));
                            self.lb[c] = start;
                            self.counters[c].tasks += 1;
                            self.counters[c].ran = true;
                            self.refresh_key(c);
                        }
                    }
                }
                Step::Blocked { bounds } => {
                    // A task processed in cycle b starts its cores after its broadcast.
                    let bc = self.config.timing.broadcast_cycles;
                    let keys = bounds.map(|b| {
                        let first_start = b.saturating_add(bc);
                        if first_start >= MAX_CYCLE_LIMIT * 2 {
                            u64::MAX
                        } else {
                            event_key(first_start, 0)
                        }
                    });
                    return Ok((keys, SchedulerState::Blocked));
                }
                Step::Done => return Ok(([u64::MAX; 16], SchedulerState::Done)),
                Step::Limit => return Ok(([u64::MAX; 16], SchedulerState::Limit)),
            }
        }
    }

    /// The bank analysis of a frame with memory instructions (cached by its bytes).
    fn frame_banks(&mut self, f: &InstrFrame) -> Option<Rc<FrameBanks>> {
        if !f.instrs.iter().any(Instr::is_memory) {
            return None;
        }
        if self.bank_cache.len() >= BANK_CACHE_FRAMES {
            self.bank_cache.clear();
        }
        Some(
            self.bank_cache
                .entry(f.words)
                .or_insert_with(|| Rc::new(FrameBanks::analyse(&f.instrs)))
                .clone(),
        )
    }

    fn control_of(&self, frame: usize) -> usize {
        match self.program.kind(frame) {
            FrameKind::Instr { control } => control,
            FrameKind::Control => frame,
        }
    }

    fn observe_wait(&mut self, frame: usize, wait: Option<Wait>) {
        if let Some(w) = wait {
            self.observer.event(Event::SchedulerWait {
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
                self.observer.event(Event::LockHeld {
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
        for i in 0..16 {
            self.lb[i] = match self.slots[i].mode {
                Mode::Idle => 0,
                Mode::Runnable | Mode::Parked { .. } | Mode::Faulted { .. } => self.keys[i] >> 4,
                Mode::Sleeping { bank, since, .. } => {
                    let holder = self
                        .memory
                        .bank_lock(bank)
                        .map_or(i, |(h, _)| usize::from(h));
                    since.max(self.keys[holder] >> 4)
                }
            };
        }
    }

    /// For each bank, the earliest event of another core that may touch it: its own next
    /// event, or for a sleeper its lock holder's (it wakes no earlier). A newly issued task
    /// may touch any bank, so nothing passes the scheduler's bound.
    fn bank_horizon(&self, i: usize, ts_bound: u64) -> [u64; BANKS] {
        let mut any = ts_bound;
        let mut h = [u64::MAX; BANKS];
        for j in 0..16 {
            if j == i {
                continue;
            }
            let (key, banks) = match self.slots[j].mode {
                Mode::Idle => continue,
                Mode::Runnable | Mode::Parked { .. } => (self.keys[j], self.banks[j]),
                Mode::Faulted { .. } => (self.keys[j], 0xFFFF),
                Mode::Sleeping { bank, .. } => {
                    let holder = self
                        .memory
                        .bank_lock(bank)
                        .map_or(j, |(h, _)| usize::from(h));
                    (self.keys[holder], self.banks[j])
                }
            };
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
        }
        h.map(|x| x.min(any))
    }

    /// Recompute core `i`'s event key after its mode or cycle changed.
    fn refresh_key(&mut self, i: usize) {
        self.keys[i] = match self.slots[i].mode {
            Mode::Runnable | Mode::Parked { .. } => event_key(self.cores[i].cycle, i as u8),
            Mode::Faulted { cycle, .. } => event_key(cycle, i as u8),
            Mode::Idle | Mode::Sleeping { .. } => u64::MAX,
        };
    }

    /// The earliest pending core event, leaving out `except`. A key's low four bits are its
    /// core, so a plain minimum finds both.
    fn earliest(&self, except: Option<usize>) -> Option<(u64, usize)> {
        let mut keys = self.keys;
        if let Some(i) = except {
            keys[i] = u64::MAX;
        }
        let k = keys.into_iter().fold(u64::MAX, u64::min);
        (k != u64::MAX).then_some((k, (k & 0xF) as usize))
    }

    fn run_core(&mut self, i: usize, ts_bound: u64) {
        let horizon = self.bank_horizon(i, ts_bound);
        let code = self.slots[i]
            .code
            .as_ref()
            .expect("a runnable core has code");
        let mut port = Port::new(
            &mut self.memory,
            horizon,
            &self.banks,
            self.config.max_cycles,
        );
        let exit = self.backend.run_core(code, &mut self.cores[i], &mut port);
        let woken = std::mem::take(&mut port.woken);
        for (w, at) in woken {
            self.wake(w, at);
        }
        self.after_exit(i, exit);
        self.refresh_key(i);
        self.observe_locks();
    }

    fn after_exit(&mut self, i: usize, exit: CoreExit) {
        match exit {
            CoreExit::Parked => {
                self.slots[i].mode = Mode::Parked { bank_retry: false };
            }
            CoreExit::Ended { by_ready } => {
                let end = self.cores[i].cycle - 1;
                if let Some(held) = self.memory.held(i as u8) {
                    let rule = if by_ready {
                        FaultRule::ReadyWhileHolding { held }
                    } else {
                        FaultRule::FrameEndWhileHolding { held }
                    };
                    self.slots[i].mode = Mode::Faulted { rule, cycle: end };
                } else {
                    self.slots[i].mode = Mode::Idle;
                    self.slots[i].code = None;
                    self.ts.core_ended(i, end);
                    self.ends += 1;
                    let start = self.slots[i].start;
                    self.counters[i].busy += end + 1 - start;
                    self.observer.event(Event::CorePart {
                        core: i as u8,
                        frame: self.slots[i].frame,
                        start,
                        end,
                    });
                    self.last_core_cycle = Some(self.last_core_cycle.map_or(end, |l| l.max(end)));
                }
            }
        }
    }

    /// Perform the memory instruction a parked core stopped at; it is the earliest event.
    fn perform_parked(&mut self, i: usize) -> Result<(), RunError> {
        let core = &mut self.cores[i];
        let cycle = core.cycle;
        let Instr::Mem { op, a, hi, r } = self.slots[i].instrs[usize::from(core.ip)] else {
            return Err(RunError::Backend {
                frame: self.slots[i].frame,
                message: format!(
                    "internal: core {i} parked at IP {} which is not a memory instruction",
                    core.ip
                ),
            });
        };
        let addr = address(core.regs[usize::from(a)], core.regs[usize::from(hi)]);
        match self.memory.check(i as u8, cycle, op, addr) {
            Attempt::Proceed => {
                let (v, woken) =
                    self.memory
                        .commit(i as u8, cycle, op, addr, core.regs[usize::from(r)]);
                if op.is_read() {
                    core.regs[usize::from(r)] = v;
                }
                match retire(core, Flow::Memory) {
                    Some(exit) => self.after_exit(i, exit),
                    None => self.slots[i].mode = Mode::Runnable,
                }
                for w in 0..16u8 {
                    if woken & (1 << w) != 0 {
                        let at = if usize::from(w) > i { cycle } else { cycle + 1 };
                        self.wake(w, at);
                    }
                }
                self.observe_locks();
            }
            Attempt::Stall(Stall::Lock { .. }) => {
                let bank = bank_of(addr);
                self.memory.sleep_on(bank, i as u8);
                self.slots[i].mode = Mode::Sleeping {
                    bank,
                    since: cycle,
                    addr,
                };
            }
            Attempt::Stall(Stall::BankConflict) => {
                self.counters[i].stalls += 1;
                self.counters[i].bank_stalls += 1;
                core.cycle += 1;
                self.observer.event(Event::Stall {
                    core: i as u8,
                    from: cycle,
                    to: cycle + 1,
                    cause: StallCause::BankConflict,
                    addr,
                });
                self.slots[i].mode = Mode::Parked { bank_retry: true };
            }
            Attempt::Fault(rule) => return Err(self.fault(i, rule, cycle, Some(addr))),
        }
        self.refresh_key(i);
        Ok(())
    }

    /// A sleeper retries in `at`; every cycle since its first stalled attempt was a stall.
    fn wake(&mut self, w: u8, at: u64) {
        let w = usize::from(w);
        if let Mode::Sleeping { since, addr, .. } = self.slots[w].mode {
            self.observer.event(Event::Stall {
                core: w as u8,
                from: since,
                to: at,
                cause: StallCause::Lock,
                addr,
            });
            self.counters[w].stalls += at - since;
            self.counters[w].lock_stalls += at - since;
            self.cores[w].cycle = at;
            self.slots[w].mode = Mode::Parked { bank_retry: false };
            self.refresh_key(w);
        }
    }

    fn fault(&self, i: usize, rule: FaultRule, cycle: u64, addr: Option<u16>) -> RunError {
        RunError::Fault {
            rule,
            frame: self.slots[i].frame,
            core: i as u8,
            ip: self.cores[i].ip,
            cycle,
            addr,
        }
    }

    fn watchdog(&self) -> RunError {
        let mut cores = Vec::new();
        for i in 0..16 {
            let slot = &self.slots[i];
            let core = &self.cores[i];
            let wait = match slot.mode {
                Mode::Idle => continue,
                Mode::Runnable if core.cycle == slot.start => {
                    CoreWait::NotStarted { start: slot.start }
                }
                Mode::Runnable | Mode::Parked { bank_retry: false } | Mode::Faulted { .. } => {
                    CoreWait::Running
                }
                Mode::Parked { bank_retry: true } => CoreWait::BankConflict,
                Mode::Sleeping { bank, since, .. } => {
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
                frame: slot.frame,
                ip: core.ip,
                wait,
            });
        }
        RunError::Watchdog {
            limit: self.config.max_cycles,
            cores,
            next_frame: self.ts.next_frame(),
        }
    }

    fn end_cycle(&self) -> u64 {
        let last = match (self.ts.last_activity(), self.last_core_cycle) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        last.map_or(0, |l| l + 1)
    }

    fn report(&mut self) -> RunReport {
        let mut counters = self.counters;
        for (c, core) in counters.iter_mut().zip(&self.cores) {
            c.instructions = core.instructions;
        }
        RunReport {
            backend: self.backend.name().to_string(),
            config: self.config,
            cycles: self.end_cycle(),
            registers: std::array::from_fn(|i| self.cores[i].regs),
            memory: Box::new(*self.memory.bytes()),
            tasks: std::mem::take(&mut self.ts.records),
            task_summary: self.ts.summary.clone(),
            instructions: counters.iter().map(|c| c.instructions).sum(),
            stalls: counters.iter().map(|c| c.stalls).sum(),
            cores: counters,
            memory_stats: self.memory.stats.clone(),
        }
    }
}
