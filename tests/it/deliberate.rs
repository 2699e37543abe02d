//! `git hpp deliberate`: the House Session examples sealed, kept at refs/hpp/deliberations,
//! verified by file, ref and id, signed, pushed and verified from a clone; the refusals.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::Sandbox;
use crate::harness::keygen;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/house-session/");

fn ex(name: &str) -> String {
    format!("{EXAMPLES}{name}")
}

fn text(path: &Path) -> &str {
    path.to_str().expect("sandbox paths are UTF-8")
}

fn write(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(value).expect("JSON")).expect("writable");
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("JSON")
}

/// `deliberate record` of the review example, with `extra` flags.
fn record_review(sandbox: &Sandbox, extra: &[&str]) -> crate::harness::Run {
    crate::harness::record_session(sandbox, "review", extra)
}

fn ref_of(recorded: &Value) -> String {
    recorded["ref"]
        .as_str()
        .expect("record names its ref")
        .to_owned()
}

#[test]
fn the_review_example_seals_max_rounds_the_judges_high_and_seat_c_as_dissent() {
    let sandbox = Sandbox::repo();
    let recorded = record_review(&sandbox, &["--out", "out/record.json"]).json(0);
    assert_eq!(recorded["status"], "recorded");
    assert_eq!(
        recorded["stop"],
        json!({"decision": "stop", "reason": "max-rounds", "round": 2, "escalate": true})
    );
    assert_eq!(recorded["verdict"]["value"], "high");
    assert_eq!(
        recorded["dissent"],
        json!([{"seat": "c", "position": "low", "grounded": true}])
    );
    assert_eq!(recorded["record"], "out/record.json");
    assert_eq!(recorded["decision"]["method"], "panel");
    assert_eq!(
        recorded["decision"]["raw_response_sha256"],
        recorded["record_sha256"]
    );
    let reference = ref_of(&recorded);
    assert!(reference.starts_with("refs/hpp/deliberations/review-cache-eviction-"));

    let intact = sandbox
        .hpp(["deliberate", "verify", "out/record.json"])
        .json(0);
    assert_eq!(intact["status"], "intact");
    assert_eq!(intact["schema"], "hpp.deliberation/v2");
    let mut decided = read(&sandbox.root.join("out/record.json"));
    decided["human_decision"] = json!({"value": "medium", "by": "release manager"});
    write(&sandbox.root.join("out/decided.json"), &decided);
    let still = sandbox
        .hpp(["deliberate", "verify", "out/decided.json"])
        .json(0);
    assert_eq!(
        still["status"], "intact",
        "human_decision is outside the seal"
    );
    let mut edited = read(&sandbox.root.join("out/record.json"));
    edited["verdict"]["value"] = json!("low");
    write(&sandbox.root.join("out/edited.json"), &edited);
    let broken = sandbox
        .hpp(["deliberate", "verify", "out/edited.json"])
        .json(2);
    assert_eq!(
        broken,
        json!({"status": "broken", "reason": "record_sha256 does not match: the record was edited after it was sealed"})
    );
}

#[test]
fn the_sealed_record_is_kept_at_its_ref_and_verifies_by_ref_id_and_panel_id() {
    let sandbox = Sandbox::repo();
    let recorded = record_review(&sandbox, &[]).json(0);
    assert!(recorded["record"].is_null(), "no --out, no file");
    let reference = ref_of(&recorded);
    let files = sandbox.git(["ls-tree", "-r", "--name-only", &reference]);
    let mut expected = vec!["judge.json", "panel.json", "rationale.json", "record.json"];
    expected.extend([
        "turns/1.json",
        "turns/2.json",
        "turns/3.json",
        "turns/4.json",
        "turns/5.json",
        "turns/6.json",
    ]);
    assert_eq!(files.lines().collect::<Vec<_>>(), expected);
    let stored: Value =
        serde_json::from_str(&sandbox.git(["show", &format!("{reference}:record.json")]))
            .expect("record.json is JSON");
    assert_eq!(stored["record_sha256"], recorded["record_sha256"]);
    let id = reference
        .strip_prefix("refs/hpp/deliberations/")
        .expect("under the prefix");
    for name in [reference.as_str(), id, "review-cache-eviction"] {
        let report = sandbox.hpp(["deliberate", "verify", name]).json(0);
        assert_eq!(report["status"], "intact", "{name}");
        assert_eq!(report["ref"], reference.as_str());
        assert_eq!(report["signature"]["status"], "not-signed");
    }
    // Recording the same session again finds the record it already has.
    let again = record_review(&sandbox, &[]).json(0);
    assert_eq!(ref_of(&again), reference);
    assert_eq!(sandbox.hpp_refs().lines().count(), 1);
    let missing = sandbox
        .hpp(["deliberate", "verify", "no-such-session"])
        .refused();
    assert_eq!(missing, "no deliberation record named no-such-session");
}

#[test]
fn a_record_pushed_to_a_bare_remote_verifies_from_a_clone() {
    let sandbox = Sandbox::repo();
    let remote = sandbox.path("remote.git");
    sandbox.git(["init", "-q", "--bare", "-b", "main", text(&remote)]);
    sandbox.git(["remote", "add", "origin", text(&remote)]);
    let reference = ref_of(&record_review(&sandbox, &[]).json(0));
    sandbox.hpp(["push"]).ok();
    sandbox.git(["push", "-q", "origin", "main"]);
    let clone = sandbox.path("clone");
    sandbox.git(["clone", "-q", text(&remote), text(&clone)]);
    sandbox.hpp_in(&clone, &["fetch"]).ok();
    let id = reference.trim_start_matches("refs/hpp/deliberations/");
    let report = sandbox
        .hpp_in(&clone, &["deliberate", "verify", id])
        .json(0);
    assert_eq!(report["status"], "intact");
    assert_eq!(report["verdict"]["value"], "high");
}

#[test]
fn control_only_the_judges_seat_may_sign_a_session() {
    let sandbox = Sandbox::repo();
    let (key, _) = keygen(&sandbox, "key");
    let refused =
        record_review(&sandbox, &["--sign-key", text(&key), "--signer", "lane-a"]).refused();
    assert!(
        refused.contains("lane-a") && refused.contains("lane-judge"),
        "{refused}"
    );
    assert_eq!(sandbox.hpp_refs(), "", "nothing was written");
}

/// The judge's seat in the review example signs as its lane.
#[test]
fn a_signed_record_verifies_against_its_allowed_signers_and_not_a_strangers() {
    let sandbox = Sandbox::repo();
    let (key, public) = keygen(&sandbox, "key");
    let (_, other) = keygen(&sandbox, "other");
    let allowed = sandbox.path("allowed");
    std::fs::write(&allowed, format!("lane-judge {public}\n")).expect("writable");
    let stranger = sandbox.path("stranger");
    std::fs::write(&stranger, format!("lane-judge {other}\n")).expect("writable");
    let recorded = record_review(
        &sandbox,
        &["--sign-key", text(&key), "--signer", "lane-judge"],
    )
    .json(0);
    let reference = ref_of(&recorded);
    let files = sandbox.git(["ls-tree", "--name-only", &reference]);
    assert!(files.lines().any(|f| f == "record.sig"), "{files}");
    assert_eq!(
        sandbox.git(["show", &format!("{reference}:signer")]),
        "lane-judge"
    );
    // By hand from a clone: ssh-keygen accepts what we signed.
    let record = sandbox.git(["show", &format!("{reference}:record.json")]);
    let sig = sandbox.path("record.sig");
    std::fs::write(
        &sig,
        sandbox.git(["show", &format!("{reference}:record.sig")]) + "\n",
    )
    .expect("writable");
    let mut child = sandbox
        .command("ssh-keygen", &sandbox.root)
        .args([
            "-Y",
            "verify",
            "-f",
            text(&allowed),
            "-I",
            "lane-judge",
            "-n",
            "hpp",
            "-s",
            text(&sig),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ssh-keygen runs");
    std::io::Write::write_all(&mut child.stdin.take().expect("piped"), record.as_bytes())
        .expect("ssh-keygen reads");
    let out = child.wait_with_output().expect("ssh-keygen finishes");
    assert!(out.status.success(), "ssh-keygen refused: {out:?}");
    let good = sandbox
        .hpp([
            "deliberate",
            "verify",
            &reference,
            "--allowed-signers",
            text(&allowed),
        ])
        .json(0);
    assert_eq!(good["signature"]["status"], "verified");
    let bad = sandbox
        .hpp([
            "deliberate",
            "verify",
            &reference,
            "--allowed-signers",
            text(&stranger),
        ])
        .json(2);
    assert_eq!(bad["status"], "broken");
    assert!(
        bad["reason"]
            .as_str()
            .expect("a reason")
            .starts_with("signature: "),
        "{bad}"
    );
    // An unsigned record cannot pass a signature check that was asked for.
    let unsigned_sandbox = Sandbox::repo();
    let unsigned = ref_of(&record_review(&unsigned_sandbox, &[]).json(0));
    let report = unsigned_sandbox
        .hpp([
            "deliberate",
            "verify",
            &unsigned,
            "--allowed-signers",
            text(&allowed),
        ])
        .json(2);
    assert_eq!(report["reason"], "signature: the record is not signed");
}

#[test]
fn control_an_edited_record_file_is_broken_and_exits_2() {
    let sandbox = Sandbox::repo();
    record_review(&sandbox, &["--out", "record.json"]).json(0);
    let mut record = read(&sandbox.root.join("record.json"));
    record["dissent"] = json!([]);
    write(&sandbox.root.join("record.json"), &record);
    let report = sandbox.hpp(["deliberate", "verify", "record.json"]).json(2);
    assert_eq!(report["status"], "broken");
    let validated = sandbox
        .hpp(["deliberate", "validate", "record.json"])
        .json(2);
    assert_eq!(validated["status"], "broken");
}

#[test]
fn records_sealed_before_the_records_were_typed_verify_from_their_files() {
    let sandbox = Sandbox::repo();
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/deliberation-sealed"
    );
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("the fixtures are readable") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let sealed = read(&path);
        let report = sandbox.hpp(["deliberate", "verify", text(&path)]).json(0);
        assert_eq!(report["status"], "intact", "{}", path.display());
        assert_eq!(report["record_sha256"], sealed["record_sha256"]);
        assert_eq!(report["verdict"], sealed["verdict"]);
        seen += 1;
    }
    assert_eq!(seen, 8, "every fixture was read");
    // A command that acts on a session reads it typed: the release gate is no plan.
    std::fs::write(
        sandbox.root.join("request.json"),
        r#"{"stage": "build", "risk": "low", "complexity": "low", "context": 1000}"#,
    )
    .expect("writable");
    std::fs::write(
        sandbox.root.join("providers.json"),
        r#"[{"id": "p", "tiers": ["economy", "balanced", "frontier"], "stages": ["build"], "max_context": 100000}]"#,
    )
    .expect("writable");
    let gate = format!("{dir}/release-gate.json");
    let refused = sandbox.hpp([
        "route",
        "--request",
        "request.json",
        "--providers",
        "providers.json",
        "--deliberation",
        &gate,
        "--maker-family",
        "gpt",
    ]);
    assert_eq!(refused.code, 2, "{refused}");
    assert_eq!(
        refused.stderr.trim(),
        "hpp: a plan session is needed here, this record is a release-gate session"
    );
}

#[test]
fn the_design_example_converges_on_grounded_evidence() {
    let sandbox = Sandbox::repo();
    let (panel, turns, judge) = (
        ex("design/panel.json"),
        ex("design/turns.json"),
        ex("design/judge.json"),
    );
    let stop = sandbox
        .hpp(["deliberate", "stop", "--panel", &panel, "--turns", &turns])
        .json(0);
    assert_eq!(
        stop,
        json!({"decision": "stop", "reason": "grounded-convergence", "round": 2, "escalate": false})
    );
    let recorded = sandbox
        .hpp([
            "deliberate",
            "record",
            "--panel",
            &panel,
            "--turns",
            &turns,
            "--judge",
            &judge,
        ])
        .json(0);
    assert_eq!(recorded["verdict"]["value"], "log-per-item");
    assert_eq!(recorded["dissent"], json!([]));
}

#[test]
fn tally_counts_each_round_of_the_review() {
    let sandbox = Sandbox::empty();
    let tally = sandbox
        .hpp([
            "deliberate",
            "tally",
            "--panel",
            &ex("review/panel.json"),
            "--turns",
            &ex("review/turns.json"),
        ])
        .json(0);
    assert_eq!(tally["schema"], "hpp.deliberation-tally/v1");
    let second = &tally["rounds"][1];
    assert_eq!(second["leading"], "high");
    assert_eq!(second["moved"], json!(["b"]));
    assert_eq!(second["flips_without_new_evidence"], json!([]));
    assert_eq!(second["new_refs"], json!(["incident-0412"]));
    assert!(
        tally["rounds"][0]["leading"].is_null(),
        "a 1-1-1 split has no leader"
    );
}

#[test]
fn a_seat_that_did_not_answer_is_recorded_blocked_and_exits_1() {
    let sandbox = Sandbox::repo();
    let turns: Value = read(Path::new(&ex("review/turns.json")));
    let two = json!(turns.as_array().expect("a list")[..2].to_vec());
    write(&sandbox.root.join("two.json"), &two);
    let recorded = sandbox
        .hpp([
            "deliberate",
            "record",
            "--panel",
            &ex("review/panel.json"),
            "--turns",
            "two.json",
        ])
        .json(1);
    assert_eq!(
        recorded["verdict"],
        json!({"status": "blocked", "value": null, "reason": "not judged: c"})
    );
    assert_eq!(
        recorded["decision"]["outcome"]["status"],
        "instrument-failure"
    );
}

#[test]
fn plan_refuses_an_alias_and_a_single_family() {
    let sandbox = Sandbox::empty();
    let panel = read(Path::new(&ex("review/panel.json")));
    let mut alias = panel.clone();
    alias["seats"][0]["model_served"] = json!("claude-opus-latest");
    write(&sandbox.root.join("alias.json"), &alias);
    assert_eq!(
        sandbox.hpp(["deliberate", "plan", "alias.json"]).refused(),
        "seat a: model_served 'claude-opus-latest' is a moving alias; name the pinned version"
    );
    let mut one = panel.clone();
    for i in 0..3 {
        one["seats"][i]["family"] = json!("gpt");
        one["seats"][i]["model_served"] = json!(format!("gpt-5-{i}"));
    }
    write(&sandbox.root.join("one.json"), &one);
    assert_eq!(
        sandbox.hpp(["deliberate", "plan", "one.json"]).refused(),
        "the participants must come from at least two model families; one family arguing with itself is ceremony, not diversity"
    );
    let valid = sandbox
        .hpp(["deliberate", "plan", &ex("review/panel.json")])
        .json(0);
    assert_eq!(valid["status"], "valid");
    assert_eq!(valid["panel"]["judge"], "j");
}

#[test]
fn plan_adds_context_ids_and_writes_the_panel_with_out() {
    let sandbox = Sandbox::empty();
    let mut panel = read(Path::new(&ex("review/panel.json")));
    panel.as_object_mut().expect("object").remove("evidence");
    write(&sandbox.root.join("panel.json"), &panel);
    let planned = sandbox
        .hpp([
            "deliberate",
            "plan",
            "panel.json",
            "--context",
            &ex("review/context.json"),
            "--out",
            "planned/panel.json",
        ])
        .json(0);
    let expected = read(Path::new(&ex("review/panel.json")));
    assert_eq!(planned["panel"]["evidence"], expected["evidence"]);
    let written = read(&sandbox.root.join("planned/panel.json"));
    assert_eq!(written, planned["panel"]);
    // The planned panel is the example's panel: its turns belong to it.
    let reviewed = sandbox
        .hpp(["deliberate", "plan", &ex("review/panel.json")])
        .json(0);
    assert_eq!(reviewed["panel"]["sha256"], planned["panel"]["sha256"]);
}

#[test]
fn plan_takes_evidence_bundles_from_refs_and_refuses_one_that_does_not_verify() {
    let sandbox = Sandbox::repo();
    sandbox
        .hpp(["evidence", "run", "--id", "unit-tests", "--", "true"])
        .ok();
    let failed = sandbox
        .hpp(["evidence", "run", "--id", "broken-build", "--", "false"])
        .exit(1);
    assert!(!failed.stdout.is_empty(), "a failed run is still recorded");
    let panel = ex("review/panel.json");
    let planned = sandbox
        .hpp(["deliberate", "plan", &panel, "--evidence", "unit-tests"])
        .json(0);
    let evidence = &planned["panel"]["evidence"];
    assert!(
        evidence["ids"]
            .as_array()
            .expect("ids")
            .contains(&json!("unit-tests"))
    );
    let sources = evidence["sources"].as_array().expect("sources");
    assert_eq!(sources.len(), 2, "the declared context source is kept");
    assert_eq!(sources[1]["kind"], "evidence-record");
    assert_eq!(sources[1]["id"], "unit-tests");
    let refused = sandbox
        .hpp(["deliberate", "plan", &panel, "--evidence", "broken-build"])
        .refused();
    assert_eq!(
        refused,
        "evidence record broken-build does not verify (not-evidence): it resolves nothing"
    );
    let file = sandbox.path("bundle.json");
    let shown = sandbox.hpp(["evidence", "show", "unit-tests"]).ok();
    std::fs::write(&file, shown).expect("writable");
    let from_file = sandbox
        .hpp(["deliberate", "plan", &panel, "--evidence", text(&file)])
        .json(0);
    assert_eq!(from_file["panel"]["evidence"], planned["panel"]["evidence"]);
    let mut forged: Value = read(&file);
    forged["exit_code"] = json!(1);
    write(&file, &forged);
    let refused = sandbox
        .hpp(["deliberate", "plan", &panel, "--evidence", text(&file)])
        .refused();
    assert!(
        refused.ends_with("does not verify (blocked): it resolves nothing"),
        "{refused}"
    );
}

#[test]
fn validate_checks_a_turn_against_its_panel_and_refuses_other_documents() {
    let sandbox = Sandbox::empty();
    let turns = read(Path::new(&ex("review/turns.json")));
    write(&sandbox.root.join("turn.json"), &turns[0]);
    assert_eq!(
        sandbox
            .hpp(["deliberate", "validate", "turn.json"])
            .refused(),
        "validating a turn needs --panel, the panel it belongs to"
    );
    let valid = sandbox
        .hpp([
            "deliberate",
            "validate",
            "turn.json",
            "--panel",
            &ex("review/panel.json"),
        ])
        .json(0);
    assert_eq!(valid["turn"]["seat"], "a");
    assert_eq!(valid["turn"]["sha256"].as_str().map(str::len), Some(64));
    write(
        &sandbox.root.join("other.json"),
        &json!({"schema": "hpp.context/v1"}),
    );
    assert_eq!(
        sandbox
            .hpp(["deliberate", "validate", "other.json"])
            .refused(),
        "expected a hpp.panel/v1, hpp.turn/v1 or hpp.deliberation/v2 document, got 'hpp.context/v1'"
    );
}

#[test]
fn turns_after_the_stop_are_refused_and_nothing_is_written() {
    let sandbox = Sandbox::repo();
    let turns = read(Path::new(&ex("design/turns.json")));
    let mut third: Vec<Value> = turns.as_array().expect("a list").clone();
    let mut late = third[3].clone();
    late["round"] = json!(3);
    late["seen_turns"] = json!([]);
    third.push(late);
    write(&sandbox.root.join("late.json"), &json!(third));
    let refused = sandbox
        .hpp([
            "deliberate",
            "record",
            "--panel",
            &ex("design/panel.json"),
            "--turns",
            "late.json",
            "--judge",
            &ex("design/judge.json"),
        ])
        .refused();
    assert_eq!(
        refused,
        "the session stopped at round 2 (grounded-convergence); turns of later rounds are not part of it"
    );
    assert!(sandbox.hpp_refs().is_empty());
}

/// The seats of a one-round session of `session_type` (plan or release-gate).
fn seats(session_type: &str, judge_family: &str) -> Value {
    let seat = |id: &str, role: &str, family: &str| {
        json!({"id": id, "role": role, "provider": format!("{family}-provider"),
            "model_served": format!("{family}-{id}-2025"), "family": family, "lane": format!("lane-{id}")})
    };
    let mut all = match session_type {
        "plan" => vec![
            seat("p1", "proponent", "claude"),
            seat("p2", "proponent", "gpt"),
            seat("d", "dissent", "gemini"),
            seat("e", "examiner", "mistral"),
        ],
        _ => vec![seat("e", "examiner", "claude"), seat("d", "dissent", "gpt")],
    };
    all.push(seat("j", "judge", judge_family));
    Value::Array(all)
}

/// Seals a one-round session where every participant says `value` on a grounded fact, judged
/// `value` by a judge of `judge_family`; with `bundle`, the panel declares that evidence bundle
/// (release gates need one). Returns the record's ref.
pub(crate) fn converged_session(
    sandbox: &Sandbox,
    session_type: &str,
    options: &[&str],
    value: &str,
    judge_family: &str,
    bundle: Option<&str>,
) -> String {
    let dir = sandbox.path(&format!("session-{session_type}-{value}-{judge_family}"));
    std::fs::create_dir_all(&dir).expect("writable");
    let question = json!({"id": "q", "kind": "choice", "options": options, "ladder": true});
    let panel_path = dir.join("panel.json");
    write(
        &panel_path,
        &json!({"schema": "hpp.panel/v1", "id": format!("{session_type}-session"),
            "session_type": session_type, "question": question,
            "state_sha256": "2222222222222222222222222222222222222222222222222222222222222222",
            "seats": seats(session_type, judge_family),
            "budget": {"max_rounds": 2, "max_chars": 10000}}),
    );
    let mut plan = vec![
        "deliberate",
        "plan",
        text(&panel_path),
        "--out",
        text(&panel_path),
    ];
    if let Some(bundle) = bundle {
        plan.extend(["--evidence", bundle]);
    }
    let panel = sandbox.hpp_in(&sandbox.root, &plan).json(0)["panel"].clone();
    let reference = bundle.unwrap_or("fact-1");
    let turns: Vec<Value> = panel["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .filter(|s| s["role"] != "judge")
        .map(|s| {
            json!({"schema": "hpp.turn/v1", "panel_sha256": panel["sha256"], "seat": s["id"], "round": 1,
                "position": value, "confidence": null, "claims": [{"kind": "fact", "refs": [reference]}],
                "text_sha256": "3333333333333333333333333333333333333333333333333333333333333333",
                "chars": 40, "seen_turns": []})
        })
        .collect();
    let turns_path = dir.join("turns.json");
    write(&turns_path, &json!(turns));
    let judge_seat = &panel["seats"][panel["seats"].as_array().expect("seats").len() - 1];
    let judge_path = dir.join("judge.json");
    write(
        &judge_path,
        &json!({"schema": "hpp.decision/v1", "question": question, "state_sha256": panel["state_sha256"],
            "method": "external-model", "authority": "advisory", "direction": "informational",
            "provider": {"id": judge_seat["provider"], "model_served": judge_seat["model_served"]},
            "raw_response_sha256": "4444444444444444444444444444444444444444444444444444444444444444",
            "outcome": {"status": "recommendation", "value": value, "confidence": 0.9}}),
    );
    let recorded = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "deliberate",
                "record",
                "--panel",
                text(&panel_path),
                "--turns",
                text(&turns_path),
                "--judge",
                text(&judge_path),
            ],
        )
        .json(0);
    assert_eq!(recorded["stop"]["reason"], "grounded-convergence");
    ref_of(&recorded)
}

#[test]
fn a_ref_whose_tree_no_longer_holds_the_sealed_panel_is_broken() {
    use std::io::Write;
    use std::process::Stdio;
    let sandbox = Sandbox::repo();
    let reference = ref_of(&record_review(&sandbox, &[]).json(0));
    let listing = sandbox.git(["ls-tree", &reference]);
    let mut child = sandbox
        .command("git", &sandbox.root)
        .args(["hash-object", "-w", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git runs");
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(b"{\"schema\":\"hpp.panel/v1\"}")
        .expect("git reads");
    let out = child.wait_with_output().expect("git finishes");
    let blob = String::from_utf8(out.stdout)
        .expect("an id")
        .trim()
        .to_owned();
    let forged: String = listing
        .lines()
        .map(|line| {
            if line.ends_with("\tpanel.json") {
                format!("100644 blob {blob}\tpanel.json\n")
            } else {
                format!("{line}\n")
            }
        })
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
        .write_all(forged.as_bytes())
        .expect("git reads");
    let out = child.wait_with_output().expect("git finishes");
    let tree = String::from_utf8(out.stdout)
        .expect("an id")
        .trim()
        .to_owned();
    let commit = sandbox.git(["commit-tree", &tree, "-m", "forged"]);
    sandbox.git(["update-ref", &reference, &commit]);
    let report = sandbox.hpp(["deliberate", "verify", &reference]).json(2);
    assert_eq!(report["status"], "broken");
    assert_eq!(
        report["reason"],
        "panel.json in the ref's tree is not the sealed one"
    );
}

/// A person's decision on a session kept in a ref: one child commit beside the untouched seal,
/// shown and checked by verify, recorded once.
#[test]
fn a_human_decision_is_added_once_beside_the_seal_and_verify_reports_it() {
    let sandbox = Sandbox::repo();
    let recorded = record_review(&sandbox, &[]).json(0);
    let name = ref_of(&recorded);
    let sealed = sandbox.git(["rev-parse", &format!("{name}:record.json")]);
    let decided = sandbox
        .hpp([
            "deliberate",
            "decide",
            &name,
            "--value",
            "medium",
            "--by",
            "release manager",
            "--note",
            "shipping behind a flag",
        ])
        .json(0);
    assert_eq!(decided["human_decision"]["value"], "medium");
    assert_eq!(
        sandbox.git(["rev-parse", &format!("{name}:record.json")]),
        sealed,
        "the sealed record is untouched"
    );
    assert_eq!(
        sandbox.git(["rev-list", "--count", &name]),
        "2",
        "one child commit"
    );
    let verified = sandbox.hpp(["deliberate", "verify", &name]).json(0);
    assert_eq!(verified["status"], "intact");
    assert_eq!(verified["human_decision"]["by"], "release manager");
    sandbox.hpp(["doctor"]).ok();

    let again = sandbox
        .hpp([
            "deliberate",
            "decide",
            &name,
            "--value",
            "high",
            "--by",
            "someone else",
        ])
        .refused();
    assert!(
        again.contains("already decided by release manager"),
        "{again}"
    );
    assert_eq!(sandbox.git(["rev-list", "--count", &name]), "2");
}

#[test]
fn control_a_decision_that_is_not_an_option_or_names_no_one_is_refused_and_writes_nothing() {
    let sandbox = Sandbox::repo();
    let name = ref_of(&record_review(&sandbox, &[]).json(0));
    let before = sandbox.hpp_refs();
    for args in [
        ["--value", "extreme", "--by", "release manager"],
        ["--value", "medium", "--by", " "],
    ] {
        let mut argv = vec!["deliberate", "decide", name.as_str()];
        argv.extend(args);
        let reason = sandbox.hpp_in(&sandbox.root, &argv).refused();
        assert!(reason.contains("human_decision must be"), "{reason}");
    }
    assert_eq!(sandbox.hpp_refs(), before, "nothing was written");
}
