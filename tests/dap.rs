//! `gpu16 dap` through the binary: a client sends framed DAP requests and every message
//! the server sends back is checked, in order. The cycles are worked out by hand from the
//! timing model (as in `tests/debugger.rs`): a control frame takes cycle 0, the instruction
//! frame is broadcast in cycles 1-4, the cores start in cycle 5 and execute one instruction
//! a cycle.

mod common;

use common::{s, scratch};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// Core 0 adds 2 and 3 and stores the sum at 0x010: IP k (line k + 3) executes in cycle
/// 5 + k; the run takes 11 cycles.
const ADD: &str = "\
.cf mask=0x0001
.if
    set_const 2, r8      ; IP 0, cycle 5, line 3
    set_const 3, r9      ; IP 1, cycle 6, line 4
    add r8, r9, r3       ; IP 2, cycle 7, line 5
    set_const 0x10, r10  ; IP 3, cycle 8, line 6
    st [r10, r1], r3     ; IP 4, cycle 9, line 7
    ready                ; IP 5, cycle 10, line 8
";

/// Core 0 stores with `st_sync` without an `ld_sync`: a fault at IP 1 (line 4), cycle 6.
const FAULT: &str = "\
.cf mask=0x0001
.if
    set_const 1, r8
    st_sync [r8, r1], r8
    ready
";

/// The program `text` written as `name` in a fresh directory, by its canonical path (the
/// path the server names sources by).
fn write(test: &str, name: &str, text: &str) -> PathBuf {
    let p = scratch("dap", test).join(name);
    std::fs::write(&p, text).unwrap();
    p.canonicalize().unwrap()
}

/// A `gpu16 dap` child and the messages it sent.
struct Dap {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    /// The last request's seq.
    seq: i64,
    /// The last seq the server sent.
    server_seq: i64,
}

/// The framed form of a message.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut m = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    m.extend_from_slice(body);
    m
}

impl Dap {
    fn start() -> Dap {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .arg("dap")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut out = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let mut buf = [0; 4096];
            loop {
                // Parse every whole message in `bytes`, then read more.
                while let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                    let header = std::str::from_utf8(&bytes[..end]).unwrap().to_string();
                    let n: usize = header
                        .strip_prefix("Content-Length: ")
                        .unwrap_or_else(|| panic!("bad header {header:?}"))
                        .parse()
                        .unwrap();
                    if bytes.len() < end + 4 + n {
                        break;
                    }
                    let v: Value = serde_json::from_slice(&bytes[end + 4..end + 4 + n]).unwrap();
                    bytes.drain(..end + 4 + n);
                    if tx.send(v).is_err() {
                        return;
                    }
                }
                match out.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        assert!(bytes.is_empty(), "output ends mid-message: {bytes:?}");
                        return;
                    }
                    Ok(n) => bytes.extend_from_slice(&buf[..n]),
                }
            }
        });
        Dap {
            stdin: child.stdin.take(),
            child,
            messages: rx,
            seq: 0,
            server_seq: 0,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let _ = self.stdin.as_mut().unwrap().write_all(bytes);
        let _ = self.stdin.as_mut().unwrap().flush();
    }

    fn request(&mut self, command: &str, args: Value) -> i64 {
        self.seq += 1;
        let m = json!({"seq": self.seq, "type": "request", "command": command,
                       "arguments": args});
        self.send_raw(&frame(m.to_string().as_bytes()));
        self.seq
    }

    /// The next message; its seq is the one after the last.
    fn next(&mut self) -> Value {
        let v = self
            .messages
            .recv_timeout(Duration::from_secs(60))
            .expect("a message within a minute");
        self.server_seq += 1;
        assert_eq!(v["seq"], self.server_seq, "{v}");
        v
    }

    /// The response to `command`: a success, its body.
    fn ok(&mut self, command: &str, args: Value) -> Value {
        let seq = self.request(command, args);
        let r = self.next();
        assert_eq!(
            (&r["type"], &r["request_seq"], &r["command"], &r["success"]),
            (
                &json!("response"),
                &json!(seq),
                &json!(command),
                &json!(true)
            ),
            "{r}"
        );
        r["body"].clone()
    }

    /// The response to `command`: a failure, its message.
    fn fails(&mut self, command: &str, args: Value) -> String {
        let seq = self.request(command, args);
        self.failure(seq, command)
    }

    fn failure(&mut self, seq: i64, command: &str) -> String {
        let r = self.next();
        assert_eq!(
            (&r["type"], &r["request_seq"], &r["command"], &r["success"]),
            (
                &json!("response"),
                &json!(seq),
                &json!(command),
                &json!(false)
            ),
            "{r}"
        );
        r["message"].as_str().unwrap().to_string()
    }

    /// The next message is event `name`: its body.
    fn event(&mut self, name: &str) -> Value {
        let v = self.next();
        assert_eq!(
            (&v["type"], &v["event"]),
            (&json!("event"), &json!(name)),
            "{v}"
        );
        v["body"].clone()
    }

    /// The next two messages are a console line and a `stopped` event: the line and the
    /// stopped body.
    fn stop(&mut self) -> (String, Value) {
        let out = self.event("output");
        assert_eq!(out["category"], "console");
        (
            out["output"].as_str().unwrap().to_string(),
            self.event("stopped"),
        )
    }

    /// `initialize`, then `launch` with `args`, checked.
    fn launch(&mut self, args: Value) {
        let caps = self.ok(
            "initialize",
            json!({"adapterID": "gpu16", "linesStartAt1": true}),
        );
        for yes in [
            "supportsConfigurationDoneRequest",
            "supportsStepBack",
            "supportsDataBreakpoints",
            "supportsRestartRequest",
            "supportsEvaluateForHovers",
            "supportsExceptionInfoRequest",
        ] {
            assert_eq!(caps[yes], true, "{yes}");
        }
        assert_eq!(caps["supportsConditionalBreakpoints"], true);
        assert_eq!(self.ok("launch", args), json!({}));
        assert_eq!(self.event("initialized"), json!({}));
    }

    /// Disconnect: the response, then the process ends with status 0, nothing more said
    /// and nothing on stderr.
    fn disconnect(mut self) {
        self.ok("disconnect", json!({}));
        let (status, stderr) = self.end();
        assert_eq!(status, 0, "{stderr}");
        assert_eq!(stderr, "");
    }

    /// Close stdin and wait: the status and stderr; no message is left unread.
    fn end(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap().code().unwrap_or(-1);
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        if let Ok(v) = self.messages.recv_timeout(Duration::from_secs(10)) {
            panic!("a message nobody expected: {v}");
        }
        (status, stderr)
    }
}

/// `variables` of `reference` as (name, value) pairs.
fn variables(dap: &mut Dap, reference: i64) -> Vec<(String, String)> {
    let body = dap.ok("variables", json!({"variablesReference": reference}));
    body["variables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The value of variable `name` in `vars`.
fn value<'a>(vars: &'a [(String, String)], name: &str) -> &'a str {
    &vars.iter().find(|(n, _)| n == name).unwrap().1
}

/// Core `core`'s one stack frame.
fn frame_of(dap: &mut Dap, core: i64) -> Value {
    let body = dap.ok("stackTrace", json!({"threadId": core + 1}));
    assert_eq!(body["totalFrames"], 1);
    assert_eq!(body["stackFrames"].as_array().unwrap().len(), 1);
    body["stackFrames"][0].clone()
}

#[test]
fn a_line_breakpoint_stops_at_its_line_and_thread_and_steps_go_back_and_forth() {
    let p = write("session", "add.s", ADD);
    let path = s(&p).to_string();
    let mut dap = Dap::start();
    dap.launch(json!({"program": path, "backend": "interp"}));
    // Line 5 holds the add (IP 2); line 2 is `.if`, no instruction.
    let bps = dap.ok(
        "setBreakpoints",
        json!({"source": {"path": path}, "breakpoints": [{"line": 5}, {"line": 2}]}),
    );
    assert_eq!(
        bps["breakpoints"],
        json!([
            {"id": 1, "verified": true, "line": 5, "source": {"name": "add.s", "path": path}},
            {"verified": false, "line": 2,
             "message": format!("no instruction is on line 2 of {path}")},
        ])
    );
    assert_eq!(dap.ok("configurationDone", json!({})), json!({}));
    // The add executes in cycle 7: the stop is before it, on core 0's thread.
    let text = format!("cycle 7: breakpoint 1, core 0 at {path}:5");
    let (line, stopped) = dap.stop();
    assert_eq!(line, format!("{text}\n"));
    assert_eq!(
        stopped,
        json!({"reason": "breakpoint", "threadId": 1, "allThreadsStopped": true,
               "hitBreakpointIds": [1], "description": text, "text": text})
    );
    let threads = dap.ok("threads", json!({}));
    let threads = threads["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 16);
    assert_eq!(threads[0], json!({"id": 1, "name": "core 0"}));
    assert_eq!(threads[15], json!({"id": 16, "name": "core 15"}));
    assert_eq!(
        frame_of(&mut dap, 0),
        json!({"id": 1, "name": "core 0: frame 1 IP 2 (running)", "line": 5, "column": 5,
               "instructionPointerReference": "1:2",
               "source": {"name": "add.s", "path": path}})
    );
    // Core 1 has no task: a frame without a source.
    assert_eq!(
        frame_of(&mut dap, 1),
        json!({"id": 2, "name": "core 1 (idle)", "line": 0, "column": 0})
    );
    let scopes = dap.ok("scopes", json!({"frameId": 1}));
    let names: Vec<&str> = scopes["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Registers (core 0)", "Locks", "Tasks", "Memory"]);
    let registers = scopes["scopes"][0]["variablesReference"].as_i64().unwrap();
    // Before cycle 7 the two set_consts ran, the add did not.
    let regs = variables(&mut dap, registers);
    assert_eq!(regs.len(), 19);
    assert_eq!(value(&regs, "r8"), "2 (0x02)");
    assert_eq!(value(&regs, "r9"), "3 (0x03)");
    assert_eq!(value(&regs, "r3"), "0 (0x00)");
    assert_eq!(
        &regs[16..],
        [
            ("state".into(), "running".into()),
            ("frame".into(), "1".into()),
            ("ip".into(), "2".into())
        ]
    );
    assert!(variables(&mut dap, 17).is_empty(), "no locks");
    let tasks = variables(&mut dap, 18);
    assert_eq!(
        tasks,
        [(
            "task 0".into(),
            "end=null fence=no frame=1 issue=1 mask=1 start=5".into()
        )]
    );

    // next: one cycle; the add ran in cycle 7.
    assert_eq!(dap.ok("next", json!({"threadId": 1})), json!({}));
    let (line, stopped) = dap.stop();
    assert_eq!(line, "cycle 8\n");
    assert_eq!(
        stopped,
        json!({"reason": "step", "threadId": 1, "allThreadsStopped": true})
    );
    assert_eq!(value(&variables(&mut dap, registers), "r3"), "5 (0x05)");
    // stepIn: core 0's next instruction, IP 3 (line 6) in cycle 8; after it, cycle 9.
    dap.ok("stepIn", json!({"threadId": 1}));
    let (line, stopped) = dap.stop();
    assert_eq!(line, format!("cycle 9, core 0 at {path}:6\n"));
    assert_eq!(stopped["reason"], "step");
    assert_eq!(frame_of(&mut dap, 0)["line"], 7);
    // stepBack: one cycle back each, to 8 (IP 3, line 6) and 7 (IP 2, line 5).
    dap.ok("stepBack", json!({"threadId": 1}));
    assert_eq!(dap.stop().0, "cycle 8 (back)\n");
    assert_eq!(frame_of(&mut dap, 0)["line"], 6);
    dap.ok("stepBack", json!({"threadId": 1}));
    assert_eq!(dap.stop().0, "cycle 7 (back)\n");
    assert_eq!(frame_of(&mut dap, 0)["line"], 5);
    assert_eq!(value(&variables(&mut dap, registers), "r3"), "0 (0x00)");
    // By instruction: to when core 0's last instruction (IP 1, line 4, cycle 6) began.
    dap.ok(
        "stepBack",
        json!({"threadId": 1, "granularity": "instruction"}),
    );
    let (line, stopped) = dap.stop();
    assert_eq!(line, format!("cycle 6, core 0 at {path}:4 (back)\n"));
    assert_eq!(stopped["reason"], "step");
    let regs = variables(&mut dap, registers);
    assert_eq!(value(&regs, "r8"), "2 (0x02)");
    assert_eq!(value(&regs, "r9"), "0 (0x00)");

    // Forward again to the breakpoint, then to the end of the run.
    dap.ok("continue", json!({"threadId": 1}));
    assert_eq!(dap.stop().0, format!("{text}\n"));
    // restart: back to cycle 0 and on to the breakpoint again.
    dap.ok("restart", json!({}));
    assert_eq!(dap.stop().0, format!("{text}\n"));
    assert_eq!(
        dap.ok("continue", json!({"threadId": 1})),
        json!({"allThreadsContinued": true})
    );
    assert_eq!(
        dap.event("output")["output"],
        "the program ended after 11 cycles\n"
    );
    assert_eq!(dap.event("exited"), json!({"exitCode": 0}));
    assert_eq!(dap.event("terminated"), json!({}));
    dap.disconnect();
}

#[test]
fn a_data_breakpoint_stops_after_the_write_and_evaluate_reads_the_machine() {
    let p = write("data", "add.s", ADD);
    let path = s(&p).to_string();
    let mut dap = Dap::start();
    dap.launch(json!({"program": path}));
    assert_eq!(
        dap.ok(
            "dataBreakpointInfo",
            json!({"variablesReference": 32, "name": "0x010"})
        ),
        json!({"dataId": "0x010", "description": "writes of byte 0x010",
               "accessTypes": ["write"], "canPersist": true})
    );
    assert_eq!(
        dap.ok(
            "dataBreakpointInfo",
            json!({"variablesReference": 1, "name": "r3"})
        )["dataId"],
        Value::Null
    );
    assert_eq!(
        dap.ok(
            "setDataBreakpoints",
            json!({"breakpoints": [{"dataId": "0x010", "accessType": "write"},
                                   {"dataId": "0x1000"}]})
        ),
        json!({"breakpoints": [
            {"id": 1, "verified": true},
            {"verified": false,
             "message": "a data breakpoint is a byte of shared memory, 0x000..0xfff"}]})
    );
    dap.ok("configurationDone", json!({}));
    // The store (IP 4, line 7) writes 0 -> 5 in cycle 9.
    let text = format!("cycle 9: byte 0x010 0x00 -> 0x05, core 0 at {path}:7");
    let (line, stopped) = dap.stop();
    assert_eq!(line, format!("{text}\n"));
    assert_eq!(
        stopped,
        json!({"reason": "data breakpoint", "threadId": 1, "allThreadsStopped": true,
               "hitBreakpointIds": [1], "description": text, "text": text})
    );
    // The state when cycle 10 begins: the byte written.
    assert_eq!(
        dap.ok(
            "evaluate",
            json!({"expression": "mem 0x10 2", "context": "repl"})
        ),
        json!({"result": "05 00", "variablesReference": 0})
    );
    assert_eq!(
        dap.ok(
            "evaluate",
            json!({"expression": "r3", "frameId": 1, "context": "hover"})
        ),
        json!({"result": "5 (0x05)", "variablesReference": 0})
    );
    let msg = dap.fails(
        "evaluate",
        json!({"expression": "continue", "context": "hover"}),
    );
    assert_eq!(msg, "`continue` is not a register, memory or view");
    let where_ = dap.ok(
        "evaluate",
        json!({"expression": "where", "context": "repl"}),
    );
    let where_: Value = serde_json::from_str(where_["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        (&where_["cycle"], &where_["status"]),
        (&json!(10), &json!("paused"))
    );
    let msg = dap.fails("evaluate", json!({"expression": "frobnicate"}));
    assert!(msg.contains("frobnicate"), "{msg}");
    let banks = variables(&mut dap, 19);
    assert_eq!(banks.len(), 16);
    assert_eq!(banks[1], ("bank 1".into(), "0x100..0x1ff".into()));
    let bank0 = variables(&mut dap, 32);
    assert_eq!(bank0.len(), 256);
    assert_eq!(bank0[16], ("0x010".into(), "5 (0x05)".into()));
    assert_eq!(bank0[17], ("0x011".into(), "0 (0x00)".into()));

    // No stop before the first one; with a breakpoint on the add (cycle 7), there is.
    let msg = dap.fails("reverseContinue", json!({"threadId": 1}));
    assert_eq!(msg, "no stop before here; nothing was run");
    dap.ok(
        "setBreakpoints",
        json!({"source": {"path": path}, "breakpoints": [{"line": 5}]}),
    );
    dap.ok("reverseContinue", json!({"threadId": 1}));
    let (line, stopped) = dap.stop();
    assert_eq!(
        line,
        format!("cycle 7: breakpoint 2, core 0 at {path}:5 (back)\n")
    );
    assert_eq!(stopped["reason"], "breakpoint");
    assert_eq!(stopped["hitBreakpointIds"], json!([2]));
    // Without the watch, the run goes on to its end.
    assert_eq!(
        dap.ok("setDataBreakpoints", json!({"breakpoints": []})),
        json!({"breakpoints": []})
    );
    dap.ok("continue", json!({"threadId": 1}));
    assert_eq!(
        dap.event("output")["output"],
        "the program ended after 11 cycles\n"
    );
    assert_eq!(dap.event("exited"), json!({"exitCode": 0}));
    assert_eq!(dap.event("terminated"), json!({}));
    dap.disconnect();
}

#[test]
fn a_fault_is_an_exception_then_the_run_exits() {
    let p = write("fault", "fault.s", FAULT);
    let path = s(&p).to_string();
    let mut dap = Dap::start();
    dap.launch(json!({"program": path, "stopOnEntry": true, "backend": "jit"}));
    dap.ok("configurationDone", json!({}));
    assert_eq!(
        dap.event("stopped"),
        json!({"reason": "entry", "threadId": 1, "allThreadsStopped": true})
    );
    // Before cycle 0 no task has started.
    assert_eq!(frame_of(&mut dap, 0)["name"], "core 0 (idle)");
    dap.ok("continue", json!({"threadId": 1}));
    let message = "frame 1, core 0, IP 1, cycle 6: st_sync with no open atomic sequence \
                   (no ld_sync before it) [access to 0x001]";
    let (line, stopped) = dap.stop();
    assert_eq!(line, format!("fault: {message}\n"));
    assert_eq!(
        stopped,
        json!({"reason": "exception", "threadId": 1, "allThreadsStopped": true,
               "description": message, "text": message})
    );
    assert_eq!(
        dap.ok("exceptionInfo", json!({"threadId": 1})),
        json!({"exceptionId": "st_sync-without-sequence", "description": message,
               "breakMode": "always",
               "details": {"message": message, "typeName": "st_sync-without-sequence"}})
    );
    // The state when cycle 6 began: the st_sync at line 4 is next, r8 set.
    let frame = frame_of(&mut dap, 0);
    assert_eq!(
        (&frame["name"], &frame["line"]),
        (&json!("core 0: frame 1 IP 1 (faulted)"), &json!(4))
    );
    assert_eq!(value(&variables(&mut dap, 1), "r8"), "1 (0x01)");
    // Going on ends the run, as failed.
    dap.ok("continue", json!({"threadId": 1}));
    assert_eq!(dap.event("exited"), json!({"exitCode": 1}));
    assert_eq!(dap.event("terminated"), json!({}));
    dap.disconnect();
}

#[test]
fn pause_interrupts_a_long_run_and_the_session_stays() {
    let p = write("pause", "busy.s", common::BUSY);
    let mut dap = Dap::start();
    dap.launch(json!({"program": s(&p), "maxCycles": 1u64 << 50}));
    let done = dap.request("configurationDone", json!({}));
    // The run cannot end on its own; give it time to start, then pause it.
    std::thread::sleep(Duration::from_millis(300));
    let pause = dap.request("pause", json!({"threadId": 1}));
    assert_eq!(
        dap.failure(done, "configurationDone"),
        "interrupted; the session stays at cycle 0"
    );
    let r = dap.next();
    assert_eq!(
        (&r["request_seq"], &r["command"], &r["success"]),
        (&json!(pause), &json!("pause"), &json!(true))
    );
    assert_eq!(
        dap.event("stopped"),
        json!({"reason": "pause", "threadId": 1, "allThreadsStopped": true})
    );
    // The session still answers, at cycle 0.
    let where_ = dap.ok("evaluate", json!({"expression": "where"}));
    assert!(where_["result"].as_str().unwrap().contains("\"cycle\":0"));
    dap.disconnect();
}

/// A client that reports progress sees a long `continue`'s: `progressStart` after a second,
/// `progressUpdate`s with the cycle climbing, and `progressEnd` before the response; a
/// `cancel` stops it as `pause` does (a `stopped` event for reason `pause`). A client that does not is sent none (every other test
/// here reads each message in order and would meet them).
#[test]
fn a_long_continue_reports_its_progress_and_cancel_stops_it() {
    let p = write("progress", "busy.s", common::BUSY);
    let mut dap = Dap::start();
    let caps = dap.ok(
        "initialize",
        json!({"adapterID": "gpu16", "linesStartAt1": true, "supportsProgressReporting": true}),
    );
    assert_eq!(caps["supportsCancelRequest"], true);
    assert_eq!(
        dap.ok("launch", json!({"program": s(&p), "maxCycles": 1u64 << 50})),
        json!({})
    );
    assert_eq!(dap.event("initialized"), json!({}));
    let started = std::time::Instant::now();
    let done = dap.request("configurationDone", json!({}));
    let start = dap.event("progressStart");
    assert!(started.elapsed() >= Duration::from_millis(900), "{start}");
    let id = start["progressId"].clone();
    assert_eq!(start["title"], "continue");
    assert_eq!(start["cancellable"], true);
    let cycle_of = |body: &Value| -> u64 {
        let m = body["message"].as_str().unwrap();
        m.strip_prefix("cycle ")
            .and_then(|r| r.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no cycle in {m:?}"))
    };
    let mut last = cycle_of(&start);
    for _ in 0..2 {
        let update = dap.event("progressUpdate");
        assert_eq!(update["progressId"], id);
        let cycle = cycle_of(&update);
        assert!(cycle > last, "{update}");
        last = cycle;
    }
    let cancel = dap.request("cancel", json!({"progressId": id}));
    // Updates may come before the cancel takes; then the end, the response, the stop.
    let end = loop {
        let v = dap.next();
        match v["event"].as_str() {
            Some("progressUpdate") => continue,
            Some("progressEnd") => break v,
            _ => panic!("{v}"),
        }
    };
    assert_eq!(end["body"], json!({"progressId": id}));
    let r = dap.next();
    assert_eq!(
        (&r["request_seq"], &r["success"], &r["message"]),
        (
            &json!(done),
            &json!(false),
            &json!("interrupted; the session stays at cycle 0")
        ),
        "{r}"
    );
    let r = dap.next();
    assert_eq!(
        (&r["request_seq"], &r["command"], &r["success"]),
        (&json!(cancel), &json!("cancel"), &json!(true))
    );
    assert_eq!(
        dap.event("stopped"),
        json!({"reason": "pause", "threadId": 1, "allThreadsStopped": true})
    );
    dap.disconnect();
}

#[test]
fn bad_requests_get_failed_responses_and_the_server_goes_on() {
    let dir = scratch("dap", "bad");
    let mut dap = Dap::start();
    // A body that is not JSON: a failed response to request 0.
    dap.send_raw(&frame(b"{not json"));
    let r = dap.next();
    assert_eq!(
        (&r["type"], &r["request_seq"], &r["success"]),
        (&json!("response"), &json!(0), &json!(false))
    );
    assert!(r["message"]
        .as_str()
        .unwrap()
        .starts_with("a message body is not JSON"));
    // JSON that is not a request.
    dap.send_raw(&frame(br#"{"seq": 7, "type": "event", "event": "x"}"#));
    let r = dap.next();
    assert_eq!(
        (&r["request_seq"], &r["success"]),
        (&json!(7), &json!(false))
    );
    assert_eq!(
        r["message"],
        "not a request: a DAP request has \"type\": \"request\", a \"seq\" and a \"command\""
    );
    dap.ok("initialize", json!({}));
    assert_eq!(
        dap.fails("stackTrace", json!({"threadId": 1})),
        "`stackTrace` needs a launched program"
    );
    assert_eq!(
        dap.fails("launch", json!({})),
        "launch needs `program`: the path of a .s/.asm, .bin/.tm or .hex program"
    );
    let missing = dir.join("missing.s");
    let msg = dap.fails("launch", json!({"program": s(&missing)}));
    assert!(msg.contains("missing.s"), "{msg}");
    let p = write("bad", "add.s", ADD);
    let msg = dap.fails("launch", json!({"program": s(&p), "backend": "fast"}));
    assert!(msg.starts_with("bad launch arguments: "), "{msg}");
    assert!(msg.contains("fast"), "{msg}");
    assert_eq!(
        dap.fails("launch", json!({"program": s(&p), "maxCycles": [1]})),
        "launch argument `maxCycles` must be a string or a number"
    );
    assert_eq!(
        dap.fails("frobnicate", json!({})),
        "`frobnicate` is not supported by gpu16 dap"
    );
    // A good launch after the bad ones; then bad ids.
    dap.ok("launch", json!({"program": s(&p)}));
    dap.event("initialized");
    assert_eq!(
        dap.fails("launch", json!({"program": s(&p)})),
        "a program is already launched: one launch a session"
    );
    assert_eq!(
        dap.fails("stackTrace", json!({"threadId": 17})),
        "no such thread: ids are 1..16"
    );
    assert_eq!(
        dap.fails("variables", json!({"variablesReference": 999})),
        "no variables have reference 999"
    );
    assert_eq!(
        dap.fails("evaluate", json!({"expression": "x".repeat(5000)})),
        "an expression is one line of at most 4096 bytes"
    );
    assert_eq!(
        dap.fails("evaluate", json!({"expression": "quit"})),
        "end the session with the editor's stop button (disconnect)"
    );
    dap.disconnect();
}

/// `gpu16 dap` with `input` on stdin: its status, stdout and stderr.
fn raw(input: &[u8]) -> (i32, String, String) {
    let out = common::gpu16_with_stdin(&["dap"], input.to_vec());
    (
        out.status.code().unwrap_or(-1),
        common::stdout(&out),
        common::stderr(&out),
    )
}

#[test]
fn broken_framing_ends_the_server_with_a_message_and_status_1() {
    let hello = frame(br#"{"seq": 1, "type": "request", "command": "threads"}"#);
    let cases: [(Vec<u8>, &str); 5] = [
        (
            b"Content-Length: 1099511627776\r\n\r\n".to_vec(),
            "Content-Length 1099511627776 is over the limit of 1048576 bytes",
        ),
        (
            b"Content-Length: 100\r\n\r\n{\"seq\": 1}".to_vec(),
            "the input ended inside a message body of 100 bytes",
        ),
        (
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            "`GET / HTTP/1.1` is not a header (NAME: VALUE)",
        ),
        (vec![0; 1 << 16], "a header line is longer than 1024 bytes"),
        (
            b"Content-Type: json\r\n\r\n{}".to_vec(),
            "a message has no Content-Length header",
        ),
    ];
    for (input, why) in cases {
        // A good message first: it is answered before the framing breaks.
        let (status, stdout, stderr) = raw(&[hello.clone(), input].concat());
        assert_eq!(status, 1, "{why}");
        assert_eq!(stderr, format!("error: bad DAP input: {why}\n"));
        assert!(stdout.starts_with("Content-Length: "), "{stdout}");
        assert_eq!(stdout.matches("Content-Length").count(), 1, "{stdout}");
        assert!(stdout.contains("\"command\":\"threads\""), "{stdout}");
    }
    // The end of the input between messages is a clean end.
    let (status, stdout, stderr) = raw(b"");
    assert_eq!((status, stdout.as_str(), stderr.as_str()), (0, "", ""));
}

/// Core 0 counts r8 down from 3: the `sub` (IP 2, line 6) runs in cycles 7, 9, 11 with r8
/// 3, 2, 1 before it.
const COUNTDOWN: &str = "\
.cf mask=1
.if
    set_const 3, r8
    set_const 1, r9
loop:
    sub r8, r9, r8
    bnz loop, r8
    ready
";

#[test]
fn a_conditional_line_breakpoint_stops_where_its_condition_holds() {
    let p = write("conditional", "countdown.s", COUNTDOWN);
    let path = s(&p).to_string();
    let mut dap = Dap::start();
    dap.launch(json!({"program": path, "backend": "interp"}));
    let bps = dap.ok(
        "setBreakpoints",
        json!({"source": {"path": path},
               "breakpoints": [{"line": 6, "condition": "r8 == 1"}, {"line": 7, "condition": "r99"}]}),
    );
    assert_eq!(bps["breakpoints"][0]["verified"], true);
    assert_eq!(bps["breakpoints"][1]["verified"], false);
    assert!(bps["breakpoints"][1]["message"]
        .as_str()
        .unwrap()
        .contains("r99"));
    assert_eq!(dap.ok("configurationDone", json!({})), json!({}));
    // The third `sub`, in cycle 11, is the first to find r8 at 1.
    let (line, stopped) = dap.stop();
    assert!(line.starts_with("cycle 11: breakpoint 1, core 0"), "{line}");
    assert_eq!(stopped["reason"], "breakpoint");
    dap.disconnect();
}

/// ADD's task, then a second task of core 0: core 0's part of the first ends with its
/// `ready` in cycle 10, before the program does.
const TWO: &str = "\
.cf mask=0x0001
.if
    set_const 2, r8
    set_const 3, r9
    add r8, r9, r3
    set_const 0x10, r10
    st [r10, r1], r3
    ready
.cf mask=0x0001
.if
    set_const 1, r1
    ready
";

#[test]
fn step_out_set_variable_and_source_requests() {
    let p = write("step_out", "two.s", TWO);
    let path = s(&p).to_string();
    let mut dap = Dap::start();
    let caps = dap.ok("initialize", json!({"adapterID": "gpu16"}));
    assert_eq!(caps["supportsSetVariable"], true);
    dap.ok(
        "launch",
        json!({"program": path, "backend": "interp", "stopOnEntry": true}),
    );
    dap.event("initialized");
    dap.ok("configurationDone", json!({}));
    assert_eq!(dap.event("stopped")["reason"], "entry");
    // The source text is served for the program's own files, and no other.
    let body = dap.ok("source", json!({"source": {"path": path}}));
    assert_eq!(body["content"], TWO);
    let other = p.with_file_name("other.s");
    std::fs::write(&other, "secret").unwrap();
    let message = dap.fails("source", json!({"source": {"path": s(&other)}}));
    assert!(
        message.contains("is not a source file of the program"),
        "{message}"
    );
    assert!(dap
        .fails("source", json!({"sourceReference": 7}))
        .contains("source.path"));
    // At cycle 0 a byte of memory can be set: the run starts with it.
    let bank0 = 32;
    let set = dap.ok(
        "setVariable",
        json!({"variablesReference": bank0, "name": "0x010", "value": "0x2a"}),
    );
    assert_eq!(set, json!({"value": "42 (0x2a)", "variablesReference": 0}));
    assert_eq!(value(&variables(&mut dap, bank0), "0x010"), "42 (0x2a)");
    assert!(dap
        .fails(
            "setVariable",
            json!({"variablesReference": bank0 + 1, "name": "0x010", "value": "1"}),
        )
        .contains("not in this bank"));
    assert!(dap
        .fails(
            "setVariable",
            json!({"variablesReference": bank0, "name": "0x010", "value": "256"}),
        )
        .contains("out of range"));
    // Registers cannot be set: the failure says why.
    let message = dap.fails(
        "setVariable",
        json!({"variablesReference": 1, "name": "r3", "value": "1"}),
    );
    assert!(message.contains("core 0 r3 cannot be set"), "{message}");
    // Stop at the add (cycle 7), then step out: core 0's part ends with its ready in
    // cycle 10, so the stop is when cycle 11 begins.
    dap.ok(
        "setBreakpoints",
        json!({"source": {"path": path}, "breakpoints": [{"line": 5}]}),
    );
    dap.ok("continue", json!({"threadId": 1}));
    let (line, stopped) = dap.stop();
    assert!(line.starts_with("cycle 7: breakpoint 1"), "{line}");
    assert_eq!(stopped["reason"], "breakpoint");
    // Past cycle 0, memory cannot be set.
    let message = dap.fails(
        "setVariable",
        json!({"variablesReference": bank0, "name": "0x010", "value": "1"}),
    );
    assert!(message.contains("only at cycle 0"), "{message}");
    dap.ok("stepOut", json!({"threadId": 1}));
    let (line, stopped) = dap.stop();
    assert_eq!(line, "cycle 11, core 0\n");
    assert_eq!(stopped["reason"], "step");
    assert_eq!(stopped["threadId"], 1);
    // The store wrote the sum over the byte set at cycle 0.
    assert_eq!(value(&variables(&mut dap, bank0), "0x010"), "5 (0x05)");
    dap.disconnect();
}

#[test]
fn mcst_threads_and_frames_say_what_a_core_waits_for() {
    // examples/mcst_bank0.s under mcst-rtl when cycle 12 begins (worked in
    // tests/debugger.rs): core 3 at its ready, cores 1 and 2 idle, the others waiting for
    // bank 0.
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/mcst_bank0.s")
        .canonicalize()
        .unwrap();
    let mut dap = Dap::start();
    dap.launch(
        json!({"program": s(&p), "backend": "interp", "dialect": "mcst",
                      "timing": "mcst-rtl", "stopOnEntry": true}),
    );
    dap.ok("configurationDone", json!({}));
    dap.event("stopped");
    dap.ok(
        "evaluate",
        json!({"expression": "step 12", "context": "repl"}),
    );
    dap.stop();
    let threads = dap.ok("threads", json!({}));
    let names: Vec<&str> = threads["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "core 0 (waits for bank 0)");
    assert_eq!(
        &names[1..5],
        ["core 1", "core 2", "core 3", "core 4 (waits for bank 0)"]
    );
    let frame = frame_of(&mut dap, 4);
    assert_eq!(frame["name"], "core 4: frame 1 IP 1 (waits for bank 0)");
    let regs = variables(&mut dap, 1 + 4);
    assert_eq!(value(&regs, "state"), "bank_conflict");
    assert_eq!(value(&regs, "bank"), "0");
    assert_eq!(value(&regs, "waits_for"), "round_robin");
    dap.disconnect();
}

#[test]
fn a_sourced_command_file_reports_its_last_stop_and_x_is_refused_at_launch() {
    let p = write("sourced", "add.s", ADD);
    let path = s(&p).to_string();
    let cmds = p.with_file_name("cmds.gdb");
    std::fs::write(&cmds, "break add.s:5\ncontinue\nprint r8\n").unwrap();
    let mut dap = Dap::start();
    dap.ok("initialize", json!({"adapterID": "gpu16"}));
    let message = dap.fails("launch", json!({"program": path, "args": ["-x", s(&cmds)]}));
    assert!(
        message.starts_with("-x/--command is for gpu16 debug"),
        "{message}"
    );
    dap.ok("launch", json!({"program": path, "stopOnEntry": true}));
    dap.event("initialized");
    dap.ok("configurationDone", json!({}));
    dap.event("stopped");
    let body = dap.ok(
        "evaluate",
        json!({"expression": format!("source {}", cmds.display()), "context": "repl"}),
    );
    let result: Value = serde_json::from_str(body["result"].as_str().unwrap()).unwrap();
    assert_eq!(result["replies"].as_array().unwrap().len(), 3);
    let (line, stopped) = dap.stop();
    assert!(line.starts_with("cycle 7: breakpoint 1, core 0"), "{line}");
    assert_eq!(stopped["reason"], "breakpoint");
    dap.disconnect();
}
