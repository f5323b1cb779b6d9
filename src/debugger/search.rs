//! Observers the debugger runs a program with to find where the next stop is: the first
//! executed instruction, in (cycle, core id) order, that hits a breakpoint or a watchpoint or
//! is a given core's next instruction; and the locks held when a cycle begins.
//!
//! A faulting instruction never executes, so no observer sees it: when the run ends in a
//! fault, [`Finder::fault`] is told of it and treats it as the last instruction of the run
//! (a breakpoint on it, or a watch on the byte it would write, stops before it). The
//! instructions lower cores executed in the fault's cycle come before it, through
//! [`Observer::executed_before_fault`].
//!
//! Seeing every instruction makes a run slow, so a search for breakpoints and watches
//! first runs at a plain run's speed with [`FirstStop`], which asks the run to note the
//! first cycle a core comes to a breakpoint or writes a watched byte ([`Stops`]): no stop
//! falls before it, and the [`Finder`] looks from there on only ([`Finder::start_at`]).

use gpu16_machine::engine::isa::MemOp;
use gpu16_machine::MEMORY_BYTES;
use gpu16_machine::{Executed, Observer, Progress, StopCause, StopNote, Stops};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// A flag someone outside the session raises (Ctrl-C) to stop the run under way; as an
/// observer, it asks the run to stop while it is raised, and notes how far the run has
/// come for whoever watches it from another thread (the playground's live progress).
#[derive(Clone, Debug, Default)]
pub(crate) struct Interrupt(pub Arc<AtomicBool>, pub Arc<Reached>);

impl Interrupt {
    /// Whether it is raised.
    pub(crate) fn raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// How far the session's run under way has come: its last [`Progress`], written by the
/// run's thread and read by any other, or nothing since [`Reached::forget`].
#[derive(Debug, Default)]
pub(crate) struct Reached {
    seen: AtomicBool,
    cycle: AtomicU64,
    instructions: AtomicU64,
    tasks: AtomicU64,
    frames: AtomicU64,
}

impl Reached {
    /// Note `p`.
    pub(crate) fn note(&self, p: Progress) {
        self.cycle.store(p.cycle, Ordering::Relaxed);
        self.instructions.store(p.instructions, Ordering::Relaxed);
        self.tasks.store(p.tasks, Ordering::Relaxed);
        self.frames.store(p.frames, Ordering::Relaxed);
        self.seen.store(true, Ordering::Release);
    }

    /// Forget what was noted: a new command begins.
    pub(crate) fn forget(&self) {
        self.seen.store(false, Ordering::Release);
    }

    /// The last progress noted, if any since [`Reached::forget`]. Its four numbers are
    /// read one by one, so while the run goes on they may come from two neighbouring
    /// notes: good enough for a display, which is all this is for.
    pub(crate) fn last(&self) -> Option<Progress> {
        self.seen.load(Ordering::Acquire).then(|| Progress {
            frames: self.frames.load(Ordering::Relaxed),
            tasks: self.tasks.load(Ordering::Relaxed),
            instructions: self.instructions.load(Ordering::Relaxed),
            cycle: self.cycle.load(Ordering::Relaxed),
        })
    }
}

impl Observer for Interrupt {
    const WANTS_EVENTS: bool = false;
    const WANTS_PROGRESS: bool = true;

    fn stop_requested(&mut self) -> Option<StopCause> {
        self.raised().then_some(StopCause::Interrupt)
    }

    fn progress(&mut self, progress: Progress) {
        self.1.note(progress);
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

/// What stopped a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hit {
    /// A core was about to execute a breakpoint's instruction in `cycle`.
    Break {
        /// The breakpoint.
        id: u64,
        /// The cycle of the instruction.
        cycle: u64,
        /// The lowest core that hit it in that cycle.
        core: u8,
        /// Its frame.
        frame: usize,
        /// Its IP.
        ip: u8,
    },
    /// A core wrote a watched byte in `cycle`.
    Watch {
        /// The watchpoint.
        id: u64,
        /// The cycle of the write.
        cycle: u64,
        /// The writer.
        core: u8,
        /// The writer's frame.
        frame: usize,
        /// The store's IP.
        ip: u8,
        /// The byte's address.
        addr: u16,
        /// The byte before.
        old: u8,
        /// The byte written.
        new: u8,
        /// The run faults in `cycle` (this core's write or a later core's instruction): no
        /// state after that cycle exists, so the stop shows the state when `cycle` began.
        fault_cycle: bool,
        /// The write is the faulting instruction's: it never happens, `new` is the byte it
        /// would have written.
        faulting: bool,
    },
    /// The core a `stepi` follows executed an instruction in `cycle`.
    Instr {
        /// The cycle it executed in.
        cycle: u64,
        /// The core.
        core: u8,
        /// Its frame.
        frame: usize,
        /// Its IP.
        ip: u8,
    },
}

/// A breakpoint at a (frame, IP).
#[derive(Clone, Debug)]
pub(crate) struct BreakAt {
    /// Its id.
    pub(crate) id: u64,
    /// The only core it stops, if one.
    pub(crate) core: Option<u8>,
    /// Its condition, if one: read with the core's registers as it comes there, memory
    /// as it finds it in its turn, the cycle and the core.
    pub(crate) when: Option<std::rc::Rc<str>>,
}

/// What a breakpoint's condition reads.
struct Coming<'a> {
    regs: &'a [u8; 16],
    memory: &'a [u8; MEMORY_BYTES],
    cycle: u64,
    core: u8,
}

impl super::expr::Machine for Coming<'_> {
    fn register(&self, _core: u8, r: u8) -> u8 {
        self.regs[usize::from(r & 0xF)]
    }
    fn byte(&self, addr: u16) -> u8 {
        self.memory[usize::from(addr) % MEMORY_BYTES]
    }
    fn cycle(&self) -> u64 {
        self.cycle
    }
    fn core(&self) -> u8 {
        self.core
    }
}

/// Looks for the first [`Hit`] at or after cycle `from`, ignoring breakpoints in cycle
/// `skip` (where the session already stopped). A watch hit waits until its cycle is over,
/// since a breakpoint in the same cycle stops the machine before it.
pub(crate) struct Finder {
    /// The first cycle that counts.
    pub(crate) from: u64,
    /// A cycle whose breakpoints do not count.
    pub(crate) skip: Option<u64>,
    /// (frame, IP) -> the breakpoints there, lowest id first: (id, the only core it
    /// stops, if one).
    pub(crate) breaks: HashMap<(usize, u8), Vec<BreakAt>>,
    /// Address -> watchpoint id.
    pub(crate) watches: HashMap<u16, u64>,
    /// The core a `stepi` follows.
    pub(crate) core: Option<u8>,
    /// After a watch stop at (cycle, core): the later writes of that cycle count too,
    /// though the cycle is before `from`.
    pub(crate) watch_after: Option<(u64, u8)>,
    memory: Box<[u8; MEMORY_BYTES]>,
    /// The first cycle whose instructions the finder needs (see [`Finder::start_at`]).
    start: u64,
    pending: Option<Hit>,
    found: Option<Hit>,
}

impl Finder {
    /// A finder over a run starting from `memory`.
    pub(crate) fn new(from: u64, skip: Option<u64>, memory: &[u8]) -> Finder {
        let mut bytes = Box::new([0u8; MEMORY_BYTES]);
        let n = memory.len().min(MEMORY_BYTES);
        bytes[..n].copy_from_slice(&memory[..n]);
        Finder {
            from,
            skip,
            breaks: HashMap::new(),
            watches: HashMap::new(),
            core: None,
            watch_after: None,
            memory: bytes,
            start: 0,
            pending: None,
            found: None,
        }
    }

    /// The breakpoint core `core` stops at at (frame, IP) in `cycle`, its registers
    /// `regs`, if any. A condition that cannot be evaluated (a division by zero) stops.
    fn break_id(&self, frame: usize, ip: u8, core: u8, cycle: u64, regs: &[u8; 16]) -> Option<u64> {
        let view = Coming {
            regs,
            memory: &self.memory,
            cycle,
            core,
        };
        self.breaks
            .get(&(frame, ip))?
            .iter()
            .find(|b| {
                b.core.is_none_or(|k| k == core)
                    && b.when
                        .as_deref()
                        .is_none_or(|e| super::expr::evaluate(e, &view) != Ok(0))
            })
            .map(|b| b.id)
    }

    /// Look from cycle `start` on only: no hit falls before it. The run hands over shared
    /// memory as the first instruction seen begins ([`Observer::executed_memory`]), which
    /// the bytes a watch hit reports as `old` come from.
    pub(crate) fn start_at(&mut self, start: u64) {
        self.start = start;
    }

    /// The stops a first, fast run notes ([`FirstStop`]): this finder's breakpoints and
    /// watches, from its `from`.
    pub(crate) fn stops(&self) -> Stops {
        let mut breaks: HashMap<usize, u16> = HashMap::new();
        for &(frame, ip) in self.breaks.keys() {
            *breaks.entry(frame).or_default() |= 1 << (ip & 0xF);
        }
        Stops {
            breaks,
            watches: self.watches.keys().copied().collect(),
            from: self.from,
            skip: self.skip,
            also: self.watch_after.map(|(cycle, _)| cycle),
        }
    }

    /// Take `hit` as found, without a run (the fast first run found it exactly).
    pub(crate) fn found(&mut self, hit: Hit) {
        self.found = Some(hit);
    }

    /// The first hit, once the run is over.
    pub(crate) fn hit(&self) -> Option<Hit> {
        self.found.or(self.pending)
    }

    /// The run ended in `fault`: the faulting instruction is the last one in (cycle, core
    /// id) order and it does not execute. A breakpoint on it (in a cycle that counts) stops
    /// before its cycle, like one on an executed instruction; a watch on the byte a
    /// faulting store would write stops too (marked `faulting`); a watch hit of the fault's
    /// cycle is marked `fault_cycle`. A hit found earlier in the order stays the hit.
    pub(crate) fn fault(&mut self, fault: &Faulted) {
        if self.found.is_some() {
            return;
        }
        // A pending watch of an earlier cycle comes first; one of the fault's cycle (a
        // lower core's write) comes after a breakpoint on the fault, which stops before it.
        if let Some(Hit::Watch { cycle, .. }) = self.pending {
            if cycle < fault.cycle {
                self.found = self.pending.take();
                return;
            }
        }
        let counts = fault.cycle >= self.from;
        if counts && self.skip != Some(fault.cycle) {
            if let Some(id) =
                self.break_id(fault.frame, fault.ip, fault.core, fault.cycle, &fault.regs)
            {
                self.found = Some(Hit::Break {
                    id,
                    cycle: fault.cycle,
                    core: fault.core,
                    frame: fault.frame,
                    ip: fault.ip,
                });
                self.pending = None;
                return;
            }
        }
        if let Some(Hit::Watch {
            ref mut fault_cycle,
            ..
        }) = self.pending
        {
            *fault_cycle = true;
            self.found = self.pending.take();
            return;
        }
        if let Some((addr, new)) = fault.write {
            if self.watch_counts(fault.cycle, fault.core) {
                if let Some(&id) = self.watches.get(&addr) {
                    self.found = Some(Hit::Watch {
                        id,
                        cycle: fault.cycle,
                        core: fault.core,
                        frame: fault.frame,
                        ip: fault.ip,
                        addr,
                        old: self.memory[usize::from(addr) % MEMORY_BYTES],
                        new,
                        fault_cycle: true,
                        faulting: true,
                    });
                }
            }
        }
    }

    /// Whether a write by `core` in `cycle` can stop the session: at or after `from`, but
    /// not at or before the write a watch stop already reported (`watch_after`).
    fn watch_counts(&self, cycle: u64, core: u8) -> bool {
        match self.watch_after {
            Some((c, k)) if cycle == c => core > k,
            _ => cycle >= self.from,
        }
    }
}

/// The fault that ended a run, as [`Finder::fault`] needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Faulted {
    /// The fault's cycle.
    pub(crate) cycle: u64,
    /// The faulting core.
    pub(crate) core: u8,
    /// Its frame.
    pub(crate) frame: usize,
    /// The faulting instruction's IP.
    pub(crate) ip: u8,
    /// For a store, the address and the byte it would have written.
    pub(crate) write: Option<(u16, u8)>,
    /// The faulting core's registers as the fault's cycle began.
    pub(crate) regs: [u8; 16],
}

impl Observer for Finder {
    const WANTS_EVENTS: bool = false;
    const WANTS_PROGRESS: bool = true;
    const WANTS_EXECUTED: bool = true;

    fn executed_from(&self) -> u64 {
        self.start
    }

    fn executed_memory(&mut self, memory: &[u8; MEMORY_BYTES]) {
        self.memory.copy_from_slice(memory);
    }

    fn stop_requested(&mut self) -> Option<StopCause> {
        self.found.map(|_| StopCause::Interrupt)
    }

    fn executed(&mut self, e: &Executed) -> bool {
        if self.found.is_some() {
            return false;
        }
        if let Some(Hit::Watch { cycle, .. }) = self.pending {
            if e.cycle > cycle {
                self.found = self.pending.take();
                return false;
            }
        }
        let counts = e.cycle >= self.from;
        if counts && self.core == Some(e.core) {
            self.found = Some(Hit::Instr {
                cycle: e.cycle,
                core: e.core,
                frame: e.frame,
                ip: e.ip,
            });
            return false;
        }
        if counts && self.skip != Some(e.cycle) {
            if let Some(id) = self.break_id(e.frame, e.ip, e.core, e.cycle, &e.before) {
                self.found = Some(Hit::Break {
                    id,
                    cycle: e.cycle,
                    core: e.core,
                    frame: e.frame,
                    ip: e.ip,
                });
                return false;
            }
        }
        if let Some((MemOp::St | MemOp::StSync, addr, new)) = e.memory {
            let cell = &mut self.memory[usize::from(addr) % MEMORY_BYTES];
            let old = std::mem::replace(cell, new);
            if self.watch_counts(e.cycle, e.core) && self.pending.is_none() {
                if let Some(&id) = self.watches.get(&addr) {
                    self.pending = Some(Hit::Watch {
                        id,
                        cycle: e.cycle,
                        core: e.core,
                        frame: e.frame,
                        ip: e.ip,
                        addr,
                        old,
                        new,
                        fault_cycle: false,
                        faulting: false,
                    });
                }
            }
        }
        true
    }

    fn executed_before_fault(&mut self, e: &Executed) {
        // A `stepi` does not stop after an instruction of a cycle that faults (no state
        // after it exists): the session moves to the failure instead.
        let core = self.core.take();
        self.executed(e);
        self.core = core;
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

/// The observer of a search's first, fast run: the run notes the first cycle a core comes
/// to a breakpoint or writes a watched byte ([`Stops`]), and stops soon after.
pub(crate) struct FirstStop {
    /// What to note.
    pub(crate) stops: Stops,
    /// The earliest stop noted.
    pub(crate) first: Option<StopNote>,
}

impl Observer for FirstStop {
    const WANTS_EVENTS: bool = false;
    const WANTS_PROGRESS: bool = true;

    fn stops(&self) -> Option<Stops> {
        Some(self.stops.clone())
    }

    fn stop_noted(&mut self, note: StopNote) {
        // The run tells of earlier ones only.
        self.first = Some(note);
    }

    fn stop_requested(&mut self) -> Option<StopCause> {
        self.first.map(|_| StopCause::Interrupt)
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

/// The last write of a byte or a register in a window of cycles, `from` up to `before`
/// (`when`): (cycle, core, frame, IP, the value written).
pub(crate) struct LastWrite {
    /// What was written: a byte (`Ok(addr)`) or a register of a core (`Err((core, r))`).
    pub(crate) target: Result<u16, (u8, u8)>,
    /// The window's end: instructions of this cycle and later do not count.
    pub(crate) before: u64,
    /// The window's start.
    pub(crate) from: u64,
    /// The last write seen.
    pub(crate) last: Option<(u64, u8, usize, u8, u8)>,
}

impl Observer for LastWrite {
    const WANTS_EVENTS: bool = false;
    const WANTS_EXECUTED: bool = true;

    fn executed_from(&self) -> u64 {
        self.from
    }

    fn executed(&mut self, e: &Executed) -> bool {
        if e.cycle >= self.before {
            return false;
        }
        if e.cycle < self.from {
            return true;
        }
        let value = match self.target {
            Ok(addr) => match e.memory {
                Some((MemOp::St | MemOp::StSync, a, v)) if a % MEMORY_BYTES as u16 == addr => {
                    Some(v)
                }
                _ => None,
            },
            Err((core, r)) if e.core == core => e
                .writes
                .iter()
                .flatten()
                .find(|(w, _)| *w == r)
                .map(|&(_, v)| v),
            Err(_) => None,
        };
        if let Some(v) = value {
            self.last = Some((e.cycle, e.core, e.frame, e.ip, v));
        }
        true
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

/// When core `core`'s part running at cycle `at` ends (`finish`): the last cycle of the
/// first part of that core that ends at or after `at`.
pub(crate) struct PartEnd {
    /// The core.
    pub(crate) core: u8,
    /// The cycle the part runs at.
    pub(crate) at: u64,
    /// Its last cycle, once seen.
    pub(crate) end: Option<u64>,
}

impl Observer for PartEnd {
    const WANTS_PROGRESS: bool = true;

    fn event(&mut self, event: gpu16_machine::Event) {
        if let gpu16_machine::Event::CorePart { core, end, .. } = event {
            if core == self.core && end >= self.at && self.end.is_none_or(|e| end < e) {
                self.end = Some(end);
            }
        }
    }

    fn stop_requested(&mut self) -> Option<StopCause> {
        self.end.map(|_| StopCause::Interrupt)
    }

    /// A failed run reports its events again up to the failure: a part end seen past it
    /// (a core ran ahead) does not count.
    fn rewind_events(&mut self, _cycle: u64) {
        self.end = None;
    }
}

/// The last instruction a core executed in a window of cycles, `from` up to `before`
/// (`reverse-stepi`): (cycle, frame, IP).
pub(crate) struct LastInstr {
    /// The core.
    pub(crate) core: u8,
    /// The window's end: instructions of this cycle and later do not count.
    pub(crate) before: u64,
    /// The window's start.
    pub(crate) from: u64,
    /// The last instruction seen.
    pub(crate) last: Option<(u64, usize, u8)>,
}

impl Observer for LastInstr {
    const WANTS_EVENTS: bool = false;
    const WANTS_EXECUTED: bool = true;

    fn executed_from(&self) -> u64 {
        self.from
    }

    fn executed(&mut self, e: &Executed) -> bool {
        if e.cycle >= self.before {
            return false;
        }
        if e.core == self.core && e.cycle >= self.from {
            self.last = Some((e.cycle, e.frame, e.ip));
        }
        true
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

/// The locks held when a run stops: address -> (holder, cycle of its `ld_sync`).
#[derive(Default)]
pub(crate) struct Locks(pub BTreeMap<u16, (u8, u64)>);

impl Observer for Locks {
    const WANTS_EVENTS: bool = false;
    const WANTS_EXECUTED: bool = true;

    fn executed(&mut self, e: &Executed) -> bool {
        match e.memory {
            Some((MemOp::LdSync, addr, _)) => {
                self.0.insert(addr, (e.core, e.cycle));
            }
            Some((MemOp::StSync, addr, _)) => {
                self.0.remove(&addr);
            }
            _ => {}
        }
        true
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}
