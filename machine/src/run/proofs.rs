//! The loop's watches for a run that can never end: each core's loop watch and the
//! frozen-memory watch over all cores, checked at checkpoints (see `crate::livelock`).

use crate::livelock::{LoopWatch, MachineWatch};

/// A run's livelock watches and its next checkpoint.
#[derive(Default)]
pub(crate) struct Proofs {
    /// Each core's watch for a loop that can never end, over the checkpoints.
    pub(crate) watch: [LoopWatch; 16],
    /// The frozen-memory watch over all cores together, and the checkpoint it last saw.
    pub(crate) machine_watch: MachineWatch,
    pub(crate) machine_checked: Option<u64>,
    /// No event before this cycle is at a checkpoint.
    pub(crate) next_checkpoint: u64,
}
