//! The modules' agent-host hook scripts, run the way Claude Code runs them: the hook's JSON on
//! stdin, the working directory a real repository, the exit code and JSON stdout checked.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::{Run, Sandbox};

const MODULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/modules");

/// Runs a module's hook script with `input` on stdin, in the sandbox's repository.
fn hook(sandbox: &Sandbox, script: &str, input: &Value) -> Run {
    run_script(sandbox, &sandbox.root, script, &input.to_string())
}

fn run_script(sandbox: &Sandbox, cwd: &Path, script: &str, stdin: &str) -> Run {
    run_script_for(sandbox, cwd, script, stdin, "claude-code")
}

/// Runs a module's hook script as the wiring for `host` runs it (the host its first argument).
fn run_script_for(sandbox: &Sandbox, cwd: &Path, script: &str, stdin: &str, host: &str) -> Run {
    let path = format!("{MODULES}/{script}");
    let mut child = sandbox
        .command(&path, cwd)
        .arg(host)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{path} runs: {e}"));
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("the hook reads its input");
    Run::from_output(&child.wait_with_output().expect("the hook finishes"))
}

fn pre_tool_use(command: &str) -> Value {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
           "tool_input": {"command": command}, "tool_use_id": "toolu_1", "cwd": "."})
}

fn stop(active: bool) -> Value {
    json!({"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": active})
}

#[test]
fn the_policy_gate_denies_rm_rf_src_and_lets_cargo_test_through() {
    let sandbox = Sandbox::repo();
    let denied = hook(
        &sandbox,
        "operator-kit/hooks/policy-gate.sh",
        &pre_tool_use("rm -rf src"),
    )
    .json(0);
    assert_eq!(denied["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
    let allowed = hook(
        &sandbox,
        "operator-kit/hooks/policy-gate.sh",
        &pre_tool_use("cargo test"),
    )
    .exit(0);
    assert_eq!(
        allowed.stdout, "",
        "ALLOW answers nothing, so the host's own rules decide"
    );
}

#[test]
fn control_the_policy_gate_blocks_the_call_on_malformed_input() {
    let sandbox = Sandbox::repo();
    let run = run_script(
        &sandbox,
        &sandbox.root,
        "operator-kit/hooks/policy-gate.sh",
        "not json",
    );
    assert_eq!(run.code, 2, "exit 2 makes the host block the call:\n{run}");
}

#[test]
fn the_loop_gate_blocks_stop_until_the_loop_is_verified() {
    let sandbox = Sandbox::repo();
    let gate = "operator-kit/hooks/loop-gate.sh";
    // No loop started: nothing to gate.
    assert_eq!(hook(&sandbox, gate, &stop(false)).ok(), "");

    sandbox.start_work().ok();
    let blocked = hook(&sandbox, gate, &stop(false)).json(0);
    assert_eq!(blocked["decision"], "block");
    let reason = blocked["reason"].as_str().expect("a reason");
    assert!(
        reason.contains("active") && reason.contains("record fresh evidence"),
        "{reason}"
    );
    // A Stop hook already continued this turn: let it stop, so it cannot loop forever.
    assert_eq!(hook(&sandbox, gate, &stop(true)).ok(), "");

    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("main");
    assert_eq!(hook(&sandbox, gate, &stop(false)).ok(), "");
}

#[test]
fn the_evidence_gate_blocks_while_a_criterion_fails_and_records_each_run() {
    let sandbox = Sandbox::repo();
    let gate = "operator-kit/hooks/evidence-gate.sh";
    let nothing = hook(&sandbox, gate, &stop(false)).json(0);
    assert!(
        nothing["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("no criterion is configured")),
        "{nothing}"
    );
    assert!(nothing.get("decision").is_none());

    sandbox.git([
        "config",
        "--add",
        "hpp.criterion",
        r#"["sh", "-c", "test -f done.txt"]"#,
    ]);
    let blocked = hook(&sandbox, gate, &stop(false)).json(0);
    assert_eq!(blocked["decision"], "block");
    let reason = blocked["reason"].as_str().expect("a reason");
    assert!(
        reason.contains("criterion 1 (sh -c test -f done.txt)") && reason.contains("failed"),
        "{reason}"
    );
    assert_eq!(
        sandbox
            .git([
                "for-each-ref",
                "--count=9",
                "--format=%(refname)",
                "refs/hpp/evidence/"
            ])
            .lines()
            .count(),
        1
    );

    std::fs::write(sandbox.root.join("done.txt"), "yes\n").expect("writable");
    assert_eq!(hook(&sandbox, gate, &stop(false)).ok(), "");
    assert_eq!(
        sandbox
            .git(["for-each-ref", "--format=%(refname)", "refs/hpp/evidence/"])
            .lines()
            .count(),
        2
    );
}

fn evidence_refs(sandbox: &Sandbox) -> usize {
    sandbox
        .git(["for-each-ref", "--format=%(refname)", "refs/hpp/evidence/"])
        .lines()
        .count()
}

#[test]
fn a_criterion_past_the_stops_budget_runs_on_and_is_answered_from_its_evidence() {
    let sandbox = Sandbox::repo();
    let gate = "operator-kit/hooks/evidence-gate.sh";
    sandbox.git([
        "config",
        "--add",
        "hpp.criterion",
        r#"["sh", "-c", "sleep 3"]"#,
    ]);
    sandbox.git(["config", "--add", "hpp.criterion", r#"["true"]"#]);
    sandbox.git(["config", "hpp.evidenceGate.budgetSeconds", "1"]);
    let started = std::time::Instant::now();
    let blocked = hook(&sandbox, gate, &stop(false)).json(0);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "the gate answered within its budget"
    );
    assert_eq!(blocked["decision"], "block", "{blocked}");
    let reason = blocked["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("Not checked yet: criterion 1 (sh -c sleep 3) is still running")
            && reason.contains("criterion 2 (true) waits for the one before it"),
        "{reason}"
    );
    // Let go by the host meanwhile, the stop tells the person what is unchecked.
    let let_go = hook(&sandbox, gate, &stop(true)).json(0);
    assert!(
        let_go["systemMessage"]
            .as_str()
            .is_some_and(|m| m.contains("UNCHECKED: criterion 1")),
        "{let_go}"
    );
    // The run goes on in the background and records its evidence; the next stop answers from
    // it (and runs criterion 2).
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert_eq!(evidence_refs(&sandbox), 1, "criterion 1 recorded its run");
    assert_eq!(hook(&sandbox, gate, &stop(false)).ok(), "");
    assert_eq!(
        evidence_refs(&sandbox),
        2,
        "criterion 2 ran; criterion 1 did not again"
    );
    // Nothing changed: the same evidence answers, with no run at all.
    assert_eq!(hook(&sandbox, gate, &stop(false)).ok(), "");
    assert_eq!(evidence_refs(&sandbox), 2);
}

#[test]
fn control_a_budget_that_cannot_be_read_blocks_the_stop() {
    let sandbox = Sandbox::repo();
    let gate = "operator-kit/hooks/evidence-gate.sh";
    sandbox.git(["config", "--add", "hpp.criterion", r#"["true"]"#]);
    for bad in ["0", "soon", "100000"] {
        sandbox.git(["config", "hpp.evidenceGate.budgetSeconds", bad]);
        let blocked = hook(&sandbox, gate, &stop(false)).json(0);
        assert_eq!(blocked["decision"], "block", "{bad}: {blocked}");
        assert!(
            blocked["reason"]
                .as_str()
                .is_some_and(|r| r.contains("hpp.evidenceGate.budgetSeconds")),
            "{blocked}"
        );
    }
    assert_eq!(evidence_refs(&sandbox), 0, "nothing ran");
}

#[test]
fn control_the_evidence_gate_blocks_on_a_criterion_that_is_not_a_json_argv() {
    let sandbox = Sandbox::repo();
    sandbox.git(["config", "--add", "hpp.criterion", "cargo test"]);
    let blocked = hook(
        &sandbox,
        "operator-kit/hooks/evidence-gate.sh",
        &stop(false),
    )
    .json(0);
    assert_eq!(blocked["decision"], "block");
    assert!(
        blocked["reason"]
            .as_str()
            .is_some_and(|r| r.contains("not a JSON array of strings"))
    );
}

#[test]
fn a_handoff_written_at_stop_is_injected_at_session_start() {
    let sandbox = Sandbox::repo();
    sandbox.start_work().ok();
    std::fs::write(sandbox.root.join("wip.txt"), "half\n").expect("writable");
    assert_eq!(
        hook(
            &sandbox,
            "continuity-kit/hooks/handoff-write.sh",
            &stop(false)
        )
        .ok(),
        ""
    );
    // The same state again adds nothing.
    assert_eq!(
        hook(
            &sandbox,
            "continuity-kit/hooks/handoff-write.sh",
            &stop(false)
        )
        .ok(),
        ""
    );
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/handoffs/solo"]),
        "1"
    );
    let precompact =
        json!({"session_id": "s1", "hook_event_name": "PreCompact", "trigger": "auto"});
    std::fs::write(sandbox.root.join("wip.txt"), "more\n").expect("writable");
    sandbox.git(["add", "wip.txt"]);
    hook(
        &sandbox,
        "continuity-kit/hooks/handoff-write.sh",
        &precompact,
    )
    .ok();
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/handoffs/solo"]),
        "2"
    );

    let start = json!({"session_id": "s2", "hook_event_name": "SessionStart", "source": "startup"});
    let injected = hook(&sandbox, "continuity-kit/hooks/handoff-inject.sh", &start).json(0);
    let output = &injected["hookSpecificOutput"];
    assert_eq!(output["hookEventName"], "SessionStart");
    let context = output["additionalContext"].as_str().expect("context text");
    assert!(
        context.contains("precompact") && context.contains("Loop main: active"),
        "{context}"
    );
    assert!(
        context.contains("verify first: `git hpp status --loop main`"),
        "{context}"
    );
    assert!(!context.contains("HEAD MOVED"), "{context}");

    sandbox.git(["commit", "-q", "-m", "wip"]);
    let injected = hook(&sandbox, "continuity-kit/hooks/handoff-inject.sh", &start).json(0);
    let context = injected["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text");
    assert!(context.contains("HEAD MOVED"), "{context}");
}

#[test]
fn a_failure_recorded_three_times_is_injected_with_its_secret_redacted() {
    let sandbox = Sandbox::repo();
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ";
    for n in 1..=3 {
        let input = json!({"session_id": "s1", "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash", "tool_use_id": format!("toolu_{n}"),
            "tool_input": {"command": "git push origin main"},
            "error": format!("remote: Invalid token {secret}\nfatal: Authentication failed")});
        let run = hook(&sandbox, "gotcha-memory/hooks/gotcha-record.sh", &input);
        if n < 3 {
            assert_eq!(run.ok(), "");
        } else {
            let promoted = run.json(0);
            assert_eq!(
                promoted["hookSpecificOutput"]["hookEventName"],
                "PostToolUseFailure"
            );
        }
    }
    // The same tool call twice is one failure.
    let again = json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
        "tool_use_id": "toolu_3", "tool_input": {"command": "git push origin main"}, "error": "x"});
    hook(&sandbox, "gotcha-memory/hooks/gotcha-record.sh", &again).ok();
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/gotchas/failures"]),
        "3"
    );

    let start = json!({"session_id": "s2", "hook_event_name": "SessionStart", "source": "startup"});
    let injected = hook(&sandbox, "gotcha-memory/hooks/gotcha-preamble.sh", &start).json(0);
    let context = injected["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text");
    assert!(
        context.contains("[manual · 3x · strategy escalate] Bash:git push"),
        "{context}"
    );
    assert!(context.contains("[REDACTED:provider-token:"), "{context}");
    assert!(!context.contains(secret), "{context}");
    let everything = sandbox.git(["log", "--all", "-p"]);
    assert!(
        !everything.contains(secret),
        "the secret never reached a record"
    );
}

#[test]
fn a_successful_tool_call_records_nothing_and_no_gotcha_injects_nothing() {
    let sandbox = Sandbox::repo();
    let ok = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_response": {"stdout": "README", "stderr": ""}});
    assert_eq!(
        hook(&sandbox, "gotcha-memory/hooks/gotcha-record.sh", &ok).ok(),
        ""
    );
    assert_eq!(sandbox.hpp_refs(), "");
    let start = json!({"hook_event_name": "SessionStart"});
    assert_eq!(
        hook(&sandbox, "gotcha-memory/hooks/gotcha-preamble.sh", &start).ok(),
        ""
    );
    assert_eq!(
        hook(&sandbox, "continuity-kit/hooks/handoff-inject.sh", &start).ok(),
        ""
    );
}

fn frontmatter(path: &str) -> String {
    let text = std::fs::read_to_string(format!("{MODULES}/{path}")).expect("the file exists");
    let body = text
        .strip_prefix("---\n")
        .expect("frontmatter opens the file");
    body[..body.find("\n---\n").expect("frontmatter closes")].to_owned()
}

const LENSES: [&str; 4] = [
    "verification-gap",
    "partial-set",
    "deletion",
    "stale-evidence",
];

#[test]
fn the_review_lenses_are_read_only_and_their_answer_passes_findings_check() {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("change.diff"), "--- a\n+++ b\n").expect("writable");
    let subject = {
        use std::fmt::Write as _;
        let bytes = std::fs::read(sandbox.root.join("change.diff")).expect("readable");
        let digest = <sha2::Sha256 as sha2::Digest>::digest(&bytes);
        digest.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
    };
    for lens in LENSES {
        let path = format!("operator-kit/agents/lens-{lens}.md");
        let front = frontmatter(&path);
        assert!(front.contains(&format!("name: lens-{lens}")), "{front}");
        let tools = front
            .lines()
            .find_map(|l| l.strip_prefix("tools: "))
            .expect("a tools line");
        let tools: Vec<&str> = tools.split(',').map(str::trim).collect();
        assert_eq!(tools, ["Read", "Grep", "Glob"], "{lens}");
        // The answer the lens is told to give passes the checker once filled in.
        let text = std::fs::read_to_string(format!("{MODULES}/{path}")).expect("readable");
        let start = text.find("```json\n").expect("an example answer") + 8;
        let end = start + text[start..].find("```").expect("closed");
        let mut answer: Value = serde_json::from_str(&text[start..end]).expect("valid JSON");
        assert_eq!(answer["lens"], lens);
        answer["subject_sha256"] = json!(subject);
        answer["inspected"] = json!(["change.diff"]);
        std::fs::write(sandbox.root.join("f.json"), answer.to_string()).expect("writable");
        let report = sandbox
            .hpp(["findings", "check", "f.json", "--subject", "change.diff"])
            .json(1);
        assert_eq!(report["reports"][0]["verdict"], "fail", "{report}");
    }
}

#[test]
fn control_a_lens_answer_with_a_key_outside_the_contract_is_refused() {
    let sandbox = Sandbox::repo();
    let text = std::fs::read_to_string(format!("{MODULES}/operator-kit/agents/lens-deletion.md"))
        .expect("readable");
    let start = text.find("```json\n").expect("an example answer") + 8;
    let end = start + text[start..].find("```").expect("closed");
    let mut answer: Value = serde_json::from_str(&text[start..end]).expect("valid JSON");
    answer["subject_sha256"] = json!("0".repeat(64));
    answer["verdict"] = json!("pass");
    std::fs::write(sandbox.root.join("f.json"), answer.to_string()).expect("writable");
    sandbox.hpp(["findings", "check", "f.json"]).refused();
}

#[test]
fn every_declared_hook_and_skill_of_the_three_modules_exists() {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hpp.manifest.json"))
            .expect("the manifest"),
    )
    .expect("JSON");
    let mine = ["operator-kit", "continuity-kit", "gotcha-memory"];
    let mut seen = 0;
    for hook in manifest["hooks"].as_array().expect("hooks") {
        let module = hook["module"].as_str().expect("module");
        if !mine.contains(&module) {
            continue;
        }
        seen += 1;
        let path = Path::new(MODULES)
            .join(module)
            .join(hook["script"].as_str().expect("script"));
        let meta = std::fs::metadata(&path).unwrap_or_else(|_| panic!("{} exists", path.display()));
        use std::os::unix::fs::PermissionsExt;
        assert!(
            meta.permissions().mode() & 0o111 != 0,
            "{} is executable",
            path.display()
        );
    }
    assert_eq!(seen, 9);
    for module in mine {
        let dir = Path::new(MODULES).join(module);
        assert!(dir.join("README.md").is_file(), "{module} has a README");
        let skills: Vec<_> = std::fs::read_dir(dir.join("skills"))
            .expect("skills")
            .collect();
        assert!(!skills.is_empty());
        for skill in skills {
            let name = skill
                .expect("entry")
                .file_name()
                .into_string()
                .expect("utf-8");
            let front = frontmatter(&format!("{module}/skills/{name}/SKILL.md"));
            assert!(
                front.contains(&format!("name: {name}")) && front.contains("description: "),
                "{front}"
            );
        }
    }
}

fn example(name: &str) -> Value {
    let path = format!("{}/examples/host-hooks/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the example exists"))
        .expect("the example is JSON")
}

#[test]
fn the_example_hook_inputs_give_the_documented_answers() {
    let sandbox = Sandbox::repo();
    let denied = hook(
        &sandbox,
        "operator-kit/hooks/policy-gate.sh",
        &example("pre-tool-use-rm-rf.json"),
    )
    .json(0);
    assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
    let allowed = hook(
        &sandbox,
        "operator-kit/hooks/policy-gate.sh",
        &example("pre-tool-use-cargo-test.json"),
    );
    assert_eq!(allowed.ok(), "");

    sandbox.start_work().ok();
    let blocked = hook(
        &sandbox,
        "operator-kit/hooks/loop-gate.sh",
        &example("stop.json"),
    )
    .json(0);
    assert_eq!(blocked["decision"], "block");

    let mut failure = example("post-tool-use-failure.json");
    for n in 1..=3 {
        failure["tool_use_id"] = json!(format!("toolu_example_{n}"));
        hook(&sandbox, "gotcha-memory/hooks/gotcha-record.sh", &failure).ok();
    }
    let injected = hook(
        &sandbox,
        "gotcha-memory/hooks/gotcha-preamble.sh",
        &example("session-start.json"),
    )
    .json(0);
    let context = injected["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text");
    assert!(
        context.contains("[dependency · 3x · strategy recovery_workflow] Bash:cargo build"),
        "{context}"
    );
}

/// The lines of a hook script that take JSON apart by hand (with sed, grep, awk or tr) instead
/// of leaving it to `git hpp`.
fn hand_parsed_json(script: &str) -> Vec<String> {
    script
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter(|line| {
            line.split(|c: char| c.is_whitespace() || c == '|' || c == '(')
                .any(|word| matches!(word, "sed" | "grep" | "awk" | "tr"))
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_hook_script_leaves_the_json_to_git_hpp() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("modules");
    let mut scripts = 0;
    for module in std::fs::read_dir(&root).expect("modules/") {
        let hooks = module.expect("an entry").path().join("hooks");
        let Ok(listing) = std::fs::read_dir(&hooks) else {
            continue;
        };
        for script in listing {
            let path = script.expect("an entry").path();
            let text = std::fs::read_to_string(&path).expect("a script");
            scripts += 1;
            assert_eq!(
                hand_parsed_json(&text),
                Vec::<String>::new(),
                "{}",
                path.display()
            );
            // The runner calls git hpp; every other script calls git hpp through it.
            assert!(
                text.contains("git hpp \"$@\"") || text.contains("/hpp-run.sh\" "),
                "{} calls git hpp",
                path.display()
            );
        }
    }
    assert_eq!(
        scripts, 18,
        "every module's hook scripts (13, and 5 runners) were read"
    );
}

#[test]
fn control_a_script_that_reads_json_with_sed_is_caught() {
    let script = "#!/bin/sh\n# sed in a comment is fine\nevent=$(cat | sed -n 's/.*\"hook_event_name\".*/x/p')\n";
    assert_eq!(hand_parsed_json(script).len(), 1);
}

fn write_call(tool: &str, input: Value) -> Value {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": tool,
           "tool_input": input, "tool_use_id": "toolu_1", "cwd": "."})
}

#[test]
fn the_secret_guard_denies_a_write_that_adds_a_secret_and_names_no_value() {
    let sandbox = Sandbox::repo();
    let guard = "operator-kit/hooks/secret-guard.sh";
    let token = "ghp_0123456789abcdefghijABCDEFGHIJklmnopqr";
    for call in [
        write_call(
            "Write",
            json!({"file_path": "config.env", "content": format!("TOKEN={token}\n")}),
        ),
        write_call(
            "Edit",
            json!({"file_path": "src/a.rs", "old_string": "x", "new_string": format!("let t = \"{token}\";")}),
        ),
    ] {
        let run = hook(&sandbox, guard, &call);
        assert_eq!(run.code, 0, "{run}");
        let answer: Value = serde_json::from_str(&run.stdout).expect("a JSON answer");
        let output = &answer["hookSpecificOutput"];
        assert_eq!(output["permissionDecision"], "deny", "{answer}");
        let reason = output["permissionDecisionReason"]
            .as_str()
            .expect("a reason");
        assert!(reason.contains("a GitHub token"), "{reason}");
        assert!(!reason.contains(token), "never the value: {reason}");
    }
    let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n";
    let patch = format!(
        "*** Begin Patch\n*** Add File: id_key\n+{}\n*** End Patch\n",
        key.replace('\n', "\n+")
    );
    let run = hook(
        &sandbox,
        guard,
        &write_call("apply_patch", json!({"command": patch})),
    );
    assert!(
        run.stdout.contains("deny"),
        "Codex's apply_patch too: {run}"
    );
}

#[test]
fn control_the_secret_guard_lets_ordinary_writes_through_silently() {
    let sandbox = Sandbox::repo();
    let guard = "operator-kit/hooks/secret-guard.sh";
    for call in [
        write_call(
            "Write",
            json!({"file_path": "src/main.rs", "content": "let password = prompt();\n"}),
        ),
        write_call(
            "Edit",
            json!({"file_path": "README", "old_string": "a", "new_string": "b"}),
        ),
        pre_tool_use("cat secrets.txt"),
    ] {
        let run = hook(&sandbox, guard, &call);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run}");
    }
}

#[test]
fn the_secret_guard_reads_a_shell_borne_patch_and_a_redirection_as_the_writes_they_are() {
    let sandbox = Sandbox::repo();
    let guard = "operator-kit/hooks/secret-guard.sh";
    let line = "aws_access_key_id = AKIAIOSFODNN7EXAMPLQ";
    let patch = format!("*** Begin Patch\n*** Add File: deploy.env\n+{line}\n*** End Patch\n");
    for command in [
        format!("apply_patch <<'EOF'\n{patch}EOF\n"),
        format!("bash -lc \"apply_patch <<'EOF'\n{patch}EOF\n\""),
        format!("echo '{line}' > deploy.env"),
        format!("printf '%s\\n' '{line}' | tee -a deploy.env"),
        format!("cat > deploy.env <<'EOF'\n{line}\nEOF"),
    ] {
        for host in ["claude-code", "codex"] {
            let run = run_script_for(
                &sandbox,
                &sandbox.root,
                guard,
                &pre_tool_use(&command).to_string(),
                host,
            );
            let reason = if host == "codex" && run.code == 2 {
                run.stderr.clone()
            } else {
                let answer: Value = serde_json::from_str(&run.stdout)
                    .unwrap_or_else(|_| panic!("{host} {command}: {run}"));
                answer["hookSpecificOutput"]["permissionDecisionReason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            };
            assert!(
                reason
                    .contains("secret guard: this write puts an AWS access key id into deploy.env"),
                "{host} {command}: {run}"
            );
        }
    }
    // The same text read, printed, or only searched for is no write.
    for command in [format!("grep -r '{line}' ."), format!("echo '{line}'")] {
        let run = hook(&sandbox, guard, &pre_tool_use(&command));
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{command}: {run}");
    }
}

#[test]
fn a_turn_checkpoint_keeps_the_workspace_after_each_turn_that_changed_it() {
    let sandbox = Sandbox::repo();
    let stop = json!({"session_id": "s-42", "hook_event_name": "Stop", "stop_hook_active": false});
    let hook_run = |sandbox: &Sandbox| {
        let run = hook(sandbox, "continuity-kit/hooks/turn-checkpoint.sh", &stop);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run}");
        assert!(!run.stderr.contains("warning"), "{run}");
    };
    std::fs::write(sandbox.root.join("draft.txt"), "first\n").expect("writable");
    let index_before = sandbox.git(["ls-files", "--stage"]);
    hook_run(&sandbox);
    let first = "refs/hpp/checkpoints/s-42/turn/1";
    assert_eq!(
        sandbox.git(["show", &format!("{first}:snapshot/draft.txt")]),
        "first"
    );
    let record: Value =
        serde_json::from_str(&sandbox.git(["show", &format!("{first}:checkpoint.json")]))
            .expect("JSON");
    assert_eq!(record["schema"], "hpp.turn-checkpoint/v1");
    assert_eq!(record["turn"], 1);
    assert_eq!(
        sandbox.git(["ls-files", "--stage"]),
        index_before,
        "the index is untouched"
    );
    // Nothing changed: no second checkpoint. A change: turn 2, and turn 1 restores.
    hook_run(&sandbox);
    assert!(
        sandbox
            .git(["for-each-ref", "refs/hpp/checkpoints/s-42/turn/2"])
            .is_empty()
    );
    std::fs::write(sandbox.root.join("draft.txt"), "second\n").expect("writable");
    hook_run(&sandbox);
    assert_eq!(
        sandbox.git([
            "show",
            "refs/hpp/checkpoints/s-42/turn/2:snapshot/draft.txt"
        ]),
        "second"
    );
    sandbox.git([
        "restore",
        &format!("--source={first}:snapshot"),
        "--worktree",
        "--",
        "draft.txt",
    ]);
    assert_eq!(
        std::fs::read_to_string(sandbox.root.join("draft.txt")).expect("restored"),
        "first\n"
    );
    sandbox.hpp(["doctor"]).ok();
}

#[test]
fn control_a_session_id_that_cannot_name_a_ref_writes_nothing_and_warns() {
    let sandbox = Sandbox::repo();
    let bad = json!({"session_id": "../../x", "hook_event_name": "Stop"});
    let run = hook(&sandbox, "continuity-kit/hooks/turn-checkpoint.sh", &bad);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, ""),
        "observe-only: {run}"
    );
    assert!(run.stderr.contains("cannot name a checkpoint"), "{run}");
    assert_eq!(sandbox.hpp_refs(), "");
}

/// Gives the repository its own manifest: the built-in one whose only probe is harness-doctor's
/// `probe`.
fn with_doctor_probe(sandbox: &Sandbox, probe: Value) {
    let mut manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hpp.manifest.json"))
            .expect("the manifest"),
    )
    .expect("JSON");
    for monitor in manifest["monitors"].as_array_mut().expect("monitors") {
        monitor.as_object_mut().expect("an object").remove("probe");
        if monitor["id"] == "harness-doctor" {
            monitor["probe"] = probe.clone();
        }
    }
    std::fs::write(sandbox.root.join("hpp.manifest.json"), manifest.to_string()).expect("writable");
}

/// The clock now, as `map monitor --now` takes it.
fn now() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
        .to_string()
}

#[test]
fn the_health_probe_hook_records_due_signals_at_session_start() {
    let sandbox = Sandbox::repo();
    with_doctor_probe(&sandbox, json!({"command": ["true"]}));
    let start = json!({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"});
    let run = hook(&sandbox, "health-kit/hooks/health-probe.sh", &start);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run}");
    let signal: Value = serde_json::from_str(
        &sandbox.git(["show", "refs/hpp/monitors/harness-doctor:signal.json"]),
    )
    .expect("a signal was recorded");
    assert_eq!(signal["ok"], true);
    let map = sandbox.hpp(["map", "monitor", "--now", &now()]).json(0);
    let doctor = map["monitors"]
        .as_array()
        .expect("monitors")
        .iter()
        .find(|m| m["id"] == "harness-doctor")
        .expect("projected")
        .clone();
    assert_eq!(doctor["status"], "healthy", "{map}");
    // A second session start within the cadence probes nothing more.
    let again = hook(&sandbox, "health-kit/hooks/health-probe.sh", &start);
    assert_eq!(again.code, 0);
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/monitors/harness-doctor"]),
        "1"
    );
}

#[test]
fn control_a_failing_health_probe_is_a_signal_not_a_refused_session() {
    let sandbox = Sandbox::repo();
    with_doctor_probe(&sandbox, json!({"command": ["false"]}));
    let start = json!({"session_id": "s1", "hook_event_name": "SessionStart"});
    let run = hook(&sandbox, "health-kit/hooks/health-probe.sh", &start);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run}");
    let signal: Value = serde_json::from_str(
        &sandbox.git(["show", "refs/hpp/monitors/harness-doctor:signal.json"]),
    )
    .expect("a signal was recorded");
    assert_eq!(signal["ok"], false);
    let map = sandbox.hpp(["map", "monitor", "--now", &now()]).json(0);
    assert!(
        map.to_string().contains("\"status\":\"unknown\""),
        "a failed probe is no passing signal: {map}"
    );
}

/// Codex's Stop payload, as Codex CLI 0.171 sends it (issue 30): its session, transcript, turn,
/// model and last message beside `stop_hook_active`, which it sets once a Stop hook has blocked.
fn codex_stop(active: bool) -> Value {
    json!({"session_id": "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5",
           "transcript_path": "/home/u/.codex/sessions/2026/12/03/rollout-x.jsonl",
           "cwd": ".", "hook_event_name": "Stop", "model": "gpt-5-codex", "turn_id": "1",
           "stop_hook_active": active, "last_assistant_message": "done"})
}

fn failing_criterion(sandbox: &Sandbox) {
    sandbox.git([
        "config",
        "--add",
        "hpp.criterion",
        r#"["sh", "-c", "test -f done.txt"]"#,
    ]);
}

#[test]
fn the_evidence_gate_under_codex_lets_a_stop_go_once_a_stop_hook_continued_the_turn() {
    // Issue 30: Codex answered each of 215 stops with stop_hook_active true by another block.
    let sandbox = Sandbox::repo();
    failing_criterion(&sandbox);
    let gate = "operator-kit/hooks/evidence-gate.sh";
    let first = codex_stop(false).to_string();
    let blocked = run_script_for(&sandbox, &sandbox.root, gate, &first, "codex").json(0);
    assert_eq!(blocked["decision"], "block");
    let again = codex_stop(true).to_string();
    let run = run_script_for(&sandbox, &sandbox.root, gate, &again, "codex");
    assert_eq!(run.ok(), "");
}

#[test]
fn every_stop_gate_lets_the_stop_through_after_three_blocks_in_a_row() {
    // A host that never says stop_hook_active still ends: the fourth stop goes, with the reason.
    let sandbox = Sandbox::repo();
    failing_criterion(&sandbox);
    sandbox.start_work().ok();
    for (gate, name) in [
        ("operator-kit/hooks/evidence-gate.sh", "evidence gate"),
        ("operator-kit/hooks/loop-gate.sh", "loop gate"),
    ] {
        for host in ["codex", "claude-code"] {
            let stdin = codex_stop(false).to_string();
            for n in 1..=3 {
                let run = run_script_for(&sandbox, &sandbox.root, gate, &stdin, host).json(0);
                assert_eq!(run["decision"], "block", "{gate} {host} block {n}");
            }
            let through = run_script_for(&sandbox, &sandbox.root, gate, &stdin, host).json(0);
            assert!(through.get("decision").is_none(), "{through}");
            let message = through["systemMessage"].as_str().expect("a message");
            assert!(
                message.starts_with(&format!("{name}: blocked this session's stop 3 times")),
                "{message}"
            );
            // The count starts again: the next stop is checked.
            let next = run_script_for(&sandbox, &sandbox.root, gate, &stdin, host).json(0);
            assert_eq!(next["decision"], "block");
            let other = json!({"session_id": "another", "hook_event_name": "Stop"}).to_string();
            let run = run_script_for(&sandbox, &sandbox.root, gate, &other, host).json(0);
            assert_eq!(run["decision"], "block", "another session counts alone");
            // Reset this host's count for the next round: a stop that went through.
            let done = codex_stop(true).to_string();
            let _ = run_script_for(&sandbox, &sandbox.root, gate, &done, host).ok();
        }
    }
}

#[test]
fn control_a_passing_stop_resets_the_count_of_blocks_in_a_row() {
    let sandbox = Sandbox::repo();
    failing_criterion(&sandbox);
    let gate = "operator-kit/hooks/evidence-gate.sh";
    let stdin = codex_stop(false).to_string();
    for _ in 0..2 {
        let run = run_script_for(&sandbox, &sandbox.root, gate, &stdin, "codex").json(0);
        assert_eq!(run["decision"], "block");
    }
    std::fs::write(sandbox.root.join("done.txt"), "yes\n").expect("writable");
    assert_eq!(
        run_script_for(&sandbox, &sandbox.root, gate, &stdin, "codex").ok(),
        ""
    );
    std::fs::remove_file(sandbox.root.join("done.txt")).expect("removable");
    for n in 1..=3 {
        let run = run_script_for(&sandbox, &sandbox.root, gate, &stdin, "codex").json(0);
        assert_eq!(run["decision"], "block", "block {n} after the reset");
    }
}

/// Codex's PostToolUse for a shell call (issue 30): the response is the output text alone, no
/// exit code; the call's id is the `call_id` its transcript records the exec under.
fn codex_post_tool_use(call_id: &str, transcript: &Path) -> Value {
    json!({"session_id": "019a2d7a", "transcript_path": transcript.display().to_string(),
           "cwd": ".", "hook_event_name": "PostToolUse", "model": "gpt-5-codex",
           "turn_id": "1", "tool_name": "Bash", "tool_use_id": call_id,
           "tool_input": {"command": "cargo build --offline"},
           "tool_response": "error: no matching package named `serde` found\n"})
}

/// Writes a Codex rollout recording `calls` (call id, exit code), in the shape
/// `hpp_core::host::codex_exit_code` documents: the exec's end event and the function output.
fn codex_transcript(sandbox: &Sandbox, calls: &[(&str, i64)]) -> std::path::PathBuf {
    let mut lines = vec![
        json!({"timestamp": "2026-12-03T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": "019a2d7a", "cwd": ".", "originator": "codex_exec", "cli_version": "0.171.0"}}),
    ];
    for (id, code) in calls {
        lines.push(
            json!({"timestamp": "2026-12-03T10:00:01.000Z", "type": "event_msg",
            "payload": {"type": "exec_command_end", "call_id": id, "stdout": "",
                        "stderr": "error: no matching package", "exit_code": code}}),
        );
        lines.push(json!({"timestamp": "2026-12-03T10:00:01.000Z", "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": id,
                        "output": json!({"output": "error: no matching package",
                                         "metadata": {"exit_code": code, "duration_seconds": 0.1}}).to_string()}}));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = sandbox.root.join(".git").join("rollout-test.jsonl");
    std::fs::write(&path, text).expect("writable");
    path
}

#[test]
fn gotcha_memory_under_codex_records_a_failure_its_transcript_shows() {
    let sandbox = Sandbox::repo();
    let transcript = codex_transcript(
        &sandbox,
        &[("call_1", 101), ("call_2", 101), ("call_3", 101)],
    );
    for n in 1..=3 {
        let input = codex_post_tool_use(&format!("call_{n}"), &transcript).to_string();
        let run = run_script_for(
            &sandbox,
            &sandbox.root,
            "gotcha-memory/hooks/gotcha-record.sh",
            &input,
            "codex",
        );
        if n < 3 {
            assert_eq!(run.ok(), "");
        } else {
            let promoted = run.json(0);
            assert_eq!(
                promoted["hookSpecificOutput"]["hookEventName"],
                "PostToolUse"
            );
        }
    }
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/gotchas/failures"]),
        "3"
    );
}

#[test]
fn control_gotcha_memory_under_codex_records_nothing_for_a_call_that_passed_or_is_unknown() {
    let sandbox = Sandbox::repo();
    let transcript = codex_transcript(&sandbox, &[("call_ok", 0)]);
    for id in ["call_ok", "call_not_in_the_transcript"] {
        let input = codex_post_tool_use(id, &transcript).to_string();
        let run = run_script_for(
            &sandbox,
            &sandbox.root,
            "gotcha-memory/hooks/gotcha-record.sh",
            &input,
            "codex",
        );
        assert_eq!(run.ok(), "");
    }
    let missing = codex_post_tool_use("call_ok", &sandbox.root.join("no-such.jsonl")).to_string();
    let run = run_script_for(
        &sandbox,
        &sandbox.root,
        "gotcha-memory/hooks/gotcha-record.sh",
        &missing,
        "codex",
    );
    assert_eq!(run.ok(), "");
    assert!(
        sandbox
            .git(["for-each-ref", "refs/hpp/gotchas/"])
            .is_empty(),
        "nothing recorded"
    );
}
