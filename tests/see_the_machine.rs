//! The built `gpu16` binary with the outputs that show the machine: `--trace`, `--timeline`,
//! `--mem-png`, `--vcd` and the JSON `stats`, on programs written as .hex files.

mod common;

use common::{gpu16, s};
use gpu16::machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16::machine::{ControlFrame, Fence, InstrFrame};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn cf(if_num: u8, fence: Fence, active: u16, init: &[(usize, u8)]) -> [u8; 32] {
    ControlFrame::new(if_num, fence, active, init).encode()
}

fn iff(code: &[Instr]) -> [u8; 32] {
    InstrFrame::padded(code, Instr::Nop).bytes()
}

fn dir(test: &str) -> PathBuf {
    common::scratch("see_the_machine", test)
}

/// Write frames as a .hex program: 16 little-endian words a frame, one frame a line.
fn hex(dir: &Path, frames: &[[u8; 32]]) -> PathBuf {
    let mut text = String::from("// written by tests/see_the_machine.rs\n");
    for f in frames {
        let words: Vec<String> = f
            .chunks(2)
            .map(|w| format!("{:04x}", u16::from_le_bytes([w[0], w[1]])))
            .collect();
        text += &words.join(" ");
        text += "\n";
    }
    let path = dir.join("program.hex");
    std::fs::write(&path, text).unwrap();
    path
}

/// Spec example 1: CF0 (acq) on 0x0f0f with four IFs, CF1 (acq) on 0xf0f0 with two; every
/// IF is 3 nops and a ready. 50 cycles (see src/output/testprog.rs for the timing).
fn spec_example_1() -> Vec<[u8; 32]> {
    let work = iff(&[Instr::Nop, Instr::Nop, Instr::Nop, Instr::Ready]);
    let mut frames = vec![cf(4, Fence::Acq, 0x0f0f, &[])];
    frames.extend([work; 4]);
    frames.push(cf(2, Fence::Acq, 0xf0f0, &[]));
    frames.extend([work; 2]);
    frames
}

/// Cores 0 and 1 add 5 to byte 0x105 in atomic sequences: core 1 stalls in cycles 6-7 while
/// core 0 holds the byte (6-8), then holds it 8-10. 12 cycles; the byte ends as 10.
fn lock_pair() -> Vec<[u8; 32]> {
    let m = |op, a, hi, r| Instr::Mem { op, a, hi, r };
    vec![
        cf(1, Fence::No, 0b11, &[(0, 1), (1, 1)]),
        iff(&[
            Instr::SetConst { k: 5, d: 8 },
            m(MemOp::LdSync, 8, 0, 9),
            Instr::Alu {
                op: AluOp::Add,
                a: 9,
                b: 8,
                c: 9,
            },
            m(MemOp::StSync, 8, 0, 9),
            Instr::Ready,
        ]),
    ]
}

#[test]
fn timeline_of_spec_example_1() {
    let d = dir("timeline");
    let p = hex(&d, &spec_example_1());
    let out = gpu16(&["run", s(&p), "--timeline"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("TS      |01111----2222----3333----4444====56666----7777    |\n"),
        "{text}"
    );
    assert!(text.contains("core 15 |                                      6666    7777|\n"));
    assert!(text.contains("1 column = 1 cycle; cycles 0-49 of 50"));
    // The report follows the chart.
    assert!(text.contains("cycles 50 "));
    // --width forces the scale: 50 cycles in 16 columns of room = 4 cycles a column.
    let out = gpu16(&["run", s(&p), "--timeline", "--width", "26"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("1 column = 4 cycles"), "{text}");
    // Each column shows what covers most of its 4 cycles (the earlier on a tie).
    assert!(text.contains("TS      |1-2-3-4=66-7 |\n"), "{text}");
    assert!(text.contains("core 0  | 11223344    |\n"), "{text}");
}

#[test]
fn trace_vcd_and_png_of_a_lock_pair() {
    let d = dir("lock");
    let p = hex(&d, &lock_pair());
    let (trace, vcd, png) = (d.join("t.json"), d.join("t.vcd"), d.join("m.png"));
    let out = gpu16(&[
        "run",
        s(&p),
        "--trace",
        s(&trace),
        "--vcd",
        s(&vcd),
        "--mem-png",
        s(&png),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "nothing was cut: {out:?}");

    let t: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let mut slices: Vec<(String, u64, u64, u64)> = t["traceEvents"]
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
        .collect();
    slices.sort();
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
    assert_eq!(slices, want);

    let v = std::fs::read_to_string(&vcd).unwrap();
    assert!(v.contains("$enddefinitions $end"));
    // exec_mask (id '#'): both cores from 5, core 1 alone from 10, none from 12.
    let body = &v[v.find("$dumpvars").unwrap()..];
    for (t, line) in [(5, "b11 #"), (10, "b10 #"), (12, "b0 #")] {
        let at = body
            .find(&format!("\n#{t}\n"))
            .expect("a change at the cycle");
        let next = body[at + 2..]
            .find("\n#")
            .map_or(body.len(), |n| at + 2 + n);
        assert!(
            body[at..next].contains(line),
            "cycle {t}: {}",
            &body[at..next]
        );
    }

    let mut reader = png::Decoder::new(std::io::Cursor::new(std::fs::read(&png).unwrap()))
        .read_info()
        .unwrap();
    let mut px = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut px).unwrap();
    assert_eq!((info.width, info.height), (64, 64));
    // 0x105 = 261: x 5, y 4.
    assert_eq!(px[4 * 64 + 5], 10);
    assert_eq!(px.iter().filter(|&&b| b != 0).count(), 1);
}

#[test]
fn json_stats_of_a_lock_pair() {
    let d = dir("stats");
    let p = hex(&d, &lock_pair());
    let out = gpu16(&["run", s(&p), "--json"]);
    assert!(out.status.success(), "{out:?}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let st = &j["stats"];
    assert_eq!(st["cycles"], 12);
    assert_eq!(
        (&st["cores"][0]["busy"], &st["cores"][0]["idle"]),
        (&Value::from(5), &Value::from(7))
    );
    assert_eq!(st["cores"][1]["lock_stalls"], 2);
    assert_eq!(st["stalls_by_cause"]["lock"], 2);
    assert_eq!(st["banks"][1]["accesses"], 4);
    assert_eq!(st["banks"][1]["lock_acquisitions"], 2);
    assert_eq!(st["banks"][1]["lock_hold_cycles"], 4);
    assert_eq!(st["tasks_by_fence"]["no"], 1);
    // The human report carries the same numbers.
    let out = gpu16(&["run", s(&p)]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("statistics (12 cycles)"), "{text}");
}

#[test]
fn a_trace_limit_is_stated() {
    let d = dir("limit");
    let p = hex(&d, &spec_example_1());
    let trace = d.join("t.json");
    let out = gpu16(&["run", s(&p), "--trace", s(&trace), "--trace-limit", "5"]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--trace-limit 5") && err.contains("cycle 5"),
        "{err}"
    );
    let t: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    assert_eq!(t["otherData"]["truncated"], true);
    assert_eq!(t["otherData"]["complete_before_cycle"], 5);
}

#[test]
fn bad_outputs_fail_cleanly() {
    let d = dir("bad");
    let p = hex(&d, &lock_pair());
    let missing = d.join("no-such-dir").join("x");
    for flag in ["--trace", "--vcd", "--mem-png"] {
        let out = gpu16(&["run", s(&p), flag, s(&missing)]);
        assert_eq!(out.status.code(), Some(1), "{flag}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(s(&missing)) && err.contains("cannot write"),
            "{err}"
        );
    }
    let out = gpu16(&["run", s(&p), "--timeline", "--json"]);
    assert_eq!(out.status.code(), Some(2), "clap rejects the combination");
    let out = gpu16(&["run", s(&p), "--palette", "neon", "--mem-png", "x.png"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Run `prog` with `--trace`, `--vcd` and `--timeline` plus `args`, exiting with `status`:
/// the trace, the waveform and the printed report, with the JIT's name put back to the
/// interpreter's.
fn show(prog: &Path, name: &str, args: &[&str], status: i32) -> Vec<String> {
    let d = prog.parent().unwrap();
    let trace = d.join(format!("{name}.trace.json"));
    let vcd = d.join(format!("{name}.vcd"));
    let mut all = vec!["run", s(prog), "--trace", s(&trace), "--vcd", s(&vcd)];
    all.extend_from_slice(&["--timeline", "--width", "90", "-q"]);
    all.extend_from_slice(args);
    let out = gpu16(&all);
    assert_eq!(
        out.status.code(),
        Some(status),
        "{name}: {}",
        common::stderr(&out)
    );
    let text = common::stdout(&out);
    [
        std::fs::read_to_string(&trace).unwrap(),
        std::fs::read_to_string(&vcd).unwrap(),
        text,
    ]
    .into_iter()
    .map(|t| {
        t.replace("\"jit\"", "\"interp\"")
            .replace("backend jit", "backend interp")
    })
    .collect()
}

/// `show` on the interpreter and on every JIT engine: each must write what the interpreter
/// does. Returns the interpreter's.
fn same_on_every_engine(prog: &Path, status: i32) -> Vec<String> {
    let want = show(prog, "interp", &["--backend", "interp"], status);
    for engine in ["percore", "lockstep", "adaptive"] {
        let got = show(
            prog,
            engine,
            &["--backend", "jit", "--jit-engine", engine],
            status,
        );
        for (what, (g, w)) in ["trace", "vcd", "timeline and statistics"]
            .iter()
            .zip(got.iter().zip(&want))
        {
            assert_eq!(g, w, "{what} differs under --jit-engine {engine}");
        }
    }
    want
}

/// What a person sees of a run (the trace, the waveform, the timeline and the statistics)
/// does not depend on the engine: the interpreter, and the JIT one core at a time or in
/// lockstep, write the same files but for the backend's name.
#[test]
fn every_engine_shows_the_same_run() {
    let d = dir("engines");
    let mut contended = lock_pair();
    contended.extend(spec_example_1());
    same_on_every_engine(&hex(&d, &contended), 0);
}

/// A run that faults shows what happened before the fault's cycle, as its state does, on
/// every engine: core 0 (R0 = 1) locks 0x000 at 8 and faults at its ready in 14; core 1
/// counts down from 60 and would end at 128; core 2 runs frame 3 in 10..11 (the cycles are
/// worked out in tests/behaviour/faults.rs, `a_fault_reports_the_events_complete_before_its_cycle`).
#[test]
fn a_fault_shows_the_run_up_to_its_cycle_on_every_engine() {
    let d = dir("fault_engines");
    let body = [
        Instr::SetConst { k: 1, d: 9 },
        Instr::SetConst { k: 60, d: 10 },
        Instr::Bnz { a: 0, target: 6 },
        Instr::Alu {
            op: AluOp::Sub,
            a: 10,
            b: 9,
            c: 10,
        },
        Instr::Bnz { a: 10, target: 3 },
        Instr::Ready,
        Instr::Mem {
            op: MemOp::LdSync,
            a: 8,
            hi: 1,
            r: 10,
        },
        Instr::Nop,
        Instr::Nop,
        Instr::Nop,
        Instr::Nop,
        Instr::Nop,
        Instr::Ready,
    ];
    let frames = vec![
        cf(1, Fence::No, 0b11, &[(0, 1)]),
        iff(&body),
        cf(1, Fence::No, 0b100, &[]),
        iff(&[Instr::Nop, Instr::Ready]),
    ];
    let shown = same_on_every_engine(&hex(&d, &frames), 1);
    let trace: Value = serde_json::from_str(&shown[0]).unwrap();
    assert_eq!(trace["otherData"]["cycles"], 14);
    let events: Vec<(String, u64)> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["ts"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("CF frame 0", 0),
        ("broadcast frame 1", 1),
        ("CF frame 2", 5),
        ("broadcast frame 3", 6),
        ("frame 3", 10),
    ];
    let want: Vec<(String, u64)> = want.iter().map(|&(n, t)| (n.to_string(), t)).collect();
    assert_eq!(events, want);
}
