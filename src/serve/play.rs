//! The playground's state: the program the page opened, its debugger [`Session`] (the one
//! `gpu16 debug --json` runs, driven with its command lines), and the program's whole run,
//! made once as the program opens, for the timeline, the statistics and the downloads
//! (written by the writers `gpu16 run` uses: [`crate::run_output::trace`],
//! [`crate::run_output::vcd`], [`crate::run_output::png`], [`gpu16::output::json`]).
//!
//! Every command, and the whole run, is bounded as on the command line: in cycles by the
//! watchdog (`max_cycles`, checked as `--max-cycles` is), in time by `--timeout` (the
//! session's interrupt flag is raised at the limit, as Ctrl-C raises it in `gpu16 debug`),
//! and in memory by the event limit (`--trace-limit`) and the size of a request.
//!
//! The same clock that times each command publishes its progress to the live updates
//! ([`super::live`]), and the worker publishes when each begins and ends.

use super::live::{self, Hub};
use super::{error, ok, Options, Reply};
use crate::run_output::events::Recorder;
use crate::run_output::see::{state_of, Outcome, SeeOptions};
use crate::run_output::{png, trace, vcd};
use gpu16::debugger::Session;
use gpu16::input::{MemoryFormat, MemoryImage};
use gpu16::output::json as run_json;
use gpu16::ProgramInput;
use gpu16_asm::{Assembly, Diagnostics, SourceMap};
use gpu16_machine::{Dialect, Observer, Program, Progress, StopCause};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The name the page's source has in diagnostics, source locations and `break FILE:LINE`.
pub const SOURCE_NAME: &str = "program.s";

/// The longest command line, as `gpu16 debug` reads them.
pub const MAX_LINE: usize = 4096;

/// The most run events sent to the page for its timeline (the downloads keep up to
/// `--trace-limit`).
pub const MAX_TIMELINE_EVENTS: usize = 50_000;

/// The largest FILE the server reads for the page.
pub const MAX_FILE: u64 = super::MAX_BODY as u64 / 2;

/// The playground: the options and the program the page opened, if any.
pub struct Play {
    options: Options,
    /// Where the accepting thread finds the current session's interrupt flag.
    slot: Arc<Mutex<Option<Arc<AtomicBool>>>>,
    current: Option<Current>,
    /// Times each command and whole run, and publishes their progress.
    clock: Clock,
    /// Where the live updates go.
    hub: Arc<Hub>,
}

/// An opened program.
struct Current {
    session: Session,
    interrupt: Arc<AtomicBool>,
    map: Option<SourceMap>,
    /// The whole run and its events.
    outcome: Outcome,
    events: Option<Recorder>,
}

/// Refuse `.include`: the server reads no file but the page's assets and the user's FILE.
fn no_includes(path: &Path) -> Result<String, String> {
    Err(format!(
        "the playground reads no other files (`.include {}`): paste the file's text instead",
        path.display()
    ))
}

impl Play {
    /// A playground with nothing opened, publishing each session's interrupt flag in `slot`
    /// and its live updates to `hub`.
    pub fn new(options: Options, slot: Arc<Mutex<Option<Arc<AtomicBool>>>>, hub: Arc<Hub>) -> Play {
        Play {
            options,
            slot,
            current: None,
            clock: Clock::new(hub.clone()),
            hub,
        }
    }

    /// Whether the user gave a FILE.
    pub fn has_file(&self) -> bool {
        self.options.file.is_some()
    }

    /// The user's FILE: `{"name", "source"}`, or 404 without one.
    pub fn file(&self) -> Reply {
        let Some(path) = &self.options.file else {
            return error(404, "no FILE was given to `gpu16 serve`");
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match std::fs::metadata(path) {
            Ok(m) if m.len() > MAX_FILE => {
                return error(413, &format!("{name} is larger than {MAX_FILE} bytes"))
            }
            Err(e) => return error(404, &format!("cannot read {name}: {e}")),
            Ok(_) => {}
        }
        match std::fs::read(path) {
            Ok(bytes) => ok(json!({
                "name": name,
                "source": String::from_utf8_lossy(&bytes),
            })),
            Err(e) => error(404, &format!("cannot read {name}: {e}")),
        }
    }

    fn assembled(&self, source: &str, dialect: Dialect) -> Result<Assembly, Diagnostics> {
        gpu16_asm::assemble_with_in(source, SOURCE_NAME, &no_includes, dialect)
    }

    fn diagnostics(&self, d: &Diagnostics) -> Vec<Value> {
        d.0.iter()
            .map(|d| (self.options.diagnostic)(d, SOURCE_NAME))
            .collect()
    }

    /// `POST /api/assemble`: the diagnostics of `source` (`gpu16 check --json`'s objects):
    /// the assembler's errors, or the lint's warnings of a program that assembles.
    pub fn assemble(&self, body: &Value) -> Reply {
        let source = match text(body, "source") {
            Ok(s) => s,
            Err(r) => return r,
        };
        let dialect = match machine_choices(body).and_then(|m| (self.options.machine)(&m)) {
            Ok(m) => m.dialect,
            Err(e) => return error(400, &e),
        };
        let d = match self.assembled(source, dialect) {
            Ok(a) => {
                let findings = gpu16_asm::lint(&a.program);
                gpu16_asm::warnings(findings, Some(&a.source_map), SOURCE_NAME)
            }
            Err(d) => d,
        };
        ok(json!({
            "errors": d.errors(),
            "warnings": d.warnings(),
            "diagnostics": self.diagnostics(&d),
        }))
    }

    /// `POST /api/open`: assemble `source`, load `memory` (`$readmemh` text; the source's
    /// `.data` when absent or empty), open the session before cycle 0 and make the whole
    /// run. `{"ok": false, "error", "diagnostics"}` if the program cannot be opened.
    pub fn open(&mut self, body: &Value) -> Reply {
        let source = match text(body, "source") {
            Ok(s) => s,
            Err(r) => return r,
        };
        let memory_text = match &body["memory"] {
            Value::Null => "",
            Value::String(s) => s.as_str(),
            _ => return error(400, "`memory` must be a string ($readmemh text)"),
        };
        let machine = match machine_choices(body).and_then(|m| (self.options.machine)(&m)) {
            Ok(m) => m,
            Err(e) => return error(400, &e),
        };
        let assembly = match self.assembled(source, machine.dialect) {
            Ok(a) => a,
            Err(d) => {
                return ok(json!({
                    "ok": false,
                    "error": format!("{SOURCE_NAME}: {} error(s)", d.errors()),
                    "diagnostics": self.diagnostics(&d),
                }))
            }
        };
        let memory = if memory_text.trim().is_empty() {
            assembly.memory.clone().unwrap_or_default()
        } else {
            match MemoryImage::from_bytes(
                Path::new("memory"),
                memory_text.as_bytes(),
                Some(MemoryFormat::Hex),
                "memory",
            ) {
                Ok(mut image) => {
                    image.bytes.truncate(image.given);
                    image.bytes
                }
                Err(e) => {
                    return ok(json!({"ok": false, "error": e.to_string(), "diagnostics": []}))
                }
            }
        };
        let program: Program = assembly.program;
        let map = assembly.source_map;
        // The whole run, for the timeline, the statistics and the downloads.
        let see = SeeOptions {
            trace: Some("trace.json".into()),
            trace_limit: self.options.trace_limit,
            timeline: false,
            width: None,
            mem_png: None,
            palette: png::Palette::default(),
            png_scale: 1,
            vcd: Some("run.vcd".into()),
            vcd_regs: false,
        };
        // `POST /api/stop` stops the whole run too.
        let stopped = Arc::new(AtomicBool::new(false));
        if let Ok(mut slot) = self.slot.lock() {
            *slot = Some(stopped.clone());
        }
        let timed_out = Arc::new(AtomicBool::new(false));
        let last: Arc<Mutex<Option<Progress>>> = Arc::default();
        let theirs = last.clone();
        let started = Instant::now();
        self.hub.publish("busy", &json!({ "what": "open" }));
        self.clock.arm(
            self.options.timeout,
            timed_out.clone(),
            Some("open"),
            Box::new(move || theirs.lock().ok().and_then(|p| *p)),
        );
        let (outcome, events) = see.run(
            machine.runner,
            ProgramInput::Whole(&program),
            &memory,
            &machine.config,
            &mut Stoppable(timed_out, stopped, last),
        );
        self.clock.disarm();
        let session = Session::new(
            program,
            Some(map.clone()),
            memory,
            machine.runner,
            machine.config,
            true,
        );
        let interrupt = session.interrupt();
        if let Ok(mut slot) = self.slot.lock() {
            *slot = Some(interrupt.clone());
        }
        self.current = Some(Current {
            session,
            interrupt,
            map: Some(map),
            outcome,
            events,
        });
        let run = self.run_summary();
        let state = self.state();
        self.hub.publish(
            "idle",
            &idle_event(
                "open",
                started,
                &state,
                run.get("error").unwrap_or(&Value::Null),
            ),
        );
        ok(json!({ "ok": true, "name": SOURCE_NAME, "run": run, "state": state }))
    }

    /// The whole run for the page: `run --json`'s object without the memory, registers
    /// and tasks, and its `events` (at most [`MAX_TIMELINE_EVENTS`], `events_cut` the cycle
    /// where the record stops, if it was cut).
    fn run_summary(&mut self) -> Value {
        let Some(c) = self.current.as_mut() else {
            return Value::Null;
        };
        let mut doc = run_json::run_document(&c.outcome, c.map.as_ref());
        if let Some(o) = doc.as_object_mut() {
            for key in ["memory", "registers", "tasks", "outputs", "unfinished"] {
                o.remove(key);
            }
        }
        let (events, cut) = match c.events.as_mut() {
            Some(rec) => {
                let cut = rec.cut_at();
                let all = rec.events();
                let shown: Vec<Value> = all
                    .iter()
                    .take(MAX_TIMELINE_EVENTS)
                    .map(run_json::event)
                    .collect();
                let cut = if all.len() > MAX_TIMELINE_EVENTS {
                    Some(crate::run_output::events::start_of(
                        &all[MAX_TIMELINE_EVENTS],
                    ))
                } else {
                    cut
                };
                (shown, cut)
            }
            None => (Vec::new(), None),
        };
        doc["events"] = json!(events);
        doc["events_cut"] = json!(cut);
        doc
    }

    /// One command line of the session, bounded by `--timeout`, as its JSON reply; its
    /// progress is published as `what`'s, if it has a name.
    fn execute(&mut self, line: &str, what: Option<&str>) -> Value {
        let Some(c) = self.current.as_mut() else {
            return json!({"error": "no program is open"});
        };
        c.interrupt.store(false, Ordering::Relaxed);
        let probe = c.session.progress();
        self.clock.arm(
            self.options.timeout,
            c.interrupt.clone(),
            what,
            Box::new(probe),
        );
        let reply = c.session.execute(line);
        self.clock.disarm();
        serde_json::from_str(reply.text.trim())
            .unwrap_or_else(|_| json!({"error": reply.text.trim()}))
    }

    /// The machine where the session stands: the replies of `where`, `regs`, `mem 0 4096`
    /// and `locks`.
    fn state(&mut self) -> Value {
        let place = self.execute("where", None);
        let regs = self.execute("regs", None);
        let memory = self.execute("mem 0 4096", None);
        let locks = self.execute("locks", None);
        json!({
            "cycle": place["cycle"],
            "status": place["status"],
            "where": place,
            "regs": regs,
            "memory": memory["bytes"],
            "locks": locks,
        })
    }

    /// `POST /api/command`: `{"line"}`, one `gpu16 debug` command line, answered with its
    /// JSON reply and the machine where the session then stands: `{"reply", "state"}`.
    pub fn command(&mut self, body: &Value) -> Reply {
        let line = match text(body, "line") {
            Ok(s) => s,
            Err(r) => return r,
        };
        if line.len() > MAX_LINE {
            return error(400, &format!("a command line is at most {MAX_LINE} bytes"));
        }
        if line.contains(['\n', '\r']) {
            return error(400, "a command is one line");
        }
        if self.current.is_none() {
            return error(409, "no program is open: POST /api/open first");
        }
        let started = Instant::now();
        self.hub.publish("busy", &json!({ "what": line }));
        let reply = self.execute(line, Some(line));
        let state = self.state();
        self.hub.publish(
            "idle",
            &idle_event(
                line,
                started,
                &state,
                reply.get("error").unwrap_or(&Value::Null),
            ),
        );
        ok(json!({ "reply": reply, "state": state }))
    }

    /// `GET /api/download/WHAT`: the whole run's Perfetto trace (`trace`), waveform
    /// (`vcd`), memory picture (`png`) or `run --json` object (`json`).
    pub fn download(&mut self, what: &str) -> Reply {
        if !["trace", "vcd", "png", "json"].contains(&what) {
            return error(404, "downloads are trace, vcd, png and json");
        }
        let Some(c) = self.current.as_mut() else {
            return error(409, "no program is open: POST /api/open first");
        };
        let state = state_of(&c.outcome);
        let mut bytes = Vec::new();
        let (content_type, name, written) = match (what, c.events.as_mut()) {
            ("trace", Some(rec)) => (
                "application/json",
                "trace.json",
                trace::write(&mut bytes, rec, state).map_err(|e| e.to_string()),
            ),
            ("vcd", Some(rec)) => (
                "text/plain",
                "run.vcd",
                vcd::write(&mut bytes, rec, state.cycles).map_err(|e| e.to_string()),
            ),
            ("png", _) => (
                "image/png",
                "memory.png",
                png::write(&mut bytes, &state.memory, png::Palette::default(), 4)
                    .map_err(|e| e.to_string()),
            ),
            ("json", _) => {
                let v = run_json::run_document(&c.outcome, c.map.as_ref());
                bytes = format!("{v}\n").into_bytes();
                ("application/json", "run.json", Ok(()))
            }
            ("trace" | "vcd", None) => ("", "", Err("the run recorded no events".to_string())),
            _ => return error(404, "downloads are trace, vcd, png and json"),
        };
        if let Err(e) = written {
            return error(500, &e);
        }
        Reply {
            status: 200,
            content_type,
            body: bytes,
            download: Some(name.into()),
        }
    }
}

/// The whole run's observer: stopped when its first flag is raised (`--timeout`) or its
/// second (`POST /api/stop`); it keeps the run's last progress for the clock to publish.
struct Stoppable(
    Arc<AtomicBool>,
    Arc<AtomicBool>,
    Arc<Mutex<Option<Progress>>>,
);

impl Observer for Stoppable {
    const WANTS_EVENTS: bool = false;
    const WANTS_PROGRESS: bool = true;

    fn progress(&mut self, progress: Progress) {
        // The clock holds the lock only to copy it out; a note it would wait for is
        // skipped, the next one comes soon.
        if let Ok(mut last) = self.2.try_lock() {
            *last = Some(progress);
        }
    }

    fn stop_requested(&mut self) -> Option<StopCause> {
        if self.1.load(Ordering::Relaxed) {
            Some(StopCause::Interrupt)
        } else if self.0.load(Ordering::Relaxed) {
            Some(StopCause::Timeout)
        } else {
            None
        }
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

/// How far a command has come, asked by the clock from its thread: `None` before the run
/// reports any progress.
type Probe = Box<dyn Fn() -> Option<Progress> + Send>;

/// What the clock times: one command or whole run.
struct Timing {
    /// When `--timeout` has passed, if it is still to come, and the flag it raises.
    deadline: Option<Instant>,
    flag: Arc<AtomicBool>,
    /// What it is (`open` or the command line) and its progress, published every
    /// [`live::TICK`] from the first tick on; the page's own queries are not published.
    what: Option<String>,
    probe: Probe,
    started: Instant,
    next_tick: Instant,
}

/// One thread for the whole server that raises a flag when `--timeout` has passed since it
/// was armed, unless it was disarmed first, and publishes the progress of what it times:
/// one command or run at a time is timed, so the threads stay one however many commands
/// come and however long the limit.
struct Clock(Arc<(Mutex<Option<Timing>>, Condvar)>);

impl Clock {
    fn new(hub: Arc<Hub>) -> Clock {
        let shared: Arc<(Mutex<Option<Timing>>, Condvar)> = Arc::default();
        let theirs = shared.clone();
        let started = std::thread::Builder::new()
            .name("serve-clock".into())
            .spawn(move || {
                let (armed, wake) = &*theirs;
                let Ok(mut guard) = armed.lock() else { return };
                loop {
                    let wait = guard.as_mut().map(|t| {
                        let now = Instant::now();
                        if t.deadline.is_some_and(|d| d <= now) {
                            t.flag.store(true, Ordering::Relaxed);
                            t.deadline = None;
                        }
                        if t.next_tick <= now {
                            if let Some(what) = &t.what {
                                hub.publish(
                                    "progress",
                                    &progress_event(what, t.started, (t.probe)()),
                                );
                            }
                            t.next_tick = now + live::TICK;
                        }
                        let next = t.deadline.map_or(t.next_tick, |d| d.min(t.next_tick));
                        next.saturating_duration_since(now)
                    });
                    guard = match wait {
                        None => match wake.wait(guard) {
                            Ok(g) => g,
                            Err(_) => return,
                        },
                        Some(left) => match wake.wait_timeout(guard, left) {
                            Ok((g, _)) => g,
                            Err(_) => return,
                        },
                    };
                }
            });
        // Without the thread nothing is timed; the watchdog of cycles and `stop` still hold.
        drop(started);
        Clock(shared)
    }

    /// Time one command or run: raise `flag` once `limit` has passed (never, for a limit
    /// past the clock's range) and, if it has a name, publish its progress.
    fn arm(&self, limit: Duration, flag: Arc<AtomicBool>, what: Option<&str>, probe: Probe) {
        let now = Instant::now();
        if let Ok(mut armed) = self.0 .0.lock() {
            *armed = Some(Timing {
                deadline: now.checked_add(limit),
                flag,
                what: what.map(str::to_string),
                probe,
                started: now,
                next_tick: now + live::TICK,
            });
        }
        self.0 .1.notify_one();
    }

    fn disarm(&self) {
        if let Ok(mut armed) = self.0 .0.lock() {
            *armed = None;
        }
        self.0 .1.notify_one();
    }
}

/// The `idle` event: what ran, for how long, where the session then stands (`cycle`,
/// `status`) and the command's or the whole run's `error`, if any.
fn idle_event(what: &str, started: Instant, state: &Value, error: &Value) -> Value {
    json!({
        "what": what,
        "elapsed_ms": started.elapsed().as_millis() as u64,
        "cycle": state["cycle"],
        "status": state["status"],
        "error": error,
    })
}

/// The `progress` event: what runs, for how long, and how far it has come (`cycle`,
/// `instructions`, `tasks` and `frames` null before the run reports any).
fn progress_event(what: &str, started: Instant, p: Option<Progress>) -> Value {
    json!({
        "what": what,
        "elapsed_ms": started.elapsed().as_millis() as u64,
        "cycle": p.map(|p| p.cycle),
        "instructions": p.map(|p| p.instructions),
        "tasks": p.map(|p| p.tasks),
        "frames": p.map(|p| p.frames),
    })
}

/// The string `body[key]`, or a 400 reply.
fn text<'a>(body: &'a Value, key: &str) -> Result<&'a str, Reply> {
    body[key]
        .as_str()
        .ok_or_else(|| error(400, &format!("the request needs `{key}`, a string")))
}

/// The machine choices of a request: its object `machine`, or none.
fn machine_choices(body: &Value) -> Result<Value, String> {
    match &body["machine"] {
        Value::Object(_) => Ok(body["machine"].clone()),
        Value::Null => Ok(json!({})),
        _ => Err("`machine` must be an object".into()),
    }
}
