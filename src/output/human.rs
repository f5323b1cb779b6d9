//! The report for people: cycles, the task table, registers of the cores that ran, and the
//! bytes of shared memory that changed, and the run's statistics; and the message of a
//! failed run, with source locations for an assembled program.

use super::location::FailureLocations;
use gpu16_asm::SourceMap;
use gpu16_machine::MEMORY_BYTES;
use gpu16_machine::{RunError, RunReport, TaskLog, TaskRecord, Timing};
use std::fmt::Write;
use std::path::Path;

/// The task table: a header line, then a line a task in issue order (an unfinished task's
/// end is `-`). The run report and the debugger's `tasks` both show it, and `run` writes it
/// a line at a time for a long run.
pub struct TaskTable;

impl TaskTable {
    /// A report ([`report`]) in the two parts the task table goes between, the table
    /// itself left out, for a caller that writes it from elsewhere (a long run's table,
    /// spooled to disk as the run went).
    pub fn around(r: &RunReport, initial: &[u8]) -> (String, String) {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "cycles {}   instructions {}   stalls {}   tasks {}   backend {}",
            r.cycles, r.instructions, r.stalls, r.task_summary.tasks, r.backend
        );
        if r.dialect != gpu16_machine::Dialect::Spec {
            let _ = writeln!(s, "dialect {}", r.dialect);
        }
        if r.config.timing != Timing::default() {
            let _ = writeln!(s, "timing {}", crate::timing::spec(&r.config.timing));
        }
        let head = std::mem::take(&mut s);
        let ran: Vec<usize> = (0..16).filter(|&i| r.cores[i].ran).collect();
        if !ran.is_empty() {
            let _ = writeln!(s, "\nregisters (hex) of the cores that ran");
            let _ = write!(s, "  core");
            for i in 0..16 {
                let _ = write!(s, " {:>3}", format!("r{i}"));
            }
            let _ = writeln!(s, "   instr  stalls");
            for &c in &ran {
                let _ = write!(s, "  {c:>4}");
                for v in r.registers[c] {
                    let _ = write!(s, "  {v:02x}");
                }
                let _ = writeln!(
                    s,
                    "  {:>6}  {:>6}",
                    r.cores[c].instructions, r.cores[c].stalls
                );
            }
        }
        let before = |a: usize| initial.get(a).copied().unwrap_or(0);
        let changed: Vec<usize> = (0..MEMORY_BYTES)
            .filter(|&a| r.memory[a] != before(a))
            .collect();
        let _ = writeln!(s, "\nshared memory: {} bytes changed", changed.len());
        let mut rows: Vec<usize> = changed.iter().map(|a| a & !0xF).collect();
        rows.dedup();
        const SHOWN: usize = 16;
        for &row in rows.iter().take(SHOWN) {
            let _ = write!(s, "  {row:03x}:");
            for a in row..row + 16 {
                if r.memory[a] != before(a) {
                    let _ = write!(s, " {:02x}", r.memory[a]);
                } else {
                    let _ = write!(s, " ..");
                }
            }
            let _ = writeln!(s);
        }
        if rows.len() > SHOWN {
            let _ = writeln!(
                s,
                "  ... {} more rows changed (use --dump-mem FILE or --json for all)",
                rows.len() - SHOWN
            );
        }
        s.push_str(&super::stats::human(r));
        (head, s)
    }

    /// The table's header line.
    pub const HEADER: &'static str = "  frame  cores   fence  issue  start    end\n";

    /// The table's heading in the run report, before its header line.
    pub const HEADING: &'static str = "\ntasks (issue order)\n";

    /// The whole table of `tasks`.
    pub fn of(tasks: &[TaskRecord]) -> String {
        let mut s = TaskTable::HEADER.as_bytes().to_vec();
        for t in tasks {
            TaskTable::push_line(&mut s, t);
        }
        String::from_utf8(s).expect("the task table is ASCII")
    }

    /// Append one task's line of the table, with its newline, to `out`: the text of
    /// `format!("  {:>5}  {:#06x}  {:<5}  {:>5}  {:>5}  {:>5}\n", ...)` written by hand,
    /// since a long stream's table is a million lines and `format!`'s machinery was a third
    /// of such a run's time.
    pub fn push_line(out: &mut Vec<u8>, t: &TaskRecord) {
        out.extend_from_slice(b"  ");
        push_right(out, t.frame as u64);
        out.extend_from_slice(b"  0x");
        for shift in [12, 8, 4, 0] {
            out.push(b"0123456789abcdef"[usize::from((t.mask >> shift) & 0xf)]);
        }
        out.extend_from_slice(b"  ");
        let fence = t.fence.name().as_bytes();
        out.extend_from_slice(fence);
        // Left-aligned in five columns, then the two between columns.
        out.extend_from_slice(&b"       "[fence.len().min(5)..]);
        push_right(out, t.issue);
        out.extend_from_slice(b"  ");
        push_right(out, t.start);
        out.extend_from_slice(b"  ");
        match super::tasks::end(t) {
            Some(end) => push_right(out, end),
            None => out.extend_from_slice(b"    -"),
        }
        out.push(b'\n');
    }
}

/// `n` in decimal, right-aligned in five columns (wider if it needs more): the last
/// digits of a field of spaces, made two at a time (a long table is mostly numbers, and
/// each division waits for the one before).
fn push_right(out: &mut Vec<u8>, mut n: u64) {
    const PAIRS: [[u8; 2]; 100] = {
        let mut t = [[0u8; 2]; 100];
        let mut i = 0;
        while i < 100 {
            t[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
            i += 1;
        }
        t
    };
    let mut field = [b' '; 20];
    let mut at = field.len();
    while n >= 100 {
        at -= 2;
        field[at..at + 2].copy_from_slice(&PAIRS[(n % 100) as usize]);
        n /= 100;
    }
    if n >= 10 {
        at -= 2;
        field[at..at + 2].copy_from_slice(&PAIRS[n as usize]);
    } else {
        at -= 1;
        field[at] = b'0' + n as u8;
    }
    out.extend_from_slice(&field[at.min(field.len() - 5)..]);
}

/// Render a report. `initial` is the memory image the run started from.
pub fn report(r: &RunReport, initial: &[u8]) -> String {
    let (mut s, rest) = TaskTable::around(r, initial);
    if r.config.tasks == TaskLog::All && !r.tasks.is_empty() {
        s += TaskTable::HEADING;
        s += &TaskTable::of(&r.tasks);
    }
    s + &rest
}

/// The message of a failed run of `program`: `program: ` and the error. With the source map
/// of an assembled program, an error at an instruction (a fault, a livelock) starts with
/// that instruction's `file:line:col: ` instead of the program's name, and each unfinished
/// core's line ends with ` (file:line:col)` of its instruction.
pub fn failure(program: &Path, error: &RunError, source_map: Option<&SourceMap>) -> String {
    let text = error.to_string();
    let located = source_map.map(|m| FailureLocations::of(error, m));
    let Some(located) = located else {
        return format!("{}: {text}", super::shown::path(program));
    };
    let mut lines = text.split('\n');
    let head = located.error.as_ref().map_or_else(
        || super::shown::path(program).into_owned(),
        ToString::to_string,
    );
    let mut s = format!("{head}: {}", lines.next().unwrap_or_default());
    // The error lists its unfinished cores one a line, in order, after its first line.
    let rest: Vec<&str> = lines.collect();
    let fits = rest.len() == located.cores.len();
    for (i, line) in rest.iter().enumerate() {
        s.push('\n');
        s.push_str(line);
        if let Some(Some(at)) = located.cores.get(i).filter(|_| fits) {
            let _ = write!(s, " ({at})");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu16_machine::Fence;

    /// The line as `format!` writes it: the table's definition before it was written by
    /// hand, kept here as the independent computation.
    fn formatted(t: &TaskRecord) -> String {
        format!(
            "  {:>5}  {:#06x}  {:<5}  {:>5}  {:>5}  {:>5}\n",
            t.frame,
            t.mask,
            t.fence.name(),
            t.issue,
            t.start,
            super::super::tasks::end(t).map_or("-".to_string(), |e| e.to_string())
        )
    }

    #[test]
    fn a_task_line_is_the_formatted_one_for_every_width_and_an_unknown_end() {
        let numbers = [0, 1, 9, 10, 100, 1_234, 99_999, 100_000, 1 << 40, u64::MAX];
        let mut lines = 0;
        for (i, &n) in numbers.iter().enumerate() {
            for fence in [Fence::No, Fence::Acq, Fence::Rel] {
                for mask in [0u16, 1, 0x00ff, 0x8000, 0xffff] {
                    let m = numbers[(i + 3) % numbers.len()];
                    // end >= start: a finished task; end < start: one still running.
                    for (start, end) in [(n, n), (n.saturating_add(1), n), (m, n)] {
                        let t = TaskRecord {
                            frame: n as usize,
                            mask,
                            fence,
                            issue: m,
                            start,
                            end,
                        };
                        let mut line = Vec::new();
                        TaskTable::push_line(&mut line, &t);
                        assert_eq!(String::from_utf8(line).unwrap(), formatted(&t), "{t:?}");
                        lines += 1;
                    }
                }
            }
        }
        assert_eq!(lines, 10 * 3 * 5 * 3);
        // A still-running task's end is shown as `-`, right-aligned.
        let t = TaskRecord {
            frame: 3,
            mask: 0x0f0f,
            fence: Fence::Acq,
            issue: 10,
            start: 15,
            end: 14,
        };
        assert_eq!(
            TaskTable::of(&[t]).lines().nth(1),
            Some("      3  0x0f0f  acq       10     15      -")
        );
    }
}
