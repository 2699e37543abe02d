//! `git hpp doctor`: the repository's manifest passes; each protocol rule refuses its mutation;
//! the hook census counts every group; the store check finds a corrupted loop, a record without
//! its blob and an unknown namespace; `--repair` plans, and `--repair --apply` restores, a
//! deleted attestation note; good records of every newer namespace pass, and a corrupted one
//! of each kind, forged with plain git plumbing, is reported with exit 2 and nothing written.

use assert_fs::prelude::*;
use serde_json::Value;

use crate::harness::Sandbox;

/// The manifest of this repository.
const MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/hpp.manifest.json");

fn manifest_value() -> Value {
    serde_json::from_str(&std::fs::read_to_string(MANIFEST).unwrap()).unwrap()
}

/// Writes `value` as a manifest beside the sandbox and returns its path.
fn write_manifest(sandbox: &Sandbox, value: &Value) -> String {
    let file = sandbox.beside("mutated.manifest.json");
    file.write_str(&serde_json::to_string_pretty(value).expect("a manifest serialises"))
        .expect("the sandbox is writable");
    file.display().to_string()
}

#[test]
fn the_repository_manifest_passes_doctor() {
    let sandbox = Sandbox::repo();
    let out = sandbox.hpp(["doctor", "--manifest", MANIFEST]).ok();
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("HPP doctor: ok · modules=5 · hosts=claude-code, codex · hooks="),
        "{out}"
    );
    assert!(
        first.contains("(permission gates=4 · llm egress=0)"),
        "{out}"
    );
}

#[test]
fn the_census_lists_every_capability_group_including_those_that_count_zero() {
    let sandbox = Sandbox::repo();
    let doc = sandbox
        .hpp(["doctor", "--manifest", MANIFEST, "--json"])
        .json(0);
    assert_eq!(doc["status"], "ok");
    let groups = manifest_value()["hook_capabilities"]
        .as_array()
        .unwrap()
        .len();
    let by_capability = doc["hooks"]["by_capability"].as_object().unwrap();
    assert_eq!(by_capability.len(), groups);
    assert_eq!(by_capability["transcript-derived-llm-egress"], 0);
    let by_policy = doc["hooks"]["by_exit_policy"].as_object().unwrap();
    let total: u64 = by_policy.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, doc["hooks"]["declared"].as_u64().unwrap());
    assert_eq!(by_policy.len(), 3);
    assert_eq!(
        doc["bundles"],
        serde_json::json!(["reliable-coding", "solo"])
    );
    assert_eq!(doc["store"]["checked"], true);
}

#[test]
fn outside_a_repository_the_built_in_manifest_and_modules_are_checked_and_the_store_is_not() {
    let sandbox = Sandbox::empty();
    let doc = sandbox.hpp(["doctor", "--json"]).json(0);
    assert_eq!(doc["manifest"], "built-in manifest");
    assert_eq!(doc["store"]["checked"], false);
    assert_eq!(doc["distribution"]["status"], "ok");
    assert_eq!(doc["distribution"]["checked"], true);
}

#[test]
fn the_matrix_is_markdown_with_one_row_per_module() {
    let sandbox = Sandbox::empty();
    let out = sandbox.hpp(["doctor", "--matrix"]).ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "| module | Claude Code | Codex CLI |");
    assert_eq!(lines[1], "|---|---|---|");
    assert_eq!(lines.len(), 2 + 5, "{out}");
    assert!(
        lines[3].starts_with("| `lane-kit` 0.1.0 | `native` ·"),
        "{out}"
    );
}

#[test]
fn the_report_names_no_url_and_no_machine_path() {
    let sandbox = Sandbox::repo();
    let doc = sandbox.hpp(["doctor", "--report", "--json"]).json(0);
    let report = &doc["report"];
    assert_eq!(report["schema"], "hpp.doctor-report/v1");
    assert_eq!(report["protocol_version"], "2.1");
    let text = doc.to_string();
    assert!(!text.contains("http"), "{text}");
    assert!(!text.contains(sandbox.root.to_str().unwrap()), "{text}");
    let human = sandbox.hpp(["doctor", "--report"]).ok();
    assert!(human.contains("No network call was made"), "{human}");
}

#[test]
fn control_each_protocol_rule_refuses_its_mutated_manifest_with_exit_2() {
    type Mutation = fn(&mut Value);
    let cases: Vec<(Mutation, &str)> = vec![
        (
            |v| v["protocol_version"] = "2.0".into(),
            "protocol_version must be 2.1",
        ),
        (
            |v| v["exit_codes"]["block"] = 9.into(),
            "exit_codes must be exactly",
        ),
        (
            |v| {
                v["hooks"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("capabilities");
            },
            "hook operator-kit/policy-gate needs non-empty capabilities",
        ),
        (
            |v| v["modules"][1]["hosts"]["cursor"] = "native".into(),
            "module lane-kit declares an unknown host: cursor",
        ),
        (
            |v| v["modules"][1]["integrates_with"] = serde_json::json!(["ghost-kit"]),
            "modules[lane-kit].integrates_with names an unknown module: ghost-kit",
        ),
        (
            |v| {
                v["modules"][0]["requires"] = serde_json::json!(["lane-kit"]);
                v["modules"][1]["requires"] = serde_json::json!(["operator-kit"]);
            },
            "dependency cycle: operator-kit -> lane-kit -> operator-kit",
        ),
        (
            |v| v["hooks"][0]["exit_policy"] = "maybe".into(),
            "exit_policy must be one of observe, warn, block",
        ),
        (
            |v| {
                let kept: Vec<Value> = v["hooks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|h| h["module"] != "gotcha-memory")
                    .cloned()
                    .collect();
                v["hooks"] = Value::Array(kept);
            },
            "module declares the hooks component and declares no hook: gotcha-memory",
        ),
        (
            |v| v["routing"]["tiers"] = serde_json::json!(["frontier"]),
            "routing.tiers must be exactly",
        ),
    ];
    let sandbox = Sandbox::repo();
    for (mutate, expected) in cases {
        let mut value = manifest_value();
        mutate(&mut value);
        let path = write_manifest(&sandbox, &value);
        let reason = sandbox.hpp(["doctor", "--manifest", &path]).refused();
        assert!(
            reason.contains(expected),
            "expected {expected:?} in {reason:?}"
        );
    }
}

#[test]
fn a_bad_module_block_does_not_stop_event_commands() {
    let sandbox = Sandbox::repo();
    let mut value = manifest_value();
    value["hooks"][0]["capabilities"] = serde_json::json!([]);
    std::fs::write(
        sandbox.root.join("hpp.manifest.json"),
        serde_json::to_string(&value).unwrap(),
    )
    .unwrap();
    sandbox.start_work().ok();
    sandbox.hpp(["doctor"]).refused();
}

#[test]
fn control_a_corrupted_loop_ref_is_found_and_blocks() {
    let sandbox = Sandbox::repo();
    sandbox.walk_to_verified("good");
    sandbox.hpp(["doctor"]).ok();
    sandbox.git(["update-ref", "refs/hpp/loops/bad", "HEAD"]);
    let doc = sandbox.hpp(["doctor", "--json"]).json(2);
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{doc}");
    assert_eq!(findings[0]["subject"], "refs/hpp/loops/bad");
    assert!(
        findings[0]["problem"]
            .as_str()
            .unwrap()
            .contains("the chain does not verify at event:1"),
        "{doc}"
    );
    assert_eq!(doc["store"]["loops"], 2);
}

#[test]
fn a_record_without_its_blob_blocks_and_an_unknown_namespace_warns() {
    let sandbox = Sandbox::repo();
    sandbox.git(["update-ref", "refs/hpp/strange/x", "HEAD"]);
    let out = sandbox.hpp(["doctor"]).exit(1).stdout;
    assert!(
        out.contains("warn: refs/hpp/strange/x: refs/hpp/strange/ is not a namespace"),
        "{out}"
    );
    let blob = sandbox.git(["rev-parse", "HEAD:README"]);
    sandbox.git(["update-ref", "refs/hpp/lanes/blob", &blob]);
    let out = sandbox.hpp(["doctor"]).exit(2).stdout;
    assert!(
        out.contains("block: refs/hpp/lanes/blob: does not point at a record commit"),
        "{out}"
    );
    sandbox.git(["update-ref", "-d", "refs/hpp/lanes/blob"]);
    sandbox.git(["update-ref", "refs/hpp/evidence/hollow", "HEAD"]);
    let out = sandbox.hpp(["doctor"]).exit(2).stdout;
    assert!(
        out.contains("block: refs/hpp/evidence/hollow: the record has no record.json"),
        "{out}"
    );
}

#[test]
fn a_deleted_note_is_planned_by_repair_and_restored_by_repair_apply() {
    let sandbox = Sandbox::repo();
    std::fs::write(sandbox.root.join("SPEC.md"), "# Spec\n").unwrap();
    sandbox.git(["add", "-A"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    let created = sandbox
        .hpp_in(&sandbox.root, &{
            let mut a = crate::harness::attest_args("review:001", "approved");
            a.push("--json");
            a
        })
        .json(0);
    let attestation = created["ref"].as_str().unwrap().to_owned();
    let note = sandbox.git(["notes", "--ref=hpp", "show", "HEAD"]);
    assert!(note.contains(&attestation), "{note}");
    sandbox.hpp(["doctor"]).ok();

    sandbox.git(["notes", "--ref=hpp", "remove", "HEAD"]);
    let out = sandbox.hpp(["doctor"]).exit(1).stdout;
    assert!(out.contains("refs/notes/hpp lacks the note of"), "{out}");
    let notes_before = sandbox.git(["for-each-ref", "refs/notes/"]);
    let plan = sandbox.hpp(["doctor", "--repair"]).exit(1).stdout;
    assert!(
        plan.contains(&format!("add the note of {attestation} to commit")),
        "{plan}"
    );
    assert!(plan.contains("plan only"), "{plan}");
    assert_eq!(sandbox.git(["for-each-ref", "refs/notes/"]), notes_before);

    let done = sandbox.hpp(["doctor", "--repair", "--apply"]).ok();
    assert!(done.contains("done: add the note of"), "{done}");
    let restored = sandbox.git(["notes", "--ref=hpp", "show", "HEAD"]);
    assert_eq!(restored, note);
    let again = sandbox.hpp(["doctor", "--repair", "--json"]).json(0);
    assert_eq!(again["repair"]["plan"], serde_json::json!([]));
}

/// Writes one good record of every newer namespace through the commands that own them: a
/// sealed House Session, a lane, a board claim, a handoff and a recorded failure. Returns the
/// House Session's ref.
fn good_records(sandbox: &Sandbox) -> String {
    let recorded = crate::harness::record_session(sandbox, "design", &[]).json(0);
    sandbox
        .hpp([
            "lane",
            "start",
            "alpha",
            "--role",
            "maker",
            "--model",
            "claude-sonnet-4",
            "--territory",
            "src",
        ])
        .ok();
    sandbox
        .hpp(["lane", "heartbeat", "alpha", "--min-interval", "0"])
        .ok();
    sandbox
        .hpp([
            "board",
            "claim",
            "item-1",
            "--lane",
            "alpha",
            "--model",
            "claude-sonnet-4",
        ])
        .ok();
    sandbox
        .hpp([
            "handoff",
            "write",
            "--lane",
            "alpha",
            "--summary",
            "Parser done.",
            "--next",
            "wire the CLI",
            "--verify-first",
            "cargo test",
        ])
        .ok();
    for at in ["2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"] {
        sandbox
            .hpp([
                "gotcha",
                "record",
                "--task",
                "cargo build",
                "--message",
                "error: connection reset by peer",
                "--at",
                at,
            ])
            .ok();
    }
    recorded["ref"].as_str().expect("a ref").to_owned()
}

/// Forges a commit with plain git plumbing: the tree of `reference`'s tip with `file` replaced
/// by `bytes`, on top of that tip (a root commit holding only `file` when the ref does not
/// exist), and moves `reference` to it. Returns the previous tip.
fn forge(sandbox: &Sandbox, reference: &str, file: &str, bytes: &[u8]) -> Option<String> {
    use std::io::Write;
    use std::process::Stdio;
    let tip = sandbox.git(["for-each-ref", "--format=%(objectname)", reference]);
    let tip = (!tip.is_empty()).then_some(tip);
    let staged = sandbox.path("forged.blob");
    std::fs::write(&staged, bytes).expect("writable");
    let blob = sandbox.git(["hash-object", "-w", staged.to_str().expect("UTF-8")]);
    let kept = match &tip {
        Some(tip) => sandbox.git(["ls-tree", tip]),
        None => String::new(),
    };
    let listing: String = kept
        .lines()
        .filter(|line| !line.ends_with(&format!("\t{file}")))
        .map(|line| format!("{line}\n"))
        .chain([format!("100644 blob {blob}\t{file}\n")])
        .collect();
    let mut child = sandbox
        .command("git", &sandbox.root)
        .arg("mktree")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git runs");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(listing.as_bytes())
        .expect("git reads");
    let out = child.wait_with_output().expect("git finishes");
    assert!(out.status.success(), "mktree failed");
    let tree = String::from_utf8(out.stdout)
        .expect("an id")
        .trim()
        .to_owned();
    let commit = match &tip {
        Some(tip) => sandbox.git(["commit-tree", &tree, "-p", tip, "-m", "forged"]),
        None => sandbox.git(["commit-tree", &tree, "-m", "forged"]),
    };
    sandbox.git(["update-ref", reference, &commit]);
    tip
}

/// The JSON of `file` at the tip of `reference`.
fn tip_json(sandbox: &Sandbox, reference: &str, file: &str) -> Value {
    serde_json::from_str(&sandbox.git(["show", &format!("{reference}:{file}")])).expect("JSON")
}

#[test]
fn good_records_of_every_newer_namespace_pass_doctor() {
    let sandbox = Sandbox::repo();
    good_records(&sandbox);
    let doc = sandbox.hpp(["doctor", "--json"]).json(0);
    assert_eq!(doc["findings"], serde_json::json!([]), "{doc}");
    let store = &doc["store"];
    assert_eq!(store["deliberations"], 1, "{doc}");
    assert_eq!(store["lanes"], 1, "{doc}");
    assert_eq!(store["board_events"], 1, "{doc}");
    assert_eq!(store["handoffs"], 1, "{doc}");
    assert_eq!(store["gotchas"], 2, "{doc}");
    let human = sandbox.hpp(["doctor"]).ok();
    assert!(
        human.contains("1 deliberation · 1 lane · 1 board event · 1 handoff"),
        "{human}"
    );
    // A lane closed and started again keeps one log: a new claim may follow a close.
    sandbox.hpp(["lane", "close", "alpha"]).ok();
    sandbox
        .hpp([
            "lane",
            "start",
            "alpha",
            "--role",
            "checker",
            "--model",
            "gpt-5",
            "--territory",
            "docs",
        ])
        .ok();
    let doc = sandbox.hpp(["doctor", "--json"]).json(0);
    assert_eq!(doc["findings"], serde_json::json!([]), "{doc}");
}

#[test]
fn control_a_corrupted_record_of_each_newer_namespace_blocks_and_nothing_is_written() {
    type Edit = fn(&mut Value);
    let sandbox = Sandbox::repo();
    let session = good_records(&sandbox);
    let cases: Vec<(String, &str, Edit, &str)> = vec![
        (
            session,
            "record.json",
            |v| v["verdict"]["value"] = "something-else".into(),
            "the sealed record does not verify: record_sha256 does not match",
        ),
        (
            "refs/hpp/lanes/alpha".into(),
            "lane.json",
            |v| v["territory"] = serde_json::json!(["."]),
            "lane alpha: the log is inconsistent: record 3: it does not repeat the claim",
        ),
        (
            "refs/hpp/lanes/alpha".into(),
            "lane.json",
            |v| v["schema"] = "hpp.lane/v0".into(),
            "lane record does not parse: schema is \"hpp.lane/v0\"",
        ),
        (
            "refs/hpp/board/log".into(),
            "events.json",
            |v| v["events"][0]["state"] = "VERIFIED".into(),
            "the board log holds an invalid event (#2): item-1: CLAIMED -> VERIFIED",
        ),
        (
            "refs/hpp/handoffs/alpha".into(),
            "handoff.json",
            |v| v["handoff_id"] = "handoff-1".into(),
            "does not match HO-YYYYMMDD-HHMM-<slug>",
        ),
        (
            "refs/hpp/handoffs/alpha".into(),
            "handoff.json",
            |v| v["session"]["lane_id"] = "beta".into(),
            "names lane beta",
        ),
        (
            "refs/hpp/gotchas/failures".into(),
            "failure.json",
            |v| v["at"] = "yesterday".into(),
            "failure 3: ",
        ),
        (
            "refs/hpp/gotchas/promoted".into(),
            "gotcha.json",
            |v| v["schema"] = "hpp.gotcha/v0".into(),
            "gotcha 1: ",
        ),
    ];
    for (reference, file, edit, expected) in cases {
        // No gotcha was promoted: the forged one is the first of its log.
        let mut value = if reference.ends_with("/promoted") {
            serde_json::json!({"schema": "hpp.gotcha/v1"})
        } else {
            tip_json(&sandbox, &reference, file)
        };
        edit(&mut value);
        let previous = forge(&sandbox, &reference, file, value.to_string().as_bytes());
        let refs_before = sandbox.git(["for-each-ref"]);
        let doc = sandbox.hpp(["doctor", "--json"]).json(2);
        let findings = doc["findings"].as_array().expect("findings");
        assert_eq!(findings.len(), 1, "{reference}: {doc}");
        assert_eq!(findings[0]["subject"], reference.as_str(), "{doc}");
        assert_eq!(findings[0]["severity"], "block", "{doc}");
        let problem = findings[0]["problem"].as_str().expect("a sentence");
        assert!(problem.contains(expected), "{reference}: {problem}");
        let out = sandbox.hpp(["doctor", "--repair"]).exit(2).stdout;
        assert!(
            out.contains(&format!("block: {reference}: ")),
            "{reference}: {out}"
        );
        assert_eq!(sandbox.git(["for-each-ref"]), refs_before, "{reference}");
        match previous {
            Some(previous) => sandbox.git(["update-ref", &reference, &previous]),
            None => sandbox.git(["update-ref", "-d", &reference]),
        };
        sandbox.hpp(["doctor"]).ok();
    }
}

/// Hop's state graph is part of the store doctor checks: healthy states count, a missing
/// derived ref warns with the repair command, and a state ref that names no state is broken.
#[test]
fn doctor_checks_hop_states_with_hops_own_diagnosis() {
    let sandbox = Sandbox::repo();
    sandbox.hop_in(&sandbox.root, &["init"]).ok();
    sandbox
        .hop_in(&sandbox.root, &["start", "--agent", "codex", "add a test"])
        .ok();
    let doc = sandbox.hpp(["doctor", "--json"]).json(0);
    assert!(
        doc["store"]["hop_states"].as_u64().unwrap_or(0) >= 2,
        "{doc}"
    );

    sandbox.git(["update-ref", "-d", "refs/hpp/hop/accepted"]);
    let warned = sandbox.hpp(["doctor", "--json"]).json(1);
    let text = warned["findings"].to_string();
    assert!(text.contains("hop doctor --repair"), "{warned}");

    let head = sandbox.git(["rev-parse", "HEAD"]);
    sandbox.git(["update-ref", "refs/hpp/hop/states/not-a-state-id", &head]);
    let broken = sandbox.hpp(["doctor", "--json"]).json(2);
    assert!(
        broken["findings"].to_string().contains("not-a-state-id"),
        "{broken}"
    );
}
