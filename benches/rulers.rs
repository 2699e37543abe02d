//! Whole-process latency of the `git-hpp` commands that read no repository, inside and outside
//! one, against the cost of starting a process at all.
//!
//! The series are
//! - `git --version`, the baseline: the cheapest git process;
//! - `git-hpp --version`: the cost of starting the git-hpp binary at all;
//! - `git-hpp policy check --mode audit --command "cargo test"`: classifying a command with the
//!   built-in command policy (no `.hpp/policy.json` in either directory);
//! - `git-hpp work waves <spec>`: compiling a WorkGraph spec into waves, with the spec
//!   `examples/workgraph/workgraph.json` of this repository (or, if that file does not exist, a
//!   two-unit spec the benchmark writes itself).
//!
//! Each series runs in two places in the same interleaved run: a directory that is not inside
//! any git repository (checked with `git rev-parse`), to show the commands need none, and the
//! top of a repository with 5,000 committed files, to show their time does not depend on the
//! repository. The ratios "in the repository / outside" of every series' median are printed at
//! the end, and should all be close to 1x.
//!
//! Every sample is timed from spawn to exit. The eight series run interleaved (A, B, C, A, B, C,
//! ...) so machine noise falls on all of them alike. Every directory lives in a temporary
//! directory and every process runs in a hermetic environment (no user or system git config).
//! The benchmark reports and never fails on timing, but it panics if a command it runs exits
//! non-zero, since timing a failing command means nothing.
//!
//! Run it with `cargo bench --bench rulers` (this builds the release binary first); set
//! `HPP_BENCH_QUICK=1` for a smoke run with fewer samples.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its table on stdout"
)]

mod common;

use std::path::{Path, PathBuf};

use common::{
    HPP, Rounds, Sandbox, Series, Stats, check, describe, print_header, print_row, run,
    run_interleaved, write,
};

/// Directories, and files in each, of the large repository.
const DIRS: usize = 50;
const FILES_PER_DIR: usize = 100;

/// The command `policy check` classifies.
const POLICY_COMMAND: &str = "cargo test";

/// The spec used when the repository has no `examples/workgraph/workgraph.json`.
const TINY_SPEC: &str = r#"{"work":[{"id":"spec","tier":"economy","acceptance":["a"],"depends_on":[]},{"id":"build","tier":"balanced","acceptance":["b"],"depends_on":["spec"]}]}"#;

/// How many warm-up runs and measured samples each series gets.
fn plan() -> Rounds {
    Rounds::pick(
        Rounds {
            warmup: 1,
            samples: 5,
        },
        Rounds {
            warmup: 5,
            samples: 50,
        },
    )
}

/// A directory that is not inside any git repository.
fn no_repo(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.root().join("no-repo");
    std::fs::create_dir(&dir).expect("creating a directory outside any repository");
    let output = sandbox
        .git(&dir, &["rev-parse", "--git-dir"])
        .output()
        .expect("git runs");
    assert!(
        !output.status.success(),
        "{} is inside a git repository ({}); point TMPDIR outside any repository",
        dir.display(),
        String::from_utf8_lossy(&output.stdout).trim()
    );
    dir
}

/// A repository with `DIRS * FILES_PER_DIR` committed files.
fn large_repo(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.init("large");
    for d in 0..DIRS {
        let sub = dir.join(format!("d{d:02}"));
        std::fs::create_dir(&sub).expect("creating a directory");
        for f in 0..FILES_PER_DIR {
            write(
                &sub.join(format!("f{f:03}.txt")),
                format!("file {d}/{f}\nof the rulers benchmark\n").as_bytes(),
            );
        }
    }
    run(sandbox.git(&dir, &["add", "-A"]));
    run(sandbox.git(&dir, &["commit", "-q", "-m", "large tree"]));
    let tracked = run(sandbox.git(&dir, &["ls-files"])).lines().count();
    assert_eq!(
        tracked,
        DIRS * FILES_PER_DIR,
        "every generated file should be committed"
    );
    dir
}

/// The WorkGraph spec to compile: this repository's example, or a tiny one written here.
fn spec(sandbox: &Sandbox) -> PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/workgraph/workgraph.json");
    if example.is_file() {
        return example;
    }
    let written = sandbox.root().join("workgraph.json");
    write(&written, TINY_SPEC.as_bytes());
    written
}

/// Runs `policy check` once and returns its verdict's action.
fn policy_action(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> String {
    let out = run(sandbox.hpp(dir, args));
    let verdict: serde_json::Value =
        serde_json::from_str(&out).expect("policy check prints its verdict as JSON");
    verdict["action"]
        .as_str()
        .expect("the verdict has an action")
        .to_owned()
}

/// Runs `work waves` once and returns how many waves it printed.
fn waves_count(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> usize {
    let mut cmd = sandbox.hpp(dir, args);
    let what = describe(&cmd);
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    check(&what, &output);
    let doc: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("work waves prints its waves as JSON");
    assert_eq!(
        doc["schema"], "hpp.workgraph-waves/v1",
        "work waves should print the waves document"
    );
    doc["waves"].as_array().map_or(0, Vec::len)
}

fn main() {
    let plan = plan();
    let sandbox = Sandbox::new();
    let outside = no_repo(&sandbox);
    let inside = large_repo(&sandbox);
    let spec = spec(&sandbox);
    let spec_arg = spec.to_str().expect("the spec's path is UTF-8");

    let policy: &[&str] = &[
        "policy",
        "check",
        "--mode",
        "audit",
        "--command",
        POLICY_COMMAND,
    ];
    let waves: &[&str] = &["work", "waves", spec_arg];
    let action = policy_action(&sandbox, &outside, policy);
    assert_eq!(
        action,
        policy_action(&sandbox, &inside, policy),
        "policy check should say the same inside and outside a repository"
    );
    let wave_count = waves_count(&sandbox, &outside, waves);
    assert_eq!(
        wave_count,
        waves_count(&sandbox, &inside, waves),
        "work waves should say the same inside and outside a repository"
    );

    sandbox.print_preamble(HPP);
    println!("spec:   {}", spec.display());
    println!("policy: git-hpp {}", describe_args(policy));
    println!("waves:  git-hpp {}", describe_args(waves));
    // Per place, the series in this order.
    let labels: Vec<(&str, String)> = vec![
        ("git --version", "baseline".to_owned()),
        ("git-hpp --version", "start-up of the binary".to_owned()),
        (
            "git-hpp policy check --mode audit",
            format!("\"{POLICY_COMMAND}\": {}", action.to_lowercase()),
        ),
        (
            "git-hpp work waves <spec>",
            format!("{wave_count} waves, hpp.workgraph-waves/v1"),
        ),
    ];
    let per_place = labels.len();
    println!(
        "plan:   {} warm-up + {} samples per series, {} series interleaved{}",
        plan.warmup,
        plan.samples,
        2 * per_place,
        if common::quick() {
            " (HPP_BENCH_QUICK)"
        } else {
            ""
        }
    );

    let places = [outside.as_path(), inside.as_path()];
    let sandbox = &sandbox;
    let mut series = Vec::new();
    for dir in places {
        series.push(Series::new(move |_| sandbox.git(dir, &["--version"])));
        series.push(Series::new(move |_| sandbox.hpp(dir, &["--version"])));
        series.push(Series::new(move |_| sandbox.hpp(dir, policy)));
        series.push(Series::new(move |_| sandbox.hpp(dir, waves)));
    }
    run_interleaved(&mut series, plan);
    let stats: Vec<Stats> = series.iter().map(Series::stats).collect();
    let (out_stats, in_stats) = stats.split_at(per_place);

    println!();
    print_header();
    println!("A. outside any git repository");
    for ((label, note), s) in labels.iter().zip(out_stats) {
        print_row(label, s, note);
    }
    println!(
        "B. inside a repository of {} committed files",
        DIRS * FILES_PER_DIR
    );
    for ((label, _), (s, o)) in labels.iter().zip(in_stats.iter().zip(out_stats)) {
        print_row(label, s, &format!("{:.2}x outside", s.median / o.median));
    }

    println!();
    let ratios: Vec<String> = labels
        .iter()
        .zip(in_stats.iter().zip(out_stats))
        .map(|((label, _), (s, o))| format!("{label} {:.2}x", s.median / o.median))
        .collect();
    println!(
        "ratios (median), inside the repository / outside: {}",
        ratios.join(", ")
    );
    let over_start = |i: usize, stats: &[Stats]| stats[i].median / stats[1].median;
    let commands: Vec<String> = (2..per_place)
        .map(|i| {
            format!(
                "{} {:.2}x outside, {:.2}x inside",
                labels[i].0,
                over_start(i, out_stats),
                over_start(i, in_stats)
            )
        })
        .collect();
    println!(
        "ratios (median), over git-hpp --version: {}",
        commands.join("; ")
    );
}

/// The arguments of a command as a shell would show them: quoted when they hold a space.
fn describe_args(args: &[&str]) -> String {
    args.iter()
        .map(|a| {
            if a.contains(' ') {
                format!("\"{a}\"")
            } else {
                (*a).to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
