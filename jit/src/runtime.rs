//! The boundary between Rust and compiled frames: the entry ABI, the exit codes, and the
//! memory callback compiled code calls for every ld/st. All `unsafe` of the crate lives here.

use crate::cache::CompiledFrame;
use gpu16_interp::interpret;
use gpu16_machine::isa::{address, MemOp};
use gpu16_machine::{CoreExit, CoreState, Port};
use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Stopped before the instruction at `ip` (memory parked, or the callback panicked).
pub(crate) const EXIT_PARKED: u32 = 0;
/// The part ended after the instruction at IP 15.
pub(crate) const EXIT_ENDED: u32 = 1;
/// The part ended by `ready` at `ip`.
pub(crate) const EXIT_READY: u32 = 2;
/// Near the cycle limit, or an IP that is not a segment start: interpret from `ip`.
pub(crate) const EXIT_SLOW: u32 = 3;

/// The callback's answer when the port says park.
const PARK: u32 = 0x100;

/// `fn(core, ctx, limit) -> exit code`, the signature `compile` emits.
pub(crate) type EntryFn = unsafe extern "C" fn(*mut CoreState, *mut CallCtx<'_, '_>, u64) -> u32;

/// What the memory callback needs; lives on the Rust stack for one `enter`.
pub(crate) struct CallCtx<'p, 'm> {
    port: &'p mut Port<'m>,
    id: u8,
    /// A panic caught in the callback, re-raised once compiled code has returned.
    panic: Option<Box<dyn Any + Send>>,
}

/// Perform one memory instruction for compiled code: the loaded (or stored) byte, or `PARK`.
/// Never unwinds: a panic is stored and reported as a park, then re-raised by `enter`.
pub(crate) extern "C" fn mem_access(
    ctx: *mut CallCtx<'_, '_>,
    cycle: u64,
    op: u32,
    lo: u32,
    hi: u32,
    value: u32,
) -> u32 {
    // SAFETY: compiled code passes back the pointer `enter` gave it, to a `CallCtx` that
    // outlives the call and that nothing else touches while compiled code runs.
    let ctx = unsafe { &mut *ctx };
    if ctx.panic.is_some() {
        return PARK;
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        let op = MemOp::from_u8(op as u8).expect("compiled code passes a MemOp");
        let addr = address(lo as u8, hi as u8);
        ctx.port.access(ctx.id, cycle, op, addr, value as u8)
    }));
    match result {
        Ok(Some(v)) => u32::from(v),
        Ok(None) => PARK,
        Err(payload) => {
            ctx.panic = Some(payload);
            PARK
        }
    }
}

/// Run `core` in compiled `code` until it parks or its part ends.
pub(crate) fn enter(code: &CompiledFrame, core: &mut CoreState, port: &mut Port<'_>) -> CoreExit {
    let start = core.cycle;
    let limit = port.limit();
    let mut ctx = CallCtx {
        port,
        id: core.id,
        panic: None,
    };
    // SAFETY: `code.entry` was emitted by `compile` with exactly the `EntryFn` signature and
    // is kept executable by the module `code` holds alive. The pointers are valid for the
    // whole call: `core` is a live exclusive borrow whose `repr(C)` field offsets the code
    // was compiled with, and `ctx` is a local only `mem_access` reads. Compiled code does no
    // other memory access and cannot unwind (the callback catches panics).
    let rc = unsafe { (code.entry)(core, &mut ctx, limit) };
    // Within one entry every executed instruction took exactly one cycle.
    core.instructions += core.cycle - start;
    if let Some(payload) = ctx.panic {
        resume_unwind(payload);
    }
    match rc {
        EXIT_PARKED => CoreExit::Parked,
        EXIT_ENDED => CoreExit::Ended { by_ready: false },
        EXIT_READY => CoreExit::Ended { by_ready: true },
        EXIT_SLOW => interpret(&code.instrs, core, ctx.port),
        _ => unreachable!("compiled code returns only the exit codes of runtime.rs"),
    }
}
