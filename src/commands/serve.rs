//! `gpu16 serve`: the playground in the browser (`crate::serve`), and how the page's
//! machine choices become the machine `gpu16 debug` would run: they are turned into the
//! command line's flags (`--backend`, `--dialect`, `--timing`, `--max-cycles`, `--issue`,
//! `--bank-conflicts`, `--jit-engine`) and parsed by the same clap definitions, so the page
//! is bounded and checked exactly as the command line is.

use super::bounds::MAX_TRACE_LIMIT;
use super::machine_args::MachineArgs;
use super::value_enums::BackendArg;
use super::{emit, CliError, Finished};
use crate::run_output::events::DEFAULT_LIMIT;
use crate::serve::{Machine, Options};
use clap::{Args, Parser};
use gpu16::BackendKind;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
#[command(after_help = "\
Starts a web server on 127.0.0.1 only and prints its address; it opens no browser. The
page has an editor with the assembler's diagnostics, the bundled examples, run, step,
continue, reverse-step and breakpoints (the `gpu16 debug` session), the cores, registers,
memory and locks at the current cycle, the task timeline, the statistics and downloads of
the trace, VCD, PNG and JSON. It serves one user on their own machine: the server reads no
file but FILE. docs/playground.md has the page and its HTTP API. Ctrl-C ends it.")]
pub struct ServeArgs {
    /// An assembly source to open in the editor (the only file the server reads).
    pub file: Option<PathBuf>,
    /// The port on 127.0.0.1 (0: a free one, printed at start).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,
    /// Wall-clock limit, in seconds, of each command of the page and of each program's
    /// whole run (a decimal number, at most 1e9): past it the command stops and the
    /// session stays where it was.
    #[arg(long, value_name = "SECS", default_value = "10",
          value_parser = crate::stop::parse_timeout)]
    pub timeout: Duration,
    /// Keep at most N run events for the timeline, the trace and the VCD (1 to 10000000).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT as u64,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TRACE_LIMIT))]
    pub trace_limit: u64,
}

/// The machine flags, parsed from the page's choices.
#[derive(Parser)]
#[command(name = "machine", no_binary_name = true)]
struct Choices {
    #[arg(long, value_enum, default_value_t = BackendArg(BackendKind::Auto))]
    backend: BackendArg,
    #[command(flatten)]
    machine: MachineArgs,
}

/// `gpu16 serve`: runs until the process is ended (Ctrl-C: status 130); status 1 if the
/// port cannot be had.
pub fn serve(args: ServeArgs) -> Result<Finished, CliError> {
    let (server, port) = crate::serve::bind(args.port).map_err(CliError::failed)?;
    emit(&format!(
        "gpu16 serve: http://127.0.0.1:{port}/ (one user on this machine; Ctrl-C ends it)\n"
    ))
    .map_err(CliError::failed)?;
    let options = Options {
        file: args.file,
        timeout: args.timeout,
        trace_limit: args.trace_limit,
        machine: Box::new(machine),
        diagnostic: super::json_out::diagnostic,
    };
    crate::serve::run(server, port, options).map_err(CliError::failed)?;
    Ok(Finished::Success)
}

/// The machine the page's choices select, or why they are refused (clap's message).
fn machine(choices: &Value) -> Result<Machine, String> {
    let argv = flags(choices)?;
    let parsed = Choices::try_parse_from(&argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("").trim();
        first.strip_prefix("error: ").unwrap_or(first).to_string()
    })?;
    let config = parsed.machine.checked_config()?;
    Ok(Machine {
        runner: parsed.machine.runner(parsed.backend.0),
        config,
        dialect: parsed.machine.dialect(),
    })
}

/// The command-line words of the page's choices.
fn flags(choices: &Value) -> Result<Vec<String>, String> {
    let mut argv = Vec::new();
    for (key, flag) in [
        ("backend", "--backend"),
        ("dialect", "--dialect"),
        ("timing", "--timing"),
        ("max_cycles", "--max-cycles"),
        ("issue", "--issue"),
        ("jit_engine", "--jit-engine"),
    ] {
        match &choices[key] {
            Value::Null => {}
            Value::String(s) if s.is_empty() => {}
            // `--flag=value`, so a value starting with `-` is not read as a flag.
            Value::String(s) => argv.push(format!("{flag}={s}")),
            Value::Number(n) => argv.push(format!("{flag}={n}")),
            _ => return Err(format!("`{key}` must be a string or a number")),
        }
    }
    match &choices["bank_conflicts"] {
        Value::Bool(true) => argv.push("--bank-conflicts".into()),
        Value::Bool(false) | Value::Null => {}
        _ => return Err("`bank_conflicts` must be true or false".into()),
    }
    Ok(argv)
}
