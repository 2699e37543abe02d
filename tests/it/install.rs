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
        "\"$CLAUDE_PROJECT_DIR\"/.claude/hpp/operator-kit/hooks/policy-gate.sh claude-code"
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
    // What a user does for Codex to run them (issue 30): `codex exec` never asks.
    let note = doc["wiring_note"].as_str().unwrap();
    assert!(
        note.contains("`codex exec` never asks")
            && note.contains("Trust the project")
            && note.contains("Review and trust the hooks")
            && !note.contains("Codex asks you"),
        "{note}"
    );
    // The hooks are written where Codex reads a repository's hooks, in the shape it reads.
    let written: Value = serde_json::from_slice(
        &std::fs::read(sandbox.root.join(".codex/hooks.json")).expect("written"),
    )
    .expect("valid JSON");
    assert_eq!(written, doc["wiring"]);
    assert!(
        written["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with(" codex")
    );
}

#[test]
fn an_existing_codex_hooks_file_gains_the_missing_hooks_and_keeps_its_own() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    std::fs::create_dir_all(sandbox.root.join(".codex")).unwrap();
    let mine = serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-own-check"}]}]}});
    std::fs::write(sandbox.root.join(".codex/hooks.json"), mine.to_string()).unwrap();
    let args = [
        "--module", "lane-kit", "--host", "codex", "--apply", "--json",
    ];
    install(&sandbox, &dist, &sandbox.root, &args).json(0);
    let merged: Value =
        serde_json::from_slice(&std::fs::read(sandbox.root.join(".codex/hooks.json")).unwrap())
            .unwrap();
    assert_eq!(
        merged["hooks"]["Stop"][0], mine["hooks"]["Stop"][0],
        "its own hook kept"
    );
    assert!(merged["hooks"]["PreToolUse"].is_array(), "{merged}");
    // A second module adds its hooks; the first's stay; a re-run changes nothing.
    let operator = [
        "--module",
        "operator-kit",
        "--host",
        "codex",
        "--apply",
        "--json",
    ];
    install(&sandbox, &dist, &sandbox.root, &operator).json(0);
    let both = std::fs::read(sandbox.root.join(".codex/hooks.json")).unwrap();
    let text = String::from_utf8_lossy(&both);
    assert!(
        text.contains("territory-guard.sh") && text.contains("policy-gate.sh"),
        "{text}"
    );
    let again = install(&sandbox, &dist, &sandbox.root, &operator).json(0);
    assert_eq!(again["mode"], "no-op", "{again}");
    assert_eq!(
        std::fs::read(sandbox.root.join(".codex/hooks.json")).unwrap(),
        both
    );
}

#[test]
fn control_a_codex_hooks_file_that_is_not_a_hooks_document_is_kept_as_a_conflict() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    std::fs::create_dir_all(sandbox.root.join(".codex")).unwrap();
    std::fs::write(sandbox.root.join(".codex/hooks.json"), "not json\n").unwrap();
    let doc = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &[
            "--module", "lane-kit", "--host", "codex", "--apply", "--json",
        ],
    )
    .json(1);
    let conflict = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["target"] == ".codex/hooks.json")
        .expect("planned");
    assert_eq!(conflict["action"], "conflict");
    assert_eq!(
        std::fs::read_to_string(sandbox.root.join(".codex/hooks.json")).unwrap(),
        "not json\n",
        "the user's file is kept"
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

/// This repository's module directory `id`.
fn repo_module(id: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("modules")
        .join(id)
}

const MODULES: [&str; 4] = [
    "operator-kit",
    "lane-kit",
    "continuity-kit",
    "gotcha-memory",
];

#[test]
fn with_the_built_in_manifest_the_embedded_modules_install_anywhere_byte_identical() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::empty();
    let target = sandbox.path("workspace");
    std::fs::create_dir_all(&target).unwrap();
    let plan = sandbox
        .hpp([
            "install",
            "--bundle",
            "reliable-coding",
            "--host",
            "claude-code",
            "--target",
            target.to_str().unwrap(),
            "--json",
        ])
        .json(0);
    for module in plan["modules"].as_array().unwrap() {
        assert_eq!(module["checksums"], "verified", "{module}");
        assert_eq!(module["source"], "built-in", "{module}");
    }
    sandbox
        .hpp([
            "install",
            "--bundle",
            "reliable-coding",
            "--host",
            "claude-code",
            "--target",
            target.to_str().unwrap(),
            "--apply",
        ])
        .ok();
    for id in MODULES {
        let installed = tree(&target.join(".claude/hpp").join(id));
        let shipped: Vec<(String, Vec<u8>)> = tree(&repo_module(id))
            .into_iter()
            .filter(|(path, _)| path != "CHECKSUMS.txt")
            .collect();
        assert_eq!(
            installed.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            shipped.iter().map(|(p, _)| p).collect::<Vec<_>>()
        );
        assert!(installed == shipped, "{id}: the installed bytes differ");
        for (path, _) in installed.iter().filter(|(p, _)| p.starts_with("hooks/")) {
            let mode = std::fs::metadata(target.join(".claude/hpp").join(id).join(path))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o111, 0o111, "{id}/{path} is executable: {mode:o}");
        }
    }
    let readiness: Value = serde_json::from_str(
        &sandbox
            .hpp_in(
                &target,
                &["init", "--bundle", "solo", "--host", "codex", "--json"],
            )
            .stdout,
    )
    .unwrap();
    let item = |id: &str| {
        readiness["readiness"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(item("distribution"), "verified");
    assert_eq!(item("checksums"), "verified");
}

#[test]
fn claude_code_finds_each_skill_and_agent_where_it_looks_for_them() {
    let sandbox = Sandbox::empty();
    sandbox
        .hpp([
            "install",
            "--bundle",
            "reliable-coding",
            "--host",
            "claude-code",
            "--apply",
        ])
        .ok();
    let mut skills = 0;
    let mut agents = 0;
    for id in MODULES {
        for (path, bytes) in tree(&repo_module(id)) {
            let discovered = if let Some(skill) = path.strip_prefix("skills/") {
                skills += 1;
                sandbox.root.join(".claude/skills").join(skill)
            } else if let Some(agent) = path.strip_prefix("agents/") {
                agents += 1;
                sandbox.root.join(".claude/agents").join(agent)
            } else {
                continue;
            };
            assert_eq!(std::fs::read(&discovered).unwrap(), bytes, "{path}");
        }
    }
    assert!(
        skills >= 4 && agents >= 4,
        "{skills} skills, {agents} agents"
    );
}

#[test]
fn control_a_different_skill_where_claude_code_looks_is_kept_as_a_conflict() {
    let sandbox = Sandbox::empty();
    let mine = sandbox.root.join(".claude/skills/hpp-loop/SKILL.md");
    std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
    std::fs::write(&mine, "my own loop skill\n").unwrap();
    let run = sandbox
        .hpp([
            "install",
            "--module",
            "operator-kit",
            "--host",
            "claude-code",
            "--apply",
        ])
        .exit(1);
    assert!(
        run.stdout
            .contains("conflict .claude/skills/hpp-loop/SKILL.md"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "my own loop skill\n"
    );
    assert!(
        sandbox
            .root
            .join(".claude/hpp/operator-kit/skills/hpp-loop/SKILL.md")
            .is_file()
    );
}

/// Every `(event, matcher, command)` of a printed wiring block, sorted.
fn entries(wiring: &Value) -> Vec<(String, Option<String>, String)> {
    let mut out = Vec::new();
    for (event, list) in wiring["hooks"].as_object().unwrap() {
        for entry in list.as_array().unwrap() {
            for hook in entry["hooks"].as_array().unwrap() {
                out.push((
                    event.clone(),
                    entry.get("matcher").map(|m| m.as_str().unwrap().to_owned()),
                    hook["command"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn printed_wiring(sandbox: &Sandbox, selection: &[&str], host: &str) -> Value {
    let mut args = vec!["install", "--host", host, "--json"];
    args.extend_from_slice(selection);
    sandbox.hpp_in(&sandbox.root, &args).json(0)["wiring"].clone()
}

#[test]
fn the_codex_wiring_passes_codex_and_matchers_follow_the_manifest() {
    let sandbox = Sandbox::empty();
    let codex = entries(&printed_wiring(
        &sandbox,
        &["--bundle", "reliable-coding"],
        "codex",
    ));
    assert!(
        codex.iter().all(|(_, _, c)| c.ends_with(".sh codex")),
        "{codex:?}"
    );
    let claude = entries(&printed_wiring(
        &sandbox,
        &["--bundle", "reliable-coding"],
        "claude-code",
    ));
    assert!(
        claude
            .iter()
            .all(|(_, _, c)| c.ends_with(".sh claude-code")),
        "{claude:?}"
    );
    let matcher = |all: &[(String, Option<String>, String)], script: &str| {
        all.iter()
            .find(|(e, _, c)| e == "PreToolUse" && c.contains(script))
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(matcher(&codex, "policy-gate").as_deref(), Some("Bash"));
    assert_eq!(matcher(&claude, "policy-gate").as_deref(), Some("Bash"));
    assert_eq!(
        matcher(&codex, "territory-guard").as_deref(),
        Some("apply_patch")
    );
    assert_eq!(
        matcher(&claude, "territory-guard").as_deref(),
        Some("Edit|Write|NotebookEdit")
    );
    for (event, matcher, command) in codex.iter().chain(&claude) {
        if ["SessionStart", "Stop", "PreCompact"].contains(&event.as_str()) {
            assert_eq!(matcher, &None, "{event} {command}");
        }
        assert_ne!(matcher.as_deref(), Some("*"), "{event} {command}");
    }
}

#[test]
fn control_a_manifest_without_matchers_wires_every_tool() {
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let path = dist.join("hpp.manifest.json");
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for hook in value["hooks"].as_array_mut().unwrap() {
        hook.as_object_mut().unwrap().remove("matcher");
    }
    std::fs::write(&path, value.to_string()).unwrap();
    let doc = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &["--bundle", "reliable-coding", "--host", "codex", "--json"],
    )
    .json(0);
    let all = entries(&doc["wiring"]);
    assert!(all.iter().all(|(_, m, _)| m.is_none()), "{all:?}");
    value["hooks"][0]["matcher"] = "".into();
    std::fs::write(&path, value.to_string()).unwrap();
    let reason = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &["--bundle", "solo", "--host", "codex"],
    )
    .refused();
    assert!(
        reason.ends_with("hooks[operator-kit/policy-gate].matcher must be a non-empty string"),
        "{reason}"
    );
}

/// The JSON block under the README heading that starts with `heading`, if any.
fn readme_block(readme: &str, heading: &str) -> Option<Value> {
    let at = readme.find(&format!("\n{heading}"))?;
    let start = readme[at..].find("```json\n")? + at + "```json\n".len();
    let end = readme[start..].find("```")? + start;
    Some(serde_json::from_str(&readme[start..end]).expect("the README block is JSON"))
}

#[test]
fn each_module_readme_shows_the_wiring_install_prints() {
    let sandbox = Sandbox::empty();
    for id in MODULES {
        let readme = std::fs::read_to_string(repo_module(id).join("README.md")).unwrap();
        let claude = readme_block(&readme, "## Claude Code").expect("a Claude Code block");
        assert_eq!(
            claude,
            printed_wiring(&sandbox, &["--module", id], "claude-code"),
            "{id}"
        );
        if let Some(codex) = readme_block(&readme, "## Codex CLI") {
            assert_eq!(
                codex,
                printed_wiring(&sandbox, &["--module", id], "codex"),
                "{id}"
            );
        }
    }
}

#[test]
fn control_a_readme_block_with_repository_paths_does_not_match() {
    let sandbox = Sandbox::empty();
    let readme = std::fs::read_to_string(repo_module("lane-kit").join("README.md")).unwrap();
    let block = readme_block(&readme, "## Claude Code").unwrap();
    let stale: Value = serde_json::from_str(
        &block
            .to_string()
            .replace(".claude/hpp/lane-kit", "modules/lane-kit"),
    )
    .unwrap();
    assert_ne!(
        stale,
        printed_wiring(&sandbox, &["--module", "lane-kit"], "claude-code")
    );
}

/// Every `(event, matcher, command)` of a plugin's hooks.json, checked against the shape
/// Claude Code's hooks reference documents: event → [{matcher?, hooks: [{type, command}]}].
fn plugin_hook_entries(hooks: &Value) -> Vec<(String, Option<String>, String)> {
    let events = hooks["hooks"]
        .as_object()
        .expect("hooks is an object of events");
    let mut out = Vec::new();
    for (event, list) in events {
        for entry in list.as_array().expect("each event holds a list") {
            let matcher = entry
                .get("matcher")
                .map(|m| m.as_str().expect("a matcher is a string").to_owned());
            for hook in entry["hooks"].as_array().expect("each entry holds hooks") {
                assert_eq!(hook["type"], "command", "{hook}");
                out.push((
                    event.clone(),
                    matcher.clone(),
                    hook["command"].as_str().expect("a command").to_owned(),
                ));
            }
        }
    }
    out
}

#[test]
fn a_claude_code_plugin_is_written_in_the_documented_layout_and_its_hooks_run() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::repo();
    let target = sandbox.root.clone();
    let args = [
        "install",
        "--bundle",
        "reliable-coding",
        "--host",
        "claude-code",
        "--plugin",
        "--apply",
        "--json",
    ];
    let applied = sandbox.hpp_in(&target, &args).json(0);
    assert_eq!(applied["plugin"], true);
    let plugin = target.join(".claude/plugins/git-hpp");
    let read = |path: &Path| -> Value {
        serde_json::from_slice(&std::fs::read(path).expect("written")).expect("valid JSON")
    };
    let manifest = read(&plugin.join(".claude-plugin/plugin.json"));
    assert_eq!(manifest["name"], "git-hpp");
    assert!(manifest["version"].is_string() && manifest["description"].is_string());
    let marketplace = read(&target.join(".claude-plugin/marketplace.json"));
    assert_eq!(marketplace["name"], "git-hpp-workspace");
    assert!(marketplace["owner"]["name"].is_string());
    let listed = &marketplace["plugins"][0];
    assert_eq!(
        listed["name"], manifest["name"],
        "the entry names the plugin"
    );
    let source = listed["source"].as_str().expect("a relative source");
    assert!(source.starts_with("./"), "{source}");
    assert!(
        target
            .join(source)
            .join(".claude-plugin/plugin.json")
            .is_file(),
        "the marketplace's source is the plugin"
    );
    // Skills and agents where the plugin loader discovers them, nowhere else.
    for skill in ["hpp-loop", "hpp-lanes", "hpp-handoff", "hpp-gotchas"] {
        let text = std::fs::read_to_string(plugin.join(format!("skills/{skill}/SKILL.md")))
            .expect("the skill is at the plugin root");
        assert!(text.starts_with("---\n"), "{skill} has front matter");
        assert!(text.contains(&format!("name: {skill}")), "{skill}");
    }
    assert!(plugin.join("agents/lens-deletion.md").is_file());
    assert!(!plugin.join("modules/operator-kit/skills").exists());
    // Every hook command names a script of the plugin through ${CLAUDE_PLUGIN_ROOT}, with a
    // current tool name in its matcher.
    let hooks = read(&plugin.join("hooks/hooks.json"));
    assert!(hooks["description"].is_string());
    let entries = plugin_hook_entries(&hooks);
    assert!(entries.len() >= 8, "{entries:?}");
    for (event, matcher, command) in &entries {
        let script = command
            .strip_prefix("\"${CLAUDE_PLUGIN_ROOT}\"/")
            .and_then(|rest| rest.strip_suffix(" claude-code"))
            .unwrap_or_else(|| panic!("{command}"));
        let mode = std::fs::metadata(plugin.join(script))
            .unwrap_or_else(|_| panic!("{script} is in the plugin"))
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, "{script} is executable");
        if let Some(matcher) = matcher {
            assert!(!matcher.contains("MultiEdit"), "{event}: {matcher}");
        }
    }
    assert!(
        entries
            .iter()
            .any(|(e, m, _)| e == "PreToolUse" && m.as_deref() == Some("Edit|Write|NotebookEdit")),
        "{entries:?}"
    );
    // The policy gate runs from the plugin as Claude Code runs it: the command through a shell
    // with CLAUDE_PLUGIN_ROOT set, the PreToolUse payload on stdin.
    let (_, _, command) = entries
        .iter()
        .find(|(e, m, _)| e == "PreToolUse" && m.as_deref() == Some("Bash"))
        .expect("the policy gate");
    let payload = serde_json::json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git push --force origin main"},
        "cwd": target,
        "session_id": "s",
    });
    let mut hook_cmd = sandbox.command("sh", &target);
    hook_cmd
        .args(["-c", command])
        .env("CLAUDE_PLUGIN_ROOT", &plugin);
    let run = crate::harness::Run::fed(hook_cmd, &payload.to_string());
    assert!(
        run.stdout.contains("deny") || run.code == 2,
        "a force push is not allowed through:\n{run}"
    );
    // A re-run writes nothing new.
    let again = sandbox.hpp_in(&target, &args).json(0);
    assert_eq!(again["mode"], "no-op", "{again}");
}

#[test]
fn control_a_plugin_for_codex_is_refused_and_nothing_is_written() {
    let sandbox = Sandbox::repo();
    let reason = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "install", "--bundle", "solo", "--host", "codex", "--plugin", "--apply",
            ],
        )
        .refused();
    assert!(
        reason.contains("--plugin writes a Claude Code plugin"),
        "{reason}"
    );
    assert!(!sandbox.root.join(".claude").exists());
    assert!(!sandbox.root.join(".claude-plugin").exists());
}

#[test]
fn install_with_no_bundle_or_module_lists_the_names_to_choose_from() {
    // Issue 31, friction 8: `install --plugin` without `--bundle` was a usage error that named
    // no bundle. Now a refusal lists the manifest's bundles and modules, and writes nothing.
    let sandbox = Sandbox::empty();
    let dist = sealed_distribution(&sandbox);
    let before = tree(&sandbox.root);
    let reason = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &["--host", "claude-code", "--plugin"],
    )
    .refused();
    assert!(reason.contains("--bundle "), "{reason}");
    assert!(reason.contains("solo"), "the bundles are named: {reason}");
    assert!(reason.contains("operator-kit"), "the modules too: {reason}");
    assert_eq!(tree(&sandbox.root), before);
    // Both at once is still a usage error.
    let both = install(
        &sandbox,
        &dist,
        &sandbox.root,
        &[
            "--host",
            "claude-code",
            "--bundle",
            "solo",
            "--module",
            "operator-kit",
        ],
    );
    assert_eq!(both.code, 3, "{both}");
}
