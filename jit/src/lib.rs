#![deny(missing_docs)]
//! gpu16's Cranelift JIT backend: [`Jit`] compiles every instruction frame to native code
//! (cached by the frame's bytes), and [`Auto`] interprets a frame until it is hot, then runs
//! it compiled. Both behave exactly like the reference interpreter, `gpu16_interp`.

mod abi;
mod auto;
mod cache;
mod cohort;
mod cohort_compile;
mod cohort_sync;
mod compile;
mod error;
mod hot_table;
mod interpreted;
mod lanes;
mod lanes_compile;
mod runtime;
mod slots_compile;
mod transpose;
mod worker;

pub use auto::{
    Auto, AutoCode, CompileMode, Hotness, DEFAULT_HOT_INSTRUCTIONS, DEFAULT_HOT_ISSUES,
    MAX_PENDING_COMPILES,
};
pub use cache::{CacheStats, CompiledFrame, FrameKey};
pub use compile::OptLevel;
pub use error::JitError;
pub use hot_table::{Cold, HOT_TABLE_FRAMES};
pub use interpreted::GroupInterpreter;

use cache::Cache;
use compile::{Compiler, Form, MachineCode};
use gpu16_machine::engine::backend::{
    Backend, BackendError, CoreExit, CoreState, GroupShape, Port,
};
use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::engine::slot_run::{SlotCompiler, SlotRun};
use gpu16_machine::InstrFrame;
use std::rc::Rc;

/// How compiled code runs the cores of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// One core at a time, each frame translated for one core (scalar registers).
    PerCore,
    /// Every group of cores at the same IP of the same frame in the same cycle together,
    /// one host vector instruction per emulated instruction for all of them (lone cores
    /// included). Where the cores of a group part ways on a bank they share, or some sleep
    /// on a lock, they go on as a cohort: vector lanes with an IP each, every live IP's
    /// instruction executed for its lanes under a mask, cycle by cycle.
    Lockstep,
    /// Lockstep where it pays: a group of two or more cores whose accesses may interleave
    /// (two of them may touch the same bank), that do not touch memory at all, or where
    /// core k touches bank k only (a plain access is then one vector load or store of a
    /// row of the 16 banks); per-core for a lone core, and for cores that keep to banks of
    /// their own in another pattern, which run natively without taking turns and with
    /// their plain accesses inline.
    #[default]
    Adaptive,
}

impl Engine {
    /// The engine's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Engine::PerCore => "percore",
            Engine::Lockstep => "lockstep",
            Engine::Adaptive => "adaptive",
        }
    }

    /// Whether this engine runs `group` in lockstep.
    pub fn takes_group(self, group: GroupShape) -> bool {
        match self {
            Engine::PerCore => false,
            Engine::Lockstep => true,
            Engine::Adaptive => {
                group.cores.count_ones() >= 2
                    && (group.shares_banks || !group.touches_memory || group.own_banks)
            }
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

impl JitOptions {
    /// The options `auto` compiles with unless told otherwise: the defaults, with Cranelift
    /// optimising the vector forms ([`OptLevel::Vectors`]). A frame `auto` compiles proved
    /// hot, so it runs long enough to repay the slower compile, which `auto` makes in the
    /// background.
    pub fn hot() -> JitOptions {
        JitOptions {
            opt_level: OptLevel::Vectors,
            ..JitOptions::default()
        }
    }
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
    /// See [`Jit::row_accesses`].
    row_accesses: u64,
    /// See [`Jit::handed_over`].
    handed_over: u64,
}

impl Jit {
    /// A JIT with default options. Panics if Cranelift does not support the host.
    pub fn new() -> Jit {
        Jit::with_options(JitOptions::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A JIT with `options`, or why Cranelift cannot start on this host.
    pub fn with_options(options: JitOptions) -> Result<Jit, JitError> {
        let compiler = Compiler::new(options.opt_level, runtime::callbacks())?;
        Ok(Jit {
            cache: Cache::new(compiler, options.frames_per_module, options.max_modules),
            engine: options.engine,
            row_accesses: 0,
            handed_over: 0,
        })
    }

    /// The code cache's counters.
    pub fn stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// Memory accesses that lockstep code performed as rows of the cores' own banks (one
    /// per core and access; see `GroupShape::own_banks`), in every run so far.
    pub fn row_accesses(&self) -> u64 {
        self.row_accesses
    }

    /// Instructions compiled code handed to the interpreter, in every run so far: where a
    /// segment would cross the limit, and from an IP compiled code cannot be entered at (a
    /// core stopped mid-segment at a checkpoint), up to its next entry point only.
    pub fn handed_over(&self) -> u64 {
        self.handed_over
    }

    /// Compile `frame`'s per-core form, or its lockstep form, now rather than when a core
    /// first runs it (benchmarks of compile latency use this).
    pub fn precompile(&mut self, frame: &InstrFrame, lockstep: bool) -> Result<(), JitError> {
        let code = self.cache.frame(&frame.bytes(), &frame.instrs);
        if lockstep {
            self.cache.lanes(&code).map(drop)
        } else {
            self.cache.scalar(&code).map(drop)
        }
    }

    /// The cached code of `frame`, if it was compiled and not evicted.
    pub(crate) fn lookup(&mut self, key: &FrameKey) -> Option<Rc<CompiledFrame>> {
        self.cache.get(key)
    }

    /// `instrs` with its per-core form compiled now, for `auto`, which decides when a frame
    /// is worth compiling.
    pub(crate) fn compile(
        &mut self,
        key: &FrameKey,
        instrs: &[Instr; FRAME_INSTRS],
    ) -> Result<Rc<CompiledFrame>, JitError> {
        let frame = self.cache.frame(key, instrs);
        self.cache.scalar(&frame)?;
        Ok(frame)
    }

    /// The frame `instrs` with forms compiled on another thread (`made`) placed in the
    /// cache, for `auto`'s background compiles.
    pub(crate) fn adopt(
        &mut self,
        key: &FrameKey,
        instrs: &[Instr; FRAME_INSTRS],
        made: &[MachineCode],
    ) -> Result<Rc<CompiledFrame>, JitError> {
        let frame = self.cache.frame(key, instrs);
        for code in made {
            if code.form == Form::Lanes {
                self.cache.lanes_from(&frame, Some(code))?;
            } else {
                self.cache.scalar_from(&frame, Some(code))?;
            }
        }
        Ok(frame)
    }

    /// Run one core in `code`'s per-core form, compiling it on first use; a frame whose
    /// form does not compile runs interpreted (same results), with one warning.
    pub(crate) fn run_scalar(
        &mut self,
        code: &Rc<CompiledFrame>,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit {
        // A debugger's search for breakpoints runs code that hands each core coming to one
        // to the interpreter, which notes it (see `compile::shape_stopping`); one for
        // watched writes runs the plain code, whose every access then goes through the
        // port (see `Port::watching`).
        let compiled = match port.stops() {
            0 => self.cache.scalar(code),
            stops => self.cache.scalar_stopping(code, stops),
        };
        match compiled {
            Ok(scalar) => runtime::enter(&scalar, code, core, port, &mut self.handed_over),
            Err(e) => {
                warn_once(code, &e);
                gpu16_interp::interpret(&code.instrs, core, port)
            }
        }
    }

    /// Run a group in `code`'s lockstep form, compiling it on first use; a frame whose
    /// form does not compile runs interpreted in lockstep (same results), with one warning.
    pub(crate) fn run_lanes(
        &mut self,
        code: &Rc<CompiledFrame>,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> [Option<CoreExit>; 16] {
        let stops = port.stops();
        let compiled = match stops {
            0 => self.cache.lanes(code),
            stops => self.cache.lanes_stopping(code, stops),
        };
        match compiled {
            Ok(lanes) => {
                let cache = &mut self.cache;
                lanes::enter(
                    &lanes,
                    &code.instrs,
                    group,
                    cores,
                    port,
                    &mut self.row_accesses,
                    &mut self.handed_over,
                    // The cohort form notes no stops: with breakpoints, cohorts are
                    // interpreted.
                    || {
                        if stops != 0 {
                            return None;
                        }
                        match cache.cohort(code) {
                            Ok(cohort) => Some(cohort),
                            Err(e) => {
                                warn_once(code, &e);
                                None
                            }
                        }
                    },
                )
            }
            Err(e) => {
                warn_once(code, &e);
                interpreted::interpret_group(&code.instrs, group, cores, port)
            }
        }
    }
}

/// Say once per frame that it runs interpreted because it did not compile.
fn warn_once(code: &CompiledFrame, e: &JitError) {
    if !code.failed.replace(true) {
        eprintln!("warning: jit: interpreting a frame that did not compile ({e})");
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
        Ok(self.cache.frame(&frame.bytes(), &frame.instrs))
    }

    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit {
        self.run_scalar(code, core, port)
    }

    fn takes_groups(&self) -> bool {
        self.engine != Engine::PerCore
    }

    fn takes_group(&self, group: GroupShape) -> bool {
        self.engine.takes_group(group)
    }

    fn run_group(
        &mut self,
        code: &Self::Code,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> [Option<CoreExit>; 16] {
        self.run_lanes(code, group, cores, port)
    }
}

impl SlotCompiler for Jit {
    /// Every MCST frame's slot form, compiled at the engine's first want. A frame whose
    /// form does not compile is stepped by the engine (same results), with a warning.
    fn slot_code(&mut self, words: &[u16; FRAME_INSTRS], _asked: u64) -> Option<Rc<dyn SlotRun>> {
        match self.cache.slots(words) {
            Ok(code) => Some(code),
            Err(e) => {
                eprintln!("warning: jit: stepping an MCST frame that did not compile ({e})");
                None
            }
        }
    }
}
