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

use hpp_core::evidence::{self as bundle, Verdict};
use hpp_core::record::{canonical_json, sha256_hex};
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

/// Verifies a reference record file in place, by the reference's rules (nothing is stored):
/// `blocked` with its problems, else `valid` for a passed run and `not-evidence` for another.
pub fn verify_file(root: &Path, bytes: &[u8]) -> (bundle::Status, Vec<String>, Option<String>) {
    let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(bytes) else {
        return (
            bundle::Status::NotEvidence,
            vec![format!("not an {SCHEMA} record")],
            None,
        );
    };
    if record.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
        return (
            bundle::Status::NotEvidence,
            vec![format!("not an {SCHEMA} record")],
            None,
        );
    }
    let verdict = record
        .get("verdict")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut problems = reference_problems(root, &record);
    if !problems.is_empty() {
        return (bundle::Status::Blocked, problems, verdict);
    }
    if verdict.as_deref().and_then(Verdict::from_record) != Some(Verdict::Passed) {
        problems.push(format!(
            "the run did not pass (verdict: {})",
            verdict.as_deref().unwrap_or("?")
        ));
        return (bundle::Status::NotEvidence, problems, verdict);
    }
    (bundle::Status::Valid, problems, verdict)
}

/// The reference's verify, but for the verdict: its self-hash, its consistency, and each
/// artifact's sha256 in the workspace now.
fn reference_problems(root: &Path, record: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    if record.get("record_sha256").and_then(Value::as_str) != Some(&bundle::self_hash(record)) {
        problems.push("the record was edited after it was written".to_owned());
    }
    problems.extend(bundle::consistency_problems(record));
    let (mut changed, mut missing) = (0, 0);
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
        match std::fs::read(root.join(path)) {
            Ok(now) if Some(sha256_hex(&now).as_str()) != file["sha256"].as_str() => changed += 1,
            Ok(_) => {}
            Err(_) => missing += 1,
        }
    }
    if changed > 0 {
        problems.push(format!("{changed} artifact(s) changed since the run"));
    }
    if missing > 0 {
        problems.push(format!("{missing} artifact(s) missing since the run"));
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
