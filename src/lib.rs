//! The gpu16 facade: load a program and a memory image from files and run them on a chosen
//! backend. The `gpu16` binary is built on this; tests and tools can use it too.

pub mod input;
pub mod output;

pub use gpu16_machine as machine;

use gpu16_machine::{Config, Observer, Program, RunFailure, RunReport};

/// The execution backends a run can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendKind {
    /// The reference interpreter.
    Interp,
}

/// Run `program` with shared memory starting as `memory` on the chosen backend.
pub fn run(
    backend: BackendKind,
    program: &Program,
    memory: &[u8],
    config: &Config,
) -> Result<RunReport, Box<RunFailure>> {
    match backend {
        BackendKind::Interp => gpu16_machine::run(
            &mut gpu16_interp::Interpreter::new(),
            program,
            memory,
            config,
        ),
    }
}

/// [`run`], reporting the run's events to `observer` (timelines, traces, waveforms).
pub fn run_observed<O: Observer>(
    backend: BackendKind,
    program: &Program,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, Box<RunFailure>> {
    match backend {
        BackendKind::Interp => gpu16_machine::run_observed(
            &mut gpu16_interp::Interpreter::new(),
            program,
            memory,
            config,
            observer,
        ),
    }
}
