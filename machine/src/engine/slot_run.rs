//! Running a core's register-only slots ahead of the slot engine's clock: the contract
//! between the MCST slot engine and a backend's compiled code for a frame.
//!
//! An instruction that touches no memory is private to its core: no other core, bank or the
//! task scheduler can see when it executes, only its effect on the registers. So where a
//! core stands at such an instruction, with no bubble due and no `ld` among its last three
//! slots (the load-use, branch-after-load and B-value rules look back that far, and only at
//! loads), its slots up to the next `ld`, `st` or `ready` follow from its registers alone:
//! one slot an instruction, plus [`crate::SlotTiming::taken_branch_bubbles`] after each
//! taken `bnz`. A [`SlotRun`] executes them at once and the engine moves the core's next
//! slot to the cycle they end in. Nothing can observe a core between two of its slots
//! except a poll for a stop or the watchdog, so a run never passes the `limit` the engine
//! gives (the next of those). The interpreter has no such code: it steps every slot, and
//! it is what compiled code is compared with.
//!
//! A backend offers such code through [`SlotCompiler`], a trait of its own: the MCST engine
//! is the only machine that asks, and the spec dialect's run loop never sees it.

use crate::isa::FRAME_INSTRS;
use std::rc::Rc;

/// A core's state for [`SlotRun::run`], in and out. `repr(C)`: compiled code addresses its
/// fields.
#[repr(C)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlotState {
    /// Registers r0..r15.
    pub regs: [u8; 16],
    /// In: the cycle of the slot of the instruction at `ip`. Out: the cycle of the core's
    /// next slot; after [`SlotExit::RanOffEnd`], the cycle of IP 15's slot.
    pub cycle: u64,
    /// No slot in this cycle or later may run.
    pub limit: u64,
    /// Bubbles after a taken `bnz` (the timing's B1).
    pub branch_bubbles: u64,
    /// Out: instructions executed (0: the first one's slot would reach `limit`, or it is
    /// not register-only, and the engine steps it itself).
    pub instructions: u64,
    /// In: the first instruction's IP. Out: the IP of the instruction the core stopped
    /// before (an `ld`, `st` or `ready`, or the one whose slot would reach `limit`); 15
    /// after [`SlotExit::RanOffEnd`].
    pub ip: u8,
    /// The core's id, which `set_const` may load.
    pub id: u8,
    /// Out: the B value of the last slot run (section 5.3): the b field's register as the
    /// instruction read it, or R0 for a bubble after a taken `bnz`.
    pub last_b: u8,
}

/// Why a [`SlotRun`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotExit {
    /// Before the instruction at `ip`, whose slot is `cycle`.
    Stopped,
    /// The instruction at IP 15 ran in slot `cycle` and did not jump: the part ends as the
    /// timing says after IP 15.
    RanOffEnd,
}

/// A frame's register-only slots, compiled (see the module documentation).
pub trait SlotRun {
    /// Run `state`'s core from `state.ip` in `state.cycle` through the frame's
    /// register-only instructions: to the first `ld`, `st` or `ready`, the end of IP 15,
    /// or the last slot before `limit`, whichever comes first. Executes each instruction as
    /// [`crate::semantics::execute`] does in the MCST dialect.
    fn run(&self, state: &mut SlotState) -> SlotExit;
}

/// What the MCST dialect's slot engine asks of a backend: compiled [`SlotRun`] code for a
/// frame, or nothing. Kept apart from [`crate::engine::backend::Backend`] because only the slot engine asks;
/// the spec dialect's run loop runs cores, not slots. Every backend is one
/// (`Backend: SlotCompiler`), so a run entry takes one bound; a backend without such code
/// writes `impl SlotCompiler for MyBackend {}` and the engine steps every slot itself, which
/// is the reference behaviour.
pub trait SlotCompiler {
    /// Code that runs a core's register-only slots of the frame whose instruction words
    /// are `words` ahead of the engine's clock (see [`SlotRun`]), or `None` to have the
    /// engine step them one slot at a time. `asked` counts the times the engine has wanted
    /// such code for this frame in this run (it asks again at powers of two while the
    /// answer is `None`), so a backend can wait until the frame is hot. The default: `None`.
    fn slot_code(&mut self, words: &[u16; FRAME_INSTRS], asked: u64) -> Option<Rc<dyn SlotRun>> {
        let _ = (words, asked);
        None
    }
}
