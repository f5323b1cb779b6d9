//! `gpu16 dap`: the Debug Adapter Protocol server on stdin/stdout (`crate::dap`), and how
//! a `launch` request's arguments become the session `gpu16 debug` would open: they are
//! turned into `debug`'s command-line flags and parsed by the same clap definition, then
//! loaded by the same [`open_session`], so both commands load programs exactly alike.

use super::debug::{open_session, DebugArgs, Unopened};
use super::{CliError, Finished};
use clap::{Args, Parser};
use gpu16::debugger::Session;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(after_help = "\
Speaks the Debug Adapter Protocol on stdin and stdout, for editors: VS Code (through a small
extension or a generic DAP client), nvim-dap, Emacs dap-mode. The launch request's
arguments: program (required), memory, memoryFormat, backend, dialect, timing, maxCycles,
issue, bankConflicts, jitEngine, cwd (for relative paths), stopOnEntry, and args (more
`gpu16 debug` flags as strings). docs/debugger.md has the mapping; README.md a launch
configuration.

Threads are the 16 cores (ids 1..16); each has one stack frame, its frame and IP at the
source line. Runs are re-executions from cycle 0, bounded by the watchdog (--max-cycles,
maxCycles); pause interrupts a run under way and the session stays at its previous stop.
A message is at most 1 MiB; bad framing ends the server with status 1.")]
pub struct DapArgs {}

/// `debug`'s flags, parsed from a launch request's arguments.
#[derive(Parser)]
#[command(name = "launch", no_binary_name = true)]
struct Launch {
    #[command(flatten)]
    debug: DebugArgs,
}

/// `gpu16 dap`: status 0 after `disconnect` or at the end of stdin, 1 if the input is no
/// DAP stream (bad headers, a Content-Length over 1 MiB, the input ending inside a message)
/// or stdout cannot be written.
pub fn dap(_args: DapArgs) -> Result<Finished, CliError> {
    crate::dap::serve(std::io::stdin(), std::io::stdout(), Box::new(launch))
        .map_err(CliError::failed)?;
    Ok(Finished::Success)
}

/// The session a launch request asks for.
fn launch(args: &Value) -> Result<Session, String> {
    let argv = flags(args)?;
    let launch = Launch::try_parse_from(&argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("").trim();
        format!(
            "bad launch arguments: {}",
            first.strip_prefix("error: ").unwrap_or(first)
        )
    })?;
    if !launch.debug.command_files.is_empty() {
        return Err(
            "-x/--command is for gpu16 debug: an editor sets its breakpoints itself, \
                    and the debug console's evaluate runs `source FILE`"
                .into(),
        );
    }
    if launch.debug.memory.mem.as_deref() == Some(Path::new("-")) {
        return Err("memory `-`: stdin carries the protocol, so the memory must be a file".into());
    }
    open_session(&launch.debug, true, Some("stdin carries the protocol")).map_err(|e| match e {
        Unopened::Usage(e) => e.to_string(),
        Unopened::Load(e) | Unopened::Assembly { error: e, .. } => e.to_string(),
    })
}

/// `debug`'s command-line words for a launch request's arguments.
fn flags(args: &Value) -> Result<Vec<String>, String> {
    let cwd = match args["cwd"].as_str() {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir().unwrap_or_default(),
    };
    // Absolute, canonical paths: the source map then names files as editors do, so a
    // breakpoint's path matches the program's lines.
    let path = |p: &str| {
        let p = cwd.join(p);
        p.canonicalize().unwrap_or(p).to_string_lossy().into_owned()
    };
    let program = args["program"]
        .as_str()
        .filter(|p| !p.is_empty())
        .ok_or("launch needs `program`: the path of a .s/.asm, .bin/.tm or .hex program")?;
    let mut argv = vec![if program == "-" {
        program.to_string()
    } else {
        path(program)
    }];
    let text = |key: &str| -> Result<Option<String>, String> {
        match &args[key] {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            Value::Number(n) => Ok(Some(n.to_string())),
            _ => Err(format!(
                "launch argument `{key}` must be a string or a number"
            )),
        }
    };
    if let Some(mem) = text("memory")? {
        argv.push("--mem".into());
        argv.push(if mem == "-" { mem } else { path(&mem) });
    }
    for (key, flag) in [
        ("memoryFormat", "--mem-format"),
        ("backend", "--backend"),
        ("dialect", "--dialect"),
        ("timing", "--timing"),
        ("maxCycles", "--max-cycles"),
        ("issue", "--issue"),
        ("jitEngine", "--jit-engine"),
    ] {
        if let Some(value) = text(key)? {
            // `--flag=value`, so a value starting with `-` is not read as a flag.
            argv.push(format!("{flag}={value}"));
        }
    }
    match &args["bankConflicts"] {
        Value::Bool(true) => argv.push("--bank-conflicts".into()),
        Value::Bool(false) | Value::Null => {}
        _ => return Err("launch argument `bankConflicts` must be true or false".into()),
    }
    match &args["args"] {
        Value::Null => {}
        Value::Array(words) => {
            for w in words {
                let w = w
                    .as_str()
                    .ok_or("launch argument `args` must be a list of strings")?;
                argv.push(w.to_string());
            }
        }
        _ => return Err("launch argument `args` must be a list of strings".into()),
    }
    Ok(argv)
}
