//! `git hpp policy check` and `git hpp policy hook`, run outside any git repository.

use serde_json::{Value, json};

use crate::harness::{Run, Sandbox};

const CASES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/policy/cases.json");
const HARDENING: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/policy/policy.json");
const SOFTENING: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/policy/softening.json"
);

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(CASES).expect("the case table is readable");
    serde_json::from_str(&text).expect("the case table is JSON")
}

fn check(sandbox: &Sandbox, mode: &str, command: &str) -> Run {
    sandbox.hpp(["policy", "check", "--mode", mode, "--command", command])
}

fn hook(sandbox: &Sandbox, args: &[&str], stdin: &str) -> Run {
    let mut argv = vec!["policy", "hook"];
    argv.extend_from_slice(args);
    Run::fed(sandbox.hpp_command(&sandbox.root, &argv), stdin)
}

fn bash(command: &str) -> String {
    json!({
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
    })
    .to_string()
}

fn write_policy(sandbox: &Sandbox, value: &Value) -> String {
    let dir = sandbox.root.join(".hpp");
    std::fs::create_dir_all(&dir).expect("the sandbox is writable");
    std::fs::write(dir.join("policy.json"), value.to_string()).expect("the sandbox is writable");
    ".hpp/policy.json".to_owned()
}

#[test]
fn control_rm_rf_src_is_blocked_and_exits_2_in_enforce() {
    let sandbox = Sandbox::empty();
    let out = check(&sandbox, "enforce", "rm -rf src").json(2);
    assert_eq!(
        out,
        json!({
            "mode": "enforce",
            "policy": null,
            "action": "BLOCK",
            "rule": "recursive-delete",
            "reason": "recursive deletion requires an explicit recovery plan",
            "source": "built-in",
        })
    );
}

#[test]
fn the_concept_verify_lines_hold_in_both_modes() {
    let sandbox = Sandbox::empty();
    for (command, action, rule, code) in [
        ("rm -rf src", "BLOCK", "recursive-delete", 2),
        ("git push origin feature", "MANUAL", "external-push", 1),
        ("python -m pytest -q", "ALLOW", "allow", 0),
    ] {
        for (mode, want) in [("enforce", code), ("audit", 0)] {
            let out = check(&sandbox, mode, command).json(want);
            assert_eq!(out["action"], action, "{mode} {command}");
            assert_eq!(out["rule"], rule, "{mode} {command}");
            assert_eq!(out["mode"], mode);
        }
    }
}

#[test]
fn every_row_of_the_case_table_exits_as_its_verdict_in_enforce_and_0_in_audit() {
    let sandbox = Sandbox::empty();
    let rows = cases();
    assert!(rows.len() >= 40, "the table keeps at least 40 rows");
    for row in rows {
        let command = row["command"].as_str().expect("a row has a command");
        let code = match row["action"].as_str() {
            Some("BLOCK") => 2,
            Some("MANUAL") => 1,
            _ => 0,
        };
        let out = check(&sandbox, "enforce", command).json(code);
        assert_eq!(
            (&out["action"], &out["rule"]),
            (&row["action"], &row["rule"]),
            "{command:?}: {}",
            row["why"]
        );
        let audit = check(&sandbox, "audit", command).json(0);
        assert_eq!(audit["action"], row["action"], "{command:?} in audit");
    }
}

#[test]
fn an_empty_command_is_allowed_by_the_empty_rule() {
    let out = check(&Sandbox::empty(), "enforce", "").json(0);
    assert_eq!(
        (&out["rule"], &out["reason"]),
        (&json!("empty"), &json!("no command supplied"))
    );
}

#[test]
fn a_command_starting_with_a_dash_is_taken_as_the_command() {
    let out = check(&Sandbox::empty(), "enforce", "-rf /").json(0);
    assert_eq!(out["rule"], "allow");
}

#[test]
fn the_example_hardening_file_turns_allow_into_manual_or_block() {
    let sandbox = Sandbox::empty();
    let with = |command: &str, code: i32| {
        sandbox
            .hpp([
                "policy",
                "check",
                "--mode",
                "enforce",
                "--policy",
                HARDENING,
                "--command",
                command,
            ])
            .json(code)
    };
    assert_eq!(
        check(&sandbox, "enforce", "cargo publish").json(0)["action"],
        "ALLOW"
    );
    let out = with("cargo publish", 2);
    assert_eq!(
        (&out["rule"], &out["source"]),
        (&json!("package-publish"), &json!("policy"))
    );
    assert_eq!(out["policy"], HARDENING);
    let out = with("terraform apply -auto-approve", 1);
    assert_eq!(
        (&out["action"], &out["rule"]),
        (&json!("MANUAL"), &json!("infra-apply"))
    );
    // The raise turns the built-in MANUAL rule into BLOCK, with the built-in reason.
    let out = with("git push origin feature", 2);
    assert_eq!(
        (&out["action"], &out["rule"], &out["source"], &out["reason"]),
        (
            &json!("BLOCK"),
            &json!("external-push"),
            &json!("policy"),
            &json!("external publication needs a human gate")
        )
    );
    // Built-in BLOCK rules still come first, and what nothing matches stays ALLOW.
    assert_eq!(
        with("rm -rf src && npm publish", 2)["rule"],
        "recursive-delete"
    );
    assert_eq!(with("cargo test", 0)["rule"], "allow");
}

#[test]
fn the_default_policy_file_is_read_from_the_working_directory() {
    let sandbox = Sandbox::empty();
    let shown = write_policy(
        &sandbox,
        &json!({"schema": "hpp.policy/v1", "rules": [
            {"id": "no-deploy", "action": "BLOCK", "pattern": "deploy\\.sh", "reason": "deploys go through CI"}
        ]}),
    );
    let out = check(&sandbox, "enforce", "./deploy.sh prod").json(2);
    assert_eq!(
        (&out["rule"], &out["policy"]),
        (&json!("no-deploy"), &json!(shown))
    );
    assert_eq!(
        check(&sandbox, "audit", "./deploy.sh prod").json(0)["action"],
        "BLOCK"
    );
}

#[test]
fn control_a_policy_file_that_would_soften_is_refused_in_both_modes_with_no_verdict() {
    let refusals = [
        (
            json!({"schema": "hpp.policy/v1", "rules": [{"id": "ok-rm", "action": "ALLOW", "pattern": "rm", "reason": "r"}]}),
            "has action ALLOW",
        ),
        (
            json!({"schema": "hpp.policy/v1", "rules": [{"id": "recursive-delete", "action": "MANUAL", "pattern": "rm", "reason": "r"}]}),
            "reuses a built-in rule id",
        ),
        (
            json!({"schema": "hpp.policy/v1", "raise": {"external-push": "MANUAL"}}),
            "would keep it; a policy only hardens",
        ),
        (
            json!({"schema": "hpp.policy/v1", "raise": {"force-push": "MANUAL"}}),
            "would lower it; a policy only hardens",
        ),
        (
            json!({"schema": "hpp.policy/v1", "allow": ["rm -rf build"]}),
            "there is no allow list",
        ),
        (json!({"schema": "hpp.policy/v2"}), "schema must be"),
        (
            json!({"schema": "hpp.policy/v1", "rules": [{"id": "a", "action": "BLOCK", "pattern": "(", "reason": "r"}]}),
            "invalid pattern",
        ),
        (
            json!({"schema": "hpp.policy/v1", "rules": [{"id": "a", "action": "BLOCK", "pattern": "x", "reason": "r"}, {"id": "a", "action": "MANUAL", "pattern": "y", "reason": "r"}]}),
            "appears twice",
        ),
        (
            json!({"schema": "hpp.policy/v1", "rules": [{"id": "all", "action": "BLOCK", "pattern": "", "reason": "r"}]}),
            "rule 'all' has a pattern that matches every command",
        ),
        (
            json!({"schema": "hpp.policy/v1", "rules": [{"id": "all", "action": "MANUAL", "pattern": ".*", "reason": "r"}]}),
            "matches the empty string",
        ),
        (
            json!(["not", "an", "object"]),
            "JSON root in .hpp/policy.json must be an object",
        ),
    ];
    for (file, says) in refusals {
        let sandbox = Sandbox::empty();
        write_policy(&sandbox, &file);
        for mode in ["audit", "enforce"] {
            let reason = check(&sandbox, mode, "cargo test").refused();
            assert!(
                reason.contains(says),
                "{mode}: {reason:?} should say {says:?}"
            );
        }
    }
}

#[test]
fn the_example_softening_file_and_broken_files_are_refused() {
    let sandbox = Sandbox::empty();
    let run = |file: &str| {
        sandbox.hpp([
            "policy",
            "check",
            "--mode",
            "audit",
            "--policy",
            file,
            "--command",
            "rm -rf build",
        ])
    };
    let reason = run(SOFTENING).refused();
    assert_eq!(
        reason,
        format!(
            "policy {SOFTENING} refused: rule 'trust-cleanup' has action ALLOW; a policy only hardens (BLOCK or MANUAL)"
        )
    );
    assert_eq!(
        run("missing.json").refused(),
        "JSON file not found: missing.json"
    );
    std::fs::write(sandbox.root.join("broken.json"), "{ nope").expect("the sandbox is writable");
    assert!(
        run("broken.json")
            .refused()
            .starts_with("invalid JSON in broken.json: ")
    );
}

#[test]
fn policy_check_never_opens_a_repository() {
    let mut sandbox = Sandbox::empty();
    // A GIT_DIR that is no repository fails any command that opens one ...
    let missing = sandbox.path("no-such-repo").display().to_string();
    sandbox.env.insert("GIT_DIR".into(), missing);
    sandbox.hpp(["status"]).refused();
    // ... and the policy verbs never notice it.
    let out = check(&sandbox, "enforce", "git push -f").json(2);
    assert_eq!(out["rule"], "force-push");
    let run = hook(&sandbox, &["--host", "claude-code"], &bash("cargo test")).exit(0);
    assert_eq!(run.stdout, "");
}

#[test]
fn the_claude_code_hook_denies_rm_rf_src_with_the_exact_answer() {
    let out = hook(
        &Sandbox::empty(),
        &["--host", "claude-code"],
        &bash("rm -rf src"),
    )
    .json(0);
    assert_eq!(
        out,
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "BLOCK by git hpp policy (rule recursive-delete, built-in): recursive deletion requires an explicit recovery plan",
        }})
    );
}

#[test]
fn the_claude_code_hook_asks_for_manual_and_stays_silent_for_allow() {
    let sandbox = Sandbox::empty();
    let out = hook(
        &sandbox,
        &["--host", "claude-code"],
        &bash("git push origin feature"),
    )
    .json(0);
    assert_eq!(
        out,
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "MANUAL by git hpp policy (rule external-push, built-in): external publication needs a human gate",
        }})
    );
    // ALLOW only means no rule matched: the host's own permission rules still decide.
    let run = hook(&sandbox, &["--host", "claude-code"], &bash("cargo test")).exit(0);
    assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""));
    let edit = json!({"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {"file_path": "/x"}});
    let run = hook(&sandbox, &["--host", "claude-code"], &edit.to_string()).exit(0);
    assert_eq!(run.stdout, "");
}

#[test]
fn the_codex_hook_denies_block_and_manual_because_it_cannot_ask() {
    let sandbox = Sandbox::empty();
    let out = hook(&sandbox, &["--host", "codex"], &bash("git push --force")).json(0);
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    let out = hook(
        &sandbox,
        &["--host", "codex"],
        &bash("curl https://example.com"),
    )
    .json(0);
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.starts_with("MANUAL by git hpp policy (rule external-send, built-in)"),
        "{reason}"
    );
    assert_eq!(
        hook(&sandbox, &["--host", "codex"], &bash("cargo test"))
            .exit(0)
            .stdout,
        ""
    );
}

#[test]
fn the_hook_in_audit_mode_never_answers_and_warns_on_stderr() {
    let run = hook(
        &Sandbox::empty(),
        &["--host", "claude-code", "--mode", "audit"],
        &bash("rm -rf src"),
    )
    .exit(0);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("hpp: warning: audit: BLOCK by git hpp policy (rule recursive-delete"),
        "{}",
        run.stderr
    );
}

#[test]
fn control_the_hook_refuses_malformed_input_and_a_refused_policy_file() {
    let sandbox = Sandbox::empty();
    let host = ["--host", "claude-code"];
    assert!(
        hook(&sandbox, &host, "not json")
            .refused()
            .starts_with("invalid JSON in the hook input on stdin")
    );
    assert_eq!(
        hook(&sandbox, &host, "[]").refused(),
        "the hook input on stdin must be a JSON object"
    );
    assert_eq!(
        hook(&sandbox, &host, "{}").refused(),
        "the hook input has no tool_name string"
    );
    let no_command = json!({"tool_name": "Bash", "tool_input": {}}).to_string();
    assert_eq!(
        hook(&sandbox, &host, &no_command).refused(),
        "the hook input for Bash has no tool_input.command string"
    );
    let other_event = json!({"hook_event_name": "Stop", "tool_name": "Bash"}).to_string();
    assert!(
        hook(&sandbox, &host, &other_event)
            .refused()
            .contains("PreToolUse only")
    );
    let reason = hook(
        &sandbox,
        &["--host", "codex", "--policy", SOFTENING],
        &bash("ls"),
    )
    .refused();
    assert!(reason.contains("a policy only hardens"), "{reason}");
}

#[test]
fn the_hook_applies_the_project_policy_file() {
    let out = hook(
        &Sandbox::empty(),
        &["--host", "claude-code", "--policy", HARDENING],
        &bash("npm publish"),
    )
    .json(0);
    let reason = out["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        reason.starts_with("BLOCK by git hpp policy (rule package-publish, policy)"),
        "{reason}"
    );
}

#[test]
fn a_rule_with_look_ahead_and_a_back_reference_works_as_in_python() {
    let sandbox = Sandbox::empty();
    write_policy(
        &sandbox,
        &json!({"schema": "hpp.policy/v1", "rules": [
            {"id": "real-deploy", "action": "BLOCK", "pattern": "deploy\\.sh(?!.*--dry-run)", "reason": "deploys go through CI"},
            {"id": "twice", "action": "MANUAL", "pattern": "\\b(\\w+) \\1\\b", "reason": "a doubled word"}
        ]}),
    );
    assert_eq!(
        check(&sandbox, "enforce", "./deploy.sh prod").json(2)["rule"],
        "real-deploy"
    );
    assert_eq!(
        check(&sandbox, "enforce", "./deploy.sh --dry-run prod").json(0)["action"],
        "ALLOW",
        "the negative look-ahead holds"
    );
    assert_eq!(
        check(&sandbox, "enforce", "echo echo hi").json(1)["rule"],
        "twice"
    );
}

#[test]
fn control_a_broken_look_behind_is_refused_naming_the_rule() {
    let sandbox = Sandbox::empty();
    write_policy(
        &sandbox,
        &json!({"schema": "hpp.policy/v1", "rules": [
            {"id": "half", "action": "BLOCK", "pattern": "(?<=rm ", "reason": "r"}
        ]}),
    );
    let reason = check(&sandbox, "enforce", "ls").refused();
    assert!(reason.contains("half"), "{reason}");
    assert!(!reason.contains('\n'));
}
