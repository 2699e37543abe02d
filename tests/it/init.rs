//! `git hpp init`: the plan leaves the target byte-identical; `--apply` writes exactly
//! `.hpp/profile.json`; a re-run is a no-op; a different profile is kept; readiness lists every
//! check with its command; an unsupported module halts at configure; the refusals and usage
//! errors keep the reference's sentences.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::harness::Sandbox;
use crate::modules::{in_dist, sealed_distribution};

/// Hashes every file under `dir` (the git directory included), path by path.
fn fingerprint(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for item in std::fs::read_dir(&current).unwrap() {
            let path = item.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                let digest: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                out.push((
                    path.strip_prefix(dir).unwrap().display().to_string(),
                    digest,
                ));
            }
        }
    }
    out.sort();
    out
}

fn init(sandbox: &Sandbox, extra: &[&str]) -> crate::harness::Run {
    let mut args = vec!["init", "--non-interactive"];
    args.extend_from_slice(extra);
    sandbox.hpp_in(&sandbox.root, &args)
}

#[test]
fn the_plan_leaves_the_target_byte_identical() {
    let sandbox = Sandbox::repo();
    let before = fingerprint(&sandbox.root);
    let run = init(&sandbox, &["--json"]);
    assert!(run.code <= 1, "{run}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(fingerprint(&sandbox.root), before);
    assert_eq!(report["schema"], "hpp.init-report/v1");
    assert_eq!(report["mode"], "plan");
    assert_eq!(report["writes"][0]["action"], "would-write");
    let stages: Vec<&str> = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        stages,
        [
            "detect",
            "prereqs",
            "profile",
            "configure",
            "wire-suggest",
            "smoke"
        ]
    );
    assert_eq!(
        report["stages"][0]["summary"],
        "greenfield · 0 existing item(s) preserved"
    );

    let empty = Sandbox::empty();
    let run = init(&empty, &[]);
    assert_eq!(
        run.code, 0,
        "a plain directory is planned, as the reference plans it: {run}"
    );
    assert!(fingerprint(&empty.root).is_empty());
    assert!(
        run.stdout.contains(
            "repository   not-verified not a git repository yet: `git init` makes it one"
        ),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("> detecting host...           ✓ greenfield"),
        "{run}"
    );
    assert!(run.stdout.contains("git init"), "{run}");
}

#[test]
fn apply_writes_exactly_the_profile_and_a_rerun_is_a_no_op() {
    let sandbox = Sandbox::repo();
    let before = fingerprint(&sandbox.root);
    let run = init(
        &sandbox,
        &[
            "--apply",
            "--json",
            "--host",
            "codex",
            "--bundle",
            "solo",
            "--policy-mode",
            "enforce",
        ],
    );
    assert!(run.code <= 1, "{run}");
    let after = fingerprint(&sandbox.root);
    let added: Vec<&(String, String)> = after.iter().filter(|f| !before.contains(f)).collect();
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(added[0].0, ".hpp/profile.json");
    assert_eq!(after.len(), before.len() + 1);
    let profile: Value =
        serde_json::from_slice(&std::fs::read(sandbox.root.join(".hpp/profile.json")).unwrap())
            .unwrap();
    assert_eq!(profile["schema"], "hpp.init/v1");
    assert_eq!(profile["host"], "codex");
    assert_eq!(profile["bundle"], "solo");
    assert_eq!(
        profile["modules"],
        serde_json::json!(["operator-kit", "continuity-kit"])
    );
    assert_eq!(profile["policy_mode"], "enforce");
    assert_eq!(profile["protocol_version"], "2.1");

    let again: Value = serde_json::from_str(
        &init(
            &sandbox,
            &[
                "--apply",
                "--json",
                "--host",
                "codex",
                "--bundle",
                "solo",
                "--policy-mode",
                "enforce",
            ],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(again["mode"], "no-op");
    assert_eq!(again["writes"][0]["action"], "unchanged");
    assert_eq!(
        again["stages"][0]["summary"],
        "re-run · 1 existing item(s) preserved"
    );
    assert_eq!(fingerprint(&sandbox.root), after);
}

#[test]
fn control_a_different_profile_is_kept_and_reported_as_a_conflict() {
    let sandbox = Sandbox::repo();
    std::fs::create_dir_all(sandbox.root.join(".hpp")).unwrap();
    std::fs::write(sandbox.root.join(".hpp/profile.json"), "{\"mine\": true}\n").unwrap();
    let report = init(&sandbox, &["--apply", "--json"]).json(1);
    assert_eq!(report["writes"][0]["action"], "conflict");
    assert_eq!(report["status"], "warn");
    assert_eq!(
        std::fs::read_to_string(sandbox.root.join(".hpp/profile.json")).unwrap(),
        "{\"mine\": true}\n"
    );
}

#[test]
fn readiness_lists_every_check_with_the_command_that_reproduces_it() {
    let sandbox = Sandbox::repo();
    let report: Value = serde_json::from_str(&init(&sandbox, &["--json"]).stdout).unwrap();
    let readiness = &report["readiness"];
    let items = readiness["items"].as_array().unwrap();
    let ids: Vec<&str> = items.iter().map(|i| i["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "host",
            "git",
            "git-hpp",
            "repository",
            "manifest",
            "distribution",
            "checksums",
            "profile",
            "policy",
            "graph",
            "events",
            "wiring"
        ]
    );
    assert!(
        items
            .iter()
            .all(|i| !i["command"].as_str().unwrap().is_empty())
    );
    let status = |id: &str| {
        items.iter().find(|i| i["id"] == id).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(status("wiring"), "not-verified");
    assert_eq!(status("git"), "verified");
    assert_eq!(status("git-hpp"), "verified");
    assert_eq!(status("policy"), "verified");
    assert_eq!(status("events"), "verified");
    assert_eq!(status("profile"), "not-verified");
    // The built-in manifest's modules are embedded in the binary and verify anywhere.
    assert_eq!(status("checksums"), "verified");
    assert_eq!(status("distribution"), "verified");
    // One spelling: each item's status is the key of its count and of its cells.
    for item in items {
        let status = item["status"].as_str().unwrap();
        assert!(readiness[status].is_u64(), "no count keyed {status}");
        assert!(
            readiness["cells"][status].is_u64(),
            "no cells keyed {status}"
        );
    }
    assert!(readiness.get("not_verified").is_none(), "{readiness}");
    let total = readiness["verified"].as_u64().unwrap()
        + readiness["failed"].as_u64().unwrap()
        + readiness["not-verified"].as_u64().unwrap();
    assert_eq!(total, 12);
    let cells: u64 = readiness["cells"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(cells, 20);
    let wire = &report["stages"][4];
    assert!(wire["detail"]["wiring"]["hooks"].is_object());
    assert!(
        report["next"][0]
            .as_str()
            .unwrap()
            .starts_with("git hpp install --bundle reliable-coding --host claude-code")
    );
}

#[test]
fn control_a_broken_loop_in_the_target_fails_the_events_check() {
    let sandbox = Sandbox::repo();
    sandbox.git(["update-ref", "refs/hpp/loops/bad", "HEAD"]);
    let report = init(&sandbox, &["--json"]).json(1);
    let items = report["readiness"]["items"].as_array().unwrap();
    let events = items.iter().find(|i| i["id"] == "events").unwrap();
    assert_eq!(events["status"], "failed");
    assert!(
        events["evidence"]
            .as_str()
            .unwrap()
            .starts_with("loop bad broken at event:1"),
        "{events}"
    );
}

#[test]
fn with_module_directories_beside_the_manifest_checksums_are_verified() {
    let sandbox = Sandbox::repo();
    let dist = sealed_distribution(&sandbox);
    let target = sandbox.root.to_str().unwrap();
    let report: Value = serde_json::from_str(
        &in_dist(&sandbox, &dist, &["init", "--target", target, "--json"]).stdout,
    )
    .unwrap();
    let configure = &report["stages"][3];
    assert!(
        configure["summary"]
            .as_str()
            .unwrap()
            .ends_with("5/5 checksums verified"),
        "{configure}"
    );
    let items = report["readiness"]["items"].as_array().unwrap();
    assert_eq!(
        items.iter().find(|i| i["id"] == "checksums").unwrap()["status"],
        "verified"
    );
    assert_eq!(
        items.iter().find(|i| i["id"] == "distribution").unwrap()["status"],
        "verified"
    );
}

#[test]
fn a_module_unsupported_on_the_host_halts_at_configure() {
    let sandbox = Sandbox::repo();
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(crate::modules::MANIFEST).unwrap()).unwrap();
    value["modules"][1]["hosts"]["codex"] = "unsupported".into();
    let manifest = sandbox.path("m.json");
    std::fs::write(&manifest, value.to_string()).unwrap();
    let before = fingerprint(&sandbox.root);
    let report = init(
        &sandbox,
        &[
            "--manifest",
            manifest.to_str().unwrap(),
            "--host",
            "codex",
            "--modules",
            "lane-kit",
            "--apply",
            "--json",
        ],
    )
    .json(2);
    assert_eq!(report["status"], "halted");
    assert_eq!(report["stages"][3]["status"], "fail");
    assert_eq!(report["stages"][4]["status"], "skipped");
    assert_eq!(report["stages"][4]["summary"], "not run — configure failed");
    assert_eq!(report["stages"][5]["status"], "skipped");
    let items = report["readiness"]["items"].as_array().unwrap();
    assert_eq!(
        items.iter().find(|i| i["id"] == "policy").unwrap()["status"],
        "not-verified"
    );
    // A profile recording a module the host cannot run is never written.
    assert_eq!(report["writes"][0]["action"], "held");
    assert_eq!(fingerprint(&sandbox.root), before);
}

#[test]
fn unknown_names_are_refused_and_usage_errors_exit_3() {
    let sandbox = Sandbox::repo();
    assert_eq!(
        init(&sandbox, &["--host", "vim"]).refused(),
        "unknown host: vim (expected one of claude-code, codex)"
    );
    assert_eq!(
        init(&sandbox, &["--bundle", "nope"]).refused(),
        "unknown bundle: nope"
    );
    assert_eq!(
        init(&sandbox, &["--modules", "lane-kit,ghost"]).refused(),
        "unknown module: ghost"
    );
    assert_eq!(
        init(&sandbox, &["--policy-mode", "strict"]).refused(),
        "unknown policy mode: strict (expected audit or enforce)"
    );
    let run = init(&sandbox, &["--target", "nowhere"]).exit(3);
    assert_eq!(run.stderr.trim(), "hpp: target is not a directory: nowhere");
    std::fs::write(sandbox.root.join("answers.json"), "{\"colour\": \"red\"}").unwrap();
    let run = init(&sandbox, &["--profile", "answers.json"]).exit(3);
    assert_eq!(
        run.stderr.trim(),
        "hpp: profile file has unknown keys: colour (allowed: bundle, decision_advisor, host, modules, policy_mode)"
    );
    let run = init(&sandbox, &["--profile", "missing.json"]).exit(3);
    assert_eq!(
        run.stderr.trim(),
        "hpp: profile file not found: missing.json"
    );
    std::fs::write(
        sandbox.root.join("answers.json"),
        "{\"host\": \"codex\", \"modules\": [\"lane-kit\"]}",
    )
    .unwrap();
    let report: Value =
        serde_json::from_str(&init(&sandbox, &["--profile", "answers.json", "--json"]).stdout)
            .unwrap();
    assert_eq!(report["stages"][2]["detail"]["profile"]["bundle"], "custom");
    assert_eq!(report["stages"][2]["detail"]["profile"]["host"], "codex");
}

#[test]
fn the_example_answers_file_records_codex_solo_and_enforce() {
    let sandbox = Sandbox::repo();
    let answers = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/init/answers.json");
    let run = init(&sandbox, &["--profile", answers, "--json"]);
    assert!(run.code <= 1, "{run}");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let profile = &report["stages"][2]["detail"]["profile"];
    assert_eq!(profile["host"], "codex");
    assert_eq!(profile["bundle"], "solo");
    assert_eq!(profile["policy_mode"], "enforce");
    assert_eq!(
        report["stages"][2]["summary"],
        "would-write · host=codex · bundle=solo · policy=enforce · 0 default(s)"
    );
}

#[test]
fn the_references_init_flags_are_accepted_and_its_decision_advisor_recorded() {
    let sandbox = Sandbox::repo();
    let report = init(
        &sandbox,
        &[
            "--yes",
            "--no-animation",
            "--no-benchmark",
            "--marketplace",
            "rusharlabs/house-party-protocol",
            "--decision-advisor",
            "typesafe",
            "--modules",
            "operator-kit, lane-kit",
            "--apply",
            "--json",
        ],
    );
    assert!(report.code <= 1, "{report}");
    let profile: Value = serde_json::from_slice(
        &std::fs::read(sandbox.root.join(".hpp/profile.json")).expect("written"),
    )
    .expect("JSON");
    assert_eq!(
        profile["modules"],
        serde_json::json!(["operator-kit", "lane-kit"]),
        "trimmed"
    );
    assert_eq!(profile["decision_advisor"], "typesafe");
    // An answers file with the reference's key works too; off is not recorded.
    let other = Sandbox::repo();
    std::fs::write(
        other.path("answers.json"),
        r#"{"host": "codex", "bundle": "solo", "decision_advisor": "off"}"#,
    )
    .expect("writable");
    let answers = other.path("answers.json");
    let run = init(
        &other,
        &["--profile", answers.to_str().expect("UTF-8"), "--apply"],
    );
    assert!(run.code <= 1, "{run}");
    let profile: Value = serde_json::from_slice(
        &std::fs::read(other.root.join(".hpp/profile.json")).expect("written"),
    )
    .expect("JSON");
    assert!(profile.get("decision_advisor").is_none(), "{profile}");
}

#[test]
fn control_an_unknown_decision_advisor_is_refused_and_nothing_written() {
    let sandbox = Sandbox::repo();
    let reason = init(&sandbox, &["--decision-advisor", "oracle", "--apply"]).refused();
    assert_eq!(
        reason,
        "unknown decision advisor: oracle (expected off, typesafe, openrouter or compatible)"
    );
    assert!(!sandbox.root.join(".hpp").exists());
}

#[test]
fn init_s_next_teaches_keys_and_the_trust_policy_before_the_hooks() {
    let sandbox = Sandbox::repo();
    let run = sandbox.hpp(["init"]);
    let text = format!("{}{}", run.stdout, run.stderr);
    let trust = text
        .find("git hpp trust init --root me")
        .expect("trust init is named");
    let hooks = text
        .find("git hpp hooks install --apply")
        .expect("the hooks are named");
    assert!(trust < hooks, "the policy comes first:\n{text}");
    assert!(text.contains("ssh-keygen -t ed25519"), "{text}");
}
