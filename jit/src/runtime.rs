//! The per-core form's runtime: entering a frame's per-core code for one core, the memory
//! callback that code calls for every ld/st it does not perform itself, and running MCST
//! slot code; and the table of every form's callbacks ([`callbacks`]) that compilers are
//! given. The types of the boundary are `abi`'s. Calls into compiled code are `unsafe`
//! here and in `lanes.rs` and `cohort.rs`; `cache.rs` turns a finalized address into a
//! function and frees a module's code.

use crate::abi::{AccessReply, CallCtx, Callbacks, ScalarExit, SlotCodeExit};
use crate::cache::{CompiledFrame, ScalarCode, SlotsCode};
use crate::interpreted::handed_over_for;
use gpu16_interp::interpret;
use gpu16_machine::engine::backend::{CoreExit, CoreState, DirectAccess, Port};
use gpu16_machine::engine::isa::{address, MemOp};
use gpu16_machine::engine::slot_run::{SlotExit, SlotRun, SlotState};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

impl SlotRun for SlotsCode {
    fn run(&self, state: &mut SlotState) -> SlotExit {
        // SAFETY: `entry` is a finalized function of signature `SlotEntryFn`, alive while
        // `self` (which holds its module) is; it reads and writes only the `SlotState` it
        // is given, which `state` lends exclusively for the call, and calls nothing.
        let code = unsafe { (self.entry)(state) };
        if SlotCodeExit::from_code(code) == SlotCodeExit::RanOffEnd {
            SlotExit::RanOffEnd
        } else {
            SlotExit::Stopped
        }
    }
}

/// The callbacks of every form's runtime, for the compiler whose code calls them. Each is
/// checked here against its type in [`crate::abi`], from which the code's call
/// signature is derived.
pub(crate) fn callbacks() -> Callbacks {
    Callbacks {
        mem_access,
        lane_access: crate::lanes::lane_access,
        lane_leave: crate::lanes::lane_leave,
        cohort_access: crate::cohort::cohort_access,
        cohort_end: crate::cohort::cohort_end,
    }
}

crate::abi::callback_abi! {
    /// Perform one memory instruction for compiled code: the loaded (or stored) byte, or park.
    /// Never unwinds: a panic is stored and reported as a park, then re-raised by `enter`.
    pub(crate) fn mem_access(
        ctx: *mut CallCtx<'_, '_>,
        cycle: u64,
        op: u32,
        lo: u32,
        hi: u32,
        value: u32,
    ) -> AccessReply {
        // SAFETY: compiled code passes back the pointer `enter` gave it, to a `CallCtx` that
        // outlives the call and that nothing else touches while compiled code runs.
        let ctx = unsafe { &mut *ctx };
        if ctx.panic.is_some() {
            return AccessReply::PARK;
        }
        // SAFETY: `ctx.port` comes from the exclusive borrow `enter` holds for the whole entry;
        // compiled code is suspended in this call, so nothing else uses the port or the
        // `DirectAccess` pointers into it until this reference is gone.
        let port = unsafe { &mut *ctx.port };
        let id = ctx.id;
        let result = catch_unwind(AssertUnwindSafe(|| {
            let op = MemOp::from_u8(op as u8).expect("compiled code passes a MemOp");
            let addr = address(hi as u8, lo as u8);
            port.access(id, cycle, op, addr, value as u8)
        }));
        match result {
            Ok(Some(v)) => AccessReply::byte(v),
            Ok(None) => AccessReply::PARK,
            Err(payload) => {
                ctx.panic = Some(payload);
                AccessReply::PARK
            }
        }
    }
}

/// Run `core` in compiled `code` until it parks or its part ends.
pub(crate) fn enter(
    scalar: &ScalarCode,
    code: &CompiledFrame,
    core: &mut CoreState,
    port: &mut Port<'_>,
    handed_over: &mut u64,
) -> CoreExit {
    let start = core.cycle;
    let limit = port.limit();
    // Only code with plain ld/st reads the views; sparing the rest their set-up matters for
    // streams of short tasks.
    let direct = if code.direct {
        port.direct(core.id)
    } else {
        DirectAccess::NONE
    };
    let port: *mut Port<'_> = port;
    let mut ctx = CallCtx {
        port,
        _port: std::marker::PhantomData,
        id: core.id,
        panic: None,
    };
    // SAFETY: `scalar.entry` was emitted by `compile` with exactly the `EntryFn` signature
    // and is kept executable by the module `scalar` holds alive. The pointers are valid for the
    // whole call: `core` is a live exclusive borrow whose `repr(C)` field offsets the code
    // was compiled with, `ctx` is a local only `mem_access` reads, and `direct` points into
    // the port, which outlives the call and is used by nothing else meanwhile (its pointers
    // are null only for code without plain ld/st, which never reads them). Compiled code
    // touches shared memory only at addresses masked to 12 bits and counters indexed by a
    // 4-bit bank, and cannot unwind (the callback catches panics).
    let rc = unsafe { (scalar.entry)(core, &mut ctx, limit, &direct) };
    // Within one entry every executed instruction took its cycles and nothing else did.
    core.instructions += (core.cycle - start) / CoreState::INSTRUCTION_CYCLES;
    if let Some(payload) = ctx.panic {
        resume_unwind(payload);
    }
    match ScalarExit::from_code(rc) {
        ScalarExit::Parked => CoreExit::Parked,
        ScalarExit::Ended => CoreExit::Ended { by_ready: false },
        ScalarExit::Ready => CoreExit::Ended { by_ready: true },
        ScalarExit::Slow => {
            // SAFETY: compiled code has returned; `ctx.port` is again the only path to the
            // port.
            let port = unsafe { &mut *ctx.port };
            // Entered mid-segment (stopped there at a checkpoint), the interpreter takes the
            // core only to its next entry point, and compiled code goes on from there on the
            // next run; at an entry point, the segment crosses the limit, and the
            // interpreter runs up to it; at a debugger's stop, it executes that one
            // instruction, noting that the core came to it.
            let before = core.instructions;
            let exit = match handed_over_for(&scalar.to_entry, core.ip, port) {
                Some(n) => port.within(core.cycle.saturating_add(n), |port| {
                    interpret(&code.instrs, core, port)
                }),
                None => interpret(&code.instrs, core, port),
            };
            *handed_over += core.instructions - before;
            exit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{Compiler, OptLevel};
    use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};

    /// Every form of every frame compiles (with a debugger's stops too): a form that does
    /// not falls back to the interpreter with the same results, so no differential test
    /// would notice. Frames of random words, plus each instruction kind at every IP, under
    /// the verifier in debug builds.
    #[test]
    fn every_form_of_random_frames_compiles() {
        let mut compiler = Compiler::new(OptLevel::None, callbacks()).unwrap();
        let mut module = compiler.new_module();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut word = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u16
        };
        let mut frames: Vec<[Instr; FRAME_INSTRS]> = Vec::new();
        while frames.len() < 300 {
            let f: [Instr; FRAME_INSTRS] =
                std::array::from_fn(|_| Instr::decode(word()).unwrap_or(Instr::Nop));
            frames.push(f);
        }
        for w in [
            0x0000u16, 0x1123, 0x3123, 0x4123, 0x6123, 0xb123, 0xb163, 0xd123, 0xd163,
        ] {
            let i = Instr::decode(w).unwrap();
            for at in 0..FRAME_INSTRS {
                let mut f = [Instr::Ready; FRAME_INSTRS];
                f[at] = i;
                frames.push(f);
            }
        }
        for f in &frames {
            compiler.compile(&mut module, f, 0).expect("per-core form");
            compiler
                .compile_lanes(&mut module, f, 0)
                .expect("lockstep form");
            // The forms of a debugger's search, with breakpoints at drawn IPs.
            let stops = word();
            compiler
                .compile(&mut module, f, stops)
                .expect("per-core form with stops");
            compiler
                .compile_lanes(&mut module, f, stops)
                .expect("lockstep form with stops");
            compiler
                .compile_cohort(&mut module, f)
                .expect("cohort form");
        }
    }
}
