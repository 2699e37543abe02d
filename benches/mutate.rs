//! Wall time of `git-hpp evidence mutate` with one job against the default (one per core).
//!
//! The workload: a repository holding a small Python pricing module from which the generator
//! makes 32 mutants, and a python3 check script as the criterion. Each sample is one whole
//! `git-hpp evidence mutate --generate pricing.py -- python3 check_pricing.py` process, timed
//! from spawn to exit: the clean run, 32 fresh copies of the workspace, 32 criterion runs, and
//! the record written under refs/hpp/evidence/. The two series ("--jobs 1" and the default) run
//! interleaved so machine noise falls on both alike; medians and the speed-up are printed at the
//! end. The benchmark reports and never fails on timing, but it panics if a run ends with
//! anything but the expected verdict, since timing a failing command means nothing.
//!
//! Run it with `cargo bench --bench mutate`; set `HPP_BENCH_QUICK=1` for a smoke run with
//! fewer samples.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test, built by cargo in the bench profile.
const HPP: &str = env!("CARGO_BIN_EXE_git-hpp");

const MODULE: &str = r#""""Prices: the benchmark's module, 32 generated mutants."""


def shipping(weight, express):
    if weight <= 0:
        return 0
    base = 500 if weight < 1000 else 900
    if express and weight > 200:
        base = base * 2
    return base + weight // 100 * 10


def tax(amount, region):
    if region == "eu":
        return amount * 20 // 100
    if region != "us":
        return 0
    return amount * 7 // 100


def loyal(points, years):
    if points >= 1000 or years > 5:
        return True
    return False
"#;

const CHECK: &str = r#"import sys

from pricing import loyal, shipping, tax

CASES = [
    (shipping(0, False), 0),
    (shipping(500, False), 550),
    (shipping(1000, True), 1900),
    (tax(1000, "eu"), 200),
    (tax(1000, "us"), 70),
    (tax(1000, "ch"), 0),
    (loyal(1000, 0), True),
    (loyal(10, 6), True),
    (loyal(10, 1), False),
]
sys.exit(0 if all(got == want for got, want in CASES) else 1)
"#;

fn command(home: &Path, program: &str, dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .args(args)
        .env_clear()
        .env("HOME", home)
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

fn git(home: &Path, dir: &Path, args: &[&str]) {
    let out = command(home, "git", dir, args).output().expect("git runs");
    assert!(out.status.success(), "git {args:?} failed: {out:?}");
}

/// One timed `evidence mutate`; returns its wall time and the recorded score.
fn sample(home: &Path, repo: &Path, jobs: Option<&str>) -> (Duration, f64) {
    let mut args = vec!["evidence", "mutate", "--id", "bench"];
    if let Some(jobs) = jobs {
        args.extend(["--jobs", jobs]);
    }
    args.extend([
        "--generate",
        "pricing.py",
        "--",
        "python3",
        "check_pricing.py",
    ]);
    let start = Instant::now();
    let out = command(home, HPP, repo, &args)
        .output()
        .expect("git-hpp runs");
    let elapsed = start.elapsed();
    let record: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("evidence mutate prints its record");
    assert_eq!(
        record["metrics"]["total"], 32,
        "the workload has 32 mutants"
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)) && record["clean"]["verdict"] == "passed",
        "the run did not measure anything: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        elapsed,
        record["metrics"]["score"].as_f64().unwrap_or(f64::NAN),
    )
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn main() {
    let quick = std::env::var_os("HPP_BENCH_QUICK").is_some_and(|v| v == "1");
    let (warmup, samples) = if quick { (1, 3) } else { (1, 9) };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let home = tmp.path().join("home");
    let repo: PathBuf = tmp.path().join("repo");
    std::fs::create_dir_all(&home).expect("writable");
    std::fs::create_dir_all(&repo).expect("writable");
    git(&home, &repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("pricing.py"), MODULE).expect("writable");
    std::fs::write(repo.join("check_pricing.py"), CHECK).expect("writable");
    git(&home, &repo, &["add", "."]);
    git(&home, &repo, &["commit", "-q", "-m", "pricing"]);

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let series: [(&str, Option<&str>); 2] = [("--jobs 1", Some("1")), ("default", None)];
    for (_, jobs) in series {
        for _ in 0..warmup {
            sample(&home, &repo, jobs);
        }
    }
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut score = f64::NAN;
    for _ in 0..samples {
        for (i, (_, jobs)) in series.iter().enumerate() {
            let (elapsed, s) = sample(&home, &repo, *jobs);
            times[i].push(elapsed);
            score = s;
        }
    }
    println!("evidence mutate, 32 generated mutants, {samples} samples each, {cores} core(s)");
    println!("score of the check: {score:.3}");
    let medians: Vec<Duration> = times.iter().cloned().map(median).collect();
    for ((name, _), (all, m)) in series.iter().zip(times.iter().zip(&medians)) {
        let min = all.iter().min().copied().unwrap_or_default();
        println!(
            "{name:>9}: median {:>7.1} ms, min {:>7.1} ms",
            m.as_secs_f64() * 1e3,
            min.as_secs_f64() * 1e3
        );
    }
    println!(
        "speed-up of the default over --jobs 1: {:.2}x",
        medians[0].as_secs_f64() / medians[1].as_secs_f64()
    );
}
