//! The contract between the run loop and a backend (interpreter or JIT): a core's state, the
//! memory port a backend calls for every memory instruction, and what a backend reports when
//! it stops running a core.
//!
//! A backend runs one core natively from its current IP and cycle. Register instructions are
//! private to the core, so it may run them ahead of the other cores; a memory instruction is
//! performed at once only when the port says no other core can observe the difference (its
//! (cycle, core id) is earlier than every other pending event). Otherwise the backend parks the
//! core there and the run loop performs it in its turn. This keeps the (cycle, core id) order
//! of decisions.md exact while a lone core runs at native speed.

use crate::config::INSTRUCTION_CYCLES;
use crate::cores::lanes_of;
use crate::event_key::EventKey;
use crate::frame::InstrFrame;
use crate::isa::{Flow, MemOp, FRAME_INSTRS};
use crate::lock_wait::LockWaits;
use crate::memory::{
    bank_of, holding_bit, holding_bits, narrow, BankTally, Refusal, SharedMemory, Stall, Wakes,
    BANKS,
};
use crate::slot_run::SlotCompiler;
use std::cell::Cell;

/// The architectural state of one core plus its clock and counter. `repr(C)` so that compiled
/// code can address its fields.
#[repr(C)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreState {
    /// Registers r0..r15, one byte each (r0 is the one a CF's R0 init sets).
    pub regs: [u8; 16],
    /// The cycle in which the instruction at `ip` executes.
    pub cycle: u64,
    /// Instructions executed by this core (all tasks).
    pub instructions: u64,
    /// The next instruction's IP, 0..15.
    pub ip: u8,
    /// The core's id, 0..15: its bit in a task mask and its place in the (cycle, core id)
    /// order.
    pub id: u8,
}

/// Why a backend stopped running a core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreExit {
    /// Stopped before the instruction at `ip` in `cycle`: a memory instruction the port did
    /// not perform, or the cycle limit (`cycle >= port.limit()`).
    Parked,
    /// The core's part ended with the instruction executed in `cycle - 1`: `ready` (then `ip`
    /// still points at it) or the last instruction of the frame.
    Ended {
        /// `true` if a `ready` instruction ended it, `false` if it ran past IP 15.
        by_ready: bool,
    },
    /// Asleep on a lock: the memory instruction at `ip` stalled in its turn
    /// ([`Port::access_or_sleep`]), and the core sleeps until the sequence closes. Only a
    /// group ([`Backend::run_group`]) sleeps a core.
    Asleep,
}

/// What became of an access offered through [`Port::access_or_sleep`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortAccess {
    /// Performed: the byte loaded (or stored).
    Done(u8),
    /// Stalled on a lock in its turn: the core sleeps until the sequence closes.
    Slept,
    /// Not now: the core parks before the instruction, as for [`Port::access`]'s `None`.
    Parked,
}

/// A backend's failure that is not the program's fault, e.g. a frame the JIT could not
/// compile. Backends with richer errors of their own convert them into this at the trait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendError {
    message: String,
}

impl BackendError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> BackendError {
        BackendError {
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BackendError {}

/// Whether two of `cores` may touch the same bank, each core `k` touching the banks of
/// `banks[k]`: their accesses may then interleave, and must take turns.
pub(crate) fn shares_banks(banks: &[u16; 16], cores: u16) -> bool {
    let mut seen = 0u16;
    let mut m = cores;
    while m != 0 {
        let k = m.trailing_zeros() as usize;
        m &= m - 1;
        if seen & banks[k] != 0 {
            return true;
        }
        seen |= banks[k];
    }
    false
}

/// A group of cores the run loop could run together, as [`Backend::takes_group`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupShape {
    /// The cores, as a mask.
    pub cores: u16,
    /// Some core's task can touch shared memory.
    pub touches_memory: bool,
    /// Two of the cores may touch the same bank, so their accesses interleave.
    pub shares_banks: bool,
    /// Every core's task touches memory only in the bank numbered like the core, so each
    /// memory instruction's accesses can be one row of the 16 banks (see
    /// [`Port::cell_views`]).
    pub own_banks: bool,
    /// All the cores are at one IP in one cycle. Otherwise they are a cohort (see
    /// [`Backend::run_group`]).
    pub one_ip: bool,
}

/// An execution engine for cores. Its supertrait [`SlotCompiler`] is the separate interface
/// of the MCST dialect's slot engine (an empty `impl` for a backend with no slot code).
pub trait Backend: SlotCompiler {
    /// A frame prepared for execution (decoded, or compiled).
    type Code: Clone;
    /// The backend's name in reports.
    fn name(&self) -> &'static str;
    /// Prepare a frame when the scheduler first issues it in a run (the run loop keeps the
    /// result in its frame table, with the decoded frame, and hands it back through
    /// [`Backend::reissue`] at the frame's later issues).
    fn prepare(&mut self, frame: &InstrFrame) -> Result<Self::Code, BackendError>;

    /// The code for a later issue of a frame whose code, from [`Backend::prepare`] or an
    /// earlier reissue, is `code`: a backend that counts issues or replaces code (say, a
    /// frame compiled since) does it here, with no lookup by the frame's bytes. The run
    /// loop stores the result back in its frame table. The default: the same code.
    fn reissue(&mut self, code: &Self::Code) -> Result<Self::Code, BackendError> {
        Ok(code.clone())
    }
    /// Run `core` from `core.ip` in `core.cycle` until it parks or its part ends. Every
    /// executed instruction advances `cycle` and `instructions` by one.
    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit;

    /// Whether this backend ever takes a group: a backend that does not is spared the
    /// run loop's look for one at every event. The default: never.
    fn takes_groups(&self) -> bool {
        false
    }

    /// Whether to run `group` (cores at the same IP of the same frame in the same cycle,
    /// or a cohort: see [`Backend::run_group`]) together through [`Backend::run_group`] rather than one core at a time through
    /// [`Backend::run_core`]. Results are the same either way; this is the engine's choice
    /// of speed. The default: never.
    fn takes_group(&self, group: GroupShape) -> bool {
        let _ = group;
        false
    }

    /// Run the cores of `group` (a mask of cores, all at the same IP of the
    /// same frame in the same cycle) together, one cycle at a time: in each cycle every
    /// core of the group executes the instruction at the group's IP, memory accesses in
    /// ascending core id. Stop where the group splits (a `bnz` that goes different ways),
    /// where an access cannot be performed now (that core and the higher ones park before
    /// it), where the parts end, or at the cycle limit. The port's horizon leaves out the
    /// group's own cores. Called only for groups [`Backend::takes_group`] accepts.
    ///
    /// A core whose access stalls in its turn on a lock another core of the group holds
    /// may sleep ([`Port::access_or_sleep`]; its exit is then [`CoreExit::Asleep`]), and
    /// the cores then go on as a cohort: each at its own IP, still one cycle at a time and
    /// in ascending id. The run loop may also offer a cohort from the start (the cores of
    /// one frame at several IPs, [`GroupShape::one_ip`] false, in one cycle or, for some
    /// of them, the next, which then join it from that cycle), where cores at different
    /// instructions take turns on memory within each cycle.
    ///
    /// Returns what became of each core, by id: `Some` exit as from [`Backend::run_core`],
    /// or `None` for a core that can simply go on from its IP and cycle (the group split
    /// at a `bnz` that went different ways).
    fn run_group(
        &mut self,
        code: &Self::Code,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> [Option<CoreExit>; 16] {
        let _ = (code, group, cores, port);
        unreachable!(
            "{} asks for groups but does not implement run_group",
            self.name()
        )
    }
}

/// A cycle's memory accesses by a row of lanes, as lockstep and cohort code hand them to
/// the port: core l's address is (`banks[l]`, `rows[l]`) as [`crate::isa::address`] makes
/// it, its stored byte `values[l]`; the byte it loads (or stores) goes to `loaded[l]`, with
/// 0xFF in `performed[l]`. `O` is how the ops are given: one plain `ld` or `st` for every
/// lane ([`MemOp`], for [`Port::plain_lanes`]), or each lane its own (`&[MemOp; 16]`, for
/// [`Port::offer_lanes`]).
#[derive(Debug)]
pub struct LaneAccesses<'a, O = MemOp> {
    /// The lanes (cores) that access memory, as a mask.
    pub lanes: u16,
    /// The cycle of the accesses.
    pub cycle: u64,
    /// The op of every lane, or of each lane (see the type's docs).
    pub op: O,
    /// Each lane's bank.
    pub banks: &'a [u8; 16],
    /// Each lane's row.
    pub rows: &'a [u8; 16],
    /// Each lane's byte to store.
    pub values: &'a [u8; 16],
    /// Each performed lane's byte loaded (or stored).
    pub loaded: &'a mut [u8; 16],
    /// 0xFF in each performed lane.
    pub performed: &'a mut [u8; 16],
}

/// The raw views of shared memory that compiled code reads and writes directly, the one
/// place such pointers come from ([`Port::cell_views`]; [`DirectAccess`] carries them with
/// its bounds). Both are derived from a shared reference to the memory's [`Cell`]s, which
/// the memory changes only through shared references too, so they stay valid, and see
/// every change, while the port lives: no `&mut` to what they point at is ever taken.
/// Compiled code may use them only within the bounds the port gives
/// ([`DirectAccess`], [`Port::own_banks_until`], [`Port::shared_rows_until`]).
#[derive(Clone, Copy, Debug)]
pub struct CellViews {
    /// The 4096 bytes of shared memory, each at its cell index
    /// ([`crate::engine::memory`]: row-major, `(addr & 0xFF) * 16 + bank`), so row r of
    /// all banks is the 16 bytes from `16 * r`, bank k's byte at `16 * r + k`.
    pub bytes: *mut u8,
    /// 16 access counters, one a bank: bank k's at `.add(k)`, counted as
    /// [`crate::engine::memory`]'s "Counting accesses" says.
    pub accesses: *mut u64,
    /// The lock book, for compiled code that opens and closes sequences itself below
    /// [`Port::sync_accesses_until`]: the gate word ([`SharedMemory::gate`]); per bank
    /// (`.add(b)`) the holder of its open sequence (0xFF: none), the locked address, the
    /// cycle of its `ld_sync`, its sleepers (a mask of cores) and its lock counters
    /// ([`crate::engine::memory::MemoryStats`]); per core (`.add(k)`) the address it holds
    /// locked (0xFFFF: none). [`SharedMemory::perform`]'s commit of an `ld_sync` or
    /// `st_sync` is what compiled code must do to them.
    pub gate: *mut u32,
    /// See [`CellViews::gate`].
    pub holder: *mut u8,
    /// See [`CellViews::gate`].
    pub locked: *mut u16,
    /// See [`CellViews::gate`].
    pub since: *mut u64,
    /// See [`CellViews::gate`].
    pub held: *mut u16,
    /// See [`CellViews::gate`].
    pub waiters: *mut u16,
    /// See [`CellViews::gate`].
    pub acquisitions: *mut u64,
    /// See [`CellViews::gate`].
    pub hold_cycles: *mut u64,
}

/// What compiled code needs to perform a plain `ld` or `st` itself: for each bank, the
/// first cycle from which such an access by the running core might stall, fault, conflict
/// or be observed out of (cycle, core id) order, so must go through [`Port::access`]. It
/// folds together the bank's horizon, an open sequence on the bank, the bank-conflict
/// model and the core holding a lock (see [`SharedMemory::gate`]); the port keeps it
/// current as the core's own sync accesses and wake-ups change those. An access in an
/// earlier cycle proceeds exactly as [`SharedMemory::perform`] would commit it: read or
/// write the byte and count it in its bank's `accesses_per_bank`.
///
/// `turn` is the weaker bound of the horizon alone: an access in a cycle at or past it is
/// out of turn, so compiled code parks at once instead of asking the port, which could only
/// say the same. Between the two bounds (a sequence open on the bank, the bank-conflict
/// model, the core holding a lock) the port decides.
///
/// Every pointer is derived from a shared reference to [`Cell`]s (the port's
/// per-bank bounds and the memory's cells), and the port and the memory change those
/// cells only through shared references too, so the pointers stay valid, and see every
/// change, while the port lives: no `&mut` to what they point at is ever taken.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DirectAccess {
    /// 16 cycle bounds, one a bank.
    pub until: *const u64,
    /// 16 cycle bounds, one a bank: from here on an access is out of turn.
    pub turn: *const u64,
    /// The 4096 bytes of shared memory, each at its cell index
    /// ([`crate::engine::memory`]: row-major, `(addr & 0xFF) * 16 + bank`).
    pub bytes: *mut u8,
    /// 16 access counters, one a bank: bank k's at `.add(k)`, counted as
    /// [`crate::engine::memory`]'s "Counting accesses" says.
    pub accesses: *mut u64,
}

impl DirectAccess {
    /// Views for code that performs no plain access and never reads them.
    pub const NONE: DirectAccess = DirectAccess {
        until: std::ptr::null(),
        turn: std::ptr::null(),
        bytes: std::ptr::null_mut(),
        accesses: std::ptr::null_mut(),
    };
}

/// The two per-bank bounds of [`DirectAccess`], kept by the run loop for the lifetime of a
/// run and lent to each [`Port`].
#[derive(Debug, Default)]
pub(crate) struct DirectBounds {
    until: [Cell<u64>; BANKS],
    turn: [Cell<u64>; BANKS],
}

/// What a [`Port`] leaves for the run loop to settle when its run ends.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortEnd {
    /// Cores outside the run woken by it, each retrying in [`LockWaits::retry_at`].
    pub(crate) woken: u16,
    /// Banks on which the run opened a sequence.
    pub(crate) opened: u16,
    /// Running cores asleep on a lock (each since [`LockWaits::since`]).
    pub(crate) asleep: u16,
    /// The earliest (cycle, core) a core came to a breakpoint, as a raw [`EventKey`]
    /// (`u64::MAX`: none), and the IP.
    pub(crate) stopped_at: u64,
    pub(crate) stopped_ip: u8,
}

/// Shared memory as a backend sees it while running one core.
pub struct Port<'m> {
    memory: &'m mut SharedMemory,
    /// For each bank, the earliest event key of any other core that may touch that bank
    /// (or of a task not issued yet): an access to the bank is safe before it.
    horizon: [u64; BANKS],
    /// Every core's bank set, to tighten the horizon when a sleeper wakes.
    banks: &'m [u16; 16],
    limit: u64,
    /// The core given [`DirectAccess`], whose bounds are kept current.
    direct: Option<u8>,
    bounds: &'m DirectBounds,
    /// Cores woken by a sequence closed through this port, as a mask; a woken core is
    /// outside the running cores, so it cannot sleep again while the port lives. Each
    /// one's retry cycle is in `waits`.
    woken: u16,
    /// Banks on which an access through this port opened a sequence.
    opened: u16,
    /// The cores the backend runs: a sleeper among them is the backend's to retry, so its
    /// wake-up tightens no horizon.
    running: u16,
    /// Running sleepers woken since [`Port::take_running_wakes`] last took them.
    running_woken: u16,
    /// Every core's lock wait: running cores fall asleep, wake and are charged through it.
    waits: &'m mut LockWaits,
    /// A debugger's breakpoints in the frame run, as a mask of IPs (see [`Port::stops`]).
    stops: u16,
    /// The cycles whose breakpoints count: from the first, not the second.
    stops_from: u64,
    stops_skip: u64,
    /// The earliest (cycle, core) a core came to one of `stops`, as a raw [`EventKey`]
    /// (`u64::MAX`: none), and the IP.
    stopped_at: u64,
    stopped_ip: u8,
    /// The cores of the running task whose bytes are private (see [`Port::set_private`]).
    private: u16,
}

impl<'m> Port<'m> {
    pub(crate) fn new(
        memory: &'m mut SharedMemory,
        horizon: [u64; BANKS],
        banks: &'m [u16; 16],
        bounds: &'m DirectBounds,
        limit: u64,
        running: u16,
        waits: &'m mut LockWaits,
    ) -> Port<'m> {
        Port {
            memory,
            horizon,
            banks,
            limit,
            direct: None,
            bounds,
            woken: 0,
            opened: 0,
            running,
            running_woken: 0,
            waits,
            stops: 0,
            stops_from: 0,
            stops_skip: u64::MAX,
            stopped_at: u64::MAX,
            private: 0,
            stopped_ip: 0,
        }
    }

    /// Give the port a debugger's breakpoints in the frame run: the IPs of `mask`, counting
    /// from cycle `from`, except in `skip` (see [`crate::Stops`]).
    pub(crate) fn set_stops(&mut self, mask: u16, from: u64, skip: Option<u64>) {
        self.stops = mask;
        self.stops_from = from;
        self.stops_skip = skip.unwrap_or(u64::MAX);
    }

    /// The IPs of the frame run at which a debugger may stop (its breakpoints), as a mask:
    /// where it is not 0, a backend must tell the port of each instruction of the mask a
    /// core comes to ([`Port::came_to_stop`]), as the reference interpreter does; compiled
    /// code hands each core coming to one to the interpreter. It is 0 for a core past the
    /// first stop the run has noted, which no later one can come before.
    #[inline]
    pub fn stops(&self) -> u16 {
        self.stops
    }

    /// Whether a debugger watches bytes of memory: every write must go through the memory's
    /// commit path, which notes the writes of watched bytes. The port's views for compiled
    /// code's own accesses ([`Port::direct`], [`Port::own_banks_until`]) then let none
    /// through, so compiled code calls back for each.
    #[inline]
    pub fn watching(&self) -> bool {
        self.memory.watching()
    }

    /// Core `core` comes to an instruction at `ip` in `cycle`, about to execute it (or try
    /// it again): where `ip` is one of [`Port::stops`], the port notes the earliest.
    #[inline]
    pub fn came_to_stop(&mut self, core: u8, ip: u8, cycle: u64) {
        if self.stops == 0 {
            return;
        }
        let key = EventKey::new(cycle, core).raw();
        if self.stops >> (ip & 0xF) & 1 != 0
            && cycle >= self.stops_from
            && cycle != self.stops_skip
            && key < self.stopped_at
        {
            self.stopped_at = key;
            self.stopped_ip = ip & 0xF;
        }
    }

    /// End the port's run: bring the charges of sleepers a herd sent back to sleep up to
    /// date, and hand over the masks the run loop settles (see [`PortEnd`]).
    #[inline]
    pub(crate) fn finish(self) -> PortEnd {
        self.waits.catch_up();
        PortEnd {
            stopped_at: self.stopped_at,
            stopped_ip: self.stopped_ip,
            woken: self.woken,
            opened: self.opened,
            asleep: self.waits.asleep() & self.running,
        }
    }

    /// Raw views for compiled code running core `id`; see [`DirectAccess`].
    pub fn direct(&mut self, id: u8) -> DirectAccess {
        self.direct = Some(id);
        for b in 0..BANKS {
            self.bounds.turn[b].set(0);
            self.bounds.until[b].set(0);
        }
        self.refresh_until();
        let cells = self.cell_views();
        DirectAccess {
            until: self.bounds.until.as_ptr().cast::<u64>(),
            turn: self.bounds.turn.as_ptr().cast::<u64>(),
            bytes: cells.bytes,
            accesses: cells.accesses,
        }
    }

    /// Recompute the direct core's bounds: `cycle < turn[b]` exactly when its key
    /// `cycle * 16 + id` is below the bank's horizon; `until[b]` is the same, or 0 where
    /// the gate is set or a debugger watches bytes (every access then goes through the
    /// memory's commit path, which notes the writes of watched bytes). Only the banks the core's task can touch are computed; the others
    /// stay 0 from [`Port::direct`] (always parked, where the run loop performs them in turn), which keeps a
    /// re-entry after every parked access cheap.
    #[inline]
    fn refresh_until(&mut self) {
        let Some(core) = self.direct else { return };
        let gate = self.memory.gate();
        let holds = gate & holding_bit(core) != 0 || self.memory.watching();
        let mut banks = self.banks[usize::from(core & 0xF)];
        while banks != 0 {
            let b = banks.trailing_zeros() as usize;
            banks &= banks - 1;
            let turn = EventKey::from_raw(self.horizon[b]).first_cycle_at_or_past(core);
            let until = if holds || gate & (1 << b) != 0 {
                0
            } else {
                turn
            };
            self.bounds.turn[b].set(turn);
            self.bounds.until[b].set(until);
        }
    }

    /// For the cores of `group` running in lockstep (the horizon leaves them out): the
    /// first cycle from which a plain `ld`/`st` by some core k of the group to its own bank
    /// k might not proceed exactly as [`SharedMemory::perform`] would commit it: core k's
    /// turn on bank k ends, the bank has an open sequence (or the bank-conflict model
    /// arbitrates it), or core k holds a lock. Before it, compiled code may perform such a
    /// row of accesses itself (see [`Port::cell_views`]). Never while a debugger watches
    /// bytes: every write then goes through the memory's commit path, which notes them.
    pub fn own_banks_until(&self, group: u16) -> u64 {
        self.lockstep_bounds(group).0
    }

    /// For the cores of `group` running in lockstep: the first cycle from which a plain `ld`
    /// by some core of the group from any bank the group's tasks may touch might not
    /// proceed exactly as [`SharedMemory::perform`] would commit it: that bank's turn ends
    /// for the group's highest core (and so for every lower one), the bank has an open
    /// sequence (or the bank-conflict model arbitrates it), or a core of the group holds a
    /// lock. Before it, compiled code may perform a load in which every lane reads one row
    /// itself, one byte of that row each (see [`Port::cell_views`]).
    pub fn shared_rows_until(&self, group: u16) -> u64 {
        self.lockstep_bounds(group).1
    }

    /// The three bounds compiled lockstep code for `group` reads at entry, in one pass over
    /// the banks, in this order: [`Port::own_banks_until`] (own-bank rows),
    /// [`Port::shared_rows_until`] (loads of one row) and [`Port::plain_accesses_until`]
    /// (any plain access), each as its method describes it. They are worked out together
    /// because a short task's entry asks for all three, and each alone walks the 16
    /// horizons. (A tuple, not a struct: the public API's item pages are bounded.)
    pub fn lockstep_bounds(&self, group: u16) -> (u64, u64, u64) {
        let watching = self.memory.watching();
        let gate = self.memory.gate();
        if group == 0 {
            return (if watching { 0 } else { u64::MAX }, 0, 0);
        }
        // The banks the group may reach, and each core k's key on its own bank k against
        // that bank's horizon: over a narrow group's few lanes one at a time, else over all
        // 16 without a branch.
        let (mut reach, mut own_least) = (0u16, u64::MAX);
        if narrow(group) {
            for k in lanes_of(group) {
                reach |= self.banks[k];
                own_least = own_least.min(self.horizon[k].saturating_sub(k as u64));
            }
        } else {
            for (k, (&banks, &horizon)) in self.banks.iter().zip(&self.horizon).enumerate() {
                let member = group & (1 << k) != 0;
                reach |= if member { banks } else { 0 };
                own_least = own_least.min(if member {
                    horizon.saturating_sub(k as u64)
                } else {
                    u64::MAX
                });
            }
        }
        let holding = gate & holding_bits(group) != 0;
        let own_rows = if watching || holding || gate & u32::from(group) != 0 {
            0
        } else {
            turn_of_least(own_least)
        };
        let shared_rows = if holding || gate & u32::from(reach) != 0 {
            0
        } else {
            self.turn_on(reach, group)
        };
        (
            own_rows,
            shared_rows,
            if watching { 0 } else { shared_rows },
        )
    }

    /// The first cycle in which the highest core of `group`, and so some core of it, is no
    /// longer in turn on some bank of `reach` (`u64::MAX` for no bank).
    fn turn_on(&self, reach: u16, group: u16) -> u64 {
        if reach == 0 {
            return u64::MAX;
        }
        let highest = 15 - u64::from(group.leading_zeros());
        // A task whose banks are not known may reach every bank; a short task's, a few.
        let least = if reach == u16::MAX {
            self.horizon.iter().copied().fold(u64::MAX, u64::min)
        } else if narrow(reach) {
            lanes_of(reach).fold(u64::MAX, |least, b| least.min(self.horizon[b]))
        } else {
            let mut least = u64::MAX;
            for (b, &horizon) in self.horizon.iter().enumerate() {
                least = least.min(if reach & (1 << b) != 0 {
                    horizon
                } else {
                    u64::MAX
                });
            }
            least
        };
        turn_of_least(least.saturating_sub(highest))
    }

    /// For the cores of `cohort` (cores of one frame without atomic sequences, at any IPs):
    /// the first cycle from which a plain `ld` or `st` by some core of the cohort to any
    /// bank its tasks may touch might not proceed exactly as [`SharedMemory::perform`]
    /// would commit it. That is [`Port::shared_rows_until`]'s bound, which holds for stores
    /// as for loads, and 0 while a debugger watches bytes (every write must then go
    /// through the memory's commit path, which notes it). Before it, compiled code may
    /// perform each such access itself, in ascending core id within a cycle (see
    /// [`Port::cell_views`]); nothing the cohort does moves the bound, since only a
    /// `st_sync` wakes cores outside it and only a sync access changes the gate.
    pub fn plain_accesses_until(&self, cohort: u16) -> u64 {
        self.lockstep_bounds(cohort).2
    }

    /// The raw views of shared memory ([`CellViews`]), for compiled code that performs
    /// accesses itself below the bounds the port gives: a lone core's [`DirectAccess`], or
    /// lockstep rows of own-bank accesses below [`Port::own_banks_until`] (and shared
    /// rows below [`Port::shared_rows_until`]), counted through [`Port::count_accesses`].
    pub fn cell_views(&self) -> CellViews {
        let cells = self.memory.cells();
        // Each pointer is derived from a shared reference to `Cell`s: see `CellViews`.
        fn at<T>(cells: &[Cell<T>]) -> *mut T {
            cells.as_ptr().cast::<T>().cast_mut()
        }
        let locks = &cells.locks;
        CellViews {
            bytes: at(&cells.bytes),
            accesses: cells.accesses.as_ptr(),
            gate: locks.gate.as_ptr(),
            holder: at(&locks.holder),
            locked: at(&locks.locked),
            since: at(&locks.since),
            held: at(&locks.held),
            waiters: at(&locks.waiters),
            acquisitions: at(&locks.acquisitions),
            hold_cycles: at(&locks.hold_cycles),
        }
    }

    /// For the cores of `cohort` (cores of one frame, at any IPs): the first cycle from
    /// which some core of the cohort may no longer be the only one to act on a bank the
    /// cohort's tasks may touch, in (cycle, core id) order ([`Port::plain_accesses_until`]'s
    /// turn, whatever sequences are open or held); 0 while a debugger watches bytes, an
    /// observer keeps the closed sequences, or the bank-conflict model arbitrates banks.
    /// Before it, compiled code may perform an access of the cohort itself through
    /// [`CellViews`], in ascending core id within a cycle, where the lock book shows that
    /// [`SharedMemory::perform`] would commit it and wake no one: an `ld`/`st` whose bank
    /// and core have no gate bit, an `ld_sync` likewise, a `st_sync` of the byte its core
    /// holds on a bank without sleepers; each banks' `ld_sync` it performs goes to
    /// [`Port::note_opened`]. Anything else goes through [`Port::offer_lanes`] or
    /// [`Port::access_or_sleep`], after which the bound must be asked again (a wake-up
    /// moves horizons).
    pub fn sync_accesses_until(&self, cohort: u16) -> u64 {
        if self.memory.watching()
            || self.memory.closed.is_some()
            || self.memory.bank_conflicts()
            || self.direct.is_some()
        {
            return 0;
        }
        let reach = lanes_of(cohort).fold(0, |r, k| r | self.banks[k]);
        self.turn_on(reach, cohort)
    }

    /// Banks on which compiled code opened a sequence itself (see
    /// [`Port::sync_accesses_until`]), for the run loop to settle as it settles those
    /// opened through the port.
    pub fn note_opened(&mut self, banks: u16) {
        self.opened |= banks;
    }

    /// Count the accesses of `tally`, performed by compiled code through
    /// [`Port::cell_views`] (own-bank rows, and shared rows below
    /// [`Port::shared_rows_until`]).
    pub fn count_accesses(&self, tally: &BankTally) {
        self.memory.cells().accesses.add(tally);
    }

    /// Whether two of `cores` may touch the same bank (by the bank analysis of their
    /// frames), so that their accesses may interleave: never where they are all cores of
    /// the running task whose bytes are private (no core of it can touch a byte another
    /// touches, as the run loop tells the port), which never meet in memory and so need not
    /// take turns.
    pub fn cores_share_banks(&self, cores: u16) -> bool {
        cores & !self.private != 0 && shares_banks(self.banks, cores)
    }

    /// The running task's cores never touch a byte another of them touches, and the
    /// bank-conflict model is off (`cores`: all of the task's cores; 0 otherwise): the run
    /// loop leaves them out of each other's horizons, and they need not take turns.
    pub(crate) fn set_private(&mut self, cores: u16) {
        self.private = cores;
    }

    /// The watchdog limit: no instruction may execute in a cycle at or past it.
    #[inline]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Run `f` with the limit lowered to `limit` (never raised), then restore it. A backend
    /// hands a core to the interpreter for a short stretch this way: the core stops at the
    /// lower limit as it would at the watchdog's, parked before its next instruction, and
    /// the run loop lets it go on from there.
    pub fn within<R>(&mut self, limit: u64, f: impl FnOnce(&mut Port<'m>) -> R) -> R {
        let asked = self.limit;
        self.limit = asked.min(limit);
        let r = f(self);
        self.limit = asked;
        r
    }

    /// Perform core `id`'s memory instruction in `cycle` if that is safe now and it would
    /// neither stall nor fault. Returns the byte loaded (or stored); `None` means park.
    #[inline]
    pub fn access(&mut self, id: u8, cycle: u64, op: MemOp, addr: u16, value: u8) -> Option<u8> {
        self.offer(id, cycle, op, addr, value).ok()
    }

    /// [`Port::access`] for a core of a group, which may also sleep: where the access is in
    /// its turn and stalls on a lock that another running core holds, the core sleeps from
    /// `cycle`, exactly as the run loop would put it to sleep performing it in turn, and
    /// wakes when that core closes the sequence ([`Port::take_running_wakes`]). A lock held
    /// outside the running cores parks (when it closes is the run loop's to know), and so
    /// do a fault and a bank-conflict stall, which the run loop reports in turn.
    #[inline(always)]
    pub fn access_or_sleep(
        &mut self,
        id: u8,
        cycle: u64,
        op: MemOp,
        addr: u16,
        value: u8,
    ) -> PortAccess {
        match self.offer(id, cycle, op, addr, value) {
            Ok(byte) => PortAccess::Done(byte),
            Err(Some(Stall::Lock { holder, .. }))
                if self.running & (1 << id) != 0 && self.running & (1 << holder) != 0 =>
            {
                self.waits.sleep(self.memory, id, op, addr & 0xFFF, cycle);
                PortAccess::Slept
            }
            Err(_) => PortAccess::Parked,
        }
    }

    /// Perform the plain accesses of `row` ([`LaneAccesses`]) in its cycle, in ascending
    /// id, as long as each is in turn and would neither stall nor fault. Returns the cores
    /// performed: the lanes below the first that was not, which goes on through
    /// [`Port::access_or_sleep`] (a plain access moves neither the gate nor a horizon, so
    /// whether one is safe does not depend on those before it). None where some lock is
    /// open or held, or banks conflict.
    #[inline]
    pub fn plain_lanes(&mut self, row: LaneAccesses<'_>) -> u16 {
        let LaneAccesses {
            lanes,
            cycle,
            op,
            banks,
            rows,
            values,
            loaded,
            performed,
        } = row;
        self.plain_lanes_of(lanes, cycle, op, banks, rows, values, loaded, performed)
    }

    /// [`Port::plain_lanes`] with each reference a parameter of its own: the optimiser
    /// knows that reference parameters do not alias, not references held in a struct or a
    /// tuple (the lane loop ran 15% slower, in instructions, reading through those).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn plain_lanes_of(
        &mut self,
        lanes: u16,
        cycle: u64,
        op: MemOp,
        banks: &[u8; 16],
        rows: &[u8; 16],
        values: &[u8; 16],
        loaded: &mut [u8; 16],
        performed: &mut [u8; 16],
    ) -> u16 {
        if op.is_sync() || cycle >= self.limit || !self.memory.plain_accesses_proceed() {
            return 0;
        }
        let mut done = 0u16;
        let mut m = lanes;
        while m != 0 {
            let l = m.trailing_zeros() as u8;
            m &= m - 1;
            let i = usize::from(l);
            let addr = crate::isa::address(banks[i], rows[i]) & 0xFFF;
            if EventKey::new(cycle, l).raw() >= self.horizon[bank_of(addr)] {
                break;
            }
            loaded[i] = self.memory.perform_plain(l, cycle, op, addr, values[i]);
            performed[i] = 0xFF;
            done |= 1 << l;
        }
        done
    }

    /// Perform the accesses of `row` ([`LaneAccesses`], each lane its own op) in its cycle,
    /// in ascending id, each through the memory's one commit path exactly as
    /// [`Port::access_or_sleep`] would perform it, as long as each is in turn and
    /// proceeds. Returns the cores performed. It stops at the first that does not (which
    /// goes on through [`Port::access_or_sleep`]: a refused access changes nothing, so it
    /// meets the same answer there), and after a `st_sync` that woke running sleepers
    /// ([`Port::take_running_wakes`]), who may retry in this cycle before the later lanes.
    /// One call a cycle instead of one a lane: a histogram's uncontended sequences, its
    /// lanes alternating `ld_sync` and `st_sync`, spent a third of their time in calls.
    #[inline(never)]
    pub fn offer_lanes(&mut self, row: LaneAccesses<'_, &[MemOp; 16]>) -> u16 {
        let mut done = 0u16;
        let mut m = row.lanes;
        while m != 0 {
            let l = m.trailing_zeros() as u8;
            m &= m - 1;
            let i = usize::from(l);
            let addr = crate::isa::address(row.banks[i], row.rows[i]);
            let Ok(byte) = self.offer(l, row.cycle, row.op[i], addr, row.values[i]) else {
                break;
            };
            row.loaded[i] = byte;
            row.performed[i] = 0xFF;
            done |= 1 << l;
            if self.running_woken != 0 {
                break;
            }
        }
        done
    }

    /// The running cores asleep on a lock, as a mask.
    pub fn asleep(&self) -> u16 {
        self.waits.asleep() & self.running
    }

    /// The running sleepers woken since the last call, as a mask; each retries in
    /// [`Port::retry_cycle`].
    pub fn take_running_wakes(&mut self) -> u16 {
        std::mem::take(&mut self.running_woken)
    }

    /// The cycle in which woken core `core` retries its access.
    pub fn retry_cycle(&self, core: u8) -> u64 {
        self.waits.retry_at(usize::from(core & 0xF))
    }

    /// Whether core `core` holds a lock (ending its part now would fault).
    pub fn holds(&self, core: u8) -> bool {
        self.memory.held(core).is_some()
    }

    /// Offer the access to memory if it is in turn: the byte, or why not (`None`: out of
    /// turn or past the limit; a stall; a fault reads as `None` too, for the run loop to
    /// report in turn). Inlined into each caller: outlined, it cost a contended counter
    /// 5% in calls.
    #[inline(always)]
    fn offer(
        &mut self,
        id: u8,
        cycle: u64,
        op: MemOp,
        addr: u16,
        value: u8,
    ) -> Result<u8, Option<Stall>> {
        let addr = addr & 0xFFF;
        if cycle >= self.limit || EventKey::new(cycle, id).raw() >= self.horizon[bank_of(addr)] {
            return Err(None);
        }
        let performed = match self.memory.perform(id, cycle, op, addr, value) {
            Ok(performed) => performed,
            Err(Refusal::Stall(stall)) => return Err(Some(stall)),
            Err(Refusal::Fault(_)) => return Err(None),
        };
        if !performed.wakes.is_empty() {
            self.wake(performed.wakes);
        }
        if op.is_sync() {
            if op == MemOp::LdSync {
                self.opened |= 1 << bank_of(addr);
            }
            self.refresh_until();
        }
        Ok(performed.value)
    }

    /// Sleepers on a sequence this core closed retry when [`Wakes::iter`] says. The running
    /// ones are the backend's to retry ([`LockWaits::wake_running`], which also serves a
    /// herd); any other may touch its banks from its retry on, which tightens those banks'
    /// horizons, and the run loop wakes it when the port ends.
    fn wake(&mut self, wakes: Wakes) {
        self.running_woken |= self
            .waits
            .wake_running(self.memory, wakes, self.running, self.limit);
        let mut outside = wakes.mask() & !self.running;
        self.woken |= outside;
        while outside != 0 {
            let w = outside.trailing_zeros() as u8;
            outside &= outside - 1;
            let at = wakes.retry(w);
            self.waits.note_retry(w, at);
            let key = EventKey::new(at, w).raw();
            let mut banks = self.banks[usize::from(w)];
            while banks != 0 {
                let b = banks.trailing_zeros() as usize;
                banks &= banks - 1;
                self.horizon[b] = self.horizon[b].min(key);
            }
        }
        self.refresh_until();
    }
}

impl CoreState {
    /// Cycles one core instruction takes (decisions.md: every instruction takes 1 cycle),
    /// fixed by the core pipeline, not configurable. [`CoreState::retire`] advances the
    /// cycle by it; compiled code's cycle arithmetic must use it too.
    pub const INSTRUCTION_CYCLES: u64 = INSTRUCTION_CYCLES;

    /// Apply the control flow of an executed instruction: count it and move the IP. Returns
    /// the exit if the core's part ended.
    #[inline]
    pub fn retire(&mut self, flow: Flow) -> Option<CoreExit> {
        self.cycle += INSTRUCTION_CYCLES;
        self.instructions += 1;
        match flow {
            Flow::Jump(t) => {
                self.ip = t;
                None
            }
            Flow::Ready => Some(CoreExit::Ended { by_ready: true }),
            Flow::Next => {
                if usize::from(self.ip) == FRAME_INSTRS - 1 {
                    Some(CoreExit::Ended { by_ready: false })
                } else {
                    self.ip += 1;
                    None
                }
            }
        }
    }
}

/// The least of [`EventKey::first_cycle_at_or_past`] over (horizon, core) pairs, from the
/// least of their `horizon - core` (saturating at 0): that turn grows with the difference,
/// and a key `d` behind core 0's first place is `d` behind core k's at `horizon = d + k`.
fn turn_of_least(least: u64) -> u64 {
    EventKey::from_raw(least).first_cycle_at_or_past(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Core `core`'s first cycle at or past `horizon`, as the spec's (cycle, core) order
    /// gives it: the least `c` with `16 * c + core >= horizon`.
    fn first_cycle(horizon: u64, core: u64) -> u64 {
        if horizon < 1024 {
            // Small ones by search.
            return (0..).find(|c| 16 * c + core >= horizon).unwrap();
        }
        (horizon - core).div_ceil(16)
    }

    /// The bounds lane by lane, as their docs state them.
    fn own_banks_by_lane(gate: u32, horizon: &[u64; 16], group: u16) -> u64 {
        let mut until = u64::MAX;
        for k in (0..16).filter(|k| group & (1 << k) != 0) {
            if gate & (1 << k) != 0 || gate & holding_bit(k as u8) != 0 {
                return 0;
            }
            until = until.min(first_cycle(horizon[k], k as u64));
        }
        until
    }

    fn shared_rows_by_lane(gate: u32, horizon: &[u64; 16], banks: &[u16; 16], group: u16) -> u64 {
        if group == 0 {
            return 0;
        }
        let lanes: Vec<usize> = (0..16).filter(|k| group & (1 << k) != 0).collect();
        if lanes.iter().any(|&k| gate & holding_bit(k as u8) != 0) {
            return 0;
        }
        let reach = lanes.iter().fold(0u16, |r, &k| r | banks[k]);
        if gate & u32::from(reach) != 0 {
            return 0;
        }
        let highest = *lanes.last().unwrap() as u64;
        (0..16)
            .filter(|b| reach & (1 << b) != 0)
            .map(|b| first_cycle(horizon[b], highest))
            .min()
            .unwrap_or(u64::MAX)
    }

    struct Draw(u64);
    impl Draw {
        fn next(&mut self) -> u64 {
            // xorshift64*
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// A horizon: small keys near every core's place, large ones, and none.
        fn horizon(&mut self) -> u64 {
            match self.next() % 5 {
                0 => self.next() % 40,
                1 => 1000 + self.next() % 64,
                2 => u64::MAX,
                3 => u64::MAX - self.next() % 20,
                _ => self.next() >> 4,
            }
        }
    }

    /// Hand-worked: `offer_lanes` performs lanes in ascending id while each proceeds,
    /// stops at the first refused (which `access_or_sleep` then answers, unchanged), and
    /// stops after a `st_sync` that woke a running sleeper.
    #[test]
    fn offer_lanes_goes_in_id_order_up_to_a_refusal_or_a_wake() {
        let mut memory = SharedMemory::new(&[7; 4096], false);
        let (banks, bounds) = ([0xFFFFu16; 16], DirectBounds::default());
        let mut waits = LockWaits::new(false);
        let mut port = Port::new(
            &mut memory,
            [u64::MAX; BANKS],
            &banks,
            &bounds,
            100,
            0xFFFF,
            &mut waits,
        );
        let (mut loaded, mut performed) = ([0u8; 16], [0u8; 16]);
        let mut ops = [MemOp::Ld; 16];
        let (mut bank, mut row, mut value) = ([0u8; 16], [0u8; 16], [0u8; 16]);
        // Cycle 0: core 0 opens bank 2 (row 1), core 1 opens bank 3, core 2 stores to
        // bank 5, core 4's ld_sync on bank 2 meets core 0's lock, and core 5's load of
        // bank 7, which would proceed, waits behind it: three performed.
        for (l, op, b, r) in [
            (0, MemOp::LdSync, 2, 1),
            (1, MemOp::LdSync, 3, 0),
            (2, MemOp::St, 5, 0),
            (4, MemOp::LdSync, 2, 9),
            (5, MemOp::Ld, 7, 0),
        ] {
            (ops[l], bank[l], row[l], value[l]) = (op, b, r, 0x40 + l as u8);
        }
        let mut offer = |port: &mut Port<'_>, lanes: u16, cycle: u64, ops: &[MemOp; 16]| {
            port.offer_lanes(LaneAccesses {
                lanes,
                cycle,
                op: ops,
                banks: &bank,
                rows: &row,
                values: &value,
                loaded: &mut loaded,
                performed: &mut performed,
            })
        };
        assert_eq!(offer(&mut port, 0b110111, 0, &ops), 0b111);
        // Core 4 is refused and changed nothing: through the general path it sleeps.
        let addr4 = crate::isa::address(2, 9);
        assert_eq!(
            port.access_or_sleep(4, 0, MemOp::LdSync, addr4, 0),
            PortAccess::Slept
        );
        assert_eq!(port.asleep(), 1 << 4);
        assert_eq!(offer(&mut port, 0b100000, 0, &ops), 0b100000);
        // Cycle 3: core 0 closes bank 2, which wakes core 4; core 1's st_sync waits for
        // the next call, after the woken core's turn.
        ops[0] = MemOp::StSync;
        ops[1] = MemOp::StSync;
        assert_eq!(offer(&mut port, 0b11, 3, &ops), 0b1);
        assert_eq!(port.take_running_wakes(), 1 << 4);
        assert_eq!(offer(&mut port, 0b10, 3, &ops), 0b10);
        assert_eq!(memory.byte(crate::isa::address(5, 0)), 0x42);
        assert_eq!(memory.byte(crate::isa::address(2, 1)), 0x40);
        assert_eq!(memory.gate(), 0);
    }

    #[test]
    fn lockstep_row_bounds_are_the_least_lane_bound() {
        let mut draw = Draw(0x9E37_79B9_7F4A_7C15);
        for case in 0..20_000 {
            let mut memory = SharedMemory::new(&[], false);
            // Open sequences on a few banks, held by a few cores.
            for _ in 0..draw.next() % 3 {
                let core = (draw.next() % 16) as u8;
                let addr = (draw.next() % 4096) as u16;
                let _ = memory.perform(core, 0, MemOp::LdSync, addr, 0);
            }
            let banks: [u16; 16] = std::array::from_fn(|_| match draw.next() % 4 {
                0 => 0,
                1 => 1 << (draw.next() % 16),
                _ => draw.next() as u16,
            });
            let horizon: [u64; 16] = std::array::from_fn(|_| draw.horizon());
            let group = match case % 4 {
                0 => 0xFFFF,
                1 => 1 << (draw.next() % 16),
                _ => draw.next() as u16,
            };
            // A debugger watching bytes sends every own-bank row and plain access through
            // the commit path; shared-row loads need no note.
            let watching = case % 5 == 4;
            if watching {
                memory.watch(&[(draw.next() % 4096) as u16], 0, None);
            }
            let gate = memory.gate();
            let bounds = DirectBounds::default();
            let mut waits = LockWaits::new(false);
            let port = Port::new(&mut memory, horizon, &banks, &bounds, 0, 0, &mut waits);
            let own = if watching {
                0
            } else {
                own_banks_by_lane(gate, &horizon, group)
            };
            let shared = shared_rows_by_lane(gate, &horizon, &banks, group);
            assert_eq!(
                port.own_banks_until(group),
                own,
                "own banks: gate {gate:#x}, horizon {horizon:?}, group {group:#06x}"
            );
            assert_eq!(
                port.shared_rows_until(group),
                shared,
                "shared rows: gate {gate:#x}, horizon {horizon:?}, banks {banks:?}, group {group:#06x}"
            );
            assert_eq!(
                port.lockstep_bounds(group),
                (own, shared, if watching { 0 } else { shared }),
                "one pass: gate {gate:#x}, horizon {horizon:?}, banks {banks:?}, group {group:#06x}"
            );
        }
    }
}
