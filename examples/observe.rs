//! Watch a run through the [`Observer`] API: each task's broadcast, start and end, built from
//! the cores' parts, and every atomic sequence's lock hold time, from the run's events.
//!
//! ```text
//! cargo run --release --example observe [PROGRAM [MEMORY]]
//! ```
//!
//! Without arguments it runs `examples/counter.s`, where 16 cores take turns on one lock.
//! PROGRAM and MEMORY are read as `gpu16 run` reads them (`.s`, `.bin`, `.hex`; raw or hex
//! bytes). A failed run still prints what was observed up to the failure.

use gpu16::machine::{Config, Event, Observer, RunReport, StallCause};
use gpu16::BackendKind;
use std::collections::BTreeMap;
use std::io::{ErrorKind, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// What the run reports as it goes. Events come grouped per core, not in cycle order (cores
/// run ahead of one another), so they are kept and sorted when printed.
#[derive(Default)]
struct Watch {
    /// Per instruction frame: its cores and the cycles of its code broadcast.
    broadcasts: BTreeMap<usize, (u16, u64, u64)>,
    /// Per instruction frame: each core's part, `(core, start, end)`, both ends inclusive.
    parts: BTreeMap<usize, Vec<(u8, u64, u64)>>,
    /// Every closed atomic sequence: `(ld_sync cycle, st_sync cycle, core, address)`.
    locks: Vec<(u64, u64, u8, u16)>,
    /// Per core, cycles stalled on a lock and on a bank conflict.
    stalls: [[u64; 2]; 16],
}

impl Observer for Watch {
    fn event(&mut self, event: Event) {
        match event {
            Event::Broadcast {
                frame,
                mask,
                from,
                to,
                ..
            } => {
                self.broadcasts.insert(frame, (mask, from, to));
            }
            Event::CorePart {
                core,
                frame,
                start,
                end,
            } => self
                .parts
                .entry(frame)
                .or_default()
                .push((core, start, end)),
            Event::LockHeld {
                core,
                addr,
                from,
                to,
            } => self.locks.push((from, to, core, addr)),
            Event::Stall {
                core,
                from,
                to,
                cause,
                ..
            } => {
                let kind = match cause {
                    StallCause::Lock => 0,
                    StallCause::BankConflict => 1,
                };
                self.stalls[usize::from(core)][kind] += to - from;
            }
            Event::ControlFrame { .. } | Event::SchedulerWait { .. } => {}
        }
    }

    /// A fault or a livelock: the run reports again the events before its cycle, which
    /// are all that happened in the state it reports.
    fn rewind_events(&mut self, _cycle: u64) {
        *self = Watch::default();
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (program_path, name) = match args.next().map(PathBuf::from) {
        Some(path) => (path.clone(), path.display().to_string()),
        None => (
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/counter.s")),
            "examples/counter.s".to_string(),
        ),
    };
    let program = match gpu16::input::load_program(&program_path) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let memory = match args.next().map(PathBuf::from) {
        Some(path) => match gpu16::input::load_memory(&path) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => Vec::new(),
    };

    let mut watch = Watch::default();
    let config = Config::default();
    let outcome = gpu16::run_observed(BackendKind::Auto, &program, &memory, &config, &mut watch);
    let (report, status) = match outcome {
        Ok(report) => (report, ExitCode::SUCCESS),
        Err(failure) => {
            eprintln!("error: {name}: {}", failure.error);
            (failure.state, ExitCode::FAILURE)
        }
    };
    // Written at once, so a reader that stops early (`| head`) is not an error.
    let text = describe(&name, &report, &mut watch);
    match std::io::stdout().write_all(text.as_bytes()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => {
            eprintln!("error: cannot write to standard output: {e}");
            ExitCode::FAILURE
        }
        _ => status,
    }
}

/// What the run did, as text: the tasks, then the locks.
fn describe(name: &str, report: &RunReport, watch: &mut Watch) -> String {
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!(
        "{name} on {}: cycles {}, instructions {}, tasks {}",
        report.backend, report.cycles, report.instructions, report.task_summary.tasks
    ));

    line("\ntasks (from Broadcast and CorePart events; cycles inclusive)".into());
    line("  frame  cores   broadcast   start    end  parts".into());
    for (frame, &(mask, from, to)) in &watch.broadcasts {
        let parts = watch.parts.get(frame).map_or(&[][..], Vec::as_slice);
        // A task starts when its cores do and ends with its last core's last instruction.
        let start = parts.iter().map(|p| p.1).min();
        let end = parts.iter().map(|p| p.2).max();
        let ended = parts.len() == mask.count_ones() as usize;
        let show = |c: Option<u64>| c.map_or("-".to_string(), |c| c.to_string());
        line(format!(
            "  {frame:>5}  {mask:#06x}  {:>10}  {:>6}  {:>5}  {}{}",
            format!("{from}-{to}"),
            show(start),
            show(end.filter(|_| ended)),
            parts.len(),
            if ended { "" } else { " (unfinished)" },
        ));
    }

    watch.locks.sort_unstable();
    line(format!(
        "\nlocks: {} atomic sequences (hold time = st_sync cycle - ld_sync cycle)",
        watch.locks.len()
    ));
    if !watch.locks.is_empty() {
        let holds: Vec<u64> = watch.locks.iter().map(|l| l.1 - l.0).collect();
        let total: u64 = holds.iter().sum();
        line(format!(
            "  hold cycles: total {total}, min {}, max {}, mean {:.2}",
            holds.iter().min().unwrap_or(&0),
            holds.iter().max().unwrap_or(&0),
            total as f64 / holds.len() as f64
        ));
        line("  the first sequences in cycle order:".into());
        for &(from, to, core, addr) in watch.locks.iter().take(8) {
            line(format!(
                "    core {core:>2} held {addr:#05x} from cycle {from} to {to} ({} cycles)",
                to - from
            ));
        }
        if watch.locks.len() > 8 {
            line(format!("    ... {} more", watch.locks.len() - 8));
        }
    }

    line("\nper core (sequences and hold cycles from LockHeld, stalls from Stall events)".into());
    line("  core  sequences  hold  lock stalls  bank stalls".into());
    for core in 0..16u8 {
        let mine = watch.locks.iter().filter(|l| l.2 == core);
        let (count, hold) = mine.fold((0, 0), |(n, h), l| (n + 1, h + (l.1 - l.0)));
        let [lock, bank] = watch.stalls[usize::from(core)];
        if count + lock + bank > 0 {
            line(format!(
                "  {core:>4}  {count:>9}  {hold:>4}  {lock:>11}  {bank:>11}"
            ));
        }
    }
    out
}
