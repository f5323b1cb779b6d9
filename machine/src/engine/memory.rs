//! Shared memory: 16 banks x 256 one-byte rows, the byte locks of atomic sequences (one open
//! sequence a bank), the optional bank-conflict model, and the runtime faults of memory
//! instructions. Every access is decided and committed here, through [`SharedMemory::perform`],
//! in the (cycle, core id) order the run loop presents them, so all backends share one
//! memory model. The one exception is compiled code's inline accesses, which commit exactly
//! as `perform` would, only where the port's bound proves `perform` would do nothing else:
//! plain `ld`/`st` (the byte and its bank's counter, see [`crate::backend::DirectAccess`]),
//! and a cohort's accesses in a frame with atomic sequences, which also open and close
//! sequences in the lock book ([`crate::backend::Port::sync_accesses_until`]).
//!
//! The bytes and the per-bank access counters live in [`Cell`]s behind an [`Rc`], because
//! compiled code reads and writes them through raw pointers while the memory itself is
//! borrowed: interior mutability makes those pointers and the memory's own accesses
//! coexist, and the `Rc` keeps the cells out of every `&mut SharedMemory`. The byte at
//! address `addr` is the cell at index `(addr & 0xFF) * 16 + bank` (row-major, bank = bits
//! 11:8), so one row of all 16 banks is 16 contiguous bytes, which lockstep code moves as
//! one vector.
//!
//! # Counting accesses
//!
//! One rule, defined once (the crate's `BankAccesses`): every access a core performs (`ld`,
//! `st`, `ld_sync` or `st_sync`, in whatever cycle) counts one in the counter of the bank
//! its address lies in (address bits 11:8); an attempt that stalls or faults counts nothing
//! (its retry counts when it is performed). So a row of accesses by the lanes of a group
//! counts one in each bank a lane reaches ([`BankTally`]). The totals are
//! [`MemoryStats::accesses_per_bank`]. Compiled code that performs plain accesses itself
//! adds its counts in bulk with the same meaning: a [`BankTally`] through
//! [`crate::engine::backend::Port::count_accesses`], or, from inside compiled code, `n`
//! added to the `u64` of bank k at [`crate::engine::backend::DirectAccess::accesses`]`.add(k)`.

use crate::isa::MemOp;
use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

/// Size of shared memory in bytes (4 KiB: 12-bit addresses 0x000..=0xfff).
pub const MEMORY_BYTES: usize = 4096;
/// Number of memory banks, each 256 one-byte rows; bank = address bits 11:8.
pub const BANKS: usize = 16;
/// Number of cores of the machine (ids 0..15).
pub(crate) const CORES: usize = 16;

/// The bank (0..15) of address `addr`: bits 11:8 (higher bits are ignored).
#[inline]
pub(crate) fn bank_of(addr: u16) -> usize {
    usize::from((addr >> 8) & 0xF)
}

/// Where the byte at `addr` lives among the memory's cells: row-major (row * 16 + bank),
/// so that one row of all 16 banks is 16 contiguous bytes, which lockstep code moves as one
/// vector when each core of a group reads or writes its own bank. Compiled code computes
/// the same index (`jit/src/compile.rs`, `Inline::perform`).
#[inline]
pub(crate) fn cell_index(addr: u16) -> usize {
    (usize::from(addr & 0xFF) << 4) | usize::from((addr >> 8) & 0xF)
}

/// The gate bits of every bank.
const ALL_BANKS: u32 = 0xFFFF;

/// The gate bit of a core that holds a lock.
#[inline]
pub(crate) fn holding_bit(core: u8) -> u32 {
    1 << (16 + u32::from(core & 0xF))
}

/// The gate bits of every core of `cores` (bit k for core k) holding a lock: the
/// [`holding_bit`] of each.
pub(crate) fn holding_bits(cores: u16) -> u32 {
    u32::from(cores) << 16
}

/// A runtime rule a program broke; the run stops with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultRule {
    /// `st_sync` with no open atomic sequence.
    StSyncWithoutSequence,
    /// `st_sync` to another byte than the one its `ld_sync` locked.
    StSyncWrongAddress {
        /// The address the core's `ld_sync` locked.
        held: u16,
    },
    /// `ld_sync` while the core already holds a lock (nested sequence).
    LdSyncWhileHolding {
        /// The address the core already holds locked.
        held: u16,
    },
    /// `ld` or `st` inside an atomic sequence.
    AccessWhileHolding {
        /// The address the core holds locked.
        held: u16,
    },
    /// `ready` inside an atomic sequence.
    ReadyWhileHolding {
        /// The address still locked.
        held: u16,
    },
    /// The frame's code ended (after IP 15) inside an atomic sequence.
    FrameEndWhileHolding {
        /// The address still locked.
        held: u16,
    },
}

impl FaultRule {
    /// A short stable name for scripts and the differential tests.
    pub fn name(&self) -> &'static str {
        match self {
            FaultRule::StSyncWithoutSequence => "st_sync-without-sequence",
            FaultRule::StSyncWrongAddress { .. } => "st_sync-wrong-address",
            FaultRule::LdSyncWhileHolding { .. } => "ld_sync-while-holding",
            FaultRule::AccessWhileHolding { .. } => "access-while-holding",
            FaultRule::ReadyWhileHolding { .. } => "ready-while-holding",
            FaultRule::FrameEndWhileHolding { .. } => "frame-end-while-holding",
        }
    }
}

impl fmt::Display for FaultRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultRule::StSyncWithoutSequence => {
                write!(f, "st_sync with no open atomic sequence (no ld_sync before it)")
            }
            FaultRule::StSyncWrongAddress { held } => write!(
                f,
                "st_sync to another address than the sequence's ld_sync (which locked 0x{held:03x})"
            ),
            FaultRule::LdSyncWhileHolding { held } => write!(
                f,
                "ld_sync inside an open atomic sequence (nested sequences are forbidden; 0x{held:03x} is locked)"
            ),
            FaultRule::AccessWhileHolding { held } => write!(
                f,
                "ld or st inside an open atomic sequence (0x{held:03x} is locked)"
            ),
            FaultRule::ReadyWhileHolding { held } => write!(
                f,
                "ready inside an open atomic sequence (0x{held:03x} is still locked)"
            ),
            FaultRule::FrameEndWhileHolding { held } => write!(
                f,
                "the frame's code ended inside an open atomic sequence (0x{held:03x} is still locked)"
            ),
        }
    }
}

/// Why an access cannot be served in this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stall {
    /// The bank has an open sequence of `holder` on byte `locked` that this access must wait for.
    Lock {
        /// The locked byte's address.
        locked: u16,
        /// The core (0..15) whose `ld_sync` locked it.
        holder: u8,
    },
    /// Bank-conflict model: the bank already served another row (or a write) this cycle.
    BankConflict,
}

/// The outcome of presenting an access to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// The access can be performed in this cycle.
    Proceed,
    /// The access must wait: the core stalls this cycle and retries.
    Stall(Stall),
    /// The access breaks a rule: the run stops with this fault.
    Fault(FaultRule),
}

/// Why memory did not perform an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not in this cycle: the core stalls and retries.
    Stall(Stall),
    /// Never: the program broke a rule.
    Fault(FaultRule),
}

/// What a performed access gives back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Performed {
    /// The byte loaded, or the byte stored.
    pub value: u8,
    /// The cores asleep on the sequence this access closed, if it was an `st_sync`.
    pub(crate) wakes: Wakes,
}

/// Cores woken by a closed sequence, with the cycle each retries in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wakes {
    mask: u16,
    closer: u8,
    cycle: u64,
}

impl Wakes {
    /// Whether no core was woken.
    pub fn is_empty(&self) -> bool {
        self.mask == 0
    }

    /// The woken cores, as a mask.
    pub fn mask(&self) -> u16 {
        self.mask
    }

    /// The cycle in which the sequence closed.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// The woken core whose retry comes first in the (cycle, core id) order ([`Wakes::iter`]
    /// gives each retry's cycle): the lowest above the closer, else the lowest.
    pub fn first(&self) -> Option<u8> {
        let above = self.mask & !((2u32 << self.closer) - 1) as u16;
        let m = if above != 0 { above } else { self.mask };
        (m != 0).then(|| m.trailing_zeros() as u8)
    }

    /// The cycle of woken core `w`'s retry: a sleeper acts after the closer in the (cycle,
    /// core id) order, so one with a higher id retries in the closing cycle itself and one
    /// with a lower id in the next.
    #[inline]
    pub fn retry(&self, w: u8) -> u64 {
        if w > self.closer {
            self.cycle
        } else {
            self.cycle + 1
        }
    }

    /// Each woken core and the cycle of its retry ([`Wakes::retry`]).
    pub fn iter(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        let mut mask = self.mask;
        std::iter::from_fn(move || {
            if mask == 0 {
                return None;
            }
            let w = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            Some((w, self.retry(w)))
        })
    }
}

/// The per-bank access counters, and the one definition of what counts as an access (the
/// module's "Counting accesses"): [`BankAccesses::count`] is the rule for one access,
/// [`BankAccesses::add`] for a [`BankTally`] of them.
///
/// The memory counts here as it commits ([`SharedMemory::perform`]); compiled code adds
/// its counts in bulk, through [`BankAccesses::add`] or, from inside compiled code, `n`
/// added to the `u64` at [`BankAccesses::as_ptr`]`.add(bank)` (`repr(transparent)`: the
/// counters are 16 `u64`s, bank k's at index k).
#[repr(transparent)]
#[derive(Debug, Default)]
pub(crate) struct BankAccesses([Cell<u64>; BANKS]);

impl BankAccesses {
    /// Count one performed access of `addr`.
    #[inline(always)]
    pub fn count(&self, addr: u16) {
        let count = &self.0[bank_of(addr)];
        count.set(count.get() + 1);
    }

    /// Count the accesses of `tally`.
    pub fn add(&self, tally: &BankTally) {
        for (count, n) in self.0.iter().zip(tally.0) {
            count.set(count.get() + n);
        }
    }

    /// The counts so far, bank by bank.
    pub fn totals(&self) -> [u64; BANKS] {
        std::array::from_fn(|b| self.0[b].get())
    }

    /// The counters for compiled code: bank k's is the `u64` at `.add(k)`. Derived from a
    /// shared reference to the cells, which the memory changes only through shared
    /// references too, so the pointer stays valid, and sees every change, while `self` does.
    pub fn as_ptr(&self) -> *mut u64 {
        self.0.as_ptr().cast::<u64>().cast_mut()
    }
}

/// Accesses counted per bank by the module's one rule ("Counting accesses"), not yet added
/// to the memory's counters: what compiled code that performs whole rows of accesses
/// gathers during an entry, so that it adds to the memory's counters once
/// ([`crate::engine::backend::Port::count_accesses`]).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BankTally([u64; BANKS]);

/// Whether `lanes` lie within 8 neighbouring lanes (a short task's mask, most often), so
/// that a walk over their bits costs less than one over all 16 without a branch (host
/// instructions of the narrow-mask stream, `benches/streams.py`). The span, not the count:
/// without the `popcnt` instruction a count costs more than the walk it would spare.
pub(crate) fn narrow(lanes: u16) -> bool {
    (16 - lanes.leading_zeros()).saturating_sub(lanes.trailing_zeros()) <= 8
}

impl BankTally {
    /// `n` rows in which each lane k of `lanes` reaches bank (k + `rotate`) mod 16 (an
    /// own-bank row when `rotate` is 0): one access per lane and row, in its bank.
    pub fn rotated_rows(&mut self, lanes: u16, rotate: usize, n: u64) {
        // Bank b is reached by lane (b - rotate) mod 16: bit b of the lanes rotated (this
        // runs at every exit of lockstep code with rows).
        let reached = lanes.rotate_left((rotate % BANKS) as u32);
        if reached == u16::MAX {
            // Every bank, the full-mask task's case: no multiply.
            for count in &mut self.0 {
                *count += n;
            }
            return;
        }
        if narrow(reached) {
            // A short task's few lanes, one at a time.
            let mut m = reached;
            while m != 0 {
                self.0[m.trailing_zeros() as usize] += n;
                m &= m - 1;
            }
            return;
        }
        // Over all 16 banks without a branch, as vector instructions.
        for (b, count) in self.0.iter_mut().enumerate() {
            *count += n * u64::from(reached >> b & 1);
        }
    }

    /// `n` rows in which every lane of `lanes` reaches bank `bank` (a broadcast): one
    /// access per lane and row, all in `bank`.
    pub fn broadcast_rows(&mut self, lanes: u16, bank: usize, n: u64) {
        self.0[bank % BANKS] += n * u64::from(lanes.count_ones());
    }

    /// The accesses counted, over all banks.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// Counters kept by the memory as accesses are served.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Accesses performed per bank (stalled attempts are not counted, their retry is).
    pub accesses_per_bank: [u64; BANKS],
    /// `ld_sync`s performed per bank: atomic sequences opened.
    pub lock_acquisitions_per_bank: [u64; BANKS],
    /// Sum over sequences of (st_sync cycle - ld_sync cycle), per bank.
    pub lock_hold_cycles_per_bank: [u64; BANKS],
}

/// What compiled code reads and writes in place: the bytes, the access counters and the
/// lock book.
pub(crate) struct Cells {
    /// The 4096 bytes, at [`cell_index`] of their address.
    pub(crate) bytes: [Cell<u8>; MEMORY_BYTES],
    pub(crate) accesses: BankAccesses,
    pub(crate) locks: LockCells,
}

/// A [`LockCells::holder`] entry: no sequence is open on the bank.
pub(crate) const NO_HOLDER: u8 = 0xFF;
/// A [`LockCells::held`] entry: the core holds no byte (addresses are 12 bits).
pub(crate) const NOT_HELD: u16 = 0xFFFF;

/// The lock book: each bank's open sequence, each core's locked byte, the gate word, the
/// sleepers and the lock counters. In cells, like the bytes, because compiled cohort code
/// opens and closes sequences in place (below the port's bound, where nothing else can,
/// see [`crate::backend::Port::sync_accesses_until`]) through raw pointers to these arrays
/// ([`crate::backend::CellViews`]), exactly as [`SharedMemory::perform`] would.
#[derive(Debug)]
pub(crate) struct LockCells {
    /// [`SharedMemory::gate`].
    pub(crate) gate: Cell<u32>,
    /// Each bank's open sequence: its holder ([`NO_HOLDER`] where none), the locked
    /// address and the cycle of its `ld_sync`.
    pub(crate) holder: [Cell<u8>; BANKS],
    pub(crate) locked: [Cell<u16>; BANKS],
    pub(crate) since: [Cell<u64>; BANKS],
    /// The address each core holds locked ([`NOT_HELD`] where none).
    pub(crate) held: [Cell<u16>; CORES],
    /// Cores asleep until the bank's sequence closes, as a mask per bank.
    pub(crate) waiters: [Cell<u16>; BANKS],
    /// [`MemoryStats::lock_acquisitions_per_bank`] and
    /// [`MemoryStats::lock_hold_cycles_per_bank`].
    pub(crate) acquisitions: [Cell<u64>; BANKS],
    pub(crate) hold_cycles: [Cell<u64>; BANKS],
}

impl LockCells {
    fn new(gate: u32) -> LockCells {
        LockCells {
            gate: Cell::new(gate),
            holder: std::array::from_fn(|_| Cell::new(NO_HOLDER)),
            locked: Default::default(),
            since: Default::default(),
            held: std::array::from_fn(|_| Cell::new(NOT_HELD)),
            waiters: Default::default(),
            acquisitions: Default::default(),
            hold_cycles: Default::default(),
        }
    }

    /// A deep copy: it shares no cell with `self`.
    fn copy(&self) -> LockCells {
        fn each<T: Copy, const N: usize>(a: &[Cell<T>; N]) -> [Cell<T>; N] {
            std::array::from_fn(|i| Cell::new(a[i].get()))
        }
        LockCells {
            gate: Cell::new(self.gate.get()),
            holder: each(&self.holder),
            locked: each(&self.locked),
            since: each(&self.since),
            held: each(&self.held),
            waiters: each(&self.waiters),
            acquisitions: each(&self.acquisitions),
            hold_cycles: each(&self.hold_cycles),
        }
    }

    /// The open sequence of `bank`: (holder, locked address, cycle of its `ld_sync`).
    #[inline(always)]
    fn open(&self, bank: usize) -> Option<(u8, u16, u64)> {
        let holder = self.holder[bank].get();
        if holder == NO_HOLDER {
            return None;
        }
        Some((holder, self.locked[bank].get(), self.since[bank].get()))
    }

    /// The address core `core` holds locked.
    #[inline(always)]
    fn held(&self, core: u8) -> Option<u16> {
        let held = self.held[usize::from(core & 0xF)].get();
        if held == NOT_HELD {
            return None;
        }
        Some(held)
    }
}

/// Shared memory with its lock and bank state.
pub struct SharedMemory {
    /// The bytes, access counters and lock book (sequences, held bytes, sleepers, lock
    /// counters and the gate word, see [`SharedMemory::gate`]).
    cells: Rc<Cells>,
    bank_conflicts: bool,
    /// Bank-conflict model: what each bank served last: (cycle, row, read-only).
    served: [(u64, u8, bool); BANKS],
    /// Closed sequences (core, address, ld_sync cycle, st_sync cycle), kept for an observer.
    pub(crate) closed: Option<Vec<(u8, u16, u64, u64)>>,
    /// A debugger's watched bytes, and the earliest write of one noted (see
    /// [`crate::Stops`]).
    watch: Option<Box<WatchNote>>,
}

/// The bytes a debugger watches and the earliest write of one that counts.
struct WatchNote {
    /// Bit `a` for a watched address `a`.
    addrs: [u64; MEMORY_BYTES / 64],
    /// Writes count from this cycle on, and in `also`.
    from: u64,
    also: u64,
    first: u64,
}

impl SharedMemory {
    /// Memory initialised from an image of at most 4096 bytes, zero past its end.
    pub fn new(image: &[u8], bank_conflicts: bool) -> SharedMemory {
        let cells = Rc::new(Cells {
            bytes: std::array::from_fn(|_| Cell::new(0)),
            accesses: Default::default(),
            locks: LockCells::new(if bank_conflicts { ALL_BANKS } else { 0 }),
        });
        // Only the image's nonzero bytes need placing: most runs start from zeros.
        for (addr, &byte) in image.iter().take(MEMORY_BYTES).enumerate() {
            if byte != 0 {
                cells.bytes[cell_index(addr as u16)].set(byte);
            }
        }
        SharedMemory {
            cells,
            bank_conflicts,
            served: [(u64::MAX, 0, false); BANKS],
            closed: None,
            watch: None,
        }
    }

    /// Watch the bytes of `addrs` for a debugger: note the earliest write of one in a cycle
    /// at or after `from`, or in `also` ([`SharedMemory::first_watched_write`]).
    pub(crate) fn watch(&mut self, addrs: &[u16], from: u64, also: Option<u64>) {
        let mut bits = [0u64; MEMORY_BYTES / 64];
        for &a in addrs {
            let a = usize::from(a) % MEMORY_BYTES;
            bits[a / 64] |= 1 << (a % 64);
        }
        self.watch = Some(Box::new(WatchNote {
            addrs: bits,
            from,
            also: also.unwrap_or(u64::MAX),
            first: u64::MAX,
        }));
    }

    /// The bytes its cells take (held apart from it, behind an `Rc`).
    pub(crate) fn cells_bytes(&self) -> usize {
        std::mem::size_of::<Cells>()
    }

    /// No byte watched any more (see `SharedMemory::watch`).
    pub(crate) fn unwatch(&mut self) {
        self.watch = None;
    }

    /// A deep copy of the memory's state (bytes, counters, locks, waiters, the
    /// bank-conflict model), for a snapshot of a run: it shares no cell with `self`. The
    /// copy watches no byte and keeps no closed sequences; its run sets both up again.
    pub(crate) fn copy(&self) -> SharedMemory {
        let cells = Rc::new(Cells {
            bytes: std::array::from_fn(|i| Cell::new(self.cells.bytes[i].get())),
            accesses: BankAccesses(std::array::from_fn(|b| {
                Cell::new(self.cells.accesses.0[b].get())
            })),
            locks: self.cells.locks.copy(),
        });
        SharedMemory {
            cells,
            bank_conflicts: self.bank_conflicts,
            served: self.served,
            closed: None,
            watch: None,
        }
    }

    /// Whether a debugger watches bytes (see `SharedMemory::watch`).
    pub fn watching(&self) -> bool {
        self.watch.is_some()
    }

    /// The earliest cycle a watched byte was written in (`u64::MAX`: none yet).
    pub(crate) fn first_watched_write(&self) -> u64 {
        self.watch.as_ref().map_or(u64::MAX, |w| w.first)
    }

    /// A write of `addr` (12 bits) in `cycle`, for the watch.
    #[inline]
    fn note_write(&mut self, cycle: u64, addr: u16) {
        if let Some(w) = &mut self.watch {
            let a = usize::from(addr);
            if w.addrs[a / 64] >> (a % 64) & 1 != 0 && (cycle >= w.from || cycle == w.also) {
                w.first = w.first.min(cycle);
            }
        }
    }

    /// A copy of the 4096 bytes.
    pub fn bytes(&self) -> Box<[u8; MEMORY_BYTES]> {
        // Row by row through the cells (row-major), each row's 16 bytes to their banks.
        let mut out = Box::new([0u8; MEMORY_BYTES]);
        for (row, cells) in self.cells.bytes.chunks_exact(BANKS).enumerate() {
            for (bank, cell) in cells.iter().enumerate() {
                out[bank << 8 | row] = cell.get();
            }
        }
        out
    }

    /// Write `byte` at `addr` (taken modulo 4096) from outside the machine, between cycles
    /// (a testbench's poke): not an access, so it counts nowhere, wakes no one and ignores
    /// locks.
    pub fn poke(&mut self, addr: u16, byte: u8) {
        self.cells.bytes[cell_index(addr)].set(byte);
    }

    /// The byte at `addr` (taken modulo 4096).
    pub fn byte(&self, addr: u16) -> u8 {
        self.cells.bytes[cell_index(addr)].get()
    }

    /// The counters so far: accesses, lock acquisitions and hold cycles per bank.
    pub fn stats(&self) -> MemoryStats {
        let locks = &self.cells.locks;
        MemoryStats {
            accesses_per_bank: self.cells.accesses.totals(),
            lock_acquisitions_per_bank: std::array::from_fn(|b| locks.acquisitions[b].get()),
            lock_hold_cycles_per_bank: std::array::from_fn(|b| locks.hold_cycles[b].get()),
        }
    }

    /// The address a core holds locked, if any.
    pub fn held(&self, core: u8) -> Option<u16> {
        self.cells.locks.held(core)
    }

    /// The cores that hold a lock, bit k for core k (the gate's holding bits).
    pub fn holders(&self) -> u16 {
        (self.gate() >> 16) as u16
    }

    /// The open sequence of a bank: (holder, locked address).
    pub fn bank_lock(&self, bank: usize) -> Option<(u8, u16)> {
        self.cells.locks.open(bank).map(|(h, a, _)| (h, a))
    }

    /// The cycle in which the open sequence of a bank began (its `ld_sync`).
    pub fn opened_in(&self, bank: usize) -> Option<u64> {
        self.cells.locks.open(bank).map(|(_, _, since)| since)
    }

    /// The gate word: bit `b` for a bank whose accesses need arbitration (an open sequence;
    /// all sixteen under the bank-conflict model, which arbitrates every access), bit
    /// `16 + c` for a core holding a lock (its ld/st would fault). A plain access that
    /// finds neither its bank's bit nor its core's bit set proceeds unless it is out of
    /// turn: compiled code performs those itself (see [`crate::backend::DirectAccess`]).
    #[inline(always)]
    pub fn gate(&self) -> u32 {
        self.cells.locks.gate.get()
    }

    /// The cells compiled code reads and writes in place.
    pub(crate) fn cells(&self) -> &Rc<Cells> {
        &self.cells
    }

    /// Decide, without changing anything, what core `id`'s access in `cycle` would do.
    /// Order of checks: the core's own faults, then locks, then bank conflicts. Inlined
    /// with [`SharedMemory::commit`] into each caller of `perform`: the compiler otherwise
    /// outlines both once a port has two callers of it, a contended counter 20% slower.
    ///
    /// The gate word answers first (`gate_follows_sequences`): a core without its holding
    /// bit holds no lock, so only a `st_sync` of it can fault, and an access other than
    /// `st_sync` whose bank bit is clear too (never so under the bank-conflict model)
    /// proceeds; a `st_sync` of the byte its core holds proceeds where banks are not
    /// arbitrated. That took a twentieth off a histogram's host instructions.
    #[inline(always)]
    pub(crate) fn check(&self, id: u8, cycle: u64, op: MemOp, addr: u16) -> Attempt {
        let gate = self.gate();
        if op == MemOp::StSync {
            match self.held(id) {
                None => return Attempt::Fault(FaultRule::StSyncWithoutSequence),
                Some(held) if held != addr => {
                    return Attempt::Fault(FaultRule::StSyncWrongAddress { held })
                }
                Some(_) if !self.bank_conflicts => return Attempt::Proceed,
                Some(_) => {}
            }
        } else if gate & holding_bit(id) != 0 {
            let held = self.held(id).unwrap_or_default();
            return Attempt::Fault(if op == MemOp::LdSync {
                FaultRule::LdSyncWhileHolding { held }
            } else {
                FaultRule::AccessWhileHolding { held }
            });
        } else if gate & 1 << bank_of(addr) == 0 {
            return Attempt::Proceed;
        }
        if let Some(stall) = self.lock_stall(id, op, addr) {
            return Attempt::Stall(stall);
        }
        if self.bank_conflicts {
            let (c, row, read_only) = self.served[bank_of(addr)];
            if c == cycle && !(read_only && op.is_read() && row == addr as u8) {
                return Attempt::Stall(Stall::BankConflict);
            }
        }
        Attempt::Proceed
    }

    /// The lock rule of [`SharedMemory::check`] alone: the stall core `id`'s access (`addr`
    /// of 12 bits) meets where another core holds a lock in its bank (plain accesses wait
    /// only for the locked byte, a `st_sync` never waits). For a core that holds no lock and
    /// makes no `st_sync`, which can fault on nothing, it is `check`'s answer up to bank
    /// conflicts: a herd of sleepers asks only this.
    #[inline(always)]
    pub(crate) fn lock_stall(&self, id: u8, op: MemOp, addr: u16) -> Option<Stall> {
        let bank = bank_of(addr);
        let locks = &self.cells.locks;
        let holder = locks.holder[bank].get();
        if holder == NO_HOLDER {
            return None;
        }
        let locked = locks.locked[bank].get();
        let blocked = match op {
            MemOp::Ld | MemOp::St => locked == addr,
            MemOp::LdSync => true,
            MemOp::StSync => false,
        };
        (blocked && holder != id).then_some(Stall::Lock { locked, holder })
    }

    /// Present core `id`'s access in `cycle` to memory: the one path by which an access
    /// commits. It either happens (the byte loaded or stored, and the cores its `st_sync`
    /// woke) or is refused with the stall or fault `check` finds, changing
    /// nothing.
    #[inline(always)]
    pub fn perform(
        &mut self,
        id: u8,
        cycle: u64,
        op: MemOp,
        addr: u16,
        value: u8,
    ) -> Result<Performed, Refusal> {
        let addr = addr & 0xFFF;
        match self.check(id, cycle, op, addr) {
            Attempt::Proceed => Ok(self.commit(id, cycle, op, addr, value)),
            Attempt::Stall(stall) => Err(Refusal::Stall(stall)),
            Attempt::Fault(rule) => Err(Refusal::Fault(rule)),
        }
    }

    /// Whether every plain `ld`/`st` would proceed now, whoever makes it: no bank has an
    /// open sequence and no core holds a lock (the gate is clear), so `check`
    /// finds no fault and no lock stall, and the bank-conflict model is off.
    #[inline]
    pub fn plain_accesses_proceed(&self) -> bool {
        self.gate() == 0 && !self.bank_conflicts
    }

    /// [`SharedMemory::perform`] for a plain `ld`/`st` while
    /// [`SharedMemory::plain_accesses_proceed`]: the same commit, without asking `check`
    /// what it would answer. Returns the byte loaded (or stored).
    #[inline]
    pub fn perform_plain(&mut self, id: u8, cycle: u64, op: MemOp, addr: u16, value: u8) -> u8 {
        let addr = addr & 0xFFF;
        debug_assert!(!op.is_sync() && self.plain_accesses_proceed());
        debug_assert!(matches!(self.check(id, cycle, op, addr), Attempt::Proceed));
        self.commit_plain(cycle, op, addr, value)
    }

    /// What every access commits whatever its kind: one more access to its bank
    /// ([`BankAccesses::count`]), and under the bank-conflict model, the bank's first access
    /// of the cycle.
    #[inline(always)]
    fn count_access(&mut self, cycle: u64, op: MemOp, addr: u16) {
        self.cells.accesses.count(addr);
        if self.bank_conflicts {
            let bank = bank_of(addr);
            let s = &mut self.served[bank];
            if s.0 != cycle {
                *s = (cycle, addr as u8, op.is_read());
            }
        }
    }

    /// Commit a plain `ld` or `st` (`op`) of `addr` (12 bits): the byte loaded, or `value`
    /// stored.
    #[inline(always)]
    fn commit_plain(&mut self, cycle: u64, op: MemOp, addr: u16, value: u8) -> u8 {
        self.count_access(cycle, op, addr);
        if op == MemOp::St {
            self.note_write(cycle, addr);
            self.cells.bytes[cell_index(addr)].set(value);
            value
        } else {
            self.cells.bytes[cell_index(addr)].get()
        }
    }

    /// Carry out an access `check` allowed.
    #[inline(always)]
    fn commit(&mut self, id: u8, cycle: u64, op: MemOp, addr: u16, value: u8) -> Performed {
        if !op.is_sync() {
            return Performed {
                value: self.commit_plain(cycle, op, addr, value),
                wakes: Wakes::default(),
            };
        }
        self.count_access(cycle, op, addr);
        let bank = bank_of(addr);
        let cell = &self.cells.bytes[cell_index(addr)];
        let locks = &self.cells.locks;
        let (core, gate) = (usize::from(id & 0xF), locks.gate.get());
        if op == MemOp::LdSync {
            locks.holder[bank].set(id & 0xF);
            locks.locked[bank].set(addr);
            locks.since[bank].set(cycle);
            locks.held[core].set(addr);
            locks.gate.set(gate | 1 << bank | holding_bit(id));
            let n = &locks.acquisitions[bank];
            n.set(n.get() + 1);
            return Performed {
                value: cell.get(),
                wakes: Wakes::default(),
            };
        }
        // st_sync: write, close the sequence and wake its sleepers.
        cell.set(value);
        if locks.holder[bank].get() != NO_HOLDER {
            let since = locks.since[bank].get();
            let n = &locks.hold_cycles[bank];
            n.set(n.get() + (cycle - since));
            locks.holder[bank].set(NO_HOLDER);
            if let Some(log) = &mut self.closed {
                log.push((id, addr, since, cycle));
            }
        }
        locks.held[core].set(NOT_HELD);
        let closed = if self.bank_conflicts { 0 } else { 1 << bank };
        locks.gate.set(gate & !(holding_bit(id) | closed));
        let wakes = Wakes {
            mask: {
                let waiters = locks.waiters[bank].get();
                locks.waiters[bank].set(0);
                waiters
            },
            closer: id,
            cycle,
        };
        self.note_write(cycle, addr);
        Performed { value, wakes }
    }

    /// Whether the bank-conflict model is on.
    pub fn bank_conflicts(&self) -> bool {
        self.bank_conflicts
    }

    /// Put a core to sleep until the sequence open on `bank` closes.
    pub fn sleep_on(&mut self, bank: usize, core: u8) {
        self.sleep_all_on(bank, 1 << core);
    }

    /// Put the cores of `cores` (a mask) to sleep until the sequence open on `bank` closes.
    pub fn sleep_all_on(&mut self, bank: usize, cores: u16) {
        let waiters = &self.cells.locks.waiters[bank];
        waiters.set(waiters.get() | cores);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gate word tells exactly which banks have an open sequence and which cores hold
    /// a lock, through opening and closing sequences in several banks.
    fn assert_gate_matches(m: &SharedMemory) {
        for bank in 0..BANKS {
            let open = m.bank_lock(bank).is_some();
            assert_eq!(m.gate() & (1 << bank) != 0, open, "bank {bank}");
        }
        for core in 0..16u8 {
            assert_eq!(
                m.gate() & holding_bit(core) != 0,
                m.held(core).is_some(),
                "core {core}"
            );
            assert_eq!(m.holders() & (1 << core) != 0, m.held(core).is_some());
        }
    }

    #[test]
    fn cells_are_row_major() {
        // Hand-worked: bank 0x3, row 0x21 is cell 0x21 * 16 + 3; every cell is used once.
        assert_eq!(cell_index(0x321), 0x213);
        assert_eq!(cell_index(0xF00), 0x00F);
        assert_eq!(cell_index(0x0FF), 0xFF0);
        let mut seen = [false; MEMORY_BYTES];
        for addr in 0..MEMORY_BYTES as u16 {
            assert!(!std::mem::replace(&mut seen[cell_index(addr)], true));
        }
        // An image goes in and comes out by address.
        let image: Vec<u8> = (0..MEMORY_BYTES).map(|i| (i * 7 + i / 256) as u8).collect();
        let m = SharedMemory::new(&image, false);
        assert_eq!(m.bytes().to_vec(), image);
        assert_eq!(m.byte(0x321), image[0x321]);
    }

    #[test]
    fn gate_follows_sequences() {
        let mut m = SharedMemory::new(&[], false);
        assert_eq!(m.gate(), 0);
        // (core, op, addr) in order; each is allowed by `check`.
        let steps = [
            (3, MemOp::LdSync, 0x512),
            (7, MemOp::LdSync, 0x0ff),
            (1, MemOp::Ld, 0x513),
            (3, MemOp::StSync, 0x512),
            (9, MemOp::LdSync, 0x500),
            (7, MemOp::StSync, 0x0ff),
            (9, MemOp::StSync, 0x500),
        ];
        for (cycle, (core, op, addr)) in steps.into_iter().enumerate() {
            assert!(m.perform(core, cycle as u64, op, addr, 0x42).is_ok());
            assert_gate_matches(&m);
        }
        assert_eq!(m.gate(), 0);
    }

    /// `check` as the rules read (docs/semantics.md section 4), from what the memory shows
    /// through its accessors: the core's own faults, then a lock another core holds on the
    /// bank (plain accesses wait only for the locked byte, `st_sync` never waits). With the
    /// bank-conflict model off, nothing else stalls.
    fn check_by_rules(m: &SharedMemory, id: u8, op: MemOp, addr: u16) -> Attempt {
        match (op, m.held(id)) {
            (MemOp::Ld | MemOp::St, Some(held)) => {
                return Attempt::Fault(FaultRule::AccessWhileHolding { held })
            }
            (MemOp::LdSync, Some(held)) => {
                return Attempt::Fault(FaultRule::LdSyncWhileHolding { held })
            }
            (MemOp::StSync, None) => return Attempt::Fault(FaultRule::StSyncWithoutSequence),
            (MemOp::StSync, Some(held)) if held != addr => {
                return Attempt::Fault(FaultRule::StSyncWrongAddress { held })
            }
            _ => {}
        }
        match m.bank_lock(bank_of(addr)) {
            Some((holder, locked)) if holder != id => match op {
                MemOp::LdSync => Attempt::Stall(Stall::Lock { locked, holder }),
                MemOp::Ld | MemOp::St if locked == addr => {
                    Attempt::Stall(Stall::Lock { locked, holder })
                }
                _ => Attempt::Proceed,
            },
            _ => Attempt::Proceed,
        }
    }

    /// The gate word's short answers in `check` agree with the rules in every state a
    /// random walk of sequences reaches: every core, op and a spread of addresses (the
    /// bytes locked, their banks' other bytes, other banks) at each step.
    #[test]
    fn check_agrees_with_the_rules_in_every_state() {
        let mut m = SharedMemory::new(&[], false);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut draw = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let ops = [MemOp::Ld, MemOp::St, MemOp::LdSync, MemOp::StSync];
        // Few banks and bytes, so that sequences meet.
        let addrs = [0x000u16, 0x001, 0x100, 0x101, 0x203, 0xf0f];
        for cycle in 0..4000u64 {
            for id in 0..16u8 {
                for op in ops {
                    for addr in addrs {
                        assert_eq!(
                            m.check(id, cycle, op, addr),
                            check_by_rules(&m, id, op, addr),
                            "core {id} {op:?} {addr:#05x} in cycle {cycle}"
                        );
                    }
                }
            }
            // One access that proceeds moves the state on (most draws fault or stall).
            let (id, op) = (draw(16) as u8, ops[draw(4) as usize]);
            let addr = match (op, m.held(id)) {
                (MemOp::StSync, Some(held)) if draw(4) != 0 => held,
                _ => addrs[draw(addrs.len() as u64) as usize],
            };
            let _ = m.perform(id, cycle, op, addr, cycle as u8);
        }
        // The walk opened and closed sequences.
        assert!(m.stats().lock_acquisitions_per_bank.iter().sum::<u64>() > 100);
    }

    #[test]
    fn a_clear_gate_means_a_plain_access_proceeds() {
        let mut m = SharedMemory::new(&[], false);
        m.perform(2, 0, MemOp::LdSync, 0x234, 0).unwrap();
        for core in 0..16u8 {
            for addr in [0x234u16, 0x235, 0x100, 0xfff] {
                for op in [MemOp::Ld, MemOp::St] {
                    let bit = 1 << bank_of(addr) | holding_bit(core);
                    if m.gate() & bit == 0 {
                        assert_eq!(m.check(core, 1, op, addr), Attempt::Proceed);
                    }
                }
            }
        }
        // Core 2 holds a lock: its own plain accesses anywhere must take the slow way.
        assert_ne!(m.gate() & holding_bit(2), 0);
    }

    #[test]
    fn bank_conflict_model_closes_every_bank() {
        let mut m = SharedMemory::new(&[], true);
        assert_eq!(m.gate() & ALL_BANKS, ALL_BANKS);
        m.perform(0, 0, MemOp::LdSync, 0x010, 0).unwrap();
        m.perform(0, 1, MemOp::StSync, 0x010, 0).unwrap();
        assert_eq!(m.gate(), ALL_BANKS);
    }

    #[test]
    fn a_rotated_row_counts_each_lane_in_the_bank_it_reaches() {
        let mut t = BankTally::default();
        // Lanes 0, 1 and 15, rotated by 3: banks 3, 4 and 2, two rows each.
        t.rotated_rows(0b1000_0000_0000_0011, 3, 2);
        // Every lane in its own bank, one row; then lane 14 rotated past the end (bank 1).
        t.rotated_rows(0xFFFF, 0, 1);
        t.rotated_rows(1 << 14, 19, 5);
        // Lanes 0-3 and 8-11 rotated by 4, spread over 12 lanes: banks 4-7 and 12-15.
        t.rotated_rows(0x0F0F, 4, 3);
        let mut want = [1u64; BANKS];
        want[3] += 2;
        want[4] += 2;
        want[2] += 2;
        want[1] += 5;
        for b in [4, 5, 6, 7, 12, 13, 14, 15] {
            want[b] += 3;
        }
        assert_eq!(t, BankTally(want));
        assert_eq!(t.total(), 16 + 6 + 5 + 24);
    }

    #[test]
    fn lanes_are_narrow_within_eight_neighbours() {
        for (lanes, narrow_) in [
            (0, true),
            (1, true),
            (0x00FF, true),
            (0x0FF0, true),
            (0x8001, false),
            (0x01FF, false),
            (0x1F00, true),
            (0x8100, true),
            (0x8080, false),
            (0xFFFF, false),
        ] {
            assert_eq!(narrow(lanes), narrow_, "{lanes:#06x}");
        }
    }
}
