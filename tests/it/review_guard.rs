//! `git hpp lane review-guard`: a checker's command that changes git's view of the worktree
//! voids its own review; a read-only one keeps its verdict.

use crate::harness::Sandbox;

fn guard(sandbox: &Sandbox, command: &[&str]) -> crate::harness::Run {
    let mut args = vec!["lane", "review-guard", "--json", "--"];
    args.extend_from_slice(command);
    sandbox.hpp_in(&sandbox.root, &args)
}

fn parts(report: &serde_json::Value) -> Vec<String> {
    report["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["part"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_read_only_checker_keeps_its_own_verdict() {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("draft.txt"), "maker's work\n").unwrap();
    let passed = guard(&sandbox, &["git", "log", "--oneline"]).json(0);
    assert_eq!(passed["verdict"], "passed");
    assert!(passed["stdout"].as_str().unwrap().contains("initial"));
    assert_eq!(passed["changed"], serde_json::json!([]));
    let failed = guard(
        &sandbox,
        &["git", "rev-parse", "--verify", "no-such-branch"],
    )
    .json(1);
    assert_eq!(failed["verdict"], "failed");
    // Records under refs/hpp/ are the harness's own: a checker may write them.
    let recorded = guard(
        &sandbox,
        &["git", "update-ref", "refs/hpp/scratch/x", "HEAD"],
    )
    .json(0);
    assert_eq!(recorded["verdict"], "passed");
    let human = sandbox
        .hpp(["lane", "review-guard", "--", "git", "status", "--short"])
        .ok();
    assert!(
        human.ends_with("review-guard: unchanged · the command exited 0 · passed\n"),
        "{human}"
    );
}

#[test]
fn control_a_checker_that_edits_a_tracked_file_voids_its_review() {
    let sandbox = Sandbox::repo();
    let report = guard(&sandbox, &["sh", "-c", "echo sneaky >> README"]).json(2);
    assert_eq!(report["verdict"], "void");
    assert_eq!(parts(&report), ["status", "diff"]);
    assert_eq!(report["changed"][0]["details"][0], "now:  M README");
}

#[test]
fn control_a_checker_that_creates_or_rewrites_an_untracked_file_voids_its_review() {
    let sandbox = Sandbox::repo();
    let report = guard(&sandbox, &["sh", "-c", "echo x > scratch.txt"]).json(2);
    assert_eq!(parts(&report), ["status", "untracked contents"]);
    assert_eq!(report["changed"][1]["details"][0], "scratch.txt created");
    // Same file list, new bytes: only the contents tell.
    let again = guard(&sandbox, &["sh", "-c", "echo y > scratch.txt"]).json(2);
    assert_eq!(parts(&again), ["untracked contents"]);
    assert_eq!(again["changed"][0]["details"][0], "scratch.txt changed");
}

#[test]
fn control_a_checker_that_moves_a_ref_or_head_voids_its_review() {
    let sandbox = Sandbox::repo();
    let branch = guard(&sandbox, &["git", "branch", "sneaky"]).json(2);
    assert_eq!(parts(&branch), ["refs"]);
    assert_eq!(
        branch["changed"][0]["details"][0],
        "refs/heads/sneaky created"
    );
    let human = sandbox
        .hpp([
            "lane",
            "review-guard",
            "--",
            "git",
            "checkout",
            "-q",
            "sneaky",
        ])
        .exit(2);
    assert!(
        human.stdout.starts_with("review-guard: void"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("  - symbolic HEAD: refs/heads/main -> refs/heads/sneaky")
    );
}

#[test]
fn control_a_checker_that_changes_config_hooks_or_excludes_voids_its_review() {
    let sandbox = Sandbox::repo();
    let config = guard(&sandbox, &["git", "config", "user.name", "someone"]).json(2);
    assert_eq!(parts(&config), ["config"]);
    let detail = config["changed"][0]["details"][0].as_str().unwrap();
    assert!(
        detail.ends_with("user.name created") && !detail.contains("someone"),
        "{detail}"
    );
    let hooks = guard(
        &sandbox,
        &["sh", "-c", "echo 'exit 0' > .git/hooks/pre-commit"],
    )
    .json(2);
    assert_eq!(parts(&hooks), ["hooks"]);
    let exclude = guard(&sandbox, &["sh", "-c", "echo '*.log' >> .git/info/exclude"]).json(2);
    assert_eq!(parts(&exclude), ["info/exclude"]);
}

#[test]
fn control_a_command_that_cannot_start_is_refused() {
    let sandbox = Sandbox::repo();
    let reason = sandbox
        .hpp(["lane", "review-guard", "--", "no-such-checker-program"])
        .refused();
    assert!(
        reason.starts_with("could not start no-such-checker-program"),
        "{reason}"
    );
}
