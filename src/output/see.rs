//! Showing the machine (`--trace`, `--timeline`, `--mem-png`, `--vcd` and their options),
//! and running with the event recorder only when one of the event outputs is asked for, so
//! plain runs keep the machine's no-op observer. The binary's `SeeArgs` parses the flags
//! into a [`SeeOptions`]; this module writes the files and renders the chart, and the caller
//! prints the chart and the note.
//!
//! The outputs are written for failed runs too: a trace of a run that faulted or hit the
//! watchdog is often the quickest way to see why.

use super::events::Recorder;
use super::png::Palette;
use crate::Runner;
use gpu16_machine::{Config, Observer, Program, RunFailure, RunReport};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Which pictures of a run to make, and where to write them.
#[derive(Clone, Debug)]
pub struct SeeOptions {
    /// Write a Chrome trace-event JSON of the run here.
    pub trace: Option<PathBuf>,
    /// Keep at most this many run events for the trace, the timeline and the VCD.
    pub trace_limit: u64,
    /// Render a chart of tasks per core over the cycles.
    pub timeline: bool,
    /// Width of the chart in columns; `None`: [`super::timeline::default_width`].
    pub width: Option<usize>,
    /// Write the final shared memory as a 64x64 PNG here.
    pub mem_png: Option<PathBuf>,
    /// Colours of the memory picture.
    pub palette: Palette,
    /// Write a value-change dump (GTKWave) here.
    pub vcd: Option<PathBuf>,
}

/// The outcome of a run, as [`crate::run`] returns it.
pub type Outcome = Result<RunReport, Box<RunFailure>>;

impl SeeOptions {
    fn wants_events(&self) -> bool {
        self.trace.is_some() || self.timeline || self.vcd.is_some()
    }

    /// Run as [`crate::run`] does, recording events if an output needs them.
    pub fn run<P: Observer>(
        &self,
        backend: Runner,
        program: &Program,
        memory: &[u8],
        config: &Config,
        progress: &mut P,
    ) -> (Outcome, Option<Recorder>) {
        if !self.wants_events() {
            return (
                crate::run_observed(backend, program, memory, config, progress),
                None,
            );
        }
        let limit = usize::try_from(self.trace_limit).unwrap_or(usize::MAX);
        let mut both = (Recorder::new(limit), progress);
        let outcome = crate::run_observed(backend, program, memory, config, &mut both);
        (outcome, Some(both.0))
    }

    /// Write the requested files of a run (or of a failed run's state). Errors name the
    /// file.
    pub fn write_files(
        &self,
        events: &mut Option<Recorder>,
        outcome: &Outcome,
    ) -> Result<(), String> {
        let state = state_of(outcome);
        if let Some(path) = &self.mem_png {
            to_file(path, |w| {
                super::png::write(w, &state.memory, self.palette).map_err(|e| e.to_string())
            })?;
        }
        let Some(rec) = events else {
            return Ok(());
        };
        if let Some(path) = &self.trace {
            to_file(path, |w| {
                super::trace::write(w, rec, state).map_err(|e| e.to_string())
            })?;
        }
        if let Some(path) = &self.vcd {
            to_file(path, |w| {
                super::vcd::write(w, rec, state.cycles).map_err(|e| e.to_string())
            })?;
        }
        Ok(())
    }

    /// The timeline chart with its final newline, if it was asked for.
    pub fn timeline(
        &self,
        events: &mut Option<Recorder>,
        program: &Program,
        outcome: &Outcome,
    ) -> Option<String> {
        let rec = events.as_mut().filter(|_| self.timeline)?;
        let width = self.width.unwrap_or_else(super::timeline::default_width);
        let chart = super::timeline::render(rec, program, state_of(outcome).cycles, width);
        Some(format!("{chart}\n"))
    }

    /// The note for stderr when the event limit cut the record short.
    pub fn cut_note(&self, events: &Option<Recorder>) -> Option<String> {
        let rec = events.as_ref()?;
        let c = rec.cut_at()?;
        Some(format!(
            "note: --trace-limit {} kept the {} events before cycle {c} and dropped {} \
             later ones; the trace, timeline and VCD stop at cycle {c}",
            self.trace_limit,
            rec.seen() - rec.dropped(),
            rec.dropped()
        ))
    }
}

/// The machine a run left behind, finished or failed.
fn state_of(outcome: &Outcome) -> &RunReport {
    match outcome {
        Ok(r) => r,
        Err(f) => &f.state,
    }
}

fn to_file(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> Result<(), String>,
) -> Result<(), String> {
    let fail = |e: String| format!("{}: cannot write: {e}", path.display());
    let file = File::create(path).map_err(|e| fail(e.to_string()))?;
    let mut w = BufWriter::new(file);
    body(&mut w).map_err(fail)?;
    w.flush().map_err(|e| fail(e.to_string()))
}
