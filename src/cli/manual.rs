//! `git hpp install-man` and `git hpp completions`: help the git way.
//!
//! git turns `git hpp --help` into `git help hpp`, which opens the manual page `git-hpp(1)`.
//! The pages are rendered from the same clap tree as `--help` (clap_mangen): one for
//! `git-hpp`, one per subcommand (`git-hpp-event-append(1)`), and `hop(1)`. They go to
//! `<the binary's directory>/../share/man/man1` by default: man-db derives its search path
//! from `PATH`, so after `cargo install` that is `~/.cargo/share/man`, which `man` reads
//! because `~/.cargo/bin` is on `PATH`.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;

/// Install the manual pages, so `git hpp --help` and `man git-hpp` open them
///
/// Writes git-hpp.1, one page per subcommand (git-hpp-event-append.1, ...) and hop.1 into
/// DIR/man1. DIR defaults to the share/man directory beside the running binary (after `cargo
/// install`, ~/.cargo/share/man), which man finds through PATH. Pages already there are
/// replaced. Exits 0, 2 when DIR cannot be written.
#[derive(Debug, clap::Args)]
pub struct InstallManArgs {
    /// The manual directory (its man1/ receives the pages) [default: <binary dir>/../share/man]
    dir: Option<PathBuf>,
    #[command(flatten)]
    format: JsonArg,
}

/// Print a shell completion script for git-hpp (or hop)
///
/// `git hpp completions bash > ~/.local/share/bash-completion/completions/git-hpp`, `git hpp
/// completions zsh > "${fpath[1]}/_git-hpp"`, `git hpp completions fish >
/// ~/.config/fish/completions/git-hpp.fish`. The script completes the `git-hpp` command (and
/// `hop` with --hop). Exits 0.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    shell: clap_complete::Shell,
    /// Complete `hop` instead of `git-hpp`
    #[arg(long)]
    hop: bool,
}

/// Every page: its file name and its roff text.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let mut out = Vec::new();
    let mut main = super::command();
    main.build();
    collect(&main, "git-hpp", &mut out)?;
    let mut hop = super::hop::HopCli::command();
    hop.build();
    collect(&hop, "hop", &mut out)?;
    Ok(out)
}

fn collect(
    command: &clap::Command,
    name: &str,
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), std::io::Error> {
    let mut page = Vec::new();
    let titled = command.clone().name(name.to_owned());
    clap_mangen::Man::new(titled)
        .date(env!("CARGO_PKG_VERSION"))
        .render(&mut page)?;
    out.push((format!("{name}.1"), page));
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        collect(sub, &format!("{name}-{}", sub.get_name()), out)?;
    }
    Ok(())
}

/// The default manual directory: `share/man` beside the directory of the running binary.
fn default_dir() -> Result<PathBuf, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::refused(format!("cannot find the running binary: {e}")))?;
    let bin = exe
        .parent()
        .ok_or_else(|| CliError::refused("the running binary has no directory"))?;
    Ok(bin.parent().unwrap_or(bin).join("share").join("man"))
}

/// Writes the pages into `dir/man1`; returns the directory written.
pub fn install(dir: &Path) -> Result<(PathBuf, usize), CliError> {
    let man1 = dir.join("man1");
    let cannot = |e: std::io::Error| CliError::refused(format!("{}: {e}", man1.display()));
    std::fs::create_dir_all(&man1).map_err(cannot)?;
    let pages = pages().map_err(|e| CliError::internal("rendering the manual", &e))?;
    for (name, text) in &pages {
        std::fs::write(man1.join(name), text).map_err(cannot)?;
    }
    Ok((man1, pages.len()))
}

/// Whether the manual is installed for the running binary (its `git-hpp.1` is there).
pub fn installed() -> bool {
    default_dir().is_ok_and(|dir| dir.join("man1").join("git-hpp.1").is_file())
}

/// Installs the manual where the running binary's `man` finds it.
pub fn install_default() -> Result<(PathBuf, usize), CliError> {
    install(&default_dir()?)
}

/// Runs `install-man`.
pub fn cmd_install_man(args: &InstallManArgs) -> Result<Outcome, CliError> {
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => default_dir()?,
    };
    let (man1, count) = install(&dir)?;
    let human = format!(
        "installed {count} manual pages in {}\n`git hpp --help` and `man git-hpp` open them{}",
        man1.display(),
        if args.dir.is_some() {
            format!(" when {} is on MANPATH", dir.display())
        } else {
            String::new()
        }
    );
    Ok(Outcome::document(
        args.format.json,
        &json!({"dir": man1, "pages": count}),
        human,
        Exit::Ok,
    ))
}

/// Runs `completions`.
pub fn cmd_completions(args: &CompletionsArgs) -> Result<Outcome, CliError> {
    let (mut command, name) = if args.hop {
        (super::hop::HopCli::command(), "hop")
    } else {
        (super::command(), "git-hpp")
    };
    // `--help` names the command as git runs it (`git hpp`); the shell completes the binary.
    command = command.bin_name(name);
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    Ok(Outcome::raw(script))
}
