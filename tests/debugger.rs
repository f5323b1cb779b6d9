//! `gpu16 debug` through the binary, scripts on stdin. The expected cycles are worked out
//! by hand from the timing model: a control frame takes cycle 0, the instruction frame is
//! broadcast in cycles 1-4, the cores start in cycle 5 and execute one instruction a cycle
//! unless stalled.

mod common;

use common::{s, scratch};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Core 0 adds 2 and 3 and stores the sum at 0x010: IP k executes in cycle 5 + k, the run
/// takes 11 cycles.
const ADD: &str = "\
.cf mask=0x0001
.if
    set_const 2, r8      ; IP 0, cycle 5
    set_const 3, r9      ; IP 1, cycle 6
    add r8, r9, r3       ; IP 2, cycle 7
    set_const 0x10, r10  ; IP 3, cycle 8
    st [r10, r1], r3     ; IP 4, cycle 9
    ready                ; IP 5, cycle 10
";

/// Core 0 stores with `st_sync` without an `ld_sync`: a fault at IP 1, cycle 6.
const FAULT: &str = "\
.cf mask=0x0001
.if
    set_const 1, r8
    st_sync [r8, r1], r8
    ready
";

fn write(test: &str, name: &str, text: &str) -> PathBuf {
    let p = scratch("debugger", test).join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn counter() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/counter.s")
}

/// Run `gpu16 debug PROGRAM ARGS...` with `script` on stdin; stdout, and the status.
fn debug(program: &Path, args: &[&str], script: &str) -> (String, i32) {
    // A session that ends before reading its script (a program that cannot load) closes
    // stdin early: that broken pipe is not the test's concern.
    let out = common::gpu16_with_stdin(
        &[&["debug", s(program)], args].concat(),
        script.as_bytes().to_vec(),
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// The JSON answers of a script, one per line.
fn answers(program: &Path, args: &[&str], script: &str) -> Vec<Value> {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (out, status) = debug(program, &all, script);
    assert_eq!(status, 0, "{out}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `v` with only `keys`.
fn pick(v: &Value, keys: &[&str]) -> Value {
    keys.iter()
        .filter_map(|k| v.get(*k).map(|x| (k.to_string(), x.clone())))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

#[test]
fn a_breakpoint_stops_before_its_cycle_with_the_state_then() {
    let p = write("breakpoint", "add.s", ADD);
    let a = answers(&p, &[], "break 1:2\ncontinue\nregs 0\nmem 0x10 2\n");
    assert_eq!(
        a[0],
        json!({"breakpoint": 1, "locations": [{"frame": 1, "ip": 2}]})
    );
    assert_eq!(
        pick(&a[1], &["event", "cycle", "core", "frame", "ip"]),
        json!({"event": "break", "cycle": 7, "core": 0, "frame": 1, "ip": 2})
    );
    // Before cycle 7 the two set_consts ran, the add did not.
    let regs = &a[2];
    assert_eq!(
        pick(regs, &["core", "registers", "frame", "ip", "state"]),
        json!({"core": 0, "registers": [0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0],
               "frame": 1, "ip": 2, "state": "running"})
    );
    assert_eq!(a[3], json!({"addr": 16, "bytes": "0000"}));
}

#[test]
fn a_cycle_breakpoint_and_steps() {
    let p = write("cycle", "add.s", ADD);
    let a = answers(
        &p,
        &[],
        "break cycle 6\ncontinue\nstep\nregs 0\nstep 2\nstepi 0\nmem 0x10 1\n",
    );
    assert_eq!(
        pick(&a[1], &["event", "cycle"]),
        json!({"event": "break", "cycle": 6})
    );
    assert_eq!(a[2], json!({"event": "step", "cycle": 7}));
    assert_eq!(a[3]["registers"][8], 2);
    assert_eq!(a[3]["registers"][9], 3);
    assert_eq!(a[3]["ip"], 2);
    assert_eq!(a[4], json!({"event": "step", "cycle": 9}));
    // Core 0's next instruction is the store at IP 4 in cycle 9; after it, cycle 10.
    assert_eq!(
        pick(&a[5], &["event", "cycle", "core", "frame", "ip"]),
        json!({"event": "step", "cycle": 10, "core": 0, "frame": 1, "ip": 4})
    );
    assert_eq!(a[6], json!({"addr": 16, "bytes": "05"}));
}

#[test]
fn a_watch_reports_the_writer_and_the_old_and_new_bytes() {
    // counter.s: core k takes the lock with ld_sync at IP 4; core 0 in cycle 9, its add in
    // 10, its st_sync (IP 6) in 11 writes 0 -> 1 and releases; core 1, stalled since 9,
    // gets the byte in 11 and writes 1 -> 2 in 13.
    let a = answers(&counter(), &[], "watch 0\ncontinue\ncontinue\nmem 0 1\n");
    assert_eq!(a[0], json!({"watchpoint": 1, "addr": 0}));
    assert_eq!(
        pick(
            &a[1],
            &["event", "cycle", "core", "addr", "old", "new", "frame", "ip"]
        ),
        json!({"event": "watch", "cycle": 11, "core": 0, "addr": 0, "old": 0, "new": 1,
               "frame": 1, "ip": 6})
    );
    assert_eq!(
        pick(&a[2], &["event", "cycle", "core", "old", "new"]),
        json!({"event": "watch", "cycle": 13, "core": 1, "old": 1, "new": 2})
    );
    assert_eq!(a[3], json!({"addr": 0, "bytes": "02"}));
}

#[test]
fn breakpoints_by_source_line_and_label_and_the_lock_state() {
    let a = answers(
        &counter(),
        &[],
        "break counter.s:14\ncontinue\ncontinue\nlocks\nwhere\ndelete\nbreak 1:loop\n",
    );
    assert_eq!(a[0]["locations"], json!([{"frame": 1, "ip": 4}]));
    assert_eq!(
        pick(&a[1], &["event", "cycle", "core"]),
        json!({"event": "break", "cycle": 9, "core": 0})
    );
    assert_eq!(a[1]["location"]["line"], 14);
    // Core 1 stalls in 9 and 10 and gets the lock in 11.
    assert_eq!(
        pick(&a[2], &["event", "cycle", "core"]),
        json!({"event": "break", "cycle": 11, "core": 1})
    );
    assert_eq!(
        a[3],
        json!({"cycle": 11, "locks": [{"addr": 0, "holder": 0, "since": 9,
                                        "waiting": (1..16).collect::<Vec<_>>()}]})
    );
    let cores = a[4]["cores"].as_array().unwrap();
    assert_eq!(cores.len(), 16);
    assert_eq!(
        pick(&cores[0], &["core", "ip", "state"]),
        json!({"core": 0, "ip": 6, "state": "running"})
    );
    assert_eq!(
        pick(&cores[1], &["core", "ip", "state", "holder"]),
        json!({"core": 1, "ip": 4, "state": "stalled", "holder": 0})
    );
    assert_eq!(a[5], json!({"deleted": [1]}));
    assert_eq!(a[6]["locations"], json!([{"frame": 1, "ip": 4}]));
}

#[test]
fn the_end_carries_the_run_json_keys() {
    let p = write("end", "add.s", ADD);
    let a = answers(&p, &["--backend", "interp"], "continue\ncontinue\n");
    let out = common::gpu16(&["run", "--json", "--backend", "interp", s(&p)]);
    let mut run: Value = serde_json::from_slice(&out.stdout).unwrap();
    run.as_object_mut().unwrap().remove("outputs");
    for end in &a {
        assert_eq!(end["event"], "end");
        assert_eq!(end["cycle"], 11);
        let mut keys = end.clone();
        keys.as_object_mut().unwrap().remove("event");
        keys.as_object_mut().unwrap().remove("cycle");
        assert_eq!(keys, run);
    }
}

#[test]
fn a_fault_is_an_event_with_the_run_error() {
    let p = write("fault", "fault.s", FAULT);
    let a = answers(&p, &[], "break 1:2\ncontinue\nregs 0\n");
    assert_eq!(a[1]["event"], "fault");
    assert_eq!(a[1]["cycle"], 6);
    assert_eq!(
        pick(
            &a[1]["error"],
            &["rule", "core", "frame", "ip", "cycle", "addr"]
        ),
        json!({"rule": "st_sync-without-sequence", "core": 0, "frame": 1, "ip": 1,
               "cycle": 6, "addr": 1})
    );
    assert_eq!(a[1]["error"]["location"]["line"], 4);
    assert_eq!(a[2]["state"], "faulted");
}

#[test]
fn bad_commands_are_errors_and_the_session_goes_on() {
    let p = write("bad", "add.s", ADD);
    let script =
        "frobnicate\nregs 16\nmem 0x1000\nmem 0xfff 2\nwatch 4096\nstep 99999999999999999999999\n\
                  break 99:0\nbreak 0:0\nbreak 1:16\nbreak nofile.s:3\ndelete 7\nstepi 1\n\
                  disasm 99\n\u{1b}[2J\nregs 0\n";
    let a = answers(&p, &[], script);
    assert_eq!(a.len(), 15, "{a:?}");
    for v in &a[..14] {
        assert!(v["error"].is_string(), "{v}");
    }
    assert_eq!(a[14]["core"], 0);
    // A huge line is an error too, and the next line is read.
    let long = format!("{}\nstep\n", "x".repeat(100_000));
    let a = answers(&p, &[], &long);
    assert!(a[0]["error"].is_string());
    assert_eq!(a.last().unwrap(), &json!({"event": "step", "cycle": 1}));
}

#[test]
fn every_backend_gives_the_same_answers() {
    let script = "break 1:4\ncontinue\ncontinue\nwatch 0\ncontinue\nstepi 15\nregs\nlocks\n\
                  tasks\nwhere\nbreak cycle 200\ncontinue\ndelete\ncontinue\n";
    let outputs: Vec<String> = ["interp", "jit", "auto"]
        .iter()
        .map(|b| debug(&counter(), &["--json", "--backend", b], script).0)
        .collect();
    // The end report names its backend; everything else is the same.
    let norm = |o: &str| {
        o.replace("\"backend\":\"interp\"", "B")
            .replace("\"backend\":\"jit\"", "B")
            .replace("\"backend\":\"auto\"", "B")
    };
    assert_eq!(norm(&outputs[0]), norm(&outputs[1]));
    assert_eq!(norm(&outputs[0]), norm(&outputs[2]));
    assert!(outputs[0].contains("\"event\":\"end\""));
}

#[test]
fn text_answers_are_short_lines() {
    let (out, status) = debug(
        &counter(),
        &[],
        "break 1:4\ncontinue\nmem 0 4\nbogus\nquit\nregs\n",
    );
    assert_eq!(status, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("breakpoint 1 at frame 1, IP 4"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("stopped at cycle 9 before core 0 runs frame 1 IP 4"),
        "{out}"
    );
    assert_eq!(lines[2], "0x000: 00 00 00 00");
    assert!(lines[3].starts_with("error: unknown command"), "{out}");
    assert_eq!(lines.len(), 4, "quit ends the session: {out}");
}

/// Cores 0 and 1 store their R0 (5 and 9) at 0x020 in the same cycle, 6.
const TWO_WRITERS: &str = "\
.cf mask=0x0003 r0=0:5,1:9
.if
    set_const 0x20, r8   ; cycle 5
    st [r8, r1], r0      ; cycle 6: core 0 writes 0 -> 5, then core 1 writes 5 -> 9
    ready
";

#[test]
fn two_writes_in_one_cycle_are_two_watch_stops() {
    let p = write("two_writers", "two.s", TWO_WRITERS);
    let a = answers(
        &p,
        &[],
        "watch 0x20\ncontinue\ncontinue\nmem 0x20 1\ncontinue\n",
    );
    let keys = ["event", "cycle", "core", "old", "new"];
    assert_eq!(
        pick(&a[1], &keys),
        json!({"event": "watch", "cycle": 6, "core": 0, "old": 0, "new": 5})
    );
    assert_eq!(
        pick(&a[2], &keys),
        json!({"event": "watch", "cycle": 6, "core": 1, "old": 5, "new": 9})
    );
    assert_eq!(a[3], json!({"addr": 32, "bytes": "09"}));
    assert_eq!(
        pick(&a[4], &["event", "cycle"]),
        json!({"event": "end", "cycle": 8})
    );
}

/// 16 cores in two halves a cycle apart, each storing 3, 2, 1 to its own byte of bank 0
/// (row 16 * id): a cohort, whose compiled code performs plain accesses itself where no
/// one watches. Odd cores skip the `nop` and store in cycles 12, 15 and 18.
const HALVES: &str = "\
.cf mask=0xffff
.if
    set_const 0, r1      ; cycle 5: id
    xor r2, r2, r2       ; cycle 6: bank 0
    lshft r1, 4, r9      ; cycle 7: row 16 * id
    set_const 1, r14     ; cycle 8
    and r1, r14, r3      ; cycle 9
    bnz odd, r3          ; cycle 10
    nop                  ; cycle 11, even cores only
odd:
    set_const 3, r8      ; odd cores: cycle 11
loop:
    st [r9, r2], r8      ; odd cores: cycles 12, 15, 18
    sub r8, r14, r8
    bnz loop, r8
    ready
";

#[test]
fn a_watch_sees_every_write_of_cores_apart_in_compiled_code() {
    let p = write("halves", "halves.s", HALVES);
    watch_core_5s_three_writes(&p, [12, 15, 18]);
}

/// Watch byte 0x050 (core 5's, of bank 0) in `p` on every backend, compiled code from the
/// first run under `auto`: core 5 writes 3, 2, 1 there in the three `cycles`, then the run
/// ends.
fn watch_core_5s_three_writes(p: &Path, cycles: [u64; 3]) {
    let backends: [&[&str]; 3] = [
        &["--backend", "interp"],
        &["--backend", "jit"],
        &["--backend", "auto", "--auto-hot", "1,1"],
    ];
    for backend in backends {
        let a = answers(
            p,
            backend,
            "watch 0x050\ncontinue\ncontinue\ncontinue\ncontinue\n",
        );
        let keys = ["event", "cycle", "core", "old", "new"];
        let writes = cycles.into_iter().zip([(0, 3), (3, 2), (2, 1)]);
        for (i, (cycle, (old, new))) in writes.enumerate() {
            assert_eq!(
                pick(&a[i + 1], &keys),
                json!({"event": "watch", "cycle": cycle, "core": 5, "old": old, "new": new}),
                "{backend:?}, write {i}"
            );
        }
        assert_eq!(
            pick(&a[4], &["event"]),
            json!({"event": "end"}),
            "{backend:?}"
        );
    }
}

/// 16 cores in lockstep, each storing 3, 2, 1 to its own byte of bank 0 (row 16 * id):
/// plain accesses outside each core's own bank, which lockstep code performs itself where
/// no one watches. The stores fall in cycles 10, 13 and 16.
const LOCKSTEP: &str = "\
.cf mask=0xffff
.if
    set_const 0, r1      ; cycle 5: id
    xor r2, r2, r2       ; cycle 6: bank 0
    lshft r1, 4, r9      ; cycle 7: row 16 * id
    set_const 1, r14     ; cycle 8
    set_const 3, r8      ; cycle 9
loop:
    st [r9, r2], r8      ; cycles 10, 13, 16
    sub r8, r14, r8
    bnz loop, r8
    ready
";

#[test]
fn a_watch_sees_every_write_of_cores_in_lockstep_in_compiled_code() {
    let p = write("lockstep", "lockstep.s", LOCKSTEP);
    watch_core_5s_three_writes(&p, [10, 13, 16]);
}

/// Core 0 stores a counter at 0x000 forever: only the watchdog (2^32 cycles) ends it.
const FOREVER: &str = "\
.cf mask=0x0001
.if
    set_const 1, r9
loop:
    add r5, r9, r5
    st [r4, r1], r5
    bnz loop, r9
";

/// Send `signal` (`-TERM`, `-HUP`, `-INT`) to process `pid`.
#[cfg(unix)]
fn kill(signal: &str, pid: u32) {
    let sent = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// A session fed `line` without end (`yes help | gpu16 debug`), sent `signals` one after
/// the other 0.2 s apart once it has answered for a second: its status, and what its
/// `$TMPDIR` held after it. A session that does not end in 20 s is killed (status None).
#[cfg(unix)]
fn signalled(
    test: &str,
    program: &Path,
    line: &'static [u8],
    signals: &[&str],
) -> (Option<i32>, usize) {
    use std::time::{Duration, Instant};
    let tmp = scratch("debugger", test);
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["debug", "--backend", "interp", s(program)])
        .env("TMPDIR", &tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Ends when the session is gone and the pipe breaks.
    let feeder = std::thread::spawn(move || while stdin.write_all(line).is_ok() {});
    std::thread::sleep(Duration::from_millis(1000));
    for signal in signals {
        kill(signal, child.id());
        std::thread::sleep(Duration::from_millis(200));
    }
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = match child.try_wait().unwrap() {
        Some(status) => status.code(),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    feeder.join().unwrap();
    (status, std::fs::read_dir(&tmp).unwrap().count())
}

/// Commands that keep coming never keep a session from its signals (issue 33): SIGTERM
/// and SIGHUP end it at once with 128 + the signal's number (143, 129); a Ctrl-C that
/// finds no command to stop ends a session whose stdin is no terminal (130), and two in
/// quick succession end it even while each comes during a command. No temporary file is
/// left in `$TMPDIR`.
#[cfg(unix)]
#[test]
fn signals_end_a_session_whose_commands_never_stop_coming() {
    let cases: [(&str, &[u8], &[&str], i32); 4] = [
        ("sigterm", b"help\n", &["-TERM"], 143),
        ("sighup", b"help\n", &["-HUP"], 129),
        ("sigint", b"mem 0 16\n", &["-INT"], 130),
        ("sigint_twice", b"mem 0 16\n", &["-INT", "-INT"], 130),
    ];
    for (test, line, signals, status) in cases {
        let (got, left) = signalled(test, &counter(), line, signals);
        assert_eq!(got, Some(status), "{test}");
        assert_eq!(left, 0, "{test}: files left in $TMPDIR");
    }
    // Each Ctrl-C comes during a long `continue` (a script of them, without end): the
    // first stops it and the session goes on to the next one, the second ends it.
    let p = write("sigint_busy", "forever.s", FOREVER);
    let (got, _) = signalled("sigint_busy_run", &p, b"continue\n", &["-INT", "-INT"]);
    assert_eq!(got, Some(130));
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_long_continue_and_the_session_stays() {
    use std::io::Read;
    use std::time::{Duration, Instant};
    let p = write("ctrl_c", "forever.s", FOREVER);
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["debug", "--json", "--backend", "interp", s(&p)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"step 7\nwatch 0x100\ncontinue\n").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    stdin.write_all(b"where\nquit\n").unwrap();
    drop(stdin);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the session did not stop");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let a: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(a[0], json!({"event": "step", "cycle": 7}));
    assert_eq!(
        a[2],
        json!({"error": "interrupted; the session stays at cycle 7"})
    );
    assert_eq!(a[3]["cycle"], 7);
    assert_eq!(a[3]["cores"][0]["ip"], 2);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn tasks_and_disasm_answer_objects() {
    let p = write("tasks", "add.s", ADD);
    let a = answers(
        &p,
        &[],
        "tasks\nstep 6\ntasks\ndisasm\ndisasm 0\nstep 100\ntasks\n",
    );
    // Before cycle 0 nothing is issued; the task is issued in cycle 1 (the broadcast) and
    // starts in cycle 5; before it ends its `end` is null.
    assert_eq!(a[0], json!({"cycle": 0, "tasks": []}));
    assert_eq!(
        a[2],
        json!({"cycle": 6, "tasks": [{"frame": 1, "mask": 1, "fence": "no", "issue": 1,
                                       "start": 5, "end": null}]})
    );
    assert_eq!(a[3]["frame"], 1);
    assert_eq!(a[3]["kind"], "instr");
    let lines = a[3]["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[2]["source"], "add r8, r9, r3       ; IP 2, cycle 7");
    assert_eq!(lines[2]["location"]["line"], 5);
    assert_eq!(lines[5]["text"], "ready");
    assert_eq!(a[4]["kind"], "control");
    assert_eq!(a[5]["event"], "end");
    assert_eq!(a[6]["tasks"][0]["end"], 10);
}

#[test]
fn a_program_that_cannot_load_is_an_error_before_any_command() {
    let p = write("load", "bad.s", "frobnicate r1\n");
    let (out, status) = debug(&p, &["--json"], "continue\n");
    assert_eq!(status, 1);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["stage"], "load");
    assert_eq!(v["file"], s(&p));
    assert!(
        v["error"].as_str().unwrap().contains("assembly failed"),
        "{v}"
    );
    let (out, status) = debug(&p, &[], "continue\n");
    assert_eq!((out.as_str(), status), ("", 1));
}

// ---------------------------------------------------------------------------------------
// Stops at faults (docs/debugger.md, "Stop rules"). Every program runs core 0 alone: the
// control frame takes cycle 0, the broadcast 1-4, and IP k executes in cycle 5 + k. The
// memory holds 0x2a at 0x005, so an `ld_sync` of 0x005 loads 0x2a.

/// One fault rule: the program, the faulting instruction's IP (and cycle), the registers
/// of core 0 when that cycle begins, the lock then, and the error's rule and address.
struct FaultCase {
    name: &'static str,
    program: &'static str,
    ip: u8,
    cycle: u64,
    regs: [u8; 16],
    /// The lock core 0 holds when the fault's cycle begins: (addr, since).
    lock: Option<(u16, u64)>,
    rule: &'static str,
    addr: Option<u16>,
}

/// The memory: 0x2a at 0x005.
const MEM: [u8; 6] = [0, 0, 0, 0, 0, 0x2a];

fn regs(pairs: &[(usize, u8)]) -> [u8; 16] {
    let mut r = [0; 16];
    for &(i, v) in pairs {
        r[i] = v;
    }
    r
}

fn fault_cases() -> Vec<FaultCase> {
    vec![
        FaultCase {
            name: "st_sync_without_sequence",
            program: FAULT, // set_const 1, r8 at 5; st_sync [r8, r1], r8 at 6
            ip: 1,
            cycle: 6,
            regs: regs(&[(8, 1)]),
            lock: None,
            rule: "st_sync-without-sequence",
            addr: Some(1),
        },
        FaultCase {
            name: "st_sync_to_another_address",
            program: "\
.cf mask=0x0001
.if
    set_const 5, r8        ; IP 0, cycle 5
    ld_sync [r8, r1], r9   ; IP 1, cycle 6: locks 0x005, r9 = 0x2a
    set_const 6, r8        ; IP 2, cycle 7
    st_sync [r8, r1], r9   ; IP 3, cycle 8: st_sync of 0x006 while 0x005 is held
    ready
",
            ip: 3,
            cycle: 8,
            regs: regs(&[(8, 6), (9, 0x2a)]),
            lock: Some((5, 6)),
            rule: "st_sync-wrong-address",
            addr: Some(6),
        },
        FaultCase {
            name: "ld_sync_while_holding",
            program: "\
.cf mask=0x0001
.if
    set_const 5, r8        ; IP 0, cycle 5
    ld_sync [r8, r1], r9   ; IP 1, cycle 6: locks 0x005, r9 = 0x2a
    set_const 7, r10       ; IP 2, cycle 7
    ld_sync [r10, r1], r11 ; IP 3, cycle 8: a second ld_sync while holding
    ready
",
            ip: 3,
            cycle: 8,
            regs: regs(&[(8, 5), (9, 0x2a), (10, 7)]),
            lock: Some((5, 6)),
            rule: "ld_sync-while-holding",
            addr: Some(7),
        },
        FaultCase {
            name: "ld_while_holding",
            program: "\
.cf mask=0x0001
.if
    set_const 5, r8        ; IP 0, cycle 5
    ld_sync [r8, r1], r9   ; IP 1, cycle 6: locks 0x005, r9 = 0x2a
    ld [r8, r1], r10       ; IP 2, cycle 7: a plain ld while holding (even the held byte)
    ready
",
            ip: 2,
            cycle: 7,
            regs: regs(&[(8, 5), (9, 0x2a)]),
            lock: Some((5, 6)),
            rule: "access-while-holding",
            addr: Some(5),
        },
        FaultCase {
            name: "st_while_holding",
            program: M4,
            ip: 3,
            cycle: 8,
            regs: regs(&[(8, 5), (9, 0x54)]),
            lock: Some((5, 6)),
            rule: "access-while-holding",
            addr: Some(5),
        },
        FaultCase {
            name: "ready_while_holding",
            program: "\
.cf mask=0x0001
.if
    set_const 5, r8        ; IP 0, cycle 5
    ld_sync [r8, r1], r9   ; IP 1, cycle 6: locks 0x005, r9 = 0x2a
    ready                  ; IP 2, cycle 7: ready while holding
",
            ip: 2,
            cycle: 7,
            regs: regs(&[(8, 5), (9, 0x2a)]),
            lock: Some((5, 6)),
            rule: "ready-while-holding",
            addr: None,
        },
        FaultCase {
            name: "frame_end_while_holding",
            program: "\
.cf mask=0x0001
.if
    set_const 5, r8        ; IP 0, cycle 5
    ld_sync [r8, r1], r9   ; IP 1, cycle 6: locks 0x005, r9 = 0x2a
    nop                    ; IPs 2..15, cycles 7..20; the frame ends after IP 15
    nop
    nop
    nop
    nop
    nop
    nop
    nop
    nop
    nop
    nop
    nop
    nop
    nop
",
            ip: 15,
            cycle: 20,
            regs: regs(&[(8, 5), (9, 0x2a)]),
            lock: Some((5, 6)),
            rule: "frame-end-while-holding",
            addr: None,
        },
    ]
}

/// The issue's program: the `st` of line 6 (IP 3, cycle 8) runs while 0x005 is held.
const M4: &str = "\
.cf mask=1
.if
 set_const 5, r8
 ld_sync [r8, r0], r9
 add r9, r9, r9
 st [r8, r0], r9
";

/// `program` in a scratch directory with the memory file `m.bin` ([`MEM`]) beside it.
fn with_mem(test: &str, name: &str, program: &str) -> (PathBuf, PathBuf) {
    let p = write(test, name, program);
    let m = p.with_file_name("m.bin");
    std::fs::write(&m, MEM).unwrap();
    (p, m)
}

#[test]
fn a_breakpoint_on_a_faulting_instruction_stops_before_it_for_every_rule() {
    for case in fault_cases() {
        let (p, m) = with_mem(case.name, "f.s", case.program);
        for backend in ["interp", "jit"] {
            let a = answers(
                &p,
                &["--mem", s(&m), "--backend", backend],
                &format!(
                    "break 1:{}\ncontinue\nregs 0\nlocks\ncontinue\nlocks\nwhere\nregs 0\n",
                    case.ip
                ),
            );
            let at = format!("{} on {backend}", case.name);
            assert_eq!(
                pick(
                    &a[1],
                    &["event", "cycle", "core", "frame", "ip", "breakpoint"]
                ),
                json!({"event": "break", "cycle": case.cycle, "core": 0, "frame": 1,
                       "ip": case.ip, "breakpoint": 1}),
                "{at}"
            );
            // The state when the fault's cycle begins: the faulting instruction not run.
            assert_eq!(
                pick(&a[2], &["registers", "frame", "ip", "state"]),
                json!({"registers": case.regs, "frame": 1, "ip": case.ip, "state": "running"}),
                "{at}"
            );
            let locks: Vec<Value> = case
                .lock
                .iter()
                .map(|&(addr, since)| {
                    json!({"addr": addr, "holder": 0, "since": since, "waiting": []})
                })
                .collect();
            assert_eq!(a[3], json!({"cycle": case.cycle, "locks": locks}), "{at}");
            // Continuing reports the fault, in the same cycle.
            assert_eq!(
                pick(&a[4], &["event", "cycle"]),
                json!({"event": "fault", "cycle": case.cycle}),
                "{at}"
            );
            assert_eq!(
                pick(&a[4]["error"], &["rule", "core", "frame", "ip", "cycle"]),
                json!({"rule": case.rule, "core": 0, "frame": 1, "ip": case.ip,
                       "cycle": case.cycle}),
                "{at}"
            );
            assert_eq!(
                a[4]["error"].get("addr").cloned().unwrap_or(Value::Null),
                json!(case.addr),
                "{at}"
            );
            // After the failure every view shows the state the run reported: the one
            // when the fault's cycle began, its lock still held.
            assert_eq!(a[5], json!({"cycle": case.cycle, "locks": locks}), "{at}");
            assert_eq!(
                pick(&a[6], &["cycle", "status"]),
                json!({"cycle": case.cycle, "status": "failed"}),
                "{at}"
            );
            assert_eq!(
                a[6]["cores"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| pick(c, &["core", "frame", "ip", "state"]))
                    .collect::<Vec<_>>(),
                vec![json!({"core": 0, "frame": 1, "ip": case.ip, "state": "faulted"})],
                "{at}"
            );
            assert_eq!(
                pick(&a[7], &["registers", "ip", "state"]),
                json!({"registers": case.regs, "ip": case.ip, "state": "faulted"}),
                "{at}"
            );
        }
    }
}

#[test]
fn the_issues_program_stops_at_its_line_and_locks_agree_after_the_failure() {
    let (p, m) = with_mem("m4", "m4.s", M4);
    let (out, status) = debug(
        &p,
        &["--mem", s(&m)],
        "break m4.s:6\ncontinue\nlocks\ncontinue\nlocks\nmem 5 1\n",
    );
    assert_eq!(status, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[1].starts_with("stopped at cycle 8 before core 0 runs frame 1 IP 3 (breakpoint 1, "),
        "{out}"
    );
    assert!(lines[1].ends_with("m4.s:6:2)"), "{out}");
    assert_eq!(lines[2], "0x005 held by core 0 since cycle 6", "{out}");
    assert!(lines[3].starts_with("the run failed at cycle 8: "), "{out}");
    // The failure's state is the machine when cycle 8 began: 0x005 still held, unchanged.
    assert_eq!(lines[4], "0x005 held by core 0 since cycle 6", "{out}");
    assert_eq!(lines[5], "0x005: 2a", "{out}");
    // `break 1:3` is the same stop, and `break cycle 8` shows the same locks.
    let a = answers(
        &p,
        &["--mem", s(&m)],
        "break 1:3\ncontinue\nlocks\ndelete\nbreak cycle 8\ncontinue\nlocks\ntasks\n",
    );
    assert_eq!(
        pick(&a[1], &["event", "cycle", "core", "ip"]),
        json!({"event": "break", "cycle": 8, "core": 0, "ip": 3})
    );
    let held = json!({"cycle": 8, "locks": [{"addr": 5, "holder": 0, "since": 6,
                                              "waiting": []}]});
    assert_eq!(a[2], held);
    // The cycle breakpoint lies behind the session (it stands at 8): the run faults.
    assert_eq!(a[5]["event"], "fault");
    assert_eq!(a[6], held);
    // The task, issued in cycle 1 (its broadcast) and started in 5, had not ended.
    assert_eq!(
        a[7],
        json!({"cycle": 8, "tasks": [{"frame": 1, "mask": 1, "fence": "no", "issue": 1,
                                       "start": 5, "end": null}]})
    );
}

#[test]
fn a_breakpoint_stops_before_a_watch_of_its_cycle() {
    // ADD's store at IP 4 executes in cycle 9: the breakpoint stops when 9 begins, the
    // watch after 9.
    let p = write("break_then_watch", "add.s", ADD);
    let a = answers(&p, &[], "watch 0x10\nbreak 1:4\ncontinue\ncontinue\n");
    assert_eq!(
        pick(&a[2], &["event", "cycle", "breakpoint"]),
        json!({"event": "break", "cycle": 9, "breakpoint": 2})
    );
    assert_eq!(
        pick(&a[3], &["event", "cycle", "watchpoint", "old", "new"]),
        json!({"event": "watch", "cycle": 9, "watchpoint": 1, "old": 0, "new": 5})
    );
}

#[test]
fn a_watch_on_the_byte_a_faulting_store_would_write_stops_before_it() {
    // st_while_holding: the st at IP 3, cycle 8 would write 0x54 over 0x2a at 0x005;
    // st_sync_to_another_address: the st_sync at IP 3, cycle 8 would write 0x2a at 0x006;
    // st_sync_without_sequence: the st_sync at IP 1, cycle 6 would write r8 = 1 at 0x001.
    for (name, program, ip, cycle, addr, old, new) in [
        ("watch_st", M4, 3, 8, 5, 0x2a, 0x54),
        ("watch_st_sync", fault_cases()[1].program, 3, 8, 6, 0, 0x2a),
        ("watch_st_sync_alone", FAULT, 1, 6, 1, 0, 1),
    ] {
        let (p, m) = with_mem(name, "w.s", program);
        let a = answers(
            &p,
            &["--mem", s(&m)],
            &format!("watch {addr}\ncontinue\nmem {addr} 1\nregs 0\ncontinue\nmem {addr} 1\n"),
        );
        assert_eq!(
            pick(
                &a[1],
                &[
                    "event",
                    "cycle",
                    "core",
                    "frame",
                    "ip",
                    "addr",
                    "old",
                    "new",
                    "faulting",
                    "fault_cycle"
                ]
            ),
            json!({"event": "watch", "cycle": cycle, "core": 0, "frame": 1, "ip": ip,
                   "addr": addr, "old": old, "new": new, "faulting": true, "fault_cycle": true}),
            "{name}"
        );
        // The session stands when the fault's cycle begins: the byte unwritten, the store
        // next.
        let before = json!({"addr": addr, "bytes": format!("{old:02x}")});
        assert_eq!(a[2], before, "{name}");
        assert_eq!(
            pick(&a[3], &["ip", "state"]),
            json!({"ip": ip, "state": "running"}),
            "{name}"
        );
        assert_eq!(
            pick(&a[4], &["event", "cycle"]),
            json!({"event": "fault", "cycle": cycle}),
            "{name}"
        );
        assert_eq!(a[5], before, "{name}");
    }
}

/// Core 0 stores 7 at 0x020 in cycle 9; core 1, holding 0x030 since 8, stores there in the
/// same cycle and faults.
const WRITE_THEN_FAULT: &str = "\
.cf mask=0x0003 r0=0:0,1:1
.if
    set_const 0x20, r8     ; IP 0, cycle 5 (both cores)
    bnz hold, r0           ; IP 1, cycle 6: core 1 jumps to IP 6
    set_const 7, r9        ; IP 2, cycle 7 (core 0)
    nop                    ; IP 3, cycle 8
    st [r8, r1], r9        ; IP 4, cycle 9: 0x020: 0 -> 7
    ready                  ; IP 5, cycle 10
hold:
    set_const 0x30, r10    ; IP 6, cycle 7 (core 1)
    ld_sync [r10, r1], r11 ; IP 7, cycle 8: locks 0x030, r11 = 0
    st [r8, r1], r11       ; IP 8, cycle 9: st while holding, would write 0x020: 7 -> 0
";

#[test]
fn watch_stops_in_the_cycle_of_a_fault_show_the_state_when_it_began() {
    let p = write("write_then_fault", "wf.s", WRITE_THEN_FAULT);
    let a = answers(
        &p,
        &[],
        "watch 0x20\ncontinue\nmem 0x20 1\ncontinue\nmem 0x20 1\ncontinue\nlocks\nwhere\n",
    );
    let keys = [
        "event",
        "cycle",
        "core",
        "ip",
        "old",
        "new",
        "fault_cycle",
        "faulting",
    ];
    // Core 0's write happens, but the run faults in its cycle: no state after cycle 9
    // exists, so the session stands when 9 begins.
    assert_eq!(
        pick(&a[1], &keys),
        json!({"event": "watch", "cycle": 9, "core": 0, "ip": 4, "old": 0, "new": 7,
               "fault_cycle": true})
    );
    assert_eq!(a[2], json!({"addr": 32, "bytes": "00"}));
    // Then core 1's faulting store, which would write 7 -> 0 (after core 0's write).
    assert_eq!(
        pick(&a[3], &keys),
        json!({"event": "watch", "cycle": 9, "core": 1, "ip": 8, "old": 7, "new": 0,
               "fault_cycle": true, "faulting": true})
    );
    assert_eq!(a[4], json!({"addr": 32, "bytes": "00"}));
    assert_eq!(
        pick(&a[5]["error"], &["rule", "core", "ip", "cycle", "addr"]),
        json!({"rule": "access-while-holding", "core": 1, "ip": 8, "cycle": 9, "addr": 32})
    );
    assert_eq!(
        a[6],
        json!({"cycle": 9, "locks": [{"addr": 48, "holder": 1, "since": 8, "waiting": []}]})
    );
    // Core 0 stands before its store, core 1 at its faulting one.
    let cores: Vec<Value> = a[7]["cores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| pick(c, &["core", "ip", "state"]))
        .collect();
    assert_eq!(
        cores,
        vec![
            json!({"core": 0, "ip": 4, "state": "running"}),
            json!({"core": 1, "ip": 8, "state": "faulted"}),
        ]
    );
}

#[test]
fn in_a_faults_cycle_lower_cores_reach_breakpoints_and_higher_ones_do_not() {
    // Core 0's st at IP 4 executes in cycle 9, before core 1 faults in that cycle.
    let p = write("lower_break", "wf.s", WRITE_THEN_FAULT);
    let a = answers(&p, &[], "break 1:4\ncontinue\nregs 0\nstepi 0\n");
    assert_eq!(
        pick(&a[1], &["event", "cycle", "core", "ip"]),
        json!({"event": "break", "cycle": 9, "core": 0, "ip": 4})
    );
    assert_eq!(a[2]["registers"][9], 7);
    // No state after cycle 9 exists: stepping core 0 over its store meets the fault.
    assert_eq!(
        pick(&a[3], &["event", "cycle"]),
        json!({"event": "fault", "cycle": 9})
    );
    // Core 0 faults in cycle 6; cores 1 and 2 would run IP 2 in cycle 6, after it.
    let p = write(
        "higher_break",
        "hf.s",
        "\
.cf mask=0x0007 r0=0:0,1:1,2:2
.if
    bnz other, r0          ; IP 0, cycle 5: cores 1 and 2 jump to IP 2
    st_sync [r8, r1], r8   ; IP 1, cycle 6: core 0 faults (no open sequence)
other:
    nop                    ; IP 2, cycle 6 for cores 1 and 2: never reached
    ready
",
    );
    let a = answers(&p, &[], "break 1:2\ncontinue\n");
    assert_eq!(
        pick(&a[1], &["event", "cycle"]),
        json!({"event": "fault", "cycle": 6})
    );
    assert_eq!(
        pick(&a[1]["error"], &["core", "ip"]),
        json!({"core": 0, "ip": 1})
    );
}

#[test]
fn stepi_into_a_faulting_instruction_reports_the_fault() {
    let (p, m) = with_mem("stepi_fault", "m4.s", M4);
    let a = answers(&p, &["--mem", s(&m)], "step 8\nstepi 0\nwhere\n");
    assert_eq!(a[0], json!({"event": "step", "cycle": 8}));
    assert_eq!(
        pick(&a[1], &["event", "cycle"]),
        json!({"event": "fault", "cycle": 8})
    );
    assert_eq!(a[2]["status"], "failed");
}

// ---------------------------------------------------------------------------------------
// The protocol: one JSON reply a line; confirmations; limits.

#[test]
fn every_json_line_gets_one_reply_blank_comment_and_quit_included() {
    let p = write("one_reply", "add.s", ADD);
    let (out, status) = debug(&p, &["--json"], "\n   \n# note\nbogus\nquit\nregs 0\n");
    assert_eq!(status, 0);
    let a: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(a.len(), 5, "{out}");
    assert_eq!(a[0], json!({}));
    assert_eq!(a[1], json!({}));
    assert_eq!(a[2], json!({}));
    assert!(a[3]["error"].is_string());
    assert_eq!(a[4], json!({"quit": true}));
    // In text mode a blank line and quit print nothing.
    let (out, _) = debug(&p, &[], "\nquit\n");
    assert_eq!(out, "");
}

#[test]
fn delete_all_and_delete_in_a_script_do_not_ask() {
    let p = write("delete_all", "add.s", ADD);
    let a = answers(
        &p,
        &[],
        "break 1:2\nwatch 5\nbreak cycle 3\ndelete 2\ndelete all\ndelete\nbreak 1:1\ndelete\n",
    );
    assert_eq!(a[3], json!({"deleted": [2]}));
    assert_eq!(a[4], json!({"deleted": [1, 3]}));
    assert_eq!(a[5], json!({"deleted": []}));
    assert_eq!(a[7], json!({"deleted": [4]}));
}

#[test]
fn hostile_scripts_get_errors_in_bounded_time() {
    let p = write("hostile", "add.s", ADD);
    // The cap: 10,000 points, then an error; deleting them one by one is cheap.
    let mut script = String::new();
    for i in 0..10_000 {
        script += if i % 2 == 0 {
            "break 1:2\n"
        } else {
            "watch 0x10\n"
        };
    }
    script += "break 1:3\n";
    for id in 1..=10_000 {
        script += &format!("delete {id}\n");
    }
    script += "break 1:3\ncontinue\n";
    let started = std::time::Instant::now();
    let a = answers(&p, &[], &script);
    assert_eq!(a.len(), 20_003);
    assert_eq!(a[9_999], json!({"watchpoint": 10_000, "addr": 16}));
    assert_eq!(
        a[10_000],
        json!({"error": "a session holds at most 10000 breakpoints and watchpoints; \
                         delete some first"})
    );
    assert_eq!(a[20_000], json!({"deleted": [10_000]}));
    assert_eq!(a[20_001]["breakpoint"], 10_001);
    assert_eq!(
        pick(&a[20_002], &["event", "cycle", "ip"]),
        json!({"event": "break", "cycle": 8, "ip": 3})
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    // Huge numbers, and a last command cut off by the end of the input (no newline).
    let a = answers(
        &p,
        &[],
        "break cycle 99999999999999999999999\ndelete 18446744073709551616\n\
         mem 0xfff 0x100000000\nwatch 0xffffffffffffffffff\nbreak 1:2",
    );
    assert_eq!(a.len(), 5);
    for v in &a[..4] {
        assert!(v["error"].is_string(), "{v}");
    }
    assert_eq!(a[4]["breakpoint"], 1);
}

#[test]
fn locks_in_a_program_without_ld_sync_are_none_without_a_run() {
    // forever.s has no ld_sync: at cycle 10^9 no lock can be held, answered at once (the
    // run that observes every instruction would take minutes).
    let p = write("no_atomics", "forever.s", FOREVER);
    let started = std::time::Instant::now();
    let a = answers(&p, &["--backend", "interp"], "step 1000000000\nlocks\n");
    assert_eq!(a[1], json!({"cycle": 1_000_000_000u64, "locks": []}));
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// The fast search (a first run at a plain run's speed notes where stops may fall, then
/// every instruction is seen from there) stops exactly where seeing every instruction from
/// cycle 0 stops: on generated programs of every profile (faults included), on the
/// interpreter and compiled engines, with breakpoints on instructions the program has and
/// watches on bytes it writes, through a series of `continue`s, `stepi`s and views. Each
/// program is searched twice: with breakpoints and watches, and with breakpoints alone,
/// which compiled code runs itself (its forms hand each core coming to a breakpoint to the
/// interpreter); `auto` compiles every frame at once there, so its compiled code is tried.
/// The fast session keeps snapshots 1 to 16 cycles apart, inside the tasks, and goes back
/// in time from them (`reverse-step`, `reverse-stepi`, `when`, `reverse-continue`); the
/// reference keeps none and runs every search and move back from cycle 0.
#[test]
fn the_fast_search_stops_where_seeing_every_instruction_stops() {
    use gpu16::debugger::Session;
    use gpu16::fuzz::Case;
    use gpu16::{BackendKind, Engine, Hotness, Runner};
    use gpu16_gen::Profile;
    use gpu16_machine::{Config, FrameKind, Program};

    let runners = [
        Runner::from(BackendKind::Interp),
        Runner::from(BackendKind::Auto),
        Runner {
            backend: BackendKind::Jit,
            engine: Engine::Lockstep,
            hot: None,
        },
        Runner {
            backend: BackendKind::Jit,
            engine: Engine::PerCore,
            hot: None,
        },
        Runner {
            backend: BackendKind::Auto,
            engine: Engine::Adaptive,
            hot: Some(Hotness {
                issues: 1,
                instructions: 1,
            }),
        },
    ];
    let mut stops = 0;
    for (k, profile) in Profile::ALL.into_iter().enumerate() {
        for seed in 0..4u64 {
            let seed = 77_000_000 + k as u64 * 1000 + seed;
            let c = Case::new(seed, Some(profile));
            let Ok(program) = Program::from_image(&c.image) else {
                continue;
            };
            let config = Config {
                max_cycles: c.config.max_cycles.min(5_000),
                ..c.config
            };
            // Breakpoints on a few instructions of the program, watches on bytes it writes
            // (where the final memory differs) and one it may not.
            // The workspace's one seeded generator.
            let mut rng = gpu16_gen::rng::Rng::new(seed);
            let mut draw = |n: u64| rng.below(n);
            let frames: Vec<usize> = (0..program.len())
                .filter(|&f| matches!(program.kind(f), FrameKind::Instr { .. }))
                .collect();
            let mut breaks = String::new();
            for _ in 0..3 {
                if !frames.is_empty() {
                    let f = frames[draw(frames.len() as u64) as usize];
                    breaks += &format!("break {f}:{}\n", draw(16));
                }
            }
            let mut script = breaks.clone();
            let end = gpu16::run(BackendKind::Interp, &program, &c.memory, &config)
                .map_or_else(|f| f.state.memory, |r| r.memory);
            let written: Vec<usize> = (0..4096)
                .filter(|&a| end[a] != c.memory.get(a).copied().unwrap_or(0))
                .collect();
            for _ in 0..2 {
                if !written.is_empty() {
                    script += &format!("watch {}\n", written[draw(written.len() as u64) as usize]);
                }
            }
            script += &format!("watch {}\n", draw(4096));
            let mut moves = String::new();
            for round in 0..6 {
                moves += "continue\nwhere\n";
                if round == 2 {
                    moves += &format!("stepi {}\nregs\n", draw(16));
                }
                // Back in time: the fast session goes back from its snapshots.
                if round == 3 {
                    moves += &format!(
                        "reverse-step {}\nwhere\nreverse-stepi {}\nregs\nwhen {}\n",
                        1 + draw(40),
                        draw(16),
                        draw(4096)
                    );
                }
                if round == 4 {
                    moves += "reverse-continue\nwhere\nlocks\n";
                }
            }
            script += &moves;
            let breaks_alone = breaks + &moves;
            let spacing = 1 + draw(16);
            for (runner, script) in runners
                .into_iter()
                .flat_map(|r| [(r, &script), (r, &breaks_alone)])
            {
                let transcript = |exhaustive: bool| {
                    let mut s = Session::new(
                        program.clone(),
                        None,
                        c.memory.clone(),
                        runner,
                        config,
                        true,
                    );
                    s.search_exhaustively(exhaustive);
                    // Snapshots inside the tasks of these short programs.
                    s.snapshot_every(spacing);
                    script
                        .lines()
                        .map(|l| s.execute(l).text)
                        .collect::<Vec<_>>()
                };
                let fast = transcript(false);
                let reference = transcript(true);
                for (line, (a, b)) in script.lines().zip(fast.iter().zip(&reference)) {
                    assert_eq!(
                        a, b,
                        "seed {seed} {profile:?} {runner:?}: `{line}`\n{script}"
                    );
                }
                stops += fast.iter().filter(|t| t.contains("\"event\"")).count();
            }
        }
    }
    assert!(stops > 100, "{stops} stops compared");
}

#[test]
fn reverse_step_and_restart_go_back_to_the_state_then() {
    let p = write("reverse_step", "add.s", ADD);
    let a = answers(
        &p,
        &[],
        "step 8\nreverse-step 3\nregs 0\nrs\nregs 0\nrun\nstep 9\nmem 0x10 1\nreverse-step 100\n",
    );
    assert_eq!(a[0], json!({"event": "step", "cycle": 8}));
    assert_eq!(a[1], json!({"event": "step", "cycle": 5, "reverse": true}));
    // As cycle 5 begins nothing of the frame has run; as cycle 4 begins, nor has it started.
    assert_eq!(a[2]["registers"][8], 0);
    assert_eq!(a[2]["ip"], 0);
    assert_eq!(a[3], json!({"event": "step", "cycle": 4, "reverse": true}));
    assert_eq!(a[5], json!({"event": "restart", "cycle": 0}));
    // The store runs in cycle 9: not yet as it begins.
    assert_eq!(a[7], json!({"addr": 16, "bytes": "00"}));
    assert_eq!(a[8], json!({"event": "step", "cycle": 0, "reverse": true}));
}

#[test]
fn reverse_step_from_the_end_and_a_forward_step_agree() {
    // counter.s runs 342 cycles; back 77 from 200 is where 123 forward is.
    let back = answers(
        &counter(),
        &[],
        "step 200\nreverse-step 77\nregs\nmem 0 64\nwhere\n",
    );
    let forward = answers(&counter(), &[], "step 123\nregs\nmem 0 64\nwhere\n");
    assert_eq!(back[1]["cycle"], 123);
    assert_eq!(back[2..], forward[1..]);
    let end = answers(&counter(), &[], "continue\nreverse-step 2\n");
    assert_eq!(
        end[1],
        json!({"event": "step", "cycle": 340, "reverse": true})
    );
}

#[test]
fn reverse_stepi_goes_back_to_before_the_cores_last_instruction() {
    let p = write("reverse_stepi", "add.s", ADD);
    // As cycle 9 begins core 0 last ran IP 3 in cycle 8.
    let a = answers(&p, &[], "step 9\nreverse-stepi 0\nregs 0\nrsi 0\nrsi 1\n");
    assert_eq!(
        pick(&a[1], &["event", "cycle", "core", "frame", "ip", "reverse"]),
        json!({"event": "step", "cycle": 8, "core": 0, "frame": 1, "ip": 3, "reverse": true})
    );
    assert_eq!(a[2]["ip"], 3);
    assert_eq!(a[2]["registers"][10], 0);
    assert_eq!(a[3]["cycle"], 7);
    assert!(
        a[4]["error"].as_str().unwrap().contains("core 1"),
        "{}",
        a[4]
    );
}

#[test]
fn reverse_continue_goes_back_to_the_previous_stop() {
    let p = write("reverse_continue", "add.s", ADD);
    // Stops going forward: the breakpoint at IP 2 (cycle 7), then the watch on the store's
    // byte 0x010 (cycle 9, so the session stands at 10), then the breakpoint at IP 5 (10).
    let a = answers(
        &p,
        &[],
        "break 1:2\nwatch 0x10\nbreak 1:5\ncontinue\ncontinue\ncontinue\nrc\nrc\nrc\nrc\ncontinue\n",
    );
    assert_eq!(
        pick(&a[3], &["event", "cycle"]),
        json!({"event": "break", "cycle": 7})
    );
    assert_eq!(
        pick(&a[4], &["event", "cycle"]),
        json!({"event": "watch", "cycle": 9})
    );
    assert_eq!(
        pick(&a[5], &["event", "cycle", "ip"]),
        json!({"event": "break", "cycle": 10, "ip": 5})
    );
    // Back: the watch stop (standing at 10, as the break at 10 does: the watch comes first).
    assert_eq!(
        pick(&a[6], &["event", "cycle", "old", "new", "reverse"]),
        json!({"event": "watch", "cycle": 9, "old": 0, "new": 5, "reverse": true})
    );
    assert_eq!(
        pick(&a[7], &["event", "cycle", "ip", "reverse"]),
        json!({"event": "break", "cycle": 7, "ip": 2, "reverse": true})
    );
    assert!(
        a[8]["error"].as_str().unwrap().contains("no stop before"),
        "{}",
        a[8]
    );
    assert!(a[9]["error"].is_string());
    // Forward again from the first stop: the watch, as before.
    assert_eq!(
        pick(&a[10], &["event", "cycle"]),
        json!({"event": "watch", "cycle": 9})
    );
}

/// Cores 0 and 1: core 0 ends by `ready` at IP 2 in cycle 7; core 1 branches to IP 3
/// (cycle 7), runs IP 4 in 8 and ends by `ready` at IP 5 in 9. The run takes 10 cycles.
const TWO: &str = "\
.cf mask=3
.if
    set_const 0, r1      ; IP 0, cycle 5: r1 = the core id
    bnz long, r1         ; IP 1, cycle 6
    ready                ; IP 2, cycle 7 (core 0)
long:
    set_const 1, r8      ; IP 3, cycle 7 (core 1)
    set_const 2, r9      ; IP 4, cycle 8
    ready                ; IP 5, cycle 9
";

#[test]
fn print_display_info_and_x_read_the_state_where_the_session_stands() {
    let p = write("print", "add.s", ADD);
    let a = answers(
        &p,
        &[],
        "break 1:2\ncontinue\ncore\nprint r8 + r9\nprint [0x10] == 0 && cycle == 7\n\
         display r8 * 10 + c0.r9\nstep\ninfo breakpoints\nx/2 0x10\nundisplay 1\nstep 2\n\
         print r99\nprint 1 / 0\ninfo display\n",
    );
    assert_eq!(
        pick(&a[1], &["event", "cycle", "core"]),
        json!({"event": "break", "cycle": 7, "core": 0})
    );
    assert_eq!(a[2], json!({"core": 0}));
    assert_eq!(a[3], json!({"expr": "r8 + r9", "value": 5}));
    assert_eq!(
        a[4],
        json!({"expr": "[0x10] == 0 && cycle == 7", "value": 1})
    );
    assert_eq!(
        a[5],
        json!({"display": 1, "expr": "r8 * 10 + c0.r9", "value": 23})
    );
    assert_eq!(
        a[6],
        json!({"event": "step", "cycle": 8,
               "display": [{"display": 1, "expr": "r8 * 10 + c0.r9", "value": 23}]})
    );
    assert_eq!(
        a[7],
        json!({"points": [{"breakpoint": 1, "locations": [{"frame": 1, "ip": 2}]}]})
    );
    assert_eq!(a[8], json!({"addr": 16, "bytes": "0000"}));
    assert_eq!(a[9], json!({"undisplayed": 1}));
    // The store of 5 runs in cycle 9; the step to 10 has no display left.
    assert_eq!(a[10], json!({"event": "step", "cycle": 10}));
    assert!(
        a[11]["error"].as_str().unwrap().contains("r99"),
        "{}",
        a[11]
    );
    assert!(a[12]["error"]
        .as_str()
        .unwrap()
        .contains("division by zero"));
    assert_eq!(a[13], json!({"displays": []}));
}

#[test]
fn finish_until_per_core_breakpoints_and_the_ip_marks() {
    let p = write("finish", "two.s", TWO);
    let a = answers(
        &p,
        &[],
        "break 1:0 core 1\ncontinue\ncore 0\nfinish\nwhere\ndisasm 1\nrun\ncore 1\nuntil 4\n\
         step 5\ndelete 1\nuntil 4\nfinish\n",
    );
    assert_eq!(a[0]["core"], 1);
    // Both cores come to IP 0 in cycle 5; the breakpoint is core 1's only.
    assert_eq!(
        pick(&a[1], &["event", "cycle", "core", "ip"]),
        json!({"event": "break", "cycle": 5, "core": 1, "ip": 0})
    );
    assert_eq!(a[2], json!({"core": 0}));
    // Core 0's part ends by `ready` in cycle 7: finish stands as cycle 8 begins.
    assert_eq!(a[3], json!({"event": "finish", "cycle": 8, "core": 0}));
    let busy: Vec<Value> = a[4]["cores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| pick(c, &["core", "ip"]))
        .collect();
    assert_eq!(busy, vec![json!({"core": 1, "ip": 4})]);
    let marked: Vec<Value> = a[5]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l.get("cores").is_some())
        .map(|l| pick(l, &["ip", "cores"]))
        .collect();
    assert_eq!(marked, vec![json!({"ip": 4, "cores": [1]})]);
    assert_eq!(a[6], json!({"event": "restart", "cycle": 0}));
    // Before cycle 5 core 1 runs no frame yet.
    assert!(
        a[8]["error"].as_str().unwrap().contains("core 1"),
        "{}",
        a[8]
    );
    // (Its breakpoint at IP 0 would stop `until` first in cycle 5: deleted.)
    assert_eq!(
        pick(&a[11], &["event", "cycle", "core", "ip"]),
        json!({"event": "until", "cycle": 8, "core": 1, "ip": 4})
    );
    // Core 1 ends in cycle 9, the last of the run: finish goes to the end.
    assert_eq!(a[12]["event"], "end");
    assert_eq!(a[12]["cycle"], 10);
}

#[test]
fn an_empty_line_at_a_terminal_repeats_the_last_move() {
    use gpu16::debugger::Session;
    use gpu16::BackendKind;
    let program = gpu16_asm::assemble(ADD, "add.s").unwrap().program;
    let session = |terminal: bool| {
        let mut s = Session::new(
            program.clone(),
            None,
            Vec::new(),
            BackendKind::Interp.into(),
            gpu16_machine::Config::default(),
            false,
        );
        s.confirm_delete_all(terminal);
        s
    };
    let mut s = session(true);
    assert_eq!(s.execute("step 3").text, "stopped at cycle 3\n");
    assert_eq!(s.execute("").text, "stopped at cycle 6\n");
    assert!(!s.execute("regs 0").text.is_empty());
    assert_eq!(s.execute("").text, "stopped at cycle 9\n");
    // A script (no terminal) reads an empty line as nothing.
    let mut s = session(false);
    s.execute("step 3");
    assert_eq!(s.execute("").text, "");
}

/// Core 0 counts r8 down from 5: `sub` (IP 2) runs in cycles 7, 9, 11, 13, 15 with r8
/// 5, 4, 3, 2, 1 before it; `bnz` (IP 3) in 8, 10, 12, 14, 16 with r8 4, 3, 2, 1, 0;
/// `ready` (IP 4) in 17.
const COUNTDOWN: &str = "\
.cf mask=1
.if
    set_const 5, r8
    set_const 1, r9
loop:
    sub r8, r9, r8
    bnz loop, r8
    ready
";

#[test]
fn a_conditional_breakpoint_stops_where_its_condition_holds() {
    let p = write("conditional", "countdown.s", COUNTDOWN);
    let a = answers(
        &p,
        &[],
        "break 1:2 if r8 == 2\ncontinue\nprint r8\ncontinue\nrun\ndelete 1\n\
         break 1:3 if r8 < 2 && cycle > 10\ncontinue\nprint r8\n\
         break 1:4 if [0x10] == 0 && core == 0\ncontinue\ncontinue\n\
         break 1:2 if c1.r2 == 0\nbreak cycle 5 if r1\nbreak 1:2 if r99\ninfo breakpoints\n",
    );
    assert_eq!(a[0]["if"], "r8 == 2");
    assert_eq!(
        pick(&a[1], &["event", "cycle", "ip"]),
        json!({"event": "break", "cycle": 13, "ip": 2})
    );
    assert_eq!(a[2]["value"], 2);
    // No later `sub` finds r8 at 2: on to the end.
    assert_eq!(a[3]["event"], "end");
    assert_eq!(
        pick(&a[7], &["event", "cycle", "ip"]),
        json!({"event": "break", "cycle": 14, "ip": 3})
    );
    assert_eq!(a[8]["value"], 1);
    assert_eq!(
        pick(&a[10], &["event", "cycle", "ip"]),
        json!({"event": "break", "cycle": 16, "ip": 3})
    );
    assert_eq!(
        pick(&a[11], &["event", "cycle", "ip"]),
        json!({"event": "break", "cycle": 17, "ip": 4})
    );
    for bad in &a[12..15] {
        assert!(bad["error"].is_string(), "{bad}");
    }
    assert_eq!(
        a[15]["points"],
        json!([
            {"breakpoint": 2, "locations": [{"frame": 1, "ip": 3}], "if": "r8 < 2 && cycle > 10"},
            {"breakpoint": 3, "locations": [{"frame": 1, "ip": 4}], "if": "[0x10] == 0 && core == 0"}
        ])
    );
}

#[test]
fn when_names_the_last_instruction_that_wrote_a_byte_or_a_register() {
    let p = write("when", "add.s", ADD);
    let a = answers(
        &p,
        &[],
        "step 10\nwhen 0x10\nwhen r3\nwhen r3 core 1\nwhen 0x20\nwhen r16\nreverse-step 2\nwhen 0x10\n",
    );
    // The store at IP 4 writes 2 + 3 at 0x010 in cycle 9; the add at IP 2 writes r3 in 7.
    assert_eq!(
        pick(&a[1], &["when", "cycle", "core", "frame", "ip", "value"]),
        json!({"when": "0x010", "cycle": 9, "core": 0, "frame": 1, "ip": 4, "value": 5})
    );
    assert_eq!(
        pick(&a[2], &["when", "cycle", "core", "ip", "value"]),
        json!({"when": "core 0 r3", "cycle": 7, "core": 0, "ip": 2, "value": 5})
    );
    assert_eq!(a[3], json!({"when": "core 1 r3", "written": false}));
    assert_eq!(a[4], json!({"when": "0x020", "written": false}));
    assert!(a[5]["error"].is_string());
    // As cycle 8 begins the store has not run.
    assert_eq!(a[7], json!({"when": "0x010", "written": false}));
}

/// A frame with a label after its last instruction as well as a branch target.
const LABELS: &str = "\
.cf mask=0x0001
.if
    set_const 2, r1
again:
    sub r1, r2, r1
    bnz again, r1
done:
";

#[test]
fn disasm_names_the_sources_labels_instead_of_l_numbers() {
    let p = write("disasm_labels", "labels.s", LABELS);
    let (out, status) = debug(&p, &[], "disasm 1\n");
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("again: sub r1, r2, r1"), "{out}");
    assert!(out.contains("bnz again, r1"), "{out}");
    assert!(out.contains("done:"), "{out}");
    assert!(!out.contains("L1"), "{out}");
    let a = answers(&p, &[], "disasm 1\nbreak 1:done\n");
    let lines = a[0]["lines"].as_array().unwrap();
    assert_eq!(lines[1]["label"], "again");
    assert_eq!(lines[2]["text"], "bnz again, r1");
    assert_eq!(lines[3]["label"], "done");
    assert_eq!(lines[3]["text"], "done: ready");
    assert_eq!(a[1]["locations"], json!([{"frame": 1, "ip": 3}]));
    // A program without a source (an image) keeps the L<ip> names.
    let bin = p.with_extension("bin");
    let o = common::gpu16(&["asm", s(&p), "-o", s(&bin)]);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    let (out, _) = debug(&bin, &[], "disasm 1\n");
    assert!(out.contains("L1:   sub r1, r2, r1"), "{out}");
    assert!(out.contains("bnz L1, r1"), "{out}");
}

#[test]
fn tab_completion_offers_commands_subjects_labels_files_and_paths() {
    use gpu16::debugger::complete::Completer;
    let a = gpu16_asm::assemble(LABELS, "dir/labels.s").unwrap();
    let c = Completer::new(Some(&a.source_map));
    let words = |line: &str| c.complete(line, line.len());
    assert_eq!(
        words("rev"),
        (
            0,
            vec![
                "reverse-continue".into(),
                "reverse-finish".into(),
                "reverse-step".into(),
                "reverse-stepi".into()
            ]
        )
    );
    assert_eq!(words("wh"), (0, vec!["when".into(), "where".into()]));
    assert_eq!(words("info c"), (5, vec!["cores".into()]));
    assert_eq!(words("i  b"), (3, vec!["breakpoints".into()]));
    assert_eq!(words("break 1:a"), (6, vec!["1:again".into()]));
    assert_eq!(words("b 1:"), (2, vec!["1:again".into(), "1:done".into()]));
    // Source files by their name as given and by their last component; `cycle`.
    assert_eq!(
        words("break "),
        (
            6,
            vec![
                "1:again".into(),
                "1:done".into(),
                "cycle".into(),
                "dir/labels.s:".into(),
                "labels.s:".into()
            ]
        )
    );
    assert_eq!(words("break lab"), (6, vec!["labels.s:".into()]));
    assert_eq!(words("break 1:again c"), (14, vec!["core".into()]));
    assert_eq!(words("break cycle "), (12, vec![]));
    // The cursor in the middle of the line: the word before it.
    assert_eq!(c.complete("inf cores", 3), (0, vec!["info".into()]));
    // An image has no labels; a word of no command gets nothing; a cut UTF-8 character is
    // no panic.
    let none = Completer::new(None);
    assert_eq!(none.complete("break 1:", 8), (6, vec![]));
    assert_eq!(c.complete("zzz", 3), (0, vec![]));
    assert_eq!(c.complete("é", 1).0, 0);
    // File names after `source`, a directory with a slash.
    let dir = scratch("debugger", "completion");
    std::fs::create_dir_all(dir.join("cmds.d")).unwrap();
    std::fs::write(dir.join("cmds.gdb"), "step\n").unwrap();
    let prefix = format!("{}/cmd", dir.display());
    let (start, found) = c.complete(&format!("source {prefix}"), 7 + prefix.len());
    assert_eq!(start, 7);
    assert_eq!(
        found,
        vec![
            format!("{}/cmds.d/", dir.display()),
            format!("{}/cmds.gdb", dir.display())
        ]
    );
}

#[test]
fn source_and_x_run_a_files_commands_with_errors_at_file_and_line() {
    let p = write("source", "add.s", ADD);
    let dir = p.parent().unwrap().to_path_buf();
    let cmds = dir.join("cmds.gdb");
    std::fs::write(
        &cmds,
        "# a comment\nbreak add.s:5\n\ncontinue\nfrobnicate\nprint r8\n",
    )
    .unwrap();
    // -x FILE before stdin, as if typed; a blank line in the file repeats nothing.
    let (out, status) = debug(&p, &["-x", s(&cmds)], "print r9\n");
    assert_eq!(status, 0, "{out}");
    let file = cmds.display();
    assert_eq!(
        out,
        format!(
            "breakpoint 1 at frame 1, IP 2 ({}:5:5)\n\
             stopped at cycle 7 before core 0 runs frame 1 IP 2 (breakpoint 1, {}:5:5)\n\
             error: {file}:5: unknown command \"frobnicate\"; try help\n\
             r8 = 2 (0x2)\n\
             r9 = 3 (0x3)\n",
            p.display(),
            p.display()
        )
    );
    // `source` with JSON: one object holding the answers.
    let a = answers(&p, &[], &format!("source {file}\nwhere\n"));
    assert_eq!(a.len(), 2);
    assert_eq!(a[0]["source"], json!(file.to_string()));
    let replies = a[0]["replies"].as_array().unwrap();
    assert_eq!(replies.len(), 4);
    assert_eq!(replies[1]["event"], "break");
    assert_eq!(
        replies[2]["error"],
        json!(format!(
            "{file}:5: unknown command \"frobnicate\"; try help"
        ))
    );
    assert_eq!(replies[3]["value"], 2);
    assert_eq!(a[1]["cycle"], 7);
    // A missing file is an error and the session goes on.
    let a = answers(&p, &[], "source /nonexistent/x.gdb\nstep\n");
    assert!(a[0]["error"]
        .as_str()
        .unwrap()
        .starts_with("source /nonexistent/x.gdb: "));
    assert_eq!(a[1]["cycle"], 1);
    // `quit` in a file ends the session.
    let quits = dir.join("quits.gdb");
    std::fs::write(&quits, "step\nquit\nstep\n").unwrap();
    let (out, status) = debug(&p, &["-x", s(&quits)], "step\n");
    assert_eq!((out.as_str(), status), ("stopped at cycle 1\n", 0));
}

#[test]
fn a_file_that_sources_itself_stops_at_the_depth_limit() {
    let p = counter();
    let dir = scratch("debugger", "source_loop");
    let me = dir.join("me.gdb");
    std::fs::write(&me, format!("step\nsource {}\n", me.display())).unwrap();
    let (out, status) = debug(&p, &["-x", s(&me)], "step\n");
    assert_eq!(status, 0);
    // 16 files deep, a step each; the 17th is refused, naming the line that asked; the
    // session goes on.
    assert_eq!(out.matches("stopped at cycle").count(), 17, "{out}");
    assert!(out.contains("stopped at cycle 16\n"), "{out}");
    assert!(
        out.contains(&format!(
            "\nerror: {0}:2: source {0}: files nest more than 16 deep",
            me.display()
        )),
        "{out}"
    );
    assert!(out.ends_with("stopped at cycle 17\n"), "{out}");
    // Each level sourcing itself twice would run 2^16 files: the lines in all are bounded.
    let twice = dir.join("twice.gdb");
    std::fs::write(&twice, format!("source {0}\nsource {0}\n", twice.display())).unwrap();
    let started = std::time::Instant::now();
    let (out, status) = debug(&p, &["-x", s(&twice)], "step\n");
    assert_eq!(status, 0);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(out.matches("sourced lines in all").count(), 1);
    assert!(
        out.ends_with("stopped at cycle 1\n"),
        "{}",
        &out[out.len().saturating_sub(500)..]
    );
    // A file over 1 MiB, or with a NUL byte, is no command file.
    let big = dir.join("big.gdb");
    std::fs::write(&big, "step\n".repeat(300_000)).unwrap();
    let nul = dir.join("nul.gdb");
    std::fs::write(&nul, b"step\0\n").unwrap();
    let a = answers(
        &p,
        &[],
        &format!("source {}\nsource {}\n", big.display(), nul.display()),
    );
    assert!(
        a[0]["error"]
            .as_str()
            .unwrap()
            .contains("larger than 1 MiB"),
        "{}",
        a[0]
    );
    assert!(
        a[1]["error"].as_str().unwrap().contains("NUL byte"),
        "{}",
        a[1]
    );
}

#[test]
fn set_changes_a_byte_at_cycle_0_and_says_why_not_elsewhere() {
    let p = write("set", "add.s", ADD);
    let a = answers(
        &p,
        &[],
        "set [0x11] = 0x2a\nx/2 0x10\nset r3 = 1\nstep 10\nset [0x11] = 1\nrun\nmem 0x11 1\n\
         set [0x11] = 256\nset 0x11 = 1\n",
    );
    assert_eq!(a[0], json!({"set": 17, "value": 42}));
    assert_eq!(a[1], json!({"addr": 16, "bytes": "002a"}));
    assert!(a[2]["error"]
        .as_str()
        .unwrap()
        .contains("core 0 r3 cannot be set"));
    // The run starts with the byte set: the store at 0x010 leaves 0x011 alone.
    assert_eq!(a[3]["cycle"], 10);
    assert!(a[4]["error"].as_str().unwrap().contains("only at cycle 0"));
    assert_eq!(a[6], json!({"addr": 17, "bytes": "2a"}));
    assert!(a[7]["error"].as_str().unwrap().contains("out of range"));
    assert!(a[8]["error"].as_str().unwrap().starts_with("set wants"));
}

/// examples/mcst_bank0.s under `--timing mcst-rtl`, worked by hand: the CF in cycle 0, the
/// IF broadcast from cycle 1, every core's first slot (set_const) in cycle 1 + 7 = 8, the
/// 16 stores to bank 0 from cycle 9, granted one a cycle in round-robin order from core 1
/// (core 1 in cycle 9, core 2 in 10, core 3 in 11, ... core 0 last, in 24); a core's ready
/// follows its grant. When cycle 12 begins: cores 1 and 2 are idle, core 3 is at its ready,
/// and cores 4..15 and 0 wait for bank 0's grant, their turn.
#[test]
fn mcst_cores_say_what_they_wait_for() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mcst_bank0.s");
    let flags = ["--dialect", "mcst", "--timing", "mcst-rtl"];
    let a = answers(&p, &flags, "step 9\nwhere\nstep 3\nwhere\nregs 5\n");
    // Cycle 9: the stores start; none has asked for its bank before this cycle.
    let cores = a[1]["cores"].as_array().unwrap();
    assert_eq!(cores.len(), 16);
    assert!(cores
        .iter()
        .all(|c| c["state"] == "running" && c["ip"] == 1));
    let cores = a[3]["cores"].as_array().unwrap();
    let listed: Vec<u64> = cores.iter().map(|c| c["core"].as_u64().unwrap()).collect();
    assert_eq!(listed, [0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    assert_eq!(
        pick(&cores[1], &["core", "ip", "state"]),
        json!({"core": 3, "ip": 2, "state": "running"})
    );
    for c in cores.iter().filter(|c| c["core"] != 3) {
        assert_eq!(
            pick(c, &["ip", "state", "bank", "waits_for"]),
            json!({"ip": 1, "state": "bank_conflict", "bank": 0, "waits_for": "round_robin"}),
            "{c}"
        );
    }
    assert_eq!(a[4]["waits_for"], "round_robin");
    let (out, _) = debug(&p, &flags, "step 12\nwhere\n");
    assert!(
        out.contains(
            "\ncore 4: frame 1, IP 1, bank_conflict: waits for bank 0's grant (its round-robin \
             turn) ("
        ),
        "{out}"
    );
    // A load may also wait for a bank switch: the state says both.
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("st [r8, r0], r8", "ld [r8, r0], r9");
    let ld = write("mcst_ld", "mcst_ld.s", &text);
    let a = answers(&ld, &flags, "step 12\nregs 5\n");
    assert_eq!(
        pick(&a[1], &["state", "bank", "waits_for"]),
        json!({"state": "bank_conflict", "bank": 0, "waits_for": "round_robin_or_bank_switch"})
    );
    // The spec's dialect keeps its states as they were.
    let a = answers(&counter(), &[], "step 20\nwhere\n");
    assert!(a[1]["cores"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c.get("waits_for").is_none()));
}

/// At a terminal (a pseudo-terminal made by util-linux's `script`), a command that runs
/// for over a second shows its climbing cycle on stderr until Ctrl-C stops it; the session
/// then stays where it was.
#[test]
fn a_long_command_shows_its_progress_at_a_terminal() {
    let script = Path::new("/usr/bin/script");
    if !script.is_file() {
        eprintln!("SKIPPED: no /usr/bin/script to make a terminal with");
        return;
    }
    let program = write("progress", "busy.s", common::BUSY);
    let command = format!(
        "{} debug --no-history --max-cycles 100000000000 {}",
        env!("CARGO_BIN_EXE_gpu16"),
        s(&program)
    );
    /// Ends the terminal (and with its hang-up the session) if the test fails first.
    struct Ended(std::process::Child);
    impl Drop for Ended {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Ended(
        Command::new(script)
            .args(["-qfc", &command, "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut stdin = child.0.stdin.take().unwrap();
    let mut stdout = child.0.stdout.take().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let theirs = seen.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buf) {
            theirs
                .lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let started = std::time::Instant::now();
    let wait_for = |what: &str, count: usize| loop {
        if seen.lock().unwrap().matches(what).count() >= count {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "waited in vain for {what}: {}",
            seen.lock().unwrap()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // The line editor reads a line at a time: type each at its prompt, as a person would.
    wait_for("(gpu16) ", 1);
    stdin.write_all(b"watch 4000\n").unwrap();
    wait_for("(gpu16) ", 2);
    stdin.write_all(b"continue\n").unwrap();
    wait_for("continue: cycle ", 1);
    stdin.write_all(b"\x03").unwrap();
    wait_for("(gpu16) ", 3);
    stdin.write_all(b"quit\n").unwrap();
    drop(stdin);
    child.0.wait().unwrap();
    reader.join().unwrap();
    let text = seen.lock().unwrap().clone();
    assert!(text.contains(" M instr/s"), "{text}");
    assert!(
        text.contains("interrupted; the session stays at cycle 0"),
        "{text}"
    );
}

/// Breakpoints in compiled code: each engine's forms hand a core coming to a breakpoint to
/// the interpreter, so they stop where the interpreter stops. Hand-worked: IP 0 executes
/// in cycle 5 and IP 1 in 6; iteration k of the loop runs `sub` (IP 2) in cycle 7 + 2k and
/// `bnz` (IP 3) in 8 + 2k; after 100 iterations `ready` (IP 4) executes in cycle 207.
#[test]
fn breakpoints_in_compiled_code_stop_where_the_interpreter_does() {
    for mask in ["0x0001", "0xffff"] {
        let source = format!(
            ".cf mask={mask}\n.if\n    set_const 1, r8\n    set_const 100, r11\ninner:\n    \
             sub r11, r8, r11\n    bnz inner, r11\n    ready\n"
        );
        let p = write("compiled_breaks", "loop.s", &source);
        for args in [
            &["--backend", "interp"][..],
            &["--backend", "jit", "--jit-engine", "percore"],
            &["--backend", "jit", "--jit-engine", "lockstep"],
            &["--backend", "jit", "--jit-engine", "adaptive"],
            &["--backend", "auto", "--auto-hot", "1,1"],
        ] {
            let a = answers(
                &p,
                args,
                "break 1:4\ncontinue\nregs 0\ndelete\nbreak 1:2\nrun\ncontinue\ncontinue\n\
                 continue\nregs 0\n",
            );
            let at = |i: usize| (a[i]["event"].clone(), a[i]["cycle"].clone());
            assert_eq!(
                at(1),
                (json!("break"), json!(207)),
                "{mask} {args:?}: {a:?}"
            );
            assert_eq!(a[1]["core"], 0, "{mask} {args:?}");
            // Before `ready` the loop has counted r11 down to 0.
            assert_eq!(a[2]["registers"][11], 0, "{mask} {args:?}");
            assert_eq!(a[2]["ip"], 4, "{mask} {args:?}");
            for (i, cycle) in [(6, 7), (7, 9), (8, 11)] {
                assert_eq!(
                    at(i),
                    (json!("break"), json!(cycle)),
                    "{mask} {args:?}: {a:?}"
                );
            }
            // Two iterations done before the third `sub`.
            assert_eq!(a[9]["registers"][11], 98, "{mask} {args:?}");
        }
    }
}

/// Control characters in file names reach no terminal raw (issue 33): the text of `where`,
/// `disasm` and a `source` error escapes them as `run` does (`\x1b`), JSON keeps the name
/// as it is. `examples/counter.s` at cycle 10: core 0 took the lock in cycle 9 (IP 4, line
/// 14), so it stands at IP 5, the `add` of line 15, column 5; frame 1's IP 0 is line 9.
#[cfg(unix)]
#[test]
fn control_characters_in_file_names_are_escaped_in_the_text() {
    let d = scratch("debugger", "escaped_names");
    let p = d.join("x\x1b[31my.s");
    std::fs::copy(counter(), &p).unwrap();
    let missing = d.join("x\x1b[31my.txt");
    let escaped = |p: &Path| s(p).replace('\x1b', "\\x1b");
    let script = format!(
        "break cycle 10\ncontinue\nwhere\ndisasm 1\nsource {}\n",
        s(&missing)
    );
    let (out, status) = debug(&p, &[], &script);
    assert_eq!(status, 0);
    assert!(!out.contains('\x1b'), "{out}");
    let name = escaped(&p);
    assert!(
        out.contains(&format!("core 0: frame 1, IP 5, running ({name}:15:5)\n")),
        "{out}"
    );
    assert!(
        out.contains(&format!("xor r1, r1, r1    ; {name}:9\n")),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "error: source {}: No such file or directory (os error 2)\n",
            escaped(&missing)
        )),
        "{out}"
    );
    let a = answers(&p, &[], "break cycle 10\ncontinue\nwhere\n");
    assert_eq!(a[2]["cores"][0]["location"]["file"], s(&p));
}
