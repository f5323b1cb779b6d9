//! Snapshots of a spec-dialect run paused as a cycle begins: the machine's whole state
//! (scheduler, task-memory window, cores, memory with its locks and bank model, lock waits,
//! counters, livelock proofs) without the backend, the observer or the frame source. A run
//! goes on from one exactly as the paused run would: in place ([`Run::restore`], a live
//! machine going back in time) or as a new run with any backend and observer
//! ([`Run::resume`], a debugger's search started near its stop instead of at cycle 0).
//!
//! A snapshot holds no backend code: a compiled frame belongs to its backend's cache, so the
//! code of each running task is prepared again, from the frame's words, by the run that
//! goes on.

use super::driver::Driver;
use super::event_loop::{bounded, Run};
use super::proofs::Proofs;
use crate::backend::{Backend, BackendError, DirectBounds};
use crate::config::{Config, TaskLog};
use crate::cores::{CoreTable, Part};
use crate::frame::{InstrFrame, FRAME_BYTES};
use crate::frame_table::FrameTable;
use crate::held::Held;
use crate::lock_wait::LockWaits;
use crate::memory::SharedMemory;
use crate::observe::{Observer, Stops};
use crate::report::CoreCounters;
use crate::scheduler::{SavedScheduler, TaskRecord, TaskScheduler};
use crate::task_memory::FrameSource;

/// A spec-dialect run's state as a cycle began (see the module docs). Made by a live
/// machine ([`crate::live::Live::snapshot_at_or_before`]); a run goes on from one with
/// [`Snapshot::resume_observed`](crate::Snapshot::resume_observed).
pub struct Snapshot {
    cycle: u64,
    /// The run's configuration (its watchdog aside), which a run resumed from it must share.
    config: Config,
    scheduler: SavedScheduler,
    lb: [u64; 16],
    frames_done: u64,
    ends: u64,
    last_core_cycle: Option<u64>,
    memory: SharedMemory,
    cores: CoreTable<()>,
    counters: [CoreCounters; 16],
    waits: LockWaits,
    proofs: Proofs,
    progress_cycle: u64,
}

impl Snapshot {
    /// The spacing a live machine's snapshots start with
    /// ([`crate::live::Live::keep_snapshots`]): a pause costs about what a few hundred
    /// cycles do, so short runs are kept densely at a small cost.
    pub const FIRST_SPACING: u64 = 1 << 12;

    /// The cycle the run was paused at: the next one it runs.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Whether a run under `config` can go on from this snapshot: everything that selects
    /// the machine's behaviour but the watchdog and the task log must be the snapshot
    /// run's, and the task log cannot be [`TaskLog::All`] (the snapshot keeps no records
    /// of earlier tasks) nor a summary where the snapshot's run kept none.
    pub fn resumes(&self, config: &Config) -> bool {
        let c = bounded(config);
        let same = Config {
            max_cycles: self.config.max_cycles,
            tasks: self.config.tasks,
            ..c
        } == self.config;
        same && match c.tasks {
            TaskLog::All => false,
            TaskLog::Summary => self.config.tasks != TaskLog::None,
            TaskLog::None => true,
        }
    }

    /// About how many bytes of memory it holds: itself, its memory's cells (held apart,
    /// behind the memory's `Rc`) and the scheduler's collections.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Snapshot>() + self.memory.cells_bytes() + self.scheduler.bytes()
    }
}

/// The code of `part`'s frame for one more issue, through the frame table (which decodes
/// and prepares a frame once per run).
pub(super) fn part_code<B: Backend>(
    frame_table: &mut FrameTable<B::Code>,
    backend: &mut B,
    part: &Part,
) -> Result<B::Code, BackendError> {
    let mut bytes = [0u8; FRAME_BYTES];
    for (k, w) in part.words.iter().enumerate() {
        bytes[2 * k..2 * k + 2].copy_from_slice(&w.to_le_bytes());
    }
    let entry = frame_table.entry(&bytes, |_| InstrFrame {
        words: part.words,
        instrs: part.instrs,
    });
    let code = match &entry.code {
        None => backend.prepare(&entry.frame),
        Some(code) => backend.reissue(code),
    }?;
    entry.code = Some(code.clone());
    Ok(code)
}

/// `memory` as a run whose observer asks for `stops` (and events, if it wants them) keeps
/// it.
pub(super) fn observed_memory<O: Observer>(
    mut memory: SharedMemory,
    stops: Option<&Stops>,
) -> SharedMemory {
    if O::WANTS_EVENTS {
        memory.closed = Some(Vec::new());
    }
    memory.unwatch();
    if let Some(s) = stops.filter(|s| !s.watches.is_empty()) {
        memory.watch(&s.watches, s.from, s.also);
    }
    memory
}

impl<'a, B: Backend, O: Observer> Run<'a, B, O> {
    /// A snapshot of the run, paused as `cycle` begins ([`Run::run_until`] stopped there).
    pub(crate) fn snapshot(&self, cycle: u64) -> Snapshot {
        Snapshot {
            cycle,
            config: self.config,
            scheduler: self.driver.ts.save(),
            lb: self.driver.lb,
            frames_done: self.driver.frames_done,
            ends: self.driver.ends,
            last_core_cycle: self.driver.last_core_cycle,
            memory: self.memory.copy(),
            cores: match self
                .cores
                .copy(|_, _| Ok::<(), std::convert::Infallible>(()))
            {
                Ok(cores) => cores,
                Err(never) => match never {},
            },
            counters: self.counters,
            waits: self.waits.clone(),
            proofs: self.proofs.clone(),
            progress_cycle: self.tele.progress_cycle,
        }
    }

    /// A new run of `observer` on `backend` over `source` (the program the snapshot's run
    /// read) going on from `snapshot` under `config` (its watchdog may differ: see
    /// [`Snapshot::resumes`]); a log of every task takes the records before the snapshot
    /// from `records` (see [`TaskScheduler::resume`]). Where the snapshot cannot start it
    /// (or the backend fails to prepare a running task's code), `Err` gives the run from
    /// cycle 0 over an empty memory, for the caller to take its parts back.
    pub(crate) fn resume(
        backend: Held<'a, B>,
        source: Held<'a, dyn FrameSource + 'a>,
        snapshot: &Snapshot,
        config: &Config,
        observer: Held<'a, O>,
        records: Vec<TaskRecord>,
    ) -> Result<Self, Box<Self>> {
        let mut run = Run::new(backend, source, &[], config, observer);
        if !snapshot.resumes(&Config {
            tasks: TaskLog::None,
            ..run.config
        }) {
            return Err(Box::new(run));
        }
        let source = run.driver.ts.take_source();
        let ts = match TaskScheduler::resume(&snapshot.scheduler, source, run.config.tasks, records)
        {
            Some(ts) => ts,
            None => {
                return Err(Box::new(run));
            }
        };
        let cores = snapshot
            .cores
            .copy(|part, ()| part_code(&mut run.frame_table, &mut *run.backend, part));
        let Ok(cores) = cores else {
            return Err(Box::new(run));
        };
        run.driver = Driver::new(ts);
        run.driver.ts.set_limit(run.config.max_cycles);
        run.adopt(snapshot, cores);
        Ok(run)
    }

    /// Everything of `snapshot` but the scheduler, with the cores' codes `cores` holds.
    fn adopt(&mut self, snapshot: &Snapshot, cores: CoreTable<B::Code>) {
        self.driver.lb = snapshot.lb;
        self.driver.frames_done = snapshot.frames_done;
        self.driver.ends = snapshot.ends;
        self.driver.last_core_cycle = snapshot.last_core_cycle;
        self.memory = observed_memory::<O>(snapshot.memory.copy(), self.tele.stops.as_deref());
        self.cores = cores;
        self.counters = snapshot.counters;
        self.waits = snapshot.waits.copy_logging(O::WANTS_EVENTS);
        self.proofs = snapshot.proofs.clone();
        self.bounds = DirectBounds::default();
        self.tele.progress_cycle = snapshot.progress_cycle;
    }
}
