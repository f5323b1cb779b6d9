//! The files a run writes: `--dump-mem` (the final shared memory, 4096 bytes), `--mem-png`,
//! `--trace` and `--vcd`. The command prepares each one ([`OutputFile::prepare`]) before the
//! run starts; afterwards [`write()`] writes them all, for a failed run too, from the state at
//! the failure: the memory dump and picture hold the memory when the run stopped, the trace
//! and the waveform go up to that cycle. A file that cannot be written does not stop the
//! others.

use super::events::Recorder;
use super::exec_log::ExecLog;
use super::file::{OutputError, OutputFile};
use super::png::Palette;
use super::see::{state_of, Outcome};
use crate::input::memory;
use std::io::Write;

/// One kind of file a run can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunFile {
    /// The shared memory: 4096 raw bytes, or `$readmemh` text where the file's extension
    /// names a text ([`crate::input::memory::written_format`]).
    MemoryDump,
    /// The shared memory as a 64x64 PNG in a palette, each byte a square of this many
    /// pixels a side.
    MemoryPicture(Palette, u32),
    /// Chrome trace events of the run.
    Trace,
    /// A value-change dump of the run.
    Waveform,
    /// The execution log, one line per executed instruction.
    ExecLog,
}

impl RunFile {
    /// What the file holds, as messages name it.
    pub(crate) fn what(self) -> &'static str {
        match self {
            RunFile::MemoryDump => "memory dump",
            RunFile::MemoryPicture(..) => "memory picture",
            RunFile::Trace => "trace",
            RunFile::Waveform => "waveform",
            RunFile::ExecLog => "execution log",
        }
    }
}

/// A file to write after the run: the flag that asked for it, what and where.
#[derive(Debug)]
pub struct Planned {
    /// The command-line flag that asked for it (`--dump-mem`, `--trace`, ...), for messages.
    pub flag: &'static str,
    /// What to write.
    pub file: RunFile,
    /// Where, checked and prepared before the run.
    pub output: OutputFile,
}

/// What became of a planned file.
#[derive(Debug)]
pub struct Written<'a> {
    /// The file it was.
    pub(crate) planned: &'a Planned,
    /// Whether it was written, or why not.
    pub result: Result<(), OutputError>,
}

/// Write every planned file of a run's outcome, finished or failed.
pub fn write<'a>(
    planned: &'a [Planned],
    events: &mut Option<Recorder>,
    exec_log: Option<&ExecLog>,
    outcome: &Outcome,
) -> Vec<Written<'a>> {
    let state = state_of(outcome);
    planned
        .iter()
        .map(|p| {
            let result = p.output.write(|w| -> Result<(), String> {
                match (p.file, events.as_mut()) {
                    (RunFile::MemoryDump, _) => {
                        let format = memory::written_format(p.output.path());
                        w.write_all(&memory::encode_memory(&state.memory[..], format))
                            .map_err(|e| e.to_string())
                    }
                    (RunFile::MemoryPicture(palette, scale), _) => {
                        super::png::write(w, &state.memory, palette, scale)
                            .map_err(|e| e.to_string())
                    }
                    (RunFile::Trace, Some(rec)) => {
                        super::trace::write(w, rec, state).map_err(|e| e.to_string())
                    }
                    (RunFile::Waveform, Some(rec)) => {
                        super::vcd::write(w, rec, state.cycles).map_err(|e| e.to_string())
                    }
                    (RunFile::Trace | RunFile::Waveform, None) => {
                        Err("the run recorded no events (a bug in gpu16)".into())
                    }
                    (RunFile::ExecLog, _) => match exec_log {
                        Some(log) => log.write(w).map_err(|e| e.to_string()),
                        None => Err("the run kept no execution log (a bug in gpu16)".into()),
                    },
                }
            });
            Written { planned: p, result }
        })
        .collect()
}

/// The files that were written, for a failed run's message: "wrote memory dump to m.bin,
/// trace to t.json"; `None` if none was.
pub fn wrote(written: &[Written]) -> Option<String> {
    let done: Vec<String> = written
        .iter()
        .filter(|w| w.result.is_ok())
        .map(|w| {
            format!(
                "{} to {}",
                w.planned.file.what(),
                super::shown::path(w.planned.output.path())
            )
        })
        .collect();
    (!done.is_empty()).then(|| format!("wrote {}", done.join(", ")))
}
