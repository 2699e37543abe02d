//! The evidence bundle record, `hpp.evidence/v1`: its shape, its self-hash and the consistency
//! rules a verifier re-derives. Pure: no files, no processes, no git.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::record::{is_sha256_hex, sha256_hex};
use crate::run::Finished;

/// The schema name.
pub const SCHEMA: &str = "hpp.evidence/v1";

/// The record blob in an evidence commit's tree.
pub const RECORD_FILE: &str = "record.json";
/// The signature blob beside it (SSHSIG, namespace `hpp`, over the record's bytes).
pub const SIGNATURE_FILE: &str = "record.sig";
/// The in-toto envelope beside it: the record as an in-toto test result, DSSE-signed with the
/// same key at the same moment ([`crate::intoto`]); present only when a key file signed, or
/// when the bundle was imported from one.
pub const ENVELOPE_FILE: &str = "record.intoto.json";
/// Where kept artifact bytes live in the record's tree (`artifacts/<path>`).
pub const ARTIFACTS_DIR: &str = "artifacts";

/// The self-hash a bundle is sealed with, and the fields it leaves out: the rule every
/// self-hashed record shares, kept in [`crate::record`].
pub use crate::record::{UNHASHED, self_hash};

/// A validated evidence id: `^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EvidenceId(String);

impl TryFrom<String> for EvidenceId {
    type Error = InvalidEvidenceId;

    fn try_from(id: String) -> Result<Self, Self::Error> {
        id.parse()
    }
}

impl From<EvidenceId> for String {
    fn from(id: EvidenceId) -> Self {
        id.0
    }
}

/// Why an evidence id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "evidence id must be 1-80 characters of letters, digits, '.', '_' or '-', starting with a letter or digit"
)]
pub struct InvalidEvidenceId;

impl std::str::FromStr for EvidenceId {
    type Err = InvalidEvidenceId;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        let ok = id.len() <= 80
            && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
            && !id.ends_with(".lock")
            && !id.contains("..");
        if ok {
            Ok(Self(id.to_owned()))
        } else {
            Err(InvalidEvidenceId)
        }
    }
}

impl std::fmt::Display for EvidenceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What re-deriving a stored bundle found (the report of `evidence verify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Sealed, consistent, passed, and its artifacts still hold.
    Valid,
    /// Not an evidence bundle at all (another schema, or no record).
    NotEvidence,
    /// A bundle that does not hold: edited, inconsistent, not passed, or its artifacts changed.
    Blocked,
}

impl Status {
    /// Returns the report's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Valid => "valid",
            Self::NotEvidence => "not-evidence",
            Self::Blocked => "blocked",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Exit 0 and every artifact pattern has a new or changed file.
    Passed,
    /// A non-zero exit.
    Failed,
    /// Exit 0, but some pattern matched nothing new.
    MissingArtifacts,
    /// Killed at the timeout.
    Timeout,
    /// The program could not be started.
    CouldNotStart,
}

impl Verdict {
    /// Every verdict.
    pub const ALL: [Self; 5] = [
        Self::Passed,
        Self::Failed,
        Self::MissingArtifacts,
        Self::Timeout,
        Self::CouldNotStart,
    ];

    /// Returns the verdict a record spells exactly `text`, if any.
    pub fn from_record(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == text)
    }

    /// Returns the record's spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed => "failed",
            Verdict::MissingArtifacts => "missing-artifacts",
            Verdict::Timeout => "timeout",
            Verdict::CouldNotStart => "could-not-start",
        }
    }

    /// Derives the verdict from how the run ended and whether artifacts are missing.
    pub fn derive(
        could_not_start: bool,
        timed_out: bool,
        exit_code: Option<i32>,
        missing: bool,
    ) -> Self {
        match (could_not_start, timed_out, exit_code) {
            (true, _, _) => Verdict::CouldNotStart,
            (_, true, _) => Verdict::Timeout,
            (_, _, Some(0)) if missing => Verdict::MissingArtifacts,
            (_, _, Some(0)) => Verdict::Passed,
            _ => Verdict::Failed,
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An `hpp.evidence/v1` record, as `evidence run` writes it. `record_ref` and `record_sha256`
/// are set by [`Bundle::seal`] when the record is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The bundle's id.
    pub id: EvidenceId,
    /// The command, as an argv.
    pub command: Vec<String>,
    /// HEAD when the run started; `null` on an unborn branch.
    pub base_commit: Option<String>,
    /// When the run started, UTC, RFC 3339 to the second.
    pub started_at: String,
    /// How long it ran, in seconds, to the millisecond.
    pub duration_s: f64,
    /// The timeout it was given, in seconds.
    pub timeout_s: f64,
    /// Its exit code; `null` when it was killed, timed out or could not start.
    pub exit_code: Option<i32>,
    /// The verdict.
    pub verdict: Verdict,
    /// The digest of what it wrote on stdout.
    pub stdout: StreamDigest,
    /// The digest of what it wrote on stderr.
    pub stderr: StreamDigest,
    /// Per artifact pattern, the files this run created or changed.
    pub artifacts: Vec<ArtifactGroup>,
    /// The patterns that matched no new or changed file.
    pub missing: Vec<String>,
    /// Whether the artifacts' bytes are kept in the record's tree.
    pub kept_artifacts: bool,
    /// The workspace tree the run started on and the one it left; absent in bundles recorded
    /// before bundles carried it (the fresh-evidence gate refuses those).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Snapshot>,
    /// The end of what the run wrote, for a person to read why it failed; absent in bundles
    /// recorded before bundles kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<OutputTail>,
    /// The principal that signed the record; absent when it is unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// The ref the record is stored at (hashed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_ref: Option<String>,
    /// The self-hash ([`self_hash`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_sha256: Option<String>,
}

/// The workspace trees a run saw: `tree` when it started and `after` when it ended (they differ
/// when it wrote artifacts that are not ignored). Evidence is fresh for either tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The snapshot tree (tracked and untracked, not ignored files) before the run.
    pub tree: String,
    /// The snapshot tree after it.
    pub after: String,
}

impl Snapshot {
    /// Tells whether the run saw `tree`, at its start or its end.
    pub fn covers(&self, tree: &str) -> bool {
        self.tree == tree || self.after == tree
    }

    /// Reads the snapshot of a record read as JSON: `None` when it has none (a bundle recorded
    /// before bundles carried one), `Some(Err)` when it has one that is malformed.
    pub fn of_record(record: &Map<String, Value>) -> Option<Result<Self, String>> {
        let value = record.get("snapshot")?;
        Some(
            serde_json::from_value::<Self>(value.clone())
                .ok()
                .filter(|s| is_object_id(&s.tree) && is_object_id(&s.after))
                .ok_or_else(|| "the snapshot is not a pair of tree ids".to_owned()),
        )
    }
}

/// Tells whether `s` is a git object id in hex (SHA-1 or SHA-256).
pub fn is_object_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// How many characters of each stream a bundle keeps, at most.
pub const TAIL_CHARS: usize = 4000;

/// The last [`TAIL_CHARS`] characters of each stream a run wrote (decoded as UTF-8, invalid
/// sequences replaced), with every secret-shaped span replaced by `[REDACTED:<kind>:<len>]`
/// before it is stored (the gotcha memory's redaction). The digests still cover the whole
/// streams; the tail is for reading, hashed with the record like every other field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputTail {
    /// The end of stdout.
    pub stdout: String,
    /// The end of stderr.
    pub stderr: String,
    /// The bound each was cut to.
    pub max_chars: usize,
    /// The kinds of secret-shaped spans taken out, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
}

impl OutputTail {
    /// The tails of `stdout` and `stderr`.
    pub fn of(stdout: &[u8], stderr: &[u8]) -> Self {
        let out = crate::gotcha::redact(&tail(stdout, TAIL_CHARS));
        let err = crate::gotcha::redact(&tail(stderr, TAIL_CHARS));
        let mut redacted = out.kinds;
        redacted.extend(err.kinds);
        Self {
            stdout: out.text,
            stderr: err.text,
            max_chars: TAIL_CHARS,
            redacted,
        }
    }

    /// The last `lines` lines of the stream a person reads first when a run failed: stderr
    /// when it has anything, else stdout.
    pub fn last_lines(&self, lines: usize) -> Vec<&str> {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let all: Vec<&str> = text.trim_end().lines().collect();
        all[all.len().saturating_sub(lines)..].to_vec()
    }
}

/// The last `max_chars` characters of `bytes` as UTF-8 (lossy). Cut at a line start when one
/// is near, so the first line kept is whole.
fn tail(bytes: &[u8], max_chars: usize) -> String {
    // A character is at most four bytes: no need to decode more than that many.
    let from = bytes.len().saturating_sub(max_chars * 4);
    let text = String::from_utf8_lossy(&bytes[from..]);
    let count = text.chars().count();
    if count <= max_chars && from == 0 {
        return text.into_owned();
    }
    let kept: String = text.chars().skip(count.saturating_sub(max_chars)).collect();
    match kept.find('\n') {
        Some(newline) if newline < kept.len() / 4 => kept[newline + 1..].to_owned(),
        _ => kept,
    }
}

/// The size and sha256 of a captured stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamDigest {
    /// How many bytes.
    pub bytes: u64,
    /// Their sha256.
    pub sha256: String,
}

impl StreamDigest {
    /// Returns the digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            bytes: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        }
    }
}

/// One artifact pattern and what it matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactGroup {
    /// The pattern, as given.
    pub pattern: String,
    /// The files this run created or changed.
    pub files: Vec<ArtifactFile>,
    /// The files it matched that the run left as they were.
    pub unchanged: Vec<String>,
}

/// One artifact file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactFile {
    /// Its path, relative to the worktree root.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// The sha256 of its bytes.
    pub sha256: String,
    /// Its git blob id.
    pub blob: String,
}

/// What the application measured for one run, for [`Bundle::assemble`].
#[derive(Debug, Clone)]
pub struct Measured<'a> {
    /// The bundle's id.
    pub id: EvidenceId,
    /// The command, as an argv.
    pub command: Vec<String>,
    /// HEAD when the run started, if there is one.
    pub base_commit: Option<String>,
    /// When the run started, UTC, RFC 3339 to the second.
    pub started_at: String,
    /// The timeout it was given, in seconds.
    pub timeout_s: f64,
    /// The run; `None` when the program could not be started.
    pub finished: Option<&'a Finished>,
    /// How long it took (the run's own duration when it ran).
    pub duration: Duration,
    /// Per pattern, the files the run created or changed.
    pub artifacts: Vec<ArtifactGroup>,
    /// Whether the artifacts' bytes are kept.
    pub kept_artifacts: bool,
    /// The workspace trees before and after the run.
    pub snapshot: Option<Snapshot>,
    /// The principal that signs the record, when it is signed.
    pub signer: Option<String>,
}

impl Bundle {
    /// Assembles the record of a run: the patterns that matched nothing are `missing`, and the
    /// verdict is [`Verdict::derive`]d from how the run ended and whether any is.
    pub fn assemble(measured: Measured<'_>) -> Self {
        let missing: Vec<String> = measured
            .artifacts
            .iter()
            .filter(|group| group.files.is_empty())
            .map(|group| group.pattern.clone())
            .collect();
        let finished = measured.finished;
        let exit_code = finished.and_then(|f| f.exit_code);
        let verdict = Verdict::derive(
            finished.is_none(),
            finished.is_some_and(|f| f.timed_out),
            exit_code,
            !missing.is_empty(),
        );
        let (stdout, stderr): (&[u8], &[u8]) =
            finished.map_or((&[], &[]), |f| (&f.stdout, &f.stderr));
        Self {
            schema: SCHEMA.to_owned(),
            id: measured.id,
            command: measured.command,
            base_commit: measured.base_commit,
            started_at: measured.started_at,
            duration_s: (measured.duration.as_secs_f64() * 1000.0).round() / 1000.0,
            timeout_s: measured.timeout_s,
            exit_code,
            verdict,
            stdout: StreamDigest::of(stdout),
            stderr: StreamDigest::of(stderr),
            artifacts: measured.artifacts,
            missing,
            kept_artifacts: measured.kept_artifacts,
            snapshot: measured.snapshot,
            output_tail: finished.map(|f| OutputTail::of(&f.stdout, &f.stderr)),
            signer: measured.signer,
            record_ref: None,
            record_sha256: None,
        }
    }

    /// Names the ref the record is stored at, computes its self-hash over that, and returns the
    /// canonical bytes to store.
    pub fn seal(&mut self, record_ref: String) -> Vec<u8> {
        crate::record::seal(self, record_ref, |bundle| {
            (&mut bundle.record_ref, &mut bundle.record_sha256)
        })
    }
}

/// Returns the `{bytes, sha256}` digest of a captured stream, as JSON ([`StreamDigest::of`]).
pub fn stream_digest(bytes: &[u8]) -> Value {
    serde_json::to_value(StreamDigest::of(bytes)).expect("a digest serialises")
}

/// Checks that a record says one consistent thing: the verdict matches the exit code and the
/// missing list, artifact paths are relative and inside, digests are digests. Returns the
/// problems found (empty when consistent).
///
/// The record is the JSON read back from the store or a file, not a parsed [`Bundle`]: it may
/// have been edited or written by another tool, and each thing it gets wrong must be named,
/// where a typed parse would refuse it whole.
pub fn consistency_problems(record: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    let verdict = record
        .get("verdict")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let exit = record.get("exit_code");
    let exit_int = exit.and_then(Value::as_i64);
    let missing: Vec<&str> = record
        .get("missing")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_str).collect());
    let artifacts = record
        .get("artifacts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let typed = Verdict::from_record(verdict);
    let ok = match typed {
        Some(Verdict::Passed) => exit_int == Some(0) && missing.is_empty(),
        Some(Verdict::MissingArtifacts) => exit_int == Some(0) && !missing.is_empty(),
        Some(Verdict::Failed) => exit_int.is_some_and(|c| c != 0),
        Some(Verdict::Timeout | Verdict::CouldNotStart) => exit.is_none_or(Value::is_null),
        None => false,
    };
    if !ok {
        problems.push(format!(
            "verdict {verdict:?} does not match exit code {}",
            exit.map_or("absent".into(), Value::to_string)
        ));
    }
    let mut empty_patterns: Vec<&str> = Vec::new();
    for group in &artifacts {
        let pattern = group
            .get("pattern")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let files = group
            .get("files")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if files.is_empty() {
            empty_patterns.push(pattern);
        }
        for file in &files {
            let path = file.get("path").and_then(Value::as_str).unwrap_or_default();
            if !is_inside(path) {
                problems.push(format!(
                    "artifact path {path:?} is not inside the workspace"
                ));
            }
            if !file
                .get("sha256")
                .and_then(Value::as_str)
                .is_some_and(is_sha256_hex)
            {
                problems.push(format!("artifact {path:?} has no sha256 digest"));
            }
        }
    }
    if let Some(Err(problem)) = Snapshot::of_record(record) {
        problems.push(problem);
    }
    if matches!(typed, Some(Verdict::Passed | Verdict::MissingArtifacts))
        && empty_patterns != missing
    {
        problems.push("the missing list does not match the patterns that matched no file".into());
    }
    problems
}

/// Tells whether a relative path stays inside its root: not empty, not absolute, no `..`, no
/// drive letter.
pub fn is_inside(path: &str) -> bool {
    let absolute = path.starts_with('/') || path.starts_with('\\');
    let drive = path.len() >= 2 && path.as_bytes()[1] == b':';
    let climbs = path.split(['/', '\\']).any(|part| part == "..");
    !(path.is_empty() || absolute || drive || climbs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{canonical_json, to_object};
    use serde_json::json;

    #[test]
    fn a_tail_keeps_the_end_of_each_stream_redacted() {
        let mut long = String::new();
        for i in 0..2000 {
            long.push_str(&format!("line {i}\n"));
        }
        long.push_str("token ghp_0123456789abcdefghijABCDEFGHIJklmnopqr failed\n");
        let tail = OutputTail::of(long.as_bytes(), b"");
        assert!(tail.stdout.chars().count() <= TAIL_CHARS);
        assert!(tail.stdout.starts_with("line "), "cut at a line start");
        assert!(tail.stdout.contains("line 1999"));
        assert!(!tail.stdout.contains("ghp_0123"), "{}", tail.stdout);
        assert!(tail.stdout.contains("[REDACTED:"));
        assert!(!tail.redacted.is_empty());
        assert_eq!(
            tail.last_lines(1),
            [tail.stdout.trim_end().lines().last().unwrap()]
        );
    }

    #[test]
    fn control_a_short_clean_stream_is_kept_whole_and_stderr_is_read_first() {
        let tail = OutputTail::of(b"all good\n", b"warning: x\nerror: y\n");
        assert_eq!(tail.stdout, "all good\n");
        assert!(tail.redacted.is_empty());
        assert_eq!(tail.last_lines(5), ["warning: x", "error: y"]);
    }

    fn record(verdict: &str, exit: Value, missing: &[&str], files: usize) -> Map<String, Value> {
        let files: Vec<Value> = (0..files)
            .map(|i| json!({"path": format!("out/{i}"), "size": 1, "sha256": sha256_hex(b"x")}))
            .collect();
        let v = json!({"schema": SCHEMA, "verdict": verdict, "exit_code": exit, "missing": missing,
            "artifacts": [{"pattern": "out/*", "files": files, "unchanged": []}]});
        v.as_object().expect("an object").clone()
    }

    /// The record as `evidence run` built it before it was typed: a `json!` literal, then
    /// `signer`, `record_ref` and `record_sha256` inserted.
    fn untyped(measured: &Measured<'_>, record_ref: &str) -> Value {
        let groups: Vec<Value> = measured
            .artifacts
            .iter()
            .map(|g| {
                let files: Vec<Value> = g
                    .files
                    .iter()
                    .map(|f| json!({"path": f.path, "size": f.size as usize, "sha256": f.sha256, "blob": f.blob}))
                    .collect();
                json!({"pattern": g.pattern, "files": files, "unchanged": g.unchanged})
            })
            .collect();
        let missing: Vec<Value> = measured
            .artifacts
            .iter()
            .filter(|g| g.files.is_empty())
            .map(|g| Value::String(g.pattern.clone()))
            .collect();
        let finished = measured.finished;
        let exit_code = finished.and_then(|f| f.exit_code);
        let verdict = Verdict::derive(
            finished.is_none(),
            finished.is_some_and(|f| f.timed_out),
            exit_code,
            !missing.is_empty(),
        );
        let empty = Vec::new();
        let (out, err) = finished.map_or((&empty, &empty), |f| (&f.stdout, &f.stderr));
        let mut record = json!({
            "schema": SCHEMA,
            "id": measured.id,
            "command": measured.command,
            "base_commit": measured.base_commit,
            "started_at": measured.started_at,
            "duration_s": (measured.duration.as_secs_f64() * 1000.0).round() / 1000.0,
            "timeout_s": measured.timeout_s,
            "exit_code": exit_code,
            "verdict": verdict.as_str(),
            "stdout": json!({"bytes": out.len(), "sha256": sha256_hex(out)}),
            "stderr": json!({"bytes": err.len(), "sha256": sha256_hex(err)}),
            "artifacts": groups,
            "missing": missing,
            "kept_artifacts": measured.kept_artifacts,
        })
        .as_object()
        .cloned()
        .expect("a JSON object literal");
        if finished.is_some() {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            record.insert(
                "output_tail".into(),
                json!({"stdout": text(out), "stderr": text(err), "max_chars": TAIL_CHARS}),
            );
        }
        if let Some(signer) = &measured.signer {
            record.insert("signer".into(), json!(signer));
        }
        record.insert("record_ref".into(), json!(record_ref));
        record.remove("record_sha256");
        let hash = self_hash(&record);
        record.insert("record_sha256".into(), json!(hash));
        Value::Object(record)
    }

    fn finished(exit_code: Option<i32>, timed_out: bool) -> Finished {
        Finished {
            exit_code,
            signal: None,
            timed_out,
            stdout: "ação\n".as_bytes().to_vec(),
            stderr: Vec::new(),
            duration: Duration::from_micros(1_234_567),
        }
    }

    fn measured(finished: Option<&Finished>, files: usize) -> Measured<'_> {
        let files = (0..files)
            .map(|i| ArtifactFile {
                path: format!("out/{i}.txt"),
                size: 3,
                sha256: sha256_hex(b"abc"),
                blob: "b".repeat(40),
            })
            .collect();
        Measured {
            id: "smoke".parse().expect("a valid id"),
            command: vec!["sh".into(), "-c".into(), "echo 'x y'".into()],
            base_commit: None,
            started_at: "2026-01-02T03:04:05Z".into(),
            timeout_s: 600.0,
            finished,
            duration: Duration::from_millis(7),
            artifacts: vec![
                ArtifactGroup {
                    pattern: "out/*.txt".into(),
                    files,
                    unchanged: vec!["out/old.txt".into()],
                },
                ArtifactGroup {
                    pattern: "report/**".into(),
                    files: Vec::new(),
                    unchanged: Vec::new(),
                },
            ],
            kept_artifacts: false,
            snapshot: None,
            signer: None,
        }
    }

    #[test]
    fn a_snapshot_covers_the_trees_before_and_after_the_run() {
        let mut m = measured(None, 0);
        m.snapshot = Some(Snapshot {
            tree: "a".repeat(40),
            after: "b".repeat(40),
        });
        let mut bundle = Bundle::assemble(m);
        let bytes = bundle.seal("refs/hpp/evidence/smoke".into());
        let record: Map<String, Value> = serde_json::from_slice(&bytes).expect("JSON");
        let snapshot = Snapshot::of_record(&record)
            .expect("present")
            .expect("valid");
        assert!(snapshot.covers(&"a".repeat(40)) && snapshot.covers(&"b".repeat(40)));
        assert!(!snapshot.covers(&"c".repeat(40)));
        assert!(Snapshot::of_record(&Map::new()).is_none());
    }

    #[test]
    fn control_a_malformed_snapshot_is_a_consistency_problem() {
        let mut r = record("passed", json!(0), &[], 1);
        assert!(consistency_problems(&r).is_empty());
        r.insert(
            "snapshot".into(),
            json!({"tree": "not-a-tree", "after": "b".repeat(40)}),
        );
        assert_eq!(
            consistency_problems(&r),
            ["the snapshot is not a pair of tree ids"]
        );
    }

    #[test]
    fn the_typed_bundle_has_the_bytes_and_self_hash_of_the_untyped_one() {
        let passed = finished(Some(0), false);
        let failed = finished(Some(3), false);
        let timed_out = finished(None, true);
        let mut cases = vec![
            measured(Some(&passed), 2),
            measured(Some(&failed), 0),
            measured(Some(&timed_out), 1),
            measured(None, 0),
        ];
        cases[0].artifacts.pop();
        cases[0].signer = Some("checker-b".into());
        cases[0].base_commit = Some("c".repeat(40));
        cases[0].kept_artifacts = true;
        cases[1].timeout_s = 0.5;
        let record_ref = "refs/hpp/evidence/smoke-20260102T030405Z-2";
        for measured in cases {
            let old = untyped(&measured, record_ref);
            let mut typed = Bundle::assemble(measured);
            let bytes = typed.seal(record_ref.into());
            assert_eq!(bytes, canonical_json(&old), "{old}");
            assert_eq!(
                typed.record_sha256.as_deref(),
                old["record_sha256"].as_str()
            );
            let read: Bundle = serde_json::from_value(old).expect("the typed bundle reads back");
            assert_eq!(read, typed);
        }
    }

    #[test]
    fn control_sealing_again_elsewhere_changes_the_self_hash() {
        let passed = finished(Some(0), false);
        let mut run = measured(Some(&passed), 1);
        run.artifacts.pop();
        let mut bundle = Bundle::assemble(run);
        assert_eq!(bundle.verdict, Verdict::Passed);
        let first = bundle.seal("refs/hpp/evidence/smoke-20260102T030405Z".into());
        let sha = bundle.record_sha256.clone();
        let again = bundle.seal("refs/hpp/evidence/smoke-20260102T030405Z".into());
        assert_eq!((first, sha.clone()), (again, bundle.record_sha256.clone()));
        bundle.seal("refs/hpp/evidence/smoke-20260102T030405Z-2".into());
        assert_ne!(bundle.record_sha256, sha);
        assert!(consistency_problems(&to_object(&bundle)).is_empty());
    }

    #[test]
    fn control_verdicts_are_spelt_as_records_spell_them() {
        for verdict in Verdict::ALL {
            assert_eq!(
                serde_json::to_value(verdict).expect("serialises"),
                verdict.as_str()
            );
            assert_eq!(Verdict::from_record(verdict.as_str()), Some(verdict));
        }
        assert_eq!(Verdict::from_record("Passed"), None);
        assert_eq!(Verdict::from_record("missing_artifacts"), None);
        assert!(serde_json::from_value::<EvidenceId>(json!("a/b")).is_err());
    }

    #[test]
    fn consistent_records_have_no_problems() {
        assert!(consistency_problems(&record("passed", json!(0), &[], 1)).is_empty());
        assert!(
            consistency_problems(&record("missing-artifacts", json!(0), &["out/*"], 0)).is_empty()
        );
        assert!(consistency_problems(&record("failed", json!(1), &[], 0)).is_empty());
        assert!(consistency_problems(&record("timeout", Value::Null, &[], 0)).is_empty());
    }

    #[test]
    fn control_inconsistent_records_are_caught() {
        assert!(!consistency_problems(&record("passed", json!(1), &[], 1)).is_empty());
        assert!(
            !consistency_problems(&record("passed", json!(0), &[], 0)).is_empty(),
            "passed with an empty pattern"
        );
        assert!(!consistency_problems(&record("failed", json!(0), &[], 1)).is_empty());
        assert!(!consistency_problems(&record("timeout", json!(0), &[], 0)).is_empty());
        assert!(!consistency_problems(&record("invented", json!(0), &[], 1)).is_empty());
    }

    #[test]
    fn self_hash_ignores_the_unhashed_fields_only() {
        let mut r = record("passed", json!(0), &[], 1);
        let h = self_hash(&r);
        r.insert("event".into(), json!({"type": "evidence_recorded"}));
        r.insert("record_sha256".into(), json!(h));
        assert_eq!(self_hash(&r), h);
        r.insert("verdict".into(), json!("failed"));
        assert_ne!(self_hash(&r), h);
    }

    #[test]
    fn control_ids_and_paths_are_validated() {
        assert!("smoke-page".parse::<EvidenceId>().is_ok());
        for bad in ["", "-x", "a/b", "a b", "x.lock", "a..b", &"a".repeat(81)] {
            assert!(bad.parse::<EvidenceId>().is_err(), "{bad:?}");
        }
        assert!(is_inside("out/report.html"));
        for bad in ["", "/etc/passwd", "../x", "a/../../b", "C:x", "\\\\srv"] {
            assert!(!is_inside(bad), "{bad:?}");
        }
    }

    #[test]
    fn verdicts_follow_the_reference_order() {
        assert_eq!(
            Verdict::derive(true, false, None, false),
            Verdict::CouldNotStart
        );
        assert_eq!(Verdict::derive(false, true, None, false), Verdict::Timeout);
        assert_eq!(
            Verdict::derive(false, false, Some(0), true),
            Verdict::MissingArtifacts
        );
        assert_eq!(
            Verdict::derive(false, false, Some(0), false),
            Verdict::Passed
        );
        assert_eq!(
            Verdict::derive(false, false, Some(3), false),
            Verdict::Failed
        );
    }
}
