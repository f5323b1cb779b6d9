//! `gpu16 debug`: a debugging session over a program, one command a line
//! (`command::parse`), each answered with text for people or one JSON object a line.
//!
//! The session replays the program's one deterministic run. The state "when cycle N
//! begins" is what the run leaves paused there (the watchdog's stop: its registers, memory,
//! tasks and the unfinished cores with their frame, IP and state), the same on every
//! backend. The session keeps a live machine with snapshots of that run (at most 64, a
//! doubling spacing apart: `gpu16_machine::live`): a move forward goes on from where it
//! stands, a move back from the snapshot before the target. The next stop is found on that
//! machine at a plain run's speed, noting where cores come to breakpoints and write watched
//! bytes; where the note is not the stop itself, a run from the snapshot before it with an
//! observer of every executed instruction (`search::Finder`) finds it exactly, and ends as
//! soon as it has its answer.
//!
//! Cycles: a breakpoint stops *before* the cycle its instruction executes in (the state
//! when that cycle begins); a watchpoint stops *after* the cycle of the write (the event's
//! `cycle` is the write's, the state the next cycle's); `step N` stops when cycle
//! `current + N` begins; `stepi K` stops after core K's next instruction. `step` and
//! `stepi` do not stop at breakpoints. A `continue` with nothing to stop at runs to the end
//! of the program or the watchdog (`--max-cycles`).

pub(crate) mod command;
pub mod complete;
pub(crate) mod expr;
pub(crate) mod search;

use crate::output;
use crate::output::location::Location;
use crate::Runner;
use command::{BreakSpec, Command};
use gpu16_asm::SourceMap;
use gpu16_machine::engine::isa::{Instr, MemOp};
use gpu16_machine::live::{Live, Status as LiveStatus};
use gpu16_machine::{
    Config, CoreWait, FrameKind, Observer, Program, RunError, RunFailure, RunReport, TaskRecord,
    UnfinishedCore,
};
use search::{
    BreakAt, Faulted, Finder, FirstStop, Hit, Interrupt, LastInstr, LastWrite, Locks, PartEnd,
};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::path::Path;

/// A breakpoint or watchpoint.
#[derive(Clone, Debug)]
enum Point {
    /// Instructions: every (frame, IP) the user's spec named, the only core it stops
    /// (`break ... core K`), if one, and its condition (`break ... if EXPR`), if one.
    Instr(Vec<(usize, u8)>, Option<u8>, Option<std::rc::Rc<str>>),
    /// Before a cycle.
    Cycle(u64),
    /// After a write of a byte.
    Watch(u16),
}

/// A stop a command adds to the points for one search: `until`'s (frame, IP, core) and
/// `finish`'s cycle (id 0 in the search, which no point has).
#[derive(Clone, Copy, Default)]
struct Temporary {
    at: Option<(usize, u8, u8)>,
    cycle: Option<u64>,
}

/// The machine where the session stands.
enum Snapshot {
    /// Stopped when `report.cycles` began, with the cores whose part had not ended.
    Paused {
        report: RunReport,
        cores: Vec<UnfinishedCore>,
    },
    /// The program ended.
    Ended(RunReport),
    /// The run failed (a fault, the watchdog of `--max-cycles`, a livelock, a backend),
    /// with the cores whose part had not ended when the failure's state was taken (for a
    /// fault, when its cycle began; the faulting core among them).
    Failed {
        failure: Box<RunFailure>,
        cores: Vec<UnfinishedCore>,
    },
}

impl Snapshot {
    fn report(&self) -> &RunReport {
        match self {
            Snapshot::Paused { report, .. } | Snapshot::Ended(report) => report,
            Snapshot::Failed { failure, .. } => &failure.state,
        }
    }
}

/// The most breakpoints and watchpoints a session holds at once ([`Session::MAX_POINTS`]).
pub(crate) const MAX_POINTS: usize = 10_000;

/// The deepest `source` files nest (a file that sources itself stops there).
pub(crate) const MAX_SOURCE_DEPTH: usize = 16;

/// The largest file `source` reads.
pub(crate) const MAX_SOURCE_BYTES: u64 = 1 << 20;

/// The most lines one `source` (with the files it sources) runs.
pub(crate) const MAX_SOURCED_LINES: usize = 10_000;

/// The longest line of a sourced file, as of a typed command.
pub(crate) const MAX_SOURCE_LINE: usize = 4096;

/// What the session answered to one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The text to print, each line ending in a newline. In text mode a blank line and
    /// `quit` print nothing; with JSON every line gets one object (`{}` for a blank line or
    /// a comment, `{"quit": true}` for `quit`).
    pub text: String,
    /// Whether the session is over (`quit`).
    pub quit: bool,
}

/// A debugging session over one program.
pub struct Session {
    program: Program,
    map: Option<SourceMap>,
    memory: Vec<u8>,
    runner: Runner,
    config: Config,
    json: bool,
    /// The breakpoints and watchpoints by id (ids grow, so this is also their order).
    points: BTreeMap<u64, Point>,
    next_id: u64,
    /// Whether `delete` with no argument asks first (a person at a terminal).
    confirm: bool,
    /// `delete` asked; the next line answers.
    confirming: bool,
    /// Whether any instruction frame has an `ld_sync` (else no lock is ever held, and
    /// `locks` needs no run).
    atomics: bool,
    /// The next cycle to execute.
    cycle: u64,
    /// The cycle whose breakpoints already stopped the session.
    skip: Option<u64>,
    /// The write a watch stop reported, (cycle, core): later writes of its cycle can stop
    /// the session too.
    watched: Option<(u64, u8)>,
    state: Snapshot,
    /// The state's task records are the live machine's, not its report's (whose `tasks`
    /// is empty): a copy of the whole log at every move would make each step cost the
    /// run's length ([`Session::task_records`]).
    tasks_live: bool,
    interrupt: Interrupt,
    /// Search for stops by seeing every instruction from the start, without the first
    /// fast run (the reference the fast search is tested against).
    exhaustive: bool,
    /// The current core (`core K`; a stop sets it to the core that stopped).
    current: u8,
    /// `display` expressions by id, shown after every command that moves the session.
    displays: BTreeMap<u64, String>,
    next_display: u64,
    /// The last command that moves the session, repeated by an empty line at a terminal.
    last_move: Option<String>,
    /// A live machine at or before where the session stands, which moves forward go on
    /// from instead of running from the start (`None` until the first, and after a move
    /// back or an interrupted one).
    live: Option<Box<dyn Live>>,
    /// The spacing the live machine's snapshots start with.
    snapshot_spacing: u64,
    /// How deep the `source` files being run nest.
    source_depth: usize,
    /// The lines the outermost `source` has run.
    sourced_lines: usize,
    /// The FILE:LINE of the sourced line being run, for the errors of a `source` there.
    sourcing_at: Option<String>,
    /// The interrupt flag cut the last command short ([`Session::interrupted`]).
    cut_short: bool,
}

/// A run was interrupted (Ctrl-C): the session stays where it was.
struct Interrupted;

/// A line of output: the JSON object or the text.
fn line(json: bool, v: Value, text: impl FnOnce() -> String) -> String {
    if json {
        format!("{v}\n")
    } else {
        let mut t = text();
        if !t.ends_with('\n') {
            t.push('\n');
        }
        t
    }
}

impl Session {
    /// The most breakpoints and watchpoints a session holds at once.
    pub const MAX_POINTS: usize = MAX_POINTS;

    /// A session on `program` (with its source map if it is assembly), starting from
    /// `memory`, run by `runner` under `config` (its `max_cycles` is the watchdog), answering
    /// in JSON if `json`. It stands before cycle 0.
    pub fn new(
        program: Program,
        map: Option<SourceMap>,
        memory: Vec<u8>,
        runner: Runner,
        config: Config,
        json: bool,
    ) -> Session {
        let atomics = (0..program.len()).any(|f| {
            matches!(program.kind(f), FrameKind::Instr { .. })
                && program.instr(f).instrs.iter().any(|i| {
                    matches!(
                        i,
                        Instr::Mem {
                            op: MemOp::LdSync,
                            ..
                        }
                    )
                })
        });
        let mut s = Session {
            atomics,
            program,
            map,
            memory,
            runner,
            config,
            json,
            points: BTreeMap::new(),
            next_id: 1,
            confirm: false,
            confirming: false,
            cycle: 0,
            skip: None,
            watched: None,
            state: Snapshot::Ended(RunReport::initial("", config, &[])),
            tasks_live: false,
            interrupt: Interrupt::default(),
            exhaustive: false,
            current: 0,
            displays: BTreeMap::new(),
            next_display: 1,
            last_move: None,
            live: None,
            snapshot_spacing: gpu16_machine::Snapshot::FIRST_SPACING,
            source_depth: 0,
            sourced_lines: 0,
            sourcing_at: None,
            cut_short: false,
        };
        if let Ok(state) = s.run_to(0) {
            s.state = state;
        }
        s
    }

    /// The flag that interrupts the session's runs while it is raised (the CLI raises it on
    /// Ctrl-C and lowers it before each command). An interrupted command answers an error
    /// and leaves the session where it was.
    pub fn interrupt(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        self.interrupt.0.clone()
    }

    /// How far the command under way has come, for another thread to show while the
    /// session's thread runs it (`gpu16 serve` streams it to the page): the run's last
    /// [`gpu16_machine::Progress`], or `None` before the command's first (each command
    /// starts afresh). A search runs on from where the session stands (or the snapshot
    /// before it), so its cycle climbs to the stop.
    pub fn progress(&self) -> impl Fn() -> Option<gpu16_machine::Progress> + Send + Sync + 'static {
        let reached = self.interrupt.1.clone();
        move || reached.last()
    }

    /// Make `delete` with no argument ask for a confirmation (`y` or `yes` on the next
    /// line) before it removes every breakpoint and watchpoint, as for a person at a
    /// terminal. Off by default: scripts and `--json` clients delete at once.
    pub fn confirm_delete_all(&mut self, confirm: bool) {
        self.confirm = confirm;
    }

    /// Find each stop by seeing every instruction from cycle 0, as the debugger did before
    /// its searches ran at a plain run's speed, and keep no snapshots (every move back and
    /// every search runs from cycle 0): slow, and the reference for tests that the fast
    /// search and the snapshots stop and stand in the same places. Set it before the
    /// first move.
    pub fn search_exhaustively(&mut self, exhaustive: bool) {
        self.exhaustive = exhaustive;
    }

    /// Take the live machine's snapshots `cycles` apart to start with (at least 1; by
    /// default [`gpu16_machine::Snapshot::FIRST_SPACING`]), for tests that make a short
    /// program go back from snapshots inside its tasks. Set it before the first move.
    pub fn snapshot_every(&mut self, cycles: u64) {
        self.snapshot_spacing = cycles.max(1);
    }

    /// Whether the interrupt flag cut the last command short: its run stopped (the
    /// session stays where it was), or the rest of a `source` file was not run. A flag
    /// raised during a command that it did not cut short (one that runs no program, or
    /// whose run was over) stopped nothing: the CLI then takes it as raised between
    /// commands.
    pub fn interrupted(&self) -> bool {
        self.cut_short
    }

    /// Answer one line.
    pub fn execute(&mut self, input: &str) -> Reply {
        self.interrupt.1.forget();
        if self.source_depth == 0 {
            self.cut_short = false;
        }
        if std::mem::take(&mut self.confirming) {
            let text = match input.trim() {
                "y" | "yes" => self.delete_all(),
                _ => line(self.json, json!({ "deleted": [] }), || {
                    "nothing deleted".to_string()
                }),
            };
            return self.reply(text);
        }
        // At a terminal, an empty line repeats the last command that moved the session.
        let input = match &self.last_move {
            Some(last) if self.confirm && !self.json && input.trim().is_empty() => last.clone(),
            _ => input.to_string(),
        };
        let input = input.as_str();
        let command = match command::parse(input) {
            Ok(Some(c)) => c,
            Ok(None) => return self.reply(self.silent(json!({}))),
            Err(e) => return self.reply(self.error(&e)),
        };
        let text = match command {
            Command::Quit => {
                return Reply {
                    text: self.silent(json!({"quit": true})),
                    quit: true,
                }
            }
            Command::Source(file) => return self.source(Path::new(&file)),
            Command::SetMemory(addr, byte) => self.moved(|s| s.set_memory(addr, byte)),
            Command::SetRegister(core, r) => {
                let k = core.unwrap_or(self.current);
                self.error(&format!(
                    "core {k} r{r} cannot be set: the session replays the program's one run \
                     (from cycle 0 or a snapshot of it), and a core's registers come only \
                     from its program; nothing was changed"
                ))
            }
            Command::Help => line(self.json, json!({"help": command::HELP}), || {
                command::HELP.to_string()
            }),
            Command::Break(spec, core, when) => self.add_break(spec, core, when),
            Command::Watch(addr) => self.add(Point::Watch(addr)),
            Command::Delete(n) => self.delete(n),
            Command::DeleteAll => self.delete_all(),
            Command::Continue => self.moved(Self::cont),
            Command::Step(n) => self.moved(|s| s.step(n)),
            Command::Stepi(core) => self.moved(|s| s.stepi(core)),
            Command::Restart => self.moved(Self::restart),
            Command::ReverseStep(n) => self.moved(|s| s.reverse_step(n)),
            Command::ReverseStepi(core) => self.moved(|s| s.reverse_stepi(core)),
            Command::ReverseContinue => self.moved(Self::reverse_continue),
            Command::ReverseFinish => self.moved(Self::reverse_finish),
            Command::Regs(core) => self.regs(core),
            Command::Mem(addr, len) => self.mem(addr, len),
            Command::Locks => self.moved(|s| s.locks()),
            Command::Tasks => self.moved(Self::tasks),
            Command::Where => self.where_(),
            Command::Disasm(frame) => self.disasm(frame),
            Command::StepiCurrent => self.moved(|s| s.stepi(s.current)),
            Command::Core(None) => {
                let k = self.current;
                line(self.json, json!({"core": k}), || {
                    format!("current core: {k}")
                })
            }
            Command::Core(Some(k)) => {
                self.current = k;
                line(self.json, json!({"core": k}), || {
                    format!("current core: {k}")
                })
            }
            Command::Print(text) => self.print(&text),
            Command::Display(Some(text)) => self.display(text),
            Command::Display(None) => self.displayed(),
            Command::Undisplay(n) => match self.displays.remove(&n) {
                Some(_) => line(self.json, json!({"undisplayed": n}), || {
                    format!("display {n} removed")
                }),
                None => self.error(&format!("there is no display {n}")),
            },
            Command::Info(what) => match what {
                command::Info::Breakpoints => self.info_points(),
                command::Info::Locks => self.moved(|s| s.locks()),
                command::Info::Tasks => self.moved(Self::tasks),
                command::Info::Cores => self.where_(),
                command::Info::Display => self.displayed(),
            },
            Command::Finish => self.moved(Self::finish),
            Command::When(target) => self.moved(|s| s.when(target)),
            Command::Until(ip) => self.moved(|s| s.until(ip)),
        };
        let moves = matches!(
            command_name(input),
            "continue"
                | "c"
                | "step"
                | "s"
                | "stepi"
                | "si"
                | "reverse-step"
                | "rs"
                | "reverse-stepi"
                | "rsi"
                | "reverse-continue"
                | "rc"
                | "finish"
                | "until"
                | "u"
        );
        let text = if moves {
            self.last_move = Some(input.to_string());
            self.with_displays(text)
        } else {
            text
        };
        self.reply(text)
    }

    /// What the session's command line can be completed with (its program's labels and
    /// source files): the terminal's tab completion.
    pub fn completer(&self) -> complete::Completer {
        complete::Completer::new(self.map.as_ref())
    }

    /// Run the commands of file `path`, one a line, as if typed (`source FILE`, `gpu16 debug
    /// -x FILE`): blank lines and `#` comments are skipped (a blank line does not repeat a
    /// command), `delete` does not ask, and an error names the file and line
    /// (`FILE:LINE: message`). The answer is the commands' answers, in text one after the
    /// other, in JSON one object `{"source": FILE, "replies": [...]}`. Bounded: a file
    /// larger than `MAX_SOURCE_BYTES`, a line longer than `MAX_SOURCE_LINE`, nesting
    /// deeper than `MAX_SOURCE_DEPTH` and more than `MAX_SOURCED_LINES` lines in all
    /// are errors; `quit` in the file ends the session; Ctrl-C stops the file.
    pub fn source(&mut self, path: &Path) -> Reply {
        if self.source_depth == 0 {
            self.cut_short = false;
        }
        // The file as JSON gives it, and as a message shows it (escaped).
        let name = path.display().to_string();
        let shown = crate::shown::path(path);
        // The line that sources this file, if a file's: its errors name it.
        let caller = self.sourcing_at.take();
        let at = caller.as_ref().map_or(String::new(), |a| format!("{a}: "));
        if self.source_depth >= MAX_SOURCE_DEPTH {
            return self.reply(self.error(&format!(
                "{at}source {shown}: files nest more than {MAX_SOURCE_DEPTH} deep (one that \
                 sources itself?); not run"
            )));
        }
        let text = match read_command_file(path) {
            Ok(t) => t,
            Err(e) => return self.reply(self.error(&format!("{at}source {shown}: {e}"))),
        };
        if self.source_depth == 0 {
            self.sourced_lines = 0;
        }
        self.source_depth += 1;
        let confirm = std::mem::replace(&mut self.confirm, false);
        let mut replies: Vec<Value> = Vec::new();
        let mut out = String::new();
        let mut quit = false;
        for (i, l) in text.lines().enumerate() {
            let at = format!("{shown}:{}", i + 1);
            let trimmed = l.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let reply = if self.sourced_lines > MAX_SOURCED_LINES {
                // Said already, in the file that came to the limit.
                break;
            } else if self.sourced_lines == MAX_SOURCED_LINES {
                self.sourced_lines += 1;
                let e = format!(
                    "{at}: more than {MAX_SOURCED_LINES} sourced lines in all; the rest is \
                     not run"
                );
                self.push_reply(&mut replies, &mut out, self.error(&e), None);
                break;
            } else if l.len() > MAX_SOURCE_LINE {
                Reply {
                    text: self.error(&format!(
                        "a command line is at most {MAX_SOURCE_LINE} bytes"
                    )),
                    quit: false,
                }
            } else {
                self.sourced_lines += 1;
                self.sourcing_at = Some(at.clone());
                let reply = self.execute(l);
                self.sourcing_at = None;
                reply
            };
            // A nested `source` names the lines of its errors itself.
            let nested = command_name(l) == "source";
            self.push_reply(
                &mut replies,
                &mut out,
                reply.text,
                (!nested).then_some(&*at),
            );
            if reply.quit {
                quit = true;
                break;
            }
            if self.interrupt.raised() {
                self.cut_short = true;
                let e = self.error(&format!(
                    "{at}: interrupted; the rest of {shown} is not run"
                ));
                self.push_reply(&mut replies, &mut out, e, None);
                break;
            }
        }
        self.confirm = confirm;
        self.source_depth -= 1;
        let text = if self.json {
            format!("{}\n", json!({"source": name, "replies": replies}))
        } else {
            out
        };
        Reply { text, quit }
    }

    /// Add one answer of a sourced line to the JSON list and the text, its error (if it is
    /// one) prefixed with `at` (FILE:LINE).
    fn push_reply(
        &self,
        replies: &mut Vec<Value>,
        out: &mut String,
        text: String,
        at: Option<&str>,
    ) {
        if self.json {
            for l in text.lines() {
                let mut v: Value = serde_json::from_str(l).unwrap_or_else(|_| json!({"text": l}));
                if let (Some(at), Some(e)) = (at, v.get("error").and_then(Value::as_str)) {
                    v["error"] = json!(format!("{at}: {e}"));
                }
                replies.push(v);
            }
        } else {
            for l in text.split_inclusive('\n') {
                match (at, l.strip_prefix("error: ")) {
                    (Some(at), Some(e)) => {
                        let _ = write!(out, "error: {at}: {e}");
                    }
                    _ => out.push_str(l),
                }
            }
        }
    }

    /// A stop's answer with the `display` expressions' values: in JSON a `display` key of
    /// the event's object, in text a line each.
    fn with_displays(&self, text: String) -> String {
        if self.displays.is_empty() || text.is_empty() {
            return text;
        }
        let values: Vec<(u64, &str, Result<i64, String>)> = self
            .displays
            .iter()
            .map(|(&id, e)| (id, e.as_str(), self.evaluate(e)))
            .collect();
        if self.json {
            let Ok(mut v) = serde_json::from_str::<Value>(text.trim_end()) else {
                return text;
            };
            if v.get("error").is_some() {
                return text;
            }
            v["display"] = values
                .iter()
                .map(|(id, e, r)| match r {
                    Ok(x) => json!({"display": id, "expr": e, "value": x}),
                    Err(m) => json!({"display": id, "expr": e, "error": m}),
                })
                .collect();
            format!("{v}\n")
        } else {
            let mut t = text;
            for (id, e, r) in values {
                let _ = match r {
                    Ok(x) => writeln!(t, "{id}: {e} = {x} (0x{x:x})"),
                    Err(m) => writeln!(t, "{id}: {e}: {m}"),
                };
            }
            t
        }
    }

    /// The value of expression `text` where the session stands.
    fn evaluate(&self, text: &str) -> Result<i64, String> {
        let state = SessionState {
            report: self.state.report(),
            cycle: self.cycle,
            core: self.current,
        };
        expr::evaluate(text, &state)
    }

    fn print(&self, text: &str) -> String {
        match self.evaluate(text) {
            Ok(v) => line(self.json, json!({"expr": text, "value": v}), || {
                format!("{text} = {v} (0x{v:x})")
            }),
            Err(e) => self.error(&e),
        }
    }

    /// The most `display` expressions a session keeps.
    const MAX_DISPLAYS: usize = 100;

    fn display(&mut self, text: String) -> String {
        if let Err(e) = expr::check(&text) {
            return self.error(&e);
        }
        if self.displays.len() >= Self::MAX_DISPLAYS {
            return self.error(&format!(
                "a session keeps at most {} displays; undisplay some first",
                Self::MAX_DISPLAYS
            ));
        }
        let id = self.next_display;
        self.next_display += 1;
        let now = self.evaluate(&text);
        let mut v = json!({"display": id, "expr": &text});
        match &now {
            Ok(x) => v["value"] = json!(x),
            Err(m) => v["error"] = json!(m),
        }
        let shown = match now {
            Ok(x) => format!("{id}: {text} = {x} (0x{x:x})"),
            Err(m) => format!("{id}: {text}: {m}"),
        };
        self.displays.insert(id, text);
        line(self.json, v, || shown)
    }

    /// Every `display` expression and its value now.
    fn displayed(&self) -> String {
        let list: Vec<Value> = self
            .displays
            .iter()
            .map(|(&id, e)| match self.evaluate(e) {
                Ok(x) => json!({"display": id, "expr": e, "value": x}),
                Err(m) => json!({"display": id, "expr": e, "error": m}),
            })
            .collect();
        line(self.json, json!({"displays": list}), || {
            let mut t = String::new();
            for d in &list {
                let _ = match d.get("value") {
                    Some(x) => writeln!(
                        t,
                        "{}: {} = {x}",
                        d["display"],
                        d["expr"].as_str().unwrap_or("")
                    ),
                    None => writeln!(
                        t,
                        "{}: {}: {}",
                        d["display"],
                        d["expr"].as_str().unwrap_or(""),
                        d["error"].as_str().unwrap_or("")
                    ),
                };
            }
            if t.is_empty() {
                t.push_str("no displays");
            }
            t
        })
    }

    /// `info breakpoints`: every breakpoint and watchpoint.
    fn info_points(&self) -> String {
        let list: Vec<Value> = self
            .points
            .iter()
            .map(|(&id, p)| match p {
                Point::Instr(at, only, when) => {
                    let mut v = json!({"breakpoint": id, "locations":
                        at.iter().map(|&(f, i)| json!({"frame": f, "ip": i})).collect::<Vec<_>>()});
                    if let Some(k) = only {
                        v["core"] = json!(k);
                    }
                    if let Some(e) = when {
                        v["if"] = json!(&**e);
                    }
                    v
                }
                Point::Cycle(c) => json!({"breakpoint": id, "cycle": c}),
                Point::Watch(a) => json!({"watchpoint": id, "addr": a}),
            })
            .collect();
        line(self.json, json!({"points": list}), || {
            let mut t = String::new();
            for (&id, p) in &self.points {
                let _ = match p {
                    Point::Instr(at, only, when) => {
                        let (f, i) = at[0];
                        let when = when.as_ref().map_or(String::new(), |e| format!(", if {e}"));
                        let more = if at.len() > 1 {
                            format!(" and {} more", at.len() - 1)
                        } else {
                            String::new()
                        };
                        let only = only.map_or(String::new(), |k| format!(", core {k} only"));
                        writeln!(t, "{id}: break at frame {f}, IP {i}{more}{only}{when}")
                    }
                    Point::Cycle(c) => writeln!(t, "{id}: break at cycle {c}"),
                    Point::Watch(a) => writeln!(t, "{id}: watch 0x{a:03x}"),
                };
            }
            if t.is_empty() {
                t.push_str("no breakpoints or watchpoints");
            }
            t
        })
    }

    /// The answer of a command that runs the program, or the error of an interrupted one.
    fn moved(&mut self, f: impl FnOnce(&mut Self) -> Result<String, Interrupted>) -> String {
        f(self).unwrap_or_else(|Interrupted| {
            self.cut_short = true;
            self.error(&format!(
                "interrupted; the session stays at cycle {}",
                self.cycle
            ))
        })
    }

    /// `v` in JSON mode; nothing in text mode.
    fn silent(&self, v: Value) -> String {
        if self.json {
            format!("{v}\n")
        } else {
            String::new()
        }
    }

    fn reply(&self, text: String) -> Reply {
        Reply { text, quit: false }
    }

    /// The answer to a line that is not a command: `error: MESSAGE`, or `{"error": ...}`.
    pub fn error(&self, message: &str) -> String {
        line(self.json, json!({ "error": message }), || {
            format!("error: {message}")
        })
    }

    /// The machine when cycle `limit` begins (or the end or failure before it).
    fn run_to(&self, limit: u64) -> Result<Snapshot, Interrupted> {
        let config = Config {
            max_cycles: limit.min(self.config.max_cycles),
            ..self.config
        };
        // The reports echo the session's configuration, not the limit of this run.
        let echo = |r: &mut RunReport| r.config.max_cycles = self.config.max_cycles;
        let mut interrupt = self.interrupt.clone();
        let outcome = crate::run_observed(
            self.runner,
            &self.program,
            &self.memory,
            &config,
            &mut interrupt,
        );
        Ok(match outcome {
            Ok(mut report) => {
                echo(&mut report);
                Snapshot::Ended(report)
            }
            Err(f) if matches!(f.error, RunError::Stopped { .. }) => return Err(Interrupted),
            Err(f) => match f.error {
                RunError::Watchdog {
                    limit, ref cores, ..
                } if limit < self.config.max_cycles => {
                    let mut report = f.state;
                    echo(&mut report);
                    Snapshot::Paused {
                        cores: cores.clone(),
                        report,
                    }
                }
                _ => {
                    let mut f = f;
                    echo(&mut f.state);
                    let cores = match f.error {
                        // The state of a fault is the machine when its cycle began: the
                        // cores then are those of a run the watchdog stops there.
                        RunError::Fault { cycle, .. } => self.cores_when(cycle)?,
                        _ => output::location::unfinished(&f.error).to_vec(),
                    };
                    Snapshot::Failed { failure: f, cores }
                }
            },
        })
    }

    /// [`Session::run_to`] `limit`, on the session's live machine: from where it stands
    /// if that is at or before `limit` (a move forward costs the cycles moved), else from
    /// its latest snapshot at or before `limit` (a move back costs at most the snapshots'
    /// spacing), else on a new one from the start. Where the JIT cannot start, the plain
    /// way.
    fn move_to(&mut self, limit: u64) -> Result<Snapshot, Interrupted> {
        if !self.live_before(limit) {
            self.tasks_live = false;
            return self.run_to(limit);
        }
        let Some(m) = self.live.as_mut() else {
            unreachable!("live_before made one")
        };
        let status = m.run_until(limit.min(self.config.max_cycles));
        if self.interrupt.raised() {
            self.live = None;
            return Err(Interrupted);
        }
        // A paused state holds no task records: the live machine has them
        // ([`Session::task_records`]), so a move costs no copy of the task log. Where the
        // run is over, the session's report has them (the end reports them all), and the
        // machine keeps its copy to go back from there.
        self.tasks_live = matches!(status, LiveStatus::Paused(_));
        let report = if self.tasks_live {
            m.report_without_tasks()
        } else {
            m.report()
        };
        Ok(match status {
            LiveStatus::Paused(_) => Snapshot::Paused {
                report: report.unwrap_or_else(|f| f.state),
                cores: m.unfinished(),
            },
            LiveStatus::Ended => Snapshot::Ended(report.unwrap_or_else(|f| f.state)),
            LiveStatus::Failed => {
                let failure = match report {
                    Err(f) => f,
                    Ok(r) => unreachable!("a failed machine reports a failure, not {}", r.cycles),
                };
                let cores = match failure.error {
                    // The state of a fault is the machine when its cycle began: the
                    // cores then are those of a run the watchdog stops there.
                    RunError::Fault { cycle, .. } => self.cores_when(cycle)?,
                    _ => output::location::unfinished(&failure.error).to_vec(),
                };
                Snapshot::Failed { failure, cores }
            }
        })
    }

    /// Make the session's live machine stand at or before `limit`, where it can: as it
    /// is, gone back to a snapshot, or new from the start (keeping snapshots). `false`
    /// where no live machine can be made (the JIT cannot start).
    fn live_before(&mut self, limit: u64) -> bool {
        if let Some(m) = self.live.as_mut() {
            let here = match m.status() {
                LiveStatus::Paused(c) => c <= limit,
                // A run over before `limit` stands there for good (one over in `limit`
                // is not: its state is the failure's, not the machine as `limit` begins).
                LiveStatus::Ended | LiveStatus::Failed => m.cycle() < limit,
            };
            if here || m.go_back(limit).is_some() {
                return true;
            }
            self.live = None;
        }
        match crate::live::machine(
            self.runner,
            self.program.clone(),
            &self.memory,
            &self.config,
        ) {
            Ok(mut m) => {
                m.set_interrupt(self.interrupt.0.clone());
                let reached = self.interrupt.1.clone();
                m.set_progress(Box::new(move |p| reached.note(p)));
                m.keep_events(false);
                if !self.exhaustive {
                    m.keep_snapshots(self.snapshot_spacing);
                }
                self.live = Some(m);
                true
            }
            Err(_) => false,
        }
    }

    /// A run of `observer` under `config` that needs nothing before cycle `from`: from the
    /// live machine's latest snapshot at or before it, else from cycle 0.
    fn forked<O: Observer>(
        &self,
        config: &Config,
        observer: &mut O,
        from: u64,
    ) -> Result<RunReport, Box<RunFailure>> {
        let snapshot = self
            .live
            .as_ref()
            .and_then(|m| m.snapshot_at_or_before(from));
        if let Some(s) = snapshot {
            if let Some(outcome) = self
                .runner
                .resume_observed(&self.program, s, config, observer)
            {
                return outcome;
            }
        }
        crate::run_observed(self.runner, &self.program, &self.memory, config, observer)
    }

    /// The cores whose part had not ended when `cycle` began (none if the run ended or
    /// failed before).
    fn cores_when(&self, cycle: u64) -> Result<Vec<UnfinishedCore>, Interrupted> {
        let config = Config {
            max_cycles: cycle,
            tasks: gpu16_machine::TaskLog::None,
            ..self.config
        };
        let mut interrupt = self.interrupt.clone();
        match self.forked(&config, &mut interrupt, cycle) {
            Err(f) => match f.error {
                RunError::Stopped { .. } => Err(Interrupted),
                RunError::Watchdog { cores, .. } => Ok(cores),
                _ => Ok(Vec::new()),
            },
            Ok(_) => Ok(Vec::new()),
        }
    }

    /// Move to the machine when cycle `limit` begins; no stop is behind it yet.
    fn go(&mut self, limit: u64) -> Result<(), Interrupted> {
        self.state = self.move_to(limit)?;
        self.skip = None;
        self.watched = None;
        self.cycle = match &self.state {
            Snapshot::Paused { report, .. } | Snapshot::Ended(report) => report.cycles,
            Snapshot::Failed { failure, .. } => failure.state.cycles,
        };
        Ok(())
    }

    fn location(&self, frame: usize, ip: u8) -> Option<Location> {
        self.map.as_ref().and_then(|m| Location::of(m, frame, ip))
    }

    fn add(&mut self, point: Point) -> String {
        if self.points.len() >= MAX_POINTS {
            return self.error(&format!(
                "a session holds at most {MAX_POINTS} breakpoints and watchpoints; \
                 delete some first"
            ));
        }
        let id = self.next_id;
        self.next_id += 1;
        let (v, text) = match &point {
            Point::Instr(locations, only, when) => {
                let mut v = json!({
                    "breakpoint": id,
                    "locations": locations.iter().map(|&(f, i)| json!({"frame": f, "ip": i}))
                        .collect::<Vec<_>>(),
                });
                if let Some(k) = only {
                    v["core"] = json!(k);
                }
                if let Some(e) = when {
                    v["if"] = json!(&**e);
                }
                // A line repeated in many frames (an included file, a .repeat) has many
                // locations: the text names the first few.
                const SHOWN: usize = 4;
                let mut text = format!(
                    "breakpoint {id} at {}",
                    locations
                        .iter()
                        .take(SHOWN)
                        .map(|&(f, i)| match self.location(f, i) {
                            Some(l) => format!("frame {f}, IP {i} ({l})"),
                            None => format!("frame {f}, IP {i}"),
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                );
                if locations.len() > SHOWN {
                    let _ = write!(text, "; and {} more locations", locations.len() - SHOWN);
                }
                if let Some(k) = only {
                    let _ = write!(text, ", core {k} only");
                }
                if let Some(e) = when {
                    let _ = write!(text, ", if {e}");
                }
                (v, text)
            }
            Point::Cycle(c) => (
                json!({"breakpoint": id, "cycle": c}),
                format!("breakpoint {id} at cycle {c}"),
            ),
            Point::Watch(a) => (
                json!({"watchpoint": id, "addr": a}),
                format!("watchpoint {id} at 0x{a:03x}"),
            ),
        };
        self.points.insert(id, point);
        line(self.json, v, || text)
    }

    fn add_break(&mut self, spec: BreakSpec, core: Option<u8>, when: Option<String>) -> String {
        if let Some(e) = &when {
            if let Err(m) = expr::check(e) {
                return self.error(&format!("break: {m}"));
            }
            if expr::reads_other_cores(e) {
                return self.error(
                    "break: a condition reads the stopping core's registers (rN), memory, \
                     cycle and core, not cK.rN",
                );
            }
        }
        match self.resolve(&spec) {
            Ok(Point::Instr(at, _, _)) => self.add(Point::Instr(at, core, when.map(Into::into))),
            Ok(_) if core.is_some() || when.is_some() => self
                .error("a cycle breakpoint stops every core, unconditionally: no `core K` or `if`"),
            Ok(point) => self.add(point),
            Err(e) => self.error(&e),
        }
    }

    /// The instructions or cycle a breakpoint names, checked against the program.
    fn resolve(&self, spec: &BreakSpec) -> Result<Point, String> {
        let instr_frame = |frame: usize| -> Result<(), String> {
            if frame >= self.program.len() {
                return Err(format!(
                    "there is no frame {frame}: the program has {} frames",
                    self.program.len()
                ));
            }
            match self.program.kind(frame) {
                FrameKind::Instr { .. } => Ok(()),
                FrameKind::Control => Err(format!(
                    "frame {frame} is a control frame; no core executes it"
                )),
            }
        };
        let map = || {
            self.map.as_ref().ok_or_else(|| {
                "file:line and frame:label breakpoints need an assembly (.s) program".to_string()
            })
        };
        match spec {
            BreakSpec::Cycle(c) => Ok(Point::Cycle(*c)),
            BreakSpec::Instr { frame, ip } => {
                instr_frame(*frame)?;
                Ok(Point::Instr(vec![(*frame, *ip)], None, None))
            }
            BreakSpec::Line { file, line } => {
                let map = map()?;
                let wanted = Path::new(file);
                let mut found = Vec::new();
                for (f, source) in map.frames.iter().enumerate() {
                    for (ip, span) in source.slots.iter().enumerate() {
                        let named = Path::new(&*span.file);
                        if span.line == *line
                            && (named.ends_with(wanted) || wanted.ends_with(named))
                        {
                            found.push((f, ip as u8));
                        }
                    }
                }
                if found.is_empty() {
                    Err(format!(
                        "no instruction is on line {line} of {}",
                        crate::shown::text(file)
                    ))
                } else {
                    Ok(Point::Instr(found, None, None))
                }
            }
            BreakSpec::Label { frame, label } => {
                instr_frame(*frame)?;
                let map = map()?;
                let ip = label_ip(map, *frame, label)
                    .ok_or_else(|| format!("frame {frame} has no label {label:?}"))?;
                Ok(Point::Instr(vec![(*frame, ip)], None, None))
            }
        }
    }

    /// `delete N`, or `delete` (every point; asks first if the session confirms).
    fn delete(&mut self, n: Option<u64>) -> String {
        match n {
            None if self.confirm && !self.points.is_empty() => {
                self.confirming = true;
                let n = self.points.len();
                let v = json!({"confirm": format!("delete all {n}? (y or n)")});
                line(self.json, v, || {
                    format!("delete all {n} breakpoints and watchpoints? (y or n)")
                })
            }
            None => self.delete_all(),
            Some(n) => match self.points.remove(&n) {
                Some(_) => self.deleted(vec![n]),
                None => self.error(&format!("there is no breakpoint or watchpoint {n}")),
            },
        }
    }

    /// Remove every breakpoint and watchpoint.
    fn delete_all(&mut self) -> String {
        let deleted = std::mem::take(&mut self.points).into_keys().collect();
        self.deleted(deleted)
    }

    fn deleted(&self, deleted: Vec<u64>) -> String {
        let text = match deleted.len() {
            0 => "nothing to delete".to_string(),
            _ => format!(
                "deleted {}",
                deleted
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        line(self.json, json!({ "deleted": deleted }), || text)
    }

    fn finished(&self) -> bool {
        !matches!(self.state, Snapshot::Paused { .. })
    }

    /// Run with `finder` from the start to the end or the watchdog (or `limit`, if lower).
    /// If the run ends in a fault the finder is told ([`Finder::fault`]), and the fault is
    /// returned.
    fn search(&mut self, finder: &mut Finder, limit: u64) -> Result<Option<Faulted>, Interrupted> {
        let start = if self.exhaustive {
            0
        } else if finder.breaks.is_empty() && finder.watches.is_empty() {
            finder.from
        } else {
            match self.first_stop(finder, limit)? {
                Some((_, Some(hit))) => {
                    finder.found(hit);
                    return Ok(None);
                }
                Some((start, None)) => start,
                // No breakpoint or watch is come to, and the run does not fault.
                None => return Ok(None),
            }
        };
        finder.start_at(start);
        let config = Config {
            max_cycles: limit.min(self.config.max_cycles),
            tasks: gpu16_machine::TaskLog::None,
            ..self.config
        };
        let mut both = (&mut *finder, self.interrupt.clone());
        let outcome = self.forked(&config, &mut both, start);
        if self.interrupt.raised() {
            return Err(Interrupted);
        }
        let Err(f) = outcome else { return Ok(None) };
        let RunError::Fault {
            cycle,
            core,
            frame,
            ip,
            addr,
            ..
        } = f.error
        else {
            return Ok(None);
        };
        // The byte a faulting store would have written: its value register when the
        // fault's cycle began (the failure's state), which only the core itself changes.
        let write = match (self.program.kind(frame), addr) {
            (FrameKind::Instr { .. }, Some(addr)) => {
                match self.program.instr(frame).instrs[usize::from(ip) % 16] {
                    Instr::Mem {
                        op: MemOp::St | MemOp::StSync,
                        r,
                        ..
                    } => f
                        .state
                        .registers
                        .get(usize::from(core))
                        .map(|regs| (addr, regs[usize::from(r & 0xF)])),
                    _ => None,
                }
            }
            _ => None,
        };
        let fault = Faulted {
            cycle,
            core,
            frame,
            ip,
            write,
            regs: f.state.registers[usize::from(core & 0xF)],
        };
        finder.fault(&fault);
        Ok(Some(fault))
    }

    /// A lower bound of the cycle `finder`'s search stops in, from a run at full speed that
    /// notes where cores come to its breakpoints and write its watched bytes: the first
    /// such cycle, or the cycle of a fault ending the run first (a breakpoint on the
    /// faulting instruction, or a watch on the byte it would write, stops there). `None`
    /// where neither happens below `limit`. The MCST dialect's machine notes no stops: its
    /// search starts where the finder's does.
    ///
    /// With the cycle comes the search's hit itself where the first run found it exactly:
    /// a core came first to a breakpoint's instruction that is a register instruction
    /// (which executes in the cycle it is come to, never stalling), at a place whose
    /// breakpoints stop every core unconditionally, with no watch and no fault before.
    fn first_stop(
        &mut self,
        finder: &Finder,
        limit: u64,
    ) -> Result<Option<(u64, Option<Hit>)>, Interrupted> {
        if self.program.dialect() != gpu16_machine::Dialect::Spec {
            return Ok(Some((finder.from, None)));
        }
        let config = Config {
            max_cycles: limit.min(self.config.max_cycles),
            tasks: gpu16_machine::TaskLog::None,
            ..self.config
        };
        let stops = finder.stops();
        // The first cycle whose stops count: writes of a watch stop's cycle, behind the
        // session, may still stop it.
        let earliest = stops.also.map_or(stops.from, |also| also.min(stops.from));
        let (note, fault) = if self.live_before(earliest) {
            // On the session's live machine, which pauses at the first snapshot after a
            // stop is noted: the session then goes back to the stop from the snapshot
            // before it, so the search costs about one run from here.
            let Some(m) = self.live.as_mut() else {
                unreachable!("live_before made one")
            };
            m.run_until(earliest);
            m.set_stops(Some(stops));
            let status = m.run_until(config.max_cycles);
            let note = m.stop_noted();
            m.set_stops(None);
            if self.interrupt.raised() {
                self.live = None;
                return Err(Interrupted);
            }
            let fault = match (status, m.report_without_tasks()) {
                (LiveStatus::Failed, Err(f)) => match f.error {
                    RunError::Fault { cycle, .. } => Some(cycle),
                    _ => None,
                },
                _ => None,
            };
            (note, fault)
        } else {
            let mut first = FirstStop { stops, first: None };
            let mut both = (&mut first, self.interrupt.clone());
            let outcome =
                crate::run_observed(self.runner, &self.program, &self.memory, &config, &mut both);
            if self.interrupt.raised() {
                return Err(Interrupted);
            }
            let fault = match outcome {
                Err(f) => match f.error {
                    RunError::Fault { cycle, .. } => Some(cycle),
                    _ => None,
                },
                Ok(_) => None,
            };
            (first.first, fault)
        };
        let exact = note.and_then(|n| {
            let (core, frame, ip) = n.at?;
            if !finder.watches.is_empty()
                || finder.core.is_some()
                || fault.is_some_and(|f| f <= n.cycle)
                || !matches!(self.program.kind(frame), FrameKind::Instr { .. })
                || self.program.instr(frame).instrs[usize::from(ip & 0xF)].is_memory()
            {
                return None;
            }
            let here = finder.breaks.get(&(frame, ip))?;
            if here.iter().any(|b| b.core.is_some() || b.when.is_some()) {
                return None;
            }
            Some(Hit::Break {
                id: here.first()?.id,
                cycle: n.cycle,
                core,
                frame,
                ip,
            })
        });
        let cycle = match (note.map(|n| n.cycle), fault) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Ok(cycle.map(|c| (c, exact)))
    }

    fn cont(&mut self) -> Result<String, Interrupted> {
        self.cont_with(Temporary::default())
    }

    /// `until IP`: on to the current core's next coming to IP of its frame, or an earlier
    /// stop.
    fn until(&mut self, ip: u8) -> Result<String, Interrupted> {
        if self.finished() {
            return Ok(self.final_event());
        }
        let k = self.current;
        let Some(frame) = self.core_state(k)["frame"].as_u64() else {
            return Ok(self.error(&format!("core {k} runs no frame here; nothing was run")));
        };
        self.cont_with(Temporary {
            at: Some((frame as usize, ip, k)),
            cycle: None,
        })
    }

    /// `finish`: on to when the current core's part has ended (the cycle after its last
    /// instruction begins), or an earlier stop.
    fn finish(&mut self) -> Result<String, Interrupted> {
        if self.finished() {
            return Ok(self.final_event());
        }
        let k = self.current;
        if self.core_state(k)["frame"].as_u64().is_none() {
            return Ok(self.error(&format!("core {k} runs no frame here; nothing was run")));
        }
        let config = Config {
            max_cycles: self.config.max_cycles,
            tasks: gpu16_machine::TaskLog::None,
            ..self.config
        };
        let mut end = PartEnd {
            core: k,
            at: self.cycle,
            end: None,
        };
        let mut both = (&mut end, self.interrupt.clone());
        let _ = self.forked(&config, &mut both, self.cycle);
        if self.interrupt.raised() {
            return Err(Interrupted);
        }
        // A part that never ends (a fault, the watchdog first): on to wherever the run goes.
        self.cont_with(Temporary {
            at: None,
            cycle: end.end.map(|e| e.saturating_add(1)),
        })
    }

    fn cont_with(&mut self, temporary: Temporary) -> Result<String, Interrupted> {
        if self.finished() {
            return Ok(self.final_event());
        }
        let mut cycle_break: Option<(u64, u64)> = None;
        if let Some(c) = temporary.cycle.filter(|&c| c > self.cycle) {
            cycle_break = Some((c, 0));
        }
        let mut finder = Finder::new(self.cycle, self.skip, &self.memory);
        finder.watch_after = self.watched;
        if let Some((frame, ip, k)) = temporary.at {
            finder.breaks.entry((frame, ip)).or_default().push(BreakAt {
                id: 0,
                core: Some(k),
                when: None,
            });
        }
        for (&id, point) in &self.points {
            match point {
                Point::Cycle(c)
                    if *c > self.cycle || (*c == self.cycle && self.skip != Some(*c)) =>
                {
                    if cycle_break.is_none_or(|(b, _)| *c < b) {
                        cycle_break = Some((*c, id));
                    }
                }
                Point::Cycle(_) => {}
                Point::Instr(locations, only, when) => {
                    for &l in locations {
                        finder.breaks.entry(l).or_default().push(BreakAt {
                            id,
                            core: *only,
                            when: when.clone(),
                        });
                    }
                }
                Point::Watch(a) => {
                    finder.watches.entry(*a).or_insert(id);
                }
            }
        }
        let mut hit = None;
        if !finder.breaks.is_empty() || !finder.watches.is_empty() {
            self.search(&mut finder, cycle_break.map_or(u64::MAX, |(c, _)| c))?;
            hit = finder.hit();
        }
        match (hit, cycle_break) {
            (Some(hit), _) => self.stop_at(hit),
            (None, Some((c, 0))) => {
                self.go(c)?;
                if self.finished() {
                    return Ok(self.final_event());
                }
                let k = self.current;
                let v = json!({"event": "finish", "cycle": c, "core": k});
                Ok(line(self.json, v, || {
                    format!("core {k}'s part has ended: stopped at cycle {c}")
                }))
            }
            (None, Some((c, id))) => {
                self.go(c)?;
                if self.finished() {
                    return Ok(self.final_event());
                }
                self.skip = Some(c);
                let v = json!({"event": "break", "cycle": c, "breakpoint": id});
                Ok(line(self.json, v, || {
                    format!("stopped at cycle {c} (breakpoint {id})")
                }))
            }
            (None, None) => {
                self.go(u64::MAX)?;
                Ok(self.final_event())
            }
        }
    }

    /// Move to a hit and report it.
    fn stop_at(&mut self, hit: Hit) -> Result<String, Interrupted> {
        Ok(match hit {
            Hit::Break {
                id: 0,
                cycle,
                core,
                frame,
                ip,
            } => {
                // `until`'s own stop.
                self.go(cycle)?;
                self.skip = Some(cycle);
                self.current = core;
                let mut v = json!({"event": "until", "cycle": cycle, "core": core,
                                   "frame": frame, "ip": ip});
                let at = self.located(&mut v, frame, ip);
                line(self.json, v, || {
                    format!(
                        "stopped at cycle {cycle} before core {core} runs frame {frame} IP {ip}{at}"
                    )
                })
            }
            Hit::Break {
                id,
                cycle,
                core,
                frame,
                ip,
            } => {
                self.go(cycle)?;
                self.skip = Some(cycle);
                self.current = core;
                let mut v = json!({"event": "break", "cycle": cycle, "core": core,
                                   "frame": frame, "ip": ip, "breakpoint": id});
                let at = self.located(&mut v, frame, ip);
                line(self.json, v, || {
                    format!(
                        "stopped at cycle {cycle} before core {core} runs frame {frame} IP {ip} \
                         (breakpoint {id}{at})"
                    )
                })
            }
            Hit::Watch {
                id,
                cycle,
                core,
                frame,
                ip,
                addr,
                old,
                new,
                fault_cycle,
                faulting,
            } => {
                if fault_cycle {
                    // No state after a cycle that faults exists: the session stands when
                    // the cycle begins, its breakpoints behind it.
                    self.go(cycle)?;
                    self.skip = Some(cycle);
                } else {
                    self.go(cycle.saturating_add(1))?;
                }
                self.watched = Some((cycle, core));
                self.current = core;
                let mut v = json!({"event": "watch", "cycle": cycle, "core": core,
                                   "frame": frame, "ip": ip, "addr": addr, "old": old,
                                   "new": new, "watchpoint": id});
                if fault_cycle {
                    v["fault_cycle"] = json!(true);
                }
                if faulting {
                    v["faulting"] = json!(true);
                }
                let at = self.located(&mut v, frame, ip);
                line(self.json, v, || {
                    let what = if faulting { "would write" } else { "wrote" };
                    let mut s = format!(
                        "watchpoint {id}: in cycle {cycle} core {core} (frame {frame} IP {ip}{at}) \
                         {what} 0x{addr:03x}: {old} -> {new} (0x{old:02x} -> 0x{new:02x})"
                    );
                    if faulting {
                        let _ = write!(
                            s,
                            "; the store faults, so it never writes: stopped at cycle {cycle} \
                             before it"
                        );
                    } else if fault_cycle {
                        let _ = write!(
                            s,
                            "; the run faults in this cycle, so the state shown is the state \
                             when cycle {cycle} began"
                        );
                    }
                    s
                })
            }
            Hit::Instr {
                cycle,
                core,
                frame,
                ip,
            } => {
                self.go(cycle.saturating_add(1))?;
                self.current = core;
                let next = cycle.saturating_add(1);
                let mut v = json!({"event": "step", "cycle": next, "core": core,
                                   "frame": frame, "ip": ip});
                let at = self.located(&mut v, frame, ip);
                line(self.json, v, || {
                    format!(
                        "core {core} ran frame {frame} IP {ip}{at} in cycle {cycle}; \
                         stopped at cycle {next}"
                    )
                })
            }
        })
    }

    /// Add `location` to `v` if the program has a source map; the text form to append.
    fn located(&self, v: &mut Value, frame: usize, ip: u8) -> String {
        match self.location(frame, ip) {
            Some(l) => {
                v["location"] = l.json();
                format!(", {l}")
            }
            None => String::new(),
        }
    }

    /// The `end` or `fault` event of a session whose run is over. Its JSON is built only in
    /// JSON mode, with the tasks written as text ([`output::json::text_with_tasks`]): a run
    /// of millions of tasks never holds them as JSON values.
    fn final_event(&self) -> String {
        match &self.state {
            Snapshot::Ended(r) => {
                if self.json {
                    let mut v = json!({"event": "end", "cycle": r.cycles});
                    merge(&mut v, output::json::report_keys(r));
                    return output::json::text_with_tasks(&v, r) + "\n";
                }
                line(false, Value::Null, || {
                    format!(
                        "the program ended after {} cycles\n{}",
                        r.cycles,
                        output::human::report(r, &self.memory)
                    )
                })
            }
            Snapshot::Failed { failure: f, .. } => {
                let cycle = match &f.error {
                    RunError::Fault { cycle, .. }
                    | RunError::Livelock { cycle, .. }
                    | RunError::EndlessWalk { cycle, .. } => *cycle,
                    _ => f.state.cycles,
                };
                if self.json {
                    let mut v = json!({"event": "fault", "cycle": cycle});
                    let mut failure = output::json::failure_keys(f);
                    if let Some(m) = &self.map {
                        output::json::locate(
                            &mut failure,
                            &output::location::FailureLocations::of(&f.error, m),
                        );
                    }
                    merge(&mut v, failure);
                    return output::json::text_with_tasks(&v, &f.state) + "\n";
                }
                line(false, Value::Null, || {
                    let at = match &f.error {
                        RunError::Fault { frame, ip, .. } => self
                            .location(*frame, *ip)
                            .map_or(String::new(), |l| format!("{l}: ")),
                        _ => String::new(),
                    };
                    format!("the run failed at cycle {cycle}: {at}{}", f.error)
                })
            }
            Snapshot::Paused { .. } => String::new(),
        }
    }

    fn step(&mut self, n: u64) -> Result<String, Interrupted> {
        if self.finished() {
            return Ok(self.final_event());
        }
        if n > 0 {
            self.go(self.cycle.saturating_add(n))?;
        }
        if self.finished() {
            return Ok(self.final_event());
        }
        let c = self.cycle;
        Ok(line(
            self.json,
            json!({"event": "step", "cycle": c}),
            || format!("stopped at cycle {c}"),
        ))
    }

    /// `set [ADDR] = BYTE`: the byte of shared memory the run starts with. Only before
    /// cycle 0: every stop replays the program's one run from the memory it starts with
    /// (from cycle 0 or a snapshot of that run), which would not see a write made later
    /// (so later the answer is an error, and nothing changes).
    fn set_memory(&mut self, addr: u16, byte: u8) -> Result<String, Interrupted> {
        if self.cycle != 0 {
            return Ok(self.error(&format!(
                "memory can be set only at cycle 0 (say run first): every stop replays the \
                 program's one run from the memory it starts with, so a write at cycle {} \
                 would be lost; nothing was changed",
                self.cycle
            )));
        }
        let a = usize::from(addr);
        if self.memory.len() <= a {
            self.memory.resize(a + 1, 0);
        }
        self.memory[a] = byte;
        self.live = None;
        self.go(0)?;
        Ok(line(self.json, json!({"set": addr, "value": byte}), || {
            format!("0x{addr:03x} = {byte} (0x{byte:02x}) from cycle 0")
        }))
    }

    /// The source files the program was assembled from, as the assembler named them
    /// (none for an image).
    pub fn source_files(&self) -> Vec<String> {
        let mut files: Vec<String> = Vec::new();
        for f in self.map.iter().flat_map(|m| &m.frames) {
            for span in std::iter::once(&f.span).chain(&f.slots) {
                if !files.iter().any(|x| **x == *span.file) {
                    files.push(span.file.to_string());
                }
            }
        }
        files
    }

    /// `run`: back before cycle 0, the breakpoints and watchpoints kept.
    fn restart(&mut self) -> Result<String, Interrupted> {
        self.go(0)?;
        Ok(line(
            self.json,
            json!({"event": "restart", "cycle": 0}),
            || "restarted: stopped at cycle 0".to_string(),
        ))
    }

    /// `reverse-step N`: the machine N cycles before where the session stands (from the
    /// end of a run that is over, N cycles before its end). Every stop is a run from the
    /// start, so going back is as exact as going forward.
    fn reverse_step(&mut self, n: u64) -> Result<String, Interrupted> {
        let target = self.cycle.saturating_sub(n);
        self.go(target)?;
        let c = self.cycle;
        Ok(line(
            self.json,
            json!({"event": "step", "cycle": c, "reverse": true}),
            || format!("back at cycle {c}"),
        ))
    }

    /// `reverse-finish`: back to when the first cycle of the current core's part began
    /// (the task's start, from the task log).
    fn reverse_finish(&mut self) -> Result<String, Interrupted> {
        let k = self.current;
        let Some(frame) = self.core_state(k)["frame"].as_u64() else {
            return Ok(self.error(&format!("core {k} runs no frame here; nothing was run")));
        };
        let cycle = self.cycle;
        let start = self
            .task_records()?
            .iter()
            .rev()
            .find(|t| t.frame as u64 == frame && t.mask >> k & 1 != 0 && t.start <= cycle)
            .map(|t| t.start);
        let Some(start) = start else {
            return Ok(self.error(&format!(
                "the task log does not hold core {k}'s part; nothing was run"
            )));
        };
        self.go(start)?;
        let mut v = json!({"event": "step", "cycle": start, "core": k, "frame": frame,
                           "ip": 0, "reverse": true});
        let at = self.located(&mut v, frame as usize, 0);
        Ok(line(self.json, v, || {
            format!("back at cycle {start}, where core {k}'s part of frame {frame} began{at}")
        }))
    }

    /// `reverse-stepi CORE`: back to when the cycle of that core's last instruction before
    /// here began, looked for in windows that double back from here.
    fn reverse_stepi(&mut self, core: u8) -> Result<String, Interrupted> {
        let before = self.cycle;
        let found = self.look_back(
            |from| LastInstr {
                core,
                before,
                from,
                last: None,
            },
            |o| o.last,
        )?;
        let Some((cycle, frame, ip)) = found else {
            return Ok(self.error(&format!(
                "core {core} executed no instruction before cycle {before}; nothing was run"
            )));
        };
        self.go(cycle)?;
        let mut v = json!({"event": "step", "cycle": cycle, "core": core, "frame": frame,
                           "ip": ip, "reverse": true});
        let at = self.located(&mut v, frame, ip);
        Ok(line(self.json, v, || {
            format!("back at cycle {cycle}, before core {core} runs frame {frame} IP {ip}{at}")
        }))
    }

    /// `when`: the last instruction before here that wrote a byte or a register, looked
    /// for in windows that double back from here, as `reverse-stepi` looks.
    fn when(&mut self, target: command::WriteTarget) -> Result<String, Interrupted> {
        let target = match target {
            command::WriteTarget::Byte(a) => Ok(a),
            command::WriteTarget::Register(core, r) => Err((core.unwrap_or(self.current), r)),
        };
        let name = match target {
            Ok(a) => format!("0x{a:03x}"),
            Err((k, r)) => format!("core {k} r{r}"),
        };
        let before = self.cycle;
        let found = self.look_back(
            |from| LastWrite {
                target,
                before,
                from,
                last: None,
            },
            |o| o.last,
        )?;
        let mut v = json!({"when": &name});
        let Some((cycle, core, frame, ip, value)) = found else {
            v["written"] = json!(false);
            return Ok(line(self.json, v, || {
                format!("no instruction wrote {name} before cycle {before}")
            }));
        };
        merge(
            &mut v,
            json!({"cycle": cycle, "core": core, "frame": frame, "ip": ip, "value": value}),
        );
        let at = self.located(&mut v, frame, ip);
        Ok(line(self.json, v, || {
            format!(
                "{name} was last written in cycle {cycle} by core {core} (frame {frame} IP {ip}{at}): \
                 {value} (0x{value:02x})"
            )
        }))
    }

    /// What an observer made by `make(from)` finds (`found`) in runs up to where the
    /// session stands that see instructions only from `from` on, `from` doubling back
    /// from here (64 cycles, then 64 times further) until something is found or `from`
    /// is cycle 0: the last instruction of a kind is usually near.
    fn look_back<O: Observer, T>(
        &self,
        mut make: impl FnMut(u64) -> O,
        found: impl Fn(&O) -> Option<T>,
    ) -> Result<Option<T>, Interrupted> {
        let config = Config {
            max_cycles: self.cycle.min(self.config.max_cycles),
            tasks: gpu16_machine::TaskLog::None,
            ..self.config
        };
        let mut back = 64u64;
        loop {
            let from = self.cycle.saturating_sub(back);
            let mut observer = make(from);
            let mut both = (&mut observer, self.interrupt.clone());
            let _ = self.forked(&config, &mut both, from);
            if self.interrupt.raised() {
                return Err(Interrupted);
            }
            let result = found(&observer);
            if result.is_some() || from == 0 {
                return Ok(result);
            }
            back = back.saturating_mul(64);
        }
    }

    /// A session over the same program and points, before cycle 0.
    fn fork(&self) -> Session {
        let mut s = Session::new(
            self.program.clone(),
            self.map.clone(),
            self.memory.clone(),
            self.runner,
            self.config,
            self.json,
        );
        s.points = self.points.clone();
        s.next_id = self.next_id;
        s.exhaustive = self.exhaustive;
        s.snapshot_spacing = self.snapshot_spacing;
        s.interrupt = self.interrupt.clone();
        s
    }

    /// `reverse-continue`: back to the stop before here, among those that `continue`
    /// makes from the start with the points as they are (the last one before here, in
    /// that order), found by making them.
    fn reverse_continue(&mut self) -> Result<String, Interrupted> {
        if self.points.is_empty() {
            return Ok(
                self.error("no breakpoints or watchpoints: there is no earlier stop to go back to")
            );
        }
        let here = (self.cycle, self.skip, self.watched);
        // Standing at a stop, earlier stops of its cycle come before it in the order.
        let at_stop = self.skip.is_some() || self.watched.is_some();
        let mut scratch = self.fork();
        let mut last = None;
        loop {
            let text = scratch.cont()?;
            if scratch.finished() {
                break;
            }
            let pos = (scratch.cycle, scratch.skip, scratch.watched);
            if pos == here || pos.0 > here.0 || (pos.0 == here.0 && !at_stop) {
                break;
            }
            last = Some((text, pos));
        }
        let Some((text, (cycle, skip, watched))) = last else {
            return Ok(self.error("no stop before here; nothing was run"));
        };
        self.go(cycle)?;
        self.skip = skip;
        self.watched = watched;
        Ok(if self.json {
            let mut v: Value = serde_json::from_str(text.trim_end()).unwrap_or(Value::Null);
            v["reverse"] = json!(true);
            format!("{v}\n")
        } else {
            format!("back: {text}")
        })
    }

    fn stepi(&mut self, core: u8) -> Result<String, Interrupted> {
        if self.finished() {
            return Ok(self.final_event());
        }
        let mut finder = Finder::new(self.cycle, None, &self.memory);
        finder.core = Some(core);
        let fault = self.search(&mut finder, u64::MAX)?;
        match finder.hit() {
            Some(hit) => self.stop_at(hit),
            // The run faults before the core's next instruction ends (its own fault, or
            // another core's in or before that cycle): the session moves to the failure.
            None if fault.is_some() => {
                self.go(u64::MAX)?;
                Ok(self.final_event())
            }
            None => Ok(self.error(&format!(
                "core {core} executes no more instructions before the run ends; \
                 nothing was run"
            ))),
        }
    }

    /// A core's frame, IP and state where the session stands, as `run --json` lists an
    /// unfinished core (`state`: running, not_started, stalled, bank_conflict), or `idle`
    /// (no part of a task), or `faulted` (the core whose fault ended the run).
    fn core_state(&self, core: u8) -> Value {
        let mut v = json!({"core": core, "frame": null, "ip": null, "state": "idle"});
        let cores = match &self.state {
            Snapshot::Paused { cores, .. } | Snapshot::Failed { cores, .. } => cores.as_slice(),
            Snapshot::Ended(_) => &[],
        };
        if let Some(c) = cores.iter().find(|c| c.core == core) {
            v = output::json::unfinished(std::slice::from_ref(c))[0].clone();
            if let Some(l) = self.location(c.frame, c.ip) {
                v["location"] = l.json();
            }
        }
        if v["state"] == "bank_conflict" && self.program.dialect() == gpu16_machine::Dialect::Mcst {
            self.mcst_wait(&mut v);
        }
        // The faulting core stands before its faulting instruction when the fault's cycle
        // begins; it is shown as `faulted` there.
        if let Snapshot::Failed { failure, .. } = &self.state {
            if let RunError::Fault {
                core: k, frame, ip, ..
            } = failure.error
            {
                if k == core {
                    v = json!({"core": core, "frame": frame, "ip": ip, "state": "faulted"});
                    if let Some(l) = self.location(frame, ip) {
                        v["location"] = l.json();
                    }
                }
            }
        }
        v
    }

    /// What a core of the MCST dialect's machine in state `bank_conflict` waits for: its
    /// `ld`/`st` slot asked for its bank in an earlier cycle and has not been granted (the
    /// machine's report says no more). The bank is the instruction's bank register's low
    /// nibble; a store waits for its round-robin turn (another core was granted the bank),
    /// a load for that or a bank switch (a grant in its start cycle that did not count).
    /// Adds `bank` and `waits_for` (`round_robin`, `round_robin_or_bank_switch`) to `v`.
    fn mcst_wait(&self, v: &mut Value) {
        let (Some(frame), Some(ip), Some(core)) =
            (v["frame"].as_u64(), v["ip"].as_u64(), v["core"].as_u64())
        else {
            return;
        };
        let frame = frame as usize;
        if frame >= self.program.len()
            || !matches!(self.program.kind(frame), FrameKind::Instr { .. })
        {
            return;
        }
        if let Instr::Mem { op, hi, .. } = self.program.instr(frame).instrs[ip as usize & 0xF] {
            let regs = &self.state.report().registers[core as usize & 0xF];
            v["bank"] = json!(regs[usize::from(hi & 0xF)] & 0xF);
            v["waits_for"] = json!(match op {
                MemOp::Ld => "round_robin_or_bank_switch",
                _ => "round_robin",
            });
        }
    }

    fn state_text(v: &Value) -> String {
        let state = v["state"].as_str().unwrap_or("idle");
        let mut s = match (v["frame"].as_u64(), v["ip"].as_u64()) {
            (Some(f), Some(i)) => format!("frame {f}, IP {i}, {state}"),
            _ => state.to_string(),
        };
        match state {
            "stalled" => {
                let _ = write!(
                    s,
                    " on 0x{:03x} held by core {} since cycle {}",
                    v["addr"].as_u64().unwrap_or(0),
                    v["holder"],
                    v["since"]
                );
            }
            "not_started" => {
                let _ = write!(s, " (starts in cycle {})", v["start"]);
            }
            "bank_conflict" if v.get("bank").is_some() => {
                let why = match v["waits_for"].as_str() {
                    Some("round_robin") => "its round-robin turn",
                    _ => "its round-robin turn or a bank switch",
                };
                let _ = write!(s, ": waits for bank {}'s grant ({why})", v["bank"]);
            }
            _ => {}
        }
        if let Some(l) = v.get("location") {
            let _ = write!(
                s,
                " ({}:{}:{})",
                crate::shown::text(l["file"].as_str().unwrap_or("")),
                l["line"],
                l["col"]
            );
        }
        s
    }

    fn regs(&self, core: Option<u8>) -> String {
        let report = self.state.report();
        let one = |k: u8| {
            let mut v = self.core_state(k);
            v["registers"] = json!(report.registers[usize::from(k)].to_vec());
            v
        };
        match core {
            Some(k) => {
                let v = one(k);
                line(self.json, v.clone(), || {
                    let mut s = format!(
                        "core {k} at cycle {}: {}\n",
                        self.cycle,
                        Self::state_text(&v)
                    );
                    for half in 0..2 {
                        for r in half * 8..half * 8 + 8 {
                            let _ = write!(
                                s,
                                " {:>4} {:02x}",
                                format!("r{r}"),
                                report.registers[usize::from(k)][r]
                            );
                        }
                        s.push('\n');
                    }
                    s
                })
            }
            None => {
                let all: Vec<Value> = (0..16).map(one).collect();
                let v = json!({"cycle": self.cycle, "cores": all});
                line(self.json, v, || {
                    let mut s = format!("registers (hex) at cycle {}\n  core", self.cycle);
                    for i in 0..16 {
                        let _ = write!(s, " {:>3}", format!("r{i}"));
                    }
                    s.push('\n');
                    for (k, c) in all.iter().enumerate() {
                        let _ = write!(s, "  {k:>4}");
                        for v in report.registers[k] {
                            let _ = write!(s, "  {v:02x}");
                        }
                        let _ = writeln!(s, "   {}", Self::state_text(c));
                    }
                    s
                })
            }
        }
    }

    fn mem(&self, addr: u16, len: u16) -> String {
        let (a, n) = (usize::from(addr), usize::from(len));
        let bytes = &self.state.report().memory[a..a + n];
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        line(self.json, json!({"addr": addr, "bytes": hex}), || {
            let mut s = String::new();
            for (i, chunk) in bytes.chunks(16).enumerate() {
                let _ = write!(s, "0x{:03x}:", a + 16 * i);
                for b in chunk {
                    let _ = write!(s, " {b:02x}");
                }
                s.push('\n');
            }
            if s.is_empty() {
                s = "(no bytes)".into();
            }
            s
        })
    }

    fn locks(&mut self) -> Result<String, Interrupted> {
        let mut locks = Locks::default();
        // Paused: the locks when the session's cycle begins. Failed: those of the state the
        // failure reports, the machine when its cycle (the session's) began. Ended: none;
        // nor in a program without an ld_sync. The live machine paused there knows them;
        // where there is none (the JIT cannot start), a run from cycle 0 observing every
        // instruction finds them (slow over long runs; Ctrl-C stops it).
        let cycle = self.cycle;
        let wanted = self.atomics && !matches!(self.state, Snapshot::Ended(_));
        let mut known = false;
        if wanted
            && self.program.dialect() == gpu16_machine::Dialect::Spec
            && self.live_before(cycle)
        {
            if let Some(m) = self.live.as_mut() {
                if m.run_until(cycle) == LiveStatus::Paused(cycle) {
                    for (_, holder, addr, since) in m.locks_opened() {
                        locks.0.insert(addr, (holder, since));
                    }
                    known = true;
                }
            }
            if self.interrupt.raised() {
                self.live = None;
                return Err(Interrupted);
            }
        }
        if wanted && !known {
            let config = Config {
                max_cycles: self.cycle.min(self.config.max_cycles),
                tasks: gpu16_machine::TaskLog::None,
                ..self.config
            };
            let mut both = (&mut locks, self.interrupt.clone());
            let _ =
                crate::run_observed(self.runner, &self.program, &self.memory, &config, &mut both);
            if self.interrupt.raised() {
                return Err(Interrupted);
            }
        }
        let waiting = |addr: u16| -> Vec<u8> {
            match &self.state {
                Snapshot::Paused { cores, .. } | Snapshot::Failed { cores, .. } => cores
                    .iter()
                    .filter(|c| matches!(c.wait, CoreWait::Lock { addr: a, .. } if a == addr))
                    .map(|c| c.core)
                    .collect(),
                Snapshot::Ended(_) => Vec::new(),
            }
        };
        let list: Vec<Value> = locks
            .0
            .iter()
            .map(|(&addr, &(holder, since))| {
                json!({"addr": addr, "holder": holder, "since": since, "waiting": waiting(addr)})
            })
            .collect();
        let text = || {
            if list.is_empty() {
                return format!("no locks held at cycle {}", self.cycle);
            }
            let mut s = String::new();
            for l in &list {
                let _ = write!(
                    s,
                    "0x{:03x} held by core {} since cycle {}",
                    l["addr"].as_u64().unwrap_or(0),
                    l["holder"],
                    l["since"]
                );
                let w: Vec<String> = l["waiting"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(ToString::to_string)
                    .collect();
                if !w.is_empty() {
                    let _ = write!(s, "; waiting: core {}", w.join(", "));
                }
                s.push('\n');
            }
            s
        };
        let text = text();
        Ok(line(
            self.json,
            json!({"cycle": self.cycle, "locks": list}),
            || text,
        ))
    }

    /// The task records where the session stands: from the live machine where the paused
    /// state left them there, or from a run to this cycle where that machine is gone (an
    /// interrupted move drops it).
    fn task_records(&mut self) -> Result<Cow<'_, [TaskRecord]>, Interrupted> {
        if self.tasks_live {
            let cycle = self.cycle;
            // A search may have moved the machine on: back to where the session stands.
            if self.live_before(cycle) {
                if let Some(m) = self.live.as_mut() {
                    m.run_until(cycle);
                    let report = m.report().unwrap_or_else(|f| f.state);
                    return Ok(Cow::Owned(report.tasks));
                }
            }
            let again = self.run_to(cycle)?;
            return Ok(Cow::Owned(again.report().tasks.clone()));
        }
        Ok(Cow::Borrowed(&self.state.report().tasks))
    }

    fn tasks(&mut self) -> Result<String, Interrupted> {
        let (json, cycle, log) = (self.json, self.cycle, self.config.tasks);
        let tasks = self.task_records()?;
        let v = if !json {
            Value::Null
        } else if log == gpu16_machine::TaskLog::All {
            let list: Vec<_> = tasks.iter().map(output::json::Task::of).collect();
            json!({"cycle": cycle, "tasks": list})
        } else {
            json!({"cycle": cycle, "tasks": null})
        };
        Ok(line(json, v, || {
            if tasks.is_empty() {
                return format!("no task issued before cycle {cycle}");
            }
            output::human::TaskTable::of(&tasks)
        }))
    }

    fn where_(&self) -> String {
        let cores: Vec<Value> = (0..16)
            .map(|k| self.core_state(k))
            .filter(|v| v["state"] != "idle")
            .collect();
        let status = match self.state {
            Snapshot::Paused { .. } => "paused",
            Snapshot::Ended(_) => "ended",
            Snapshot::Failed { .. } => "failed",
        };
        let v = json!({"cycle": self.cycle, "status": status, "cores": cores});
        line(self.json, v, || {
            let mut s = format!("cycle {} ({status})\n", self.cycle);
            if cores.is_empty() {
                s += "no core has a task\n";
            }
            for c in &cores {
                let _ = writeln!(s, "core {:>2}: {}", c["core"], Self::state_text(c));
            }
            s
        })
    }

    fn disasm(&self, frame: Option<usize>) -> String {
        let frame = match frame {
            Some(f) => f,
            None => match (0..16)
                .map(|k| self.core_state(k))
                .find_map(|v| v["frame"].as_u64())
            {
                Some(f) => f as usize,
                None => return self.error("no core is running a frame; say which: disasm F"),
            },
        };
        if frame >= self.program.len() {
            return self.error(&format!(
                "there is no frame {frame}: the program has {} frames",
                self.program.len()
            ));
        }
        let mut lines: Vec<Value> = Vec::new();
        // Where each core of this frame stands, for the `=>` marks.
        let mut at: [Vec<u8>; 16] = Default::default();
        for k in 0..16u8 {
            let v = self.core_state(k);
            if v["frame"].as_u64() == Some(frame as u64) {
                if let Some(ip) = v["ip"].as_u64() {
                    at[ip as usize & 0xF].push(k);
                }
            }
        }
        let kind = match self.program.kind(frame) {
            FrameKind::Control => {
                let cf = self.program.control(frame);
                let text = gpu16_asm::control_line_in(&cf, self.program.dialect());
                lines.push(json!({ "text": text }));
                "control"
            }
            FrameKind::Instr { .. } => {
                let slots = self.map.as_ref().and_then(|m| m.frames.get(frame));
                // The source's labels name the lines and the branches' targets (L<ip>
                // where the program has no source).
                let labels = slots.map_or(&[][..], |f| f.labels.as_slice());
                let decoded = gpu16_asm::frame_lines_labelled(
                    &self.program.instr(frame).words,
                    self.program.dialect(),
                    labels,
                );
                let labelled = labels
                    .iter()
                    .map(|&(_, ip)| ip + 1)
                    .filter(|&n| n <= 16)
                    .max()
                    .unwrap_or(0);
                let used = decoded
                    .len()
                    .max(slots.map_or(0, |f| f.slots.len()))
                    .max(labelled);
                for ip in 0..used {
                    let label = labels.iter().find(|(_, at)| *at == ip).map(|(n, _)| n);
                    let text = match decoded.get(ip) {
                        Some(t) => t.trim().to_string(),
                        None => match label {
                            Some(n) => format!("{n}: ready"),
                            None => "ready".to_string(),
                        },
                    };
                    let mut v = json!({"ip": ip, "text": text});
                    if let Some(n) = label {
                        v["label"] = json!(n);
                    }
                    if let Some(cores) = at.get(ip).filter(|c| !c.is_empty()) {
                        v["cores"] = json!(cores);
                    }
                    if let Some(span) = slots.and_then(|f| f.slots.get(ip)) {
                        v["source"] = json!(span.text.trim());
                        v["location"] =
                            json!({"file": &*span.file, "line": span.line, "col": span.col});
                    }
                    lines.push(v);
                }
                "instr"
            }
        };
        let v = json!({"frame": frame, "kind": kind, "lines": lines});
        line(self.json, v, || {
            let mut s = format!("frame {frame} ({kind})\n");
            for l in &lines {
                match l["ip"].as_u64() {
                    Some(ip) => {
                        let mark = if l.get("cores").is_some() { "=>" } else { "  " };
                        let _ = write!(s, "{mark}{ip:>2}  {}", l["text"].as_str().unwrap_or(""));
                        if let Some(loc) = l.get("location") {
                            let _ = write!(
                                s,
                                "    ; {}:{}",
                                crate::shown::text(loc["file"].as_str().unwrap_or("")),
                                loc["line"]
                            );
                        }
                        if let Some(cores) = l["cores"].as_array() {
                            let list: Vec<String> = cores.iter().map(|c| c.to_string()).collect();
                            let _ = write!(s, "    <- core {}", list.join(", "));
                        }
                        s.push('\n');
                    }
                    None => {
                        let _ = writeln!(s, "  {}", l["text"].as_str().unwrap_or(""));
                    }
                }
            }
            s
        })
    }
}

/// The text of a command file for `source`: at most [`MAX_SOURCE_BYTES`], no NUL byte.
fn read_command_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err("is a directory".to_string());
    }
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(format!(
            "larger than {} MiB: no command file",
            MAX_SOURCE_BYTES >> 20
        ));
    }
    if bytes.contains(&0) {
        return Err("it holds a NUL byte: no command file".to_string());
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The first word of a command line.
fn command_name(input: &str) -> &str {
    input.split_whitespace().next().unwrap_or("")
}

/// The machine where the session stands, as expressions read it.
struct SessionState<'a> {
    report: &'a RunReport,
    cycle: u64,
    core: u8,
}

impl expr::Machine for SessionState<'_> {
    fn register(&self, core: u8, r: u8) -> u8 {
        self.report.registers[usize::from(core & 0xF)][usize::from(r & 0xF)]
    }
    fn byte(&self, addr: u16) -> u8 {
        self.report.memory[usize::from(addr) % self.report.memory.len()]
    }
    fn cycle(&self) -> u64 {
        self.cycle
    }
    fn core(&self) -> u8 {
        self.core
    }
}

/// Copy `from`'s keys into `into` (an object), keeping `into`'s own.
fn merge(into: &mut Value, from: Value) {
    if let (Some(into), Value::Object(from)) = (into.as_object_mut(), from) {
        for (k, v) in from {
            into.entry(k).or_insert(v);
        }
    }
}

/// The IP of `label` in `frame`: the assembler's record of it, or (a map made without
/// labels) the slot whose line starts with `label:`, or the first slot after a line that is
/// only that label (read from the source file).
fn label_ip(map: &SourceMap, frame: usize, label: &str) -> Option<u8> {
    let source = map.frames.get(frame)?;
    if let Some(&(_, slot)) = source.labels.iter().find(|(n, _)| n == label) {
        return u8::try_from(slot).ok().filter(|&ip| ip < 16);
    }
    let defines = |text: &str| {
        text.trim_start()
            .strip_prefix(label)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    };
    let mut files: HashMap<String, Option<Vec<String>>> = HashMap::new();
    let mut previous = (source.span.file.to_string(), source.span.line);
    for (ip, span) in source.slots.iter().enumerate() {
        if defines(&span.text) {
            return Some(ip as u8);
        }
        if span.file.as_ref() == previous.0 && span.line > previous.1 + 1 {
            let lines = files
                .entry(previous.0.clone())
                .or_insert_with(|| {
                    std::fs::read_to_string(&previous.0)
                        .ok()
                        .map(|t| t.lines().map(str::to_string).collect())
                })
                .as_ref();
            if let Some(lines) = lines {
                let between = lines.get(previous.1..span.line - 1).unwrap_or(&[]);
                if between.iter().any(|l| defines(l)) {
                    return Some(ip as u8);
                }
            }
        }
        previous = (span.file.to_string(), span.line);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BackendKind;
    use std::sync::atomic::Ordering;

    /// Core 0: IP k in cycle 5 + k; the store of 2 + 3 at 0x010 in cycle 9.
    const ADD: &str = ".cf mask=1\n.if\nset_const 2, r8\nset_const 3, r9\nadd r8, r9, r3\n\
                       set_const 0x10, r10\nst [r10, r1], r3\nready\n";

    fn session(backend: BackendKind) -> Session {
        let a = gpu16_asm::assemble(ADD, "add.s").unwrap();
        let config = Config {
            max_cycles: 1000,
            ..Config::default()
        };
        Session::new(
            a.program,
            Some(a.source_map),
            Vec::new(),
            backend.into(),
            config,
            true,
        )
    }

    fn ask(s: &mut Session, line: &str) -> Value {
        serde_json::from_str(&s.execute(line).text).unwrap()
    }

    #[test]
    fn a_session_stops_where_the_timing_model_says() {
        for backend in [BackendKind::Interp, BackendKind::Jit] {
            let mut s = session(backend);
            ask(&mut s, "break add.s:5");
            let v = ask(&mut s, "continue");
            assert_eq!(
                (v["event"].clone(), v["cycle"].clone()),
                (json!("break"), json!(7))
            );
            ask(&mut s, "watch 0x10");
            let v = ask(&mut s, "continue");
            assert_eq!(
                (v["cycle"].clone(), v["old"].clone(), v["new"].clone()),
                (json!(9), json!(0), json!(5))
            );
            assert_eq!(
                ask(&mut s, "mem 0x10 1"),
                json!({"addr": 16, "bytes": "05"})
            );
            let v = ask(&mut s, "continue");
            assert_eq!(
                (v["event"].clone(), v["cycles"].clone()),
                (json!("end"), json!(11))
            );
            assert!(s.execute("quit").quit);
        }
    }

    #[test]
    fn delete_with_no_argument_asks_first_when_told_to() {
        let a = gpu16_asm::assemble(ADD, "add.s").unwrap();
        let mut s = Session::new(
            a.program,
            Some(a.source_map),
            Vec::new(),
            BackendKind::Interp.into(),
            Config::default(),
            false,
        );
        s.confirm_delete_all(true);
        let mut say = |line: &str| s.execute(line).text;
        assert_eq!(say("delete"), "nothing to delete\n");
        say("break 1:2");
        say("watch 0x10");
        assert_eq!(
            say("delete"),
            "delete all 2 breakpoints and watchpoints? (y or n)\n"
        );
        // Anything but y or yes keeps them, and is not run as a command.
        assert_eq!(say("continue"), "nothing deleted\n");
        assert_eq!(
            say("delete"),
            "delete all 2 breakpoints and watchpoints? (y or n)\n"
        );
        assert_eq!(say("y"), "deleted 1, 2\n");
        say("break 1:3");
        assert_eq!(say("delete all"), "deleted 3\n");
    }

    #[test]
    fn the_progress_probe_follows_each_command_from_its_start() {
        for backend in [BackendKind::Interp, BackendKind::Jit] {
            let mut s = session(backend);
            let probe = s.progress();
            assert_eq!(probe(), None);
            let end = ask(&mut s, "continue");
            assert_eq!(end["event"], "end");
            // The one task was issued (the scheduler's step reports it); the run's last
            // report is no later than its end.
            let p = probe().expect("the run reported its progress");
            assert_eq!(p.tasks, 1);
            assert!(p.cycle <= end["cycle"].as_u64().unwrap(), "{p:?}");
            // A command that runs nothing reports nothing.
            ask(&mut s, "help");
            assert_eq!(probe(), None);
        }
    }

    #[test]
    fn an_interrupted_command_leaves_the_session_where_it_was() {
        let mut s = session(BackendKind::Interp);
        ask(&mut s, "step 6");
        ask(&mut s, "watch 0x10");
        s.interrupt().store(true, Ordering::Relaxed);
        let v = ask(&mut s, "continue");
        assert_eq!(
            v,
            json!({"error": "interrupted; the session stays at cycle 6"})
        );
        s.interrupt().store(false, Ordering::Relaxed);
        assert_eq!(ask(&mut s, "regs 0")["ip"], 1);
    }

    /// A paused session leaves the task log in its live machine; a move interrupted on
    /// the way drops that machine, and the log is then taken from a run to the cycle.
    #[test]
    fn the_task_log_is_where_the_session_stands_even_after_an_interrupted_move() {
        for backend in [BackendKind::Interp, BackendKind::Jit] {
            let mut s = session(backend);
            ask(&mut s, "step 6");
            let before = ask(&mut s, "tasks");
            // Hand-worked: the one task, frame 1 on core 0, broadcast from cycle 1, its
            // first instruction in cycle 5, not ended at cycle 6.
            assert_eq!(
                before,
                json!({"cycle": 6, "tasks": [{"frame": 1, "mask": 1, "fence": "no",
                        "issue": 1, "start": 5, "end": null}]}),
                "{backend:?}"
            );
            s.interrupt().store(true, Ordering::Relaxed);
            ask(&mut s, "step 3");
            s.interrupt().store(false, Ordering::Relaxed);
            assert_eq!(ask(&mut s, "tasks"), before, "{backend:?}");
            ask(&mut s, "continue");
            let after = ask(&mut s, "tasks");
            assert_eq!(
                after["tasks"][0]["end"], 10,
                "{backend:?}: `ready`, IP 5, in cycle 10"
            );
        }
    }
}
