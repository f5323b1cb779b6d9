//! `gpu16 asm`, `gpu16 disasm` and `gpu16 check` (being built; see issue 3).

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct AsmArgs {
    /// Assembly source file.
    pub source: PathBuf,
}

#[derive(Args)]
pub struct DisasmArgs {
    /// Program image (.bin, .tm or .hex).
    pub image: PathBuf,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Program (.bin, .tm, .hex or assembly).
    pub program: PathBuf,
}

pub fn asm(_args: AsmArgs) -> Result<ExitCode, String> {
    Err("gpu16 asm is not built yet".into())
}

pub fn disasm(_args: DisasmArgs) -> Result<ExitCode, String> {
    Err("gpu16 disasm is not built yet".into())
}

pub fn check(_args: CheckArgs) -> Result<ExitCode, String> {
    Err("gpu16 check is not built yet".into())
}
