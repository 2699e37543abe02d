//! A manual page as `--help` finds it: which page argv asks for, and `man` opening it from
//! the pages beside the running binary (written by [`super::manual`]). Both `git-hpp` and `hop`
//! answer `--help` this way, so neither command's tree is needed here.

use std::path::PathBuf;

use crate::cli::exit::CliError;

/// The default manual directory: `share/man` beside the directory of the running binary.
pub fn default_dir() -> Result<PathBuf, CliError> {
    let exe = std::env::current_exe()
        .map_err(|e| CliError::refused(format!("cannot find the running binary: {e}")))?;
    let bin = exe
        .parent()
        .ok_or_else(|| CliError::refused("the running binary has no directory"))?;
    Ok(bin.parent().unwrap_or(bin).join("share").join("man"))
}

/// The manual page `--help` asks for in `argv` of `command` named `name` (`git-hpp-event-append`
/// for `git hpp event append --help`, `hop-land` for `hop land --help`), or `None` when argv does not ask for `--help` (`-h` is the short help, as
/// in git).
pub fn page_asked(
    argv: &[std::ffi::OsString],
    command: impl FnOnce() -> clap::Command,
    name: &str,
) -> Option<String> {
    let words: Vec<&str> = argv
        .iter()
        .skip(1)
        .map(|w| w.to_str().unwrap_or_default())
        .take_while(|w| *w != "--")
        .collect();
    if !words.contains(&"--help") {
        return None;
    }
    // Built only when asked: the command tree costs as much as the rest of a start-up.
    let mut command = command();
    let mut page = name.to_owned();
    for word in words.iter().filter(|w| !w.starts_with('-')) {
        let Some(sub) = command.find_subcommand(word).cloned() else {
            break;
        };
        page.push('-');
        page.push_str(sub.get_name());
        command = sub;
    }
    Some(page)
}

/// Opens the manual page `page` with `man`, as `git <command> --help` does, and returns its
/// exit code; `None` when man is not installed or finds no such page (the caller prints
/// clap's help instead). The pages beside the binary are searched first, then man's own path.
pub fn open(page: &str) -> Option<i32> {
    let dir = default_dir().ok()?;
    // A trailing colon keeps man's own search path after ours.
    let mut manpath = std::ffi::OsString::from(dir.as_os_str());
    manpath.push(":");
    if let Some(theirs) = std::env::var_os("MANPATH") {
        manpath.push(theirs);
    }
    let found = std::process::Command::new("man")
        .args(["-w", page])
        .env("MANPATH", &manpath)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    if !found.success() {
        return None;
    }
    let shown = std::process::Command::new("man")
        .arg(page)
        .env("MANPATH", &manpath)
        .status()
        .ok()?;
    shown.code()
}
