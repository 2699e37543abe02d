//! The command policy's full rules in a real repository: every spelling of a recursive delete
//! or a discard of work is refused where work is there (tracked files, or untracked files that
//! are not ignored), allowed where nothing of it is, and the Python reference's verdicts stay
//! reachable by `--rules reference` or `git config hpp.policyRules reference`. Each command is
//! then run for real by `bash`, to show the verdict was about something that would be lost.

use assert_fs::prelude::*;
use serde_json::json;

use crate::harness::{Run, Sandbox};

/// A repository with `src/lib.rs` committed, an ignored `build/` holding `out.o`, an untracked
/// `notes.txt`, and an uncommitted edit when `dirty`.
fn workspace(dirty: bool) -> Sandbox {
    let sandbox = Sandbox::repo();
    for (path, text) in [
        ("src/lib.rs", "pub fn f() {}\n"),
        (".gitignore", "build/\n"),
    ] {
        sandbox.child(path).write_str(text).expect("writable");
    }
    sandbox.git(["add", "src", ".gitignore"]);
    sandbox.git(["commit", "-q", "-m", "src"]);
    sandbox
        .child("build/out.o")
        .write_str("obj\n")
        .expect("writable");
    sandbox
        .child("notes.txt")
        .write_str("mine\n")
        .expect("writable");
    if dirty {
        sandbox
            .child("src/lib.rs")
            .write_str("pub fn f() { /* unsaved */ }\n")
            .expect("writable");
    }
    sandbox
}

fn check(sandbox: &Sandbox, command: &str, extra: &[&str]) -> Run {
    let mut args = vec!["policy", "check", "--mode", "enforce", "--command", command];
    args.extend_from_slice(extra);
    sandbox.hpp_in(&sandbox.root, &args)
}

fn verdict(sandbox: &Sandbox, command: &str, extra: &[&str]) -> (String, String) {
    let run = check(sandbox, command, extra);
    let code = run.code;
    let out = run.json(code);
    (
        out["action"].as_str().unwrap_or_default().to_owned(),
        out["rule"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Runs `command` with bash in the repository; returns what `git status --porcelain
/// --ignored` and the files say afterwards.
fn run_for_real(sandbox: &Sandbox, command: &str) -> String {
    let out = sandbox
        .command("bash", &sandbox.root)
        .args(["-c", command])
        .output()
        .expect("bash runs");
    assert!(out.status.code().is_some(), "{command} ended by a signal");
    sandbox.git([
        "status",
        "--porcelain",
        "--ignored",
        "--untracked-files=all",
    ])
}

const DELETES: [&str; 9] = [
    "rm -r src",
    "rm -R src",
    "rm --recursive src",
    "find src -type f -exec rm {} +",
    "python3 -c \"import shutil; shutil.rmtree('src')\"",
    "rm -r .",
    "rm -r .git",
    "rm -r ..",
    "rm -r notes.txt",
];

const DISCARDS: [&str; 6] = [
    "git reset --hard",
    "git checkout -- .",
    "git restore .",
    "git restore src/lib.rs",
    "git clean -fdx",
    "git clean -f",
];

#[test]
fn every_spelling_of_a_recursive_delete_of_work_is_blocked_and_would_have_lost_it() {
    for command in DELETES {
        let sandbox = workspace(false);
        let run = check(&sandbox, command, &[]);
        assert_eq!(
            run.json(2),
            json!({"mode": "enforce", "policy": null, "action": "BLOCK",
                   "rule": "recursive-delete",
                   "reason": "recursive deletion requires an explicit recovery plan",
                   "source": "built-in"}),
            "{command}"
        );
        if command.contains("..") || command.contains(".git") || command == "rm -r ." {
            continue; // not run for real: it would take the sandbox's other files with it
        }
        let before = run_for_real(&workspace(false), "true");
        let after = run_for_real(&sandbox, command);
        assert_ne!(
            before, after,
            "{command} destroyed nothing, so BLOCK proved nothing"
        );
    }
}

#[test]
fn every_discard_of_uncommitted_work_asks_and_would_have_lost_it() {
    for command in DISCARDS {
        let sandbox = workspace(true);
        let run = check(&sandbox, command, &[]);
        let out = run.json(1);
        assert_eq!(
            (&out["action"], &out["rule"]),
            (&json!("MANUAL"), &json!("discard-work")),
            "{command}"
        );
        let before = run_for_real(&workspace(true), "true");
        let after = run_for_real(&sandbox, command);
        assert_ne!(
            before, after,
            "{command} lost nothing, so MANUAL proved nothing"
        );
    }
}

#[test]
fn what_holds_no_work_is_allowed() {
    let sandbox = workspace(false);
    for command in [
        "rm file.txt",
        "rm -r build/",
        "rm -r build",
        "find build -exec rm {} +",
        "rm -r no-such-dir",
        "git clean -n",
        "git clean -fdX",
        "git reset --hard",
        "git checkout -- .",
        "git restore src",
        "git checkout -b topic",
        "git restore --staged src",
    ] {
        assert_eq!(
            verdict(&sandbox, command, &[]),
            ("ALLOW".into(), "allow".into()),
            "{command}"
        );
    }
    // In the temporary directory, outside the repository, nothing is the workspace's.
    let scratch = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(scratch.path().join("f"), "x").expect("writable");
    let command = format!("rm -r '{}'", scratch.path().display());
    assert_eq!(verdict(&sandbox, &command, &[]).0, "ALLOW", "{command}");
}

#[test]
fn control_the_reference_rules_allow_every_new_spelling_by_flag_or_by_config() {
    let sandbox = workspace(true);
    let new = DELETES[..5].iter().chain(&DISCARDS);
    for command in new.clone() {
        assert_eq!(
            verdict(&sandbox, command, &["--rules", "reference"]),
            ("ALLOW".into(), "allow".into()),
            "{command}"
        );
    }
    sandbox.git(["config", "hpp.policyRules", "reference"]);
    for command in new {
        assert_eq!(verdict(&sandbox, command, &[]).0, "ALLOW", "{command}");
    }
    // The reference's own rule holds under either.
    assert_eq!(verdict(&sandbox, "rm -rf build", &[]).0, "BLOCK");
    assert_eq!(
        verdict(&sandbox, "rm -r src", &["--rules", "full"]).0,
        "BLOCK"
    );
}

#[test]
fn control_a_setting_that_cannot_be_read_refuses_the_call() {
    let sandbox = workspace(false);
    sandbox.git(["config", "hpp.policyRules", "lenient"]);
    let reason = check(&sandbox, "rm -r src", &[]).refused();
    assert!(reason.contains("hpp.policyRules"), "{reason}");
    // A command that deletes nothing never reads the setting.
    assert_eq!(verdict(&sandbox, "cargo test", &[]).0, "ALLOW");
}

#[test]
fn the_hook_denies_a_delete_of_work_and_lets_an_ignored_one_through() {
    let sandbox = workspace(false);
    let hook = |command: &str| {
        let input = json!({"session_id": "s", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}})
        .to_string();
        Run::fed(
            sandbox.hpp_command(&sandbox.root, &["policy", "hook", "--host", "claude-code"]),
            &input,
        )
        .exit(0)
    };
    let denied = hook("rm -r src").json(0);
    let answer = &denied["hookSpecificOutput"];
    assert_eq!(answer["permissionDecision"], "deny", "{denied}");
    assert!(
        answer["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("rule recursive-delete")),
        "{denied}"
    );
    assert_eq!(hook("rm -r build").stdout, "");
}

#[test]
fn the_hook_reads_paths_from_the_directory_the_agent_works_in() {
    // The agent works in `app/`, whose `src` holds work; the hook process runs at the top,
    // where no `src` exists. Judged from the hook's own directory, `rm -r src` would look
    // harmless: it must be judged where it runs, the payload's `cwd`.
    let sandbox = Sandbox::repo();
    sandbox
        .child("app/src/lib.rs")
        .write_str("pub fn f() {}\n")
        .expect("writable");
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "app"]);
    let app = sandbox.root.join("app");
    let input = |cwd: &std::path::Path| {
        json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "rm -r src"}, "cwd": cwd})
        .to_string()
    };
    let args = ["policy", "hook", "--host", "claude-code", "--no-checkpoint"];
    let run = Run::fed(sandbox.hpp_command(&sandbox.root, &args), &input(&app)).json(0);
    assert_eq!(
        run["hookSpecificOutput"]["permissionDecision"], "deny",
        "{run}"
    );
    // Control: from the top, where `src` does not exist, the same command deletes nothing.
    let top = Run::fed(
        sandbox.hpp_command(&sandbox.root, &args),
        &input(&sandbox.root),
    );
    assert_eq!((top.code, top.stdout.as_str()), (0, ""), "{top}");
}
