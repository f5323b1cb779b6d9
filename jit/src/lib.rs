//! gpu16's Cranelift JIT backend: [`Jit`] compiles every instruction frame to native code
//! (cached by the frame's bytes), and [`Auto`] interprets a frame until it is hot, then runs
//! it compiled. Both behave exactly like the reference interpreter, `gpu16_interp`.

mod auto;
mod cache;
mod compile;
mod error;
mod runtime;

pub use auto::{Auto, AutoCode, Cold, Hotness, DEFAULT_HOT_INSTRUCTIONS, DEFAULT_HOT_ISSUES};
pub use cache::{CacheStats, CompiledFrame, FrameKey};
pub use compile::OptLevel;
pub use error::JitError;

use cache::Cache;
use compile::Compiler;
use gpu16_machine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::{Backend, BackendError, CoreExit, CoreState, InstrFrame, Port};
use std::rc::Rc;

/// Tuning of the JIT and its code cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitOptions {
    pub opt_level: OptLevel,
    /// Frames compiled into one Cranelift module (the unit of freeing).
    pub frames_per_module: usize,
    /// Modules kept; a new one beyond this evicts the oldest.
    pub max_modules: usize,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            opt_level: OptLevel::None,
            frames_per_module: 64,
            max_modules: 16,
        }
    }
}

/// The JIT backend: every frame runs compiled.
pub struct Jit {
    pub(crate) cache: Cache,
}

impl Jit {
    /// A JIT with default options. Panics if Cranelift does not support the host.
    pub fn new() -> Jit {
        Jit::with_options(JitOptions::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A JIT with `options`, or why Cranelift cannot start on this host.
    pub fn with_options(options: JitOptions) -> Result<Jit, JitError> {
        let compiler = Compiler::new(options.opt_level)?;
        Ok(Jit {
            cache: Cache::new(compiler, options.frames_per_module, options.max_modules),
        })
    }

    /// The code cache's counters.
    pub fn stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// The cached code of `frame`, if it was compiled and not evicted.
    pub(crate) fn lookup(&mut self, key: &FrameKey) -> Option<Rc<CompiledFrame>> {
        self.cache.get(key)
    }

    pub(crate) fn compile(
        &mut self,
        key: &FrameKey,
        instrs: &[Instr; FRAME_INSTRS],
    ) -> Result<Rc<CompiledFrame>, JitError> {
        self.cache.get_or_compile(key, instrs)
    }
}

impl Default for Jit {
    fn default() -> Self {
        Jit::new()
    }
}

impl Backend for Jit {
    type Code = Rc<CompiledFrame>;

    fn name(&self) -> &'static str {
        "jit"
    }

    fn prepare(&mut self, frame: &InstrFrame) -> Result<Self::Code, BackendError> {
        Ok(self.compile(&frame.bytes(), &frame.instrs)?)
    }

    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit {
        runtime::enter(code, core, port)
    }
}
