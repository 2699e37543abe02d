//! `hpp decide eval`: the ruler that measures a decider against a labelled suite
//! (`hpp.decision-suite/v1` → `hpp.decision-eval/v1`), with abstention as an outcome of its own.
//!
//! It calls no model and runs nothing: the caller hands [`evaluate`] a function that asks the
//! decider and turns the finished run into an answer with [`answer_of_run`]. A metric with no
//! sample is null (selective accuracy) or `"not-measured"` (Brier score, coverage curve), never 0.

use std::collections::{BTreeMap, HashSet};

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::{ABSTAIN, Error, Question, Record, Status, digest, normalise_question, unit, validate};
use crate::instrument::{RunFailure, ascii_json, format_g, parse_argv, read_answer};
use crate::pyrepr;
use crate::record::sha256_hex;
use crate::run::{self, Finished, NotFinished};
use crate::secrets::looks_secret;

/// Schema of a decision suite.
pub const SUITE_SCHEMA: &str = "hpp.decision-suite/v1";
/// Schema of the report.
pub const REPORT_SCHEMA: &str = "hpp.decision-eval/v1";
/// The confidence floor of a suite that names none.
pub const DEFAULT_CONFIDENCE_FLOOR: f64 = 0.6;
/// The floors of the coverage curve.
pub const CURVE_FLOORS: [f64; 5] = [0.5, 0.6, 0.7, 0.8, 0.9];

/// Why one case has no usable record: an instrument failure, counted apart from decisions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The decider ran but gave no answer (timeout, start failure, non-zero exit, empty or
    /// non-JSON output).
    #[error(transparent)]
    Run(#[from] RunFailure),
    /// Replay mode, and the case recorded no record.
    #[error("case has no replay record and no decider command was given")]
    NoReplay,
    /// The answer is not a valid decision record.
    #[error(transparent)]
    Invalid(#[from] Error),
    /// The record answers another question (its hash differs).
    #[error("record answered a different question")]
    OtherQuestion,
    /// The record judged another state (its hash differs from the case's).
    #[error("record judged a different state than the case holds")]
    OtherState,
}

/// One labelled case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The case id.
    pub id: String,
    /// The text to judge.
    pub state: String,
    /// The right option, or [`ABSTAIN`].
    pub expected: String,
    /// The recorded answer replayed without a command.
    pub record: Option<Value>,
}

/// A validated `hpp.decision-suite/v1`.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// The suite's name (default: the file's stem), as given.
    pub name: Value,
    /// The suite's version, as given (null when absent).
    pub version: Value,
    /// The sha256 of the suite's bytes.
    pub sha256: String,
    /// The question every case asks.
    pub question: Question,
    /// A wrong decision at or above this confidence is a confident error; `None` counts none.
    pub confidence_floor: Option<f64>,
    /// The cases, in file order.
    pub cases: Vec<Case>,
}

impl Suite {
    /// Parses and validates a suite from its bytes; `default_name` names a suite without one.
    /// A case whose state looks secret refuses the whole suite, before anything runs.
    ///
    /// # Errors
    ///
    /// The first broken rule, as [`Error`].
    pub fn parse(bytes: &[u8], default_name: &str) -> Result<Self, Error> {
        let root: Value =
            serde_json::from_slice(bytes).map_err(|e| Error::SuiteJson(e.to_string()))?;
        let suite = root.as_object().ok_or(Error::SuiteSchema)?;
        if suite.get("schema").and_then(Value::as_str) != Some(SUITE_SCHEMA) {
            return Err(Error::SuiteSchema);
        }
        let question = normalise_question(suite.get("question").unwrap_or(&Value::Null))?;
        let cases = match suite.get("cases") {
            Some(Value::Array(cases)) if !cases.is_empty() => cases,
            _ => return Err(Error::NoCases),
        };
        let mut seen = HashSet::new();
        let mut parsed = Vec::with_capacity(cases.len());
        for case in cases {
            let case = case.as_object().ok_or(Error::CaseId)?;
            let id = match case.get("id") {
                Some(Value::String(id)) if !id.is_empty() => id.clone(),
                _ => return Err(Error::CaseId),
            };
            if !seen.insert(id.clone()) {
                return Err(Error::DuplicateCase(id));
            }
            let Some(Value::String(state)) = case.get("state") else {
                return Err(Error::CaseState(id));
            };
            let expected = match case.get("expected") {
                Some(Value::String(e)) if e == ABSTAIN || question.options.contains(e) => e.clone(),
                other => {
                    return Err(Error::CaseExpected {
                        expected: pyrepr::optional(other),
                        id,
                    });
                }
            };
            parsed.push(Case {
                id,
                state: state.clone(),
                expected,
                record: case.get("record").cloned(),
            });
        }
        let confidence_floor = match suite.get("confidence_floor") {
            None => Some(DEFAULT_CONFIDENCE_FLOOR),
            given => unit(given, "confidence_floor")?,
        };
        if let Some(case) = parsed.iter().find(|c| looks_secret(&c.state)) {
            return Err(Error::SecretCase(case.id.clone()));
        }
        Ok(Self {
            name: suite
                .get("name")
                .cloned()
                .unwrap_or_else(|| Value::String(default_name.to_owned())),
            version: suite.get("version").cloned().unwrap_or(Value::Null),
            sha256: sha256_hex(bytes),
            question,
            confidence_floor,
            cases: parsed,
        })
    }
}

/// Parses `--decider-command`: a JSON array of non-empty strings, run as an argv (no shell).
///
/// # Errors
///
/// [`Error::Command`] for anything else.
pub fn parse_command(text: &str) -> Result<Vec<String>, Error> {
    parse_argv(text).ok_or(Error::Command)
}

/// The flags of one evaluation, as the user gave them.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Seconds each decider run may take.
    pub timeout_s: f64,
    /// The lowest selective accuracy that passes the gate.
    pub min_selective_accuracy: f64,
    /// The most confident errors that pass the gate.
    pub max_confident_errors: i64,
    /// The most instrument failures that pass the gate.
    pub max_failures: i64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            timeout_s: 10.0,
            min_selective_accuracy: 0.9,
            max_confident_errors: 0,
            max_failures: 0,
        }
    }
}

impl Settings {
    /// Checks every flag, before anything is read or run.
    ///
    /// # Errors
    ///
    /// [`Error::Timeout`], [`Error::MinSelectiveAccuracy`], [`Error::MaxConfidentErrors`] or
    /// [`Error::MaxFailures`].
    pub fn check(&self) -> Result<(), Error> {
        run::valid_timeout(self.timeout_s).map_err(|_| Error::Timeout)?;
        if !(0.0..=1.0).contains(&self.min_selective_accuracy) {
            return Err(Error::MinSelectiveAccuracy);
        }
        if self.max_confident_errors < 0 {
            return Err(Error::MaxConfidentErrors);
        }
        if self.max_failures < 0 {
            return Err(Error::MaxFailures);
        }
        Ok(())
    }
}

/// Where the records come from.
pub enum Decider<'a> {
    /// The record kept in each case.
    Replay,
    /// A command, asked once per case.
    Command {
        /// The argv, for the report.
        argv: &'a [String],
        /// Runs the command with these stdin bytes (see [`request_bytes`]) and returns its JSON
        /// answer, or the instrument failure (see [`answer_of_run`]).
        ask: &'a mut dyn FnMut(&[u8]) -> Result<Value, Failure>,
    },
}

/// Returns what a decider reads on stdin: `{"question": <normalised question>, "state": text}`
/// as ASCII-escaped JSON, so a child that decodes stdin in a legacy codepage hashes the same text.
pub fn request_bytes(question: &Question, state: &str) -> Vec<u8> {
    ascii_json(&serde_json::json!({"question": question, "state": state}))
}

/// Turns one finished run of the decider into its JSON answer, or the instrument failure.
///
/// # Errors
///
/// A timeout, a start failure, a non-zero exit or signal, empty output or output that is not
/// JSON, as [`Failure`].
pub fn answer_of_run(
    run: Result<&Finished, &NotFinished>,
    timeout_s: f64,
) -> Result<Value, Failure> {
    Ok(read_answer("decider", run, timeout_s)?)
}

/// A metric that is either measured or, with nothing to measure, `"not-measured"` (never 0).
#[derive(Debug, Clone, PartialEq)]
pub enum Measured<T> {
    /// The measured value.
    Value(T),
    /// Nothing to measure.
    NotMeasured,
}

impl<T: Serialize> Serialize for Measured<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(value) => value.serialize(serializer),
            Self::NotMeasured => serializer.serialize_str("not-measured"),
        }
    }
}

/// One case of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseReport {
    /// The case id.
    pub id: String,
    /// The right option, or `abstain`.
    pub expected: String,
    /// The record's status, or `instrument-failure` when there was no usable record.
    pub status: Status,
    /// The chosen option.
    pub value: Option<String>,
    /// The decider's confidence.
    pub confidence: Option<f64>,
    /// Whether the outcome was right (`None` for an instrument failure).
    pub correct: Option<bool>,
    /// What failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The probabilities of a recommendation that published them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probabilities: Option<BTreeMap<String, f64>>,
}

/// One point of the coverage curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvePoint {
    /// Decisions below this confidence are set aside.
    pub floor: f64,
    /// Decisions kept.
    pub decided: usize,
    /// Decisions kept over all cases.
    pub coverage: f64,
    /// Right decisions over kept ones (null when none is kept).
    pub selective_accuracy: Option<f64>,
}

/// The report's metrics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Cases in the suite.
    pub total: usize,
    /// Recommendations.
    pub decided: usize,
    /// Abstentions.
    pub abstained: usize,
    /// Instrument failures.
    pub failed: usize,
    /// Decided over total.
    pub coverage: f64,
    /// Right over decided; null when nothing was decided.
    pub selective_accuracy: Option<f64>,
    /// Abstentions where abstaining was expected.
    pub correct_abstentions: usize,
    /// Decisions where abstaining was expected.
    pub missed_abstentions: usize,
    /// Wrong decisions at or above the confidence floor.
    pub confident_errors: usize,
    /// Wrong decisions per expected value.
    pub errors_by_expected: BTreeMap<String, usize>,
    /// Mean Brier score, when every scorable decision published probabilities.
    pub brier: Measured<f64>,
    /// Coverage and selective accuracy at each floor, when any decision has a confidence.
    pub coverage_curve: Measured<Vec<CurvePoint>>,
}

/// The gate's verdict, why, and its thresholds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    /// Whether every threshold held.
    pub passed: bool,
    /// The first threshold that failed, or `every threshold held`.
    pub reason: String,
    /// The lowest selective accuracy that passes.
    pub min_selective_accuracy: f64,
    /// The most confident errors that pass.
    pub max_confident_errors: i64,
    /// The most instrument failures that pass.
    pub max_failures: i64,
}

/// The suite as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteRef {
    /// The suite's name.
    pub name: Value,
    /// The suite's version.
    pub version: Value,
    /// The sha256 of the suite's bytes.
    pub sha256: String,
}

/// The question as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionRef {
    /// The question id.
    pub id: String,
    /// Always `choice`.
    pub kind: &'static str,
    /// The question's sha256.
    pub sha256: String,
}

/// The decider as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeciderRef {
    /// `command` or `replay`.
    pub mode: &'static str,
    /// The argv (empty in replay mode).
    pub command: Vec<String>,
}

/// A `hpp.decision-eval/v1` report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA`].
    pub schema: &'static str,
    /// The suite.
    pub suite: SuiteRef,
    /// The question.
    pub question: QuestionRef,
    /// The decider.
    pub decider: DeciderRef,
    /// The suite's confidence floor.
    pub confidence_floor: Option<f64>,
    /// Each case, in suite order.
    pub cases: Vec<CaseReport>,
    /// The metrics.
    pub metrics: Metrics,
    /// The gate.
    pub gate: Gate,
}

/// Measures a decider (a command, or the suite's recorded records) with abstention as an
/// outcome of its own.
///
/// # Errors
///
/// A flag that [`Settings::check`] refuses.
pub fn evaluate(suite: &Suite, settings: &Settings, decider: Decider<'_>) -> Result<Report, Error> {
    settings.check()?;
    let (mode, command, mut ask) = match decider {
        Decider::Replay => ("replay", Vec::new(), None),
        Decider::Command { argv, ask } => ("command", argv.to_vec(), Some(ask)),
    };
    let mut cases = Vec::with_capacity(suite.cases.len());
    for case in &suite.cases {
        let state_sha256 = digest(&case.state).map_err(|_| Error::SecretCase(case.id.clone()))?;
        let answer = match ask.as_mut() {
            Some(ask) => ask(&request_bytes(&suite.question, &case.state)),
            None => case.record.clone().ok_or(Failure::NoReplay),
        };
        let record = answer.and_then(|answer| {
            let record = validate(&answer)?;
            if record.question.sha256 != suite.question.sha256 {
                return Err(Failure::OtherQuestion);
            }
            if record.state_sha256 != state_sha256 {
                return Err(Failure::OtherState);
            }
            Ok(record)
        });
        cases.push(case_report(case, record));
    }
    let metrics = metrics(&cases, &suite.question, suite.confidence_floor);
    let gate = gate(&metrics, settings);
    Ok(Report {
        schema: REPORT_SCHEMA,
        suite: SuiteRef {
            name: suite.name.clone(),
            version: suite.version.clone(),
            sha256: suite.sha256.clone(),
        },
        question: QuestionRef {
            id: suite.question.id.clone(),
            kind: "choice",
            sha256: suite.question.sha256.clone(),
        },
        decider: DeciderRef { mode, command },
        confidence_floor: suite.confidence_floor,
        cases,
        metrics,
        gate,
    })
}

fn case_report(case: &Case, record: Result<Record, Failure>) -> CaseReport {
    let mut entry = CaseReport {
        id: case.id.clone(),
        expected: case.expected.clone(),
        status: Status::InstrumentFailure,
        value: None,
        confidence: None,
        correct: None,
        error: None,
        probabilities: None,
    };
    let outcome = match record {
        Ok(record) => record.outcome,
        Err(failure) => {
            entry.error = Some(failure.to_string());
            return entry;
        }
    };
    entry.status = outcome.status;
    entry.value = outcome.value;
    entry.confidence = outcome.confidence;
    match outcome.status {
        Status::InstrumentFailure => entry.error = outcome.error,
        Status::Abstention => entry.correct = Some(case.expected == ABSTAIN),
        Status::Recommendation => {
            entry.correct = Some(entry.value.as_deref() == Some(case.expected.as_str()));
            entry.probabilities = outcome.probabilities;
        }
    }
    entry
}

fn metrics(cases: &[CaseReport], question: &Question, floor: Option<f64>) -> Metrics {
    let with = |status| cases.iter().filter(move |c| c.status == status);
    let decided: Vec<&CaseReport> = with(Status::Recommendation).collect();
    let abstained = with(Status::Abstention).count();
    let failed = with(Status::InstrumentFailure).count();
    let wrong: Vec<&&CaseReport> = decided.iter().filter(|c| c.correct != Some(true)).collect();
    let confident_errors = wrong
        .iter()
        .filter(|c| matches!((c.confidence, floor), (Some(conf), Some(floor)) if conf >= floor))
        .count();
    let mut errors_by_expected = BTreeMap::new();
    for case in &wrong {
        *errors_by_expected.entry(case.expected.clone()).or_insert(0) += 1;
    }
    let scorable: Vec<&&CaseReport> = decided.iter().filter(|c| c.expected != ABSTAIN).collect();
    let brier = if !scorable.is_empty() && scorable.iter().all(|c| c.probabilities.is_some()) {
        let total: f64 = scorable
            .iter()
            .map(|c| {
                let probabilities = c.probabilities.as_ref().expect("checked just above");
                question
                    .options
                    .iter()
                    .map(|option| {
                        let p = probabilities.get(option).copied().unwrap_or(0.0);
                        let y = if *option == c.expected { 1.0 } else { 0.0 };
                        (p - y).powi(2)
                    })
                    .sum::<f64>()
            })
            .sum();
        Measured::Value(total / scorable.len() as f64)
    } else {
        Measured::NotMeasured
    };
    let total = cases.len();
    Metrics {
        total,
        decided: decided.len(),
        abstained,
        failed,
        coverage: decided.len() as f64 / total as f64,
        selective_accuracy: (!decided.is_empty())
            .then(|| (decided.len() - wrong.len()) as f64 / decided.len() as f64),
        correct_abstentions: with(Status::Abstention)
            .filter(|c| c.correct == Some(true))
            .count(),
        missed_abstentions: decided.iter().filter(|c| c.expected == ABSTAIN).count(),
        confident_errors,
        errors_by_expected,
        brier,
        coverage_curve: curve(&decided, total),
    }
}

/// A single default floor is somebody else's guess about somebody else's task: with confidences
/// present, coverage and selective accuracy at each floor let the user choose one.
fn curve(decided: &[&CaseReport], total: usize) -> Measured<Vec<CurvePoint>> {
    let pool: Vec<(f64, bool)> = decided
        .iter()
        .filter_map(|c| c.confidence.map(|conf| (conf, c.correct == Some(true))))
        .collect();
    if pool.is_empty() {
        return Measured::NotMeasured;
    }
    Measured::Value(
        CURVE_FLOORS
            .iter()
            .map(|&floor| {
                let kept: Vec<bool> = pool
                    .iter()
                    .filter(|(conf, _)| *conf >= floor)
                    .map(|(_, right)| *right)
                    .collect();
                CurvePoint {
                    floor,
                    decided: kept.len(),
                    coverage: kept.len() as f64 / total as f64,
                    selective_accuracy: (!kept.is_empty())
                        .then(|| kept.iter().filter(|r| **r).count() as f64 / kept.len() as f64),
                }
            })
            .collect(),
    )
}

fn gate(metrics: &Metrics, settings: &Settings) -> Gate {
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let (passed, reason) = match metrics.selective_accuracy {
        None => (
            false,
            format!(
                "no decision was made ({} abstained, {} instrument failure(s)); there is no accuracy to measure",
                metrics.abstained, metrics.failed
            ),
        ),
        Some(_) if count(metrics.failed) > settings.max_failures => (
            false,
            format!(
                "{} instrument failure(s) > {}",
                metrics.failed, settings.max_failures
            ),
        ),
        Some(accuracy) if accuracy < settings.min_selective_accuracy => (
            false,
            format!(
                "selective accuracy {accuracy:.3} < {}",
                format_g(settings.min_selective_accuracy)
            ),
        ),
        Some(_) if count(metrics.confident_errors) > settings.max_confident_errors => (
            false,
            format!(
                "{} confident error(s) > {}",
                metrics.confident_errors, settings.max_confident_errors
            ),
        ),
        Some(_) => (true, "every threshold held".to_owned()),
    };
    Gate {
        passed,
        reason,
        min_selective_accuracy: settings.min_selective_accuracy,
        max_confident_errors: settings.max_confident_errors,
        max_failures: settings.max_failures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn question() -> Value {
        json!({"id": "risk", "kind": "choice", "options": ["low", "high"], "ladder": true})
    }

    fn record(state: &str, outcome: Value) -> Value {
        let mut q = question();
        q["sha256"] = json!(normalise_question(&question()).unwrap().sha256);
        json!({
            "schema": "hpp.decision/v1", "question": q,
            "state_sha256": sha256_hex(state.as_bytes()),
            "method": "replay", "authority": "advisory", "direction": "informational",
            "outcome": outcome,
        })
    }

    fn suite(cases: Value) -> Suite {
        let suite = json!({"schema": SUITE_SCHEMA, "question": question(), "cases": cases});
        Suite::parse(&serde_json::to_vec(&suite).unwrap(), "stem").unwrap()
    }

    fn decided(value: &str, confidence: f64, p_high: f64) -> Value {
        json!({"status": "recommendation", "value": value, "confidence": confidence,
               "probabilities": {"low": 1.0 - p_high, "high": p_high}})
    }

    fn replay(suite: &Suite, settings: &Settings) -> Report {
        evaluate(suite, settings, Decider::Replay).unwrap()
    }

    #[test]
    fn abstentions_and_failures_are_counted_apart_from_decisions() {
        let s = suite(json!([
            {"id": "a", "state": "a", "expected": "high", "record": record("a", decided("high", 0.9, 0.9))},
            {"id": "b", "state": "b", "expected": "abstain", "record": record("b", json!({"status": "abstention", "value": null}))},
            {"id": "c", "state": "c", "expected": "low"},
        ]));
        let settings = Settings {
            max_failures: 1,
            ..Settings::default()
        };
        let report = replay(&s, &settings);
        let m = &report.metrics;
        assert_eq!((m.total, m.decided, m.abstained, m.failed), (3, 1, 1, 1));
        assert_eq!(m.selective_accuracy, Some(1.0));
        assert_eq!(m.correct_abstentions, 1);
        assert!((m.coverage - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            report.cases[2].error.as_deref(),
            Some("case has no replay record and no decider command was given")
        );
        assert!(report.gate.passed, "{}", report.gate.reason);
    }

    #[test]
    fn control_nothing_decided_means_no_accuracy_not_zero() {
        let s = suite(json!([
            {"id": "a", "state": "a", "expected": "high", "record": record("a", json!({"status": "abstention", "value": null}))},
            {"id": "b", "state": "b", "expected": "low"},
        ]));
        let report = replay(&s, &Settings::default());
        assert_eq!(report.metrics.selective_accuracy, None);
        assert_eq!(report.metrics.brier, Measured::NotMeasured);
        assert_eq!(report.metrics.coverage_curve, Measured::NotMeasured);
        assert!(!report.gate.passed);
        assert_eq!(
            report.gate.reason,
            "no decision was made (1 abstained, 1 instrument failure(s)); there is no accuracy to measure"
        );
        let value = serde_json::to_value(&report).unwrap();
        assert_eq!(value["metrics"]["selective_accuracy"], Value::Null);
        assert_eq!(value["metrics"]["brier"], json!("not-measured"));
        assert_eq!(value["metrics"]["coverage_curve"], json!("not-measured"));
    }

    #[test]
    fn the_gate_checks_failures_then_accuracy_then_confident_errors() {
        let s = suite(json!([
            {"id": "a", "state": "a", "expected": "high", "record": record("a", decided("high", 0.9, 0.9))},
            {"id": "b", "state": "b", "expected": "low", "record": record("b", decided("high", 0.7, 0.7))},
            {"id": "c", "state": "c", "expected": "low"},
        ]));
        let reason = |settings: Settings| replay(&s, &settings).gate.reason;
        assert_eq!(reason(Settings::default()), "1 instrument failure(s) > 0");
        let tolerant = Settings {
            max_failures: 1,
            ..Settings::default()
        };
        assert_eq!(reason(tolerant.clone()), "selective accuracy 0.500 < 0.9");
        let lenient = Settings {
            min_selective_accuracy: 0.5,
            ..tolerant
        };
        assert_eq!(reason(lenient.clone()), "1 confident error(s) > 0");
        let forgiving = Settings {
            max_confident_errors: 1,
            ..lenient
        };
        assert_eq!(reason(forgiving), "every threshold held");
    }

    #[test]
    fn brier_and_the_curve_are_measured_from_published_probabilities() {
        let s = suite(json!([
            {"id": "a", "state": "a", "expected": "high", "record": record("a", decided("high", 0.9, 0.9))},
            {"id": "b", "state": "b", "expected": "low", "record": record("b", decided("high", 0.7, 0.7))},
        ]));
        let report = replay(&s, &Settings::default());
        // a: (0.1-0)^2 + (0.9-1)^2 = 0.02; b: (0.3-1)^2 + (0.7-0)^2 = 0.98.
        let Measured::Value(brier) = report.metrics.brier else {
            panic!("brier is measured")
        };
        assert!((brier - 0.5).abs() < 1e-12);
        let Measured::Value(curve) = &report.metrics.coverage_curve else {
            panic!("curve is measured")
        };
        assert_eq!(curve.len(), 5);
        assert_eq!(
            (
                curve[2].floor,
                curve[2].decided,
                curve[2].selective_accuracy
            ),
            (0.7, 2, Some(0.5))
        );
        assert_eq!(
            (
                curve[4].floor,
                curve[4].decided,
                curve[4].selective_accuracy
            ),
            (0.9, 1, Some(1.0))
        );
        assert_eq!(report.metrics.confident_errors, 1);
        assert_eq!(
            report.metrics.errors_by_expected,
            BTreeMap::from([("low".to_owned(), 1)])
        );
    }

    #[test]
    fn a_record_for_another_question_or_state_is_an_instrument_failure() {
        let mut other = record("a", decided("high", 0.9, 0.9));
        other["question"]["options"] = json!(["high", "low"]);
        other["question"].as_object_mut().unwrap().remove("sha256");
        let s = suite(json!([
            {"id": "a", "state": "a", "expected": "high", "record": other},
            {"id": "b", "state": "b", "expected": "high", "record": record("not b", decided("high", 0.9, 0.9))},
            {"id": "c", "state": "c", "expected": "high", "record": {"schema": "hpp.decision/v1"}},
        ]));
        let report = replay(&s, &Settings::default());
        let errors: Vec<_> = report
            .cases
            .iter()
            .map(|c| c.error.clone().unwrap())
            .collect();
        assert_eq!(
            errors,
            [
                "record answered a different question",
                "record judged a different state than the case holds",
                "question must be an object",
            ]
        );
        assert!(
            report
                .cases
                .iter()
                .all(|c| c.status == Status::InstrumentFailure && c.correct.is_none())
        );
    }

    #[test]
    fn the_decider_reads_the_question_and_the_state_in_ascii() {
        let s = suite(json!([{"id": "a", "state": "déjà vu", "expected": "high"}]));
        let mut seen = Vec::new();
        let mut ask = |stdin: &[u8]| {
            seen.push(stdin.to_vec());
            Ok(record("déjà vu", decided("high", 0.9, 0.9)))
        };
        let argv = vec!["decider".to_owned()];
        let report = evaluate(
            &s,
            &Settings::default(),
            Decider::Command {
                argv: &argv,
                ask: &mut ask,
            },
        )
        .unwrap();
        assert!(seen[0].is_ascii());
        let sent: Value = serde_json::from_slice(&seen[0]).unwrap();
        assert_eq!(sent["state"], "déjà vu");
        assert_eq!(sent["question"]["sha256"], json!(s.question.sha256));
        assert_eq!(report.decider.mode, "command");
        assert_eq!(report.cases[0].correct, Some(true));
    }

    #[test]
    fn control_suites_that_break_the_contract_are_refused() {
        let q = question();
        let parse = |v: Value| {
            Suite::parse(&serde_json::to_vec(&v).unwrap(), "s")
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            parse(json!({"schema": "x"})),
            "decision suite schema must be hpp.decision-suite/v1"
        );
        assert_eq!(
            parse(json!({"schema": SUITE_SCHEMA, "question": q, "cases": []})),
            "decision suite needs non-empty cases"
        );
        assert_eq!(
            parse(
                json!({"schema": SUITE_SCHEMA, "question": q, "cases": [{"id": "a", "state": "s", "expected": "maybe"}]})
            ),
            "case a expects 'maybe', which is neither an option nor 'abstain'"
        );
        assert_eq!(
            parse(
                json!({"schema": SUITE_SCHEMA, "question": q, "cases": [{"id": "a", "state": 1, "expected": "low"}]})
            ),
            "case a needs a text state"
        );
        assert_eq!(
            parse(
                json!({"schema": SUITE_SCHEMA, "question": q, "cases": [{"id": "a", "state": "s", "expected": "low"}, {"id": "a", "state": "s", "expected": "low"}]})
            ),
            "duplicate case id: a"
        );
        assert_eq!(
            parse(
                json!({"schema": SUITE_SCHEMA, "question": q, "cases": [{"id": "a", "state": "password: hunter2", "expected": "low"}]})
            ),
            "case a: state looks like it carries a secret; it is never hashed into a record or sent to a decider"
        );
        assert_eq!(
            parse(
                json!({"schema": SUITE_SCHEMA, "question": q, "confidence_floor": 2, "cases": [{"id": "a", "state": "s", "expected": "low"}]})
            ),
            "confidence_floor must be a number between 0 and 1, or null"
        );
        assert!(
            Suite::parse(b"[", "s")
                .unwrap_err()
                .to_string()
                .starts_with("invalid decision suite JSON: ")
        );
    }

    #[test]
    fn control_flags_out_of_range_are_refused() {
        for (settings, error) in [
            (
                Settings {
                    timeout_s: -1.0,
                    ..Settings::default()
                },
                Error::Timeout,
            ),
            (
                Settings {
                    min_selective_accuracy: 1.1,
                    ..Settings::default()
                },
                Error::MinSelectiveAccuracy,
            ),
            (
                Settings {
                    max_confident_errors: -1,
                    ..Settings::default()
                },
                Error::MaxConfidentErrors,
            ),
            (
                Settings {
                    max_failures: -1,
                    ..Settings::default()
                },
                Error::MaxFailures,
            ),
        ] {
            assert_eq!(settings.check(), Err(error));
        }
        assert_eq!(parse_command("python3 d.py"), Err(Error::Command));
    }

    proptest! {
        #[test]
        fn no_suite_bytes_make_the_parser_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Err(error) = Suite::parse(&bytes, "s") {
                prop_assert!(!error.to_string().is_empty());
            }
        }
    }
}
