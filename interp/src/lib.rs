//! The reference interpreter: executes a core's instructions one by one with the machine
//! crate's one instruction definition (`gpu16_machine::semantics::step` on concrete
//! bytes). Clear before fast: it is the executable specification the JIT is held to, and the
//! speed baseline.

#![forbid(unsafe_code)]

use gpu16_machine::isa::Flow;
use gpu16_machine::isa::{execute, Instr, FRAME_INSTRS};
use gpu16_machine::semantics::Concrete;
use gpu16_machine::{
    retire, Backend, BackendError, CoreExit, CoreState, Effect, GroupExit, GroupShape, InstrFrame,
    Port,
};
use std::rc::Rc;

/// The interpreter backend.
#[derive(Clone, Debug, Default)]
pub struct Interpreter {
    lockstep: bool,
}

impl Interpreter {
    /// A new interpreter, one core at a time; it keeps no state between frames.
    pub fn new() -> Interpreter {
        Interpreter { lockstep: false }
    }

    /// An interpreter that runs the cores of a group together ([`interpret_group`]): the
    /// reference for the lockstep engine, with exactly the same results.
    pub fn lockstep() -> Interpreter {
        Interpreter { lockstep: true }
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

    fn takes_groups(&self) -> bool {
        self.lockstep
    }

    fn takes_group(&self, _: GroupShape) -> bool {
        self.lockstep
    }

    fn run_group(
        &mut self,
        code: &Self::Code,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> GroupExit {
        interpret_group(code, group, cores, port)
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

/// Run the cores of `group` (all at one IP in one cycle) together, one cycle at a time,
/// until they split, park, end or reach the cycle limit (see `Backend::run_group`). In each
/// cycle the cores execute the group's instruction in ascending id, so their accesses reach
/// memory in the (cycle, core id) order.
pub fn interpret_group(
    code: &[Instr; FRAME_INSTRS],
    group: u16,
    cores: &mut [CoreState; 16],
    port: &mut Port<'_>,
) -> GroupExit {
    let mut exits: GroupExit = [None; 16];
    let lanes = || (0..16usize).filter(move |l| group & (1 << l) != 0);
    let limit = port.limit();
    loop {
        let lead = group.trailing_zeros() as usize;
        if cores[lead].cycle >= limit {
            for l in lanes() {
                exits[l] = Some(CoreExit::Parked);
            }
            return exits;
        }
        let instr = code[usize::from(cores[lead].ip & 0xF)];
        let mut flows = [Flow::Next; 16];
        let mut parked = 0u16;
        for l in lanes() {
            let core = &mut cores[l];
            let effect = execute(instr, &mut core.regs, core.id);
            if let Effect::Memory(access) = effect {
                let value = access.value.unwrap_or(0);
                match port.access(core.id, core.cycle, access.op, access.address(), value) {
                    Some(byte) => access.complete(
                        &mut Concrete {
                            regs: &mut core.regs,
                            core_id: core.id,
                        },
                        byte,
                    ),
                    None => {
                        // This core and every later one wait for their turn.
                        parked = group & !((1 << l) - 1);
                        break;
                    }
                }
            }
            flows[l] = effect.flow();
        }
        let mut split = parked != 0;
        let mut ended = false;
        for l in lanes() {
            if parked & (1 << l) != 0 {
                exits[l] = Some(CoreExit::Parked);
                continue;
            }
            if flows[l] != flows[lead] {
                split = true;
            }
            if let Some(exit) = retire(&mut cores[l], flows[l]) {
                exits[l] = Some(exit);
                ended = true;
            }
        }
        if split || ended {
            return exits;
        }
    }
}
