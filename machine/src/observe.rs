//! Events a run reports to an observer as it goes: the raw material of timelines, traces and
//! waveforms. Cores run ahead of one another, so events arrive grouped per core rather than
//! in global cycle order; each carries its cycles, and consumers order them as they need. A
//! failed run's events are those complete before its cycle ([`Observer::rewind_events`]).

use crate::backend::CoreState;
use crate::config::Config;
use crate::frame::Fence;
use crate::isa::{Instr, MemOp};
use crate::lock_wait::LockStall;
use crate::scheduler::{TaskRecord, WaitCause};
use crate::semantics::execute;
use crate::semantics::Effect;
use crate::stop::StopCause;

/// Why a core stalled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StallCause {
    /// Its access waited for a byte another core's atomic sequence locked (`ld_sync`
    /// until its `st_sync`).
    Lock,
    /// Bank-conflict model ([`Config::bank_conflicts`]): its bank already served another
    /// access in that cycle.
    BankConflict,
}

/// A lock wait's charged stretch, as the event a run reports.
#[inline]
pub(crate) fn lock_stall_event(stall: LockStall) -> Event {
    Event::Stall {
        core: stall.core,
        from: stall.from,
        to: stall.to,
        cause: StallCause::Lock,
        addr: stall.addr,
    }
}

/// Something that happened during a run. Intervals are inclusive of both ends unless noted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The scheduler processed a control frame in `cycle` (one cycle by default; R0 init
    /// happens in it).
    ControlFrame {
        /// The control frame's index in the program (0 is the first frame).
        frame: usize,
        /// The cycle it was processed in.
        cycle: u64,
    },
    /// The scheduler broadcast an instruction frame's code in cycles `from..=to` (4 cycles
    /// by default); the task's cores start in `to + 1`.
    Broadcast {
        /// The instruction frame's index in the program.
        frame: usize,
        /// The task's cores: bit k set for core k (its control frame's Core_Active_Vect).
        mask: u16,
        /// The fence of its control frame.
        fence: Fence,
        /// The first broadcast cycle, the task's issue cycle.
        from: u64,
        /// The last broadcast cycle.
        to: u64,
    },
    /// The scheduler was free but waited in cycles `from..to` (end exclusive) for `frame`.
    SchedulerWait {
        /// The frame it waited to process (a CF or an IF).
        frame: usize,
        /// The first cycle waited.
        from: u64,
        /// The cycle it processed the frame in, after waiting `to - from` cycles.
        to: u64,
        /// What it waited for.
        cause: WaitCause,
    },
    /// A core's part of the task of `frame` ran in cycles `start..=end`.
    CorePart {
        /// The core, 0..15.
        core: u8,
        /// The task's instruction frame, by index in the program.
        frame: usize,
        /// The cycle of its first instruction (the cycle after the broadcast).
        start: u64,
        /// The cycle of its last instruction (`ready`, or IP 15 run past); stalls included.
        end: u64,
    },
    /// A core held the lock of `addr` from its ld_sync in `from` to its st_sync in `to`.
    /// The statistics' hold time of the sequence is `to - from` cycles.
    LockHeld {
        /// The core whose atomic sequence it was.
        core: u8,
        /// The locked byte's address (0..4095).
        addr: u16,
        /// The cycle of the `ld_sync`.
        from: u64,
        /// The cycle of the `st_sync`.
        to: u64,
    },
    /// A core stalled in cycles `from..to` (end exclusive).
    Stall {
        /// The core, 0..15.
        core: u8,
        /// The first stalled cycle.
        from: u64,
        /// The cycle its access was retried in: `to - from` stalled cycles.
        to: u64,
        /// Why it stalled.
        cause: StallCause,
        /// The address its access was for.
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

/// One executed instruction and what it did, for an execution log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Executed {
    /// The cycle it executed in.
    pub cycle: u64,
    /// The core that executed it.
    pub core: u8,
    /// The instruction frame the core was running.
    pub frame: usize,
    /// Its IP in the frame.
    pub ip: u8,
    /// The instruction.
    pub instr: Instr,
    /// The registers it wrote and their new values, in register order: one, or two for
    /// `mul`, or none.
    pub writes: [Option<(u8, u8)>; 2],
    /// Its memory access: the operation, the address and the byte loaded or stored.
    pub memory: Option<(MemOp, u16, u8)>,
    /// The core's registers as it began the instruction (a debugger's conditions read
    /// them).
    pub before: [u8; 16],
}

impl Executed {
    /// The registers `instr` writes (by the one definition's footprint) with their values
    /// in `after`, the registers once it executed, in register order.
    pub(crate) fn writes_of(instr: Instr, after: &[u8; 16]) -> [Option<(u8, u8)>; 2] {
        let mut writes = [None; 2];
        let mut m = instr.writes();
        for w in &mut writes {
            if m == 0 {
                break;
            }
            let r = m.trailing_zeros() as u8;
            m &= m - 1;
            *w = Some((r, after[usize::from(r)]));
        }
        writes
    }

    /// What `instr` of `frame` did, from the core's state before it (`before`) and after
    /// (`after`); its meaning comes from the one definition of each instruction
    /// ([`execute`]), which names the registers written and the address accessed.
    pub(crate) fn between(
        instr: Instr,
        frame: usize,
        before: &CoreState,
        after: &CoreState,
    ) -> Executed {
        let writes = Executed::writes_of(instr, &after.regs);
        let mut regs = before.regs;
        let memory = match (execute(instr, &mut regs, before.id), instr) {
            (Effect::Memory(access), Instr::Mem { op, r, .. }) => {
                let byte = if op.is_read() {
                    after.regs
                } else {
                    before.regs
                };
                Some((op, access.address(), byte[usize::from(r & 0xF)]))
            }
            _ => None,
        };
        Executed {
            cycle: before.cycle,
            core: before.id,
            frame,
            ip: before.ip,
            instr,
            writes,
            memory,
            before: before.regs,
        }
    }
}

/// Where a debugger may stop, for a run to note at a plain run's speed: the first cycle,
/// at or after `from`, in which a core comes to an instruction of `breaks` (about to
/// execute it, or to try it again after a stall; in a cycle other than `skip`), or writes
/// a byte of `watches` (or, in cycle `also`, writes one at all). That cycle is a lower
/// bound of where a debugger's exact search, which sees every executed instruction, stops:
/// the search then needs to see instructions from there on only
/// ([`Observer::executed_from`]). The backend notes where a core comes to a breakpoint
/// ([`crate::engine::backend::Port::came_to_stop`]), and the memory's commit path, which
/// every write then takes, notes the writes of watched bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stops {
    /// Breakpoints: for a frame's index in task memory, a mask of its IPs.
    pub breaks: std::collections::HashMap<usize, u16>,
    /// Watched byte addresses.
    pub watches: Vec<u16>,
    /// Nothing before this cycle counts.
    pub from: u64,
    /// A cycle whose breakpoints do not count (where the debugger already stopped).
    pub skip: Option<u64>,
    /// A cycle before `from` whose writes of watched bytes count (after a watch stop in it,
    /// the later writes of its cycle).
    pub also: Option<u64>,
}

/// Where a run noted a core coming to a debugger's stop ([`Observer::stop_noted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopNote {
    /// The cycle.
    pub cycle: u64,
    /// For a breakpoint: the core (the lowest of its cycle), its frame and the IP; `None`
    /// for a write of a watched byte.
    pub at: Option<(u8, usize, u8)>,
}

/// Receives a run's events. Every method but [`Observer::rewind_events`] has a default that
/// ignores them.
pub trait Observer {
    /// Whether the run should collect events at all (lets the no-op observer cost nothing).
    const WANTS_EVENTS: bool = true;
    /// Whether the run should report progress (once per processed frame).
    const WANTS_PROGRESS: bool = false;
    /// Whether the run should report every executed instruction ([`Observer::executed`]).
    /// The run then executes one instruction per core per trip through its loop, which is
    /// slow, until the observer says it has enough.
    const WANTS_EXECUTED: bool = false;
    /// Whether the observer takes the task log itself when the config asks for every task
    /// ([`TaskLog::All`](crate::TaskLog::All)): the run then hands each record to
    /// [`Observer::task`] once it is final and keeps none, so the report's `tasks` is empty
    /// and a long stream's log costs no memory.
    const WANTS_TASKS: bool = false;
    /// Called once before the run starts.
    fn start(&mut self, _config: &Config) {}
    /// Called with every task in issue order, each once its record is final (the task
    /// ended, or the run did), only when [`Observer::WANTS_TASKS`] and the config asks for
    /// every task. The records are exactly the report's `tasks` would have been.
    fn task(&mut self, _record: &TaskRecord) {}
    /// Called with each event as the run produces it, in no global cycle order (see the
    /// module docs); only called when [`Observer::WANTS_EVENTS`].
    fn event(&mut self, _event: Event) {}
    /// Called as the run advances (once a processed frame, and at checkpoints), only when
    /// [`Observer::WANTS_PROGRESS`].
    fn progress(&mut self, _progress: Progress) {}
    /// Asked where progress is reported (so only when [`Observer::WANTS_PROGRESS`]): a
    /// cause stops the run soon after, as [`RunError::Stopped`](crate::RunError::Stopped),
    /// like the watchdog would at the cycle the run had reached.
    fn stop_requested(&mut self) -> Option<StopCause> {
        None
    }
    /// Called with every executed instruction, in (cycle, core id) order, the order of
    /// decisions.md, only when [`Observer::WANTS_EXECUTED`]. Returns whether it wants
    /// more; once it does not, the run goes on at full speed and calls it no more.
    fn executed(&mut self, _executed: &Executed) -> bool {
        false
    }
    /// Called, only when [`Observer::WANTS_EXECUTED`] and the observer still wanted
    /// instructions, after a fault ended the run: each instruction that cores below the
    /// faulting one executed in the fault's cycle, in core order. They precede the fault in
    /// (cycle, core id) order but are not in the failure's state (the machine as the
    /// fault's cycle began), so [`Observer::executed`] never saw them.
    fn executed_before_fault(&mut self, _executed: &Executed) {}
    /// Called, only when [`Observer::WANTS_EVENTS`], when a fault or a livelock ended the
    /// run in `cycle`: forget every event reported so far. When the failure showed, some
    /// cores had run past `cycle` and their events were reported, while the scheduler had
    /// not yet reported all it did before it; the state the failure reports is the machine
    /// as `cycle` began. The run then reports again, from the start, exactly the events
    /// complete before `cycle`: those a run stopped there by the watchdog reports. So every
    /// engine reports the same events for a failed run, and they agree with its state.
    ///
    /// It is called only then, before the events are reported again: never for a run that
    /// ends `Ok`, nor for one the watchdog or a stop ended.
    ///
    /// Every observer writes it: there is no default, so that none can keep the events of
    /// both reports (some past the failure's cycle, the rest twice) by forgetting it. One
    /// that keeps, counts or acts on events drops what it kept, as `Vec<Event>` does by
    /// clearing itself, or, if it cannot take back what it did (a printer), marks that what
    /// follows replaces it. One whose [`Observer::event`] leaves nothing behind, or that
    /// wants no events, has nothing to forget: an empty body.
    fn rewind_events(&mut self, cycle: u64);
    /// Where a debugger may stop, asked once as the run starts: the run notes the first
    /// cycle in which a core comes to one ([`Observer::stop_noted`]). `None`, the default:
    /// nothing is noted. Only the spec dialect's run loop notes stops.
    fn stops(&self) -> Option<Stops> {
        None
    }
    /// The run noted a core coming to a stop, the earliest so far in (cycle, core) order
    /// (a watched write counts as core 0's); called again only with an earlier one. Asked
    /// soon after whether to stop (when [`Observer::WANTS_PROGRESS`]).
    fn stop_noted(&mut self, _note: StopNote) {}
    /// With [`Observer::WANTS_EXECUTED`]: the first cycle whose instructions
    /// [`Observer::executed`] wants. The run goes at full speed up to it, and one
    /// instruction at a time from it. The default: from the start.
    fn executed_from(&self) -> u64 {
        0
    }
    /// With [`Observer::WANTS_EXECUTED`]: called once, just before the run first reports an
    /// instruction (or a fault) at or after [`Observer::executed_from`], with shared memory
    /// as that cycle begins (by byte address), so that an observer that follows memory
    /// through the reported stores need not see the instructions before.
    fn executed_memory(&mut self, _memory: &[u8; crate::memory::MEMORY_BYTES]) {}
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
    const WANTS_EXECUTED: bool = T::WANTS_EXECUTED;
    fn executed(&mut self, executed: &Executed) -> bool {
        (**self).executed(executed)
    }
    fn executed_before_fault(&mut self, executed: &Executed) {
        (**self).executed_before_fault(executed);
    }
    const WANTS_TASKS: bool = T::WANTS_TASKS;
    fn task(&mut self, record: &TaskRecord) {
        (**self).task(record);
    }
    fn rewind_events(&mut self, cycle: u64) {
        (**self).rewind_events(cycle);
    }
    fn stops(&self) -> Option<Stops> {
        (**self).stops()
    }
    fn stop_noted(&mut self, note: StopNote) {
        (**self).stop_noted(note);
    }
    fn executed_from(&self) -> u64 {
        (**self).executed_from()
    }
    fn executed_memory(&mut self, memory: &[u8; crate::memory::MEMORY_BYTES]) {
        (**self).executed_memory(memory);
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
    const WANTS_EXECUTED: bool = A::WANTS_EXECUTED || B::WANTS_EXECUTED;
    fn executed(&mut self, executed: &Executed) -> bool {
        let a = A::WANTS_EXECUTED && self.0.executed(executed);
        let b = B::WANTS_EXECUTED && self.1.executed(executed);
        a || b
    }
    fn executed_before_fault(&mut self, executed: &Executed) {
        if A::WANTS_EXECUTED {
            self.0.executed_before_fault(executed);
        }
        if B::WANTS_EXECUTED {
            self.1.executed_before_fault(executed);
        }
    }
    const WANTS_TASKS: bool = A::WANTS_TASKS || B::WANTS_TASKS;
    fn task(&mut self, record: &TaskRecord) {
        if A::WANTS_TASKS {
            self.0.task(record);
        }
        if B::WANTS_TASKS {
            self.1.task(record);
        }
    }
    fn rewind_events(&mut self, cycle: u64) {
        if A::WANTS_EVENTS {
            self.0.rewind_events(cycle);
        }
        if B::WANTS_EVENTS {
            self.1.rewind_events(cycle);
        }
    }
    fn stops(&self) -> Option<Stops> {
        self.0.stops().or_else(|| self.1.stops())
    }
    fn stop_noted(&mut self, note: StopNote) {
        self.0.stop_noted(note);
        self.1.stop_noted(note);
    }
    fn executed_from(&self) -> u64 {
        let a = if A::WANTS_EXECUTED {
            self.0.executed_from()
        } else {
            u64::MAX
        };
        let b = if B::WANTS_EXECUTED {
            self.1.executed_from()
        } else {
            u64::MAX
        };
        a.min(b)
    }
    fn executed_memory(&mut self, memory: &[u8; crate::memory::MEMORY_BYTES]) {
        if A::WANTS_EXECUTED {
            self.0.executed_memory(memory);
        }
        if B::WANTS_EXECUTED {
            self.1.executed_memory(memory);
        }
    }
}

/// The observer that ignores everything.
impl Observer for () {
    const WANTS_EVENTS: bool = false;
    fn rewind_events(&mut self, _cycle: u64) {}
}

/// An observer that keeps every event.
impl Observer for Vec<Event> {
    fn event(&mut self, event: Event) {
        self.push(event);
    }
    fn rewind_events(&mut self, _cycle: u64) {
        self.clear();
    }
}
