//! `--mem` and `--mem-format`, the initial shared memory, as `run`, `debug` and `diff` take
//! them: one definition of the flags, their help and how they load
//! ([`gpu16::input::memory`] owns the rule), and how they give way to, or win over, the
//! memory an assembly source's `.data` directives give.

use super::outputs::{one_reader_per_stream, with_included, Named};
use super::value_enums::MemoryFormatArg;
use clap::Args;
use gpu16::input::{InputError, MemoryImage};
use std::path::{Path, PathBuf};

/// The initial shared memory's flags.
#[derive(Args, Clone, Debug, Default)]
pub struct MemoryArgs {
    /// Initial shared memory (zero past its end; `-` reads stdin): a $readmemh text (.hex,
    /// .mem, .vmem, .txt: hex bytes, @addr, // comments; at most 1 MiB) or raw bytes (.bin,
    /// .raw; at most 4096). Under another name, or `-`, text that parses as $readmemh is
    /// text, anything else is raw, and text that does not parse is refused: say
    /// --mem-format.
    #[arg(long, value_name = "SM")]
    pub mem: Option<PathBuf>,
    /// How to read --mem, whatever its name says: `hex` ($readmemh text) or `raw` (bytes).
    #[arg(long, value_enum, value_name = "FORMAT", requires = "mem")]
    pub mem_format: Option<MemoryFormatArg>,
}

impl MemoryArgs {
    /// The program, `--mem` if given, then `others`: the inputs of a command, named by
    /// their flags.
    pub fn inputs(&self, program: &Path, others: &[Named]) -> Vec<Named> {
        let mut inputs = vec![Named::new("PROGRAM", program)];
        inputs.extend(self.mem.as_deref().map(|m| Named::new("--mem", m)));
        inputs.extend_from_slice(others);
        inputs
    }

    /// A usage error if two inputs read one stream, which gives its bytes once
    /// ([`one_reader_per_stream`]): of the program (with the files it includes), `--mem`
    /// and `others`, by what the files are, not only the literal `-`.
    pub fn check_streams(&self, program: &Path, others: &[Named]) -> Result<(), String> {
        one_reader_per_stream(&with_included(self.inputs(program, others), false))
    }

    /// The initial memory of a run of `program`, whose source's `.data` gave `data`:
    /// `--mem` when given (with a warning on stderr that `data` is ignored, if there is
    /// any), else `data`, else none.
    pub fn load_for(&self, program: &Path, data: Option<Vec<u8>>) -> Result<Vec<u8>, InputError> {
        match (data, &self.mem) {
            (Some(data), None) => Ok(data),
            (Some(_), Some(mem)) => {
                stderr_line!(
                    "warning: --mem {} is the initial memory: the `.data` directives of {} are ignored",
                    gpu16::shown::path(mem),
                    gpu16::shown::path(program)
                );
                self.load()
            }
            (None, _) => self.load(),
        }
    }

    /// The initial memory: the bytes the file gave, read by the one rule (memory past
    /// them is zero), or none without `--mem`.
    pub fn load(&self) -> Result<Vec<u8>, InputError> {
        let Some(path) = &self.mem else {
            return Ok(Vec::new());
        };
        let format = self.mem_format.map(|f| f.0);
        let mut image = MemoryImage::load(path, format, "--mem-format")?;
        image.bytes.truncate(image.given);
        Ok(image.bytes)
    }
}
