//! The `gpu16 run` flags that show the machine (`--trace`, `--timeline`, `--mem-png`,
//! `--vcd` and their options), and running with the event recorder only when one of the
//! event outputs is asked for, so plain runs keep the machine's no-op observer.
//!
//! The outputs are written for failed runs too: a trace of a run that faulted or hit the
//! watchdog is often the quickest way to see why.

use super::events::{Recorder, DEFAULT_LIMIT};
use super::png::Palette;
use crate::BackendKind;
use gpu16_machine::{Config, Observer, Program, RunFailure, RunReport};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Clone, Debug)]
pub struct SeeArgs {
    /// Write a Chrome trace-event JSON of the run to FILE (open it in ui.perfetto.dev or
    /// chrome://tracing; 1 us = 1 cycle).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Keep at most N run events for --trace, --timeline and --vcd: the earliest cycles; the
    /// outputs say where they were cut.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub trace_limit: u64,
    /// Print a chart of tasks per core over the cycles (for short programs).
    #[arg(long, conflicts_with = "json")]
    pub timeline: bool,
    /// Width of the --timeline chart in columns [default: $COLUMNS, else 100].
    #[arg(long, value_name = "N", requires = "timeline")]
    pub width: Option<usize>,
    /// Write the final shared memory as a 64x64 PNG (a pixel a byte, address y*64+x).
    #[arg(long, value_name = "FILE")]
    pub mem_png: Option<PathBuf>,
    /// Colours of --mem-png.
    #[arg(long, value_enum, default_value_t = Palette::Gray, requires = "mem_png")]
    pub palette: Palette,
    /// Write a value-change dump (GTKWave) of per-core busy/ready/stall, EXEC_MASK and the
    /// task pointer to FILE (1 time unit = 1 cycle).
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
}

pub type Outcome = Result<RunReport, Box<RunFailure>>;

impl SeeArgs {
    fn wants_events(&self) -> bool {
        self.trace.is_some() || self.timeline || self.vcd.is_some()
    }

    /// Run as [`crate::run`] does, recording events if an output needs them.
    pub fn run<P: Observer>(
        &self,
        backend: BackendKind,
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

    /// Write the requested outputs of a run (or of a failed run's state); print the timeline
    /// on stdout. Errors name the file.
    pub fn write(
        &self,
        events: &mut Option<Recorder>,
        program: &Program,
        outcome: &Outcome,
    ) -> Result<(), String> {
        let state = match outcome {
            Ok(r) => r,
            Err(f) => &f.state,
        };
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
        if self.timeline {
            let width = self.width.unwrap_or_else(super::timeline::default_width);
            let chart = super::timeline::render(rec, program, state.cycles, width);
            let mut out = std::io::stdout().lock();
            // A closed pipe is not worth an error, as for the report.
            let _ = out
                .write_all(format!("{chart}\n").as_bytes())
                .and_then(|()| out.flush());
        }
        if let Some(c) = rec.cut_at() {
            eprintln!(
                "note: --trace-limit {} kept the {} events before cycle {c} and dropped {} \
                 later ones; the trace, timeline and VCD stop at cycle {c}",
                self.trace_limit,
                rec.seen() - rec.dropped(),
                rec.dropped()
            );
        }
        Ok(())
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
