//! The guarding hook scripts fail closed (issue 28, item 8): on a host whose `git-hpp` cannot
//! run, a host would read the script's failure as "allow", so each guard blocks with exit 2 and
//! one line on stderr instead; a Stop gate lets the stop go once the host says a Stop hook
//! already continued the turn, so a broken install never traps a session.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{Run, Sandbox};

const MODULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/modules");

/// Every hook script that guards, and the words its reason starts with.
const GUARDS: [(&str, &str); 6] = [
    ("operator-kit/hooks/policy-gate.sh", "policy gate"),
    ("operator-kit/hooks/secret-guard.sh", "secret guard"),
    ("operator-kit/hooks/loop-gate.sh", "loop gate"),
    ("operator-kit/hooks/evidence-gate.sh", "evidence gate"),
    ("lane-kit/hooks/territory-guard.sh", "lane territory guard"),
    ("lane-kit/hooks/git-guard.sh", "lane git guard"),
];

/// Returns a directory holding only `git`, `sh`, `bash`, `cat`, `mktemp`, `sleep` and `rm` (links
/// to the real ones: what every host has, and all the hook scripts use beside git-hpp), to
/// be the whole PATH of an agent host where git-hpp is not installed.
fn path_without_hpp(sandbox: &Sandbox, name: &str) -> PathBuf {
    let dir = sandbox.path(name);
    std::fs::create_dir_all(&dir).expect("the sandbox is writable");
    let path = std::env::var_os("PATH").expect("the tests run with a PATH");
    for tool in ["git", "sh", "bash", "cat", "mktemp", "sleep", "rm"] {
        let real = std::env::split_paths(&path)
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{tool} is on the test's PATH"));
        std::os::unix::fs::symlink(&real, dir.join(tool)).expect("a link can be made");
    }
    dir
}

/// Runs a module's hook script for `host` with `payload` on stdin and only `path` on PATH.
fn run_with_path(sandbox: &Sandbox, path: &Path, script: &str, host: &str, payload: &Value) -> Run {
    let mut cmd = sandbox.command(&format!("{MODULES}/{script}"), &sandbox.root);
    cmd.arg(host).env("PATH", path);
    Run::fed(cmd, &payload.to_string())
}

/// The payload each host sends to `script`: a Bash call, a write, or a stop.
fn payload(script: &str, host: &str, command: &str, stop_hook_active: bool) -> Value {
    let codex = host == "codex";
    if script.ends_with("gate.sh") && !script.contains("policy") {
        return json!({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": ".",
                      "hook_event_name": "Stop", "stop_hook_active": stop_hook_active,
                      "last_assistant_message": "done"});
    }
    if script.contains("policy") || script.contains("git-guard") {
        return json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": command}, "tool_use_id": "toolu_1", "cwd": "."});
    }
    if codex {
        return json!({"session_id": "s1", "hook_event_name": "PreToolUse",
                      "tool_name": "apply_patch", "cwd": ".",
                      "tool_input": {"command": "*** Begin Patch\n*** Add File: src/a.rs\n+fn a() {}\n*** End Patch\n"}});
    }
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Write",
           "tool_input": {"file_path": "src/a.rs", "content": "fn a() {}\n"},
           "tool_use_id": "toolu_1", "cwd": "."})
}

/// Asserts a fail-closed block: exit 2, nothing on stdout, one line on stderr that names the
/// guard and says git-hpp could not run.
#[track_caller]
fn assert_blocked(run: &Run, name: &str, why: &str) {
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(run.stdout, "", "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "one line:\n{run}");
    assert!(
        run.stderr
            .starts_with(&format!("{name}: git-hpp could not run (exit ")),
        "{run}"
    );
    assert!(run.stderr.contains(why), "{run}");
}

#[test]
fn every_guard_blocks_when_git_hpp_is_not_on_path() {
    let sandbox = Sandbox::repo();
    let path = path_without_hpp(&sandbox, "bin");
    // The precondition: with this PATH, git really cannot find git-hpp.
    let mut probe = sandbox.command("git", &sandbox.root);
    probe.args(["hpp", "--version"]).env("PATH", &path);
    let probe = Run::from_output(&probe.output().expect("git runs"));
    assert!(
        probe.stderr.contains("'hpp' is not a git command"),
        "{probe}"
    );
    for (script, name) in GUARDS {
        for host in ["claude-code", "codex"] {
            let run = run_with_path(
                &sandbox,
                &path,
                script,
                host,
                &payload(script, host, "rm -rf src", false),
            );
            assert_blocked(&run, name, "'hpp' is not a git command");
        }
    }
}

#[test]
fn every_guard_blocks_when_git_hpp_cannot_start_or_fails_internally() {
    let sandbox = Sandbox::repo();
    // A git-hpp that is no program (a truncated download, another machine's binary).
    let path = path_without_hpp(&sandbox, "bin");
    let broken = path.join("git-hpp");
    std::fs::write(&broken, b"\x7fELF\x02\x01\x01\0truncated").expect("writable");
    let mut perms = std::fs::metadata(&broken).expect("written").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&broken, perms).expect("chmod");
    for (script, name) in GUARDS {
        let run = run_with_path(
            &sandbox,
            &path,
            script,
            "claude-code",
            &payload(script, "claude-code", "ls", false),
        );
        assert_blocked(&run, name, "git-hpp");
    }
    // The real git-hpp ending in a usage error (exit 3): a host name this build does not know.
    let with_hpp = sandbox_path(&sandbox);
    for (script, name) in GUARDS {
        let run = run_with_path(
            &sandbox,
            &with_hpp,
            script,
            "vscode",
            &payload(script, "claude-code", "ls", false),
        );
        assert_blocked(&run, name, "exit 3: error: invalid value 'vscode'");
    }
}

#[test]
fn a_stop_gate_without_git_hpp_lets_the_stop_go_once_a_stop_hook_continued_the_turn() {
    let sandbox = Sandbox::repo();
    let path = path_without_hpp(&sandbox, "bin");
    for (script, name) in [GUARDS[2], GUARDS[3]] {
        for host in ["claude-code", "codex"] {
            let run = run_with_path(
                &sandbox,
                &path,
                script,
                host,
                &payload(script, host, "", true),
            );
            assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run}");
            assert_eq!(run.stderr.lines().count(), 1, "one warning line:\n{run}");
            assert!(
                run.stderr
                    .starts_with(&format!("{name}: git-hpp could not run"))
                    && run.stderr.contains("the stop goes unchecked"),
                "{run}"
            );
        }
        // Pretty-printed JSON says the same.
        let pretty =
            serde_json::to_string_pretty(&payload(script, "codex", "", true)).expect("serialises");
        let mut cmd = sandbox.command(&format!("{MODULES}/{script}"), &sandbox.root);
        cmd.arg("codex").env("PATH", &path);
        assert_eq!(Run::fed(cmd, &pretty).code, 0);
        // The flag named inside a message is not the flag.
        let quoted = json!({"hook_event_name": "Stop", "stop_hook_active": false,
                            "last_assistant_message": "{\"stop_hook_active\":true}"});
        let run = run_with_path(&sandbox, &path, script, "codex", &quoted);
        assert_blocked(&run, name, "'hpp' is not a git command");
    }
}

/// The sandbox's own PATH: the built git-hpp first.
fn sandbox_path(sandbox: &Sandbox) -> PathBuf {
    let cmd = sandbox.command("true", &sandbox.root);
    let path = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v)
        .expect("the sandbox sets PATH");
    PathBuf::from(path)
}

#[test]
fn control_with_git_hpp_on_path_a_safe_call_is_allowed_and_refusals_pass_through() {
    let sandbox = Sandbox::repo();
    // A criterion that passes, so the evidence gate answers nothing rather than "none set".
    sandbox.git([
        "config",
        "--add",
        "hpp.criterion",
        r#"["sh", "-c", "true"]"#,
    ]);
    let path = sandbox_path(&sandbox);
    for (script, _) in GUARDS {
        for host in ["claude-code", "codex"] {
            let run = run_with_path(
                &sandbox,
                &path,
                script,
                host,
                &payload(script, host, "cargo test", false),
            );
            assert_eq!(
                (run.code, run.stdout.as_str()),
                (0, ""),
                "{script} {host}: {run}"
            );
        }
    }
    // git-hpp's own answers are unchanged: a deny as JSON, a refused payload as its own exit 2.
    let policy = GUARDS[0].0;
    let denied = run_with_path(
        &sandbox,
        &path,
        policy,
        "claude-code",
        &payload(policy, "claude-code", "rm -rf src", false),
    )
    .json(0);
    assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
    let mut cmd = sandbox.command(&format!("{MODULES}/{policy}"), &sandbox.root);
    cmd.arg("claude-code").env("PATH", &path);
    let malformed = Run::fed(cmd, "not json");
    assert!(
        malformed
            .refused()
            .starts_with("invalid JSON in the hook input"),
        "a refusal from git-hpp is its own line, not the fail-closed one"
    );
}

#[test]
fn the_hooks_that_guard_nothing_fail_open_without_git_hpp() {
    let sandbox = Sandbox::repo();
    let path = path_without_hpp(&sandbox, "bin");
    let start = json!({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup",
                       "cwd": "."});
    let post = json!({"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "cargo test"}, "cwd": ".",
                      "tool_response": {"stdout": "", "stderr": "error", "exit_code": 101}});
    let stop = payload(GUARDS[2].0, "claude-code", "", false);
    for (script, input) in [
        ("continuity-kit/hooks/handoff-inject.sh", &start),
        ("continuity-kit/hooks/handoff-write.sh", &stop),
        ("continuity-kit/hooks/turn-checkpoint.sh", &stop),
        ("gotcha-memory/hooks/gotcha-preamble.sh", &start),
        ("gotcha-memory/hooks/gotcha-record.sh", &post),
        ("health-kit/hooks/health-probe.sh", &start),
        ("lane-kit/hooks/lane-register.sh", &start),
    ] {
        for host in ["claude-code", "codex"] {
            let run = run_with_path(&sandbox, &path, script, host, input);
            assert_eq!(
                (run.code, run.stdout.as_str()),
                (0, ""),
                "{script} {host}: {run}"
            );
        }
    }
}

/// A PATH whose `git-hpp` is the shell script `body` (beside the tools of [`path_without_hpp`]).
fn path_with_fake_hpp(sandbox: &Sandbox, name: &str, body: &str) -> PathBuf {
    let path = path_without_hpp(sandbox, name);
    let fake = path.join("git-hpp");
    std::fs::write(&fake, format!("#!/bin/sh\n{body}\n")).expect("writable");
    let mut perms = std::fs::metadata(&fake).expect("written").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).expect("chmod");
    path
}

/// Each way a git-hpp can answer that a host would read as "allow", and what the guard says.
const BROKEN: [(&str, &str, &str); 4] = [
    // A loop, not `exec sleep`: its command line names its path while it runs.
    (
        "hang",
        "while :; do sleep 1; done",
        "did not answer within 2s",
    ),
    (
        "garbage",
        "cat >/dev/null; echo 'permissionDecision: allow'",
        "exited 0 without a well-formed answer",
    ),
    (
        "truncated",
        "cat >/dev/null; printf '{\"hookSpecificOutput\": {'",
        "exited 0 without a well-formed answer",
    ),
    (
        "warn",
        "cat >/dev/null; echo 'something odd' >&2; exit 1",
        "could not run (exit 1: something odd)",
    ),
];

#[test]
fn every_guard_blocks_a_hung_a_garbage_printing_and_an_exit_1_git_hpp() {
    let sandbox = Sandbox::repo();
    for (name, body, why) in BROKEN {
        let path = path_with_fake_hpp(&sandbox, name, body);
        for (script, guard) in GUARDS {
            let mut cmd = sandbox.command(&format!("{MODULES}/{script}"), &sandbox.root);
            cmd.arg("codex")
                .env("PATH", &path)
                .env("HPP_HOOK_DEADLINE", "2");
            let started = std::time::Instant::now();
            let run = Run::fed(
                cmd,
                &payload(script, "codex", "rm -rf src", false).to_string(),
            );
            assert_eq!(
                (run.code, run.stdout.as_str()),
                (2, ""),
                "{name} {script}: {run}"
            );
            assert_eq!(run.stderr.lines().count(), 1, "{name} {script}: {run}");
            assert!(
                run.stderr.starts_with(&format!("{guard}: git-hpp {why}")),
                "{name} {script}: {run}"
            );
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "{name} {script}: the deadline held ({:?})",
                started.elapsed()
            );
        }
    }
    assert!(
        crate::harness::processes_naming(&sandbox.path("hang")).is_empty(),
        "the hung git-hpp was killed at the deadline"
    );
}

#[test]
fn control_a_deadline_can_only_shorten_and_a_well_formed_answer_passes() {
    let sandbox = Sandbox::repo();
    let answer = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse"}}"#;
    let path = path_with_fake_hpp(
        &sandbox,
        "slow-ok",
        &format!("cat >/dev/null; sleep 1; echo '{answer}'"),
    );
    let script = GUARDS[0].0;
    // A deadline longer than the script's own is ignored; one second of work finishes in it.
    for deadline in ["100000", "junk", ""] {
        let mut cmd = sandbox.command(&format!("{MODULES}/{script}"), &sandbox.root);
        cmd.arg("claude-code")
            .env("PATH", &path)
            .env("HPP_HOOK_DEADLINE", deadline);
        let run = Run::fed(
            cmd,
            &payload(script, "claude-code", "ls", false).to_string(),
        );
        assert_eq!(
            (run.code, run.stdout.trim()),
            (0, answer),
            "{deadline:?}: {run}"
        );
    }
    // A note hook with a hung git-hpp is skipped, never blocks.
    let hung = path_with_fake_hpp(&sandbox, "hang", "exec sleep 1000");
    let mut cmd = sandbox.command(
        &format!("{MODULES}/gotcha-memory/hooks/gotcha-preamble.sh"),
        &sandbox.root,
    );
    cmd.arg("claude-code")
        .env("PATH", &hung)
        .env("HPP_HOOK_DEADLINE", "1");
    let run = Run::fed(cmd, "{}");
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run}");
    assert!(
        run.stderr.contains("did not answer within 1s; skipped"),
        "{run}"
    );
}
