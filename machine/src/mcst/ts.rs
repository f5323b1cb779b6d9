//! The MCST dialect's task scheduler (mcst-dialect.md section 3): a 6-bit task pointer over
//! 64 frames of task memory, NextCF and stop bits, every CF waiting for its own cores (all
//! cores after an acq group or for a rel CF), R0 init at every IF of a group, and the halt
//! and frame-sync ends of a run. It decides one thing a cycle; the cores are the engine's.

use crate::config::Timing;
use crate::frame::{ControlFrame, Fence, FRAME_BYTES, TASK_MEMORY_FRAMES};

/// What the scheduler did in a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TsAction {
    /// Nothing: busy with an earlier decision, or waiting.
    Nothing,
    /// Waited: the frame at TP could not be processed for the cores it needs.
    Wait,
    /// Processed the control frame at `frame`.
    Control { frame: usize },
    /// Began the broadcast of the instruction frame at `frame` to `mask`.
    Broadcast {
        frame: usize,
        mask: u16,
        fence: Fence,
    },
    /// Jumped from a stop CF to its NextCF (every core idle in its first cycle there).
    Jump,
    /// The run ends in this cycle (halt, or a frame sync with every core idle).
    End,
    /// The control frame at `frame` has the reserved fence value 3.
    ReservedFence { frame: usize },
}

/// An IF broadcast under way: delivered to its cores in its last cycle.
#[derive(Clone, Copy, Debug)]
pub(super) struct Delivery {
    /// The cycle of delivery (the broadcast's last).
    pub at: u64,
    /// The instruction frame, by index in task memory.
    pub frame: usize,
    /// Its cores.
    pub mask: u16,
    /// Cores whose R0 is initialised before its first instruction.
    pub init: u16,
    /// The values (Init_R0).
    pub r0: [u8; 16],
}

/// The scheduler's state.
pub(super) struct TaskScheduler {
    frames: Box<[[u8; FRAME_BYTES]; TASK_MEMORY_FRAMES]>,
    timing: Timing,
    /// TP, 0..63.
    pub tp: usize,
    /// IFs of the current group still to broadcast.
    n: u8,
    group: ControlFrame,
    group_fence: Fence,
    /// F: the fence of the last processed CF.
    f: Fence,
    /// No decision before this cycle (a CF or a broadcast under way).
    busy_until: u64,
    /// The broadcast under way, if any.
    pub delivery: Option<Delivery>,
    /// The stop CF the scheduler stands at: (TP, first cycle there, came by a group's
    /// NextCF jump).
    at_stop: Option<(usize, u64, bool)>,
    /// TP was last set by a group's NextCF jump.
    jumped: bool,
    /// Control frames processed.
    pub control_frames: u64,
}

/// The scheduler's state after a cycle's decision, for the livelock proof (`lap.rs`): its
/// cycle stamps made relative to that cycle, so two states are equal when the scheduler
/// decides the same in the cycles after each, given the same cores. Its count of control
/// frames processed is a statistic, left out.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct TsState {
    tp: usize,
    n: u8,
    group: ControlFrame,
    group_fence: Fence,
    f: Fence,
    /// Cycles after the decision's cycle that it is still busy.
    busy_for: u64,
    /// The broadcast under way: its delivery's distance, frame, mask, init and values.
    delivery: Option<(u64, usize, u16, u16, [u8; 16])>,
    /// The stop CF it stands at and whether it came by a jump. Its first cycle there is
    /// at or before the decision's, so no later cycle is it.
    at_stop: Option<(usize, bool)>,
    jumped: bool,
}

impl TaskScheduler {
    /// A scheduler over `image` loaded at frame 0 of task memory (the rest zero).
    pub fn new(image: &[[u8; FRAME_BYTES]], timing: Timing) -> TaskScheduler {
        let mut frames = Box::new([[0u8; FRAME_BYTES]; TASK_MEMORY_FRAMES]);
        for (slot, f) in frames.iter_mut().zip(image) {
            *slot = *f;
        }
        TaskScheduler {
            frames,
            timing,
            tp: 0,
            n: 0,
            group: ControlFrame::new(0, Fence::No, 0, &[]),
            group_fence: Fence::No,
            f: Fence::No,
            busy_until: 0,
            delivery: None,
            at_stop: None,
            jumped: false,
            control_frames: 0,
        }
    }

    /// Its state after the decision of `cycle` (see [`TsState`]).
    pub fn state(&self, cycle: u64) -> TsState {
        TsState {
            tp: self.tp,
            n: self.n,
            group: self.group,
            group_fence: self.group_fence,
            f: self.f,
            busy_for: self.busy_until.saturating_sub(cycle),
            delivery: self
                .delivery
                .map(|d| (d.at.saturating_sub(cycle), d.frame, d.mask, d.init, d.r0)),
            at_stop: self.at_stop.map(|(at, _, by_jump)| (at, by_jump)),
            jumped: self.jumped,
        }
    }

    /// The 32 bytes of task-memory frame `frame`.
    pub fn frame(&self, frame: usize) -> &[u8; FRAME_BYTES] {
        &self.frames[frame % TASK_MEMORY_FRAMES]
    }

    /// Deliver the broadcast due in `cycle`, if any: the caller starts its cores. TP moves
    /// on (to NextCF after a stop group's last IF, then F = acq).
    pub fn deliver(&mut self, cycle: u64) -> Option<Delivery> {
        let d = self.delivery.filter(|d| d.at == cycle)?;
        self.delivery = None;
        self.n -= 1;
        if self.n == 0 && self.group.stop() {
            self.tp = usize::from(self.group.next_cf());
            self.f = Fence::Acq;
            self.jumped = true;
        } else {
            self.tp = (self.tp + 1) % TASK_MEMORY_FRAMES;
            self.jumped = false;
        }
        Some(d)
    }

    /// Decide cycle `cycle`, with `idle` the cores idle as it begins.
    pub fn step(&mut self, cycle: u64, idle: u16) -> TsAction {
        if cycle < self.busy_until || self.delivery.is_some() {
            return TsAction::Nothing;
        }
        let all = |need: u16| idle & need == need;
        if self.n > 0 {
            let mask = self.group.active;
            if !all(mask) {
                return TsAction::Wait;
            }
            let bc = self.timing.broadcast_cycles.max(1);
            self.delivery = Some(Delivery {
                at: cycle + bc - 1,
                frame: self.tp,
                mask,
                init: self.group.init_vect & mask,
                r0: self.group.init_r0,
            });
            self.busy_until = cycle + bc;
            return TsAction::Broadcast {
                frame: self.tp,
                mask,
                fence: self.group_fence,
            };
        }
        let Ok(cf) = ControlFrame::decode(&self.frames[self.tp]) else {
            return TsAction::ReservedFence { frame: self.tp };
        };
        if cf.stop() && cf.if_num == 0 {
            return self.at_stop_frame(cycle, &cf, idle == u16::MAX);
        }
        self.at_stop = None;
        let need = if self.f == Fence::Acq || cf.fence == Fence::Rel {
            u16::MAX
        } else {
            cf.active
        };
        if !all(need) {
            return TsAction::Wait;
        }
        let frame = self.tp;
        self.n = cf.if_num;
        self.f = cf.fence;
        self.group_fence = cf.fence;
        self.group = cf;
        self.tp = (self.tp + 1) % TASK_MEMORY_FRAMES;
        self.jumped = false;
        self.busy_until = cycle + self.timing.control_frame_cycles.max(1);
        self.control_frames += 1;
        TsAction::Control { frame }
    }

    /// Section 3.4: halt, frame sync, or a jump to NextCF.
    fn at_stop_frame(&mut self, cycle: u64, cf: &ControlFrame, all_idle: bool) -> TsAction {
        let (at, first, by_jump) = match self.at_stop {
            Some(s) if s.0 == self.tp => s,
            _ => (self.tp, cycle, self.jumped),
        };
        let next = usize::from(cf.next_cf());
        let action = if next == self.tp {
            if all_idle {
                TsAction::End
            } else {
                TsAction::Wait
            }
        } else if cycle == first && all_idle && !by_jump {
            self.tp = next;
            self.jumped = false;
            self.busy_until = cycle + 1;
            self.at_stop = None;
            return TsAction::Jump;
        } else if all_idle {
            // A frame sync: the TS waited here, or came by a jump.
            TsAction::End
        } else {
            TsAction::Wait
        };
        self.at_stop = Some((at, first, by_jump));
        action
    }

    /// The cycle of the scheduler's next decision after `cycle`, if it is busy (a CF or a
    /// broadcast under way); `None` if it is free and waits for cores to end.
    pub fn next_decision(&self, cycle: u64) -> Option<u64> {
        match self.delivery {
            Some(d) => Some(d.at),
            None => (self.busy_until > cycle).then_some(self.busy_until),
        }
    }

    /// Whether the run would end in `cycle` without the scheduler doing anything: the
    /// watchdog's question at its limit.
    pub fn ends_here(&self, cycle: u64, idle: u16) -> bool {
        if cycle < self.busy_until || self.delivery.is_some() || self.n > 0 || idle != u16::MAX {
            return false;
        }
        let Ok(cf) = ControlFrame::decode(&self.frames[self.tp]) else {
            return false;
        };
        if !(cf.stop() && cf.if_num == 0) {
            return false;
        }
        let (first, by_jump) = match self.at_stop {
            Some(s) if s.0 == self.tp => (s.1, s.2),
            _ => (cycle, self.jumped),
        };
        usize::from(cf.next_cf()) == self.tp || cycle != first || by_jump
    }
}
