//! A live machine on the backend a [`Runner`] names: a run that pauses between cycles, for
//! testbenches that step the model beside an RTL simulation (Python's `gpu16.Machine`).
//! The machine itself, with its [`Live`] trait and status, is [`gpu16_machine::live`]
//! (`gpu16::machine::live`); this picks its backend.

use crate::{BackendKind, Hotness, Runner};
use gpu16_machine::{Config, Program};

use gpu16_machine::live::Live;

/// A live machine running `program` on `runner`'s backend, with shared memory starting as
/// `memory` (zero past its end) under `config`, paused as cycle 0 begins. Fails only where
/// the JIT cannot start on this host.
pub fn machine(
    runner: impl Into<Runner>,
    program: Program,
    memory: &[u8],
    config: &Config,
) -> Result<Box<dyn Live>, gpu16_jit::JitError> {
    use gpu16_machine::live::Machine;
    let runner = runner.into();
    Ok(match runner.backend {
        BackendKind::Interp => Box::new(Machine::new(
            gpu16_interp::Interpreter::new(),
            program,
            memory,
            config,
        )),
        BackendKind::Jit => Box::new(Machine::new(
            gpu16_jit::Jit::with_options(runner.jit_options())?,
            program,
            memory,
            config,
        )),
        BackendKind::Auto => {
            let auto = match runner.hot {
                None => gpu16_jit::Auto::with_options(Hotness::default(), runner.jit_options())?,
                Some(hot) => gpu16_jit::Auto::with_mode(
                    hot,
                    runner.jit_options(),
                    gpu16_jit::CompileMode::Synchronous,
                )?,
            };
            Box::new(Machine::new(auto, program, memory, config))
        }
    })
}
