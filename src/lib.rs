//! The gpu16 facade: load a program and a memory image from files and run them on a chosen
//! backend. The `gpu16` binary is built on this; tests and tools can use it too. The
//! library does not use clap: the binary's command line gives its enums their flags.
//!
//! The pieces:
//! - [`gpu16_asm::assemble`] turns assembly source into a [`Program`] (or
//!   [`input::load_program`] reads a `.s`, `.bin`/`.tm` or `.hex` file);
//! - [`run`] runs it on a [`BackendKind`] under a [`Config`] (issue policy, bank conflicts,
//!   watchdog), starting from a shared-memory image of at most 4096 bytes;
//! - the [`RunReport`] holds the final registers and memory, the cycle count, the task
//!   timeline and counters; a failed run gives a [`RunFailure`]: the
//!   [`RunError`](machine::RunError) and the state when it stopped;
//! - [`run_observed`] also hands every [`Event`](machine::Event) of the run (control frames,
//!   broadcasts, task parts, locks, stalls) to an [`Observer`].
//!
//! The machine model, and the types above, are the `gpu16-machine` crate, re-exported as
//! [`machine`]. `docs/semantics.md` states the machine's rules; `docs/assembly.md` the
//! source language.
//!
//! Beyond one run:
//! - [`input`] loads programs and memory images from files, each within its limits;
//! - [`output`] presents a report: [`output::human::report`] as text,
//!   [`output::json::run_document`] as the `run --json` object;
//! - [`live::machine`] pauses a run between cycles and goes on (Python's `gpu16.Machine`);
//! - [`debugger::Session`] answers `gpu16 debug`'s commands;
//! - [`fuzz`] draws seeded cases and compares backends on them ([`diff`] names the first
//!   divergence); [`timing`] reads `--timing`'s keys.
//!
//! The command line's own parts (its flags, the files a run writes, the playground, signal
//! handling) are the `gpu16` binary's, not this library's.
//!
//! # Example
//!
//! One core adds 2 and 3 and stores the sum at address 0x010. By the timing model the
//! control frame is processed in cycle 0, the instruction frame is broadcast in cycles 1 to
//! 4, and core 0 executes its six instructions in cycles 5 to 10, one a cycle, so the run
//! takes 5 + 6 = 11 cycles.
//!
//! ```
//! use gpu16::machine::{Config, Event, Observer};
//! use gpu16::BackendKind;
//!
//! let source = "
//!     .cf mask=0x0001          ; frame 0: a control frame for core 0
//!     .if                      ; frame 1: its task
//!         set_const 2, r8      ; cycle 5
//!         set_const 3, r9      ; cycle 6
//!         add r8, r9, r3       ; cycle 7: r3 = 2 + 3
//!         set_const 0x10, r10  ; cycle 8
//!         st [r10, r1], r3     ; cycle 9: memory[r1 << 8 | r10] = memory[0x010] = r3
//!         ready                ; cycle 10: core 0's part ends
//! ";
//! let program = gpu16_asm::assemble(source, "add.s").expect("it assembles").program;
//! assert_eq!(program.len(), 2);
//!
//! // Run it: all registers and memory start at zero (`memory` may give up to 4096 bytes).
//! let config = Config { max_cycles: 1_000, ..Config::default() };
//! let report = gpu16::run(BackendKind::Auto, &program, &[], &config).expect("it runs");
//! assert_eq!(report.cycles, 11);
//! assert_eq!(report.instructions, 6);
//! assert_eq!(report.registers[0][3], 5); // core 0, r3
//! assert_eq!(report.memory[0x010], 5);
//! let task = report.tasks[0]; // one task: frame 1 on core 0
//! assert_eq!((task.frame, task.mask), (1, 0x0001));
//! assert_eq!((task.issue, task.start, task.end), (1, 5, 10));
//!
//! // Observe it: an observer receives the run's events as they happen.
//! #[derive(Default)]
//! struct Parts(Vec<(u8, usize, u64, u64)>);
//!
//! impl Observer for Parts {
//!     fn event(&mut self, event: Event) {
//!         if let Event::CorePart { core, frame, start, end } = event {
//!             self.0.push((core, frame, start, end));
//!         }
//!     }
//!     // A fault or a livelock: the run reports again the events complete before its cycle.
//!     fn rewind_events(&mut self, _cycle: u64) {
//!         self.0.clear();
//!     }
//! }
//!
//! let mut parts = Parts::default();
//! let again = gpu16::run_observed(BackendKind::Interp, &program, &[], &config, &mut parts)
//!     .expect("it runs");
//! assert_eq!(parts.0, [(0, 1, 5, 10)]); // core 0 ran frame 1 in cycles 5..=10
//! assert_eq!(again.registers, report.registers); // the backends agree
//!
//! // `Vec<Event>` is an observer that keeps every event.
//! let mut events: Vec<Event> = Vec::new();
//! gpu16::run_observed(BackendKind::Interp, &program, &[], &config, &mut events).unwrap();
//! assert!(events.contains(&Event::ControlFrame { frame: 0, cycle: 0 }));
//! let broadcast = |e: &Event| matches!(e, Event::Broadcast { frame: 1, from: 1, to: 4, .. });
//! assert!(events.iter().any(broadcast));
//! ```
//!
//! A failed run is an `Err` holding the state too: with `max_cycles: 8` the same program
//! stops at the watchdog, its `cycles` being the limit.
//!
//! ```
//! # let source = ".cf mask=1\n.if\nset_const 2, r8\nset_const 3, r9\nadd r8, r9, r3\n\
//! #               set_const 0x10, r10\nst [r10, r1], r3\nready\n";
//! # let program = gpu16_asm::assemble(source, "add.s").unwrap().program;
//! use gpu16::machine::{Config, RunError};
//!
//! let config = Config { max_cycles: 8, ..Config::default() };
//! let failure = gpu16::run(gpu16::BackendKind::Interp, &program, &[], &config).unwrap_err();
//! assert!(matches!(failure.error, RunError::Watchdog { limit: 8, .. }));
//! assert_eq!(failure.state.cycles, 8);
//! assert_eq!(failure.state.registers[0][3], 5); // the add ran in cycle 7
//! assert_eq!(failure.state.memory[0x010], 0); // the store was due in cycle 9
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod debugger;
pub mod dialect;
pub mod diff;
pub mod fuzz;
pub mod input;
pub mod live;
pub mod output;
pub mod scratch;
pub mod shown;
pub mod timing;

pub use gpu16_machine as machine;

use gpu16_machine::{Config, FrameSource, Observer, Program, RunFailure, RunReport};

/// The execution backends a run can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// The reference interpreter.
    Interp,
    /// Every frame compiled to native code with Cranelift.
    Jit,
    /// Interpret a frame until it is hot, then run it compiled.
    Auto,
}

impl BackendKind {
    /// The pair `diff` and `fuzz` compare by default.
    pub const DIFF_PAIR: [BackendKind; 2] = [BackendKind::Interp, BackendKind::Jit];

    /// The backend's name, as the reports print it and the command line takes it.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Interp => "interp",
            BackendKind::Jit => "jit",
            BackendKind::Auto => "auto",
        }
    }
}

pub use gpu16_jit::{Engine, Hotness};

/// What runs a program: a backend and the engine its compiled code uses (ignored by the
/// interpreter, which is the per-core reference). A [`BackendKind`] alone means the
/// default engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Runner {
    /// The backend that runs the program.
    pub backend: BackendKind,
    /// How the JIT's compiled code runs the cores of a task (`lockstep`, `percore` or
    /// `adaptive`, the default); it changes speed, never a result.
    pub engine: Engine,
    /// When `auto` compiles a frame: `None`, at the default thresholds, on a background
    /// thread (the fastest); `Some`, exactly at these thresholds, on the running thread, so
    /// the switch to compiled code falls at the same point of every run (fuzzing, tests).
    /// Ignored by the other backends; it changes speed, never a result.
    pub hot: Option<Hotness>,
}

impl From<BackendKind> for Runner {
    fn from(backend: BackendKind) -> Runner {
        Runner {
            backend,
            engine: Engine::default(),
            hot: None,
        }
    }
}

impl Runner {
    /// The name reports use: the backend's, with a non-default engine after a slash
    /// (`jit/lockstep`).
    pub fn name(self) -> String {
        match self.backend {
            BackendKind::Interp => self.backend.name().to_string(),
            _ if self.engine == Engine::default() => self.backend.name().to_string(),
            _ => format!("{}/{}", self.backend.name(), self.engine.name()),
        }
    }

    /// The JIT's options: `auto` optimises what it compiles ([`gpu16_jit::JitOptions::hot`]:
    /// those frames proved hot); `jit` compiles every frame at its first issue, fast.
    fn jit_options(self) -> gpu16_jit::JitOptions {
        let base = match self.backend {
            BackendKind::Auto => gpu16_jit::JitOptions::hot(),
            _ => gpu16_jit::JitOptions::default(),
        };
        gpu16_jit::JitOptions {
            engine: self.engine,
            ..base
        }
    }

    /// [`run_observed`] of `program` on this runner, going on from `snapshot`, which a live
    /// machine of the same program made
    /// ([`gpu16_machine::live::Live::snapshot_at_or_before`]); any backend will do, since a
    /// snapshot holds no backend's code. See [`gpu16_machine::Snapshot::resume_observed`].
    /// `None` where the snapshot cannot start this run (another configuration, a task log
    /// of every task) or the JIT cannot start.
    pub fn resume_observed<O: Observer>(
        self,
        program: &Program,
        snapshot: &gpu16_machine::Snapshot,
        config: &Config,
        observer: &mut O,
    ) -> Option<Result<RunReport, Box<RunFailure>>> {
        struct Resume<'i, 'o, O> {
            program: &'i Program,
            snapshot: &'i gpu16_machine::Snapshot,
            config: &'i Config,
            observer: &'o mut O,
        }
        impl<O: Observer> OnBackend for Resume<'_, '_, O> {
            type Out = Option<Result<RunReport, Box<RunFailure>>>;
            fn on<B: gpu16_machine::engine::backend::Backend>(self, backend: &mut B) -> Self::Out {
                self.snapshot
                    .resume_observed(backend, self.program, self.config, self.observer)
            }
        }
        let resume = Resume {
            program,
            snapshot,
            config,
            observer,
        };
        on_backend(self, resume).ok().flatten()
    }
}

/// Run `program` with shared memory starting as `memory` on the chosen backend.
pub fn run(
    backend: impl Into<Runner>,
    program: &Program,
    memory: &[u8],
    config: &Config,
) -> Result<RunReport, Box<RunFailure>> {
    run_observed(backend, program, memory, config, &mut ())
}

/// [`run`], reporting events and progress to `observer`.
pub fn run_observed<O: Observer>(
    runner: impl Into<Runner>,
    program: &Program,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, Box<RunFailure>> {
    run_input_observed(
        runner,
        ProgramInput::Whole(program),
        memory,
        config,
        observer,
    )
}

/// A program to run: loaded whole, or read frame by frame as the run reaches it (a long
/// stream, or stdin: see [`gpu16_machine::run_stream_observed`]).
pub enum ProgramInput<'a> {
    /// A program loaded and checked whole.
    Whole(&'a Program),
    /// A spec-dialect program read as a stream of frames.
    Stream(&'a mut dyn FrameSource),
}

/// [`run_observed`] of a program loaded whole or read as a stream.
pub fn run_input_observed<O: Observer>(
    runner: impl Into<Runner>,
    input: ProgramInput<'_>,
    memory: &[u8],
    config: &Config,
    observer: &mut O,
) -> Result<RunReport, Box<RunFailure>> {
    struct Input<'i, 'm, 'o, O> {
        input: ProgramInput<'i>,
        memory: &'m [u8],
        config: &'m Config,
        observer: &'o mut O,
    }
    impl<O: Observer> OnBackend for Input<'_, '_, '_, O> {
        type Out = Result<RunReport, Box<RunFailure>>;
        fn on<B: gpu16_machine::engine::backend::Backend>(self, backend: &mut B) -> Self::Out {
            match self.input {
                ProgramInput::Whole(program) => gpu16_machine::run_observed(
                    backend,
                    program,
                    self.memory,
                    self.config,
                    self.observer,
                ),
                ProgramInput::Stream(source) => gpu16_machine::run_stream_observed(
                    backend,
                    source,
                    self.memory,
                    self.config,
                    self.observer,
                ),
            }
        }
    }
    let runner = runner.into();
    let input = Input {
        input,
        memory,
        config,
        observer,
    };
    on_backend(runner, input).unwrap_or_else(|e| Err(no_jit(runner.backend, memory, config, e)))
}

/// Something done with a backend of any type (a generic closure, which Rust has not).
trait OnBackend {
    type Out;
    fn on<B: gpu16_machine::engine::backend::Backend>(self, backend: &mut B) -> Self::Out;
}

/// `work` done on the backend `runner` names, made for it; the error where the JIT cannot
/// start.
fn on_backend<W: OnBackend>(runner: Runner, work: W) -> Result<W::Out, gpu16_jit::JitError> {
    Ok(match runner.backend {
        BackendKind::Interp => work.on(&mut gpu16_interp::Interpreter::new()),
        BackendKind::Jit => work.on(&mut gpu16_jit::Jit::with_options(runner.jit_options())?),
        BackendKind::Auto => {
            let mut auto = match runner.hot {
                None => gpu16_jit::Auto::with_options(Hotness::default(), runner.jit_options())?,
                Some(hot) => gpu16_jit::Auto::with_mode(
                    hot,
                    runner.jit_options(),
                    gpu16_jit::CompileMode::Synchronous,
                )?,
            };
            work.on(&mut auto)
        }
    })
}

/// The JIT cannot start on this host (Cranelift does not support it).
fn no_jit(
    backend: BackendKind,
    memory: &[u8],
    config: &Config,
    e: gpu16_jit::JitError,
) -> Box<RunFailure> {
    Box::new(RunFailure {
        error: gpu16_machine::RunError::Backend {
            frame: None,
            message: e.to_string(),
        },
        state: RunReport::initial(backend.name(), *config, memory),
    })
}
