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

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its table on stdout"
)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Rounds, Sandbox, Stats, run, write};

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

/// One timed `evidence mutate`; returns its wall time and the recorded score.
fn sample(sandbox: &Sandbox, repo: &Path, jobs: Option<&str>) -> (Duration, f64) {
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
    let out = sandbox.hpp(repo, &args).output().expect("git-hpp runs");
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

fn main() {
    let Rounds { warmup, samples } = Rounds::pick(
        Rounds {
            warmup: 1,
            samples: 3,
        },
        Rounds {
            warmup: 1,
            samples: 9,
        },
    );
    let sandbox = Sandbox::new();
    let repo = sandbox.init("repo");
    write(&repo.join("pricing.py"), MODULE.as_bytes());
    write(&repo.join("check_pricing.py"), CHECK.as_bytes());
    run(sandbox.git(&repo, &["add", "."]));
    run(sandbox.git(&repo, &["commit", "-q", "-m", "pricing"]));

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let series: [(&str, Option<&str>); 2] = [("--jobs 1", Some("1")), ("default", None)];
    for (_, jobs) in series {
        for _ in 0..warmup {
            sample(&sandbox, &repo, jobs);
        }
    }
    let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    let mut score = f64::NAN;
    for _ in 0..samples {
        for (i, (_, jobs)) in series.iter().enumerate() {
            let (elapsed, s) = sample(&sandbox, &repo, *jobs);
            times[i].push(elapsed);
            score = s;
        }
    }
    println!("evidence mutate, 32 generated mutants, {samples} samples each, {cores} core(s)");
    println!("score of the check: {score:.3}");
    let medians: Vec<f64> = times.iter().map(|t| Stats::of(t).median).collect();
    for ((name, _), (all, m)) in series.iter().zip(times.iter().zip(&medians)) {
        let min = all.iter().min().copied().unwrap_or_default();
        println!(
            "{name:>9}: median {m:>7.1} ms, min {:>7.1} ms",
            min.as_secs_f64() * 1e3
        );
    }
    println!(
        "speed-up of the default over --jobs 1: {:.2}x",
        medians[0] / medians[1]
    );
}
