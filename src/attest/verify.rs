//! Judging attestations: each record of a tree on its own (signature, signer, snapshot, spec,
//! repository, evidence, deliberation), then the tree's verdict from all of them, and a
//! commit's or a range's verdict from its trees. What `attest verify`, `git hpp verify`, the
//! loop gates and the push gates read.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::{Error, reference};
use crate::evidence::{self, ArtifactCheck};
use crate::sign::{self, AllowedSigners, SignatureReport, SignatureStatus};
use hpp_core::attestation::{
    self as record, DELIBERATION_ENTRY, ENVELOPE_FILE, RECORD_FILE, SIGNATURE_FILE, SNAPSHOT_ENTRY,
    SPEC_ENTRY, Verdict,
};
use hpp_core::intoto;
use hpp_core::record::sha256_hex;
use hpp_core::trust::{Policy, Role};
use hpp_store::{self as store, CommitId, Store, TreeId, refs};

/// Hashes the repository identity of a v2 record (written before v3 named the root commits):
/// the origin URL, normalised so a clone over another protocol, or by another relative path,
/// agrees ([`record::normalize_remote_url`]; a local path is made absolute from the worktree
/// root), else the worktree's directory name. Kept so v2 records verify under their own rule.
pub fn repo_identity(store: &Store) -> (String, String) {
    let name = store.workdir().and_then(|p| p.file_name()).map_or_else(
        || "repository".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    let source = match store.config_string("remote.origin.url") {
        None => name.clone(),
        Some(url) => record::normalize_remote_url(&url).unwrap_or_else(|| {
            let path = url.strip_prefix("file://").unwrap_or(&url);
            let base = store
                .workdir()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| store.common_dir().to_path_buf());
            let resolved = base
                .join(path)
                .canonicalize()
                .unwrap_or_else(|_| base.join(path));
            let text = resolved.to_string_lossy().into_owned();
            text.trim_end_matches('/')
                .trim_end_matches(".git")
                .to_owned()
        }),
    };
    (name, sha256_hex(source.as_bytes()))
}

/// How strictly to verify.
#[derive(Clone, Copy, Default)]
pub struct VerifyOptions<'a> {
    /// The allowed-signers file, if one is configured.
    pub allowed: Option<&'a AllowedSigners>,
    /// Whether a signature verified against the allowed signers is required (with none
    /// configured, nothing can pass). Without it, an unsigned record may pass, but a signature
    /// that is there is still checked when signers are known, and a forged one fails.
    pub require_signed: bool,
    /// The trust policy in force, when there is one: a verdict counts only from a principal it
    /// gives the `checker` role.
    pub policy: Option<&'a Policy>,
    /// Whether the repository's history may not be here yet (a server taking records in
    /// before the branch they are about, a shallow clone's fetch): where the repository is
    /// shallow or has no commit of its own, a root commit a record names that it does not hold
    /// at all is then not a mismatch. One it holds that is not a root still is, and a
    /// repository with its whole history checks every root. `verify` of a commit never sets it.
    pub history_elsewhere: bool,
    /// The commit whose history a record must be about (the roots it starts from): the commit
    /// verified, when one is; HEAD's history otherwise.
    pub history: Option<&'a CommitId>,
}

impl<'a> VerifyOptions<'a> {
    /// The options of the signature rule in force ([`crate::trust::Trust`]).
    pub fn of(trust: &'a crate::trust::Trust) -> Self {
        Self {
            allowed: trust.allowed.as_ref(),
            require_signed: trust.require_signed,
            policy: trust.policy.as_ref().map(|v| &v.policy),
            history_elsewhere: false,
            history: None,
        }
    }

    /// These options, reading records whose history may not be here yet
    /// ([`VerifyOptions::history_elsewhere`]).
    pub fn history_elsewhere(self) -> Self {
        Self {
            history_elsewhere: true,
            ..self
        }
    }
}

/// One attestation, judged.
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    /// Its ref.
    #[serde(rename = "ref")]
    pub attestation_ref: String,
    /// The reference's mismatch names; empty when it holds.
    pub mismatches: Vec<&'static str>,
    /// The recorded verdict.
    pub verdict: Option<String>,
    /// The checker.
    pub checker: Option<String>,
    /// When the record says it was made.
    pub created_at: Option<String>,
    /// The signature check.
    pub signature: SignatureReport,
    /// What was checked of the signature, in words: `signature verified (checker-b)`,
    /// `unsigned: not checked`, ...
    pub checked: String,
    /// Why the signature does not bind the checker, when it does not.
    pub signer_problem: Option<String>,
    /// Which repository the record names and which this one is, when they differ; or, in a
    /// shallow clone that could not fetch the roots the record names, what was not checked.
    pub repo_problem: Option<String>,
    /// Whether the repository identity could not be checked here (a shallow clone that cannot
    /// fetch the roots), as opposed to checked and found to be another repository's.
    pub repo_unchecked: bool,
    /// Evidence bundles that did not verify, with why.
    pub evidence_problems: Vec<String>,
}

/// A ref under a tree's attestations that holds no readable record (not a commit, a record that
/// is not there): named, and left out of the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Broken {
    /// The ref.
    #[serde(rename = "ref")]
    pub attestation_ref: String,
    /// Why it cannot be read.
    pub reason: String,
}

/// The verdict on one tree: valid when an approval holds and its checker has not revoked it.
#[derive(Debug, Clone, Serialize)]
pub struct TreeVerification {
    /// Always [`record::VERIFICATION_SCHEMA`].
    pub schema: &'static str,
    /// `valid` or `blocked`.
    pub status: record::Status,
    /// The tree verified.
    pub tree: TreeId,
    /// The attestation that holds (or, when none does, the one that came closest).
    pub attestation: Option<String>,
    /// What was checked of the attestation that holds.
    pub checked: Option<String>,
    /// The mismatches of the best candidate (`snapshot_digest` when there is none; `revoked`
    /// or `ambiguous` when the checker's latest verdict decides).
    pub mismatches: Vec<&'static str>,
    /// The later record of the same checker that revoked the approval, when one did.
    pub revoked_by: Option<String>,
    /// The records one checker made at the same instant, when that is what blocks the tree.
    pub ambiguous: Vec<String>,
    /// Every attestation of the tree, judged.
    pub candidates: Vec<Judged>,
    /// Refs under the tree's attestations that hold no readable record.
    pub broken: Vec<Broken>,
    /// What the verdict was decided from, one per candidate: lets a caller ask how one
    /// checker stands ([`TreeVerification::verdict_of`]).
    #[serde(skip)]
    pub judgements: Vec<record::Judgement>,
}

impl TreeVerification {
    /// Tells whether the tree has a valid attestation.
    pub fn is_valid(&self) -> bool {
        self.status == record::Status::Valid
    }

    /// How the tree stands by `checker`'s records alone: their latest approval that holds,
    /// unless a later record of theirs revoked it.
    pub fn verdict_of(&self, checker: &str) -> record::TreeVerdict {
        let theirs: Vec<record::Judgement> = self
            .judgements
            .iter()
            .filter(|j| j.checker == checker)
            .cloned()
            .collect();
        record::tree_verdict(&theirs)
    }

    /// The checkers that recorded a judgement of the tree, each once, sorted.
    pub fn checkers(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .judgements
            .iter()
            .map(|j| j.checker.as_str())
            .filter(|c| !c.is_empty())
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// Verifies the attestations of `tree` (all of them, or only `only`).
///
/// Each record is judged on its own; a ref that cannot be read is reported as broken and the
/// verdict is decided by the records beside it ([`record::tree_verdict`]: an approval that
/// holds stands unless a later record of the same checker revokes it).
pub fn verify_tree(
    store: &Store,
    tree: &TreeId,
    only: Option<&str>,
    options: VerifyOptions<'_>,
) -> Result<TreeVerification, Error> {
    let names: Vec<String> = match only {
        Some(name) => vec![name.to_owned()],
        None => store
            .list(&refs::attestations_of(tree.as_str()))?
            .into_iter()
            .map(|(n, _)| n)
            .collect(),
    };
    let repo_id = repo_identity(store).1;
    let mut candidates = Vec::new();
    let mut judgements = Vec::new();
    let mut broken = Vec::new();
    for name in names {
        match judge(store, tree, &name, &repo_id, options) {
            Ok((judged, judgement)) => {
                candidates.push(judged);
                judgements.push(judgement);
            }
            Err(Error::Store(e)) if is_unreadable(&e) => broken.push(Broken {
                attestation_ref: name,
                reason: e.to_string(),
            }),
            Err(e) => return Err(e),
        }
    }
    let closest = || {
        candidates
            .iter()
            .min_by_key(|c| c.mismatches.len())
            .map(|c| (c.attestation_ref.clone(), c.mismatches.clone()))
    };
    let mut verification = TreeVerification {
        schema: record::VERIFICATION_SCHEMA,
        status: record::Status::Blocked,
        tree: tree.clone(),
        attestation: None,
        checked: None,
        mismatches: Vec::new(),
        revoked_by: None,
        ambiguous: Vec::new(),
        candidates: Vec::new(),
        broken,
        judgements: Vec::new(),
    };
    match record::tree_verdict(&judgements) {
        record::TreeVerdict::Approved { reference } => {
            verification.status = record::Status::Valid;
            verification.checked = candidates
                .iter()
                .find(|c| c.attestation_ref == reference)
                .map(|c| c.checked.clone());
            verification.attestation = Some(reference);
        }
        record::TreeVerdict::Revoked {
            approval,
            revoked_by,
        } => {
            verification.attestation = Some(approval);
            verification.revoked_by = Some(revoked_by);
            verification.mismatches = vec!["revoked"];
        }
        record::TreeVerdict::Ambiguous { references, .. } => {
            verification.attestation = references.first().cloned();
            verification.ambiguous = references;
            verification.mismatches = vec!["ambiguous"];
        }
        record::TreeVerdict::NoApproval => match closest() {
            Some((reference, mismatches)) => {
                verification.attestation = Some(reference);
                verification.mismatches = mismatches;
            }
            None => verification.mismatches = vec!["snapshot_digest"],
        },
    }
    verification.candidates = candidates;
    verification.judgements = judgements;
    Ok(verification)
}

/// Tells whether a store error says the record at a ref cannot be read (a ref naming something
/// other than a commit, say), as opposed to the store itself failing.
fn is_unreadable(e: &store::Error) -> bool {
    !matches!(
        e,
        store::Error::GitUnavailable { .. } | store::Error::Flush { .. } | store::Error::Io { .. }
    )
}

/// The signature check in words, as `verify` prints it.
fn checked(signature: &SignatureReport) -> String {
    let signer = signature.signer.as_deref().unwrap_or("no one");
    match signature.status {
        SignatureStatus::Verified => format!("signature verified ({signer})"),
        SignatureStatus::NotSigned => "unsigned: not checked".to_owned(),
        SignatureStatus::NotVerified => {
            format!("signed by {signer}: not checked (no allowed-signers file)")
        }
        SignatureStatus::Refused => format!(
            "signature refused: {}",
            signature.detail.as_deref().unwrap_or("it does not verify")
        ),
    }
}

fn judge(
    store: &Store,
    tree: &TreeId,
    name: &str,
    repo_id: &str,
    options: VerifyOptions<'_>,
) -> Result<(Judged, record::Judgement), Error> {
    // A ref without a record is a failed candidate, never a reason to stop judging the others.
    let bytes = store.read_file(name, RECORD_FILE)?.unwrap_or_default();
    let sig = store.read_file(name, SIGNATURE_FILE)?;
    let rec = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let reference = rec.get("schema").and_then(Value::as_str) == Some(record::REFERENCE_SCHEMA);
    // A reference record carries its signature inside itself, over its other fields.
    let sig = if reference {
        reference::embedded_signature(&rec)
    } else {
        sig
    };
    let signature = if reference {
        reference::check_embedded(&rec, options.allowed)
    } else {
        sign::check(
            &bytes,
            sig.as_deref(),
            text(rec.get("signer")).as_deref(),
            options.allowed,
            OffsetDateTime::now_utc(),
        )
    };
    // The in-toto envelope signed beside the SSHSIG must be the same key's, over this record.
    let signature = match (store.read_file(name, ENVELOPE_FILE)?, &sig) {
        (Some(stored), Some(armored))
            if !reference && signature.status != SignatureStatus::Refused =>
        {
            match sign::dsse::check_beside(&stored, armored, |payload| {
                stated_again(&bytes, name, payload)
            }) {
                Ok(()) => signature,
                Err(why) => SignatureReport::refused(signature.signer.as_deref(), why),
            }
        }
        _ => signature,
    };
    // An unsigned record passes only where signatures are not required; a signature that is
    // there is always checked, and one that does not verify fails whatever is required.
    let signature_ok = match (sig.is_some(), signature.status) {
        (false, _) => !options.require_signed,
        (true, SignatureStatus::Verified) => true,
        (true, SignatureStatus::NotSigned | SignatureStatus::NotVerified) => {
            !options.require_signed
        }
        (true, SignatureStatus::Refused) => false,
    };
    let actors = rec.get("actors");
    let maker = text(actors.and_then(|a| a.get("maker"))).unwrap_or_default();
    let checker = text(actors.and_then(|a| a.get("checker"))).unwrap_or_default();
    let verified_principal = signature
        .is_verified()
        .then(|| signature.signer.clone())
        .flatten();
    let signer_problem = record::signer_problem(verified_principal.as_deref(), &maker, &checker)
        .or_else(|| role_problem(options.policy, verified_principal.as_deref()));
    let stored_spec = store.read_file(name, SPEC_ENTRY)?;
    let spec_path = text(rec.get("spec").and_then(|s| s.get("path"))).unwrap_or_default();
    let evidence_problems = evidence_problems(store, &rec)?;
    let roots = record::roots(&rec);
    // Records read before their history is here (a server taking records before the branch,
    // a shallow clone's fetch): a root not held at all is not checked, and nothing is fetched
    // for it. Only where the history cannot be here: a repository that holds its own roots (a
    // full clone, a server with branches) checks them, so another repository's record fails.
    let history_absent = store.is_shallow() || store.head_commit()?.is_none();
    let roots_here = if options.history_elsewhere
        && history_absent
        && roots
            .iter()
            .all(|root| store.is_root_commit(root) || !store.has_object(root))
    {
        Ok(())
    } else {
        roots_here(store, &roots, options.history)
    };
    let observed = record::Observed {
        tree: tree.to_string(),
        stored_snapshot: store.entry_id(name, SNAPSHOT_ENTRY)?,
        stored_spec_sha256: stored_spec.as_deref().map(sha256_hex),
        stored_spec_blob: store.entry_id(name, SPEC_ENTRY)?,
        tree_spec_blob: if spec_path.is_empty() {
            None
        } else {
            store.tree_entry_id(tree, &spec_path)?
        },
        repo_id: repo_id.to_owned(),
        roots_present: roots_here.is_ok(),
        signer_problem: signer_problem.clone(),
        signature_ok,
        evidence_ok: evidence_problems.is_empty(),
        deliberation_ok: deliberation_holds(store, name, &rec)?,
        base_commit_present: text(rec.get("base_commit"))
            .is_some_and(|c| store.commit_id(&c).is_some()),
        reference_snapshot_ok: reference
            && store.entry_id(name, SNAPSHOT_ENTRY)?.as_deref() == Some(tree.as_str())
            && record::reference_snapshot_problem(
                &rec,
                &reference::attested_files(store, name, tree, &bytes)?,
            )
            .is_none(),
    };
    let mismatches = record::mismatches(&rec, &observed);
    let repo_unchecked = mismatches.contains(&"repo") && matches!(roots_here, Err(Some(_)));
    let repo_problem = if mismatches.contains(&"repo") {
        Some(match roots_here {
            Err(Some(unchecked)) => unchecked,
            _ => repo_problem(store, &rec, &roots, repo_id)?,
        })
    } else {
        None
    };
    let created_at = text(rec.get("created_at"));
    let judgement = record::Judgement {
        reference: name.to_owned(),
        checker: checker.clone(),
        verdict: record::recorded_verdict(&rec),
        at: created_at.as_deref().and_then(hpp_core::timestamp::parse),
        holds: mismatches.iter().all(|m| *m == "verdict"),
        trusted: !mismatches.iter().any(|m| {
            matches!(
                *m,
                "schema" | "signature" | "signer" | "snapshot_digest" | "actors" | "repo"
            )
        }),
    };
    let judged = Judged {
        attestation_ref: name.to_owned(),
        mismatches,
        verdict: text(rec.get("verdict")),
        checker: (!checker.is_empty()).then_some(checker),
        created_at,
        checked: if sig.is_some() {
            checked(&signature)
        } else {
            "unsigned: not checked".to_owned()
        },
        signature,
        signer_problem,
        repo_problem,
        repo_unchecked,
        evidence_problems,
    };
    Ok((judged, judgement))
}

/// The statement of the record `bytes` stored at `name`, built again as `attest create` built
/// it: naming the commit the stored `payload` names, when that is the record's HEAD, and the
/// ref it names (where the record was written: a copy under another tree's prefix is the
/// snapshot rule's to refuse, not the signature's).
fn stated_again(bytes: &[u8], name: &str, payload: &[u8]) -> Option<Vec<u8>> {
    let record: record::Record = serde_json::from_slice(bytes).ok()?;
    let stored: Value = serde_json::from_slice(payload).ok()?;
    let name = stored
        .pointer("/predicate/inputAttestations/0/uri")
        .and_then(Value::as_str)
        .filter(|uri| uri.starts_with(hpp_store::refs::ATTESTATIONS_PREFIX))
        .unwrap_or(name);
    let commit = intoto::subject_digests(&stored, "gitCommit")
        .into_iter()
        .next();
    if commit.is_some() && commit != record.base_commit {
        return None;
    }
    let statement = intoto::attestation_statement(intoto::AttestationFacts {
        record: &record,
        record_bytes: bytes,
        record_ref: name,
        commit: commit.as_deref(),
    });
    Some(intoto::statement_bytes(&statement))
}

/// Tells whether every root commit a v3 record names is a root HEAD's history starts from: a
/// record is about this history, not about a byte-identical tree in another repository whose
/// root commit happens to be reachable here (a branch pushed to the same remote). A shallow
/// clone holds no root of its own history: the history's commits alone are fetched from the
/// remote it came from ([`Store::roots_from_remote`]); when they cannot be, the identity was
/// not checked and `Err(Some(why))` says exactly that (never that the record is about another
/// repository, never a pass).
fn roots_here(
    store: &Store,
    roots: &[String],
    history: Option<&CommitId>,
) -> Result<(), Option<String>> {
    match history_roots(store, history) {
        Ok(head) if roots.iter().all(|r| head.contains(r)) => Ok(()),
        Ok(_) => Err(None),
        Err(why) => Err(Some(why)),
    }
}

/// A commit and the roots its history starts from (or why they are not known).
type HistoryRoots = (Option<CommitId>, Result<Vec<String>, String>);

/// What [`history_roots`] found, for the commit it found it for: a verify judges every record
/// of a tree against the same history, which is walked (or fetched) once.
static HISTORY_ROOTS: std::sync::Mutex<Option<HistoryRoots>> = std::sync::Mutex::new(None);

/// The root commits the history of `commit` (HEAD when `None`) starts from: walked here in a
/// full clone; in a shallow one, listed from its commits fetched alone from the remote. `Err`
/// says why they are not known.
fn history_roots(store: &Store, commit: Option<&CommitId>) -> Result<Vec<String>, String> {
    let head = match commit {
        Some(commit) => Some(commit.clone()),
        None => store.head_commit().map_err(|e| e.to_string())?,
    };
    let mut cached = HISTORY_ROOTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((at, found)) = cached.as_ref()
        && *at == head
    {
        return found.clone();
    }
    let found = match &head {
        None => Err(
            "not checked: HEAD has no commit, so there is no history to hold its roots".to_owned(),
        ),
        Some(head) => match store.history_roots(head) {
            Ok(roots) => Ok(roots.iter().map(ToString::to_string).collect()),
            // A shallow clone: the history's commits alone, from the remote it came from.
            Err(hpp_store::Error::Shallow { .. }) => {
                let fetched = match store.source_remote() {
                    Some(remote) => store
                        .roots_from_remote(&remote, head)
                        .map_err(|e| format!("fetching its commits from {remote} failed ({e})")),
                    None => Err("this repository has no remote to fetch them from".to_owned()),
                };
                match fetched {
                    Ok(roots) => {
                        store.remember_roots(head, &roots);
                        Ok(roots.iter().map(ToString::to_string).collect())
                    }
                    Err(why) => {
                        let boundary = store.shallow_boundary();
                        Err(format!(
                            "not checked: this clone is shallow (its history is cut at {}), the roots HEAD's history starts from are not here, and {why}; verify in a clone with the whole history, or deepen this one with `git fetch --unshallow`",
                            short_ids(
                                &boundary.iter().map(ToString::to_string).collect::<Vec<_>>()
                            ),
                        ))
                    }
                }
            }
            Err(e) => Err(format!("not checked: {e}")),
        },
    };
    *cached = Some((head, found.clone()));
    found
}

/// Ids shortened to 12 digits, joined; `nothing` for none.
fn short_ids(ids: &[String]) -> String {
    if ids.is_empty() {
        "nothing".to_owned()
    } else {
        ids.iter()
            .map(|id| id.get(..12).unwrap_or(id))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Why a verified signer's verdict does not count under the trust policy: they hold no
/// `checker` role there.
pub(super) fn role_problem(policy: Option<&Policy>, signer: Option<&str>) -> Option<String> {
    let (policy, signer) = (policy?, signer?);
    (!policy.has_role(signer, Role::Checker))
        .then(|| format!("{signer} signed it, but the trust policy gives {signer} no checker role"))
}

/// Names both identities when a record is about another repository: the root commits it names
/// and this repository's (of HEAD's history), or for a v2 record the two origin hashes.
fn repo_problem(
    store: &Store,
    rec: &Map<String, Value>,
    roots: &[String],
    repo_id: &str,
) -> Result<String, Error> {
    if rec.get("schema").and_then(Value::as_str) == Some(record::SCHEMA_V2) {
        let named = rec
            .get("repo")
            .and_then(|r| r.get("id"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Ok(format!(
            "the record names repository {} (a v2 record: the hash of an origin URL); this repository is {}",
            named.get(..12).unwrap_or(named),
            repo_id.get(..12).unwrap_or(repo_id)
        ));
    }
    let here = match store.head_commit()? {
        Some(head) => match store.history_roots(&head) {
            Ok(found) => short_ids(&found.iter().map(ToString::to_string).collect::<Vec<_>>()),
            // The boundary of a shallow clone is not its root: say where the history is cut.
            Err(store::Error::Shallow { boundary, .. }) => {
                format!(
                    "cut at {} (a shallow clone)",
                    short_ids(&[boundary.to_string()])
                )
            }
            Err(e) => return Err(e.into()),
        },
        None => short_ids(&[]),
    };
    Ok(format!(
        "the record names the history rooted at {}; this repository's history is rooted at {here}",
        short_ids(roots),
    ))
}

/// Re-verifies every evidence bundle a record binds; each that does not hold, in a sentence.
/// The attestation binds each bundle by its self-hash, so its own signature covers them.
fn evidence_problems(store: &Store, rec: &Map<String, Value>) -> Result<Vec<String>, Error> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let attested = rec
        .get("snapshot")
        .and_then(|s| s.get("tree"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut problems = Vec::new();
    for item in rec
        .get("evidence")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let evidence_ref = text(item.get("ref")).unwrap_or_default();
        let expected = text(item.get("record_sha256"));
        match evidence::verify(store, &evidence_ref, None, ArtifactCheck::RecordOnly) {
            // A bundle from before bundles carried their tree is judged on the rest alone.
            Ok(v)
                if v.status == hpp_core::evidence::Status::Valid
                    && v.record_sha256 == expected
                    && v.snapshot.as_ref().is_some_and(|s| !s.covers(attested)) =>
            {
                problems.push(format!(
                    "{evidence_ref} ran on another tree than the one attested"
                ));
            }
            Ok(v)
                if v.status == hpp_core::evidence::Status::Valid && v.record_sha256 == expected => {
            }
            Ok(v) if v.status == hpp_core::evidence::Status::Valid => {
                problems.push(format!(
                    "{evidence_ref} is not the record that was attested"
                ));
            }
            Ok(v) => problems.push(format!("{evidence_ref}: {}", v.problems.join("; "))),
            Err(evidence::Error::NotFound(_)) => {
                problems.push(format!("{evidence_ref} is missing"));
            }
            Err(evidence::Error::Store(e)) if is_unreadable(&e) => {
                problems.push(format!("{evidence_ref} cannot be read: {e}"));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(problems)
}

/// Tells whether the House Session an attestation names is kept in its tree, still verifies,
/// is the one named, and leaves the recorded verdict at least as strict as its own; true when
/// the attestation names none.
fn deliberation_holds(store: &Store, name: &str, rec: &Map<String, Value>) -> Result<bool, Error> {
    let Some(named) = rec.get("deliberation") else {
        return Ok(true);
    };
    let Some(bytes) = store.read_file(name, DELIBERATION_ENTRY)? else {
        // A reference record names its session by hash only: what can still be checked is that
        // its verdict is no more lenient than the one it names.
        let reference = rec.get("schema").and_then(Value::as_str) == Some(record::REFERENCE_SCHEMA);
        let named = Verdict::of_panel(
            named["status"].as_str().unwrap_or_default(),
            named["value"].as_str(),
        );
        return Ok(reference
            && record::recorded_verdict(rec)
                .is_some_and(|recorded| recorded.max(named) == recorded));
    };
    let Ok(sealed) = serde_json::from_slice::<Value>(&bytes) else {
        return Ok(false);
    };
    if !hpp_core::deliberation::verify_record(&sealed).is_intact()
        || sealed["record_sha256"] != named["record_sha256"]
    {
        return Ok(false);
    }
    // A recorded verdict that is not one of the three is never as strict as the panel's.
    let Some(recorded) = record::recorded_verdict(rec) else {
        return Ok(false);
    };
    let verdict = &sealed["verdict"];
    let panel = Verdict::of_panel(
        verdict["status"].as_str().unwrap_or_default(),
        verdict["value"].as_str(),
    );
    Ok(recorded.max(panel) == recorded)
}

/// Finds the tree an attestation ref is keyed by: `refs/hpp/attestations/<tree>/<id>` or
/// `<tree>/<id>`.
pub fn resolve(store: &Store, name: &str) -> Result<(TreeId, String), Error> {
    let full = if name.starts_with("refs/") {
        name.to_owned()
    } else {
        format!("{}{name}", refs::ATTESTATIONS_PREFIX)
    };
    let tree = full
        .strip_prefix(refs::ATTESTATIONS_PREFIX)
        .and_then(|rest| rest.split('/').next())
        .and_then(TreeId::parse)
        .ok_or_else(|| Error::NotFound(name.to_owned()))?;
    store
        .tip(&full)?
        .ok_or_else(|| Error::NotFound(name.to_owned()))?;
    Ok((tree, full))
}

/// The verdict on one commit: its tree's attestation check.
#[derive(Debug, Clone, Serialize)]
pub struct CommitVerdict {
    /// The commit.
    pub commit: CommitId,
    /// Whether it passes.
    pub ok: bool,
    /// What is missing, in a sentence, when it does not.
    pub missing: Option<String>,
    /// The command that would fix it, when it does not.
    pub fix: Option<String>,
    /// The tree's verification.
    pub verification: TreeVerification,
}

impl CommitVerdict {
    /// The checker of the attestation the verdict rests on (empty when none is named).
    pub fn approved_by(&self) -> String {
        let attestation = self.verification.attestation.as_deref().unwrap_or_default();
        self.verification
            .candidates
            .iter()
            .find(|c| c.attestation_ref == attestation)
            .and_then(|c| c.checker.clone())
            .unwrap_or_default()
    }
}

/// Verifies each commit of a revision or range: is there an approved attestation of its tree,
/// signed by an allowed signer when signing is required, whose evidence still verifies? Looks
/// each tree's attestations up by ref prefix, never scanning all of them.
pub fn verify_commits(
    store: &Store,
    spec: &str,
    options: VerifyOptions<'_>,
) -> Result<Vec<CommitVerdict>, Error> {
    let mut out = Vec::new();
    for commit in store.commits_in(spec)? {
        let tree = store.commit_tree(&commit)?;
        let options = VerifyOptions {
            history: Some(&commit),
            ..options
        };
        let verification = verify_tree(store, &tree, None, options)?;
        let (missing, mut fix) = explain(&verification);
        if verification.candidates.is_empty() && !store.has_refs(refs::PREFIX)? {
            // Nothing under refs/hpp at all: a fresh clone, whose records were never fetched,
            // more likely than work nobody attested.
            fix = Some(
                "this repository has no records under refs/hpp: if they are on a remote, bring them with `git hpp fetch` (or `git hpp remote setup --apply`, so plain git fetch does), then verify again; else create one: git hpp attest create --spec SPEC --maker MAKER --checker CHECKER --session ID --verdict approved".to_owned(),
            );
        }
        out.push(CommitVerdict {
            ok: verification.is_valid(),
            commit,
            missing,
            fix,
            verification,
        });
    }
    Ok(out)
}

/// What is missing for a tree that does not verify, and the command that would fix it.
fn explain(verification: &TreeVerification) -> (Option<String>, Option<String>) {
    let tree = &verification.tree;
    if verification.is_valid() {
        return (None, None);
    }
    if let Some(revoker) = &verification.revoked_by {
        let by = verification
            .candidates
            .iter()
            .find(|c| &c.attestation_ref == revoker);
        let verdict = by.and_then(|c| c.verdict.clone()).unwrap_or_default();
        let checker = by.and_then(|c| c.checker.clone()).unwrap_or_default();
        return (
            Some(format!(
                "its approval {} was revoked by {revoker} ({verdict} by {checker})",
                verification.attestation.as_deref().unwrap_or_default()
            )),
            Some(format!(
                "re-check the work; when it holds, {checker} records a new approval with `git hpp attest create ... --verdict approved`"
            )),
        );
    }
    if !verification.ambiguous.is_empty() {
        return (
            Some(format!(
                "one checker recorded verdicts at the same instant, so which stands is ambiguous: {}",
                verification.ambiguous.join(", ")
            )),
            Some(
                "the checker records the verdict that stands again with `git hpp attest create`"
                    .to_owned(),
            ),
        );
    }
    if verification.candidates.is_empty() {
        let mut why = format!("no attestation for its tree {tree}");
        if !verification.broken.is_empty() {
            why.push_str(&format!(
                " ({} broken ref(s) under it: {})",
                verification.broken.len(),
                verification.broken[0].reason
            ));
        }
        return (
            Some(why),
            Some("check out this commit, then: git hpp attest create --spec SPEC --maker MAKER --checker CHECKER --session ID --verdict approved [--sign-key KEY]".to_owned()),
        );
    }
    let best = verification
        .candidates
        .iter()
        .min_by_key(|c| c.mismatches.len())
        .expect("not empty");
    let mut why = format!(
        "its attestation does not hold ({})",
        verification.mismatches.join(", ")
    );
    if verification.mismatches.contains(&"signature") {
        why.push_str(&format!(
            ": {}",
            best.signature.detail.clone().unwrap_or_else(|| {
                "signing is required but no allowed-signers file is configured".into()
            })
        ));
    }
    if let Some(problem) = &best.signer_problem {
        why.push_str(&format!(": {problem}"));
    }
    if let Some(problem) = &best.repo_problem {
        why.push_str(&format!(": {problem}"));
    }
    if let Some(problem) = best.evidence_problems.first() {
        why.push_str(&format!(": {problem}"));
    }
    let fix = if verification.mismatches.contains(&"signature") {
        "configure the signers with `git config hpp.allowedSignersFile FILE`, or re-attest with --sign-key KEY"
    } else if best.repo_unchecked && verification.mismatches == ["repo"] {
        "deepen this clone (`git fetch --unshallow`), or fetch from a remote that serves commits by id, then verify again"
    } else if verification.mismatches.contains(&"signer") {
        "the checker named in the record signs it: `git hpp attest create ... --checker NAME --sign-key THEIR-KEY`"
    } else {
        "re-check the work and record a new attestation with `git hpp attest create ... --verdict approved`"
    };
    (Some(why), Some(fix.to_owned()))
}
