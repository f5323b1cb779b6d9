//! The gpu16 facade: load a program and a memory image from files and run them on a chosen
//! backend. The `gpu16` binary is built on this; tests and tools can use it too. The
//! library does not use clap: the binary's command line gives its enums their flags.

#![forbid(unsafe_code)]

pub mod diff;
pub mod fuzz;
pub mod input;
pub mod output;
pub mod progress;
pub mod stop;

pub use gpu16_machine as machine;

use gpu16_machine::{Config, Observer, Program, RunFailure, RunReport};

/// The execution backends a run can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// The reference interpreter.
    Interp,
    /// Every frame compiled to native code with Cranelift.
    Jit,
    /// Interpret a frame until it is hot, then run it compiled.
    Auto,
}

impl BackendKind {
    /// The pair `diff` and `fuzz` compare by default.
    pub const DIFF_PAIR: [BackendKind; 2] = [BackendKind::Interp, BackendKind::Jit];

    /// The backend's name, as the reports print it and the command line takes it.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Interp => "interp",
            BackendKind::Jit => "jit",
            BackendKind::Auto => "auto",
        }
    }
}

pub use gpu16_jit::Engine;

/// What runs a program: a backend and the engine its compiled code uses (ignored by the
/// interpreter, which is the per-core reference). A [`BackendKind`] alone means the
/// default engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Runner {
    pub backend: BackendKind,
    pub engine: Engine,
}

impl From<BackendKind> for Runner {
    fn from(backend: BackendKind) -> Runner {
        Runner {
            backend,
            engine: Engine::default(),
        }
    }
}

impl Runner {
    /// The name reports use: the backend's, with a non-default engine after a slash
    /// (`jit/lockstep`).
    pub fn name(self) -> String {
        match self.backend {
            BackendKind::Interp => self.backend.name().to_string(),
            _ if self.engine == Engine::default() => self.backend.name().to_string(),
            _ => format!("{}/{}", self.backend.name(), self.engine.name()),
        }
    }

    fn jit_options(self) -> gpu16_jit::JitOptions {
        gpu16_jit::JitOptions {
            engine: self.engine,
            ..Default::default()
        }
    }
}

/// Run `program` with shared memory starting as `memory` on the chosen backend.
pub fn run(
    backend: impl Into<Runner>,
    program: &Program,
    memory: &[u8],
    config: &Config,
) -> Result<RunReport, Box<RunFailure>> {
    run_observed(backend, program, memory, config, &mut ())
}

/// [`run`], reporting events and progress to `observer`.
pub fn run_observed<O: Observer>(
    runner: impl Into<Runner>,
    program: &Program,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, Box<RunFailure>> {
    let runner = runner.into();
    let backend = runner.backend;
    match backend {
        BackendKind::Interp => gpu16_machine::run_observed(
            &mut gpu16_interp::Interpreter::new(),
            program,
            memory,
            config,
            observer,
        ),
        BackendKind::Jit => match gpu16_jit::Jit::with_options(runner.jit_options()) {
            Ok(mut jit) => gpu16_machine::run_observed(&mut jit, program, memory, config, observer),
            Err(e) => Err(no_jit(backend, memory, config, e)),
        },
        BackendKind::Auto => {
            match gpu16_jit::Auto::with_options(gpu16_jit::Hotness::default(), runner.jit_options())
            {
                Ok(mut auto) => {
                    gpu16_machine::run_observed(&mut auto, program, memory, config, observer)
                }
                Err(e) => Err(no_jit(backend, memory, config, e)),
            }
        }
    }
}

/// The JIT cannot start on this host (Cranelift does not support it).
fn no_jit(
    backend: BackendKind,
    memory: &[u8],
    config: &Config,
    e: gpu16_jit::JitError,
) -> Box<RunFailure> {
    Box::new(RunFailure {
        error: gpu16_machine::RunError::Backend {
            frame: None,
            message: e.to_string(),
        },
        state: RunReport::initial(backend.name(), *config, memory),
    })
}
