//! Evals: pass@k and pass^k over a suite of cases, and the packaged benchmark of controls
//! (CONCEPTS.md "pass@k and pass^k", "control"; the reference's `evals.py`).
//!
//! A suite (`{"version", "name"?, "cases": [...]}`) lists cases; each case runs k times and
//! yields k outcomes. pass@k is true when at least one run passed (capability), pass^k when every
//! run passed (reliability); the suite metrics are the share of cases with each, and `flaky` is
//! their difference, the share of cases that passed some runs and failed others. A capability
//! gate needs pass@k >= 0.90, a regression gate pass^k == 1.0, `both` needs both. Metrics with no
//! case run are `null`, never 0, and then no gate passes.
//!
//! Three runners: `replay` reads the case's recorded outcomes (the first k), `command` runs an
//! argv k times (pass = exit 0), `hpp-control` runs a built-in [`controls`] entry k times. A case
//! that could not run is reported under `not_run` with its reason and left out of every metric:
//! it is never counted as passed.
//!
//! This file is pure: it validates a suite and turns outcomes into a report. Running the cases
//! is [`runner`]'s job (a workflow: processes and throwaway repositories), handed in as a
//! function. No refs of the user's repository are read or written.
//!
//! ```
//! use hpp_core::evals::{CaseRun, Gate, Suite, evaluate};
//! let suite = Suite::parse(
//!     &serde_json::json!({"version": "1", "cases": [
//!         {"id": "steady", "runner": "replay", "outcomes": [true, true, true]},
//!         {"id": "flaky", "runner": "replay", "outcomes": [true, false, true]},
//!     ]}),
//!     "example",
//! )
//! .unwrap();
//! let report = evaluate(&suite, 3, Gate::Both, &mut |case, k| match &case.runner {
//!     hpp_core::evals::Runner::Replay(recorded) => hpp_core::evals::replay(recorded, k),
//!     _ => CaseRun::NotRun { reason: "not in this example".into() },
//! })
//! .unwrap();
//! assert_eq!(report.metrics.pass_at_k, Some(1.0));
//! assert_eq!(report.metrics.pass_caret_k, Some(0.5));
//! assert!(report.gate.capability_ok && !report.gate.passed);
//! ```

/// The ids of the built-in controls (`"runner": "hpp-control"` cases), in the packaged suite's
/// order. The application runs each against the real code.
pub const CONTROL_IDS: [&str; 10] = [
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

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::record::{canonical_json, sha256_hex};

/// The packaged benchmark suite (`examples/reliable-coding/benchmark-suite.json`), compiled in.
pub const PACKAGED_SUITE: &str =
    include_str!("../../../examples/reliable-coding/benchmark-suite.json");

/// How many runs per case when the caller does not say.
pub const DEFAULT_K: i64 = 3;

/// Seconds a command case may run when it does not say.
pub const DEFAULT_TIMEOUT_S: f64 = 20.0;

/// The lowest pass@k a capability gate accepts.
pub const CAPABILITY_FLOOR: f64 = 0.90;

/// The longest timeout a command case may ask for, in seconds (as the process runner allows).
const MAX_TIMEOUT_S: f64 = crate::run::MAX_TIMEOUT_S;

/// Why a suite or a run was refused; nothing runs after a refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `-k` is below 1.
    #[error("k must be an integer >= 1")]
    K,
    /// The suite's root is not a JSON object.
    #[error("eval suite must be a JSON object")]
    NotAnObject,
    /// The suite has no non-empty string version.
    #[error("eval suite needs a string version")]
    Version,
    /// The suite's name is present but not non-empty text.
    #[error("eval suite name must be text")]
    Name,
    /// `cases` is missing or not a list.
    #[error("eval suite cases must be a list")]
    Cases,
    /// A case is not an object with a non-empty string id.
    #[error("case {0} needs a non-empty string id")]
    CaseId(usize),
    /// Two cases share an id.
    #[error("duplicate case id: {0}")]
    DuplicateCase(String),
    /// A case's runner is missing or not one of the three.
    #[error("case {id} has unknown runner {runner}: expected hpp-control, replay or command")]
    Runner {
        /// The case.
        id: String,
        /// The runner as written (`null` when missing).
        runner: String,
    },
    /// A replay case has no outcomes, or outcomes that are not booleans.
    #[error("replay case {0} needs outcomes: a non-empty list of booleans")]
    Outcomes(String),
    /// A replay case records fewer outcomes than k runs need.
    #[error("replay case {id} records {recorded} outcomes; k={k} needs at least {k}")]
    TooFewOutcomes {
        /// The case.
        id: String,
        /// How many outcomes it records.
        recorded: usize,
        /// The k asked for.
        k: usize,
    },
    /// A command case has no argv, or one that is not a list of strings.
    #[error("command case {0} needs command: a non-empty list of strings (argv, no shell)")]
    Command(String),
    /// A command case's timeout is not a positive number of seconds up to a day.
    #[error("command case {0} has an invalid timeout: a positive number of seconds, at most 86400")]
    Timeout(String),
    /// An hpp-control case names no built-in control.
    #[error("unknown hpp-control: {0}")]
    UnknownControl(String),
}

/// How a case is run.
#[derive(Debug, Clone, PartialEq)]
pub enum Runner {
    /// A built-in control, named by the case id.
    Control,
    /// Outcomes recorded earlier.
    Replay(Vec<bool>),
    /// A command run k times; a run passes when it exits 0 within its timeout.
    Command {
        /// Program and arguments; no shell.
        argv: Vec<String>,
        /// Seconds each run may take.
        timeout_s: f64,
    },
}

impl Runner {
    /// Returns the runner's name as a suite writes it.
    pub fn name(&self) -> &'static str {
        match self {
            Runner::Control => "hpp-control",
            Runner::Replay(_) => "replay",
            Runner::Command { .. } => "command",
        }
    }
}

/// One case of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Unique within the suite; for a control, the control's id.
    pub id: String,
    /// How it runs.
    pub runner: Runner,
}

/// A validated suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// The suite's name (its `name`, else the default the caller gave).
    pub name: String,
    /// The suite's version.
    pub version: String,
    /// The sha256 of the suite file's bytes, as the reference (and `retrieval eval`) hash a
    /// suite: the report names exactly the file that ran. A suite built without a file
    /// ([`Suite::parse`]) is hashed by its canonical JSON until [`Suite::from_file`] says which
    /// bytes it came from.
    pub sha256: String,
    /// The cases, in the suite's order.
    pub cases: Vec<Case>,
}

impl Suite {
    /// Validates a suite document; `default_name` is used when it has no `name`.
    pub fn parse(value: &Value, default_name: &str) -> Result<Self, Error> {
        let object = value.as_object().ok_or(Error::NotAnObject)?;
        let version = match object.get("version") {
            Some(Value::String(v)) if !v.trim().is_empty() => v.clone(),
            _ => return Err(Error::Version),
        };
        let name = match object.get("name") {
            None | Some(Value::Null) => default_name.to_owned(),
            Some(Value::String(n)) if !n.trim().is_empty() => n.clone(),
            Some(_) => return Err(Error::Name),
        };
        let items = object
            .get("cases")
            .and_then(Value::as_array)
            .ok_or(Error::Cases)?;
        let mut seen = BTreeSet::new();
        let mut cases = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let case = parse_case(index, item)?;
            if !seen.insert(case.id.clone()) {
                return Err(Error::DuplicateCase(case.id));
            }
            cases.push(case);
        }
        Ok(Self {
            name,
            version,
            sha256: sha256_hex(&canonical_json(value)),
            cases,
        })
    }

    /// Validates the suite file `bytes` (JSON); its hash is the sha256 of those bytes.
    pub fn from_file(bytes: &[u8], default_name: &str) -> Result<Self, Error> {
        let value: Value = serde_json::from_slice(bytes).map_err(|_| Error::Cases)?;
        let mut suite = Self::parse(&value, default_name)?;
        suite.sha256 = sha256_hex(bytes);
        Ok(suite)
    }

    /// Returns the packaged benchmark suite (hashed by the bytes it is packaged as).
    pub fn packaged() -> Self {
        Self::from_file(PACKAGED_SUITE.as_bytes(), "reliable-coding-controls")
            .expect("the packaged suite is valid: a unit test parses it")
    }
}

fn parse_case(index: usize, item: &Value) -> Result<Case, Error> {
    let object = item.as_object().ok_or(Error::CaseId(index))?;
    let id = match object.get("id") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        _ => return Err(Error::CaseId(index)),
    };
    let runner = match object.get("runner").and_then(Value::as_str) {
        Some("hpp-control") => {
            if !CONTROL_IDS.contains(&id.as_str()) {
                return Err(Error::UnknownControl(id));
            }
            Runner::Control
        }
        Some("replay") => {
            let outcomes: Option<Vec<bool>> = object
                .get("outcomes")
                .and_then(Value::as_array)
                .filter(|items| !items.is_empty())
                .and_then(|items| items.iter().map(Value::as_bool).collect());
            Runner::Replay(outcomes.ok_or_else(|| Error::Outcomes(id.clone()))?)
        }
        Some("command") => {
            let argv: Option<Vec<String>> = object
                .get("command")
                .and_then(Value::as_array)
                .filter(|items| !items.is_empty())
                .and_then(|items| {
                    items
                        .iter()
                        .map(|a| a.as_str().map(str::to_owned))
                        .collect()
                })
                .filter(|argv: &Vec<String>| !argv[0].is_empty());
            let argv = argv.ok_or_else(|| Error::Command(id.clone()))?;
            let timeout_s = match object.get("timeout") {
                None | Some(Value::Null) => DEFAULT_TIMEOUT_S,
                Some(Value::Number(n)) => n
                    .as_f64()
                    .filter(|t| t.is_finite() && *t > 0.0 && *t <= MAX_TIMEOUT_S)
                    .ok_or_else(|| Error::Timeout(id.clone()))?,
                Some(_) => return Err(Error::Timeout(id)),
            };
            Runner::Command { argv, timeout_s }
        }
        other => {
            let runner = other.map_or_else(
                || object.get("runner").map_or("null".into(), Value::to_string),
                str::to_owned,
            );
            return Err(Error::Runner { id, runner });
        }
    };
    Ok(Case { id, runner })
}

/// Which gate the report decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    /// pass@k >= 0.90.
    Capability,
    /// pass^k == 1.0.
    Regression,
    /// Both.
    Both,
}

/// What running one case k times gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaseRun {
    /// The case ran: one outcome per run, and why the failed runs failed (distinct reasons).
    Ran {
        /// One outcome per run, in order.
        outcomes: Vec<bool>,
        /// Why runs failed, each reason once; empty when every run passed.
        failures: Vec<String>,
    },
    /// The case could not run at all.
    NotRun {
        /// Why.
        reason: String,
    },
}

impl CaseRun {
    /// Builds a run from per-run results: `Ok` passed, `Err(why)` failed.
    pub fn from_results(results: impl IntoIterator<Item = Result<(), String>>) -> Self {
        let mut outcomes = Vec::new();
        let mut failures: Vec<String> = Vec::new();
        for result in results {
            outcomes.push(result.is_ok());
            if let Err(why) = result
                && !failures.contains(&why)
            {
                failures.push(why);
            }
        }
        CaseRun::Ran { outcomes, failures }
    }
}

/// Replays recorded outcomes: the first `k`.
pub fn replay(recorded: &[bool], k: usize) -> CaseRun {
    let outcomes: Vec<bool> = recorded.iter().take(k).copied().collect();
    let failures = if outcomes.iter().all(|o| *o) {
        Vec::new()
    } else {
        vec!["a recorded run failed".to_owned()]
    };
    CaseRun::Ran { outcomes, failures }
}

/// The suite as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteInfo {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The sha256 of its canonical JSON.
    pub sha256: String,
}

/// Where the suite ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Platform {
    /// The operating system, as Python's `platform.system()` names it (`Linux`, `Darwin`).
    pub system: &'static str,
}

/// One case that ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseReport {
    /// The case id.
    pub id: String,
    /// Its runner.
    pub runner: &'static str,
    /// One outcome per run.
    pub outcomes: Vec<bool>,
    /// At least one run passed.
    pub pass_at_k: bool,
    /// Every run passed.
    pub pass_caret_k: bool,
    /// Why runs failed, each reason once.
    pub failures: Vec<String>,
}

/// One case that did not run; it counts in no metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotRun {
    /// The case id.
    pub id: String,
    /// Why it did not run.
    pub reason: String,
}

/// The suite metrics over the cases that ran; `null` when none did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Share of the cases run whose pass@k is true.
    pub pass_at_k: Option<f64>,
    /// Share of the cases run whose pass^k is true.
    pub pass_caret_k: Option<f64>,
    /// Share of the cases run that passed some runs and failed others (pass@k − pass^k).
    pub flaky: Option<f64>,
    /// How many cases ran.
    pub ran: usize,
    /// How many cases did not run.
    pub not_run: usize,
}

/// The gate's decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateReport {
    /// Which gate was asked for.
    pub name: Gate,
    /// pass@k >= 0.90 (false when nothing ran).
    pub capability_ok: bool,
    /// pass^k == 1.0 (false when nothing ran).
    pub regression_ok: bool,
    /// Whether the asked gate passed.
    pub passed: bool,
}

/// The report of one suite run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The suite.
    pub suite: SuiteInfo,
    /// The platform.
    pub platform: Platform,
    /// Runs per case.
    pub k: usize,
    /// The cases that ran, in suite order.
    pub cases: Vec<CaseReport>,
    /// The cases that did not run, in suite order, with why.
    pub not_run: Vec<NotRun>,
    /// The metrics.
    pub metrics: Metrics,
    /// The gate.
    pub gate: GateReport,
}

impl Report {
    /// Returns `id: reason` for each case that ran and did not pass every run.
    pub fn failing(&self) -> Vec<String> {
        self.cases
            .iter()
            .filter(|c| !c.pass_caret_k)
            .map(|c| {
                let why = if c.failures.is_empty() {
                    "a run failed".to_owned()
                } else {
                    c.failures.join("; ")
                };
                format!("{}: {why}", c.id)
            })
            .collect()
    }
}

/// Checks `k`, then every replay case's record, then runs each case through `run` (given the
/// case and k) and decides `gate`. Refusals come before anything runs.
pub fn evaluate(
    suite: &Suite,
    k: i64,
    gate: Gate,
    run: &mut dyn FnMut(&Case, usize) -> CaseRun,
) -> Result<Report, Error> {
    let k = usize::try_from(k)
        .ok()
        .filter(|k| *k >= 1)
        .ok_or(Error::K)?;
    for case in &suite.cases {
        if let Runner::Replay(recorded) = &case.runner
            && recorded.len() < k
        {
            return Err(Error::TooFewOutcomes {
                id: case.id.clone(),
                recorded: recorded.len(),
                k,
            });
        }
    }
    let mut cases = Vec::new();
    let mut not_run = Vec::new();
    for case in &suite.cases {
        match run(case, k) {
            CaseRun::Ran { outcomes, failures } => cases.push(CaseReport {
                id: case.id.clone(),
                runner: case.runner.name(),
                // An empty run list is no pass: `all` of nothing must not read as reliable.
                pass_at_k: outcomes.iter().any(|o| *o),
                pass_caret_k: !outcomes.is_empty() && outcomes.iter().all(|o| *o),
                outcomes,
                failures,
            }),
            CaseRun::NotRun { reason } => not_run.push(NotRun {
                id: case.id.clone(),
                reason,
            }),
        }
    }
    Ok(report(suite, k, gate, cases, not_run))
}

fn report(
    suite: &Suite,
    k: usize,
    gate: Gate,
    cases: Vec<CaseReport>,
    not_run: Vec<NotRun>,
) -> Report {
    let ran = cases.len();
    let share = |count: usize| (ran > 0).then(|| count as f64 / ran as f64);
    let at = cases.iter().filter(|c| c.pass_at_k).count();
    let all = cases.iter().filter(|c| c.pass_caret_k).count();
    let metrics = Metrics {
        pass_at_k: share(at),
        pass_caret_k: share(all),
        flaky: share(at - all),
        ran,
        not_run: not_run.len(),
    };
    let capability_ok = metrics.pass_at_k.is_some_and(|p| p >= CAPABILITY_FLOOR);
    let regression_ok = ran > 0 && all == ran;
    let passed = match gate {
        Gate::Capability => capability_ok,
        Gate::Regression => regression_ok,
        Gate::Both => capability_ok && regression_ok,
    };
    Report {
        suite: SuiteInfo {
            name: suite.name.clone(),
            version: suite.version.clone(),
            sha256: suite.sha256.clone(),
        },
        platform: Platform { system: system() },
        k,
        cases,
        not_run,
        metrics,
        gate: GateReport {
            name: gate,
            capability_ok,
            regression_ok,
            passed,
        },
    }
}

/// The operating system under the names the reference's reports use.
fn system() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "windows" => "Windows",
        "freebsd" => "FreeBSD",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn suite(cases: Value) -> Suite {
        Suite::parse(&json!({"version": "1", "cases": cases}), "test").expect("a valid suite")
    }

    fn replayed(suite: &Suite, k: i64, gate: Gate) -> Result<Report, Error> {
        evaluate(suite, k, gate, &mut |case, k| match &case.runner {
            Runner::Replay(recorded) => replay(recorded, k),
            _ => CaseRun::NotRun {
                reason: "not built yet: test".into(),
            },
        })
    }

    #[test]
    fn pass_at_k_counts_any_run_and_pass_caret_k_every_run() {
        let suite = suite(json!([
            {"id": "steady", "runner": "replay", "outcomes": [true, true, true]},
            {"id": "flaky", "runner": "replay", "outcomes": [false, true, false]},
            {"id": "broken", "runner": "replay", "outcomes": [false, false, false]},
            {"id": "late", "runner": "replay", "outcomes": [true, true, true, false]},
        ]));
        let report = replayed(&suite, 3, Gate::Capability).unwrap();
        let by_id = |id: &str| report.cases.iter().find(|c| c.id == id).unwrap();
        assert!(by_id("steady").pass_at_k && by_id("steady").pass_caret_k);
        assert!(by_id("flaky").pass_at_k && !by_id("flaky").pass_caret_k);
        assert!(!by_id("broken").pass_at_k && !by_id("broken").pass_caret_k);
        // Only the first k recorded outcomes count.
        assert_eq!(by_id("late").outcomes, vec![true, true, true]);
        assert!(by_id("late").pass_caret_k);
        assert_eq!(report.metrics.pass_at_k, Some(0.75));
        assert_eq!(report.metrics.pass_caret_k, Some(0.5));
        assert_eq!(report.metrics.flaky, Some(0.25));
        assert!(!report.gate.capability_ok && !report.gate.regression_ok);
    }

    #[test]
    fn gates_decide_on_their_own_metric() {
        let cases: Vec<Value> = (0..10)
            .map(|i| {
                let outcomes = if i == 0 {
                    json!([true, false])
                } else {
                    json!([true, true])
                };
                json!({"id": format!("c{i}"), "runner": "replay", "outcomes": outcomes})
            })
            .collect();
        let suite = suite(Value::Array(cases));
        let capability = replayed(&suite, 2, Gate::Capability).unwrap();
        assert_eq!(capability.metrics.pass_at_k, Some(1.0));
        assert_eq!(capability.metrics.pass_caret_k, Some(0.9));
        assert!(capability.gate.passed);
        assert!(!replayed(&suite, 2, Gate::Regression).unwrap().gate.passed);
        assert!(!replayed(&suite, 2, Gate::Both).unwrap().gate.passed);
        // With k = 1 the flaky case's one run passed: both gates pass.
        assert!(replayed(&suite, 1, Gate::Both).unwrap().gate.passed);
    }

    #[test]
    fn the_capability_floor_is_inclusive_at_ninety_percent() {
        let cases: Vec<Value> = (0..10)
            .map(|i| json!({"id": format!("c{i}"), "runner": "replay", "outcomes": [i != 0]}))
            .collect();
        let report = replayed(&suite(Value::Array(cases)), 1, Gate::Capability).unwrap();
        assert_eq!(report.metrics.pass_at_k, Some(0.9));
        assert!(report.gate.capability_ok);
    }

    #[test]
    fn metrics_are_null_and_no_gate_passes_when_no_case_ran() {
        for cases in [
            json!([]),
            json!([{"id": "lane-collision", "runner": "hpp-control"}]),
        ] {
            let report = replayed(&suite(cases), 3, Gate::Capability).unwrap();
            assert_eq!(report.metrics.pass_at_k, None);
            assert_eq!(report.metrics.pass_caret_k, None);
            assert_eq!(report.metrics.flaky, None);
            assert!(!report.gate.capability_ok && !report.gate.regression_ok);
            assert!(!report.gate.passed);
            let value = serde_json::to_value(&report.metrics).unwrap();
            assert_eq!(value["pass_at_k"], Value::Null);
        }
    }

    #[test]
    fn a_case_that_did_not_run_is_listed_and_counts_in_no_metric() {
        let suite = suite(json!([
            {"id": "ok", "runner": "replay", "outcomes": [true]},
            {"id": "lane-collision", "runner": "hpp-control"},
        ]));
        let report = replayed(&suite, 1, Gate::Both).unwrap();
        assert_eq!(report.cases.len(), 1);
        assert_eq!(report.not_run[0].id, "lane-collision");
        assert_eq!((report.metrics.ran, report.metrics.not_run), (1, 1));
        assert_eq!(report.metrics.pass_caret_k, Some(1.0));
    }

    #[test]
    fn control_k_below_one_is_refused_before_anything_runs() {
        let suite = suite(json!([{"id": "a", "runner": "command", "command": ["true"]}]));
        for k in [0, -1] {
            let mut ran = false;
            let err = evaluate(&suite, k, Gate::Both, &mut |_, _| {
                ran = true;
                CaseRun::NotRun { reason: "x".into() }
            })
            .unwrap_err();
            assert_eq!(err.to_string(), "k must be an integer >= 1");
            assert!(!ran);
        }
    }

    #[test]
    fn control_a_sabotaged_replay_case_fails_the_gate() {
        let good = suite(json!([
            {"id": "a", "runner": "replay", "outcomes": [true, true, true]},
        ]));
        assert!(replayed(&good, 3, Gate::Both).unwrap().gate.passed);
        let sabotaged = suite(json!([
            {"id": "a", "runner": "replay", "outcomes": [true, true, true]},
            {"id": "b", "runner": "replay", "outcomes": [true, false, true]},
        ]));
        let report = replayed(&sabotaged, 3, Gate::Both).unwrap();
        assert!(!report.gate.passed);
        assert_eq!(report.failing(), vec!["b: a recorded run failed"]);
    }

    #[test]
    fn an_empty_run_list_is_not_a_pass() {
        let suite = suite(json!([{"id": "a", "runner": "command", "command": ["true"]}]));
        let report = evaluate(&suite, 1, Gate::Regression, &mut |_, _| CaseRun::Ran {
            outcomes: vec![],
            failures: vec![],
        })
        .unwrap();
        assert!(!report.cases[0].pass_caret_k);
        assert!(!report.gate.passed);
    }

    #[test]
    fn replay_cases_with_too_few_outcomes_are_refused() {
        let suite = suite(json!([{"id": "short", "runner": "replay", "outcomes": [true, true]}]));
        let err = replayed(&suite, 3, Gate::Both).unwrap_err();
        assert_eq!(
            err.to_string(),
            "replay case short records 2 outcomes; k=3 needs at least 3"
        );
    }

    #[test]
    fn malformed_suites_are_refused_with_the_field_named() {
        let refusal = |value: Value| Suite::parse(&value, "t").unwrap_err().to_string();
        assert_eq!(refusal(json!([])), "eval suite must be a JSON object");
        assert_eq!(
            refusal(json!({"cases": []})),
            "eval suite needs a string version"
        );
        assert_eq!(
            refusal(json!({"version": "1"})),
            "eval suite cases must be a list"
        );
        assert_eq!(
            refusal(json!({"version": "1", "name": 3, "cases": []})),
            "eval suite name must be text"
        );
        assert_eq!(
            refusal(json!({"version": "1", "cases": [{"runner": "replay"}]})),
            "case 0 needs a non-empty string id"
        );
        assert_eq!(
            refusal(json!({"version": "1", "cases": [{"id": "a", "runner": "shell"}]})),
            "case a has unknown runner shell: expected hpp-control, replay or command"
        );
        assert_eq!(
            refusal(json!({"version": "1", "cases": [{"id": "a"}]})),
            "case a has unknown runner null: expected hpp-control, replay or command"
        );
        assert_eq!(
            refusal(json!({"version": "1", "cases": [{"id": "a", "runner": "hpp-control"}]})),
            "unknown hpp-control: a"
        );
        assert_eq!(
            refusal(
                json!({"version": "1", "cases": [{"id": "a", "runner": "replay", "outcomes": [1]}]})
            ),
            "replay case a needs outcomes: a non-empty list of booleans"
        );
        assert_eq!(
            refusal(
                json!({"version": "1", "cases": [{"id": "a", "runner": "command", "command": []}]})
            ),
            "command case a needs command: a non-empty list of strings (argv, no shell)"
        );
        assert_eq!(
            refusal(json!({"version": "1", "cases": [
                {"id": "a", "runner": "command", "command": ["true"], "timeout": 0}]})),
            "command case a has an invalid timeout: a positive number of seconds, at most 86400"
        );
        assert_eq!(
            refusal(json!({"version": "1", "cases": [
                {"id": "a", "runner": "replay", "outcomes": [true]},
                {"id": "a", "runner": "replay", "outcomes": [true]}]})),
            "duplicate case id: a"
        );
    }

    #[test]
    fn the_suite_hash_is_the_files_bytes_and_the_name_defaults() {
        let compact = br#"{"version":"1","cases":[]}"#;
        let a = Suite::from_file(compact, "stem").unwrap();
        assert_eq!(
            a.sha256,
            sha256_hex(compact),
            "the reference hashes the file"
        );
        assert_eq!(a.name, "stem");
        assert_eq!(a.cases, vec![]);
    }

    #[test]
    fn control_a_reformatted_suite_file_is_another_file() {
        let compact = br#"{"version":"1","cases":[]}"#;
        let spaced = b"{ \"cases\" : [ ],\n \"version\": \"1\" }";
        let a = Suite::from_file(compact, "stem").unwrap();
        let b = Suite::from_file(spaced, "stem").unwrap();
        assert_ne!(a.sha256, b.sha256);
        assert_eq!(a.cases, b.cases, "the same cases");
    }

    #[test]
    fn the_packaged_suite_lists_the_ten_controls() {
        let suite = Suite::packaged();
        assert_eq!(suite.name, "reliable-coding-controls");
        assert_eq!(suite.version, "1");
        let ids: Vec<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, CONTROL_IDS);
        assert!(suite.cases.iter().all(|c| c.runner == Runner::Control));
    }

    mod properties {
        use proptest::prelude::*;

        use super::super::*;

        fn json_value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i32>().prop_map(Value::from),
                "[a-z -]{0,12}".prop_map(Value::from),
                prop_oneof![
                    Just("replay"),
                    Just("command"),
                    Just("hpp-control"),
                    Just("policy-enforcement")
                ]
                .prop_map(Value::from),
            ];
            leaf.prop_recursive(4, 32, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                    prop::collection::btree_map(
                        prop_oneof![
                            Just("version".to_owned()),
                            Just("name".to_owned()),
                            Just("cases".to_owned()),
                            Just("id".to_owned()),
                            Just("runner".to_owned()),
                            Just("outcomes".to_owned()),
                            Just("command".to_owned()),
                            Just("timeout".to_owned()),
                        ],
                        inner,
                        0..6
                    )
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        proptest! {
            #[test]
            fn no_suite_panics_and_a_refusal_has_a_message(value in json_value(), k in -3i64..5) {
                match Suite::parse(&value, "p") {
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                    Ok(suite) => {
                        let result = evaluate(&suite, k, Gate::Both, &mut |case, k| match &case.runner {
                            Runner::Replay(recorded) => replay(recorded, k),
                            _ => CaseRun::Ran { outcomes: vec![true; k], failures: vec![] },
                        });
                        match result {
                            Err(e) => prop_assert!(!e.to_string().is_empty()),
                            Ok(report) => {
                                prop_assert_eq!(report.cases.len() + report.not_run.len(), suite.cases.len());
                                if let (Some(at), Some(all)) = (report.metrics.pass_at_k, report.metrics.pass_caret_k) {
                                    prop_assert!(all <= at);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
