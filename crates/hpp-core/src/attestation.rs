//! The attestation record, `hpp.evidence-attestation/v2`, and the rules that judge one.
//! Pure: values in, values out.
//!
//! v2 differs from the reference's v1 in one field, as the git-native design requires: the
//! snapshot is a git tree id (`snapshot.tree`) instead of a list of file digests, and the spec
//! carries its git blob id beside its sha256. Everything else keeps the reference's names.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The schema name.
pub const SCHEMA: &str = "hpp.evidence-attestation/v2";
/// The schema name of a verification report.
pub const VERIFICATION_SCHEMA: &str = "hpp.attestation-verification/v1";

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

/// An `hpp.evidence-attestation/v2` record, as `attest create` writes it. Serialised through
/// [`crate::record::canonical_record`], its bytes are the ones the signature covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The repository, by name and by the hash of its identity (never the URL).
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
    /// When, UTC, RFC 3339 to the second.
    pub created_at: String,
    /// The principal that signed the record; absent when it is unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// The sealed release-gate session whose verdict was applied; absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliberation: Option<PanelRef>,
}

/// The repository an attestation is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repo {
    /// The worktree's directory name.
    pub name: String,
    /// The sha256 of the normalised origin URL (or of the name, without an origin).
    pub id: String,
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
    /// The repository identity now.
    pub repo_id: String,
    /// Whether the signature requirement (if any) is met.
    pub signature_ok: bool,
    /// Whether every evidence bundle the record names verifies.
    pub evidence_ok: bool,
    /// Whether the House Session the record names (if any) is kept beside it, still verifies,
    /// and makes the recorded verdict no more lenient than its own.
    pub deliberation_ok: bool,
}

/// Returns the reference's mismatch names for one record, sorted: `verdict`, `actors`,
/// `session`, `repo`, `spec_sha256`, `snapshot_digest`, `signature`, plus ours, `evidence`,
/// `deliberation` and `schema`.
///
/// The record is the JSON read back from the store, not a parsed [`Record`]: it may have been
/// edited by hand or written by another tool, and each field it gets wrong must still be named
/// (a missing or mistyped field reads as empty), where a typed parse would refuse it whole.
pub fn mismatches(record: &Map<String, Value>, observed: &Observed) -> Vec<&'static str> {
    let mut out = BTreeSet::new();
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    if text(record.get("schema")) != SCHEMA {
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
    if text(record.get("repo").and_then(|r| r.get("id"))) != observed.repo_id {
        out.insert("repo");
    }
    let spec = record.get("spec");
    let spec_sha = text(spec.and_then(|s| s.get("sha256")));
    let spec_blob = text(spec.and_then(|s| s.get("blob")));
    let spec_ok = observed.stored_spec_sha256.as_deref() == Some(spec_sha.as_str())
        && observed.stored_spec_blob.as_deref() == Some(spec_blob.as_str())
        && observed
            .tree_spec_blob
            .as_ref()
            .is_none_or(|b| *b == spec_blob);
    if !spec_ok {
        out.insert("spec_sha256");
    }
    let tree = text(record.get("snapshot").and_then(|s| s.get("tree")));
    if tree != observed.tree || observed.stored_snapshot.as_deref() != Some(tree.as_str()) {
        out.insert("snapshot_digest");
    }
    if !observed.signature_ok {
        out.insert("signature");
    }
    if !observed.evidence_ok {
        out.insert("evidence");
    }
    if !observed.deliberation_ok {
        out.insert("deliberation");
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn good() -> (Map<String, Value>, Observed) {
        let record = json!({
            "schema": SCHEMA, "verdict": "approved", "actors": {"maker": "maker-a", "checker": "checker-b"},
            "session": "review:001", "repo": {"id": "r", "name": "n"},
            "spec": {"path": "SPEC.md", "sha256": "s", "blob": "b"}, "snapshot": {"tree": "t"},
        });
        let observed = Observed {
            tree: "t".into(),
            stored_snapshot: Some("t".into()),
            stored_spec_sha256: Some("s".into()),
            stored_spec_blob: Some("b".into()),
            tree_spec_blob: Some("b".into()),
            repo_id: "r".into(),
            signature_ok: true,
            evidence_ok: true,
            deliberation_ok: true,
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
            ("repo", Box::new(|_, o| o.repo_id = "other".into())),
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
                    r.insert("schema".into(), json!("hpp.evidence-attestation/v1"));
                }),
            ),
        ];
        for (name, mutate) in cases {
            let (mut record, mut observed) = good();
            mutate(&mut record, &mut observed);
            assert_eq!(mismatches(&record, &observed), [name]);
        }
    }

    /// The record as `attest create` built it before it was typed: a `json!` literal, then
    /// `signer` and `deliberation` inserted when present.
    fn untyped(
        subject: &Subject,
        claim: &Claim,
        verdict: &str,
        signer: Option<&str>,
        panel: Option<&PanelRef>,
    ) -> Value {
        let evidence: Vec<Value> = subject
            .evidence
            .iter()
            .map(|e| json!({"ref": e.evidence_ref, "record_sha256": e.record_sha256}))
            .collect();
        let mut rec = json!({
            "schema": SCHEMA,
            "repo": {"name": subject.repo.name, "id": subject.repo.id},
            "base_commit": subject.base_commit,
            "spec": {"path": subject.spec.path, "sha256": subject.spec.sha256, "blob": subject.spec.blob},
            "actors": {"maker": claim.maker, "checker": claim.checker},
            "session": claim.session,
            "verdict": verdict,
            "snapshot": {"tree": subject.snapshot.tree},
            "evidence": evidence,
            "created_at": "2026-01-02T03:04:05Z",
        })
        .as_object()
        .cloned()
        .expect("a JSON object literal");
        if let Some(signer) = signer {
            rec.insert("signer".into(), json!(signer));
        }
        if let Some(d) = panel {
            let mut p = json!({
                "record_sha256": d.record_sha256, "status": d.status,
                "value": d.value, "judge_family": d.judge_family,
            });
            if let Some(r) = &d.deliberation_ref {
                p["ref"] = json!(r);
            }
            rec.insert("deliberation".into(), p);
        }
        Value::Object(rec)
    }

    fn subject(base_commit: Option<&str>, evidence: Vec<BoundEvidence>) -> Subject {
        Subject {
            repo: Repo {
                name: "repo".into(),
                id: "r".repeat(64),
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
    fn the_typed_record_has_the_bytes_of_the_untyped_one() {
        use crate::record::{canonical_json, canonical_record};
        let bound = vec![
            BoundEvidence {
                evidence_ref: "refs/hpp/evidence/a-20260102T030405Z".into(),
                record_sha256: Some("e".repeat(64)),
            },
            BoundEvidence {
                evidence_ref: "refs/hpp/evidence/b-20260102T030405Z".into(),
                record_sha256: None,
            },
        ];
        let cases = [
            (
                subject(Some(&"c".repeat(40)), bound.clone()),
                None,
                None,
                "approved",
            ),
            (
                subject(None, Vec::new()),
                Some("checker-b"),
                None,
                "approved",
            ),
            (
                subject(None, bound),
                Some("checker-b"),
                Some(panel(Some("blocked"), Some("refs/hpp/deliberations/x"))),
                "blocked",
            ),
            (
                subject(None, Vec::new()),
                None,
                Some(panel(None, None)),
                "revise",
            ),
        ];
        for (subject, signer, panel, verdict) in cases {
            let claim = Claim::check("maker-a", "checker-b", "review:001", "approved")
                .expect("a valid claim");
            let old = untyped(&subject, &claim, verdict, signer, panel.as_ref());
            let typed = Record::assemble(
                claim,
                subject,
                "2026-01-02T03:04:05Z".into(),
                signer.map(str::to_owned),
                panel,
            );
            assert_eq!(canonical_record(&typed), canonical_json(&old), "{old}");
            let read: Record = serde_json::from_value(old).expect("the typed record reads back");
            assert_eq!(read, typed);
        }
    }

    #[test]
    fn control_a_null_where_a_key_was_omitted_changes_the_bytes() {
        use crate::record::{canonical_json, canonical_record};
        let claim =
            Claim::check("maker-a", "checker-b", "review:001", "approved").expect("a valid claim");
        let subject = subject(None, Vec::new());
        let mut old = untyped(&subject, &claim, "approved", None, None);
        let typed = Record::assemble(claim, subject, "2026-01-02T03:04:05Z".into(), None, None);
        assert_eq!(canonical_record(&typed), canonical_json(&old));
        old["signer"] = Value::Null;
        assert_ne!(canonical_record(&typed), canonical_json(&old));
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
