//! `git hpp install`: the plan writes nothing; `--apply` copies verified files under the host's
//! layout and prints the wiring; a re-run is a no-op; a different existing file is kept and
//! reported; unknown names and unsupported modules are refused with the reference's sentences.

use std::path::Path;

use serde_json::Value;

use crate::harness::Sandbox;
use crate::modules::{in_dist, sealed_distribution};

/// Lists every file under `dir` with its bytes, sorted.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for item in std::fs::read_dir(&current).unwrap() {
            let path = item.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn install(sandbox: &Sandbox, dist: &Path, target: &Path, extra: &[&str]) -> crate::harness::Run {
    let mut args = vec!["install", "--target", target.to_str().unwrap()];
    args.extend_from_slice(extra);
    in_dist(sandbox, dist, &args)
}

#[test]
fn the_plan_lists_files_and_wiring_and_writes_nothing() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let before = tree(&sandbox.root);
    let doc = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &["--bundle", "solo", "--host", "claude-code", "--json"],
    )
    .json(0);
    assert_eq!(tree(&sandbox.root), before);
    assert_eq!(doc["mode"], "plan");
    assert_eq!(doc["bundle"], "solo");
    let ids: Vec<&str> = doc["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["operator-kit", "continuity-kit"]);
    assert_eq!(doc["modules"][0]["checksums"], "verified");
    assert_eq!(doc["modules"][0]["integration"], "native");
    let targets: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["target"].as_str().unwrap())
        .collect();
    assert!(
        targets.contains(&".claude/hpp/operator-kit/hooks/policy-gate.sh"),
        "{targets:?}"
    );
    assert!(
        doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["action"] == "create")
    );
    let command = doc["wiring"]["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(
        command,
        "\"$CLAUDE_PROJECT_DIR\"/.claude/hpp/operator-kit/hooks/policy-gate.sh"
    );
    assert!(!doc["capabilities"].as_array().unwrap().is_empty());
}

#[test]
fn apply_copies_the_verified_bytes_and_a_rerun_is_a_no_op() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let args = ["--bundle", "solo", "--host", "claude-code"];
    let out = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &[&args[..], &["--apply"]].concat(),
    )
    .ok();
    assert!(
        out.contains("created .claude/hpp/operator-kit/hooks/policy-gate.sh"),
        "{out}"
    );
    assert!(
        out.contains("paste the hooks block into .claude/settings.json"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(
            sandbox
                .root
                .join(".claude/hpp/operator-kit/hooks/policy-gate.sh")
        )
        .unwrap(),
        std::fs::read(dist.join("modules/operator-kit/hooks/policy-gate.sh")).unwrap()
    );
    assert!(!sandbox.root.join(".claude/settings.json").exists());
    {
        use std::os::unix::fs::PermissionsExt;
        let source = dist.join("modules/operator-kit/hooks/policy-gate.sh");
        std::fs::set_permissions(&source, std::fs::Permissions::from_mode(0o755)).unwrap();
        let other = sandbox.path("other");
        std::fs::create_dir_all(&other).unwrap();
        install(&sandbox, &dist, &other, &[&args[..], &["--apply"]].concat()).ok();
        let mode = std::fs::metadata(other.join(".claude/hpp/operator-kit/hooks/policy-gate.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o111,
            0o111,
            "a hook script stays executable: {mode:o}"
        );
    }
    let after = tree(&sandbox.root);
    let again = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &[&args[..], &["--apply", "--json"]].concat(),
    )
    .json(0);
    assert_eq!(again["mode"], "no-op");
    assert_eq!(again["written"], 0);
    assert_eq!(tree(&sandbox.root), after);
}

#[test]
fn codex_gets_the_module_under_agents_and_each_skill_where_codex_looks() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let doc = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &[
            "--module", "lane-kit", "--host", "codex", "--apply", "--json",
        ],
    )
    .json(0);
    assert_eq!(doc["bundle"], "custom");
    assert_eq!(doc["modules"][0]["integration"], "explicit-command");
    assert!(
        sandbox
            .root
            .join(".agents/hpp/lane-kit/hooks/lane-register.sh")
            .is_file()
    );
    assert!(
        sandbox
            .root
            .join(".agents/skills/hpp-lane-kit-lane-kit/SKILL.md")
            .is_file()
    );
    assert!(
        doc["wiring_note"]
            .as_str()
            .unwrap()
            .contains("trust prompt")
    );
}

#[test]
fn a_different_existing_file_is_kept_and_reported_as_a_conflict() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let mine = sandbox
        .root
        .join(".claude/hpp/continuity-kit/hooks/handoff-write.sh");
    std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
    std::fs::write(&mine, "mine\n").unwrap();
    let run = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &["--bundle", "solo", "--host", "claude-code", "--apply"],
    )
    .exit(1);
    assert!(
        run.stdout
            .contains("conflict .claude/hpp/continuity-kit/hooks/handoff-write.sh"),
        "{run}"
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "mine\n");
    assert!(
        sandbox
            .root
            .join(".claude/hpp/operator-kit/hooks/policy-gate.sh")
            .is_file()
    );
}

#[test]
fn unknown_names_and_unsupported_modules_are_refused() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let root = sandbox.root.clone();
    let refuse = |extra: &[&str]| install(&sandbox, &dist, &root, extra).refused();
    assert_eq!(
        refuse(&["--bundle", "nope", "--host", "codex"]),
        "unknown bundle: nope"
    );
    assert_eq!(
        refuse(&["--bundle", "solo", "--host", "vim"]),
        "unknown host: vim (expected one of claude-code, codex)"
    );
    assert_eq!(
        refuse(&["--module", "ghost", "--host", "codex"]),
        "unknown module: ghost"
    );
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(dist.join("hpp.manifest.json")).unwrap())
            .unwrap();
    value["modules"][1]["hosts"]["codex"] = "unsupported".into();
    std::fs::write(dist.join("hpp.manifest.json"), value.to_string()).unwrap();
    assert_eq!(
        refuse(&["--bundle", "reliable-coding", "--host", "codex"]),
        "bundle reliable-coding requires lane-kit, unsupported on codex"
    );
    let missing = sandbox.path("nowhere");
    let reason = install(
        &sandbox,
        &dist,
        &missing,
        &["--bundle", "solo", "--host", "codex"],
    )
    .refused();
    assert!(
        reason.starts_with("target is not a directory: "),
        "{reason}"
    );
}

#[test]
fn control_a_tampered_module_is_not_installed() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    std::fs::write(
        dist.join("modules/operator-kit/hooks/loop-gate.sh"),
        "#!/bin/sh\nrm -rf /\n",
    )
    .unwrap();
    let before = tree(&sandbox.root);
    let plan = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &["--bundle", "solo", "--host", "claude-code", "--json"],
    )
    .json(0);
    assert_eq!(
        plan["modules"][0]["checksums"],
        "failed: changed: hooks/loop-gate.sh"
    );
    let reason = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &["--bundle", "solo", "--host", "claude-code", "--apply"],
    )
    .refused();
    assert_eq!(
        reason,
        "module operator-kit cannot be installed: failed: changed: hooks/loop-gate.sh"
    );
    assert_eq!(tree(&sandbox.root), before);
}

#[test]
fn with_the_built_in_manifest_the_plan_says_the_files_are_not_at_hand() {
    let sandbox = Sandbox::empty();
    let doc = sandbox
        .hpp(["install", "--bundle", "solo", "--host", "codex", "--json"])
        .json(0);
    assert_eq!(doc["modules"][0]["checksums"], "not-available");
    let reason = sandbox
        .hpp(["install", "--bundle", "solo", "--host", "codex", "--apply"])
        .refused();
    assert_eq!(
        reason,
        "module operator-kit cannot be installed: not-available"
    );
}
