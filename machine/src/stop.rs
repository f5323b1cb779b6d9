//! Why a run was stopped from outside the machine, before its program ended.

/// Why a run was stopped from outside the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StopCause {
    /// Its wall-clock limit passed (`--timeout`).
    Timeout,
    /// The user interrupted it (Ctrl-C).
    Interrupt,
}

impl StopCause {
    /// A short stable name: `timeout` or `interrupted`.
    pub fn name(self) -> &'static str {
        match self {
            StopCause::Timeout => "timeout",
            StopCause::Interrupt => "interrupted",
        }
    }
}
