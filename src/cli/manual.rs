//! `git hpp install-man` and `git hpp completions`: help the git way.
//!
//! git turns `git hpp --help` into `git help hpp`, which opens the manual page `git-hpp(1)`.
//! The pages are rendered from the same clap tree as `--help` (clap_mangen): one for
//! `git-hpp`, one per subcommand (`git-hpp-event-append(1)`), and `hop(1)`. They go to
//! `<the binary's directory>/../share/man/man1` by default: man-db derives its search path
//! from `PATH`, so after `cargo install` that is `~/.cargo/share/man`, which `man` reads
//! because `~/.cargo/bin` is on `PATH`.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::exit::{CliError, Exit};
use crate::cli::man_page::default_dir;
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
/// ~/.config/fish/conf.d/git-hpp.fish`. The script completes the `git-hpp` command (and
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
    let mut hop = super::hop::command();
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
    // The examples are the page's own EXAMPLES section, not clap_mangen's EXTRA.
    let titled = command
        .clone()
        .name(name.to_owned())
        .after_long_help(None::<&str>);
    clap_mangen::Man::new(titled)
        .date(env!("CARGO_PKG_VERSION"))
        .render(&mut page)?;
    if let Some(examples) = super::examples::as_roff(name) {
        let text = String::from_utf8_lossy(&page).into_owned();
        // Before VERSION, where man pages keep their examples.
        let at = text.find(".SH VERSION").unwrap_or(text.len());
        let mut joined = text[..at].to_owned();
        joined.push_str(&examples);
        joined.push_str(&text[at..]);
        page = joined.into_bytes();
    }
    out.push((format!("{name}.1"), page));
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        collect(sub, &format!("{name}-{}", sub.get_name()), out)?;
    }
    Ok(())
}

/// Writes the pages into `dir/man1`; returns the directory written. Each page is written to a
/// temporary file and renamed into place, so a `man` reading while another process writes sees
/// the old page or the new one, never half of one.
pub fn install(dir: &Path) -> Result<(PathBuf, usize), CliError> {
    let man1 = dir.join("man1");
    let cannot = |e: std::io::Error| CliError::refused(format!("{}: {e}", man1.display()));
    std::fs::create_dir_all(&man1).map_err(cannot)?;
    let pages = pages().map_err(|e| CliError::internal("rendering the manual", &e))?;
    for (name, text) in &pages {
        let mut file = tempfile::NamedTempFile::new_in(&man1).map_err(cannot)?;
        std::io::Write::write_all(&mut file, text).map_err(cannot)?;
        file.persist(man1.join(name)).map_err(|e| cannot(e.error))?;
    }
    Ok((man1, pages.len()))
}

/// Puts the manual beside the running binary when it is missing or older than the binary, so
/// that `git hpp --help` (which git answers with `man git-hpp` before git-hpp ever runs) finds
/// it after any first `git hpp` command. Best effort and silent: a directory that cannot be
/// written (a system install) is left as it is, and `git hpp install-man DIR` remains.
pub fn keep_current() {
    let Ok(dir) = default_dir() else { return };
    let main = dir.join("man1").join("git-hpp.1");
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let Some(built) = std::env::current_exe().ok().as_deref().and_then(modified) else {
        return;
    };
    if modified(&main).is_some_and(|page| page >= built) {
        return;
    }
    // One writer at a time; the others go on without waiting (the pages come a moment later).
    let man1 = dir.join("man1");
    if std::fs::create_dir_all(&man1).is_err() {
        return;
    }
    let lock = man1.join(".git-hpp-writing");
    let stale = modified(&lock).is_some_and(|at| {
        at.elapsed()
            .is_ok_and(|age| age > std::time::Duration::from_secs(60))
    });
    if stale {
        let _ = std::fs::remove_file(&lock);
    }
    if std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .is_err()
    {
        return;
    }
    let _ = install(&dir);
    let _ = std::fs::remove_file(&lock);
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
        (super::hop::command(), "hop")
    } else {
        (super::command(), "git-hpp")
    };
    // `--help` names the command as git runs it (`git hpp`); the shell completes the binary.
    command = command.bin_name(name);
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    if args.shell == clap_complete::Shell::Bash {
        // clap_complete names a hyphenated binary's nested cases one way where it sets them
        // (`git__hpp__subcmd__event`) and another where it matches them
        // (`git__subcmd__hpp__subcmd__event`), so nothing below the first word completed.
        let text = String::from_utf8_lossy(&script).replace(
            &format!("{}__", name.replace('-', "__subcmd__")),
            &format!("{}__", name.replace('-', "__")),
        );
        script = text.clone().into_bytes();
        if !args.hop
            && let Some(function) = completion_function(&text)
        {
            let mut names = std::collections::BTreeSet::new();
            subcommand_names(&command, &mut names);
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            script.extend_from_slice(git_bash_glue(&function, &names.join(" ")).as_bytes());
        }
    }
    if args.shell == clap_complete::Shell::Fish && !args.hop {
        script.extend_from_slice(GIT_FISH_GLUE.as_bytes());
    }
    Ok(Outcome::raw(script))
}

/// The function the bash script registers for `git-hpp` (`complete -F NAME ... git-hpp`).
fn completion_function(script: &str) -> Option<String> {
    let after = script.split("complete -F ").nth(1)?;
    after.split_whitespace().next().map(ToOwned::to_owned)
}

/// `git hpp <TAB>` in fish. fish's git completion (3.6) registers each `git-*` command under
/// its file name (`git-hpp`, not `hpp`), so it never hands `git hpp ...` to the `git-hpp`
/// completion; this does, with the words after `hpp`. It is a `complete -c git` rule, so the
/// script goes where fish reads it at start-up (`~/.config/fish/conf.d/`), not only when
/// `git-hpp` itself is completed.
const GIT_FISH_GLUE: &str = r#"
# `git hpp <TAB>`: complete the words after `hpp` as `git-hpp` would be completed.
function __git_hpp_complete
    set -l args (commandline -opc)[3..]
    set -l token (commandline -ct)
    complete -C "git-hpp $args $token"
end
complete -c git -f -n '__fish_seen_subcommand_from hpp' -a '(__git_hpp_complete)'
"#;

/// `_git_hpp`, the function git's own bash completion calls for `git hpp <TAB>`: it hands the
/// words after `hpp` to the `git-hpp` completion, as if `git-hpp` had been typed. (zsh's `_git`
/// calls `_git-hpp`, so it needs no glue; fish has [`GIT_FISH_GLUE`].)
/// Every subcommand's name, at every depth.
fn subcommand_names(command: &clap::Command, names: &mut std::collections::BTreeSet<String>) {
    for sub in command.get_subcommands() {
        names.insert(sub.get_name().to_owned());
        subcommand_names(sub, names);
    }
}

fn git_bash_glue(function: &str, subcommands: &str) -> String {
    format!(
        r#"
# `git hpp <TAB>`: git's completion (git-completion.bash) calls _git_hpp for the words after
# `hpp`; complete them as `git-hpp` would be. git registers itself with -o nospace, so a whole
# word gets its space here (a directory its slash, but never a subcommand that a directory of
# the same name happens to sit beside).
_git_hpp() {{
    local idx="${{__git_cmd_idx:-}}" i subcommands=" {subcommands} "
    if [[ -z "$idx" ]]; then
        idx=1
        for ((i = 1; i < ${{#words[@]}}; i++)); do
            if [[ "${{words[i]}}" == hpp ]]; then idx=$i; break; fi
        done
    fi
    local -a COMP_WORDS=(git-hpp "${{words[@]:idx+1}}")
    local COMP_CWORD=$((cword - idx))
    {function} git-hpp "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
    for i in "${{!COMPREPLY[@]}}"; do
        if [[ -d "${{COMPREPLY[i]}}" && "$subcommands" != *" ${{COMPREPLY[i]}} "* ]]; then
            COMPREPLY[i]+=/
        else
            COMPREPLY[i]+=" "
        fi
    done
}}
"#
    )
}
