//! The debugger's command language: one command a line, parsed into a [`Command`] or an
//! error message for the user. Numbers are decimal or `0x` hexadecimal; every number is
//! checked against its range here, so no later step sees a core past 15 or an address past
//! 0xfff.

use gpu16_machine::MEMORY_BYTES;

/// Where a breakpoint is, as the user wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BreakSpec {
    /// `break F:I`: frame and IP.
    Instr {
        /// The instruction frame.
        frame: usize,
        /// The IP, 0..15.
        ip: u8,
    },
    /// `break cycle N`.
    Cycle(u64),
    /// `break file:line` (assembly only).
    Line {
        /// The file as written.
        file: String,
        /// The line, from 1.
        line: usize,
    },
    /// `break frame:label` (assembly only).
    Label {
        /// The instruction frame.
        frame: usize,
        /// The label.
        label: String,
    },
}

/// What `info` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Info {
    /// `info breakpoints` (and watchpoints).
    Breakpoints,
    /// `info locks`.
    Locks,
    /// `info tasks`.
    Tasks,
    /// `info cores`.
    Cores,
    /// `info display`.
    Display,
}

/// What `when` looks for the last write of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteTarget {
    /// A byte of shared memory.
    Byte(u16),
    /// Register `r` of a core (`None`: the current core).
    Register(Option<u8>, u8),
}

/// One debugger command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// `break SPEC [core K] [if EXPR]`: only core K stops there, only where EXPR holds.
    Break(BreakSpec, Option<u8>, Option<String>),
    /// `watch ADDR`.
    Watch(u16),
    /// `delete N`, or `delete` (every point; on a terminal the session asks first).
    Delete(Option<u64>),
    /// `delete all`: every point, without asking.
    DeleteAll,
    /// `continue`.
    Continue,
    /// `step [N]`.
    Step(u64),
    /// `stepi CORE`.
    Stepi(u8),
    /// `stepi`: of the current core.
    StepiCurrent,
    /// `run` or `restart`: back to the start.
    Restart,
    /// `core [K]`: show or set the current core.
    Core(Option<u8>),
    /// `print EXPR`.
    Print(String),
    /// `display [EXPR]`: add an expression shown at every stop, or show them all.
    Display(Option<String>),
    /// `undisplay N`.
    Undisplay(u64),
    /// `info WHAT`.
    Info(Info),
    /// `when ADDR`, `when rN [core K]`: the last instruction before here that wrote it.
    When(WriteTarget),
    /// `finish`: run until the current core's part ends.
    Finish,
    /// `until IP`: run until the current core comes to IP of its frame.
    Until(u8),
    /// `reverse-step [N]`.
    ReverseStep(u64),
    /// `reverse-stepi CORE`.
    ReverseStepi(u8),
    /// `reverse-continue`.
    ReverseContinue,
    /// `reverse-finish`: back to where the current core's part began.
    ReverseFinish,
    /// `regs [CORE]`.
    Regs(Option<u8>),
    /// `mem ADDR [LEN]`.
    Mem(u16, u16),
    /// `locks`.
    Locks,
    /// `tasks`.
    Tasks,
    /// `where`.
    Where,
    /// `disasm [F]`.
    Disasm(Option<usize>),
    /// `source FILE`: the file's commands, one a line, as if typed.
    Source(String),
    /// `set [ADDR] = BYTE`: change a byte of shared memory (only before cycle 0).
    SetMemory(u16, u8),
    /// `set rN = BYTE`, `set cK.rN = BYTE`: answered with why registers cannot be set.
    SetRegister(Option<u8>, u8),
    /// `help`.
    Help,
    /// `quit`.
    Quit,
}

/// The most frames a program can have is far below this; a larger frame number is an error.
const MAX_FRAME: u64 = 1 << 40;

/// A number: decimal, or hexadecimal after `0x`.
pub(crate) fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) if !h.is_empty() => u64::from_str_radix(h, 16).ok(),
        Some(_) => None,
        None => s.parse().ok(),
    }
}

fn ranged(s: &str, what: &str, max: u64) -> Result<u64, String> {
    match number(s) {
        Some(n) if n <= max => Ok(n),
        Some(_) => Err(format!("{what} {s} is out of range (at most {max})")),
        None if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) => {
            Err(format!("{what} {s} is out of range (at most {max})"))
        }
        None => Err(format!("{what} must be a number, not {:?}", short(s))),
    }
}

/// Whether `s` is written as a number (perhaps too large for one).
fn numeric(s: &str) -> bool {
    number(s).is_some() || (!s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
}

/// At most 40 characters of `s`, for messages.
fn short(s: &str) -> String {
    s.chars().take(40).collect()
}

fn core(s: &str) -> Result<u8, String> {
    ranged(s, "core", 15).map(|n| n as u8)
}

fn addr(s: &str) -> Result<u16, String> {
    ranged(s, "address", MEMORY_BYTES as u64 - 1).map(|n| n as u16)
}

fn frame(s: &str) -> Result<usize, String> {
    ranged(s, "frame", MAX_FRAME).map(|n| n as usize)
}

/// `break`'s argument(s).
fn break_spec(args: &[&str]) -> Result<BreakSpec, String> {
    match args {
        ["cycle", n] => ranged(n, "cycle", u64::MAX).map(BreakSpec::Cycle),
        [spec] => {
            let Some((left, right)) = spec.rsplit_once(':') else {
                return Err(format!(
                    "break wants FRAME:IP, cycle N, FILE:LINE or FRAME:LABEL, not {:?}",
                    short(spec)
                ));
            };
            if left.is_empty() || right.is_empty() {
                return Err(format!("break: {:?} is missing a part", short(spec)));
            }
            match (numeric(left), numeric(right)) {
                (true, true) => Ok(BreakSpec::Instr {
                    frame: frame(left)?,
                    ip: ranged(right, "IP", 15)? as u8,
                }),
                (true, false) => Ok(BreakSpec::Label {
                    frame: frame(left)?,
                    label: right.to_string(),
                }),
                (false, true) => Ok(BreakSpec::Line {
                    file: left.to_string(),
                    line: ranged(right, "line", u32::MAX as u64)? as usize,
                }),
                (false, false) => Err(format!(
                    "break wants FRAME:IP, cycle N, FILE:LINE or FRAME:LABEL, not {:?}",
                    short(spec)
                )),
            }
        }
        _ => Err("break wants FRAME:IP, cycle N, FILE:LINE or FRAME:LABEL".to_string()),
    }
}

/// The text after a line's first word (an expression).
fn rest(line: &str) -> String {
    line.trim()
        .split_once(char::is_whitespace)
        .map_or("", |(_, r)| r)
        .trim()
        .to_string()
}

/// `set`'s argument: `[ADDR] = BYTE`, `rN = BYTE` or `cK.rN = BYTE`.
fn set(text: &str) -> Result<Command, String> {
    const USAGE: &str = "set wants [ADDR] = BYTE (or rN = BYTE)";
    let (target, value) = text.split_once('=').ok_or(USAGE)?;
    let (target, value) = (target.trim(), value.trim());
    let byte = || ranged(value, "value", 255).map(|v| v as u8);
    if let Some(a) = target.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return Ok(Command::SetMemory(addr(a.trim())?, byte()?));
    }
    let (core, register) = match target.split_once('.') {
        Some((k, r)) => (
            Some(
                k.strip_prefix('c')
                    .ok_or(USAGE)
                    .and_then(|k| core(k).map_err(|_| USAGE))?,
            ),
            r,
        ),
        None => (None, target),
    };
    match register
        .strip_prefix('r')
        .and_then(|n| n.parse::<u8>().ok())
    {
        Some(r) if r < 16 => {
            byte()?;
            Ok(Command::SetRegister(core, r))
        }
        _ => Err(USAGE.to_string()),
    }
}

/// Parse one line; `Ok(None)` for a blank line or a `#` comment.
pub(crate) fn parse(line: &str) -> Result<Option<Command>, String> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let (name, args) = (words[0], &words[1..]);
    let no_args = |c: Command| {
        if args.is_empty() {
            Ok(c)
        } else {
            Err(format!("{name} takes no arguments"))
        }
    };
    let command = match (name, args) {
        ("break" | "b", _) => {
            // `if` starts the condition: the rest of the line.
            let (args, when) = match args.iter().position(|w| *w == "if") {
                Some(i) => {
                    let when = line
                        .split_once(" if ")
                        .map(|(_, e)| e.trim().to_string())
                        .filter(|e| !e.is_empty())
                        .ok_or("break: `if` wants an expression")?;
                    (&args[..i], Some(when))
                }
                None => (args, None),
            };
            match args {
                [spec @ .., "core", k] => Command::Break(break_spec(spec)?, Some(core(k)?), when),
                _ => Command::Break(break_spec(args)?, None, when),
            }
        }
        ("core", []) => Command::Core(None),
        ("core", [k]) => Command::Core(Some(core(k)?)),
        ("print" | "p", []) => return Err("print wants an expression".to_string()),
        ("print" | "p", _) => Command::Print(rest(line)),
        ("display", []) => Command::Display(None),
        ("display", _) => Command::Display(Some(rest(line))),
        ("undisplay", [n]) => Command::Undisplay(ranged(n, "number", u64::MAX)?),
        ("info" | "i", [what]) => Command::Info(match *what {
            "breakpoints" | "break" | "b" | "watchpoints" => Info::Breakpoints,
            "locks" => Info::Locks,
            "tasks" => Info::Tasks,
            "cores" | "threads" => Info::Cores,
            "display" => Info::Display,
            _ => {
                return Err(format!(
                    "info wants breakpoints, locks, tasks, cores or display, not {:?}",
                    short(what)
                ))
            }
        }),
        ("finish", _) => no_args(Command::Finish)?,
        ("when", [t]) | ("when", [t, "core", _]) => {
            let core = match args {
                [_, _, k] => Some(core(k)?),
                _ => None,
            };
            match t.strip_prefix('r').and_then(|n| n.parse::<u8>().ok()) {
                Some(r) if r < 16 => Command::When(WriteTarget::Register(core, r)),
                Some(_) => return Err(format!("when: there is no register {t}")),
                None if core.is_some() => {
                    return Err("when: `core K` goes with a register, not an address".into())
                }
                None => Command::When(WriteTarget::Byte(addr(t)?)),
            }
        }
        ("until" | "u", [ip]) => Command::Until(ranged(ip, "IP", 15)? as u8),
        (x, [a]) if x == "x" || x.starts_with("x/") => {
            let n = match x.strip_prefix("x/") {
                Some(n) => ranged(n, "length", MEMORY_BYTES as u64)?,
                None => 16,
            };
            let a = addr(a)?;
            if u64::from(a) + n > MEMORY_BYTES as u64 {
                return Err(format!(
                    "x: 0x{a:03x} + {n} bytes runs past the end of memory (0xfff)"
                ));
            }
            Command::Mem(a, n as u16)
        }
        ("watch" | "w", [a]) => Command::Watch(addr(a)?),
        ("delete" | "d", []) => Command::Delete(None),
        ("delete" | "d", ["all"]) => Command::DeleteAll,
        ("delete" | "d", [n]) => Command::Delete(Some(ranged(n, "number", u64::MAX)?)),
        ("continue" | "c", _) => no_args(Command::Continue)?,
        ("step" | "s", []) => Command::Step(1),
        ("step" | "s", [n]) => Command::Step(ranged(n, "step count", u64::MAX)?),
        ("stepi" | "si", [k]) => Command::Stepi(core(k)?),
        ("stepi" | "si", []) => Command::StepiCurrent,
        ("run" | "restart", _) => no_args(Command::Restart)?,
        ("reverse-step" | "rs", []) => Command::ReverseStep(1),
        ("reverse-step" | "rs", [n]) => Command::ReverseStep(ranged(n, "step count", u64::MAX)?),
        ("reverse-stepi" | "rsi", [k]) => Command::ReverseStepi(core(k)?),
        ("reverse-continue" | "rc", _) => no_args(Command::ReverseContinue)?,
        ("reverse-finish", _) => no_args(Command::ReverseFinish)?,
        ("regs" | "r", []) => Command::Regs(None),
        ("regs" | "r", [k]) => Command::Regs(Some(core(k)?)),
        ("mem" | "m", [a]) => Command::Mem(addr(a)?, 16.min(MEMORY_BYTES as u16 - addr(a)?)),
        ("mem" | "m", [a, n]) => {
            let a = addr(a)?;
            let n = ranged(n, "length", MEMORY_BYTES as u64)?;
            if u64::from(a) + n > MEMORY_BYTES as u64 {
                return Err(format!(
                    "mem: 0x{a:03x} + {n} bytes runs past the end of memory (0xfff)"
                ));
            }
            Command::Mem(a, n as u16)
        }
        ("locks", _) => no_args(Command::Locks)?,
        ("tasks", _) => no_args(Command::Tasks)?,
        ("where", _) => no_args(Command::Where)?,
        ("disasm", []) => Command::Disasm(None),
        ("disasm", [f]) => Command::Disasm(Some(frame(f)?)),
        ("set", _) => set(&rest(line))?,
        ("source", []) => return Err("source wants a file".to_string()),
        ("source", _) => Command::Source(rest(line)),
        ("help" | "h" | "?", _) => Command::Help,
        ("quit" | "q" | "exit", _) => no_args(Command::Quit)?,
        (
            "watch" | "w" | "delete" | "d" | "step" | "s" | "stepi" | "si" | "regs" | "r" | "mem"
            | "m" | "disasm" | "reverse-step" | "rs" | "reverse-stepi" | "rsi" | "core"
            | "undisplay" | "info" | "i" | "until" | "u" | "x" | "when",
            _,
        ) => return Err(format!("{name}: wrong arguments; try help")),
        _ => {
            return Err(format!("unknown command {:?}; try help", short(name)));
        }
    };
    Ok(Some(command))
}

/// Every command's other names, (alias, command): `help` lists them all.
#[cfg(test)] // `parse` spells the aliases; the tests check them against this list.
pub(crate) const ALIASES: &[(&str, &str)] = &[
    ("b", "break"),
    ("w", "watch"),
    ("d", "delete"),
    ("c", "continue"),
    ("s", "step"),
    ("si", "stepi"),
    ("restart", "run"),
    ("rs", "reverse-step"),
    ("rsi", "reverse-stepi"),
    ("rc", "reverse-continue"),
    ("p", "print"),
    ("i", "info"),
    ("u", "until"),
    ("r", "regs"),
    ("m", "mem"),
    ("h", "help"),
    ("?", "help"),
    ("q", "quit"),
    ("exit", "quit"),
];

/// The `help` text.
pub(crate) const HELP: &str = "\
command          alias  what it does
break F:I        b      stop before any core executes (or faults at) IP I of frame F
break cycle N    b      stop before cycle N
break FILE:LINE  b      stop at the instruction of that source line (assembly only)
break F:LABEL    b      stop at a label of frame F (assembly only)
break LOC core K b      the same, only when core K comes there
break LOC if EXPR b     the same, only where EXPR holds for the core that comes there
watch ADDR       w      stop after an instruction writes byte ADDR (before a faulting store)
delete N         d      remove breakpoint or watchpoint N
delete all       d all  remove every breakpoint and watchpoint
delete           d      the same (on a terminal it asks first: answer y)
continue         c      run to the next stop
step [N]         s      advance N cycles (default 1)
stepi [CORE]     si     run until that core (default: the current one) has executed its next instruction
core [K]                show or set the current core (a stop sets it to the core that stopped)
finish                  run until the current core's part ends (stops on the way count)
until IP         u      run until the current core comes to IP of its frame (stops on the way count)
run              restart  back to the start (before cycle 0); points stay
reverse-step [N] rs     back N cycles (default 1)
reverse-stepi CORE rsi  back to before that core's previous instruction
reverse-continue rc     back to the previous stop (the one continue from the start makes last before here)
reverse-finish          back to where the current core's part began (its first cycle)
regs [CORE]      r      registers
mem ADDR [LEN]   m      shared memory (LEN default 16)
x/N ADDR                N bytes of shared memory (default 16)
print EXPR       p      a value: rN (current core), cK.rN, [ADDR], cycle, core, numbers, C operators
display [EXPR]          show EXPR at every stop (no EXPR: show them now)
undisplay N             stop showing display N
info WHAT        i      breakpoints, locks, tasks, cores or display
when ADDR|rN [core K]   the last instruction before here that wrote that byte or register
locks                   locks held
tasks                   the task timeline
where                   each core's frame, IP and state
disasm [F]              a frame's source
set [ADDR] = BYTE       change a byte of shared memory (at cycle 0 only: after run)
source FILE             run FILE's commands, one a line, as if typed (nested at most 16 deep)
help             h, ?   this list
quit             q, exit  leave
At most 10000 breakpoints and watchpoints; a line is at most 4096 bytes.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_bad_ones_are_errors() {
        assert_eq!(
            parse("break 1:4"),
            Ok(Some(Command::Break(
                BreakSpec::Instr { frame: 1, ip: 4 },
                None,
                None
            )))
        );
        assert_eq!(
            parse("break 1:4 core 3"),
            Ok(Some(Command::Break(
                BreakSpec::Instr { frame: 1, ip: 4 },
                Some(3),
                None
            )))
        );
        assert_eq!(
            parse("break 1:4 core 3 if r1 == 2 && [0x10] > 1"),
            Ok(Some(Command::Break(
                BreakSpec::Instr { frame: 1, ip: 4 },
                Some(3),
                Some("r1 == 2 && [0x10] > 1".into())
            )))
        );
        assert!(parse("break 1:4 if").is_err());
        assert!(parse("break 1:4 core 16").is_err());
        assert_eq!(parse("x/8 0x10"), Ok(Some(Command::Mem(0x10, 8))));
        assert_eq!(parse("x 0x10"), Ok(Some(Command::Mem(0x10, 16))));
        assert!(parse("x/8 0xffc").is_err());
        assert_eq!(
            parse("print  r1 + [0x10] "),
            Ok(Some(Command::Print("r1 + [0x10]".into())))
        );
        assert!(parse("print").is_err());
        assert_eq!(parse("info cores"), Ok(Some(Command::Info(Info::Cores))));
        assert!(parse("info nothing").is_err());
        assert_eq!(parse("until 7"), Ok(Some(Command::Until(7))));
        assert_eq!(parse("stepi"), Ok(Some(Command::StepiCurrent)));
        assert_eq!(parse("core"), Ok(Some(Command::Core(None))));
        assert_eq!(
            parse("break cycle 0x10"),
            Ok(Some(Command::Break(BreakSpec::Cycle(16), None, None)))
        );
        assert_eq!(
            parse("break counter.s:15"),
            Ok(Some(Command::Break(
                BreakSpec::Line {
                    file: "counter.s".into(),
                    line: 15
                },
                None,
                None
            )))
        );
        assert_eq!(
            parse("break 1:loop"),
            Ok(Some(Command::Break(
                BreakSpec::Label {
                    frame: 1,
                    label: "loop".into()
                },
                None,
                None
            )))
        );
        assert_eq!(parse("  # note"), Ok(None));
        assert_eq!(parse("step"), Ok(Some(Command::Step(1))));
        assert_eq!(parse("mem 0xff0"), Ok(Some(Command::Mem(0xff0, 16))));
        assert_eq!(parse("mem 0xffc"), Ok(Some(Command::Mem(0xffc, 4))));
        for bad in [
            "frobnicate",
            "break 1:16",
            "watch 0x1000",
            "regs 16",
            "stepi 99999999999999999999999",
            "mem 0xff0 17",
            "step -1",
            "break",
            "break x:y",
            "continue now",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_command_the_completer_offers_is_a_command_help_lists() {
        for name in crate::debugger::complete::COMMANDS {
            if let Err(e) = parse(name) {
                assert!(!e.starts_with("unknown command"), "{name}: {e}");
            }
            assert!(
                HELP.lines().any(|l| l
                    .split(|c: char| c.is_whitespace() || c == ',')
                    .any(|w| w == *name)),
                "help does not list {name}"
            );
        }
    }

    #[test]
    fn every_alias_is_its_command_and_help_lists_it() {
        for &(alias, name) in ALIASES {
            for args in ["", " 1:4", " 3", " 0x10 2", " all"] {
                // The same command, or an error for both (its message names the word used).
                match (
                    parse(&format!("{alias}{args}")),
                    parse(&format!("{name}{args}")),
                ) {
                    (Ok(a), Ok(n)) => assert_eq!(a, n, "{alias}{args}"),
                    (Err(_), Err(_)) => {}
                    other => panic!("{alias}{args}: {other:?}"),
                }
            }
            let listed = HELP.lines().any(|l| {
                l.starts_with(name)
                    && l.split(|c: char| c.is_whitespace() || c == ',')
                        .skip(1)
                        .any(|w| w == alias)
            });
            assert!(listed, "help does not list {alias} for {name}");
        }
        assert_eq!(parse("delete all"), Ok(Some(Command::DeleteAll)));
        assert_eq!(parse("d all"), Ok(Some(Command::DeleteAll)));
        assert!(parse("delete al").is_err());
    }
}
