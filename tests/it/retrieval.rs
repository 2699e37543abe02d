//! `git hpp retrieval eval`: the shipped garden-notes suite in replay and command mode, instrument
//! failures counted apart from misses, null metrics when nothing was measured, and refusals.
//! Every run is in a directory that is not a repository.

use std::path::Path;

use serde_json::{Value, json};

use crate::harness::Sandbox;

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/retrieval/suite.json");
const RETRIEVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/retrieval/keyword_retriever.py"
);

fn argv(items: &[&str]) -> String {
    serde_json::to_string(items).expect("strings serialise")
}

fn case<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["cases"]
        .as_array()
        .expect("cases is a list")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no case {id} in {report}"))
}

/// Writes a one-case suite into the sandbox and returns its path.
fn one_case_suite(sandbox: &Sandbox) -> String {
    let suite = json!({"schema": "hpp.retrieval-suite/v1", "version": "1", "k": 2,
        "cases": [{"id": "only", "query": "tea", "relevant": ["d1"]}]});
    let path = sandbox.root.join("one.json");
    std::fs::write(&path, suite.to_string()).expect("the sandbox is writable");
    path.display().to_string()
}

#[test]
fn the_keyword_baseline_misses_the_recall_gate_with_no_instrument_failure() {
    let sandbox = Sandbox::empty();
    let command = argv(&["python3", RETRIEVER]);
    let report = sandbox
        .hpp(["retrieval", "eval", SUITE, "--retriever-command", &command])
        .json(1);
    assert_eq!(report["schema"], "hpp.retrieval-eval/v1");
    assert_eq!(report["retriever"]["mode"], "command");
    assert_eq!(report["k"], 3);
    let metrics = &report["metrics"];
    assert_eq!(
        (&metrics["total"], &metrics["measured"], &metrics["failed"]),
        (&json!(7), &json!(7), &json!(0))
    );
    let recall = metrics["recall_at_k"].as_f64().expect("recall is measured");
    assert_eq!(format!("{recall:.3}"), "0.786");
    assert_eq!(report["gate"]["passed"], false);
    assert_eq!(report["gate"]["reason"], "mean recall@k 0.786 < 0.8");
    let paraphrase = case(&report, "paraphrase");
    assert_eq!(paraphrase["status"], "measured");
    assert_eq!(paraphrase["metrics"]["recall_at_k"], 0.0);
    assert_eq!(paraphrase["relevant_hits"], json!([]));
    let acid = case(&report, "acid-water");
    assert_eq!(acid["metrics"]["recall_at_k"], 0.5);
    assert_eq!(acid["relevant_hits"], json!(["rainwater-butt"]));
}

#[test]
fn the_verify_line_runs_from_the_repository_root() {
    let sandbox = Sandbox::empty();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = sandbox.hpp_in(
        root,
        &[
            "retrieval",
            "eval",
            "examples/retrieval/suite.json",
            "--retriever-command",
            r#"["python3", "examples/retrieval/keyword_retriever.py"]"#,
        ],
    );
    let report = run.json(1);
    assert_eq!(report["metrics"]["failed"], 0);
    assert_eq!(report["gate"]["reason"], "mean recall@k 0.786 < 0.8");
}

#[test]
fn replay_mode_agrees_with_command_mode_without_any_script() {
    let sandbox = Sandbox::empty();
    let replay = sandbox.hpp(["retrieval", "eval", SUITE]).json(1);
    assert_eq!(
        replay["retriever"],
        json!({"mode": "replay", "command": []})
    );
    let command = argv(&["python3", RETRIEVER]);
    let live = sandbox
        .hpp(["retrieval", "eval", SUITE, "--retriever-command", &command])
        .json(1);
    assert_eq!(replay["metrics"], live["metrics"]);
    assert_eq!(replay["cases"], live["cases"]);
    assert_eq!(replay["suite"], live["suite"]);
    assert_eq!(replay["suite"]["name"], "garden-notes");
    assert_eq!(replay["suite"]["sha256"].as_str().map(str::len), Some(64));
}

#[test]
fn control_a_crashing_retriever_is_an_instrument_failure_not_a_miss() {
    let sandbox = Sandbox::empty();
    let command = argv(&["python3", "-c", "import sys; sys.exit(3)"]);
    let report = sandbox
        .hpp(["retrieval", "eval", SUITE, "--retriever-command", &command])
        .json(1);
    let metrics = &report["metrics"];
    assert_eq!(
        (&metrics["measured"], &metrics["failed"]),
        (&json!(0), &json!(7))
    );
    for name in [
        "hit_at_k",
        "recall_at_k",
        "precision_at_k",
        "mrr",
        "ndcg_at_k",
    ] {
        assert_eq!(metrics[name], Value::Null, "{name} is null, never 0");
    }
    assert_eq!(
        report["gate"]["reason"],
        "no case was measured (7 instrument failures); there is no recall to measure"
    );
    let paraphrase = case(&report, "paraphrase");
    assert_eq!(paraphrase["status"], "instrument-failure");
    assert_eq!(paraphrase["error"], "retriever exited 3: no stderr");
    assert_eq!(paraphrase["metrics"], Value::Null);
}

#[test]
fn a_retriever_that_finds_nothing_scores_a_real_zero() {
    let sandbox = Sandbox::empty();
    let suite = one_case_suite(&sandbox);
    let command = argv(&["python3", "-c", "print('[]')"]);
    let report = sandbox
        .hpp(["retrieval", "eval", &suite, "--retriever-command", &command])
        .json(1);
    assert_eq!(report["metrics"]["measured"], 1);
    assert_eq!(report["metrics"]["recall_at_k"], 0.0);
    assert_eq!(report["gate"]["reason"], "mean recall@k 0.000 < 0.8");
}

#[test]
fn html_a_timeout_and_a_missing_program_are_instrument_failures() {
    let sandbox = Sandbox::empty();
    let suite = one_case_suite(&sandbox);
    for (command, timeout, error) in [
        (
            argv(&["python3", "-c", "print('<html><body>502</body></html>')"]),
            "10",
            "retriever output is not JSON: expected value",
        ),
        (
            argv(&["python3", "-c", "import time; time.sleep(60)"]),
            "0.5",
            "retriever exceeded 0.5s",
        ),
        (
            argv(&["no-such-retriever-on-path"]),
            "10",
            "retriever could not start: check the command and that it is on PATH",
        ),
        (
            argv(&["python3", "-c", "print('[\"d1\", \"d1\"]')"]),
            "10",
            "duplicate id 'd1' in results: return each labelled unit once",
        ),
    ] {
        let report = sandbox
            .hpp([
                "retrieval",
                "eval",
                &suite,
                "--retriever-command",
                &command,
                "--timeout",
                timeout,
            ])
            .json(1);
        assert_eq!(report["cases"][0]["error"], error, "{command}");
        assert_eq!(report["metrics"]["failed"], 1);
        assert_eq!(report["metrics"]["recall_at_k"], Value::Null);
    }
}

#[test]
fn k_overrides_the_suite_and_precision_divides_by_it() {
    let sandbox = Sandbox::empty();
    let report = sandbox.hpp(["retrieval", "eval", SUITE, "-k", "1"]).json(1);
    assert_eq!(
        (&report["k"], &report["suite"]["k"]),
        (&json!(1), &json!(3))
    );
    let aphids = case(&report, "aphids");
    assert_eq!(aphids["returned"], json!(["aphid-control"]));
    assert_eq!(aphids["metrics"]["precision_at_k"], 1.0);
    let wide = sandbox.hpp(["retrieval", "eval", SUITE, "-k", "4"]).json(1);
    assert_eq!(case(&wide, "aphids")["metrics"]["precision_at_k"], 0.25);
}

#[test]
fn a_k_past_64_bits_is_taken_as_python_takes_it_and_printed_with_every_digit() {
    let sandbox = Sandbox::empty();
    // -k 2^63: every answer is scored whole, precision divides by k exactly.
    let out = sandbox
        .hpp(["retrieval", "eval", SUITE, "-k", "9223372036854775808"])
        .exit(1);
    assert!(out.stdout.contains("\"k\": 9223372036854775808,"), "{out}");
    let report: Value = serde_json::from_str(&out.stdout).expect("a JSON report");
    let aphids = case(&report, "aphids");
    assert_eq!(aphids["metrics"]["recall_at_k"], 1.0, "{aphids}");
    // A suite's own k of 10^30: one hit over k is 1e-30, rounded once as Python rounds it
    // (dividing by 10^30's nearest float would print 9.999999999999999e-31 or worse).
    let suite = json!({"schema": "hpp.retrieval-suite/v1", "version": "1", "k": 0,
        "cases": [{"id": "only", "query": "tea", "relevant": ["d1", "d2"],
                   "results": ["d1", "x", "d2"]}]})
    .to_string()
    .replace("\"k\":0", "\"k\":1000000000000000000000000000000");
    let path = sandbox.root.join("huge.json");
    std::fs::write(&path, suite).expect("the sandbox is writable");
    let out = sandbox
        .hpp(["retrieval", "eval", &path.display().to_string()])
        .exit(0);
    assert!(out.stdout.contains("\"precision_at_k\": 2e-30,"), "{out}");
    assert!(
        out.stdout
            .contains("\"k\": 1000000000000000000000000000000"),
        "{out}"
    );
}

#[test]
fn control_a_k_below_one_or_not_an_integer_is_refused_however_large() {
    let sandbox = Sandbox::empty();
    for k in ["0", "-9223372036854775809", "1e3", "x"] {
        let out = sandbox.hpp(["retrieval", "eval", SUITE, "-k", k]).exit(2);
        assert!(out.stdout.is_empty(), "{out}");
        assert!(
            out.stderr.contains("k must be an integer >= 1")
                || out.stderr.contains("invalid int value"),
            "{k}: {out}"
        );
    }
}

#[test]
fn the_gate_passes_under_a_lower_recall_threshold() {
    let sandbox = Sandbox::empty();
    let report = sandbox
        .hpp(["retrieval", "eval", SUITE, "--min-recall", "0.75"])
        .json(0);
    assert_eq!(report["gate"]["passed"], true);
    assert_eq!(report["gate"]["reason"], "every threshold held");
    assert_eq!(
        report["gate"]["thresholds"],
        json!({"min_recall": 0.75, "max_failures": 0})
    );
}

#[test]
fn max_failures_lets_a_known_failure_through() {
    let sandbox = Sandbox::empty();
    let path = sandbox.root.join("mixed.json");
    let suite = json!({"schema": "hpp.retrieval-suite/v1", "version": "1", "k": 1, "cases": [
        {"id": "ok", "query": "q", "relevant": ["d"], "results": ["d"]},
        {"id": "broken", "query": "q", "relevant": ["d"], "results": {"ids": ["d"]}},
    ]});
    std::fs::write(&path, suite.to_string()).expect("the sandbox is writable");
    let path = path.display().to_string();
    let strict = sandbox.hpp(["retrieval", "eval", &path]).json(1);
    assert_eq!(strict["gate"]["reason"], "1 instrument failure(s) > 0");
    let tolerant = sandbox
        .hpp(["retrieval", "eval", &path, "--max-failures", "1"])
        .json(0);
    assert_eq!(tolerant["metrics"]["recall_at_k"], 1.0);
}

#[test]
fn control_bad_flags_and_suites_are_refused_with_nothing_on_stdout() {
    let sandbox = Sandbox::empty();
    let broken = sandbox.root.join("broken.json");
    std::fs::write(&broken, "{").expect("the sandbox is writable");
    let broken = broken.display().to_string();
    let secret = sandbox.root.join("secret.json");
    let suite = json!({"schema": "hpp.retrieval-suite/v1", "version": "1",
        "cases": [{"id": "leak", "query": "token: sk-abcdefghijklmnop", "relevant": ["d"]}]});
    std::fs::write(&secret, suite.to_string()).expect("the sandbox is writable");
    let secret = secret.display().to_string();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--retriever-command", "python3 retriever.py"],
            "--retriever-command must be a JSON array of strings (argv, no shell)",
        ),
        (
            &["--retriever-command", "[]"],
            "--retriever-command must be a JSON array of strings (argv, no shell)",
        ),
        (&["-k", "0"], "k must be an integer >= 1"),
        (
            &["--timeout", "0"],
            "timeout must be a positive, finite number of seconds, at most 86400",
        ),
        (
            &["--min-recall", "1.5"],
            "min_recall must be a number between 0 and 1",
        ),
        (
            &["--max-failures", "-1"],
            "max_failures must be an integer >= 0",
        ),
    ];
    for (flags, message) in cases {
        let mut args = vec!["retrieval", "eval", SUITE];
        args.extend_from_slice(flags);
        assert_eq!(sandbox.hpp_in(&sandbox.root, &args).refused(), message);
    }
    assert_eq!(
        sandbox.hpp(["retrieval", "eval", "nope.json"]).refused(),
        "retrieval suite not found: nope.json"
    );
    assert!(
        sandbox
            .hpp(["retrieval", "eval", &broken])
            .refused()
            .starts_with("invalid retrieval suite JSON: ")
    );
    assert_eq!(
        sandbox.hpp(["retrieval", "eval", &secret]).refused(),
        "case leak: the query looks like it carries a secret; it is never sent to a retriever"
    );
}
