//! The `gpu16 diff --json` object: the verdict of a comparison as one object, built from the
//! same [`Divergence`] the text prints, so the two cannot say different things.
//!
//! `{"program", "backends": [A, B], "identical", "divergence"}`; `divergence` is null or
//! [`divergence`]'s object with `located` and `not_located` added ([`verdict`]).

use super::diff_locate::Located;
use gpu16::diff::{Divergence, Field};
use gpu16::output::json::Task;
use gpu16_machine::MemoryStats;
use gpu16_machine::{CoreCounters, TaskSummary};
use serde_json::{json, Value};

/// How the search for the cycle of a divergence ended.
pub enum Search {
    /// It found the smallest watchdog limit at which the runs differ.
    Located(Located),
    /// The reruns agreed at the limit the search started from, so there is no cycle.
    Agreed,
    /// The wall-clock limit (`--timeout`) passed during the search.
    Cut,
}

/// The whole object: `program` (as given), `backends` (as reports name them), `identical`
/// and `divergence`: null when identical, else [`divergence`]'s object with `located`
/// (null, or `{"limit", "cycle", "core", "frame", "ip", "divergence"}`: the smallest
/// watchdog limit at which the runs differ, `cycle` = `limit - 1` the cycle the difference
/// first shows in, the first differing core's place when the run stopped there, each
/// null if not known, and the difference at that limit) and `not_located` (null, or why
/// there is no `located`).
pub fn verdict(program: &str, backends: [&str; 2], found: Option<(&Divergence, &Search)>) -> Value {
    let Some((first, search)) = found else {
        return json!({
            "program": program,
            "backends": backends,
            "identical": true,
            "divergence": null,
        });
    };
    let mut d = divergence(first);
    let (located, not_located) = match search {
        Search::Located(l) => {
            let (core, frame, ip) = match l.core {
                Some((c, f, i)) => (json!(c), json!(f), json!(i)),
                None => (Value::Null, Value::Null, Value::Null),
            };
            let v = json!({
                "limit": l.limit,
                "cycle": l.limit - 1,
                "core": core,
                "frame": frame,
                "ip": ip,
                "divergence": divergence(&l.detail),
            });
            (v, Value::Null)
        }
        Search::Agreed => (
            Value::Null,
            json!("the reruns with the watchdog at the runs' length did not differ"),
        ),
        Search::Cut => (
            Value::Null,
            json!("the search passed the wall-clock limit (--timeout)"),
        ),
    };
    d["located"] = located;
    d["not_located"] = not_located;
    json!({
        "program": program,
        "backends": backends,
        "identical": false,
        "divergence": d,
    })
}

/// One difference: `text` (the line `diff` prints after `divergence: `), `field`
/// ([`Field::name`]), `at_failure` (both runs failed alike and their states differ),
/// `values` (`[A's, B's]`) and, by field, `core`, `register`, `address` with `bank` and
/// `row`, `task` (the index in the task log) with `frame`.
pub fn divergence(d: &Divergence) -> Value {
    let mut v = json!({
        "text": d.to_string(),
        "field": d.field.name(),
        "at_failure": d.at_failure,
    });
    let values = match &d.field {
        Field::Error([x, y]) => json!([x, y]),
        Field::Outcome(o) => json!(o.clone().map(|e| match e {
            None => "finished".to_string(),
            Some(e) => format!("failed: {e}"),
        })),
        Field::Cycles(c) => json!(c),
        Field::Register {
            core,
            register,
            values,
        } => {
            v["core"] = json!(core);
            v["register"] = json!(register);
            json!(values)
        }
        Field::Memory { address, values } => {
            v["address"] = json!(address);
            v["bank"] = json!(address >> 8);
            v["row"] = json!(address & 0xFF);
            json!(values)
        }
        Field::TaskCount(n) => json!(n),
        Field::Task {
            index,
            frame,
            values,
        } => {
            v["task"] = json!(index);
            v["frame"] = json!(frame);
            json!(values.map(|t| Task::of(&t)))
        }
        Field::CoreCounters { core, values } => {
            v["core"] = json!(core);
            json!(values.map(|c| counters(&c)))
        }
        Field::Counts(c) => json!(c.map(|[i, s]| json!({"instructions": i, "stalls": s}))),
        Field::TaskSummary(s) => json!([summary(&s[0]), summary(&s[1])]),
        Field::MemoryStats(s) => json!([memory_stats(&s[0]), memory_stats(&s[1])]),
    };
    v["values"] = values;
    v
}

/// A core's counters, by the names of [`CoreCounters`]' fields.
fn counters(c: &CoreCounters) -> Value {
    json!({
        "instructions": c.instructions,
        "stalls": c.stalls,
        "lock_stalls": c.lock_stalls,
        "bank_stalls": c.bank_stalls,
        "tasks": c.tasks,
        "busy": c.busy,
        "ran": c.ran,
    })
}

/// The aggregates over every task, keyed as `run --json`'s `task_summary` and `stats`.
fn summary(s: &TaskSummary) -> Value {
    json!({
        "tasks": s.tasks,
        "control_frames": s.control_frames,
        "by_fence": {"no": s.by_fence[0], "acq": s.by_fence[1], "rel": s.by_fence[2]},
        "first": s.first.as_ref().map(Task::of),
        "last": s.last.as_ref().map(Task::of),
        "scheduler_wait_cycles": {
            "cores_busy": s.wait_cycles[0],
            "acq": s.wait_cycles[1],
            "rel": s.wait_cycles[2],
        },
    })
}

/// The memory statistics, per bank 0..15.
fn memory_stats(m: &MemoryStats) -> Value {
    json!({
        "accesses_per_bank": m.accesses_per_bank,
        "lock_acquisitions_per_bank": m.lock_acquisitions_per_bank,
        "lock_hold_cycles_per_bank": m.lock_hold_cycles_per_bank,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(field: Field) -> Divergence {
        Divergence {
            names: ["interp".into(), "jit".into()],
            at_failure: false,
            field,
        }
    }

    #[test]
    fn a_memory_difference_has_its_address_bank_and_row() {
        let d = named(Field::Memory {
            address: 0x123,
            values: [1, 2],
        });
        assert_eq!(
            divergence(&d),
            json!({
                "text": "memory: address 0x123 (bank 1, row 35): interp 0x01, jit 0x02",
                "field": "memory",
                "at_failure": false,
                "address": 291,
                "bank": 1,
                "row": 35,
                "values": [1, 2],
            })
        );
    }

    #[test]
    fn an_outcome_difference_says_which_finished() {
        let d = named(Field::Outcome([None, Some("watchdog".into())]));
        let v = divergence(&d);
        assert_eq!(v["values"], json!(["finished", "failed: watchdog"]));
        assert_eq!(v["text"], "outcome: interp finished; jit failed: watchdog");
    }

    #[test]
    fn a_difference_at_a_failure_says_so() {
        let mut d = named(Field::Cycles([7, 8]));
        d.at_failure = true;
        let v = divergence(&d);
        assert_eq!(v["at_failure"], true);
        assert_eq!(v["values"], json!([7, 8]));
        assert_eq!(v["text"], "state at the failure: cycles: interp 7, jit 8");
    }
}
