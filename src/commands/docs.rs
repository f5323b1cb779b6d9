//! `gpu16 completions` and `gpu16 man`: a shell completion script and roff man pages, both
//! generated from the clap definitions of the commands (by clap_complete and clap_mangen),
//! so they never fall behind the flags. Both print through [`emit`]: a closed pipe is not
//! an error. `man --dir` writes its pages as every output file is written (see
//! `outputs.rs`): checked before anything is written, and put in place all together or not
//! at all.

use super::outputs::write_together;
use super::{emit, CliError, Finished};
use crate::run_output::file::OutputFile;
use clap::Args;
use clap_complete::Shell;
use clap_mangen::Man;
use std::path::PathBuf;

/// The arguments of `gpu16 completions`.
#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for: bash, zsh, fish, elvish or powershell. For bash, e.g.
    /// `gpu16 completions bash > ~/.local/share/bash-completion/completions/gpu16`.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The arguments of `gpu16 man`.
#[derive(Args)]
pub struct ManArgs {
    /// Write one page per command into this existing directory (gpu16.1, gpu16-run.1, ...)
    /// instead of printing the page of `gpu16` itself on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `gpu16 completions SHELL`: the script on stdout; status 0, or 1 if stdout cannot be
/// written.
pub fn completions(args: CompletionsArgs, mut cli: clap::Command) -> Result<Finished, CliError> {
    let name = cli.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, name, &mut script);
    emit(&String::from_utf8_lossy(&script)).map_err(CliError::failed)?;
    Ok(Finished::Success)
}

/// `gpu16 man [--dir DIR]`: the page of `gpu16` on stdout, or a page per command in DIR
/// (the written files listed on stdout); status 0, or 1 if a page or stdout cannot be
/// written.
pub fn man(args: ManArgs, cli: clap::Command) -> Result<Finished, CliError> {
    // As clap_mangen's own `generate_to`: without the `help` subcommand (a man page has no
    // use for it, and gets no page), and built, so each subcommand's page is named
    // `gpu16-SUB`.
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    let Some(dir) = args.dir else {
        let page = render(Man::new(cli))?;
        emit(&String::from_utf8_lossy(&page)).map_err(CliError::failed)?;
        return Ok(Finished::Success);
    };
    let mut pages = Vec::new();
    collect(&cli, &mut pages);
    let mut files = Vec::new();
    let mut texts = Vec::new();
    for man in pages {
        files.push(OutputFile::prepare(&dir.join(man.get_filename())).map_err(CliError::failed)?);
        texts.push(render(man)?);
    }
    let pairs: Vec<(&OutputFile, &[u8])> = files.iter().zip(texts.iter().map(|t| &t[..])).collect();
    write_together(&pairs).map_err(CliError::failed)?;
    let list: String = files
        .iter()
        .map(|f| format!("{}\n", f.path().display()))
        .collect();
    emit(&list).map_err(CliError::failed)?;
    Ok(Finished::Success)
}

/// The pages of `cmd` and of each of its visible subcommands, depth first, `cmd` first.
fn collect(cmd: &clap::Command, pages: &mut Vec<Man>) {
    pages.push(Man::new(cmd.clone()));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, pages);
    }
}

/// The roff text of one page.
fn render(man: Man) -> Result<Vec<u8>, CliError> {
    let mut page = Vec::new();
    man.render(&mut page)
        .map_err(|e| CliError::failed(format!("cannot render the man page: {e}")))?;
    Ok(page)
}
