//! The modules' hooks under the real clients: Claude Code 2.1.332 (`claude -p`) and Codex CLI
//! 0.171.0 (`codex exec`), installed from the npm registry once per target directory, run
//! headless in a repository prepared by `git hpp install`, against a scripted model server on
//! 127.0.0.1 that is also every proxy variable's proxy: it refuses a request for any other
//! host, and a test fails if one came (Codex asks for github.com and chatgpt.com unless its
//! update check, analytics, apps and plugins are off, as they are here). The
//! model asks for tool calls; the checks read what happened on disk, in refs/hpp/, and in what
//! the client sent back to the model.
//!
//! Without node or npm each test prints `SKIPPED: …` on stderr and passes; an npm install
//! that fails is a failure.
//!
//! PreCompact is driven on both: Claude Code by `claude -p /compact --continue`, Codex by
//! `-c model_auto_compact_token_limit=1`, which compacts after the first tool call.
//!
//! Notes on what differs:
//! - Codex applies `apply_patch <<'EOF' … EOF` sent through its shell tool itself, and its hooks
//!   see that call as `Bash`: the secret guard (wired to `apply_patch|Bash`) and the territory
//!   check of `git-guard.sh` read the patch in it. Codex gets an `apply_patch` tool of its own
//!   from the model's metadata, so the tests name a model Codex knows (`gpt-5.5`).
//! - Codex has no PostToolUseFailure; gotcha-record reads the failing exit code from the
//!   session's transcript, so the Codex run keeps its session files (no `--ephemeral` there).

use std::path::{Path, PathBuf};

use crate::harness::Sandbox;
use crate::harness::hosts::{
    BOUND, Call, Host, ModelServer, Script, Session, install_modules, install_these, run_client,
    run_client_with,
};

const AWS_LINE: &str = "aws_access_key_id = AKIAIOSFODNN7EXAMPLQ";

/// A repository with `src/lib.rs` committed, and the client; `None` when the client cannot be
/// installed here (already reported as SKIPPED).
fn repo(host: Host) -> Option<(Sandbox, PathBuf)> {
    let client = host.client()?;
    let sandbox = Sandbox::repo();
    std::fs::create_dir_all(sandbox.root.join("src")).expect("the sandbox is writable");
    std::fs::write(sandbox.root.join("src/lib.rs"), "pub fn f() {}\n")
        .expect("the sandbox is writable");
    sandbox.git(["add", "src"]);
    sandbox.git(["commit", "-q", "-m", "src"]);
    Some((sandbox, client))
}

/// Runs the client in the repository with the scripted `calls`; checks it ended on its own
/// within the bound.
fn session(sandbox: &Sandbox, host: Host, client: &Path, calls: &[Call]) -> (Session, ModelServer) {
    session_in(sandbox, &sandbox.root, host, client, calls)
}

/// As [`session`], in the worktree `cwd`.
fn session_in(
    sandbox: &Sandbox,
    cwd: &Path,
    host: Host,
    client: &Path,
    calls: &[Call],
) -> (Session, ModelServer) {
    let server = ModelServer::start(Script {
        root: cwd.to_path_buf(),
        calls: calls.to_vec(),
    });
    let done = run_client(sandbox, host, client, &server, cwd, true);
    assert_eq!(
        server.escapes(),
        Vec::<String>::new(),
        "{host:?} tried to reach another host"
    );
    assert!(
        done.took < BOUND && done.code == 0,
        "{host:?} did not end on its own (exit {}, {:.1?}):\n{}\n--- requests ---\n{}",
        done.code,
        done.took,
        done.run,
        server.dump()
    );
    (done, server)
}

fn policy_gate(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    let calls = [
        Call::Shell("rm -rf src".into()),
        Call::Shell("find src -delete".into()),
        Call::Shell("echo ok > out.txt".into()),
    ];
    let (done, server) = session(&sandbox, host, &client, &calls);
    assert!(
        sandbox.root.join("src/lib.rs").exists(),
        "{host:?} ran rm -rf src past the policy gate:\n{}",
        done.run
    );
    // Codex refuses `rm -rf` by its own rule too, but only after the hook: both calls come
    // back to the model with the policy's reason.
    let heard = server.turns().last().map_or(0, |r| {
        r.body
            .matches("BLOCK by git hpp policy (rule recursive-delete")
            .count()
    });
    assert!(
        heard >= 2,
        "{host:?}: the model heard the policy's reason {heard} times, not twice:\n{}",
        server.dump()
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.root.join("out.txt"))
            .ok()
            .as_deref(),
        Some("ok\n"),
        "{host:?} did not run the safe command:\n{}\n{}",
        done.run,
        server.dump()
    );
    // The Stop hooks of continuity-kit: the turn changed the workspace, so it is checkpointed,
    // and the session leaves a handoff.
    let refs = sandbox.hpp_refs();
    assert!(
        refs.contains("/turn/1 ") && refs.contains("refs/hpp/handoffs/"),
        "{host:?}: no checkpoint or handoff after the turn:\n{refs}"
    );
}

#[test]
fn claude_code_policy_gate_keeps_src_and_lets_a_safe_command_run() {
    policy_gate(Host::ClaudeCode);
}

#[test]
fn codex_policy_gate_keeps_src_and_lets_a_safe_command_run() {
    policy_gate(Host::Codex);
}

/// Without the hooks the same scripts delete src (Codex refuses `rm -rf` itself, not `find
/// -delete`) and write the secret: the checks above can fail.
fn unguarded(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    let calls = [
        Call::Shell("rm -rf src".into()),
        Call::Shell("find src -delete".into()),
        Call::Write {
            path: "creds.txt".into(),
            line: AWS_LINE.into(),
        },
    ];
    let (done, _) = session(&sandbox, host, &client, &calls);
    assert!(
        !sandbox.root.join("src").exists(),
        "{host:?} kept src with no hook installed:\n{}",
        done.run
    );
    assert!(
        sandbox.root.join("creds.txt").exists(),
        "{host:?} refused the secret with no hook installed:\n{}",
        done.run
    );
}

#[test]
fn control_claude_code_without_the_hooks_deletes_src() {
    unguarded(Host::ClaudeCode);
}

#[test]
fn control_codex_without_the_hooks_deletes_src() {
    unguarded(Host::Codex);
}

fn secret_guard(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    let calls = [
        Call::Write {
            path: "creds.txt".into(),
            line: AWS_LINE.into(),
        },
        Call::Write {
            path: "notes.txt".into(),
            line: "nothing secret here".into(),
        },
    ];
    let (done, server) = session(&sandbox, host, &client, &calls);
    assert!(
        !sandbox.root.join("creds.txt").exists(),
        "{host:?} wrote the secret past the guard:\n{}\n{}",
        done.run,
        server.dump()
    );
    assert!(
        server.saw("secret guard: this write puts"),
        "{host:?}: the model never heard the guard's reason:\n{}",
        server.dump()
    );
    assert!(
        sandbox.root.join("notes.txt").exists(),
        "{host:?} did not write the harmless file:\n{}\n{}",
        done.run,
        server.dump()
    );
}

#[test]
fn claude_code_secret_guard_refuses_a_write_of_an_aws_key() {
    secret_guard(Host::ClaudeCode);
}

#[test]
fn codex_secret_guard_refuses_an_apply_patch_of_an_aws_key() {
    secret_guard(Host::Codex);
}

fn stop_gates_end(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    sandbox.git([
        "config",
        "--add",
        "hpp.criterion",
        r#"["sh", "-c", "exit 1"]"#,
    ]);
    // An active loop not yet verified: the loop gate blocks the stop too.
    sandbox.start_work().ok();
    let (done, server) = session(&sandbox, host, &client, &[]);
    let turns = server.turns().len();
    assert!(
        turns >= 2 && server.saw("criterion 1") && server.saw("record fresh evidence"),
        "{host:?}: the evidence gate never blocked ({turns} turns):\n{}\n{}",
        done.run,
        server.dump()
    );
    assert!(
        turns <= 8,
        "{host:?}: {turns} turns for one stop:\n{}",
        server.dump()
    );
}

#[test]
fn claude_code_stop_gates_block_then_let_the_session_end() {
    stop_gates_end(Host::ClaudeCode);
}

#[test]
fn codex_stop_gates_block_then_let_the_session_end() {
    stop_gates_end(Host::Codex);
}

fn session_start(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    sandbox
        .hpp([
            "handoff",
            "write",
            "--summary",
            "marker-7f3a parser half done",
            "--next",
            "wire the printer",
            "--verify-first",
            "cargo test",
        ])
        .ok();
    // Three failures of one task promote a gotcha, which gotcha-memory's preamble injects.
    for _ in 0..3 {
        sandbox
            .hpp([
                "gotcha",
                "record",
                "--task",
                "cargo build",
                "--message",
                "error: linker marker-9c2e not found",
            ])
            .ok();
    }
    let (_, server) = session(&sandbox, host, &client, &[]);
    let first = &server.turns()[0];
    assert!(
        first.body.contains("marker-7f3a parser half done"),
        "{host:?}: the handoff never reached the model:\n{}",
        server.dump()
    );
    assert!(
        first.body.contains("marker-9c2e"),
        "{host:?}: the gotcha preamble never reached the model:\n{}",
        server.dump()
    );
}

#[test]
fn claude_code_session_start_injects_the_handoff_and_the_gotchas() {
    session_start(Host::ClaudeCode);
}

#[test]
fn codex_session_start_injects_the_handoff_and_the_gotchas() {
    session_start(Host::Codex);
}

fn gotcha(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    let calls = [Call::Shell("ls no-such-dir-here".into())];
    let (done, server) = session(&sandbox, host, &client, &calls);
    let recorded = sandbox.hpp(["gotcha", "list", "--json"]);
    assert!(
        sandbox.hpp_refs().contains("refs/hpp/gotchas/failures"),
        "{host:?}: no failure recorded after a failing command:\n{}\n{}\n{}\n{}",
        sandbox.hpp_refs(),
        recorded,
        done.run,
        server.dump()
    );
}

#[test]
fn claude_code_gotcha_memory_records_a_failing_command() {
    gotcha(Host::ClaudeCode);
}

#[test]
fn codex_gotcha_memory_records_a_failing_command() {
    gotcha(Host::Codex);
}

#[test]
fn control_a_clean_command_records_no_gotcha() {
    let host = Host::ClaudeCode;
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    let _ = session(&sandbox, host, &client, &[Call::Shell("ls src".into())]);
    assert!(!sandbox.hpp_refs().contains("refs/hpp/gotchas/failures"));
}

fn lanes(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    // The lane's worktree checks out the installed hooks, as a team's repository would.
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "install the modules"]);
    sandbox.git(["config", "hpp.lane.gitGuard", "block"]);
    for (id, territory) in [("ui", "src/ui"), ("api", "src/api")] {
        sandbox
            .hpp_in(
                &sandbox.root,
                &[
                    "lane",
                    "start",
                    id,
                    "--role",
                    "maker",
                    "--model",
                    "m",
                    "--territory",
                    territory,
                ],
            )
            .ok();
    }
    let lane = sandbox.path("work.lanes/ui");
    let claim = sandbox.git(["rev-parse", "refs/hpp/lanes/ui"]);
    let calls = [
        Call::Write {
            path: "src/ui/view.rs".into(),
            line: "pub fn view() {}".into(),
        },
        Call::Write {
            path: "src/api/handler.rs".into(),
            line: "pub fn handle() {}".into(),
        },
        Call::Shell("git add -A".into()),
    ];
    let (done, server) = session_in(&sandbox, &lane, host, &client, &calls);
    let why = format!("{}\n{}", done.run, server.dump());
    assert!(
        lane.join("src/ui/view.rs").exists(),
        "{host:?}: the edit inside the lane's territory did not land:\n{why}"
    );
    assert!(
        !lane.join("src/api/handler.rs").exists(),
        "{host:?}: the edit in another lane's territory landed:\n{why}"
    );
    assert!(
        server.saw("lane territory guard: ") && server.saw("lane git guard: `git add -A`"),
        "{host:?}: the model never heard the lane guards' reasons:\n{why}"
    );
    assert_eq!(
        sandbox.git_in(&lane, &["diff", "--cached", "--name-only"]),
        "",
        "{host:?}: git add -A ran while another lane is alive:\n{why}"
    );
    // lane-register: the session's start beat the lane's heart and told the agent its lane.
    assert_ne!(
        sandbox.git(["rev-parse", "refs/hpp/lanes/ui"]),
        claim,
        "{host:?}: lane-register left no heartbeat:\n{why}"
    );
    assert!(
        server.turns()[0].body.contains("src/ui"),
        "{host:?}: the agent was never told its lane's territory:\n{why}"
    );
}

fn health_probe(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_these(&sandbox, host, &["operator-kit", "health-kit"]);
    // The built-in manifest, its one due probe a command that passes.
    let mut manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hpp.manifest.json"))
            .expect("the manifest"),
    )
    .expect("JSON");
    for monitor in manifest["monitors"].as_array_mut().expect("monitors") {
        monitor.as_object_mut().expect("an object").remove("probe");
        if monitor["id"] == "harness-doctor" {
            monitor["probe"] = serde_json::json!({"command": ["true"]});
        }
    }
    std::fs::write(sandbox.root.join("hpp.manifest.json"), manifest.to_string()).expect("writable");
    let before = sandbox.hpp_refs();
    assert!(!before.contains("refs/hpp/monitors/"), "{before}");
    let (done, server) = session(&sandbox, host, &client, &[]);
    let after = sandbox.hpp_refs();
    assert!(
        after.contains("refs/hpp/monitors/harness-doctor"),
        "{host:?}: health-probe recorded no signal at session start:\n{}\n{}",
        done.run,
        server.dump()
    );
}

#[test]
fn claude_code_health_probe_records_a_due_signal_at_session_start() {
    health_probe(Host::ClaudeCode);
}

#[test]
fn codex_health_probe_records_a_due_signal_at_session_start() {
    health_probe(Host::Codex);
}

/// Outside any lane the same script's edit lands and `git add -A` stages it: the lane check
/// above can fail.
#[test]
fn control_outside_a_lane_the_edit_and_git_add_all_land() {
    let host = Host::ClaudeCode;
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    sandbox.git(["config", "hpp.lane.gitGuard", "block"]);
    let calls = [
        Call::Write {
            path: "src/api/handler.rs".into(),
            line: "pub fn handle() {}".into(),
        },
        Call::Shell("git add -A".into()),
    ];
    let (done, _) = session(&sandbox, host, &client, &calls);
    assert!(
        sandbox
            .git(["diff", "--cached", "--name-only"])
            .contains("src/api/handler.rs"),
        "{}",
        done.run
    );
}

#[test]
fn claude_code_lane_guards_keep_an_edit_and_a_sweeping_git_call_in_the_lane() {
    lanes(Host::ClaudeCode);
}

#[test]
fn codex_lane_guards_keep_an_edit_and_a_sweeping_git_call_in_the_lane() {
    lanes(Host::Codex);
}

/// The subjects of the handoff log, newest first.
fn handoffs(sandbox: &Sandbox) -> String {
    sandbox.git(["log", "--format=%s", "refs/hpp/handoffs/solo"])
}

/// Claude Code compacts on demand: `claude -p /compact --continue` compacts the last session,
/// and PreCompact's handoff-write records a handoff with the pre-compact trigger.
#[test]
fn claude_code_pre_compact_writes_a_handoff() {
    let host = Host::ClaudeCode;
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    let _ = session(
        &sandbox,
        host,
        &client,
        &[Call::Shell("echo one > one.txt".into())],
    );
    // The workspace moves on, so the handoff at compaction differs from the one at the stop.
    std::fs::write(sandbox.root.join("two.txt"), "two\n").expect("the sandbox is writable");
    let server = ModelServer::start(Script {
        root: sandbox.root.clone(),
        calls: Vec::new(),
    });
    let done = run_client_with(
        &sandbox,
        (host, &client),
        &server,
        &sandbox.root,
        true,
        ("/compact", &["--continue"]),
    );
    assert_eq!(done.code, 0, "{}", done.run);
    let log = handoffs(&sandbox);
    assert!(
        log.lines()
            .next()
            .is_some_and(|l| l.ends_with("-precompact")),
        "no handoff at compaction:\n{log}\n{}\n{}",
        done.run,
        server.dump()
    );
}

/// Codex compacts when the context passes `model_auto_compact_token_limit`; with a limit of 1
/// the first tool call's follow-up compacts, and PreCompact's handoff-write records a handoff.
#[test]
fn codex_pre_compact_writes_a_handoff() {
    let host = Host::Codex;
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    let server = ModelServer::start(Script {
        root: sandbox.root.clone(),
        calls: vec![Call::Shell("echo one > one.txt".into())],
    });
    let done = run_client_with(
        &sandbox,
        (host, &client),
        &server,
        &sandbox.root,
        true,
        (
            "do the scripted work",
            &["-c", "model_auto_compact_token_limit=1"],
        ),
    );
    assert!(done.code == 0 && done.took < BOUND, "{}", done.run);
    let log = handoffs(&sandbox);
    assert!(
        log.lines().any(|l| l.ends_with("-precompact")),
        "no handoff at compaction:\n{log}\n{}\n{}",
        done.run,
        server.dump()
    );
}

/// Without the limit the same Codex session never compacts: the check above can fail.
#[test]
fn control_codex_without_the_limit_writes_no_pre_compact_handoff() {
    let host = Host::Codex;
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    let _ = session(
        &sandbox,
        host,
        &client,
        &[Call::Shell("echo one > one.txt".into())],
    );
    let log = handoffs(&sandbox);
    assert!(!log.contains("-precompact"), "{log}");
}

/// Codex reads the repository's `.codex/hooks.json` only in a trusted project: untrusted, the
/// installed hooks never run and `find src -delete` goes through, as the README warns.
#[test]
fn control_codex_ignores_the_hooks_of_an_untrusted_project() {
    let host = Host::Codex;
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    let server = ModelServer::start(Script {
        root: sandbox.root.clone(),
        calls: vec![Call::Shell("find src -delete".into())],
    });
    let done = run_client(&sandbox, host, &client, &server, &sandbox.root, false);
    assert_eq!(done.code, 0, "{}", done.run);
    assert!(
        !sandbox.root.join("src").exists() && !server.saw("BLOCK by git hpp policy"),
        "Codex ran the hooks of an untrusted project:\n{}\n{}",
        done.run,
        server.dump()
    );
}

/// The pinned versions the book's setup chapter names.
#[test]
fn the_book_names_the_pinned_host_versions() {
    let readme = include_str!("../../docs/src/setup.md");
    for host in [Host::ClaudeCode, Host::Codex] {
        let (pkg, version) = host.package();
        assert!(
            readme.contains(&format!("{pkg}@{version}")),
            "docs/src/setup.md does not name {pkg}@{version}"
        );
    }
}

/// Without health-kit the same session records no signal: the check above can fail.
#[test]
fn control_without_health_kit_no_signal_is_recorded() {
    let Some((sandbox, client)) = repo(Host::ClaudeCode) else {
        return;
    };
    install_these(&sandbox, Host::ClaudeCode, &["operator-kit"]);
    let _ = session(&sandbox, Host::ClaudeCode, &client, &[]);
    assert!(!sandbox.hpp_refs().contains("refs/hpp/monitors/"));
}

/// The warnings `claude plugin validate` printed (the `❯` lines under a `⚠ Found …` header),
/// but those about a listing in the developer portal (an icon, a long README), which a
/// workspace plugin does not have.
fn warnings(said: &str) -> Vec<String> {
    const LISTING_ONLY: [&str; 2] = ["(ICON_MISSING)", "(README_TRIVIAL)"];
    let mut under = false;
    let mut found = Vec::new();
    for line in said.lines() {
        if line.starts_with('⚠') {
            under = true;
        } else if !line.is_empty() && !line.starts_with(' ') {
            under = false;
        } else if under
            && line.trim_start().starts_with('❯')
            && !LISTING_ONLY.iter().any(|code| line.contains(code))
        {
            found.push(line.trim().to_owned());
        }
    }
    found
}

/// `claude plugin validate` of what `install --plugin` writes: the plugin and its marketplace,
/// with no error and no warning (an author, a description, a matcher on every PostToolUse).
fn validate_plugin(sandbox: &Sandbox, client: &Path, target: &str) -> crate::harness::Run {
    let mut cmd = sandbox.command(&client.display().to_string(), &sandbox.root);
    cmd.env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .args(["plugin", "validate", target]);
    crate::harness::Run::from_output(&cmd.output().expect("claude runs"))
}

#[test]
fn the_plugin_and_its_marketplace_pass_claude_plugin_validate_without_a_warning() {
    let Some((sandbox, client)) = repo(Host::ClaudeCode) else {
        return;
    };
    sandbox
        .hpp([
            "install",
            "--host",
            "claude-code",
            "--bundle",
            "reliable-coding",
            "--plugin",
            "--apply",
        ])
        .ok();
    for target in [".claude/plugins/git-hpp", "."] {
        let run = validate_plugin(&sandbox, &client, target);
        assert_eq!(run.code, 0, "{target}: {run}");
        let warned = warnings(&format!("{}{}", run.stdout, run.stderr));
        assert!(warned.is_empty(), "{target}: warned {warned:?}: {run}");
    }
}

#[test]
fn control_claude_plugin_validate_warns_about_a_plugin_without_an_author() {
    let Some((sandbox, client)) = repo(Host::ClaudeCode) else {
        return;
    };
    sandbox
        .hpp([
            "install",
            "--host",
            "claude-code",
            "--bundle",
            "reliable-coding",
            "--plugin",
            "--apply",
        ])
        .ok();
    let manifest = sandbox
        .root
        .join(".claude/plugins/git-hpp/.claude-plugin/plugin.json");
    let mut plugin: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("written")).expect("JSON");
    let object = plugin.as_object_mut().expect("an object");
    object.remove("author");
    object.remove("description");
    std::fs::write(&manifest, plugin.to_string()).expect("writable");
    let run = validate_plugin(&sandbox, &client, ".claude/plugins/git-hpp");
    let warned = warnings(&format!("{}{}", run.stdout, run.stderr));
    assert!(
        warned.iter().any(|w| w.starts_with("❯ author:"))
            && warned.iter().any(|w| w.starts_with("❯ description:")),
        "{warned:?}: {run}"
    );
}

/// How a `git-hpp` placed first on the client's PATH answers `policy hook`, exec'ing the real
/// one for every other command.
#[derive(Clone, Copy, Debug)]
enum Broken {
    /// It never ends.
    Hangs,
    /// Exit 0 with text that is no JSON answer.
    Garbage,
    /// Exit 1, which both hosts read as a non-blocking error.
    Exit1,
}

/// Puts a `git-hpp` that is broken as `how` on `policy hook` first on every PATH the sandbox
/// gives, with a 3 s hook deadline.
fn break_policy_hook(sandbox: &mut Sandbox, how: Broken) {
    let dir = sandbox.path("broken-bin");
    std::fs::create_dir_all(&dir).expect("the sandbox is writable");
    let real = crate::harness::BIN;
    let on_hook = match how {
        Broken::Hangs => "while :; do sleep 1; done",
        Broken::Garbage => "cat >/dev/null; echo 'ok, go ahead'; exit 0",
        Broken::Exit1 => "cat >/dev/null; echo 'policy: warning' >&2; exit 1",
    };
    let fake = dir.join("git-hpp");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncase \"$1 $2\" in \"policy hook\") {on_hook} ;; esac\nexec '{real}' \"$@\"\n"
        ),
    )
    .expect("the sandbox is writable");
    let mut perms = std::fs::metadata(&fake).expect("written").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).expect("chmod");
    put_first_on_path(sandbox, dir);
    sandbox.env.insert("HPP_HOOK_DEADLINE".into(), "3".into());
}

/// Puts `dir` first on every PATH the sandbox gives (before the built binaries).
fn put_first_on_path(sandbox: &mut Sandbox, dir: PathBuf) {
    let path = sandbox
        .command("true", &sandbox.root)
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v)
        .expect("the sandbox sets PATH")
        .to_owned();
    let joined = std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&path)))
        .expect("PATH entries join");
    sandbox
        .env
        .insert("PATH".into(), joined.to_string_lossy().into_owned());
}

fn broken_git_hpp_blocks(host: Host, how: Broken) {
    let Some((mut sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    break_policy_hook(&mut sandbox, how);
    let calls = [
        Call::Shell("rm -rf src".into()),
        Call::Shell("find src -delete".into()),
    ];
    let (done, server) = session(&sandbox, host, &client, &calls);
    let why = format!("{}\n{}", done.run, server.dump());
    assert!(
        sandbox.root.join("src/lib.rs").exists(),
        "{host:?} deleted src past a git-hpp that {how:?}:\n{why}"
    );
    let said = match how {
        Broken::Hangs => "policy gate: git-hpp did not answer within 3s",
        Broken::Garbage => "policy gate: git-hpp exited 0 without a well-formed answer",
        Broken::Exit1 => "policy gate: git-hpp could not run (exit 1: policy: warning)",
    };
    assert!(
        server.saw(said),
        "{host:?}: the model never heard {said:?}:\n{why}"
    );
}

#[test]
fn claude_code_a_hung_git_hpp_blocks_at_the_deadline() {
    broken_git_hpp_blocks(Host::ClaudeCode, Broken::Hangs);
}

#[test]
fn codex_a_hung_git_hpp_blocks_at_the_deadline() {
    broken_git_hpp_blocks(Host::Codex, Broken::Hangs);
}

#[test]
fn claude_code_a_garbage_printing_git_hpp_blocks() {
    broken_git_hpp_blocks(Host::ClaudeCode, Broken::Garbage);
}

#[test]
fn codex_a_garbage_printing_git_hpp_blocks() {
    broken_git_hpp_blocks(Host::Codex, Broken::Garbage);
}

#[test]
fn claude_code_an_exit_1_git_hpp_blocks() {
    broken_git_hpp_blocks(Host::ClaudeCode, Broken::Exit1);
}

#[test]
fn codex_an_exit_1_git_hpp_blocks() {
    broken_git_hpp_blocks(Host::Codex, Broken::Exit1);
}

/// Every spelling of a recursive delete or a discard the issue names, in the order the model
/// asks for them.
const DELETES: [&str; 9] = [
    "rm -r src",
    "rm -R src",
    "rm --recursive src",
    "find src -type f -exec rm {} +",
    "python3 -c \"import shutil; shutil.rmtree('src')\"",
    "git clean -fdx",
    "git reset --hard",
    "git checkout -- .",
    "git restore .",
];

/// A repository whose `src/lib.rs` has an uncommitted edit and whose `notes.txt` is untracked,
/// with the modules installed and committed (so `git clean` has only `notes.txt` to take).
fn work_at_risk(host: Host) -> Option<(Sandbox, PathBuf)> {
    let (sandbox, client) = repo(host)?;
    install_modules(&sandbox, host);
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "install the modules"]);
    std::fs::write(
        sandbox.root.join("src/lib.rs"),
        "pub fn f() { /* unsaved */ }\n",
    )
    .expect("the sandbox is writable");
    std::fs::write(sandbox.root.join("notes.txt"), "mine\n").expect("the sandbox is writable");
    Some((sandbox, client))
}

fn every_delete_spelling(host: Host) {
    let Some((sandbox, client)) = work_at_risk(host) else {
        return;
    };
    let calls: Vec<Call> = DELETES.iter().map(|c| Call::Shell((*c).into())).collect();
    let (done, server) = session(&sandbox, host, &client, &calls);
    let why = format!("{}\n{}", done.run, server.dump());
    assert_eq!(
        std::fs::read_to_string(sandbox.root.join("src/lib.rs"))
            .ok()
            .as_deref(),
        Some("pub fn f() { /* unsaved */ }\n"),
        "{host:?}: src/lib.rs or its uncommitted edit was lost:\n{why}"
    );
    assert!(
        sandbox.root.join("notes.txt").exists(),
        "{host:?}: the untracked notes.txt was lost:\n{why}"
    );
    let heard = server.turns().last().map_or(0, |r| {
        r.body
            .matches("by git hpp policy (rule recursive-delete")
            .count()
            + r.body
                .matches("by git hpp policy (rule discard-work")
                .count()
    });
    assert!(
        heard >= DELETES.len(),
        "{host:?}: the model heard the policy {heard} times for {} commands:\n{why}",
        DELETES.len()
    );
}

#[test]
fn claude_code_every_spelling_of_a_recursive_delete_is_refused() {
    every_delete_spelling(Host::ClaudeCode);
}

#[test]
fn codex_every_spelling_of_a_recursive_delete_is_refused() {
    every_delete_spelling(Host::Codex);
}

/// With the reference's verdicts the same commands destroy the work (the checks above can
/// fail), and `git hpp restore --apply` from the checkpoint the policy gate took before the
/// first of them brings every file back.
fn reference_verdicts(host: Host) {
    let Some((sandbox, client)) = work_at_risk(host) else {
        return;
    };
    sandbox.git(["config", "hpp.policyRules", "reference"]);
    let calls: Vec<Call> = DELETES.iter().map(|c| Call::Shell((*c).into())).collect();
    let (done, _) = session(&sandbox, host, &client, &calls);
    // `git reset --hard` brings back the committed src/lib.rs; the edit and notes.txt are gone.
    let edit = std::fs::read_to_string(sandbox.root.join("src/lib.rs")).unwrap_or_default();
    assert!(
        !edit.contains("unsaved") && !sandbox.root.join("notes.txt").exists(),
        "{host:?} kept the work under the reference's verdicts:\n{}",
        done.run
    );
    let listed = sandbox
        .hpp_in(&sandbox.root, &["restore", "--list", "--json"])
        .json(0);
    let first = listed["checkpoints"][0]["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("{host:?}: no checkpoint was taken:\n{listed}"))
        .to_owned();
    assert_eq!(listed["checkpoints"][0]["command"], DELETES[0], "{listed}");
    sandbox
        .hpp_in(&sandbox.root, &["restore", &first, "--apply"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(sandbox.root.join("src/lib.rs"))
            .ok()
            .as_deref(),
        Some("pub fn f() { /* unsaved */ }\n"),
        "{host:?}: restore did not bring the edit back"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.root.join("notes.txt"))
            .ok()
            .as_deref(),
        Some("mine\n"),
        "{host:?}: restore did not bring notes.txt back"
    );
}

#[test]
fn control_claude_code_with_the_reference_verdicts_loses_the_work_and_restore_brings_it_back() {
    reference_verdicts(Host::ClaudeCode);
}

#[test]
fn control_codex_with_the_reference_verdicts_loses_the_work_and_restore_brings_it_back() {
    reference_verdicts(Host::Codex);
}

/// A shell call that writes `line` into `path`: on Codex the shell-borne patch Codex applies
/// itself (`apply_patch <<'EOF'`), on Claude Code a redirection.
fn shell_write(host: Host, path: &str, line: &str) -> Call {
    Call::Shell(match host {
        Host::Codex => format!(
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {path}\n+{line}\n*** End Patch\nEOF\n"
        ),
        Host::ClaudeCode => format!("echo '{line}' > {path}"),
    })
}

fn shell_borne_secret(host: Host, hooks: bool) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    if hooks {
        install_modules(&sandbox, host);
    }
    let calls = [shell_write(host, "deploy.env", AWS_LINE)];
    let (done, server) = session(&sandbox, host, &client, &calls);
    let why = format!("{}\n{}", done.run, server.dump());
    let written = sandbox.root.join("deploy.env").exists();
    if hooks {
        assert!(!written, "{host:?} wrote the key through the shell:\n{why}");
        assert!(
            server.saw("secret guard: this write puts an AWS access key id into deploy.env"),
            "{host:?}: the model never heard the guard:\n{why}"
        );
    } else {
        assert!(
            written,
            "{host:?} did not apply the shell call at all:\n{why}"
        );
    }
}

#[test]
fn codex_a_shell_borne_patch_with_a_secret_is_refused() {
    shell_borne_secret(Host::Codex, true);
}

#[test]
fn claude_code_a_redirection_with_a_secret_is_refused() {
    shell_borne_secret(Host::ClaudeCode, true);
}

#[test]
fn control_codex_applies_a_shell_borne_patch_itself_without_the_hooks() {
    shell_borne_secret(Host::Codex, false);
}

#[test]
fn control_claude_code_runs_the_redirection_without_the_hooks() {
    shell_borne_secret(Host::ClaudeCode, false);
}

fn shell_borne_lane_write(host: Host, hooks: bool) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    if hooks {
        install_modules(&sandbox, host);
    }
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "--allow-empty", "-m", "install the modules"]);
    for (id, territory) in [("ui", "src/ui"), ("api", "src/api")] {
        let args = [
            "lane",
            "start",
            id,
            "--role",
            "maker",
            "--model",
            "m",
            "--territory",
            territory,
        ];
        sandbox.hpp_in(&sandbox.root, &args).ok();
    }
    let lane = sandbox.path("work.lanes/ui");
    for dir in ["src/api", "src/ui"] {
        std::fs::create_dir_all(lane.join(dir)).expect("the lane is writable");
    }
    let calls = [
        shell_write(host, "src/api/handler.rs", "pub fn handle() {}"),
        shell_write(host, "src/ui/view.rs", "pub fn view() {}"),
    ];
    let (done, server) = session_in(&sandbox, &lane, host, &client, &calls);
    let why = format!("{}\n{}", done.run, server.dump());
    if !hooks {
        assert!(
            lane.join("src/api/handler.rs").exists(),
            "{host:?}: without the hooks the shell write did not land either:\n{why}"
        );
        return;
    }
    assert!(
        !lane.join("src/api/handler.rs").exists(),
        "{host:?}: a shell write landed in another lane's territory:\n{why}"
    );
    assert!(
        server.saw("lane territory guard: src/api/handler.rs is outside lane ui"),
        "{host:?}: the model never heard the territory guard:\n{why}"
    );
    assert!(
        lane.join("src/ui/view.rs").exists(),
        "{host:?}: the shell write inside the lane's territory did not land:\n{why}"
    );
}

#[test]
fn codex_a_shell_borne_patch_outside_the_lane_is_refused() {
    shell_borne_lane_write(Host::Codex, true);
}

#[test]
fn control_codex_without_the_hooks_a_shell_borne_patch_lands_outside_the_lane() {
    shell_borne_lane_write(Host::Codex, false);
}

#[test]
fn claude_code_a_redirection_outside_the_lane_is_refused() {
    shell_borne_lane_write(Host::ClaudeCode, true);
}

#[test]
fn control_claude_code_without_the_hooks_a_redirection_lands_outside_the_lane() {
    shell_borne_lane_write(Host::ClaudeCode, false);
}

/// A criterion longer than the stop's budget: the stop is blocked with what is unchecked (never
/// let go as if it passed), the session still ends, and the run, left going in its own process
/// group, records its evidence after the client exited.
fn slow_criterion(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    sandbox.git([
        "config",
        "--add",
        "hpp.criterion",
        r#"["sh", "-c", "sleep 8"]"#,
    ]);
    sandbox.git(["config", "hpp.evidenceGate.budgetSeconds", "2"]);
    let (done, server) = session(&sandbox, host, &client, &[]);
    let why = format!("{}\n{}", done.run, server.dump());
    assert!(
        server.saw("Not checked yet: criterion 1 (sh -c sleep 8) is still running"),
        "{host:?}: the agent was never told the criterion is unchecked:\n{why}"
    );
    let recorded = || {
        sandbox
            .git(["for-each-ref", "--format=%(refname)", "refs/hpp/evidence/"])
            .contains("stop-criterion-1-")
    };
    let started = std::time::Instant::now();
    while !recorded() && started.elapsed() < std::time::Duration::from_secs(20) {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(
        recorded(),
        "{host:?}: the criterion's run did not outlive the session:\n{why}"
    );
}

/// Inside the budget the same kind of criterion is waited for: the stop takes its verdict, and
/// nothing is reported unchecked.
fn criterion_inside_the_budget(host: Host) {
    let Some((sandbox, client)) = repo(host) else {
        return;
    };
    install_modules(&sandbox, host);
    sandbox.git([
        "config",
        "--add",
        "hpp.criterion",
        r#"["sh", "-c", "sleep 2"]"#,
    ]);
    let (done, server) = session(&sandbox, host, &client, &[]);
    let why = format!("{}\n{}", done.run, server.dump());
    assert!(
        !server.saw("Not checked yet"),
        "{host:?}: a criterion inside the budget was reported unchecked:\n{why}"
    );
    let listed = sandbox
        .hpp_in(&sandbox.root, &["evidence", "list", "--json"])
        .json(0);
    assert!(
        listed.to_string().contains("stop-criterion-1") && listed.to_string().contains("passed"),
        "{host:?}: the stop did not take the criterion's verdict:\n{listed}\n{why}"
    );
}

#[test]
fn control_claude_code_a_criterion_inside_the_budget_is_waited_for() {
    criterion_inside_the_budget(Host::ClaudeCode);
}

#[test]
fn control_codex_a_criterion_inside_the_budget_is_waited_for() {
    criterion_inside_the_budget(Host::Codex);
}

#[test]
fn claude_code_a_criterion_past_the_stops_budget_is_reported_unchecked_and_runs_on() {
    slow_criterion(Host::ClaudeCode);
}

#[test]
fn codex_a_criterion_past_the_stops_budget_is_reported_unchecked_and_runs_on() {
    slow_criterion(Host::Codex);
}

/// How the plugin `install --plugin` writes is enabled for a headless session.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Route {
    /// `claude --plugin-dir .claude/plugins/git-hpp -p …`.
    PluginDir,
    /// `claude plugin marketplace add ./` then `claude plugin install git-hpp@git-hpp-workspace`.
    Marketplace,
    /// `.claude/settings.json` with `extraKnownMarketplaces` and `enabledPlugins`, committed.
    Settings,
}

/// Runs `rm -rf src` in a headless Claude Code session with the plugin enabled by `route`;
/// returns whether src survived.
fn plugin_route_keeps_src(route: Route) -> Option<bool> {
    let (sandbox, client) = repo(Host::ClaudeCode)?;
    sandbox
        .hpp([
            "install",
            "--host",
            "claude-code",
            "--bundle",
            "reliable-coding",
            "--plugin",
            "--apply",
        ])
        .ok();
    let claude = |args: &[&str]| {
        let mut cmd = sandbox.command(&client.display().to_string(), &sandbox.root);
        cmd.env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("HTTPS_PROXY", "http://127.0.0.1:9")
            .env("HTTP_PROXY", "http://127.0.0.1:9")
            .args(args);
        let run = crate::harness::Run::from_output(&cmd.output().expect("claude runs"));
        assert_eq!(run.code, 0, "claude {args:?}: {run}");
    };
    let mut extra: Vec<String> = Vec::new();
    match route {
        Route::PluginDir => {
            extra = vec!["--plugin-dir".into(), ".claude/plugins/git-hpp".into()];
        }
        Route::Marketplace => {
            claude(&["plugin", "marketplace", "add", "./"]);
            claude(&["plugin", "install", "git-hpp@git-hpp-workspace"]);
        }
        Route::Settings => {
            std::fs::write(
                sandbox.root.join(".claude/settings.json"),
                r#"{"extraKnownMarketplaces": {"git-hpp-workspace": {"source": {"source": "directory", "path": "."}}}, "enabledPlugins": {"git-hpp@git-hpp-workspace": true}}"#,
            )
            .expect("the sandbox is writable");
        }
    }
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "the plugin"]);
    let server = ModelServer::start(Script {
        root: sandbox.root.clone(),
        calls: vec![Call::Shell("rm -rf src".into())],
    });
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    let done = run_client_with(
        &sandbox,
        (Host::ClaudeCode, &client),
        &server,
        &sandbox.root,
        true,
        ("do the scripted work", &extra),
    );
    assert!(done.code == 0, "{route:?}: {}\n{}", done.run, server.dump());
    Some(sandbox.root.join("src/lib.rs").exists())
}

#[test]
fn the_plugin_routes_install_suggests_for_headless_sessions_load_the_hooks() {
    for route in [Route::PluginDir, Route::Marketplace] {
        let Some(kept) = plugin_route_keeps_src(route) else {
            return;
        };
        assert!(
            kept,
            "{route:?}: rm -rf src ran, so the plugin's hooks did not load"
        );
    }
}

#[test]
fn control_committed_plugin_settings_load_nothing_in_a_headless_session() {
    // Why `install --plugin` says this route needs an interactive session that trusts the
    // folder first: headless, it loads no hook, and the policy gate is absent.
    if let Some(kept) = plugin_route_keeps_src(Route::Settings) {
        assert!(
            !kept,
            "the committed settings now load the plugin headless: say so in PLUGIN_NOTE"
        );
    }
}

#[test]
fn the_codex_install_says_the_installed_version_runs_hooks_with_no_feature_flag() {
    // The Codex sessions above run the hooks with no `[features]` hooks entry in their config,
    // which is what this sentence promises for the version on PATH.
    let Some((mut sandbox, client)) = repo(Host::Codex) else {
        return;
    };
    let bin = client
        .parent()
        .expect("the client's directory")
        .to_path_buf();
    put_first_on_path(&mut sandbox, bin);
    let doc = sandbox
        .hpp(["install", "--host", "codex", "--bundle", "solo", "--json"])
        .json(0);
    let note = doc["wiring_note"].as_str().unwrap_or_default();
    let (_, version) = Host::Codex.package();
    assert!(
        note.contains(&format!(
            "the codex on PATH is {version}, which runs hooks with no feature flag"
        )),
        "{note}"
    );
    // A config that turns them off is named.
    std::fs::create_dir_all(sandbox.path("home/.codex")).expect("writable");
    std::fs::write(
        sandbox.path("home/.codex/config.toml"),
        "[features]\nhooks = false\n",
    )
    .expect("writable");
    let doc = sandbox
        .hpp(["install", "--host", "codex", "--bundle", "solo", "--json"])
        .json(0);
    assert!(
        doc["wiring_note"]
            .as_str()
            .is_some_and(|n| n.contains("your config.toml turns hooks off")),
        "{doc}"
    );
}
