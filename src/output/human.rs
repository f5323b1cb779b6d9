//! The report for people: cycles, the task table, registers of the cores that ran, and the
//! bytes of shared memory that changed, and the run's statistics; and the message of a
//! failed run, with source locations for an assembled program.

use super::location::FailureLocations;
use gpu16_machine::memory::MEMORY_BYTES;
use gpu16_machine::{RunError, RunReport, TaskLog, TaskRecord, Timing};
use std::fmt::Write;
use std::path::Path;

/// The task table: a header line, then a line a task in issue order (an unfinished task's
/// end is `-`). The run report and the debugger's `tasks` both show it.
pub fn task_table(tasks: &[TaskRecord]) -> String {
    let mut s = TASK_TABLE_HEADER.to_string();
    for t in tasks {
        s += &task_line(t);
    }
    s
}

/// The task table's header line.
pub const TASK_TABLE_HEADER: &str = "  frame  cores   fence  issue  start    end\n";

/// The task table's heading in the run report, before its header line.
pub const TASK_TABLE_HEADING: &str = "\ntasks (issue order)\n";

/// One task's line of the table, with its newline.
pub fn task_line(t: &TaskRecord) -> String {
    format!(
        "  {:>5}  {:#06x}  {:<5}  {:>5}  {:>5}  {:>5}\n",
        t.frame,
        t.mask,
        t.fence.name(),
        t.issue,
        t.start,
        super::tasks::end(t).map_or("-".to_string(), |e| e.to_string())
    )
}

/// Render a report. `initial` is the memory image the run started from.
pub fn report(r: &RunReport, initial: &[u8]) -> String {
    let (mut s, rest) = report_around_tasks(r, initial);
    if r.config.tasks == TaskLog::All && !r.tasks.is_empty() {
        s += TASK_TABLE_HEADING;
        s += &task_table(&r.tasks);
    }
    s + &rest
}

/// A report in the two parts its task table goes between (the table itself left out, for
/// a caller that writes it from elsewhere, as a long run's spooled table).
pub fn report_around_tasks(r: &RunReport, initial: &[u8]) -> (String, String) {
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

/// The message of a failed run of `program`: `program: ` and the error. With the locations
/// of an assembled program, an error at an instruction (a fault, a livelock) starts with
/// that instruction's `file:line:col: ` instead of the program's name, and each unfinished
/// core's line ends with ` (file:line:col)` of its instruction.
pub fn failure(program: &Path, error: &RunError, located: Option<&FailureLocations>) -> String {
    let text = error.to_string();
    let Some(located) = located else {
        return format!("{}: {text}", program.display());
    };
    let mut lines = text.split('\n');
    let head = located
        .error
        .as_ref()
        .map_or_else(|| program.display().to_string(), ToString::to_string);
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
