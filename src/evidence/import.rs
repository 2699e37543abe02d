//! `evidence import`: the reference harness's evidence records (`.hpp/evidence/*.json`) brought
//! into refs, verified first under the reference's own rules.
//!
//! A record is taken only if it is what the reference would call intact: its self-hash holds
//! (`record_sha256` over its canonical JSON), its verdict agrees with its exit code and missing
//! list, and every artifact it names still has the sha256 it recorded in the workspace. It is
//! stored at `refs/hpp/evidence/<its file name>` with its exact bytes as `record.json` (its
//! `record_path` and hash kept: the provenance) and an `imported.json` (`hpp.evidence-import/v1`)
//! saying where it came from, its status then, and what it cannot carry: the reference records
//! no workspace tree, so the fresh-evidence gate, which counts only bundles that name the tree
//! they ran on, does not count an imported one.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::sign::{self, AllowedSigners, SignatureReport};
use hpp_core::evidence::{self as bundle, Verdict};
use hpp_core::record::{self, canonical_json, sha256_hex};
use hpp_store::{Content, Store, refs};

use hpp_core::evidence::{RECORD_FILE, SCHEMA};

/// The blob beside an imported record that says where it came from.
pub const IMPORT_FILE: &str = "imported.json";

/// The schema of [`IMPORT_FILE`].
pub const IMPORT_SCHEMA: &str = "hpp.evidence-import/v1";

/// What the reference's records cannot bring: said in every import.
pub const NOT_CARRIED: [&str; 2] = [
    "snapshot: the reference records no workspace tree, so the fresh-evidence gate does not count this bundle",
    "artifact blob ids: the reference records sha256 and size only",
];

/// Why a record was not imported.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Not an `hpp.evidence/v1` record.
    #[error("{0}: not an {SCHEMA} record")]
    NotARecord(String),
    /// The reference's own rules refuse it.
    #[error("{file}: the reference would call it blocked: {problems}")]
    Blocked {
        /// The file.
        file: String,
        /// Why, joined.
        problems: String,
    },
    /// A different record is already stored under its name.
    #[error("{name} already holds another record; nothing was overwritten")]
    Exists {
        /// The ref.
        name: String,
    },
    /// The name it would be stored under is not a ref name.
    #[error("{file}: cannot be stored under {name}: {why}")]
    BadName {
        /// The file.
        file: String,
        /// The name.
        name: String,
        /// Why.
        why: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] hpp_store::Error),
}

/// What one import did.
#[derive(Debug, Clone, Serialize)]
pub struct Imported {
    /// The file read.
    pub file: String,
    /// Where it is stored.
    #[serde(rename = "ref")]
    pub record_ref: String,
    /// `valid` (a passed run) or `not-evidence` (an intact record of a run that did not pass).
    pub status: &'static str,
    /// Whether it was stored now (`false`: the same record was there already).
    pub created: bool,
    /// What the record cannot carry here.
    pub not_carried: Vec<&'static str>,
}

/// Verifies the reference record `bytes` (read from `shown`) against the workspace at `root`,
/// and stores it; see the module.
pub fn import(
    store: &Store,
    root: &Path,
    bytes: &[u8],
    shown: &str,
    imported_at: &str,
) -> Result<Imported, Error> {
    let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(bytes) else {
        return Err(Error::NotARecord(shown.to_owned()));
    };
    if record.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
        return Err(Error::NotARecord(shown.to_owned()));
    }
    let problems = reference_problems(root, &record);
    if !problems.is_empty() {
        return Err(Error::Blocked {
            file: shown.to_owned(),
            problems: problems.join("; "),
        });
    }
    let name = stored_name(&record, shown);
    let record_ref = refs::evidence(&name);
    let passed = record
        .get("verdict")
        .and_then(Value::as_str)
        .and_then(Verdict::from_record)
        == Some(Verdict::Passed);
    let status = if passed { "valid" } else { "not-evidence" };
    let provenance = serde_json::json!({
        "schema": IMPORT_SCHEMA,
        "source": record.get("record_path").and_then(Value::as_str).unwrap_or(shown),
        "file_sha256": sha256_hex(bytes),
        "imported_at": imported_at,
        "status": status,
        "not_carried": NOT_CARRIED,
    });
    if let Some(existing) = store.read_file(&record_ref, RECORD_FILE)? {
        if existing == bytes {
            return Ok(Imported {
                file: shown.to_owned(),
                record_ref,
                status,
                created: false,
                not_carried: NOT_CARRIED.to_vec(),
            });
        }
        return Err(Error::Exists { name: record_ref });
    }
    let message = format!("hpp evidence import {name}\n");
    match store.create_record(
        &record_ref,
        &[
            (RECORD_FILE, Content::Bytes(bytes.to_vec())),
            (IMPORT_FILE, Content::Bytes(canonical_json(&provenance))),
        ],
        &message,
    ) {
        Ok(_) => {}
        Err(hpp_store::Error::Moved { .. }) => return Err(Error::Exists { name: record_ref }),
        Err(hpp_store::Error::InvalidRefName { reason, .. }) => {
            return Err(Error::BadName {
                file: shown.to_owned(),
                name: record_ref,
                why: reason,
            });
        }
        Err(e) => return Err(e.into()),
    }
    Ok(Imported {
        file: shown.to_owned(),
        record_ref,
        status,
        created: true,
        not_carried: NOT_CARRIED.to_vec(),
    })
}

/// A reference record file judged in place: the report `hpp evidence verify` prints, key for
/// key, with the reference's meanings.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// `valid`, `not-evidence` or `blocked`.
    pub status: bundle::Status,
    /// The record's id, as recorded.
    pub id: Option<Value>,
    /// The record's verdict, as recorded.
    pub verdict: Option<Value>,
    /// The commit the record says the run saw (HEAD then), as recorded.
    pub base_commit: Option<Value>,
    /// Why it is not valid, in words; empty when valid.
    pub problems: Vec<String>,
    /// The artifacts whose bytes changed since the run (empty when the record itself failed
    /// first: edited, or inconsistent).
    pub changed: Vec<String>,
    /// The artifacts no longer there (likewise).
    pub missing: Vec<String>,
    /// The embedded signature: `not-signed` or `not-verified` without signers, else checked.
    pub signature: SignatureReport,
}

/// Verifies a reference record file in place, by the reference's rules (nothing is stored):
/// its signature reported (and, with `allowed` signers, required), then its self-hash, its
/// consistency, each artifact's sha256 in the workspace now, each step stopping at the first
/// that fails, as the reference's does.
pub fn verify_file(root: &Path, bytes: &[u8], allowed: Option<&AllowedSigners>) -> FileReport {
    let record = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(record))
            if record.get("schema").and_then(Value::as_str) == Some(SCHEMA) =>
        {
            record
        }
        _ => Map::new(),
    };
    let signature = sign::check_embedded(
        &record::hashed_bytes(&record),
        record.get("signature"),
        allowed,
    );
    let report = |status, problems: Vec<String>, changed, missing| FileReport {
        status,
        id: record.get("id").cloned(),
        verdict: record.get("verdict").cloned(),
        base_commit: record.get("base_commit").cloned(),
        problems,
        changed,
        missing,
        signature: signature.clone(),
    };
    if record.is_empty() {
        return report(
            bundle::Status::NotEvidence,
            vec![format!("not an {SCHEMA} record")],
            Vec::new(),
            Vec::new(),
        );
    }
    let problems = record_problems(&record);
    if !problems.is_empty() {
        return report(bundle::Status::Blocked, problems, Vec::new(), Vec::new());
    }
    let (changed, missing) = artifacts_now(root, &record);
    let mut problems = Vec::new();
    if allowed.is_some() && !signature.is_verified() {
        problems.push(format!(
            "signature: {}",
            signature.detail.as_deref().unwrap_or("not verified")
        ));
    }
    problems.extend(artifact_problems(&changed, &missing));
    if !problems.is_empty() {
        return report(bundle::Status::Blocked, problems, changed, missing);
    }
    let verdict = record.get("verdict").and_then(Value::as_str);
    if verdict.and_then(Verdict::from_record) != Some(Verdict::Passed) {
        let problem = format!("the run did not pass (verdict: {})", verdict.unwrap_or("?"));
        return report(
            bundle::Status::NotEvidence,
            vec![problem],
            Vec::new(),
            Vec::new(),
        );
    }
    report(bundle::Status::Valid, Vec::new(), Vec::new(), Vec::new())
}

/// The reference's verify, but for the verdict and the signature: its self-hash, then its
/// consistency, then each artifact's sha256 in the workspace now.
fn reference_problems(root: &Path, record: &Map<String, Value>) -> Vec<String> {
    let problems = record_problems(record);
    if !problems.is_empty() {
        return problems;
    }
    let (changed, missing) = artifacts_now(root, record);
    artifact_problems(&changed, &missing)
}

/// What is wrong with the record itself: edited after it was written (checked first, and alone,
/// as the reference reads nothing else of an edited record), else its inconsistencies.
fn record_problems(record: &Map<String, Value>) -> Vec<String> {
    if record.get("record_sha256").and_then(Value::as_str) != Some(&bundle::self_hash(record)) {
        return vec!["the record was edited after it was written".to_owned()];
    }
    bundle::consistency_problems(record)
}

/// The artifacts the record names whose bytes changed, and those no longer there (a path that
/// resolves outside the workspace, through a symlink, counts as not there), in record order.
fn artifacts_now(root: &Path, record: &Map<String, Value>) -> (Vec<String>, Vec<String>) {
    let (mut changed, mut missing) = (Vec::new(), Vec::new());
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    for file in record
        .get("artifacts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|group| group["files"].as_array().cloned().unwrap_or_default())
    {
        let path = file["path"].as_str().unwrap_or_default();
        if !bundle::is_inside(path) {
            continue;
        }
        let real = root.join(path).canonicalize().ok();
        let inside = real
            .as_ref()
            .filter(|r| r.starts_with(&real_root) && r.is_file());
        match inside.map(std::fs::read) {
            Some(Ok(now)) if Some(sha256_hex(&now).as_str()) != file["sha256"].as_str() => {
                changed.push(path.to_owned());
            }
            Some(Ok(_)) => {}
            _ => missing.push(path.to_owned()),
        }
    }
    (changed, missing)
}

/// The reference's words for changed and missing artifacts.
fn artifact_problems(changed: &[String], missing: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    if !changed.is_empty() {
        problems.push(format!(
            "{} artifact(s) changed since the run",
            changed.len()
        ));
    }
    if !missing.is_empty() {
        problems.push(format!(
            "{} artifact(s) missing since the run",
            missing.len()
        ));
    }
    problems
}

/// The name an imported record is stored under: its file's name (`smoke-20261203T104513Z`),
/// as the reference named it.
fn stored_name(record: &Map<String, Value>, shown: &str) -> String {
    let path = record
        .get("record_path")
        .and_then(Value::as_str)
        .unwrap_or(shown);
    let file = Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.strip_suffix(".json").unwrap_or(&file).to_owned()
}
