//! The MCST machine's livelock proofs, both over the loop of control frames the scheduler's
//! walk goes round (`McstWalk::loops_to`):
//! - **by the walk**: where no stop frame on it can end the run (`McstWalk::may_end` is
//!   false), the run stops as the cycle after the scheduler's first return to the loop's
//!   first frame begins;
//! - **by the state**: where a frame sync on it could end the run but does not (its cores
//!   are idle each time the scheduler arrives, so it jumps on), the machine is
//!   deterministic, so once it is back at the loop's first frame in a state it was in
//!   before, cycle stamps made relative, it goes round for ever. The states compared are
//!   those at the scheduler's arrivals there with every core idle, found repeating by
//!   Brent's cycle finding: one state kept, in bounded memory, found within about twice the
//!   arrivals before the repetition plus its period.

use super::ts::TsState;
use crate::frame::McstWalk;
use crate::memory::{BANKS, MEMORY_BYTES};

/// Everything the rest of a run depends on, at an arrival of the scheduler with every core
/// idle and no broadcast under way: an idle core keeps only its registers (a task's start
/// resets the rest), and no task is live. Statistics and the task log are left out.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Arrival {
    pub ts: TsState,
    pub registers: [[u8; 16]; 16],
    pub memory: Box<[u8; MEMORY_BYTES]>,
    pub last_grant: [u8; BANKS],
}

/// A loop of the walk and the proof under way over it.
pub(super) struct Lap {
    /// The loop's control frames, from its first.
    pub walk: Vec<usize>,
    /// The task pointer after the scheduler's last decision.
    tp: usize,
    /// Arrivals at `walk[0]` (frame 0, where the run starts, counts).
    arrivals: u32,
    /// The walk alone proves the run endless.
    by_walk: bool,
    /// Brent's kept state and the cycle of its arrival, the arrivals since, and the
    /// arrivals after which the next is kept instead.
    kept: Option<(Arrival, u64)>,
    since: u64,
    power: u64,
    /// Proven endless: `Some(None)` by the walk, `Some(Some(cycle))` by the state it had
    /// at `cycle` coming back.
    pub proven: Option<Option<u64>>,
}

impl Lap {
    /// The loop of `walk`, if it has one (it does unless it ends at a halt or a reserved
    /// fence).
    pub fn of(walk: McstWalk) -> Option<Lap> {
        let first = walk.loops_to?;
        let at = walk.path.iter().position(|&p| p == first)?;
        Some(Lap {
            by_walk: !walk.may_end(),
            walk: walk.path[at..].to_vec(),
            tp: 0,
            arrivals: u32::from(first == 0),
            kept: None,
            since: 0,
            power: 1,
            proven: None,
        })
    }

    /// Note where the scheduler's decisions left the task pointer; true when it has just
    /// come back to the loop's first frame. A proof by the walk is complete on the second
    /// arrival; one by the state then wants the machine's state ([`Lap::wants_state`]).
    pub fn moved_to(&mut self, tp: usize) -> bool {
        if tp == self.tp || self.proven.is_some() {
            return false;
        }
        self.tp = tp;
        if tp != self.walk[0] {
            return false;
        }
        self.arrivals = self.arrivals.saturating_add(1);
        if self.by_walk && self.arrivals >= 2 {
            self.proven = Some(None);
        }
        true
    }

    /// Whether the proof is by the state and not yet complete.
    pub fn wants_state(&self) -> bool {
        !self.by_walk && self.proven.is_none()
    }

    /// The state kept to compare arrivals with, if any.
    pub fn kept(&self) -> Option<&Arrival> {
        self.kept.as_ref().map(|(state, _)| state)
    }

    /// Whether the next arrival that differs from the kept state is kept instead (Brent's
    /// schedule: after 1, 2, 4, ... arrivals).
    pub fn keeps_next(&self) -> bool {
        self.kept.is_none() || self.since + 1 >= self.power
    }

    /// An arrival in `cycle` with every core idle, whose state is the kept one (`same`) or
    /// not; `state` is its state where [`Lap::keeps_next`] said it is kept.
    pub fn offer(&mut self, cycle: u64, same: bool, state: Option<Arrival>) {
        if same {
            self.proven = self.kept.as_ref().map(|&(_, at)| Some(at));
            return;
        }
        self.since += 1;
        if let Some(state) = state {
            self.kept = Some((state, cycle));
            self.since = 0;
            self.power = self.power.saturating_mul(2);
        }
    }

    /// Forget the states seen: the host wrote the machine between cycles, so an earlier
    /// state no longer predicts what comes after an equal one.
    pub fn forget(&mut self) {
        self.kept = None;
        self.since = 0;
        self.power = 1;
    }
}
