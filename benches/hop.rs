//! Whole-process latency of the Hop controller on a large repository: `hop start` to a ready
//! workspace and `hop land` of a small proposal, next to `git worktree add` and `git merge-tree` on the same
//! repository.
//!
//! The repository holds 50,000 committed files (500 directories of 100 files of a few hundred
//! bytes of text each). After one `hop init`, the series, run interleaved on that repository
//! (each round starts with a different series), are
//! - `hop start --agent bench "<prompt>"`: task, attempt and prompt state recorded, and the
//!   attempt's detached workspace checked out (50,000 files);
//! - `git worktree add --detach <dir> <accepted commit>`: the checkout alone, the baseline;
//! - `hop land <proposal>`: one attempt proposes a one-file change (proposing is not timed),
//!   then the landing is timed: overlap check against everything accepted since the base,
//!   three-way tree merge, state commit, compare-and-swap of the accepted ref;
//! - `git merge-tree --write-tree refs/hpp/hop/accepted bench-side`: git's own three-way tree
//!   merge of a one-file commit made beside the accepted line, the landing's baseline;
//! - `hop start --sparse d000`: the same start with only one directory (100 files) checked out;
//! - `git worktree add --no-checkout --detach`, `git sparse-checkout set --cone d000` and
//!   `git read-tree -mu HEAD` in one script: git's own sparse worktree, its baseline.
//!
//! Every workspace a sample created is removed before the next sample, outside the timing.
//! Every sample is timed from spawn to exit, in a temporary directory on disk, in a hermetic
//! environment (no user or system git config). The benchmark reports and never fails on timing,
//! but panics if a command it runs exits non-zero.
//!
//! Run it with `cargo bench --bench hop`; set `HPP_BENCH_QUICK=1` for a smoke run with fewer
//! samples.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its table on stdout"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Rounds, Sandbox, Stats, check, describe, print_header, print_row, run, write};

/// The built `hop` binary.
const HOP: &str = env!("CARGO_BIN_EXE_hop");

/// Directories, and files in each, of the large repository.
const DIRS: usize = 500;
const FILES_PER_DIR: usize = 100;

/// A few hundred bytes of text that differ from file to file (deterministic).
fn filler(seed: u64) -> String {
    let mut text = format!("// file {seed}\n");
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while text.len() < 300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push_str(&format!("line {x:016x} of the benchmark tree\n"));
    }
    text
}

fn large_repo(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.init("large");
    let start = Instant::now();
    for d in 0..DIRS {
        std::fs::create_dir(dir.join(format!("d{d:03}"))).expect("creating a directory");
        for f in 0..FILES_PER_DIR {
            let n = d * FILES_PER_DIR + f;
            write(
                &dir.join(format!("d{d:03}/f{f:03}.txt")),
                filler(n as u64).as_bytes(),
            );
        }
    }
    run(sandbox.git(&dir, &["add", "-A"]));
    run(sandbox.git(&dir, &["commit", "-q", "-m", "large tree"]));
    println!(
        "setup: {} files written and committed in {:.1} s",
        DIRS * FILES_PER_DIR,
        start.elapsed().as_secs_f64()
    );
    dir
}

fn hop(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> Command {
    let mut cmd = sandbox.command(HOP, dir);
    cmd.args(args);
    cmd
}

/// Runs a command, panicking on failure, and returns its stdout parsed as hop's JSON `data`.
fn hop_data(cmd: Command) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_str(&run(cmd)).expect("hop --json prints one JSON document");
    doc["data"].clone()
}

/// Times one command from spawn to exit, panicking on failure; returns also its stdout.
fn timed_out(mut cmd: Command) -> (Duration, String) {
    let what = describe(&cmd);
    let start = Instant::now();
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot spawn `{what}`: {e}"));
    let elapsed = start.elapsed();
    check(&what, &output);
    (
        elapsed,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// One attempt kept open for the landing series: its launch variables.
struct Agent {
    vars: Vec<(&'static str, String)>,
    state: String,
    workspace: PathBuf,
}

impl Agent {
    fn from(data: &serde_json::Value) -> Self {
        let env = &data["env"];
        let get = |k: &str| {
            env[k]
                .as_str()
                .expect("hop env has every variable")
                .to_owned()
        };
        let vars = [
            "HOP_ROOT",
            "HOP_STATE_ID",
            "HOP_TASK_ID",
            "HOP_ATTEMPT_ID",
            "HOP_WORKSPACE",
        ]
        .into_iter()
        .map(|k| (k, get(k)))
        .collect();
        Self {
            vars,
            state: get("HOP_STATE_ID"),
            workspace: PathBuf::from(get("HOP_WORKSPACE")),
        }
    }

    /// Changes one file (and only that one) in the workspace and proposes it.
    fn propose(&self, sandbox: &Sandbox, n: usize) -> String {
        let d = n % DIRS;
        let path = format!("d{d:03}/f050.txt");
        // Put back the file the previous proposal changed, so each proposal changes one path.
        run(sandbox.git(&self.workspace, &["checkout", "-q", "--", "."]));
        write(
            &self.workspace.join(&path),
            format!("changed by proposal {n}\n").as_bytes(),
        );
        let mut cmd = hop(
            sandbox,
            &self.workspace,
            &["propose", "--summary", "bench", &self.state, "--json"],
        );
        cmd.envs(self.vars.iter().map(|(k, v)| (k, v.as_str())));
        hop_data(cmd)["state"]["id"]
            .as_str()
            .expect("a proposal id")
            .to_owned()
    }
}

fn main() {
    let rounds = Rounds::pick(
        Rounds {
            warmup: 0,
            samples: 2,
        },
        Rounds {
            warmup: 1,
            samples: 5,
        },
    );
    let sandbox = Sandbox::new();
    sandbox.print_preamble(HOP);
    println!(
        "plan:   {} warm-up + {} samples per series, interleaved{}",
        rounds.warmup,
        rounds.samples,
        if common::quick() {
            " (HPP_BENCH_QUICK)"
        } else {
            ""
        }
    );
    let repo = large_repo(&sandbox);
    hop_data(hop(&sandbox, &repo, &["init", "--json"]));
    let accepted = run(sandbox.git(&repo, &["rev-parse", "refs/hpp/hop/accepted"]));
    let lander = Agent::from(&hop_data(hop(
        &sandbox,
        &repo,
        &["start", "--agent", "bench", "land series", "--json"],
    )));

    let labels = [
        "hop start (ready workspace)",
        "git worktree add --detach",
        "hop land (1-file proposal)",
        "hop start --sparse d000",
        "git worktree add --no-checkout + sparse",
        "git merge-tree --write-tree (1 file)",
    ];
    let mut samples: [Vec<Duration>; 6] = Default::default();
    let plain = sandbox.root().join("plain-worktrees");
    // The landing's baseline: git's own three-way tree merge of a one-file commit made beside
    // the accepted line, onto the accepted tip (which the landings move on).
    let side = plain.join("side");
    let side_dir = side.to_str().expect("a UTF-8 path");
    run(sandbox.git(
        &repo,
        &[
            "worktree",
            "add",
            "--quiet",
            "-b",
            "bench-side",
            side_dir,
            &accepted,
        ],
    ));
    write(
        &side.join("d499/f001.txt"),
        b"changed beside the accepted line\n",
    );
    run(sandbox.git(&side, &["commit", "--quiet", "-am", "one file beside"]));
    for round in 0..rounds.warmup + rounds.samples {
        for k in 0..labels.len() {
            let series = (round + k) % labels.len();
            let elapsed = match series {
                0 | 3 => {
                    let prompt = format!("prompt {round}");
                    let mut args = vec!["start", "--agent", "bench", prompt.as_str(), "--json"];
                    if series == 3 {
                        args.extend(["--sparse", "d000"]);
                    }
                    let (elapsed, out) = timed_out(hop(&sandbox, &repo, &args));
                    let doc: serde_json::Value =
                        serde_json::from_str(&out).expect("hop --json prints JSON");
                    let workspace = doc["data"]["env"]["HOP_WORKSPACE"]
                        .as_str()
                        .expect("a workspace")
                        .to_owned();
                    run(sandbox.git(&repo, &["worktree", "remove", "--force", &workspace]));
                    elapsed
                }
                1 => {
                    let dir = plain.join(format!("w{round}"));
                    let dir = dir.to_str().expect("a UTF-8 path");
                    let (elapsed, _) = timed_out(sandbox.git(
                        &repo,
                        &["worktree", "add", "--quiet", "--detach", dir, &accepted],
                    ));
                    run(sandbox.git(&repo, &["worktree", "remove", "--force", dir]));
                    elapsed
                }
                4 => {
                    // git's own sparse workspace: the worktree without a checkout, the cone,
                    // then the index and the files within it.
                    let dir = plain.join(format!("s{round}"));
                    let dir = dir.to_str().expect("a UTF-8 path");
                    let script = format!(
                        "git worktree add --quiet --no-checkout --detach {dir} {accepted} && \
                         git -C {dir} sparse-checkout set --cone d000 && \
                         git -C {dir} read-tree -mu HEAD"
                    );
                    let (elapsed, _) = timed_out(sandbox.bash(&repo, &script));
                    run(sandbox.git(&repo, &["worktree", "remove", "--force", dir]));
                    elapsed
                }
                5 => {
                    timed_out(sandbox.git(
                        &repo,
                        &[
                            "merge-tree",
                            "--write-tree",
                            "refs/hpp/hop/accepted",
                            "bench-side",
                        ],
                    ))
                    .0
                }
                _ => {
                    let proposal = lander.propose(&sandbox, round);
                    timed_out(hop(&sandbox, &repo, &["land", &proposal])).0
                }
            };
            if round >= rounds.warmup {
                samples[series].push(elapsed);
            }
        }
    }

    println!();
    print_header();
    println!("{} files, one repository", DIRS * FILES_PER_DIR);
    let stats: Vec<Stats> = samples.iter().map(|s| Stats::of(s)).collect();
    for (i, label) in labels.iter().enumerate() {
        let note = match i {
            0 => format!("{:.2}x git worktree add", stats[0].median / stats[1].median),
            2 => format!(
                "{:.2}x git merge-tree (target <= 3x): overlap check + 3-way tree merge + CAS",
                stats[2].median / stats[5].median
            ),
            3 => format!(
                "{:.2}x git's sparse worktree; {:.3}x the full hop start",
                stats[3].median / stats[4].median,
                stats[3].median / stats[0].median
            ),
            4 => "baseline of the sparse start".to_owned(),
            5 => "baseline of the landing".to_owned(),
            _ => "baseline".to_owned(),
        };
        print_row(label, &stats[i], &note);
    }
}
