//! The JIT's own errors: what can go wrong between a frame and its machine code. They become
//! a [`BackendError`] at the backend trait, where the run reports them as the backend's
//! failure, never as the program's.

use gpu16_machine::engine::backend::BackendError;
use std::fmt;

/// Why the JIT could not start, or could not compile a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JitError {
    /// Cranelift does not support this host, or rejected a setting.
    Host(String),
    /// Cranelift returned an error for the frame's function.
    Codegen(String),
    /// The code generator panicked while compiling the frame (its bug or ours).
    Panicked(String),
}

impl fmt::Display for JitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JitError::Host(m) => write!(f, "the JIT cannot start on this host: {m}"),
            JitError::Codegen(m) => write!(f, "the code generator failed: {m}"),
            JitError::Panicked(m) => write!(f, "the code generator panicked: {m}"),
        }
    }
}

impl std::error::Error for JitError {}

impl From<JitError> for BackendError {
    fn from(e: JitError) -> BackendError {
        BackendError::new(e.to_string())
    }
}
