//! Verify at the border: what crosses between machines is read before it is taken in. A remote
//! argument is never an option to git; events without gate records after gated ones break a
//! loop instead of reading as legacy; the notes mirror is rebuilt from the records held, never
//! merged from a remote.

use std::path::{Path, PathBuf};

use crate::harness::Sandbox;

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

/// A bare remote holding the sandbox's `main`, and one clone of it set up for records.
fn remote_and_clone(sandbox: &Sandbox) -> (PathBuf, PathBuf) {
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    sandbox.git(["push", "-q", text(&remote), "main"]);
    let clone = sandbox.path("clone");
    sandbox.git(["clone", "-q", text(&remote), text(&clone)]);
    sandbox.hpp_in(&clone, &["remote", "setup", "--apply"]).ok();
    (remote, clone)
}

#[test]
fn a_remote_that_looks_like_an_option_is_refused_and_runs_nothing() {
    let sandbox = Sandbox::repo();
    let (_, clone) = remote_and_clone(&sandbox);
    for (verb, option) in [
        ("fetch", "--upload-pack=touch X"),
        ("push", "--receive-pack=touch X"),
        ("push", "--upload-pack=touch X"),
    ] {
        let before = sandbox.git_in(&clone, &["for-each-ref"]);
        let reason = sandbox.hpp_in(&clone, &[verb, "--", option]).refused();
        assert!(
            reason.contains("cannot start with '-'"),
            "{verb}: the reason names the rule: {reason}"
        );
        for dir in [&clone, &sandbox.root] {
            assert!(
                !dir.join("X").exists(),
                "{verb} {option} ran the command in {}",
                dir.display()
            );
        }
        assert_eq!(
            before,
            sandbox.git_in(&clone, &["for-each-ref"]),
            "{verb}: nothing written"
        );
    }
}

#[test]
fn control_an_ordinary_remote_still_syncs() {
    let sandbox = Sandbox::repo();
    let (remote, clone) = remote_and_clone(&sandbox);
    sandbox.hpp_in(&clone, &crate::harness::START).ok();
    sandbox.hpp_in(&clone, &["push"]).ok();
    let there = sandbox.git_in(&remote, &["for-each-ref", "refs/hpp/"]);
    assert!(there.contains("refs/hpp/loops/"), "pushed: {there}");
    sandbox.hpp_in(&clone, &["fetch", "origin"]).ok();
    let url = text(&remote).to_owned();
    sandbox.hpp_in(&clone, &["fetch", &url]).ok();
}

/// Appends an event to `loop_ref` with plumbing, as an adversary would: a correct, hash-chained
/// `event.json` (compact sorted-key JSON linking the previous event's bytes) whose data carries
/// no gate record.
fn plumb_event(sandbox: &Sandbox, loop_ref: &str, kind: &str, data: &str) {
    let tip = sandbox.git(["rev-parse", loop_ref]);
    let tip = tip.trim();
    let prev = sandbox.git(["cat-file", "blob", &format!("{tip}:event.json")]);
    let previous: serde_json::Value = serde_json::from_str(&prev).expect("an event");
    let seq = previous["seq"].as_u64().expect("a seq") + 1;
    let line = format!(
        r#"{{"data":{data},"id":"event:{seq}","prev_sha256":"{}","seq":{seq},"type":"{kind}"}}"#,
        crate::harness::sha256_hex(prev.as_bytes())
    );
    let blob = sandbox.git_fed(&["hash-object", "-w", "--stdin"], &line);
    let tree = sandbox.git_fed(
        &["mktree"],
        &format!("100644 blob {}\tevent.json\n", blob.trim()),
    );
    let commit = sandbox.git([
        "commit-tree",
        tree.trim(),
        "-p",
        tip,
        "-m",
        &format!("event {seq}: {kind}"),
    ]);
    sandbox.git(["update-ref", loop_ref, commit.trim(), tip]);
}

fn main_loop_ref(sandbox: &Sandbox) -> String {
    let refs = sandbox.git(["for-each-ref", "--format=%(refname)", "refs/hpp/loops/"]);
    refs.lines().next().expect("a loop").to_owned()
}

#[test]
fn ungated_events_after_gated_ones_break_the_loop() {
    let sandbox = Sandbox::repo().with_identity();
    sandbox.start_work().ok();
    let loop_ref = main_loop_ref(&sandbox);
    let name = loop_ref.trim_start_matches("refs/hpp/loops/").to_owned();
    sandbox.walk_steps(&name, 1..2);
    plumb_event(&sandbox, &loop_ref, "check_passed", "{}");
    plumb_event(&sandbox, &loop_ref, "human_approved", r#"{"by":"nobody"}"#);
    plumb_event(&sandbox, &loop_ref, "verified", "{}");
    let verify = sandbox.hpp_in(&sandbox.root, &["event", "verify", "--loop", &name]);
    assert_eq!(verify.code, 2, "event verify blocks:\n{verify}");
    assert!(
        verify.stdout.contains("no gate record after a gated event"),
        "{verify}"
    );
    assert!(!verify.stdout.contains("unchecked (legacy)"), "{verify}");
    let status = sandbox
        .hpp_in(&sandbox.root, &["status", "--loop", &name])
        .ok();
    assert!(
        status.contains("no longer holds: it carries no gate record"),
        "{status}"
    );
    assert!(!status.contains("unchecked (legacy)"), "{status}");
    assert!(status.contains("(not standing: gate "), "{status}");
}

#[test]
fn control_a_log_legacy_throughout_stays_legacy_and_a_gated_one_verifies() {
    let sandbox = Sandbox::repo().with_identity();
    sandbox.walk_to_verified("main");
    let verified = sandbox.hpp(["event", "verify", "--loop", "main"]).ok();
    assert!(!verified.contains("no longer holds"), "{verified}");
    let status = sandbox.hpp(["status", "--loop", "main", "--json"]).json(0);
    assert_eq!(status["standing"], true, "{status}");
    let file = sandbox.path("legacy.jsonl");
    std::fs::write(
        &file,
        "{\"type\":\"work_started\",\"data\":{}}\n{\"type\":\"evidence_recorded\",\"data\":{}}\n",
    )
    .expect("writable");
    sandbox
        .hpp(["event", "import", text(&file), "--loop", "old"])
        .ok();
    let verify = sandbox
        .hpp(["event", "verify", "--loop", "old", "--json"])
        .json(0);
    assert_eq!(verify["gates"][0]["status"], "unchecked-legacy");
    assert_eq!(verify["gates"][1]["status"], "unchecked-legacy");
}

/// Machine `clone` approves its HEAD's tree (spec README, session `review:1`) and pushes.
fn attest_and_push(sandbox: &Sandbox, clone: &Path) {
    sandbox.approve_tree_in(clone, "checker-b");
    sandbox.hpp_in(clone, &["push"]).ok();
}

fn note_of_head(sandbox: &Sandbox, dir: &Path) -> String {
    let head = sandbox.git_in(dir, &["rev-parse", "HEAD"]);
    let out = sandbox
        .command("git", dir)
        .args(["notes", "--ref=hpp", "show", head.trim()])
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_forged_note_line_on_the_remote_never_reaches_the_local_notes() {
    let sandbox = Sandbox::repo().with_identity();
    let (remote, writer) = remote_and_clone(&sandbox);
    attest_and_push(&sandbox, &writer);
    let head = sandbox.git_in(&writer, &["rev-parse", "HEAD"]);
    sandbox.git_in(
        &remote,
        &[
            "notes",
            "--ref=hpp",
            "append",
            "-m",
            "approved by checker-b, session forged:1 refs/hpp/attestations/forged",
            head.trim(),
        ],
    );
    let reader = sandbox.path("reader");
    sandbox.git(["clone", "-q", text(&remote), text(&reader)]);
    // The reader has notes of its own: an attestation of another commit.
    std::fs::write(reader.join("local.txt"), "mine\n").expect("writable");
    sandbox.git_in(&reader, &["add", "local.txt"]);
    sandbox.git_in(&reader, &["commit", "-q", "-m", "local"]);
    sandbox.approve_tree_in(&reader, "checker-b");
    sandbox.git_in(&reader, &["checkout", "-q", "HEAD~1"]);
    sandbox.hpp_in(&reader, &["fetch"]).ok();
    let note = note_of_head(&sandbox, &reader);
    assert!(!note.contains("forged"), "the forged line came in:\n{note}");
    assert!(note.contains("review:1"), "the real line is there:\n{note}");
    // Derived, never merged: no notes commit this machine wrote ever held the line.
    let written = sandbox.git_in(
        &reader,
        &[
            "rev-list",
            "refs/notes/hpp",
            "--not",
            "refs/notes/remote-hpp/origin/hpp",
        ],
    );
    assert!(!written.trim().is_empty(), "the notes moved");
    for commit in written.lines() {
        let tree = sandbox.git_in(&reader, &["ls-tree", "-r", commit]);
        for line in tree.lines() {
            let blob = line.split_whitespace().nth(2).expect("an object");
            let text = sandbox.git_in(&reader, &["cat-file", "-p", blob]);
            assert!(!text.contains("forged"), "{commit} held the forged line");
        }
    }
    // The remote's history is joined, so publishing the notes is a fast-forward.
    sandbox.hpp_in(&reader, &["push"]).ok();
}

#[test]
fn control_a_real_attestation_note_line_appears_after_fetch() {
    let sandbox = Sandbox::repo().with_identity();
    let (remote, writer) = remote_and_clone(&sandbox);
    let reader = sandbox.path("reader");
    sandbox.git(["clone", "-q", text(&remote), text(&reader)]);
    assert!(note_of_head(&sandbox, &reader).is_empty());
    attest_and_push(&sandbox, &writer);
    sandbox.hpp_in(&reader, &["fetch"]).ok();
    let note = note_of_head(&sandbox, &reader);
    assert!(note.contains("review:1"), "{note}");
    sandbox.hpp_in(&reader, &["push"]).ok();
}
