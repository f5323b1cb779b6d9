//! The MCST dialect's machine (mcst-dialect.md): its task scheduler (`ts.rs`) and the slot
//! model of its cores (`slots.rs`), stepped one cycle at a time. Every backend runs a program
//! of this dialect here; each instruction's meaning is still [`crate::semantics::execute`], the one
//! definition. The timing is [`crate::Timing`]'s: decisions.md's latencies by default, the
//! RTL's with [`crate::Timing::mcst_rtl`].
//!
//! A cycle, in order: the scheduler's delivery and decision (it sees the cores idle as the
//! cycle begins), then every core's slot (instructions and bubbles execute at once, memory
//! slots request their banks), then bank arbitration, then the memory slots' grants in core
//! order. A backend with compiled code for a frame runs a core's register-only slots ahead
//! in one call ([`SlotRun`]); the cycles they fill are then skipped like idle ones. A cycle
//! visits only the cores that act in it: two masks beside the cores (`running`,
//! `in_memory`) name the running cores whose slot may be due and the memory slots to
//! arbitrate, and a cycle with neither is skipped.
//!
//! Where the scheduler's walk of task memory goes round a loop, `lap.rs` proves the run
//! endless: by the walk alone, or by the machine's state repeating at the loop's start.

mod lap;
mod slots;
mod ts;

pub use crate::slot_run::{SlotExit, SlotRun, SlotState};

use crate::config::{Config, SlotTiming, TaskLog, TASK_LOG_LIMIT};
use crate::cores::lanes_of;
use crate::frame::{Fence, McstWalk, Program, FRAME_BYTES, TASK_MEMORY_FRAMES};
use crate::isa::{Flow, Instr, MemOp, FRAME_INSTRS};
use crate::memory::{BankAccesses, MemoryStats, BANKS, MEMORY_BYTES};
use crate::observe::{Event, Executed, Observer, Progress, StallCause};
use crate::report::{
    CoreCounters, CoreWait, KeptTasks, RunError, RunFailure, RunReport, UnfinishedCore,
};
use crate::scheduler::{TaskRecord, TaskSummary};
use crate::semantics::execute;
use crate::semantics::Effect;
use crate::slot_run::SlotCompiler;
use lap::{Arrival, Lap};
use slots::{Core, MemorySlot, Past, Phase};
use std::rc::Rc;
use ts::{TaskScheduler, TsAction};

/// Cycles between polls of the observer (progress and stop requests).
const POLL_CYCLES: u64 = 1 << 16;

/// Run `program` (of the MCST dialect) with shared memory starting as `memory` on the
/// backend named `name`, whose compiled code from `slots`, if any, runs register-only slots
/// ahead (see [`SlotRun`]), reporting to `observer`.
pub fn run_observed<S: SlotCompiler + ?Sized, O: Observer>(
    slots: &mut S,
    name: &str,
    program: &Program,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, Box<RunFailure>> {
    let mut config = *config;
    config.max_cycles = config.max_cycles.min(Config::MAX_CYCLE_LIMIT);
    observer.start(&config);
    let image: Vec<[u8; FRAME_BYTES]> = (0..program.len()).map(|f| *program.raw(f)).collect();
    let mut m = Machine::new(name, &image, memory, config);
    match m.go(slots, observer) {
        Ok(()) => Ok(m.report()),
        Err(error) => {
            let mut state = m.report();
            state.cycles = m.cycle;
            Err(Box::new(RunFailure { error, state }))
        }
    }
}

/// A frame's compiled slots as the backend answered for it in this run.
#[derive(Default)]
struct AheadFrame {
    /// The times a core could have run ahead in the frame while it had no code.
    asked: u64,
    code: Option<Rc<dyn SlotRun>>,
}

impl AheadFrame {
    /// The frame's code: asked of the backend at powers of two of the engine's wants, so
    /// a backend that waits for a hot frame costs a counter in between.
    fn code<S: SlotCompiler + ?Sized>(
        &mut self,
        words: &[u16; FRAME_INSTRS],
        slots: &mut S,
    ) -> Option<Rc<dyn SlotRun>> {
        if self.code.is_none() {
            self.asked += 1;
            if self.asked.is_power_of_two() {
                self.code = slots.slot_code(words, self.asked);
            }
        }
        self.code.clone()
    }
}

/// A live task: its record and the cores still running it.
struct LiveTask {
    id: usize,
    record: TaskRecord,
    remaining: u16,
}

/// The MCST machine between cycles: a run in progress (`run_observed` drives one to its
/// end; a live machine, `crate::live`, pauses it at cycles and goes on).
pub(crate) struct Machine {
    backend: String,
    config: Config,
    slots: SlotTiming,
    ts: TaskScheduler,
    cores: Vec<Core>,
    memory: Box<[u8; MEMORY_BYTES]>,
    /// Round robin: the core each bank granted last.
    last_grant: [u8; BANKS],
    /// The cycle being run (when the run ends: its length).
    cycle: u64,
    tasks: u64,
    records: Vec<TaskRecord>,
    live: Vec<LiveTask>,
    summary: TaskSummary,
    counters: [CoreCounters; 16],
    /// Each frame's compiled slots, by frame index in task memory (all of it: a CF's IFs
    /// may lie past the image, in its zero frames), as the backend gave them.
    ahead: Vec<AheadFrame>,
    /// Accesses per bank, counted by the memory's one rule.
    accesses: BankAccesses,
    /// Executed instructions not yet reported, for observers that want them.
    executed: Vec<Executed>,
    frames_done: u64,
    /// A core's part ended in the cycle being run: the scheduler may decide otherwise in
    /// the next one.
    changed: bool,
    /// The livelock proof over the loop the scheduler's walk goes round, if it has one.
    endless: Option<Lap>,
    /// The cores running a task part (the rest are idle), a bit each: kept beside each
    /// core's `phase` so that a cycle visits only cores with something to do.
    running: u16,
    /// The cores with a memory slot under way (`Core::memory`), a bit each.
    in_memory: u16,
}

impl Machine {
    pub(crate) fn new(
        backend: &str,
        image: &[[u8; FRAME_BYTES]],
        memory: &[u8],
        config: Config,
    ) -> Self {
        let mut bytes = Box::new([0u8; MEMORY_BYTES]);
        let n = memory.len().min(MEMORY_BYTES);
        bytes[..n].copy_from_slice(&memory[..n]);
        let mut slots = config.timing.slots;
        slots.load_cycles = slots.load_cycles.max(1);
        Machine {
            backend: backend.to_string(),
            config,
            slots,
            ts: TaskScheduler::new(image, config.timing),
            cores: (0..16).map(Core::new).collect(),
            memory: bytes,
            last_grant: [0; BANKS],
            cycle: 0,
            tasks: 0,
            records: Vec::new(),
            live: Vec::new(),
            summary: TaskSummary::default(),
            counters: [CoreCounters::default(); 16],
            ahead: (0..TASK_MEMORY_FRAMES)
                .map(|_| AheadFrame::default())
                .collect(),
            accesses: BankAccesses::default(),
            executed: Vec::new(),
            frames_done: 0,
            changed: false,
            endless: Lap::of(McstWalk::of(image)),
            running: 0,
            in_memory: 0,
        }
    }

    fn idle(&self) -> u16 {
        debug_assert_eq!(
            !self.running,
            self.cores
                .iter()
                .filter(|c| c.phase == Phase::Idle)
                .fold(0, |m, c| m | 1 << c.id)
        );
        !self.running
    }

    pub(crate) fn go<S: SlotCompiler + ?Sized, O: Observer>(
        &mut self,
        slots: &mut S,
        observer: &mut O,
    ) -> Result<(), RunError> {
        loop {
            let t = self.cycle;
            if t.is_multiple_of(POLL_CYCLES) && t > 0 {
                observer.progress(self.progress());
                if let Some(cause) = observer.stop_requested() {
                    self.report_executed(observer, u64::MAX);
                    return Err(RunError::Stopped {
                        cause,
                        cycle: t,
                        cores: self.unfinished(),
                        next_frame: Some(self.ts.tp),
                    });
                }
            }
            if let Some(lap) = self.endless.as_ref().filter(|l| l.proven.is_some()) {
                let (walk, same_state_at) = (lap.walk.clone(), lap.proven.flatten());
                self.report_executed(observer, u64::MAX);
                return Err(RunError::EndlessWalk {
                    frame: walk[0],
                    walk,
                    cycle: t,
                    cores: self.unfinished(),
                    same_state_at,
                });
            }
            if self.scheduler(t, observer)? {
                self.report_executed(observer, u64::MAX);
                return Ok(());
            }
            let tp = self.ts.tp;
            if self.endless.as_mut().is_some_and(|l| l.moved_to(tp)) {
                self.arrived(t);
            }
            if t >= self.config.max_cycles {
                self.report_executed(observer, u64::MAX);
                return Err(RunError::Watchdog {
                    limit: self.config.max_cycles,
                    cores: self.unfinished(),
                    next_frame: Some(self.ts.tp),
                });
            }
            // Cores in a memory slot are arbitrated below; the rest of the running ones
            // take their slot if it is due (in core order, as the RTL's cores do).
            for c in lanes_of(self.running & !self.in_memory) {
                if self.cores[c].next == t {
                    self.slot(c, t, slots, observer);
                }
            }
            if self.in_memory != 0 {
                self.memory_cycle(t, observer);
            }
            if O::WANTS_EXECUTED {
                let pending = self
                    .cores
                    .iter()
                    .filter_map(|c| c.memory.map(|m| m.start))
                    .min()
                    .unwrap_or(t + 1);
                self.report_executed(observer, pending.min(t + 1));
            }
            self.cycle = self.next_cycle(t);
        }
    }

    /// The scheduler came back to the loop's first frame in `t`: the livelock proof's
    /// part. Out of line, so that the cycle loop stays as small as it was without it.
    #[cold]
    #[inline(never)]
    fn arrived(&mut self, t: u64) {
        let Some(lap) = &self.endless else { return };
        if lap.wants_state() && self.quiet() {
            let same = lap.kept().is_some_and(|kept| self.is_at(kept, t));
            let state = (!same && lap.keeps_next()).then(|| self.arrival(t));
            if let Some(lap) = &mut self.endless {
                lap.offer(t, same, state);
            }
        }
        // A proven run stops as the next cycle begins: no cycle between is skipped.
        self.changed |= self.endless.as_ref().is_some_and(|l| l.proven.is_some());
    }

    /// Whether every core is idle and no broadcast is under way: the arrivals whose states
    /// the livelock proof compares (see [`Arrival`]).
    fn quiet(&self) -> bool {
        self.live.is_empty()
            && self.ts.delivery.is_none()
            && self
                .cores
                .iter()
                .all(|c| c.phase == Phase::Idle && c.memory.is_none())
    }

    /// The state the livelock proof compares, after the scheduler's decision in `t`.
    fn arrival(&self, t: u64) -> Arrival {
        Arrival {
            ts: self.ts.state(t),
            registers: self.registers(),
            memory: self.memory.clone(),
            last_grant: self.last_grant,
        }
    }

    /// Whether the machine after the scheduler's decision in `t` is in state `a`.
    fn is_at(&self, a: &Arrival, t: u64) -> bool {
        // In place, the fields that change most often first: a loop that counts differs
        // in a register at almost every arrival.
        a.last_grant == self.last_grant
            && a.registers
                .iter()
                .zip(&self.cores)
                .all(|(r, c)| *r == c.regs)
            && a.ts == self.ts.state(t)
            && a.memory == self.memory
    }

    /// The next cycle in which anything can happen after `t`: a core's next slot, a memory
    /// slot's arbitration (every cycle), the scheduler's next decision, or, if it waits for
    /// cores, the cycle after one of them ends; and the next poll and the watchdog limit.
    /// Cycles between are idle for everyone, so they are skipped.
    fn next_cycle(&mut self, t: u64) -> u64 {
        let after = t + 1;
        if std::mem::take(&mut self.changed) || self.in_memory != 0 {
            return after;
        }
        let mut next = u64::MAX;
        for (c, core) in self.cores.iter().enumerate() {
            if self.running & (1 << c) != 0 {
                next = next.min(core.next);
            }
        }
        if let Some(ts) = self.ts.next_decision(t) {
            next = next.min(ts);
        }
        let poll = (t / POLL_CYCLES + 1) * POLL_CYCLES;
        next.min(poll)
            .min(self.config.max_cycles.max(after))
            .max(after)
    }

    /// The scheduler's part of cycle `t`; true when the run ends in `t`. The watchdog is
    /// checked after it: a run that ends in the limit cycle did nothing in it.
    fn scheduler<O: Observer>(&mut self, t: u64, observer: &mut O) -> Result<bool, RunError> {
        let idle = self.idle();
        if t >= self.config.max_cycles {
            // No decision may be taken at the limit; only the end is recognised.
            return Ok(self.ts.ends_here(t, idle));
        }
        match self.ts.step(t, idle) {
            TsAction::Nothing | TsAction::Wait | TsAction::Jump => {}
            TsAction::End => return Ok(true),
            TsAction::ReservedFence { frame } => {
                return Err(RunError::Internal {
                    frame: Some(frame),
                    message: format!(
                        "frame {frame}: the task scheduler reached a control frame with the \
                         reserved fence value 3"
                    ),
                })
            }
            TsAction::Control { frame } => {
                self.frames_done += 1;
                self.summary.control_frames += 1;
                if O::WANTS_EVENTS {
                    observer.event(Event::ControlFrame { frame, cycle: t });
                }
            }
            TsAction::Broadcast { frame, mask, fence } => {
                if self.config.tasks == TaskLog::All && self.records.len() == TASK_LOG_LIMIT {
                    return Err(RunError::TaskLogFull {
                        limit: TASK_LOG_LIMIT,
                        cycle: t,
                    });
                }
                self.frames_done += 1;
                self.issue(t, frame, mask, fence, observer);
            }
        }
        // After the step: a one-cycle broadcast (`broadcast=1`) is delivered in the cycle
        // it began, and a longer one in its last cycle, when the step has nothing to do.
        if let Some(d) = self.ts.deliver(t) {
            let words = frame_words(self.ts.frame(d.frame));
            let start = t + 1 + self.slots.pipeline_fill;
            for c in lanes_of(d.mask) {
                let core = &mut self.cores[c];
                if d.init & (1 << c) != 0 {
                    core.regs[0] = d.r0[c];
                }
                core.start(d.frame, self.tasks as usize - 1, words, start);
                self.running |= 1 << c;
                let counters = &mut self.counters[c];
                counters.tasks += 1;
                counters.ran = true;
            }
        }
        Ok(false)
    }

    fn issue<O: Observer>(&mut self, s: u64, frame: usize, mask: u16, fence: Fence, o: &mut O) {
        let last = s + self.config.timing.broadcast_cycles.max(1) - 1;
        let start = if mask == 0 {
            last
        } else {
            last + 1 + self.slots.pipeline_fill
        };
        let record = TaskRecord {
            frame,
            mask,
            fence,
            issue: s,
            start,
            end: last,
        };
        let id = self.tasks as usize;
        self.tasks += 1;
        self.summary.tasks += 1;
        self.summary.by_fence[usize::from(fence.bits())] += 1;
        if self.config.tasks != TaskLog::None && self.summary.first.is_none() {
            self.summary.first = Some(record);
        }
        if self.config.tasks == TaskLog::All {
            self.records.push(record);
        }
        self.live.push(LiveTask {
            id,
            record,
            remaining: mask,
        });
        if O::WANTS_EVENTS {
            o.event(Event::Broadcast {
                frame,
                mask,
                fence,
                from: s,
                to: last,
            });
        }
        if mask == 0 {
            self.task_part_ended(id, 0, last);
        }
    }

    /// Core `c`'s slot in cycle `t`: the caller's core is running, due in `t`, and not in a
    /// memory slot.
    fn slot<S: SlotCompiler + ?Sized, O: Observer>(
        &mut self,
        c: usize,
        t: u64,
        slots: &mut S,
        observer: &mut O,
    ) {
        let timing = self.slots;
        let core = &mut self.cores[c];
        debug_assert!(core.phase == Phase::Running && core.memory.is_none() && core.next == t);
        if core.implicit_ready {
            self.part_ended(c, t, observer);
            return;
        }
        if core.bubbles > 0 {
            core.bubbles -= 1;
            let r0 = core.regs[0];
            core.push(Past::Bubble, r0);
            core.next = t + 1;
            return;
        }
        if !core.bubbled && core.needs_bubble(&timing) {
            // B2/B3: the bubble keeps the previous slot's B value (the doc leaves it open).
            core.bubbled = true;
            let b = core.prev_b();
            core.push(Past::Bubble, b);
            core.next = t + 1;
            return;
        }
        core.bubbled = false;
        // Compiled slots log no instructions; an observer that wants them sees every slot.
        if !O::WANTS_EXECUTED && self.run_ahead(c, t, slots, observer) {
            return;
        }
        let core = &mut self.cores[c];
        let b = core.b_value();
        let prev_b = core.prev_b();
        let ip = core.ip;
        let instr = core.code[usize::from(ip)];
        let row = core.regs[usize::from(instr_row(instr))];
        let before = core.regs;
        match execute(instr, &mut core.regs, core.id) {
            Effect::Memory(access) => {
                self.in_memory |= 1 << c;
                core.memory = Some(MemorySlot {
                    old: before[usize::from(access.reg & 0xF)],
                    load: access.op.is_read(),
                    addr: access.address(),
                    reg: access.reg,
                    value: access.value.unwrap_or(0),
                    start: t,
                    prev_b,
                    read_at: None,
                    b,
                    row,
                });
            }
            effect => {
                core.push(Past::Other, b);
                self.counters[c].instructions += 1;
                if O::WANTS_EXECUTED {
                    let after = self.cores[c].regs;
                    self.log(c, t, ip, instr, (&before, &after), None);
                }
                self.flow(c, t, effect.flow(), observer);
            }
        }
    }

    /// Run core `c`'s register-only slots from cycle `t` through the backend's compiled
    /// code for its frame, if it has some and the core stands where that is exact (see
    /// [`SlotRun`]); false when the slot is left to the engine.
    fn run_ahead<S: SlotCompiler + ?Sized, O: Observer>(
        &mut self,
        c: usize,
        t: u64,
        slots: &mut S,
        observer: &mut O,
    ) -> bool {
        let core = &self.cores[c];
        let register_only = !matches!(
            core.code[usize::from(core.ip)],
            Instr::Mem { .. } | Instr::Ready
        );
        if !register_only || core.past.iter().any(|p| matches!(p, Past::Load { .. })) {
            return false;
        }
        let frame = core.frame % TASK_MEMORY_FRAMES;
        let Some(code) = self.ahead[frame].code(&core.words, slots) else {
            return false;
        };
        // Only a poll (which may stop the run) and the watchdog see a core between slots.
        let poll = (t / POLL_CYCLES + 1) * POLL_CYCLES;
        let mut state = SlotState {
            regs: core.regs,
            cycle: t,
            limit: self.config.max_cycles.min(poll),
            branch_bubbles: self.slots.taken_branch_bubbles,
            instructions: 0,
            ip: core.ip,
            id: core.id,
            last_b: 0,
        };
        let exit = code.run(&mut state);
        if state.instructions == 0 {
            return false;
        }
        self.counters[c].instructions += state.instructions;
        let core = &mut self.cores[c];
        core.regs = state.regs;
        core.ip = state.ip & 0xF;
        // Only loads matter to the rules that look back, and the run had none.
        core.past = [Past::Other; 3];
        core.prev_b = Some(state.last_b);
        core.bubbles = 0;
        core.next = state.cycle;
        if exit == SlotExit::RanOffEnd {
            // As `flow` after IP 15: the injected ready's slot follows, or the part ends
            // in IP 15's slot.
            if self.slots.ip15_end_cycles > 0 {
                core.implicit_ready = true;
                core.next = state.cycle + 1;
            } else if state.cycle == t {
                self.part_ended(c, t, observer);
            } else {
                // The end is due in that slot: `slot` ends the part there.
                core.implicit_ready = true;
            }
        }
        true
    }

    /// The grants of cycle `t` to the memory slots under way: the cores granted, and the
    /// banks that granted a load (the bank-switch rule's rescue looks at those).
    fn arbitrate(&mut self) -> (u16, u16) {
        let mut granted = 0u16;
        let mut load_banks = 0u16;
        if self.slots.round_robin {
            let mut asks = [0u16; BANKS];
            let mut asked = 0u16;
            for c in lanes_of(self.in_memory) {
                if let Some(m) = &self.cores[c].memory {
                    asks[m.bank()] |= 1 << c;
                    asked |= 1 << m.bank();
                }
            }
            for bank in lanes_of(asked) {
                // The first requester after the last core granted: rotate the request mask
                // so that core `last + 1` is bit 0.
                let from = (u32::from(self.last_grant[bank]) + 1) % 16;
                let w = ((asks[bank].rotate_right(from).trailing_zeros() + from) % 16) as usize;
                granted |= 1 << w;
                self.last_grant[bank] = w as u8;
                if self.cores[w].memory.is_some_and(|m| m.load) {
                    load_banks |= 1 << bank;
                }
            }
        } else {
            granted = self.in_memory;
            for c in lanes_of(self.in_memory) {
                if let Some(m) = &self.cores[c].memory {
                    if m.load {
                        load_banks |= 1 << m.bank();
                    }
                }
            }
        }
        (granted, load_banks)
    }

    /// Bank arbitration and the memory slots' grants in cycle `t`.
    fn memory_cycle<O: Observer>(&mut self, t: u64, observer: &mut O) {
        let (granted, load_banks) = self.arbitrate();
        let timing = self.slots;
        for c in lanes_of(self.in_memory) {
            let core = &mut self.cores[c];
            let Some(m) = core.memory.as_mut() else {
                continue;
            };
            let finished = if m.load {
                match m.read_at {
                    Some(u) => t == u + timing.load_cycles - 1,
                    None if granted & (1 << c) != 0 => {
                        let prev_bank = usize::from(m.prev_b & 0xF);
                        let switched = timing.bank_switch
                            && t == m.start
                            && prev_bank != m.bank()
                            && load_banks & (1 << prev_bank) == 0;
                        if !switched {
                            core.regs[usize::from(m.reg)] = self.memory[usize::from(m.addr)];
                            self.accesses.count(m.addr);
                            m.read_at = Some(t);
                        }
                        !switched && timing.load_cycles == 1
                    }
                    None => false,
                }
            } else if granted & (1 << c) != 0 {
                self.memory[usize::from(m.addr)] = m.value;
                self.accesses.count(m.addr);
                true
            } else {
                false
            };
            if finished {
                let m = *m;
                core.memory = None;
                self.in_memory &= !(1 << c);
                self.memory_slot_ended(c, t, m, observer);
            }
        }
    }

    /// Core `c`'s memory slot `m` finished in `t`: its statistics, its log line, and where
    /// the core goes next.
    fn memory_slot_ended<O: Observer>(
        &mut self,
        c: usize,
        t: u64,
        m: MemorySlot,
        observer: &mut O,
    ) {
        // Cycles the slot waited beyond its own length, for the statistics.
        let nominal = if m.load {
            self.slots.load_cycles - 1
        } else {
            0
        };
        let waited = t - m.start - nominal;
        self.counters[c].bank_stalls += waited;
        self.counters[c].stalls += waited;
        // The slot was not served in its first `waited` cycles (the bank went to other
        // cores, or a bank switch cost it one): the views show them as a bank stall.
        if O::WANTS_EVENTS && waited > 0 {
            observer.event(Event::Stall {
                core: c as u8,
                from: m.start,
                to: m.start + waited,
                cause: StallCause::BankConflict,
                addr: m.addr,
            });
        }
        let core = &mut self.cores[c];
        let past = if m.load {
            Past::Load {
                dest: m.reg,
                row: m.row,
            }
        } else {
            Past::Other
        };
        core.push(past, m.b);
        let ip = core.ip;
        let instr = core.code[usize::from(ip)];
        self.counters[c].instructions += 1;
        if O::WANTS_EXECUTED {
            let after = self.cores[c].regs;
            let op = if m.load { MemOp::Ld } else { MemOp::St };
            let byte = if m.load {
                after[usize::from(m.reg)]
            } else {
                m.value
            };
            // Logged at the cycle memory served it: a store's grant, a load's counting
            // grant, so the last writer of a byte is the last store in log order.
            let at = m.read_at.unwrap_or(t);
            let mut before = after;
            if m.load {
                before[usize::from(m.reg & 0xF)] = m.old;
            }
            self.log(
                c,
                at,
                ip,
                instr,
                (&before, &after),
                Some((op, m.addr, byte)),
            );
        }
        self.flow(c, t, Flow::Next, observer);
    }

    /// Where core `c` goes after an instruction that finished in `t`.
    fn flow<O: Observer>(&mut self, c: usize, t: u64, flow: Flow, observer: &mut O) {
        let timing = self.slots;
        let core = &mut self.cores[c];
        core.next = t + 1;
        match flow {
            Flow::Next if usize::from(core.ip) + 1 < FRAME_INSTRS => core.ip += 1,
            Flow::Next if timing.ip15_end_cycles > 0 => core.implicit_ready = true,
            Flow::Next | Flow::Ready => self.part_ended(c, t, observer),
            Flow::Jump(target) => {
                core.ip = target & 0xF;
                core.bubbles = timing.taken_branch_bubbles;
            }
        }
    }

    /// Core `c`'s part of its task ended with its ready (or last slot) in `t`.
    fn part_ended<O: Observer>(&mut self, c: usize, t: u64, observer: &mut O) {
        let core = &mut self.cores[c];
        core.phase = Phase::Idle;
        self.running &= !(1 << c);
        self.changed = true;
        let (task, frame, start) = (core.task, core.frame, core.part_start);
        self.counters[c].busy += t + 1 - start;
        if O::WANTS_EVENTS {
            observer.event(Event::CorePart {
                core: c as u8,
                frame,
                start,
                end: t,
            });
        }
        self.task_part_ended(task, c, t);
    }

    fn task_part_ended(&mut self, id: usize, c: usize, t: u64) {
        let Some(i) = self.live.iter().position(|l| l.id == id) else {
            return;
        };
        let live = &mut self.live[i];
        live.record.end = live.record.end.max(t);
        live.remaining &= !(1 << c);
        if live.remaining != 0 {
            return;
        }
        let done = self.live.swap_remove(i);
        let record = done.record;
        if self.config.tasks == TaskLog::All {
            self.records[done.id].end = record.end;
        }
        if self.config.tasks != TaskLog::None {
            if self.summary.first.is_some_and(|f| f.issue == record.issue) {
                self.summary.first = Some(record);
            }
            self.summary.offer_last(record);
        }
    }

    /// Buffer one executed instruction for the observer.
    fn log(
        &mut self,
        c: usize,
        cycle: u64,
        ip: u8,
        instr: Instr,
        (before, after): (&[u8; 16], &[u8; 16]),
        memory: Option<(MemOp, u16, u8)>,
    ) {
        let writes = Executed::writes_of(instr, after);
        self.executed.push(Executed {
            cycle,
            core: c as u8,
            frame: self.cores[c].frame,
            ip,
            instr,
            writes,
            memory,
            before: *before,
        });
    }

    /// Report the executed instructions of cycles before `until`, in (cycle, core) order.
    fn report_executed<O: Observer>(&mut self, observer: &mut O, until: u64) {
        if !O::WANTS_EXECUTED || self.executed.is_empty() {
            return;
        }
        self.executed.sort_by_key(|e| (e.cycle, e.core));
        let n = self.executed.partition_point(|e| e.cycle < until);
        for e in self.executed.drain(..n) {
            observer.executed(&e);
        }
    }

    pub(crate) fn unfinished(&self) -> Vec<UnfinishedCore> {
        self.cores
            .iter()
            .filter(|c| c.phase == Phase::Running)
            .map(|c| UnfinishedCore {
                core: c.id,
                frame: c.frame,
                ip: c.ip,
                wait: if c.part_start > self.cycle {
                    CoreWait::NotStarted {
                        start: c.part_start,
                    }
                } else if c
                    .memory
                    .is_some_and(|m| m.read_at.is_none() && m.start < self.cycle)
                {
                    // A memory slot that asked for its bank in an earlier cycle and has not
                    // been served: it waits for its round-robin turn (or a bank switch).
                    CoreWait::BankConflict
                } else {
                    CoreWait::Running
                },
            })
            .collect()
    }

    fn progress(&self) -> Progress {
        Progress {
            frames: self.frames_done,
            tasks: self.tasks,
            instructions: self.counters.iter().map(|c| c.instructions).sum(),
            cycle: self.cycle,
        }
    }

    /// The cycle the machine stands at: the next to run (when the run ended: its length).
    pub(crate) fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Where the watchdog stops [`Machine::go`]: a live machine moves it to pause and go on.
    /// `go` stops when a cycle at the limit begins, before anything of it, and that cycle
    /// runs whole once the limit is past it.
    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.config.max_cycles = limit.min(Config::MAX_CYCLE_LIMIT);
    }

    /// Every core's registers.
    pub(crate) fn registers(&self) -> [[u8; 16]; 16] {
        std::array::from_fn(|i| self.cores[i].regs)
    }

    /// The bytes of shared memory.
    pub(crate) fn memory(&self) -> Box<[u8; MEMORY_BYTES]> {
        self.memory.clone()
    }

    /// Write `byte` at `addr` between cycles: the host's write, not a core's access.
    pub(crate) fn poke(&mut self, addr: u16, byte: u8) {
        self.memory[usize::from(addr) % MEMORY_BYTES] = byte;
        if let Some(lap) = &mut self.endless {
            lap.forget();
        }
    }

    fn report(&mut self) -> RunReport {
        self.report_tasks(KeptTasks::Take)
    }

    /// The run's report, with the task records kept so far as `kept` says.
    pub(crate) fn report_tasks(&mut self, kept: KeptTasks) -> RunReport {
        let mut registers = [[0u8; 16]; 16];
        for (r, c) in registers.iter_mut().zip(&self.cores) {
            *r = c.regs;
        }
        let mut tasks = match kept {
            KeptTasks::Take => std::mem::take(&mut self.records),
            KeptTasks::Copy => self.records.clone(),
            KeptTasks::Leave => Vec::new(),
        };
        // Tasks still running when a run stops keep the end they had reached.
        for l in &self.live {
            if let Some(r) = tasks.get_mut(l.id) {
                r.end = l.record.end;
            }
        }
        tasks.shrink_to_fit();
        RunReport {
            backend: self.backend.clone(),
            config: self.config,
            dialect: crate::Dialect::Mcst,
            cycles: self.cycle,
            registers,
            memory: self.memory.clone(),
            tasks,
            task_summary: self.summary.clone(),
            instructions: self.counters.iter().map(|c| c.instructions).sum(),
            stalls: self.counters.iter().map(|c| c.stalls).sum(),
            cores: self.counters,
            memory_stats: MemoryStats {
                accesses_per_bank: self.accesses.totals(),
                ..MemoryStats::default()
            },
        }
    }
}

/// The register holding the row of a memory instruction (any register otherwise: unused).
fn instr_row(instr: Instr) -> u8 {
    match instr {
        Instr::Mem { a, .. } => a & 0xF,
        _ => 0,
    }
}

/// The 16 instruction words of a frame.
fn frame_words(bytes: &[u8; FRAME_BYTES]) -> [u16; FRAME_INSTRS] {
    std::array::from_fn(|i| u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]))
}
