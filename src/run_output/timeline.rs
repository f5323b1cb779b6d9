//! `--timeline`: a terminal Gantt chart of a run in the manner of the spec's figures 2 and 3.
//! Rows are the task scheduler (TS) and each core that ran; columns are cycles, scaled by a
//! whole number of cycles per column so the chart fits the width. Every frame has one
//! character (its index in base 62), used for the TS's work on it (a CF's processing, an IF's
//! code broadcast) and for the cores' parts of its task, so a task can be followed from its
//! broadcast to its cores; the legend lists them.
//!
//! When a column spans several cycles it shows whatever covers most of them, except that a
//! core's column with a stall in any of its cycles shows the stall: at every width, a
//! stalled cycle is never hidden (the task's character shows in the columns around it).

use super::events::Recorder;
use gpu16_machine::{Event, FrameKind, Program, WaitCause};
use std::fmt::Write;

const FRAME_CHARS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const LABEL: usize = 8;
const LEGEND_FRAMES: usize = 40;
const STALL: char = '*';

/// The character that stands for `frame` in the chart.
pub(crate) fn frame_char(frame: usize) -> char {
    char::from(FRAME_CHARS[frame % FRAME_CHARS.len()])
}

fn wait_char(cause: WaitCause) -> char {
    match cause {
        WaitCause::CoresBusy => '-',
        WaitCause::Acquire => '=',
        WaitCause::Release => '!',
    }
}

/// The widest chart: each of its up to 17 rows is allocated at the full width; 100,000
/// columns is one column a cycle for a run of 100,000 cycles, and about 14 MB. `--width`
/// refuses more, and a larger `$COLUMNS` is cut to it.
pub const MAX_WIDTH: usize = 100_000;

/// The chart width when `--width` is not given: the terminal's width when stdout is one,
/// else $COLUMNS (at most [`MAX_WIDTH`]), else 100.
pub(crate) fn default_width() -> usize {
    let term = console::Term::stdout();
    if let Some((_, cols)) = term.is_term().then(|| term.size_checked()).flatten() {
        if cols > 0 {
            return usize::from(cols);
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&c: &usize| c > 0)
        .map_or(100, |c| c.min(MAX_WIDTH))
}

/// Cycles (first, last) of a frame's broadcast and of its cores' parts.
type FrameSpans = (Option<(u64, u64)>, Option<(u64, u64)>);

struct Row {
    label: String,
    /// Per column: the character shown and how many of the column's cycles it covers.
    cells: Vec<(char, u64)>,
}

struct Canvas {
    /// Cycles per column.
    k: u64,
    cols: usize,
}

impl Canvas {
    /// Paint cycles `from..to` (end exclusive). `ties` lets the paint win a column it covers
    /// as much as what is there.
    fn paint(&self, row: &mut Row, from: u64, to: u64, ch: char, ties: bool) {
        if to <= from {
            return;
        }
        let first = from / self.k;
        let last = (to - 1) / self.k;
        for col in first..=last.min(self.cols as u64 - 1) {
            let lo = from.max(col * self.k);
            let hi = to.min((col + 1) * self.k);
            let cover = hi - lo;
            let cell = &mut row.cells[col as usize];
            if cover > cell.1 || (ties && cover == cell.1 && cover > 0) {
                *cell = (ch, cover);
            }
        }
    }

    /// Mark every column that any of cycles `from..to` (end exclusive) falls in with `ch`,
    /// whatever else covers it.
    fn mark(&self, row: &mut Row, from: u64, to: u64, ch: char) {
        if to <= from {
            return;
        }
        let last = ((to - 1) / self.k).min(self.cols as u64 - 1);
        for col in from / self.k..=last {
            let cell = &mut row.cells[col as usize];
            *cell = (ch, cell.1.max(1));
        }
    }
}

/// Render the chart of a run of `program` that took `cycles` cycles, `width` columns wide.
pub(crate) fn render(rec: &mut Recorder, program: &Program, cycles: u64, width: usize) -> String {
    let cf_cycles = rec.config().timing.control_frame_cycles;
    let cut = rec.cut_at();
    let events = rec.events();
    let span = cut.map_or(cycles, |c| c.min(cycles));
    let mut s = String::new();
    if span == 0 {
        let _ = writeln!(s, "timeline: the run took no cycles");
        return s;
    }
    let room = width.saturating_sub(LABEL + 2).max(10) as u64;
    let k = span.div_ceil(room);
    let canvas = Canvas {
        k,
        cols: span.div_ceil(k) as usize,
    };
    let new_row = |label: String| Row {
        label,
        cells: vec![(' ', 0); canvas.cols],
    };
    let mut ts = new_row("TS".into());
    let mut cores: Vec<Option<Row>> = (0..16).map(|_| None).collect();
    let mut stalls: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 16];
    // Per frame: (broadcast, first and last cycle its cores ran), for the legend.
    let mut seen: std::collections::BTreeMap<usize, FrameSpans> = Default::default();
    for e in events {
        match *e {
            Event::ControlFrame { frame, cycle } => {
                seen.entry(frame).or_default();
                canvas.paint(&mut ts, cycle, cycle + cf_cycles, frame_char(frame), false);
            }
            Event::Broadcast {
                frame, from, to, ..
            } => {
                seen.entry(frame).or_default().0 = Some((from, to));
                canvas.paint(&mut ts, from, to + 1, frame_char(frame), false);
            }
            Event::SchedulerWait {
                from, to, cause, ..
            } => canvas.paint(&mut ts, from, to, wait_char(cause), false),
            Event::CorePart {
                core,
                frame,
                start,
                end,
            } => {
                let ran = &mut seen.entry(frame).or_default().1;
                *ran = Some(ran.map_or((start, end), |(a, b)| (a.min(start), b.max(end))));
                let row =
                    cores[usize::from(core)].get_or_insert_with(|| new_row(format!("core {core}")));
                canvas.paint(row, start, end + 1, frame_char(frame), false);
            }
            Event::Stall { core, from, to, .. } => {
                // Bank conflicts come one cycle at a time: merge them so a column of stalls
                // is recognised as one.
                let list = &mut stalls[usize::from(core)];
                match list.last_mut() {
                    Some(last) if last.1 == from => last.1 = to,
                    _ => list.push((from, to)),
                }
            }
            Event::LockHeld { .. } => {}
        }
    }
    for (row, list) in cores.iter_mut().zip(&stalls) {
        if let Some(row) = row {
            for &(from, to) in list {
                canvas.mark(row, from, to, STALL);
            }
        }
    }

    let _ = writeln!(s, "{}", axis(&canvas));
    for row in std::iter::once(&ts).chain(cores.iter().flatten()) {
        let chart: String = row.cells.iter().map(|c| c.0).collect();
        let _ = writeln!(s, "{:<LABEL$}|{chart}|", row.label);
    }
    let unit = if k == 1 { "cycle" } else { "cycles" };
    let _ = write!(
        s,
        "1 column = {k} {unit}; cycles 0-{} of {cycles}",
        span - 1
    );
    if let Some(c) = cut {
        let _ = write!(s, " (events from cycle {c} on were cut by --trace-limit)");
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "  -  TS waits: cores busy   =  TS waits: acq fence   !  TS waits: rel fence   {STALL}  core stalled"
    );
    for (&frame, &(broadcast, ran)) in seen.iter().take(LEGEND_FRAMES) {
        let _ = write!(s, "  {}  frame {frame}: ", frame_char(frame));
        match program.kind(frame) {
            FrameKind::Control => {
                let cf = program.control(frame);
                let _ = write!(
                    s,
                    "CF, {} IF(s) on cores {:#06x}, fence {}",
                    cf.if_num,
                    cf.active,
                    cf.fence.name()
                );
            }
            FrameKind::Instr { control } => {
                let _ = write!(s, "IF of CF {control}");
                if let Some((a, b)) = broadcast {
                    let _ = write!(s, ", broadcast {a}-{b}");
                }
                match ran {
                    Some((a, b)) => {
                        let _ = write!(s, ", ran {a}-{b}");
                    }
                    None if program.control(control).active == 0 => {
                        let _ = write!(s, ", no cores");
                    }
                    None => {
                        // Cut by the limit, or the run failed while it ran.
                        let _ = write!(s, ", no part ended before cycle {span}");
                    }
                }
            }
        }
        let _ = writeln!(s);
    }
    if seen.len() > LEGEND_FRAMES {
        let _ = writeln!(
            s,
            "  ... {} more frames (characters repeat every {} frames)",
            seen.len() - LEGEND_FRAMES,
            FRAME_CHARS.len()
        );
    }
    s
}

/// The cycle numbers above the chart, one every ten columns where they fit.
fn axis(c: &Canvas) -> String {
    let mut line: Vec<char> = format!("{:<w$}", "cycle", w = LABEL + 1).chars().collect();
    for col in (0..c.cols).step_by(10) {
        let label = (col as u64 * c.k).to_string();
        let at = LABEL + 1 + col;
        if line.len() > at {
            continue;
        }
        line.resize(at, ' ');
        line.extend(label.chars());
        line.push(' ');
    }
    line.into_iter().collect::<String>().trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_output::testprog::*;
    use gpu16::BackendKind;
    use gpu16_machine::{Config, Fence, IssuePolicy};

    fn chart(p: &Program, config: &Config, width: usize) -> String {
        let mut rec = Recorder::new(100_000);
        let r = gpu16::run_observed(BackendKind::Interp, p, &[], config, &mut rec).unwrap();
        render(&mut rec, p, r.cycles, width)
    }

    #[test]
    fn spec_example_1_by_hand() {
        // The timing of testprog::spec_example, one column a cycle (50 cycles in 91 columns).
        let got = chart(&spec_example(Fence::Acq), &Config::default(), 100);
        let a = "|     1111    2222    3333    4444                 |";
        let b = "|                                      6666    7777|";
        let mut want = String::new();
        want += "cycle    0         10        20        30        40\n";
        want += "TS      |01111----2222----3333----4444====56666----7777    |\n";
        for c in 0..16 {
            let row = if (0x0f0f >> c) & 1 == 1 { a } else { b };
            want += &format!("{:<8}{row}\n", format!("core {c}"));
        }
        want += "1 column = 1 cycle; cycles 0-49 of 50\n";
        want += "  -  TS waits: cores busy   =  TS waits: acq fence   !  TS waits: rel fence   *  core stalled\n";
        want += "  0  frame 0: CF, 4 IF(s) on cores 0x0f0f, fence acq\n";
        want += "  1  frame 1: IF of CF 0, broadcast 1-4, ran 5-8\n";
        want += "  2  frame 2: IF of CF 0, broadcast 9-12, ran 13-16\n";
        want += "  3  frame 3: IF of CF 0, broadcast 17-20, ran 21-24\n";
        want += "  4  frame 4: IF of CF 0, broadcast 25-28, ran 29-32\n";
        want += "  5  frame 5: CF, 2 IF(s) on cores 0xf0f0, fence acq\n";
        want += "  6  frame 6: IF of CF 5, broadcast 34-37, ran 38-41\n";
        want += "  7  frame 7: IF of CF 5, broadcast 42-45, ran 46-49\n";
        assert_eq!(got, want, "\n{got}");
    }

    #[test]
    fn spec_example_2_with_lookahead_overlaps_the_groups() {
        // Example 2 (CF0 without a fence) under lookahead: CF1 in 5 while frame 1 runs, frame 6
        // broadcast 6-9 and run 10-13 beside frames 1-4 on the other cores; frame 2, ready
        // from cycle 9, waits for the TS to finish that broadcast: 10-13, then runs 14-17.
        let config = Config {
            issue: IssuePolicy::Lookahead,
            ..Config::default()
        };
        let got = chart(&spec_example(Fence::No), &config, 100);
        let lines: Vec<&str> = got.lines().collect();
        assert!(lines[1].starts_with("TS      |011115666"), "{got}");
        assert!(lines[2].starts_with("core 0  |     1111     2222"), "{got}");
        assert!(lines[6].starts_with("core 4  |          6666"), "{got}");
    }

    #[test]
    fn a_stall_marks_its_column_at_every_width() {
        // 4 cycles a column: a task in cycles 0..12 with a one-cycle stall in cycle 5 shows
        // the stall in column 1 (cycles 4-7), though the task covers 3 of its 4 cycles.
        let canvas = Canvas { k: 4, cols: 3 };
        let mut row = Row {
            label: "core 0".into(),
            cells: vec![(' ', 0); 3],
        };
        canvas.paint(&mut row, 0, 12, '1', false);
        canvas.mark(&mut row, 5, 6, STALL);
        let shown: String = row.cells.iter().map(|c| c.0).collect();
        assert_eq!(shown, "1*1");
        // A stall over a column boundary marks both columns; past the last, none.
        canvas.mark(&mut row, 7, 9, STALL);
        canvas.mark(&mut row, 12, 20, STALL);
        let shown: String = row.cells.iter().map(|c| c.0).collect();
        assert_eq!(shown, "1**");
    }

    #[test]
    fn scales_to_the_width_and_marks_stalls() {
        // Spec example 1 is 50 cycles: 19 columns of room (width 29) make 3 cycles a column.
        let got = chart(&spec_example(Fence::Acq), &Config::default(), 29);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines[0], "cycle    0         30");
        assert_eq!(lines[1].len(), LABEL + 2 + 17, "{got}");
        assert!(
            got.contains("1 column = 3 cycles; cycles 0-49 of 50"),
            "{got}"
        );
        // testprog::lock_pair: core 1 stalls in 6 and 7.
        let got = chart(&lock_pair(), &Config::default(), 100);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines[1], "TS      |01111       |");
        assert_eq!(lines[2], "core 0  |     11111  |");
        assert_eq!(lines[3], "core 1  |     1**1111|");
    }
}
