//! The `gpu16 run` flags that show the machine: `--trace`, `--trace-limit`, `--timeline`,
//! `--width`, `--mem-png`, `--palette`, `--png-scale`, `--vcd` and `--vcd-regs`. They are
//! parsed here and handed to the
//! library as a [`SeeOptions`], which does the work.

use super::bounds::{MAX_TRACE_LIMIT, MAX_WIDTH};
use super::value_enums::PaletteArg;
use crate::run_output::events::DEFAULT_LIMIT;
use crate::run_output::png::{Palette, MAX_SCALE};
use crate::run_output::see::SeeOptions;
use clap::Args;
use std::path::PathBuf;

/// The flags of the pictures of a run.
#[derive(Args, Clone, Debug)]
pub struct SeeArgs {
    /// Write a Chrome trace-event JSON of the run to FILE (open it in ui.perfetto.dev or
    /// chrome://tracing; 1 us = 1 cycle).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Keep at most N run events for --trace, --timeline and --vcd: the earliest cycles; the
    /// outputs say where they were cut. N is 1 to 10000000.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT as u64,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TRACE_LIMIT))]
    pub trace_limit: u64,
    /// Print a chart of tasks per core over the cycles (for short programs).
    #[arg(long, conflicts_with = "json")]
    pub timeline: bool,
    /// Width of the --timeline chart in columns, 1 to 100000 [default: $COLUMNS, else 100].
    #[arg(long, value_name = "N", requires = "timeline",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=MAX_WIDTH as u64))]
    pub width: Option<usize>,
    /// Write the final shared memory as a 64x64 PNG (a pixel a byte, address y*64+x).
    #[arg(long, value_name = "FILE")]
    pub mem_png: Option<PathBuf>,
    /// Colours of --mem-png.
    #[arg(long, value_enum, default_value_t = PaletteArg(Palette::Gray), requires = "mem_png")]
    pub palette: PaletteArg,
    /// Draw each byte of --mem-png as an N x N square, 1 to 32 (a picture of 64N x 64N).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "mem_png",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SCALE)))]
    pub png_scale: u32,
    /// Write a value-change dump (GTKWave) of per-core busy/ready/stall and IP, EXEC_MASK
    /// and the task pointer to FILE (1 time unit = 1 cycle).
    #[arg(long, value_name = "FILE")]
    pub vcd: Option<PathBuf>,
    /// Add each core's registers r0..r15 to --vcd, 8 bits each (a raw image is then read
    /// whole, for the control frames' R0 init).
    #[arg(long, requires = "vcd")]
    pub vcd_regs: bool,
}

impl SeeArgs {
    /// The options as the library takes them.
    pub fn options(self) -> SeeOptions {
        SeeOptions {
            trace: self.trace,
            trace_limit: self.trace_limit,
            timeline: self.timeline,
            width: self.width,
            mem_png: self.mem_png,
            palette: self.palette.0,
            png_scale: self.png_scale,
            vcd: self.vcd,
            vcd_regs: self.vcd_regs,
        }
    }
}
