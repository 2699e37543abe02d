//! `git hpp decide validate|eval`: the shipped change-risk record and suite, advisory authority
//! only, pinned model versions, the baseline decider in command mode, the recorded records in
//! replay mode, and a crashing decider counted as an instrument failure. Every run is in a
//! directory that is not a repository.

use std::path::Path;

use assert_fs::prelude::*;
use serde_json::{Value, json};

use crate::harness::Sandbox;

const RECORD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/decision/record.json");
const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/decision/suite.json");
const DECIDER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/decision/baseline_decider.py"
);

fn argv(items: &[&str]) -> String {
    serde_json::to_string(items).expect("strings serialise")
}

fn example_record() -> Value {
    let text = std::fs::read_to_string(RECORD).expect("the example record is readable");
    serde_json::from_str(&text).expect("the example record is JSON")
}

/// Writes `value` into the sandbox as `name` and returns its path.
fn write(sandbox: &Sandbox, name: &str, value: &Value) -> String {
    let file = sandbox.child(name);
    file.write_str(&value.to_string())
        .expect("the sandbox is writable");
    file.display().to_string()
}

fn case<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["cases"]
        .as_array()
        .expect("cases is a list")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no case {id} in {report}"))
}

#[test]
fn validate_prints_valid_and_the_raised_effective_value() {
    let sandbox = Sandbox::empty();
    let out = sandbox.hpp(["decide", "validate", RECORD]).json(0);
    assert_eq!(out["status"], "valid");
    assert_eq!(
        out["effective"],
        json!({"value": "high", "action": "raised", "declared": "medium"})
    );
    let record = &out["record"];
    assert_eq!(record["authority"], "advisory");
    assert_eq!(
        record["provider"]["model_served"],
        "risk-fixture-2026-01-15"
    );
    assert_eq!(
        record["question"]["sha256"].as_str().map(str::len),
        Some(64)
    );
    assert_eq!(
        record["usage"],
        json!({"input_tokens": 212, "latency_ms": 38, "output_tokens": 9})
    );
}

#[test]
fn validate_keeps_the_declared_value_when_advice_is_lower() {
    let sandbox = Sandbox::empty();
    let mut record = example_record();
    record["outcome"]["value"] = json!("low");
    record["outcome"]["probabilities"] = json!({"low": 0.9, "medium": 0.05, "high": 0.05});
    let path = write(&sandbox, "lower.json", &record);
    let out = sandbox.hpp(["decide", "validate", &path]).json(0);
    assert_eq!(
        out["effective"],
        json!({"value": "medium", "action": "kept", "declared": "medium"})
    );
}

#[test]
fn control_validate_refuses_any_authority_but_advisory() {
    let sandbox = Sandbox::empty();
    for authority in ["binding", "approver", "ADVISORY"] {
        let mut record = example_record();
        record["authority"] = json!(authority);
        let path = write(&sandbox, "authority.json", &record);
        assert_eq!(
            sandbox.hpp(["decide", "validate", &path]).refused(),
            "authority must be 'advisory': a decision record never grants or approves anything"
        );
    }
}

#[test]
fn validate_refuses_a_model_alias_and_a_missing_raw_response_hash() {
    let sandbox = Sandbox::empty();
    let mut alias = example_record();
    alias["provider"]["model_served"] = json!("risk-classifier-latest");
    let path = write(&sandbox, "alias.json", &alias);
    assert_eq!(
        sandbox.hpp(["decide", "validate", &path]).refused(),
        "provider.model_served must be the pinned version that answered, never an alias"
    );
    let mut unhashed = example_record();
    unhashed
        .as_object_mut()
        .expect("a record is an object")
        .remove("raw_response_sha256");
    let path = write(&sandbox, "unhashed.json", &unhashed);
    assert_eq!(
        sandbox.hpp(["decide", "validate", &path]).refused(),
        "raw_response_sha256 must be a 64-character lowercase sha256"
    );
}

#[test]
fn validate_refuses_unreadable_input_with_the_reference_messages() {
    let sandbox = Sandbox::empty();
    assert_eq!(
        sandbox.hpp(["decide", "validate", "nope.json"]).refused(),
        "JSON file not found: nope.json"
    );
    std::fs::write(sandbox.root.join("list.json"), "[]").expect("the sandbox is writable");
    assert_eq!(
        sandbox.hpp(["decide", "validate", "list.json"]).refused(),
        "JSON root in list.json must be an object"
    );
    std::fs::write(sandbox.root.join("cut.json"), "{\"schema\":").expect("writable");
    assert!(
        sandbox
            .hpp(["decide", "validate", "cut.json"])
            .refused()
            .starts_with("invalid JSON in cut.json: ")
    );
}

#[test]
fn the_baseline_decider_holds_every_threshold() {
    let sandbox = Sandbox::empty();
    let command = argv(&["python3", DECIDER]);
    let report = sandbox
        .hpp(["decide", "eval", SUITE, "--decider-command", &command])
        .json(0);
    assert_eq!(report["schema"], "hpp.decision-eval/v1");
    assert_eq!(report["decider"]["mode"], "command");
    assert_eq!(report["question"]["id"], "change-risk");
    let m = &report["metrics"];
    assert_eq!(
        (&m["total"], &m["decided"], &m["abstained"], &m["failed"]),
        (&json!(12), &json!(10), &json!(2), &json!(0))
    );
    assert_eq!(m["selective_accuracy"], 0.9);
    assert_eq!(m["correct_abstentions"], 1);
    assert_eq!(m["errors_by_expected"], json!({"low": 1}));
    assert_eq!(
        m["brier"], "not-measured",
        "a word rule publishes no probabilities"
    );
    assert_eq!(m["coverage_curve"], "not-measured");
    assert_eq!(report["gate"]["reason"], "every threshold held");
    let wrong = case(&report, "delete-script");
    assert_eq!(
        (&wrong["value"], &wrong["correct"]),
        (&json!("high"), &json!(false))
    );
    let vague = case(&report, "vague");
    assert_eq!(
        (&vague["status"], &vague["correct"]),
        (&json!("abstention"), &json!(true))
    );
}

#[test]
fn the_verify_line_runs_from_the_repository_root() {
    let sandbox = Sandbox::empty();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let report = sandbox
        .hpp_in(
            root,
            &[
                "decide",
                "eval",
                "examples/decision/suite.json",
                "--decider-command",
                r#"["python3", "examples/decision/baseline_decider.py"]"#,
            ],
        )
        .json(0);
    assert_eq!(report["metrics"]["failed"], 0);
}

#[test]
fn replay_mode_measures_the_recorded_records_without_any_script() {
    let sandbox = Sandbox::empty();
    let report = sandbox.hpp(["decide", "eval", SUITE]).json(1);
    assert_eq!(report["decider"], json!({"mode": "replay", "command": []}));
    let m = &report["metrics"];
    assert_eq!(
        (
            &m["decided"],
            &m["abstained"],
            &m["failed"],
            &m["confident_errors"]
        ),
        (&json!(10), &json!(1), &json!(1), &json!(1))
    );
    let brier = m["brier"]
        .as_f64()
        .expect("every decision published probabilities");
    assert!((brier - 0.17604).abs() < 1e-9, "{brier}");
    let curve = m["coverage_curve"]
        .as_array()
        .expect("confidences give a curve");
    let floors: Vec<f64> = curve.iter().filter_map(|p| p["floor"].as_f64()).collect();
    assert_eq!(floors, [0.5, 0.6, 0.7, 0.8, 0.9]);
    assert_eq!(curve[1]["decided"], 9);
    let failed = case(&report, "login-check");
    assert_eq!(failed["status"], "instrument-failure");
    assert_eq!(failed["correct"], Value::Null);
    assert_eq!(report["gate"]["reason"], "1 instrument failure(s) > 0");

    let next = sandbox
        .hpp(["decide", "eval", SUITE, "--max-failures", "1"])
        .json(1);
    assert_eq!(next["gate"]["reason"], "1 confident error(s) > 0");
    let passed = sandbox
        .hpp([
            "decide",
            "eval",
            SUITE,
            "--max-failures",
            "1",
            "--max-confident-errors",
            "1",
        ])
        .json(0);
    assert_eq!(passed["gate"]["max_confident_errors"], 1);
    let strict = sandbox
        .hpp([
            "decide",
            "eval",
            SUITE,
            "--max-failures",
            "1",
            "--min-selective-accuracy",
            "0.95",
        ])
        .json(1);
    assert_eq!(strict["gate"]["reason"], "selective accuracy 0.900 < 0.95");
}

#[test]
fn control_a_crashing_decider_is_an_instrument_failure_not_a_wrong_answer() {
    let sandbox = Sandbox::empty();
    let command = argv(&["python3", "-c", "import sys; sys.exit(3)"]);
    let report = sandbox
        .hpp(["decide", "eval", SUITE, "--decider-command", &command])
        .json(1);
    let m = &report["metrics"];
    assert_eq!((&m["decided"], &m["failed"]), (&json!(0), &json!(12)));
    assert_eq!(m["selective_accuracy"], Value::Null);
    assert_eq!(m["errors_by_expected"], json!({}));
    assert_eq!(
        report["gate"]["reason"],
        "no decision was made (0 abstained, 12 instrument failure(s)); there is no accuracy to measure"
    );
    let first = case(&report, "fix-typo");
    assert_eq!(first["error"], "decider exited 3: no stderr");
    assert_eq!(first["correct"], Value::Null);
}

#[test]
fn an_html_page_or_a_record_for_another_state_is_an_instrument_failure() {
    let sandbox = Sandbox::empty();
    let html = argv(&[
        "python3",
        "-c",
        "print('<!doctype html><p>Bad gateway</p>')",
    ]);
    let report = sandbox
        .hpp(["decide", "eval", SUITE, "--decider-command", &html])
        .json(1);
    assert_eq!(
        case(&report, "vague")["error"],
        "decider output is not JSON: expected value"
    );
    // A decider that answers every case with the example record judged another text.
    let replayer = argv(&["python3", "-c", &format!("print(open({RECORD:?}).read())")]);
    let report = sandbox
        .hpp(["decide", "eval", SUITE, "--decider-command", &replayer])
        .json(1);
    assert_eq!(
        case(&report, "fix-typo")["error"],
        "record judged a different state than the case holds"
    );
    assert_eq!(case(&report, "drop-column")["status"], "recommendation");
}

#[test]
fn control_bad_flags_and_suites_are_refused_with_nothing_on_stdout() {
    let sandbox = Sandbox::empty();
    for (flags, message) in [
        (
            ["--decider-command", "python3 decider.py"],
            "--decider-command must be a JSON array of strings (argv, no shell)",
        ),
        (
            ["--timeout", "-1"],
            "timeout must be a positive, finite number of seconds, at most 86400",
        ),
        (
            ["--min-selective-accuracy", "2"],
            "min_selective_accuracy must be a number between 0 and 1",
        ),
        (
            ["--max-confident-errors", "-1"],
            "max_confident_errors must be an integer >= 0",
        ),
    ] {
        let args = ["decide", "eval", SUITE, flags[0], flags[1]];
        assert_eq!(sandbox.hpp(args).refused(), message);
    }
    assert_eq!(
        sandbox.hpp(["decide", "eval", "nope.json"]).refused(),
        "decision suite not found: nope.json"
    );
    let question = json!({"id": "q", "kind": "choice", "options": ["no", "yes"]});
    let secret = write(
        &sandbox,
        "secret.json",
        &json!({"schema": "hpp.decision-suite/v1", "question": question,
            "cases": [{"id": "leak", "state": "api_key = 12345", "expected": "no"}]}),
    );
    assert_eq!(
        sandbox.hpp(["decide", "eval", &secret]).refused(),
        "case leak: state looks like it carries a secret; it is never hashed into a record or sent to a decider"
    );
    let score = write(
        &sandbox,
        "score.json",
        &json!({"schema": "hpp.decision-suite/v1",
            "question": {"id": "q", "kind": "score", "options": ["no", "yes"]},
            "cases": [{"id": "a", "state": "s", "expected": "no"}]}),
    );
    assert_eq!(
        sandbox.hpp(["decide", "eval", &score]).refused(),
        "question kind must be 'choice'; score and probability answers are not measurable in v1"
    );
}
