//! The extension module `gpu16._native`: the gpu16 library's assembler, disassembler,
//! runner and generator, called from Python. Each function is a thin shell over the same
//! library code the `gpu16` CLI calls (inputs held to the limits of `gpu16::input`, the
//! run's JSON object built by `gpu16::output::json::run_document`), so the two cannot
//! disagree. The
//! Python package `gpu16` (python/gpu16/__init__.py) wraps these and documents the API.

#![deny(missing_docs)]

use gpu16::input::{self, MemoryFormat, SourceError};
use gpu16::machine::{Config, Dialect, IssuePolicy, Program, TaskLog};
use gpu16::{BackendKind, Runner};
use gpu16_asm::SourceMap;
use gpu16_gen::{Profile, MAX_GROUPS};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};
use std::borrow::Cow;
use std::path::Path;

// The watchdog's bounds, by the names this file uses.
const DEFAULT_MAX_CYCLES: u64 = Config::DEFAULT_MAX_CYCLES;
const MAX_CYCLE_LIMIT: u64 = Config::MAX_CYCLE_LIMIT;

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
        SourceError::Assembly(d) => AssemblyError::new_err(d.to_string().trim_end().to_string()),
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

/// The dialect named `name`: `spec` or `mcst`, as `--dialect` takes them.
fn dialect(name: &str) -> PyResult<Dialect> {
    one_of("dialect", name, &Dialect::ALL.map(|d| (d.name(), d)))
}

/// Assemble `source` in `dialect`, named `name` in diagnostics and source locations;
/// `.include`s are read beside `name`, each held to the CLI's limit.
fn assembled(source: &str, name: &str, dialect: Dialect) -> PyResult<gpu16_asm::Assembly> {
    input::assemble_source(source, Path::new(name), dialect).map_err(source_error)
}

/// `bytes`: the program image of assembly `source` in `dialect` (as `gpu16 asm` writes it).
#[pyfunction]
#[pyo3(signature = (source, name = "<string>", dialect = "spec"))]
fn assemble<'py>(
    py: Python<'py>,
    source: &str,
    name: &str,
    dialect: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let program = assembled(source, name, self::dialect(dialect)?)?.program;
    Ok(PyBytes::new(py, &program.image()))
}

/// The source text `gpu16 disasm --dialect DIALECT` prints for a program `image`.
#[pyfunction]
#[pyo3(signature = (image, dialect = "spec"))]
fn disassemble(image: Cow<'_, [u8]>, dialect: &str) -> PyResult<String> {
    let program = input::program_from_image(Path::new("image"), &image, self::dialect(dialect)?)
        .map_err(load_error)?;
    Ok(gpu16_asm::disassemble(&program))
}

/// Run `program` (bytes: an image; str: assembly source named `name`) and give back the JSON
/// text of `gpu16 run --json`. A failed run is an object with `error`, not an exception; an
/// input that cannot be loaded or an option out of range raises.
#[pyfunction]
#[pyo3(signature = (program, memory, backend, dialect, timing, issue, bank_conflicts,
                    max_cycles, name, memory_format = None, tasks = "all"))]
#[allow(clippy::too_many_arguments)]
fn run_json(
    py: Python<'_>,
    program: &Bound<'_, PyAny>,
    memory: &Bound<'_, PyAny>,
    backend: &str,
    dialect: &str,
    timing: Option<&str>,
    issue: &str,
    bank_conflicts: bool,
    max_cycles: Option<u64>,
    name: &str,
    memory_format: Option<&str>,
    tasks: &str,
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
    )?;
    // The run does not touch Python objects: let other threads run meanwhile.
    let document = py.detach(|| {
        let outcome = gpu16::run(runner, &program, &memory, &config);
        gpu16::output::json::run_document_text(&outcome, source_map.as_ref())
    });
    Ok(document)
}

/// What a run is asked for, checked: `run_json`'s and `Machine`'s arguments.
pub(crate) struct RunInputs {
    pub(crate) runner: Runner,
    pub(crate) program: Program,
    pub(crate) source_map: Option<SourceMap>,
    pub(crate) memory: Vec<u8>,
    pub(crate) config: Config,
}

/// Check a run's arguments as `gpu16 run` checks its flags (see `gpu16.run`'s doc).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_inputs(
    program: &Bound<'_, PyAny>,
    memory: &Bound<'_, PyAny>,
    backend: &str,
    dialect: &str,
    timing: Option<&str>,
    issue: &str,
    bank_conflicts: bool,
    max_cycles: Option<u64>,
    name: &str,
    memory_format: Option<&str>,
    tasks: &str,
) -> PyResult<RunInputs> {
    // No memory given: the source's `.data`, if any (as `gpu16 run` without `--mem`).
    let given = if memory.is_none() {
        None
    } else {
        Some(memory_image(memory, memory_format)?)
    };
    let backend = one_of(
        "backend",
        backend,
        &[BackendKind::Interp, BackendKind::Jit, BackendKind::Auto].map(|b| (b.name(), b)),
    )?;
    let dialect = self::dialect(dialect)?;
    let issue = one_of(
        "issue policy",
        issue,
        &[IssuePolicy::InOrder, IssuePolicy::Lookahead].map(|p| (p.name(), p)),
    )?;
    let timing = match timing {
        Some(spec) => {
            gpu16::timing::parse(spec).map_err(|e| PyValueError::new_err(format!("timing: {e}")))?
        }
        None => Default::default(),
    };
    let max_cycles = max_cycles.unwrap_or(DEFAULT_MAX_CYCLES);
    if max_cycles > MAX_CYCLE_LIMIT {
        return Err(PyValueError::new_err(format!(
            "max_cycles: {max_cycles} is not in 0..={MAX_CYCLE_LIMIT}"
        )));
    }
    let tasks = one_of("task log", tasks, &TaskLog::ALL.map(|t| (t.name(), t)))?;
    let config = Config {
        issue,
        bank_conflicts,
        max_cycles,
        timing,
        tasks,
        ..Config::default()
    };
    gpu16::dialect::check_config(&config, dialect).map_err(PyValueError::new_err)?;
    let (program, source_map, data) = if let Ok(source) = program.cast::<PyString>() {
        let a = assembled(source.to_str()?, name, dialect)?;
        (a.program, Some(a.source_map), a.memory)
    } else if let Some(image) = byte_string(program) {
        let p =
            input::program_from_image(Path::new("program"), &image, dialect).map_err(load_error)?;
        (p, None, None)
    } else {
        return Err(PyTypeError::new_err(format!(
            "program must be bytes (a program image) or str (assembly source), not {}",
            program.get_type().name()?
        )));
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

/// The contents of `obj` if it is `bytes` or `bytearray`: a list of ints, say, is not
/// taken for an image.
fn byte_string(obj: &Bound<'_, PyAny>) -> Option<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        Some(b.as_bytes().to_vec())
    } else if let Ok(b) = obj.cast::<PyByteArray>() {
        Some(b.to_vec())
    } else {
        None
    }
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
fn memory_image(memory: &Bound<'_, PyAny>, format: Option<&str>) -> PyResult<Vec<u8>> {
    let format = memory_format(format)?;
    let flag = "memory_format=";
    let name = Path::new("memory");
    let image = if let Ok(text) = memory.cast::<PyString>() {
        let text = text.to_str()?;
        let format = format.unwrap_or(MemoryFormat::Hex);
        input::MemoryImage::from_bytes(name, text.as_bytes(), Some(format), flag)
    } else if let Some(bytes) = byte_string(memory) {
        input::MemoryImage::from_bytes(name, &bytes, format, flag)
    } else if memory.hasattr("__fspath__")? {
        let path: std::path::PathBuf = memory.extract()?;
        input::MemoryImage::load(&path, format, flag)
    } else {
        return Err(PyTypeError::new_err(format!(
            "memory must be bytes (a raw image), str ($readmemh text) or a path \
             (os.PathLike), not {}",
            memory.get_type().name()?
        )));
    };
    image.map(|m| m.bytes).map_err(load_error)
}

/// The 4096 bytes of the memory file at `path`, read as `gpu16 run --mem` reads it: by
/// `memory_format` (`hex` or `raw`) if given, else its extension, else its content.
#[pyfunction]
#[pyo3(signature = (path, memory_format = None))]
fn load_memory<'py>(
    py: Python<'py>,
    path: std::path::PathBuf,
    memory_format: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    let format = self::memory_format(memory_format)?;
    let image = input::MemoryImage::load(&path, format, "memory_format=").map_err(load_error)?;
    Ok(PyBytes::new(py, &image.bytes))
}

/// The profile named `profile`, the group count and the dialect, checked as `gpu16 gen`
/// checks them.
fn gen_args(profile: &str, groups: usize, dialect: &str) -> PyResult<(Profile, Dialect)> {
    let dialect = self::dialect(dialect)?;
    let max = match dialect {
        Dialect::Spec => MAX_GROUPS,
        Dialect::Mcst => gpu16_gen::MCST_MAX_GROUPS,
    };
    if !(1..=max).contains(&groups) {
        let why = match dialect {
            Dialect::Spec => "",
            Dialect::Mcst => " (the mcst dialect's task memory holds 64 frames)",
        };
        return Err(PyValueError::new_err(format!(
            "groups: {groups} is not in 1..={max}{why}"
        )));
    }
    Ok((
        Profile::parse(profile).map_err(PyValueError::new_err)?,
        dialect,
    ))
}

/// The program image and memory image `gpu16 gen --seed SEED --profile PROFILE --groups
/// GROUPS -o OUT --mem-out MEM` writes.
#[pyfunction]
#[pyo3(signature = (seed, profile = "mixed", groups = 3, dialect = "spec"))]
fn generate_image<'py>(
    py: Python<'py>,
    seed: u64,
    profile: &str,
    groups: usize,
    dialect: &str,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let (profile, dialect) = gen_args(profile, groups, dialect)?;
    let g = py.detach(|| gpu16_gen::generate_in(seed, groups, profile, dialect));
    Ok((PyBytes::new(py, &g.image), PyBytes::new(py, &g.memory)))
}

/// The source of the program [`generate_image`] makes, as `gpu16 disasm` prints it; it
/// assembles back to the same image.
#[pyfunction]
#[pyo3(signature = (seed, profile = "mixed", groups = 3, dialect = "spec"))]
fn generate(
    py: Python<'_>,
    seed: u64,
    profile: &str,
    groups: usize,
    dialect: &str,
) -> PyResult<String> {
    let (profile, dialect) = gen_args(profile, groups, dialect)?;
    let g = py.detach(|| gpu16_gen::generate_in(seed, groups, profile, dialect));
    let program =
        input::program_from_image(Path::new("generated"), &g.image, dialect).map_err(load_error)?;
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
