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

/// Reads `pipe` to its end in a thread of its own (so a full pipe never stalls the child).
fn drain(pipe: Option<Box<dyn std::io::Read + Send>>) -> std::thread::JoinHandle<Vec<u8>> {
    use std::io::Read as _;
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// [`output`] within `limit`: past it the command is killed with its whole process group (a
/// fetch's transport helper, an ssh, started under it), and the result is [`Error::GitHung`].
pub(super) fn output_within(
    cmd: &mut Command,
    what: &str,
    limit: std::time::Duration,
) -> Result<Output, Error> {
    use std::os::unix::process::CommandExt as _;
    use std::process::Stdio;
    let unavailable = |source| Error::GitUnavailable {
        what: what.to_owned(),
        source,
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(unavailable)?;
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(unavailable)? {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let group = nix::unistd::Pid::from_raw(-(child.id() as i32));
            let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            return Err(Error::GitHung {
                what: what.to_owned(),
                seconds: limit.as_secs(),
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Ok(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// What a watcher's `tick` is told: that the watched directory changed (inotify said so), or
/// only that time passed (no inotify: the watcher looks for itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tick {
    /// An entry was created in the directory or moved into it.
    Changed,
    /// A few milliseconds passed.
    Elapsed,
}

/// [`output`], calling `tick` while `cmd` runs (its output read in two threads meanwhile, so a
/// full pipe never stalls it) whenever an entry is created in `dir` or moved into it, until
/// `tick` returns `false`: a fetch watches for the pack it writes. On Linux the kernel says
/// when (inotify), and the command's thread sleeps until then or until git exits; elsewhere,
/// or when inotify is not to be had, `tick` is called every 2 ms ([`Tick::Elapsed`]). Waking
/// every 2 ms to look was 4 ms of a board fetch's CPU while git ran, on a machine whose other
/// core was git's.
pub(super) fn output_watching(
    cmd: &mut Command,
    what: &str,
    dir: &Path,
    mut tick: impl FnMut(Tick) -> bool,
) -> Result<Output, Error> {
    use std::process::Stdio;
    let unavailable = |source| Error::GitUnavailable {
        what: what.to_owned(),
        source,
    };
    // Watching starts before git does, so nothing it writes goes unseen.
    let watch = inotify::Watch::new(dir);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(unavailable)?;
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let (done, exited) = std::sync::mpsc::channel();
    // The waiter closes `ended` once git's status is sent: the watch wakes on its hang-up.
    let (ended_rx, ended) = match watch.as_ref().map(|_| std::io::pipe()) {
        Some(Ok((rx, tx))) => (Some(rx), Some(tx)),
        _ => (None, None),
    };
    std::thread::spawn(move || {
        let _ = done.send(child.wait());
        drop(ended);
    });
    if let (Some(watch), Some(ended)) = (watch, ended_rx) {
        watch.until(&ended, &mut tick);
    }
    let status = loop {
        match exited.recv_timeout(std::time::Duration::from_millis(2)) {
            Ok(status) => break status.map_err(unavailable)?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                tick(Tick::Elapsed);
            }
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

/// A directory watched through inotify(7) (Linux).
#[cfg(target_os = "linux")]
mod inotify {
    use std::os::fd::AsFd as _;
    use std::path::Path;

    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

    use super::Tick;

    pub(super) struct Watch(Inotify, Option<nix::sys::inotify::WatchDescriptor>);

    impl Watch {
        /// Watches `dir` for entries created in it or moved into it; `None` when the kernel
        /// will not (no such directory, the watch limit reached).
        pub(super) fn new(dir: &Path) -> Option<Self> {
            let inotify = Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK).ok()?;
            let watch = inotify
                .add_watch(dir, AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO)
                .ok()?;
            Some(Self(inotify, Some(watch)))
        }

        /// Stops watching. The kernel lets go of a watch a grace period later, and closing an
        /// instance waits for that (8 to 16 ms here): a watch removed as soon as it is done
        /// with is long gone when git exits, and the close costs nothing.
        fn stop(&mut self) {
            if let Some(watch) = self.1.take() {
                let _ = self.0.rm_watch(watch);
            }
        }

        /// Calls `tick` after each batch of changes, until it returns `false` or `ended` is
        /// readable or hung up; returns early, leaving the rest to the caller's timed wait, if
        /// poll(2) fails.
        pub(super) fn until(
            mut self,
            ended: &std::io::PipeReader,
            tick: &mut impl FnMut(Tick) -> bool,
        ) {
            loop {
                let mut fds = [
                    PollFd::new(self.0.as_fd(), PollFlags::POLLIN),
                    PollFd::new(ended.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) => {}
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(_) => return,
                }
                let ready = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| !r.is_empty());
                let (changed, over) = (ready(&fds[0]), ready(&fds[1]));
                if changed {
                    // Read them all (non-blocking): what changed is for `tick` to look at.
                    while self.0.read_events().is_ok_and(|events| !events.is_empty()) {}
                    if self.1.is_some() && !tick(Tick::Changed) {
                        self.stop();
                    }
                }
                if over {
                    break;
                }
            }
            if self.1.is_some() {
                // Still watching (git wrote no pack): closed beside what the command does next.
                self.stop();
                std::thread::spawn(move || drop(self));
            }
        }
    }
}

/// No inotify here: every watch falls back to looking every few milliseconds.
#[cfg(not(target_os = "linux"))]
mod inotify {
    use std::path::Path;

    use super::Tick;

    pub(super) enum Watch {}

    impl Watch {
        pub(super) fn new(_dir: &Path) -> Option<Self> {
            None
        }

        pub(super) fn until(
            self,
            _ended: &std::io::PipeReader,
            _tick: &mut impl FnMut(Tick) -> bool,
        ) {
            match self {}
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `script` under `output_watching` on `dir`, ticking with `keep` (whether to go on
    /// watching after each tick); returns what each tick was told.
    fn watched(script: &str, dir: &Path, keep: impl Fn(usize) -> bool) -> Vec<Tick> {
        let mut ticks = Vec::new();
        let out = output_watching(
            Command::new("sh").args(["-c", script]),
            "a script",
            dir,
            |tick| {
                ticks.push(tick);
                keep(ticks.len())
            },
        )
        .expect("sh runs");
        assert!(out.status.success(), "{out:?}");
        ticks
    }

    #[test]
    fn a_watched_directory_ticks_when_an_entry_lands_until_the_watcher_is_done() {
        let script = |dir: &Path| {
            format!(
                "sleep 0.05; touch '{0}/a'; sleep 0.05; mv '{0}/a' '{0}/b'; sleep 0.05",
                dir.display()
            )
        };
        // Done after the first: the entry's creation is seen once and the move not at all.
        let dir = tempfile::tempdir().unwrap();
        let ticks = watched(&script(dir.path()), dir.path(), |_| false);
        if cfg!(target_os = "linux") {
            assert_eq!(ticks, [Tick::Changed], "told once, when the entry landed");
        } else {
            assert!(ticks.iter().all(|t| *t == Tick::Elapsed), "{ticks:?}");
        }
        // Still watching: the move is seen too.
        let dir = tempfile::tempdir().unwrap();
        let ticks = watched(&script(dir.path()), dir.path(), |_| true);
        if cfg!(target_os = "linux") {
            assert_eq!(ticks, [Tick::Changed; 2], "the creation, then the move");
        }
    }

    #[test]
    fn control_a_directory_the_kernel_cannot_watch_is_looked_at_every_few_milliseconds() {
        // No such directory: no inotify watch, so `tick` is called as time passes, and the
        // command's output is still read whole.
        let gone = tempfile::tempdir().unwrap().path().join("gone");
        let ticks = watched("sleep 0.05; echo done", &gone, |_| true);
        assert!(ticks.len() >= 5, "about every 2 ms for 50 ms: {ticks:?}");
        assert!(ticks.iter().all(|t| *t == Tick::Elapsed), "{ticks:?}");
    }
}
