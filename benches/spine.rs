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
//! Measurement C, a gate that measures: `git-hpp event append --type verified` on a loop at
//! `approved` whose fresh-evidence event named two bundles and whose checker event named one
//! attestation, so the closure gate re-verifies two evidence bundles, one attestation and the
//! person's event on the workspace tree; next to the same append with the gates' conditions
//! taken out of the manifest (`--manifest` with no `gates` block), which checks only the order
//! of events. Each sample appends to its own copy of the loop (a ref at the same `approved`
//! commit), so both series append the fifth event of the same history. The target: the gated
//! append within 3x of the bare one.
//!
//! Measurement D, reading a long loop: `git-hpp event verify` of a loop of 100 events and of
//! 10,000 events (imported under a one-state manifest whose only transition loops, so any length
//! is legal), next to `git log --format=%H` of the same commits. Verification takes one step of
//! the loop per event, so the per-event cost at 10,000 should stay near the cost at 100.
//!
//! Every sample is timed from spawn to exit. The series of a measurement run interleaved
//! (A, B, C, A, B, C, ...) so machine noise falls on all of them alike. Every repository lives in
//! a temporary directory and every process runs in a hermetic environment (no user or system git
//! config). The benchmark reports and never fails on timing, but it panics if a command it runs
//! exits non-zero, since timing a failing command means nothing.
//!
//! Run it with `cargo bench --bench spine` (this builds the release binary first); set
//! `HPP_BENCH_QUICK=1` for a smoke run with fewer samples.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its table on stdout"
)]

mod common;

use std::path::{Path, PathBuf};

use common::{
    HPP, Rounds, Sandbox, Series, Stats, nproc, rev_parse, run, run_interleaved, run_with_input,
};

/// Loops created in the "many loops" repositories.
const MANY_LOOPS: usize = 10_000;

/// How many warm-up runs and measured samples each series gets.
fn plan() -> Rounds {
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

/// The repositories of this benchmark: one commit, and many loops besides.
impl Sandbox {
    /// A fresh repository on branch main with one commit.
    fn repo(&self, name: &str) -> PathBuf {
        let dir = self.init(name);
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
                "--work",
                "W",
                "--maker",
                "agent-a",
            ],
        ));
        let seed = rev_parse(self, dir, "refs/hpp/loops/seed");
        let script: String = (0..count)
            .map(|i| format!("create refs/hpp/loops/l{i} {seed}\n"))
            .collect();
        run_with_input(self.git(dir, &["update-ref", "--stdin"]), script.as_bytes());
        let listed = run(self.git(dir, &["for-each-ref", "--format=x", "refs/hpp/loops/"]));
        assert_eq!(
            listed.lines().count(),
            count + 1,
            "git update-ref --stdin should have left {count} loops besides seed"
        );
    }
}

/// Measurement A: rows of (label, git-hpp append, git update-ref), one per repository.
fn measure_append(sandbox: &Sandbox, plan: Rounds) -> Vec<(&'static str, Stats, Stats)> {
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
                &[
                    "event",
                    "append",
                    "--type",
                    "work_started",
                    "--loop",
                    &name,
                    "--work",
                    "W",
                    "--maker",
                    "agent-a",
                ],
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
fn measure_startup(sandbox: &Sandbox, plan: Rounds) -> Vec<(&'static str, Stats)> {
    let dir = sandbox.repo("one-loop");
    run(sandbox.hpp(
        &dir,
        &[
            "event",
            "append",
            "--type",
            "work_started",
            "--work",
            "W",
            "--maker",
            "agent-a",
        ],
    ));
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

/// Walks loop `seed` of `dir` to `approved` on real records: two bundles, one approval by a
/// checker who is not the maker, a person's approval; then makes `copies` loops at the same
/// commit. `manifest` is passed to every append (`None`: the built-in, gated loop).
fn approved_loops(sandbox: &Sandbox, dir: &Path, manifest: Option<&Path>, copies: usize) {
    let hpp = |args: &[&str]| {
        let mut all: Vec<&str> = Vec::new();
        if let Some(m) = manifest {
            all.extend(["--manifest", m.to_str().expect("a UTF-8 path")]);
        }
        all.extend(args);
        run(sandbox.hpp(dir, &all));
    };
    common::write(&dir.join(".git/info/exclude"), b"out/\n");
    let scope = ["--work", "W", "--maker", "agent-a"];
    let loop_flag = ["--loop", "seed"];
    let mut start = vec!["event", "append", "--type", "work_started"];
    start.extend(scope);
    start.extend(loop_flag);
    hpp(&start);
    for id in ["unit", "lint"] {
        let artifact = format!("out/{id}.txt");
        let script = format!("mkdir -p out && echo ok > {artifact}");
        hpp(&[
            "evidence",
            "run",
            "--id",
            id,
            "--artifact",
            &artifact,
            "--",
            "sh",
            "-c",
            &script,
        ]);
    }
    let mut evidence = vec!["event", "append", "--type", "evidence_recorded"];
    evidence.extend(["--evidence", "unit", "--evidence", "lint"]);
    evidence.extend(loop_flag);
    hpp(&evidence);
    hpp(&[
        "attest",
        "create",
        "--spec",
        "README",
        "--maker",
        "agent-a",
        "--checker",
        "checker-b",
        "--session",
        "bench:1",
        "--verdict",
        "approved",
    ]);
    let mut check = vec!["event", "append", "--type", "check_passed"];
    check.extend(loop_flag);
    hpp(&check);
    let mut human = vec![
        "event",
        "append",
        "--type",
        "human_approved",
        "--by",
        "alice",
    ];
    human.extend(loop_flag);
    hpp(&human);
    let seed = rev_parse(sandbox, dir, "refs/hpp/loops/seed");
    let script: String = (0..copies)
        .map(|i| format!("create refs/hpp/loops/c{i} {seed}\n"))
        .collect();
    run_with_input(
        sandbox.git(dir, &["update-ref", "--stdin"]),
        script.as_bytes(),
    );
}

/// Measurement C: (gated append, bare append) of `verified` to a loop at `approved`.
fn measure_gates(sandbox: &Sandbox, plan: Rounds) -> (Stats, Stats) {
    let copies = plan.warmup + plan.samples;
    let gated = sandbox.repo("gated");
    approved_loops(sandbox, &gated, None, copies);
    let bare = sandbox.repo("bare");
    let mut manifest: serde_json::Value =
        serde_json::from_str(include_str!("../hpp.manifest.json")).expect("the manifest is JSON");
    manifest["loop"]
        .as_object_mut()
        .expect("a loop block")
        .remove("gates");
    let ungated = sandbox.root().join("ungated.manifest.json");
    common::write(
        &ungated,
        serde_json::to_string(&manifest).expect("JSON").as_bytes(),
    );
    approved_loops(sandbox, &bare, Some(&ungated), copies);
    let (gated, bare, ungated) = (gated.as_path(), bare.as_path(), ungated.as_path());
    let mut series = vec![
        Series::new(move |n| {
            let name = format!("c{n}");
            sandbox.hpp(
                gated,
                &["event", "append", "--type", "verified", "--loop", &name],
            )
        }),
        Series::new(move |n| {
            let name = format!("c{n}");
            sandbox.hpp(
                bare,
                &[
                    "--manifest",
                    ungated.to_str().expect("a UTF-8 path"),
                    "event",
                    "append",
                    "--type",
                    "verified",
                    "--loop",
                    &name,
                ],
            )
        }),
    ];
    run_interleaved(&mut series, plan);
    (series[0].stats(), series[1].stats())
}

/// The events.jsonl of a loop of `n` `tick` events, hash-chained as the reference writes it.
fn ticks(n: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut prev = format!("{:x}", Sha256::digest(b""));
    let mut out = String::new();
    for seq in 1..=n {
        let line = format!(
            r#"{{"data":{{}},"id":"event:{seq}","prev_sha256":"{prev}","seq":{seq},"type":"tick"}}"#
        );
        prev = format!("{:x}", Sha256::digest(line.as_bytes()));
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Measurement D: (events, git-hpp event verify, git log, git-hpp status, git-hpp event
/// append) for 100 and 10,000 events.
fn measure_long_loops(sandbox: &Sandbox, plan: Rounds) -> Vec<(usize, Stats, Stats, Stats, Stats)> {
    let dir = sandbox.repo("long-loops");
    let manifest = sandbox.root().join("tick.manifest.json");
    common::write(
        &manifest,
        br#"{"protocol_version":"2.1","loop":{"initial":"a","states":["a"],"next_step":{"a":"tick"},"transitions":[{"from":"a","event":"tick","to":"a","gate":"g"}]}}"#,
    );
    let manifest = manifest.to_str().expect("a UTF-8 path").to_owned();
    let sizes = [100, 10_000];
    for n in sizes {
        let log = sandbox.root().join(format!("ticks-{n}.jsonl"));
        common::write(&log, ticks(n).as_bytes());
        let name = format!("l{n}");
        run(sandbox.hpp(
            &dir,
            &[
                "--manifest",
                &manifest,
                "event",
                "import",
                log.to_str().expect("a UTF-8 path"),
                "--loop",
                &name,
            ],
        ));
    }
    let (dir, manifest) = (dir.as_path(), manifest.as_str());
    let mut series = Vec::new();
    for n in sizes {
        series.push(Series::new(move |_| {
            let name = format!("l{n}");
            sandbox.hpp(
                dir,
                &["--manifest", manifest, "event", "verify", "--loop", &name],
            )
        }));
        series.push(Series::new(move |_| {
            let name = format!("refs/hpp/loops/l{n}");
            sandbox.git(dir, &["log", "--format=%H", &name])
        }));
        series.push(Series::new(move |_| {
            let name = format!("l{n}");
            sandbox.hpp(dir, &["--manifest", manifest, "status", "--loop", &name])
        }));
        series.push(Series::new(move |_| {
            let name = format!("l{n}");
            sandbox.hpp(
                dir,
                &[
                    "--manifest",
                    manifest,
                    "event",
                    "append",
                    "--type",
                    "tick",
                    "--loop",
                    &name,
                ],
            )
        }));
    }
    run_interleaved(&mut series, plan);
    sizes
        .iter()
        .zip(series.chunks(4))
        .map(|(n, four)| {
            (
                *n,
                four[0].stats(),
                four[1].stats(),
                four[2].stats(),
                four[3].stats(),
            )
        })
        .collect()
}

fn main() {
    let plan = plan();
    let sandbox = Sandbox::new();
    let home = sandbox.home();
    println!("nproc: {}", nproc());
    println!("git:   {}", run(sandbox.git(&home, &["--version"])));
    println!("binary: {HPP}");
    println!(
        "plan:  {} warm-up + {} samples per series, interleaved{}",
        plan.warmup,
        plan.samples,
        if common::quick() {
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

    let (gated, bare) = measure_gates(&sandbox, plan);
    println!(
        "{:<26} gated   {gated}\n{:<26} bare    {bare}",
        "append verified, gates", "append verified, no gates"
    );

    let long = measure_long_loops(&sandbox, plan);
    for (n, hpp, git, status, append) in &long {
        println!(
            "{:<26} git-hpp {hpp}  | git log {git}",
            format!("event verify, {n} events")
        );
        println!("{:<26} git-hpp {status}", format!("status, {n} events"));
        println!("{:<26} git-hpp {append}", format!("append, {n} events"));
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
    println!(
        "gate ratio (median): append verified checking 2 bundles + 1 attestation / bare = {:.2}x (target < 3x)",
        gated.median / bare.median
    );
    let per_event = |i: usize| long[i].1.median / long[i].0 as f64;
    println!(
        "long loops: event verify per event at 10,000 / at 100 = {:.2}x (linear: near 1x or below); \
         status at 10,000 / at 100 = {:.2}x (target < 2x); append at 10,000 / at 100 = {:.2}x",
        per_event(1) / per_event(0),
        long[1].3.median / long[0].3.median,
        long[1].4.median / long[0].4.median
    );
}
