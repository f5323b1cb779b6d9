//! The run loop: drives the task scheduler and a backend's cores in the (cycle, core id)
//! order of decisions.md. Cores run natively until a memory instruction that another core
//! could observe; the loop then always serves the earliest pending event (a parked memory
//! access, a deferred fault, the watchdog), so every backend sees the same interleaving.
//!
//! The loop itself is `event_loop.rs` (`Run`: serving the earliest event, running cores,
//! their lock waits and part ends). Its parts, each in a file of its own:
//! - `driver.rs`: what the loop keeps to drive the task scheduler; `scheduling.rs`: the
//!   loop's step of it, with its deferred step;
//! - `proofs.rs`: the livelock proofs made at checkpoints;
//! - `telemetry.rs`: what the observer hears and asks (events, progress, stops, the
//!   executed-instruction log); `reporting.rs`: what the loop tells it of the machine;
//! - `outcome.rs`: the run's report, or the error it ends with;
//! - `paused.rs`: a live machine's paused run;
//! - `rerun.rs`: a failed run's second run;
//! - `snapshot.rs`: a paused run's state, to go back to or to go on from in a new run.
//!
//! The part types do not name `Run`; the files that extend `Run` (`scheduling.rs`,
//! `reporting.rs`, `outcome.rs`, `paused.rs`) are named by none, so no two files import
//! each other.
//!
//! Which cores run together is `crate::group`'s policy.

mod driver;
mod event_loop;
mod outcome;
mod paused;
mod proofs;
mod reporting;
mod rerun;
mod scheduling;
mod snapshot;
mod telemetry;

pub(crate) use event_loop::Run;
pub(crate) use rerun::{adopt_state, rewind_cycle};
pub use snapshot::Snapshot;

use crate::backend::Backend;
use crate::config::{Config, TaskLog};
use crate::dialect::Dialect;
use crate::frame::Program;
use crate::observe::Observer;
use crate::report::{RunFailure, RunReport};
use crate::task_memory::{FrameSource, ProgramFrames};
use event_loop::{bounded, run_once};
use rerun::state_when_cycle_began;

/// Run `program` on a machine whose shared memory starts as `memory` (zero past its end).
pub fn run<B: Backend>(
    backend: &mut B,
    program: &Program,
    memory: &[u8],
    config: &Config,
) -> Result<RunReport, Box<RunFailure>> {
    run_observed(backend, program, memory, config, &mut ())
}

/// [`run`], reporting every [`Event`](crate::Event) to `observer` as it happens.
pub fn run_observed<B: Backend, O: Observer>(
    backend: &mut B,
    program: &Program,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, Box<RunFailure>> {
    if program.dialect() == Dialect::Mcst {
        let name = backend.name();
        let mut outcome =
            crate::mcst::run_observed(backend, name, program, memory, config, observer);
        if O::WANTS_TASKS && config.tasks == TaskLog::All {
            let state = match &mut outcome {
                Ok(report) => report,
                Err(failure) => &mut failure.state,
            };
            for record in std::mem::take(&mut state.tasks) {
                observer.task(&record);
            }
        }
        return outcome;
    }
    run_stream_observed(
        backend,
        &mut ProgramFrames::new(program),
        memory,
        config,
        observer,
    )
}

/// [`run_observed`] over a program read frame by frame from `source` as the scheduler
/// reaches it (task memory fed by the host as it drains), in the spec dialect: a stream of
/// any length costs the scheduler's window, not its size. A malformed stream, or one that
/// cannot be read, fails as [`RunError::Load`](crate::RunError::Load) with the error the whole image would have
/// given; so does a run that fails before reading a malformed rest (the rest is read and
/// checked). A fault reads the stream again from its start ([`FrameSource::rewind`]).
pub fn run_stream_observed<B: Backend, O: Observer>(
    backend: &mut B,
    source: &mut dyn FrameSource,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, Box<RunFailure>> {
    run_from(backend, source, Start::Image(memory), config, observer)
        .unwrap_or_else(|| unreachable!("a run from an image always starts"))
}

impl Snapshot {
    /// [`run_observed`] of `program` going on from this snapshot (which a run of the same
    /// program made: [`crate::live::Live::snapshot_at_or_before`]), under `config`, whose
    /// watchdog may differ from the snapshot run's but nothing else (see
    /// [`Snapshot::resumes`]). The report is the one the whole run gives, but the observer
    /// hears only what comes after the snapshot's cycle, and a fault or livelock's state is
    /// taken from a second run from the snapshot. `None` where the snapshot cannot start
    /// this run: a different configuration, a task log of every task, or a backend that
    /// fails to prepare a running task's code.
    pub fn resume_observed<B: Backend, O: Observer>(
        &self,
        backend: &mut B,
        program: &Program,
        config: &Config,
        observer: &mut O,
    ) -> Option<Result<RunReport, Box<RunFailure>>> {
        if program.dialect() != Dialect::Spec || !self.resumes(config) {
            return None;
        }
        let mut source = ProgramFrames::new(program);
        run_from(
            backend,
            &mut source,
            Start::Snapshot(self),
            config,
            observer,
        )
    }
}

/// Where a run begins: cycle 0 with shared memory as an image gives it, or a snapshot.
#[derive(Clone, Copy)]
pub(crate) enum Start<'s> {
    Image(&'s [u8]),
    Snapshot(&'s Snapshot),
}

/// A run from `start` (`None` where that is a snapshot that cannot start it), with a
/// failure's state taken again as its cycle began.
fn run_from<B: Backend, O: Observer>(
    backend: &mut B,
    source: &mut dyn FrameSource,
    start: Start<'_>,
    config: &Config,
    observer: &mut O,
) -> Option<Result<RunReport, Box<RunFailure>>> {
    let (mut failure, delivered) = match run_once(backend, source, start, config, observer)? {
        Ok(report) => return Some(Ok(report)),
        Err(failed) => failed,
    };
    let config = bounded(config);
    // The tasks an observer took as the run went are the first of the log a rerun gives
    // (each ended before every event still to come, so before the failure's cycle).
    let own_tasks = std::mem::take(&mut failure.state.tasks);
    let mut rerun_tasks = None;
    if let Some(cycle) = rewind_cycle(&failure.error, config.max_cycles) {
        if let Some(stop) = state_when_cycle_began(backend, source, start, &config, cycle, observer)
        {
            adopt_state(&mut failure, stop);
            rerun_tasks = Some(std::mem::take(&mut failure.state.tasks));
        }
    }
    let streams_tasks = O::WANTS_TASKS && config.tasks == TaskLog::All;
    let tasks = match rerun_tasks {
        Some(mut all) if streams_tasks => all.split_off(delivered.min(all.len())),
        Some(all) => all,
        None => own_tasks,
    };
    if streams_tasks {
        for record in &tasks {
            observer.task(record);
        }
    } else {
        failure.state.tasks = tasks;
    }
    Some(Err(failure))
}
