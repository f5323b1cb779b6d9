//! The `--json` object. Its keys are a contract (issue 2): `cycles`, `registers`, `memory`,
//! `tasks`, `instructions`, `stalls`, `backend`, `stats`; more may be added, none renamed or
//! dropped. `tasks` is the per-task list under `--tasks all` (the default) and `null` when
//! the run kept no list (`--tasks summary|none`, see `task_log`), so a script cannot mistake
//! an unkept list for an empty one.

use gpu16_machine::{RunError, RunFailure, RunReport, TaskLog};
use serde_json::{json, Value};

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The report of a successful run.
pub fn report(r: &RunReport) -> Value {
    let mut v = json!({
        "backend": r.backend,
        "cycles": r.cycles,
        "instructions": r.instructions,
        "stalls": r.stalls,
        "registers": r.registers.iter().map(|regs| regs.to_vec()).collect::<Vec<_>>(),
        "memory": hex(&r.memory[..]),
        "config": {
            "issue": r.config.issue.name(),
            "bank_conflicts": r.config.bank_conflicts,
            "max_cycles": r.config.max_cycles,
            "control_frame_cycles": r.config.timing.control_frame_cycles,
            "broadcast_cycles": r.config.timing.broadcast_cycles,
        },
        "cores": r.cores.iter().enumerate().map(|(i, c)| json!({
            "core": i,
            "instructions": c.instructions,
            "stalls": c.stalls,
            "lock_stalls": c.lock_stalls,
            "bank_stalls": c.bank_stalls,
            "tasks": c.tasks,
        })).collect::<Vec<_>>(),
        "task_summary": {
            "tasks": r.task_summary.tasks,
            "control_frames": r.task_summary.control_frames,
            "by_fence": {
                "no": r.task_summary.by_fence[0],
                "acq": r.task_summary.by_fence[1],
                "rel": r.task_summary.by_fence[2],
            },
        },
    });
    v["stats"] = super::stats::json(r);
    v["task_log"] = json!(match r.config.tasks {
        TaskLog::All => "all",
        TaskLog::Summary => "summary",
        TaskLog::None => "none",
    });
    v["tasks"] = Value::Null;
    if r.config.tasks == TaskLog::All {
        v["tasks"] = r
            .tasks
            .iter()
            .map(|t| {
                json!({
                    "frame": t.frame,
                    "mask": t.mask,
                    "fence": t.fence.name(),
                    "issue": t.issue,
                    "start": t.start,
                    "end": t.end,
                })
            })
            .collect();
    }
    v
}

/// A failed run: `error` describes it; the other keys show the state when it stopped.
pub fn failure(f: &RunFailure) -> Value {
    let mut v = report(&f.state);
    let mut e = json!({
        "rule": f.error.rule_name(),
        "message": f.error.to_string(),
    });
    match &f.error {
        RunError::Fault {
            frame,
            core,
            ip,
            cycle,
            addr,
            ..
        } => {
            e["frame"] = json!(frame);
            e["core"] = json!(core);
            e["ip"] = json!(ip);
            e["cycle"] = json!(cycle);
            e["addr"] = json!(addr);
        }
        RunError::Watchdog {
            limit,
            cores,
            next_frame,
        } => {
            e["limit"] = json!(limit);
            e["next_frame"] = json!(next_frame);
            e["cores"] = cores
                .iter()
                .map(|c| json!({"core": c.core, "frame": c.frame, "ip": c.ip, "state": format!("{:?}", c.wait)}))
                .collect();
        }
        RunError::Backend { frame, .. } | RunError::Internal { frame, .. } => {
            e["frame"] = json!(frame)
        }
    }
    v["error"] = e;
    v
}
