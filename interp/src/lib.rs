//! The reference interpreter: executes a core's instructions one by one with the machine
//! crate's one instruction definition (`gpu16_machine::engine::semantics::step` on concrete
//! bytes). Clear before fast: it is the executable specification the JIT is held to, and the
//! speed baseline.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use gpu16_machine::engine::backend::{Backend, BackendError, CoreExit, CoreState, Port};
use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::engine::semantics::execute;
use gpu16_machine::engine::semantics::Effect;
use gpu16_machine::engine::slot_run::SlotCompiler;
use gpu16_machine::InstrFrame;
use std::rc::Rc;

/// The interpreter backend: one core at a time.
#[derive(Clone, Debug, Default)]
pub struct Interpreter;

impl Interpreter {
    /// A new interpreter; it keeps no state between frames.
    pub fn new() -> Interpreter {
        Interpreter
    }
}

/// No compiled slots: the MCST slot engine steps every slot of the interpreter's cores, the
/// reference the JIT's slot code is compared with.
impl SlotCompiler for Interpreter {}

impl Backend for Interpreter {
    type Code = Rc<[Instr; FRAME_INSTRS]>;

    fn name(&self) -> &'static str {
        "interp"
    }

    fn prepare(&mut self, frame: &InstrFrame) -> Result<Self::Code, BackendError> {
        Ok(Rc::new(frame.instrs))
    }

    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit {
        interpret(code, core, port)
    }
}

/// Run one core from its IP until it parks or its part of the task ends.
pub fn interpret(
    code: &[Instr; FRAME_INSTRS],
    core: &mut CoreState,
    port: &mut Port<'_>,
) -> CoreExit {
    // The loop runs on a copy, written back once at the exit. A local whose address never
    // escapes keeps its IP, cycle and counter in registers; fields behind `core` may be
    // loaded and stored around every call into the port, and whether they are moved with
    // unrelated changes (issue 31: the interpreter's rows read 17-25% slower for it).
    let mut copy = core.clone();
    let exit = interpret_copy(code, &mut copy, port);
    *core = copy;
    exit
}

#[inline(always)]
fn interpret_copy(
    code: &[Instr; FRAME_INSTRS],
    core: &mut CoreState,
    port: &mut Port<'_>,
) -> CoreExit {
    let limit = port.limit();
    let stops = port.stops();
    loop {
        if core.cycle >= limit {
            return CoreExit::Parked;
        }
        if stops != 0 {
            port.came_to_stop(core.id, core.ip, core.cycle);
        }
        let effect = execute(code[usize::from(core.ip & 0xF)], &mut core.regs, core.id);
        if let Effect::Memory(access) = effect {
            let value = access.value.unwrap_or(0);
            let Some(byte) = port.access(core.id, core.cycle, access.op, access.address(), value)
            else {
                return CoreExit::Parked;
            };
            access.complete_bytes(&mut core.regs, core.id, byte);
        }
        if let Some(exit) = core.retire(effect.flow()) {
            return exit;
        }
    }
}
