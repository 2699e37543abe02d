//! Whole-process latency of the trust commands: `git-hpp snapshot`, `attest verify` and `verify`,
//! against plain `git` doing comparable work.
//!
//! Measurement A, snapshot of a large tree: a repository with 50,000 committed files (500
//! directories of 100 files of a few hundred bytes of text each) plus 2,000 ignored files under
//! `target/`. First, four states of its workspace, one after the other:
//! - clean;
//! - one tracked file modified;
//! - 1,000 tracked files modified (spread over the directories);
//! - the content restored (`git checkout -- .`), then 1,000 files touched: mtime only.
//!
//! In each, after a wait that leaves no file racily clean (both git and the snapshot re-read a
//! file whose stat is too recent to vouch for its content), the first `git-hpp snapshot` and the
//! first `git status --porcelain` are timed once, then the two series run interleaved: the
//! target is a snapshot within 1.2x of git status, by the ratio of medians. The snapshot is
//! checked to be the tree `git add -A` + `git write-tree` writes into a copy of the index, and
//! a run under `strace` (when it is installed) counts the worktree files a repeated snapshot
//! opens: with its stat cache, none.
//!
//! Then, with 100 tracked files modified and 100 untracked files added, the series are
//! - `git-hpp snapshot`;
//! - `git status --porcelain`, the baseline;
//! - `git add -A` into a copy of the index plus `git write-tree`, which is what git itself needs
//!   to produce the same tree (checked to be the same once, before timing);
//! - sha256 of every tracked and untracked file, the reference harness's method, as the pipeline
//!   `git ls-files -z --cached --others --exclude-standard | xargs -0 sha256sum`;
//! - `git-hpp attest verify` of the current workspace, after one `attest create` on it;
//! - `git-hpp evidence run --id bench -- true`: a bundle of a command that does nothing, whose
//!   cost is the two snapshots it takes (before and after the run) and its record. The same
//!   run and a snapshot in a small repository (three files) are the issue's comparator: what
//!   the large tree adds to the run, over what it adds to one snapshot, is reported in
//!   snapshots, the target being two.
//!
//! Then one more file changes and the next `git-hpp snapshot` is timed once; a further change
//! and a run under `strace` count the worktree files that snapshot opens, which should be the
//! changed ones, not all 50,000.
//!
//! Measurement B, verify against many attestations: `git-hpp verify HEAD` in a repository with
//! one real attestation of HEAD's tree, and with 100,000 more attestation refs (for other tree
//! ids, pointing at the same record) stored loose and packed by `git pack-refs --all`. The
//! baseline, run on the same repositories, is `git for-each-ref` listing HEAD's tree's
//! attestations. The ratios "100k / 1" of git-hpp's medians are printed at the end: looking
//! attestations up by ref prefix should not scan them all.
//!
//! Measurement C, the server's gate: in a bare repository holding one attested commit and its
//! records, `git-hpp hook pre-receive` fed the line of a push of that commit to main, next to
//! `git-hpp verify` of the same commit in the same repository (both through `bash -c`, so both
//! pay the same shell). The target: the gate within 2x of verify.
//!
//! Measurement D, a policy log of 1,000 changes (issue 52): a repository whose trust policy
//! has 1,000 changes (`trust init`, a checker added, then `trust set --verify` alternating, each
//! signed by the root), and a twin with no policy; both hold the same approval of HEAD signed by
//! the checker. Series: `git-hpp verify HEAD` in each (in the first the clone remembers the
//! newest policy it verified, as every clone that fetched or wrote it does; target: at most 1.2x
//! the twin's); and in fresh clones of a bare remote of each (cloned before timing), `git-hpp
//! fetch`, next to `git fetch` of the same refs (the transfer alone). The fresh clone verifies
//! the whole log once, every signature of every change. `HPP_BENCH_ONLY=policy` runs D alone.
//!
//! Measurement E, the secret check a push makes (issue 54, item 4): the repository of
//! measurement A (its own copy) with 1,000 tracked files modified (spread over the
//! directories, no secret in them), its `origin` a bare repository that holds `main` (pushed
//! before timing), and one attestation of the modified workspace, made before timing, whose
//! snapshot changes those 1,000 files against the commit it was made at. Series:
//! `git-hpp attest create` (which also reads the snapshot for secrets HEAD does not hold) next
//! to `git status --porcelain`; and `git-hpp push origin`, which reads the record the remote
//! lacks (its 1,000 changed snapshot files) and then runs git push, next to the `git push
//! --porcelain -- origin 'refs/hpp/*:refs/hpp/*' 'refs/notes/hpp*:refs/notes/hpp*'` it runs,
//! from the same clone. Before every sample (not timed) both repositories go back to the same
//! state: the clone holds the one record (an attestation an `attest create` sample added is
//! deleted) and nothing staged from the remote (`refs/hpp-remote/origin/`,
//! `refs/notes/remote-hpp/`), the remote no ref under `refs/hpp/` or `refs/notes/hpp` and none
//! of the packs a push brought, so every push sends the same record to a remote that lacks it.
//! git sends the record's whole snapshot, about 50,500 objects (`git rev-list --objects <record>
//! ^main` counts them): the record's commit does not descend from main, so git counts none of
//! main's objects as the remote's.
//! The target: push within 1.1x of git push. With `HPP_BASELINE_BIN` naming a git-hpp built
//! from commit d2642a6 (whose push read attestations, checkpoints, evidence and Hop states, each
//! without its log), its `attest create` and `push` run in the same interleaving as two more
//! series; without it those rows are skipped. `HPP_BENCH_ONLY=leaks` runs E alone.
//!
//! Every sample is timed from spawn to exit. The series of a measurement run interleaved
//! (A, B, C, A, B, C, ...) so machine noise falls on all of them alike. Every repository lives in
//! a temporary directory on disk and every process runs in a hermetic environment (no user or
//! system git config). The benchmark reports and never fails on timing, but it panics if a
//! command it runs exits non-zero, since timing a failing command means nothing.
//!
//! Run it with `cargo bench --bench trust` (this builds the release binary first; the setup of
//! the large repository takes about a minute); set `HPP_BENCH_QUICK=1` for a smoke run with
//! fewer samples. E's baseline binary is built once, outside this repository's checkout:
//! `git worktree add /tmp/hpp-base d2642a6`, then in it `CARGO_TARGET_DIR=/tmp/bench-base-target
//! cargo build --release --locked`, and
//! `HPP_BASELINE_BIN=/tmp/bench-base-target/release/git-hpp HPP_BENCH_ONLY=leaks cargo bench
//! --bench trust`.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports its table on stdout"
)]

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    HPP, Rng, Rounds, Sandbox, Series, Stats, print_header, print_row, rev_parse, run,
    run_interleaved, run_with_input, timed, write,
};
use sha2::{Digest, Sha256};

/// Directories, and files in each, of the large repository.
const DIRS: usize = 500;
const FILES_PER_DIR: usize = 100;
/// Ignored files under `target/` in the large repository.
const IGNORED: usize = 2_000;
/// Tracked files modified, and untracked files added, before timing.
const MODIFIED: usize = 100;
const UNTRACKED: usize = 100;

/// Extra attestations in the "many attestations" repositories.
const MANY_ATTESTATIONS: usize = 100_000;

/// The command every attestation in this benchmark is recorded with.
const ATTEST: &[&str] = &[
    "attest",
    "create",
    "--spec",
    "SPEC.md",
    "--maker",
    "a",
    "--checker",
    "b",
    "--session",
    "s:1",
    "--verdict",
    "approved",
];

/// How many warm-up runs and measured samples each series gets: few for the large tree, whose
/// every round costs seconds, more for verify.
#[derive(Clone, Copy)]
struct Plan {
    big: Rounds,
    states: Rounds,
    verify: Rounds,
    /// Measurement E's series, whose rounds cost seconds but whose p90 is reported.
    leaks: Rounds,
    quick: bool,
}

impl Plan {
    fn from_env() -> Self {
        Self {
            big: Rounds::pick(
                Rounds {
                    warmup: 1,
                    samples: 3,
                },
                Rounds {
                    warmup: 1,
                    samples: 10,
                },
            ),
            states: Rounds::pick(
                Rounds {
                    warmup: 1,
                    samples: 5,
                },
                Rounds {
                    warmup: 2,
                    samples: 20,
                },
            ),
            verify: Rounds::pick(
                Rounds {
                    warmup: 1,
                    samples: 5,
                },
                Rounds {
                    warmup: 3,
                    samples: 20,
                },
            ),
            leaks: Rounds::standard(),
            quick: common::quick(),
        }
    }
}

/// The small repositories of measurement B.
impl Sandbox {
    /// A repository with one commit holding a README and the spec attestations name.
    fn small_repo(&self, name: &str) -> PathBuf {
        let dir = self.init(name);
        write(&dir.join("README"), b"bench\n");
        write(&dir.join("SPEC.md"), SPEC.as_bytes());
        run(self.git(&dir, &["add", "-A"]));
        run(self.git(&dir, &["commit", "-q", "-m", "first"]));
        dir
    }
}

const SPEC: &str = "# Spec\n\nThe benchmark's work is whatever it finds in the tree.\n";

fn append(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
    file.write_all(line.as_bytes())
        .unwrap_or_else(|e| panic!("cannot append to {}: {e}", path.display()));
}

const WORDS: &[&str] = &[
    "agent", "attest", "branch", "checker", "commit", "digest", "event", "evidence", "gate",
    "harness", "index", "loop", "maker", "object", "party", "record", "ref", "session", "snapshot",
    "spec", "stat", "tree", "verdict", "worktree", "fn", "let", "match", "return", "impl",
    "struct", "0", "1", "42", "=", "{", "}", "(", ")", ";", "//",
];

/// A few hundred bytes of text that differ from file to file.
fn filler(seed: u64) -> String {
    let mut rng = Rng(seed);
    let target = 200 + rng.below(400);
    let mut text = format!("// file {seed}\n");
    while text.len() < target {
        let words = 4 + rng.below(10);
        for i in 0..words {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(WORDS[rng.below(WORDS.len())]);
        }
        text.push('\n');
    }
    text
}

fn tracked_path(dir: &Path, d: usize, f: usize) -> PathBuf {
    dir.join(format!("d{d:03}")).join(format!("f{f:03}.txt"))
}

/// The large repository of measurement A, committed, with its ignored files, as `name` in the
/// sandbox.
fn large_repo(sandbox: &Sandbox, name: &str) -> PathBuf {
    let dir = sandbox.init(name);
    let start = Instant::now();
    write(&dir.join("SPEC.md"), SPEC.as_bytes());
    write(&dir.join(".gitignore"), b"target/\n");
    for d in 0..DIRS {
        std::fs::create_dir(dir.join(format!("d{d:03}"))).expect("creating a directory");
        for f in 0..FILES_PER_DIR {
            let n = d * FILES_PER_DIR + f;
            write(&tracked_path(&dir, d, f), filler(n as u64).as_bytes());
        }
    }
    let per_dir = 100;
    for k in 0..IGNORED.div_ceil(per_dir) {
        let sub = dir.join("target").join("debug").join(format!("b{k:02}"));
        std::fs::create_dir_all(&sub).expect("creating an ignored directory");
        for j in 0..per_dir.min(IGNORED - k * per_dir) {
            write(
                &sub.join(format!("o{j:03}.o")),
                filler(1_000_000 + (k * per_dir + j) as u64).as_bytes(),
            );
        }
    }
    let generated = start.elapsed();
    let start = Instant::now();
    run(sandbox.git(&dir, &["add", "-A"]));
    run(sandbox.git(&dir, &["commit", "-q", "-m", "large tree"]));
    let committed = start.elapsed();
    let tracked = run(sandbox.git(&dir, &["ls-files"])).lines().count();
    assert_eq!(
        tracked,
        DIRS * FILES_PER_DIR + 2,
        "every generated file but the ignored ones should be tracked"
    );
    println!(
        "setup: {tracked} tracked + {IGNORED} ignored files written in {:.1} s, \
         `git add -A && git commit` in {:.1} s",
        generated.as_secs_f64(),
        committed.as_secs_f64()
    );
    dir
}

/// Modifies `MODIFIED` tracked files (spread over the directories) and adds `UNTRACKED` files.
fn dirty_the_tree(dir: &Path) {
    for i in 0..MODIFIED {
        let d = (i * DIRS / MODIFIED) % DIRS;
        append(&tracked_path(dir, d, 50), &format!("modified {i}\n"));
    }
    for i in 0..UNTRACKED {
        let d = (i * DIRS / UNTRACKED + 2) % DIRS;
        write(
            &dir.join(format!("d{d:03}")).join(format!("new{i:03}.txt")),
            filler(2_000_000 + i as u64).as_bytes(),
        );
    }
}

/// How long a state waits before it is measured: past the second of the last write for git (an
/// entry not older than the index is racily clean), and past the snapshot's fence (a file
/// changed less than two whole seconds before a snapshot started is read again by the next).
const SETTLE: Duration = Duration::from_millis(3_100);

/// Modified or touched files in the large states.
const MANY: usize = 1_000;

/// The `i`th of the files the large states change, spread over the directories (never the
/// files `dirty_the_tree` changes).
fn spread_path(dir: &Path, i: usize) -> PathBuf {
    tracked_path(dir, i % DIRS, 10 + i / DIRS)
}

/// Sets the mtime of `path` to now, leaving its content alone.
fn touch(path: &Path) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()))
        .unwrap_or_else(|e| panic!("cannot touch {}: {e}", path.display()));
}

/// One state of the large workspace, measured.
struct State {
    label: &'static str,
    snapshot: Stats,
    status: Stats,
    first_snapshot: Duration,
    first_status: Duration,
    opened: Option<usize>,
}

/// Measures the large workspace at `dir` as it is now: the first snapshot and git status, then
/// both series interleaved, then checks the snapshot against git's tree and counts the files a
/// repeated snapshot opens.
fn measure_state(
    sandbox: &Sandbox,
    dir: &Path,
    plan: Plan,
    label: &'static str,
    add_write_tree: &str,
) -> State {
    // What the last steps wrote goes to disk now, not during the timing.
    let _ = Command::new("sync").status();
    std::thread::sleep(SETTLE);
    let first_snapshot = timed(sandbox.hpp(dir, &["snapshot"]));
    let first_status = timed(sandbox.git(dir, &["status", "--porcelain"]));
    let mut series = vec![
        Series::new(move |_| sandbox.hpp(dir, &["snapshot"])),
        Series::new(move |_| sandbox.git(dir, &["status", "--porcelain"])),
    ];
    run_interleaved(&mut series, plan.states);
    assert_eq!(
        run(sandbox.hpp(dir, &["snapshot"])),
        run(sandbox.bash(dir, add_write_tree)),
        "{label}: git-hpp snapshot should be the tree git add -A && git write-tree writes"
    );
    State {
        label,
        snapshot: series[0].stats(),
        status: series[1].stats(),
        first_snapshot,
        first_status,
        opened: files_opened(sandbox, dir, &["snapshot"]),
    }
}

/// The four states of measurement A, in order, on the committed large repository at `dir`.
fn measure_states(sandbox: &Sandbox, dir: &Path, plan: Plan, add_write_tree: &str) -> Vec<State> {
    let mut states = vec![measure_state(sandbox, dir, plan, "clean", add_write_tree)];
    append(&spread_path(dir, 0), "modified\n");
    states.push(measure_state(
        sandbox,
        dir,
        plan,
        "1 modified",
        add_write_tree,
    ));
    for i in 1..MANY {
        append(&spread_path(dir, i), "modified\n");
    }
    states.push(measure_state(
        sandbox,
        dir,
        plan,
        "1,000 modified",
        add_write_tree,
    ));
    run(sandbox.git(dir, &["checkout", "-q", "--", "."]));
    std::thread::sleep(SETTLE);
    run(sandbox.git(dir, &["status", "--porcelain"]));
    for i in 0..MANY {
        touch(&spread_path(dir, i));
    }
    states.push(measure_state(
        sandbox,
        dir,
        plan,
        "1,000 touched (mtime only)",
        add_write_tree,
    ));
    assert_eq!(
        run(sandbox.git(dir, &["status", "--porcelain"])),
        "",
        "touching files changes no content"
    );
    states
}

/// Worktree files (outside `.git`, not directories, not `.gitignore` or `.gitattributes`
/// probes) that a command opened, counted from an `strace` log of its run; `None` when strace
/// is not installed.
fn files_opened(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> Option<usize> {
    let found = Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        return None;
    }
    let log = sandbox.root().join("strace.log");
    let mut cmd = sandbox.command("strace", dir);
    cmd.args(["-f", "-qq", "-e", "trace=open,openat,openat2", "-o"])
        .arg(&log)
        .arg(HPP)
        .args(args);
    run(cmd);
    let text = std::fs::read_to_string(&log).expect("reading the strace log");
    let prefix = format!("{}/", dir.display());
    let opened: HashSet<&str> = text
        .lines()
        .filter(|line| !line.contains("O_DIRECTORY") && !line.contains("= -1"))
        .filter_map(|line| {
            let start = line.find("open")?;
            let quoted = &line[start..];
            let from = quoted.find('"')? + 1;
            let len = quoted[from..].find('"')?;
            let path = &quoted[from..from + len];
            let rel = path.strip_prefix(&prefix)?;
            let probe = rel.ends_with(".gitignore") || rel.ends_with(".gitattributes");
            (!rel.starts_with(".git/") && !probe).then_some(rel)
        })
        .collect();
    Some(opened.len())
}

/// One row of the printed table.
struct Row {
    label: String,
    stats: Stats,
    note: String,
}

impl Row {
    fn new(label: impl Into<String>, stats: Stats, note: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            stats,
            note: note.into(),
        }
    }
}

/// What measurement A found, for the table and the ratios.
struct LargeTree {
    states: Vec<State>,
    rows: Vec<Row>,
    snapshot: Stats,
    status: Stats,
    add_write_tree: Stats,
    attest_verify: Stats,
    /// `evidence run` over the small repository's, in snapshots ([`evidence_snapshots`]).
    evidence_snapshots: f64,
    after_change: Duration,
    files_read: Option<usize>,
    files_total: usize,
}

fn measure_large_tree(sandbox: &Sandbox, plan: Plan) -> LargeTree {
    let dir = large_repo(sandbox, "large");
    let add_write_tree = "T=$(mktemp -u); cp .git/index \"$T\"; GIT_INDEX_FILE=\"$T\" git add -A; \
                          GIT_INDEX_FILE=\"$T\" git write-tree; rm -f \"$T\"";
    let states = measure_states(sandbox, &dir, plan, add_write_tree);
    run(sandbox.git(&dir, &["checkout", "-q", "--", "."]));
    dirty_the_tree(&dir);
    // Any git command refreshes the index's stat cache; wait first, so no index entry is left
    // racily clean (to be re-read by every later command), nor a file too recent for the
    // snapshot's cache.
    std::thread::sleep(SETTLE);
    let status = run(sandbox.git(&dir, &["status", "--porcelain"]));
    assert_eq!(
        status.lines().count(),
        MODIFIED + UNTRACKED,
        "git status should see exactly the modified and the untracked files"
    );

    let hash_all = "git ls-files -z --cached --others --exclude-standard \
                    | xargs -0 sha256sum > /dev/null";
    let snapshot = run(sandbox.hpp(&dir, &["snapshot"]));
    let git_tree = run(sandbox.bash(&dir, add_write_tree));
    assert_eq!(
        snapshot, git_tree,
        "git-hpp snapshot should be the tree git add -A && git write-tree writes"
    );
    run(sandbox.hpp(&dir, ATTEST));

    // The issue's comparator: the same run in a small repository, where the snapshots cost
    // next to nothing and what is left is the run itself (start, the command, the record).
    let small = sandbox.small_repo("small-evidence");
    let small = small.as_path();
    let dir = dir.as_path();
    let mut series = vec![
        Series::new(move |_| sandbox.hpp(dir, &["snapshot"])),
        Series::new(move |_| sandbox.git(dir, &["status", "--porcelain"])),
        Series::new(move |_| sandbox.bash(dir, add_write_tree)),
        Series::new(move |_| sandbox.bash(dir, hash_all)),
        Series::new(move |_| sandbox.hpp(dir, &["attest", "verify"])),
        // A bundle of a command that does nothing: what remains is the two snapshots it takes
        // (before and after the command) and the record it writes.
        Series::new(move |_| sandbox.hpp(dir, &["evidence", "run", "--id", "bench", "--", "true"])),
        Series::new(move |_| sandbox.hpp(small, &["snapshot"])),
        Series::new(move |_| {
            sandbox.hpp(small, &["evidence", "run", "--id", "bench", "--", "true"])
        }),
    ];
    run_interleaved(&mut series, plan.big);
    let stats: Vec<Stats> = series.iter().map(Series::stats).collect();

    // One more file changes: the next snapshot should read it, not the whole tree.
    append(&tracked_path(dir, DIRS - 1, FILES_PER_DIR - 1), "changed\n");
    let after_change = timed(sandbox.hpp(dir, &["snapshot"]));
    append(&tracked_path(dir, DIRS - 2, FILES_PER_DIR - 1), "changed\n");
    let files_read = files_opened(sandbox, dir, &["snapshot"]);
    let files_total = DIRS * FILES_PER_DIR + 2 + UNTRACKED;

    let rows = vec![
        Row::new("git-hpp snapshot", stats[0], ""),
        Row::new("git status --porcelain", stats[1], "baseline"),
        Row::new(
            "git add -A (index copy) + write-tree",
            stats[2],
            "same tree, checked",
        ),
        Row::new(
            "sha256 of every file",
            stats[3],
            "git ls-files | xargs -0 sha256sum",
        ),
        Row::new("git-hpp attest verify", stats[4], "exit 0"),
        Row::new(
            "git-hpp evidence run -- true",
            stats[5],
            format!(
                "{:.2} snapshots; over the small repository's run: {:.2} snapshots (target <= 2)",
                stats[5].median / stats[0].median,
                evidence_snapshots(&stats)
            ),
        ),
        Row::new("git-hpp snapshot, small repository", stats[6], "3 files"),
        Row::new(
            "git-hpp evidence run -- true, small repository",
            stats[7],
            "start, the command, the record",
        ),
    ];
    LargeTree {
        states,
        rows,
        snapshot: stats[0],
        status: stats[1],
        add_write_tree: stats[2],
        attest_verify: stats[4],
        evidence_snapshots: evidence_snapshots(&stats),
        after_change,
        files_read,
        files_total,
    }
}

/// What `evidence run` pays for the large tree, in snapshots: its time over the same run in a
/// small repository, divided by the snapshot's time over the small repository's snapshot
/// (`stats` as measurement A orders its series). Two is a snapshot before the command and
/// one after it.
fn evidence_snapshots(stats: &[Stats]) -> f64 {
    (stats[5].median - stats[7].median) / (stats[0].median - stats[6].median)
}

/// A repository with one real attestation of HEAD's tree and `extra` more attestation refs for
/// other tree ids, all pointing at that record; returns it and HEAD's tree.
fn attested_repo(sandbox: &Sandbox, name: &str, extra: usize) -> (PathBuf, String) {
    let dir = sandbox.small_repo(name);
    run(sandbox.hpp(&dir, ATTEST));
    let tree = rev_parse(sandbox, &dir, "HEAD^{tree}");
    let real = run(sandbox.git(
        &dir,
        &[
            "for-each-ref",
            "--format=%(refname)",
            &format!("refs/hpp/attestations/{tree}/"),
        ],
    ));
    assert_eq!(
        real.lines().count(),
        1,
        "attest create should record one ref"
    );
    let record = rev_parse(sandbox, &dir, &real);
    let id = real.rsplit('/').next().expect("a ref has a last component");
    if extra > 0 {
        let script: String = (0..extra)
            .map(|i| {
                let digest = Sha256::digest(format!("fake tree {i}").as_bytes());
                let hex: String = digest[..20].iter().map(|b| format!("{b:02x}")).collect();
                format!("create refs/hpp/attestations/{hex}/{id} {record}\n")
            })
            .collect();
        run_with_input(
            sandbox.git(&dir, &["update-ref", "--stdin"]),
            script.as_bytes(),
        );
    }
    let listed = run(sandbox.git(
        &dir,
        &["for-each-ref", "--format=x", "refs/hpp/attestations/"],
    ));
    assert_eq!(
        listed.lines().count(),
        extra + 1,
        "the repository should hold {extra} attestations besides the real one"
    );
    (dir, tree)
}

/// Measurement B: rows of (label, git-hpp verify, git for-each-ref), one per repository.
fn measure_verify(sandbox: &Sandbox, plan: Plan) -> Vec<(&'static str, Stats, Stats)> {
    let one = attested_repo(sandbox, "one-attestation", 0);
    let loose = attested_repo(sandbox, "loose-attestations", MANY_ATTESTATIONS);
    let packed = attested_repo(sandbox, "packed-attestations", MANY_ATTESTATIONS);
    run(sandbox.git(&packed.0, &["pack-refs", "--all"]));
    assert!(
        !packed.0.join(".git/refs/hpp/attestations").exists(),
        "git pack-refs --all should have removed the loose attestation refs"
    );
    assert!(
        loose.0.join(".git/refs/hpp/attestations").is_dir(),
        "the loose repository should hold its attestations as loose ref files"
    );

    let repos = [
        ("verify HEAD, 1 attestation", one),
        ("verify HEAD, 100k loose", loose),
        ("verify HEAD, 100k packed", packed),
    ];
    let mut series = Vec::new();
    for (_, (dir, tree)) in &repos {
        series.push(Series::new(move |_| sandbox.hpp(dir, &["verify", "HEAD"])));
        series.push(Series::new(move |_| {
            sandbox.git(
                dir,
                &[
                    "for-each-ref",
                    "--format=%(objectname)",
                    &format!("refs/hpp/attestations/{tree}/"),
                ],
            )
        }));
    }
    run_interleaved(&mut series, plan.verify);
    repos
        .iter()
        .zip(series.chunks(2))
        .map(|((label, _), pair)| (*label, pair[0].stats(), pair[1].stats()))
        .collect()
}

/// Measurement C: (gate, verify) of one commit in a bare repository holding its records.
fn measure_gate(sandbox: &Sandbox, plan: Plan) -> (Stats, Stats) {
    let (work, _) = attested_repo(sandbox, "gate-work", 0);
    let bare = sandbox.root().join("gate-server.git");
    run(sandbox.git(
        sandbox.root(),
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &bare.display().to_string(),
        ],
    ));
    let url = bare.display().to_string();
    run(sandbox.git(
        &work,
        &["push", "-q", &url, "main", "refs/hpp/*:refs/hpp/*"],
    ));
    let commit = rev_parse(sandbox, &work, "HEAD");
    let zero = "0".repeat(40);
    let gate = format!("printf '%s\\n' '{zero} {commit} refs/heads/main' | {HPP} hook pre-receive");
    let verify = format!("{HPP} verify {commit} > /dev/null");
    // Both must pass, or the comparison means nothing.
    run(sandbox.bash(&bare, &gate));
    run(sandbox.bash(&bare, &verify));
    let mut series = vec![
        Series::new(|_| sandbox.bash(&bare, &gate)),
        Series::new(|_| sandbox.bash(&bare, &verify)),
    ];
    run_interleaved(&mut series, plan.verify);
    (series[0].stats(), series[1].stats())
}

/// Changes in measurement D's policy log.
const POLICY_CHANGES: usize = 1_000;

/// What measurement D measured.
struct PolicyLog {
    setup: Duration,
    verify_policy: Stats,
    verify_none: Stats,
    fetch_policy: Stats,
    fetch_none: Stats,
    git_fetch_policy: Stats,
}

/// Makes an ed25519 key with the real `ssh-keygen`; returns the private key's path.
fn keygen(sandbox: &Sandbox, name: &str) -> String {
    let key = sandbox.root().join(name).display().to_string();
    let mut cmd = sandbox.command("ssh-keygen", sandbox.root());
    cmd.args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", &key]);
    run(cmd);
    key
}

fn measure_policy(sandbox: &Sandbox, plan: Plan) -> PolicyLog {
    let start = Instant::now();
    let root = keygen(sandbox, "policy-root");
    let checker = keygen(sandbox, "policy-checker");
    let signed: Vec<&str> = ATTEST
        .iter()
        .copied()
        .chain(["--sign-key", checker.as_str()])
        .collect();
    let with = sandbox.small_repo("policy-log");
    let without = sandbox.small_repo("policy-none");
    let root_pub = format!("{root}.pub");
    let checker_pub = format!("{checker}.pub");
    run(sandbox.hpp(
        &with,
        &[
            "trust",
            "init",
            "--root",
            "root",
            "--key",
            &root_pub,
            "--sign-key",
            &root,
            "--apply",
        ],
    ));
    run(sandbox.hpp(
        &with,
        &[
            "trust",
            "add",
            "b",
            "--key",
            &checker_pub,
            "--role",
            "checker",
            "--sign-key",
            &root,
            "--apply",
        ],
    ));
    for i in 2..POLICY_CHANGES {
        let mode = if i % 2 == 0 { "each" } else { "tip" };
        run(sandbox.hpp(
            &with,
            &[
                "trust",
                "set",
                "--verify",
                mode,
                "--sign-key",
                &root,
                "--apply",
            ],
        ));
    }
    for dir in [&with, &without] {
        run(sandbox.hpp(dir, &signed));
    }
    // Both pass, the first with the signature checked, or the comparison means nothing.
    let checked = run(sandbox.hpp(&with, &["verify", "HEAD"]));
    assert!(checked.contains("signature verified (b)"), "{checked}");
    run(sandbox.hpp(&without, &["verify", "HEAD"]));
    let mut remotes = Vec::new();
    for (dir, name) in [(&with, "policy-log.git"), (&without, "policy-none.git")] {
        let bare = sandbox.root().join(name).display().to_string();
        run(sandbox.git(
            sandbox.root(),
            &["init", "-q", "--bare", "-b", "main", &bare],
        ));
        run(sandbox.git(dir, &["push", "-q", &bare, "main", "refs/hpp/*:refs/hpp/*"]));
        remotes.push(bare);
    }
    let setup = start.elapsed();
    let rounds = plan.verify;
    let clones = |remote: &str, kind: &str| -> Vec<PathBuf> {
        (0..rounds.warmup + rounds.samples)
            .map(|i| {
                let dir = sandbox.root().join(format!("{kind}-{i}"));
                run(sandbox.git(
                    sandbox.root(),
                    &["clone", "-q", remote, &dir.display().to_string()],
                ));
                dir
            })
            .collect()
    };
    let (policy_clones, none_clones, git_clones) = (
        clones(&remotes[0], "clone-policy"),
        clones(&remotes[1], "clone-none"),
        clones(&remotes[0], "clone-git"),
    );
    let mut series = vec![
        Series::new(|_| sandbox.hpp(&with, &["verify", "HEAD"])),
        Series::new(|_| sandbox.hpp(&without, &["verify", "HEAD"])),
        Series::new(|i| sandbox.hpp(&policy_clones[i], &["fetch"])),
        Series::new(|i| sandbox.hpp(&none_clones[i], &["fetch"])),
        Series::new(|i| {
            sandbox.git(
                &git_clones[i],
                &[
                    "fetch",
                    "-q",
                    "origin",
                    "+refs/hpp/*:refs/hpp-remote/origin/*",
                ],
            )
        }),
    ];
    run_interleaved(&mut series, rounds);
    // The fresh clone took the policy in and verifies the approval against it.
    let checked = run(sandbox.hpp(&policy_clones[0], &["attest", "verify"]));
    assert!(checked.contains("signature verified (b)"), "{checked}");
    PolicyLog {
        setup,
        verify_policy: series[0].stats(),
        verify_none: series[1].stats(),
        fetch_policy: series[2].stats(),
        fetch_none: series[3].stats(),
        git_fetch_policy: series[4].stats(),
    }
}

fn print_policy(log: &PolicyLog) {
    println!(
        "D. a trust policy of {POLICY_CHANGES} changes (written in {:.0} s)",
        log.setup.as_secs_f64()
    );
    print_row("git-hpp verify HEAD, policy", &log.verify_policy, "");
    print_row("git-hpp verify HEAD, no policy", &log.verify_none, "");
    print_row("git-hpp fetch, fresh clone, policy", &log.fetch_policy, "");
    print_row("git-hpp fetch, fresh clone, no policy", &log.fetch_none, "");
    print_row(
        "git fetch refs/hpp/*, fresh clone, policy",
        &log.git_fetch_policy,
        "the transfer alone",
    );
    println!(
        "ratios (median): verify HEAD policy / none = {:.2}x (target <= 1.2x); fetch policy / none = {:.2}x (target <= 1.2x); fetch policy / git fetch of the same refs = {:.2}x",
        log.verify_policy.median / log.verify_none.median,
        log.fetch_policy.median / log.fetch_none.median,
        log.fetch_policy.median / log.git_fetch_policy.median,
    );
}

/// The commit the baseline binary of measurement E is built from: push read attestations,
/// checkpoints, evidence and Hop states only, each against nothing older.
const BASELINE_COMMIT: &str = "d2642a6";

/// The baseline binary of measurement E, from `HPP_BASELINE_BIN` (unset or empty: no baseline).
fn baseline_bin() -> Option<String> {
    std::env::var("HPP_BASELINE_BIN")
        .ok()
        .filter(|bin| !bin.is_empty())
}

/// What measurement E measured; the baseline binary's series are `None` without one.
struct Leaks {
    setup: Duration,
    /// Paths the pushed record's snapshot changes against the commit it was made at.
    changed: usize,
    attest: Stats,
    attest_base: Option<Stats>,
    status: Stats,
    push: Stats,
    push_base: Option<Stats>,
    git_push: Stats,
}

/// The refs of the repository at `dir` (a worktree or a bare repository).
fn ref_names(sandbox: &Sandbox, dir: &Path) -> Vec<String> {
    run(sandbox.git(dir, &["for-each-ref", "--format=%(refname)"]))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Deletes the refs `doomed` picks in the repository at `dir`, with one `git update-ref --stdin`.
fn delete_refs(sandbox: &Sandbox, dir: &Path, doomed: impl Fn(&str) -> bool) {
    let script: String = ref_names(sandbox, dir)
        .iter()
        .filter(|name| doomed(name))
        .map(|name| format!("delete {name}\n"))
        .collect();
    if !script.is_empty() {
        run_with_input(
            sandbox.git(dir, &["update-ref", "--stdin"]),
            script.as_bytes(),
        );
    }
}

/// The files in `dir`, by name.
fn file_names(dir: &Path) -> HashSet<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").file_name())
        .collect()
}

/// Measurement E: the large repository with `MANY` tracked files modified, its `origin` a bare
/// repository holding `main`, and one attestation of the workspace. Before every sample (not
/// timed) the repositories go back to that state: the clone holds that one record and nothing
/// staged from the remote, the remote holds no record and none of the objects a push brought.
fn measure_leaks(sandbox: &Sandbox, plan: Plan, baseline: Option<&str>) -> Leaks {
    let start = Instant::now();
    let dir = large_repo(sandbox, "leaks");
    let remote = sandbox.root().join("leaks-remote.git");
    let url = remote.display().to_string();
    run(sandbox.git(
        sandbox.root(),
        &["init", "-q", "--bare", "-b", "main", &url],
    ));
    // The packs of the timed pushes are taken away again; no gc may pack them in meanwhile.
    run(sandbox.git(&remote, &["config", "receive.autogc", "false"]));
    run(sandbox.git(&remote, &["config", "gc.auto", "0"]));
    run(sandbox.git(&dir, &["remote", "add", "origin", &url]));
    run(sandbox.git(&dir, &["push", "-q", "origin", "main"]));
    let packs = remote.join("objects").join("pack");
    let remote_packs = file_names(&packs);
    for i in 0..MANY {
        append(&spread_path(&dir, i), "modified\n");
    }
    // No index entry left racily clean, no file too recent for the snapshot's cache.
    let _ = Command::new("sync").status();
    std::thread::sleep(SETTLE);
    let status = run(sandbox.git(&dir, &["status", "--porcelain"]));
    assert_eq!(
        status.lines().count(),
        MANY,
        "git status should see exactly the modified files"
    );
    let attested = run(sandbox.hpp(&dir, ATTEST));
    let kept: HashSet<String> = ref_names(sandbox, &dir)
        .into_iter()
        .filter(|name| name.starts_with("refs/hpp/") || name.starts_with("refs/notes/hpp"))
        .collect();
    let record = kept
        .iter()
        .find(|name| name.starts_with("refs/hpp/attestations/"))
        .unwrap_or_else(|| panic!("attest create should record an attestation: {attested}"))
        .clone();
    let changed = run(sandbox.git(
        &dir,
        &[
            "diff-tree",
            "-r",
            "--name-only",
            "HEAD^{tree}",
            &format!("{record}:snapshot"),
        ],
    ))
    .lines()
    .count();
    assert_eq!(
        changed, MANY,
        "the record's snapshot should change the modified files against HEAD"
    );
    let setup = start.elapsed();

    let dir = dir.as_path();
    let remote = remote.as_path();
    // Every sample starts from the same state (see the doc above), whatever ran before it.
    let reset = || {
        delete_refs(sandbox, dir, |name| {
            (name.starts_with("refs/hpp/") && !kept.contains(name))
                || name.starts_with("refs/hpp-remote/")
                || name.starts_with("refs/notes/remote-hpp/")
        });
        delete_refs(sandbox, remote, |name| {
            name.starts_with("refs/hpp/") || name.starts_with("refs/notes/hpp")
        });
        for name in file_names(&packs).difference(&remote_packs) {
            let path = packs.join(name);
            std::fs::remove_file(&path)
                .unwrap_or_else(|e| panic!("cannot remove {}: {e}", path.display()));
        }
    };
    let reset = &reset;
    let with = |bin: &str, args: &[&str]| {
        let mut cmd = sandbox.command(bin, dir);
        cmd.args(args);
        cmd
    };
    let mut series = vec![
        Series::new(move |_| {
            reset();
            with(HPP, ATTEST)
        }),
        Series::new(move |_| {
            reset();
            sandbox.git(dir, &["status", "--porcelain"])
        }),
        Series::new(move |_| {
            reset();
            with(HPP, &["push", "origin"])
        }),
        Series::new(move |_| {
            reset();
            sandbox.git(dir, common::GIT_PUSH)
        }),
    ];
    if let Some(base) = baseline {
        series.push(Series::new(move |_| {
            reset();
            with(base, ATTEST)
        }));
        series.push(Series::new(move |_| {
            reset();
            with(base, &["push", "origin"])
        }));
    }
    run_interleaved(&mut series, plan.leaks);
    // Each push sent the record: the last one of each kind is checked.
    for bin in std::iter::once(HPP).chain(baseline) {
        reset();
        run(with(bin, &["push", "origin"]));
        let there = ref_names(sandbox, remote);
        assert!(
            there.contains(&record),
            "{bin} push should have sent {record}: {there:?}"
        );
    }
    reset();
    run(sandbox.git(dir, common::GIT_PUSH));
    assert!(
        ref_names(sandbox, remote).contains(&record),
        "git push should have sent {record}"
    );
    let stats: Vec<Stats> = series.iter().map(Series::stats).collect();
    Leaks {
        setup,
        changed,
        attest: stats[0],
        status: stats[1],
        push: stats[2],
        git_push: stats[3],
        attest_base: stats.get(4).copied(),
        push_base: stats.get(5).copied(),
    }
}

fn print_leaks(leaks: &Leaks, baseline: Option<&str>) {
    println!(
        "E. the secret check a push makes: {} files, {MANY} modified, a remote holding main \
         (set up in {:.0} s); the record's snapshot changes {} files against its commit",
        DIRS * FILES_PER_DIR + 2,
        leaks.setup.as_secs_f64(),
        leaks.changed
    );
    let base = format!("baseline {BASELINE_COMMIT}");
    print_row("git-hpp attest create", &leaks.attest, "");
    if let Some(stats) = &leaks.attest_base {
        print_row("git-hpp attest create, baseline", stats, &base);
    }
    print_row("git status --porcelain", &leaks.status, "");
    print_row("git-hpp push origin", &leaks.push, "");
    if let Some(stats) = &leaks.push_base {
        print_row("git-hpp push origin, baseline", stats, &base);
    }
    print_row(
        "git push --porcelain, the same refspecs",
        &leaks.git_push,
        "the transfer alone",
    );
    let ratio =
        |a: &Stats, b: &Stats| format!("{:.2}x (p90 {:.2}x)", a.median / b.median, a.p90 / b.p90);
    println!(
        "ratios (median): attest create / git status = {}; push / git push = {} (target <= 1.1x)",
        ratio(&leaks.attest, &leaks.status),
        ratio(&leaks.push, &leaks.git_push),
    );
    match (&leaks.attest_base, &leaks.push_base) {
        (Some(attest), Some(push)) => println!(
            "ratios (median), {base} ({}): attest create / git status = {}; push / git push = {}",
            baseline.unwrap_or("?"),
            ratio(attest, &leaks.status),
            ratio(push, &leaks.git_push),
        ),
        _ => println!(
            "baseline rows skipped: set HPP_BASELINE_BIN to a git-hpp built from {BASELINE_COMMIT}"
        ),
    }
}

fn main() {
    let plan = Plan::from_env();
    let sandbox = Sandbox::new();
    sandbox.print_preamble(HPP);
    let baseline = baseline_bin();
    let only = std::env::var("HPP_BENCH_ONLY").unwrap_or_default();
    if only == "policy" {
        print_header();
        print_policy(&measure_policy(&sandbox, plan));
        return;
    }
    if let Some(base) = &baseline {
        println!("baseline: {base} (built from {BASELINE_COMMIT})");
    }
    if only == "leaks" {
        println!(
            "plan:   {} warm-up + {} samples per series, interleaved{}",
            plan.leaks.warmup,
            plan.leaks.samples,
            if plan.quick { " (HPP_BENCH_QUICK)" } else { "" }
        );
        let leaks = measure_leaks(&sandbox, plan, baseline.as_deref());
        print_header();
        print_leaks(&leaks, baseline.as_deref());
        return;
    }
    println!(
        "plan:   large tree states {} warm-up + {} samples, other series {} warm-up + {} samples, \
         verify {} warm-up + {} samples per series, E {} warm-up + {} samples, interleaved{}",
        plan.states.warmup,
        plan.states.samples,
        plan.big.warmup,
        plan.big.samples,
        plan.verify.warmup,
        plan.verify.samples,
        plan.leaks.warmup,
        plan.leaks.samples,
        if plan.quick { " (HPP_BENCH_QUICK)" } else { "" }
    );

    let large = measure_large_tree(&sandbox, plan);
    let verify = measure_verify(&sandbox, plan);
    let (gate, gate_verify) = measure_gate(&sandbox, plan);
    let policy = measure_policy(&sandbox, plan);
    let leaks = measure_leaks(&sandbox, plan, baseline.as_deref());

    println!();
    println!(
        "A. {} tracked files + {IGNORED} ignored: git-hpp snapshot vs git status --porcelain, \
         interleaved in each state",
        DIRS * FILES_PER_DIR + 2
    );
    println!(
        "{:<28} {:>21} {:>21} {:>6} {:>21}  files a repeat opens",
        "state", "snapshot ms (p90)", "git status ms (p90)", "ratio", "first run: snap/stat"
    );
    for state in &large.states {
        println!(
            "{:<28} {:>10.1} ({:>7.1}) {:>10.1} ({:>7.1}) {:>5.2}x {:>9.1} / {:>6.1} ms  {}",
            state.label,
            state.snapshot.median,
            state.snapshot.p90,
            state.status.median,
            state.status.p90,
            state.snapshot.median / state.status.median,
            state.first_snapshot.as_secs_f64() * 1e3,
            state.first_status.as_secs_f64() * 1e3,
            state
                .opened
                .map_or_else(|| "n/a (no strace)".to_owned(), |n| n.to_string()),
        );
    }
    println!();
    print_header();
    println!(
        "A. {} files ({} modified, {} untracked) + {IGNORED} ignored",
        large.files_total - UNTRACKED,
        MODIFIED,
        UNTRACKED
    );
    for row in &large.rows {
        print_row(&row.label, &row.stats, &row.note);
    }
    let files_read = large.files_read.map_or_else(
        || "files read: n/a (no strace)".to_owned(),
        |n| format!("a later run opened {n} of {} files", large.files_total),
    );
    print_row(
        "git-hpp snapshot after 1 file changed",
        &Stats::of(&[large.after_change]),
        &files_read,
    );
    println!("B. one commit, attestations by ref prefix");
    for (label, hpp, git) in &verify {
        print_row(
            &format!("git-hpp {label}"),
            hpp,
            &format!("git for-each-ref <tree>/: {:.1} ms", git.median),
        );
    }

    println!("C. the server's gate on a push of one commit");
    print_row("git-hpp hook pre-receive", &gate, "");
    print_row("git-hpp verify <commit> (baseline)", &gate_verify, "");

    println!();
    for state in &large.states {
        println!(
            "ratio (median): snapshot / git status, {} = {:.2}x (target <= 1.2x), n = {}",
            state.label,
            state.snapshot.median / state.status.median,
            state.snapshot.n
        );
    }
    println!(
        "ratios (median): snapshot / git status = {:.2}x (100 modified, 100 untracked); \
         add -A + write-tree / git status = {:.2}x; attest verify / snapshot = {:.2}x",
        large.snapshot.median / large.status.median,
        large.add_write_tree.median / large.status.median,
        large.attest_verify.median / large.snapshot.median,
    );
    println!(
        "ratio (median): evidence run over the small repository's, in snapshots over the small \
         repository's = {:.2} (target <= 2: its snapshot before the command and its snapshot after)",
        large.evidence_snapshots
    );
    println!(
        "ratios (median): verify 100k loose / 1 = {:.2}x, 100k packed / 1 = {:.2}x; \
         git for-each-ref {:.2}x, {:.2}x",
        verify[1].1.median / verify[0].1.median,
        verify[2].1.median / verify[0].1.median,
        verify[1].2.median / verify[0].2.median,
        verify[2].2.median / verify[0].2.median,
    );
    println!(
        "ratios (median): pre-receive gate / verify = {:.2}x (target <= 2x)",
        gate.median / gate_verify.median
    );
    println!();
    print_policy(&policy);
    println!();
    print_header();
    print_leaks(&leaks, baseline.as_deref());
}
