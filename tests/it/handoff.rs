//! `git hpp handoff write|show|hook`: handoffs in refs/hpp/handoffs/<lane>.

use std::io::Write;
use std::process::Stdio;

use crate::harness::{Run, Sandbox};

fn write_full(sandbox: &Sandbox) -> serde_json::Value {
    sandbox
        .hpp([
            "handoff",
            "write",
            "--summary",
            "Parser done; CLI half wired.",
            "--next",
            "wire show into the dispatcher",
            "--verify-first",
            "cargo test --test it handoff::",
            "--json",
        ])
        .json(0)
}

#[test]
fn a_written_handoff_is_shown_with_its_git_and_next_step() {
    let sandbox = Sandbox::repo();
    let head = sandbox.git(["rev-parse", "HEAD"]);
    let written = write_full(&sandbox);
    assert_eq!(written["ref"], "refs/hpp/handoffs/solo");
    let handoff = &written["handoff"];
    assert_eq!(handoff["schema"], "hpp.handoff/v2");
    assert_eq!(handoff["quality"], "full");
    assert_eq!(handoff["trigger"], "manual");
    assert_eq!(handoff["git"]["head"], head.as_str());
    assert_eq!(handoff["git"]["branch"], "main");
    assert_eq!(handoff["git"]["dirty"], false);
    assert_eq!(
        handoff["next_step"][0]["verify_first_cmd"],
        "cargo test --test it handoff::"
    );
    assert!(
        handoff["handoff_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("HO-") && id.ends_with("-solo-manual"))
    );

    let shown = sandbox.hpp(["handoff", "show", "--json"]).json(0);
    assert_eq!(shown["handoff"], *handoff);
    assert_eq!(shown["head_moved"], false);
    assert_eq!(shown["commit"], written["commit"]);

    std::fs::write(sandbox.root.join("b.txt"), "b\n").expect("writable");
    sandbox.git(["add", "b.txt"]);
    sandbox.git(["commit", "-q", "-m", "b"]);
    let shown = sandbox.hpp(["handoff", "show", "--json"]).json(0);
    assert_eq!(shown["head_moved"], true);
    assert_eq!(shown["stale"], true);
    let human = sandbox.hpp(["handoff", "show"]).ok();
    assert!(
        human.contains("HEAD MOVED") && human.contains("Parser done"),
        "{human}"
    );
}

#[test]
fn without_a_summary_the_handoff_is_measured_from_git_and_the_loop() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    std::fs::write(sandbox.root.join("new.txt"), "n\n").expect("writable");
    let written = sandbox
        .hpp(["handoff", "write", "--trigger", "pre-clear", "--json"])
        .json(0);
    let handoff = &written["handoff"];
    assert_eq!(handoff["quality"], "degraded-auto");
    assert_eq!(handoff["trigger"], "pre-clear");
    assert_eq!(handoff["git"]["untracked"], 1);
    assert_eq!(handoff["git"]["porcelain"][0], "?? new.txt");
    assert_eq!(handoff["loop"]["state"], "active");
    assert_eq!(
        handoff["next_step"][0]["description"],
        "record fresh evidence"
    );
}

#[test]
fn lanes_are_separate_logs_and_show_falls_back_to_the_newest_lane() {
    let sandbox = Sandbox::repo();
    sandbox
        .hpp([
            "handoff",
            "write",
            "--lane",
            "alpha",
            "--summary",
            "alpha work",
        ])
        .ok();
    let run = sandbox
        .hpp_command(
            &sandbox.root,
            &["handoff", "write", "--summary", "beta work"],
        )
        .env("HPP_LANE", "beta")
        .output()
        .expect("runs");
    assert!(run.status.success());
    assert_eq!(
        sandbox.git(["for-each-ref", "--format=%(refname)", "refs/hpp/handoffs/"]),
        "refs/hpp/handoffs/alpha\nrefs/hpp/handoffs/beta"
    );
    let alpha = sandbox
        .hpp(["handoff", "show", "--lane", "alpha", "--json"])
        .json(0);
    assert_eq!(alpha["handoff"]["state"]["summary"], "alpha work");
    let fallback = sandbox.hpp(["handoff", "show", "--json"]).json(0);
    assert_eq!(fallback["fallback"], true);
    // A named lane without handoffs does not fall back.
    let none = sandbox
        .hpp(["handoff", "show", "--lane", "gamma", "--json"])
        .json(1);
    assert_eq!(none["handoff"], serde_json::Value::Null);
}

#[test]
fn show_without_any_handoff_says_so_with_exit_1() {
    let sandbox = Sandbox::repo();
    let run = sandbox.hpp(["handoff", "show"]).exit(1);
    assert!(run.stdout.contains("no handoff recorded for lane solo"));
}

#[test]
fn bad_handoffs_are_refused_and_nothing_is_written() {
    let sandbox = Sandbox::repo();
    let cases: [&[&str]; 5] = [
        &["handoff", "write", "--summary", "s", "--next", "do it"],
        &[
            "handoff",
            "write",
            "--summary",
            "s",
            "--verify-first",
            "cargo test",
        ],
        &[
            "handoff",
            "write",
            "--summary",
            "deployed with password=hunter2",
        ],
        &["handoff", "write", "--summary", "s", "--lane", "../etc"],
        &["handoff", "write", "--summary", "   "],
    ];
    for args in cases {
        let reason = sandbox.hpp_in(&sandbox.root, args).refused();
        assert!(!reason.is_empty());
    }
    assert!(
        sandbox
            .hpp_in(&sandbox.root, cases[2])
            .refused()
            .contains("looks like a secret")
    );
    assert_eq!(sandbox.hpp_refs(), "");
}

#[test]
fn control_a_record_that_breaks_the_schema_is_refused_when_shown() {
    let sandbox = Sandbox::repo();
    write_full(&sandbox);
    // A hand-made commit on the log whose handoff.json carries a key outside the schema.
    let blob = {
        let mut child = sandbox
            .command("git", &sandbox.root)
            .args(["hash-object", "-w", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("git runs");
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(br#"{"schema":"hpp.handoff/v2","extra":true}"#)
            .expect("written");
        let out = Run::from_output(&child.wait_with_output().expect("git finishes"));
        out.ok().trim().to_owned()
    };
    let tree = {
        let mut child = sandbox
            .command("git", &sandbox.root)
            .args(["mktree"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("git runs");
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(format!("100644 blob {blob}\thandoff.json\n").as_bytes())
            .expect("written");
        Run::from_output(&child.wait_with_output().expect("git finishes"))
            .ok()
            .trim()
            .to_owned()
    };
    let tip = sandbox.git(["rev-parse", "refs/hpp/handoffs/solo"]);
    let commit = sandbox.git_in(
        &sandbox.root,
        &["commit-tree", &tree, "-p", &tip, "-m", "forged"],
    );
    sandbox.git(["update-ref", "refs/hpp/handoffs/solo", &commit]);
    let reason = sandbox.hpp(["handoff", "show"]).refused();
    assert!(reason.contains("invalid handoff record"), "{reason}");
}

#[test]
fn a_handoff_pushed_to_a_bare_remote_is_read_from_a_clone() {
    let sandbox = Sandbox::repo();
    let written = write_full(&sandbox);
    let remote = sandbox.path("remote.git");
    let remote_s = remote.to_str().expect("utf-8");
    sandbox.git(["init", "-q", "-b", "main", "--bare", remote_s]);
    sandbox.git(["remote", "add", "origin", remote_s]);
    sandbox.git(["push", "-q", "origin", "main"]);
    sandbox.hpp(["push", "origin"]).ok();
    let clone = sandbox.path("clone");
    sandbox.git(["clone", "-q", remote_s, clone.to_str().expect("utf-8")]);
    sandbox.hpp_in(&clone, &["fetch", "origin"]).ok();
    let shown = sandbox
        .hpp_in(&clone, &["handoff", "show", "--json"])
        .json(0);
    assert_eq!(shown["handoff"], written["handoff"]);
    assert_eq!(shown["head_moved"], false);
}
