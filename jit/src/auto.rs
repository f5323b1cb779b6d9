//! The `auto` backend: a frame is interpreted until it is hot, then compiled once and run
//! natively from then on. Hot means issued `hot_issues` times, or `hot_instructions`
//! instructions interpreted in it (ski rental: a compile costs about as much as
//! interpreting 80,000 instructions, so a frame issued once but looping for millions of
//! instructions switches after the first core's run instead of never). Since the JIT equals
//! the interpreter, the switch cannot change any result. A frame the JIT cannot compile is
//! interpreted instead, with one warning on stderr.

use crate::cache::{CompiledFrame, FastMap, FrameKey};
use crate::error::JitError;
use crate::{Jit, JitOptions};
use gpu16_interp::{interpret, interpret_group};
use gpu16_machine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::{
    Backend, BackendError, CoreExit, CoreState, GroupExit, GroupShape, InstrFrame, Port,
};
use std::cell::{Cell, RefCell};
use std::collections::hash_map::Entry;
use std::rc::Rc;

/// Issues after which a frame is compiled regardless of how little it ran.
pub const DEFAULT_HOT_ISSUES: u32 = 1000;
/// Interpreted instructions after which a frame is compiled: one compile's worth
/// (measured: ~230 us per frame, the interpreter runs ~310 M instructions/s).
pub const DEFAULT_HOT_INSTRUCTIONS: u64 = 80_000;

/// Cold frames are forgotten past this many distinct ones, so an endless stream of fresh
/// frames needs bounded memory.
const MAX_COLD: usize = 1 << 16;

/// A frame not compiled yet, shared by every core running it.
#[derive(Debug)]
pub struct Cold {
    key: FrameKey,
    instrs: [Instr; FRAME_INSTRS],
    issues: Cell<u32>,
    interpreted: Cell<u64>,
    /// Set when the frame becomes hot while cores still run it interpreted.
    compiled: RefCell<Option<Rc<CompiledFrame>>>,
    /// A compile failed: stay interpreted (results are the same either way).
    failed: Cell<bool>,
}

/// A frame as `Auto` runs it.
#[derive(Clone, Debug)]
pub enum AutoCode {
    Interpreted(Rc<Cold>),
    Compiled(Rc<CompiledFrame>),
}

/// When `Auto` compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hotness {
    pub issues: u32,
    pub instructions: u64,
}

impl Default for Hotness {
    fn default() -> Self {
        Hotness {
            issues: DEFAULT_HOT_ISSUES,
            instructions: DEFAULT_HOT_INSTRUCTIONS,
        }
    }
}

pub struct Auto {
    jit: Jit,
    hot: Hotness,
    cold: FastMap<FrameKey, Rc<Cold>>,
}

impl Auto {
    /// Default thresholds and JIT options. Panics if Cranelift does not support the host.
    pub fn new() -> Auto {
        Auto::with_hotness(Hotness::default())
    }

    /// Compile a frame at its `hot_issues`-th issue (0 or 1: at the first), with no
    /// instruction budget.
    pub fn with_threshold(hot_issues: u32) -> Auto {
        Auto::with_hotness(Hotness {
            issues: hot_issues,
            instructions: u64::MAX,
        })
    }

    /// Compile when `hot` says, with default JIT options. Panics if Cranelift does not
    /// support the host.
    pub fn with_hotness(hot: Hotness) -> Auto {
        Auto::with_options(hot, JitOptions::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Compile when `hot` says, with `options`; or why the JIT cannot start on this host.
    pub fn with_options(hot: Hotness, options: JitOptions) -> Result<Auto, JitError> {
        Ok(Auto {
            jit: Jit::with_options(options)?,
            hot,
            // Sized for a task memory's worth of frames and more, to skip early rehashing.
            cold: FastMap::with_capacity_and_hasher(1024, Default::default()),
        })
    }

    /// The JIT that compiles hot frames.
    pub fn jit(&self) -> &Jit {
        &self.jit
    }

    /// The compiled code of a frame issued cold that has since run past its instruction
    /// budget (compiling it now), or `None` to keep interpreting. One compare on the
    /// common path; only a frame past its budget looks further.
    fn hot_code(&mut self, cold: &Cold) -> Option<Rc<CompiledFrame>> {
        if cold.interpreted.get() < self.hot.instructions || cold.failed.get() {
            return None;
        }
        if cold.compiled.borrow().is_none() {
            match self.jit.compile(&cold.key, &cold.instrs) {
                Ok(code) => {
                    self.cold.remove(&cold.key);
                    *cold.compiled.borrow_mut() = Some(code);
                }
                Err(e) => fall_back(cold, &e),
            }
        }
        cold.compiled.borrow().clone()
    }

    fn is_hot(&self, cold: &Cold) -> bool {
        cold.issues.get() >= self.hot.issues || cold.interpreted.get() >= self.hot.instructions
    }
}

impl Default for Auto {
    fn default() -> Self {
        Auto::new()
    }
}

impl Backend for Auto {
    type Code = AutoCode;

    fn name(&self) -> &'static str {
        "auto"
    }

    fn prepare(&mut self, frame: &InstrFrame) -> Result<Self::Code, BackendError> {
        let key = frame.bytes();
        if self.cold.len() >= MAX_COLD {
            self.cold.clear();
        }
        // A frame in the cold map is not compiled (compiling removes it), so a fresh frame
        // costs two hash lookups and a repeated cold one a single lookup.
        let cold = match self.cold.entry(key) {
            Entry::Occupied(e) => e.get().clone(),
            Entry::Vacant(e) => {
                if let Some(code) = self.jit.lookup(&key) {
                    return Ok(AutoCode::Compiled(code));
                }
                e.insert(Rc::new(Cold {
                    key,
                    instrs: frame.instrs,
                    issues: Cell::new(0),
                    interpreted: Cell::new(0),
                    compiled: RefCell::new(None),
                    failed: Cell::new(false),
                }))
                .clone()
            }
        };
        cold.issues.set(cold.issues.get().saturating_add(1));
        if self.is_hot(&cold) && !cold.failed.get() {
            match self.jit.compile(&key, &frame.instrs) {
                Ok(code) => {
                    self.cold.remove(&key);
                    return Ok(AutoCode::Compiled(code));
                }
                Err(e) => fall_back(&cold, &e),
            }
        }
        Ok(AutoCode::Interpreted(cold))
    }

    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit {
        let cold = match code {
            AutoCode::Compiled(code) => return self.jit.run_scalar(code, core, port),
            AutoCode::Interpreted(cold) => cold,
        };
        if let Some(code) = self.hot_code(cold) {
            return self.jit.run_scalar(&code, core, port);
        }
        let before = core.instructions;
        let exit = interpret(&cold.instrs, core, port);
        let ran = core.instructions - before;
        cold.interpreted
            .set(cold.interpreted.get().saturating_add(ran));
        exit
    }

    fn takes_groups(&self) -> bool {
        self.jit.takes_groups()
    }

    fn takes_group(&self, group: GroupShape) -> bool {
        self.jit.takes_group(group)
    }

    fn run_group(
        &mut self,
        code: &Self::Code,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> GroupExit {
        let cold = match code {
            AutoCode::Compiled(code) => return self.jit.run_lanes(code, group, cores, port),
            AutoCode::Interpreted(cold) => cold,
        };
        if let Some(code) = self.hot_code(cold) {
            return self.jit.run_lanes(&code, group, cores, port);
        }
        let before: u64 = cores.iter().map(|c| c.instructions).sum();
        let exits = interpret_group(&cold.instrs, group, cores, port);
        let ran = cores.iter().map(|c| c.instructions).sum::<u64>() - before;
        cold.interpreted
            .set(cold.interpreted.get().saturating_add(ran));
        exits
    }
}

/// A frame the JIT could not compile stays interpreted, which gives the same results; the
/// user hears of it once.
fn fall_back(cold: &Cold, e: &JitError) {
    cold.failed.set(true);
    let words: Vec<String> = cold
        .key
        .chunks(2)
        .map(|w| format!("{:04x}", u16::from_le_bytes([w[0], w[1]])))
        .collect();
    eprintln!(
        "warning: auto: interpreting a frame the JIT could not compile ({e}); its words: {}",
        words.join(" ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu16_interp::Interpreter;
    use gpu16_machine::frame::{ControlFrame, Fence};
    use gpu16_machine::isa::AluOp;
    use gpu16_machine::{run, Config, Program};

    /// Sixteen cores count r9 down from 200 in a loop, issued twice: hot on both counts.
    fn hot_program() -> Program {
        let code = [
            Instr::SetConst { k: 200, d: 9 },
            Instr::SetConst { k: 1, d: 10 },
            Instr::Alu {
                op: AluOp::Sub,
                a: 9,
                b: 10,
                c: 9,
            },
            Instr::Alu {
                op: AluOp::Add,
                a: 11,
                b: 9,
                c: 11,
            },
            Instr::Bnz { a: 9, target: 2 },
        ];
        let cf = ControlFrame::new(2, Fence::No, 0xFFFF, &[]).encode();
        let f = InstrFrame::padded(&code, Instr::Ready).bytes();
        Program::from_frames(vec![cf, f, f]).unwrap()
    }

    #[test]
    fn a_frame_that_fails_to_compile_is_interpreted() {
        let p = hot_program();
        let want = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap();
        let mut auto = Auto::with_hotness(Hotness {
            issues: 1,
            instructions: 10,
        });
        auto.jit.cache.fail = true;
        let got = run(&mut auto, &p, &[], &Config::default()).expect("interpreted instead");
        assert_eq!(got.registers, want.registers);
        assert_eq!(got.cycles, want.cycles);
        assert_eq!(got.instructions, want.instructions);
        assert_eq!(auto.jit().stats().compiled, 0);
        let cold = auto
            .cold
            .values()
            .next()
            .expect("the frame stays in the cold map");
        assert!(cold.failed.get(), "marked, so it is not tried again");
    }

    #[test]
    fn the_jit_backend_interprets_a_frame_that_fails_to_compile() {
        let p = hot_program();
        let want = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap();
        for engine in [crate::Engine::PerCore, crate::Engine::Lockstep] {
            let mut jit = Jit::with_options(JitOptions {
                engine,
                ..JitOptions::default()
            })
            .unwrap();
            jit.cache.fail = true;
            let got = run(&mut jit, &p, &[], &Config::default()).expect("interpreted instead");
            assert_eq!(got.registers, want.registers, "{engine:?}");
            assert_eq!(got.cycles, want.cycles, "{engine:?}");
            let s = jit.stats();
            assert_eq!((s.compiled, s.lanes_compiled), (0, 0), "{engine:?}");
        }
    }
}
