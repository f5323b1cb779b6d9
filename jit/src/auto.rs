//! The `auto` backend: a frame is interpreted until it has been issued `hot_issues` times,
//! then compiled once and run natively from then on. Cold code never pays for a compile,
//! and since the JIT equals the interpreter the switch cannot change any result.

use crate::cache::{CompiledFrame, FastMap, FrameKey};
use crate::{runtime, Jit, JitOptions};
use gpu16_interp::interpret;
use gpu16_machine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::{Backend, BackendError, CoreExit, CoreState, InstrFrame, Port};
use std::rc::Rc;

/// Issues after which a frame is compiled. See the crate's benchmark for the measurement.
pub const DEFAULT_HOT_ISSUES: u32 = 16;

/// Issue counts of frames not yet compiled are forgotten past this many distinct frames, so
/// an endless stream of fresh frames needs bounded memory.
const MAX_COUNTED: usize = 1 << 16;

/// A frame as `Auto` runs it.
#[derive(Clone, Debug)]
pub enum AutoCode {
    Interpreted(Rc<[Instr; FRAME_INSTRS]>),
    Compiled(Rc<CompiledFrame>),
}

pub struct Auto {
    jit: Jit,
    hot_issues: u32,
    issues: FastMap<FrameKey, u32>,
}

impl Auto {
    /// Default threshold and JIT options. Panics if Cranelift does not support the host.
    pub fn new() -> Auto {
        Auto::with_threshold(DEFAULT_HOT_ISSUES)
    }

    /// Compile a frame at its `hot_issues`-th issue (0 or 1: at the first).
    pub fn with_threshold(hot_issues: u32) -> Auto {
        Auto::with_options(hot_issues, JitOptions::default()).unwrap_or_else(|e| panic!("{}", e.0))
    }

    pub fn with_options(hot_issues: u32, options: JitOptions) -> Result<Auto, BackendError> {
        Ok(Auto {
            jit: Jit::with_options(options)?,
            hot_issues,
            issues: FastMap::default(),
        })
    }

    pub fn jit(&self) -> &Jit {
        &self.jit
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
        if let Some(code) = self.jit.lookup(&key) {
            return Ok(AutoCode::Compiled(code));
        }
        if self.issues.len() >= MAX_COUNTED {
            self.issues.clear();
        }
        let n = self.issues.entry(key).or_insert(0);
        *n += 1;
        if *n >= self.hot_issues {
            self.issues.remove(&key);
            return Ok(AutoCode::Compiled(self.jit.compile(&key, frame)?));
        }
        Ok(AutoCode::Interpreted(Rc::new(frame.instrs)))
    }

    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit {
        match code {
            AutoCode::Interpreted(instrs) => interpret(instrs, core, port),
            AutoCode::Compiled(code) => runtime::enter(code, core, port),
        }
    }
}
