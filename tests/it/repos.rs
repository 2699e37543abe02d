//! Where the store works: linked worktrees, GIT_DIR, no identity, no repository; what it
//! never does (run hooks); and what git thinks of its objects (fsck, gc, push, fetch).

use crate::harness::Sandbox;

#[test]
fn a_linked_worktree_writes_to_the_shared_store_under_its_own_branch() {
    let sandbox = Sandbox::repo();
    let lane = sandbox.path("lane");
    sandbox.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "lane-1",
        lane.to_str().expect("utf-8"),
    ]);
    sandbox.hpp_in(&lane, &crate::harness::START).ok();
    let loops = sandbox.hpp(["loops", "--json"]).json(0);
    assert_eq!(
        loops["loops"][0]["loop"], "lane-1",
        "the main worktree sees the lane's loop"
    );
    let status = sandbox.hpp_in(&lane, &["status", "--json"]).json(0);
    assert_eq!(status["state"], "active");
}

#[test]
fn git_dir_selects_the_repository_from_anywhere() {
    let mut sandbox = Sandbox::repo();
    let elsewhere = sandbox.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("writable");
    sandbox.env.insert(
        "GIT_DIR".into(),
        sandbox.root.join(".git").display().to_string(),
    );
    sandbox.hpp_in(&elsewhere, &crate::harness::START).ok();
    sandbox.env.clear();
    assert!(
        sandbox.hpp_refs().starts_with("refs/hpp/loops/main "),
        "{}",
        sandbox.hpp_refs()
    );
}

#[test]
fn without_a_git_identity_commits_carry_the_fixed_one() {
    let sandbox = Sandbox::repo();
    assert!(
        std::process::Command::new("git")
            .args(["config", "user.name"])
            .current_dir(&sandbox.root)
            .env("HOME", sandbox.path("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", sandbox.path("home").join(".gitconfig"))
            .output()
            .expect("git runs")
            .stdout
            .is_empty(),
        "the sandbox has no identity"
    );
    sandbox.start_work().ok();
    let who = sandbox.git([
        "log",
        "-1",
        "--format=%an <%ae> / %cn <%ce>",
        "refs/hpp/loops/main",
    ]);
    assert_eq!(
        who,
        "git-hpp <git-hpp@localhost> / git-hpp <git-hpp@localhost>"
    );
}

#[test]
fn with_a_git_identity_commits_carry_it() {
    let sandbox = Sandbox::repo().with_identity();
    sandbox.start_work().ok();
    let who = sandbox.git(["log", "-1", "--format=%cn <%ce>", "refs/hpp/loops/main"]);
    assert_eq!(who, "Hpp Tester <tester@example.com>");
}

#[test]
fn control_outside_any_repository_is_a_clear_refusal() {
    let sandbox = Sandbox::empty();
    let reason = sandbox.start_work().refused();
    assert!(reason.starts_with("not a git repository"), "{reason}");
    sandbox.hpp(["status"]).refused();
    sandbox.hpp(["loops"]).refused();
}

#[test]
fn control_the_users_hooks_never_run_while_git_would_run_them() {
    let sandbox = Sandbox::repo();
    let marker = sandbox.path("hook-ran");
    let hooks = sandbox.root.join(".git/hooks");
    for hook in [
        "reference-transaction",
        "post-commit",
        "pre-commit",
        "post-rewrite",
    ] {
        let script = format!("#!/bin/sh\necho {hook} >> '{}'\n", marker.display());
        std::fs::write(hooks.join(hook), script).expect("writable");
        let status = std::process::Command::new("chmod")
            .args(["+x"])
            .arg(hooks.join(hook))
            .status()
            .expect("chmod runs");
        assert!(status.success());
    }
    sandbox.start_work().ok();
    sandbox.record_evidence("main");
    assert!(!marker.exists(), "git-hpp ran a hook");
    // The control: the same hooks do run for git itself, so their absence above is meaningful.
    sandbox.git(["update-ref", "refs/heads/probe", "HEAD"]);
    assert!(
        std::fs::read_to_string(&marker)
            .unwrap_or_default()
            .contains("reference-transaction")
    );
}

#[test]
fn records_pass_fsck_survive_gc_and_travel_with_push_and_fetch() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    sandbox.git(["fsck", "--strict", "--no-progress"]);
    sandbox.git(["gc", "--prune=now", "--quiet"]);
    sandbox.hpp(["event", "verify"]).ok();

    let remote = sandbox.path("remote.git");
    sandbox.git([
        "init",
        "-q",
        "-b",
        "main",
        "--bare",
        remote.to_str().expect("utf-8"),
    ]);
    sandbox.git([
        "push",
        "-q",
        remote.to_str().expect("utf-8"),
        "main",
        "refs/hpp/*:refs/hpp/*",
    ]);
    let clone = sandbox.path("clone");
    sandbox.git([
        "clone",
        "-q",
        remote.to_str().expect("utf-8"),
        clone.to_str().expect("utf-8"),
    ]);
    sandbox.git_in(&clone, &["fetch", "-q", "origin", "refs/hpp/*:refs/hpp/*"]);
    let report = sandbox
        .hpp_in(&clone, &["event", "verify", "--json"])
        .json(0);
    assert_eq!(
        (report["status"].as_str(), report["events"].as_u64()),
        (Some("intact"), Some(5))
    );
    assert_eq!(
        report["head"],
        sandbox.git(["rev-parse", "refs/hpp/loops/main"]).as_str()
    );
}
