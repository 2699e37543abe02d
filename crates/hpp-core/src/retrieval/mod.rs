//! Retrieval ruler: hit, recall, precision@k, MRR and nDCG@k of a retriever the user declares,
//! over a labelled suite (CONCEPTS.md "retrieval ruler").
//!
//! The harness runs no index and calls no model. A retriever is a command that reads
//! `{"query", "k"}` as JSON on stdin and prints ranked ids; without a command the ruler replays
//! the results recorded in the suite (`hpp.retrieval-suite/v1`). This module validates the suite,
//! reads each answer, scores its top k against the ids the suite marks relevant and writes the
//! report (`hpp.retrieval-eval/v1`). It runs nothing itself: the caller hands it a function that
//! asks the retriever ([`Retriever::Command`]) and turns a finished run into an answer with
//! [`answer_of_run`]. No refs are touched.
//!
//! Three rules carry the design:
//! - a retriever that answers and finds nothing relevant scores a real 0; a timeout, a non-zero
//!   exit, output that is not JSON or a duplicate id is an instrument failure, counted apart and
//!   never scored;
//! - means are taken over measured cases only: with none measured the metrics are null and the
//!   gate says why, never 0%;
//! - the ranking is the order the retriever printed: a score is checked, never used to re-sort.

use std::collections::{BTreeSet, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::instrument::{RunFailure, ascii_json, format_g, parse_argv, read_answer};
use crate::int::Int;
use crate::pyrepr;
use crate::record::sha256_hex;
use crate::run::{self, Finished, NotFinished};
use crate::secrets::looks_secret;

/// Schema of a retrieval suite.
pub const SUITE_SCHEMA: &str = "hpp.retrieval-suite/v1";
/// Schema of the report.
pub const REPORT_SCHEMA: &str = "hpp.retrieval-eval/v1";
/// The cut-off when neither the suite nor the caller names one.
pub const DEFAULT_K: i64 = 5;

/// A suite, an argument or a threshold that breaks the contract: the whole run is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The suite's bytes are not UTF-8 JSON.
    #[error("invalid retrieval suite JSON: {0}")]
    InvalidJson(String),
    /// The suite's root is not an object with the suite schema.
    #[error("retrieval suite schema must be hpp.retrieval-suite/v1")]
    Schema,
    /// The suite has no non-empty string version.
    #[error("retrieval suite needs a string version")]
    Version,
    /// The suite's name is present but not non-empty text.
    #[error("retrieval suite name must be text")]
    Name,
    /// The suite's `k` or the `-k` flag is not an integer of at least 1.
    #[error("k must be an integer >= 1")]
    K,
    /// The suite has no cases.
    #[error("retrieval suite needs non-empty cases")]
    NoCases,
    /// A case is not an object with a non-empty string id.
    #[error("every case needs an id")]
    CaseId,
    /// Two cases share an id.
    #[error("duplicate case id: {0}")]
    DuplicateCase(String),
    /// A case's query is missing, not text, or blank.
    #[error("case {0} needs a non-empty text query")]
    Query(String),
    /// A case's query has the shape of a secret: it would be sent to a command.
    #[error("case {0}: the query looks like it carries a secret; it is never sent to a retriever")]
    SecretQuery(String),
    /// A case's relevant ids are missing or empty.
    #[error("case {0} needs a non-empty list of relevant ids")]
    Relevant(String),
    /// A relevant id is not a non-empty string.
    #[error("case {0}: relevant ids must be non-empty strings")]
    RelevantId(String),
    /// A relevant id appears twice.
    #[error("case {0}: relevant ids must be unique")]
    RelevantUnique(String),
    /// `--retriever-command` is not a JSON array of non-empty strings.
    #[error("--retriever-command must be a JSON array of strings (argv, no shell)")]
    Command,
    /// `--timeout` is not a positive, finite number of seconds of at most a day.
    #[error("timeout must be a positive, finite number of seconds, at most 86400")]
    Timeout,
    /// `--min-recall` is outside 0..=1.
    #[error("min_recall must be a number between 0 and 1")]
    MinRecall,
    /// `--max-failures` is negative.
    #[error("max_failures must be an integer >= 0")]
    MaxFailures,
}

/// Why one case could not be measured: an instrument failure, reported in the case and counted
/// apart from the scores.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The retriever ran but gave no answer (timeout, start failure, non-zero exit, empty or
    /// non-JSON output).
    #[error(transparent)]
    Run(#[from] RunFailure),
    /// The answer is an object without `results`.
    #[error("answer is an object without a 'results' list")]
    NoResults,
    /// The results are not a list.
    #[error("results must be a list of ids or of {{id, score}} objects")]
    NotAList,
    /// A result carries a score that is not a finite number.
    #[error("result {0} has a score that is not a finite number")]
    Score(usize),
    /// A result has no non-empty string id.
    #[error("result {0} has no non-empty string id")]
    NoId(usize),
    /// The same id came back twice (counting it twice would inflate precision and nDCG).
    #[error("duplicate id {0} in results: return each labelled unit once")]
    Duplicate(String),
    /// Replay mode, and the case recorded no results.
    #[error("case has no replay results and no retriever command was given")]
    NoReplay,
}

/// One labelled case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The case id (never sent to the retriever: one keyed on it could replay answers).
    pub id: String,
    /// The query sent to the retriever.
    pub query: String,
    /// The ids that count as relevant.
    pub relevant: Vec<String>,
    /// The recorded answer replayed without a command (present even when `null`).
    pub results: Option<Value>,
}

/// A validated `hpp.retrieval-suite/v1`.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// The suite's name (default: the file's stem).
    pub name: String,
    /// The suite's version.
    pub version: String,
    /// The suite's cut-off (default [`DEFAULT_K`]), an integer of any size, as Python's.
    pub k: Int,
    /// The sha256 of the suite's bytes.
    pub sha256: String,
    /// The cases, in file order.
    pub cases: Vec<Case>,
}

impl Suite {
    /// Parses and validates a suite from its bytes; `default_name` names a suite without one.
    ///
    /// ```
    /// let text = br#"{"schema": "hpp.retrieval-suite/v1", "version": "1", "k": 2,
    ///     "cases": [{"id": "a", "query": "tea", "relevant": ["d1"], "results": ["d1", "d2"]}]}"#;
    /// let suite = hpp_core::retrieval::Suite::parse(text, "demo").unwrap();
    /// assert_eq!((suite.name.as_str(), suite.k, suite.cases.len()), ("demo", 2.into(), 1));
    /// ```
    ///
    /// # Errors
    ///
    /// The first broken rule, as [`Error`].
    pub fn parse(bytes: &[u8], default_name: &str) -> Result<Self, Error> {
        let root: Value =
            serde_json::from_slice(bytes).map_err(|e| Error::InvalidJson(e.to_string()))?;
        let suite = root.as_object().ok_or(Error::Schema)?;
        if suite.get("schema").and_then(Value::as_str) != Some(SUITE_SCHEMA) {
            return Err(Error::Schema);
        }
        let version = match suite.get("version") {
            Some(Value::String(v)) if !v.is_empty() => v.clone(),
            _ => return Err(Error::Version),
        };
        let name = match suite.get("name") {
            None => default_name.to_owned(),
            Some(Value::String(n)) if !n.is_empty() => n.clone(),
            Some(_) => return Err(Error::Name),
        };
        let k = match suite.get("k") {
            None => Int::from(DEFAULT_K),
            Some(value) => Int::from_json(value)
                .filter(|k| *k >= Int::from(1))
                .ok_or(Error::K)?,
        };
        let cases = match suite.get("cases") {
            Some(Value::Array(cases)) if !cases.is_empty() => cases,
            _ => return Err(Error::NoCases),
        };
        let mut seen = HashSet::new();
        let cases = cases
            .iter()
            .map(|case| {
                let case = parse_case(case)?;
                if !seen.insert(case.id.clone()) {
                    return Err(Error::DuplicateCase(case.id));
                }
                Ok(case)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            name,
            version,
            k,
            sha256: sha256_hex(bytes),
            cases,
        })
    }
}

fn parse_case(value: &Value) -> Result<Case, Error> {
    let case = value.as_object().ok_or(Error::CaseId)?;
    let id = match case.get("id") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        _ => return Err(Error::CaseId),
    };
    let query = match case.get("query") {
        Some(Value::String(q)) if !q.trim().is_empty() => q.clone(),
        _ => return Err(Error::Query(id)),
    };
    if looks_secret(&query) {
        return Err(Error::SecretQuery(id));
    }
    let relevant = match case.get("relevant") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => return Err(Error::Relevant(id)),
    };
    let relevant = relevant
        .iter()
        .map(|item| match item {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            _ => Err(Error::RelevantId(id.clone())),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if relevant.iter().collect::<HashSet<_>>().len() != relevant.len() {
        return Err(Error::RelevantUnique(id));
    }
    Ok(Case {
        id,
        query,
        relevant,
        results: case.get("results").cloned(),
    })
}

/// Parses `--retriever-command`: a JSON array of non-empty strings, run as an argv (no shell).
///
/// ```
/// use hpp_core::retrieval::parse_command;
/// assert_eq!(parse_command(r#"["python3", "r.py"]"#).unwrap(), ["python3", "r.py"]);
/// assert!(parse_command("python3 r.py").is_err());
/// ```
///
/// # Errors
///
/// [`Error::Command`] for anything else (a shell string, an empty array, a non-string item).
pub fn parse_command(text: &str) -> Result<Vec<String>, Error> {
    parse_argv(text).ok_or(Error::Command)
}

/// The flags of one evaluation, as the user gave them.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The cut-off; `None` takes the suite's.
    pub k: Option<Int>,
    /// Seconds each retriever run may take.
    pub timeout_s: f64,
    /// The lowest mean recall@k that passes the gate.
    pub min_recall: f64,
    /// The most instrument failures that pass the gate.
    pub max_failures: i64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            k: None,
            timeout_s: 10.0,
            min_recall: 0.8,
            max_failures: 0,
        }
    }
}

impl Settings {
    /// Checks every flag, before anything is read or run.
    ///
    /// # Errors
    ///
    /// [`Error::K`], [`Error::Timeout`], [`Error::MinRecall`] or [`Error::MaxFailures`].
    pub fn check(&self) -> Result<(), Error> {
        if self.k.as_ref().is_some_and(|k| *k < Int::from(1)) {
            return Err(Error::K);
        }
        run::valid_timeout(self.timeout_s).map_err(|_| Error::Timeout)?;
        if !(0.0..=1.0).contains(&self.min_recall) {
            return Err(Error::MinRecall);
        }
        if self.max_failures < 0 {
            return Err(Error::MaxFailures);
        }
        Ok(())
    }
}

/// Where the answers come from.
pub enum Retriever<'a> {
    /// The results recorded in each case.
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

/// Returns what a retriever reads on stdin: `{"query", "k"}` as ASCII-escaped JSON, so a child
/// that decodes stdin in a legacy codepage reads the same text. The case id is not sent.
///
/// ```
/// let bytes = hpp_core::retrieval::request_bytes("café", &3.into());
/// assert_eq!(bytes, br#"{"k":3,"query":"caf\u00e9"}"#);
/// ```
pub fn request_bytes(query: &str, k: &Int) -> Vec<u8> {
    ascii_json(&serde_json::json!({"query": query, "k": k}))
}

/// Turns one finished run of the retriever into its JSON answer, or the instrument failure.
///
/// # Errors
///
/// A timeout, a start failure, a non-zero exit or signal, empty output or output that is not
/// JSON, as [`Failure`].
pub fn answer_of_run(
    run: Result<&Finished, &NotFinished>,
    timeout_s: f64,
) -> Result<Value, Failure> {
    Ok(read_answer("retriever", run, timeout_s)?)
}

/// Returns the ids of an answer in the retriever's order: a list of ids, or
/// `{"results": [{"id", "score"?}, ...]}`.
///
/// ```
/// use hpp_core::retrieval::ranked_ids;
/// let answer = serde_json::json!({"results": [{"id": "b", "score": 0.2}, {"id": "a", "score": 0.9}]});
/// assert_eq!(ranked_ids(&answer).unwrap(), ["b", "a"]);
/// ```
///
/// # Errors
///
/// A malformed answer, a score that is not a finite number, or a duplicate id, as [`Failure`].
pub fn ranked_ids(answer: &Value) -> Result<Vec<String>, Failure> {
    let list = match answer {
        Value::Object(map) => map.get("results").ok_or(Failure::NoResults)?,
        other => other,
    };
    let items = list.as_array().ok_or(Failure::NotAList)?;
    let mut ids = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let position = index + 1;
        let id = match item {
            Value::Object(result) => {
                // serde_json parses only finite numbers, so a number is always finite here.
                if let Some(score) = result.get("score")
                    && !score.is_null()
                    && !score.is_number()
                {
                    return Err(Failure::Score(position));
                }
                result.get("id")
            }
            other => Some(other),
        };
        match id {
            Some(Value::String(id)) if !id.is_empty() => ids.push(id.clone()),
            _ => return Err(Failure::NoId(position)),
        }
    }
    let mut seen = HashSet::new();
    let repeated: BTreeSet<&String> = ids.iter().filter(|id| !seen.insert(*id)).collect();
    if let Some(first) = repeated.first() {
        return Err(Failure::Duplicate(pyrepr::string(first)));
    }
    Ok(ids)
}

/// The scores of one measured case over the top k of its ranking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CaseMetrics {
    /// 1 when any relevant id is in the top k, else 0.
    pub hit_at_k: f64,
    /// Relevant ids in the top k, over all relevant ids.
    pub recall_at_k: f64,
    /// Relevant ids in the top k, over k (not over what came back: a short lucky answer is not
    /// 100% precise, and an empty answer has a defined precision of 0).
    pub precision_at_k: f64,
    /// 1 over the rank of the first relevant id in the top k, else 0.
    pub reciprocal_rank: f64,
    /// Binary nDCG: the ideal puts min(k, relevant) relevant ids first.
    pub ndcg_at_k: f64,
}

/// Scores one ranking against its relevant ids over the top `k` (`k` ≥ 1).
///
/// ```
/// use hpp_core::retrieval::case_metrics;
/// let ranked = ["x", "a"].map(String::from);
/// let m = case_metrics(&ranked, &["a".to_owned(), "b".to_owned()], &4.into());
/// assert_eq!((m.hit_at_k, m.recall_at_k, m.precision_at_k, m.reciprocal_rank), (1.0, 0.5, 0.25, 0.5));
/// ```
pub fn case_metrics(ranked: &[String], relevant: &[String], k: &Int) -> CaseMetrics {
    let cut = k.to_count();
    let wanted: HashSet<&String> = relevant.iter().collect();
    let ranks: Vec<usize> = ranked
        .iter()
        .take(cut)
        .enumerate()
        .filter(|(_, id)| wanted.contains(id))
        .map(|(i, _)| i + 1)
        .collect();
    let gain = |rank: usize| 1.0 / ((rank + 1) as f64).log2();
    let ideal: f64 = (1..=cut.min(wanted.len())).map(gain).sum();
    let hits = ranks.len() as f64;
    CaseMetrics {
        hit_at_k: if ranks.is_empty() { 0.0 } else { 1.0 },
        recall_at_k: hits / wanted.len() as f64,
        precision_at_k: Int::from(ranks.len() as u64).true_div(k),
        reciprocal_rank: ranks.first().map_or(0.0, |r| 1.0 / *r as f64),
        ndcg_at_k: ranks.iter().map(|r| gain(*r)).sum::<f64>() / ideal,
    }
}

/// One case of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CaseReport {
    /// The retriever answered and the answer was scored.
    Measured {
        /// The case id.
        id: String,
        /// Always `measured`.
        status: &'static str,
        /// The top k ids, in the retriever's order.
        returned: Vec<String>,
        /// The returned ids that are relevant, in the same order.
        relevant_hits: Vec<String>,
        /// The scores.
        metrics: CaseMetrics,
    },
    /// The instrument failed; the case is not scored.
    Failed {
        /// The case id.
        id: String,
        /// Always `instrument-failure`.
        status: &'static str,
        /// What failed.
        error: String,
        /// Always null.
        metrics: Option<CaseMetrics>,
    },
}

/// The means over measured cases; every mean is `None` (null) when no case was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Cases in the suite.
    pub total: usize,
    /// Cases the retriever answered.
    pub measured: usize,
    /// Instrument failures.
    pub failed: usize,
    /// Mean hit@k.
    pub hit_at_k: Option<f64>,
    /// Mean recall@k.
    pub recall_at_k: Option<f64>,
    /// Mean precision@k.
    pub precision_at_k: Option<f64>,
    /// Mean reciprocal rank.
    pub mrr: Option<f64>,
    /// Mean nDCG@k.
    pub ndcg_at_k: Option<f64>,
}

/// The thresholds the gate applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    /// The lowest mean recall@k that passes.
    pub min_recall: f64,
    /// The most instrument failures that pass.
    pub max_failures: i64,
}

/// The gate's verdict and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gate {
    /// Whether every threshold held.
    pub passed: bool,
    /// The first threshold that failed, or `every threshold held`.
    pub reason: String,
    /// The thresholds.
    pub thresholds: Thresholds,
}

/// The suite as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteRef {
    /// The suite's name.
    pub name: String,
    /// The suite's version.
    pub version: String,
    /// The sha256 of the suite's bytes.
    pub sha256: String,
    /// The suite's own k.
    pub k: Int,
}

/// The retriever as the report names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrieverRef {
    /// `command` or `replay`.
    pub mode: &'static str,
    /// The argv (empty in replay mode).
    pub command: Vec<String>,
}

/// A `hpp.retrieval-eval/v1` report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA`].
    pub schema: &'static str,
    /// The suite.
    pub suite: SuiteRef,
    /// The retriever.
    pub retriever: RetrieverRef,
    /// The cut-off used.
    pub k: Int,
    /// Each case, in suite order.
    pub cases: Vec<CaseReport>,
    /// The means.
    pub metrics: Metrics,
    /// The gate.
    pub gate: Gate,
}

/// Measures a retriever (a command, or the suite's recorded results) against the suite.
///
/// ```
/// use hpp_core::retrieval::{Retriever, Settings, Suite, evaluate};
/// let text = br#"{"schema": "hpp.retrieval-suite/v1", "version": "1", "k": 2,
///     "cases": [{"id": "a", "query": "tea", "relevant": ["d1"], "results": ["d2", "d1"]}]}"#;
/// let suite = Suite::parse(text, "demo").unwrap();
/// let report = evaluate(&suite, &Settings::default(), Retriever::Replay).unwrap();
/// assert_eq!(report.metrics.mrr, Some(0.5));
/// assert!(report.gate.passed);
/// ```
///
/// # Errors
///
/// A flag that [`Settings::check`] refuses.
pub fn evaluate(
    suite: &Suite,
    settings: &Settings,
    retriever: Retriever<'_>,
) -> Result<Report, Error> {
    settings.check()?;
    let k = settings.k.clone().unwrap_or_else(|| suite.k.clone());
    let (mode, command, mut ask) = match retriever {
        Retriever::Replay => ("replay", Vec::new(), None),
        Retriever::Command { argv, ask } => ("command", argv.to_vec(), Some(ask)),
    };
    let cases: Vec<CaseReport> = suite
        .cases
        .iter()
        .map(|case| {
            let answer = match ask.as_mut() {
                Some(ask) => ask(&request_bytes(&case.query, &k)),
                None => case.results.clone().ok_or(Failure::NoReplay),
            };
            match answer.and_then(|answer| ranked_ids(&answer)) {
                Ok(ranked) => measured(case, &ranked, &k),
                Err(failure) => CaseReport::Failed {
                    id: case.id.clone(),
                    status: "instrument-failure",
                    error: failure.to_string(),
                    metrics: None,
                },
            }
        })
        .collect();
    let metrics = means(&cases);
    let gate = gate(&metrics, settings);
    Ok(Report {
        schema: REPORT_SCHEMA,
        suite: SuiteRef {
            name: suite.name.clone(),
            version: suite.version.clone(),
            sha256: suite.sha256.clone(),
            k: suite.k.clone(),
        },
        retriever: RetrieverRef { mode, command },
        k,
        cases,
        metrics,
        gate,
    })
}

fn measured(case: &Case, ranked: &[String], k: &Int) -> CaseReport {
    let top: Vec<String> = ranked.iter().take(k.to_count()).cloned().collect();
    let relevant_hits = top
        .iter()
        .filter(|id| case.relevant.contains(id))
        .cloned()
        .collect();
    CaseReport::Measured {
        id: case.id.clone(),
        status: "measured",
        returned: top,
        relevant_hits,
        metrics: case_metrics(ranked, &case.relevant, k),
    }
}

fn means(cases: &[CaseReport]) -> Metrics {
    let scored: Vec<&CaseMetrics> = cases
        .iter()
        .filter_map(|case| match case {
            CaseReport::Measured { metrics, .. } => Some(metrics),
            CaseReport::Failed { .. } => None,
        })
        .collect();
    let mean = |pick: fn(&CaseMetrics) -> f64| {
        (!scored.is_empty())
            .then(|| scored.iter().map(|m| pick(m)).sum::<f64>() / scored.len() as f64)
    };
    Metrics {
        total: cases.len(),
        measured: scored.len(),
        failed: cases.len() - scored.len(),
        hit_at_k: mean(|m| m.hit_at_k),
        recall_at_k: mean(|m| m.recall_at_k),
        precision_at_k: mean(|m| m.precision_at_k),
        mrr: mean(|m| m.reciprocal_rank),
        ndcg_at_k: mean(|m| m.ndcg_at_k),
    }
}

fn gate(metrics: &Metrics, settings: &Settings) -> Gate {
    let failed = metrics.failed;
    let over = i64::try_from(failed).unwrap_or(i64::MAX) > settings.max_failures;
    let (passed, reason) = match metrics.recall_at_k {
        None => (
            false,
            format!(
                "no case was measured ({failed} instrument failure{}); there is no recall to measure",
                if failed == 1 { "" } else { "s" }
            ),
        ),
        Some(_) if over => (
            false,
            format!("{failed} instrument failure(s) > {}", settings.max_failures),
        ),
        Some(recall) if recall < settings.min_recall => (
            false,
            format!(
                "mean recall@k {recall:.3} < {}",
                format_g(settings.min_recall)
            ),
        ),
        Some(_) => (true, "every threshold held".to_owned()),
    };
    Gate {
        passed,
        reason,
        thresholds: Thresholds {
            min_recall: settings.min_recall,
            max_failures: settings.max_failures,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn suite(value: Value) -> Result<Suite, Error> {
        Suite::parse(&serde_json::to_vec(&value).unwrap(), "stem")
    }

    fn one_case(case: Value) -> Value {
        json!({"schema": SUITE_SCHEMA, "version": "1", "k": 3, "cases": [case]})
    }

    fn ids(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn precision_divides_by_k_not_by_what_came_back() {
        let m = case_metrics(&ids(&["a"]), &ids(&["a"]), &5.into());
        assert_eq!(m.precision_at_k, 0.2);
        assert_eq!(m.recall_at_k, 1.0);
        assert_eq!(m.ndcg_at_k, 1.0);
    }

    #[test]
    fn an_empty_answer_scores_a_real_zero() {
        let m = case_metrics(&[], &ids(&["a", "b"]), &3.into());
        assert_eq!(
            (
                m.hit_at_k,
                m.recall_at_k,
                m.precision_at_k,
                m.reciprocal_rank,
                m.ndcg_at_k
            ),
            (0.0, 0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn ndcg_uses_the_ideal_over_min_of_k_and_relevant() {
        // One relevant id at rank 2 of k=3, two relevant ids: dcg = 1/log2(3), ideal = 1 + 1/log2(3).
        let m = case_metrics(&ids(&["x", "a", "y", "b"]), &ids(&["a", "b"]), &3.into());
        let expected = (1.0 / 3f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!((m.ndcg_at_k - expected).abs() < 1e-12);
        assert_eq!(m.reciprocal_rank, 0.5);
        assert_eq!(m.recall_at_k, 0.5);
    }

    #[test]
    fn ids_past_k_do_not_count() {
        let m = case_metrics(&ids(&["x", "y", "a"]), &ids(&["a"]), &2.into());
        assert_eq!(m.hit_at_k, 0.0);
    }

    #[test]
    fn the_printed_order_is_the_ranking_whatever_the_scores() {
        let answer =
            json!({"results": [{"id": "low", "score": 0.1}, {"id": "high", "score": 0.9}]});
        assert_eq!(ranked_ids(&answer).unwrap(), ids(&["low", "high"]));
    }

    #[test]
    fn control_a_duplicate_id_is_an_instrument_failure() {
        let answer = json!(["a", "b", "a"]);
        assert_eq!(
            ranked_ids(&answer).unwrap_err().to_string(),
            "duplicate id 'a' in results: return each labelled unit once"
        );
    }

    #[test]
    fn control_malformed_answers_are_instrument_failures() {
        for (answer, message) in [
            (
                json!({"ids": []}),
                "answer is an object without a 'results' list",
            ),
            (
                json!("a"),
                "results must be a list of ids or of {id, score} objects",
            ),
            (
                json!([{"id": "a", "score": "high"}]),
                "result 1 has a score that is not a finite number",
            ),
            (json!(["a", ""]), "result 2 has no non-empty string id"),
            (json!([1]), "result 1 has no non-empty string id"),
        ] {
            assert_eq!(ranked_ids(&answer).unwrap_err().to_string(), message);
        }
    }

    #[test]
    fn no_measured_case_gives_null_metrics_and_a_gate_that_says_why() {
        let s = suite(one_case(
            json!({"id": "a", "query": "q", "relevant": ["d"]}),
        ))
        .unwrap();
        let report = evaluate(&s, &Settings::default(), Retriever::Replay).unwrap();
        assert_eq!(report.metrics.measured, 0);
        assert_eq!(report.metrics.recall_at_k, None);
        assert_eq!(report.metrics.mrr, None);
        assert!(!report.gate.passed);
        assert_eq!(
            report.gate.reason,
            "no case was measured (1 instrument failure); there is no recall to measure"
        );
        let value = serde_json::to_value(&report).unwrap();
        assert_eq!(value["metrics"]["recall_at_k"], Value::Null);
        assert_eq!(value["cases"][0]["metrics"], Value::Null);
    }

    #[test]
    fn failures_are_excluded_from_the_means() {
        let s = suite(
            json!({"schema": SUITE_SCHEMA, "version": "1", "k": 2, "cases": [
                {"id": "ok", "query": "q", "relevant": ["d"], "results": ["d"]},
                {"id": "bad", "query": "q", "relevant": ["d"], "results": ["d", "d"]},
            ]}),
        )
        .unwrap();
        let settings = Settings {
            max_failures: 1,
            ..Settings::default()
        };
        let report = evaluate(&s, &settings, Retriever::Replay).unwrap();
        assert_eq!((report.metrics.measured, report.metrics.failed), (1, 1));
        assert_eq!(report.metrics.recall_at_k, Some(1.0));
        assert_eq!(report.metrics.precision_at_k, Some(0.5));
        assert!(report.gate.passed, "{}", report.gate.reason);
        let strict = evaluate(&s, &Settings::default(), Retriever::Replay).unwrap();
        assert_eq!(strict.gate.reason, "1 instrument failure(s) > 0");
    }

    #[test]
    fn the_command_gets_the_query_and_k_but_never_the_case_id() {
        let s = suite(one_case(
            json!({"id": "secret-id", "query": "tea", "relevant": ["d"]}),
        ))
        .unwrap();
        let mut seen = Vec::new();
        let mut ask = |stdin: &[u8]| {
            seen.push(String::from_utf8(stdin.to_vec()).unwrap());
            Ok(json!(["d"]))
        };
        let argv = ids(&["retriever"]);
        let settings = Settings {
            k: Some(2.into()),
            ..Settings::default()
        };
        let report = evaluate(
            &s,
            &settings,
            Retriever::Command {
                argv: &argv,
                ask: &mut ask,
            },
        )
        .unwrap();
        assert_eq!(seen, [r#"{"k":2,"query":"tea"}"#]);
        assert_eq!((report.k, report.suite.k), (2.into(), 3.into()));
        assert_eq!(report.retriever.mode, "command");
    }

    #[test]
    fn the_gate_reports_recall_under_the_threshold() {
        let s = suite(
            json!({"schema": SUITE_SCHEMA, "version": "1", "k": 2, "cases": [
                {"id": "a", "query": "q", "relevant": ["d", "e"], "results": ["d"]},
            ]}),
        )
        .unwrap();
        let report = evaluate(&s, &Settings::default(), Retriever::Replay).unwrap();
        assert_eq!(report.gate.reason, "mean recall@k 0.500 < 0.8");
    }

    #[test]
    fn control_suites_that_break_the_contract_are_refused() {
        let case = json!({"id": "a", "query": "q", "relevant": ["d"]});
        for (value, error) in [
            (json!([]), Error::Schema),
            (json!({"schema": "x"}), Error::Schema),
            (json!({"schema": SUITE_SCHEMA}), Error::Version),
            (
                json!({"schema": SUITE_SCHEMA, "version": "1", "k": 0, "cases": [case]}),
                Error::K,
            ),
            (
                json!({"schema": SUITE_SCHEMA, "version": "1", "k": 2.0, "cases": [case]}),
                Error::K,
            ),
            (
                json!({"schema": SUITE_SCHEMA, "version": "1", "name": "", "cases": [case]}),
                Error::Name,
            ),
            (
                json!({"schema": SUITE_SCHEMA, "version": "1", "cases": []}),
                Error::NoCases,
            ),
            (
                json!({"schema": SUITE_SCHEMA, "version": "1", "cases": [case, case]}),
                Error::DuplicateCase("a".into()),
            ),
            (
                one_case(json!({"id": "a", "query": " ", "relevant": ["d"]})),
                Error::Query("a".into()),
            ),
            (
                one_case(json!({"id": "a", "query": "api_key=abc", "relevant": ["d"]})),
                Error::SecretQuery("a".into()),
            ),
            (
                one_case(json!({"id": "a", "query": "q", "relevant": []})),
                Error::Relevant("a".into()),
            ),
            (
                one_case(json!({"id": "a", "query": "q", "relevant": [""]})),
                Error::RelevantId("a".into()),
            ),
            (
                one_case(json!({"id": "a", "query": "q", "relevant": ["d", "d"]})),
                Error::RelevantUnique("a".into()),
            ),
            (
                one_case(json!({"query": "q", "relevant": ["d"]})),
                Error::CaseId,
            ),
        ] {
            assert_eq!(suite(value.clone()), Err(error), "{value}");
        }
        assert!(matches!(
            Suite::parse(b"{", "s"),
            Err(Error::InvalidJson(_))
        ));
    }

    #[test]
    fn control_flags_out_of_range_are_refused() {
        for (settings, error) in [
            (
                Settings {
                    k: Some(0.into()),
                    ..Settings::default()
                },
                Error::K,
            ),
            (
                Settings {
                    timeout_s: 0.0,
                    ..Settings::default()
                },
                Error::Timeout,
            ),
            (
                Settings {
                    timeout_s: f64::NAN,
                    ..Settings::default()
                },
                Error::Timeout,
            ),
            (
                Settings {
                    min_recall: 1.5,
                    ..Settings::default()
                },
                Error::MinRecall,
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
    }

    #[test]
    fn the_command_must_be_an_argv_not_a_shell_line() {
        for text in [
            "python3 r.py",
            "[]",
            r#"["a", ""]"#,
            r#"["a", 1]"#,
            r#"{"argv": []}"#,
        ] {
            assert_eq!(parse_command(text), Err(Error::Command), "{text}");
        }
    }

    proptest! {
        #[test]
        fn no_suite_bytes_make_the_parser_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Err(error) = Suite::parse(&bytes, "s") {
                prop_assert!(!error.to_string().is_empty());
            }
        }

        #[test]
        fn no_answer_makes_the_reader_panic(text in "\\PC{0,80}") {
            if let Ok(value) = serde_json::from_str::<Value>(&text)
                && let Err(failure) = ranked_ids(&value)
            {
                prop_assert!(!failure.to_string().is_empty());
            }
        }

        #[test]
        fn metrics_stay_between_zero_and_one(
            ranked in proptest::collection::btree_set("[a-e]", 0..5),
            relevant in proptest::collection::btree_set("[a-e]", 1..5),
            k in 1i64..8,
        ) {
            let ranked: Vec<String> = ranked.into_iter().collect();
            let relevant: Vec<String> = relevant.into_iter().collect();
            let m = case_metrics(&ranked, &relevant, &Int::from(k));
            for value in [m.hit_at_k, m.recall_at_k, m.precision_at_k, m.reciprocal_rank, m.ndcg_at_k] {
                prop_assert!((0.0..=1.0 + 1e-12).contains(&value), "{value}");
            }
        }
    }
}
