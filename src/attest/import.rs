//! `attest import`: the reference harness's attestation files (`hpp attest create --output`,
//! schema `hpp.evidence-attestation/v1`) brought into refs, verified first under the
//! reference's own rules.
//!
//! The reference binds a verdict to a list of file digests (sha256 per file of the workspace,
//! the attestation file itself left out), to HEAD, to the spec's sha256 and to a hash of the
//! origin URL. A record is taken only if all of that holds in the workspace now, as the
//! reference's `attest verify` would judge it (its verdict aside: a `revise` is carried as the
//! checker's verdict). Then the workspace's git snapshot is exactly the bytes it attested, file
//! by file, so the record is kept at `refs/hpp/attestations/<that tree>/imported-<hash>` with
//! its exact bytes as `attestation.json`, the spec and the snapshot tree beside it, and an
//! `imported.json` (`hpp.attestation-import/v1`) saying where it came from and what it cannot
//! carry. `attest verify` and the pre-push gate then judge it from the tree alone: its digests
//! against the tree's files, its embedded signature, its base commit in this repository.
//!
//! The reference leaves exactly one path out of what it digests: the attestation file itself
//! (`--output` when it writes, the file it is given when it verifies); everything else `git
//! ls-files --cached --others --exclude-standard` lists is in, its `.hpp/profile.json` and
//! evidence records too, since its `init` writes no `.gitignore`. So an attestation file inside
//! the worktree is compared with the snapshot minus its own path, and that path is kept in
//! `imported.json` as `left_out`: a later verify leaves it out again only while the tree holds
//! the record's own bytes there, so nothing unattested rides along under that name.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Error as AttestError, VerifyOptions};
use crate::sign::{SignatureReport, SignatureStatus};
use hpp_core::attestation::{self as record, REFERENCE_SCHEMA, TreeFile, Verdict};
use hpp_core::attestation::{RECORD_FILE, SNAPSHOT_ENTRY, SPEC_ENTRY};
use hpp_core::record::{canonical_json, sha256_hex};
use hpp_store::{Content, Store, TreeId, refs};

pub use super::reference::IMPORT_FILE;
use super::reference::{LEFT_OUT, check_embedded, tree_files};

/// The schema of [`IMPORT_FILE`].
pub const IMPORT_SCHEMA: &str = "hpp.attestation-import/v1";

/// What a reference attestation cannot bring: said in every import.
pub const NOT_CARRIED: [&str; 3] = [
    "created_at: the reference records no time, so an imported record is older than any written here (a later revise by the same checker revokes it) and two imported records of one checker cannot be ordered",
    "evidence: the reference binds no evidence bundles",
    "repository identity: its origin-URL hash holds only where it was written; here its base commit names the repository",
];

/// Why a reference attestation was not imported.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Not a reference attestation.
    #[error("{0}: not an {REFERENCE_SCHEMA} attestation")]
    NotARecord(String),
    /// The reference's own rules refuse it in the workspace now.
    #[error("{file}: the reference would call it blocked ({mismatches}): {detail}")]
    Blocked {
        /// The file.
        file: String,
        /// The reference's mismatch names, joined.
        mismatches: String,
        /// The first one, in words.
        detail: String,
    },
    /// Its signature verifies, but not as its checker's: it would not count here.
    #[error(
        "{file}: it would not count here (signer): {detail}; only the checker's own signature counts"
    )]
    Signer {
        /// The file.
        file: String,
        /// Who signed it and why that is not the checker.
        detail: String,
    },
    /// The attestation or the store failed.
    #[error(transparent)]
    Attest(#[from] AttestError),
}

impl From<hpp_store::Error> for Error {
    fn from(e: hpp_store::Error) -> Self {
        Self::Attest(AttestError::Store(e))
    }
}

/// What one import did.
#[derive(Debug, Clone, Serialize)]
pub struct Imported {
    /// The file read.
    pub file: String,
    /// Where it is stored.
    #[serde(rename = "ref")]
    pub attestation_ref: String,
    /// The snapshot tree it is bound to.
    pub tree: TreeId,
    /// The checker's verdict, as recorded.
    pub verdict: String,
    /// Whether it was stored now (`false`: the same record was there already).
    pub created: bool,
    /// How `attest verify` judges it now: empty when it holds (an approval then counts), else
    /// the mismatch names (`verdict` for a revise or a block).
    pub mismatches: Vec<&'static str>,
    /// What the record cannot carry here.
    pub not_carried: Vec<&'static str>,
}

/// Verifies the reference attestation `bytes` (read from `file`, relative to `cwd` or
/// absolute) in the workspace now by the reference's rules, and keeps it bound to the
/// workspace's snapshot tree; see the module.
pub fn import(
    store: &Store,
    cwd: &Path,
    file: &Path,
    bytes: &[u8],
    options: VerifyOptions<'_>,
    imported_at: &str,
) -> Result<Imported, Error> {
    let shown = file.display().to_string();
    let Ok(Value::Object(rec)) = serde_json::from_slice::<Value>(bytes) else {
        return Err(Error::NotARecord(shown));
    };
    if rec.get("schema").and_then(Value::as_str) != Some(REFERENCE_SCHEMA) {
        return Err(Error::NotARecord(shown));
    }
    let root = store.workdir().ok_or(AttestError::Bare)?.to_path_buf();
    let own_path = own_path(&root, cwd, file);
    let tree = store.snapshot()?;
    let mut files = tree_files(store, &tree)?;
    // Left out as the reference left it out; kept (and named) only when the snapshot holds it.
    let left_out = own_path
        .clone()
        .filter(|own| files.iter().any(|f| &f.path == own));
    files.retain(|f| Some(&f.path) != left_out.as_ref());
    let (mismatches, detail) = reference_mismatches(store, &root, &rec, &files, options)?;
    if !mismatches.is_empty() {
        return Err(Error::Blocked {
            file: shown,
            mismatches: mismatches.join(", "),
            detail,
        });
    }
    // The reference does not ask who signed; this repository does (`attest verify`'s signer
    // rule: the checker's own key, and the checker role where a trust policy stands). A record
    // that would not count for its signer is refused here, before anything is written.
    if let Some(detail) = signer_problem(&rec, options) {
        return Err(Error::Signer {
            file: shown,
            detail,
        });
    }
    super::refuse_secret_files(store, &tree)?;
    let spec_path = rec["spec"]["path"].as_str().unwrap_or_default();
    let spec_bytes = std::fs::read(root.join(spec_path))
        .map_err(|_| AttestError::SpecNotFound(spec_path.to_owned()))?;
    let id = format!("imported-{}", &sha256_hex(bytes)[..12]);
    let attestation_ref = refs::attestation(tree.as_str(), &id);
    let verdict = rec["verdict"].as_str().unwrap_or_default().to_owned();
    let created = if store.tip(&attestation_ref)?.is_some() {
        false
    } else {
        let mut provenance = serde_json::json!({
            "schema": IMPORT_SCHEMA,
            "source": own_path.as_deref().unwrap_or(&shown),
            "file_sha256": sha256_hex(bytes),
            "imported_at": imported_at,
            "not_carried": NOT_CARRIED,
        });
        if let Some(path) = &left_out {
            provenance[LEFT_OUT] = Value::String(path.clone());
        }
        store.create_record(
            &attestation_ref,
            &[
                (RECORD_FILE, Content::Bytes(bytes.to_vec())),
                (SPEC_ENTRY, Content::Bytes(spec_bytes)),
                (SNAPSHOT_ENTRY, Content::Tree(tree.clone())),
                (IMPORT_FILE, Content::Bytes(canonical_json(&provenance))),
            ],
            &format!("hpp attestation import: {verdict} ({shown})\n"),
        )?;
        let line = format!(
            "hpp attestation: {verdict} by {} (maker {}, session {}, imported) {attestation_ref}\n",
            rec["actors"]["checker"].as_str().unwrap_or_default(),
            rec["actors"]["maker"].as_str().unwrap_or_default(),
            rec["session"].as_str().unwrap_or_default(),
        );
        super::create::mirror_notes(store, store.head_commit()?, &tree, &line)?;
        true
    };
    let judged = super::verify_tree(store, &tree, Some(&attestation_ref), options)?;
    let mismatches = judged
        .candidates
        .first()
        .map(|c| c.mismatches.clone())
        .unwrap_or_default();
    Ok(Imported {
        file: shown,
        attestation_ref,
        tree,
        verdict,
        created,
        mismatches,
        not_carried: NOT_CARRIED.to_vec(),
    })
}

/// Why the embedded signature of `rec`, when it verifies, is not its checker's as `attest
/// verify` requires (the signer is the maker, or not the checker, or holds no checker role in
/// the trust policy); `None` when it is, or when there is no verified signer to ask about.
fn signer_problem(rec: &Map<String, Value>, options: VerifyOptions<'_>) -> Option<String> {
    let signature = check_embedded(rec, options.allowed);
    let signer = signature
        .is_verified()
        .then_some(signature.signer.as_deref())
        .flatten()?;
    let actor = |key: &str| {
        rec.get("actors")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    record::signer_problem(Some(signer), &actor("maker"), &actor("checker"))
        .or_else(|| super::verify::role_problem(options.policy, Some(signer)))
}

/// A reference attestation file judged in place, as the reference's `attest verify` judges it.
#[derive(Debug, Clone, Serialize)]
pub struct InPlace {
    /// Always [`record::VERIFICATION_SCHEMA`].
    pub schema: &'static str,
    /// `valid` or `blocked`.
    pub status: record::Status,
    /// The reference's mismatch names, sorted (`verdict` for anything but an approval).
    pub mismatches: Vec<&'static str>,
    /// The first mismatch, in words.
    pub detail: Option<String>,
    /// HEAD now.
    pub base_commit: Option<String>,
    /// The embedded signature, checked when signers are known.
    pub signature: SignatureReport,
}

/// Judges the reference attestation `bytes` (read from `file`) in the workspace now by the
/// reference's rules, its own path left out of the snapshot as the reference leaves it; nothing
/// is stored.
pub fn verify_in_place(
    store: &Store,
    cwd: &Path,
    file: &Path,
    bytes: &[u8],
    options: VerifyOptions<'_>,
) -> Result<InPlace, Error> {
    let Ok(Value::Object(rec)) = serde_json::from_slice::<Value>(bytes) else {
        return Err(Error::NotARecord(file.display().to_string()));
    };
    if rec.get("schema").and_then(Value::as_str) != Some(REFERENCE_SCHEMA) {
        return Err(Error::NotARecord(file.display().to_string()));
    }
    let root = store.workdir().ok_or(AttestError::Bare)?.to_path_buf();
    let own = own_path(&root, cwd, file);
    let mut files = tree_files(store, &store.snapshot()?)?;
    files.retain(|f| Some(&f.path) != own.as_ref());
    let (mut mismatches, mut detail) = reference_mismatches(store, &root, &rec, &files, options)?;
    if record::recorded_verdict(&rec) != Some(Verdict::Approved) && !mismatches.contains(&"verdict")
    {
        mismatches.push("verdict");
        mismatches.sort_unstable();
        if detail.is_empty() {
            detail = format!(
                "the recorded verdict is {}, not approved",
                rec["verdict"].as_str().unwrap_or("missing")
            );
        }
    }
    Ok(InPlace {
        schema: record::VERIFICATION_SCHEMA,
        status: if mismatches.is_empty() {
            record::Status::Valid
        } else {
            record::Status::Blocked
        },
        mismatches,
        detail: (!detail.is_empty()).then_some(detail),
        base_commit: store.head_commit()?.map(|c| c.to_string()),
        signature: check_embedded(&rec, options.allowed),
    })
}

/// The attestation file's own path relative to the worktree root, when it is inside it.
fn own_path(root: &Path, cwd: &Path, file: &Path) -> Option<String> {
    let root_abs = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let abs = cwd.join(file).canonicalize().ok()?;
    abs.strip_prefix(&root_abs)
        .ok()
        .map(|r| r.to_string_lossy().replace('\\', "/"))
}

/// The reference's `attest verify` in the workspace now, but for the verdict: the mismatch
/// names, sorted, and the first one in words. The snapshot is compared with git's snapshot
/// tree's files (`files`), which is what the record will be bound to.
fn reference_mismatches(
    store: &Store,
    root: &Path,
    rec: &Map<String, Value>,
    files: &[TreeFile],
    options: VerifyOptions<'_>,
) -> Result<(Vec<&'static str>, String), Error> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut found: Vec<(&'static str, String)> = Vec::new();
    let actors = rec.get("actors");
    if let Err(e) = record::check_actors(
        &text(actors.and_then(|a| a.get("maker"))),
        &text(actors.and_then(|a| a.get("checker"))),
    ) {
        found.push(("actors", e.to_string()));
    }
    if let Err(e) = record::check_session(&text(rec.get("session"))) {
        found.push(("session", e.to_string()));
    }
    if record::recorded_verdict(rec).is_none() {
        found.push((
            "verdict",
            "verdict must be approved, revise, or blocked".into(),
        ));
    }
    let name = root
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let seed = store
        .config_string("remote.origin.url")
        .unwrap_or_else(|| name.clone());
    let here = serde_json::json!({"name": name, "id": sha256_hex(seed.as_bytes())});
    if rec.get("repo") != Some(&here) {
        found.push((
            "repo",
            "it was written in another repository (its name and origin URL hash differ)".into(),
        ));
    }
    let head = store.head_commit()?.map(|c| c.to_string());
    if text(rec.get("base_commit")) != head.unwrap_or_default() {
        found.push((
            "base_commit",
            "HEAD has moved since it was written: the reference binds HEAD".into(),
        ));
    }
    let spec = rec.get("spec");
    let spec_path = text(spec.and_then(|s| s.get("path")));
    let spec_now = (!spec_path.is_empty()
        && !spec_path.split('/').any(|c| c == ".." || c == ".git"))
    .then(|| std::fs::read(root.join(&spec_path)).ok())
    .flatten();
    if spec_now.as_deref().map(sha256_hex) != Some(text(spec.and_then(|s| s.get("sha256")))) {
        found.push((
            "spec_sha256",
            format!("the spec {spec_path} is not the one that was attested"),
        ));
    }
    if let Some(problem) = record::reference_snapshot_problem(rec, files) {
        found.push(("snapshot_digest", problem));
    }
    let signature = check_embedded(rec, options.allowed);
    let signed = rec.contains_key("signature");
    let signature_ok = match signature.status {
        SignatureStatus::Verified => true,
        SignatureStatus::Refused => false,
        SignatureStatus::NotSigned | SignatureStatus::NotVerified => !options.require_signed,
    };
    if !signature_ok {
        found.push((
            "signature",
            signature.detail.clone().unwrap_or_else(|| {
                if signed {
                    "the signature could not be checked".into()
                } else {
                    "signing is required and the record is not signed".into()
                }
            }),
        ));
    }
    if let Some(named) = rec.get("deliberation") {
        let panel = Verdict::of_panel(
            named["status"].as_str().unwrap_or_default(),
            named["value"].as_str(),
        );
        if record::recorded_verdict(rec).is_none_or(|v| v.max(panel) != v) {
            found.push((
                "deliberation",
                "its verdict is more lenient than the House Session it names".into(),
            ));
        }
    }
    found.sort_by_key(|(name, _)| *name);
    let detail = found.first().map(|(_, d)| d.clone()).unwrap_or_default();
    Ok((found.into_iter().map(|(n, _)| n).collect(), detail))
}
