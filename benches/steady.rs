//! A steady-state probe for callgrind: run one assembly program warm on one backend, then
//! once more inside `measured`, the only function `benches/steady.sh` collects in. A
//! warm run's host instructions do not depend on machine noise, and the probe takes
//! seconds where a criterion row under callgrind takes minutes (`classes` builds all of its
//! programs under it whatever the filter). It uses only APIs that 6d9c98e has, so
//! `steady.sh` builds this same file against any tree for a before/after count.
//!
//! Usage: `steady PROGRAM.s BACKEND [--mcst] [--mem FILE]`; BACKEND is `interp`, `jit` or
//! `auto`; `--mcst` reads the program in the MCST dialect and runs it under `mcst-rtl`
//! timing; `--mem` gives the shared-memory image (raw bytes, at most 4 KiB). Run with no
//! program (as `cargo bench` does, with `--bench`), it says how to use it and exits 0.

use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Jit};
use gpu16_machine::{run, Config, Dialect, Program, TaskLog, Timing};
use std::io::Read;
use std::process::ExitCode;

const USAGE: &str = "usage: steady PROGRAM.s interp|jit|auto [--mcst] [--mem FILE]
  runs PROGRAM warm, then once inside `measured` (see benches/steady.sh)";

/// What one probe runs.
struct Probe {
    program: Program,
    memory: Vec<u8>,
    config: Config,
}

/// The run callgrind counts: kept out of line so that `--toggle-collect` finds it. It takes
/// the run as a closure, not a backend, so that the probe never names the `Backend` trait,
/// whose path differs between trees.
#[inline(never)]
fn measured(once: &mut dyn FnMut() -> Result<u64, String>) -> Result<u64, String> {
    once()
}

/// Make `warm` runs, each told it is a warm-up (`auto` then waits for its compiles), then
/// the measured run.
fn steady(warm: usize, mut once: impl FnMut(bool) -> Result<u64, String>) -> Result<u64, String> {
    for _ in 0..warm {
        once(true)?;
    }
    measured(&mut || once(false))
}

fn probe(args: &[String]) -> Result<Option<String>, String> {
    let mut rest = args.iter().filter(|a| a.as_str() != "--bench");
    let (Some(path), Some(backend)) = (rest.next(), rest.next()) else {
        return Ok(None);
    };
    let (mut mcst, mut mem) = (false, None);
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--mcst" => mcst = true,
            "--mem" => mem = Some(rest.next().ok_or("--mem needs a file")?),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    // The CLI's bound on an assembly file; one byte more is read, so an endless file
    // (`/dev/zero`) is refused rather than read into memory.
    const MAX_SOURCE: u64 = 16 << 20;
    let mut source = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SOURCE + 1).read_to_string(&mut source))
        .map_err(|e| format!("{path}: {e}"))?;
    if source.len() as u64 > MAX_SOURCE {
        return Err(format!("{path}: more than {MAX_SOURCE} bytes"));
    }
    let dialect = if mcst { Dialect::Mcst } else { Dialect::Spec };
    let program = gpu16_asm::assemble_in(&source, path, dialect)
        .map_err(|d| format!("{path} does not assemble:\n{d}"))?
        .program;
    // Read one byte past the bound, so that an endless file (`/dev/zero`) is refused too.
    let memory = match mem {
        Some(file) => {
            let mut bytes = Vec::new();
            std::fs::File::open(file)
                .and_then(|f| f.take(4097).read_to_end(&mut bytes))
                .map_err(|e| format!("{file}: {e}"))?;
            if bytes.len() > 4096 {
                return Err(format!("{file}: more than 4096 bytes"));
            }
            bytes
        }
        None => Vec::new(),
    };
    let mut config = Config {
        tasks: TaskLog::Summary,
        ..Config::default()
    };
    if mcst {
        config.timing = Timing::mcst_rtl();
    }
    let probe = Probe {
        program,
        memory,
        config,
    };
    // One run of `probe` on a backend: its cycles, or what went wrong.
    macro_rules! run_on {
        ($backend:expr, $warm:expr) => {
            run(&mut $backend, &probe.program, &probe.memory, &probe.config)
                .map(|report| report.cycles)
                .map_err(|failure| {
                    let which = if $warm {
                        "a warm-up run"
                    } else {
                        "the measured run"
                    };
                    format!("{which} failed: {:?}", failure.error)
                })
        };
    }
    let cycles = match backend.as_str() {
        "interp" => {
            let mut b = Interpreter::new();
            steady(1, |warm| run_on!(b, warm))?
        }
        "jit" => {
            let mut b = Jit::new();
            steady(3, |warm| run_on!(b, warm))?
        }
        "auto" => {
            let mut b = Auto::new();
            steady(30, |warm| {
                let cycles = run_on!(b, warm)?;
                if warm {
                    b.wait_for_compiles();
                }
                Ok(cycles)
            })?
        }
        other => return Err(format!("unknown backend {other:?}\n{USAGE}")),
    };
    Ok(Some(format!("{path} on {backend}: {cycles} cycles")))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match probe(&args) {
        Ok(Some(line)) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Ok(None) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("steady: {message}");
            ExitCode::FAILURE
        }
    }
}
