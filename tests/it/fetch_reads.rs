//! Records verified where they cross (issue 28): `git hpp fetch` reads each staged record before
//! a ref moves. A write-once record that exists here is never moved by the remote's descendant
//! of it, and a loop moves forward only when the remote's history verifies, gates included; what
//! is refused stays staged and is named. An honest second machine's new records and events are
//! taken in.

use std::path::{Path, PathBuf};

use crate::harness::Sandbox;

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// Machine A (the sandbox) with a walked loop and its records pushed to a bare remote, and
/// machine B cloned from it with everything fetched.
struct Border {
    sandbox: Sandbox,
    remote: PathBuf,
    b: PathBuf,
}

fn border() -> Border {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    sandbox.walk_steps("main", 1..3);
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    sandbox.git(["push", "-q", text(&remote), "main", "refs/hpp/*:refs/hpp/*"]);
    let b = sandbox.path("b");
    sandbox.git(["clone", "-q", text(&remote), text(&b)]);
    sandbox.hpp_in(&b, &["fetch"]).ok();
    Border { sandbox, remote, b }
}

impl Border {
    fn attestation(&self) -> String {
        self.sandbox
            .git([
                "for-each-ref",
                "--format=%(refname)",
                "refs/hpp/attestations/",
            ])
            .lines()
            .next()
            .expect("an attestation")
            .to_owned()
    }

    /// On the remote, moves `name` to a child of its tip whose `file` says `content`: what an
    /// adversary with push access to the remote can do with plain git.
    fn forge_child(&self, name: &str, file: &str, content: &str) -> String {
        let git = |args: &[&str]| self.sandbox.git_in(&self.remote, args);
        let blob =
            self.sandbox
                .git_fed_in(&self.remote, &["hash-object", "-w", "--stdin"], content);
        let entries = git(&["ls-tree", name]);
        let listing: String = entries
            .lines()
            .map(|line| {
                if line.ends_with(&format!("\t{file}")) {
                    format!("100644 blob {blob}\t{file}\n")
                } else {
                    format!("{line}\n")
                }
            })
            .collect();
        let tree = self.sandbox.git_fed_in(&self.remote, &["mktree"], &listing);
        let commit = git(&["commit-tree", &tree, "-p", name, "-m", "edited"]);
        git(&["update-ref", name, &commit]);
        commit
    }
}

#[test]
fn a_write_once_attestation_is_never_moved_by_a_remote_descendant() {
    let border = border();
    let name = border.attestation();
    let before = border.sandbox.git_in(&border.b, &["rev-parse", &name]);
    let record = border.sandbox.git_in(
        &border.remote,
        &["show", &format!("{name}:attestation.json")],
    );
    border.forge_child(
        &name,
        "attestation.json",
        &record.replace("approved", "blocked"),
    );
    let run = border.sandbox.hpp_in(&border.b, &["fetch"]).exit(1);
    assert!(run.stdout.contains(&format!("diverged: {name}")), "{run}");
    assert!(run.stdout.contains("written once"), "{run}");
    assert_eq!(
        border.sandbox.git_in(&border.b, &["rev-parse", &name]),
        before
    );
    border.sandbox.hpp_in(&border.b, &["verify"]).ok();
}

#[test]
fn a_loop_is_not_fast_forwarded_to_a_child_with_a_bad_event() {
    let border = border();
    let before = border
        .sandbox
        .git_in(&border.b, &["rev-parse", "refs/hpp/loops/main"]);
    border.forge_child(
        "refs/hpp/loops/main",
        "event.json",
        "{\"not\":\"an event\"}",
    );
    let run = border.sandbox.hpp_in(&border.b, &["fetch"]).exit(1);
    assert!(
        run.stdout.contains("diverged: refs/hpp/loops/main"),
        "{run}"
    );
    assert!(run.stdout.contains("does not verify"), "{run}");
    assert_eq!(
        border
            .sandbox
            .git_in(&border.b, &["rev-parse", "refs/hpp/loops/main"]),
        before
    );
    border
        .sandbox
        .hpp_in(&border.b, &["event", "verify", "--loop", "main"])
        .ok();
}

#[test]
fn control_an_honest_machines_new_records_and_events_are_taken_in() {
    let border = border();
    // A appends the person's approval and a second attestation, then pushes.
    border.sandbox.walk_steps("main", 3..4);
    border.sandbox.approve_tree("checker-c");
    border
        .sandbox
        .git(["push", "-q", text(&border.remote), "refs/hpp/*:refs/hpp/*"]);
    let run = border.sandbox.hpp_in(&border.b, &["fetch"]).ok();
    assert!(run.contains("updated refs/hpp/loops/main"), "{run}");
    assert!(run.contains("updated refs/hpp/attestations/"), "{run}");
    assert_eq!(
        border
            .sandbox
            .git_in(&border.b, &["rev-parse", "refs/hpp/loops/main"]),
        border.sandbox.git(["rev-parse", "refs/hpp/loops/main"])
    );
}

/// A full clone holds its history's roots, so a loop whose gate rests on an attestation of
/// another repository (other roots) is left out, not taken in as "history elsewhere".
#[test]
fn control_a_full_clone_leaves_out_a_loop_gated_by_another_repositorys_attestation() {
    let border = border();
    // Another repository (its own root commit) walks a loop named `other` and publishes its
    // records to the same remote.
    let stranger = Sandbox::empty();
    stranger.git(["init", "-q", "-b", "main"]);
    std::fs::write(stranger.root.join("README"), "another project\n").expect("writable");
    stranger.git(["add", "README"]);
    stranger.git(["commit", "-q", "-m", "a history of its own"]);
    assert_ne!(
        stranger.git(["rev-list", "--max-parents=0", "HEAD"]),
        border.sandbox.git(["rev-list", "--max-parents=0", "HEAD"]),
        "two histories"
    );
    stranger
        .hpp_in(
            &stranger.root,
            &[
                "event",
                "append",
                "--loop",
                "other",
                "--type",
                "work_started",
                "--work",
                "W",
                "--maker",
                "agent-a",
            ],
        )
        .ok();
    // Its records are named by the second they were made in: not the same second as ours.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    stranger.walk_steps("other", 1..3);
    stranger.git([
        "push",
        "-q",
        text(&border.remote),
        "refs/hpp/loops/other:refs/hpp/loops/other",
        "refs/hpp/attestations/*:refs/hpp/attestations/*",
        "refs/hpp/evidence/*:refs/hpp/evidence/*",
    ]);
    let run = border.sandbox.hpp_in(&border.b, &["fetch"]).exit(1);
    assert!(
        run.stdout.contains("diverged: refs/hpp/loops/other"),
        "{run}"
    );
    assert!(run.stdout.contains("repo"), "{run}");
    assert!(
        border
            .sandbox
            .git_in(&border.b, &["for-each-ref", "refs/hpp/loops/other"])
            .is_empty()
    );
}
