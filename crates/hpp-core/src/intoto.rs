//! Records other tools read: hpp's attestations and evidence bundles as in-toto Statements (v1)
//! in DSSE envelopes, and an in-toto test result read back as the facts of an evidence bundle.
//! Pure: values in, values out; signing and checking a signature is the application's
//! (`src/sign/dsse.rs`), which holds the keys.
//!
//! - An attestation is a SLSA verification summary ([`VSA_PREDICATE`]): its subjects are the
//!   attested tree (`gitTree`) and, when one had that tree as the record was made, the commit
//!   (`gitCommit`); the verifier is the checker (`git-hpp:checker/<principal>`), the policy the
//!   spec (its path, sha256 and git blob id), and the one input attestation the hpp record
//!   itself (its ref and the sha256 of its bytes), the link back. `approved` is `PASSED`;
//!   `revise` and `blocked` are `FAILED`.
//! - An evidence bundle is an in-toto test result ([`TEST_RESULT_PREDICATE`]): its subject is
//!   the tree the run started on, the configuration its command, the test its id; `PASSED`
//!   when the run passed, `FAILED` otherwise.
//!
//! The payload is the statement's canonical JSON ([`crate::record::canonical_json`]): the same
//! record always gives the same bytes, so a stored envelope is checked by building its
//! statement again from the record and comparing ([`attestation_statement`],
//! [`evidence_statement`]).

use base64ct::{Base64, Encoding};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::attestation::{self, Record};
use crate::evidence::{self, Bundle};
use crate::record::{canonical_json, sha256_hex};

/// The DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The `_type` of an in-toto Statement v1.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The predicate type of a SLSA verification summary (an attestation).
pub const VSA_PREDICATE: &str = "https://slsa.dev/verification_summary/v1";
/// The predicate type of an in-toto test result (an evidence bundle).
pub const TEST_RESULT_PREDICATE: &str = "https://in-toto.io/attestation/test-result/v0.1";
/// The result of a statement whose record holds: an approval, a passed run.
pub const PASSED: &str = "PASSED";
/// The result of every other record.
pub const FAILED: &str = "FAILED";
/// The verifier id prefix: the checker's principal follows.
pub const VERIFIER_PREFIX: &str = "git-hpp:checker/";

/// Why an envelope or a statement cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Not a DSSE envelope.
    #[error("not a DSSE envelope: {0}")]
    Envelope(String),
    /// The payload is not base64.
    #[error("the envelope's payload is not base64")]
    Payload,
    /// The envelope carries another payload type.
    #[error("the envelope's payloadType is {0:?}, not {PAYLOAD_TYPE:?}")]
    PayloadType(String),
    /// The payload is not an in-toto Statement v1 of the expected predicate type.
    #[error("the payload is not an in-toto statement: {0}")]
    Statement(String),
    /// The record cannot be stated (an evidence bundle recorded before bundles carried a tree).
    #[error("{0}")]
    Unstatable(String),
}

/// A DSSE envelope, as the in-toto attestation bundle (JSON Lines) carries one a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// The statement's bytes, base64.
    pub payload: String,
    /// Always [`PAYLOAD_TYPE`] here.
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// The signatures over the PAE ([`pae`]); empty when the record is unsigned.
    pub signatures: Vec<Signature>,
}

/// One DSSE signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// The key's id: its SSH fingerprint (`SHA256:...`).
    #[serde(default)]
    pub keyid: String,
    /// The signature bytes, base64 (raw Ed25519, or DER ECDSA).
    pub sig: String,
}

impl Envelope {
    /// An envelope of `payload` with no signature yet.
    pub fn unsigned(payload: &[u8]) -> Self {
        Self {
            payload: encode(payload),
            payload_type: PAYLOAD_TYPE.to_owned(),
            signatures: Vec::new(),
        }
    }

    /// Reads an envelope (one JSON object, as a file or one line of a bundle holds it).
    ///
    /// # Errors
    ///
    /// [`Error::Envelope`] when it is not one, [`Error::PayloadType`] for another payload type.
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let envelope: Self =
            serde_json::from_slice(bytes).map_err(|e| Error::Envelope(e.to_string()))?;
        if envelope.payload_type != PAYLOAD_TYPE {
            return Err(Error::PayloadType(envelope.payload_type));
        }
        Ok(envelope)
    }

    /// The payload's bytes.
    ///
    /// # Errors
    ///
    /// [`Error::Payload`] when it is not base64.
    pub fn payload_bytes(&self) -> Result<Vec<u8>, Error> {
        decode(&self.payload).ok_or(Error::Payload)
    }

    /// The bytes a signature covers ([`pae`] of the payload type and the payload).
    ///
    /// # Errors
    ///
    /// As [`Self::payload_bytes`].
    pub fn pae(&self) -> Result<Vec<u8>, Error> {
        Ok(pae(&self.payload_type, &self.payload_bytes()?))
    }

    /// The envelope as one line of JSON (sorted keys, no newline).
    pub fn to_line(&self) -> String {
        let value = serde_json::to_value(self).expect("an envelope serialises");
        String::from_utf8(canonical_json(&value)).expect("canonical JSON is UTF-8")
    }
}

/// DSSE's pre-authentication encoding: `DSSEv1 SP len(type) SP type SP len(body) SP body`, the
/// lengths in ASCII decimal.
///
/// ```
/// assert_eq!(hpp_core::intoto::pae("t", b"hi"), b"DSSEv1 1 t 2 hi");
/// ```
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// Standard base64 with padding, as DSSE writes it.
pub fn encode(bytes: &[u8]) -> String {
    Base64::encode_string(bytes)
}

/// Reads standard base64 (padded); `None` when it is not.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    Base64::decode_vec(text.trim()).ok()
}

/// The in-toto digest name of a git object of `kind` (`tree`, `commit`): `gitTree`,
/// `gitCommit`.
fn git_digest(kind: &str, id: &str) -> Value {
    let name = match kind {
        "tree" => "gitTree",
        _ => "gitCommit",
    };
    json!({ "name": kind, "digest": { name: id } })
}

/// The gitoid URI of a git tree (`gitoid:tree:sha1:<id>`, `sha256` for 64-digit ids).
fn gitoid_tree(tree: &str) -> String {
    let hash = if tree.len() == 64 { "sha256" } else { "sha1" };
    format!("gitoid:tree:{hash}:{tree}")
}

/// What an attestation's statement is built from.
#[derive(Debug, Clone, Copy)]
pub struct AttestationFacts<'a> {
    /// The record.
    pub record: &'a Record,
    /// The bytes stored (and signed) for it.
    pub record_bytes: &'a [u8],
    /// The ref it is stored at.
    pub record_ref: &'a str,
    /// The commit whose tree is the attested one, named as a second subject.
    pub commit: Option<&'a str>,
}

/// The result of an attestation's verdict: `PASSED` for approved, `FAILED` otherwise.
pub fn verdict_result(verdict: attestation::Verdict) -> &'static str {
    match verdict {
        attestation::Verdict::Approved => PASSED,
        attestation::Verdict::Revise | attestation::Verdict::Blocked => FAILED,
    }
}

/// The SLSA verification summary statement of an attestation ([`AttestationFacts`]).
///
/// `verifiedLevels` holds no SLSA level (hpp checks no SLSA track) but the verdict as a custom
/// value (`HPP_VERDICT_APPROVED`, ...), after `FAILED` when it failed, as the VSA spec asks.
pub fn attestation_statement(facts: AttestationFacts<'_>) -> Value {
    let rec = facts.record;
    let result = verdict_result(rec.verdict);
    let mut subject = vec![git_digest("tree", &rec.snapshot.tree)];
    if let Some(commit) = facts.commit {
        subject.push(git_digest("commit", commit));
    }
    let own = format!("HPP_VERDICT_{}", rec.verdict.as_str().to_uppercase());
    let levels: Vec<&str> = if result == PASSED {
        vec![&own]
    } else {
        vec![FAILED, &own]
    };
    json!({
        "_type": STATEMENT_TYPE,
        "subject": subject,
        "predicateType": VSA_PREDICATE,
        "predicate": {
            "verifier": { "id": format!("{VERIFIER_PREFIX}{}", rec.actors.checker) },
            "timeVerified": rec.created_at,
            "resourceUri": gitoid_tree(&rec.snapshot.tree),
            "policy": {
                "name": rec.spec.path,
                "uri": rec.spec.path,
                "digest": { "sha256": rec.spec.sha256, "gitBlob": rec.spec.blob },
            },
            "inputAttestations": [{
                "name": attestation::RECORD_FILE,
                "uri": facts.record_ref,
                "mediaType": "application/json",
                "digest": { "sha256": sha256_hex(facts.record_bytes) },
            }],
            "verificationResult": result,
            "verifiedLevels": levels,
            "slsaVersion": "1.0",
        },
    })
}

/// The in-toto test result statement of a sealed evidence bundle.
///
/// # Errors
///
/// [`Error::Unstatable`] for a bundle recorded before bundles carried the tree they ran on:
/// it has no subject.
pub fn evidence_statement(bundle: &Bundle) -> Result<Value, Error> {
    let Some(snapshot) = &bundle.snapshot else {
        return Err(Error::Unstatable(format!(
            "bundle {} was recorded before bundles carried the tree they ran on: it has no subject to state",
            bundle
                .record_ref
                .as_deref()
                .unwrap_or(&bundle.id.to_string())
        )));
    };
    let passed = bundle.verdict == evidence::Verdict::Passed;
    let id = bundle.id.to_string();
    let argv = Value::from(bundle.command.clone());
    let (passed_tests, failed_tests): (Vec<&str>, Vec<&str>) = if passed {
        (vec![&id], vec![])
    } else {
        (vec![], vec![&id])
    };
    Ok(json!({
        "_type": STATEMENT_TYPE,
        "subject": [git_digest("tree", &snapshot.tree)],
        "predicateType": TEST_RESULT_PREDICATE,
        "predicate": {
            "result": if passed { PASSED } else { FAILED },
            "configuration": [{
                "name": "command",
                "mediaType": "application/json",
                "content": encode(&canonical_json(&argv)),
                "annotations": { "argv": argv },
            }],
            "passedTests": passed_tests,
            "warnedTests": [],
            "failedTests": failed_tests,
        },
    }))
}

/// The payload bytes of a statement: its canonical JSON.
pub fn statement_bytes(statement: &Value) -> Vec<u8> {
    canonical_json(statement)
}

/// Reads a payload as a Statement v1 of `predicate_type`.
///
/// # Errors
///
/// [`Error::Statement`] naming what is wrong.
pub fn read_statement(payload: &[u8], predicate_type: &str) -> Result<Value, Error> {
    let statement: Value =
        serde_json::from_slice(payload).map_err(|e| Error::Statement(format!("not JSON ({e})")))?;
    let field = |key: &str| statement.get(key).and_then(Value::as_str);
    if field("_type") != Some(STATEMENT_TYPE) {
        return Err(Error::Statement(format!(
            "_type is {:?}, not {STATEMENT_TYPE:?}",
            field("_type").unwrap_or_default()
        )));
    }
    if field("predicateType") != Some(predicate_type) {
        return Err(Error::Statement(format!(
            "predicateType is {:?}, not {predicate_type:?}",
            field("predicateType").unwrap_or_default()
        )));
    }
    Ok(statement)
}

/// The digests of `name` (`gitTree`, `gitCommit`) a statement's subjects carry, in order.
pub fn subject_digests(statement: &Value, name: &str) -> Vec<String> {
    statement
        .get("subject")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("digest")?.get(name)?.as_str().map(str::to_owned))
        .collect()
}

/// An in-toto test result, read as the facts of an evidence bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestResult {
    /// The tree the tests ran on (the statement's one `gitTree` subject).
    pub tree: String,
    /// `PASSED`, `WARNED` or `FAILED`, as the statement says.
    pub result: String,
    /// The command, when the configuration carries one as hpp writes it (a descriptor named
    /// `command` whose `content` is a JSON array of strings); else the configuration's URIs or
    /// names after `in-toto:test-result`.
    pub command: Vec<String>,
}

impl TestResult {
    /// Tells whether the tests passed (`WARNED` is not `PASSED`).
    pub fn passed(&self) -> bool {
        self.result == PASSED
    }
}

/// Reads a test-result statement's payload.
///
/// # Errors
///
/// [`Error::Statement`] when it is not a test result with one tree and a result.
pub fn read_test_result(payload: &[u8]) -> Result<TestResult, Error> {
    let statement = read_statement(payload, TEST_RESULT_PREDICATE)?;
    let mut trees = subject_digests(&statement, "gitTree");
    trees.sort();
    trees.dedup();
    let tree = match trees.as_slice() {
        [tree] if crate::evidence::is_object_id(tree) => tree.clone(),
        [other] => {
            return Err(Error::Statement(format!(
                "the gitTree subject {other:?} is not a git object id"
            )));
        }
        [] => {
            return Err(Error::Statement(
                "no subject names a git tree (digest gitTree): an evidence bundle is evidence of one tree".into(),
            ));
        }
        more => {
            return Err(Error::Statement(format!(
                "the subjects name {} trees: an evidence bundle is evidence of one tree",
                more.len()
            )));
        }
    };
    let predicate = statement.get("predicate").cloned().unwrap_or(Value::Null);
    let result = predicate
        .get("result")
        .and_then(Value::as_str)
        .filter(|r| matches!(*r, "PASSED" | "WARNED" | "FAILED"))
        .ok_or_else(|| Error::Statement("predicate.result is not PASSED, WARNED or FAILED".into()))?
        .to_owned();
    let configuration = predicate
        .get("configuration")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let argv = configuration.iter().find_map(|d| {
        if d.get("name").and_then(Value::as_str) != Some("command") {
            return None;
        }
        let bytes = decode(d.get("content")?.as_str()?)?;
        let argv: Vec<String> = serde_json::from_slice(&bytes).ok()?;
        (!argv.is_empty() && !argv[0].is_empty()).then_some(argv)
    });
    let command = argv.unwrap_or_else(|| {
        let mut command = vec!["in-toto:test-result".to_owned()];
        command.extend(configuration.iter().filter_map(|d| {
            d.get("uri")
                .or_else(|| d.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        }));
        command
    });
    Ok(TestResult {
        tree,
        result,
        command,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attestation::{Actors, Repo, Snapshot, Spec, Verdict};

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    fn record(verdict: Verdict) -> Record {
        Record {
            schema: attestation::SCHEMA.into(),
            repo: Repo {
                roots: vec![COMMIT.into()],
            },
            base_commit: Some(COMMIT.into()),
            spec: Spec {
                path: "SPEC.md".into(),
                sha256: "a".repeat(64),
                blob: "b".repeat(40),
            },
            actors: Actors {
                maker: "maker-a".into(),
                checker: "checker-b".into(),
            },
            session: "s1".into(),
            verdict,
            snapshot: Snapshot { tree: TREE.into() },
            evidence: vec![],
            created_at: "2025-06-01T12:00:00.5Z".into(),
            signer: None,
            deliberation: None,
        }
    }

    fn facts(rec: &Record) -> Value {
        attestation_statement(AttestationFacts {
            record: rec,
            record_bytes: b"{}",
            record_ref: "refs/hpp/attestations/t/x",
            commit: Some(COMMIT),
        })
    }

    #[test]
    fn pae_follows_the_dsse_spec() {
        // The example of the DSSE protocol document.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        assert_eq!(pae("", b""), b"DSSEv1 0  0 ");
    }

    #[test]
    fn an_approval_is_a_passed_summary_of_tree_and_commit() {
        let statement = facts(&record(Verdict::Approved));
        assert_eq!(statement["_type"], STATEMENT_TYPE);
        assert_eq!(statement["predicateType"], VSA_PREDICATE);
        assert_eq!(subject_digests(&statement, "gitTree"), [TREE]);
        assert_eq!(subject_digests(&statement, "gitCommit"), [COMMIT]);
        let predicate = &statement["predicate"];
        assert_eq!(predicate["verificationResult"], PASSED);
        assert_eq!(predicate["verifier"]["id"], "git-hpp:checker/checker-b");
        assert_eq!(predicate["policy"]["digest"]["sha256"], "a".repeat(64));
        assert_eq!(predicate["timeVerified"], "2025-06-01T12:00:00.5Z");
        assert_eq!(
            predicate["inputAttestations"][0]["uri"],
            "refs/hpp/attestations/t/x"
        );
        assert_eq!(
            predicate["inputAttestations"][0]["digest"]["sha256"],
            sha256_hex(b"{}")
        );
        assert_eq!(predicate["verifiedLevels"], json!(["HPP_VERDICT_APPROVED"]));
        assert_eq!(predicate["resourceUri"], format!("gitoid:tree:sha1:{TREE}"));
    }

    #[test]
    fn control_blocked_and_revise_are_failed() {
        for verdict in [Verdict::Blocked, Verdict::Revise] {
            let statement = facts(&record(verdict));
            assert_eq!(statement["predicate"]["verificationResult"], FAILED);
            assert_eq!(statement["predicate"]["verifiedLevels"][0], FAILED);
        }
    }

    #[test]
    fn without_a_commit_the_tree_is_the_only_subject() {
        let rec = record(Verdict::Approved);
        let statement = attestation_statement(AttestationFacts {
            record: &rec,
            record_bytes: b"{}",
            record_ref: "r",
            commit: None,
        });
        assert_eq!(statement["subject"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn an_envelope_round_trips_and_refuses_other_payload_types() {
        let payload = statement_bytes(&facts(&record(Verdict::Approved)));
        let envelope = Envelope::unsigned(&payload);
        let line = envelope.to_line();
        assert!(!line.contains('\n'));
        let back = Envelope::parse(line.as_bytes()).expect("parses back");
        assert_eq!(back.payload_bytes().expect("base64"), payload);
        assert_eq!(back.pae().expect("base64"), pae(PAYLOAD_TYPE, &payload));
        let other = line.replace(PAYLOAD_TYPE, "text/plain");
        assert!(matches!(
            Envelope::parse(other.as_bytes()),
            Err(Error::PayloadType(_))
        ));
        assert!(Envelope::parse(b"{}").is_err());
    }

    fn test_result(result: &str, subjects: Value, configuration: Value) -> Vec<u8> {
        statement_bytes(&json!({
            "_type": STATEMENT_TYPE,
            "subject": subjects,
            "predicateType": TEST_RESULT_PREDICATE,
            "predicate": {"result": result, "configuration": configuration},
        }))
    }

    #[test]
    fn a_test_result_reads_back_its_tree_result_and_command() {
        let argv = json!(["cargo", "test"]);
        let bytes = test_result(
            "PASSED",
            json!([{"name": "tree", "digest": {"gitTree": TREE}}, {"digest": {"gitCommit": COMMIT}}]),
            json!([{"name": "command", "content": encode(&canonical_json(&argv))}]),
        );
        let read = read_test_result(&bytes).expect("a test result");
        assert_eq!(read.tree, TREE);
        assert!(read.passed());
        assert_eq!(read.command, ["cargo", "test"]);
        // A CI's own configuration is named by its URIs.
        let bytes = test_result(
            "WARNED",
            json!([{"digest": {"gitTree": TREE}}]),
            json!([{"uri": "https://ci.example/workflow.yml", "digest": {"sha256": "00"}}]),
        );
        let read = read_test_result(&bytes).expect("a test result");
        assert!(!read.passed(), "WARNED is not PASSED");
        assert_eq!(
            read.command,
            ["in-toto:test-result", "https://ci.example/workflow.yml"]
        );
    }

    #[test]
    fn control_a_test_result_without_one_tree_is_refused() {
        let none = test_result("PASSED", json!([{"digest": {"sha256": "00"}}]), json!([]));
        assert!(read_test_result(&none).is_err());
        let two = test_result(
            "PASSED",
            json!([{"digest": {"gitTree": TREE}}, {"digest": {"gitTree": COMMIT}}]),
            json!([]),
        );
        assert!(read_test_result(&two).is_err());
        let bad = test_result("MAYBE", json!([{"digest": {"gitTree": TREE}}]), json!([]));
        assert!(read_test_result(&bad).is_err());
        let vsa = statement_bytes(&facts(&record(Verdict::Approved)));
        assert!(
            read_test_result(&vsa).is_err(),
            "a summary is no test result"
        );
    }
}
