//! The evidence bundle record, `hpp.evidence/v1`: its shape, its self-hash and the consistency
//! rules a verifier re-derives. Pure: no files, no processes, no git.

use serde_json::{Map, Value, json};

use crate::record::{canonical_json, is_sha256_hex, sha256_hex};

/// The schema name.
pub const SCHEMA: &str = "hpp.evidence/v1";

/// Fields left out of the self-hash (they are added after, or live beside the record).
pub const UNHASHED: &[&str] = &["record_sha256", "event", "event_error", "signature"];

/// A validated evidence id: `^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct EvidenceId(String);

/// Why an evidence id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "evidence id must be 1-80 characters of letters, digits, '.', '_' or '-', starting with a letter or digit"
)]
pub struct InvalidEvidenceId;

impl std::str::FromStr for EvidenceId {
    type Err = InvalidEvidenceId;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        let ok = id.len() <= 80
            && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
            && !id.ends_with(".lock")
            && !id.contains("..");
        if ok {
            Ok(Self(id.to_owned()))
        } else {
            Err(InvalidEvidenceId)
        }
    }
}

impl std::fmt::Display for EvidenceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The verdict of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Exit 0 and every artifact pattern has a new or changed file.
    Passed,
    /// A non-zero exit.
    Failed,
    /// Exit 0, but some pattern matched nothing new.
    MissingArtifacts,
    /// Killed at the timeout.
    Timeout,
    /// The program could not be started.
    CouldNotStart,
}

impl Verdict {
    /// Returns the record's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed => "failed",
            Verdict::MissingArtifacts => "missing-artifacts",
            Verdict::Timeout => "timeout",
            Verdict::CouldNotStart => "could-not-start",
        }
    }

    /// Derives the verdict from how the run ended and whether artifacts are missing.
    pub fn derive(
        could_not_start: bool,
        timed_out: bool,
        exit_code: Option<i32>,
        missing: bool,
    ) -> Self {
        match (could_not_start, timed_out, exit_code) {
            (true, _, _) => Verdict::CouldNotStart,
            (_, true, _) => Verdict::Timeout,
            (_, _, Some(0)) if missing => Verdict::MissingArtifacts,
            (_, _, Some(0)) => Verdict::Passed,
            _ => Verdict::Failed,
        }
    }
}

/// Returns the self-hash of a record: sha256 of its canonical JSON without [`UNHASHED`].
pub fn self_hash(record: &Map<String, Value>) -> String {
    let mut hashed = record.clone();
    for key in UNHASHED {
        hashed.remove(*key);
    }
    sha256_hex(&canonical_json(&Value::Object(hashed)))
}

/// Returns the `{bytes, sha256}` digest of a captured stream.
pub fn stream_digest(bytes: &[u8]) -> Value {
    json!({"bytes": bytes.len(), "sha256": sha256_hex(bytes)})
}

/// Checks that a record says one consistent thing: the verdict matches the exit code and the
/// missing list, artifact paths are relative and inside, digests are digests. Returns the
/// problems found (empty when consistent).
pub fn consistency_problems(record: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    let verdict = record
        .get("verdict")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let exit = record.get("exit_code");
    let exit_int = exit.and_then(Value::as_i64);
    let missing: Vec<&str> = record
        .get("missing")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_str).collect());
    let artifacts = record
        .get("artifacts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let ok = match verdict {
        "passed" => exit_int == Some(0) && missing.is_empty(),
        "missing-artifacts" => exit_int == Some(0) && !missing.is_empty(),
        "failed" => exit_int.is_some_and(|c| c != 0),
        "timeout" | "could-not-start" => exit.is_none_or(Value::is_null),
        _ => false,
    };
    if !ok {
        problems.push(format!(
            "verdict {verdict:?} does not match exit code {}",
            exit.map_or("absent".into(), Value::to_string)
        ));
    }
    let mut empty_patterns: Vec<&str> = Vec::new();
    for group in &artifacts {
        let pattern = group
            .get("pattern")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let files = group
            .get("files")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if files.is_empty() {
            empty_patterns.push(pattern);
        }
        for file in &files {
            let path = file.get("path").and_then(Value::as_str).unwrap_or_default();
            if !is_inside(path) {
                problems.push(format!(
                    "artifact path {path:?} is not inside the workspace"
                ));
            }
            if !file
                .get("sha256")
                .and_then(Value::as_str)
                .is_some_and(is_sha256_hex)
            {
                problems.push(format!("artifact {path:?} has no sha256 digest"));
            }
        }
    }
    if matches!(verdict, "passed" | "missing-artifacts") && empty_patterns != missing {
        problems.push("the missing list does not match the patterns that matched no file".into());
    }
    problems
}

/// Tells whether a relative path stays inside its root: not empty, not absolute, no `..`, no
/// drive letter.
pub fn is_inside(path: &str) -> bool {
    let absolute = path.starts_with('/') || path.starts_with('\\');
    let drive = path.len() >= 2 && path.as_bytes()[1] == b':';
    let climbs = path.split(['/', '\\']).any(|part| part == "..");
    !(path.is_empty() || absolute || drive || climbs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(verdict: &str, exit: Value, missing: &[&str], files: usize) -> Map<String, Value> {
        let files: Vec<Value> = (0..files)
            .map(|i| json!({"path": format!("out/{i}"), "size": 1, "sha256": sha256_hex(b"x")}))
            .collect();
        let v = json!({"schema": SCHEMA, "verdict": verdict, "exit_code": exit, "missing": missing,
            "artifacts": [{"pattern": "out/*", "files": files, "unchanged": []}]});
        v.as_object().expect("an object").clone()
    }

    #[test]
    fn consistent_records_have_no_problems() {
        assert!(consistency_problems(&record("passed", json!(0), &[], 1)).is_empty());
        assert!(
            consistency_problems(&record("missing-artifacts", json!(0), &["out/*"], 0)).is_empty()
        );
        assert!(consistency_problems(&record("failed", json!(1), &[], 0)).is_empty());
        assert!(consistency_problems(&record("timeout", Value::Null, &[], 0)).is_empty());
    }

    #[test]
    fn control_inconsistent_records_are_caught() {
        assert!(!consistency_problems(&record("passed", json!(1), &[], 1)).is_empty());
        assert!(
            !consistency_problems(&record("passed", json!(0), &[], 0)).is_empty(),
            "passed with an empty pattern"
        );
        assert!(!consistency_problems(&record("failed", json!(0), &[], 1)).is_empty());
        assert!(!consistency_problems(&record("timeout", json!(0), &[], 0)).is_empty());
        assert!(!consistency_problems(&record("invented", json!(0), &[], 1)).is_empty());
    }

    #[test]
    fn self_hash_ignores_the_unhashed_fields_only() {
        let mut r = record("passed", json!(0), &[], 1);
        let h = self_hash(&r);
        r.insert("event".into(), json!({"type": "evidence_recorded"}));
        r.insert("record_sha256".into(), json!(h));
        assert_eq!(self_hash(&r), h);
        r.insert("verdict".into(), json!("failed"));
        assert_ne!(self_hash(&r), h);
    }

    #[test]
    fn control_ids_and_paths_are_validated() {
        assert!("smoke-page".parse::<EvidenceId>().is_ok());
        for bad in ["", "-x", "a/b", "a b", "x.lock", "a..b", &"a".repeat(81)] {
            assert!(bad.parse::<EvidenceId>().is_err(), "{bad:?}");
        }
        assert!(is_inside("out/report.html"));
        for bad in ["", "/etc/passwd", "../x", "a/../../b", "C:x", "\\\\srv"] {
            assert!(!is_inside(bad), "{bad:?}");
        }
    }

    #[test]
    fn verdicts_follow_the_reference_order() {
        assert_eq!(
            Verdict::derive(true, false, None, false),
            Verdict::CouldNotStart
        );
        assert_eq!(Verdict::derive(false, true, None, false), Verdict::Timeout);
        assert_eq!(
            Verdict::derive(false, false, Some(0), true),
            Verdict::MissingArtifacts
        );
        assert_eq!(
            Verdict::derive(false, false, Some(0), false),
            Verdict::Passed
        );
        assert_eq!(
            Verdict::derive(false, false, Some(3), false),
            Verdict::Failed
        );
    }
}
