//! Whole-process latency of the `git-hpp` binary, against plain `git` doing comparable work.
//!
//! Measurement A, append scaling: one `git-hpp event append --type work_started --loop fresh-<n>`
//! (a new loop each time, so every sample is a loop's first event) in a repository with no loops,
//! with 10,000 loops stored as loose refs, and with 10,000 loops packed by `git pack-refs --all`.
//! The baseline, run on the same repositories, is `git update-ref refs/heads/b<n> <commit>`: a
//! git process that writes one ref. The ratios "10k loose / 0" and "10k packed / 0" of git-hpp's
//! medians are printed at the end; the target is under 2x.
//!
//! Measurement B, start-up: `git-hpp --version`, `git-hpp status` and `git status` in a
//! repository with one loop on branch main.
//!
//! Every sample is timed from spawn to exit. The series of a measurement run interleaved
//! (A, B, C, A, B, C, ...) so machine noise falls on all of them alike. Every repository lives in
//! a temporary directory and every process runs in a hermetic environment (no user or system git
//! config). The benchmark reports and never fails on timing, but it panics if a command it runs
//! exits non-zero, since timing a failing command means nothing.
//!
//! Run it with `cargo bench --bench spine` (this builds the release binary first); set
//! `HPP_BENCH_QUICK=1` for a smoke run with fewer samples.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test, built by cargo in the bench profile.
const HPP: &str = env!("CARGO_BIN_EXE_git-hpp");

/// Loops created in the "many loops" repositories.
const MANY_LOOPS: usize = 10_000;

/// How many warm-up runs and measured samples each series gets.
#[derive(Clone, Copy)]
struct Plan {
    warmup: usize,
    samples: usize,
}

impl Plan {
    fn from_env() -> Self {
        if std::env::var_os("HPP_BENCH_QUICK").is_some_and(|v| v == "1") {
            Self {
                warmup: 1,
                samples: 5,
            }
        } else {
            Self {
                warmup: 3,
                samples: 30,
            }
        }
    }
}

/// A temporary directory holding a HOME and the repositories, and the hermetic environment
/// every spawned process runs in.
struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let root = tempfile::tempdir().expect("the benchmark needs a temporary directory");
        std::fs::create_dir(root.path().join("home")).expect("creating the temporary HOME");
        Self { root }
    }

    /// A command for `program` in `dir` with nothing of the caller's environment but PATH.
    fn command(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir)
            .env_clear()
            .env("HOME", self.root.path().join("home"))
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

    fn git(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = self.command("git", dir);
        cmd.args(args);
        cmd
    }

    fn hpp(&self, dir: &Path, args: &[&str]) -> Command {
        let mut cmd = self.command(HPP, dir);
        cmd.args(args);
        cmd
    }

    /// A fresh repository on branch main with one commit.
    fn repo(&self, name: &str) -> PathBuf {
        let dir = self.root.path().join(name);
        std::fs::create_dir(&dir).expect("creating a repository directory");
        run(self.git(&dir, &["init", "-q", "-b", "main"]));
        std::fs::write(dir.join("README"), "bench\n").expect("writing the first file");
        run(self.git(&dir, &["add", "README"]));
        run(self.git(&dir, &["commit", "-q", "-m", "first"]));
        dir
    }

    /// Adds `count` loops to `dir`, all pointing at the log of one real loop named `seed`.
    fn add_loops(&self, dir: &Path, count: usize) {
        run(self.hpp(
            dir,
            &[
                "event",
                "append",
                "--type",
                "work_started",
                "--loop",
                "seed",
            ],
        ));
        let seed = rev_parse(self, dir, "refs/hpp/loops/seed");
        let script: String = (0..count)
            .map(|i| format!("create refs/hpp/loops/l{i} {seed}\n"))
            .collect();
        let mut cmd = self.git(dir, &["update-ref", "--stdin"]);
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
            .write_all(script.as_bytes())
            .unwrap_or_else(|e| panic!("cannot feed {what}: {e}"));
        let output = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("cannot wait for {what}: {e}"));
        check(&what, &output);
        let listed = run(self.git(dir, &["for-each-ref", "--format=x", "refs/hpp/loops/"]));
        assert_eq!(
            listed.lines().count(),
            count + 1,
            "{what} should have left {count} loops besides seed"
        );
    }
}

/// `program arg arg ...`, for messages.
fn describe(cmd: &Command) -> String {
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
fn check(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "benchmark command failed: `{what}` exited with {}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout).trim_end(),
        String::from_utf8_lossy(&output.stderr).trim_end(),
    );
}

/// Runs a command to completion, panicking on failure, and returns its stdout.
fn run(mut cmd: Command) -> String {
    let what = describe(&cmd);
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    check(&what, &output);
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Runs a command once and returns how long it took from spawn to exit.
fn timed(mut cmd: Command) -> Duration {
    let what = describe(&cmd);
    let start = Instant::now();
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    let elapsed = start.elapsed();
    check(&what, &output);
    elapsed
}

fn rev_parse(sandbox: &Sandbox, dir: &Path, rev: &str) -> String {
    run(sandbox.git(dir, &["rev-parse", "--verify", rev]))
}

/// One timed series: a label and how to build its `n`th command (`n` counts every run,
/// warm-ups included, so it can name a fresh loop or branch each time).
struct Series<'a> {
    make: Box<dyn Fn(usize) -> Command + 'a>,
    samples: Vec<Duration>,
}

impl<'a> Series<'a> {
    fn new(make: impl Fn(usize) -> Command + 'a) -> Self {
        Self {
            make: Box::new(make),
            samples: Vec::new(),
        }
    }

    fn stats(&self) -> Stats {
        Stats::of(&self.samples)
    }
}

/// Runs every series round-robin: `plan.warmup` unrecorded rounds, then `plan.samples`
/// recorded ones. Each round starts one series later than the last, so no series always runs
/// first (or always right after the same other one).
fn run_interleaved(series: &mut [Series<'_>], plan: Plan) {
    let len = series.len();
    for round in 0..plan.warmup + plan.samples {
        for k in 0..len {
            let s = &mut series[(round + k) % len];
            let elapsed = timed((s.make)(round));
            if round >= plan.warmup {
                s.samples.push(elapsed);
            }
        }
    }
}

/// Median and 90th percentile of a series, in milliseconds.
#[derive(Clone, Copy)]
struct Stats {
    median: f64,
    p90: f64,
}

impl Stats {
    fn of(samples: &[Duration]) -> Self {
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
        Self { median, p90 }
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "median {:6.1} ms  p90 {:6.1} ms", self.median, self.p90)
    }
}

fn nproc() -> String {
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

/// Measurement A: rows of (label, git-hpp append, git update-ref), one per repository.
fn measure_append(sandbox: &Sandbox, plan: Plan) -> Vec<(&'static str, Stats, Stats)> {
    let zero = sandbox.repo("zero-loops");
    let loose = sandbox.repo("loose-loops");
    sandbox.add_loops(&loose, MANY_LOOPS);
    let packed = sandbox.repo("packed-loops");
    sandbox.add_loops(&packed, MANY_LOOPS);
    run(sandbox.git(&packed, &["pack-refs", "--all"]));
    assert!(
        !packed.join(".git/refs/hpp/loops/l0").exists(),
        "git pack-refs --all should have removed the loose loop refs"
    );
    assert!(
        loose.join(".git/refs/hpp/loops/l0").is_file(),
        "the loose repository should hold its loops as loose ref files"
    );

    let repos = [
        ("append, 0 loops", zero),
        ("append, 10k loose loops", loose),
        ("append, 10k packed loops", packed),
    ];
    let mut series = Vec::new();
    for (_, dir) in &repos {
        let head = rev_parse(sandbox, dir, "HEAD");
        series.push(Series::new(move |n| {
            let name = format!("fresh-{n}");
            sandbox.hpp(
                dir,
                &["event", "append", "--type", "work_started", "--loop", &name],
            )
        }));
        series.push(Series::new(move |n| {
            let name = format!("refs/heads/b{n}");
            sandbox.git(dir, &["update-ref", &name, &head])
        }));
    }
    run_interleaved(&mut series, plan);
    repos
        .iter()
        .zip(series.chunks(2))
        .map(|((label, _), pair)| (*label, pair[0].stats(), pair[1].stats()))
        .collect()
}

/// Measurement B: (label, stats) for `git-hpp --version`, `git-hpp status` and `git status`.
fn measure_startup(sandbox: &Sandbox, plan: Plan) -> Vec<(&'static str, Stats)> {
    let dir = sandbox.repo("one-loop");
    run(sandbox.hpp(&dir, &["event", "append", "--type", "work_started"]));
    let dir = dir.as_path();
    let mut series = vec![
        Series::new(move |_| sandbox.hpp(dir, &["--version"])),
        Series::new(move |_| sandbox.hpp(dir, &["status"])),
        Series::new(move |_| sandbox.git(dir, &["status"])),
    ];
    run_interleaved(&mut series, plan);
    let labels = ["git-hpp --version", "git-hpp status", "git status"];
    labels
        .into_iter()
        .zip(series.iter().map(Series::stats))
        .collect()
}

fn main() {
    let plan = Plan::from_env();
    let sandbox = Sandbox::new();
    let home = sandbox.root.path().join("home");
    println!("nproc: {}", nproc());
    println!("git:   {}", run(sandbox.git(&home, &["--version"])));
    println!("binary: {HPP}");
    println!(
        "plan:  {} warm-up + {} samples per series, interleaved{}",
        plan.warmup,
        plan.samples,
        if plan.samples < 30 {
            " (HPP_BENCH_QUICK)"
        } else {
            ""
        }
    );
    println!();

    let append = measure_append(&sandbox, plan);
    for (label, hpp, git) in &append {
        println!("{label:<26} git-hpp {hpp}  | git update-ref {git}");
    }
    let startup = measure_startup(&sandbox, plan);
    for (label, stats) in &startup {
        println!("{:<26} {label:<17} {stats}", "start-up, 1 loop");
    }

    let ratio = |i: usize, pick: fn(&(&str, Stats, Stats)) -> Stats| {
        pick(&append[i]).median / pick(&append[0]).median
    };
    println!();
    println!(
        "append ratios (median): git-hpp 10k loose / 0 = {:.2}x, 10k packed / 0 = {:.2}x \
         (target < 2x); git update-ref {:.2}x, {:.2}x",
        ratio(1, |r| r.1),
        ratio(2, |r| r.1),
        ratio(1, |r| r.2),
        ratio(2, |r| r.2),
    );
}
