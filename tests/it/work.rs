//! `git hpp work`: WorkGraph waves and plans, their refusals, and spec coverage joined to
//! pytest and nextest JUnit reports. None of these commands needs a repository.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::harness::{Run, Sandbox};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const WORKGRAPH: &str = "examples/workgraph/workgraph.json";
const COVERAGE_SPEC: &str = "examples/coverage/workgraph.json";
const PYTEST_PASSED: &str = "examples/coverage/junit/pytest-passed.xml";
const PYTEST_SKIPPED: &str = "examples/coverage/junit/pytest-skipped.xml";
const NEXTEST_PASSED: &str = "examples/coverage/junit/nextest-passed.xml";
const NEXTEST_FAILED: &str = "examples/coverage/junit/nextest-failed.xml";

/// Runs `git hpp` from the repository root, as the README's example commands do.
fn at_root(sandbox: &Sandbox, args: &[&str]) -> Run {
    sandbox.hpp_in(Path::new(ROOT), args)
}

fn ids(values: &Value) -> Vec<String> {
    values
        .as_array()
        .expect("a list")
        .iter()
        .map(|v| v["id"].as_str().expect("an id").to_owned())
        .collect()
}

fn wave_lists(waves: &Value) -> Vec<Vec<String>> {
    waves
        .as_array()
        .expect("a list of waves")
        .iter()
        .map(|w| serde_json::from_value(w["work"].clone()).expect("wave members"))
        .collect()
}

fn write_spec(sandbox: &Sandbox, name: &str, spec: &Value) -> String {
    std::fs::write(sandbox.root.join(name), spec.to_string()).expect("the sandbox is writable");
    name.to_owned()
}

fn example_spec() -> Value {
    let text = std::fs::read_to_string(Path::new(ROOT).join(WORKGRAPH)).expect("the example");
    serde_json::from_str(&text).expect("the example is JSON")
}

/// Units and the ids each depends on.
type Links<'a> = &'a [(&'a str, &'a [&'a str])];

fn chain(links: Links<'_>) -> Value {
    let work: Vec<Value> = links
        .iter()
        .map(|(id, deps)| json!({"id": id, "tier": "economy", "depends_on": deps, "acceptance": ["it holds"]}))
        .collect();
    json!({ "work": work })
}

/// Copies the coverage example into the sandbox, sources dated before the reports, so the
/// answer does not depend on the order a checkout wrote the files in.
fn coverage_copy(sandbox: &Sandbox) {
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    let new = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for (file, when) in [
        (COVERAGE_SPEC, old),
        ("examples/coverage/test_parse.py", old),
        ("examples/coverage/render.rs", old),
        (PYTEST_PASSED, new),
        (PYTEST_SKIPPED, new),
        (NEXTEST_PASSED, new),
        (NEXTEST_FAILED, new),
    ] {
        let to = sandbox.root.join(file);
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("the sandbox is writable");
        std::fs::copy(Path::new(ROOT).join(file), &to).expect("the example copies");
        set_mtime(&to, when);
    }
}

fn set_mtime(path: &PathBuf, when: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(when))
        .expect("the mtime can be set");
}

#[test]
fn waves_of_the_example_are_spec_then_build_and_docs_then_verify() {
    let sandbox = Sandbox::empty();
    let waves = at_root(&sandbox, &["work", "waves", WORKGRAPH]).json(0);
    assert_eq!(waves["schema"], "hpp.workgraph-waves/v1");
    assert_eq!(
        wave_lists(&waves["waves"]),
        [vec!["spec"], vec!["build", "docs"], vec!["verify"]]
    );
    let indices: Vec<u64> = waves["waves"]
        .as_array()
        .expect("waves")
        .iter()
        .map(|w| w["index"].as_u64().expect("an index"))
        .collect();
    assert_eq!(indices, [1, 2, 3], "verify appears only in wave 3");
    assert_eq!(
        waves["tier_counts"],
        json!({"economy": 2, "balanced": 1, "frontier": 1})
    );
}

#[test]
fn plan_of_the_example_prints_units_edges_waves_and_tier_counts() {
    let sandbox = Sandbox::empty();
    let plan = at_root(&sandbox, &["work", "plan", WORKGRAPH]).json(0);
    assert_eq!(plan["schema"], "hpp.workgraph/v1");
    assert_eq!(ids(&plan["work"]), ["spec", "build", "docs", "verify"]);
    assert_eq!(
        plan["edges"],
        json!([
            {"from": "build", "to": "verify", "relation": "depends-on"},
            {"from": "docs", "to": "verify", "relation": "depends-on"},
            {"from": "spec", "to": "build", "relation": "depends-on"},
            {"from": "spec", "to": "docs", "relation": "depends-on"},
        ])
    );
    assert_eq!(plan["waves"].as_array().expect("waves").len(), 3);
    assert_eq!(plan["tier_counts"]["economy"], 2);
    // A criterion without an id is named by the first 48 characters of its text's slug.
    assert_eq!(
        ids(&plan["criteria"]),
        [
            "build/columns",
            "build/quoting",
            "docs/the-readme-shows-one-export-command-and-its-outp",
            "spec/the-csv-columns-their-order-and-their-types-are",
            "verify/a-reviewer-from-another-model-family-signs-off-o",
            "verify/replay",
        ]
    );
    assert_eq!(
        plan["done_gate"],
        json!(["committed_changes", "review_ready"])
    );
    assert_eq!(
        plan["work"][0]["gate"],
        json!(["committed_changes", "review_ready"])
    );
    assert_eq!(
        plan["work"][3]["gate"],
        json!(["committed_changes", "review_ready", "evidence_ref_exists"])
    );
}

#[test]
fn mermaid_is_the_same_bytes_for_plan_and_waves_and_every_run() {
    let sandbox = Sandbox::empty();
    let plan = at_root(
        &sandbox,
        &["work", "plan", WORKGRAPH, "--format", "mermaid"],
    )
    .ok();
    let waves = at_root(
        &sandbox,
        &["work", "waves", WORKGRAPH, "--format", "mermaid"],
    )
    .ok();
    let again = at_root(
        &sandbox,
        &["work", "waves", WORKGRAPH, "--format", "mermaid"],
    )
    .ok();
    assert_eq!(plan, waves);
    assert_eq!(waves, again);
    assert_eq!(
        plan,
        "flowchart LR\n  subgraph c0[\"wave 1\"]\n    n2[\"spec · frontier\"]\n  end\n  subgraph c1[\"wave 2\"]\n    n0[\"build · economy\"]\n    n1[\"docs · economy\"]\n  end\n  subgraph c2[\"wave 3\"]\n    n3[\"verify · balanced\"]\n  end\n  n0 -->|depends-on| n3\n  n1 -->|depends-on| n3\n  n2 -->|depends-on| n0\n  n2 -->|depends-on| n1\n"
    );
}

#[test]
fn control_a_unit_without_acceptance_criteria_is_refused() {
    let sandbox = Sandbox::empty();
    let mut spec = example_spec();
    spec["work"][1]
        .as_object_mut()
        .expect("a unit")
        .remove("acceptance");
    let name = write_spec(&sandbox, "spec.json", &spec);
    let reason = sandbox.hpp(["work", "plan", name.as_str()]).refused();
    assert_eq!(reason, "work docs needs non-empty acceptance criteria");
    let name = write_spec(&sandbox, "spec.json", &spec);
    let reason = sandbox.hpp(["work", "waves", name.as_str()]).refused();
    assert!(
        reason.contains("needs non-empty acceptance criteria"),
        "{reason}"
    );
}

#[test]
fn control_an_unknown_dependency_is_refused() {
    let sandbox = Sandbox::empty();
    let mut spec = example_spec();
    spec["work"][2]["depends_on"] = json!(["spec", "design"]);
    let name = write_spec(&sandbox, "spec.json", &spec);
    let reason = sandbox.hpp(["work", "plan", name.as_str()]).refused();
    assert_eq!(reason, "unknown dependency: build -> design");
}

#[test]
fn control_cycles_are_refused_with_their_path() {
    let sandbox = Sandbox::empty();
    let cases: [(Links<'_>, &str); 3] = [
        (
            &[("a", &["c"]), ("b", &["a"]), ("c", &["b"])],
            "dependency cycle: a -> c -> b -> a",
        ),
        (&[("a", &["a"])], "dependency cycle: a -> a"),
        (
            &[("a", &["b"]), ("b", &["a"])],
            "dependency cycle: a -> b -> a",
        ),
    ];
    for (links, message) in cases {
        let name = write_spec(&sandbox, "cycle.json", &chain(links));
        assert_eq!(
            sandbox.hpp(["work", "waves", name.as_str()]).refused(),
            message
        );
    }
}

#[test]
fn spec_files_that_are_not_json_objects_are_refused() {
    let sandbox = Sandbox::empty();
    assert_eq!(
        sandbox.hpp(["work", "plan", "missing.json"]).refused(),
        "JSON file not found: missing.json"
    );
    std::fs::write(sandbox.root.join("bad.json"), "{").expect("writable");
    let reason = sandbox.hpp(["work", "plan", "bad.json"]).refused();
    assert!(reason.starts_with("invalid JSON in bad.json: "), "{reason}");
    std::fs::write(sandbox.root.join("list.json"), "[]").expect("writable");
    assert_eq!(
        sandbox.hpp(["work", "plan", "list.json"]).refused(),
        "JSON root in list.json must be an object"
    );
}

#[test]
fn work_opens_no_repository() {
    // A GIT_DIR that does not exist makes every repository open fail: the commands must not care.
    let mut sandbox = Sandbox::empty();
    let missing = sandbox.path("no-such-repository");
    sandbox
        .env
        .insert("GIT_DIR".into(), missing.display().to_string());
    let name = write_spec(&sandbox, "spec.json", &example_spec());
    let waves = sandbox.hpp(["work", "waves", name.as_str()]).json(0);
    assert_eq!(wave_lists(&waves["waves"]).len(), 3);
    sandbox.hpp(["work", "plan", name.as_str()]).ok();
    coverage_copy(&sandbox);
    sandbox
        .hpp([
            "work",
            "coverage",
            COVERAGE_SPEC,
            "--tests",
            "examples/coverage",
        ])
        .ok();
    assert!(!missing.exists(), "nothing was created");
    assert!(!sandbox.root.join(".git").exists(), "nothing was created");
}

#[test]
fn coverage_of_the_example_finds_every_criterion_cited_in_python_and_rust() {
    let sandbox = Sandbox::empty();
    let report = at_root(
        &sandbox,
        &[
            "work",
            "coverage",
            COVERAGE_SPEC,
            "--tests",
            "examples/coverage",
        ],
    )
    .json(0);
    assert_eq!(report["schema"], "hpp.spec-coverage/v1");
    assert_eq!(report["criteria"], 4);
    assert_eq!(report["sources"], 2);
    assert_eq!(report["complete"], true);
    assert_eq!(report["orphans"], json!([]));
    assert_eq!(report["unknown"], json!([]));
    assert_eq!(
        report["covered"],
        json!([
            {"id": "parse/empty-input", "sources": ["examples/coverage/test_parse.py"]},
            {"id": "parse/iso-date", "sources": ["examples/coverage/test_parse.py"]},
            {"id": "render/column-width", "sources": ["examples/coverage/render.rs"]},
            {"id": "render/pipe-escape", "sources": ["examples/coverage/render.rs"]},
        ])
    );
}

#[test]
fn the_passing_reports_execute_every_criterion() {
    let sandbox = Sandbox::empty();
    coverage_copy(&sandbox);
    let report = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "work",
                "coverage",
                COVERAGE_SPEC,
                "--tests",
                "examples/coverage/test_parse.py",
                "examples/coverage/render.rs",
                "--junit",
                PYTEST_PASSED,
                NEXTEST_PASSED,
            ],
        )
        .json(0);
    assert_eq!(report["schema"], "hpp.spec-execution/v1");
    assert_eq!(report["complete"], true);
    assert_eq!(report["junit_testcases"], 5);
    assert_eq!(report["matched_testcases"], 5);
    assert_eq!(
        ids(&report["executed"]),
        [
            "parse/empty-input",
            "parse/iso-date",
            "render/column-width",
            "render/pipe-escape"
        ]
    );
    assert_eq!(report["junit"], json!([PYTEST_PASSED, NEXTEST_PASSED]));
    assert_eq!(report["reports"][0]["file"], PYTEST_PASSED);
    assert_eq!(report["reports"][0]["mtime"], 1_700_000_000.0);
    assert_eq!(
        report["reports"][0]["sha256"].as_str().map(str::len),
        Some(64)
    );
    assert_eq!(report["stale_sources"], json!([]));
}

#[test]
fn a_failure_and_a_skip_leave_the_run_incomplete() {
    let sandbox = Sandbox::empty();
    coverage_copy(&sandbox);
    let report = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "work",
                "coverage",
                COVERAGE_SPEC,
                "--tests",
                "examples/coverage",
                "--junit",
                PYTEST_SKIPPED,
                NEXTEST_FAILED,
            ],
        )
        .json(1);
    assert_eq!(report["complete"], false);
    assert_eq!(
        ids(&report["executed"]),
        ["parse/iso-date", "render/column-width"]
    );
    assert_eq!(
        report["failed"],
        json!([{"id": "render/pipe-escape", "tests": [
            {"test": "examples/coverage/render.rs::tests::escapes_a_pipe_inside_a_cell", "outcome": "failed"}
        ]}])
    );
    assert_eq!(
        report["cited_not_run"],
        json!([{"id": "parse/empty-input", "tests": [
            {"test": "examples/coverage/test_parse.py::TestRefusals::test_empty_line_is_refused", "outcome": "skipped"}
        ]}])
    );
    assert_eq!(report["matched_testcases"], 5);
}

#[test]
fn the_reports_in_the_repository_join_the_same_way() {
    // In a checkout the files' times are whatever the checkout wrote, so `complete` here also
    // depends on stale_sources; the join itself does not.
    let sandbox = Sandbox::empty();
    let run = at_root(
        &sandbox,
        &[
            "work",
            "coverage",
            COVERAGE_SPEC,
            "--tests",
            "examples/coverage",
            "--junit",
            PYTEST_SKIPPED,
            NEXTEST_FAILED,
        ],
    );
    assert_eq!(run.code, 1, "{run}");
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(ids(&report["failed"]), ["render/pipe-escape"]);
    assert_eq!(ids(&report["cited_not_run"]), ["parse/empty-input"]);
    let run = at_root(
        &sandbox,
        &[
            "work",
            "coverage",
            COVERAGE_SPEC,
            "--tests",
            "examples/coverage",
            "--junit",
            PYTEST_PASSED,
            NEXTEST_PASSED,
        ],
    );
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(report["executed"].as_array().map(Vec::len), Some(4));
    let fresh = report["stale_sources"] == json!([]);
    assert_eq!(run.code, if fresh { 0 } else { 1 }, "{run}");
}

#[test]
fn control_a_source_edited_after_the_report_makes_the_answer_stale() {
    let sandbox = Sandbox::empty();
    coverage_copy(&sandbox);
    let edited = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    set_mtime(&sandbox.root.join("examples/coverage/render.rs"), edited);
    let report = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "work",
                "coverage",
                COVERAGE_SPEC,
                "--tests",
                "examples/coverage",
                "--junit",
                PYTEST_PASSED,
                NEXTEST_PASSED,
            ],
        )
        .json(1);
    assert_eq!(
        report["stale_sources"],
        json!(["examples/coverage/render.rs"])
    );
    assert_eq!(report["executed"].as_array().map(Vec::len), Some(4));
    assert_eq!(report["complete"], false);
}

#[test]
fn control_a_report_of_another_run_joins_nothing() {
    let sandbox = Sandbox::empty();
    coverage_copy(&sandbox);
    std::fs::write(
        sandbox.root.join("other.xml"),
        r#"<testsuite><testcase classname="elsewhere.test_misc" name="test_iso_date"/></testsuite>"#,
    )
    .expect("writable");
    set_mtime(
        &sandbox.root.join("other.xml"),
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
    );
    let report = sandbox
        .hpp([
            "work",
            "coverage",
            COVERAGE_SPEC,
            "--tests",
            "examples/coverage",
            "--junit",
            "other.xml",
        ])
        .json(1);
    assert_eq!(report["junit_testcases"], 1);
    assert_eq!(report["matched_testcases"], 0);
    assert_eq!(report["executed"], json!([]));
    assert_eq!(report["cited_not_run"].as_array().map(Vec::len), Some(4));
}

#[test]
fn control_an_uncited_criterion_is_an_orphan_and_a_typo_is_unknown() {
    let sandbox = Sandbox::empty();
    coverage_copy(&sandbox);
    std::fs::write(
        sandbox.root.join("examples/coverage/render.rs"),
        "// [spec: render/colum-width]\n#[test]\nfn pads() {}\n",
    )
    .expect("writable");
    let report = sandbox
        .hpp([
            "work",
            "coverage",
            COVERAGE_SPEC,
            "--tests",
            "examples/coverage",
        ])
        .json(1);
    assert_eq!(
        report["orphans"],
        json!(["render/column-width", "render/pipe-escape"])
    );
    assert_eq!(
        report["unknown"],
        json!([{"id": "render/colum-width", "sources": ["examples/coverage/render.rs"]}])
    );
    assert_eq!(report["complete"], false);
}

#[test]
fn coverage_refuses_inputs_it_cannot_read() {
    let sandbox = Sandbox::empty();
    coverage_copy(&sandbox);
    let spec = COVERAGE_SPEC;
    assert_eq!(
        sandbox
            .hpp(["work", "coverage", spec, "--tests", "nowhere.py"])
            .refused(),
        "test source not found: nowhere.py"
    );
    std::fs::write(sandbox.root.join("notes.txt"), "[spec: parse/iso-date]").expect("writable");
    assert_eq!(
        sandbox
            .hpp(["work", "coverage", spec, "--tests", "notes.txt"])
            .refused(),
        "only Python or Rust test sources are read: notes.txt"
    );
    std::fs::create_dir_all(sandbox.root.join("empty/__pycache__")).expect("writable");
    std::fs::write(sandbox.root.join("empty/__pycache__/x.py"), "").expect("writable");
    assert_eq!(
        sandbox
            .hpp(["work", "coverage", spec, "--tests", "empty"])
            .refused(),
        "no test source found: an empty universe covers nothing"
    );
    assert_eq!(
        sandbox
            .hpp([
                "work",
                "coverage",
                spec,
                "--tests",
                "examples/coverage",
                "--junit",
                "missing.xml"
            ])
            .refused(),
        "JUnit report not found: missing.xml"
    );
    std::fs::write(
        sandbox.root.join("bomb.xml"),
        "<!DOCTYPE t [<!ENTITY a \"aaaa\">]><testsuite>&a;</testsuite>",
    )
    .expect("writable");
    assert_eq!(
        sandbox
            .hpp([
                "work",
                "coverage",
                spec,
                "--tests",
                "examples/coverage",
                "--junit",
                "bomb.xml"
            ])
            .refused(),
        "bomb.xml: a JUnit report with a DOCTYPE or ENTITY declaration is refused"
    );
    std::fs::write(sandbox.root.join("broken.py"), "def test_a(:\n    '''x\n").expect("writable");
    let reason = sandbox
        .hpp(["work", "coverage", spec, "--tests", "broken.py"])
        .refused();
    assert!(
        reason.starts_with("broken.py is not valid Python: "),
        "{reason}"
    );
}
