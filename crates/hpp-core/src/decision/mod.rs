//! Typed decisions: `hpp.decision/v1` records and the ruler that measures a decider
//! (CONCEPTS.md "typed decision").
//!
//! A rule, a person, a local model or a hosted typed-decision model answers a small choice
//! question somewhere else; this module says what that answer must look like to be recorded
//! ([`validate`]), what a consumer may act on ([`effective`]), and measures a decider against a
//! labelled suite (`hpp.decision-suite/v1` → `hpp.decision-eval/v1`, [`evaluate`]). It calls no
//! model and runs nothing: the caller hands [`evaluate`] a function that asks the decider and
//! turns a finished run into an answer with [`answer_of_run`]. No refs are touched.
//!
//! Three rules carry the design:
//! - advisory only: `authority` is always `advisory`; with `direction: raise-only` on a ladder
//!   question the effective value is the higher of the declared and the advised one;
//! - abstention and instrument failure are outcomes, not errors, and never change a declared
//!   value; a timeout, an HTML page or a malformed answer is an instrument failure, not a verdict;
//! - re-derivable: a model record names the pinned version that answered (an alias such as
//!   `-latest` is refused) and the sha256 of the raw response; the judged text never enters a
//!   record, only its sha256, and secret-like text is refused before it is hashed.
//!
//! Version 1 measures `choice` questions only; a metric with no sample is null or
//! `"not-measured"`, never 0.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::pyrepr;
use crate::record::{canonical_json, is_sha256_hex, sha256_hex};
use crate::secrets::looks_secret;

mod eval;

pub use self::eval::{
    CURVE_FLOORS, Case, CaseReport, CurvePoint, DEFAULT_CONFIDENCE_FLOOR, Decider, DeciderRef,
    Failure, Gate, Measured, Metrics, QuestionRef, REPORT_SCHEMA, Report, SUITE_SCHEMA, Settings,
    Suite, SuiteRef, answer_of_run, evaluate, parse_command, request_bytes,
};

/// Schema of a decision record.
pub const SCHEMA: &str = "hpp.decision/v1";
/// The expected value of a case whose right answer is to abstain (never an option).
pub const ABSTAIN: &str = "abstain";
/// The most options a choice question may have.
pub const MAX_OPTIONS: usize = 255;

/// A moving model alias: the vendor re-points it without notice, so a record naming one cannot
/// say which model answered.
static ALIAS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)latest|preview|^~").expect("the alias pattern is a valid regex")
});

/// A record, question, suite or flag that breaks the contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The record's root is not an object.
    #[error("a decision record must be an object")]
    NotObject,
    /// The record's schema is not [`SCHEMA`].
    #[error("schema must be hpp.decision/v1")]
    Schema,
    /// The question is not an object.
    #[error("question must be an object")]
    Question,
    /// The question has no non-empty string id.
    #[error("question needs an id")]
    QuestionId,
    /// The question's kind is not `choice`.
    #[error(
        "question kind must be 'choice'; score and probability answers are not measurable in v1"
    )]
    Kind,
    /// The options are not a list of non-empty strings.
    #[error("question options must be a list of non-empty strings")]
    Options,
    /// Two options are equal.
    #[error("question options must be unique")]
    OptionsUnique,
    /// `abstain` is listed as an option.
    #[error("'abstain' is an outcome, not an option")]
    AbstainOption,
    /// Fewer than 2 or more than [`MAX_OPTIONS`] options.
    #[error("a choice question needs 2 to 255 options")]
    OptionCount,
    /// `ladder` is not a boolean.
    #[error("question ladder must be true or false")]
    Ladder,
    /// `instructions` is neither null nor text.
    #[error("question instructions must be text")]
    Instructions,
    /// `criteria` names something other than an option, or is not text.
    #[error("question criteria must describe only declared options, as text")]
    Criteria,
    /// The question's `sha256` does not match its options and wording.
    #[error(
        "question sha256 does not match its options and wording; the question was edited after hashing"
    )]
    QuestionHash,
    /// A hash field is not a lowercase sha256.
    #[error("{0} must be a 64-character lowercase sha256")]
    Hex(&'static str),
    /// `method` is not a known method.
    #[error(
        "method must be one of regex, lexical, human, replay, local-model, external-model, panel"
    )]
    Method,
    /// `authority` is not `advisory`.
    #[error("authority must be 'advisory': a decision record never grants or approves anything")]
    Authority,
    /// `direction` is not a known direction.
    #[error("direction must be one of raise-only, informational")]
    Direction,
    /// `raise-only` on a question whose options are not ordered.
    #[error("raise-only needs an ordered question (ladder: true, options from low to high)")]
    RaiseOnlyLadder,
    /// The outcome has no known status.
    #[error("outcome status must be one of recommendation, abstention, instrument-failure")]
    Status,
    /// A recommendation's value is not an option.
    #[error("value {0} is not one of the options")]
    ValueNotOption(String),
    /// An abstention or instrument failure carries a value.
    #[error("{0} carries no value")]
    CarriesValue(&'static str),
    /// An instrument failure does not say what failed.
    #[error("an instrument failure must say what failed (outcome.error)")]
    FailureError,
    /// A confidence, probability or floor is not a number in 0..=1.
    #[error("{0} must be a number between 0 and 1, or null")]
    Unit(&'static str),
    /// A rule, a person or a panel published a confidence.
    #[error("a {0} decision has no confidence; publish null instead of inventing one")]
    Confidence(&'static str),
    /// The probabilities do not name every option exactly once.
    #[error("probabilities must name every option exactly once")]
    ProbabilityKeys,
    /// The probabilities do not sum to 1 (±0.001).
    #[error("probabilities must sum to 1")]
    ProbabilitySum,
    /// The provider is not an object with a non-empty id.
    #[error("provider must be an object with the non-empty id the user declared")]
    Provider,
    /// `model_served` is empty, not text, or an alias.
    #[error("provider.model_served must be the pinned version that answered, never an alias")]
    Alias,
    /// A model decision without a provider.
    #[error("a model decision needs the provider id the user declared")]
    ModelProvider,
    /// A model decision without `model_served`.
    #[error(
        "provider.model_served is missing: a model decision names the pinned version that answered"
    )]
    ModelServed,
    /// `declared` without `direction: raise-only`.
    #[error("declared is only meaningful with direction raise-only")]
    DeclaredDirection,
    /// `declared` is not an option.
    #[error("declared {0} is not one of the options")]
    DeclaredNotOption(String),
    /// The suite's bytes are not UTF-8 JSON.
    #[error("invalid decision suite JSON: {0}")]
    SuiteJson(String),
    /// The suite's schema is not [`SUITE_SCHEMA`].
    #[error("decision suite schema must be hpp.decision-suite/v1")]
    SuiteSchema,
    /// The suite has no cases.
    #[error("decision suite needs non-empty cases")]
    NoCases,
    /// A case is not an object with a non-empty string id.
    #[error("every case needs an id")]
    CaseId,
    /// Two cases share an id.
    #[error("duplicate case id: {0}")]
    DuplicateCase(String),
    /// A case's state is not text.
    #[error("case {0} needs a text state")]
    CaseState(String),
    /// A case expects neither an option nor `abstain`.
    #[error("case {id} expects {expected}, which is neither an option nor 'abstain'")]
    CaseExpected {
        /// The case id.
        id: String,
        /// The expected value, quoted.
        expected: String,
    },
    /// Text to be judged has the shape of a secret.
    #[error(
        "state looks like it carries a secret; it is never hashed into a record or sent to a decider"
    )]
    SecretState,
    /// A case's state has the shape of a secret: the whole suite is refused.
    #[error(
        "case {0}: state looks like it carries a secret; it is never hashed into a record or sent to a decider"
    )]
    SecretCase(String),
    /// `--decider-command` is not a JSON array of non-empty strings.
    #[error("--decider-command must be a JSON array of strings (argv, no shell)")]
    Command,
    /// `--timeout` is not a positive, finite number of seconds of at most a day.
    #[error("timeout must be a positive, finite number of seconds, at most 86400")]
    Timeout,
    /// `--min-selective-accuracy` is outside 0..=1.
    #[error("min_selective_accuracy must be a number between 0 and 1")]
    MinSelectiveAccuracy,
    /// `--max-confident-errors` is negative.
    #[error("max_confident_errors must be an integer >= 0")]
    MaxConfidentErrors,
    /// `--max-failures` is negative.
    #[error("max_failures must be an integer >= 0")]
    MaxFailures,
}

/// A normalised choice question; `sha256` covers the options and the wording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    /// The question id.
    pub id: String,
    /// Always `choice` in version 1.
    pub kind: &'static str,
    /// The options, in order (from low to high on a ladder).
    pub options: Vec<String>,
    /// Whether the options are ordered.
    pub ladder: bool,
    /// Wording given to the decider.
    pub instructions: Option<String>,
    /// What each option means, for the options that have a description.
    pub criteria: Option<BTreeMap<String, String>>,
    /// sha256 of the canonical JSON of every field above.
    pub sha256: String,
}

/// Returns the sha256 of judged text, refusing secret-shaped text before it is hashed.
///
/// ```
/// assert_eq!(hpp_core::decision::digest("").unwrap(), hpp_core::record::GENESIS_SHA256);
/// assert!(hpp_core::decision::digest("password = hunter2").is_err());
/// ```
///
/// # Errors
///
/// [`Error::SecretState`].
pub fn digest(text: &str) -> Result<String, Error> {
    if looks_secret(text) {
        return Err(Error::SecretState);
    }
    Ok(sha256_hex(text.as_bytes()))
}

/// Validates a question and returns it normalised with its sha256; a `sha256` it carries must
/// match.
///
/// # Errors
///
/// The first broken rule, as [`Error`].
pub fn normalise_question(value: &Value) -> Result<Question, Error> {
    let question = value.as_object().ok_or(Error::Question)?;
    let id = match question.get("id") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        _ => return Err(Error::QuestionId),
    };
    if question.get("kind").and_then(Value::as_str) != Some("choice") {
        return Err(Error::Kind);
    }
    let options: Vec<String> = match question.get("options") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) if !s.is_empty() => Ok(s.clone()),
                _ => Err(Error::Options),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(Error::Options),
    };
    if options.iter().collect::<HashSet<_>>().len() != options.len() {
        return Err(Error::OptionsUnique);
    }
    if options.iter().any(|o| o == ABSTAIN) {
        return Err(Error::AbstainOption);
    }
    if !(2..=MAX_OPTIONS).contains(&options.len()) {
        return Err(Error::OptionCount);
    }
    let ladder = match question.get("ladder") {
        None => false,
        Some(Value::Bool(ladder)) => *ladder,
        Some(_) => return Err(Error::Ladder),
    };
    let instructions = match question.get("instructions") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => return Err(Error::Instructions),
    };
    let criteria = match question.get("criteria") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(
            map.iter()
                .map(|(option, text)| match text {
                    Value::String(text) if options.contains(option) => {
                        Ok((option.clone(), text.clone()))
                    }
                    _ => Err(Error::Criteria),
                })
                .collect::<Result<BTreeMap<_, _>, _>>()?,
        ),
        Some(_) => return Err(Error::Criteria),
    };
    let hashed = serde_json::json!({
        "id": id, "kind": "choice", "options": options, "ladder": ladder,
        "instructions": instructions, "criteria": criteria,
    });
    let sha256 = sha256_hex(&canonical_json(&hashed));
    if let Some(given) = question.get("sha256")
        && given.as_str() != Some(sha256.as_str())
    {
        return Err(Error::QuestionHash);
    }
    Ok(Question {
        id,
        kind: "choice",
        options,
        ladder,
        instructions,
        criteria,
        sha256,
    })
}

/// Who or what answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// A regular expression.
    Regex,
    /// A word rule.
    Lexical,
    /// A person.
    Human,
    /// A replayed record.
    Replay,
    /// A model on the user's machine.
    LocalModel,
    /// A hosted model.
    ExternalModel,
    /// A House Session panel's verdict.
    Panel,
}

impl Method {
    fn parse(value: Option<&Value>) -> Result<Self, Error> {
        Ok(match value.and_then(Value::as_str) {
            Some("regex") => Self::Regex,
            Some("lexical") => Self::Lexical,
            Some("human") => Self::Human,
            Some("replay") => Self::Replay,
            Some("local-model") => Self::LocalModel,
            Some("external-model") => Self::ExternalModel,
            Some("panel") => Self::Panel,
            _ => return Err(Error::Method),
        })
    }

    /// Returns the method's name as the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Regex => "regex",
            Self::Lexical => "lexical",
            Self::Human => "human",
            Self::Replay => "replay",
            Self::LocalModel => "local-model",
            Self::ExternalModel => "external-model",
            Self::Panel => "panel",
        }
    }

    fn is_model(self) -> bool {
        matches!(self, Self::LocalModel | Self::ExternalModel)
    }

    /// Rules, people and panels have no measured confidence.
    fn has_no_confidence(self) -> bool {
        matches!(
            self,
            Self::Regex | Self::Lexical | Self::Human | Self::Panel
        )
    }
}

/// What a consumer may do with the advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// On a ladder, advice may raise the declared value, never lower it.
    RaiseOnly,
    /// Advice only informs.
    Informational,
}

/// How the decider answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// It chose an option.
    Recommendation,
    /// It declined to choose.
    Abstention,
    /// It could not answer (timeout, bad output, ...).
    InstrumentFailure,
}

/// The outcome of a record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionOutcome {
    /// How the decider answered.
    pub status: Status,
    /// The chosen option (recommendations only).
    pub value: Option<String>,
    /// The decider's confidence in 0..=1, if it measured one.
    pub confidence: Option<f64>,
    /// A probability per option, summing to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probabilities: Option<BTreeMap<String, f64>>,
    /// What failed (instrument failures only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The provider the user declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provider {
    /// The provider id.
    pub id: String,
    /// The pinned model version that answered.
    pub model_served: Option<String>,
}

/// A normalised `hpp.decision/v1` record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The question answered.
    pub question: Question,
    /// sha256 of the judged text.
    pub state_sha256: String,
    /// Who or what answered.
    pub method: Method,
    /// Always `advisory`.
    pub authority: &'static str,
    /// What a consumer may do with the advice.
    pub direction: Direction,
    /// The answer.
    pub outcome: DecisionOutcome,
    /// The provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<Provider>,
    /// sha256 of the raw response (for a panel: of the sealed deliberation record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_response_sha256: Option<String>,
    /// The value declared before the advice (raise-only only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
    /// Numeric usage counters (tokens, milliseconds, ...), as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<BTreeMap<String, Value>>,
}

/// Validates a decision record and returns it normalised.
///
/// ```
/// use serde_json::json;
/// let record = json!({
///     "schema": "hpp.decision/v1",
///     "question": {"id": "risk", "kind": "choice", "options": ["low", "high"], "ladder": true},
///     "state_sha256": hpp_core::record::GENESIS_SHA256,
///     "method": "human", "authority": "advisory", "direction": "raise-only",
///     "declared": "low", "outcome": {"status": "recommendation", "value": "high"},
/// });
/// let record = hpp_core::decision::validate(&record).unwrap();
/// assert_eq!(hpp_core::decision::effective(&record).value.as_deref(), Some("high"));
/// ```
///
/// # Errors
///
/// The first broken rule, as [`Error`].
pub fn validate(value: &Value) -> Result<Record, Error> {
    let record = value.as_object().ok_or(Error::NotObject)?;
    if record.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
        return Err(Error::Schema);
    }
    let question = normalise_question(record.get("question").unwrap_or(&Value::Null))?;
    let state_sha256 = hex(record.get("state_sha256"), "state_sha256")?;
    let method = Method::parse(record.get("method"))?;
    if record.get("authority").and_then(Value::as_str) != Some("advisory") {
        return Err(Error::Authority);
    }
    let direction = match record.get("direction").and_then(Value::as_str) {
        Some("raise-only") => Direction::RaiseOnly,
        Some("informational") => Direction::Informational,
        _ => return Err(Error::Direction),
    };
    if direction == Direction::RaiseOnly && !question.ladder {
        return Err(Error::RaiseOnlyLadder);
    }
    let outcome = parse_outcome(record.get("outcome"), &question, method)?;
    let provider = parse_provider(record.get("provider"))?;
    let raw = record.get("raw_response_sha256").filter(|v| !v.is_null());
    let raw_response_sha256 = if method.is_model() {
        let provider = provider.as_ref().ok_or(Error::ModelProvider)?;
        if provider.model_served.is_none() {
            return Err(Error::ModelServed);
        }
        if outcome.status != Status::InstrumentFailure || raw.is_some() {
            Some(hex(raw, "raw_response_sha256")?)
        } else {
            None
        }
    } else if method == Method::Panel {
        Some(hex(
            raw,
            "raw_response_sha256 (the sealed hpp.deliberation/v1 record)",
        )?)
    } else {
        raw.map(|raw| hex(Some(raw), "raw_response_sha256"))
            .transpose()?
    };
    let declared = match record.get("declared") {
        None | Some(Value::Null) => None,
        Some(_) if direction != Direction::RaiseOnly => return Err(Error::DeclaredDirection),
        Some(Value::String(d)) if question.options.contains(d) => Some(d.clone()),
        Some(other) => return Err(Error::DeclaredNotOption(pyrepr::value(other))),
    };
    let usage = record.get("usage").and_then(Value::as_object).map(|usage| {
        usage
            .iter()
            .filter(|(_, v)| v.is_null() || v.is_number())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    });
    Ok(Record {
        schema: SCHEMA,
        question,
        state_sha256,
        method,
        authority: "advisory",
        direction,
        outcome,
        provider,
        raw_response_sha256,
        declared,
        usage,
    })
}

fn parse_outcome(
    value: Option<&Value>,
    question: &Question,
    method: Method,
) -> Result<DecisionOutcome, Error> {
    let outcome = value.and_then(Value::as_object).ok_or(Error::Status)?;
    let status = match outcome.get("status").and_then(Value::as_str) {
        Some("recommendation") => Status::Recommendation,
        Some("abstention") => Status::Abstention,
        Some("instrument-failure") => Status::InstrumentFailure,
        _ => return Err(Error::Status),
    };
    let given = outcome.get("value").unwrap_or(&Value::Null);
    let value = match (status, given) {
        (Status::Recommendation, Value::String(v)) if question.options.contains(v) => {
            Some(v.clone())
        }
        (Status::Recommendation, other) => return Err(Error::ValueNotOption(pyrepr::value(other))),
        (_, Value::Null) => None,
        (Status::Abstention, _) => return Err(Error::CarriesValue("abstention")),
        (Status::InstrumentFailure, _) => return Err(Error::CarriesValue("an instrument failure")),
    };
    let error = match (status, outcome.get("error")) {
        (Status::InstrumentFailure, Some(Value::String(e))) if !e.trim().is_empty() => {
            Some(e.clone())
        }
        (Status::InstrumentFailure, _) => return Err(Error::FailureError),
        _ => None,
    };
    let confidence = unit(outcome.get("confidence"), "confidence")?;
    if confidence.is_some() && method.has_no_confidence() {
        return Err(Error::Confidence(method.as_str()));
    }
    let probabilities = match outcome.get("probabilities") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(probabilities(map, &question.options)?),
        Some(_) => return Err(Error::ProbabilityKeys),
    };
    Ok(DecisionOutcome {
        status,
        value,
        confidence,
        probabilities,
        error,
    })
}

fn probabilities(
    map: &Map<String, Value>,
    options: &[String],
) -> Result<BTreeMap<String, f64>, Error> {
    let keys: BTreeSet<&String> = map.keys().collect();
    if keys != options.iter().collect::<BTreeSet<_>>() {
        return Err(Error::ProbabilityKeys);
    }
    let mut out = BTreeMap::new();
    for (option, p) in map {
        // A null probability passes `_unit` in the reference and then cannot be summed; refusing
        // it as out of range says the same thing without a crash.
        let p = unit(Some(p), "each probability")?.ok_or(Error::Unit("each probability"))?;
        out.insert(option.clone(), p);
    }
    if (out.values().sum::<f64>() - 1.0).abs() > 1e-3 {
        return Err(Error::ProbabilitySum);
    }
    Ok(out)
}

fn parse_provider(value: Option<&Value>) -> Result<Option<Provider>, Error> {
    let provider = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(Error::Provider),
    };
    let id = match provider.get("id") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        _ => return Err(Error::Provider),
    };
    let model_served = match provider.get("model_served") {
        None | Some(Value::Null) => None,
        Some(Value::String(model)) if !model.is_empty() && !is_alias(model) => Some(model.clone()),
        Some(_) => return Err(Error::Alias),
    };
    Ok(Some(Provider { id, model_served }))
}

/// Tells whether a model id is a moving alias (`-latest`, `preview`, `~vendor/...`) rather than
/// a pinned version.
///
/// ```
/// assert!(hpp_core::decision::is_alias("claude-sonnet-latest"));
/// assert!(!hpp_core::decision::is_alias("classifier-2026-01-15"));
/// ```
pub fn is_alias(model: &str) -> bool {
    ALIAS.is_match(model)
}

fn hex(value: Option<&Value>, label: &'static str) -> Result<String, Error> {
    match value {
        Some(Value::String(text)) if is_sha256_hex(text) => Ok(text.clone()),
        _ => Err(Error::Hex(label)),
    }
}

pub(crate) fn unit(value: Option<&Value>, label: &'static str) -> Result<Option<f64>, Error> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|v| (0.0..=1.0).contains(v))
            .map(Some)
            .ok_or(Error::Unit(label)),
        Some(_) => Err(Error::Unit(label)),
    }
}

/// What the advice did to the declared value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// The advice was higher on the ladder than the declared value.
    Raised,
    /// The declared value stands (advice equal, lower, absent or not a recommendation).
    Kept,
    /// No declared value; the advice is the value.
    Advised,
    /// No declared value and no advice.
    None,
}

/// The value a consumer may act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effective {
    /// The value to act on, if any.
    pub value: Option<String>,
    /// How it was reached.
    pub action: Action,
    /// The declared value, if any.
    pub declared: Option<String>,
}

/// Returns what a consumer may act on: advice raises a declared value on a raise-only ladder,
/// never lowers or replaces it; abstentions and failures change nothing.
pub fn effective(record: &Record) -> Effective {
    let advised = match record.outcome.status {
        Status::Recommendation => record.outcome.value.clone(),
        Status::Abstention | Status::InstrumentFailure => None,
    };
    let declared = record.declared.clone();
    if let (Direction::RaiseOnly, Some(declared)) = (record.direction, &declared) {
        let rank = |v: &str| record.question.options.iter().position(|o| o == v);
        return match advised {
            Some(advised) if rank(&advised) > rank(declared) => Effective {
                value: Some(advised),
                action: Action::Raised,
                declared: Some(declared.clone()),
            },
            _ => Effective {
                value: Some(declared.clone()),
                action: Action::Kept,
                declared: Some(declared.clone()),
            },
        };
    }
    let action = if advised.is_some() {
        Action::Advised
    } else {
        Action::None
    };
    Effective {
        value: advised,
        action,
        declared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const STATE: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    const RAW: &str = "0000000000000000000000000000000000000000000000000000000000000000";

    fn ladder() -> Value {
        json!({"id": "risk", "kind": "choice", "options": ["low", "medium", "high"], "ladder": true})
    }

    fn record() -> Value {
        json!({
            "schema": SCHEMA, "question": ladder(), "state_sha256": STATE,
            "method": "local-model", "authority": "advisory", "direction": "raise-only",
            "provider": {"id": "local", "model_served": "clf-2026-01-15"},
            "raw_response_sha256": RAW, "declared": "medium",
            "outcome": {"status": "recommendation", "value": "high", "confidence": 0.8},
        })
    }

    fn with(path: &[&str], value: Value) -> Value {
        let mut record = record();
        let (last, parents) = path.split_last().unwrap();
        let mut node = &mut record;
        for key in parents {
            node = node.get_mut(*key).unwrap();
        }
        if value.is_null() && *last != "value" && *last != "confidence" {
            node.as_object_mut().unwrap().remove(*last);
        } else {
            node[*last] = value;
        }
        record
    }

    fn refusal(record: &Value) -> String {
        validate(record).unwrap_err().to_string()
    }

    #[test]
    fn advice_raises_a_declared_value_on_a_raise_only_ladder() {
        let effective = effective(&validate(&record()).unwrap());
        assert_eq!(effective.value.as_deref(), Some("high"));
        assert_eq!(effective.action, Action::Raised);
    }

    #[test]
    fn advice_never_lowers_a_declared_value() {
        let record = validate(&with(&["outcome", "value"], json!("low"))).unwrap();
        let effective = effective(&record);
        assert_eq!(
            (effective.value.as_deref(), effective.action),
            (Some("medium"), Action::Kept)
        );
    }

    #[test]
    fn abstention_and_failure_keep_the_declared_value() {
        let abstained = with(&["outcome"], json!({"status": "abstention", "value": null}));
        let failed = with(
            &["outcome"],
            json!({"status": "instrument-failure", "value": null, "error": "timeout"}),
        );
        for record in [abstained, failed] {
            let effective = effective(&validate(&record).unwrap());
            assert_eq!(
                (effective.value.as_deref(), effective.action),
                (Some("medium"), Action::Kept)
            );
        }
    }

    #[test]
    fn informational_advice_is_advised_or_none() {
        let mut record = record();
        record["direction"] = json!("informational");
        record.as_object_mut().unwrap().remove("declared");
        assert_eq!(
            effective(&validate(&record).unwrap()).action,
            Action::Advised
        );
        record["outcome"] = json!({"status": "abstention", "value": null});
        let none = effective(&validate(&record).unwrap());
        assert_eq!((none.value, none.action), (None, Action::None));
    }

    #[test]
    fn control_authority_other_than_advisory_is_refused() {
        for authority in [json!("binding"), json!("approve"), json!(null)] {
            assert_eq!(
                refusal(&with(&["authority"], authority)),
                "authority must be 'advisory': a decision record never grants or approves anything"
            );
        }
    }

    #[test]
    fn control_a_model_alias_is_refused() {
        for alias in ["clf-latest", "clf-preview-0301", "~vendor/clf"] {
            assert_eq!(
                refusal(&with(&["provider", "model_served"], json!(alias))),
                "provider.model_served must be the pinned version that answered, never an alias"
            );
        }
    }

    #[test]
    fn control_each_rule_names_what_it_refuses() {
        let cases = [
            (
                with(&["schema"], json!("hpp.decision/v2")),
                "schema must be hpp.decision/v1",
            ),
            (
                with(&["question", "kind"], json!("score")),
                "question kind must be 'choice'; score and probability answers are not measurable in v1",
            ),
            (
                with(&["question", "options"], json!(["low"])),
                "a choice question needs 2 to 255 options",
            ),
            (
                with(&["question", "options"], json!(["low", "low"])),
                "question options must be unique",
            ),
            (
                with(&["question", "options"], json!(["low", "abstain"])),
                "'abstain' is an outcome, not an option",
            ),
            (
                with(&["question", "sha256"], json!(RAW)),
                "question sha256 does not match its options and wording; the question was edited after hashing",
            ),
            (
                with(&["question", "criteria"], json!({"extreme": "x"})),
                "question criteria must describe only declared options, as text",
            ),
            (
                with(&["state_sha256"], json!("ABC")),
                "state_sha256 must be a 64-character lowercase sha256",
            ),
            (
                with(&["method"], json!("oracle")),
                "method must be one of regex, lexical, human, replay, local-model, external-model, panel",
            ),
            (
                with(&["direction"], json!("lower")),
                "direction must be one of raise-only, informational",
            ),
            (
                with(&["question", "ladder"], json!(false)),
                "raise-only needs an ordered question (ladder: true, options from low to high)",
            ),
            (
                with(&["outcome", "status"], json!("maybe")),
                "outcome status must be one of recommendation, abstention, instrument-failure",
            ),
            (
                with(&["outcome", "value"], json!("extreme")),
                "value 'extreme' is not one of the options",
            ),
            (
                with(&["outcome", "value"], json!(null)),
                "value None is not one of the options",
            ),
            (
                with(
                    &["outcome"],
                    json!({"status": "abstention", "value": "low"}),
                ),
                "abstention carries no value",
            ),
            (
                with(
                    &["outcome"],
                    json!({"status": "instrument-failure", "value": null}),
                ),
                "an instrument failure must say what failed (outcome.error)",
            ),
            (
                with(&["outcome", "confidence"], json!(1.5)),
                "confidence must be a number between 0 and 1, or null",
            ),
            (
                with(&["outcome", "probabilities"], json!({"low": 1.0})),
                "probabilities must name every option exactly once",
            ),
            (
                with(
                    &["outcome", "probabilities"],
                    json!({"low": 0.5, "medium": 0.5, "high": 0.5}),
                ),
                "probabilities must sum to 1",
            ),
            (
                with(&["provider"], json!({"id": ""})),
                "provider must be an object with the non-empty id the user declared",
            ),
            (
                with(&["provider"], json!(null)),
                "a model decision needs the provider id the user declared",
            ),
            (
                with(&["provider"], json!({"id": "local"})),
                "provider.model_served is missing: a model decision names the pinned version that answered",
            ),
            (
                with(&["raw_response_sha256"], json!(null)),
                "raw_response_sha256 must be a 64-character lowercase sha256",
            ),
            (
                with(&["raw_response_sha256"], json!(format!("{RAW}\n"))),
                "raw_response_sha256 must be a 64-character lowercase sha256",
            ),
            (
                with(&["declared"], json!("extreme")),
                "declared 'extreme' is not one of the options",
            ),
        ];
        for (record, message) in cases {
            assert_eq!(refusal(&record), message, "{record}");
        }
    }

    #[test]
    fn rules_and_people_publish_no_confidence() {
        let mut record = with(&["method"], json!("human"));
        assert_eq!(
            refusal(&record),
            "a human decision has no confidence; publish null instead of inventing one"
        );
        record["outcome"]["confidence"] = Value::Null;
        assert!(validate(&record).is_ok());
    }

    #[test]
    fn a_panel_needs_the_hash_of_its_sealed_record() {
        let mut record = with(&["method"], json!("panel"));
        record["outcome"]["confidence"] = Value::Null;
        record
            .as_object_mut()
            .unwrap()
            .remove("raw_response_sha256");
        assert_eq!(
            refusal(&record),
            "raw_response_sha256 (the sealed hpp.deliberation/v1 record) must be a 64-character lowercase sha256"
        );
    }

    #[test]
    fn a_model_failure_may_have_no_raw_response() {
        let mut record = with(
            &["outcome"],
            json!({"status": "instrument-failure", "value": null, "error": "HTML page"}),
        );
        record
            .as_object_mut()
            .unwrap()
            .remove("raw_response_sha256");
        let record = validate(&record).unwrap();
        assert_eq!(record.raw_response_sha256, None);
    }

    #[test]
    fn declared_needs_raise_only() {
        let mut record = record();
        record["direction"] = json!("informational");
        assert_eq!(
            refusal(&record),
            "declared is only meaningful with direction raise-only"
        );
    }

    #[test]
    fn the_normalised_record_keeps_numeric_usage_and_hashes_the_question() {
        let mut record = record();
        record["usage"] = json!({"tokens": 12, "note": "text", "ms": null, "cached": true});
        let normalised = serde_json::to_value(validate(&record).unwrap()).unwrap();
        assert_eq!(normalised["usage"], json!({"tokens": 12, "ms": null}));
        assert_eq!(normalised["question"]["instructions"], Value::Null);
        assert_eq!(normalised["outcome"]["confidence"], json!(0.8));
        let sha = normalised["question"]["sha256"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut again = record.clone();
        again["question"]["sha256"] = json!(sha);
        assert!(
            validate(&again).is_ok(),
            "a record carrying its own question hash validates"
        );
    }

    #[test]
    fn a_secret_is_refused_before_it_is_hashed() {
        assert_eq!(digest("api_key = abc"), Err(Error::SecretState));
        assert_eq!(digest("ship it").unwrap().len(), 64);
    }

    /// Any JSON value, a few levels deep.
    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (0.0f64..2.0).prop_map(Value::from),
            "[a-z~-]{0,12}".prop_map(Value::from),
            Just(json!("high")),
            Just(json!(STATE)),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    const FIELDS: [&str; 12] = [
        "schema",
        "question",
        "state_sha256",
        "method",
        "authority",
        "direction",
        "outcome",
        "provider",
        "raw_response_sha256",
        "declared",
        "usage",
        "extra",
    ];

    proptest! {
        #[test]
        fn no_record_makes_the_validator_panic(field in 0usize..12, value in arb_json()) {
            let mut record = record();
            record[FIELDS[field]] = value;
            if let Err(error) = validate(&record) {
                prop_assert!(!error.to_string().is_empty());
            }
        }

        #[test]
        fn no_outcome_or_question_field_makes_the_validator_panic(
            field in prop_oneof![Just("status"), Just("value"), Just("confidence"), Just("probabilities"), Just("error")],
            question_field in prop_oneof![Just("id"), Just("kind"), Just("options"), Just("ladder"), Just("instructions"), Just("criteria"), Just("sha256")],
            value in arb_json(),
            other in arb_json(),
        ) {
            let mut record = record();
            record["outcome"][field] = value;
            record["question"][question_field] = other;
            if let Err(error) = validate(&record) {
                prop_assert!(!error.to_string().is_empty());
            }
        }

        #[test]
        fn advice_never_lowers_a_declared_level(declared in 0usize..3, advised in 0usize..3) {
            let levels = ["low", "medium", "high"];
            let mut record = record();
            record["declared"] = json!(levels[declared]);
            record["outcome"]["value"] = json!(levels[advised]);
            let effective = effective(&validate(&record).unwrap());
            let value = effective.value.unwrap();
            let rank = levels.iter().position(|l| *l == value).unwrap();
            prop_assert_eq!(rank, declared.max(advised));
        }
    }
}
