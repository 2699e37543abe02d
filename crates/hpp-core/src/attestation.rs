//! The attestation record, `hpp.evidence-attestation/v2`, and the rules that judge one.
//! Pure: values in, values out.
//!
//! v2 differs from the reference's v1 in one field, as the git-native design requires: the
//! snapshot is a git tree id (`snapshot.tree`) instead of a list of file digests, and the spec
//! carries its git blob id beside its sha256. Everything else keeps the reference's names.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// The schema name.
pub const SCHEMA: &str = "hpp.evidence-attestation/v2";
/// The schema name of a verification report.
pub const VERIFICATION_SCHEMA: &str = "hpp.attestation-verification/v1";

/// The three verdicts a checker may record.
pub const VERDICTS: [&str; 3] = ["approved", "revise", "blocked"];

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
    let v = verdict.trim().to_lowercase();
    if VERDICTS.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(Error::Verdict)
    }
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
pub fn mismatches(record: &Map<String, Value>, observed: &Observed) -> Vec<&'static str> {
    let mut out = BTreeSet::new();
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    if text(record.get("schema")) != SCHEMA {
        out.insert("schema");
    }
    if text(record.get("verdict")) != "approved" {
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
