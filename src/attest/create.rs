//! `attest create`: a checker's verdict on the workspace snapshot, recorded once.
//!
//! The record binds the repository identity (its root commits), HEAD as an observation, the
//! spec (path, sha256 and blob id), the snapshot tree and the evidence it relies on; the record
//! commit's tree keeps the spec blob and the snapshot tree, so all of it travels with a push. A
//! note on `refs/notes/hpp` mirrors it on the commits that have the attested tree.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::Error;
use crate::events;
use crate::evidence;
use crate::sign::Signing;
use hpp_core::attestation::{
    self as record, BoundEvidence, Claim, DELIBERATION_ENTRY, ENVELOPE_FILE, PanelRef, RECORD_FILE,
    Record, SIGNATURE_FILE, SNAPSHOT_ENTRY, SPEC_ENTRY, Verdict,
};
use hpp_core::event_loop::LoopSpec;
use hpp_core::event_loop::gates::Named;
use hpp_core::intoto;
use hpp_core::record::{canonical_json, canonical_record, sha256_hex};
use hpp_core::timestamp;
use hpp_store::refs::{self, LoopId};
use hpp_store::{CommitId, Content, Store, TreeId};

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
    /// Tracked files whose snapshot holds a secret-shaped line HEAD's tree does not: recorded,
    /// and `git hpp push` will refuse to publish the record ([`crate::outbound`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets_kept: Vec<SecretKept>,
}

/// A file of the snapshot that holds a secret HEAD does not: its path and the shape, never the
/// value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretKept {
    /// The file, relative to the worktree root.
    pub path: String,
    /// The shape found.
    pub shape: &'static str,
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
    // The commit the in-toto statement names beside the tree: HEAD, when its tree is the one
    // attested (a workspace with changes has no commit of its tree yet).
    let commit = match &at_hand.head {
        Some(head) if store.commit_tree(head)? == snapshot => Some(head.to_string()),
        _ => None,
    };
    let envelope = |record_ref: &str| -> Result<Option<(&'static str, Content)>, Error> {
        let Some(signing) = request.signing.as_ref() else {
            return Ok(None);
        };
        let statement = intoto::attestation_statement(intoto::AttestationFacts {
            record: &rec,
            record_bytes: &bytes,
            record_ref,
            commit: commit.as_deref(),
        });
        Ok(signing
            .envelope(&intoto::statement_bytes(&statement))?
            .map(|e| (ENVELOPE_FILE, Content::Bytes(e.to_line().into_bytes()))))
    };
    let attestation_ref = write_record(store, &snapshot, &id, &entries, &message, envelope)?;
    let line = format!(
        "hpp attestation: {} by {} (maker {}, session {}) {attestation_ref}\n",
        rec.verdict, rec.actors.checker, rec.actors.maker, rec.session
    );
    let noted = mirror_notes(store, at_hand.head, &snapshot, &line)?;
    Ok(Created {
        status: "recorded",
        secrets_kept: at_hand.secrets_kept,
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
    /// Tracked files holding a secret HEAD does not.
    secrets_kept: Vec<SecretKept>,
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
    let secrets_kept = secrets_kept(store, &snapshot)?;
    let evidence = bind_evidence(
        store,
        &snapshot,
        request.evidence,
        request.loop_id.as_ref(),
        request.loop_named,
    )?;
    let head = store.head_commit()?;
    let roots = match &head {
        Some(head) => store.history_roots(head)?,
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
        secrets_kept,
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

/// Finds the files of `snapshot` (tracked ones: [`refuse_secret_files`] refused any it adds)
/// that hold a secret-shaped line HEAD's tree does not ([`crate::outbound::secrets_brought`]).
/// They are recorded with a warning, not refused: the workspace is what was checked, and the
/// push, which publishes it, refuses instead.
fn secrets_kept(store: &Store, snapshot: &TreeId) -> Result<Vec<SecretKept>, Error> {
    let base = match store.head_commit()? {
        Some(head) => store.commit_tree(&head)?,
        None => store.empty_tree(),
    };
    Ok(crate::outbound::secrets_brought(store, &base, snapshot)?
        .into_iter()
        .map(|(path, shape)| SecretKept { path, shape })
        .collect())
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
            .read_file(&evidence_ref, hpp_core::evidence::RECORD_FILE)?
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
/// same second and content already took the name, with the in-toto envelope `envelope` makes
/// for that ref (it names the ref); returns its ref.
fn write_record(
    store: &Store,
    snapshot: &TreeId,
    id: &str,
    entries: &[(&str, Content)],
    message: &str,
    envelope: impl Fn(&str) -> Result<Option<(&'static str, Content)>, Error>,
) -> Result<String, Error> {
    let entries: Vec<(String, Content)> = entries
        .iter()
        .map(|(path, content)| ((*path).to_owned(), content.clone()))
        .collect();
    store.create_first_free(
        id,
        |name| refs::attestation(snapshot.as_str(), name),
        |record_ref| {
            let mut entries = entries.clone();
            if let Some((path, content)) = envelope(record_ref)? {
                entries.push((path.to_owned(), content));
            }
            Ok::<_, Error>((entries, message.to_owned()))
        },
    )
}

/// Mirrors the record on every commit at hand that has the snapshot's tree (HEAD and the local
/// branch tips) by appending `line` to its note; returns the commits noted.
pub(super) fn mirror_notes(
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
