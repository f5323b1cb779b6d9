//! The run loop's view of the 16 cores: each core's architectural state, what it is doing
//! ([`Mode`]), the task it runs, and its place in the event order. A core's [`EventKey`]
//! follows from its mode and cycle by one rule, `key_of`, so it is never stored apart from
//! them: every change of mode goes through [`CoreTable::set_mode`] (or the methods built on
//! it, a task's start and end among them), which sets the key in the same step. The keys sit
//! in one array so that the earliest event is one scan.

use crate::backend::CoreState;
use crate::event_key::EventKey;
use crate::isa::{Instr, FRAME_INSTRS};
use crate::memory::{FaultRule, CORES};
use std::cell::Cell;

/// What a core is doing, as the run loop sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Runs no task.
    Idle,
    /// Runs from its IP in its cycle.
    Runnable,
    /// Stopped before the memory instruction at its IP (or at the cycle limit); the loop
    /// performs the access in its turn. `bank_retry` after a bank-conflict stall.
    Parked { bank_retry: bool },
    /// Asleep until the open sequence on `bank` closes, stalled on `addr` (since when is
    /// the lock waits' to know).
    Sleeping { bank: usize, addr: u16 },
    /// Broke a rule in `cycle`; reported when that is the earliest event.
    Faulted { rule: FaultRule, cycle: u64 },
    /// Proven to repeat its registers and IP every `period` cycles without touching memory
    /// (see `livelock`): its part can never end. Reported, as a livelock of the run, when
    /// its cycle is the earliest event.
    /// `polls`: the proof is the frozen-memory one, over every running core together.
    Looping { period: u64, polls: bool },
}

/// The task a core runs (its code is in the table's code slots).
#[derive(Clone, Copy)]
pub(crate) struct Part {
    pub(crate) instrs: [Instr; FRAME_INSTRS],
    /// The frame's words as stored (a snapshot prepares its code again from them).
    pub(crate) words: [u16; FRAME_INSTRS],
    pub(crate) frame: usize,
    /// The cycle of its first instruction.
    pub(crate) start: u64,
    /// The frame has atomic sequences (`ld_sync`, `st_sync`), so its cores may take turns
    /// on locks at different instructions: the run loop offers them as a cohort.
    pub(crate) sync: bool,
    /// Whether the frame can loop ([`FrameLoops::cyclic`]): its cores stop at checkpoints.
    pub(crate) cyclic: bool,
    /// The bytes each of its cores can touch are its own
    /// ([`FrameBanks::private_bytes`](crate::banks::FrameBanks::private_bytes)) and the
    /// bank-conflict model is off: the task's cores never meet in memory, so they need not
    /// take turns among themselves.
    pub(crate) private: bool,
}

/// Every core's state, mode, task and event key.
pub(crate) struct CoreTable<C> {
    pub(crate) state: [CoreState; CORES],
    /// The task and code of each running task, in a slot its cores share (one copy a
    /// task, not one a core): core i runs `parts[code_of[i]]` with `codes[code_of[i]]`. A
    /// slot is freed when the last of its `users` ends.
    parts: [Part; CORES],
    pub(crate) codes: [Option<C>; CORES],
    pub(crate) code_of: [u8; CORES],
    users: [u16; CORES],
    /// The slots in use, bit s for slot s.
    taken: u16,
    /// The banks each core's current task can touch.
    pub(crate) banks: [u16; CORES],
    mode: [Mode; CORES],
    keys: [EventKey; CORES],
    /// The cores not idle, and those a group can take (runnable, or parked at an access
    /// not after a bank conflict), bit k for core k: kept with the modes, so that loops
    /// over cores visit only these.
    busy: u16,
    groupable: u16,
    /// The least of `keys`, once worked out since the last change of a key (the run loop
    /// asks for it several times between changes).
    least_key: Cell<Option<EventKey>>,
}

impl<C> CoreTable<C> {
    pub(crate) fn new() -> CoreTable<C> {
        CoreTable {
            state: std::array::from_fn(|i| CoreState {
                id: i as u8,
                ..CoreState::default()
            }),
            codes: std::array::from_fn(|_| None),
            code_of: [0; CORES],
            users: [0; CORES],
            taken: 0,
            parts: std::array::from_fn(|_| Part {
                instrs: [Instr::Nop; FRAME_INSTRS],
                words: [0; FRAME_INSTRS],
                frame: 0,
                start: 0,
                sync: false,
                cyclic: false,
                private: false,
            }),
            banks: [0; CORES],
            mode: [Mode::Idle; CORES],
            keys: [EventKey::NEVER; CORES],
            busy: 0,
            groupable: 0,
            least_key: Cell::new(None),
        }
    }

    /// A copy of the table whose code slots hold what `code` makes of each running
    /// task's part and code (a snapshot keeps none; a resumed run prepares them again).
    pub(crate) fn copy<D, E>(
        &self,
        mut code: impl FnMut(&Part, &C) -> Result<D, E>,
    ) -> Result<CoreTable<D>, E> {
        let mut codes: [Option<D>; CORES] = std::array::from_fn(|_| None);
        for (slot, c) in self.codes.iter().enumerate() {
            if let Some(c) = c {
                codes[slot] = Some(code(&self.parts[slot], c)?);
            }
        }
        Ok(CoreTable {
            state: self.state.clone(),
            parts: self.parts,
            codes,
            code_of: self.code_of,
            users: self.users,
            taken: self.taken,
            banks: self.banks,
            mode: self.mode,
            keys: self.keys,
            busy: self.busy,
            groupable: self.groupable,
            least_key: Cell::new(None),
        })
    }

    /// The task core `i` runs, or ran last while it is idle (until its slot is taken again).
    pub(crate) fn part(&self, i: usize) -> &Part {
        &self.parts[usize::from(self.code_of[i])]
    }

    pub(crate) fn mode(&self, i: usize) -> Mode {
        self.mode[i]
    }

    /// The cores running a task of `frame`, bit k for core k: a loop over the tasks in
    /// their slots, fewer than the cores wherever a task has more than one.
    pub(crate) fn frame_cores(&self, frame: usize) -> u16 {
        let mut cores = 0;
        for slot in lanes_of(self.taken) {
            if self.parts[slot].frame == frame {
                cores |= self.users[slot];
            }
        }
        cores
    }

    /// The cores not idle, bit k for core k.
    pub(crate) fn busy(&self) -> u16 {
        self.busy
    }

    /// The cores runnable, or parked at an access other than a bank-conflict retry: those
    /// that can run in a group.
    pub(crate) fn groupable(&self) -> u16 {
        self.groupable
    }

    /// Core `i`'s next event: its next instruction or access, or its fault; never for an
    /// idle or sleeping core.
    pub(crate) fn key(&self, i: usize) -> EventKey {
        self.keys[i]
    }

    /// Put core `i` in `mode`; its key follows from the mode and its cycle.
    pub(crate) fn set_mode(&mut self, i: usize, mode: Mode) {
        self.place(i, mode);
        self.mark(1 << i, mode);
    }

    /// Put core `i` to sleep in `mode` (a `Mode::Sleeping`), leaving the masks to
    /// [`CoreTable::mark_asleep`], which marks a herd's once.
    pub(crate) fn place_asleep(&mut self, i: usize, mode: Mode) {
        debug_assert!(matches!(mode, Mode::Sleeping { .. }), "{mode:?}");
        self.place(i, mode);
    }

    /// Mark the cores of `cores`, each placed asleep ([`CoreTable::place_asleep`]), in the
    /// masks: [`CoreTable::set_mode`] for a herd at once.
    pub(crate) fn mark_asleep(&mut self, cores: u16) {
        if cores != 0 {
            self.mark(cores, Mode::Sleeping { bank: 0, addr: 0 });
        }
    }

    /// Core `i`'s mode and key, leaving the masks to [`CoreTable::mark`].
    fn place(&mut self, i: usize, mode: Mode) {
        self.least_key.set(None);
        self.mode[i] = mode;
        self.keys[i] = key_of(mode, self.state[i].cycle, i);
    }

    /// The masks of the cores of `cores`, all just put in `mode`.
    fn mark(&mut self, cores: u16, mode: Mode) {
        let set = |mask: u16, member: bool| if member { mask | cores } else { mask & !cores };
        self.busy = set(self.busy, mode != Mode::Idle);
        let groupable = matches!(mode, Mode::Runnable | Mode::Parked { bank_retry: false });
        self.groupable = set(self.groupable, groupable);
    }

    /// Start the idle cores of `cores` on a task running `code` and the part `part` makes,
    /// each at IP 0 in the part's start cycle, with the banks `banks` gives it from its id
    /// and registers. The part is made straight into its slot (a stream of short tasks
    /// starts one a task, and a part is over a hundred bytes).
    pub(crate) fn start(
        &mut self,
        cores: u16,
        code: C,
        part: impl FnOnce() -> Part,
        banks: impl Fn(u8, &[u8; 16]) -> u16,
    ) {
        if cores == 0 {
            return;
        }
        // A free slot exists: each slot in use has a running core, and `cores` are idle.
        let slot = (!self.taken).trailing_zeros() as usize;
        self.codes[slot] = Some(code);
        self.parts[slot] = part();
        let start = self.parts[slot].start;
        self.users[slot] = cores;
        self.taken |= 1 << slot;
        // As `place` would put each, the least key cleared once for the task.
        self.least_key.set(None);
        let mut m = cores;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            debug_assert_eq!(self.mode[i], Mode::Idle);
            let state = &mut self.state[i];
            state.ip = 0;
            state.cycle = start;
            self.code_of[i] = slot as u8;
            self.banks[i] = banks(state.id, &state.regs);
            self.mode[i] = Mode::Runnable;
            self.keys[i] = key_of(Mode::Runnable, start, i);
        }
        self.mark(cores, Mode::Runnable);
    }

    /// Core `i` retries its parked access in `cycle`.
    pub(crate) fn park_at(&mut self, i: usize, cycle: u64, bank_retry: bool) {
        self.state[i].cycle = cycle;
        self.set_mode(i, Mode::Parked { bank_retry });
    }

    /// The parts of `cores` ended: they run no task.
    pub(crate) fn end(&mut self, cores: u16) {
        // The cores of one task share a slot, so the slots are visited a task at a time
        // (the lead always leaves `rest`, so the loop ends whatever the slots say).
        let mut rest = cores;
        while rest != 0 {
            let lead = rest.trailing_zeros() as usize;
            let slot = usize::from(self.code_of[lead]);
            let these = (self.users[slot] & rest) | (1 << lead);
            rest &= !these;
            self.users[slot] &= !these;
            if self.users[slot] == 0 {
                self.codes[slot] = None;
                self.taken &= !(1 << slot);
            }
        }
        // As `place` would put each, the least key cleared once for them all.
        self.least_key.set(None);
        // Over all 16 cores, which unrolls into fewer host instructions than a visit of
        // the mask's cores (a short task's end comes at every task).
        for (i, (mode, key)) in self.mode.iter_mut().zip(&mut self.keys).enumerate() {
            if cores & (1 << i) != 0 {
                *mode = Mode::Idle;
                *key = key_of(Mode::Idle, self.state[i].cycle, i);
            }
        }
        self.mark(cores, Mode::Idle);
    }

    /// The earliest pending event of any core but `except`. A key's low four bits are its
    /// core, so a plain minimum finds both.
    pub(crate) fn earliest(&self, except: Option<usize>) -> Option<EventKey> {
        let k = match except {
            None => self.least_key.get().unwrap_or_else(|| {
                let k = self
                    .keys
                    .iter()
                    .copied()
                    .fold(EventKey::NEVER, EventKey::min);
                self.least_key.set(Some(k));
                k
            }),
            Some(i) => {
                let mut keys = self.keys;
                keys[i] = EventKey::NEVER;
                keys.into_iter().fold(EventKey::NEVER, EventKey::min)
            }
        };
        (!k.is_never()).then_some(k)
    }
}

/// The event key of core `i` in `mode` at `cycle`: the one rule by which a key follows
/// from a mode ([`CoreTable::place`], and a task's start and end for all its cores).
#[inline(always)]
fn key_of(mode: Mode, cycle: u64, i: usize) -> EventKey {
    match mode {
        Mode::Runnable | Mode::Parked { .. } | Mode::Looping { .. } => {
            EventKey::new(cycle, i as u8)
        }
        Mode::Faulted { cycle, .. } => EventKey::new(cycle, i as u8),
        Mode::Idle | Mode::Sleeping { .. } => EventKey::NEVER,
    }
}

/// The cores of a mask, lowest first (one step per core, not per bit).
pub(crate) fn lanes_of(cores: u16) -> impl Iterator<Item = usize> {
    let mut rest = cores;
    std::iter::from_fn(move || {
        let j = rest.trailing_zeros() as usize;
        rest &= rest.wrapping_sub(1);
        (j < 16).then_some(j)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(frame: usize, start: u64) -> Part {
        Part {
            instrs: [Instr::Nop; FRAME_INSTRS],
            words: [0; FRAME_INSTRS],
            frame,
            start,
            sync: false,
            cyclic: false,
            private: false,
        }
    }

    #[test]
    fn a_tasks_cores_share_one_slot_freed_when_the_last_of_them_ends() {
        let mut t = CoreTable::<u32>::new();
        assert_eq!(t.earliest(None), None);
        t.start(0b0111, 7, || part(1, 5), |_, _| 0);
        t.start(0b1000, 9, || part(2, 3), |_, _| 0);
        // Core 3 starts first (cycle 3); cores 0-2 at cycle 5.
        assert_eq!(t.earliest(None), Some(EventKey::new(3, 3)));
        assert_eq!(t.earliest(Some(3)), Some(EventKey::new(5, 0)));
        assert_eq!((t.part(1).frame, t.part(3).frame), (1, 2));
        let slot = usize::from(t.code_of[0]);
        assert_eq!(t.codes[slot], Some(7));
        assert_eq!(usize::from(t.code_of[2]), slot);
        t.end(0b1011);
        // Core 2 still runs frame 1, so its slot keeps the code; core 3's slot is free.
        assert_eq!(t.codes[slot], Some(7));
        assert_eq!(t.codes[usize::from(t.code_of[3])], None);
        assert_eq!(t.busy(), 0b0100);
        assert_eq!(t.earliest(None), Some(EventKey::new(5, 2)));
        t.end(0b0100);
        assert_eq!(t.codes[slot], None);
        assert_eq!((t.busy(), t.earliest(None)), (0, None));
        // Ending cores that run nothing ends too, and changes nothing.
        t.end(0b1_0000_0000_0001);
        assert_eq!((t.busy(), t.taken), (0, 0));
    }
}
