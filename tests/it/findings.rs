//! `git hpp findings check`: the hpp.findings/v1 shape, derived verdicts, and one refused
//! document refusing the whole command. No repository needed.

use assert_fs::prelude::*;
use serde_json::Value;

use crate::harness::Sandbox;

const CLEAN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/review-lenses/deletion-clean.json"
);
const PARTIAL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/review-lenses/partial-set.json"
);
const CHANGE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/review-lenses/change.diff"
);

fn example(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the example exists"))
        .expect("the example is JSON")
}

fn write(sandbox: &Sandbox, name: &str, value: &Value) {
    sandbox
        .child(name)
        .write_str(&value.to_string())
        .expect("the sandbox is writable");
}

#[test]
fn the_clean_deletion_review_alone_passes() {
    let sandbox = Sandbox::empty();
    let out = sandbox.hpp(["findings", "check", CLEAN]).json(0);
    let reports = out["reports"].as_array().expect("a list of reports");
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["file"], CLEAN);
    assert_eq!(reports[0]["lens"], "deletion");
    assert_eq!(reports[0]["verdict"], "pass");
    assert_eq!(
        reports[0]["counts"],
        serde_json::json!({"high": 0, "medium": 0, "low": 0})
    );
}

#[test]
fn the_partial_set_review_warns_with_one_caller_not_updated() {
    let sandbox = Sandbox::empty();
    let out = sandbox.hpp(["findings", "check", CLEAN, PARTIAL]).json(1);
    let reports = out["reports"].as_array().expect("a list of reports");
    assert_eq!(reports[0]["verdict"], "pass");
    assert_eq!(reports[1]["verdict"], "warn");
    assert_eq!(reports[1]["counts"]["medium"], 1);
    let findings = reports[1]["findings"]
        .as_array()
        .expect("a list of findings");
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0]["code"], "CALLER_NOT_UPDATED");
    assert_eq!(findings[0]["file"], "lending/batch.py");
    assert_eq!(findings[0]["line"], 27);
}

#[test]
fn both_reviews_name_the_example_change() {
    let sandbox = Sandbox::empty();
    sandbox
        .hpp(["findings", "check", CLEAN, PARTIAL, "--subject", CHANGE])
        .json(1);
}

#[test]
fn a_high_finding_fails_the_review_and_exits_1() {
    let sandbox = Sandbox::empty();
    let mut doc = example(PARTIAL);
    doc["findings"][0]["severity"] = "high".into();
    write(&sandbox, "high.json", &doc);
    let out = sandbox.hpp(["findings", "check", "high.json"]).json(1);
    assert_eq!(out["reports"][0]["verdict"], "fail");
}

#[test]
fn a_line_past_64_bits_is_a_line_as_in_python_and_printed_with_every_digit() {
    let sandbox = Sandbox::empty();
    let doc = example(PARTIAL).to_string();
    let first_line = example(PARTIAL)["findings"][0]["line"].to_string();
    let huge = doc.replacen(
        &format!("\"line\":{first_line}"),
        "\"line\":18446744073709551616",
        1,
    );
    assert_ne!(huge, doc, "the example's first finding has a line");
    sandbox
        .child("huge.json")
        .write_str(&huge)
        .expect("the sandbox is writable");
    let out = sandbox.hpp(["findings", "check", "huge.json"]).exit(1);
    assert!(
        out.stdout.contains("\"line\": 18446744073709551616"),
        "{out}"
    );
}

#[test]
fn control_a_line_below_one_or_with_a_fraction_is_refused() {
    let sandbox = Sandbox::empty();
    for line in ["0", "-18446744073709551616", "1.5", "1e3"] {
        let mut doc = example(PARTIAL);
        doc["findings"][0]["line"] = serde_json::from_str(line).expect("a JSON number");
        write(&sandbox, "bad.json", &doc);
        let reason = sandbox.hpp(["findings", "check", "bad.json"]).refused();
        assert!(
            reason.contains("line must be a line number from 1"),
            "{line}: {reason}"
        );
    }
}

#[test]
fn control_a_key_the_contract_does_not_define_refuses_the_whole_command() {
    let sandbox = Sandbox::empty();
    let mut doc = example(CLEAN);
    doc["verdict"] = "pass".into();
    write(&sandbox, "declared.json", &doc);
    let reason = sandbox
        .hpp(["findings", "check", PARTIAL, "declared.json"])
        .refused();
    assert_eq!(
        reason,
        "declared.json: the document carries keys the contract does not define: ['verdict']"
    );
}

#[test]
fn control_a_review_of_another_change_is_refused() {
    let sandbox = Sandbox::empty();
    std::fs::write(sandbox.root.join("other.diff"), "a different change\n")
        .expect("the sandbox is writable");
    let reason = sandbox
        .hpp(["findings", "check", "--subject", "other.diff", CLEAN])
        .refused();
    assert!(
        reason.ends_with(
            "subject_sha256 names another change than the one given; this review is not of it"
        ),
        "{reason}"
    );
    let reason = sandbox
        .hpp(["findings", "check", "--subject", "nope.diff", CLEAN])
        .refused();
    assert_eq!(reason, "subject not found: nope.diff");
}

#[test]
fn an_empty_inspected_and_a_finding_without_evidence_are_refused() {
    let sandbox = Sandbox::empty();
    let mut empty = example(CLEAN);
    empty["inspected"] = serde_json::json!([]);
    write(&sandbox, "empty.json", &empty);
    let reason = sandbox.hpp(["findings", "check", "empty.json"]).refused();
    assert_eq!(
        reason,
        "empty.json: inspected (what the lens looked at) must be a non-empty list of non-empty strings"
    );
    let mut bare = example(PARTIAL);
    bare["findings"][0]["evidence"] = serde_json::json!([]);
    write(&sandbox, "bare.json", &bare);
    let reason = sandbox.hpp(["findings", "check", "bare.json"]).refused();
    assert_eq!(
        reason,
        "bare.json: finding 0: evidence must be a non-empty list of non-empty strings"
    );
}
