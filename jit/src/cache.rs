//! The code cache: compiled frames keyed by their 32 bytes, stored in a bounded number of
//! Cranelift modules ("generations"). cranelift-jit frees code only a whole module at a time,
//! so when the cache is full the oldest generation leaves the map, and its module is freed
//! as soon as no `Code` handle (held by cores still running it) points into it.

use crate::abi::{CohortEntryFn, EntryFn, LaneEntryFn, SlotEntryFn};
use crate::compile::{self, Compiler, Form, MachineCode};
use crate::error::JitError;
use cranelift_jit::JITModule;
use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

/// The 32 bytes of an instruction frame.
pub type FrameKey = [u8; 32];

/// A frame as the JIT runs it: its per-core form and its lockstep form, each compiled
/// when first needed (a frame that only ever runs in lockstep never compiles the other).
/// Cloning the `Rc` keeps the machine code alive.
pub struct CompiledFrame {
    key: FrameKey,
    /// For the interpreter when compiled code hands a core back.
    pub(crate) instrs: [Instr; FRAME_INSTRS],
    /// The code performs plain ld/st itself and needs the port's `DirectAccess` views.
    pub(crate) direct: bool,
    scalar: RefCell<Option<Rc<ScalarCode>>>,
    lanes: RefCell<Option<Rc<LaneCode>>>,
    cohort: RefCell<Option<Rc<CohortCode>>>,
    /// The per-core and lockstep forms for a debugger's search, with the stop IPs each was
    /// compiled for (`compile::shape_stopping`): one each, replaced when the stops change.
    scalar_stops: StopSlot<EntryFn>,
    lanes_stops: StopSlot<LaneEntryFn>,
    /// A form failed to compile (said once; that form runs interpreted).
    pub(crate) failed: Cell<bool>,
}

/// A form of a frame compiled for a debugger's stops, with the stop IPs it was compiled
/// for.
type StopSlot<F> = RefCell<Option<(u16, Rc<Code<F>>)>>;

/// One compiled form of a frame: its entry, and the module that holds its machine code
/// (cloning the `Rc` around it keeps the code alive).
pub(crate) struct Code<F> {
    pub(crate) entry: F,
    /// The registers the frame's instructions read or write, and those they write (the
    /// compiled code loads and stores exactly these; see `compile::shape`).
    pub(crate) live: u16,
    pub(crate) written: u16,
    /// The frame has memory instructions.
    pub(crate) memory: bool,
    /// The frame has a plain `ld` that may read one row in every lane (its lockstep form
    /// tries the shared-row path there).
    pub(crate) shared_rows: bool,
    /// The frame has plain accesses and no atomic sequence (its lockstep and cohort forms
    /// perform plain accesses themselves below `Port::plain_accesses_until`).
    pub(crate) plain_lanes: bool,
    /// Per IP, the instructions the interpreter runs for a core handed over there
    /// (`compile::instructions_to_entry`).
    pub(crate) to_entry: [u8; FRAME_INSTRS],
    _module: Rc<Generation>,
}

impl<F> Code<F> {
    /// `entry`, compiled from `instrs` into `generation`'s module.
    fn new(entry: F, instrs: &[Instr; FRAME_INSTRS], generation: Rc<Generation>) -> Rc<Code<F>> {
        let shape = crate::compile::shape(instrs);
        Rc::new(Code {
            entry,
            live: shape.read | shape.written,
            written: shape.written,
            memory: instrs.iter().any(Instr::is_memory),
            shared_rows: crate::lanes_compile::tries_shared_rows(instrs),
            plain_lanes: crate::lanes_compile::performs_plain_lanes(instrs),
            to_entry: crate::compile::instructions_to_entry(&shape),
            _module: generation,
        })
    }
}

/// A frame's per-core code (see `compile.rs`).
pub(crate) type ScalarCode = Code<EntryFn>;
/// A frame's lockstep code (see `lanes.rs`).
pub(crate) type LaneCode = Code<LaneEntryFn>;
/// A frame's cohort form (see `cohort.rs`).
pub(crate) type CohortCode = Code<CohortEntryFn>;
/// An MCST frame's slot form (see `slots_compile.rs`).
pub(crate) type SlotsCode = Code<SlotEntryFn>;

impl std::fmt::Debug for CompiledFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledFrame")
            .field("per_core", &self.scalar.borrow().is_some())
            .field("lockstep", &self.lanes.borrow().is_some())
            .field("cohort", &self.cohort.borrow().is_some())
            .finish()
    }
}

/// One JIT module and the counter its release bumps.
struct Generation {
    module: RefCell<Option<JITModule>>,
    freed: Rc<Cell<u64>>,
    /// Takes no more frames: the code generator panicked while compiling into it.
    sealed: Cell<bool>,
}

impl Drop for Generation {
    fn drop(&mut self) {
        if let Some(module) = self.module.get_mut().take() {
            // SAFETY: a generation is dropped only when its last `Rc` goes: the cache has let
            // go of it and no `CompiledFrame` (the only holders of its code addresses) is
            // left, so no pointer into this module can be called again.
            unsafe { module.free_memory() };
            self.freed.set(self.freed.get() + 1);
        }
    }
}

/// Counters for tests and tuning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Frames whose per-core form was compiled so far.
    pub compiled: u64,
    /// Lockstep forms compiled so far (see `lanes.rs`).
    pub lanes_compiled: u64,
    /// MCST slot forms compiled so far (see `slots_compile.rs`).
    pub slots_compiled: u64,
    /// Cohort forms compiled so far (see `cohort.rs`).
    pub cohorts_compiled: u64,
    /// Lookups served without compiling.
    pub hits: u64,
    /// Modules whose memory was released.
    pub modules_freed: u64,
    /// Frames currently in the map.
    pub cached: usize,
}

/// Frame bytes hash with the machine's one frame hasher (the run loop's frame table uses it
/// too).
pub(crate) use gpu16_machine::engine::frame_table::FrameHasher as FastHasher;

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

pub(crate) struct Cache {
    compiler: Compiler,
    map: FastMap<FrameKey, Rc<CompiledFrame>>,
    /// MCST frames' slot forms, by the frame's bytes: a key space of its own, since the
    /// same bytes mean other instructions in the spec dialect.
    slot_map: FastMap<FrameKey, Rc<SlotsCode>>,
    /// Oldest first; the last one receives new code. Each with the keys it holds.
    generations: VecDeque<(Rc<Generation>, Vec<FrameKey>)>,
    frames_per_module: usize,
    max_modules: usize,
    freed: Rc<Cell<u64>>,
    compiled: u64,
    lanes_compiled: u64,
    slots_compiled: u64,
    cohorts_compiled: u64,
    hits: u64,
    /// Tests make every compile fail, to see what the backends do then.
    #[cfg(test)]
    pub(crate) fail: bool,
}

impl Cache {
    pub(crate) fn new(compiler: Compiler, frames_per_module: usize, max_modules: usize) -> Cache {
        Cache {
            compiler,
            map: FastMap::default(),
            slot_map: FastMap::default(),
            generations: VecDeque::new(),
            frames_per_module: frames_per_module.max(1),
            max_modules: max_modules.max(1),
            freed: Rc::new(Cell::new(0)),
            compiled: 0,
            lanes_compiled: 0,
            slots_compiled: 0,
            cohorts_compiled: 0,
            hits: 0,
            #[cfg(test)]
            fail: false,
        }
    }

    pub(crate) fn stats(&self) -> CacheStats {
        CacheStats {
            compiled: self.compiled,
            lanes_compiled: self.lanes_compiled,
            slots_compiled: self.slots_compiled,
            cohorts_compiled: self.cohorts_compiled,
            hits: self.hits,
            modules_freed: self.freed.get(),
            cached: self.map.len(),
        }
    }

    pub(crate) fn get(&mut self, key: &FrameKey) -> Option<Rc<CompiledFrame>> {
        let hit = self.map.get(key).cloned();
        if hit.is_some() {
            self.hits += 1;
        }
        hit
    }

    /// The frame for `key`: the cached one, or a new one with nothing compiled yet (it
    /// enters the cache when a form of it is compiled).
    pub(crate) fn frame(
        &mut self,
        key: &FrameKey,
        instrs: &[Instr; FRAME_INSTRS],
    ) -> Rc<CompiledFrame> {
        self.get(key).unwrap_or_else(|| {
            Rc::new(CompiledFrame {
                key: *key,
                instrs: *instrs,
                direct: crate::compile::has_plain_access(instrs),
                scalar: RefCell::new(None),
                lanes: RefCell::new(None),
                cohort: RefCell::new(None),
                scalar_stops: RefCell::new(None),
                lanes_stops: RefCell::new(None),
                failed: Cell::new(false),
            })
        })
    }

    /// The per-core form of `frame`, compiled on first use.
    pub(crate) fn scalar(&mut self, frame: &Rc<CompiledFrame>) -> Result<Rc<ScalarCode>, JitError> {
        self.scalar_from(frame, None)
    }

    /// The per-core form of `frame`: the one compiled before, or `made` (compiled on another
    /// thread) placed now, or compiled now.
    pub(crate) fn scalar_from(
        &mut self,
        frame: &Rc<CompiledFrame>,
        made: Option<&MachineCode>,
    ) -> Result<Rc<ScalarCode>, JitError> {
        if made.is_some_and(|m| m.form != Form::Scalar) {
            return Err(JitError::Codegen(
                "code of another form offered as per-core".into(),
            ));
        }
        let (code, fresh) = self.form(
            frame,
            &frame.scalar,
            |compiler, module, instrs| match made {
                Some(made) => compile::place(module, made),
                None => compiler.compile(module, instrs, 0),
            },
            // SAFETY: the address is that of a function `compile` or `scalar_code` (its
            // form checked above) declared with the signature `EntryFn` describes (four
            // pointer-sized/i64 params, i32 return, the platform's C calling convention); the
            // `Code` keeps its module alive.
            |entry| unsafe { std::mem::transmute::<*const u8, EntryFn>(entry) },
        )?;
        self.compiled += u64::from(fresh);
        Ok(code)
    }

    /// The lockstep form of `frame`, compiled on first use.
    pub(crate) fn lanes(&mut self, frame: &Rc<CompiledFrame>) -> Result<Rc<LaneCode>, JitError> {
        self.lanes_from(frame, None)
    }

    /// The lockstep form of `frame`: the one compiled before, or `made` (compiled on another
    /// thread) placed now, or compiled now.
    pub(crate) fn lanes_from(
        &mut self,
        frame: &Rc<CompiledFrame>,
        made: Option<&MachineCode>,
    ) -> Result<Rc<LaneCode>, JitError> {
        if made.is_some_and(|m| m.form != Form::Lanes) {
            return Err(JitError::Codegen(
                "code of another form offered as lockstep".into(),
            ));
        }
        let (code, fresh) = self.form(
            frame,
            &frame.lanes,
            |compiler, module, instrs| match made {
                Some(made) => compile::place(module, made),
                None => compiler.compile_lanes(module, instrs, 0),
            },
            // SAFETY: the address is that of a function `compile_lanes` or `lanes_code` (its
            // form checked above) declared with the signature `LaneEntryFn` describes (two
            // pointers and an i64, i32 return, the platform's C calling convention); the
            // `Code` keeps its module alive.
            |entry| unsafe { std::mem::transmute::<*const u8, LaneEntryFn>(entry) },
        )?;
        self.lanes_compiled += u64::from(fresh);
        Ok(code)
    }

    /// The per-core form of `frame` that hands a core to the interpreter before each IP of
    /// `stop_ips` (a debugger's breakpoints), compiled on first use.
    pub(crate) fn scalar_stopping(
        &mut self,
        frame: &Rc<CompiledFrame>,
        stop_ips: u16,
    ) -> Result<Rc<ScalarCode>, JitError> {
        self.stopping(
            frame,
            &frame.scalar_stops,
            stop_ips,
            |compiler, module, instrs| compiler.compile(module, instrs, stop_ips),
            // SAFETY: as in `scalar_from`: the address is that of a function `compile`
            // declared with the signature `EntryFn` describes; the `Code` keeps its module
            // alive.
            |entry| unsafe { std::mem::transmute::<*const u8, EntryFn>(entry) },
        )
    }

    /// The lockstep form of `frame` that hands the group to the interpreter before each IP
    /// of `stop_ips` (a debugger's breakpoints), compiled on first use.
    pub(crate) fn lanes_stopping(
        &mut self,
        frame: &Rc<CompiledFrame>,
        stop_ips: u16,
    ) -> Result<Rc<LaneCode>, JitError> {
        self.stopping(
            frame,
            &frame.lanes_stops,
            stop_ips,
            |compiler, module, instrs| compiler.compile_lanes(module, instrs, stop_ips),
            // SAFETY: as in `lanes_from`: the address is that of a function
            // `compile_lanes` declared with the signature `LaneEntryFn` describes; the
            // `Code` keeps its module alive.
            |entry| unsafe { std::mem::transmute::<*const u8, LaneEntryFn>(entry) },
        )
    }

    /// A form of `frame` for the stops `stop_ips`, held in `slot` with them: the one there
    /// if it was compiled for the same stops, else compiled now (and counted with the
    /// frame's forms).
    fn stopping<F>(
        &mut self,
        frame: &Rc<CompiledFrame>,
        slot: &StopSlot<F>,
        stop_ips: u16,
        compile: impl FnOnce(
            &mut Compiler,
            &mut JITModule,
            &[Instr; FRAME_INSTRS],
        ) -> Result<*const u8, JitError>,
        entry: impl FnOnce(*const u8) -> F,
    ) -> Result<Rc<Code<F>>, JitError> {
        if let Some((stops, code)) = slot.borrow().as_ref() {
            if *stops == stop_ips {
                return Ok(code.clone());
            }
        }
        let fresh = RefCell::new(None);
        let (code, _) = self.form(frame, &fresh, compile, entry)?;
        *slot.borrow_mut() = Some((stop_ips, code.clone()));
        Ok(code)
    }

    /// The cohort form of `frame`, compiled on first use (always here, never on `auto`'s
    /// worker: a frame needs it only once its lockstep form runs and its cores part).
    pub(crate) fn cohort(&mut self, frame: &Rc<CompiledFrame>) -> Result<Rc<CohortCode>, JitError> {
        let (code, fresh) = self.form(
            frame,
            &frame.cohort,
            |compiler, module, instrs| compiler.compile_cohort(module, instrs),
            // SAFETY: the address is that of a function `compile_cohort` just declared with
            // the signature `CohortEntryFn` describes (two pointers and an i64, i32 return,
            // the platform's C calling convention); the `Code` keeps its module alive.
            |entry| unsafe { std::mem::transmute::<*const u8, CohortEntryFn>(entry) },
        )?;
        self.cohorts_compiled += u64::from(fresh);
        Ok(code)
    }

    /// The slot form of the MCST frame `words` if it was compiled and not evicted.
    pub(crate) fn cached_slots(&mut self, words: &[u16; FRAME_INSTRS]) -> Option<Rc<SlotsCode>> {
        let code = self.slot_map.get(&slots_key(words)).cloned();
        if code.is_some() {
            self.hits += 1;
        }
        code
    }

    /// The slot form of the MCST frame `words`, compiled on first use.
    pub(crate) fn slots(&mut self, words: &[u16; FRAME_INSTRS]) -> Result<Rc<SlotsCode>, JitError> {
        if let Some(code) = self.cached_slots(words) {
            return Ok(code);
        }
        let key = slots_key(words);
        #[cfg(test)]
        if self.fail {
            return Err(JitError::Codegen("failure injected by a test".into()));
        }
        let (address, generation) = self.emit(&key, |compiler, module| {
            compiler.compile_slots(module, words)
        })?;
        // SAFETY: the address is that of a function `compile_slots` just declared with the
        // signature `SlotEntryFn` describes (one pointer param, i32 return, the platform's C
        // calling convention); the `Code` keeps its module alive.
        let entry = unsafe { std::mem::transmute::<*const u8, SlotEntryFn>(address) };
        let code = Code::new(entry, &words.map(Instr::decode_mcst), generation);
        self.slots_compiled += 1;
        self.slot_map.insert(key, code.clone());
        Ok(code)
    }

    /// One form of `frame`, held in `slot`: the one compiled before, or compiled now by
    /// `compile` (then `true`), its address made a function by `entry`. A frame enters the
    /// map when its first form is compiled.
    fn form<F>(
        &mut self,
        frame: &Rc<CompiledFrame>,
        slot: &RefCell<Option<Rc<Code<F>>>>,
        compile: impl FnOnce(
            &mut Compiler,
            &mut JITModule,
            &[Instr; FRAME_INSTRS],
        ) -> Result<*const u8, JitError>,
        entry: impl FnOnce(*const u8) -> F,
    ) -> Result<(Rc<Code<F>>, bool), JitError> {
        if let Some(code) = slot.borrow().as_ref() {
            return Ok((code.clone(), false));
        }
        #[cfg(test)]
        if self.fail {
            return Err(JitError::Codegen("failure injected by a test".into()));
        }
        let instrs = frame.instrs;
        let (address, generation) = self.emit(&frame.key, |compiler, module| {
            compile(compiler, module, &instrs)
        })?;
        let code = Code::new(entry(address), &instrs, generation);
        *slot.borrow_mut() = Some(code.clone());
        self.map.entry(frame.key).or_insert_with(|| frame.clone());
        Ok((code, true))
    }

    /// Compile one function into the newest generation (starting a new one, and evicting
    /// the oldest, when it is full or sealed); `key` is the frame it belongs to.
    fn emit(
        &mut self,
        key: &FrameKey,
        compile: impl FnOnce(&mut Compiler, &mut JITModule) -> Result<*const u8, JitError>,
    ) -> Result<(*const u8, Rc<Generation>), JitError> {
        let full = self
            .generations
            .back()
            .is_none_or(|(g, keys)| g.sealed.get() || keys.len() >= self.frames_per_module);
        if full {
            if self.generations.len() >= self.max_modules {
                let (_, keys) = self.generations.pop_front().expect("at least one module");
                for k in keys {
                    self.map.remove(&k);
                    self.slot_map.remove(&k);
                }
            }
            let module = self.compiler.new_module();
            self.generations.push_back((
                Rc::new(Generation {
                    module: RefCell::new(Some(module)),
                    freed: self.freed.clone(),
                    sealed: Cell::new(false),
                }),
                Vec::new(),
            ));
        }
        let (generation, keys) = self.generations.back_mut().expect("just ensured");
        let compiled = {
            let mut module = generation.module.borrow_mut();
            let module = module.as_mut().expect("a live generation has its module");
            catch_unwind(AssertUnwindSafe(|| compile(&mut self.compiler, module)))
        };
        match compiled {
            Ok(entry) => {
                let entry = entry?;
                keys.push(*key);
                Ok((entry, generation.clone()))
            }
            Err(payload) => {
                // A panic inside Cranelift is its bug or ours; either way the frame is not
                // compiled. Its buffers and this module are in an unknown state: start the
                // buffers afresh and put no further frame into the module.
                self.compiler.reset();
                generation.sealed.set(true);
                Err(JitError::Panicked(panic_message(payload.as_ref())))
            }
        }
    }
}

/// The cache key of an MCST frame's slot form: the frame's 32 bytes.
fn slots_key(words: &[u16; FRAME_INSTRS]) -> FrameKey {
    let mut key = [0u8; 32];
    for (pair, w) in key.chunks_exact_mut(2).zip(words) {
        pair.copy_from_slice(&w.to_le_bytes());
    }
    key
}

/// The text of a panic, where it has one.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}
