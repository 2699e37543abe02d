//! Process runner tests: `git_hpp::process::run_bounded` against real processes (`sh`, `sleep`,
//! `cat`, `true`, `false`), including timeouts that must take down a whole process tree.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git_hpp::process::{self, Error, Finished, Request, run_bounded, valid_timeout};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// A bound that only a hang, never a slow machine, can break.
const HANG: Duration = Duration::from_secs(10);

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn run_in(cwd: &Path, words: &[&str], timeout_s: f64) -> Result<Finished, Error> {
    let argv = argv(words);
    run_bounded(&Request {
        argv: &argv,
        cwd,
        timeout: valid_timeout(timeout_s).expect("the tests use valid timeouts"),
        stdin: None,
        env: &[],
    })
}

#[track_caller]
fn run(words: &[&str]) -> Finished {
    run_in(Path::new("."), words, 30.0).expect("the command starts")
}

#[track_caller]
fn sh(script: &str) -> Finished {
    run(&["sh", "-c", script])
}

/// Whether `pid` names a process that is still running (a zombie counts as gone: it is dead and
/// only waits for whoever is now its parent to reap it).
fn is_alive(pid: i32) -> bool {
    if cfg!(target_os = "linux") {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state letter follows the parenthesised command name.
            Ok(stat) => !matches!(
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.trim_start().chars().next()),
                Some('Z' | 'X') | None
            ),
            Err(_) => false,
        }
    } else {
        kill(Pid::from_raw(pid), None).is_ok()
    }
}

/// Polls until `pid` is gone or a bound passes; returns whether it is gone.
fn gone_soon(pid: i32) -> bool {
    let deadline = Instant::now() + HANG;
    while Instant::now() < deadline {
        if !is_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[track_caller]
fn read_pid(path: &PathBuf) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()))
        .trim()
        .parse()
        .expect("the file holds a pid")
}

#[test]
fn control_valid_timeout_refuses_zero_negative_nan_infinite_and_too_long() {
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 86401.0] {
        let err = valid_timeout(bad).expect_err("a bad timeout is refused");
        assert!(matches!(err, Error::BadTimeout), "{bad}: {err:?}");
        assert_eq!(
            err.to_string(),
            "timeout must be a positive, finite number of seconds, at most 86400"
        );
    }
}

#[test]
fn valid_timeout_accepts_a_tenth_of_a_second_and_a_whole_day() {
    assert_eq!(valid_timeout(0.1).unwrap(), Duration::from_millis(100));
    assert_eq!(
        valid_timeout(process::MAX_TIMEOUT_S).unwrap(),
        Duration::from_secs(86400)
    );
}

#[test]
fn control_the_liveness_check_sees_a_live_process_and_its_death() {
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    assert!(is_alive(pid), "a running sleep must count as alive");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        gone_soon(pid),
        "a killed and reaped sleep must count as gone"
    );
}

#[test]
fn exit_codes_pass_through() {
    for (words, code) in [
        (&["true"][..], 0),
        (&["false"][..], 1),
        (&["sh", "-c", "exit 7"][..], 7),
    ] {
        let done = run(words);
        assert_eq!(done.exit_code, Some(code), "{words:?}: {done:?}");
        assert_eq!(done.signal, None);
        assert!(!done.timed_out);
    }
}

#[test]
fn a_child_killed_by_a_signal_has_no_exit_code_but_the_signal() {
    let done = sh("kill -9 $$");
    assert_eq!(done.exit_code, None);
    assert_eq!(done.signal, Some(9));
    assert!(!done.timed_out);
}

#[test]
fn stdout_and_stderr_are_captured_separately() {
    let done = sh("printf 'to out\\n'; printf 'to err\\n' >&2; exit 3");
    assert_eq!(done.stdout, b"to out\n");
    assert_eq!(done.stderr, b"to err\n");
    assert_eq!(done.exit_code, Some(3));
    assert_eq!(process::stderr_tail(&done.stderr, 100), "to err");
}

#[test]
fn argv_is_passed_verbatim_without_a_shell() {
    let done = run(&["echo", "$HOME; false", "*"]);
    assert_eq!(done.stdout, b"$HOME; false *\n");
    assert_eq!(done.exit_code, Some(0));
}

#[test]
fn five_megabytes_on_both_pipes_do_not_deadlock() {
    // stderr first: a runner that read stdout to its end before touching stderr would block on
    // stdout while the child blocks on a full stderr pipe.
    let five_mb = 5 * 1024 * 1024;
    let done = sh(&format!(
        "head -c {five_mb} /dev/zero | tr '\\0' e >&2; head -c {five_mb} /dev/zero | tr '\\0' o"
    ));
    assert!(!done.timed_out, "the run hung until its timeout");
    assert_eq!(done.exit_code, Some(0));
    assert_eq!(done.stdout.len(), five_mb);
    assert_eq!(done.stderr.len(), five_mb);
    assert!(done.stdout.iter().all(|b| *b == b'o'));
    assert!(done.stderr.iter().all(|b| *b == b'e'));
}

#[test]
fn a_timeout_stops_a_long_sleep_quickly() {
    let started = Instant::now();
    let done = run_in(Path::new("."), &["sleep", "30"], 0.5).unwrap();
    let took = started.elapsed();
    assert!(done.timed_out, "{done:?}");
    assert_eq!(done.exit_code, None);
    assert_eq!(done.signal, Some(Signal::SIGTERM as i32));
    assert!(done.duration >= Duration::from_millis(500), "{done:?}");
    assert!(took < HANG, "run_bounded took {took:?} for a 0.5 s timeout");
}

#[test]
fn a_timeout_kills_a_child_that_ignores_sigterm_and_its_grandchild() {
    let dir = tempfile::tempdir().unwrap();
    let child_pid = dir.path().join("child.pid");
    let grandchild_pid = dir.path().join("grandchild.pid");
    // `trap '' TERM` makes the shell and the sleep it starts ignore SIGTERM, so only the SIGKILL
    // to the whole group can stop them.
    let script = "trap '' TERM; echo $$ > child.pid; sleep 300 & echo $! > grandchild.pid; \
                  echo started; wait";
    let started = Instant::now();
    let done = run_in(dir.path(), &["sh", "-c", script], 1.0).unwrap();
    assert!(started.elapsed() < HANG, "took {:?}", started.elapsed());
    assert!(done.timed_out, "{done:?}");
    assert_eq!(done.exit_code, None);
    assert_eq!(done.signal, Some(Signal::SIGKILL as i32), "{done:?}");
    assert_eq!(done.stdout, b"started\n");

    let child = read_pid(&child_pid);
    let grandchild = read_pid(&grandchild_pid);
    assert!(gone_soon(child), "the child {child} survived the timeout");
    assert!(
        gone_soon(grandchild),
        "the grandchild {grandchild} survived the timeout"
    );
}

#[test]
fn an_escaped_process_holding_the_pipes_does_not_hang_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // setsid moves the sleep out of the child's process group; it keeps stdout and stderr open.
    let script = "echo before; setsid sleep 60 & echo $! > escaped.pid; exit 0";
    let started = Instant::now();
    let done = run_in(dir.path(), &["sh", "-c", script], 30.0).unwrap();
    let took = started.elapsed();
    let escaped = read_pid(&dir.path().join("escaped.pid"));
    // Clean up before asserting, so a failure does not leave the sleep behind.
    let _ = kill(Pid::from_raw(escaped), Signal::SIGKILL);

    assert!(
        took < HANG,
        "run_bounded waited {took:?} for the escaped sleep"
    );
    assert!(!done.timed_out);
    assert_eq!(done.exit_code, Some(0));
    assert_eq!(done.stdout, b"before\n");
}

#[test]
fn a_missing_program_could_not_start() {
    let err = run_in(Path::new("."), &["hpp-no-such-program-xyz", "arg"], 5.0).unwrap_err();
    match err {
        Error::CouldNotStart { program, source } => {
            assert_eq!(program, "hpp-no-such-program-xyz");
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected CouldNotStart, got {other:?}"),
    }
}

#[test]
fn a_file_that_is_not_executable_could_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let path = script.to_str().unwrap();
    let err = run_in(dir.path(), &[path], 5.0).unwrap_err();
    assert!(matches!(err, Error::CouldNotStart { .. }), "{err:?}");
}

#[test]
fn a_missing_working_directory_could_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let err = run_in(&dir.path().join("absent"), &["true"], 5.0).unwrap_err();
    assert!(matches!(err, Error::CouldNotStart { .. }), "{err:?}");
}

#[test]
fn an_empty_argv_and_a_zero_timeout_are_refused() {
    let none: Vec<String> = Vec::new();
    let req = Request {
        argv: &none,
        cwd: Path::new("."),
        timeout: Duration::from_secs(1),
        stdin: None,
        env: &[],
    };
    assert!(matches!(run_bounded(&req), Err(Error::EmptyCommand)));
    let truth = argv(&["true"]);
    let req = Request {
        argv: &truth,
        timeout: Duration::ZERO,
        ..req
    };
    assert!(matches!(run_bounded(&req), Err(Error::BadTimeout)));
}

#[test]
fn without_stdin_the_child_reads_end_of_file_at_once() {
    let started = Instant::now();
    let done = run_in(Path::new("."), &["cat"], 30.0).unwrap();
    assert!(started.elapsed() < HANG);
    assert!(!done.timed_out, "cat waited for input: {done:?}");
    assert_eq!(done.exit_code, Some(0));
    assert!(done.stdout.is_empty());
}

#[test]
fn given_stdin_is_written_and_closed() {
    let cat = argv(&["cat"]);
    let done = run_bounded(&Request {
        argv: &cat,
        cwd: Path::new("."),
        timeout: Duration::from_secs(30),
        stdin: Some(b"hello\nworld\n"),
        env: &[],
    })
    .unwrap();
    assert!(!done.timed_out);
    assert_eq!(done.stdout, b"hello\nworld\n");
}

#[test]
fn env_is_added_to_the_inherited_environment() {
    let script = argv(&[
        "sh",
        "-c",
        "printf '%s|%s' \"$HPP_TEST_VALUE\" \"${PATH:+has-path}\"",
    ]);
    let done = run_bounded(&Request {
        argv: &script,
        cwd: Path::new("."),
        timeout: Duration::from_secs(30),
        stdin: None,
        env: &[("HPP_TEST_VALUE".to_owned(), "given".to_owned())],
    })
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&done.stdout), "given|has-path");
}

#[test]
fn the_child_runs_in_the_given_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker"), "").unwrap();
    let done = run_in(dir.path(), &["ls"], 30.0).unwrap();
    assert_eq!(done.stdout, b"marker\n");
}
