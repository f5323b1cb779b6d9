//! The `gpu16` command line: argument parsing and dispatch to the commands. How a command's
//! result becomes the exit status is `commands::status`.

#![forbid(unsafe_code)]
// Messages go through `stderr_line!`/`stderr_text!`: `eprintln!` panics (status 101) when
// stderr is a closed pipe.
#![deny(clippy::print_stderr)]

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// `eprintln!` that never panics: where stderr cannot be written (a closed pipe, a full
/// disk) the message is dropped, as there is nowhere left to report it, and the command
/// exits with the status it would have had.
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics; see `stderr_line!`.
macro_rules! stderr_text {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod commands;
// The binary's own parts: the DAP server, the playground, the progress bar, signals and
// `--timeout` (`stop`), and the files a run writes (pictures, `--expect`, the streamed
// `--json`) serve only the command line, so they are not the library's API.
mod dap;
mod progress;
mod run_output;
mod serve;
mod stop;

/// Emulator of the gpu16 16-core GPU: run programs, assemble and inspect them.
#[derive(Parser)]
#[command(name = "gpu16", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program and report the final state, cycles and task timeline.
    Run(Box<commands::run::RunArgs>),
    /// Assemble a source file into a task-memory image.
    Asm(commands::asm::AsmArgs),
    /// Disassemble a task-memory image into source that re-assembles to the same bytes.
    Disasm(commands::asm::DisasmArgs),
    /// Check a program for load errors and lint warnings without running it.
    Check(commands::asm::CheckArgs),
    /// Generate a random valid (or exactly-one-rule-breaking) program for a seed.
    Gen(commands::gen::GenArgs),
    /// Debug a program: breakpoints, watchpoints, stepping and the machine's state, with
    /// commands one a line on stdin.
    Debug(commands::debug::DebugArgs),
    /// Serve the Debug Adapter Protocol on stdin/stdout, so editors (VS Code, nvim-dap,
    /// Emacs dap-mode) can debug a program: the `debug` session behind an editor.
    Dap(commands::dap::DapArgs),
    /// Serve the playground: a local web page to write, run, step and watch programs.
    Serve(commands::serve::ServeArgs),
    /// Run a program on two backends and print `identical` or the first divergence.
    Diff(commands::diff::DiffArgs),
    /// Diff two backends on many generated programs, in parallel, shrinking any divergence.
    Fuzz(commands::fuzz::FuzzArgs),
    /// Print a shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(commands::docs::CompletionsArgs),
    /// Print the man page, or write one page per command with --dir.
    Man(commands::docs::ManArgs),
}

fn main() -> ExitCode {
    // Not `Cli::parse`: it would ignore a failed write of `--help` to stdout.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return commands::stdout::clap_message(e),
    };
    // Ctrl-C, SIGTERM and SIGHUP end any command at once (status 128 + the signal's
    // number: 130, 143, 129), removing the temporary files of outputs being written; `run`
    // and `debug` stop their work first. Set before any thread starts (the signals are
    // blocked and one thread waits for them). Without the handler a signal kills the
    // process, which is no worse.
    let _ = crate::stop::handle_signals();
    // A source read again for the files it includes must give the same text: a FIFO or a
    // pipe would not (issue 33).
    gpu16::input::read_each_input_once();
    commands::status::exit(match cli.command {
        Command::Run(args) => commands::run::run(*args),
        Command::Asm(args) => commands::asm::asm(args),
        Command::Disasm(args) => commands::asm::disasm(args),
        Command::Check(args) => commands::asm::check(args),
        Command::Gen(args) => commands::gen::gen(args),
        Command::Debug(args) => commands::debug::debug(args),
        Command::Dap(args) => commands::dap::dap(args),
        Command::Serve(args) => commands::serve::serve(args),
        Command::Diff(args) => commands::diff::diff(args),
        Command::Fuzz(args) => commands::fuzz::fuzz(args),
        Command::Completions(args) => commands::docs::completions(args, Cli::command()),
        Command::Man(args) => commands::docs::man(args, Cli::command()),
    })
}
