//! The bounded process runner: every criterion command the harness runs goes through
//! [`run_bounded`].
//!
//! It implements the reference's `_process.run_bounded`: a command is an argv (never a shell
//! string), runs in its own process group, has its stdout and stderr drained concurrently, and
//! is stopped as a whole tree when its timeout expires (SIGTERM to the group, a short grace, then
//! SIGKILL to the group). Its result is data ([`Finished`]); what an exit code or a timeout means
//! (a verdict such as "could-not-start") is for the caller to decide. No refs are touched here.

use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use hpp_core::run::{self, NotFinished};

pub use hpp_core::run::{Finished, MAX_TIMEOUT_S};

/// How long a timed-out process group gets between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_millis(200);

/// How long, once the child is reaped, [`run_bounded`] still waits for its stdout and stderr to
/// reach end-of-file. A process that left the group and keeps the pipes open is not waited for
/// longer: what was read by then is returned.
pub const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// The first and the longest pause between two checks on a running child.
const POLL_FIRST: Duration = Duration::from_millis(1);
const POLL_MAX: Duration = Duration::from_millis(10);

/// Size of one read from a child's pipe.
const CHUNK: usize = 64 * 1024;

/// Why a command could not be run to an outcome.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The argv is empty, so there is no program to run.
    #[error("the command is empty: it needs at least a program name")]
    EmptyCommand,
    /// The timeout is zero, negative, not finite or longer than [`MAX_TIMEOUT_S`].
    #[error("timeout must be a positive, finite number of seconds, at most 86400")]
    BadTimeout,
    /// The program was not found, is not executable, or the working directory is unusable.
    #[error("could not start {program}")]
    CouldNotStart {
        /// The program as given in `argv[0]`.
        program: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// A thread to feed or drain the child's pipes could not be created; the child was killed.
    #[error("could not create a thread to talk to {program}")]
    Thread {
        /// The program as given in `argv[0]`.
        program: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// Waiting for the child failed (for instance because something else reaped it).
    #[error("could not wait for {program}")]
    Wait {
        /// The program as given in `argv[0]`.
        program: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The timed-out process group could not be signalled.
    #[error("could not stop the process group of {program} after its timeout")]
    Kill {
        /// The program as given in `argv[0]`.
        program: String,
        /// The operating system's reason.
        #[source]
        source: Errno,
    },
}

impl Error {
    /// Returns what the pure rulers need to know of this failure.
    pub fn not_finished(&self) -> NotFinished {
        match self {
            Error::CouldNotStart { .. } => NotFinished::CouldNotStart,
            other => NotFinished::Failed(other.to_string()),
        }
    }
}

/// Checks a timeout given in seconds and returns it as a [`Duration`] (the rule is
/// [`run::valid_timeout`]).
///
/// ```
/// use git_hpp::process::valid_timeout;
/// assert_eq!(valid_timeout(1.5).ok(), Some(std::time::Duration::from_millis(1500)));
/// assert!(valid_timeout(0.0).is_err());
/// ```
pub fn valid_timeout(seconds: f64) -> Result<Duration, Error> {
    run::valid_timeout(seconds).map_err(|_| Error::BadTimeout)
}

/// One command to run.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The program and its arguments. `argv[0]` is looked up on `PATH` unless it contains a `/`;
    /// no shell is involved.
    pub argv: &'a [String],
    /// The working directory of the child.
    pub cwd: &'a Path,
    /// How long the command may run before its process group is stopped. Must be non-zero and at
    /// most [`MAX_TIMEOUT_S`] seconds (see [`valid_timeout`]).
    pub timeout: Duration,
    /// Bytes written to the child's stdin, which is then closed; `None` connects stdin to
    /// `/dev/null`.
    pub stdin: Option<&'a [u8]>,
    /// Variables added to (or replacing those of) the inherited environment.
    pub env: &'a [(String, String)],
}

/// A watchdog for a child's process group: a small `sh` that leads the process group the child
/// then joins, reading a pipe that this process holds. If this process dies without saying
/// `done` (killed, even by SIGKILL), the pipe closes and the watchdog kills its whole group, so
/// a criterion never outlives the run that started it. It is started *before* the child and the
/// child is put in its group as it is created, so there is no moment at which the child runs
/// unwatched (issue 33: when the watchdog came second, a SIGKILL between the two spawns left the
/// criterion running). Best effort: without `/bin/sh` there is none, and the child leads a group
/// of its own as before.
///
/// `PR_SET_PDEATHSIG` would need `unsafe` code in the child before `exec`, which this crate
/// forbids; it would also reach only the child itself, not what the child starts.
struct Watchdog {
    child: Child,
}

impl Watchdog {
    fn start() -> Option<Self> {
        // Signals aimed at us (Ctrl-C to our group, a hangup) must not stop it first; `kill -9 0`
        // is every process of its own group: the child and everything the child started there.
        let script = "trap '' INT TERM HUP; if read -r word && [ \"$word\" = done ]; then exit 0; fi; kill -9 0 2>/dev/null; exit 0";
        Command::new("/bin/sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()
            .map(|child| Self { child })
    }

    /// The process group it leads, which the child joins.
    fn group(&self) -> Pid {
        Pid::from_raw(
            i32::try_from(self.child.id())
                .expect("a pid fits in i32 because pid_t is a 32-bit int"),
        )
    }

    /// Stands it down: the run ended here, whatever became of the group. A watchdog the group's
    /// SIGKILL (a timeout) already took is only reaped.
    fn done(mut self) {
        if let Some(mut stdin) = self.child.stdin.take() {
            let _ = stdin.write_all(b"done\n");
        }
        let _ = self.child.wait();
    }
}

/// Runs one command with a timeout and returns its exit status and output.
///
/// The child runs in a process group of its own, led by a watchdog started just before it
/// ([`Watchdog`]; without `/bin/sh`, the child leads the group). When the timeout expires the
/// group gets SIGTERM, then after [`TERM_GRACE`] SIGKILL, so children that ignore SIGTERM and
/// their own children in the group all die. Should this process die first, even by SIGKILL,
/// the watchdog kills the group. After the child is reaped, its output is drained
/// for at most [`DRAIN_GRACE`]. A child that exits normally is not followed by any signal:
/// background processes it left behind are not stopped.
///
/// # Errors
///
/// [`Error::EmptyCommand`] and [`Error::BadTimeout`] for a request that cannot be run,
/// [`Error::CouldNotStart`] when the program cannot be executed (callers report that as the
/// verdict "could-not-start"), and [`Error::Thread`], [`Error::Wait`] or [`Error::Kill`] when the
/// operating system fails us midway.
pub fn run_bounded(req: &Request<'_>) -> Result<Finished, Error> {
    run_bounded_echo(req, None)
}

/// Where a run's output is shown as it arrives (each chunk of stdout and stderr, in the order
/// read), besides being captured: the command line's own printer, so a person watching sees
/// a long criterion progress.
pub type Echo = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// As [`run_bounded`], also handing every chunk the child writes to `echo` as it is read.
pub fn run_bounded_echo(req: &Request<'_>, echo: Option<Echo>) -> Result<Finished, Error> {
    let (program, args) = req.argv.split_first().ok_or(Error::EmptyCommand)?;
    if req.timeout.is_zero() || req.timeout.as_secs_f64() > MAX_TIMEOUT_S {
        return Err(Error::BadTimeout);
    }

    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(req.cwd)
        .envs(req.env.iter().map(|(k, v)| (k, v)))
        .stdin(if req.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The watchdog first, then the child straight into its group (set before `exec`).
    let watchdog = Watchdog::start();
    command.process_group(watchdog.as_ref().map_or(0, |w| w.group().as_raw()));

    let start = Instant::now();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(source) => {
            if let Some(watchdog) = watchdog {
                watchdog.done();
            }
            return Err(Error::CouldNotStart {
                program: program.clone(),
                source,
            });
        }
    };
    let group = watchdog.as_ref().map_or_else(
        || {
            Pid::from_raw(
                i32::try_from(child.id()).expect("a pid fits in i32 because pid_t is a 32-bit int"),
            )
        },
        Watchdog::group,
    );

    let pipes = match start_pipes(&mut child, req.stdin, echo) {
        Ok(pipes) => pipes,
        Err(source) => {
            kill_and_reap(&mut child, group);
            if let Some(watchdog) = watchdog {
                watchdog.done();
            }
            return Err(Error::Thread {
                program: program.clone(),
                source,
            });
        }
    };

    let waited = wait_bounded(&mut child, group, start + req.timeout, program);
    if let Some(watchdog) = watchdog {
        watchdog.done();
    }
    let (status, timed_out) = waited?;
    let duration = start.elapsed();
    let (stdout, stderr) = pipes.collect(Instant::now() + DRAIN_GRACE);

    Ok(Finished {
        exit_code: if timed_out { None } else { status.code() },
        signal: status.signal(),
        timed_out,
        stdout,
        stderr,
        duration,
    })
}

/// As [`run_bounded`], and nothing the command started outlives it: this process becomes a
/// child subreaper (`PR_SET_CHILD_SUBREAPER`, Linux), so every descendant the command leaves
/// behind, one that left its process group (`setsid`) included, is re-parented here when its
/// parent exits; once the command has ended, each such orphan is killed (SIGKILL) and reaped,
/// and so are the ones its death re-parents, until none is left. A House Session's seats run
/// so: a seat's child that writes after the seat exits would write after the fingerprint that
/// judged the seat read-only. Processes that were already this process's children before the
/// run are left alone; nothing else may start children of this process meanwhile. Elsewhere
/// than on Linux it is [`run_bounded`].
pub fn run_contained(req: &Request<'_>) -> Result<Finished, Error> {
    #[cfg(target_os = "linux")]
    {
        // Best effort: without it, orphans go to init and only the group kill reaches them.
        let _ = nix::sys::prctl::set_child_subreaper(true);
        let before = own_children();
        let finished = run_bounded(req);
        sweep_orphans(&before);
        finished
    }
    #[cfg(not(target_os = "linux"))]
    {
        run_bounded(req)
    }
}

/// The pids whose parent is this process, read from `/proc`.
#[cfg(target_os = "linux")]
fn own_children() -> std::collections::BTreeSet<i32> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return std::collections::BTreeSet::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (comm) state ppid ...`: the command name may hold spaces and parentheses.
            let ppid = stat.rsplit(')').next()?.split_whitespace().nth(1)?;
            (ppid == me).then_some(pid)
        })
        .collect()
}

/// Kills and reaps every child of this process not in `before`, again and again as killing
/// one re-parents its own children here, until none is left (bounded, so a process that forks
/// without end cannot keep this busy for ever).
#[cfg(target_os = "linux")]
fn sweep_orphans(before: &std::collections::BTreeSet<i32>) {
    use nix::sys::signal::kill;
    use nix::sys::wait::waitpid;
    for _ in 0..1000 {
        let orphans: Vec<i32> = own_children()
            .into_iter()
            .filter(|pid| !before.contains(pid))
            .collect();
        if orphans.is_empty() {
            return;
        }
        for pid in orphans {
            let pid = Pid::from_raw(pid);
            let _ = kill(pid, Signal::SIGKILL);
            let _ = waitpid(pid, None);
        }
    }
}

/// Returns the last `max_chars` characters of `bytes`, decoded as UTF-8 (invalid sequences
/// become U+FFFD), without leading or trailing whitespace.
///
/// Trailing whitespace is dropped before counting, so a final newline does not use the budget.
///
/// ```
/// use git_hpp::process::stderr_tail;
/// assert_eq!(stderr_tail(b"line one\nline two\n", 8), "line two");
/// ```
pub fn stderr_tail(bytes: &[u8], max_chars: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end();
    let skip = text.chars().count().saturating_sub(max_chars);
    let start = text.char_indices().nth(skip).map_or(text.len(), |(i, _)| i);
    text[start..].trim_start().to_owned()
}

/// Waits for the child until `deadline`; past it, stops the whole process group.
///
/// Polling `try_wait` on this thread, rather than a waiter thread blocked in `wait`, is
/// deliberate: the child stays unreaped (a zombie at worst) until we are done signalling, and an
/// unreaped group leader keeps its process group id from being recycled, so `killpg` can never
/// reach an unrelated group. It also leaves no thread behind that could block forever. The cost
/// is at most [`POLL_MAX`] of latency after the child exits.
fn wait_bounded(
    child: &mut Child,
    group: Pid,
    deadline: Instant,
    program: &str,
) -> Result<(ExitStatus, bool), Error> {
    let wait_error = |source| Error::Wait {
        program: program.to_owned(),
        source,
    };
    let mut pause = POLL_FIRST;
    loop {
        if let Some(status) = child.try_wait().map_err(wait_error)? {
            return Ok((status, false));
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(POLL_MAX);
    }

    // The leader is not reaped yet, so the group id is still ours to signal. The grace is slept
    // in full rather than cut short when the leader exits: its children may still be cleaning
    // up, and reaping the leader early would free the group id before the SIGKILL.
    let kill_error = |source| Error::Kill {
        program: program.to_owned(),
        source,
    };
    signal_group(group, Signal::SIGTERM).map_err(kill_error)?;
    thread::sleep(TERM_GRACE);
    signal_group(group, Signal::SIGKILL).map_err(kill_error)?;
    let status = child.wait().map_err(wait_error)?;
    Ok((status, true))
}

/// Sends `signal` to the process group; a group that is already gone is not an error.
fn signal_group(group: Pid, signal: Signal) -> Result<(), Errno> {
    match killpg(group, signal) {
        Ok(()) | Err(Errno::ESRCH) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Kills the child's group and reaps the child, for when a run is abandoned after the spawn.
fn kill_and_reap(child: &mut Child, group: Pid) {
    // Best effort: the run already failed and the caller reports that error, not this one.
    let _ = signal_group(group, Signal::SIGKILL);
    let _ = child.wait();
}

/// A long-running child in a process group of its own (a server a command starts for a while,
/// such as the tour's `git daemon`), killed with everything it started when dropped. `git
/// daemon` runs `git-daemon` as a child of its own, so killing only the process that was
/// spawned would leave the server running.
pub struct Server {
    child: Child,
}

impl Server {
    /// Spawns `command` as the leader of a new process group.
    pub fn spawn(command: &mut Command) -> io::Result<Server> {
        let child = command.process_group(0).spawn()?;
        Ok(Server { child })
    }

    /// Whether the leader has exited (its group may live on until dropped).
    pub fn has_exited(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_some()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // The unreaped leader keeps the group id from being recycled until the kill is sent.
        let group = Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(i32::MAX));
        kill_and_reap(&mut self.child, group);
    }
}

/// The threads feeding and draining one child's pipes.
struct Pipes {
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Receiver<()>,
    threads: usize,
}

impl Pipes {
    /// Waits until every thread has finished or `deadline` passes, then returns what was read.
    ///
    /// A thread still blocked on a pipe held open by an escaped process is left running
    /// (detached); it ends when that process closes the pipe.
    fn collect(self, deadline: Instant) -> (Vec<u8>, Vec<u8>) {
        for _ in 0..self.threads {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.done.recv_timeout(left).is_err() {
                break;
            }
        }
        (take(&self.stdout), take(&self.stderr))
    }
}

fn take(buffer: &Mutex<Vec<u8>>) -> Vec<u8> {
    std::mem::take(&mut *buffer.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Starts one thread per pipe: stdout and stderr are read concurrently so that a child filling
/// one pipe while we block on the other cannot deadlock, and stdin is written from its own
/// thread for the same reason.
fn start_pipes(child: &mut Child, input: Option<&[u8]>, echo: Option<Echo>) -> io::Result<Pipes> {
    let (tx, done) = mpsc::channel();
    let mut threads = 0;
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let out: Option<ChildStdout> = child.stdout.take();
    if let Some(pipe) = out {
        drain(
            "hpp-stdout",
            pipe,
            Arc::clone(&stdout),
            tx.clone(),
            echo.clone(),
        )?;
        threads += 1;
    }
    let err: Option<ChildStderr> = child.stderr.take();
    if let Some(pipe) = err {
        drain("hpp-stderr", pipe, Arc::clone(&stderr), tx.clone(), echo)?;
        threads += 1;
    }
    if let (Some(mut pipe), Some(bytes)) = (child.stdin.take(), input) {
        let bytes = bytes.to_vec();
        let tx = tx.clone();
        thread::Builder::new()
            .name("hpp-stdin".into())
            .spawn(move || {
                // A child that exits without reading all of its input closes the pipe; that is
                // its business, not an error of the run.
                let _ = pipe.write_all(&bytes);
                drop(pipe);
                let _ = tx.send(());
            })?;
        threads += 1;
    }
    Ok(Pipes {
        stdout,
        stderr,
        done,
        threads,
    })
}

/// Reads `pipe` to end-of-file into `buffer` on a new thread, then reports on `done`.
fn drain(
    name: &str,
    mut pipe: impl Read + Send + 'static,
    buffer: Arc<Mutex<Vec<u8>>>,
    done: mpsc::Sender<()>,
    echo: Option<Echo>,
) -> io::Result<()> {
    thread::Builder::new().name(name.into()).spawn(move || {
        let mut chunk = vec![0u8; CHUNK];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    if let Some(echo) = &echo {
                        echo(&chunk[..n]);
                    }
                    buffer
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .extend_from_slice(&chunk[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A read error on a pipe ends the stream like end-of-file would.
                Err(_) => break,
            }
        }
        let _ = done.send(());
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_timeout_accepts_the_bounds_and_a_fraction() {
        assert_eq!(valid_timeout(0.1).unwrap(), Duration::from_millis(100));
        assert_eq!(valid_timeout(86400.0).unwrap(), Duration::from_secs(86400));
    }

    #[test]
    fn control_valid_timeout_rejects_what_is_not_a_positive_finite_day_or_less() {
        for bad in [
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            86400.001,
        ] {
            let err = valid_timeout(bad).unwrap_err();
            assert!(matches!(err, Error::BadTimeout), "{bad} gave {err:?}");
            assert_eq!(
                err.to_string(),
                "timeout must be a positive, finite number of seconds, at most 86400"
            );
        }
    }

    #[test]
    fn stderr_tail_keeps_the_last_characters_trimmed() {
        assert_eq!(stderr_tail(b"abcdef", 3), "def");
        assert_eq!(stderr_tail(b"  short \n\n", 100), "short");
        assert_eq!(stderr_tail(b"error: x\n   \n", 5), "or: x");
        assert_eq!(stderr_tail(b"", 10), "");
        assert_eq!(stderr_tail(b"abc", 0), "");
    }

    #[test]
    fn stderr_tail_counts_characters_not_bytes() {
        assert_eq!(stderr_tail("ação é".as_bytes(), 4), "ão é");
        assert_eq!(stderr_tail("日本語".as_bytes(), 2), "本語");
    }

    #[test]
    fn stderr_tail_replaces_invalid_utf8() {
        assert_eq!(stderr_tail(b"ok \xff\xfe end", 6), "\u{fffd}\u{fffd} end");
    }

    #[test]
    fn stderr_tail_drops_whitespace_exposed_by_the_cut() {
        assert_eq!(stderr_tail(b"first\n  second", 8), "second");
    }
}
