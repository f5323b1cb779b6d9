//! Showing the machine (`--trace`, `--timeline`, `--mem-png`, `--vcd` and their options),
//! and running with the event recorder only when one of the event outputs is asked for, so
//! plain runs keep the machine's no-op observer. The binary's `SeeArgs` parses the flags
//! into a [`SeeOptions`]; this module renders the chart, [`super::run_files`] writes the
//! files, and the caller prints the chart and the note.
//!
//! The outputs are made for failed runs too: a trace of a run that faulted or hit the
//! watchdog is often the quickest way to see why.

use super::core_trace::CoreTrace;
use super::events::Recorder;
use super::png::Palette;
use gpu16::{ProgramInput, Runner};
use gpu16_machine::{Config, Observer, Program, RunFailure, RunReport};
use std::path::PathBuf;

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
    /// Pixels a side of each byte's square in the memory picture (1 to
    /// [`super::png::MAX_SCALE`]).
    pub png_scale: u32,
    /// Write a value-change dump (GTKWave) here.
    pub vcd: Option<PathBuf>,
    /// Add each core's 16 registers to the value-change dump.
    pub vcd_regs: bool,
}

/// The outcome of a run, as [`gpu16::run`] returns it.
pub type Outcome = Result<RunReport, Box<RunFailure>>;

impl SeeOptions {
    fn wants_events(&self) -> bool {
        self.trace.is_some() || self.timeline || self.vcd.is_some()
    }

    /// Whether an output needs the whole program after the run (the timeline names each
    /// task's group), so that it cannot be read as a stream.
    pub fn needs_program(&self) -> bool {
        // The VCD's registers read each control frame's R0 init from the program.
        self.timeline || (self.vcd.is_some() && self.vcd_regs)
    }

    /// Run as [`gpu16::run`] does, recording events if an output needs them.
    pub fn run<P: Observer>(
        &self,
        backend: Runner,
        program: ProgramInput<'_>,
        memory: &[u8],
        config: &Config,
        progress: &mut P,
    ) -> (Outcome, Option<Recorder>) {
        if !self.wants_events() {
            return (
                gpu16::run_input_observed(backend, program, memory, config, progress),
                None,
            );
        }
        let limit = usize::try_from(self.trace_limit).unwrap_or(usize::MAX);
        if self.vcd.is_some() {
            // The VCD's per-core IP and registers need every executed instruction, kept
            // within the same limit as the events.
            let whole = match &program {
                ProgramInput::Whole(p) => Some(*p),
                ProgramInput::Stream(_) => None,
            };
            let mut all = (
                (Recorder::new(limit), CoreTrace::new(whole, limit)),
                progress,
            );
            let outcome = gpu16::run_input_observed(backend, program, memory, config, &mut all);
            let ((mut rec, cores), _) = all;
            rec.set_cores(cores.finish(), self.vcd_regs);
            return (outcome, Some(settled(rec)));
        }
        let mut both = (Recorder::new(limit), progress);
        let outcome = gpu16::run_input_observed(backend, program, memory, config, &mut both);
        (outcome, Some(settled(both.0)))
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
        let cores = rec.cores().and_then(|(c, _)| c.cut_at);
        let Some(c) = rec.cut_at() else {
            let c = cores?;
            return Some(format!(
                "note: --trace-limit {} kept the executed instructions before cycle {c} for \
                 the VCD's per-core signals; the VCD stops at cycle {c}",
                self.trace_limit
            ));
        };
        let vcd = match cores.filter(|&k| k < c) {
            Some(k) => format!("; the VCD, for its per-core signals, at cycle {k}"),
            None => String::new(),
        };
        Some(format!(
            "note: --trace-limit {} kept the {} events before cycle {c} and dropped {} \
             later ones; the trace, timeline and VCD stop at cycle {c}{vcd}",
            self.trace_limit,
            rec.seen() - rec.dropped(),
            rec.dropped()
        ))
    }
}

/// `rec` with its last cut made: the recorder cuts lazily, when its events are first read,
/// so a writer that asked [`Recorder::cut_at`] before reading them (the trace, the timeline
/// and the VCD all do) would miss a cut made then and not say where its record stops.
fn settled(mut rec: Recorder) -> Recorder {
    rec.events();
    rec
}

/// The machine a run left behind, finished or failed.
pub fn state_of(outcome: &Outcome) -> &RunReport {
    match outcome {
        Ok(r) => r,
        Err(f) => &f.state,
    }
}
