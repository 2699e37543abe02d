//! `git hpp eval run`, `git hpp benchmark` and `git hpp --self-test`: pass@k against pass^k,
//! the three runners, the packaged controls, refusals, and that nothing touches the working
//! directory's repository.

use serde_json::{Value, json};

use crate::harness::Sandbox;

const PACKAGED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/reliable-coding/benchmark-suite.json"
);
const REPLAY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/reliable-coding/replay-suite.json"
);

/// The packaged controls, in suite order.
const CONTROLS: [&str; 10] = [
    "manifest-contract",
    "policy-enforcement",
    "workgraph-waves",
    "lane-collision",
    "monitor-freshness",
    "context-provenance",
    "routing-risk-floor",
    "event-evidence-gate",
    "graph-determinism",
    "evidence-attestation",
];

/// Writes a suite into the sandbox and returns its path.
fn suite(sandbox: &Sandbox, name: &str, cases: Value) -> String {
    let path = sandbox.root.join(name);
    let body = json!({"version": "1", "name": "t", "cases": cases});
    std::fs::write(&path, body.to_string()).expect("the sandbox is writable");
    path.display().to_string()
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|c| c["id"].as_str().expect("an id"))
        .collect()
}

#[test]
fn the_benchmark_passes_outside_any_repository_with_every_control_run() {
    let sandbox = Sandbox::empty();
    let out = sandbox.hpp(["benchmark"]).ok();
    assert_eq!(
        out, "HPP benchmark: pass@k=1.00 · pass^k=1.00 · gate=PASS\n",
        "no control is left out"
    );
}

#[test]
fn the_benchmark_json_runs_all_ten_controls_in_both_directions() {
    let sandbox = Sandbox::empty();
    let report = sandbox.hpp(["benchmark", "-k", "2", "--json"]).json(0);
    assert_eq!(report["suite"]["name"], "reliable-coding-controls");
    assert_eq!(report["k"], 2);
    assert_eq!(ids(&report["cases"]), CONTROLS);
    for case in report["cases"].as_array().expect("cases") {
        assert_eq!(case["outcomes"], json!([true, true]), "{case}");
    }
    assert_eq!(report["not_run"], json!([]));
    assert_eq!(report["metrics"]["ran"], 10);
    assert_eq!(report["gate"]["name"], "both");
    assert_eq!(report["gate"]["passed"], true);
}

#[test]
fn self_test_prints_ok_and_leaves_the_current_repository_alone() {
    let sandbox = Sandbox::empty();
    assert_eq!(sandbox.hpp(["--self-test"]).ok(), "hpp self-test OK\n");

    let repo = Sandbox::repo();
    let status = repo.git(["status", "--porcelain", "--ignored"]);
    let refs = repo.git(["for-each-ref"]);
    assert_eq!(repo.hpp(["--self-test"]).ok(), "hpp self-test OK\n");
    assert_eq!(repo.git(["status", "--porcelain", "--ignored"]), status);
    assert_eq!(repo.git(["for-each-ref"]), refs);
    assert_eq!(repo.hpp_refs(), "");
}

#[test]
fn self_test_inside_a_git_hook_environment_leaves_the_callers_repository_alone() {
    let mut repo = Sandbox::repo();
    let status = repo.git(["status", "--porcelain", "--ignored"]);
    let root = repo.root.display().to_string();
    // git exports these to hooks; the throwaway repositories must not follow them.
    repo.env.insert("GIT_WORK_TREE".into(), root.clone());
    repo.env.insert("GIT_DIR".into(), format!("{root}/.git"));
    assert_eq!(repo.hpp(["--self-test"]).ok(), "hpp self-test OK\n");
    assert_eq!(repo.git(["status", "--porcelain", "--ignored"]), status);
    assert_eq!(repo.hpp_refs(), "");
}

#[test]
fn self_test_is_a_special_form_of_the_exact_argv_only() {
    let sandbox = Sandbox::empty();
    for run in [
        sandbox.hpp(["--self-test", "benchmark"]),
        sandbox.hpp(["self-test"]),
    ] {
        let run = run.exit(3);
        assert!(run.stdout.is_empty(), "a usage error prints no report");
        assert!(!run.stderr.contains("self-test OK"));
    }
}

#[test]
fn the_packaged_suite_file_passes_gate_both_through_eval_run() {
    let sandbox = Sandbox::empty();
    let report = sandbox
        .hpp(["eval", "run", PACKAGED, "-k", "3", "--gate", "both"])
        .json(0);
    assert_eq!(report["metrics"]["pass_at_k"], 1.0);
    assert_eq!(report["metrics"]["pass_caret_k"], 1.0);
    assert_eq!(report["gate"]["capability_ok"], true);
    assert_eq!(report["gate"]["regression_ok"], true);
    // As the reference hashes a suite: the file's own bytes.
    let bytes = std::fs::read(PACKAGED).expect("the packaged suite file");
    assert_eq!(
        report["suite"]["sha256"],
        crate::harness::sha256_hex(&bytes),
        "the suite hash is the file's sha256"
    );
    let benchmark = sandbox.hpp(["benchmark", "--json"]).json(0);
    assert_eq!(
        benchmark["suite"]["sha256"], report["suite"]["sha256"],
        "the benchmark runs the same packaged file"
    );
}

#[test]
fn a_flaky_replay_case_separates_pass_at_k_from_pass_caret_k() {
    let sandbox = Sandbox::empty();
    let report = sandbox
        .hpp(["eval", "run", REPLAY, "--gate", "both"])
        .json(1);
    assert_eq!(report["k"], 3);
    assert_eq!(report["metrics"]["pass_at_k"], 1.0);
    assert_eq!(report["metrics"]["pass_caret_k"], 0.75);
    assert_eq!(report["metrics"]["flaky"], 0.25);
    let flaky = &report["cases"][1];
    assert_eq!(flaky["id"], "fix-date-parsing");
    assert_eq!(
        (&flaky["pass_at_k"], &flaky["pass_caret_k"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(report["gate"]["capability_ok"], true);
    assert_eq!(report["gate"]["regression_ok"], false);
    assert_eq!(report["gate"]["passed"], false);
    // The same runs pass the default capability gate.
    let capability = sandbox.hpp(["eval", "run", REPLAY]).json(0);
    assert_eq!(capability["gate"]["name"], "capability");
    // And with k = 1 only the first run counts: the flaky case failed it.
    let first = sandbox
        .hpp(["eval", "run", REPLAY, "-k", "1", "--gate", "regression"])
        .json(1);
    assert_eq!(first["cases"][1]["outcomes"], json!([false]));
}

#[test]
fn command_cases_pass_on_exit_zero_and_fail_otherwise() {
    let sandbox = Sandbox::empty();
    let path = suite(
        &sandbox,
        "commands.json",
        json!([
            {"id": "true", "runner": "command", "command": ["true"]},
            {"id": "false", "runner": "command", "command": ["false"], "timeout": 5},
        ]),
    );
    let report = sandbox.hpp(["eval", "run", &path, "-k", "2"]).json(1);
    assert_eq!(report["cases"][0]["outcomes"], json!([true, true]));
    assert_eq!(report["cases"][1]["outcomes"], json!([false, false]));
    assert_eq!(report["cases"][1]["failures"], json!(["exit 1"]));
    assert_eq!(report["metrics"]["pass_at_k"], 0.5);
    let only_true = suite(
        &sandbox,
        "true.json",
        json!([{"id": "true", "runner": "command", "command": ["true"]}]),
    );
    sandbox
        .hpp(["eval", "run", &only_true, "--gate", "both"])
        .json(0);
}

#[test]
fn a_suite_with_no_case_run_has_null_metrics_and_fails_its_gate() {
    let sandbox = Sandbox::empty();
    let empty = suite(&sandbox, "empty.json", json!([]));
    let report = sandbox.hpp(["eval", "run", &empty]).json(1);
    assert_eq!(report["metrics"]["pass_at_k"], Value::Null);
    assert_eq!(report["metrics"]["pass_caret_k"], Value::Null);
    assert_eq!(report["metrics"]["flaky"], Value::Null);
}

#[test]
fn control_a_sabotaged_case_makes_the_benchmark_gate_fail() {
    let sandbox = Sandbox::empty();
    let mut cases: Vec<Value> = [
        "policy-enforcement",
        "context-provenance",
        "event-evidence-gate",
    ]
    .iter()
    .map(|id| json!({"id": id, "runner": "hpp-control"}))
    .collect();
    let clean = suite(&sandbox, "clean.json", Value::Array(cases.clone()));
    sandbox
        .hpp(["eval", "run", &clean, "--gate", "both"])
        .json(0);
    cases.push(json!({"id": "sabotage", "runner": "replay", "outcomes": [true, true, false]}));
    let sabotaged = suite(&sandbox, "sabotaged.json", Value::Array(cases));
    let report = sandbox
        .hpp(["eval", "run", &sabotaged, "--gate", "both"])
        .json(1);
    assert_eq!(report["metrics"]["pass_caret_k"], 0.75);
    assert_eq!(report["gate"]["regression_ok"], false);
}

#[test]
fn refusals_print_one_reason_and_nothing_on_stdout() {
    let sandbox = Sandbox::empty();
    let ok = suite(
        &sandbox,
        "ok.json",
        json!([{"id": "a", "runner": "replay", "outcomes": [true]}]),
    );
    assert_eq!(
        sandbox.hpp(["eval", "run", &ok, "-k", "0"]).refused(),
        "k must be an integer >= 1"
    );
    assert_eq!(
        sandbox.hpp(["benchmark", "-k", "-1"]).refused(),
        "k must be an integer >= 1"
    );
    let runner = suite(
        &sandbox,
        "runner.json",
        json!([{"id": "a", "runner": "shell", "command": ["true"]}]),
    );
    assert_eq!(
        sandbox.hpp(["eval", "run", &runner]).refused(),
        "case a has unknown runner shell: expected hpp-control, replay or command"
    );
    let control = suite(
        &sandbox,
        "control.json",
        json!([{"id": "no-such-control", "runner": "hpp-control"}]),
    );
    assert_eq!(
        sandbox.hpp(["eval", "run", &control]).refused(),
        "unknown hpp-control: no-such-control"
    );
    let short = suite(
        &sandbox,
        "short.json",
        json!([{"id": "a", "runner": "replay", "outcomes": [true]}]),
    );
    assert_eq!(
        sandbox.hpp(["eval", "run", &short, "-k", "2"]).refused(),
        "replay case a records 1 outcomes; k=2 needs at least 2"
    );
    assert_eq!(
        sandbox.hpp(["eval", "run", "missing.json"]).refused(),
        "JSON file not found: missing.json"
    );
    let usage = sandbox
        .hpp(["eval", "run", &ok, "--gate", "sometimes"])
        .exit(3);
    assert!(usage.stdout.is_empty());
}
