//! What a command would destroy in a worktree, asked of git itself: the facts the command
//! policy's full rules need before they count a delete or a discard (tracked files, or
//! untracked files that are not ignored, under a path; uncommitted changes; what `git clean`
//! would remove). Each answer is `None` when git cannot tell: the caller counts that as work
//! there. Nothing is written, and no repository needs to exist.

use std::path::{Component, Path, PathBuf};

use super::git_cli;

/// The worktree's top level and its git directory, for `cwd`; `None` outside a repository.
fn repository(cwd: &Path) -> Option<(PathBuf, PathBuf)> {
    let out = git_cli::in_dir(cwd)
        .args(["rev-parse", "--show-toplevel", "--absolute-git-dir"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let mut lines = text.lines();
    let top = lines.next().filter(|l| !l.is_empty())?;
    let git_dir = lines.next().filter(|l| !l.is_empty())?;
    Some((
        std::fs::canonicalize(top).ok()?,
        std::fs::canonicalize(git_dir).ok()?,
    ))
}

/// The path `rm` would remove: its parent resolved (`..`, symlinked directories), the last
/// component kept as written, so a symlink names itself, not what it points to (`link/`,
/// with the slash, names the directory behind it).
fn resolved(cwd: &Path, path: &str) -> Option<PathBuf> {
    let full = cwd.join(path);
    if path.ends_with('/') {
        return std::fs::canonicalize(&full).ok();
    }
    match full.components().next_back()? {
        Component::Normal(name) => {
            let parent = full.parent()?;
            Some(std::fs::canonicalize(parent).ok()?.join(name))
        }
        _ => std::fs::canonicalize(&full).ok(),
    }
}

/// Whether deleting `path` (as a command wrote it, from `cwd`) destroys a tracked file, or an
/// untracked file that is not ignored. A path that does not exist holds nothing; the worktree
/// itself, a directory above it and the git directory always hold work; outside the worktree,
/// only what is under the system's temporary directory is known to hold none.
pub fn holds_work(cwd: &Path, path: &str) -> Option<bool> {
    match std::fs::symlink_metadata(cwd.join(path)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(false),
        Err(_) => return None,
        Ok(_) => {}
    }
    let target = resolved(cwd, path)?;
    let temp = || {
        std::fs::canonicalize(std::env::temp_dir())
            .is_ok_and(|temp| target.starts_with(&temp) && target != temp)
    };
    let Some((top, git_dir)) = repository(cwd) else {
        let above = std::fs::canonicalize(cwd).is_ok_and(|cwd| cwd.starts_with(&target));
        return (!above && temp()).then_some(false);
    };
    if top.starts_with(&target) || git_dir.starts_with(&target) || target.starts_with(&git_dir) {
        return Some(true);
    }
    let Ok(inside) = target.strip_prefix(&top) else {
        return temp().then_some(false);
    };
    if inside.components().any(|c| c.as_os_str() == ".git") {
        return Some(true);
    }
    let out = git_cli::in_dir(&top)
        .args([
            "--literal-pathspecs",
            "ls-files",
            "-z",
            "--cached",
            "--others",
        ])
        .args(["--exclude-standard", "--"])
        .arg(inside)
        .output()
        .ok()?;
    out.status.success().then_some(!out.stdout.is_empty())
}

/// Whether tracked files under `pathspecs` (git's pathspecs, from `cwd`; every tracked file
/// when empty) differ from `HEAD`, in the index or the worktree.
pub fn has_uncommitted(cwd: &Path, pathspecs: &[String]) -> Option<bool> {
    let out = git_cli::in_dir(cwd)
        .args(["status", "--porcelain", "-z", "--untracked-files=no", "--"])
        .args(pathspecs)
        .output()
        .ok()?;
    out.status.success().then_some(!out.stdout.is_empty())
}

/// Whether `git clean` with `args` (the words after `clean`), run in `cwd`, would remove an
/// untracked file that is not ignored: asked of `git clean --dry-run` with the same pathspecs
/// and `-d`, without `-x`. `-X` removes ignored files only.
pub fn clean_removes_work(cwd: &Path, args: &[String]) -> Option<bool> {
    let mut kept: Vec<String> = Vec::new();
    let mut options = true;
    let mut only_ignored = false;
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        if !options || !arg.starts_with('-') || arg == "-" {
            kept.push(arg.clone());
            continue;
        }
        match arg.as_str() {
            "--" => {
                options = false;
                kept.push(arg.clone());
            }
            "--force" | "--interactive" | "--quiet" | "--dry-run" => {}
            "-e" | "--exclude" => {
                kept.push(arg.clone());
                kept.push(args.get(at)?.clone());
                at += 1;
            }
            long if long.starts_with("--exclude=") => kept.push(long.to_owned()),
            long if long.starts_with("--") => kept.push(long.to_owned()),
            short => {
                let flags = &short[1..];
                if flags.contains('e') {
                    // `-fde*.o`: an exclude pattern glued to the cluster; not read here.
                    return None;
                }
                only_ignored |= flags.contains('X');
                if flags.contains('d') {
                    kept.push("-d".to_owned());
                }
            }
        }
    }
    if only_ignored {
        return Some(false);
    }
    let out = git_cli::in_dir(cwd)
        .args(["clean", "--dry-run"])
        .args(&kept)
        .output()
        .ok()?;
    out.status.success().then_some(!out.stdout.is_empty())
}

/// The value of the git configuration `key` as git reads it in `cwd` (every scope, the
/// repository's if there is one); `None` when it is not set or git cannot tell.
pub fn config(cwd: &Path, key: &str) -> Option<String> {
    let out = git_cli::in_dir(cwd)
        .args(["config", "--get", key])
        .output()
        .ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .trim_end_matches('\n')
            .to_owned()
    })
}
