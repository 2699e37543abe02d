//! Repositories on git's reftable ref backend (issue 29, item 3): `git init --ref-format=reftable`,
//! which is git's answer to repositories with very many refs, and so to what `refs/hpp/`
//! becomes. gix 0.91 cannot read reftable refs; the store reads and moves them through git's
//! own `for-each-ref` and `update-ref --stdin` transactions, objects still through gix. The
//! tour runs whole on reftable repositories (records, loops, lanes, hop, push, the server's
//! gate, the reviewer's clone), three reftable clones sync to one history, and racing writers
//! lose nothing. `HPP_TEST_REF_FORMAT=reftable cargo test --test it` runs the whole suite so.

use std::path::{Path, PathBuf};
use std::process::Child;

use crate::harness::{GitDaemon, Run, Sandbox};

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// The ref backend git says the repository at `dir` uses.
fn ref_format(sandbox: &Sandbox, dir: &Path) -> String {
    sandbox.git_in(dir, &["rev-parse", "--show-ref-format"])
}

/// A sandbox on reftable, or `None` (said loudly) when this git cannot make one.
fn reftable_sandbox() -> Option<Sandbox> {
    let probe = Sandbox::empty();
    let made = probe
        .command("git", &probe.root)
        .args(["init", "-q", "--ref-format=reftable", "probe"])
        .output()
        .expect("git runs");
    if !made.status.success() {
        eprintln!(
            "SKIPPED: this git cannot make a reftable repository: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        );
        return None;
    }
    let sandbox = Sandbox::repo_with_ref_format("reftable");
    assert_eq!(ref_format(&sandbox, &sandbox.root), "reftable");
    Some(sandbox)
}

#[test]
fn the_tour_runs_whole_on_reftable_repositories() {
    let Some(sandbox) = reftable_sandbox() else {
        return;
    };
    let run = sandbox.hpp_in(&sandbox.root, &["demo", "--keep"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stderr.contains("did not expect"), "{run}");
    assert!(!run.stdout.contains("internal error"), "{run}");
    let kept = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("kept everything under "))
        .map(|p| PathBuf::from(p.trim()))
        .expect("the tour says where it kept its repositories");
    // The tour's repositories are the reftable ones: the remote, the maker's, the reviewer's.
    for repo in ["remote.git", "maker", "reviewer"] {
        assert_eq!(ref_format(&sandbox, &kept.join(repo)), "reftable", "{repo}");
    }
    let remote = kept.join("remote.git");
    let records = sandbox.git_in(
        &remote,
        &["for-each-ref", "--format=%(refname)", "refs/hpp/"],
    );
    assert!(records.contains("refs/hpp/loops/main"), "{records}");
    assert!(records.contains("refs/hpp/attestations/"), "{records}");
    // The reviewer's clone verifies main from what it fetched.
    let verify = sandbox.hpp_in(&kept.join("reviewer"), &["verify", "origin/main"]);
    assert_eq!(verify.code, 0, "{verify}");
    std::fs::remove_dir_all(&kept).expect("the kept tour is removable");
}

/// A bare reftable remote guarded by the server's gate, served by `git daemon`, and `n`
/// reftable clones of it with `remote setup --apply`.
struct Machines {
    sandbox: Sandbox,
    remote: PathBuf,
    clones: Vec<PathBuf>,
    _daemon: GitDaemon,
}

impl Machines {
    fn new(sandbox: Sandbox, n: usize) -> Self {
        let base = sandbox.path("srv");
        std::fs::create_dir_all(&base).expect("writable");
        let remote = base.join("remote.git");
        sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
        sandbox.git(["push", "-q", text(&remote), "main"]);
        sandbox
            .hpp_in(&remote, &["hooks", "install", "--server", "--apply"])
            .ok();
        let daemon = GitDaemon::start(&sandbox, &base);
        let url = daemon.url("remote.git");
        let clones = (0..n)
            .map(|i| {
                let dir = sandbox.path(&format!("m{i}"));
                sandbox.git(["clone", "-q", &url, text(&dir)]);
                sandbox.hpp_in(&dir, &["remote", "setup", "--apply"]).ok();
                dir
            })
            .collect();
        Machines {
            sandbox,
            remote,
            clones,
            _daemon: daemon,
        }
    }

    fn hpp(&self, m: usize, args: &[&str]) -> Run {
        self.sandbox.hpp_in(&self.clones[m], args)
    }

    fn records(&self, dir: &Path) -> String {
        self.sandbox.git_in(
            dir,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "refs/hpp/board",
                "refs/hpp/gotchas",
                "refs/hpp/loops",
            ],
        )
    }

    fn sync(&self, m: usize) {
        let fetched = self.hpp(m, &["fetch"]);
        assert!(matches!(fetched.code, 0 | 1), "fetch on m{m}:\n{fetched}");
        let pushed = self.hpp(m, &["push"]);
        assert_eq!(pushed.code, 0, "push on m{m}:\n{pushed}");
    }
}

fn claim(machines: &Machines, m: usize, item: &str) {
    machines
        .hpp(
            m,
            &[
                "board",
                "claim",
                item,
                "--lane",
                &format!("lane-{m}"),
                "--model",
                "gpt-5",
            ],
        )
        .ok();
}

#[test]
fn three_reftable_clones_sync_to_one_history_through_the_gated_remote() {
    let Some(sandbox) = reftable_sandbox() else {
        return;
    };
    let machines = Machines::new(sandbox, 3);
    for dir in machines.clones.iter().chain([&machines.remote]) {
        assert_eq!(ref_format(&machines.sandbox, dir), "reftable");
    }
    // Each machine writes before it hears of the others: three diverged boards, one loop.
    claim(&machines, 0, "ITEM-0");
    claim(&machines, 1, "ITEM-1");
    claim(&machines, 2, "ITEM-2");
    machines
        .hpp(
            0,
            &[
                "event",
                "append",
                "--loop",
                "shared",
                "--type",
                "work_started",
                "--work",
                "W-1",
                "--maker",
                "agent-a",
            ],
        )
        .ok();
    machines.hpp(1, &record("task-1")).ok();
    // Two rounds: the first brings every side to the remote, the second back to each clone.
    for _ in 0..2 {
        for m in 0..3 {
            machines.sync(m);
        }
    }
    let remote = machines.records(&machines.remote);
    for (m, dir) in machines.clones.iter().enumerate() {
        assert_eq!(
            machines.records(dir),
            remote,
            "m{m} ends where the remote is"
        );
    }
    let board = machines.hpp(2, &["board", "status"]).json(0);
    let mut items: Vec<&str> = board
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|i| i["item_id"].as_str())
        .collect();
    items.sort_unstable();
    assert_eq!(items, ["ITEM-0", "ITEM-1", "ITEM-2"], "each item once");
    assert!(remote.contains("refs/hpp/loops/shared"), "{remote}");
    assert!(remote.contains("refs/hpp/gotchas"), "{remote}");
}

/// `gotcha record` of one failure of `task`.
fn record(task: &str) -> [&str; 8] {
    [
        "gotcha",
        "record",
        "--task",
        task,
        "--message",
        "error: connection reset by peer",
        "--at",
        "2026-01-01T00:00:00Z",
    ]
}

#[test]
fn racing_writers_on_reftable_lose_nothing() {
    let Some(sandbox) = reftable_sandbox() else {
        return;
    };
    let tasks: Vec<String> = (0..6).map(|i| format!("task-{i}")).collect();
    let children: Vec<Child> = tasks
        .iter()
        .map(|t| sandbox.spawn_hpp(&record(t)))
        .collect();
    for child in children {
        let run = Run::from_output(&child.wait_with_output().expect("the racer finishes"));
        assert_eq!(run.code, 0, "{run}");
    }
    // The log is a chain of six entries, each on the one before: no write was lost or forked.
    let log = "refs/hpp/gotchas/failures";
    assert_eq!(sandbox.git(["rev-list", "--count", log]), "6");
    assert_eq!(sandbox.git(["rev-list", "--count", "--merges", log]), "0");
    let bodies = sandbox.git(["log", "-p", "--format=", log]);
    for task in &tasks {
        assert!(bodies.contains(task.as_str()), "{task}:\n{bodies}");
    }
}

#[test]
fn control_the_server_gate_on_reftable_refuses_an_unverified_branch() {
    let Some(sandbox) = reftable_sandbox() else {
        return;
    };
    let machines = Machines::new(sandbox, 1);
    let dir = &machines.clones[0];
    std::fs::write(dir.join("work.txt"), "unverified\n").expect("writable");
    machines.sandbox.git_in(dir, &["add", "-A"]);
    machines
        .sandbox
        .git_in(dir, &["commit", "-q", "-m", "unverified"]);
    let before = machines
        .sandbox
        .git_in(&machines.remote, &["rev-parse", "main"]);
    let out = machines
        .sandbox
        .command("git", dir)
        .args(["push", "--no-verify", "origin", "main"])
        .output()
        .expect("git push runs");
    let run = Run::from_output(&out);
    assert_ne!(run.code, 0, "{run}");
    assert!(run.stderr.contains("never verified"), "{run}");
    let after = machines
        .sandbox
        .git_in(&machines.remote, &["rev-parse", "main"]);
    assert_eq!(after, before, "the remote's main did not move");
}

#[test]
fn control_a_ref_backend_git_does_not_ship_is_refused_up_front() {
    let sandbox = Sandbox::repo();
    sandbox.git(["config", "extensions.refStorage", "imaginary"]);
    let run = sandbox.hpp(["status"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("imaginary"), "{run}");
}
