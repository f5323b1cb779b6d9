//! The `--json` object. Its keys are a contract (issue 2): `cycles`, `registers`, `memory`,
//! `tasks`, `instructions`, `stalls`, `backend`, `stats`; more may be added, none renamed or
//! dropped. `tasks` is the per-task list under `--tasks all` (the default) and `null` when
//! the run kept no list (`--tasks summary|none`, see `task_log`), so a script cannot mistake
//! an unkept list for an empty one. A task that had not finished when a run failed has
//! `"end": null`.
//!
//! `config` echoes the machine configuration; `config.timing` has every `--timing` key
//! (`timing::KEYS`) with its value, default or set.
//!
//! `expect_mem` and `expect_regs` are there when `--expect-mem`/`--expect-regs` is given
//! (the binary's `run_output::expect`); a finished run that differs from them has
//! `"error": {"rule": "expect", "message"}`.
//!
//! `error` is on every object of a command that did not succeed: for a run that failed, an
//! object with `rule` and `message` and the failure's own fields (`failure`); for a run
//! that never started (a file it cannot load, outputs it cannot write), a string, the message
//! stderr gets, with `stage` and the `file` it names (the binary's
//! `commands::json_out::not_run`).
//!
//! [`run_document`] puts together the whole object of a run that started; `gpu16 run --json`
//! prints it and the Python binding (`python/`) returns it, so the two cannot drift apart.
//! With `--tasks all` the command streams it instead (the binary's
//! `run_output::json_stream`): each task as the run hands it over ([`Task`]), then the rest
//! of this same object, so `tasks` comes first there and the other keys follow in this
//! object's (alphabetical) order.

use super::location::{FailureLocations, Location};
use gpu16_asm::SourceMap;
use gpu16_machine::{
    CoreWait, Event, RunError, RunFailure, RunReport, StallCause, TaskLog, TaskRecord,
    UnfinishedCore,
};
use serde::Serialize;
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
pub(crate) fn report(r: &RunReport) -> Value {
    let mut v = report_keys(r);
    if r.config.tasks == TaskLog::All {
        v["tasks"] = r.tasks.iter().map(|t| json!(Task::of(t))).collect();
    }
    v
}

/// [`report`] with `tasks` left `null`, for [`text_with_tasks`] to write.
pub(crate) fn report_keys(r: &RunReport) -> Value {
    let mut v = json!({
        "backend": r.backend,
        "cycles": r.cycles,
        "instructions": r.instructions,
        "stalls": r.stalls,
        "registers": r.registers.iter().map(|regs| regs.to_vec()).collect::<Vec<_>>(),
        "memory": hex(&r.memory[..]),
        "config": {
            "dialect": r.dialect.name(),
            "issue": r.config.issue.name(),
            "bank_conflicts": r.config.bank_conflicts,
            "max_cycles": r.config.max_cycles,
            "control_frame_cycles": r.config.timing.control_frame_cycles,
            "broadcast_cycles": r.config.timing.broadcast_cycles,
            "timing": crate::timing::values_in(&r.config.timing, r.dialect)
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect::<serde_json::Map<_, _>>(),
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
    v["task_log"] = json!(r.config.tasks.name());
    v["tasks"] = Value::Null;
    v
}

/// The text of `v`, a run's object built with `tasks` left `null` ([`report_keys`]), with
/// `tasks` written straight from `r`'s records where the run kept them all: a task costs
/// its few dozen bytes of text, never a JSON value (about 1 KB), so a run of millions of
/// tasks can be printed or handed over. The same bytes as `v` with `tasks` as [`report`]
/// builds it (an object's keys, and a [`Task`]'s fields, are in alphabetical order).
pub(crate) fn text_with_tasks(v: &Value, r: &RunReport) -> String {
    let Value::Object(keys) = v else {
        return v.to_string();
    };
    let mut out: Vec<u8> = Vec::new();
    out.push(b'{');
    for (n, (key, value)) in keys.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        // Writing to a Vec cannot fail, and every key and value serializes.
        let _ = serde_json::to_writer(&mut out, key);
        out.push(b':');
        if key == "tasks" && r.config.tasks == TaskLog::All {
            out.push(b'[');
            for (i, t) in r.tasks.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let _ = serde_json::to_writer(&mut out, &Task::of(t));
            }
            out.push(b']');
        } else {
            let _ = serde_json::to_writer(&mut out, value);
        }
    }
    out.push(b'}');
    String::from_utf8(out).unwrap_or_default()
}

/// One element of `tasks`: the task's instruction `frame`, its cores' `mask`, its `fence`
/// (`no`, `acq`, `rel`), its `issue` and `start` cycles and its `end` (`super::tasks::end`,
/// `null` for a task the run left unfinished). The in-memory object (`report`) and the
/// streamed one (the binary's `run_output::json_stream`) both serialize this, so a task
/// reads the same in both. The fields are in alphabetical order, the order a [`Value`] object keeps, so the
/// streamed text of a task is the same bytes too.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Task {
    end: Option<u64>,
    fence: &'static str,
    frame: usize,
    issue: u64,
    mask: u16,
    start: u64,
}

impl Task {
    /// The JSON form of `t`.
    pub fn of(t: &TaskRecord) -> Task {
        Task {
            end: super::tasks::end(t),
            fence: t.fence.name(),
            frame: t.frame,
            issue: t.issue,
            mask: t.mask,
            start: t.start,
        }
    }
}

/// The `run --json` object of a run that started, finished or failed: `report` or
/// a failure (located in the source through `source_map`, for an assembled program).
/// Its `outputs` is empty: the binary's `run`, which writes files, lists them there.
pub fn run_document(
    outcome: &Result<RunReport, Box<RunFailure>>,
    source_map: Option<&SourceMap>,
) -> Value {
    document_with(outcome, source_map, report)
}

/// [`run_document`] as its text (one line, no newline), with its tasks written straight
/// from the run's records, never held as JSON values (a few dozen bytes a task, against
/// about 1 KB): what the Python package hands over. The same bytes as `run_document`'s.
pub fn run_document_text(
    outcome: &Result<RunReport, Box<RunFailure>>,
    source_map: Option<&SourceMap>,
) -> String {
    let v = document_with(outcome, source_map, report_keys);
    match outcome {
        Ok(r) => text_with_tasks(&v, r),
        Err(f) => text_with_tasks(&v, &f.state),
    }
}

/// [`run_document`] with the run's keys made by `keys` ([`report`] or [`report_keys`]).
fn document_with(
    outcome: &Result<RunReport, Box<RunFailure>>,
    source_map: Option<&SourceMap>,
    keys: fn(&RunReport) -> Value,
) -> Value {
    let mut v = match outcome {
        Ok(r) => keys(r),
        Err(f) => {
            let mut v = failure_with(f, keys);
            if let Some(map) = source_map {
                locate(&mut v, &FailureLocations::of(&f.error, map));
            }
            v
        }
    };
    v["outputs"] = json!([]);
    v
}

/// A failed run, with `tasks` left `null` for [`text_with_tasks`] to write: `error`
/// describes it; the other keys show the state when it stopped.
pub(crate) fn failure_keys(f: &RunFailure) -> Value {
    failure_with(f, report_keys)
}

/// A failed run's object, with the state's keys made by `keys` ([`report`] or
/// [`report_keys`]).
fn failure_with(f: &RunFailure, keys: fn(&RunReport) -> Value) -> Value {
    let mut v = keys(&f.state);
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
            e["cores"] = unfinished(cores);
        }
        RunError::Livelock {
            core,
            frame,
            ip,
            period,
            polls,
            cycle,
            cores,
            next_frame,
        } => {
            e["polls"] = json!(polls);
            e["core"] = json!(core);
            e["frame"] = json!(frame);
            e["ip"] = json!(ip);
            e["period"] = json!(period);
            e["cycle"] = json!(cycle);
            e["next_frame"] = json!(next_frame);
            e["cores"] = unfinished(cores);
        }
        RunError::EndlessWalk {
            frame,
            walk,
            cycle,
            cores,
            same_state_at,
        } => {
            e["frame"] = json!(frame);
            e["walk"] = json!(walk);
            e["cycle"] = json!(cycle);
            e["cores"] = unfinished(cores);
            e["same_state_at"] = json!(same_state_at);
        }
        RunError::Stopped {
            cycle,
            cores,
            next_frame,
            ..
        } => {
            e["cycle"] = json!(cycle);
            e["next_frame"] = json!(next_frame);
            e["cores"] = unfinished(cores);
        }
        RunError::TaskLogFull { limit, cycle } => {
            e["limit"] = json!(limit);
            e["cycle"] = json!(cycle);
        }
        RunError::Backend { frame, .. } | RunError::Internal { frame, .. } => {
            e["frame"] = json!(frame)
        }
        RunError::Load(load) => e["frame"] = json!(load.frame()),
    }
    v["error"] = e;
    v
}

/// Add the source locations of an assembled program's failure to its object ([`failure_keys`]):
/// `error.location` (the instruction a fault or livelock names, else `null`) and each
/// unfinished core's `location`, each `{"file", "line", "col"}` or `null`.
pub(crate) fn locate(v: &mut Value, located: &FailureLocations) {
    let json = |l: &Option<Location>| l.as_ref().map_or(Value::Null, Location::json);
    let e = &mut v["error"];
    e["location"] = json(&located.error);
    if let Some(cores) = e.get_mut("cores").and_then(Value::as_array_mut) {
        for (core, l) in cores.iter_mut().zip(&located.cores) {
            core["location"] = json(l);
        }
    }
}

/// The cores a run left unfinished (the watchdog's or a livelock's list), each an object
/// with `core`, `frame`, `ip` and `state`, plus what the state has: `running`,
/// `not_started` (with `start`, the cycle it was due to start), `stalled` on a lock (with
/// `addr`, the `holder` core and `since`, the cycle it stalled) or `bank_conflict`.
pub fn unfinished(cores: &[UnfinishedCore]) -> Value {
    cores
        .iter()
        .map(|c| {
            let mut v = json!({"core": c.core, "frame": c.frame, "ip": c.ip});
            match c.wait {
                CoreWait::Running => v["state"] = json!("running"),
                CoreWait::NotStarted { start } => {
                    v["state"] = json!("not_started");
                    v["start"] = json!(start);
                }
                CoreWait::Lock {
                    addr,
                    holder,
                    since,
                } => {
                    v["state"] = json!("stalled");
                    v["addr"] = json!(addr);
                    v["holder"] = json!(holder);
                    v["since"] = json!(since);
                }
                CoreWait::BankConflict => v["state"] = json!("bank_conflict"),
            }
            v
        })
        .collect()
}

/// One run event as an object: `kind` (`control_frame`, `broadcast`, `scheduler_wait`,
/// `core_part`, `lock_held` or `stall`) and the event's fields under their names in
/// [`Event`] (cycles inclusive where the field says `end`, exclusive for `to` of a wait or a
/// stall, as documented there); `fence`, `cause` are names.
pub fn event(e: &Event) -> Value {
    match *e {
        Event::ControlFrame { frame, cycle } => {
            json!({"kind": "control_frame", "frame": frame, "cycle": cycle})
        }
        Event::Broadcast {
            frame,
            mask,
            fence,
            from,
            to,
        } => json!({"kind": "broadcast", "frame": frame, "mask": mask, "fence": fence.name(),
                    "from": from, "to": to}),
        Event::SchedulerWait {
            frame,
            from,
            to,
            cause,
        } => json!({"kind": "scheduler_wait", "frame": frame, "from": from, "to": to,
                    "cause": cause.name()}),
        Event::CorePart {
            core,
            frame,
            start,
            end,
        } => json!({"kind": "core_part", "core": core, "frame": frame, "start": start,
                    "end": end}),
        Event::LockHeld {
            core,
            addr,
            from,
            to,
        } => json!({"kind": "lock_held", "core": core, "addr": addr, "from": from, "to": to}),
        Event::Stall {
            core,
            from,
            to,
            cause,
            addr,
        } => json!({"kind": "stall", "core": core, "from": from, "to": to, "addr": addr,
        "cause": match cause {
            StallCause::Lock => "lock",
            StallCause::BankConflict => "bank_conflict",
        }}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_cores_are_objects_with_their_state() {
        let core = |core, wait| UnfinishedCore {
            core,
            frame: 1,
            ip: 5,
            wait,
        };
        let v = unfinished(&[
            core(0, CoreWait::Running),
            core(1, CoreWait::NotStarted { start: 7 }),
            core(
                13,
                CoreWait::Lock {
                    addr: 0,
                    holder: 12,
                    since: 99,
                },
            ),
            core(14, CoreWait::BankConflict),
        ]);
        assert_eq!(
            v,
            json!([
                {"core": 0, "frame": 1, "ip": 5, "state": "running"},
                {"core": 1, "frame": 1, "ip": 5, "state": "not_started", "start": 7},
                {"core": 13, "frame": 1, "ip": 5, "state": "stalled", "addr": 0,
                 "holder": 12, "since": 99},
                {"core": 14, "frame": 1, "ip": 5, "state": "bank_conflict"},
            ])
        );
    }

    /// The text written with tasks straight from the records is the same bytes as the
    /// object built with them as values, finished or failed, with every task log.
    #[test]
    fn tasks_written_as_text_are_the_bytes_of_the_values() {
        use gpu16_machine::{Config, Fence, RunError, TaskRecord};
        for tasks in TaskLog::ALL {
            let config = Config {
                tasks,
                ..Config::default()
            };
            let mut r = RunReport::initial("interp", config, &[7, 0, 9]);
            r.cycles = 40;
            r.tasks = (0..3)
                .map(|i| TaskRecord {
                    frame: 2 * i + 1,
                    mask: 0x8001 << i,
                    fence: [Fence::No, Fence::Acq, Fence::Rel][i],
                    issue: 3 * i as u64,
                    start: 3 * i as u64 + 4,
                    end: if i == 2 { u64::MAX } else { 9 * i as u64 + 6 },
                })
                .collect();
            let done = Ok(r.clone());
            let text = run_document_text(&done, None);
            assert_eq!(text, run_document(&done, None).to_string(), "{tasks:?}");
            let failed = Err(Box::new(RunFailure {
                error: RunError::Watchdog {
                    limit: 40,
                    cores: Vec::new(),
                    next_frame: Some(5),
                },
                state: r,
            }));
            let text = run_document_text(&failed, None);
            assert_eq!(text, run_document(&failed, None).to_string(), "{tasks:?}");
            let tasks_in = serde_json::from_str::<Value>(&text).unwrap()["tasks"].clone();
            match tasks {
                TaskLog::All => assert_eq!(tasks_in.as_array().map(Vec::len), Some(3)),
                _ => assert_eq!(tasks_in, Value::Null),
            }
        }
    }
}
