//! `gpu16 dap`: a Debug Adapter Protocol server over stdio, so editors (VS Code, nvim-dap,
//! Emacs dap-mode) can debug gpu16 programs. It is a translator, not a second debugger:
//! every request becomes command lines of one [`gpu16::debugger::Session`] in JSON mode,
//! and its JSON replies become DAP responses and events. `docs/debugger.md` has the
//! mapping.
//!
//! One thread reads messages ([`protocol`]) and hands them over a bounded channel; the main
//! thread answers them in order. The reader raises the session's interrupt flag when a
//! `pause`, `cancel`, `disconnect` or `terminate` arrives or the input ends, so a long
//! `continue` stops (the session stays at its previous stop, as Ctrl-C leaves `gpu16
//! debug`). For a client that reports progress, a command that runs for over a second
//! sends `progressStart`, `progressUpdate` and `progressEnd` events from a thread of its
//! own while the main thread waits for the session ([`Server::go`]).

pub mod protocol;
pub mod views;

use gpu16::debugger::Session;
use protocol::{read_message, write_message, Incoming};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Opens the session a `launch` request's arguments describe, or says why it cannot.
pub type Launcher = Box<dyn FnMut(&Value) -> Result<Session, String>>;

/// The longest expression `evaluate` passes to the session (the debugger's line limit).
const MAX_EXPRESSION: usize = 4096;

/// The largest source file the `source` request serves.
const MAX_SOURCE: u64 = 4 << 20;

/// How many messages may wait while the main thread runs a command: the reader blocks
/// past it, so a flood of requests costs bounded memory.
const QUEUE: usize = 16;

/// The requests that need a launched program.
const NEED_SESSION: &[&str] = &[
    "setBreakpoints",
    "dataBreakpointInfo",
    "setDataBreakpoints",
    "configurationDone",
    "stackTrace",
    "scopes",
    "variables",
    "evaluate",
    "exceptionInfo",
    "continue",
    "next",
    "stepIn",
    "stepBack",
    "stepOut",
    "setVariable",
    "source",
    "reverseContinue",
    "restart",
    "pause",
];

/// The flag that interrupts the session's runs, once a session exists.
type InterruptSlot = Arc<Mutex<Option<Arc<AtomicBool>>>>;

/// Serve DAP on `input` and `output` until `disconnect` or the end of the input (`Ok`), or
/// until the input's framing breaks or the output cannot be written (`Err` with why).
pub fn serve(
    input: impl Read + Send + 'static,
    output: impl Write + Send,
    launcher: Launcher,
) -> Result<(), String> {
    let slot: InterruptSlot = Arc::default();
    let (tx, rx) = mpsc::sync_channel(QUEUE);
    let raise = slot.clone();
    std::thread::spawn(move || {
        let mut input = BufReader::new(input);
        loop {
            let message = read_message(&mut input);
            let interrupts = match &message {
                Incoming::Message(v) => matches!(
                    v["command"].as_str(),
                    Some("pause" | "cancel" | "disconnect" | "terminate")
                ),
                Incoming::NotJson(_) => false,
                Incoming::End | Incoming::Broken(_) => true,
            };
            if interrupts {
                if let Some(flag) = raise.lock().ok().and_then(|s| s.clone()) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            let last = matches!(message, Incoming::End | Incoming::Broken(_));
            if tx.send(message).is_err() || last {
                return;
            }
        }
    });
    let mut server = Server::new(output, launcher, slot);
    for message in rx {
        match message {
            Incoming::Message(v) => {
                if server.handle(&v)? {
                    return Ok(());
                }
            }
            Incoming::NotJson(why) => server.answer(0, "", Err(why))?,
            Incoming::End => return Ok(()),
            Incoming::Broken(why) => return Err(format!("bad DAP input: {why}")),
        }
    }
    Ok(())
}

/// The adapter's state besides the session.
struct Server<W: Write> {
    output: W,
    /// The last `seq` sent.
    seq: i64,
    launcher: Launcher,
    session: Option<Session>,
    slot: InterruptSlot,
    stop_on_entry: bool,
    /// The session's breakpoint numbers set for each source path by `setBreakpoints`.
    lines: BTreeMap<String, Vec<u64>>,
    /// The session's watchpoint numbers set by `setDataBreakpoints`.
    watches: Vec<u64>,
    /// The thread of the last stop: the default for `evaluate` without a frame.
    focus: i64,
    /// The error object of the fault the last stop reported: the next `fault` event is the
    /// session repeating it, and ends the debuggee.
    fault: Option<Value>,
    /// Events to send after the response being prepared.
    events: Vec<Value>,
    /// The client shows progress (`supportsProgressReporting` at `initialize`).
    progress: bool,
    /// The last progress id given.
    progress_ids: u64,
}

/// The result of one request: its response body, or the message of a failed response.
type Answer = Result<Value, String>;

impl<W: Write + Send> Server<W> {
    fn new(output: W, launcher: Launcher, slot: InterruptSlot) -> Self {
        Server {
            output,
            seq: 0,
            launcher,
            session: None,
            slot,
            stop_on_entry: false,
            lines: BTreeMap::new(),
            watches: Vec::new(),
            focus: 1,
            fault: None,
            events: Vec::new(),
            progress: false,
            progress_ids: 0,
        }
    }

    fn send(&mut self, mut message: Value) -> Result<(), String> {
        self.seq += 1;
        message["seq"] = json!(self.seq);
        write_message(&mut self.output, &message)
            .map_err(|e| format!("cannot write to standard output: {e}"))
    }

    /// Send the response to request `request_seq`, then the events it caused.
    fn answer(&mut self, request_seq: i64, command: &str, answer: Answer) -> Result<(), String> {
        let response = match answer {
            Ok(body) => json!({"type": "response", "request_seq": request_seq,
                               "success": true, "command": command, "body": body}),
            Err(message) => json!({"type": "response", "request_seq": request_seq,
                                   "success": false, "command": command, "message": message,
                                   "body": {"error": {"id": 1, "format": message}}}),
        };
        self.send(response)?;
        for event in std::mem::take(&mut self.events) {
            self.send(event)?;
        }
        Ok(())
    }

    fn event(&mut self, event: &str, body: Value) {
        self.events
            .push(json!({"type": "event", "event": event, "body": body}));
    }

    /// Answer one message; `true` when the session is over (`disconnect`).
    fn handle(&mut self, message: &Value) -> Result<bool, String> {
        let seq = message["seq"].as_i64().unwrap_or(0);
        let command = message["command"].as_str().unwrap_or("").to_string();
        if message["type"] != "request" || command.is_empty() {
            let answer = Err("not a request: a DAP request has \"type\": \"request\", \
                              a \"seq\" and a \"command\""
                .to_string());
            self.answer(seq, &command, answer)?;
            return Ok(false);
        }
        let empty = json!({});
        let args = match &message["arguments"] {
            Value::Null => &empty,
            a => a,
        };
        let answer = self.request(&command, args);
        self.answer(seq, &command, answer)?;
        Ok(command == "disconnect")
    }

    fn request(&mut self, command: &str, args: &Value) -> Answer {
        match command {
            "initialize" => {
                self.progress = args["supportsProgressReporting"] == true;
                Ok(capabilities())
            }
            // Its command was interrupted as it arrived (see `serve`): as after `pause`, the
            // session stands at a stop.
            "cancel" => {
                if self.session.is_some() {
                    self.stopped("pause", self.focus, None, None);
                }
                Ok(json!({}))
            }
            "launch" => self.launch(args),
            "attach" => Err("gpu16 dap launches programs: use a launch request".into()),
            "disconnect" => Ok(json!({})),
            "terminate" => {
                self.event("terminated", json!({}));
                Ok(json!({}))
            }
            "setExceptionBreakpoints" => Ok(json!({"breakpoints": []})),
            "threads" => match self.session {
                Some(_) => {
                    let cores = self.ask("where")?;
                    Ok(views::threads(Some(&cores)))
                }
                None => Ok(views::threads(None)),
            },
            _ if self.session.is_none() && NEED_SESSION.contains(&command) => {
                Err(format!("`{command}` needs a launched program"))
            }
            "setBreakpoints" => self.set_breakpoints(args),
            "dataBreakpointInfo" => Ok(data_breakpoint_info(args)),
            "setDataBreakpoints" => self.set_data_breakpoints(args),
            "configurationDone" => {
                if self.stop_on_entry {
                    self.stopped("entry", self.focus, None, None);
                    Ok(json!({}))
                } else {
                    self.go("continue", self.focus).map(|_| json!({}))
                }
            }
            "stackTrace" => self.stack_trace(args),
            "scopes" => {
                let core = views::core_of(args["frameId"].as_i64().unwrap_or(0))
                    .ok_or("no such frame: frame ids are 1..16, one a core")?;
                Ok(views::scopes(core))
            }
            "variables" => self.variables(args),
            "evaluate" => self.evaluate(args),
            "exceptionInfo" => self.exception_info(),
            "continue" => self
                .go("continue", thread(args))
                .map(|_| json!({"allThreadsContinued": true})),
            "next" => self.go("step", thread(args)).map(|_| json!({})),
            "stepIn" => {
                let core = views::core_of(thread(args)).ok_or("no such thread")?;
                self.go(&format!("stepi {core}"), thread(args))
                    .map(|_| json!({}))
            }
            "stepBack" => {
                let line = if args["granularity"] == "instruction" {
                    let core = views::core_of(thread(args)).ok_or("no such thread")?;
                    format!("reverse-stepi {core}")
                } else {
                    "reverse-step 1".into()
                };
                self.go(&line, thread(args)).map(|_| json!({}))
            }
            "stepOut" => {
                // `finish` of the thread's core: on to where its part of the task ends.
                let core = views::core_of(thread(args)).ok_or("no such thread")?;
                self.ask(&format!("core {core}"))?;
                self.go("finish", thread(args)).map(|_| json!({}))
            }
            "setVariable" => self.set_variable(args),
            "source" => self.source(args),
            "reverseContinue" => self.go("reverse-continue", thread(args)).map(|_| json!({})),
            "restart" => {
                self.ask("run")?;
                self.fault = None;
                if self.stop_on_entry {
                    self.stopped("entry", self.focus, None, None);
                    Ok(json!({}))
                } else {
                    self.go("continue", self.focus).map(|_| json!({}))
                }
            }
            "pause" => {
                // The run the pause interrupted (if any) already answered; the session
                // stands at a stop either way.
                self.stopped("pause", thread(args), None, None);
                Ok(json!({}))
            }
            _ => Err(format!("`{command}` is not supported by gpu16 dap")),
        }
    }

    fn launch(&mut self, args: &Value) -> Answer {
        if self.session.is_some() {
            return Err("a program is already launched: one launch a session".into());
        }
        let session = (self.launcher)(args)?;
        if let Ok(mut slot) = self.slot.lock() {
            *slot = Some(session.interrupt());
        }
        self.session = Some(session);
        self.stop_on_entry = args["stopOnEntry"].as_bool().unwrap_or(false);
        // Configuration requests need the program (its source map resolves lines), so the
        // adapter is ready for them once it is loaded.
        self.event("initialized", json!({}));
        Ok(json!({}))
    }

    /// The session's JSON reply to `line`, or its error message.
    fn ask(&mut self, line: &str) -> Answer {
        ask_session(&mut self.session, &self.slot, line)
    }

    /// Run a command that moves the session and queue the events its stop makes. For a
    /// client that shows progress, a command that runs for over a second reports it.
    fn go(&mut self, line: &str, thread: i64) -> Answer {
        let v = if self.progress {
            self.ask_showing_progress(line)?
        } else {
            self.ask(line)?
        };
        self.report(&v, thread);
        Ok(v)
    }

    /// [`Server::ask`], with the command's progress sent by a thread of its own while the
    /// session runs it: `progressStart` after a second, `progressUpdate` every half second
    /// (the cycle the run has reached and its instructions), `progressEnd` before the
    /// response. The main thread writes nothing meanwhile, so the thread has the output.
    fn ask_showing_progress(&mut self, line: &str) -> Answer {
        let Some(session) = self.session.as_ref() else {
            return Err("no program is launched".into());
        };
        let probe = session.progress();
        self.progress_ids += 1;
        let id = format!("gpu16-{}", self.progress_ids);
        let done = (Mutex::new(false), Condvar::new());
        let mut shown = Shown {
            output: &mut self.output,
            seq: &mut self.seq,
            id: &id,
        };
        let mut asked = None;
        let session = &mut self.session;
        let slot = &self.slot;
        std::thread::scope(|scope| {
            let watcher = scope.spawn(|| shown.watch(line, &probe, &done));
            asked = Some(ask_session(session, slot, line));
            if let Ok(mut finished) = done.0.lock() {
                *finished = true;
            }
            done.1.notify_one();
            // A write that failed is the main loop's to find at its next message.
            let _ = watcher.join();
        });
        asked.unwrap_or_else(|| Err("the command did not run".into()))
    }

    /// Queue the `stopped` event of a stop.
    fn stopped(&mut self, reason: &str, thread: i64, text: Option<String>, hit: Option<&Value>) {
        let mut body = json!({"reason": reason, "threadId": thread, "allThreadsStopped": true});
        if let Some(text) = text {
            body["description"] = json!(text.clone());
            body["text"] = json!(text);
        }
        if let Some(id) = hit.and_then(Value::as_u64) {
            body["hitBreakpointIds"] = json!([id]);
        }
        self.focus = thread;
        self.event("stopped", body);
    }

    /// Queue the events of a session event: a stop, or the end of the run.
    fn report(&mut self, v: &Value, requested: i64) {
        let thread = v["core"].as_u64().map_or(requested, |c| c as i64 + 1);
        let cycle = &v["cycle"];
        let at = match (v["core"].as_u64(), v["location"]["file"].as_str()) {
            (Some(core), Some(file)) => {
                format!(", core {core} at {file}:{}", v["location"]["line"])
            }
            (Some(core), None) if v["frame"].is_null() => format!(", core {core}"),
            (Some(core), None) => format!(", core {core} at {}:{}", v["frame"], v["ip"]),
            _ => String::new(),
        };
        let back = if v["reverse"] == true { " (back)" } else { "" };
        let event = v["event"].as_str().unwrap_or("");
        if event != "fault" {
            self.fault = None;
        }
        match event {
            "break" => {
                let text = format!("cycle {cycle}: breakpoint {}{at}{back}", v["breakpoint"]);
                self.console(&text);
                self.stopped("breakpoint", thread, Some(text), Some(&v["breakpoint"]));
            }
            "watch" => {
                let faulting = if v["faulting"] == true {
                    " (the store faults)"
                } else {
                    ""
                };
                let text = format!(
                    "cycle {cycle}: byte {:#05x} {:#04x} -> {:#04x}{at}{faulting}{back}",
                    v["addr"].as_u64().unwrap_or(0),
                    v["old"].as_u64().unwrap_or(0),
                    v["new"].as_u64().unwrap_or(0),
                );
                self.console(&text);
                self.stopped(
                    "data breakpoint",
                    thread,
                    Some(text),
                    Some(&v["watchpoint"]),
                );
            }
            "step" | "restart" | "finish" | "until" => {
                let reason = if event == "restart" { "entry" } else { "step" };
                self.console(&format!("cycle {cycle}{at}{back}"));
                self.stopped(reason, thread, None, None);
            }
            "end" => {
                self.console(&format!("the program ended after {cycle} cycles"));
                self.event("exited", json!({"exitCode": 0}));
                self.event("terminated", json!({}));
            }
            "fault" if self.fault.is_none() => {
                let message = v["error"]["message"]
                    .as_str()
                    .unwrap_or("the run failed")
                    .to_string();
                self.console(&format!("fault: {message}"));
                self.fault = Some(v["error"].clone());
                self.stopped("exception", thread, Some(message), None);
            }
            "fault" => {
                // The session repeats a failure it already reported: the run is over.
                self.event("exited", json!({"exitCode": 1}));
                self.event("terminated", json!({}));
            }
            _ => {}
        }
    }

    /// Queue a line for the client's debug console.
    fn console(&mut self, text: &str) {
        self.event(
            "output",
            json!({"category": "console", "output": format!("{text}\n")}),
        );
    }

    fn set_breakpoints(&mut self, args: &Value) -> Answer {
        let path = args["source"]["path"]
            .as_str()
            .ok_or("setBreakpoints needs source.path: gpu16 sources are files")?
            .to_string();
        for id in self.lines.remove(&path).unwrap_or_default() {
            self.ask(&format!("delete {id}"))?;
        }
        // The debugger splits commands at whitespace, and matches a file when either path
        // ends with the other: a path with spaces is given as its tail after them.
        let file = if path.contains(char::is_whitespace) {
            let parts: Vec<&str> = path.split(['/', '\\']).collect();
            let tail = parts
                .iter()
                .rposition(|p| p.contains(char::is_whitespace))
                .map_or(0, |i| i + 1);
            parts[tail..].join("/")
        } else {
            path.clone()
        };
        // (line, condition): a condition is the session's `break ... if EXPR`.
        let mut lines: Vec<(i64, Option<String>)> = match args["breakpoints"].as_array() {
            Some(bps) => bps
                .iter()
                .map(|b| {
                    let condition = b["condition"]
                        .as_str()
                        .map(str::trim)
                        .filter(|c| !c.is_empty())
                        .map(str::to_string);
                    (b["line"].as_i64().unwrap_or(0), condition)
                })
                .collect(),
            None => args["lines"]
                .as_array()
                .map(|ls| ls.iter().map(|l| (l.as_i64().unwrap_or(0), None)).collect())
                .unwrap_or_default(),
        };
        lines.truncate(Session::MAX_POINTS);
        let mut ids = Vec::new();
        let mut answers = Vec::new();
        for (line, condition) in lines {
            let when = condition.map_or(String::new(), |c| format!(" if {c}"));
            answers.push(if line < 1 {
                json!({"verified": false, "line": line, "message": "lines start at 1"})
            } else if when.contains('\n') {
                json!({"verified": false, "line": line, "message": "a condition is one line"})
            } else {
                match self.ask(&format!("break {file}:{line}{when}")) {
                    Ok(v) => {
                        let id = v["breakpoint"].as_u64().unwrap_or(0);
                        ids.push(id);
                        json!({"id": id, "verified": true, "line": line,
                               "source": views::source(&path)})
                    }
                    Err(message) => json!({"verified": false, "line": line, "message": message}),
                }
            });
        }
        self.lines.insert(path, ids);
        Ok(json!({ "breakpoints": answers }))
    }

    fn set_data_breakpoints(&mut self, args: &Value) -> Answer {
        for id in std::mem::take(&mut self.watches) {
            self.ask(&format!("delete {id}"))?;
        }
        let empty = Vec::new();
        let wanted = args["breakpoints"].as_array().unwrap_or(&empty);
        let mut answers = Vec::new();
        for b in wanted.iter().take(Session::MAX_POINTS) {
            let addr = b["dataId"].as_str().and_then(views::address);
            let access = b["accessType"].as_str().unwrap_or("write");
            answers.push(match addr {
                _ if access != "write" => json!({"verified": false,
                    "message": "only writes can be watched (accessType write)"}),
                None => json!({"verified": false,
                    "message": "a data breakpoint is a byte of shared memory, 0x000..0xfff"}),
                Some(addr) => match self.ask(&format!("watch {addr:#05x}")) {
                    Ok(v) => {
                        let id = v["watchpoint"].as_u64().unwrap_or(0);
                        self.watches.push(id);
                        json!({"id": id, "verified": true})
                    }
                    Err(message) => json!({"verified": false, "message": message}),
                },
            });
        }
        Ok(json!({ "breakpoints": answers }))
    }

    fn stack_trace(&mut self, args: &Value) -> Answer {
        let core = views::core_of(thread(args)).ok_or("no such thread: ids are 1..16")?;
        let regs = self.ask(&format!("regs {core}"))?;
        // One frame a core; a second page (startFrame 1 or more) is empty.
        let frames = if args["startFrame"].as_u64().unwrap_or(0) == 0 {
            vec![views::stack_frame(core, &regs)]
        } else {
            Vec::new()
        };
        Ok(json!({"stackFrames": frames, "totalFrames": 1}))
    }

    fn variables(&mut self, args: &Value) -> Answer {
        let reference = args["variablesReference"].as_i64().unwrap_or(0);
        let variables = match reference {
            views::LOCKS => views::locks(&self.ask("locks")?),
            views::TASKS => views::tasks(&self.ask("tasks")?),
            views::MEMORY => views::banks(),
            r if (views::BANK..views::BANK + 16).contains(&r) => {
                let bank = r - views::BANK;
                views::rows(&self.ask(&format!("mem {:#05x} 256", bank << 8))?)
            }
            r => match views::core_of(r - views::REGISTERS + 1) {
                Some(core) => views::registers(&self.ask(&format!("regs {core}"))?),
                None => return Err(format!("no variables have reference {reference}")),
            },
        };
        Ok(json!({ "variables": variables }))
    }

    fn evaluate(&mut self, args: &Value) -> Answer {
        let expression = args["expression"].as_str().unwrap_or("").trim().to_string();
        if expression.len() > MAX_EXPRESSION || expression.contains(['\n', '\r', '\0']) {
            return Err(format!(
                "an expression is one line of at most {MAX_EXPRESSION} bytes"
            ));
        }
        let core = args["frameId"]
            .as_i64()
            .and_then(views::core_of)
            .or_else(|| views::core_of(self.focus))
            .unwrap_or(0);
        if let Some(r) = views::register(&expression) {
            let regs = self.ask(&format!("regs {core}"))?;
            let b = regs["registers"][r].as_u64().unwrap_or(0);
            return Ok(json!({"result": views::byte(b), "variablesReference": 0}));
        }
        let word = expression.split_whitespace().next().unwrap_or("");
        if matches!(word, "mem" | "m") {
            let v = self.ask(&expression)?;
            let hex = v["bytes"].as_str().unwrap_or("");
            let spaced: Vec<&str> = (0..hex.len() / 2).map(|i| &hex[2 * i..2 * i + 2]).collect();
            return Ok(json!({"result": spaced.join(" "), "variablesReference": 0}));
        }
        // Hovers and watch expressions are evaluated without the user asking each time:
        // only views, never a command that moves the session or changes its points.
        let views_only = matches!(args["context"].as_str(), Some("hover" | "watch"));
        let is_view = matches!(
            word,
            "regs" | "r" | "locks" | "tasks" | "where" | "disasm" | "help" | "h" | "?"
        );
        if views_only && !is_view {
            return Err(format!("`{expression}` is not a register, memory or view"));
        }
        if matches!(word, "quit" | "q" | "exit") {
            return Err("end the session with the editor's stop button (disconnect)".into());
        }
        let v = self.ask(&expression)?;
        if let Some(event) = last_event(&v) {
            let event = event.clone();
            self.report(&event, self.focus);
        }
        let result = match &v["help"] {
            Value::String(help) => help.clone(),
            _ => v.to_string(),
        };
        Ok(json!({"result": result, "variablesReference": 0}))
    }

    /// `setVariable`: a byte of a memory bank (the session's `set [ADDR] = BYTE`, which
    /// only cycle 0 allows) or a register (which the session cannot set: the response
    /// says why).
    fn set_variable(&mut self, args: &Value) -> Answer {
        let reference = args["variablesReference"].as_i64().unwrap_or(0);
        let name = args["name"].as_str().unwrap_or("");
        let text = args["value"].as_str().unwrap_or("").trim();
        // A value as shown (`5 (0x05)`) or as typed (`5`, `0x05`).
        let value = text.split_whitespace().next().unwrap_or("");
        if value.len() > MAX_EXPRESSION || value.contains(['\n', '\r', '\0']) {
            return Err("a value is a byte: 0..255 or 0x00..0xff".into());
        }
        if (views::BANK..views::BANK + 16).contains(&reference) {
            let addr = views::address(name).ok_or("no such byte: rows are named by address")?;
            if i64::from(addr >> 8) != reference - views::BANK {
                return Err(format!("{addr:#05x} is not in this bank"));
            }
            let v = self.ask(&format!("set [{addr:#05x}] = {value}"))?;
            let b = v["value"].as_u64().unwrap_or(0);
            return Ok(json!({"value": views::byte(b), "variablesReference": 0}));
        }
        match (
            views::core_of(reference - views::REGISTERS + 1),
            views::register(name),
        ) {
            (Some(core), Some(r)) => self
                .ask(&format!("set c{core}.r{r} = {value}"))
                .map(|_| json!({})),
            _ => Err(format!(
                "`{name}` cannot be set: only bytes of memory (at cycle 0) can"
            )),
        }
    }

    /// `source`: the text of a source file of the program (the only files served).
    fn source(&mut self, args: &Value) -> Answer {
        let Some(path) = args["source"]["path"].as_str() else {
            return Err("the sources of gpu16 programs are files: give source.path".into());
        };
        let files = self
            .session
            .as_ref()
            .map(Session::source_files)
            .unwrap_or_default();
        let same = |f: &String| {
            let (a, b) = (std::path::Path::new(f), std::path::Path::new(path));
            a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
        };
        if !files.iter().any(same) {
            return Err(format!("{path} is not a source file of the program"));
        }
        let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
        let mut bytes = Vec::new();
        file.take(MAX_SOURCE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{path}: {e}"))?;
        if bytes.len() as u64 > MAX_SOURCE {
            return Err(format!("{path} is larger than {} MiB", MAX_SOURCE >> 20));
        }
        Ok(json!({"content": String::from_utf8_lossy(&bytes), "mimeType": "text/x-gpu16-asm"}))
    }

    fn exception_info(&mut self) -> Answer {
        let error = self
            .fault
            .as_ref()
            .ok_or("the session is not stopped at a fault")?;
        Ok(json!({
            "exceptionId": error["rule"].as_str().unwrap_or("fault"),
            "description": error["message"].as_str().unwrap_or("the run failed"),
            "breakMode": "always",
            "details": {"message": error["message"], "typeName": error["rule"]},
        }))
    }
}

/// The session event a reply carries: the reply itself, or for `source FILE` the last
/// event among the replies of its commands (of the files it sources too), where the
/// session moved to last.
fn last_event(v: &Value) -> Option<&Value> {
    if v.get("event").is_some() {
        return Some(v);
    }
    v["replies"].as_array()?.iter().rev().find_map(last_event)
}

/// The thread a request names (`threadId`), core 0's thread if none.
fn thread(args: &Value) -> i64 {
    args["threadId"].as_i64().unwrap_or(1)
}

/// The JSON reply of `session` to `line` with its interrupt lowered first, or its error
/// message.
fn ask_session(session: &mut Option<Session>, slot: &InterruptSlot, line: &str) -> Answer {
    let Some(session) = session.as_mut() else {
        return Err("no program is launched".into());
    };
    if let Ok(slot) = slot.lock() {
        if let Some(flag) = slot.as_ref() {
            flag.store(false, Ordering::Relaxed);
        }
    }
    let reply = session.execute(line);
    let v: Value = serde_json::from_str(reply.text.trim())
        .map_err(|e| format!("the debugger answered no JSON ({e})"))?;
    match &v["error"] {
        Value::String(message) => Err(message.clone()),
        _ => Ok(v),
    }
}

/// How long a command runs before its progress is shown, and how often it is updated.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// The output lent to the thread that reports one command's progress.
struct Shown<'a, W: Write> {
    output: &'a mut W,
    seq: &'a mut i64,
    id: &'a str,
}

impl<W: Write> Shown<'_, W> {
    fn event(&mut self, event: &str, body: Value) -> Result<(), String> {
        *self.seq += 1;
        let message = json!({"seq": *self.seq, "type": "event", "event": event, "body": body});
        write_message(&mut *self.output, &message)
            .map_err(|e| format!("cannot write to standard output: {e}"))
    }

    /// Report `title`'s progress, as `probe` tells it, until `done` is raised.
    fn watch(
        &mut self,
        title: &str,
        probe: &dyn Fn() -> Option<gpu16_machine::Progress>,
        done: &(Mutex<bool>, Condvar),
    ) -> Result<(), String> {
        let started = Instant::now();
        let Ok(mut finished) = done.0.lock() else {
            return Ok(());
        };
        let mut wait = PROGRESS_AFTER;
        let mut begun = false;
        loop {
            finished = match done.1.wait_timeout(finished, wait) {
                Ok((g, _)) => g,
                Err(_) => return Ok(()),
            };
            if *finished {
                break;
            }
            wait = PROGRESS_EVERY;
            let secs = started.elapsed().as_secs_f64();
            let message = match probe() {
                Some(p) => format!(
                    "cycle {}, {} instructions, {secs:.1} s",
                    p.cycle, p.instructions
                ),
                None => format!("{secs:.1} s"),
            };
            if begun {
                self.event(
                    "progressUpdate",
                    json!({"progressId": self.id, "message": message}),
                )?;
            } else {
                begun = true;
                self.event(
                    "progressStart",
                    json!({"progressId": self.id, "title": title, "message": message,
                           "cancellable": true}),
                )?;
            }
        }
        if begun {
            self.event("progressEnd", json!({"progressId": self.id}))?;
        }
        Ok(())
    }
}

/// What the adapter can do, the `initialize` response's body.
fn capabilities() -> Value {
    json!({
        "supportsConfigurationDoneRequest": true,
        "supportsStepBack": true,
        "supportsDataBreakpoints": true,
        "supportsConditionalBreakpoints": true,
        "supportsHitConditionalBreakpoints": false,
        "supportsRestartRequest": true,
        "supportsEvaluateForHovers": true,
        "supportsExceptionInfoRequest": true,
        "supportsTerminateRequest": true,
        "supportsSteppingGranularity": true,
        "supportsSetVariable": true,
        "supportsCancelRequest": true,
        "exceptionBreakpointFilters": [],
    })
}

/// `dataBreakpointInfo`: a byte of shared memory can be watched (its writes), by its
/// variable in a bank (named by address) or by an address expression; nothing else can.
fn data_breakpoint_info(args: &Value) -> Value {
    let name = args["name"].as_str().unwrap_or("");
    let reference = args["variablesReference"].as_i64();
    let in_memory = match reference {
        Some(r) => (views::BANK..views::BANK + 16).contains(&r),
        None => true,
    };
    match views::address(name).filter(|_| in_memory) {
        Some(addr) => json!({
            "dataId": format!("{addr:#05x}"),
            "description": format!("writes of byte {addr:#05x}"),
            "accessTypes": ["write"],
            "canPersist": true,
        }),
        None => json!({
            "dataId": null,
            "description": "only bytes of shared memory (0x000..0xfff) can be watched",
        }),
    }
}
