//! The reference interpreter: executes a core's instructions one by one with the machine
//! crate's one instruction definition (`gpu16_machine::semantics::step` on concrete
//! bytes). Clear before fast: it is the executable specification the JIT is held to, and the
//! speed baseline.

#![forbid(unsafe_code)]

use gpu16_machine::isa::{execute, Instr, FRAME_INSTRS};
use gpu16_machine::semantics::Concrete;
use gpu16_machine::{retire, Backend, BackendError, CoreExit, CoreState, Effect, InstrFrame, Port};
use std::rc::Rc;

/// The interpreter backend.
#[derive(Clone, Debug, Default)]
pub struct Interpreter;

impl Interpreter {
    /// A new interpreter; it keeps no state between frames.
    pub fn new() -> Interpreter {
        Interpreter
    }
}

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
    let limit = port.limit();
    loop {
        if core.cycle >= limit {
            return CoreExit::Parked;
        }
        let effect = execute(code[usize::from(core.ip & 0xF)], &mut core.regs, core.id);
        if let Effect::Memory(access) = effect {
            let value = access.value.unwrap_or(0);
            let Some(byte) = port.access(core.id, core.cycle, access.op, access.address(), value)
            else {
                return CoreExit::Parked;
            };
            let mut regs = Concrete {
                regs: &mut core.regs,
                core_id: core.id,
            };
            access.complete(&mut regs, byte);
        }
        if let Some(exit) = retire(core, effect.flow()) {
            return exit;
        }
    }
}
