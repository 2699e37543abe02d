//! Tampering: a loop ref re-pointed at a forged chain is reported broken, naming the event,
//! and every command that would build on it refuses.

use sha2::{Digest, Sha256};

use crate::harness::Sandbox;

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes a commit whose tree holds `event.json` = `payload` (or nothing), with `parents`.
fn forge(sandbox: &Sandbox, payload: Option<&str>, parents: &[&str]) -> String {
    let tree = match payload {
        Some(text) => {
            let file = sandbox.path("forged-event.json");
            std::fs::write(&file, text).expect("writable");
            let blob = sandbox.git(["hash-object", "-w", file.to_str().expect("utf-8")]);
            let listing = sandbox.path("tree.txt");
            std::fs::write(&listing, format!("100644 blob {blob}\tevent.json\n"))
                .expect("writable");
            let out = std::process::Command::new("git")
                .args(["mktree"])
                .current_dir(&sandbox.root)
                .stdin(std::fs::File::open(&listing).expect("readable"))
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .expect("git mktree runs");
            String::from_utf8(out.stdout)
                .expect("utf-8")
                .trim()
                .to_owned()
        }
        None => sandbox.git(["hash-object", "-t", "tree", "-w", "/dev/null"]),
    };
    let mut args = vec!["commit-tree", tree.as_str(), "-m", "forged"];
    for p in parents {
        args.extend(["-p", p]);
    }
    sandbox.git_in(&sandbox.root, &args)
}

/// A loop `main` with three events; returns the commit ids and the event.json texts.
fn three_events(sandbox: &Sandbox) -> (Vec<String>, Vec<String>) {
    sandbox.walk_steps("main", 0..3);
    let commits: Vec<String> = sandbox
        .git(["rev-list", "--reverse", "refs/hpp/loops/main"])
        .lines()
        .map(str::to_owned)
        .collect();
    let texts = commits
        .iter()
        .map(|c| sandbox.git_in(&sandbox.root, &["show", &format!("{c}:event.json")]))
        .collect();
    (commits, texts)
}

fn repoint(sandbox: &Sandbox, commit: &str) {
    sandbox.git_in(
        &sandbox.root,
        &["update-ref", "refs/hpp/loops/main", commit],
    );
}

/// Asserts that verify reports broken at `at`, and that status, append and export refuse.
#[track_caller]
fn assert_broken_at(sandbox: &Sandbox, at: &str, needle: &str) {
    let report = sandbox.hpp(["event", "verify", "--json"]).json(2);
    assert_eq!(report["status"], "broken");
    assert_eq!(report["first_divergent"], at, "{report}");
    assert!(
        report["problem"]
            .as_str()
            .unwrap_or_default()
            .contains(needle),
        "{report}"
    );
    assert_eq!(
        report["head"],
        sandbox.git(["rev-parse", "refs/hpp/loops/main"]).as_str()
    );
    let reason = sandbox.hpp(["status"]).refused();
    assert!(
        reason.contains(&format!("loop main is broken at {at}")),
        "{reason}"
    );
    let before = sandbox.hpp_refs();
    sandbox
        .hpp(["event", "append", "--type", "human_approved"])
        .refused();
    assert_eq!(
        sandbox.hpp_refs(),
        before,
        "nothing is appended to a broken loop"
    );
    sandbox.hpp(["event", "export"]).refused();
    sandbox.hpp(["resume"]).refused();
    let loops = sandbox.hpp(["loops", "--json"]).json(2);
    assert_eq!(loops["loops"][0]["chain"], "broken");
}

#[test]
fn control_an_untampered_loop_is_intact() {
    let sandbox = Sandbox::repo();
    three_events(&sandbox);
    let report = sandbox.hpp(["event", "verify", "--json"]).json(0);
    assert_eq!(report["status"], "intact");
    assert_eq!(report["events"], 3);
    assert_eq!(report["first_divergent"], serde_json::Value::Null);
    assert_eq!(report["schema"], "hpp.event-chain/v1");
}

#[test]
fn a_skipped_seq_is_broken_at_that_event() {
    let sandbox = Sandbox::repo();
    let (commits, texts) = three_events(&sandbox);
    let skipped = format!(
        r#"{{"data":{{}},"id":"event:3","prev_sha256":"{}","seq":3,"type":"evidence_recorded"}}"#,
        sha256(texts[0].as_bytes())
    );
    let forged = forge(&sandbox, Some(&skipped), &[&commits[0]]);
    repoint(&sandbox, &forged);
    assert_broken_at(&sandbox, "event:2", "non-contiguous seq");
}

#[test]
fn a_forged_parent_is_broken_at_the_event_that_links_to_it() {
    let sandbox = Sandbox::repo();
    let (commits, texts) = three_events(&sandbox);
    sandbox
        .hpp([
            "event",
            "append",
            "--type",
            "work_started",
            "--loop",
            "other",
            "--data",
            r#"{"w":1,"work":"W","maker":"agent-a"}"#,
        ])
        .ok();
    let other = sandbox.git(["rev-parse", "refs/hpp/loops/other"]);
    // Event 2's bytes on top of another loop's first event: seq fits, the hash link does not.
    let forged = forge(&sandbox, Some(&texts[1]), &[&other]);
    let forged = forge(&sandbox, Some(&texts[2]), &[&forged]);
    repoint(&sandbox, &forged);
    assert_broken_at(&sandbox, "event:2", "hash chain broken at event:2");
    let _ = commits;
}

#[test]
fn a_merge_commit_is_broken_at_that_event() {
    let sandbox = Sandbox::repo();
    let (commits, texts) = three_events(&sandbox);
    let head = sandbox.git(["rev-parse", "HEAD"]);
    let merge = forge(&sandbox, Some(&texts[1]), &[&commits[0], &head]);
    repoint(&sandbox, &merge);
    assert_broken_at(&sandbox, "event:2", "has 2 parents");
}

#[test]
fn a_commit_without_event_json_or_with_a_malformed_one_is_broken() {
    let sandbox = Sandbox::repo();
    let (commits, _) = three_events(&sandbox);
    let empty = forge(&sandbox, None, &[&commits[1]]);
    repoint(&sandbox, &empty);
    assert_broken_at(&sandbox, "event:3", "has no event.json");
    let malformed = forge(&sandbox, Some("{not json"), &[&commits[1]]);
    repoint(&sandbox, &malformed);
    assert_broken_at(&sandbox, "event:3", "not a UTF-8 JSON object");
    let no_type = forge(&sandbox, Some(r#"{"seq":3,"data":{}}"#), &[&commits[1]]);
    repoint(&sandbox, &no_type);
    assert_broken_at(&sandbox, "event:3", "event needs a type");
}

#[test]
fn a_ref_pointed_at_a_code_commit_is_broken_at_the_first_event() {
    let sandbox = Sandbox::repo();
    three_events(&sandbox);
    let head = sandbox.git(["rev-parse", "HEAD"]);
    repoint(&sandbox, &head);
    assert_broken_at(&sandbox, "event:1", "has no event.json");
}
