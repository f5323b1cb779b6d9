//! The extension module `gpu16._native`: the gpu16 library's assembler, disassembler,
//! runner and generator, called from Python. Each function is a thin shell over the same
//! library code the `gpu16` CLI calls (inputs held to the limits of `gpu16::input`, the
//! run's JSON object built by `gpu16::output::json::run_document`), so the two cannot
//! disagree. The
//! Python package `gpu16` (python/gpu16/__init__.py) wraps these and documents the API.

#![deny(missing_docs)]

use args::byte_string;
use gpu16::input::stream::FrameStream;
use gpu16::input::{self, MemoryFormat, SourceError};
use gpu16::machine::frame::{LoadError as ImageError, FRAME_BYTES};
use gpu16::machine::{Config, Dialect, FrameSource, IssuePolicy, Program, TaskLog};
use gpu16::{BackendKind, Runner};
use gpu16_asm::SourceMap;
use gpu16_gen::{Profile, MAX_GROUPS};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::borrow::Cow;
use std::path::Path;

// The watchdog's bounds, by the names this file uses.
const DEFAULT_MAX_CYCLES: u64 = Config::DEFAULT_MAX_CYCLES;
const MAX_CYCLE_LIMIT: u64 = Config::MAX_CYCLE_LIMIT;

mod args;
mod machine;

pyo3::create_exception!(
    gpu16,
    AssemblyError,
    PyValueError,
    "Assembly source that does not assemble; the message is the assembler's diagnostics, as \
     `gpu16 asm` prints them."
);
pyo3::create_exception!(
    gpu16,
    LoadError,
    PyValueError,
    "An input that cannot be used (an image that is not N x 32 bytes or breaks a frame rule, \
     an input past its size limit); the message is the CLI's, naming the input."
);

/// A library input error as the Python exception for it.
fn load_error(e: input::InputError) -> PyErr {
    LoadError::new_err(e.to_string())
}

/// A source error as the Python exception for it: the diagnostics text without its final
/// newline, or the size error.
fn source_error(e: SourceError) -> PyErr {
    match e {
        SourceError::Input(e) => load_error(e),
        SourceError::Assembly(d) => {
            let d = d.naming_the_mcst_option("`dialect=\"mcst\"`");
            AssemblyError::new_err(d.to_string().trim_end().to_string())
        }
    }
}

/// `name` among `accepted`, or a ValueError naming the parameter and the accepted names.
fn one_of<T: Copy>(what: &str, name: &str, accepted: &[(&str, T)]) -> PyResult<T> {
    match accepted.iter().find(|(n, _)| *n == name) {
        Some(&(_, value)) => Ok(value),
        None => {
            let names: Vec<&str> = accepted.iter().map(|(n, _)| *n).collect();
            Err(PyValueError::new_err(format!(
                "unknown {what} `{name}` (one of {})",
                names.join(", ")
            )))
        }
    }
}

/// The dialect argument `dialect=`: `spec` or `mcst`, as `--dialect` takes them.
fn dialect(arg: &Bound<'_, PyAny>) -> PyResult<Dialect> {
    let name = args::string(arg, "dialect")?;
    one_of("dialect", &name, &Dialect::ALL.map(|d| (d.name(), d)))
}

/// Assemble `source` in `dialect`, named `name` in diagnostics and source locations;
/// `.include`s are read beside `name`, each held to the CLI's limit.
fn assembled(source: &str, name: &str, dialect: Dialect) -> PyResult<gpu16_asm::Assembly> {
    input::assemble_source(source, Path::new(name), dialect).map_err(source_error)
}

// Every function and method takes its arguments as Python objects and converts them with
// `args`, so each error names the argument as the API calls it; the wrapper,
// python/gpu16/__init__.py, gives every one (it holds the defaults).

/// `bytes`: the program image of assembly `source` in `dialect` (as `gpu16 asm` writes it).
#[pyfunction]
fn assemble<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    name: &Bound<'py, PyAny>,
    dialect: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let source = args::string(source, "source")?;
    let name = args::string(name, "name")?;
    let program = assembled(&source, &name, self::dialect(dialect)?)?.program;
    Ok(PyBytes::new(py, &program.image()))
}

/// The source text `gpu16 disasm --dialect DIALECT` prints for a program `image`.
#[pyfunction]
fn disassemble(image: &Bound<'_, PyAny>, dialect: &Bound<'_, PyAny>) -> PyResult<String> {
    let image = args::bytes(image, "image")?;
    let program = input::program_from_image(Path::new("image"), &image, self::dialect(dialect)?)
        .map_err(load_error)?;
    Ok(gpu16_asm::disassemble(&program))
}

/// Run `program` (bytes: an image; str: assembly source named `name`) and give back the JSON
/// text of `gpu16 run --json`. A failed run is an object with `error`, not an exception; an
/// input that cannot be loaded or an option out of range raises.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn run_json(
    py: Python<'_>,
    program: &Bound<'_, PyAny>,
    memory: &Bound<'_, PyAny>,
    backend: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
    timing: &Bound<'_, PyAny>,
    issue: &Bound<'_, PyAny>,
    bank_conflicts: &Bound<'_, PyAny>,
    max_cycles: &Bound<'_, PyAny>,
    name: &Bound<'_, PyAny>,
    memory_format: &Bound<'_, PyAny>,
    tasks: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let RunInputs {
        runner,
        program,
        source_map,
        memory,
        config,
    } = run_inputs(
        program,
        memory,
        backend,
        dialect,
        timing,
        issue,
        bank_conflicts,
        max_cycles,
        name,
        memory_format,
        tasks,
        Held::Streamed,
    )?;
    // The run does not touch Python objects: let other threads run meanwhile (the bytes
    // a stream reads are immutable, and `program` keeps them alive).
    let document = py.detach(|| {
        let outcome = match &program {
            Code::Whole(program) => gpu16::run(runner, program, &memory, &config),
            Code::Frames(image) => {
                let mut frames = ImageFrames::new(image);
                let input = gpu16::ProgramInput::Stream(&mut frames);
                gpu16::run_input_observed(runner, input, &memory, &config, &mut ())
            }
        };
        gpu16::output::json::run_document_text(&outcome, source_map.as_ref())
    });
    Ok(document)
}

/// What a run is asked for, checked: `run_json`'s and `Machine`'s arguments.
pub(crate) struct RunInputs<'a> {
    pub(crate) runner: Runner,
    pub(crate) program: Code<'a>,
    pub(crate) source_map: Option<SourceMap>,
    pub(crate) memory: Vec<u8>,
    pub(crate) config: Config,
}

/// How a raw spec image may be held for its run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// Loaded whole into a [`Program`] (a `Machine` steps one).
    Whole,
    /// Checked, then read as a stream over the caller's bytes, as `gpu16 run` streams a
    /// raw image: a long one is held once, by Python (issue 33, F15: a 256 MiB image took
    /// 832 MB, the bytes and the `Program` copied from them).
    Streamed,
}

/// A program to run, checked.
pub(crate) enum Code<'a> {
    /// Loaded whole: assembly source, the mcst dialect, or [`Held::Whole`].
    Whole(Program),
    /// A raw image of the spec dialect that [`Program::check_image_in`] accepted.
    Frames(Cow<'a, [u8]>),
}

impl Code<'_> {
    /// The program loaded whole.
    pub(crate) fn whole(self) -> PyResult<Program> {
        match self {
            Code::Whole(program) => Ok(program),
            Code::Frames(image) => {
                input::program_from_image(Path::new("program"), &image, Dialect::Spec)
                    .map_err(load_error)
            }
        }
    }
}

/// The frames of a checked image as the run reads them, in order.
struct ImageFrames<'a> {
    frames: &'a [[u8; FRAME_BYTES]],
    next: usize,
}

impl<'a> ImageFrames<'a> {
    fn new(image: &'a [u8]) -> ImageFrames<'a> {
        ImageFrames {
            frames: image.as_chunks::<FRAME_BYTES>().0,
            next: 0,
        }
    }
}

impl FrameSource for ImageFrames<'_> {
    fn next_frame(&mut self) -> Result<Option<[u8; FRAME_BYTES]>, ImageError> {
        let frame = self.frames.get(self.next).copied();
        self.next += usize::from(frame.is_some());
        Ok(frame)
    }
    fn rewind(&mut self) -> Result<(), ImageError> {
        self.next = 0;
        Ok(())
    }
    fn checked(&self) -> bool {
        true
    }
}

/// Argument `name` set to `value` as a Python call writes it, for
/// `gpu16::dialect::check_config`'s errors, which name the arguments this way where the CLI
/// names its flags: `issue="lookahead"`, or `bank_conflicts=True` for a switch (`None`).
fn argument(name: &str, value: Option<&str>) -> String {
    match value {
        Some(value) => format!("{name}=\"{value}\""),
        None => format!("{name}=True"),
    }
}

/// Check a run's arguments as `gpu16 run` checks its flags (see `gpu16.run`'s doc).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_inputs<'a>(
    program: &'a Bound<'_, PyAny>,
    memory: &Bound<'_, PyAny>,
    backend: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
    timing: &Bound<'_, PyAny>,
    issue: &Bound<'_, PyAny>,
    bank_conflicts: &Bound<'_, PyAny>,
    max_cycles: &Bound<'_, PyAny>,
    name: &Bound<'_, PyAny>,
    memory_format: &Bound<'_, PyAny>,
    tasks: &Bound<'_, PyAny>,
    held: Held,
) -> PyResult<RunInputs<'a>> {
    // Each argument's type (and the dialect's name) first, in the signature's order, then
    // the values.
    let backend = args::string(backend, "backend")?;
    let dialect = self::dialect(dialect)?;
    let timing = args::optional_string(timing, "timing")?;
    let issue = args::string(issue, "issue")?;
    let bank_conflicts = args::boolean(bank_conflicts, "bank_conflicts")?;
    let max_cycles = args::optional_int_in(max_cycles, "max_cycles", 0, MAX_CYCLE_LIMIT)?
        .unwrap_or(DEFAULT_MAX_CYCLES);
    let name = args::string(name, "name")?;
    let memory_format = args::optional_string(memory_format, "memory_format")?;
    let tasks = args::string(tasks, "tasks")?;
    // Checked with or without memory: a misspelt format is an error either way.
    let memory_format = self::memory_format(memory_format.as_deref())?;
    // No memory given: the source's `.data`, if any (as `gpu16 run` without `--mem`).
    let given = if memory.is_none() {
        None
    } else {
        Some(memory_image(memory, memory_format)?)
    };
    let backend = one_of(
        "backend",
        &backend,
        &[BackendKind::Interp, BackendKind::Jit, BackendKind::Auto].map(|b| (b.name(), b)),
    )?;
    let issue = one_of(
        "issue policy",
        &issue,
        &[IssuePolicy::InOrder, IssuePolicy::Lookahead].map(|p| (p.name(), p)),
    )?;
    let timing = match timing {
        Some(spec) => gpu16::timing::parse(&spec)
            .map_err(|e| PyValueError::new_err(format!("timing: {e}")))?,
        None => Default::default(),
    };
    let tasks = one_of("task log", &tasks, &TaskLog::ALL.map(|t| (t.name(), t)))?;
    let config = Config {
        issue,
        bank_conflicts,
        max_cycles,
        timing,
        tasks,
        ..Config::default()
    };
    gpu16::dialect::check_config(&config, dialect, argument).map_err(PyValueError::new_err)?;
    let (program, source_map, data) = if program.is_instance_of::<PyString>() {
        let source = args::string(program, "program")?;
        let a = assembled(&source, &name, dialect)?;
        (Code::Whole(a.program), Some(a.source_map), a.memory)
    } else if let Some(image) = byte_string(program) {
        let streams = held == Held::Streamed
            && dialect == Dialect::Spec
            && image.len() as u64 <= FrameStream::MAX_BYTES
            && Program::check_image_in(&image, dialect).is_ok();
        if streams {
            (Code::Frames(image), None, None)
        } else {
            // Loaded whole, or an image in error: loading gives the error.
            let p = input::program_from_image(Path::new("program"), &image, dialect)
                .map_err(load_error)?;
            (Code::Whole(p), None, None)
        }
    } else {
        return Err(args::wrong_type(
            "program",
            "bytes or bytearray (a program image) or str (assembly source)",
            program,
        ));
    };
    let memory = given.or(data).unwrap_or_default();
    Ok(RunInputs {
        runner: Runner::from(backend),
        program,
        source_map,
        memory,
        config,
    })
}

/// The format named by `memory_format=` (`hex`, `raw`, or `None`).
fn memory_format(name: Option<&str>) -> PyResult<Option<MemoryFormat>> {
    name.map(|n| {
        one_of(
            "memory_format",
            n,
            &MemoryFormat::ALL.map(|f| (f.name(), f)),
        )
    })
    .transpose()
}

/// The 4096 bytes of a memory argument, by the CLI's one rule for memory images
/// (`gpu16::input::memory`): the format `memory_format` gives wins; else a `str` is
/// `$readmemh` text, `bytes` have no name and so are read by their content, as `--mem -`
/// reads stdin (not text: raw; `$readmemh` text: text; other text: an error naming
/// `memory_format=`), and a path (`os.PathLike`) is read like `--mem`: its extension, else
/// its content.
fn memory_image(memory: &Bound<'_, PyAny>, format: Option<MemoryFormat>) -> PyResult<Vec<u8>> {
    let flag = "memory_format=";
    let name = Path::new("memory");
    let image = if memory.is_instance_of::<PyString>() {
        let text = args::string(memory, "memory")?;
        let format = format.unwrap_or(MemoryFormat::Hex);
        input::MemoryImage::from_bytes(name, text.as_bytes(), Some(format), flag)
    } else if let Some(bytes) = byte_string(memory) {
        input::MemoryImage::from_bytes(name, &bytes, format, flag)
    } else if memory.hasattr("__fspath__")? {
        input::MemoryImage::load(&args::path(memory, "memory")?, format, flag)
    } else {
        return Err(args::wrong_type(
            "memory",
            "bytes or bytearray, str ($readmemh text), os.PathLike (a file) or None",
            memory,
        ));
    };
    image.map(|m| m.bytes).map_err(load_error)
}

/// The 4096 bytes of the memory file at `path`, read as `gpu16 run --mem` reads it: by
/// `memory_format` (`hex` or `raw`) if given, else its extension, else its content.
#[pyfunction]
fn load_memory<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    memory_format: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let path = args::path(path, "path")?;
    let memory_format = args::optional_string(memory_format, "memory_format")?;
    let format = self::memory_format(memory_format.as_deref())?;
    let image = input::MemoryImage::load(&path, format, "memory_format=").map_err(load_error)?;
    Ok(PyBytes::new(py, &image.bytes))
}

/// A generator's arguments: the seed, the profile, the group count and the dialect,
/// checked as `gpu16 gen` checks them.
struct GenArgs {
    seed: u64,
    profile: Profile,
    groups: usize,
    dialect: Dialect,
}

/// The arguments of `generate` and `generate_image`, checked.
fn gen_args(
    seed: &Bound<'_, PyAny>,
    profile: &Bound<'_, PyAny>,
    groups: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
) -> PyResult<GenArgs> {
    let seed = args::int_in(seed, "seed", 0, u64::MAX, "")?;
    let profile = args::string(profile, "profile")?;
    let dialect = self::dialect(dialect)?;
    let max = match dialect {
        Dialect::Spec => MAX_GROUPS,
        Dialect::Mcst => gpu16_gen::MCST_MAX_GROUPS,
    };
    let why = match dialect {
        Dialect::Spec => "",
        Dialect::Mcst => " (the mcst dialect's task memory holds 64 frames)",
    };
    let groups = args::int_in(groups, "groups", 1, max as u64, why)? as usize;
    Ok(GenArgs {
        seed,
        profile: Profile::parse(&profile).map_err(PyValueError::new_err)?,
        groups,
        dialect,
    })
}

/// The program image and memory image `gpu16 gen --seed SEED --profile PROFILE --groups
/// GROUPS -o OUT --mem-out MEM` writes.
#[pyfunction]
fn generate_image<'py>(
    py: Python<'py>,
    seed: &Bound<'py, PyAny>,
    profile: &Bound<'py, PyAny>,
    groups: &Bound<'py, PyAny>,
    dialect: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let a = gen_args(seed, profile, groups, dialect)?;
    let g = py.detach(|| gpu16_gen::generate_in(a.seed, a.groups, a.profile, a.dialect));
    Ok((PyBytes::new(py, &g.image), PyBytes::new(py, &g.memory)))
}

/// The source of the program [`generate_image`] makes, as `gpu16 disasm` prints it; it
/// assembles back to the same image.
#[pyfunction]
fn generate(
    py: Python<'_>,
    seed: &Bound<'_, PyAny>,
    profile: &Bound<'_, PyAny>,
    groups: &Bound<'_, PyAny>,
    dialect: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let a = gen_args(seed, profile, groups, dialect)?;
    let g = py.detach(|| gpu16_gen::generate_in(a.seed, a.groups, a.profile, a.dialect));
    let program = input::program_from_image(Path::new("generated"), &g.image, a.dialect)
        .map_err(load_error)?;
    Ok(gpu16_asm::disassemble(&program))
}

/// The module `gpu16._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(assemble, m)?)?;
    m.add_function(wrap_pyfunction!(disassemble, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(load_memory, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(generate_image, m)?)?;
    m.add_class::<machine::Machine>()?;
    m.add("AssemblyError", m.py().get_type::<AssemblyError>())?;
    m.add("LoadError", m.py().get_type::<LoadError>())?;
    m.add("MAX_CYCLE_LIMIT", MAX_CYCLE_LIMIT)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
