//! `--trace FILE`: the run as Chrome trace-event JSON, for Perfetto (ui.perfetto.dev) and
//! chrome://tracing. One process "gpu16" with a track for the task scheduler (control frames,
//! code broadcasts, waits named by cause) and one per core that ran (a slice per part of a
//! task named by its frame index, with lock-held and stall slices nested inside it).
//!
//! The format counts time in microseconds; one cycle is written as one microsecond, so the
//! viewers' "us" read as cycles. If the recorder cut the run short, `otherData` says where
//! and a global instant marks the cycle in the trace itself.

use super::events::Recorder;
use gpu16_machine::{Event, RunReport, StallCause};
use serde_json::{json, Value};
use std::io::{self, Write};

const PID: u32 = 1;
const TS_TID: u32 = 0;

fn core_tid(core: u8) -> u32 {
    u32::from(core) + 1
}

fn slice(name: String, cat: &str, tid: u32, from: u64, dur: u64, args: Value) -> Value {
    json!({
        "name": name,
        "cat": cat,
        "ph": "X",
        "pid": PID,
        "tid": tid,
        "ts": from,
        "dur": dur,
        "args": args,
    })
}

fn metadata(name: &str, tid: u32, args: Value) -> Value {
    json!({"name": name, "ph": "M", "pid": PID, "tid": tid, "args": args})
}

/// The trace-event objects of one machine event.
pub(crate) fn trace_event(e: &Event, control_frame_cycles: u64) -> Value {
    match *e {
        Event::ControlFrame { frame, cycle } => slice(
            format!("CF frame {frame}"),
            "control",
            TS_TID,
            cycle,
            control_frame_cycles,
            json!({"frame": frame}),
        ),
        Event::Broadcast {
            frame,
            mask,
            fence,
            from,
            to,
        } => slice(
            format!("broadcast frame {frame}"),
            "broadcast",
            TS_TID,
            from,
            to + 1 - from,
            json!({"frame": frame, "cores": format!("{mask:#06x}"), "fence": fence.name()}),
        ),
        Event::SchedulerWait {
            frame,
            from,
            to,
            cause,
        } => slice(
            format!("wait: {}", cause.name()),
            "wait",
            TS_TID,
            from,
            to - from,
            json!({"frame": frame, "cause": cause.name()}),
        ),
        Event::CorePart {
            core,
            frame,
            start,
            end,
        } => slice(
            format!("frame {frame}"),
            "task",
            core_tid(core),
            start,
            end + 1 - start,
            json!({"frame": frame, "core": core, "first_cycle": start, "last_cycle": end}),
        ),
        Event::LockHeld {
            core,
            addr,
            from,
            to,
        } => slice(
            format!("lock {addr:#05x}"),
            "lock",
            core_tid(core),
            from,
            to + 1 - from,
            json!({"addr": format!("{addr:#05x}"), "bank": addr >> 8, "ld_sync_cycle": from, "st_sync_cycle": to}),
        ),
        Event::Stall {
            core,
            from,
            to,
            cause,
            addr,
        } => {
            let cause = match cause {
                StallCause::Lock => "lock",
                StallCause::BankConflict => "bank conflict",
            };
            slice(
                format!("stall: {cause}"),
                "stall",
                core_tid(core),
                from,
                to - from,
                json!({"addr": format!("{addr:#05x}"), "cause": cause}),
            )
        }
    }
}

/// Write the trace of a run. `report` is the run's report (or a failed run's state).
pub fn write(w: &mut impl Write, rec: &mut Recorder, report: &RunReport) -> io::Result<()> {
    let cf_cycles = rec.config().timing.control_frame_cycles;
    let (seen, dropped, cut) = (rec.seen(), rec.dropped(), rec.cut_at());
    let events = rec.events();
    let mut cores = [false; 16];
    for (c, counters) in report.cores.iter().enumerate() {
        cores[c] = counters.ran;
    }
    for e in events {
        if let Event::CorePart { core, .. } = e {
            cores[usize::from(*core)] = true;
        }
    }
    let other = json!({
        "generator": "gpu16",
        "time_unit": "1 us in the trace = 1 machine cycle",
        "backend": report.backend,
        "cycles": report.cycles,
        "events_seen": seen,
        "events_kept": events.len(),
        "events_dropped": dropped,
        "truncated": cut.is_some(),
        "complete_before_cycle": cut,
    });
    writeln!(w, "{{\"otherData\": {other},")?;
    writeln!(w, "\"traceEvents\": [")?;
    let mut first = true;
    let mut put = |w: &mut dyn Write, v: Value| -> io::Result<()> {
        if !first {
            writeln!(w, ",")?;
        }
        first = false;
        serde_json::to_writer(&mut *w, &v).map_err(io::Error::other)
    };
    put(
        w,
        metadata("process_name", TS_TID, json!({"name": "gpu16"})),
    )?;
    put(
        w,
        metadata("thread_name", TS_TID, json!({"name": "task scheduler"})),
    )?;
    put(
        w,
        metadata("thread_sort_index", TS_TID, json!({"sort_index": 0})),
    )?;
    for c in (0..16u8).filter(|&c| cores[usize::from(c)]) {
        let tid = core_tid(c);
        put(
            w,
            metadata("thread_name", tid, json!({"name": format!("core {c}")})),
        )?;
        put(
            w,
            metadata("thread_sort_index", tid, json!({"sort_index": tid})),
        )?;
    }
    for e in events {
        put(w, trace_event(e, cf_cycles))?;
    }
    if let Some(c) = cut {
        put(
            w,
            json!({
                "name": format!(
                    "trace cut: {dropped} events from cycle {c} on were dropped (raise --trace-limit)"
                ),
                "ph": "i",
                "s": "g",
                "pid": PID,
                "tid": TS_TID,
                "ts": c,
            }),
        )?;
    }
    writeln!(w, "\n]}}")?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_output::testprog::*;
    use gpu16::BackendKind;
    use gpu16_machine::Config;

    fn traced(p: &gpu16_machine::Program, limit: usize) -> (Value, RunReport) {
        let mut rec = Recorder::new(limit);
        let r =
            gpu16::run_observed(BackendKind::Interp, p, &[], &Config::default(), &mut rec).unwrap();
        let mut out = Vec::new();
        write(&mut out, &mut rec, &r).unwrap();
        (serde_json::from_slice(&out).expect("the trace is JSON"), r)
    }

    /// (name, tid, ts, dur) of every complete slice.
    fn slices(v: &Value) -> Vec<(String, u64, u64, u64)> {
        v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_string(),
                    e["tid"].as_u64().unwrap(),
                    e["ts"].as_u64().unwrap(),
                    e["dur"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn lock_pair_slices() {
        // testprog::lock_pair: CF 0, broadcast 1-4, core 0 runs 5-9 holding 0x105 in 6-8,
        // core 1 runs 5-11, stalls 6-7, holds 0x105 in 8-10.
        let (v, _) = traced(&lock_pair(), 1000);
        let mut s = slices(&v);
        s.sort();
        let x = |n: &str, tid, ts, dur| (n.to_string(), tid, ts, dur);
        let mut want = vec![
            x("CF frame 0", 0, 0, 1),
            x("broadcast frame 1", 0, 1, 4),
            x("frame 1", 1, 5, 5),
            x("frame 1", 2, 5, 7),
            x("lock 0x105", 1, 6, 3),
            x("lock 0x105", 2, 8, 3),
            x("stall: lock", 2, 6, 2),
        ];
        want.sort();
        assert_eq!(s, want);
        assert_eq!(v["otherData"]["truncated"], false);
        assert_eq!(v["otherData"]["cycles"], 12);
        let names: Vec<&str> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["task scheduler", "core 0", "core 1"]);
    }

    #[test]
    fn waits_are_named_by_cause() {
        // testprog::fences: CF2 waits 5-7 (acq), frame 5 waits 14-16 (rel).
        let (v, _) = traced(&fences(), 1000);
        let waits: Vec<(String, u64, u64, u64)> = slices(&v)
            .into_iter()
            .filter(|s| s.0.starts_with("wait"))
            .collect();
        assert_eq!(
            waits,
            [
                ("wait: acq fence".to_string(), 0, 5, 3),
                ("wait: rel fence".to_string(), 0, 14, 3)
            ]
        );
    }

    #[test]
    fn a_limited_trace_says_where_it_was_cut() {
        // Keep 5 events of spec example 1: the sixth-earliest starts in cycle 5 (the eight
        // core parts of frame 1 and the wait for frame 2), so only the CF (cycle 0) and the
        // first broadcast (1) are kept, and the trace is complete before cycle 5.
        let (v, _) = traced(&spec_example(gpu16_machine::Fence::Acq), 5);
        let s = slices(&v);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s.iter().all(|x| x.2 < 5));
        assert_eq!(v["otherData"]["truncated"], true);
        assert_eq!(v["otherData"]["complete_before_cycle"], 5);
        let cut = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["ph"] == "i")
            .expect("a cut marker");
        assert_eq!(cut["ts"], 5);
    }
}
