//! gpu16's Cranelift JIT backend: [`Jit`] compiles every instruction frame to native code
//! (cached by the frame's bytes), and [`Auto`] interprets a frame until it is hot, then runs
//! it compiled. Both behave exactly like the reference interpreter, `gpu16_interp`.

mod auto;
mod cache;
mod compile;
mod error;
mod lanes;
mod lanes_compile;
mod runtime;

pub use auto::{Auto, AutoCode, Cold, Hotness, DEFAULT_HOT_INSTRUCTIONS, DEFAULT_HOT_ISSUES};
pub use cache::{CacheStats, CompiledFrame, FrameKey};
pub use compile::OptLevel;
pub use error::JitError;

use cache::Cache;
use compile::Compiler;
use gpu16_machine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::{Backend, BackendError, CoreExit, CoreState, GroupExit, InstrFrame, Port};
use std::rc::Rc;

/// How compiled code runs the cores of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// One core at a time, each frame translated for one core (scalar registers).
    PerCore,
    /// Every group of cores at the same IP of the same frame in the same cycle together,
    /// one host vector instruction per emulated instruction for all of them (lone cores
    /// included).
    Lockstep,
    /// Lockstep for groups of at least [`ADAPTIVE_GROUP`] cores, per-core otherwise.
    #[default]
    Adaptive,
}

/// The smallest group `Engine::Adaptive` runs in lockstep.
pub const ADAPTIVE_GROUP: u32 = 2;

impl Engine {
    /// The engine's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Engine::PerCore => "percore",
            Engine::Lockstep => "lockstep",
            Engine::Adaptive => "adaptive",
        }
    }

    /// The smallest group this engine runs in lockstep (0: none).
    pub fn group_size(self) -> u32 {
        match self {
            Engine::PerCore => 0,
            Engine::Lockstep => 1,
            Engine::Adaptive => ADAPTIVE_GROUP,
        }
    }
}

/// Tuning of the JIT and its code cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JitOptions {
    /// How hard Cranelift works on a frame.
    pub opt_level: OptLevel,
    /// How compiled code runs the cores of a task.
    pub engine: Engine,
    /// Frames compiled into one Cranelift module (the unit of freeing).
    pub frames_per_module: usize,
    /// Modules kept; a new one beyond this evicts the oldest.
    pub max_modules: usize,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            opt_level: OptLevel::None,
            engine: Engine::Adaptive,
            frames_per_module: 64,
            max_modules: 16,
        }
    }
}

/// The JIT backend: every frame runs compiled.
pub struct Jit {
    pub(crate) cache: Cache,
    engine: Engine,
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
            engine: options.engine,
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

    fn group_size(&self) -> u32 {
        self.engine.group_size()
    }

    fn run_group(
        &mut self,
        code: &Self::Code,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> GroupExit {
        self.run_lanes(code, group, cores, port)
    }
}

impl Jit {
    /// Run a group in `code`'s lockstep form, compiling it on first use; a frame whose
    /// lockstep form does not compile runs interpreted in lockstep (same results).
    pub(crate) fn run_lanes(
        &mut self,
        code: &CompiledFrame,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> GroupExit {
        let key = InstrFrame::from_instrs(code.instrs).bytes();
        match self.cache.lanes(&key, code) {
            Ok(lanes) => lanes::enter(&lanes, &code.instrs, group, cores, port),
            Err(e) => {
                if !code.lanes_failed.replace(true) {
                    eprintln!("warning: jit: running a frame's lockstep form interpreted ({e})");
                }
                gpu16_interp::interpret_group(&code.instrs, group, cores, port)
            }
        }
    }
}
