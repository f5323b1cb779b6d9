//! Reading the user's files: program images (raw `.bin`/`.tm`, `$readmemh`-style `.hex`
//! words, assembly source), shared-memory images (raw or hex bytes) and the expected final
//! states `run --expect-mem`/`--expect-regs` compare with ([`dump`]). Every error names
//! the file and, for text formats, the line and column. Every file is read through
//! `limits::read`, which stops one byte past the limit of its kind.

pub mod dump;
mod hex;
pub(crate) mod limits;
pub mod memory;
pub mod stream;

pub(crate) use hex::parse_hex_words;
#[cfg(test)]
pub(crate) use hex::parse_memory_text;
pub use memory::{MemoryFormat, MemoryImage};

use gpu16_asm::{Assembly, Diagnostics, SourceMap};
use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::{Dialect, LoadError, Program};
use limits::read_text;
use std::fmt;
use std::path::{Path, PathBuf};

/// A file the user gave that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file, as the user named it.
    pub path: PathBuf,
    /// What is wrong with it, with the line and column for a text format.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", crate::shown::path(&self.path), self.message)
    }
}

impl std::error::Error for InputError {}

fn err(path: &Path, message: impl Into<String>) -> InputError {
    InputError::new(path, message)
}

impl InputError {
    /// What is wrong with the file at `path`.
    pub fn new(path: &Path, message: impl Into<String>) -> InputError {
        InputError {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// How a program file is read, by its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramFormat {
    /// `.bin` or `.tm`: a raw image of 32-byte frames.
    Binary,
    /// `.hex`: 16-bit words in `$readmemh` style, 16 words a frame.
    Hex,
    /// `.s` or `.asm`: assembly source.
    Assembly,
}

impl ProgramFormat {
    /// The format of `path`, by its extension (in any case); an unknown extension is an
    /// error naming the ones accepted.
    pub fn of(path: &Path) -> Result<ProgramFormat, InputError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("bin" | "tm") => Ok(ProgramFormat::Binary),
            Some("hex") => Ok(ProgramFormat::Hex),
            Some("s" | "asm") => Ok(ProgramFormat::Assembly),
            _ => Err(err(
                path,
                "unknown program format: use .bin or .tm (raw image of 32-byte frames), .hex (16-bit words) or .s/.asm (assembly)",
            )),
        }
    }

    /// The format of the program at `path`: `given` when given, else binary for `-`
    /// (stdin) and the extension's for a file.
    pub fn of_input(
        path: &Path,
        given: Option<ProgramFormat>,
    ) -> Result<ProgramFormat, InputError> {
        match given {
            Some(f) => Ok(f),
            None if path == Path::new("-") => Ok(ProgramFormat::Binary),
            None => ProgramFormat::of(path),
        }
    }
}

/// Load a program image from any supported format, each within its limits, in the spec
/// dialect.
pub fn load_program(path: &Path) -> Result<Program, InputError> {
    load_program_with_map(path).map(|(program, _)| program)
}

/// [`load_program`], with the assembler's source map when the program is assembly (so a
/// failure can name the `file:line:col` of an instruction); `None` for an image.
pub(crate) fn load_program_with_map(
    path: &Path,
) -> Result<(Program, Option<SourceMap>), InputError> {
    load_program_with_map_in(path, Dialect::Spec)
}

/// [`load_program_with_map`] in `dialect`: an image's words and headers are read as the
/// dialect reads them, and assembly source is assembled in it.
pub(crate) fn load_program_with_map_in(
    path: &Path,
    dialect: Dialect,
) -> Result<(Program, Option<SourceMap>), InputError> {
    load_program_as(path, ProgramFormat::of(path)?, dialect)
}

/// [`load_program_with_map_in`] of a program in `format` whatever its name; `-` is stdin.
pub(crate) fn load_program_as(
    path: &Path,
    format: ProgramFormat,
    dialect: Dialect,
) -> Result<(Program, Option<SourceMap>), InputError> {
    load_program_full(path, format, dialect).map(|l| (l.program, l.source_map))
}

/// A loaded program and what assembly source adds to it.
#[derive(Debug)]
pub struct LoadedProgram {
    /// The program.
    pub program: Program,
    /// Where each frame and slot came from, for a program assembled from source.
    pub source_map: Option<SourceMap>,
    /// The initial shared memory the source's `.data` directives give (4096 bytes), or
    /// `None`: an image, or source without `.data`.
    pub memory: Option<Vec<u8>>,
}

/// Load the program at `path` in `format` whatever its name (`-` is stdin), read as
/// `dialect` reads it, with the source map and the memory image of assembly source's
/// `.data`.
pub fn load_program_full(
    path: &Path,
    format: ProgramFormat,
    dialect: Dialect,
) -> Result<LoadedProgram, InputError> {
    let program = match format {
        ProgramFormat::Binary => {
            // Read as frames, which the program keeps: the image is never held twice.
            let (frames, left) = limits::read_frames(path, limits::PROGRAM_IMAGE)?;
            match left {
                0 => Program::from_frames_in(frames, dialect),
                left => Err(LoadError::Length {
                    bytes: frames.len() * FRAME_BYTES + left,
                }),
            }
        }
        ProgramFormat::Hex => Program::from_image_in(
            &parse_hex_words(path, &read_text(path, limits::PROGRAM_HEX)?)?,
            dialect,
        ),
        ProgramFormat::Assembly => {
            let source = read_text(path, limits::SOURCE)?;
            return assemble_bounded(&source, path, dialect)
                .map(|a| LoadedProgram {
                    program: a.program,
                    source_map: Some(a.source_map),
                    memory: a.memory,
                })
                .map_err(|d| err(path, format!("assembly failed\n{d}")));
        }
    };
    program
        .map(|program| LoadedProgram {
            program,
            source_map: None,
            memory: None,
        })
        .map_err(|e| err(path, e.to_string()))
}

/// From now on, in this process, a text input that cannot be read twice (stdin, a FIFO,
/// `/dev/stdin`, a device) is read once, however often it is asked for: the command
/// line reads a source again to find the files it includes, which a FIFO or a pipe would
/// not give again (one read would block or come back empty). Inputs are known by the file
/// they are, so `-` and `/dev/stdin` are one input. Not for a long-lived process (the
/// Python module): a FIFO given again there is meant to be read again.
pub fn read_each_input_once() {
    limits::read_each_input_once();
}

/// The assembly source at `path` as text, held to a source file's limit (as every file it
/// includes is): for a command that assembles it itself. `-` is stdin.
pub fn read_source(path: &Path) -> Result<String, InputError> {
    read_text(path, limits::SOURCE)
}

/// A program image handed over in memory (the bytes a Python caller passes), held to the
/// limit of a `.bin` file (`limits::PROGRAM_IMAGE`); an error names `name`, as
/// [`load_program`] names the file.
pub fn program_from_image(
    name: &Path,
    image: &[u8],
    dialect: Dialect,
) -> Result<Program, InputError> {
    limits::check(name, limits::PROGRAM_IMAGE, image.len() as u64)?;
    Program::from_image_in(image, dialect).map_err(|e| err(name, e.to_string()))
}

/// Assemble `source` handed over in memory as if it were the file `path` (diagnostics and
/// source locations name it; `.include`s are found beside it): the source is held to a
/// source file's limit (a longer one is an [`InputError`]), and so is every file it
/// includes.
pub fn assemble_source(
    source: &str,
    path: &Path,
    dialect: Dialect,
) -> Result<Assembly, SourceError> {
    limits::check(path, limits::SOURCE, source.len() as u64).map_err(SourceError::Input)?;
    assemble_bounded(source, path, dialect).map_err(SourceError::Assembly)
}

/// Why source handed over in memory did not assemble.
#[derive(Debug)]
pub enum SourceError {
    /// The source is too large to assemble.
    Input(InputError),
    /// The assembler's diagnostics.
    Assembly(Diagnostics),
}

/// `gpu16_asm::assemble_in` with `.include`d files read within [`limits::SOURCE`].
fn assemble_bounded(source: &str, path: &Path, dialect: Dialect) -> Result<Assembly, Diagnostics> {
    let include = |p: &Path| read_text(p, limits::SOURCE).map_err(|e| e.message);
    gpu16_asm::assemble_with_in(source, &path.display().to_string(), &include, dialect)
}

/// Load a shared-memory image by the one rule of [`memory`]: its extension says raw
/// (`.bin`, `.raw`) or `$readmemh` text (`.hex`, `.mem`, `.vmem`, `.txt`), else its
/// content does; a file the content cannot decide is an error naming `--mem-format`.
/// Gives the bytes the file gave (memory past them is zero).
pub fn load_memory(path: &Path) -> Result<Vec<u8>, InputError> {
    let mut image = MemoryImage::load(path, None, "--mem-format")?;
    image.bytes.truncate(image.given);
    Ok(image.bytes)
}
