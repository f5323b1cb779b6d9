//! `gpu16 debug`: a debugging session over a program, commands read one a line from stdin
//! (a script, or a terminal with line editing and history), answers on stdout. The session
//! itself is `gpu16::debugger`.

use super::json_out::Unloaded;
use super::machine_args::MachineArgs;
use super::memory_args::MemoryArgs;
use super::outputs::{stdin_reader, with_included, Named};
use super::value_enums::{BackendArg, FormatArg};
use super::{emit, CliError, Finished};
use crate::stop::Signal;
use clap::Args;
use gpu16::debugger::Session;
use gpu16::input::{LoadedProgram, ProgramFormat};
use gpu16::BackendKind;
use std::io::{BufRead, IsTerminal, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The longest command line read; the rest of a longer line is read and dropped, and the
/// line is answered with an error.
const MAX_LINE: u64 = 4096;

/// The most bytes of one over-long line read and dropped: past it the input is taken to be
/// no command stream (an endless line, `/dev/zero`) and the session ends.
const MAX_DROPPED: u64 = 1 << 20;

/// The most over-long lines in a row: one more ends the session, as the input is then
/// taken to be no command stream.
const MAX_TOO_LONG_IN_A_ROW: u32 = 16;

#[derive(Args)]
#[command(after_help = "\
Commands, one a line (`help` lists them):
  break F:I | break cycle N | break FILE:LINE | break F:LABEL
  watch ADDR | delete [N|all] | continue | step [N] | stepi CORE
  regs [CORE] | mem ADDR [LEN] | locks | tasks | where | disasm [F] | source FILE
  help | quit (`help` lists them all)
Aliases: b w d c s si r m h ? q exit. docs/debugger.md has the grammar, the JSON
replies and the stop rules.

Each stop is a deterministic re-run from the start, so every backend gives the same
answers. With --json every line gets one JSON object on its own line; a stop is
{\"event\": \"break\"|\"watch\"|\"step\"|\"end\"|\"fault\", \"cycle\": C, ...}.
On a terminal the prompt has line editing, Tab completion (commands, labels, files) and a
history kept across sessions (see --no-history); Ctrl-D leaves. A command that runs
for over a second shows its progress on stderr, if a terminal.

Ctrl-C (SIGINT) stops the command under way and the session stays where it was. A
second Ctrl-C within 2 seconds, or before the next command starts, ends the session
(status 130); so does a Ctrl-C between commands when stdin is not a terminal (a script or
a pipe). SIGTERM and SIGHUP end it at once (status 143 and 129).

The program (PROGRAM -) or --mem (--mem -) can come from stdin only when the commands
come from -x files: the session then runs them and ends, as stdin is used up. Without -x
that is a usage error (stdin carries the commands).

A command line is at most 4096 bytes: a longer one is answered with an error. Input that
is no command stream ends the session with status 1: a NUL byte (binary data, /dev/zero),
a line longer than 1 MiB, or 16 over-long lines in a row.")]
pub struct DebugArgs {
    /// Program: .bin/.tm, .hex or .s/.asm (assembly also allows FILE:LINE and F:LABEL
    /// breakpoints); `-` reads stdin (a raw image unless --format says otherwise), which
    /// needs the commands in -x files.
    pub program: PathBuf,
    /// The program's format, whatever its name says (for `-`, stdin, the default is bin).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
    #[command(flatten)]
    pub memory: MemoryArgs,
    /// Execution backend (every backend gives the same answers).
    #[arg(long, value_enum, default_value_t = BackendArg(BackendKind::Auto))]
    pub backend: BackendArg,
    #[command(flatten)]
    pub machine: MachineArgs,
    /// Answer every command with one JSON object on its own line.
    #[arg(long)]
    pub json: bool,
    /// Run FILE's commands, one a line, as if typed (`source FILE`) before reading stdin;
    /// may be given more than once. With PROGRAM - or --mem -, stdin holds the program or
    /// the memory, and these files are the only commands.
    #[arg(short = 'x', long = "command", value_name = "FILE")]
    pub command_files: Vec<PathBuf>,
    /// Keep no history across sessions (at a terminal, commands are otherwise remembered in
    /// $GPU16_HISTORY, or $XDG_STATE_HOME/gpu16/debug_history, or
    /// ~/.local/state/gpu16/debug_history; GPU16_HISTORY= turns it off too).
    #[arg(long)]
    pub no_history: bool,
}

/// A second Ctrl-C this soon after the first ends the session, whatever it is doing.
const AGAIN: Duration = Duration::from_secs(2);

/// `gpu16 debug`: status 0 when the session ends (`quit` or the end of stdin), 1 if the
/// program or memory cannot be loaded (with `--json`, after a `{"error", "stage": "load",
/// "file"}` line), stdout cannot be written or stdin is no stream of commands (a
/// NUL byte, an endless line, endless over-long lines), 2 for a usage error, 130 for a
/// Ctrl-C that ends the session ([`listen`]), 143 and 129 for SIGTERM and SIGHUP.
pub fn debug(args: DebugArgs) -> Result<Finished, CliError> {
    // A file that cannot be loaded: with --json, the `run --json` object of a run that
    // never started, then the error on stderr.
    let json = args.json;
    let loaded = |e: gpu16::input::InputError| {
        let error = CliError::failed(&e);
        if json {
            let v = super::json_out::not_run("load", &error.to_string(), Some(&e.path));
            if let Err(stdout) = emit(&format!("{v}\n")) {
                return error.and(stdout);
            }
        }
        error
    };
    // Stdin holds the program or the memory when the commands come from -x files only.
    let commands_on_stdin = args.command_files.is_empty();
    let carries = commands_on_stdin.then_some(
        "debug reads its commands from stdin (give them with -x FILE to read the program or \
         the memory from stdin)",
    );
    let mut session = open_session(&args, args.json, carries).map_err(|e| match e {
        Unopened::Usage(e) => e,
        Unopened::Load(e) => loaded(e),
        Unopened::Assembly { error, diagnostics } => {
            let (object, error) =
                super::json_out::assembly_failed_to_load(&error.path, &diagnostics);
            super::json_out::refuse_with(&object, error)
        }
    })?;
    let stdin = std::io::stdin();
    let at_terminal = stdin.is_terminal();
    let editing = at_terminal && std::io::stdout().is_terminal() && !args.json;
    let interrupt = session.interrupt();
    let signals = Arc::new(Mutex::new(Signals::default()));
    let _listening = listen(interrupt.clone(), signals.clone(), at_terminal, editing);
    // A person at a terminal confirms `delete` with no argument; scripts and --json
    // clients do not (they may say `delete all`).
    session.confirm_delete_all(!args.json && at_terminal);
    // The -x files first, as if sourced.
    for file in &args.command_files {
        let under_way = UnderWay::start(&signals, &interrupt);
        let reply = session.source(file);
        emit(&reply.text).map_err(CliError::failed)?;
        under_way.end(&session, at_terminal);
        if reply.quit {
            return Ok(Finished::Success);
        }
    }
    // Stdin was an input, read to its end: there are no more commands.
    if !commands_on_stdin && stdin_reader(&session_inputs(&args)).is_some() {
        return Ok(Finished::Success);
    }
    let mut lines = if editing {
        match rustyline::Editor::new() {
            Ok(mut editor) => {
                editor.set_helper(Some(Helper(session.completer())));
                let history = if args.no_history {
                    None
                } else {
                    super::history::path()
                };
                let mut kept = Vec::new();
                if let Some(path) = &history {
                    match super::history::load(path) {
                        Ok(entries) => kept = entries,
                        Err(e) => stderr_line!(
                            "gpu16 debug: cannot read the history {}: {e}",
                            path.display()
                        ),
                    }
                    for e in &kept {
                        let _ = editor.add_history_entry(e.as_str());
                    }
                }
                Lines::Editor(Box::new(Terminal {
                    editor,
                    history,
                    kept,
                    warned: false,
                }))
            }
            Err(_) => Lines::Plain(stdin.lock()),
        }
    } else {
        Lines::Plain(stdin.lock())
    };
    let mut too_long_in_a_row = 0;
    loop {
        let line = match lines.next()? {
            Line::End => return Ok(Finished::Success),
            Line::NotCommands(why) => {
                return Err(CliError::failed(format!(
                    "standard input is not a stream of commands: {why}; the session ends"
                )))
            }
            Line::TooLong => {
                emit(&session.error(&format!("a command line is at most {MAX_LINE} bytes")))
                    .map_err(CliError::failed)?;
                too_long_in_a_row += 1;
                if too_long_in_a_row >= MAX_TOO_LONG_IN_A_ROW {
                    return Err(CliError::failed(format!(
                        "standard input is not a stream of commands: {MAX_TOO_LONG_IN_A_ROW} \
                         lines in a row are longer than {MAX_LINE} bytes; the session ends"
                    )));
                }
                continue;
            }
            Line::Text(line) => line,
        };
        too_long_in_a_row = 0;
        let under_way = UnderWay::start(&signals, &interrupt);
        // At a terminal, a command that runs for a second shows how far it has come.
        let shown = (!args.json)
            .then(|| crate::progress::CommandProgress::start(line.trim(), session.progress()));
        let reply = session.execute(&line);
        if let Some(shown) = shown {
            shown.finish();
        }
        emit(&reply.text).map_err(CliError::failed)?;
        under_way.end(&session, at_terminal);
        if reply.quit {
            return Ok(Finished::Success);
        }
    }
}

/// Why a session could not be opened.
pub enum Unopened {
    /// The flags ask for something impossible (a usage error, status 2).
    Usage(CliError),
    /// The program or the memory image cannot be loaded.
    Load(gpu16::input::InputError),
    /// The program is assembly source with errors (`--json` only): `error` with them as
    /// text, and the `diagnostics` ([`super::json_out::assembly_failed_to_load`]).
    Assembly {
        error: gpu16::input::InputError,
        diagnostics: gpu16_asm::Diagnostics,
    },
}

/// What a Ctrl-C finds: what the session's signal listener and its command loop share.
#[derive(Debug, Default)]
struct Signals {
    /// A command is under way: Ctrl-C stops it.
    busy: bool,
    /// A Ctrl-C came since the last command started and stopped nothing: the next one
    /// ends the session.
    unused: bool,
    /// When the last Ctrl-C came.
    last: Option<Instant>,
}

/// The session's signals, while the returned guard lives (the process's one handler,
/// [`crate::stop::handle_signals`], hands them over). SIGTERM and SIGHUP end the process at
/// once (143, 129), the terminal's mode restored if the line editor had changed it
/// (`editing`). Ctrl-C stops the command under way (it raises `interrupt`) and the session
/// goes on; it ends the session (130) when a Ctrl-C came less than [`AGAIN`] before, when
/// the one before stopped nothing and no command has started since, or when no command is
/// under way and stdin is not a terminal (`at_terminal`): nobody is there to press it
/// twice, and the input may never end (`yes help | gpu16 debug`).
fn listen(
    interrupt: Arc<AtomicBool>,
    signals: Arc<Mutex<Signals>>,
    at_terminal: bool,
    editing: bool,
) -> Option<crate::stop::Listening> {
    // The mode before the editor changes it: an ending process puts it back.
    let mode = editing
        .then(|| nix::sys::termios::tcgetattr(std::io::stdin()).ok())
        .flatten();
    let restore = move || {
        if let Some(mode) = &mode {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                mode,
            );
        }
    };
    crate::stop::handle_signals().ok()?;
    Some(crate::stop::listen(move |signal| {
        let ends = signal != Signal::Interrupt || {
            let mut s = signals.lock().unwrap_or_else(PoisonError::into_inner);
            let now = Instant::now();
            let again = s.last.replace(now).is_some_and(|t| now - t < AGAIN);
            if again || s.unused {
                true
            } else if s.busy {
                // A second one for the same command: it does not stop.
                interrupt.swap(true, Ordering::Relaxed)
            } else if at_terminal {
                s.unused = true;
                false
            } else {
                true
            }
        };
        if ends {
            restore();
        }
        !ends
    }))
}

/// A command under way, for the signal listener ([`listen`]).
struct UnderWay<'a>(&'a Mutex<Signals>, &'a AtomicBool);

impl<'a> UnderWay<'a> {
    /// A command starts: Ctrl-C stops it from now on.
    fn start(signals: &'a Mutex<Signals>, interrupt: &'a AtomicBool) -> UnderWay<'a> {
        let mut s = signals.lock().unwrap_or_else(PoisonError::into_inner);
        interrupt.store(false, Ordering::Relaxed);
        s.busy = true;
        s.unused = false;
        UnderWay(signals, interrupt)
    }

    /// The command ended and its reply is out. A Ctrl-C that came while it ran and stopped
    /// nothing (the command ran no program, or its run was over) came between commands:
    /// without a terminal it ends the session (130), at one it counts as unused.
    fn end(self, session: &Session, at_terminal: bool) {
        let mut s = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        s.busy = false;
        if self.1.load(Ordering::Relaxed) && !session.interrupted() {
            if !at_terminal {
                crate::stop::exit_at_once(Signal::Interrupt);
            }
            s.unused = true;
        }
    }
}

/// The session's inputs: the program, `--mem` and the -x files, named by their flags.
fn session_inputs(args: &DebugArgs) -> Vec<Named> {
    let files: Vec<Named> = args
        .command_files
        .iter()
        .map(|f| Named::new("-x", f))
        .collect();
    args.memory.inputs(&args.program, &files)
}

/// The session `gpu16 debug` and `gpu16 dap` debug: the program (assembly with its source
/// map, or an image) and `--mem` loaded, the machine flags checked, answering in JSON if
/// `json`. One function, so both load a program exactly alike. `stdin_carries` says why
/// stdin is no input, if it is not (it carries the commands, or the protocol): then no
/// input may read it, by any name, nor a file the program includes.
pub fn open_session(
    args: &DebugArgs,
    json: bool,
    stdin_carries: Option<&str>,
) -> Result<Session, Unopened> {
    let usage = |e: String| Unopened::Usage(CliError::usage(e));
    let config = args.machine.checked_config().map_err(usage)?;
    let files: Vec<Named> = args
        .command_files
        .iter()
        .map(|f| Named::new("-x", f))
        .collect();
    args.memory
        .check_streams(&args.program, &files)
        .map_err(usage)?;
    if let Some(why) = stdin_carries {
        // An `.include "/dev/stdin"` would eat the commands too.
        let inputs = with_included(session_inputs(args), true);
        if let Some(input) = stdin_reader(&inputs) {
            return Err(usage(format!(
                "{}: {why}, so no input may read it",
                input.shown()
            )));
        }
    }
    let format =
        ProgramFormat::of_input(&args.program, args.format.map(|f| f.0)).map_err(Unopened::Load)?;
    let LoadedProgram {
        program,
        source_map: map,
        memory: data,
    } = super::json_out::load_program(&args.program, format, args.machine.dialect(), json)
        .map_err(|u| match u {
            Unloaded::Input(e) => Unopened::Load(e),
            Unloaded::Assembly { error, diagnostics } => Unopened::Assembly { error, diagnostics },
        })?;
    // The source's `.data` is the memory unless --mem is given.
    let memory = args
        .memory
        .load_for(&args.program, data)
        .map_err(Unopened::Load)?;
    let runner = args.machine.runner(args.backend.0);
    Ok(Session::new(program, map, memory, runner, config, json))
}

/// Where the commands come from: a terminal with line editing and history, or plain lines
/// (a script, a pipe, or a terminal the editor cannot drive).
enum Lines<'a> {
    Editor(Box<Terminal>),
    Plain(std::io::StdinLock<'a>),
}

/// The terminal's line editor, with tab completion, and the history kept across sessions.
struct Terminal {
    editor: rustyline::Editor<Helper, rustyline::history::DefaultHistory>,
    /// The history file (`None`: none is kept).
    history: Option<PathBuf>,
    /// The commands of the history, oldest first: the file's, then this session's.
    kept: Vec<String>,
    /// Whether the history file could not be written once already (warned about once).
    warned: bool,
}

impl Terminal {
    /// Remember `line` in the editor's history and the file's.
    fn remember(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let _ = self.editor.add_history_entry(line);
        let Some(path) = &self.history else { return };
        if self.kept.last().map(String::as_str) == Some(line) {
            return;
        }
        self.kept.push(line.to_string());
        let extra = self.kept.len().saturating_sub(super::history::MAX_ENTRIES);
        self.kept.drain(..extra);
        if let Err(e) = super::history::save(path, &self.kept) {
            if !std::mem::replace(&mut self.warned, true) {
                stderr_line!(
                    "gpu16 debug: cannot write the history {}: {e}; the session goes on \
                     without it",
                    path.display()
                );
            }
        }
    }
}

/// The line editor's helper: tab completion from the session's [`Completer`].
///
/// [`Completer`]: gpu16::debugger::complete::Completer
struct Helper(gpu16::debugger::complete::Completer);

impl rustyline::completion::Completer for Helper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(self.0.complete(line, pos))
    }
}

impl rustyline::hint::Hinter for Helper {
    type Hint = String;
}

impl rustyline::highlight::Highlighter for Helper {}

impl rustyline::validate::Validator for Helper {}

impl rustyline::Helper for Helper {}

/// One line read.
enum Line {
    Text(String),
    /// Longer than [`MAX_LINE`]: read and dropped.
    TooLong,
    /// Input that is no stream of commands, and why: a NUL byte, or a line longer than
    /// [`MAX_DROPPED`]. Nothing more is read: the session ends.
    NotCommands(String),
    /// The end of the input (or Ctrl-D on a terminal).
    End,
}

fn unreadable(e: impl std::fmt::Display) -> CliError {
    CliError::failed(format!("cannot read standard input: {e}"))
}

impl Lines<'_> {
    fn next(&mut self) -> Result<Line, CliError> {
        match self {
            Lines::Editor(terminal) => loop {
                match terminal.editor.readline("(gpu16) ") {
                    Ok(line) if line.len() > MAX_LINE as usize => return Ok(Line::TooLong),
                    Ok(line) => {
                        terminal.remember(&line);
                        return Ok(Line::Text(line));
                    }
                    // Ctrl-C at the prompt drops the line being typed.
                    Err(rustyline::error::ReadlineError::Interrupted) => continue,
                    Err(rustyline::error::ReadlineError::Eof) => return Ok(Line::End),
                    Err(e) => return Err(unreadable(e)),
                }
            },
            Lines::Plain(input) => {
                let mut bytes = Vec::new();
                let n = input
                    .take(MAX_LINE)
                    .read_until(b'\n', &mut bytes)
                    .map_err(unreadable)?;
                if n == 0 {
                    return Ok(Line::End);
                }
                if bytes.contains(&0) {
                    return Ok(Line::NotCommands(
                        "it holds a NUL byte (binary data?)".into(),
                    ));
                }
                if bytes.ends_with(b"\n") || n < MAX_LINE as usize {
                    return Ok(Line::Text(String::from_utf8_lossy(&bytes).into_owned()));
                }
                // Drop the rest of an overlong line, up to MAX_DROPPED bytes in all.
                let mut dropped = n as u64;
                loop {
                    bytes.clear();
                    let m = input
                        .take(MAX_LINE)
                        .read_until(b'\n', &mut bytes)
                        .map_err(unreadable)?;
                    if bytes.contains(&0) {
                        return Ok(Line::NotCommands(
                            "it holds a NUL byte (binary data?)".into(),
                        ));
                    }
                    if m == 0 || bytes.ends_with(b"\n") {
                        return Ok(Line::TooLong);
                    }
                    dropped += m as u64;
                    if dropped > MAX_DROPPED {
                        return Ok(Line::NotCommands(format!(
                            "a line is longer than {} MiB",
                            MAX_DROPPED >> 20
                        )));
                    }
                }
            }
        }
    }
}
