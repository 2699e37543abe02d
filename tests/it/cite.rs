//! `git hpp cite check`: unknown ids, ranges and empty markers block; uncited numbers and
//! overloaded sentences warn; unusable input is refused. No repository needed.

use assert_fs::prelude::*;
use serde_json::Value;

use crate::harness::Sandbox;

const ANSWER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/citations/answer.md");
const CONTEXT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/citations/context.json"
);

fn codes(report: &Value) -> Vec<&str> {
    report["findings"]
        .as_array()
        .expect("a list of findings")
        .iter()
        .map(|f| f["code"].as_str().expect("a code"))
        .collect()
}

/// Writes a copy of the example answer with `from` replaced by `to`; returns its name.
fn edited(sandbox: &Sandbox, from: &str, to: &str) -> &'static str {
    let text = std::fs::read_to_string(ANSWER).expect("the example answer exists");
    assert!(text.contains(from), "the example has {from}");
    std::fs::write(sandbox.root.join("answer.md"), text.replace(from, to))
        .expect("the sandbox is writable");
    "answer.md"
}

fn write(sandbox: &Sandbox, name: &str, text: &str) {
    sandbox
        .child(name)
        .write_str(text)
        .expect("the sandbox is writable");
}

#[test]
fn the_example_answer_is_ok_and_cites_four_of_its_five_sources() {
    let sandbox = Sandbox::empty();
    let report = sandbox
        .hpp(["cite", "check", "--text", ANSWER, "--context", CONTEXT])
        .json(0);
    assert_eq!(report["schema"], "hpp.citation-check/v1");
    assert_eq!(report["verdict"], "ok");
    assert_eq!(report["exit_code"], 0);
    assert_eq!(codes(&report), Vec::<&str>::new());
    let counts = &report["counts"];
    assert_eq!(counts["sentences"], 7);
    assert_eq!(counts["markers"], 5);
    assert_eq!(counts["quantitative_sentences"], 5);
    assert_eq!(counts["unique_cited_ids"], 4);
    assert_eq!(counts["context_ids"], 5);
    assert_eq!(counts["unused_context_ids"], 1);
    assert_eq!(report["max_per_sentence"], 4);
    assert_eq!(report["marker_pattern"], r"\[ID:([^\]\n]*)\]");
}

#[test]
fn control_an_unknown_id_blocks_with_exit_2_and_the_report() {
    let sandbox = Sandbox::empty();
    let text = edited(&sandbox, "[ID:glossary]", "[ID:glossary-v2]");
    let report = sandbox
        .hpp(["cite", "check", "--text", text, "--context", CONTEXT])
        .json(2);
    assert_eq!(report["verdict"], "block");
    assert_eq!(codes(&report), ["UNKNOWN_ID"]);
    let finding = &report["findings"][0];
    assert_eq!(finding["marker"], "[ID:glossary-v2]");
    assert_eq!(finding["sentence"], 2);
    assert_eq!(finding["line"], 3);
    assert_eq!(
        finding["message"],
        "marker cites 'glossary-v2', which is not in the context"
    );
}

#[test]
fn a_number_left_without_its_marker_warns_uncited_claim() {
    let sandbox = Sandbox::empty();
    let text = edited(&sandbox, " [ID:policy-renewals]", "");
    let report = sandbox
        .hpp(["cite", "check", "--text", text, "--context", CONTEXT])
        .json(1);
    assert_eq!(report["verdict"], "warn");
    assert_eq!(codes(&report), ["UNCITED_CLAIM"]);
    assert_eq!(report["findings"][0]["token"], "14");
    assert_eq!(report["counts"]["unused_context_ids"], 2);
}

#[test]
fn a_range_in_one_marker_blocks() {
    let sandbox = Sandbox::empty();
    let text = edited(
        &sandbox,
        "[ID:budget-memo]",
        "[ID:budget-memo, loan-stats-2025]",
    );
    let report = sandbox
        .hpp(["cite", "check", "--text", text, "--context", CONTEXT])
        .json(2);
    assert_eq!(codes(&report), ["RANGE"]);
}

#[test]
fn a_text_that_cites_nothing_warns_no_markers() {
    let sandbox = Sandbox::empty();
    write(
        &sandbox,
        "plain.md",
        "The branch opens early on weekdays.\n",
    );
    let report = sandbox
        .hpp(["cite", "check", "--text", "plain.md", "--context", CONTEXT])
        .json(1);
    assert_eq!(codes(&report), ["NO_MARKERS"]);
    assert!(report["findings"][0]["sentence"].is_null());
}

#[test]
fn max_per_sentence_and_marker_flags_are_honoured() {
    let sandbox = Sandbox::empty();
    write(&sandbox, "ctx.json", r#"["a", "b"]"#);
    write(&sandbox, "two.md", "Both agree [ID:a][ID:b].\n");
    let report = sandbox
        .hpp([
            "cite",
            "check",
            "--text",
            "two.md",
            "--context",
            "ctx.json",
            "--max-per-sentence",
            "1",
        ])
        .json(1);
    assert_eq!(codes(&report), ["TOO_MANY"]);
    assert_eq!(report["findings"][0]["count"], 2);
    write(&sandbox, "custom.md", "Up 5% {{a}}.\n");
    let report = sandbox
        .hpp([
            "cite",
            "check",
            "--text",
            "custom.md",
            "--context",
            "ctx.json",
            "--marker",
            r"\{\{([^}]*)\}\}",
        ])
        .json(0);
    assert_eq!(report["counts"]["markers"], 1);
    // Python's re has look-behind; so does a marker here (bounded, see hpp_core::pattern).
    write(&sandbox, "behind.md", "Up 5% @cite:a.\n");
    let report = sandbox
        .hpp([
            "cite",
            "check",
            "--text",
            "behind.md",
            "--context",
            "ctx.json",
            "--marker",
            r"(?<=@cite:)([a-z]+)",
        ])
        .json(0);
    assert_eq!(report["counts"]["markers"], 1, "{report}");
}

#[test]
fn control_unusable_input_is_refused_with_nothing_on_stdout() {
    let sandbox = Sandbox::empty();
    write(&sandbox, "empty.md", "  \n");
    write(&sandbox, "secret.md", "Use api_key=abc123 to log in.\n");
    write(&sandbox, "ok.md", "Fine [ID:a].\n");
    write(&sandbox, "ctx.json", r#"["a"]"#);
    write(
        &sandbox,
        "secret-ctx.json",
        r#"[{"id": "a", "text": "-----BEGIN OPENSSH PRIVATE KEY-----"}]"#,
    );
    write(&sandbox, "broken.json", "[");
    let check = |text: &str, context: &str, extra: &[&str]| {
        let mut args = vec!["cite", "check", "--text", text, "--context", context];
        args.extend_from_slice(extra);
        sandbox.hpp_in(&sandbox.root, &args).refused()
    };
    assert_eq!(
        check("empty.md", "ctx.json", &[]),
        "text is empty: there is nothing to check"
    );
    assert_eq!(
        check("secret.md", "ctx.json", &[]),
        "text looks like it carries a secret; it is never checked, hashed or echoed into a report"
    );
    assert_eq!(
        check("ok.md", "secret-ctx.json", &[]),
        "context item 0 looks like it carries a secret; it is never hashed into a report"
    );
    assert_eq!(
        check("ok.md", "ctx.json", &["--marker", "(unclosed"]),
        "invalid marker regex: unclosed group"
    );
    assert_eq!(
        check("ok.md", "ctx.json", &["--marker", r"\[ID:[^\]]*\]"]),
        "marker regex needs exactly one capture group (the id); it has 0"
    );
    assert_eq!(
        check("ok.md", "ctx.json", &["--max-per-sentence", "0"]),
        "max_per_sentence must be a positive integer"
    );
    assert_eq!(
        check("missing.md", "ctx.json", &[]),
        "text file not found: missing.md"
    );
    assert!(check("ok.md", "broken.json", &[]).starts_with("invalid context JSON: "));
}
