//! Run statistics: per-core busy, idle and stall cycles, stalls by cause, per-bank accesses
//! and lock use, tasks per fence kind and the scheduler's waits by cause. The machine counts;
//! this module only derives (idle = cycles - busy) and presents, once for people (a section
//! of the human report) and once for scripts (the JSON `stats` object), from one table so the
//! two cannot disagree.

use gpu16_machine::engine::memory::BANKS;
use gpu16_machine::RunReport;
use serde_json::{json, Value};
use std::fmt::Write;

/// One core's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CoreStats {
    /// The core's id, 0..15.
    pub(crate) core: usize,
    /// Whether it ran any task.
    pub(crate) ran: bool,
    /// Tasks it took part in.
    pub(crate) tasks: u64,
    /// Instructions it executed.
    pub(crate) instructions: u64,
    /// Cycles from the start to the end of its parts of tasks, stalls included.
    pub(crate) busy: u64,
    /// Cycles of the run in which it ran no part of a task.
    pub(crate) idle: u64,
    /// Stalled cycles, lock and bank together.
    pub(crate) stalls: u64,
    /// Cycles stalled on a byte another core's atomic sequence locked.
    pub(crate) lock_stalls: u64,
    /// Cycles stalled on a bank conflict (only with the bank-conflict model on).
    pub(crate) bank_stalls: u64,
}

/// One bank's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BankStats {
    /// The bank, 0..15 (address bits 11:8).
    pub(crate) bank: usize,
    /// Accesses it served.
    pub(crate) accesses: u64,
    /// Atomic sequences opened on it (`ld_sync`s performed).
    pub(crate) lock_acquisitions: u64,
    /// Sum over its atomic sequences of (st_sync cycle - ld_sync cycle).
    pub(crate) lock_hold_cycles: u64,
}

/// One row per core, all 16 in id order, from a run's report (finished or failed).
pub(crate) fn cores(r: &RunReport) -> Vec<CoreStats> {
    r.cores
        .iter()
        .enumerate()
        .map(|(core, c)| CoreStats {
            core,
            ran: c.ran,
            tasks: c.tasks,
            instructions: c.instructions,
            busy: c.busy,
            // A failed run's state may stop mid-task; never let a counter underflow.
            idle: r.cycles.saturating_sub(c.busy),
            stalls: c.stalls,
            lock_stalls: c.lock_stalls,
            bank_stalls: c.bank_stalls,
        })
        .collect()
}

/// One row per bank, all 16 in bank order.
pub(crate) fn banks(r: &RunReport) -> Vec<BankStats> {
    let m = &r.memory_stats;
    (0..BANKS)
        .map(|bank| BankStats {
            bank,
            accesses: m.accesses_per_bank[bank],
            lock_acquisitions: m.lock_acquisitions_per_bank[bank],
            lock_hold_cycles: m.lock_hold_cycles_per_bank[bank],
        })
        .collect()
}

/// The `stats` object of `--json`. Every core and bank is listed, so index i is core/bank i.
pub(crate) fn json(r: &RunReport) -> Value {
    let s = &r.task_summary;
    json!({
        "cycles": r.cycles,
        "cores": cores(r).iter().map(|c| json!({
            "core": c.core,
            "ran": c.ran,
            "tasks": c.tasks,
            "instructions": c.instructions,
            "busy": c.busy,
            "idle": c.idle,
            "stalls": c.stalls,
            "lock_stalls": c.lock_stalls,
            "bank_stalls": c.bank_stalls,
        })).collect::<Vec<_>>(),
        "stalls_by_cause": {
            "lock": r.cores.iter().map(|c| c.lock_stalls).sum::<u64>(),
            "bank_conflict": r.cores.iter().map(|c| c.bank_stalls).sum::<u64>(),
        },
        "banks": banks(r).iter().map(|b| json!({
            "bank": b.bank,
            "accesses": b.accesses,
            "lock_acquisitions": b.lock_acquisitions,
            "lock_hold_cycles": b.lock_hold_cycles,
        })).collect::<Vec<_>>(),
        "tasks_by_fence": {"no": s.by_fence[0], "acq": s.by_fence[1], "rel": s.by_fence[2]},
        "control_frames": s.control_frames,
        "scheduler_wait_cycles": {
            "cores_busy": s.wait_cycles[0],
            "acq": s.wait_cycles[1],
            "rel": s.wait_cycles[2],
        },
    })
}

/// The statistics section of the human report: only cores that ran and banks that were used.
pub(crate) fn human(r: &RunReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\nstatistics ({} cycles)", r.cycles);
    let ran: Vec<CoreStats> = cores(r).into_iter().filter(|c| c.ran).collect();
    if !ran.is_empty() {
        let _ = writeln!(s, "  core  tasks    busy    idle  stalls    lock    bank");
        for c in &ran {
            let _ = writeln!(
                s,
                "  {:>4}  {:>5}  {:>6}  {:>6}  {:>6}  {:>6}  {:>6}",
                c.core, c.tasks, c.busy, c.idle, c.stalls, c.lock_stalls, c.bank_stalls
            );
        }
    }
    let used: Vec<BankStats> = banks(r)
        .into_iter()
        .filter(|b| b.accesses > 0 || b.lock_acquisitions > 0)
        .collect();
    if used.is_empty() {
        let _ = writeln!(s, "  no shared-memory accesses");
    } else {
        let _ = writeln!(s, "  bank  accesses  lock acquisitions  lock hold cycles");
        for b in &used {
            let _ = writeln!(
                s,
                "  {:>4}  {:>8}  {:>17}  {:>16}",
                b.bank, b.accesses, b.lock_acquisitions, b.lock_hold_cycles
            );
        }
    }
    let t = &r.task_summary;
    let _ = writeln!(
        s,
        "  tasks by fence: no {}, acq {}, rel {}   control frames {}",
        t.by_fence[0], t.by_fence[1], t.by_fence[2], t.control_frames
    );
    let _ = writeln!(
        s,
        "  scheduler waits (cycles): cores busy {}, acq fence {}, rel fence {}",
        t.wait_cycles[0], t.wait_cycles[1], t.wait_cycles[2]
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testprog::*;
    use gpu16_machine::{Config, Fence};

    #[test]
    fn lock_pair_counts() {
        let r = run_default(&lock_pair());
        assert_eq!(r.cycles, 12);
        let c = cores(&r);
        // Core 0 runs 5-9, core 1 runs 5-11 with two lock-stalled cycles (6, 7).
        assert_eq!((c[0].busy, c[0].idle, c[0].stalls), (5, 7, 0));
        assert_eq!((c[1].busy, c[1].idle, c[1].stalls), (7, 5, 2));
        assert_eq!((c[1].lock_stalls, c[1].bank_stalls), (2, 0));
        assert_eq!((c[0].instructions, c[1].instructions), (5, 5));
        assert_eq!((c[0].tasks, c[1].tasks, c[2].tasks), (1, 1, 0));
        assert!(!c[2].ran && c[2].busy == 0 && c[2].idle == 12);
        let b = banks(&r);
        // ld_sync + st_sync per core, all in bank 1; sequences 6-8 and 8-10.
        assert_eq!(
            (b[1].accesses, b[1].lock_acquisitions, b[1].lock_hold_cycles),
            (4, 2, 4)
        );
        assert!(b.iter().filter(|b| b.bank != 1).all(|b| b.accesses == 0));
        assert_eq!(r.memory[0x105], 10);
        let j = json(&r);
        assert_eq!(j["cores"][1]["idle"], 5);
        assert_eq!(j["stalls_by_cause"]["lock"], 2);
        assert_eq!(j["stalls_by_cause"]["bank_conflict"], 0);
        assert_eq!(j["banks"][1]["lock_hold_cycles"], 4);
    }

    #[test]
    fn bank_conflicts_count_per_core() {
        let config = Config {
            bank_conflicts: true,
            ..Config::default()
        };
        let r = run(&bank_trio(), &config);
        assert_eq!(r.cycles, 10);
        let c = cores(&r);
        assert_eq!(
            (c[0].bank_stalls, c[1].bank_stalls, c[2].bank_stalls),
            (0, 1, 2)
        );
        assert_eq!((c[0].lock_stalls, c[1].stalls, c[2].stalls), (0, 1, 2));
        assert_eq!((c[0].busy, c[1].busy, c[2].busy), (3, 4, 5));
        assert_eq!(banks(&r)[0].accesses, 3);
        assert_eq!(json(&r)["stalls_by_cause"]["bank_conflict"], 3);
        // Without the model nobody stalls.
        let r = run_default(&bank_trio());
        assert_eq!((r.cycles, r.stalls), (8, 0));
    }

    #[test]
    fn fences_and_scheduler_waits() {
        let r = run_default(&fences());
        assert_eq!(r.cycles, 22);
        let t = &r.task_summary;
        assert_eq!(t.by_fence, [1, 1, 1]);
        assert_eq!(t.control_frames, 3);
        assert_eq!(t.wait_cycles, [0, 3, 3]);
        let j = json(&r);
        assert_eq!(
            j["tasks_by_fence"],
            serde_json::json!({"no": 1, "acq": 1, "rel": 1})
        );
        assert_eq!(
            j["scheduler_wait_cycles"],
            serde_json::json!({"cores_busy": 0, "acq": 3, "rel": 3})
        );
        let c = cores(&r);
        assert_eq!((c[0].busy, c[1].busy, c[2].busy), (3, 4, 1));
        assert_eq!((c[0].idle, c[1].idle, c[2].idle), (19, 18, 21));
    }

    #[test]
    fn spec_example_1_waits() {
        // See testprog::spec_example: frames 2, 3, 4 and 7 wait 4 cycles each for busy cores
        // (their acq fences clear in the same cycle); CF1 waits 4 for the acq task.
        let r = run_default(&spec_example(Fence::Acq));
        assert_eq!(r.cycles, 50);
        assert_eq!(r.task_summary.wait_cycles, [16, 4, 0]);
        assert_eq!(r.task_summary.by_fence, [0, 6, 0]);
        let c = cores(&r);
        assert_eq!((c[0].tasks, c[0].busy, c[0].idle), (4, 16, 34));
        assert_eq!((c[4].tasks, c[4].busy, c[4].idle), (2, 8, 42));
        assert_eq!((c[8].tasks, c[12].tasks, c[12].busy), (4, 2, 8));
    }

    #[test]
    fn human_section_lists_used_cores_and_banks() {
        let r = run_default(&lock_pair());
        let h = human(&r);
        assert!(h.contains("statistics (12 cycles)"), "{h}");
        assert!(
            h.contains("     1      1       7       5       2       2       0"),
            "{h}"
        );
        assert!(
            h.contains("     1         4                  2                 4"),
            "{h}"
        );
        assert!(h.contains("tasks by fence: no 1, acq 0, rel 0"), "{h}");
        assert!(!h.contains("\n     2  "), "core 2 did not run: {h}");
    }
}
