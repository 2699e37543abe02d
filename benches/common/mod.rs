//! What the benchmarks share: a hermetic sandbox for `git` and `git-hpp` processes, running and
//! timing commands (panicking on a non-zero exit, since timing a failing command means nothing),
//! interleaved timed series, their median and 90th percentile, the table rows they print, and
//! the quick mode (`HPP_BENCH_QUICK=1`).
//!
//! Each bench includes this file with `mod common;`. Cargo does not take `benches/common/mod.rs`
//! for a bench target of its own (only files directly in `benches/` and `benches/*/main.rs` are
//! discovered), and every bench in Cargo.toml is declared by name anyway.

// Every bench uses only part of what is here.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test, built by cargo in the bench profile.
pub const HPP: &str = env!("CARGO_BIN_EXE_git-hpp");

/// Whether `HPP_BENCH_QUICK=1` asks for a smoke run with fewer samples.
pub fn quick() -> bool {
    std::env::var_os("HPP_BENCH_QUICK").is_some_and(|v| v == "1")
}

/// How many warm-up runs and measured samples each series gets.
#[derive(Clone, Copy)]
pub struct Rounds {
    pub warmup: usize,
    pub samples: usize,
}

impl Rounds {
    /// `quick` under `HPP_BENCH_QUICK=1`, `full` otherwise.
    pub fn pick(quick: Rounds, full: Rounds) -> Rounds {
        if self::quick() { quick } else { full }
    }

    /// The usual plan: 1 warm-up and 5 samples quick, 3 and 30 in a full run.
    pub fn standard() -> Rounds {
        Rounds::pick(
            Rounds {
                warmup: 1,
                samples: 5,
            },
            Rounds {
                warmup: 3,
                samples: 30,
            },
        )
    }
}

/// A temporary directory holding a HOME and the repositories, and the hermetic environment
/// every spawned process runs in.
pub struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        // On disk (TMPDIR or /tmp), not in memory: a command's cost includes real file reads.
        let mut root = tempfile::tempdir().expect("the benchmark needs a temporary directory");
        // `HPP_BENCH_KEEP=1` leaves the repositories behind, to profile one command by hand.
        root.disable_cleanup(std::env::var_os("HPP_BENCH_KEEP").is_some_and(|v| v == "1"));
        std::fs::create_dir(root.path().join("home")).expect("creating the temporary HOME");
        Self { root }
    }

    /// The temporary directory everything lives in.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// Prints what a run was measured on: the processing units, git's version, the binary
    /// under test and the directory everything lives in.
    pub fn print_preamble(&self, binary: &str) {
        println!("nproc:  {}", nproc());
        println!("git:    {}", run(self.git(&self.home(), &["--version"])));
        println!("binary: {binary}");
        println!("dir:    {}", self.root().display());
    }

    /// The HOME every spawned process gets.
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// A command for `program` in `dir` with nothing of the caller's environment but PATH.
    pub fn command(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir)
            .env_clear()
            .env("HOME", self.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "Bench Author")
            .env("GIT_AUTHOR_EMAIL", "author@bench.invalid")
            .env("GIT_COMMITTER_NAME", "Bench Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@bench.invalid")
            .stdin(Stdio::null());
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd
    }

    pub fn git(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = self.command("git", dir);
        cmd.args(args);
        cmd
    }

    pub fn hpp(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = self.command(HPP, dir);
        cmd.args(args);
        cmd
    }

    /// `bash -c script` with errexit and pipefail, so a failing step fails the command.
    pub fn bash(&self, dir: &Path, script: &str) -> Command {
        let mut cmd = self.command("bash", dir);
        cmd.args(["-c", &format!("set -euo pipefail; {script}")]);
        cmd
    }

    /// A fresh, empty repository on branch main.
    pub fn init(&self, name: &str) -> PathBuf {
        let dir = self.root.path().join(name);
        std::fs::create_dir(&dir).expect("creating a repository directory");
        run(self.git(&dir, &["init", "-q", "-b", "main"]));
        dir
    }
}

pub fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// `program arg arg ...`, for messages.
pub fn describe(cmd: &Command) -> String {
    let program = Path::new(cmd.get_program())
        .file_name()
        .unwrap_or(cmd.get_program())
        .to_string_lossy()
        .into_owned();
    std::iter::once(program)
        .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Panics with the command and its stderr unless it exited 0.
pub fn check(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "benchmark command failed: `{what}` exited with {}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout).trim_end(),
        String::from_utf8_lossy(&output.stderr).trim_end(),
    );
}

/// Runs a command to completion, panicking on failure, and returns its stdout.
pub fn run(mut cmd: Command) -> String {
    let what = describe(&cmd);
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    check(&what, &output);
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Runs a command with `input` on its stdin, panicking on failure.
pub fn run_with_input(mut cmd: Command, input: &[u8]) {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let what = describe(&cmd);
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot spawn {what}: {e}"));
    child
        .stdin
        .take()
        .expect("stdin was piped")
        .write_all(input)
        .unwrap_or_else(|e| panic!("cannot feed {what}: {e}"));
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("cannot wait for {what}: {e}"));
    check(&what, &output);
}

/// Runs a command once and returns how long it took from spawn to exit.
pub fn timed(mut cmd: Command) -> Duration {
    let what = describe(&cmd);
    let start = Instant::now();
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    let elapsed = start.elapsed();
    check(&what, &output);
    elapsed
}

pub fn rev_parse(sandbox: &Sandbox, dir: &Path, rev: &str) -> String {
    run(sandbox.git(dir, &["rev-parse", "--verify", rev]))
}

/// One timed series: how to build its `n`th command (`n` counts every run, warm-ups included,
/// so it can name a fresh loop or branch each time).
pub struct Series<'a> {
    make: Box<dyn Fn(usize) -> Command + 'a>,
    samples: Vec<Duration>,
}

impl<'a> Series<'a> {
    pub fn new(make: impl Fn(usize) -> Command + 'a) -> Self {
        Self {
            make: Box::new(make),
            samples: Vec::new(),
        }
    }

    pub fn stats(&self) -> Stats {
        Stats::of(&self.samples)
    }
}

/// Runs every series round-robin: `rounds.warmup` unrecorded rounds, then `rounds.samples`
/// recorded ones. Each round starts one series later than the last, so no series always runs
/// first (or always right after the same other one).
pub fn run_interleaved(series: &mut [Series<'_>], rounds: Rounds) {
    let len = series.len();
    for round in 0..rounds.warmup + rounds.samples {
        for k in 0..len {
            let s = &mut series[(round + k) % len];
            let elapsed = timed((s.make)(round));
            if round >= rounds.warmup {
                s.samples.push(elapsed);
            }
        }
    }
}

/// Median and 90th percentile of a series, in milliseconds, and its number of samples.
#[derive(Clone, Copy)]
pub struct Stats {
    pub median: f64,
    pub p90: f64,
    pub n: usize,
}

impl Stats {
    pub fn of(samples: &[Duration]) -> Self {
        let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        assert!(!ms.is_empty(), "a series needs at least one sample");
        let n = ms.len();
        let median = if n % 2 == 1 {
            ms[n / 2]
        } else {
            (ms[n / 2 - 1] + ms[n / 2]) / 2.0
        };
        // Nearest-rank percentile: the smallest sample with at least 90% of samples at or below.
        let p90 = ms[(n * 9).div_ceil(10) - 1];
        Self { median, p90, n }
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "median {:6.1} ms  p90 {:6.1} ms", self.median, self.p90)
    }
}

/// The header of the table `print_row` prints.
pub fn print_header() {
    println!(
        "{:<38} {:>9} {:>9} {:>4}  note",
        "series", "median ms", "p90 ms", "n"
    );
}

/// One row of the table: label, median, p90, number of samples and a note.
pub fn print_row(label: &str, stats: &Stats, note: &str) {
    println!(
        "{label:<38} {:>9.1} {:>9.1} {:>4}  {note}",
        stats.median, stats.p90, stats.n
    );
}

/// The number of processing units, from `nproc` or else the standard library.
pub fn nproc() -> String {
    Command::new("nproc")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .map(|n| n.to_string())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// A small, fast, deterministic generator (SplitMix64): varied file contents and shapes without
/// a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n`; the modulo bias is irrelevant for filler and shapes.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// What `git hpp push origin` hands `git push` (`RECORDS` and `NOTES_PUSH` of hpp-store's
/// sync.rs): the baseline of every push a bench times.
pub const GIT_PUSH: &[&str] = &[
    "push",
    "--porcelain",
    "--",
    "origin",
    "refs/hpp/*:refs/hpp/*",
    "refs/notes/hpp*:refs/notes/hpp*",
];
