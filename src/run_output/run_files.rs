//! The files a run writes: `--dump-mem` (the final shared memory, 4096 bytes), `--mem-png`,
//! `--trace` and `--vcd`. The command prepares each one ([`OutputFile::prepare`]) before the
//! run starts; afterwards [`write()`] writes them all, for a failed run too, from the state at
//! the failure: the memory dump and picture hold the memory when the run stopped, the trace
//! and the waveform go up to that cycle. A file that cannot be written does not stop the
//! others.

use super::events::Recorder;
use super::file::{OutputError, OutputFile};
use super::png::Palette;
use super::see::{state_of, Outcome};
use gpu16::input::memory;
use gpu16::output::exec_log::ExecLog;
use std::io::Write;

/// One kind of file a run can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunFile {
    /// The shared memory: 4096 raw bytes, or `$readmemh` text where the file's extension
    /// names a text ([`gpu16::input::memory::written_format`]).
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
                        let bytes = memory::MemoryFormat::written_at(p.output.path())
                            .encode(&state.memory[..]);
                        w.write_all(&bytes).map_err(|e| e.to_string())
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
                gpu16::shown::path(w.planned.output.path())
            )
        })
        .collect();
    (!done.is_empty()).then(|| format!("wrote {}", done.join(", ")))
}

/// [`run_document`](gpu16::output::json::run_document) with the output files the run was
/// asked for in `outputs`: a finished run whose outputs could not all be written has an
/// `error` with `rule` `output` and the messages, one a line.
pub fn run_document(
    outcome: &Outcome,
    source_map: Option<&gpu16_asm::SourceMap>,
    written: &[Written],
) -> serde_json::Value {
    let mut v = gpu16::output::json::run_document(outcome, source_map);
    v["outputs"] = outputs(written);
    let unwritten: Vec<String> = written
        .iter()
        .filter_map(|w| w.result.as_ref().err().map(ToString::to_string))
        .collect();
    if outcome.is_ok() && !unwritten.is_empty() {
        v["error"] = serde_json::json!({"rule": "output", "message": unwritten.join("\n")});
    }
    v
}

/// The output files a run was asked for, for `--json`'s `outputs`: each with the `flag`
/// that asked, the `file` and whether it was `written`, with the `error` if it was not.
fn outputs(written: &[Written]) -> serde_json::Value {
    written
        .iter()
        .map(|w| {
            let mut v = serde_json::json!({
                "flag": w.planned.flag,
                "file": w.planned.output.path().display().to_string(),
                "written": w.result.is_ok(),
            });
            if let Err(e) = &w.result {
                v["error"] = serde_json::json!(e.to_string());
            }
            v
        })
        .collect()
}
