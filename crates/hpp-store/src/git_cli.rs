//! The `git` CLI, for the few things gix 0.91 has no API for (push, fetch, worktrees, the
//! porcelain views that must match git's own): one place that spawns it and turns a failure into
//! a store error.

use std::path::Path;
use std::process::{Command, Output};

use super::Error;

/// `git` run in `dir` as a user would run it there: the caller's `GIT_DIR`, `GIT_WORK_TREE`,
/// `GIT_INDEX_FILE` and `GIT_COMMON_DIR` are dropped (so a hook's environment does not redirect
/// it) and optional locks are off (so reading status never rewrites the index).
pub(super) fn in_dir(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--no-optional-locks")
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_COMMON_DIR");
    cmd
}

/// `git` bound to one repository: `--git-dir` (and `--work-tree` when given) name it, so the
/// caller's environment cannot point it elsewhere; runs in the worktree (or the git directory
/// of a bare repository), without optional locks, the caller's `GIT_*` location variables
/// dropped as in [`in_dir`].
pub(super) fn in_repo(git_dir: &Path, work_tree: Option<&Path>) -> Command {
    let mut cmd = in_dir(work_tree.unwrap_or(git_dir));
    cmd.arg("--git-dir").arg(git_dir);
    if let Some(root) = work_tree {
        cmd.arg("--work-tree").arg(root);
    }
    cmd
}

/// Runs `cmd` and returns its output whatever its exit status; only a git that cannot start is
/// an error. `what` names the operation in that error.
pub(super) fn output(cmd: &mut Command, what: &str) -> Result<Output, Error> {
    cmd.output().map_err(|source| Error::GitUnavailable {
        what: what.to_owned(),
        source,
    })
}

/// [`output`], calling `tick` every few milliseconds while `cmd` runs (its output read in two
/// threads meanwhile, so a full pipe never stalls it): a fetch watches for the pack it writes.
pub(super) fn output_watching(
    cmd: &mut Command,
    what: &str,
    mut tick: impl FnMut(),
) -> Result<Output, Error> {
    use std::io::Read as _;
    use std::process::Stdio;
    let unavailable = |source| Error::GitUnavailable {
        what: what.to_owned(),
        source,
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(unavailable)?;
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let (done, exited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
    });
    let status = loop {
        match exited.recv_timeout(std::time::Duration::from_millis(2)) {
            Ok(status) => break status.map_err(unavailable)?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => tick(),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(unavailable(std::io::Error::other("git's waiter ended")));
            }
        }
    };
    let read = |h: std::thread::JoinHandle<Vec<u8>>| h.join().unwrap_or_default();
    Ok(Output {
        status,
        stdout: read(stdout),
        stderr: read(stderr),
    })
}

/// Runs `cmd` and returns its stdout; a non-zero exit is an error carrying git's stderr.
pub(super) fn stdout(cmd: &mut Command, what: &str) -> Result<Vec<u8>, Error> {
    let out = output(cmd, what)?;
    if !out.status.success() {
        return Err(Error::GitFailed {
            what: what.to_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(out.stdout)
}

/// The object format of the repository at or above `cwd`, as git names it (`sha1`, `sha256`),
/// or `None` when git cannot say.
pub(crate) fn object_format(cwd: &std::path::Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .current_dir(cwd)
        .args(["rev-parse", "--show-object-format"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}
