//! Evidence bundles: commands that really ran, recorded under `refs/hpp/evidence/`.
//!
//! CONCEPTS.md "evidence" and "evidence bundle": a criterion command is run as an argv (never
//! through a shell) in its own process group, killed whole at its timeout, and the run becomes
//! an `hpp.evidence/v1` record with the reference's fields: the command, HEAD as
//! `base_commit`, timings, exit code, verdict, digests of stdout and stderr, the artifacts this
//! run created or changed (path, size, sha256 and git blob id), the patterns that produced
//! nothing, and a self-hash. The record is one commit at `refs/hpp/evidence/<id>-<stamp>[-N]`
//! whose tree holds `record.json`, `record.sig` when signed, and `artifacts/<path>` when the
//! artifacts' bytes are kept, so a reviewer can inspect them from a clone.

pub mod artifacts;
pub mod export;
pub mod import;
pub mod intoto;
pub mod mutate;

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use crate::process;
use crate::sign::{self, AllowedSigners, SignatureReport, Signing};
use hpp_core::evidence::{
    self as bundle, ARTIFACTS_DIR, ArtifactFile, ArtifactGroup, Bundle, ENVELOPE_FILE, EvidenceId,
    Measured, RECORD_FILE, SCHEMA, SIGNATURE_FILE, Status, Verdict,
};
use hpp_core::record::sha256_hex;
use hpp_core::secrets;
use hpp_store::refs;
use hpp_store::{self as store, Content, Store};

/// Why an evidence operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command is empty.
    #[error("evidence run needs a command after --")]
    EmptyCommand,
    /// The command line carries something secret-shaped.
    #[error(
        "the command line looks like it carries a secret; pass it through the environment instead"
    )]
    Secret,
    /// A bad artifact pattern.
    #[error(transparent)]
    Artifact(#[from] artifacts::Error),
    /// A bad timeout.
    #[error("timeout must be a positive, finite number of seconds, at most 86400")]
    Timeout,
    /// A kept artifact looks like it holds a secret (the shape, never the value).
    #[error(
        "artifact {path} looks like it holds {shape}: --keep-artifacts would store it in a record that is pushed; nothing was recorded"
    )]
    SecretArtifact {
        /// The artifact.
        path: String,
        /// The shape found.
        shape: &'static str,
    },
    /// A name looks like a secret.
    #[error(transparent)]
    SecretName(#[from] secrets::SecretName),
    /// A bare repository has no workspace.
    #[error("evidence needs a worktree: this repository is bare")]
    Bare,
    /// No bundle by that name.
    #[error("no evidence bundle named {0}")]
    NotFound(String),
    /// The runner failed in a way that is not a verdict.
    #[error("running the command failed: {0}")]
    Process(#[source] process::Error),
    /// Signing failed.
    #[error(transparent)]
    Sign(#[from] sign::Error),
    /// A bundle's in-toto envelope cannot be read or made.
    #[error("{record}: {why}")]
    Intoto {
        /// The bundle.
        record: String,
        /// Why.
        why: String,
    },
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A request to run a criterion command and record it.
pub struct RunRequest {
    /// The bundle's id.
    pub id: EvidenceId,
    /// The command, as an argv.
    pub command: Vec<String>,
    /// Artifact patterns, relative to the worktree root.
    pub artifacts: Vec<String>,
    /// Seconds before the process group is killed.
    pub timeout_s: f64,
    /// Store the artifacts' bytes in the record.
    pub keep_artifacts: bool,
    /// Sign the record.
    pub signing: Option<Signing>,
    /// Where the criterion's output is shown as it runs (nothing when `None`).
    pub echo: Option<process::Echo>,
}

/// What a run recorded.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutcome {
    /// The record, as stored (with `record_ref` and `record_sha256`).
    pub record: Bundle,
    /// The ref it was stored at.
    pub record_ref: String,
}

/// The record's `started_at` and the stamp its ref name carries.
fn utc_stamp(now: OffsetDateTime) -> (String, String) {
    (
        hpp_core::timestamp::utc_seconds(now),
        hpp_core::timestamp::compact(now),
    )
}

/// Runs the criterion command and records the bundle. Everything that can be refused is refused
/// before the command starts.
pub fn run(store: &Store, request: RunRequest) -> Result<RunOutcome, Error> {
    // The first snapshot's index is read while the request is checked.
    let index = store.read_index_ahead();
    let (timeout, patterns) = check(&request)?;
    let root = store.workdir().ok_or(Error::Bare)?.to_path_buf();
    artifacts::check_resolved(&root, &patterns)?;
    let before = artifacts::stamp(&root, &patterns);
    let base_commit = store.head_commit()?;
    // The tree the run starts on; the one it leaves differs when it wrote files git does not
    // ignore, and the evidence is fresh for either.
    let _ = index.join();
    let tree_before = store.snapshot()?;
    let (started_at, stamp) = utc_stamp(OffsetDateTime::now_utc());
    let clock = std::time::Instant::now();
    let finished = match process::run_bounded_echo(
        &process::Request {
            argv: &request.command,
            cwd: &root,
            timeout,
            stdin: None,
            env: &[],
        },
        request.echo.clone(),
    ) {
        Ok(finished) => Some(finished),
        Err(process::Error::CouldNotStart { .. }) => None,
        Err(e) => return Err(Error::Process(e)),
    };
    let duration = finished
        .as_ref()
        .map_or_else(|| clock.elapsed(), |f| f.duration);
    let (groups, kept) = collect_artifacts(store, &root, &patterns, &before, &request);
    if let Some((path, shape)) = kept
        .iter()
        .find_map(|(path, bytes)| hpp_core::secrets::shape_in_file(bytes).map(|s| (path, s)))
    {
        return Err(Error::SecretArtifact {
            path: path.clone(),
            shape,
        });
    }
    let tree_after = store.snapshot()?;
    let record = Bundle::assemble(Measured {
        id: request.id.clone(),
        command: request.command.clone(),
        base_commit: base_commit.map(|c| c.to_string()),
        started_at,
        timeout_s: request.timeout_s,
        finished: finished.as_ref(),
        duration,
        artifacts: groups,
        kept_artifacts: request.keep_artifacts,
        snapshot: Some(bundle::Snapshot {
            tree: tree_before.to_string(),
            after: tree_after.to_string(),
        }),
        signer: request
            .signing
            .as_ref()
            .map(|s| s.signer.as_str().to_owned()),
    });
    let (record_ref, record) = store_record(
        store,
        &request.id,
        request.signing.as_ref(),
        &stamp,
        record,
        &kept,
    )?;
    Ok(RunOutcome { record, record_ref })
}

/// Refuses a request before anything runs: an empty or secret-shaped command, a bad timeout, a
/// bad artifact pattern, an event asked for without an artifact. Returns the timeout and the
/// patterns.
fn check(request: &RunRequest) -> Result<(std::time::Duration, Vec<artifacts::Pattern>), Error> {
    if request.command.is_empty() || request.command[0].is_empty() {
        return Err(Error::EmptyCommand);
    }
    if secrets::command_line_carries_secret(&request.command) {
        return Err(Error::Secret);
    }
    secrets::check_name("the evidence id", &request.id.to_string())?;
    let timeout = process::valid_timeout(request.timeout_s).map_err(|_| Error::Timeout)?;
    let patterns = artifacts::parse(&request.artifacts)?;
    Ok((timeout, patterns))
}

/// Finds, per pattern, the files the run created or changed (the others are `unchanged`), and
/// the bytes to keep when the request keeps them (each path once).
fn collect_artifacts(
    store: &Store,
    root: &Path,
    patterns: &[artifacts::Pattern],
    before: &std::collections::BTreeMap<String, artifacts::Stamp>,
    request: &RunRequest,
) -> (Vec<ArtifactGroup>, Vec<(String, Vec<u8>)>) {
    let mut groups = Vec::new();
    let mut kept: Vec<(String, Vec<u8>)> = Vec::new();
    for pattern in patterns {
        let mut files = Vec::new();
        let mut unchanged = Vec::new();
        for (path, stamp) in artifacts::matching(root, pattern) {
            if before.get(&path) == Some(&stamp) {
                unchanged.push(path);
                continue;
            }
            if request.keep_artifacts {
                // Kept: its bytes go into the record's tree.
                let Ok(bytes) = std::fs::read(root.join(&path)) else {
                    continue;
                };
                files.push(ArtifactFile {
                    path: path.clone(),
                    size: bytes.len() as u64,
                    sha256: sha256_hex(&bytes),
                    blob: store.blob_id(&bytes),
                });
                if !kept.iter().any(|(p, _)| *p == path) {
                    kept.push((path, bytes));
                }
                continue;
            }
            // Named only: its size and hashes, read in pieces (a build's output can be big).
            let Ok((size, sha256, blob)) = digest(store, &root.join(&path)) else {
                continue;
            };
            files.push(ArtifactFile {
                path: path.clone(),
                size,
                sha256,
                blob,
            });
        }
        groups.push(ArtifactGroup {
            pattern: pattern.given.clone(),
            files,
            unchanged,
        });
    }
    (groups, kept)
}

/// A reader that hashes with sha256 what passes through it.
struct Sha256Reader<R> {
    inner: R,
    hasher: sha2::Sha256,
}

impl<R: std::io::Read> std::io::Read for Sha256Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        sha2::Digest::update(&mut self.hasher, &buf[..n]);
        Ok(n)
    }
}

/// The size, sha256 and git blob id of the file at `path`, read once, in pieces: memory stays
/// bounded whatever the file's size.
fn digest(store: &Store, path: &Path) -> std::io::Result<(u64, String, String)> {
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut reader = Sha256Reader {
        inner: file,
        hasher: <sha2::Sha256 as sha2::Digest>::new(),
    };
    let blob = store.blob_id_of_reader(&mut reader, size)?;
    let sha = sha2::Digest::finalize(reader.hasher);
    Ok((size, hpp_core::record::hex(&sha), blob))
}

/// The sha256 of the file at `path`, read in pieces.
fn sha256_of(path: &Path) -> std::io::Result<String> {
    let mut reader = Sha256Reader {
        inner: std::fs::File::open(path)?,
        hasher: <sha2::Sha256 as sha2::Digest>::new(),
    };
    std::io::copy(&mut reader, &mut std::io::sink())?;
    Ok(hpp_core::record::hex(&sha2::Digest::finalize(
        reader.hasher,
    )))
}

/// A criterion run made elsewhere than the workspace: `hop check` and `hop land -- CMD` run
/// their command in a disposable worktree of the exact tree they test.
pub struct ExternalRun<'a> {
    /// The bundle's id.
    pub id: EvidenceId,
    /// The command, as an argv.
    pub command: &'a [String],
    /// The commit the tested tree was checked out from.
    pub base_commit: Option<String>,
    /// When the run started.
    pub started_at: OffsetDateTime,
    /// The timeout it was given, in seconds.
    pub timeout_s: f64,
    /// The run; `None` when the program could not be started.
    pub finished: Option<&'a hpp_core::run::Finished>,
    /// How long it took.
    pub duration: std::time::Duration,
    /// The tree it ran on and the tree it left.
    pub snapshot: bundle::Snapshot,
    /// The key to sign the record with, when it is signed.
    pub signing: Option<&'a Signing>,
}

/// Records an [`ExternalRun`] as an `hpp.evidence/v1` bundle under `refs/hpp/evidence/`, like
/// `evidence run` does for a run in the workspace (no artifacts: the worktree it ran in is
/// gone). Returns its ref and record.
pub fn record_external(store: &Store, run: ExternalRun<'_>) -> Result<(String, Bundle), Error> {
    secrets::check_name("the evidence id", &run.id.to_string())?;
    let (started_at, stamp) = utc_stamp(run.started_at);
    let record = Bundle::assemble(Measured {
        id: run.id.clone(),
        command: run.command.to_vec(),
        base_commit: run.base_commit,
        started_at,
        timeout_s: run.timeout_s,
        finished: run.finished,
        duration: run.duration,
        artifacts: Vec::new(),
        kept_artifacts: false,
        snapshot: Some(run.snapshot),
        signer: run.signing.map(|s| s.signer.as_str().to_owned()),
    });
    store_record(store, &run.id, run.signing, &stamp, record, &[])
}

/// Writes the record under the first free `<id>-<stamp>[-N]` name.
fn store_record(
    store: &Store,
    id: &EvidenceId,
    signing: Option<&Signing>,
    stamp: &str,
    mut record: Bundle,
    kept: &[(String, Vec<u8>)],
) -> Result<(String, Bundle), Error> {
    let mut sealed = None;
    let record_ref =
        store.create_first_free(&format!("{id}-{stamp}"), refs::evidence, |record_ref| {
            let bytes = record.seal(record_ref.to_owned());
            let mut entries: Vec<(String, Content)> =
                vec![(RECORD_FILE.into(), Content::Bytes(bytes.clone()))];
            if let Some(signing) = signing {
                let armored = signing.sign(&bytes)?;
                entries.push((SIGNATURE_FILE.into(), Content::Bytes(armored.into_bytes())));
                // The same run as an in-toto test result, signed with the same key now; a
                // bundle with no tree has no subject to state.
                if let Ok(statement) = hpp_core::intoto::evidence_statement(&record)
                    && let Some(envelope) =
                        signing.envelope(&hpp_core::intoto::statement_bytes(&statement))?
                {
                    entries.push((
                        ENVELOPE_FILE.into(),
                        Content::Bytes(envelope.to_line().into_bytes()),
                    ));
                }
            }
            for (path, data) in kept {
                entries.push((
                    format!("{ARTIFACTS_DIR}/{path}"),
                    Content::Bytes(data.clone()),
                ));
            }
            let name = record_ref
                .strip_prefix(refs::EVIDENCE_PREFIX)
                .unwrap_or(record_ref);
            let message = format!("hpp evidence {name}: {}", record.verdict);
            sealed = Some(record.clone());
            Ok::<_, Error>((entries, message))
        })?;
    Ok((record_ref, sealed.expect("a created record was built")))
}

/// Finds a bundle's ref: a full `refs/...` name, an exact bundle name, or the newest bundle of
/// an id.
pub fn resolve(store: &Store, name: &str) -> Result<String, Error> {
    if name.starts_with("refs/") {
        return store
            .tip(name)?
            .map(|_| name.to_owned())
            .ok_or_else(|| Error::NotFound(name.to_owned()));
    }
    let all = store.list(refs::EVIDENCE_PREFIX)?;
    if let Some((full, _)) = all
        .iter()
        .find(|(full, _)| full.strip_prefix(refs::EVIDENCE_PREFIX) == Some(name))
    {
        return Ok(full.clone());
    }
    all.into_iter()
        .map(|(full, _)| full)
        .filter_map(|full| {
            let key = full
                .strip_prefix(refs::EVIDENCE_PREFIX)
                .and_then(|rest| rest.strip_prefix(name))
                .and_then(|rest| rest.strip_prefix('-'))
                .and_then(stamp_order)?;
            Some((key, full))
        })
        .max()
        .map(|(_, full)| full)
        .ok_or_else(|| Error::NotFound(name.to_owned()))
}

/// Orders `<stamp>[-N]` suffixes by time, then by counter as a number (`-10` after `-9`).
fn stamp_order(rest: &str) -> Option<(String, u64)> {
    if !is_stamp_suffix(rest) {
        return None;
    }
    let (stamp, n) = rest.split_once('-').map_or((rest, "1"), |(s, n)| (s, n));
    Some((stamp.to_owned(), n.parse().ok()?))
}

/// Orders a bundle name `<id>-<stamp>[-N]` by id, then time, then counter.
fn bundle_order(name: &str) -> (String, String, u64) {
    // The stamp is the first `-YYYYMMDDTHHMMSSZ` whose remainder parses as a stamp suffix.
    for (i, _) in name.match_indices('-') {
        if let Some((stamp, n)) = stamp_order(&name[i + 1..]) {
            return (name[..i].to_owned(), stamp, n);
        }
    }
    (name.to_owned(), String::new(), 0)
}

/// `YYYYMMDDTHHMMSSZ` optionally followed by `-N`.
fn is_stamp_suffix(rest: &str) -> bool {
    let (stamp, n) = rest
        .split_once('-')
        .map_or((rest, None), |(s, n)| (s, Some(n)));
    let b = stamp.as_bytes();
    b.len() == 16
        && b[8] == b'T'
        && b[15] == b'Z'
        && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit)
        && n.is_none_or(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// How artifacts are compared at verification.
#[derive(Debug, Clone, Copy)]
pub enum ArtifactCheck<'a> {
    /// Against the files in this workspace now (kept bytes, when present, are checked too).
    Workspace(&'a Path),
    /// Only against the bytes kept in the record (verification from a clone).
    RecordOnly,
}

/// The report of `evidence verify`.
#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    /// `valid`, `not-evidence` or `blocked`.
    pub status: Status,
    /// The bundle's id.
    pub id: Option<String>,
    /// The ref verified.
    #[serde(rename = "ref")]
    pub record_ref: String,
    /// The recorded verdict.
    pub verdict: Option<String>,
    /// The recorded HEAD.
    pub base_commit: Option<String>,
    /// Everything wrong, in sentences.
    pub problems: Vec<String>,
    /// Artifacts whose bytes differ from the record.
    pub changed: Vec<String>,
    /// Artifacts that are gone.
    pub missing: Vec<String>,
    /// The signature check.
    pub signature: SignatureReport,
    /// The record's self-hash, as recomputed.
    pub record_sha256: Option<String>,
    /// The workspace trees the run saw, when the record names them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<bundle::Snapshot>,
}

/// Verifies an `hpp.evidence/v1` record file against the workspace at `root`: its self-hash,
/// its consistency, its artifacts' bytes now, and a passed verdict. Returns `valid`,
/// `not-evidence` or `blocked`.
pub fn verify_record_file(root: &Path, record: &Value) -> Status {
    let Some(map) = record
        .as_object()
        .filter(|m| m.get("schema").and_then(Value::as_str) == Some(bundle::SCHEMA))
    else {
        return Status::NotEvidence;
    };
    let sealed = map.get("record_sha256").and_then(Value::as_str) == Some(&bundle::self_hash(map));
    let passed = map
        .get("verdict")
        .and_then(Value::as_str)
        .and_then(Verdict::from_record)
        == Some(Verdict::Passed);
    if !sealed || !bundle::consistency_problems(map).is_empty() {
        return Status::Blocked;
    }
    if !passed {
        return Status::NotEvidence;
    }
    if artifacts_hold(root, map) {
        Status::Valid
    } else {
        Status::Blocked
    }
}

fn artifacts_hold(root: &Path, record: &Map<String, Value>) -> bool {
    record
        .get("artifacts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|group| group["files"].as_array().cloned().unwrap_or_default())
        .all(|file| {
            let path = file["path"].as_str().unwrap_or_default();
            bundle::is_inside(path)
                && sha256_of(&root.join(path))
                    .is_ok_and(|now| Some(now.as_str()) == file["sha256"].as_str())
        })
}

/// Re-derives a bundle: self-hash, consistency, artifacts now against then, signature.
pub fn verify(
    store: &Store,
    record_ref: &str,
    allowed: Option<&AllowedSigners>,
    check: ArtifactCheck<'_>,
) -> Result<Verification, Error> {
    let bytes = match store.read_file(record_ref, RECORD_FILE)? {
        Some(bytes) => bytes,
        // The ref exists but holds no record: that is not evidence, not a missing bundle.
        None if store.tip(record_ref)?.is_some() => Vec::new(),
        None => return Err(Error::NotFound(record_ref.to_owned())),
    };
    let sig = store.read_file(record_ref, SIGNATURE_FILE)?;
    let mut report = Verification {
        status: Status::Valid,
        id: None,
        record_ref: record_ref.to_owned(),
        verdict: None,
        base_commit: None,
        problems: Vec::new(),
        changed: Vec::new(),
        missing: Vec::new(),
        signature: sign::check(
            &bytes,
            sig.as_deref(),
            None,
            allowed,
            OffsetDateTime::now_utc(),
        ),
        record_sha256: None,
        snapshot: None,
    };
    // Read as JSON, not as a typed Bundle: the self-hash covers every key the record holds,
    // and an edited record must have each of its problems named, not be refused whole.
    let record = match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) if map.get("schema").and_then(Value::as_str) == Some(SCHEMA) => map,
        _ => {
            report.status = Status::NotEvidence;
            report
                .problems
                .push(format!("{RECORD_FILE} is not an {SCHEMA} record"));
            return Ok(report);
        }
    };
    let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
    report.id = text("id");
    report.verdict = text("verdict");
    report.base_commit = text("base_commit");
    report.signature = sign::check(
        &bytes,
        sig.as_deref(),
        text("signer").as_deref(),
        allowed,
        OffsetDateTime::now_utc(),
    );
    report.snapshot = bundle::Snapshot::of_record(&record).and_then(Result::ok);
    if let Some(stored) = store.read_file(record_ref, ENVELOPE_FILE)? {
        envelope_check(
            &mut report,
            &bytes,
            &stored,
            sig.as_deref(),
            text("signer").as_deref(),
            allowed,
        );
    }
    let hash = bundle::self_hash(&record);
    report.record_sha256 = Some(hash.clone());
    if text("record_sha256").as_deref() != Some(hash.as_str()) {
        report
            .problems
            .push("the record was edited after it was written".into());
    }
    // An imported reference record names the file it was written to instead (its
    // provenance, kept byte for byte): it is judged by the reference's rules, which have no ref.
    let imported = text("record_ref").is_none()
        && text("record_path").is_some()
        && store.read_file(record_ref, import::IMPORT_FILE)?.is_some();
    if !imported && text("record_ref").as_deref() != Some(record_ref) {
        report.problems.push(format!(
            "the record names {} but is stored at {record_ref}",
            text("record_ref").unwrap_or_default()
        ));
    }
    report
        .problems
        .extend(bundle::consistency_problems(&record));
    for group in record
        .get("artifacts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for file in group
            .get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let path = file.get("path").and_then(Value::as_str).unwrap_or_default();
            let sha = file
                .get("sha256")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let kept = store.read_file(record_ref, &format!("{ARTIFACTS_DIR}/{path}"))?;
            if let Some(kept) = &kept
                && sha256_hex(kept) != sha
            {
                report.changed.push(path.to_owned());
                continue;
            }
            match check {
                ArtifactCheck::Workspace(root) if bundle::is_inside(path) => {
                    match sha256_of(&root.join(path)) {
                        Ok(now) if now != sha => report.changed.push(path.to_owned()),
                        Ok(_) => {}
                        Err(_) if kept.is_some() => {}
                        Err(_) => report.missing.push(path.to_owned()),
                    }
                }
                ArtifactCheck::Workspace(_) => {}
                ArtifactCheck::RecordOnly => {}
            }
        }
    }
    if !report.changed.is_empty() {
        report.problems.push(format!(
            "{} artifact(s) changed since the run",
            report.changed.len()
        ));
    }
    if !report.missing.is_empty() {
        report.problems.push(format!(
            "{} artifact(s) missing since the run",
            report.missing.len()
        ));
    }
    if allowed.is_some() && !report.signature.is_verified() {
        report.problems.push(format!(
            "signature: {}",
            report.signature.detail.clone().unwrap_or_default()
        ));
    }
    let blocking = report.problems.len();
    if let Some(verdict) = &report.verdict
        && Verdict::from_record(verdict) != Some(Verdict::Passed)
    {
        report
            .problems
            .push(format!("the run did not pass (verdict: {verdict})"));
    }
    // An intact, consistent record of a run that did not pass is true about what happened but
    // is no evidence that the work is done: `not-evidence` (exit 1), as the reference says.
    // Anything that makes the record itself untrustworthy is `blocked`.
    report.status = if blocking > 0 {
        Status::Blocked
    } else if !report.problems.is_empty() {
        Status::NotEvidence
    } else {
        report.status
    };
    Ok(report)
}

/// Checks a bundle's in-toto envelope into `report`. Beside an SSHSIG it must be the same
/// key's signature over the statement built again from the record; with no SSHSIG (a test
/// result imported as evidence) it is the record's signature, by a principal the allowed
/// signers list, and its statement must say what the record says (the tree, passed or not).
fn envelope_check(
    report: &mut Verification,
    bytes: &[u8],
    stored: &[u8],
    sig: Option<&[u8]>,
    signer: Option<&str>,
    allowed: Option<&AllowedSigners>,
) {
    if let Some(armored) = sig {
        if report.signature.status == sign::SignatureStatus::Refused {
            return;
        }
        let stated = |_: &[u8]| {
            let bundle: Bundle = serde_json::from_slice(bytes).ok()?;
            hpp_core::intoto::evidence_statement(&bundle)
                .ok()
                .map(|s| hpp_core::intoto::statement_bytes(&s))
        };
        if let Err(why) = sign::dsse::check_beside(stored, armored, stated) {
            report.signature = SignatureReport::refused(signer, why);
        }
        return;
    }
    let envelope = match hpp_core::intoto::Envelope::parse(stored) {
        Ok(envelope) => envelope,
        Err(e) => {
            report.signature = SignatureReport::refused(
                signer,
                format!("the in-toto envelope cannot be read: {e}"),
            );
            return;
        }
    };
    report.signature =
        sign::dsse::check_signed(&envelope, signer, allowed, OffsetDateTime::now_utc());
    let said = envelope
        .payload_bytes()
        .ok()
        .and_then(|p| hpp_core::intoto::read_test_result(&p).ok());
    let holds = said.is_some_and(|t| {
        report.snapshot.as_ref().is_some_and(|s| s.tree == t.tree)
            && t.passed() == (report.verdict.as_deref() == Some(Verdict::Passed.as_str()))
    });
    if !holds {
        report.problems.push(
            "the record says something other than the in-toto test result it was imported from"
                .into(),
        );
    }
}

/// One bundle in a listing.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// The ref.
    #[serde(rename = "ref")]
    pub record_ref: String,
    /// The bundle's id.
    pub id: Option<String>,
    /// The recorded verdict.
    pub verdict: Option<String>,
    /// When the run started.
    pub started_at: Option<String>,
}

/// Lists every bundle, sorted by ref.
pub fn list(store: &Store) -> Result<Vec<Listed>, Error> {
    let mut out = Vec::new();
    for (name, _) in store.list(refs::EVIDENCE_PREFIX)? {
        let record = store
            .read_file(&name, RECORD_FILE)?
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        let field = |k: &str| {
            record
                .as_ref()
                .and_then(|r| r.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        out.push(Listed {
            id: field("id"),
            verdict: field("verdict"),
            started_at: field("started_at"),
            record_ref: name,
        });
    }
    out.sort_by_cached_key(|l| {
        bundle_order(
            l.record_ref
                .strip_prefix(refs::EVIDENCE_PREFIX)
                .unwrap_or(&l.record_ref),
        )
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_suffixes_are_recognised() {
        assert!(is_stamp_suffix("20261202T130000Z"));
        assert!(is_stamp_suffix("20261202T130000Z-12"));
    }

    #[test]
    fn counters_order_as_numbers_after_the_stamp() {
        let mut names = [
            "a-20261202T130000Z-10",
            "a-20261202T130000Z-9",
            "a-20261202T130000Z",
            "a-20261202T125959Z-3",
        ];
        names.sort_by_key(|n| bundle_order(n));
        assert_eq!(
            names,
            [
                "a-20261202T125959Z-3",
                "a-20261202T130000Z",
                "a-20261202T130000Z-9",
                "a-20261202T130000Z-10"
            ]
        );
        assert_eq!(
            bundle_order("smoke-page-20261202T130000Z-2"),
            ("smoke-page".into(), "20261202T130000Z".into(), 2)
        );
    }

    #[test]
    fn control_other_suffixes_are_not_stamps() {
        for bad in [
            "page-20261202T130000Z",
            "20261202T130000",
            "20261202T130000Z-",
            "20261202X130000Z",
        ] {
            assert!(!is_stamp_suffix(bad), "{bad}");
        }
    }
}
