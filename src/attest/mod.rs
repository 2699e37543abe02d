//! Attestations: a checker's verdict bound to exact bytes, kept under
//! `refs/hpp/attestations/<tree>/<id>`.
//!
//! CONCEPTS.md "attestation" and "maker and checker": the checker (never the maker) records
//! approved, revise or blocked for one workspace snapshot. The record binds the repository
//! identity (a hash of the origin URL, never the URL), HEAD as an observation, the spec (path,
//! sha256 and blob id), the snapshot tree and the evidence it relies on. Keyed by the snapshot
//! tree, an attestation applies to every commit with that tree, so it survives a rebase, amend
//! or squash that does not change content, and any change to a tracked or untracked file makes
//! the current snapshot unattested. The record commit's tree holds `attestation.json`,
//! `attestation.sig` when signed, the `spec` blob and the `snapshot` tree, so all of it travels
//! with a push. A note on `refs/notes/hpp` mirrors it on the commit it was made at.

pub mod import;

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::events;
use crate::evidence::{self, ArtifactCheck};
use crate::sign::Signing;
use crate::sign::{self, AllowedSigners, SignatureReport, SignatureStatus};
use hpp_core::attestation::{self as record, BoundEvidence, Claim, PanelRef, Record, Verdict};
use hpp_core::event_loop::LoopSpec;
use hpp_core::event_loop::gates::Named;
use hpp_core::record::{canonical_json, canonical_record, sha256_hex};
use hpp_core::timestamp;
use hpp_store::refs::{self, LoopId};
use hpp_store::{self as store, CommitId, Content, Store, TreeId};

/// The record blob.
pub const RECORD_FILE: &str = "attestation.json";
/// The signature blob beside it.
pub const SIGNATURE_FILE: &str = "attestation.sig";
/// The spec blob kept in the record's tree.
pub const SPEC_ENTRY: &str = "spec";
/// The snapshot tree kept in the record's tree.
pub const SNAPSHOT_ENTRY: &str = "snapshot";
/// The sealed release-gate session kept in the record's tree, when one raised the verdict.
pub const DELIBERATION_ENTRY: &str = "deliberation.json";

/// A sealed release-gate session given to `attest create --deliberation`: its verdict can only
/// make the recorded verdict stricter.
pub struct Deliberation {
    /// The verdict, already checked (intact, release gate, judged outside the maker's family,
    /// grounded on evidence bundles).
    pub verdict: hpp_core::deliberation::PanelVerdict,
    /// The sealed record, kept in the attestation's tree so it travels with it.
    pub record: Value,
    /// The ref it was read from, when it was read from one.
    pub record_ref: Option<String>,
}

impl Deliberation {
    /// Returns how the attestation record names the session.
    fn panel_ref(&self) -> PanelRef {
        PanelRef {
            record_sha256: self.verdict.record_sha256.clone(),
            status: self.verdict.status.to_string(),
            value: self.verdict.value.clone(),
            judge_family: self.verdict.judge_family.clone(),
            deliberation_ref: self.record_ref.clone(),
        }
    }
}

/// Returns the stricter of a declared verdict and a panel's (approved < revise < blocked); a
/// panel verdict that is not a recommendation of one of the three counts as `revise`. A declared
/// verdict that is not one of the three is never the stricter one.
///
/// ```
/// use git_hpp::attest::stricter;
/// assert_eq!(stricter("approved", "recommendation", Some("blocked")), "blocked");
/// assert_eq!(stricter("revise", "recommendation", Some("approved")), "revise");
/// assert_eq!(stricter("approved", "abstention", None), "revise");
/// ```
pub fn stricter(declared: &str, status: &str, value: Option<&str>) -> String {
    let panel = Verdict::of_panel(status, value);
    match declared.parse::<Verdict>() {
        Ok(declared) => declared.max(panel),
        Err(_) => panel,
    }
    .as_str()
    .to_owned()
}

/// Why an attestation operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad actors, session or verdict.
    #[error(transparent)]
    Input(#[from] record::Error),
    /// The spec file does not exist.
    #[error("spec not found: {0}")]
    SpecNotFound(String),
    /// The spec is outside the worktree.
    #[error("spec must be inside the repository")]
    SpecOutside,
    /// A bare repository has no workspace to attest.
    #[error("attestations need a worktree: this repository is bare")]
    Bare,
    /// The record would be signed by someone other than the checker it names.
    #[error(
        "the signer must be the checker: {signer} cannot sign a verdict recorded for checker {checker}"
    )]
    SignerNotChecker {
        /// The principal asked to sign.
        signer: String,
        /// The checker the record names.
        checker: String,
    },
    /// HEAD has no commit, so the repository has no root commit to be named by.
    #[error(
        "attest create needs a commit: the record names the repository by its root commit; commit the work first"
    )]
    NoCommit,
    /// No attestation by that name.
    #[error("attestation not found: {0}")]
    NotFound(String),
    /// Evidence named by `--evidence` could not be found.
    #[error(transparent)]
    Evidence(#[from] evidence::Error),
    /// A file the record would keep looks like it holds a secret (the shape, never the value).
    #[error(
        "{path} looks like it holds {shape}: the record would keep it, and records are pushed; remove it, ignore it, or commit it on purpose first"
    )]
    SecretFile {
        /// The file, relative to the worktree root.
        path: String,
        /// The shape found.
        shape: &'static str,
    },
    /// An evidence bundle did not run on the tree being attested.
    #[error("{evidence} {why}: an attestation binds evidence of the tree it attests{fix}")]
    StaleEvidence {
        /// The bundle.
        evidence: String,
        /// What tree it ran on, in words.
        why: String,
        /// How to get fresh evidence, or leave the loop's out.
        fix: String,
    },
    /// Signing failed.
    #[error(transparent)]
    Sign(#[from] sign::Error),
    /// The loop could not be read.
    #[error(transparent)]
    Loop(#[from] events::Error),
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// What `attest create` needs.
pub struct CreateRequest<'a> {
    /// The spec file (relative to the working directory or absolute), inside the worktree.
    pub spec: &'a Path,
    /// Who made the work.
    pub maker: &'a str,
    /// Who checked it.
    pub checker: &'a str,
    /// The review session id.
    pub session: &'a str,
    /// approved, revise or blocked.
    pub verdict: &'a str,
    /// Evidence bundles the verdict relies on (ids or refs).
    pub evidence: &'a [String],
    /// The loop whose recorded evidence is bound too, if it exists.
    pub loop_id: Option<(&'a LoopSpec, LoopId)>,
    /// Whether the loop was named (`--loop`): then every bundle it recorded must have run on the
    /// tree being attested; the current branch's loop, taken by default, lends only those that
    /// did.
    pub loop_named: bool,
    /// Sign the record.
    pub signing: Option<Signing>,
}

/// What `attest create` recorded.
#[derive(Debug, Clone, Serialize)]
pub struct Created {
    /// Always `recorded`.
    pub status: &'static str,
    /// The ref it was stored at.
    #[serde(rename = "ref")]
    pub attestation_ref: String,
    /// The record.
    pub record: Record,
    /// The commits that got a note: HEAD and branch tips whose tree is the attested snapshot.
    pub noted: Vec<CommitId>,
}

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

/// Records an attestation of the current workspace snapshot.
pub fn create(store: &Store, cwd: &Path, request: CreateRequest<'_>) -> Result<Created, Error> {
    create_with(store, cwd, request, None)
}

/// Records an attestation, with a sealed release-gate session whose verdict can only make the
/// recorded one stricter ([`stricter`]); the record names the session and its tree keeps it.
pub fn create_with(
    store: &Store,
    cwd: &Path,
    request: CreateRequest<'_>,
    deliberation: Option<Deliberation>,
) -> Result<Created, Error> {
    let claim = Claim::check(
        request.maker,
        request.checker,
        request.session,
        request.verdict,
    )?;
    if let Some(signing) = &request.signing
        && signing.signer.as_str() != claim.checker
    {
        return Err(Error::SignerNotChecker {
            signer: signing.signer.as_str().to_owned(),
            checker: claim.checker,
        });
    }
    let at_hand = gather(store, cwd, &request)?;
    let now = OffsetDateTime::now_utc();
    let rec = Record::assemble(
        claim,
        at_hand.subject,
        timestamp::rfc3339(now),
        request
            .signing
            .as_ref()
            .map(|s| s.signer.as_str().to_owned()),
        deliberation.as_ref().map(Deliberation::panel_ref),
    );
    let bytes = canonical_record(&rec);
    let snapshot = at_hand.snapshot;
    let entries = tree_entries(
        &bytes,
        at_hand.spec_bytes,
        &snapshot,
        deliberation.as_ref(),
        request.signing.as_ref(),
    )?;
    let id = format!("{}-{}", timestamp::compact(now), &sha256_hex(&bytes)[..12]);
    let message = format!("hpp attestation: {} by {}", rec.verdict, rec.actors.checker);
    let attestation_ref = write_record(store, &snapshot, &id, &entries, &message)?;
    let line = format!(
        "hpp attestation: {} by {} (maker {}, session {}) {attestation_ref}\n",
        rec.verdict, rec.actors.checker, rec.actors.maker, rec.session
    );
    let noted = mirror_notes(store, at_hand.head, &snapshot, &line)?;
    Ok(Created {
        status: "recorded",
        attestation_ref,
        record: rec,
        noted,
    })
}

/// What an attestation binds, read from the worktree and the store.
struct AtHand {
    /// The record's view of it.
    subject: record::Subject,
    /// The spec's bytes, kept in the record's tree.
    spec_bytes: Vec<u8>,
    /// The snapshot tree, kept in the record's tree.
    snapshot: TreeId,
    /// HEAD, whose note mirrors the record.
    head: Option<CommitId>,
}

/// Reads what the attestation binds: the spec, the evidence bundles, the snapshot, the
/// repository identity and HEAD, in that order (so the first failure is the one reported).
fn gather(store: &Store, cwd: &Path, request: &CreateRequest<'_>) -> Result<AtHand, Error> {
    let root = store.workdir().ok_or(Error::Bare)?.to_path_buf();
    let (spec_rel, spec_bytes) = read_spec(&root, cwd, request.spec)?;
    if let Some(shape) = hpp_core::secrets::shape_in_file(&spec_bytes) {
        return Err(Error::SecretFile {
            path: spec_rel,
            shape,
        });
    }
    let snapshot = store.snapshot()?;
    refuse_secret_files(store, &snapshot)?;
    let evidence = bind_evidence(
        store,
        &snapshot,
        request.evidence,
        request.loop_id.as_ref(),
        request.loop_named,
    )?;
    let head = store.head_commit()?;
    let roots = match &head {
        Some(head) => store.root_commits(head)?,
        None => return Err(Error::NoCommit),
    };
    let subject = record::Subject {
        repo: record::Repo {
            roots: roots.iter().map(ToString::to_string).collect(),
        },
        base_commit: head.as_ref().map(ToString::to_string),
        spec: record::Spec {
            path: spec_rel,
            sha256: sha256_hex(&spec_bytes),
            blob: store.blob_id(&spec_bytes),
        },
        snapshot: record::Snapshot {
            tree: snapshot.to_string(),
        },
        evidence,
    };
    Ok(AtHand {
        subject,
        spec_bytes,
        snapshot,
        head,
    })
}

/// Refuses a snapshot that adds a file HEAD does not have whose contents have a secret's shape
/// ([`hpp_core::secrets::shape_in_file`]): the snapshot is kept in the record, and records are
/// pushed. Files HEAD already has are the repository's own history and are not re-read.
pub fn refuse_secret_files(store: &Store, snapshot: &TreeId) -> Result<(), Error> {
    let base = match store.head_commit()? {
        Some(head) => store.commit_tree(&head)?,
        None => store.empty_tree(),
    };
    match crate::outbound::secret_file_added(store, &base, snapshot)? {
        Some((path, shape)) => Err(Error::SecretFile { path, shape }),
        None => Ok(()),
    }
}

/// Resolves the spec inside the worktree at `root` and reads it: its path relative to the root
/// (with `/` separators) and its bytes. A spec outside the worktree or inside `.git` is refused.
fn read_spec(root: &Path, cwd: &Path, spec: &Path) -> Result<(String, Vec<u8>), Error> {
    let not_found = || Error::SpecNotFound(spec.display().to_string());
    let spec_abs = cwd.join(spec).canonicalize().map_err(|_| not_found())?;
    let root_abs = root.canonicalize().unwrap_or(root.to_path_buf());
    let spec_rel = spec_abs
        .strip_prefix(&root_abs)
        .map_err(|_| Error::SpecOutside)?;
    if spec_rel
        .components()
        .next()
        .is_some_and(|c| c.as_os_str() == ".git")
    {
        return Err(Error::SpecOutside);
    }
    let spec_rel = spec_rel.to_string_lossy().replace('\\', "/");
    let bytes = std::fs::read(&spec_abs).map_err(|_| not_found())?;
    Ok((spec_rel, bytes))
}

/// Binds the evidence bundles named on the command line, then those the loop recorded (each
/// once), by their self-hash as stored now. Each must have run on `tree`, the snapshot being
/// attested: evidence of another tree says nothing about this one.
fn bind_evidence(
    store: &Store,
    tree: &TreeId,
    named: &[String],
    loop_id: Option<&(&LoopSpec, LoopId)>,
    loop_named: bool,
) -> Result<Vec<BoundEvidence>, Error> {
    // Each bundle with how to fix it when stale; `None` for one that is left out instead.
    let mut bound: Vec<(String, Option<String>)> = Vec::new();
    for name in named {
        let fix = format!(
            ": run `git hpp evidence run --id ID ...` on this tree and name that bundle instead of {name}"
        );
        bound.push((evidence::resolve(store, name)?, Some(fix)));
    }
    if let Some((spec, loop_id)) = loop_id {
        let state = events::read(store, spec, loop_id)?;
        for event in &state.events {
            for r in Named::from_data(&event.data).evidence {
                if r.starts_with(refs::EVIDENCE_PREFIX) && !bound.iter().any(|(b, _)| *b == r) {
                    let fix = format!(
                        ": loop {loop_id} recorded it; record fresh evidence on this tree in a new loop (--loop NAME), or attest without --loop"
                    );
                    bound.push((r, loop_named.then_some(fix)));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (evidence_ref, fix) in bound {
        let bytes = store
            .read_file(&evidence_ref, evidence::RECORD_FILE)?
            .ok_or_else(|| Error::NotFound(evidence_ref.clone()))?;
        // Read as JSON, not as a typed bundle: a bundle without a self-hash is bound as null.
        let record = match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let stale = match hpp_core::evidence::Snapshot::of_record(&record) {
            None => Some("was recorded before bundles carried the tree they ran on".to_owned()),
            Some(Err(problem)) => Some(problem),
            Some(Ok(ran)) if !ran.covers(tree.as_str()) => Some(format!(
                "ran on tree {}, not on {}, the tree being attested",
                ran.tree.get(..12).unwrap_or(&ran.tree),
                tree.as_str().get(..12).unwrap_or(tree.as_str())
            )),
            Some(Ok(_)) => None,
        };
        match (stale, fix) {
            (Some(why), Some(fix)) => {
                return Err(Error::StaleEvidence {
                    evidence: evidence_ref,
                    why,
                    fix,
                });
            }
            (Some(_), None) => continue,
            (None, _) => {}
        }
        let record_sha256 = record
            .get("record_sha256")
            .and_then(Value::as_str)
            .map(str::to_owned);
        out.push(BoundEvidence {
            evidence_ref,
            record_sha256,
        });
    }
    Ok(out)
}

/// The record commit's tree: the record, the spec, the snapshot, the sealed session when one
/// raised the verdict, and the signature over the record's bytes when signing.
fn tree_entries(
    bytes: &[u8],
    spec_bytes: Vec<u8>,
    snapshot: &TreeId,
    deliberation: Option<&Deliberation>,
    signing: Option<&Signing>,
) -> Result<Vec<(&'static str, Content)>, Error> {
    let mut entries = vec![
        (RECORD_FILE, Content::Bytes(bytes.to_vec())),
        (SPEC_ENTRY, Content::Bytes(spec_bytes)),
        (SNAPSHOT_ENTRY, Content::Tree(snapshot.clone())),
    ];
    if let Some(d) = deliberation {
        entries.push((
            DELIBERATION_ENTRY,
            Content::Bytes(canonical_json(&d.record)),
        ));
    }
    if let Some(signing) = signing {
        entries.push((
            SIGNATURE_FILE,
            Content::Bytes(signing.sign(bytes)?.into_bytes()),
        ));
    }
    Ok(entries)
}

/// Writes the record at `refs/hpp/attestations/<tree>/<id>`, or `<id>-<n>` when a record of the
/// same second and content already took the name; returns its ref.
fn write_record(
    store: &Store,
    snapshot: &TreeId,
    id: &str,
    entries: &[(&str, Content)],
    message: &str,
) -> Result<String, Error> {
    let entries: Vec<(String, Content)> = entries
        .iter()
        .map(|(path, content)| ((*path).to_owned(), content.clone()))
        .collect();
    store.create_first_free(
        id,
        |name| refs::attestation(snapshot.as_str(), name),
        |_| Ok::<_, Error>((entries.clone(), message.to_owned())),
    )
}

/// Mirrors the record on every commit at hand that has the snapshot's tree (HEAD and the local
/// branch tips) by appending `line` to its note; returns the commits noted.
fn mirror_notes(
    store: &Store,
    head: Option<CommitId>,
    snapshot: &TreeId,
    line: &str,
) -> Result<Vec<CommitId>, Error> {
    let mut tips: Vec<CommitId> = head.into_iter().collect();
    tips.extend(store.list("refs/heads/")?.into_iter().map(|(_, id)| id));
    tips.sort();
    tips.dedup();
    let mut noted = Vec::new();
    for commit in tips {
        if store.commit_tree(&commit)? != *snapshot {
            continue;
        }
        store.update_note(&commit, |old| {
            let mut text = old
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(line);
            text.into_bytes()
        })?;
        noted.push(commit);
    }
    Ok(noted)
}

/// How strictly to verify.
#[derive(Clone, Copy)]
pub struct VerifyOptions<'a> {
    /// The allowed-signers file, if one is configured.
    pub allowed: Option<&'a AllowedSigners>,
    /// Whether a signature verified against the allowed signers is required (with none
    /// configured, nothing can pass). Without it, an unsigned record may pass, but a signature
    /// that is there is still checked when signers are known, and a forged one fails.
    pub require_signed: bool,
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
    /// Which repository the record names and which this one is, when they differ.
    pub repo_problem: Option<String>,
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
        import::embedded_signature(&rec)
    } else {
        sig
    };
    let signature = if reference {
        import::check_embedded(&rec, options.allowed)
    } else {
        sign::check(
            &bytes,
            sig.as_deref(),
            text(rec.get("signer")).as_deref(),
            options.allowed,
            OffsetDateTime::now_utc(),
        )
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
    let signer_problem = record::signer_problem(verified_principal.as_deref(), &maker, &checker);
    let stored_spec = store.read_file(name, SPEC_ENTRY)?;
    let spec_path = text(rec.get("spec").and_then(|s| s.get("path"))).unwrap_or_default();
    let evidence_problems = evidence_problems(store, &rec)?;
    let roots = record::roots(&rec);
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
        roots_present: roots.iter().all(|root| store.is_root_commit(root)),
        signer_problem: signer_problem.clone(),
        signature_ok,
        evidence_ok: evidence_problems.is_empty(),
        deliberation_ok: deliberation_holds(store, name, &rec)?,
        base_commit_present: text(rec.get("base_commit"))
            .is_some_and(|c| store.commit_id(&c).is_some()),
        reference_snapshot_ok: reference
            && store.entry_id(name, SNAPSHOT_ENTRY)?.as_deref() == Some(tree.as_str())
            && record::reference_snapshot_problem(&rec, &import::tree_files(store, tree)?)
                .is_none(),
    };
    let mismatches = record::mismatches(&rec, &observed);
    let repo_problem = if mismatches.contains(&"repo") {
        Some(repo_problem(store, &rec, &roots, repo_id)?)
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
        evidence_problems,
    };
    Ok((judged, judgement))
}

/// Names both identities when a record is about another repository: the root commits it names
/// and this repository's (of HEAD's history), or for a v2 record the two origin hashes.
fn repo_problem(
    store: &Store,
    rec: &Map<String, Value>,
    roots: &[String],
    repo_id: &str,
) -> Result<String, Error> {
    let short = |ids: &[String]| -> String {
        if ids.is_empty() {
            "nothing".to_owned()
        } else {
            ids.iter()
                .map(|id| id.get(..12).unwrap_or(id))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
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
    let here: Vec<String> = match store.head_commit()? {
        Some(head) => store
            .root_commits(&head)?
            .iter()
            .map(ToString::to_string)
            .collect(),
        None => Vec::new(),
    };
    Ok(format!(
        "the record names the history rooted at {}; this repository's history is rooted at {}",
        short(roots),
        short(&here)
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
    } else if verification.mismatches.contains(&"signer") {
        "the checker named in the record signs it: `git hpp attest create ... --checker NAME --sign-key THEIR-KEY`"
    } else {
        "re-check the work and record a new attestation with `git hpp attest create ... --verdict approved`"
    };
    (Some(why), Some(fix.to_owned()))
}
