//! What each core did, instruction by instruction, for the VCD's per-core `ip` and (with
//! `--vcd-regs`) register signals: an observer that keeps every executed instruction's IP
//! and register writes, and the R0 inits of control frames, which change r0 without an
//! instruction. Like the event [`super::events::Recorder`] it keeps a clean prefix in time,
//! at most about `limit` records: everything before a cutoff cycle, which the dump names.
//!
//! R0 init is read from the program's control frames as the scheduler reaches them, in
//! the cycle each dialect applies it: the spec's in the control frame's cycle (decisions.md),
//! the MCST dialect's when each of its instruction frames is delivered, in the broadcast's
//! last cycle. Without the program (a streamed image) only instructions are kept.

use gpu16_machine::{ControlFrame, Dialect, Event, Executed, Observer, Program};

/// One change to a core: in `cycle`, core `core` executed the instruction at `ip` (`Some`)
/// or had its r0 set by a control frame (`None`), writing `writes` (register, value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CoreChange {
    /// The cycle of the instruction or of the R0 init.
    pub(crate) cycle: u64,
    /// The core, 0..15.
    pub(crate) core: u8,
    /// The instruction's IP; `None` for an R0 init.
    pub(crate) ip: Option<u8>,
    /// The registers written and their new values.
    pub(crate) writes: [Option<(u8, u8)>; 2],
}

/// The kept changes of a run, and where they were cut.
#[derive(Clone, Debug, Default)]
pub(crate) struct CoreChanges {
    /// Instructions and R0 inits before [`CoreChanges::cut_at`], in cycle order.
    pub(crate) changes: Vec<CoreChange>,
    /// If changes were dropped: the cycle from which on none are kept.
    pub(crate) cut_at: Option<u64>,
}

/// The observer that collects [`CoreChanges`] during a run of `program` (if whole).
pub(crate) struct CoreTrace<'p> {
    program: Option<&'p Program>,
    limit: usize,
    executed: Vec<CoreChange>,
    /// R0 inits apart: a failed run reports its events again, not its instructions.
    r0: Vec<CoreChange>,
    cutoff: u64,
    /// MCST: the control frame of the group whose instruction frames are being broadcast.
    group: Option<ControlFrame>,
}

impl<'p> CoreTrace<'p> {
    /// A trace keeping about `limit` changes (at least one cycle's), reading R0 inits from
    /// `program` when there is one.
    pub(crate) fn new(program: Option<&'p Program>, limit: usize) -> CoreTrace<'p> {
        CoreTrace {
            program,
            limit: limit.max(1),
            executed: Vec::new(),
            r0: Vec::new(),
            cutoff: u64::MAX,
            group: None,
        }
    }

    /// The changes kept, in cycle order (an R0 init before the instructions of its cycle).
    pub(crate) fn finish(mut self) -> CoreChanges {
        self.shrink();
        let mut changes = self.r0;
        changes.append(&mut self.executed);
        changes.retain(|c| c.cycle < self.cutoff);
        // Stable: instructions stay in (cycle, core) order, R0 inits of a cycle first.
        changes.sort_by_key(|c| (c.cycle, c.ip.is_some()));
        CoreChanges {
            changes,
            cut_at: (self.cutoff != u64::MAX).then_some(self.cutoff),
        }
    }

    /// Lower the cutoff until at most `limit` changes are kept, but never below the first
    /// cycle's, so some cycle is always shown whole.
    fn shrink(&mut self) {
        if self.executed.len() + self.r0.len() <= self.limit {
            return;
        }
        let mut cycles: Vec<u64> = self
            .executed
            .iter()
            .chain(&self.r0)
            .map(|c| c.cycle)
            .collect();
        cycles.sort_unstable();
        let at = cycles[self.limit];
        let cut = if at > cycles[0] { at } else { at + 1 };
        self.cutoff = self.cutoff.min(cut);
        self.executed.retain(|c| c.cycle < cut);
        self.r0.retain(|c| c.cycle < cut);
    }

    /// The cores `cf` sets r0 of, with the values, in `cycle`.
    fn init(&mut self, cf: &ControlFrame, cores: u16, cycle: u64) {
        if cycle >= self.cutoff {
            return;
        }
        for core in (0..16u8).filter(|k| cores >> k & 1 == 1) {
            self.r0.push(CoreChange {
                cycle,
                core,
                ip: None,
                writes: [Some((0, cf.init_r0[usize::from(core)])), None],
            });
        }
        if self.r0.len() > 2 * self.limit {
            self.shrink();
        }
    }

    /// The control frame at task-memory index `frame`, if the program has one that decodes.
    fn control(&self, frame: usize) -> Option<ControlFrame> {
        let p = self.program?;
        (frame < p.len())
            .then(|| ControlFrame::decode(p.raw(frame)).ok())
            .flatten()
    }
}

impl Observer for CoreTrace<'_> {
    const WANTS_EXECUTED: bool = true;

    fn event(&mut self, event: Event) {
        let dialect = self.program.map(Program::dialect);
        match event {
            Event::ControlFrame { frame, cycle } => {
                let cf = self.control(frame);
                match dialect {
                    Some(Dialect::Spec) => {
                        if let Some(cf) = cf {
                            self.init(&cf, cf.r0_init_mask(), cycle);
                        }
                    }
                    _ => self.group = cf,
                }
            }
            Event::Broadcast { mask, to, .. } if dialect == Some(Dialect::Mcst) => {
                if let Some(cf) = self.group {
                    self.init(&cf, cf.init_vect & mask, to);
                }
            }
            _ => {}
        }
    }

    fn rewind_events(&mut self, _cycle: u64) {
        self.r0.clear();
        self.group = None;
    }

    fn executed(&mut self, e: &Executed) -> bool {
        if e.cycle >= self.cutoff {
            return false;
        }
        self.executed.push(CoreChange {
            cycle: e.cycle,
            core: e.core,
            ip: Some(e.ip),
            writes: e.writes,
        });
        if self.executed.len() > 2 * self.limit {
            self.shrink();
        }
        e.cycle < self.cutoff
    }
}
