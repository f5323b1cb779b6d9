//! Proving that a run can never end: a core whose registers and IP come back to a state they
//! had, with only register instructions in between, repeats that stretch forever, so its
//! part, its task and the run never end. The run loop stops every core of a frame that can
//! loop at each checkpoint cycle (a multiple of [`Config::checkpoint_cycles`](crate::Config))
//! and shows it here; what is proven, and the cycle it is proven at, depend only on the
//! core's states at those cycles, never on the backend that ran it.
//!
//! Two proofs, both exact:
//! - **Checkpoint repeat.** From an IP where no memory instruction is reachable in the
//!   frame, the core's future is a function of its registers and IP alone. Its states at the
//!   checkpoints are compared with one saved state, renewed at the 1st, 2nd, 4th, 8th, ...
//!   checkpoint (Brent's cycle finding over the checkpoints): equal states prove the loop.
//!   This costs a 17-byte comparison a checkpoint, and finds every loop whose period and the
//!   checkpoint spacing have a large common factor (most do: spans of powers of two).
//! - **Replay.** Where a memory instruction is reachable (so the first proof does not
//!   apply), at the same renewal checkpoints the core's next steps are replayed on a copy of
//!   its registers, again with Brent's cycle finding, for a budget of [`REPLAY_SHARE`]-th of
//!   the cycles it has looped so far: a state met twice with no memory instruction in
//!   between proves the loop, e.g. a lock holder spinning before its `st_sync`. A replay
//!   stops at the first memory instruction, so a loop that does touch memory costs it a few
//!   steps.
//! - **Frozen memory.** Where the scheduler has issued every frame and every running core is
//!   where no store, `ld_sync` or `st_sync` is reachable (loads are), no byte or lock can
//!   change again, and no sleeper can wake: the machine's future is a function of the
//!   running cores' registers and IPs. Those of all of them together are compared over the
//!   checkpoints as in the first proof: equal sets prove that the run repeats for ever. This
//!   is the core that polls a flag nobody will set.

use crate::isa::{Flow, Instr, MemOp, FRAME_INSTRS};
use crate::semantics::execute;
use crate::semantics::Effect;

/// A core's registers and IP: all that decides a register-only core's future.
type CoreImage = ([u8; 16], u8);

/// What the run loop needs to know of a frame: whether a core can loop in it at all (it has
/// a `bnz` back to itself or an earlier IP), and the IPs from which no memory instruction can
/// be reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FrameLoops {
    /// A core of this frame may run for ever: the run loop stops it at checkpoints.
    pub(crate) cyclic: bool,
    /// Bit i: from IP i, every path through the frame runs register instructions only.
    pub(crate) register_only: u16,
    /// Bit i: from IP i, no path through the frame writes memory or a lock (loads may be
    /// reached).
    pub(crate) read_only: u16,
}

impl FrameLoops {
    /// The loop facts of a frame's instructions.
    pub(crate) fn of(instrs: &[Instr; FRAME_INSTRS]) -> FrameLoops {
        let cyclic = cyclic(instrs);
        if !cyclic {
            return FrameLoops::default();
        }
        FrameLoops {
            cyclic,
            register_only: !reaching(instrs, Instr::is_memory),
            read_only: !reaching(
                instrs,
                |i| matches!(i, Instr::Mem { op, .. } if *op != MemOp::Ld),
            ),
        }
    }
}

/// Whether a core can loop in the frame: it has a `bnz` back to itself or an earlier IP.
/// One scan, made at every issue; the rest of [`FrameLoops`] waits for a checkpoint.
pub(crate) fn cyclic(instrs: &[Instr; FRAME_INSTRS]) -> bool {
    instrs
        .iter()
        .enumerate()
        .any(|(ip, i)| matches!(i, Instr::Bnz { target, .. } if usize::from(*target) <= ip))
}

/// Bit i: an instruction for which `hit` holds is reachable from IP i (itself included).
fn reaching(instrs: &[Instr; FRAME_INSTRS], hit: impl Fn(&Instr) -> bool) -> u16 {
    // Grows to its fixed point; 16 rounds are enough for any path through 16 IPs.
    let mut reaches = 0u16;
    for _ in 0..FRAME_INSTRS {
        let before = reaches;
        for (ip, instr) in instrs.iter().enumerate() {
            let bit = if hit(instr) {
                1
            } else {
                instr
                    .successors(ip)
                    .into_iter()
                    .flatten()
                    .fold(0, |bit, to| bit | (reaches >> to & 1))
            };
            reaches |= bit << ip;
        }
        if reaches == before {
            break;
        }
    }
    reaches
}

/// Replay budgets are this fraction of the cycles a core has looped: the replay runs on the
/// host at interpreter speed, so a long loop that does end pays at most about this share.
pub(crate) const REPLAY_SHARE: u64 = 1024;
/// No replay is longer than this many steps (about a second on the host).
const REPLAY_MAX: u64 = 1 << 26;
/// A proven loop's exact period is looked for up to this many steps; past it the report
/// gives the multiple of it that was proven.
const PERIOD_SEARCH_MAX: u64 = 1 << 20;

/// One core's watch over checkpoints, for the part it runs now.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LoopWatch {
    /// The part watched: its frame and start cycle.
    part: Option<(usize, u64)>,
    /// Its frame's loop facts, worked out at its first checkpoint.
    loops: FrameLoops,
    /// The first checkpoint at which the core was seen in this part.
    first: u64,
    /// The last checkpoint seen (a checkpoint is shown once however often it is offered).
    last: u64,
    /// The state saved for the checkpoint-repeat proof and its cycle, while the core has
    /// stayed where no memory instruction is reachable since.
    saved: Option<(CoreImage, u64)>,
}

/// A proven loop: the core repeats its state every `period` cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Proven {
    pub(crate) period: u64,
}

impl LoopWatch {
    /// The core, running `instrs` (its part: `frame` from `start`), is at checkpoint `cycle`
    /// (`every` cycles apart) with `regs` at `ip`. Returns the loop if this proves one.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn checkpoint(
        &mut self,
        instrs: &[Instr; FRAME_INSTRS],
        (frame, start): (usize, u64),
        core_id: u8,
        regs: [u8; 16],
        ip: u8,
        cycle: u64,
        every: u64,
    ) -> Option<Proven> {
        if self.part != Some((frame, start)) {
            *self = LoopWatch {
                part: Some((frame, start)),
                loops: FrameLoops::of(instrs),
                first: cycle,
                last: cycle,
                saved: None,
            };
        } else if cycle == self.last {
            return None;
        }
        self.last = cycle;
        let image = (regs, ip);
        let register_only = self.loops.register_only >> (ip & 0xF) & 1 != 0;
        if !register_only {
            self.saved = None;
        }
        // The checkpoint-repeat proof: nothing but register instructions ran since the
        // saved state (every IP since was register-only, a set no path leaves).
        if let Some((saved, at)) = self.saved {
            if saved == image {
                let multiple = cycle - at;
                let period = exact_period(instrs, core_id, image, multiple.min(PERIOD_SEARCH_MAX))
                    .unwrap_or(multiple);
                return Some(Proven { period });
            }
        }
        let n = (cycle - self.first) / every.max(1);
        if n == 0 || n.is_power_of_two() {
            if register_only {
                self.saved = Some((image, cycle));
            }
            // A register-only core is left to the free proof above: it finds the loops of
            // real programs (spans of powers of two), and a replay of every long compute
            // loop would cost the share below on every run that ends.
            let budget = ((cycle - self.first) / REPLAY_SHARE).min(REPLAY_MAX);
            if budget > 0 && !register_only {
                if let Some(period) = replay(instrs, core_id, image, budget) {
                    return Some(Proven { period });
                }
            }
        }
        None
    }
}

/// The frozen-memory proof's watch over the whole machine (see the module comment).
#[derive(Clone, Debug, Default)]
pub(crate) struct MachineWatch {
    /// The first checkpoint since which memory has been frozen, and the last seen.
    first: Option<u64>,
    last: u64,
    /// The running cores' registers and IPs saved for comparison, and their cycle.
    saved: Option<(Vec<(u8, CoreImage)>, u64)>,
}

impl MachineWatch {
    /// The machine is at checkpoint `cycle` (`every` cycles apart). `frozen` tells whether
    /// memory is frozen now (see the module comment): then `running` lists each running
    /// core's id and registers and IP, all of them stopped at `cycle`. Returns the period
    /// proven, if the running cores repeat.
    pub(crate) fn checkpoint(
        &mut self,
        frozen: bool,
        running: Vec<(u8, CoreImage)>,
        cycle: u64,
        every: u64,
    ) -> Option<u64> {
        if !frozen {
            *self = MachineWatch::default();
            return None;
        }
        if cycle == self.last && self.first.is_some() {
            return None;
        }
        self.last = cycle;
        let first = *self.first.get_or_insert(cycle);
        if let Some((saved, at)) = &self.saved {
            if *saved == running {
                return Some(cycle - at);
            }
        }
        let n = (cycle - first) / every.max(1);
        if n == 0 || n.is_power_of_two() {
            self.saved = Some((running, cycle));
        }
        None
    }
}

/// One register instruction of the core, or `None` where its part ends or it would touch
/// memory.
fn step(
    instrs: &[Instr; FRAME_INSTRS],
    core_id: u8,
    (mut regs, ip): CoreImage,
) -> Option<CoreImage> {
    let effect = execute(instrs[usize::from(ip & 0xF)], &mut regs, core_id);
    if matches!(effect, Effect::Memory(_)) {
        return None;
    }
    match effect.flow() {
        Flow::Jump(t) => Some((regs, t)),
        Flow::Next if usize::from(ip) + 1 < FRAME_INSTRS => Some((regs, ip + 1)),
        Flow::Next | Flow::Ready => None,
    }
}

/// Brent's cycle finding on the core's register-only steps from `from`, for at most `budget`
/// steps: the period of the loop it falls into, if it does within the budget.
fn replay(
    instrs: &[Instr; FRAME_INSTRS],
    core_id: u8,
    from: CoreImage,
    budget: u64,
) -> Option<u64> {
    let (mut power, mut lam) = (1u64, 1u64);
    let mut tortoise = from;
    let mut hare = step(instrs, core_id, from)?;
    let mut steps = 1u64;
    while tortoise != hare {
        if steps >= budget {
            return None;
        }
        if power == lam {
            tortoise = hare;
            power *= 2;
            lam = 0;
        }
        hare = step(instrs, core_id, hare)?;
        lam += 1;
        steps += 1;
    }
    Some(lam)
}

/// The smallest number of steps, at most `limit`, after which `image` (a state on a proven
/// loop) comes back.
fn exact_period(
    instrs: &[Instr; FRAME_INSTRS],
    core_id: u8,
    image: CoreImage,
    limit: u64,
) -> Option<u64> {
    let mut s = image;
    for n in 1..=limit {
        s = step(instrs, core_id, s)?;
        if s == image {
            return Some(n);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(words: &[u16]) -> [Instr; FRAME_INSTRS] {
        let mut f = [Instr::Nop; FRAME_INSTRS];
        for (i, w) in words.iter().enumerate() {
            f[i] = Instr::decode(*w).unwrap();
        }
        f
    }

    // set_const 1, r8 ; bnz 1, r8 (a one-instruction spin at IP 1)
    const SPIN: [u16; 2] = [0xC018, 0xE810];

    #[test]
    fn a_frame_without_a_backward_branch_cannot_loop() {
        let f = frame(&[0xC018, 0xE830, 0x0000, 0xF000]);
        assert_eq!(FrameLoops::of(&f), FrameLoops::default());
    }

    #[test]
    fn register_only_ips_are_those_that_reach_no_memory_instruction() {
        // 0: ld [r0, r0], r1   1: bnz 1, r8   2: st [r0, r0], r1   3: ready
        let f = frame(&[0xB001, 0xE810, 0xD001, 0xF000]);
        let l = FrameLoops::of(&f);
        assert!(l.cyclic);
        // IP 1 falls through to the st; IP 3 is ready; 4..15 are nops to the frame's end.
        assert_eq!(l.register_only, 0xFFF8);
        assert_eq!(l.read_only, 0xFFF8);
        // 0: st   1: ld   2: bnz 1, r8   3: ready: the loop at 1-2 only reads.
        let polls = FrameLoops::of(&frame(&[0xD001, 0xB001, 0xE810, 0xF000]));
        assert_eq!(polls.register_only, 0xFFF8);
        assert_eq!(polls.read_only, 0xFFFE);
        let spin = FrameLoops::of(&frame(&SPIN));
        assert_eq!(spin.register_only, 0xFFFF);
    }

    #[test]
    fn replay_finds_the_period_of_a_counter_loop() {
        // 0: set_const 2, r8 ; 1: add r1, r8, r1 ; 2: bnz 1, r8  -> r1 steps by 2: 128 values,
        // two instructions each: period 256.
        let f = frame(&[0xC028, 0x1181, 0xE810]);
        assert_eq!(replay(&f, 0, ([0; 16], 0), 10_000), Some(256));
        assert_eq!(replay(&f, 0, ([0; 16], 0), 100), None);
    }

    #[test]
    fn replay_gives_up_where_the_part_ends_or_memory_is_touched() {
        let ends = frame(&[0xC018, 0xF000]);
        assert_eq!(replay(&ends, 0, ([0; 16], 0), 1000), None);
        let touches = frame(&[0xB001, 0xE800]);
        let mut regs = [0; 16];
        regs[8] = 1;
        assert_eq!(replay(&touches, 0, (regs, 1), 1000), None);
    }

    #[test]
    fn checkpoints_prove_a_spin_at_the_second_checkpoint_it_is_seen() {
        let f = frame(&SPIN);

        let mut regs = [0; 16];
        regs[8] = 1;
        let mut w = LoopWatch::default();
        // Seen first at 64: saved. At 128 the state is the same: proven, exact period 1.
        assert_eq!(w.checkpoint(&f, (1, 5), 0, regs, 1, 64, 64), None);
        assert_eq!(
            w.checkpoint(&f, (1, 5), 0, regs, 1, 128, 64),
            Some(Proven { period: 1 })
        );
    }

    #[test]
    fn frozen_memory_proves_a_repeat_of_every_running_core_and_thaws_on_a_write() {
        let mut regs = [0; 16];
        regs[2] = 7;
        let cores = vec![(0u8, (regs, 1u8)), (5, ([0; 16], 2))];
        let mut w = MachineWatch::default();
        assert_eq!(w.checkpoint(true, cores.clone(), 64, 64), None);
        assert_eq!(w.checkpoint(true, cores.clone(), 128, 64), Some(64));
        // Not frozen at one checkpoint: the watch starts over.
        let mut w = MachineWatch::default();
        assert_eq!(w.checkpoint(true, cores.clone(), 64, 64), None);
        assert_eq!(w.checkpoint(false, Vec::new(), 128, 64), None);
        assert_eq!(w.checkpoint(true, cores.clone(), 192, 64), None);
        assert_eq!(w.checkpoint(true, cores, 256, 64), Some(64));
    }

    #[test]
    fn a_new_part_starts_the_watch_over() {
        let f = frame(&SPIN);

        let mut regs = [0; 16];
        regs[8] = 1;
        let mut w = LoopWatch::default();
        assert_eq!(w.checkpoint(&f, (1, 5), 0, regs, 1, 64, 64), None);
        assert_eq!(w.checkpoint(&f, (3, 90), 0, regs, 1, 128, 64), None);
    }
}
