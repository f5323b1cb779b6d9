//! The `auto` backend: a frame is interpreted until it is hot, then compiled and run
//! natively from then on. Hot means issued `hot_issues` times, or `hot_instructions`
//! instructions interpreted in it (ski rental: a compile costs about as much as
//! interpreting 80,000 instructions, so a frame issued once but looping for millions of
//! instructions switches after the first core's run instead of never). Since the JIT equals
//! the interpreter, the switch cannot change any result, only the speed.
//!
//! Auto is built never to cost much more than the interpreter: a frame is counted in a
//! fixed-size table (`hot_table.rs`), so fresh frames cost a hash and a compare and no
//! memory; the JIT is created at the first hot frame, not before; the run loop's later
//! issues of a frame come through [`Backend::reissue`] with the frame's own counters, no
//! lookup; and by default a hot frame is compiled on a background thread (`worker.rs`)
//! while the interpreter keeps running it (in short slices, so that a long-running frame
//! looks again soon), its code taking over at the frame's next issue or run once ready. A frame the JIT cannot compile is interpreted instead, with one
//! warning on stderr.

use crate::cache::CompiledFrame;
use crate::error::JitError;
use crate::hot_table::{self, Cold, HotTable, State};
use crate::interpreted::interpret_group;
use crate::worker::{Done, Gone, Request, Worker};
use crate::{Engine, Jit, JitOptions};
use gpu16_interp::interpret;
use gpu16_machine::engine::backend::{
    Backend, BackendError, CoreExit, CoreState, GroupShape, Port,
};
use gpu16_machine::engine::isa::FRAME_INSTRS;
use gpu16_machine::engine::slot_run::{SlotCompiler, SlotRun};
use gpu16_machine::InstrFrame;
use std::rc::Rc;

/// Issues after which a frame is compiled regardless of how little it ran.
pub const DEFAULT_HOT_ISSUES: u32 = 1000;
/// Interpreted instructions after which a frame is compiled: one compile's worth
/// (measured: ~230 us per frame, the interpreter runs ~310 M instructions/s).
pub const DEFAULT_HOT_INSTRUCTIONS: u64 = 80_000;

/// Frames queued or being compiled in the background at most. A frame that becomes hot
/// while the queue is full keeps being interpreted and asks again at its next issue or
/// run, so a burst of hot frames cannot queue work (or memory) without bound.
pub const MAX_PENDING_COMPILES: usize = 16;

/// Cycles a frame whose compile is under way is interpreted at a time: the core (or group)
/// then parks, as at a limit, and the run loop runs it again at once, which is when its
/// code, if ready, takes over. Without it a frame looping for millions of cycles would only
/// look again at the run loop's next checkpoint (2^18 cycles). 4096 cycles of 16 cores are
/// ~0.2 ms of interpreting, about a compile's time, against microseconds of rescheduling.
const PENDING_SLICE: u64 = 4096;

/// A frame as `Auto` runs it.
#[derive(Clone, Debug)]
pub enum AutoCode {
    /// Not compiled (yet): interpreted, counting towards hot.
    Interpreted(Rc<Cold>),
    /// Compiled: runs natively.
    Compiled(Rc<CompiledFrame>),
}

/// When `Auto` compiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hotness {
    /// Issues after which a frame is compiled.
    pub issues: u32,
    /// Interpreted instructions after which a frame is compiled.
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

/// Where `Auto` compiles a hot frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CompileMode {
    /// At once, on the thread running the program, which waits for it: the switch to
    /// compiled code happens exactly at the threshold (tests and deterministic benchmarks).
    Synchronous,
    /// On a background thread while the interpreter keeps running the frame; its code
    /// takes over at a later issue or run, whenever it is ready.
    #[default]
    Background,
}

/// The backend that interprets a frame until it is hot, then runs it compiled.
pub struct Auto {
    hot: Hotness,
    options: JitOptions,
    mode: CompileMode,
    table: HotTable,
    /// Built at the first hot frame.
    jit: Option<Jit>,
    /// The JIT or the compile thread could not start, or the thread died: every frame is
    /// interpreted from now on.
    broken: bool,
    /// Started at the first hot frame, in background mode.
    worker: Option<Worker>,
    /// Frames at the worker, by ticket (`MAX_PENDING_COMPILES` tickets).
    pending: Vec<Option<Rc<Cold>>>,
    in_flight: usize,
    /// Tests make the worker fail.
    #[cfg(test)]
    fault: Option<crate::worker::Fault>,
}

impl Auto {
    /// Default thresholds and JIT options for hot frames ([`JitOptions::hot`]), compiling in
    /// the background. Panics if Cranelift does not support the host.
    pub fn new() -> Auto {
        Auto::with_options(Hotness::default(), JitOptions::hot()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Compile a frame at its `hot_issues`-th issue (0 or 1: at the first), with no
    /// instruction budget, synchronously (so exactly there).
    pub fn with_threshold(hot_issues: u32) -> Auto {
        Auto::with_hotness(Hotness {
            issues: hot_issues,
            instructions: u64::MAX,
        })
    }

    /// Compile when `hot` says, synchronously (so exactly then), with the JIT options for hot
    /// frames ([`JitOptions::hot`]). Panics if Cranelift does not support the host.
    pub fn with_hotness(hot: Hotness) -> Auto {
        Auto::with_mode(hot, JitOptions::hot(), CompileMode::Synchronous)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Compile when `hot` says, in the background, with `options`; or why the JIT cannot
    /// start on this host.
    pub fn with_options(hot: Hotness, options: JitOptions) -> Result<Auto, JitError> {
        Auto::with_mode(hot, options, CompileMode::Background)
    }

    /// Compile when `hot` says, where `mode` says, with `options`; or why the JIT cannot
    /// start on this host. Creates no JIT yet: that waits for the first hot frame.
    pub fn with_mode(
        hot: Hotness,
        options: JitOptions,
        mode: CompileMode,
    ) -> Result<Auto, JitError> {
        crate::compile::check_host()?;
        Ok(Auto {
            hot,
            options,
            mode,
            table: HotTable::new(),
            jit: None,
            broken: false,
            worker: None,
            pending: Vec::new(),
            in_flight: 0,
            #[cfg(test)]
            fault: None,
        })
    }

    /// Where this backend compiles hot frames.
    pub fn mode(&self) -> CompileMode {
        self.mode
    }

    /// The JIT that compiles hot frames, once a frame was hot.
    pub fn jit(&self) -> Option<&Jit> {
        self.jit.as_ref()
    }

    /// Whether the JIT (a Cranelift compiler, and modules as code is placed) exists yet.
    pub fn jit_built(&self) -> bool {
        self.jit.is_some()
    }

    /// Frames counted towards hot now; never more than [`crate::HOT_TABLE_FRAMES`].
    pub fn counted(&self) -> usize {
        self.table.len()
    }

    /// Frames the hotness table has room for, fixed when `Auto` is made.
    pub fn counted_capacity(&self) -> usize {
        self.table.capacity()
    }

    /// Compiles queued or under way in the background.
    pub fn compiles_pending(&self) -> usize {
        self.in_flight
    }

    /// Wait for every background compile under way and take its code into use, so that
    /// what follows runs compiled without racing the worker (tests, benchmarks).
    pub fn wait_for_compiles(&mut self) {
        while self.in_flight > 0 {
            let Some(worker) = &self.worker else { return };
            match worker.wait_done() {
                Ok(done) => self.finish(done),
                Err(Gone) => self.worker_gone(),
            }
        }
    }

    /// One more issue of `cold`'s frame, and the code it runs as now.
    fn issue(&mut self, cold: &Rc<Cold>) -> AutoCode {
        cold.issues.set(cold.issues.get().saturating_add(1));
        match cold.state.get() {
            State::Counting if self.is_hot(cold) => self.heat(cold),
            State::Pending => self.collect(),
            _ => {}
        }
        match &*cold.compiled.borrow() {
            Some(code) => AutoCode::Compiled(code.clone()),
            None => AutoCode::Interpreted(cold.clone()),
        }
    }

    fn is_hot(&self, cold: &Cold) -> bool {
        cold.issues.get() >= self.hot.issues || cold.interpreted.get() >= self.hot.instructions
    }

    /// The compiled code of a frame issued cold that has since become available, or run
    /// past its instruction budget (compiling it now, in synchronous mode); `None` to keep
    /// interpreting. Two compares on the common path of a cold frame.
    fn hot_code(&mut self, cold: &Rc<Cold>) -> Option<Rc<CompiledFrame>> {
        match cold.state.get() {
            State::Counting if cold.interpreted.get() < self.hot.instructions => return None,
            State::Counting => self.heat(cold),
            State::Pending => self.collect(),
            State::Failed => return None,
            State::Compiled => {}
        }
        cold.compiled.borrow().clone()
    }

    /// `cold` is hot: compile it now or ask the worker to.
    fn heat(&mut self, cold: &Rc<Cold>) {
        let (mode, opt) = (self.mode, self.options.opt_level);
        let Some(jit) = self.built_jit() else {
            cold.state.set(State::Failed);
            return;
        };
        match mode {
            CompileMode::Synchronous => match jit.compile(&cold.key, &cold.instrs) {
                Ok(code) => self.compiled(cold, code),
                Err(e) => fall_back(cold, &e),
            },
            CompileMode::Background => {
                if self.worker.is_none() {
                    match Worker::spawn(opt) {
                        Ok(w) => {
                            self.worker = Some(w);
                            self.pending = vec![None; MAX_PENDING_COMPILES];
                        }
                        Err(e) => return self.break_down(cold, &e.to_string()),
                    }
                }
                self.request(cold);
            }
        }
    }

    /// The JIT, built now if this is the first hot frame; `None` if it cannot be.
    fn built_jit(&mut self) -> Option<&mut Jit> {
        if self.jit.is_none() && !self.broken {
            match Jit::with_options(self.options) {
                Ok(jit) => self.jit = Some(jit),
                Err(e) => {
                    self.broken = true;
                    eprintln!("warning: auto: interpreting every frame: {e}");
                }
            }
        }
        self.jit.as_mut()
    }

    /// Queue `cold` at the worker, unless the queue is full (then it stays counting, hot,
    /// and asks again at its next issue or run).
    fn request(&mut self, cold: &Rc<Cold>) {
        let free = |pending: &[Option<Rc<Cold>>]| pending.iter().position(Option::is_none);
        let ticket = match free(&self.pending) {
            Some(ticket) => ticket,
            None => {
                // Frees the tickets of finished compiles whose frames were not run since.
                self.collect();
                match free(&self.pending) {
                    Some(ticket) if !self.broken => ticket,
                    _ => return,
                }
            }
        };
        let engine = self.options.engine;
        let request = Request {
            ticket,
            instrs: cold.instrs,
            scalar: engine != Engine::Lockstep,
            lanes: engine != Engine::PerCore,
            lanes_first: cold.grouped.get(),
            #[cfg(test)]
            fault: self.fault,
        };
        let worker = self.worker.as_ref().expect("started before requests");
        if worker.send(request).is_err() {
            return self.worker_gone();
        }
        self.pending[ticket] = Some(cold.clone());
        self.in_flight += 1;
        cold.state.set(State::Pending);
    }

    /// Take into use whatever code the worker has finished, without waiting.
    fn collect(&mut self) {
        while self.in_flight > 0 {
            let Some(worker) = &self.worker else { return };
            match worker.try_done() {
                Ok(Some(done)) => self.finish(done),
                Ok(None) => return,
                Err(Gone) => return self.worker_gone(),
            }
        }
    }

    /// Place a finished request's code, or interpret its frame for good if it failed.
    fn finish(&mut self, done: Done) {
        let Some(cold) = self.pending.get_mut(done.ticket).and_then(Option::take) else {
            return;
        };
        self.in_flight -= 1;
        let jit = self.jit.as_mut().expect("built before the request");
        match done
            .code
            .and_then(|code| jit.adopt(&cold.key, &cold.instrs, &code))
        {
            Ok(code) => self.compiled(&cold, code),
            Err(e) => fall_back(&cold, &e),
        }
    }

    /// `cold`'s frame compiled to `code`: later issues and runs use it, and the table
    /// forgets the frame (the JIT's cache finds it from now on).
    fn compiled(&mut self, cold: &Rc<Cold>, code: Rc<CompiledFrame>) {
        *cold.compiled.borrow_mut() = Some(code);
        cold.state.set(State::Compiled);
        self.table.remove(cold);
    }

    /// The worker died: say so once, and interpret every frame from now on.
    fn worker_gone(&mut self) {
        self.worker = None;
        self.in_flight = 0;
        for cold in self.pending.iter_mut().filter_map(Option::take) {
            cold.state.set(State::Failed);
        }
        if !self.broken {
            self.broken = true;
            eprintln!("warning: auto: the background compiler stopped; interpreting every frame");
        }
    }

    /// The compile thread cannot start: interpret `cold` and every later frame.
    fn break_down(&mut self, cold: &Cold, why: &str) {
        cold.state.set(State::Failed);
        self.broken = true;
        eprintln!("warning: auto: interpreting every frame: {why}");
    }

    /// The JIT, which exists wherever compiled code does.
    fn jit_mut(&mut self) -> &mut Jit {
        self.jit
            .as_mut()
            .expect("compiled code comes from a built JIT")
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

    /// A frame's first issue in a run (or every issue, for a run loop that keeps no
    /// code): found in the table, or compiled before and found in the JIT's cache, or
    /// counted from now on.
    fn prepare(&mut self, frame: &InstrFrame) -> Result<Self::Code, BackendError> {
        let key = frame.bytes();
        let hash = hot_table::hash(&key);
        if let Some(cold) = self.table.get(&key, hash) {
            return Ok(self.issue(&cold));
        }
        // A frame in the table is not compiled (compiling removes it), so only a fresh
        // frame looks in the JIT's cache, and only once something was hot.
        if let Some(code) = self.jit.as_mut().and_then(|jit| jit.lookup(&key)) {
            return Ok(AutoCode::Compiled(code));
        }
        let cold = self.table.insert(&key, hash, &frame.instrs);
        Ok(self.issue(&cold))
    }

    /// A later issue: counted in the frame's own entry, which also carries its code once
    /// compiled.
    fn reissue(&mut self, code: &Self::Code) -> Result<Self::Code, BackendError> {
        Ok(match code {
            AutoCode::Compiled(_) => code.clone(),
            AutoCode::Interpreted(cold) => self.issue(cold),
        })
    }

    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit {
        let cold = match code {
            AutoCode::Compiled(code) => return self.jit_mut().run_scalar(code, core, port),
            AutoCode::Interpreted(cold) => cold,
        };
        if let Some(code) = self.hot_code(cold) {
            return self.jit_mut().run_scalar(&code, core, port);
        }
        let before = core.instructions;
        cold.grouped.set(false);
        let until = slice_end(cold, core.cycle);
        let exit = port.within(until, |port| interpret(&cold.instrs, core, port));
        let ran = core.instructions - before;
        cold.interpreted
            .set(cold.interpreted.get().saturating_add(ran));
        exit
    }

    fn takes_groups(&self) -> bool {
        self.options.engine != Engine::PerCore
    }

    fn takes_group(&self, group: GroupShape) -> bool {
        self.options.engine.takes_group(group)
    }

    fn run_group(
        &mut self,
        code: &Self::Code,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> [Option<CoreExit>; 16] {
        let cold = match code {
            AutoCode::Compiled(code) => return self.jit_mut().run_lanes(code, group, cores, port),
            AutoCode::Interpreted(cold) => cold,
        };
        if let Some(code) = self.hot_code(cold) {
            return self.jit_mut().run_lanes(&code, group, cores, port);
        }
        let before: u64 = cores.iter().map(|c| c.instructions).sum();
        cold.grouped.set(true);
        // From the lowest-numbered core's cycle: where that core is a cycle behind a
        // cohort's first, the slice is a cycle longer, no more.
        let until = slice_end(cold, cores[group.trailing_zeros() as usize & 0xF].cycle);
        let exits = port.within(until, |port| {
            interpret_group(&cold.instrs, group, cores, port)
        });
        let ran = cores.iter().map(|c| c.instructions).sum::<u64>() - before;
        cold.interpreted
            .set(cold.interpreted.get().saturating_add(ran));
        exits
    }
}

impl SlotCompiler for Auto {
    /// An MCST frame's slot form: the one compiled in an earlier run, or, once the engine
    /// has wanted it in this run as many times as a frame is issued before it is hot
    /// ([`Hotness::issues`]), compiled then, synchronously (a dialect program has at most
    /// 64 frames, so few compiles).
    fn slot_code(&mut self, words: &[u16; FRAME_INSTRS], asked: u64) -> Option<Rc<dyn SlotRun>> {
        if asked < u64::from(self.hot.issues) {
            let cached = self.jit.as_mut()?.cache.cached_slots(words)?;
            return Some(cached);
        }
        self.built_jit()?.slot_code(words, asked)
    }
}

/// The limit for interpreting `cold` from `cycle`: [`PENDING_SLICE`] cycles on while its
/// compile is under way, else none of auto's own.
fn slice_end(cold: &Cold, cycle: u64) -> u64 {
    match cold.state.get() {
        State::Pending => cycle.saturating_add(PENDING_SLICE),
        _ => u64::MAX,
    }
}

/// A frame the JIT could not compile stays interpreted, which gives the same results; the
/// user hears of it once.
fn fall_back(cold: &Cold, e: &JitError) {
    cold.state.set(State::Failed);
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
    use crate::worker::Fault;
    use gpu16_interp::Interpreter;
    use gpu16_machine::engine::isa::AluOp;
    use gpu16_machine::engine::isa::Instr;
    use gpu16_machine::frame::{ControlFrame, Fence};
    use gpu16_machine::{run, Config, Program, RunReport};
    use std::sync::Arc;

    /// The loop frame of `hot_program`.
    fn hot_frame() -> InstrFrame {
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
        InstrFrame::padded(&code, Instr::Ready)
    }

    /// Sixteen cores count r9 down from 200 in a loop, issued twice: hot on both counts.
    fn hot_program() -> Program {
        let cf = ControlFrame::new(2, Fence::No, 0xFFFF, &[]).encode();
        let f = hot_frame().bytes();
        Program::from_frames(vec![cf, f, f]).unwrap()
    }

    fn interpreted(p: &Program) -> RunReport {
        run(&mut Interpreter::new(), p, &[], &Config::default()).unwrap()
    }

    fn same(got: &RunReport, want: &RunReport) {
        assert_eq!(got.registers, want.registers);
        assert_eq!(got.memory, want.memory);
        assert_eq!(got.cycles, want.cycles);
        assert_eq!(got.instructions, want.instructions);
    }

    /// The table's entry for `frame`.
    fn entry(auto: &mut Auto, frame: &InstrFrame) -> Option<Rc<Cold>> {
        let key = frame.bytes();
        auto.table.get(&key, hot_table::hash(&key))
    }

    #[test]
    fn a_frame_that_fails_to_compile_is_interpreted() {
        let p = hot_program();
        let want = interpreted(&p);
        let mut auto = Auto::with_hotness(Hotness {
            issues: 1,
            instructions: 10,
        });
        auto.built_jit().expect("the host has a JIT").cache.fail = true;
        let got = run(&mut auto, &p, &[], &Config::default()).expect("interpreted instead");
        same(&got, &want);
        assert_eq!(auto.jit().unwrap().stats().compiled, 0);
        let cold = entry(&mut auto, &hot_frame()).expect("the frame stays in the table");
        assert_eq!(
            cold.state.get(),
            State::Failed,
            "marked, so it is not tried again"
        );
    }

    #[test]
    fn the_jit_backend_interprets_a_frame_that_fails_to_compile() {
        let p = hot_program();
        let want = interpreted(&p);
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

    /// An auto compiling in the background whose worker fails as `fault` says.
    fn faulty(fault: Fault) -> Auto {
        let hot = Hotness {
            issues: 1,
            instructions: 10,
        };
        let mut auto = Auto::with_options(hot, JitOptions::default()).unwrap();
        auto.fault = Some(fault);
        auto
    }

    #[test]
    fn a_background_compile_that_fails_or_panics_leaves_its_frame_interpreted() {
        let p = hot_program();
        let want = interpreted(&p);
        for fault in [Fault::Error, Fault::Panic] {
            let mut auto = faulty(fault);
            let got = run(&mut auto, &p, &[], &Config::default()).unwrap();
            same(&got, &want);
            auto.wait_for_compiles();
            let cold = entry(&mut auto, &hot_frame()).expect("still counted");
            assert_eq!(cold.state.get(), State::Failed, "{fault:?}");
            let again = run(&mut auto, &p, &[], &Config::default()).unwrap();
            same(&again, &want);
            let stats = auto.jit().unwrap().stats();
            assert_eq!((stats.compiled, stats.lanes_compiled), (0, 0), "{fault:?}");
            assert!(
                !auto.broken,
                "one frame's failure leaves the worker running"
            );
        }
    }

    #[test]
    fn a_worker_that_dies_leaves_every_frame_interpreted() {
        let p = hot_program();
        let want = interpreted(&p);
        let mut auto = faulty(Fault::Die);
        same(&run(&mut auto, &p, &[], &Config::default()).unwrap(), &want);
        auto.wait_for_compiles();
        assert!(auto.broken && auto.worker.is_none());
        same(&run(&mut auto, &p, &[], &Config::default()).unwrap(), &want);
        assert_eq!(auto.jit().unwrap().stats().compiled, 0);
    }

    #[test]
    fn the_worker_thread_ends_when_auto_drops() {
        let mut auto = Auto::with_options(
            Hotness {
                issues: 1,
                instructions: 10,
            },
            JitOptions::default(),
        )
        .unwrap();
        run(&mut auto, &hot_program(), &[], &Config::default()).unwrap();
        let worker = auto.worker.as_ref().expect("a hot frame started it");
        assert!(!worker.ended());
        // The worker, its thread (until it returns) and this test hold the flag.
        let stop = worker.stop.clone();
        assert_eq!(Arc::strong_count(&stop), 3);
        drop(auto);
        assert_eq!(Arc::strong_count(&stop), 1, "the thread has ended");
    }

    #[test]
    fn a_full_queue_drops_the_request_and_the_frame_asks_again() {
        let mut auto = Auto::with_options(
            Hotness {
                issues: 1,
                instructions: u64::MAX,
            },
            JitOptions::default(),
        )
        .unwrap();
        let frame = InstrFrame::padded(&[Instr::SetConst { k: 5, d: 1 }], Instr::Ready);
        // Every ticket taken by a frame whose compile never comes back.
        auto.built_jit().unwrap();
        auto.worker = Some(Worker::spawn(auto.options.opt_level).unwrap());
        let parked = Rc::new(Cold::new([0; 32], [Instr::Nop; FRAME_INSTRS]));
        auto.pending = vec![Some(parked); MAX_PENDING_COMPILES];
        let code = auto.prepare(&frame).unwrap();
        let AutoCode::Interpreted(cold) = code else {
            panic!("no ticket, so not compiled")
        };
        assert_eq!(cold.state.get(), State::Counting, "dropped, still counting");
        assert_eq!(auto.in_flight, 0);
        // A ticket frees: the frame's next issue asks again and gets compiled.
        auto.pending[3] = None;
        let code = auto.reissue(&AutoCode::Interpreted(cold.clone())).unwrap();
        assert!(matches!(code, AutoCode::Interpreted(_)));
        assert_eq!(cold.state.get(), State::Pending);
        auto.wait_for_compiles();
        let code = auto.reissue(&AutoCode::Interpreted(cold.clone())).unwrap();
        assert!(matches!(code, AutoCode::Compiled(_)), "compiled now");
        assert_eq!(cold.issues(), 3);
    }
}
