//! The reference interpreter: executes a core's instructions one by one with the machine
//! crate's instruction semantics. Clear before fast: it is the executable specification the
//! JIT is held to, and the speed baseline.

use gpu16_machine::isa::{address, execute, Flow, Instr, FRAME_INSTRS};
use gpu16_machine::{retire, Backend, BackendError, CoreExit, CoreState, InstrFrame, Port};
use std::rc::Rc;

/// The interpreter backend.
#[derive(Clone, Debug, Default)]
pub struct Interpreter;

impl Interpreter {
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
        let instr = code[usize::from(core.ip & 0xF)];
        let mut flow = execute(instr, &mut core.regs, core.id);
        if flow == Flow::Memory {
            let Instr::Mem { op, a, hi, r } = instr else {
                unreachable!("only memory instructions flow to memory")
            };
            let addr = address(core.regs[usize::from(a)], core.regs[usize::from(hi)]);
            match port.access(core.id, core.cycle, op, addr, core.regs[usize::from(r)]) {
                Some(v) => {
                    if op.is_read() {
                        core.regs[usize::from(r)] = v;
                    }
                    flow = Flow::Next;
                }
                None => return CoreExit::Parked,
            }
        }
        if let Some(exit) = retire(core, flow) {
            return exit;
        }
    }
}
