//! The typed boundary between Rust and compiled code: the `repr(C)` state each form of code
//! reads and writes, the context its callbacks get back, the entry and callback function
//! types, and the exits ([`exits`]). Cranelift signatures are derived from the function
//! types ([`signature`]), never written beside them, so the code a compiler emits and the
//! function a runtime calls cannot disagree on a parameter; the calling convention of each
//! (entries the host's C one, callbacks [`callback_abi!`]'s) is decided here too. A leaf: compilers
//! (`compile`, `lanes_compile`, `cohort_compile`, `slots_compile`) and runtimes (`runtime`,
//! `lanes`, `cohort`) both depend on it, and it on neither.

pub(crate) mod exits;

use cranelift_codegen::ir::{types, AbiParam, Signature, Type};
use cranelift_codegen::isa::CallConv;
pub(crate) use exits::{CohortAccess, CohortExit, LaneExit, ScalarExit, SlotCodeExit};
use gpu16_machine::engine::backend::{CellViews, CoreState, DirectAccess, Port};
use gpu16_machine::engine::memory::BankTally;
use gpu16_machine::engine::slot_run::SlotState;
use std::any::Any;

/// Declare a boundary function type once: the `extern` type alias and its [`AbiFn`], whose
/// Cranelift types come from the same parameter list. An entry (`fn`, `unsafe fn`: Rust
/// calls compiled code) is `extern "C"`; a callback (`callback fn`: compiled code calls
/// Rust) is [`callback_abi!`]'s.
macro_rules! boundary_fn {
    ($(#[$meta:meta])* $name:ident = unsafe fn($($p:ty),*) $(-> $r:ty)?;) => {
        $(#[$meta])*
        pub(crate) type $name = unsafe extern "C" fn($($p),*) $(-> $r)?;
        boundary_fn!(@impl $name false ($($p),*) $($r)?);
    };
    ($(#[$meta:meta])* $name:ident = fn($($p:ty),*) $(-> $r:ty)?;) => {
        $(#[$meta])*
        pub(crate) type $name = extern "C" fn($($p),*) $(-> $r)?;
        boundary_fn!(@impl $name false ($($p),*) $($r)?);
    };
    ($(#[$meta:meta])* $name:ident = callback fn($($p:ty),*) $(-> $r:ty)?;) => {
        $(#[$meta])*
        #[cfg(target_arch = "x86_64")]
        pub(crate) type $name = extern "win64" fn($($p),*) $(-> $r)?;
        $(#[$meta])*
        #[cfg(not(target_arch = "x86_64"))]
        pub(crate) type $name = extern "C" fn($($p),*) $(-> $r)?;
        boundary_fn!(@impl $name true ($($p),*) $($r)?);
    };
    (@impl $name:ident $callback:literal ($($p:ty),*) $($r:ty)?) => {
        impl AbiFn for $name {
            const CALLBACK: bool = $callback;
            fn params(ptr: Type) -> Vec<Type> {
                vec![$(<$p as AbiType>::ty(ptr)),*]
            }
            fn returns(ptr: Type) -> Option<Type> {
                let _ = ptr;
                None $(.or(Some(<$r as AbiType>::ty(ptr))))?
            }
        }
    };
}

/// Define a callback (a Rust function compiled code calls) in the ABI of its
/// [`boundary_fn`] type. On x86-64 that is Windows x64's (`extern "win64"`), whatever the
/// host: it keeps `xmm6`-`xmm15` across the call (System V keeps no vector register), so the
/// lockstep and cohort loops, which call back only off their fast paths, keep their
/// register vectors in registers instead of spilling each around every call site. Elsewhere
/// the host's C ABI.
macro_rules! callback_abi {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $t:ty),* $(,)?) $(-> $r:ty)? $body:block) => {
        $(#[$meta])*
        #[cfg(target_arch = "x86_64")]
        $vis extern "win64" fn $name($($arg: $t),*) $(-> $r)? $body
        $(#[$meta])*
        #[cfg(not(target_arch = "x86_64"))]
        $vis extern "C" fn $name($($arg: $t),*) $(-> $r)? $body
    };
}
pub(crate) use callback_abi;

// ---- Per-core (scalar) code: `compile.rs`, run by `runtime::enter`.

boundary_fn! {
    /// `fn(core, ctx, limit, direct) -> exit code`, the signature `compile` emits.
    EntryFn = unsafe fn(*mut CoreState, *mut CallCtx<'_, '_>, u64, *const DirectAccess) -> u32;
}

/// What the memory callback needs; lives on the Rust stack for one `enter`.
pub(crate) struct CallCtx<'p, 'm> {
    /// Raw, because compiled code also reaches into the port through the `DirectAccess`
    /// pointers derived from this same pointer; the two never run at the same time.
    pub(crate) port: *mut Port<'m>,
    pub(crate) _port: std::marker::PhantomData<&'p mut Port<'m>>,
    pub(crate) id: u8,
    /// A panic caught in the callback, re-raised once compiled code has returned.
    pub(crate) panic: Option<Box<dyn Any + Send>>,
}

/// The memory callback's answer: the byte loaded (or stored), or park. One `u32` across
/// the boundary: a byte below 0x100, a park at or above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct AccessReply(u32);

impl AccessReply {
    /// The port says park: the core stops before the instruction.
    pub(crate) const PARK: AccessReply = AccessReply(0x100);

    /// The access happened; `byte` is the byte loaded or stored.
    pub(crate) fn byte(byte: u8) -> AccessReply {
        AccessReply(u32::from(byte))
    }

    /// The lowest raw answer that is not a byte: compiled code parks at or above it.
    pub(crate) fn first_park() -> i64 {
        i64::from(Self::PARK.0)
    }
}

impl AbiType for AccessReply {
    fn ty(_: Type) -> Type {
        types::I32
    }
}

boundary_fn! {
    /// `mem_access(ctx, cycle, op, row, bank, value) -> AccessReply`: the scalar code's
    /// memory callback (`runtime::mem_access`).
    MemAccessFn = callback fn(*mut CallCtx<'_, '_>, u64, u32, u32, u32, u32) -> AccessReply;
}

// ---- Lockstep code: `lanes_compile.rs`, run by `lanes::enter`.

/// The state compiled lockstep code reads and writes: the group's registers as vectors, the
/// operands of a memory instruction's accesses, and where the code stopped.
#[repr(C, align(16))]
pub(crate) struct LaneFile {
    /// `regs[r][k]` is register r of core k.
    pub(crate) regs: [[u8; 16]; 16],
    /// 0xFF in the group's lanes.
    pub(crate) lanes: [u8; 16],
    /// A memory instruction's low address byte, bank and stored byte, lane by lane.
    pub(crate) row: [u8; 16],
    pub(crate) bank: [u8; 16],
    pub(crate) value: [u8; 16],
    /// The bytes the callback loaded, and 0xFF in the lanes it performed.
    pub(crate) loaded: [u8; 16],
    pub(crate) performed: [u8; 16],
    /// The group's lowest lane in every byte: a `swizzle` by it broadcasts that lane.
    pub(crate) lead: [u8; 16],
    /// The cycle of the instruction at `ip` (or after the last one, on an end).
    pub(crate) cycle: u64,
    /// Lanes that left the group by `ready` while it ran on (`lane_leave`): each one's
    /// cycle after its `ready`, and the `ready`'s IP.
    pub(crate) left_cycle: [u64; 16],
    pub(crate) left_ip: [u8; 16],
    /// `left_regs[k][r]`: register r of lane k as it left (compiled code goes on writing
    /// every lane, so the lane's column of `regs` no longer holds them).
    pub(crate) left_regs: [[u8; 16]; 16],
    pub(crate) left: u32,
    /// The group as a bit mask.
    pub(crate) mask: u32,
    /// On `LaneExit::Parked` and `LaneExit::Split`: the lanes that performed, or took the branch.
    pub(crate) done: u32,
    pub(crate) ip: u32,
    /// The memory's cells and access counters (see `Port::cell_views`), for the accesses
    /// compiled code performs itself.
    pub(crate) cells: CellViews,
    /// Own-bank rows: below cycle `rows_until`, a plain access in which every lane k of
    /// the group reaches bank k, all in one row, is one vector load or store of that row,
    /// performed by compiled code itself. `rows_done` counts such accesses not yet added
    /// to the banks' counters (`LaneFile::count_rows`).
    pub(crate) rows_until: u64,
    pub(crate) rows_done: u64,
    /// Shared rows (see `Port::shared_rows_until`): below cycle `shared_until`, a plain
    /// load in which every lane reads one row, each lane k from bank k + d (a rotation) or
    /// all from one bank b (a broadcast), is one vector load of that row and a shuffle,
    /// performed by compiled code itself. It counts such loads in `shared[d]` or
    /// `shared[16 + b]` (null for a frame without the path, whose code never counts), and
    /// marks the entries it touched in `shared_used`, until `LaneFile::count_rows`.
    pub(crate) shared_until: u64,
    pub(crate) shared: *mut [u64; 32],
    pub(crate) shared_used: u32,
    /// Row accesses (own-bank or shared) of each bank, kept here until the entry ends.
    pub(crate) rows_per_bank: BankTally,
    /// Until this cycle (exclusive), in a frame without atomic sequences, any other plain
    /// access is performed by compiled code itself, lane by lane in ascending core id, at
    /// `cells`, each counted in its bank's counter there ([`Port::plain_accesses_until`];
    /// 0 for a frame whose code has no such path, which always calls `lane_access`).
    ///
    /// [`Port::plain_accesses_until`]: gpu16_machine::engine::backend::Port::plain_accesses_until
    pub(crate) plain_until: u64,
}

boundary_fn! {
    /// `fn(file, ctx, limit) -> exit code`, the signature `lanes_compile` emits.
    LaneEntryFn = unsafe fn(*mut LaneFile, *mut LaneCtx<'_, '_>, u64) -> u32;
}

/// What the memory callback needs; lives on the Rust stack for one entry.
pub(crate) struct LaneCtx<'p, 'm> {
    pub(crate) port: *mut Port<'m>,
    pub(crate) _port: std::marker::PhantomData<&'p mut Port<'m>>,
    /// A panic caught in the callback, re-raised once compiled code has returned.
    pub(crate) panic: Option<Box<dyn Any + Send>>,
}

boundary_fn! {
    /// `lane_access(ctx, file, op, cycle) -> performed lanes`: the lockstep code's memory
    /// callback (`lanes::lane_access`).
    LaneAccessFn = callback fn(*mut LaneCtx<'_, '_>, *mut LaneFile, u32, u64) -> u32;
}

boundary_fn! {
    /// `lane_leave(file, lanes, cycle after, ready's IP)`: lanes leave a running group by
    /// `ready` (`lanes::lane_leave`).
    LaneLeaveFn = callback fn(*mut LaneFile, u32, u64, u32);
}

// ---- Cohort code: `cohort_compile.rs`, run by `cohort::run`.

/// Where no more lanes than this are awake (a contended lock: one holder, the rest
/// asleep), the vector step's fixed cost per cycle (every live IP tested, the memory
/// phase) outweighs its work, and the cohort is interpreted: a contended counter ran 1.8x
/// slower compiled.
pub(crate) const SPARSE_LANES: u32 = 2;

/// The state compiled cohort code reads and writes.
#[repr(C, align(16))]
pub(crate) struct CohortFile {
    /// `regs[r][k]` is register r of core k (first, at the offset the shared register
    /// store of `lanes_compile` is given).
    pub(crate) regs: [[u8; 16]; 16],
    /// Each lane's IP: where it executes next, or the instruction that ended its part.
    pub(crate) ips: [u8; 16],
    /// 0xFF in the lanes that execute in the next cycle the code starts; the callbacks
    /// take out lanes that sleep or end and put back lanes that wake.
    pub(crate) awake: [u8; 16],
    /// 0xFF in lanes that join from the cycle after the next (a cohort's cores a cycle
    /// behind its first); merged into `awake` at the end of each cycle.
    pub(crate) join: [u8; 16],
    /// The cycle's memory instructions, lane by lane: low address byte, bank, stored byte
    /// and `MemOp`. A sleeping lane's entries stay as they were, for its retry.
    pub(crate) row: [u8; 16],
    pub(crate) bank: [u8; 16],
    pub(crate) value: [u8; 16],
    pub(crate) op: [u8; 16],
    /// The bytes [`cohort_access`] loaded, and 0xFF in the lanes it performed.
    pub(crate) loaded: [u8; 16],
    pub(crate) performed: [u8; 16],
    /// The cycle the code is in (on `Parked`), or starts next.
    pub(crate) cycle: u64,
    /// Lanes asleep on a lock.
    pub(crate) asleep: u32,
    /// On `Parked`: the lanes that completed their instruction of `cycle`.
    pub(crate) executed: u32,
    /// On `Parked`: the lane that parked.
    pub(crate) parked: u32,
    /// Lanes [`cohort_access`] retried in the cycle they were woken in (they were not
    /// awake when it began).
    pub(crate) retried: u32,
    /// Lanes whose parts ended, and those of them that ended by `ready`.
    pub(crate) ended: u32,
    pub(crate) by_ready: u32,
    /// Until this cycle (exclusive) the code performs a cycle's plain accesses itself, lane
    /// by lane in ascending core id, at `cells` ([`Port::plain_accesses_until`]; code of a
    /// frame with atomic sequences always calls `cohort_access`).
    ///
    /// [`Port::plain_accesses_until`]: gpu16_machine::engine::backend::Port::plain_accesses_until
    pub(crate) plain_until: u64,
    /// In a frame with atomic sequences, until this cycle (exclusive) the code performs a
    /// cycle's accesses that the lock book shows proceed without waking anyone itself, lane
    /// by lane in ascending core id, at `cells` ([`Port::sync_accesses_until`], asked again
    /// after each `cohort_access`), and notes the banks its `ld_sync`s opened in `opened`
    /// for [`Port::note_opened`].
    ///
    /// [`Port::sync_accesses_until`]: gpu16_machine::engine::backend::Port::sync_accesses_until
    /// [`Port::note_opened`]: gpu16_machine::engine::backend::Port::note_opened
    pub(crate) sync_until: u64,
    pub(crate) opened: u32,
    /// The memory's cells, access counters and lock book, for those accesses.
    pub(crate) cells: CellViews,
}

boundary_fn! {
    /// `fn(file, ctx, limit) -> CohortExit`, the signature `cohort_compile` emits.
    CohortEntryFn = unsafe fn(*mut CohortFile, *mut CohortCtx<'_, '_>, u64) -> u32;
}

/// What the callbacks need; lives on the Rust stack for one entry.
pub(crate) struct CohortCtx<'p, 'm> {
    pub(crate) port: *mut Port<'m>,
    pub(crate) cores: *mut [CoreState; 16],
    pub(crate) _borrows: std::marker::PhantomData<(&'p mut Port<'m>, &'p mut [CoreState; 16])>,
    /// The cycle from which each lane has been awake: its instructions since are counted
    /// when it sleeps, ends, or the entry ends (one per cycle awake).
    pub(crate) awake_from: [u64; 16],
    /// The cohort's cores, and whether its frame has atomic sequences (so that
    /// `cohort_access` asks the port's bound for them again, see `CohortFile::sync_until`).
    pub(crate) cohort: u16,
    pub(crate) sync: bool,
    /// A panic caught in a callback, re-raised once compiled code has returned.
    pub(crate) panic: Option<Box<dyn Any + Send>>,
}

boundary_fn! {
    /// `cohort_access(ctx, file, lanes, cycle) -> CohortAccess`: the cohort
    /// code's memory callback (`cohort::cohort_access`).
    CohortAccessFn = callback fn(*mut CohortCtx<'_, '_>, *mut CohortFile, u32, u64) -> u32;
}

boundary_fn! {
    /// `cohort_end(ctx, file, ended lanes, those by ready, cycle after) -> holds a lock`: lanes
    /// end their parts (`cohort::cohort_end`).
    CohortEndFn = callback fn(*mut CohortCtx<'_, '_>, *mut CohortFile, u32, u32, u64) -> u32;
}

// ---- MCST slot code: `slots_compile.rs`, run through `gpu16_machine::engine::slot_run::SlotRun`.

boundary_fn! {
    /// `fn(state) -> exit code`, the signature `compile_slots` emits.
    SlotEntryFn = unsafe fn(*mut SlotState) -> u32;
}

/// The callbacks compiled code calls, by address: the runtimes give them to the
/// [`Compiler`](crate::compile::Compiler) that makes the code, so no compiler depends on a
/// runtime.
#[derive(Clone, Copy)]
pub(crate) struct Callbacks {
    pub(crate) mem_access: MemAccessFn,
    pub(crate) lane_access: LaneAccessFn,
    pub(crate) lane_leave: LaneLeaveFn,
    pub(crate) cohort_access: CohortAccessFn,
    pub(crate) cohort_end: CohortEndFn,
}

/// A type that crosses the boundary as one Cranelift value.
pub(crate) trait AbiType {
    /// Its Cranelift type, where pointers are `ptr`.
    fn ty(ptr: Type) -> Type;
}

impl<T> AbiType for *mut T {
    fn ty(ptr: Type) -> Type {
        ptr
    }
}

impl<T> AbiType for *const T {
    fn ty(ptr: Type) -> Type {
        ptr
    }
}

impl AbiType for u32 {
    fn ty(_: Type) -> Type {
        types::I32
    }
}

impl AbiType for u64 {
    fn ty(_: Type) -> Type {
        types::I64
    }
}

/// A function type of the boundary (an entry or a callback), whose Cranelift signature
/// follows from its Rust parameter and return types ([`boundary_fn`] declares each one and
/// derives this from its declaration).
pub(crate) trait AbiFn {
    /// Whether compiled code calls it (a callback, in [`callback_abi!`]'s convention), not
    /// Rust (an entry, in the host's C convention).
    const CALLBACK: bool;
    /// Its parameters' Cranelift types, in order.
    fn params(ptr: Type) -> Vec<Type>;
    /// Its return's Cranelift type, if any.
    fn returns(ptr: Type) -> Option<Type>;
}

/// The Cranelift signature of boundary function type `F` on a host whose C calling
/// convention is `call_conv`, with pointers of type `ptr`: a callback's is
/// [`callback_abi!`]'s.
pub(crate) fn signature<F: AbiFn>(call_conv: CallConv, ptr: Type) -> Signature {
    let call_conv = if F::CALLBACK && cfg!(target_arch = "x86_64") {
        CallConv::WindowsFastcall
    } else {
        call_conv
    };
    let mut sig = Signature::new(call_conv);
    sig.params
        .extend(F::params(ptr).into_iter().map(AbiParam::new));
    sig.returns.extend(F::returns(ptr).map(AbiParam::new));
    sig
}

/// The lanes of a mask, lowest first, one step per lane.
pub(crate) fn lanes_of(mask: u16) -> impl Iterator<Item = usize> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let k = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            k
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-worked: the lockstep entry is (file, ctx, limit) -> exit code, two pointers, a
    /// 64-bit limit and a 32-bit code; `lane_leave` returns nothing.
    #[test]
    fn signatures_follow_from_the_function_types() {
        let sig = signature::<LaneEntryFn>(CallConv::SystemV, types::I64);
        let params: Vec<Type> = sig.params.iter().map(|p| p.value_type).collect();
        assert_eq!(params, [types::I64, types::I64, types::I64]);
        assert_eq!(sig.returns.len(), 1);
        assert_eq!(sig.returns[0].value_type, types::I32);
        let leave = signature::<LaneLeaveFn>(CallConv::SystemV, types::I64);
        let params: Vec<Type> = leave.params.iter().map(|p| p.value_type).collect();
        assert_eq!(params, [types::I64, types::I32, types::I64, types::I32]);
        assert!(leave.returns.is_empty());
        let mem = signature::<MemAccessFn>(CallConv::SystemV, types::I32);
        assert_eq!(mem.params.len(), 6);
        assert_eq!(mem.params[0].value_type, types::I32);
        assert_eq!(mem.params[1].value_type, types::I64);
    }

    /// An entry is called from Rust in the host's C convention; a callback is called by
    /// compiled code in the convention its Rust definition has (`callback_abi!`): Windows
    /// x64's on x86-64, which keeps `xmm6`-`xmm15` across the call.
    #[test]
    fn callbacks_keep_vector_registers_on_x86_64() {
        let entry = signature::<LaneEntryFn>(CallConv::SystemV, types::I64);
        assert_eq!(entry.call_conv, CallConv::SystemV);
        let callback = if cfg!(target_arch = "x86_64") {
            CallConv::WindowsFastcall
        } else {
            CallConv::SystemV
        };
        let ptr = types::I64;
        for conv in [
            signature::<MemAccessFn>(CallConv::SystemV, ptr).call_conv,
            signature::<LaneAccessFn>(CallConv::SystemV, ptr).call_conv,
            signature::<LaneLeaveFn>(CallConv::SystemV, ptr).call_conv,
            signature::<CohortAccessFn>(CallConv::SystemV, ptr).call_conv,
            signature::<CohortEndFn>(CallConv::SystemV, ptr).call_conv,
        ] {
            assert_eq!(conv, callback);
        }
    }
}
