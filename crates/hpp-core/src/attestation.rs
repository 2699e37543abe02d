//! The attestation record, `hpp.evidence-attestation/v3`, and the rules that judge one.
//! Pure: values in, values out.
//!
//! v2 differed from the reference's v1 as the git-native design requires: the snapshot is a git
//! tree id (`snapshot.tree`) instead of a list of file digests, and the spec carries its git blob
//! id beside its sha256. v3 changes what names the repository and when the record was made:
//!
//! - `repo` is `{"roots": [...]}`, the root commit(s) of the history being attested, which every
//!   clone, mirror and bare copy holds whatever the transport or the remote's name. v2's hash of
//!   the origin URL broke on a renamed remote, another transport or a bare repository. v2 records
//!   keep verifying under their own rule.
//! - `created_at` keeps the fraction of a second, because the order of one checker's records
//!   decides which verdict stands ([`tree_verdict`]).
//!
//! Three rules beyond the reference's mismatches decide whether an approval counts:
//! the principal whose key verified the signature is the record's checker and not its maker
//! ([`signer_problem`]); a later `revise` or `blocked` by the same checker revokes an earlier
//! approval; and two records of one checker made at the same instant are ambiguous.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The schema name of the records `attest create` writes.
pub const SCHEMA: &str = "hpp.evidence-attestation/v3";
/// The schema of the records written before v3 (repository identity by origin URL); they still
/// verify under their own rule.
pub const SCHEMA_V2: &str = "hpp.evidence-attestation/v2";
/// The reference harness's own schema (`hpp` 2.x `attest create`): the snapshot is a list of
/// file digests with no tree, the repository a hash of its origin URL, and the signature (if any)
/// an object inside the record. `attest import` keeps such a record as it is, bound to the tree
/// whose files are exactly the ones it lists ([`reference_snapshot_problem`]).
pub const REFERENCE_SCHEMA: &str = "hpp.evidence-attestation/v1";
/// The schema name of a verification report.
pub const VERIFICATION_SCHEMA: &str = "hpp.attestation-verification/v1";

/// The record blob in an attestation commit's tree.
pub const RECORD_FILE: &str = "attestation.json";
/// The signature blob beside it (SSHSIG, namespace `hpp`, over the record's bytes).
pub const SIGNATURE_FILE: &str = "attestation.sig";
/// The in-toto envelope beside it: the record as a SLSA verification summary, DSSE-signed with
/// the same key at the same moment ([`crate::intoto`]); present only when a key file signed.
pub const ENVELOPE_FILE: &str = "attestation.intoto.json";
/// The spec blob kept in the record's tree.
pub const SPEC_ENTRY: &str = "spec";
/// The snapshot tree kept in the record's tree.
pub const SNAPSHOT_ENTRY: &str = "snapshot";
/// The sealed release-gate session kept in the record's tree, when one raised the verdict.
pub const DELIBERATION_ENTRY: &str = "deliberation.json";

/// The three verdicts a checker may record, as the record spells them.
pub const VERDICTS: [&str; 3] = [
    Verdict::Approved.as_str(),
    Verdict::Revise.as_str(),
    Verdict::Blocked.as_str(),
];

/// A checker's verdict. The order is strictness: approved < revise < blocked, so the stricter
/// of two is their [`Ord::max`].
///
/// ```
/// use hpp_core::attestation::Verdict;
/// assert_eq!("revise".parse::<Verdict>(), Ok(Verdict::Revise));
/// assert_eq!(Verdict::Approved.max(Verdict::Blocked), Verdict::Blocked);
/// assert_eq!(serde_json::to_value(Verdict::Approved).expect("serialises"), "approved");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The work holds: the only verdict a snapshot verifies with.
    Approved,
    /// The work needs changes.
    Revise,
    /// The work must not go ahead.
    Blocked,
}

impl Verdict {
    /// Returns the record's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Revise => "revise",
            Self::Blocked => "blocked",
        }
    }

    /// Reads a verdict as a person types it: trimmed and lowercased, then one of [`VERDICTS`].
    pub fn from_input(text: &str) -> Result<Self, Error> {
        text.trim().to_lowercase().parse()
    }

    /// Returns the verdict a sealed panel's verdict stands for: its value when it is a
    /// recommendation of one of the three, else `revise` (an abstention, a blocked or failed
    /// session, or an option outside the three never lets work through).
    pub fn of_panel(status: &str, value: Option<&str>) -> Self {
        match (status, value.map(str::parse)) {
            ("recommendation", Some(Ok(verdict))) => verdict,
            _ => Self::Revise,
        }
    }
}

impl FromStr for Verdict {
    type Err = Error;

    /// Parses the record's exact spelling (no trimming, no case folding: that is
    /// [`Verdict::from_input`]'s job).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "approved" => Ok(Self::Approved),
            "revise" => Ok(Self::Revise),
            "blocked" => Ok(Self::Blocked),
            _ => Err(Error::Verdict),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An `hpp.evidence-attestation/v3` record, as `attest create` writes it. Serialised through
/// [`crate::record::canonical_record`], its bytes are the ones the signature covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The repository, by the root commits of its history.
    pub repo: Repo,
    /// HEAD when the record was made, as an observation; `null` on an unborn branch.
    pub base_commit: Option<String>,
    /// The spec the work was checked against.
    pub spec: Spec,
    /// Who made the work and who checked it.
    pub actors: Actors,
    /// The review session id.
    pub session: String,
    /// The verdict recorded (the declared one, raised by the House Session when one is named).
    pub verdict: Verdict,
    /// The snapshot attested.
    pub snapshot: Snapshot,
    /// The evidence bundles the verdict relies on.
    pub evidence: Vec<BoundEvidence>,
    /// When, UTC, RFC 3339 with the fraction of a second.
    pub created_at: String,
    /// The principal that signed the record; absent when it is unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// The sealed release-gate session whose verdict was applied; absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliberation: Option<PanelRef>,
}

/// The repository an attestation is about: the root commit(s) of the history HEAD had when it
/// was made, sorted. Every clone, mirror and bare copy of that history holds them; so does a fork
/// (a fork's records of the same tree hold in its upstream and back: they judged the same bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repo {
    /// The root commits, as hex ids, sorted; empty on a branch with no commit yet.
    pub roots: Vec<String>,
}

/// The spec an attestation binds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spec {
    /// Its path, relative to the worktree root, with `/` separators.
    pub path: String,
    /// The sha256 of its bytes.
    pub sha256: String,
    /// Its git blob id.
    pub blob: String,
}

/// Maker and checker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actors {
    /// Who made the work.
    pub maker: String,
    /// Who checked it.
    pub checker: String,
}

/// The snapshot an attestation binds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The git tree of tracked plus untracked-not-ignored files.
    pub tree: String,
}

/// One evidence bundle an attestation relies on, bound by its self-hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoundEvidence {
    /// The bundle's ref.
    #[serde(rename = "ref")]
    pub evidence_ref: String,
    /// The bundle's `record_sha256` when it was bound; `null` when it had none.
    pub record_sha256: Option<String>,
}

/// The sealed House Session an attestation names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PanelRef {
    /// The session's seal.
    pub record_sha256: String,
    /// Its verdict's status.
    pub status: String,
    /// Its verdict's value, if any.
    pub value: Option<String>,
    /// The judge seat's declared family.
    pub judge_family: String,
    /// The ref it was read from; absent when it was read from a file.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub deliberation_ref: Option<String>,
}

/// What `attest create` was asked to record, checked: maker and checker trimmed, the verdict
/// normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// Who made the work.
    pub maker: String,
    /// Who checked it.
    pub checker: String,
    /// The review session id, as given.
    pub session: String,
    /// The declared verdict.
    pub verdict: Verdict,
}

impl Claim {
    /// Checks the input in the reference's order: actors, then session, then verdict.
    ///
    /// ```
    /// use hpp_core::attestation::{Claim, Error, Verdict};
    /// let claim = Claim::check(" maker-a ", "checker-b", "review:1", "Approved").expect("valid");
    /// assert_eq!((claim.maker.as_str(), claim.verdict), ("maker-a", Verdict::Approved));
    /// assert_eq!(Claim::check("a", "A", "review:1", "approved"), Err(Error::Actors));
    /// ```
    pub fn check(maker: &str, checker: &str, session: &str, verdict: &str) -> Result<Self, Error> {
        let (maker, checker) = check_actors(maker, checker)?;
        check_session(session)?;
        crate::secrets::check_name("--maker", &maker)?;
        crate::secrets::check_name("--checker", &checker)?;
        crate::secrets::check_name("--session", session)?;
        Ok(Self {
            maker,
            checker,
            session: session.to_owned(),
            verdict: Verdict::from_input(verdict)?,
        })
    }
}

/// What an attestation binds, as the application gathered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    /// The repository.
    pub repo: Repo,
    /// HEAD, if there is one.
    pub base_commit: Option<String>,
    /// The spec.
    pub spec: Spec,
    /// The snapshot.
    pub snapshot: Snapshot,
    /// The evidence bundles, in the order they were bound.
    pub evidence: Vec<BoundEvidence>,
}

impl Record {
    /// Assembles the record of `claim` about `subject`. A House Session's verdict can only make
    /// the declared one stricter ([`Verdict::of_panel`]).
    pub fn assemble(
        claim: Claim,
        subject: Subject,
        created_at: String,
        signer: Option<String>,
        panel: Option<PanelRef>,
    ) -> Self {
        let verdict = match &panel {
            Some(p) => claim
                .verdict
                .max(Verdict::of_panel(&p.status, p.value.as_deref())),
            None => claim.verdict,
        };
        Self {
            schema: SCHEMA.to_owned(),
            repo: subject.repo,
            base_commit: subject.base_commit,
            spec: subject.spec,
            actors: Actors {
                maker: claim.maker,
                checker: claim.checker,
            },
            session: claim.session,
            verdict,
            snapshot: subject.snapshot,
            evidence: subject.evidence,
            created_at,
            signer,
            deliberation: panel,
        }
    }
}

/// What verifying the attestations of one tree concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// At least one attestation of the tree holds.
    Valid,
    /// None does (or there is none).
    Blocked,
}

/// Returns the verdict a stored record spells, if it spells one of the three exactly. Stored
/// records are read as JSON, not parsed whole into [`Record`]: a record edited by hand must still
/// be judged field by field, with the reference's mismatch names.
pub fn recorded_verdict(record: &Map<String, Value>) -> Option<Verdict> {
    record.get("verdict")?.as_str()?.parse().ok()
}

/// Why attestation input was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Maker and checker are empty or the same person, ignoring case.
    #[error("maker and checker must be different non-empty actors")]
    Actors,
    /// A name looks like a secret.
    #[error(transparent)]
    Secret(#[from] crate::secrets::SecretName),
    /// The session id has the wrong shape.
    #[error("session must be 1-128 portable identifier characters")]
    Session,
    /// Not one of the three verdicts.
    #[error("verdict must be approved, revise, or blocked")]
    Verdict,
}

/// Checks maker and checker: both non-empty after trimming, different ignoring case.
pub fn check_actors(maker: &str, checker: &str) -> Result<(String, String), Error> {
    let (maker, checker) = (maker.trim(), checker.trim());
    if maker.is_empty() || checker.is_empty() || maker.to_lowercase() == checker.to_lowercase() {
        return Err(Error::Actors);
    }
    Ok((maker.to_owned(), checker.to_owned()))
}

/// Checks a session id: `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`.
pub fn check_session(session: &str) -> Result<(), Error> {
    let ok = session.len() <= 128
        && session
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if ok { Ok(()) } else { Err(Error::Session) }
}

/// Normalises a verdict (trimmed, lowercased) and checks it is one of [`VERDICTS`].
pub fn check_verdict(verdict: &str) -> Result<String, Error> {
    Verdict::from_input(verdict).map(|v| v.as_str().to_owned())
}

/// Normalises a remote URL so every way of writing the same remote hashes alike:
/// `https://github.com/org/repo.git`, `ssh://git@github.com/org/repo` and
/// `git@github.com:org/repo.git` all become `github.com/org/repo`. Returns `None` for a local
/// path, which the caller resolves on disk.
///
/// ```
/// use hpp_core::attestation::normalize_remote_url;
/// assert_eq!(normalize_remote_url("git@github.com:org/repo.git").as_deref(), Some("github.com/org/repo"));
/// assert_eq!(normalize_remote_url("../remote.git"), None);
/// ```
pub fn normalize_remote_url(url: &str) -> Option<String> {
    let trimmed = url.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
    let (host, path) = if let Some((scheme, rest)) = trimmed.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return None;
        }
        rest.split_once('/').unwrap_or((rest, ""))
    } else {
        let (before, after) = trimmed.split_once(':')?;
        // `C:\x` is a drive letter and `./a:b` a path, not `host:path`.
        if before.len() <= 1 || before.contains('/') {
            return None;
        }
        (before, after)
    };
    let host = host
        .rsplit_once('@')
        .map_or(host, |(_, h)| h)
        .to_lowercase();
    Some(format!("{host}/{}", path.trim_start_matches('/')))
}

/// What a verifier observed about one attestation, gathered from the store.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The tree being verified (the ref's key).
    pub tree: String,
    /// The tree entry `snapshot` of the record's commit, if any.
    pub stored_snapshot: Option<String>,
    /// sha256 of the record's stored `spec` blob, if any.
    pub stored_spec_sha256: Option<String>,
    /// Git id of the record's stored `spec` blob, if any.
    pub stored_spec_blob: Option<String>,
    /// Git id of the entry at the spec's path in the verified tree, if any.
    pub tree_spec_blob: Option<String>,
    /// The repository identity now, by a v2 record's rule (the hash of the origin URL).
    pub repo_id: String,
    /// Whether every root commit a v3 record names is a root commit of this repository.
    pub roots_present: bool,
    /// Why the signature does not bind the checker, when it does not ([`signer_problem`]).
    pub signer_problem: Option<String>,
    /// Whether the signature requirement (if any) is met.
    pub signature_ok: bool,
    /// Whether every evidence bundle the record names verifies.
    pub evidence_ok: bool,
    /// Whether the House Session the record names (if any) is kept beside it, still verifies,
    /// and makes the recorded verdict no more lenient than its own.
    pub deliberation_ok: bool,
    /// Whether the commit a reference record names as its `base_commit` is in this repository:
    /// what names the repository for an imported record, whose URL hash only holds where the
    /// reference wrote it.
    pub base_commit_present: bool,
    /// Whether a reference record's file digests are exactly the verified tree's files
    /// ([`reference_snapshot_problem`] found nothing).
    pub reference_snapshot_ok: bool,
}

/// One file of a tree as a reference snapshot entry names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    /// Its path, `/`-separated.
    pub path: String,
    /// `file` or `symlink` (a nested repository is neither, and no reference entry matches it).
    pub kind: &'static str,
    /// sha256 of its bytes (a symlink's: its target).
    pub sha256: String,
}

/// Returns why a reference record's snapshot (`snapshot.entries`, `digest`, `file_count`) is not
/// the tree whose files are `files`, or `None` when it is: its digest and count are its own
/// entries', every entry present (`file` or `symlink`) is a file of the tree with that kind and
/// sha256, a `missing` entry is not in the tree, and the tree has no file it does not list.
///
/// ```
/// use hpp_core::attestation::{TreeFile, reference_snapshot_problem};
/// use hpp_core::record::{canonical_json, sha256_hex};
/// let entries = serde_json::json!([{"path": "a", "kind": "file", "sha256": sha256_hex(b"x")}]);
/// let record = serde_json::json!({"snapshot": {
///     "entries": entries, "file_count": 1, "digest": sha256_hex(&canonical_json(&entries)),
/// }});
/// let record = record.as_object().expect("an object");
/// let a = TreeFile { path: "a".into(), kind: "file", sha256: sha256_hex(b"x") };
/// assert_eq!(reference_snapshot_problem(record, &[a.clone()]), None);
/// let b = TreeFile { path: "b".into(), ..a.clone() };
/// assert!(reference_snapshot_problem(record, &[a, b]).is_some());
/// ```
pub fn reference_snapshot_problem(
    record: &Map<String, Value>,
    files: &[TreeFile],
) -> Option<String> {
    use crate::record::{canonical_json, sha256_hex};
    let snapshot = record.get("snapshot");
    let Some(entries) = snapshot
        .and_then(|s| s.get("entries"))
        .and_then(Value::as_array)
    else {
        return Some("the record lists no snapshot entries".to_owned());
    };
    let digest = snapshot
        .and_then(|s| s.get("digest"))
        .and_then(Value::as_str);
    if digest != Some(sha256_hex(&canonical_json(&Value::Array(entries.clone()))).as_str()) {
        return Some("its snapshot digest is not the digest of its own entries".to_owned());
    }
    if snapshot
        .and_then(|s| s.get("file_count"))
        .and_then(Value::as_u64)
        != u64::try_from(entries.len()).ok()
    {
        return Some("its file_count is not the number of its entries".to_owned());
    }
    let mut tree: std::collections::BTreeMap<&str, &TreeFile> =
        files.iter().map(|f| (f.path.as_str(), f)).collect();
    for entry in entries {
        let field = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or_default();
        let path = field("path");
        match (field("kind"), tree.remove(path)) {
            ("missing", None) => {}
            ("missing", Some(_)) => {
                return Some(format!("{path} is missing in the record but in the tree"));
            }
            (_, None) => return Some(format!("{path} is attested but not in the tree")),
            (kind, Some(file)) if file.kind != kind || file.sha256 != field("sha256") => {
                return Some(format!("{path} is not the {kind} that was attested"));
            }
            _ => {}
        }
    }
    tree.keys()
        .next()
        .map(|path| format!("{path} is in the tree but was not attested"))
}

/// The bytes a reference record's signature covers: its canonical JSON without `signature`.
pub fn reference_signed_bytes(record: &Map<String, Value>) -> Vec<u8> {
    let mut body = record.clone();
    body.remove("signature");
    crate::record::canonical_json(&Value::Object(body))
}

/// Returns the reference's mismatch names for one record, sorted: `verdict`, `actors`,
/// `session`, `repo`, `spec_sha256`, `snapshot_digest`, `signature`, plus ours, `evidence`,
/// `deliberation`, `schema` and `signer`.
///
/// The record is the JSON read back from the store, not a parsed [`Record`]: it may have been
/// edited by hand or written by another tool, and each field it gets wrong must still be named
/// (a missing or mistyped field reads as empty), where a typed parse would refuse it whole.
pub fn mismatches(record: &Map<String, Value>, observed: &Observed) -> Vec<&'static str> {
    let mut out = BTreeSet::new();
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let schema = text(record.get("schema"));
    let reference = schema == REFERENCE_SCHEMA;
    if schema != SCHEMA && schema != SCHEMA_V2 && !reference {
        out.insert("schema");
    }
    if recorded_verdict(record) != Some(Verdict::Approved) {
        out.insert("verdict");
    }
    let actors = record.get("actors");
    if check_actors(
        &text(actors.and_then(|a| a.get("maker"))),
        &text(actors.and_then(|a| a.get("checker"))),
    )
    .is_err()
    {
        out.insert("actors");
    }
    if check_session(&text(record.get("session"))).is_err() {
        out.insert("session");
    }
    let repo_holds = if reference {
        observed.base_commit_present
    } else if schema == SCHEMA_V2 {
        text(record.get("repo").and_then(|r| r.get("id"))) == observed.repo_id
    } else {
        !roots(record).is_empty() && observed.roots_present
    };
    if !repo_holds {
        out.insert("repo");
    }
    let spec = record.get("spec");
    let spec_sha = text(spec.and_then(|s| s.get("sha256")));
    let spec_blob = text(spec.and_then(|s| s.get("blob")));
    // A reference record names no blob: the one kept beside it stands for its sha256.
    let spec_blob = if reference {
        observed.stored_spec_blob.clone().unwrap_or_default()
    } else {
        spec_blob
    };
    let spec_ok = observed.stored_spec_sha256.as_deref() == Some(spec_sha.as_str())
        && observed.stored_spec_blob.as_deref() == Some(spec_blob.as_str())
        && observed
            .tree_spec_blob
            .as_ref()
            .is_none_or(|b| *b == spec_blob);
    if !spec_ok {
        out.insert("spec_sha256");
    }
    let tree = if reference {
        // Bound by its file digests to the tree kept beside it.
        if observed.reference_snapshot_ok {
            observed.stored_snapshot.clone().unwrap_or_default()
        } else {
            String::new()
        }
    } else {
        text(record.get("snapshot").and_then(|s| s.get("tree")))
    };
    if tree != observed.tree || observed.stored_snapshot.as_deref() != Some(tree.as_str()) {
        out.insert("snapshot_digest");
    }
    if !observed.signature_ok {
        out.insert("signature");
    }
    if observed.signer_problem.is_some() {
        out.insert("signer");
    }
    if !observed.evidence_ok {
        out.insert("evidence");
    }
    if !observed.deliberation_ok {
        out.insert("deliberation");
    }
    out.into_iter().collect()
}

/// Returns the root commits a v3 record names (empty when it names none, or is not v3).
pub fn roots(record: &Map<String, Value>) -> Vec<String> {
    record
        .get("repo")
        .and_then(|r| r.get("roots"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Returns why a verified signature does not bind the record's checker, or `None` when it does.
///
/// `principal` is the allowed-signers principal whose key verified the signature (`None` when
/// nothing was verified: there is then nothing to bind). The principal must be the checker the
/// record names, and never its maker: a maker signing a record that names someone else as the
/// checker is a self-approval, whoever else is in the allowed-signers file.
///
/// ```
/// use hpp_core::attestation::signer_problem;
/// assert_eq!(signer_problem(Some("checker-b"), "maker-a", "checker-b"), None);
/// assert!(signer_problem(Some("maker-a"), "maker-a", "checker-b").is_some());
/// assert_eq!(signer_problem(None, "maker-a", "checker-b"), None);
/// ```
pub fn signer_problem(principal: Option<&str>, maker: &str, checker: &str) -> Option<String> {
    let principal = principal?;
    if principal.eq_ignore_ascii_case(maker.trim()) {
        return Some(format!(
            "signed by {principal}, the maker: the record names checker {checker}, and a maker cannot approve their own work"
        ));
    }
    (principal != checker.trim()).then(|| {
        format!("signed by {principal}, but the record names checker {checker}: only the checker may sign their verdict")
    })
}

/// One attestation of a tree, as the verifier judged it: what [`tree_verdict`] weighs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// Its ref.
    pub reference: String,
    /// The checker it names.
    pub checker: String,
    /// The verdict it records, if it spells one.
    pub verdict: Option<Verdict>,
    /// When it says it was made (its own, signed `created_at`), if that reads as a time.
    pub at: Option<time::OffsetDateTime>,
    /// Whether it holds but for its verdict: no mismatch other than `verdict`.
    pub holds: bool,
    /// Whether it may revoke: it binds this tree, names a checker, and meets the signature
    /// requirement (a forged or unsigned record, where signatures are required, revokes nothing).
    pub trusted: bool,
}

/// What the attestations of one tree add up to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeVerdict {
    /// An approval holds, and its checker's latest record is an approval.
    Approved {
        /// The approval that holds (the checker's latest).
        reference: String,
    },
    /// Every approval that holds was revoked by a later verdict of its own checker.
    Revoked {
        /// The approval revoked.
        approval: String,
        /// The checker's later record that revokes it.
        revoked_by: String,
    },
    /// The checker of an approval that holds made two or more records at the same instant, so
    /// which verdict stands cannot be told.
    Ambiguous {
        /// The checker.
        checker: String,
        /// The records made at that instant.
        references: Vec<String>,
    },
    /// No approval holds.
    NoApproval,
}

/// Decides a tree from its judged attestations: the latest verdict of each checker stands.
///
/// For each checker, its trusted records are ordered by their own time; an approval counts only
/// if it holds and its checker's latest record is an approval. So a checker withdraws an
/// approval by recording `revise` or `blocked` for the same tree, and two records of one
/// checker at the same instant refuse the tree as ambiguous. A record with no readable time is
/// the oldest.
///
/// ```
/// use hpp_core::attestation::{Judgement, TreeVerdict, Verdict, tree_verdict};
/// let at = |s: &str| hpp_core::timestamp::parse(s);
/// let judged = |reference: &str, verdict, time: &str| Judgement {
///     reference: reference.into(), checker: "checker-b".into(), verdict: Some(verdict),
///     at: at(time), holds: true, trusted: true,
/// };
/// let approval = judged("a", Verdict::Approved, "2026-01-01T00:00:00Z");
/// let revise = judged("b", Verdict::Revise, "2026-01-02T00:00:00Z");
/// assert_eq!(tree_verdict(&[approval.clone()]), TreeVerdict::Approved { reference: "a".into() });
/// assert_eq!(
///     tree_verdict(&[approval, revise]),
///     TreeVerdict::Revoked { approval: "a".into(), revoked_by: "b".into() }
/// );
/// ```
pub fn tree_verdict(judged: &[Judgement]) -> TreeVerdict {
    use std::collections::BTreeMap;
    let mut latest: BTreeMap<&str, Vec<&Judgement>> = BTreeMap::new();
    for j in judged.iter().filter(|j| j.trusted && !j.checker.is_empty()) {
        let slot = latest.entry(j.checker.as_str()).or_default();
        match slot.first().map(|first| first.at.cmp(&j.at)) {
            None | Some(std::cmp::Ordering::Equal) => slot.push(j),
            Some(std::cmp::Ordering::Less) => *slot = vec![j],
            Some(std::cmp::Ordering::Greater) => {}
        }
    }
    let approvals: Vec<&Judgement> = judged
        .iter()
        .filter(|j| j.holds && j.trusted && j.verdict == Some(Verdict::Approved))
        .collect();
    let mut ambiguous = None;
    let mut revoked = None;
    // Newest approval first, so the one named is the checker's latest.
    let mut ordered = approvals.clone();
    ordered.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| a.reference.cmp(&b.reference)));
    for approval in ordered {
        let last = latest
            .get(approval.checker.as_str())
            .cloned()
            .unwrap_or_default();
        if last.len() > 1 {
            ambiguous.get_or_insert_with(|| TreeVerdict::Ambiguous {
                checker: approval.checker.clone(),
                references: last.iter().map(|j| j.reference.clone()).collect(),
            });
            continue;
        }
        match last.first() {
            Some(last) if last.verdict != Some(Verdict::Approved) => {
                revoked.get_or_insert_with(|| TreeVerdict::Revoked {
                    approval: approval.reference.clone(),
                    revoked_by: last.reference.clone(),
                });
            }
            _ => {
                return TreeVerdict::Approved {
                    reference: approval.reference.clone(),
                };
            }
        }
    }
    ambiguous.or(revoked).unwrap_or(TreeVerdict::NoApproval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn good() -> (Map<String, Value>, Observed) {
        let record = json!({
            "schema": SCHEMA, "verdict": "approved", "actors": {"maker": "maker-a", "checker": "checker-b"},
            "session": "review:001", "repo": {"roots": ["r"]},
            "spec": {"path": "SPEC.md", "sha256": "s", "blob": "b"}, "snapshot": {"tree": "t"},
        });
        let observed = Observed {
            tree: "t".into(),
            stored_snapshot: Some("t".into()),
            stored_spec_sha256: Some("s".into()),
            stored_spec_blob: Some("b".into()),
            tree_spec_blob: Some("b".into()),
            repo_id: "r".into(),
            roots_present: true,
            signer_problem: None,
            signature_ok: true,
            evidence_ok: true,
            deliberation_ok: true,
            base_commit_present: false,
            reference_snapshot_ok: false,
        };
        (record.as_object().cloned().expect("object"), observed)
    }

    #[test]
    fn control_a_house_session_that_no_longer_holds_is_a_deliberation_mismatch() {
        let (record, mut observed) = good();
        observed.deliberation_ok = false;
        assert_eq!(mismatches(&record, &observed), vec!["deliberation"]);
    }

    #[test]
    fn a_consistent_approved_record_has_no_mismatch() {
        let (record, observed) = good();
        assert!(mismatches(&record, &observed).is_empty());
    }

    #[test]
    fn control_each_difference_names_its_mismatch() {
        type Mutation = Box<dyn Fn(&mut Map<String, Value>, &mut Observed)>;
        let cases: Vec<(&str, Mutation)> = vec![
            (
                "verdict",
                Box::new(|r, _| {
                    r.insert("verdict".into(), json!("revise"));
                }),
            ),
            (
                "actors",
                Box::new(|r, _| {
                    r.insert("actors".into(), json!({"maker": "A", "checker": "a"}));
                }),
            ),
            (
                "session",
                Box::new(|r, _| {
                    r.insert("session".into(), json!("bad session"));
                }),
            ),
            ("repo", Box::new(|_, o| o.roots_present = false)),
            (
                "repo",
                Box::new(|r, _| {
                    r.insert("repo".into(), json!({"roots": []}));
                }),
            ),
            (
                "signer",
                Box::new(|_, o| o.signer_problem = Some("signed by maker-a".into())),
            ),
            (
                "spec_sha256",
                Box::new(|_, o| o.stored_spec_sha256 = Some("x".into())),
            ),
            (
                "spec_sha256",
                Box::new(|_, o| o.tree_spec_blob = Some("other".into())),
            ),
            (
                "snapshot_digest",
                Box::new(|_, o| o.tree = "other-tree".into()),
            ),
            ("snapshot_digest", Box::new(|_, o| o.stored_snapshot = None)),
            ("signature", Box::new(|_, o| o.signature_ok = false)),
            ("evidence", Box::new(|_, o| o.evidence_ok = false)),
            (
                "schema",
                Box::new(|r, _| {
                    r.insert("schema".into(), json!("hpp.evidence-attestation/v9"));
                }),
            ),
        ];
        for (name, mutate) in cases {
            let (mut record, mut observed) = good();
            mutate(&mut record, &mut observed);
            assert_eq!(mismatches(&record, &observed), [name]);
        }
    }

    #[test]
    fn a_reference_record_is_bound_by_its_digests_and_its_base_commit() {
        let (_, good_observed) = good();
        let record = json!({
            "schema": REFERENCE_SCHEMA, "verdict": "approved", "session": "review:001",
            "actors": {"maker": "maker-a", "checker": "checker-b"},
            "repo": {"name": "work", "id": "an origin hash of another machine"},
            "base_commit": "c".repeat(40),
            "spec": {"path": "SPEC.md", "sha256": "s"},
        });
        let record = record.as_object().expect("an object").clone();
        let observed = Observed {
            base_commit_present: true,
            reference_snapshot_ok: true,
            stored_spec_blob: Some("b".into()),
            tree_spec_blob: Some("b".into()),
            ..good_observed
        };
        assert_eq!(mismatches(&record, &observed), Vec::<&str>::new());
        let cases: Vec<(&str, Observed)> = vec![
            (
                "repo",
                Observed {
                    base_commit_present: false,
                    ..observed.clone()
                },
            ),
            (
                "snapshot_digest",
                Observed {
                    reference_snapshot_ok: false,
                    ..observed.clone()
                },
            ),
            (
                "spec_sha256",
                Observed {
                    tree_spec_blob: Some("other".into()),
                    ..observed.clone()
                },
            ),
        ];
        for (name, changed) in cases {
            assert_eq!(mismatches(&record, &changed), [name]);
        }
    }

    fn subject(base_commit: Option<&str>, evidence: Vec<BoundEvidence>) -> Subject {
        Subject {
            repo: Repo {
                roots: vec!["r".repeat(40)],
            },
            base_commit: base_commit.map(str::to_owned),
            spec: Spec {
                path: "docs/SPEC.md".into(),
                sha256: "s".repeat(64),
                blob: "b".repeat(40),
            },
            snapshot: Snapshot {
                tree: "t".repeat(40),
            },
            evidence,
        }
    }

    fn panel(value: Option<&str>, deliberation_ref: Option<&str>) -> PanelRef {
        PanelRef {
            record_sha256: "d".repeat(64),
            status: "recommendation".into(),
            value: value.map(str::to_owned),
            judge_family: "other-family".into(),
            deliberation_ref: deliberation_ref.map(str::to_owned),
        }
    }

    #[test]
    fn a_v3_record_has_the_fields_and_spellings_of_its_schema() {
        use crate::record::canonical_record;
        let claim =
            Claim::check("maker-a", "checker-b", "review:001", "approved").expect("a valid claim");
        let bound = vec![BoundEvidence {
            evidence_ref: "refs/hpp/evidence/a-20260102T030405Z".into(),
            record_sha256: None,
        }];
        let record = Record::assemble(
            claim,
            subject(None, bound),
            "2026-01-02T03:04:05.5Z".into(),
            Some("checker-b".into()),
            Some(panel(Some("blocked"), None)),
        );
        let value: Value = serde_json::from_slice(&canonical_record(&record)).expect("JSON");
        assert_eq!(value["schema"], SCHEMA);
        assert_eq!(value["repo"], json!({"roots": ["r".repeat(40)]}));
        assert_eq!(
            value["base_commit"],
            Value::Null,
            "an unborn HEAD is null, not absent"
        );
        assert_eq!(value["evidence"][0]["record_sha256"], Value::Null);
        assert_eq!(value["verdict"], "blocked", "the panel made it stricter");
        assert_eq!(value["signer"], "checker-b");
        assert!(
            value["deliberation"].get("ref").is_none(),
            "an absent ref is left out"
        );
        let read: Record = serde_json::from_value(value).expect("the record reads back");
        assert_eq!(read, record);
    }

    #[test]
    fn control_an_unsigned_record_has_no_signer_key_at_all() {
        use crate::record::canonical_record;
        let claim =
            Claim::check("maker-a", "checker-b", "review:001", "approved").expect("a valid claim");
        let record = Record::assemble(claim, subject(None, Vec::new()), String::new(), None, None);
        let value: Value = serde_json::from_slice(&canonical_record(&record)).expect("JSON");
        assert!(value.get("signer").is_none() && value.get("deliberation").is_none());
    }

    fn judged(reference: &str, checker: &str, verdict: Verdict, at: &str) -> Judgement {
        Judgement {
            reference: reference.into(),
            checker: checker.into(),
            verdict: Some(verdict),
            at: crate::timestamp::parse(at),
            holds: true,
            trusted: true,
        }
    }

    #[test]
    fn the_latest_verdict_of_each_checker_stands() {
        let a = judged("a", "checker-b", Verdict::Approved, "2026-01-01T00:00:00Z");
        let revise = judged("r", "checker-b", Verdict::Revise, "2026-01-01T00:00:01Z");
        let again = judged("a2", "checker-b", Verdict::Approved, "2026-01-01T00:00:02Z");
        assert_eq!(
            tree_verdict(&[a.clone(), revise.clone()]),
            TreeVerdict::Revoked {
                approval: "a".into(),
                revoked_by: "r".into()
            }
        );
        assert_eq!(
            tree_verdict(&[a.clone(), revise.clone(), again]),
            TreeVerdict::Approved {
                reference: "a2".into()
            },
            "approving again after a revision stands"
        );
        let other = judged("o", "checker-c", Verdict::Approved, "2026-01-01T00:00:00Z");
        assert_eq!(
            tree_verdict(&[a, revise, other]),
            TreeVerdict::Approved {
                reference: "o".into()
            },
            "one checker's revision revokes only that checker's approval"
        );
    }

    #[test]
    fn control_what_cannot_revoke_and_what_is_ambiguous() {
        let a = judged("a", "checker-b", Verdict::Approved, "2026-01-01T00:00:00Z");
        let mut forged = judged("f", "checker-b", Verdict::Blocked, "2026-01-02T00:00:00Z");
        forged.trusted = false;
        assert_eq!(
            tree_verdict(&[a.clone(), forged]),
            TreeVerdict::Approved {
                reference: "a".into()
            },
            "an untrusted record revokes nothing"
        );
        let same = judged("s", "checker-b", Verdict::Blocked, "2026-01-01T00:00:00Z");
        assert!(matches!(
            tree_verdict(&[a.clone(), same]),
            TreeVerdict::Ambiguous { .. }
        ));
        let mut broken = a;
        broken.holds = false;
        assert_eq!(tree_verdict(&[broken]), TreeVerdict::NoApproval);
        assert_eq!(tree_verdict(&[]), TreeVerdict::NoApproval);
    }

    #[test]
    fn control_the_signer_must_be_the_checker_and_never_the_maker() {
        assert_eq!(
            signer_problem(Some("checker-b"), "maker-a", "checker-b"),
            None
        );
        let maker = signer_problem(Some("maker-a"), "maker-a", "checker-b").expect("refused");
        assert!(
            maker.contains("maker-a") && maker.contains("checker-b"),
            "{maker}"
        );
        let other = signer_problem(Some("someone"), "maker-a", "checker-b").expect("refused");
        assert!(
            other.contains("someone") && other.contains("checker-b"),
            "{other}"
        );
        assert!(signer_problem(Some("MAKER-A"), "maker-a", "checker-b").is_some());
    }

    #[test]
    fn a_panel_verdict_only_makes_the_declared_one_stricter() {
        let assemble = |declared: &str, panel: Option<PanelRef>| {
            let claim = Claim::check("maker-a", "checker-b", "review:001", declared)
                .expect("a valid claim");
            Record::assemble(claim, subject(None, Vec::new()), String::new(), None, panel).verdict
        };
        assert_eq!(assemble("approved", None), Verdict::Approved);
        assert_eq!(
            assemble("approved", Some(panel(Some("blocked"), None))),
            Verdict::Blocked
        );
        assert_eq!(
            assemble("blocked", Some(panel(Some("approved"), None))),
            Verdict::Blocked
        );
        assert_eq!(
            assemble("approved", Some(panel(Some("ship-it"), None))),
            Verdict::Revise
        );
        let mut abstained = panel(None, None);
        abstained.status = "abstention".into();
        assert_eq!(assemble("approved", Some(abstained)), Verdict::Revise);
    }

    #[test]
    fn control_verdicts_are_spelt_exactly_in_records() {
        let ordered = [Verdict::Approved, Verdict::Revise, Verdict::Blocked];
        assert_eq!(VERDICTS, ordered.map(Verdict::as_str));
        assert!(
            ordered.is_sorted(),
            "strictness rises in the order of VERDICTS"
        );
        assert_eq!("Approved".parse::<Verdict>(), Err(Error::Verdict));
        assert_eq!(" approved".parse::<Verdict>(), Err(Error::Verdict));
        assert_eq!(Verdict::from_input(" Approved "), Ok(Verdict::Approved));
        let (mut record, _) = good();
        assert_eq!(recorded_verdict(&record), Some(Verdict::Approved));
        record.insert("verdict".into(), json!("APPROVED"));
        assert_eq!(recorded_verdict(&record), None);
        record.insert("verdict".into(), json!(1));
        assert_eq!(recorded_verdict(&record), None);
        record.remove("verdict");
        assert_eq!(recorded_verdict(&record), None);
    }

    #[test]
    fn remote_urls_normalise_alike() {
        for url in [
            "https://github.com/org/repo.git",
            "ssh://git@GitHub.com/org/repo",
            "git@github.com:org/repo.git",
            "https://github.com/org/repo/",
        ] {
            assert_eq!(
                normalize_remote_url(url).as_deref(),
                Some("github.com/org/repo"),
                "{url}"
            );
        }
    }

    #[test]
    fn control_local_paths_are_left_to_the_caller() {
        for url in [
            "../remote.git",
            "/srv/git/repo.git",
            "file:///srv/repo.git",
            "C:\\repos\\x",
            "./a:b",
        ] {
            assert_eq!(normalize_remote_url(url), None, "{url}");
        }
    }

    #[test]
    fn control_input_rules_refuse_with_the_reference_messages() {
        assert_eq!(
            check_actors("a", "A").unwrap_err().to_string(),
            "maker and checker must be different non-empty actors"
        );
        assert!(check_actors(" ", "b").is_err());
        assert!(check_actors("maker-a", "checker-b").is_ok());
        assert_eq!(
            check_session("has space").unwrap_err().to_string(),
            "session must be 1-128 portable identifier characters"
        );
        assert!(check_session("review:001").is_ok());
        assert!(check_session(&"a".repeat(129)).is_err());
        assert_eq!(check_verdict(" Approved ").as_deref(), Ok("approved"));
        assert_eq!(
            check_verdict("maybe").unwrap_err().to_string(),
            "verdict must be approved, revise, or blocked"
        );
    }
}
