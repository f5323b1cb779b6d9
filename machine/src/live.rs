//! A live machine: a run that pauses when a cycle begins and goes on from there, so that a
//! testbench can advance the model beside an RTL simulation, read its registers, memory,
//! locks and cores between cycles, and write its memory (Python's `gpu16.Machine`).
//!
//! Pausing at cycle N is the watchdog's stop at N, which leaves the machine exactly as N
//! begins (every instruction of earlier cycles executed, none of N); going on raises the
//! limit. Neither moves anything, so a run paused anywhere gives an unpaused run's results
//! (`tests/live.rs` checks that on generated programs of every profile, in both dialects).
//! A fault or a livelock reports the state as its cycle began, taken as [`crate::run()`]
//! takes it: from a second run, which here replays the host's memory writes at the cycles
//! they were made.
//!
//! A machine told to ([`Live::keep_snapshots`]) keeps snapshots of its run as it moves
//! (`live/snapshots.rs` owns which): [`Live::go_back`] goes on from the latest one before a
//! cycle, a failing move's second run starts from the one before the move, and another
//! run (a debugger's search, with its own observer and backend) can start from one
//! ([`Live::snapshot_at_or_before`], [`Snapshot::resume_observed`](crate::Snapshot::resume_observed)).

use crate::backend::Backend;
use crate::config::Config;
use crate::dialect::Dialect;
use crate::frame::{Program, FRAME_BYTES};
use crate::held::Held;
use crate::mcst;
use crate::memory::MEMORY_BYTES;
use crate::observe::{Event, Observer, Progress, StopNote, Stops};
use crate::report::{KeptTasks, RunError, RunFailure, RunReport, UnfinishedCore};
use crate::run::{adopt_state, rewind_cycle, Run, Snapshot};
use crate::scheduler::TaskRecord;
use crate::stop::StopCause;
use crate::task_memory::ProgramFrames;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

mod snapshots;

use snapshots::Snapshots;

/// The most events a live machine keeps for [`Machine::take_events`]; later ones are
/// counted, not kept, until they are taken.
pub(crate) const EVENT_LIMIT: usize = 1 << 20;

/// The most bytes of host writes a live machine accepts over its life: each is kept to be
/// replayed should the run fail (see the module doc).
pub(crate) const HOST_WRITE_LIMIT: usize = 64 << 20;

/// Where a live machine stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Paused as this cycle begins.
    Paused(u64),
    /// The program ended; the report is [`Machine::report`]'s.
    Ended,
    /// The run failed (a fault, the watchdog, a livelock, a backend error).
    Failed,
}

/// Why a host write was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The run is over: its memory is final.
    Finished,
    /// The bytes do not fit in the 4096 bytes of shared memory.
    OutOfRange {
        /// The first address asked for.
        addr: usize,
        /// How many bytes.
        len: usize,
    },
    /// The machine's host writes would pass 64 MiB over its life (each is kept to be
    /// replayed should the run fail).
    TooMuch,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Finished => write!(f, "the run is over; its memory can no longer change"),
            WriteError::OutOfRange { addr, len } => write!(
                f,
                "{len} bytes at address {addr} do not fit in the {MEMORY_BYTES} bytes of shared memory"
            ),
            WriteError::TooMuch => write!(
                f,
                "a machine takes at most {HOST_WRITE_LIMIT} bytes of memory writes over its life"
            ),
        }
    }
}

impl std::error::Error for WriteError {}

/// The events of a live machine not yet taken.
#[derive(Default)]
struct EventLog {
    events: Vec<Event>,
    /// Events past 2^20 kept since the last take.
    dropped: u64,
    /// A replay's run up to the failing step reports nothing (those events were reported).
    muted: bool,
    /// Raised from outside (Ctrl-C): the run stops soon after, and is over.
    interrupt: Option<Arc<AtomicBool>>,
    /// Told how far the run has come, for a display on another thread.
    progress: Option<Box<dyn FnMut(Progress) + Send>>,
    /// The earliest stop noted since stops were set ([`Live::set_stops`]).
    noted: Option<StopNote>,
}

impl Observer for EventLog {
    const WANTS_PROGRESS: bool = true;

    fn stop_requested(&mut self) -> Option<StopCause> {
        self.interrupt
            .as_ref()
            .filter(|f| f.load(Ordering::Relaxed))
            .map(|_| StopCause::Interrupt)
    }

    fn progress(&mut self, progress: Progress) {
        if let Some(note) = &mut self.progress {
            note(progress);
        }
    }

    fn stop_noted(&mut self, note: StopNote) {
        self.noted = Some(note);
    }

    fn event(&mut self, event: Event) {
        if self.muted {
            return;
        }
        if self.events.len() < EVENT_LIMIT {
            self.events.push(event);
        } else {
            self.dropped += 1;
        }
    }

    /// Never called: a live machine runs its `Run` itself, and a failed step's events come
    /// from its own replay up to the failure (`LiveMachine::replay`), not from a rewind.
    fn rewind_events(&mut self, _cycle: u64) {}
}

/// Bytes the host wrote when a cycle began.
struct HostWrite {
    cycle: u64,
    addr: u16,
    bytes: Vec<u8>,
}

/// The run inside a live machine.
enum Now<B: Backend + 'static> {
    Spec(Box<Run<'static, B, EventLog>>),
    Mcst {
        machine: Box<mcst::Machine>,
        backend: Box<B>,
        events: EventLog,
        /// The watchdog the config asked for (the machine's limit moves to pause it).
        asked: u64,
    },
    Over {
        outcome: Box<Result<RunReport, Box<RunFailure>>>,
        events: EventLog,
        /// A spec-dialect run's backend, kept to go back to a snapshot.
        backend: Option<Held<'static, B>>,
    },
    /// Only while one state becomes the next.
    Moving,
}

/// What a live machine offers, whatever its backend (so that one caller can hold a machine
/// of any backend as `Box<dyn Live>`).
pub trait Live {
    /// The cycle the machine is paused at: the next to run. Once the run is over, the
    /// report's `cycles`.
    fn cycle(&self) -> u64;
    /// Where the machine stands.
    fn status(&self) -> Status;
    /// Run `cycles` more cycles (or to the end of the run, if that comes first).
    fn step(&mut self, cycles: u64) -> Status {
        self.run_until(self.cycle().saturating_add(cycles))
    }
    /// Run until `cycle` begins, or to the end of the run (or its failure, the watchdog
    /// included) if that comes first. A cycle at or before the current one does nothing.
    fn run_until(&mut self, cycle: u64) -> Status;
    /// The run's report: while paused, the state so far (`cycles` is the cycle paused
    /// at); once over, what [`crate::run()`] returns for the same run.
    fn report(&mut self) -> Result<RunReport, Box<RunFailure>>;
    /// [`Live::report`] without the task records (its `tasks` is empty): for a caller that
    /// looks between moves, at a cost that does not grow with the length of the task log.
    fn report_without_tasks(&mut self) -> Result<RunReport, Box<RunFailure>>;
    /// Every core's registers, `registers()[core][r]` (cheaper than a report, which copies
    /// the task records).
    fn registers(&self) -> [[u8; 16]; 16];
    /// The 4096 bytes of shared memory, by byte address (bank in the high four bits).
    fn memory(&self) -> Box<[u8; MEMORY_BYTES]>;
    /// The cores whose parts have not ended, and what each waits for (for a failed run,
    /// as its error lists them; none once the program ended).
    fn unfinished(&mut self) -> Vec<UnfinishedCore>;
    /// The open atomic sequences: (bank, holder core, locked address). The MCST dialect
    /// has none.
    fn locks(&self) -> Vec<(usize, u8, u16)>;
    /// [`Live::locks`], each with the cycle of the `ld_sync` that opened it: (bank, holder
    /// core, locked address, cycle).
    fn locks_opened(&self) -> Vec<(usize, u8, u16, u64)>;
    /// Write `bytes` into shared memory from address `addr` (a byte address: bank in the
    /// high four bits, row in the low eight) before the cycle the machine is paused at:
    /// the host's write, not a core's access (no lock, counter or wake sees it).
    fn write_memory(&mut self, addr: usize, bytes: &[u8]) -> Result<(), WriteError>;
    /// The events reported since the last call (at most 2^20), and how many
    /// more were left out for that limit.
    fn take_events(&mut self) -> (Vec<Event>, u64);
    /// A flag that, raised (Ctrl-C), stops the run under way soon after, as
    /// [`RunError::Stopped`]: the run is then over.
    fn set_interrupt(&mut self, flag: Arc<AtomicBool>);
    /// Tell `note` how far a run has come whenever a plain run would tell its observer
    /// ([`Observer::progress`]): for a display on another thread while the machine runs.
    fn set_progress(&mut self, note: Box<dyn FnMut(Progress) + Send>);
    /// Whether to keep events for [`Live::take_events`] (the default); a caller that never
    /// takes them says no, and none are kept.
    fn keep_events(&mut self, keep: bool);
    /// Keep snapshots of the run from here on (spec dialect; the MCST dialect keeps none):
    /// as it moves forward, at multiples of `every` cycles ([`Snapshot::FIRST_SPACING`] is
    /// a good choice), a spacing that doubles as the run grows (at most 64 snapshots and
    /// 64 MiB of them), so that [`Live::go_back`] and runs from
    /// [`Live::snapshot_at_or_before`] start near where they are wanted. Pausing to take
    /// them changes no result. Asked again, it does nothing.
    fn keep_snapshots(&mut self, every: u64);
    /// The cycles of the snapshots kept, in order.
    fn snapshot_cycles(&self) -> Vec<u64>;
    /// Go back to where the run stood as `cycle` begins, before the host's writes of that
    /// cycle and later (which are undone), from the latest snapshot at or before it: the
    /// status there (the run may end or fail before, as it did going forward), or `None`
    /// where no snapshot is kept at or before `cycle`, `cycle` is not before where the
    /// machine stands (for a run that is over: after its last cycle, where it stands as
    /// that cycle begins, not as it failed), or the machine cannot go back (nothing
    /// changed then).
    fn go_back(&mut self, cycle: u64) -> Option<Status>;
    /// The latest snapshot kept at or before `cycle`: a run of the same program and
    /// configuration goes on from it with any backend and observer
    /// ([`Snapshot::resume_observed`](crate::Snapshot::resume_observed)).
    fn snapshot_at_or_before(&self, cycle: u64) -> Option<&Snapshot>;
    /// Note where cores come to `stops` from now on (`None`: nowhere), as a debugger's
    /// search does, forgetting any stop noted before. While stops are set and snapshots
    /// kept, a move pauses at the first snapshot after a stop is noted, so that the stop
    /// lies between the last two snapshots. Stops change no result.
    fn set_stops(&mut self, stops: Option<Stops>);
    /// The earliest stop noted since [`Live::set_stops`].
    fn stop_noted(&self) -> Option<StopNote>;
}

/// A run that pauses between cycles (see the module doc).
pub struct Machine<B: Backend + 'static> {
    program: Program,
    memory: Vec<u8>,
    config: Config,
    writes: Vec<HostWrite>,
    written: usize,
    /// The cycle the machine is paused at (when the run is over: its length).
    cycle: u64,
    now: Now<B>,
    /// Snapshots of the run, where the machine keeps them ([`Live::keep_snapshots`]).
    snapshots: Option<Snapshots>,
}

impl<B: Backend + 'static> Machine<B> {
    /// A machine that will run `program` on `backend` with shared memory starting as
    /// `memory` (zero past its end) under `config` (its `max_cycles` is the watchdog),
    /// paused as cycle 0 begins.
    pub fn new(backend: B, program: Program, memory: &[u8], config: &Config) -> Machine<B> {
        let mut config = *config;
        config.max_cycles = config.max_cycles.min(Config::MAX_CYCLE_LIMIT);
        let memory = memory[..memory.len().min(MEMORY_BYTES)].to_vec();
        let now = match program.dialect() {
            Dialect::Spec => Now::Spec(Box::new(Run::new(
                Held::Owned(Box::new(backend)),
                Held::Owned(Box::new(ProgramFrames::owned(program.clone()))),
                &memory,
                &config,
                Held::Owned(Box::default()),
            ))),
            Dialect::Mcst => {
                let mut events = EventLog::default();
                events.start(&config);
                let image: Vec<[u8; FRAME_BYTES]> =
                    (0..program.len()).map(|f| *program.raw(f)).collect();
                Now::Mcst {
                    machine: Box::new(mcst::Machine::new(backend.name(), &image, &memory, config)),
                    backend: Box::new(backend),
                    events,
                    asked: config.max_cycles,
                }
            }
        };
        Machine {
            program,
            memory,
            config,
            writes: Vec::new(),
            written: 0,
            cycle: 0,
            now,
            snapshots: None,
        }
    }

    fn spec_until(&mut self, mut run: Box<Run<'static, B, EventLog>>, cycle: u64) {
        let mark = run.observer_mut().events.len();
        let from = self.cycle;
        let outcome = loop {
            // Pause at each snapshot due on the way, and there after a stop is noted.
            let to = self
                .snapshots
                .as_ref()
                .map_or(cycle, |s| s.next_after(self.cycle).min(cycle));
            let outcome = run.run_until(to);
            match &outcome {
                Err(RunError::Watchdog { limit, .. }) if *limit < run.asked_limit() => {
                    self.cycle = *limit;
                    if let Some(s) = self.snapshots.as_mut().filter(|s| s.due(*limit)) {
                        s.keep(run.snapshot(*limit));
                    }
                    if *limit >= cycle || run.observer_mut().noted.is_some() {
                        self.now = Now::Spec(run);
                        return;
                    }
                }
                _ => break outcome,
            }
        };
        let concluded = run.conclude(outcome);
        let (backend, events) = run.into_parts();
        let Held::Owned(mut events) = events else {
            unreachable!("a live machine owns its event log")
        };
        let mut backend = Some(backend);
        let outcome = match concluded {
            Ok(report) => Ok(report),
            Err((mut failure, _)) => {
                if let Some(at) = rewind_cycle(&failure.error, self.config.max_cycles) {
                    // The failing step's events are those of the second run from the
                    // cycle this step began at.
                    events.events.truncate(mark);
                    let records = failure.state.tasks.clone();
                    let (stop, back) = self.replay(
                        backend.take().expect("just taken"),
                        from,
                        at,
                        &mut events,
                        records,
                    );
                    backend = Some(back);
                    if let Some(stop) = stop {
                        adopt_state(&mut failure, stop);
                    }
                }
                Err(failure)
            }
        };
        self.conclude(outcome, *events, backend);
    }

    /// A new run of the machine's program at the snapshot at or before `cycle` (the
    /// latest kept), else from its start, with `observer` (whose events are muted until
    /// the caller says), the host's writes made since replayed (those of `cycle` too), up
    /// to `cycle`; with whether it paused there (it always should).
    /// `records` are the run's task records from a later state (see
    /// [`TaskScheduler::resume`](crate::scheduler::TaskScheduler)).
    fn rerun_to(
        &self,
        backend: Held<'static, B>,
        observer: EventLog,
        cycle: u64,
        records: Vec<TaskRecord>,
    ) -> (Box<Run<'static, B, EventLog>>, bool) {
        let source = || Held::Owned(Box::new(ProgramFrames::owned(self.program.clone())) as _);
        let observer = Held::Owned(Box::new(EventLog {
            muted: true,
            ..observer
        }));
        let snapshot = self.snapshots.as_ref().and_then(|s| s.at_or_before(cycle));
        let mut run = match snapshot {
            Some(snapshot) => {
                match Run::resume(backend, source(), snapshot, &self.config, observer, records) {
                    Ok(run) => Box::new(run),
                    Err(fresh) => {
                        let (backend, observer) = fresh.into_parts();
                        Box::new(Run::new(
                            backend,
                            source(),
                            &self.memory,
                            &self.config,
                            observer,
                        ))
                    }
                }
            }
            None => Box::new(Run::new(
                backend,
                source(),
                &self.memory,
                &self.config,
                observer,
            )),
        };
        let start = snapshot.map_or(0, Snapshot::cycle);
        let paused = |outcome: Result<(), RunError>, at: u64| matches!(outcome, Err(RunError::Watchdog { limit, .. }) if limit == at);
        for w in self
            .writes
            .iter()
            .filter(|w| w.cycle >= start && w.cycle <= cycle)
        {
            if !paused(run.run_until(w.cycle), w.cycle) {
                return (run, false);
            }
            for (k, &byte) in w.bytes.iter().enumerate() {
                run.poke(w.addr + k as u16, byte);
            }
        }
        let outcome = run.run_until(cycle);
        (run, paused(outcome, cycle))
    }

    /// The machine's run again, from the snapshot before `from` (or its start), with the
    /// host's writes at their cycles, reporting its events from `from` on, to the
    /// watchdog's stop as `to` begins; and the backend back.
    fn replay(
        &self,
        backend: Held<'static, B>,
        from: u64,
        to: u64,
        events: &mut EventLog,
        records: Vec<TaskRecord>,
    ) -> (Option<RunFailure>, Held<'static, B>) {
        let (mut run, paused) = self.rerun_to(backend, EventLog::default(), from, records);
        if !paused {
            return (None, run.into_parts().0);
        }
        run.observer_mut().muted = false;
        let outcome = run.run_until(to);
        let stop = match run.conclude(outcome) {
            Err((mut f, _)) if matches!(f.error, RunError::Watchdog { limit, .. } if limit == to) =>
            {
                f.state.config = self.config;
                Some(*f)
            }
            _ => None,
        };
        let replayed = std::mem::take(run.observer_mut());
        if !events.muted {
            events.events.extend(replayed.events);
            events.dropped += replayed.dropped;
        }
        (stop, run.into_parts().0)
    }

    fn mcst_until(
        &mut self,
        mut machine: Box<mcst::Machine>,
        mut backend: Box<B>,
        mut events: EventLog,
        asked: u64,
        cycle: u64,
    ) {
        machine.set_limit(cycle.min(asked));
        let outcome = machine.go(&mut *backend, &mut events);
        if let Err(RunError::Watchdog { limit, .. }) = &outcome {
            if *limit < asked {
                self.cycle = machine.cycle();
                self.now = Now::Mcst {
                    machine,
                    backend,
                    events,
                    asked,
                };
                return;
            }
        }
        machine.set_limit(asked);
        let mut state = machine.report_tasks(KeptTasks::Take);
        let outcome = match outcome {
            Ok(()) => Ok(state),
            Err(error) => {
                state.cycles = machine.cycle();
                Err(Box::new(RunFailure { error, state }))
            }
        };
        self.conclude(outcome, events, None);
    }

    /// [`Live::report`], with the task records as `kept` says (never taken: the machine
    /// may go on, and its last report must still have them all).
    fn report_keeping(&mut self, kept: KeptTasks) -> Result<RunReport, Box<RunFailure>> {
        let cycle = self.cycle;
        match &mut self.now {
            Now::Spec(run) => Ok(run.paused_report(cycle, kept)),
            Now::Mcst { machine, asked, .. } => {
                let mut report = machine.report_tasks(kept);
                report.config.max_cycles = *asked;
                Ok(report)
            }
            Now::Over { outcome, .. } if kept == KeptTasks::Leave => {
                // Copied with its records out, so that the copy costs nothing per task.
                let tasks = std::mem::take(&mut over_state_mut(outcome).tasks);
                let copy = (**outcome).clone();
                over_state_mut(outcome).tasks = tasks;
                copy
            }
            Now::Over { outcome, .. } => (**outcome).clone(),
            Now::Moving => unreachable!("a machine is never left moving"),
        }
    }

    fn conclude(
        &mut self,
        outcome: Result<RunReport, Box<RunFailure>>,
        events: EventLog,
        backend: Option<Held<'static, B>>,
    ) {
        self.cycle = match &outcome {
            Ok(report) => report.cycles,
            Err(failure) => failure.state.cycles,
        };
        self.now = Now::Over {
            outcome: Box::new(outcome),
            events,
            backend,
        };
    }
}

impl<B: Backend + 'static> Live for Machine<B> {
    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn status(&self) -> Status {
        match &self.now {
            Now::Over { outcome, .. } if outcome.is_ok() => Status::Ended,
            Now::Over { .. } => Status::Failed,
            _ => Status::Paused(self.cycle),
        }
    }

    fn run_until(&mut self, cycle: u64) -> Status {
        if cycle <= self.cycle {
            return self.status();
        }
        match std::mem::replace(&mut self.now, Now::Moving) {
            Now::Spec(run) => self.spec_until(run, cycle),
            Now::Mcst {
                machine,
                backend,
                events,
                asked,
            } => self.mcst_until(machine, backend, events, asked, cycle),
            over => self.now = over,
        }
        self.status()
    }

    fn report(&mut self) -> Result<RunReport, Box<RunFailure>> {
        self.report_keeping(KeptTasks::Copy)
    }

    fn report_without_tasks(&mut self) -> Result<RunReport, Box<RunFailure>> {
        self.report_keeping(KeptTasks::Leave)
    }

    fn registers(&self) -> [[u8; 16]; 16] {
        match &self.now {
            Now::Spec(run) => run.registers(),
            Now::Mcst { machine, .. } => machine.registers(),
            Now::Over { outcome, .. } => over_state(outcome).registers,
            Now::Moving => unreachable!("a machine is never left moving"),
        }
    }

    fn memory(&self) -> Box<[u8; MEMORY_BYTES]> {
        match &self.now {
            Now::Spec(run) => run.memory(),
            Now::Mcst { machine, .. } => machine.memory(),
            Now::Over { outcome, .. } => over_state(outcome).memory.clone(),
            Now::Moving => unreachable!("a machine is never left moving"),
        }
    }

    fn unfinished(&mut self) -> Vec<UnfinishedCore> {
        match &mut self.now {
            Now::Spec(run) => run.unfinished(),
            Now::Mcst { machine, .. } => machine.unfinished(),
            Now::Over { outcome, .. } => match &**outcome {
                Ok(_) => Vec::new(),
                Err(failure) => match &failure.error {
                    RunError::Watchdog { cores, .. }
                    | RunError::Stopped { cores, .. }
                    | RunError::Livelock { cores, .. }
                    | RunError::EndlessWalk { cores, .. } => cores.clone(),
                    _ => Vec::new(),
                },
            },
            Now::Moving => unreachable!("a machine is never left moving"),
        }
    }

    fn locks(&self) -> Vec<(usize, u8, u16)> {
        match &self.now {
            Now::Spec(run) => run.locks(),
            _ => Vec::new(),
        }
    }

    fn locks_opened(&self) -> Vec<(usize, u8, u16, u64)> {
        match &self.now {
            Now::Spec(run) => run.locks_opened(),
            _ => Vec::new(),
        }
    }

    fn write_memory(&mut self, addr: usize, bytes: &[u8]) -> Result<(), WriteError> {
        if matches!(self.now, Now::Over { .. }) {
            return Err(WriteError::Finished);
        }
        if addr > MEMORY_BYTES || bytes.len() > MEMORY_BYTES - addr {
            return Err(WriteError::OutOfRange {
                addr,
                len: bytes.len(),
            });
        }
        if self.written + bytes.len() > HOST_WRITE_LIMIT {
            return Err(WriteError::TooMuch);
        }
        if bytes.is_empty() {
            return Ok(());
        }
        for (k, &byte) in bytes.iter().enumerate() {
            let a = (addr + k) as u16;
            match &mut self.now {
                Now::Spec(run) => run.poke(a, byte),
                Now::Mcst { machine, .. } => machine.poke(a, byte),
                _ => unreachable!("checked above"),
            }
        }
        self.written += bytes.len();
        self.writes.push(HostWrite {
            cycle: self.cycle,
            addr: addr as u16,
            bytes: bytes.to_vec(),
        });
        Ok(())
    }

    fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.events_mut().interrupt = Some(flag);
    }

    fn set_progress(&mut self, note: Box<dyn FnMut(Progress) + Send>) {
        self.events_mut().progress = Some(note);
    }

    fn keep_events(&mut self, keep: bool) {
        self.events_mut().muted = !keep;
    }

    fn keep_snapshots(&mut self, every: u64) {
        if self.snapshots.is_some() {
            return;
        }
        let mut snapshots = Snapshots::new(every);
        if let Now::Spec(run) = &self.now {
            snapshots.keep(run.snapshot(self.cycle));
        }
        self.snapshots = Some(snapshots);
    }

    fn go_back(&mut self, cycle: u64) -> Option<Status> {
        let start = self.snapshots.as_ref()?.at_or_before(cycle)?.cycle();
        // A run over in a cycle (a fault's) stood before that cycle's work too.
        let over = matches!(self.now, Now::Over { .. });
        if cycle > self.cycle || (cycle == self.cycle && !over) {
            return None;
        }
        let (backend, events, records) = match std::mem::replace(&mut self.now, Now::Moving) {
            Now::Spec(mut run) => {
                let records = run.take_records();
                let (backend, events) = run.into_parts();
                let Held::Owned(events) = events else {
                    unreachable!("a live machine owns its event log")
                };
                (backend, *events, records)
            }
            Now::Over {
                mut outcome,
                events,
                backend: Some(backend),
            } => {
                let records = std::mem::take(&mut over_state_mut(&mut outcome).tasks);
                (backend, events, records)
            }
            other => {
                self.now = other;
                return None;
            }
        };
        let muted = events.muted;
        self.writes.retain(|w| w.cycle < cycle);
        if let Some(s) = &mut self.snapshots {
            s.forget_after(start);
        }
        let (mut run, paused) = self.rerun_to(backend, events, start, records);
        run.observer_mut().muted = muted;
        run.observer_mut().noted = None;
        self.cycle = start;
        if !paused {
            // A run from a snapshot of itself, or from its start, pauses at a cycle it
            // passed before; should it not, it ends here as the machine's error.
            let outcome = Err(RunError::Internal {
                frame: None,
                message: format!("going back to cycle {start}, the run did not pause there"),
            });
            let concluded = run.conclude(outcome).map_err(|(f, _)| f);
            let (backend, events) = run.into_parts();
            let Held::Owned(events) = events else {
                unreachable!("a live machine owns its event log")
            };
            self.conclude(concluded, *events, Some(backend));
            return Some(self.status());
        }
        self.now = Now::Spec(run);
        // The host's later writes before `cycle`, again at their cycles.
        let later: Vec<(u64, u16, Vec<u8>)> = self
            .writes
            .iter()
            .filter(|w| w.cycle > start)
            .map(|w| (w.cycle, w.addr, w.bytes.clone()))
            .collect();
        for (at, addr, bytes) in later {
            if self.run_until(at) != Status::Paused(at) {
                return Some(self.status());
            }
            if let Now::Spec(run) = &mut self.now {
                for (k, &byte) in bytes.iter().enumerate() {
                    run.poke(addr + k as u16, byte);
                }
            }
        }
        Some(self.run_until(cycle))
    }

    fn snapshot_cycles(&self) -> Vec<u64> {
        self.snapshots
            .as_ref()
            .map_or_else(Vec::new, Snapshots::cycles)
    }

    fn snapshot_at_or_before(&self, cycle: u64) -> Option<&Snapshot> {
        self.snapshots.as_ref()?.at_or_before(cycle)
    }

    fn set_stops(&mut self, stops: Option<Stops>) {
        if let Now::Spec(run) = &mut self.now {
            run.set_stops(stops);
        }
        self.events_mut().noted = None;
    }

    fn stop_noted(&self) -> Option<StopNote> {
        match &self.now {
            Now::Spec(run) => run.observer().noted,
            Now::Mcst { events, .. } | Now::Over { events, .. } => events.noted,
            Now::Moving => unreachable!("a machine is never left moving"),
        }
    }

    fn take_events(&mut self) -> (Vec<Event>, u64) {
        let log = self.events_mut();
        (
            std::mem::take(&mut log.events),
            std::mem::take(&mut log.dropped),
        )
    }
}

/// The state a run left: its report, or its failure's.
fn over_state(outcome: &Result<RunReport, Box<RunFailure>>) -> &RunReport {
    match outcome {
        Ok(report) => report,
        Err(failure) => &failure.state,
    }
}

fn over_state_mut(outcome: &mut Result<RunReport, Box<RunFailure>>) -> &mut RunReport {
    match outcome {
        Ok(report) => report,
        Err(failure) => &mut failure.state,
    }
}

impl<B: Backend + 'static> Machine<B> {
    fn events_mut(&mut self) -> &mut EventLog {
        match &mut self.now {
            Now::Spec(run) => run.observer_mut(),
            Now::Mcst { events, .. } | Now::Over { events, .. } => events,
            Now::Moving => unreachable!("a machine is never left moving"),
        }
    }
}
