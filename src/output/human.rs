//! The report for people: cycles, the task table, registers of the cores that ran, and the
//! bytes of shared memory that changed, and the run's statistics.

use gpu16_machine::memory::MEMORY_BYTES;
use gpu16_machine::{RunReport, TaskLog, Timing};
use std::fmt::Write;

/// Render a report. `initial` is the memory image the run started from.
pub fn report(r: &RunReport, initial: &[u8]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "cycles {}   instructions {}   stalls {}   tasks {}   backend {}",
        r.cycles, r.instructions, r.stalls, r.task_summary.tasks, r.backend
    );
    if r.config.timing != Timing::default() {
        let _ = writeln!(s, "timing {}", crate::timing::spec(&r.config.timing));
    }
    if r.config.tasks == TaskLog::All && !r.tasks.is_empty() {
        let _ = writeln!(s, "\ntasks (issue order)");
        let _ = writeln!(s, "  frame  cores   fence  issue  start    end");
        for t in &r.tasks {
            let _ = writeln!(
                s,
                "  {:>5}  {:#06x}  {:<5}  {:>5}  {:>5}  {:>5}",
                t.frame,
                t.mask,
                t.fence.name(),
                t.issue,
                t.start,
                super::tasks::end(t).map_or("-".to_string(), |e| e.to_string())
            );
        }
    }
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
    s
}
