//! Review findings: the hpp.findings/v1 shape and its derived verdict (CONCEPTS.md "review
//! lens").
//!
//! A review lens is a read-only reviewer that looks at a change for one kind of defect
//! (`verification-gap`, `partial-set`, `deletion`, `stale-evidence`, or another slug) and
//! answers in one fixed shape. This module holds that shape and derives the verdict; it never
//! reads the change itself. The rules, each a way a review goes wrong:
//! - a key the contract does not define refuses the whole document;
//! - `inspected` is required and non-empty (nothing found and nothing looked at read the same);
//! - every finding carries evidence;
//! - the same finding (code, file, line) twice is refused;
//! - the verdict is derived (`fail` on any high, `warn` on any finding, `pass` on none), never
//!   declared;
//! - given the change's bytes, the document must name them by sha256.
//!
//! Touches no refs.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::int::Int;
use crate::pyrepr;
use crate::record::sha256_hex;

/// The schema name of a findings document.
pub const SCHEMA: &str = "hpp.findings/v1";

/// The lenses the operator module ships (the contract accepts any slug).
pub const LENSES: [&str; 4] = [
    "verification-gap",
    "partial-set",
    "deletion",
    "stale-evidence",
];

const DOCUMENT_KEYS: [&str; 5] = ["schema", "lens", "subject_sha256", "inspected", "findings"];
const FINDING_KEYS: [&str; 7] = [
    "code", "severity", "file", "line", "claim", "evidence", "fix",
];

static LENS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A[a-z][a-z0-9-]{0,62}\z").expect("the lens pattern compiles"));
static CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A[A-Z][A-Z0-9_]{1,63}\z").expect("the code pattern compiles"));

/// Why a findings document was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The document is not a JSON object.
    #[error("a findings document must be an object")]
    NotAnObject,
    /// The document has keys outside the contract.
    #[error("the document carries keys the contract does not define: {0}")]
    UnknownKeys(String),
    /// The schema is not [`SCHEMA`].
    #[error("schema must be hpp.findings/v1")]
    BadSchema,
    /// The lens is not a lowercase slug.
    #[error("lens must be a lowercase slug such as 'verification-gap', got {0}")]
    BadLens(String),
    /// `subject_sha256` is not a sha256.
    #[error("subject_sha256 must be the 64-character sha256 of the change reviewed")]
    BadSubjectHash,
    /// The change given is not the one the document names.
    #[error("subject_sha256 names another change than the one given; this review is not of it")]
    OtherSubject,
    /// `inspected` is missing, empty or holds an empty string.
    #[error("inspected (what the lens looked at) must be a non-empty list of non-empty strings")]
    NothingInspected,
    /// `findings` is not a list.
    #[error("findings must be a list (empty when nothing was found)")]
    FindingsNotAList,
    /// A finding is malformed.
    #[error("finding {index}{separator}{reason}")]
    BadFinding {
        /// 0-based position of the finding.
        index: usize,
        /// `": "`, or `" "` before "must be an object" and "carries keys".
        separator: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The same (code, file, line) appears twice.
    #[error("the same finding {code} at {place} is reported twice")]
    Duplicate {
        /// The finding's code.
        code: String,
        /// `file:line`, or the file alone for a whole-file finding.
        place: String,
    },
}

/// A finding's severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Makes the verdict `fail`.
    High,
    /// Makes the verdict at least `warn`.
    Medium,
    /// Makes the verdict at least `warn`.
    Low,
}

/// One finding, normalised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// A stable UPPER_SNAKE code.
    pub code: String,
    /// How bad it is.
    pub severity: Severity,
    /// The file it is in.
    pub file: String,
    /// The line, from 1, of any size (Python's `int` has no bound); `null` for the whole file.
    pub line: Option<Int>,
    /// What the lens claims.
    pub claim: String,
    /// What the claim rests on, at least one item.
    pub evidence: Vec<String>,
    /// How to fix it, when the lens says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// Findings per severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Counts {
    /// High findings.
    pub high: usize,
    /// Medium findings.
    pub medium: usize,
    /// Low findings.
    pub low: usize,
}

/// The derived verdict of one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Nothing found.
    Pass,
    /// Something found, nothing high.
    Warn,
    /// A high finding.
    Fail,
}

/// A checked document: normalised, with its counts and derived verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The lens that reviewed.
    pub lens: String,
    /// The sha256 of the change reviewed.
    pub subject_sha256: String,
    /// What the lens looked at.
    pub inspected: Vec<String>,
    /// What it found.
    pub findings: Vec<Finding>,
    /// Findings per severity.
    pub counts: Counts,
    /// `fail`, `warn` or `pass`, derived from the findings.
    pub verdict: Verdict,
}

/// Checks a findings document; with `subject` (the bytes of the change reviewed), the document
/// must name that change by its sha256.
///
/// ```
/// let doc = serde_json::json!({
///     "schema": "hpp.findings/v1", "lens": "deletion", "subject_sha256": "0".repeat(64),
///     "inspected": ["src/"], "findings": [],
/// });
/// let report = hpp_core::findings::check(&doc, None).unwrap();
/// assert_eq!(report.verdict, hpp_core::findings::Verdict::Pass);
/// ```
pub fn check(document: &Value, subject: Option<&[u8]>) -> Result<Report, Error> {
    let object = document.as_object().ok_or(Error::NotAnObject)?;
    let extra = extra_keys(object, &DOCUMENT_KEYS);
    if !extra.is_empty() {
        return Err(Error::UnknownKeys(extra));
    }
    if object.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
        return Err(Error::BadSchema);
    }
    let lens = match object.get("lens") {
        Some(Value::String(s)) if LENS.is_match(s) => s.clone(),
        other => return Err(Error::BadLens(pyrepr::optional(other))),
    };
    let named = match object.get("subject_sha256") {
        Some(Value::String(s)) if crate::record::is_sha256_hex(s) => s.clone(),
        _ => return Err(Error::BadSubjectHash),
    };
    if subject.is_some_and(|bytes| sha256_hex(bytes) != named) {
        return Err(Error::OtherSubject);
    }
    let inspected = texts(object.get("inspected")).ok_or(Error::NothingInspected)?;
    let raw = object
        .get("findings")
        .and_then(Value::as_array)
        .ok_or(Error::FindingsNotAList)?;
    let findings = raw
        .iter()
        .enumerate()
        .map(|(index, item)| finding(item, index))
        .collect::<Result<Vec<_>, _>>()?;
    let mut seen = BTreeSet::new();
    for item in &findings {
        if !seen.insert((item.code.as_str(), file_key(&item.file), item.line.clone())) {
            let place = match &item.line {
                Some(line) => format!("{}:{line}", item.file),
                None => item.file.clone(),
            };
            return Err(Error::Duplicate {
                code: item.code.clone(),
                place,
            });
        }
    }
    let mut counts = Counts::default();
    for item in &findings {
        match item.severity {
            Severity::High => counts.high += 1,
            Severity::Medium => counts.medium += 1,
            Severity::Low => counts.low += 1,
        }
    }
    let verdict = if counts.high > 0 {
        Verdict::Fail
    } else if findings.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Warn
    };
    Ok(Report {
        schema: SCHEMA,
        lens,
        subject_sha256: named,
        inspected,
        findings,
        counts,
        verdict,
    })
}

fn finding(raw: &Value, index: usize) -> Result<Finding, Error> {
    let bad = |separator, reason: String| Error::BadFinding {
        index,
        separator,
        reason,
    };
    let object = raw
        .as_object()
        .ok_or_else(|| bad(" ", "must be an object".into()))?;
    let extra = extra_keys(object, &FINDING_KEYS);
    if !extra.is_empty() {
        return Err(bad(
            " ",
            format!(
                "carries keys the contract does not define: {extra}; the whole document is refused"
            ),
        ));
    }
    let code = match object.get("code") {
        Some(Value::String(s)) if CODE.is_match(s) => s.clone(),
        other => {
            return Err(bad(
                ": ",
                format!(
                    "code must be a stable UPPER_SNAKE identifier, got {}",
                    pyrepr::optional(other)
                ),
            ));
        }
    };
    let severity = match object.get("severity").and_then(Value::as_str) {
        Some("high") => Severity::High,
        Some("medium") => Severity::Medium,
        Some("low") => Severity::Low,
        _ => {
            return Err(bad(
                ": ",
                "severity must be one of high, medium, low".into(),
            ));
        }
    };
    let line = match object.get("line") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            Int::from_json(value)
                .filter(|n| *n >= Int::from(1))
                .ok_or_else(|| {
                    bad(
                        ": ",
                        "line must be a line number from 1, or null for the whole file".into(),
                    )
                })?,
        ),
    };
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| bad(": ", format!("{key} must be non-empty text")))
    };
    let file = text("file")?;
    let claim = text("claim")?;
    let evidence = texts(object.get("evidence")).ok_or_else(|| {
        bad(
            ": ",
            "evidence must be a non-empty list of non-empty strings".into(),
        )
    })?;
    let fix = if object.contains_key("fix") {
        Some(text("fix")?)
    } else {
        None
    };
    Ok(Finding {
        code,
        severity,
        file,
        line,
        claim,
        evidence,
        fix,
    })
}

/// One spelling per file: `checkout.py`, `./checkout.py` and `.\checkout.py` compare equal.
fn file_key(path: &str) -> String {
    let mut key = path.trim().replace('\\', "/");
    while let Some(rest) = key.strip_prefix("./") {
        key = rest.to_owned();
    }
    key
}

fn texts(value: Option<&Value>) -> Option<Vec<String>> {
    let items = value?.as_array().filter(|items| !items.is_empty())?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned)
        })
        .collect()
}

/// The keys outside `allowed`, sorted, as the reference prints a Python list: `['a', 'b']`.
fn extra_keys(object: &Map<String, Value>, allowed: &[&str]) -> String {
    let extra: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|key| !allowed.contains(key))
        .collect();
    if extra.is_empty() {
        String::new()
    } else {
        pyrepr::list(&extra)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document(findings: Value) -> Value {
        json!({
            "schema": SCHEMA,
            "lens": "partial-set",
            "subject_sha256": sha256_hex(b"change"),
            "inspected": ["src/a.rs"],
            "findings": findings,
        })
    }

    fn one(code: &str, severity: &str, file: &str, line: Value) -> Value {
        json!({"code": code, "severity": severity, "file": file, "line": line,
               "claim": "c", "evidence": ["e"]})
    }

    #[test]
    fn the_verdict_is_derived_from_the_findings() {
        let pass = check(&document(json!([])), None).unwrap();
        assert_eq!(pass.verdict, Verdict::Pass);
        let warn = check(&document(json!([one("A_B", "low", "a", json!(1))])), None).unwrap();
        assert_eq!(warn.verdict, Verdict::Warn);
        assert_eq!(warn.counts.low, 1);
        let fail = check(
            &document(json!([
                one("A_B", "low", "a", json!(1)),
                one("C_D", "high", "a", Value::Null)
            ])),
            None,
        )
        .unwrap();
        assert_eq!(fail.verdict, Verdict::Fail);
        assert_eq!(fail.findings[1].line, None);
    }

    #[test]
    fn the_subject_must_be_the_change_reviewed() {
        assert!(check(&document(json!([])), Some(b"change")).is_ok());
        assert_eq!(
            check(&document(json!([])), Some(b"another")).unwrap_err(),
            Error::OtherSubject
        );
    }

    #[test]
    fn control_a_key_outside_the_contract_refuses_the_whole_document() {
        let mut doc = document(json!([]));
        doc["verdict"] = json!("pass");
        doc["notes"] = json!("x");
        assert_eq!(
            check(&doc, None).unwrap_err().to_string(),
            "the document carries keys the contract does not define: ['notes', 'verdict']"
        );
        let mut f = one("A_B", "low", "a", json!(1));
        f["confidence"] = json!(0.9);
        assert_eq!(
            check(&document(json!([f])), None).unwrap_err().to_string(),
            "finding 0 carries keys the contract does not define: ['confidence']; the whole document is refused"
        );
    }

    #[test]
    fn control_the_same_finding_twice_is_refused_whatever_the_path_spelling() {
        let doc = document(json!([
            one("A_B", "low", "src/a.py", json!(3)),
            one("A_B", "high", "./src\\a.py", json!(3)),
        ]));
        assert_eq!(
            check(&doc, None).unwrap_err().to_string(),
            "the same finding A_B at ./src\\a.py:3 is reported twice"
        );
    }

    #[test]
    fn control_malformed_documents_are_refused() {
        let mut empty = document(json!([]));
        empty["inspected"] = json!([]);
        let mut lens = document(json!([]));
        lens["lens"] = json!("Partial Set");
        let cases = [
            (
                json!([]),
                "a findings document must be an object".to_owned(),
            ),
            (empty, Error::NothingInspected.to_string()),
            (
                lens,
                "lens must be a lowercase slug such as 'verification-gap', got 'Partial Set'"
                    .to_owned(),
            ),
            (
                document(json!([one("ab", "low", "a", json!(1))])),
                "finding 0: code must be a stable UPPER_SNAKE identifier, got 'ab'".to_owned(),
            ),
            (
                document(json!([one("AB", "urgent", "a", json!(1))])),
                "finding 0: severity must be one of high, medium, low".to_owned(),
            ),
            (
                document(json!([one("AB", "low", "a", json!(0))])),
                "finding 0: line must be a line number from 1, or null for the whole file"
                    .to_owned(),
            ),
            (
                document(json!([one("AB", "low", " ", json!(1))])),
                "finding 0: file must be non-empty text".to_owned(),
            ),
            (
                document(json!([{"code": "AB", "severity": "low", "file": "a",
                                 "claim": "c", "evidence": []}])),
                "finding 0: evidence must be a non-empty list of non-empty strings".to_owned(),
            ),
            (
                document(json!(["x"])),
                "finding 0 must be an object".to_owned(),
            ),
        ];
        for (doc, message) in cases {
            assert_eq!(check(&doc, None).unwrap_err().to_string(), message);
        }
    }
}
