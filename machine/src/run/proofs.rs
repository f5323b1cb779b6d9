//! The livelock proofs: each core's loop watch and the frozen-memory watch over all cores,
//! made at checkpoints (see `crate::livelock`). A core proven to loop for ever is marked
//! [`Mode::Looping`] and reported by the loop when it is the earliest event.

use crate::cores::{CoreTable, Mode};
use crate::livelock::{FrameLoops, LoopWatch, MachineWatch};

/// A run's livelock watches and its next checkpoint.
#[derive(Clone)]
pub(crate) struct Proofs {
    /// Checkpoints are this many cycles apart.
    every: u64,
    /// Each core's watch for a loop that can never end, over the checkpoints.
    pub(crate) watch: [LoopWatch; 16],
    /// The frozen-memory watch over all cores together, and the checkpoint it last saw.
    pub(crate) machine_watch: MachineWatch,
    pub(crate) machine_checked: Option<u64>,
    /// No event before this cycle is at a checkpoint.
    pub(crate) next_checkpoint: u64,
}

impl Proofs {
    /// Proofs over checkpoints `every` cycles apart.
    pub(crate) fn new(every: u64) -> Self {
        Proofs {
            every,
            watch: Default::default(),
            machine_watch: MachineWatch::default(),
            machine_checked: None,
            next_checkpoint: 0,
        }
    }

    /// Every event before checkpoint `cycle` is done, and the earliest is in it. Show each runnable core of a frame that can loop, stopped
    /// there, to its loop watch (a core cannot pass a checkpoint without stopping at it: the
    /// loop limits its runs there), then make the frozen-memory proof where no frame is left
    /// to issue (`frames_left`). Returns whether a core was proven to loop for ever.
    pub(crate) fn checkpoint<C>(
        &mut self,
        cores: &mut CoreTable<C>,
        cycle: u64,
        frames_left: bool,
    ) -> bool {
        let mut proven = false;
        for j in 0..16 {
            let part = cores.part(j);
            let state = &cores.state[j];
            // Only before a register instruction: there a core is runnable in every engine
            // (before a memory instruction it may be parked in one and runnable in another).
            if !part.cyclic
                || state.cycle != cycle
                || cores.mode(j) != Mode::Runnable
                || part.instrs[usize::from(state.ip & 0xF)].is_memory()
            {
                continue;
            }
            if let Some(p) = self.watch[j].checkpoint(
                &part.instrs,
                (part.frame, part.start),
                state.id,
                state.regs,
                state.ip,
                cycle,
                self.every,
            ) {
                cores.set_mode(
                    j,
                    Mode::Looping {
                        period: p.period,
                        polls: false,
                    },
                );
                proven = true;
            }
        }
        proven || self.frozen(cores, cycle, frames_left)
    }

    /// The frozen-memory proof at checkpoint `cycle` (see `livelock`), made at the first
    /// event of the checkpoint, when every running core of a frame that can loop stands at
    /// it and none has acted in it.
    fn frozen<C>(&mut self, cores: &mut CoreTable<C>, cycle: u64, frames_left: bool) -> bool {
        if self.machine_checked == Some(cycle) {
            return false;
        }
        self.machine_checked = Some(cycle);
        let mut running = Vec::new();
        let mut frozen = !frames_left;
        for j in 0..16 {
            if !frozen {
                break;
            }
            let (part, state) = (cores.part(j), &cores.state[j]);
            match cores.mode(j) {
                Mode::Idle | Mode::Sleeping { .. } => {}
                Mode::Runnable | Mode::Parked { bank_retry: false }
                    if part.cyclic
                        && state.cycle == cycle
                        && FrameLoops::of(&part.instrs).read_only >> (state.ip & 0xF) & 1 != 0 =>
                {
                    running.push((j as u8, (state.regs, state.ip)));
                }
                _ => frozen = false,
            }
        }
        frozen &= !running.is_empty();
        let Some(period) = self
            .machine_watch
            .checkpoint(frozen, running, cycle, self.every)
        else {
            return false;
        };
        let first = (0..16)
            .find(|&j| matches!(cores.mode(j), Mode::Runnable | Mode::Parked { .. }))
            .expect("a frozen machine has a running core");
        cores.set_mode(
            first,
            Mode::Looping {
                period,
                polls: true,
            },
        );
        true
    }
}
