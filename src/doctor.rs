//! The doctor: the checks behind `git hpp doctor` beyond the manifest's own rules.
//!
//! CONCEPTS.md "protocol", "module" and "hook capability". Three families of checks, each
//! returning findings rather than failing on the first one:
//! - **modules**: each module directory beside the manifest carries a `CHECKSUMS.txt` that
//!   verifies (no file missing, changed or unlisted), and every hook script the manifest names
//!   exists in its module;
//! - **store**: every ref under `refs/hpp/` parses as what its namespace promises, checked by
//!   the code that owns the format: a loop whose chain verifies; an evidence bundle or
//!   attestation with its record blob; a sealed House Session that verifies as `deliberate
//!   verify` verifies it; a lane log whose `lane.json` records parse and follow one another; a
//!   board log whose every event re-validates; handoffs and gotcha-memory records that parse and
//!   validate; and no ref sits in a namespace this harness does not write. Each ref is read once.
//!   Hop states are only checked to name a commit;
//! - **notes**: `refs/notes/hpp`, the derived mirror, carries a line for each attestation on each
//!   commit at hand (HEAD and the local branch tips) whose tree was attested. It is the only
//!   thing `--repair` rebuilds, since it is the only thing derived.
//!
//! Reads refs/hpp/* and refs/notes/hpp; writes refs/notes/hpp only in [`repair_notes`].

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::modules::files::Origin;
use crate::modules::{self, CHECKSUMS_FILE};
use crate::{attest, board, events, lanes};
use hpp_core::event_loop::LoopSpec;
use hpp_core::lane::claim::{self, LaneId, LaneRecord};
use hpp_core::manifest::Validated;
use hpp_core::{continuity, gotcha};
use hpp_store::refs::{self, LoopId};
use hpp_store::{self as store, CommitId, Store, TreeId};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth fixing; the harness still works (exit 1).
    Warn,
    /// Something the harness relies on is broken (exit 2).
    Block,
}

/// One thing the doctor found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// How serious it is.
    pub severity: Severity,
    /// What it concerns: a module id, a ref name, a commit.
    pub subject: String,
    /// What is wrong, in a sentence.
    pub problem: String,
}

impl Finding {
    fn block(subject: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            severity: Severity::Block,
            subject: subject.into(),
            problem: problem.into(),
        }
    }

    fn warn(subject: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warn,
            subject: subject.into(),
            problem: problem.into(),
        }
    }
}

/// The result of checking one module directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleCheck {
    /// The module id.
    pub id: String,
    /// Its directory, relative to the manifest.
    pub path: String,
    /// `ok`, `missing`, `no-checksums`, `invalid-checksums` or `tampered`.
    pub status: &'static str,
    /// The checksum comparison, when the inventory parsed.
    pub checksums: Option<modules::Verification>,
    /// Hook scripts the manifest names that the directory lacks.
    pub missing_scripts: Vec<String>,
}

/// The module directories beside the manifest, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Distribution {
    /// Whether any module directory was there to check.
    pub checked: bool,
    /// `ok`, `failed`, or `source-contract` when no module directory sits beside the manifest
    /// (the built-in manifest, or a repository that only uses the harness).
    pub status: &'static str,
    /// One entry per module, when checked.
    pub modules: Vec<ModuleCheck>,
    /// What is wrong.
    #[serde(skip)]
    pub findings: Vec<Finding>,
}

fn source_contract() -> Distribution {
    Distribution {
        checked: false,
        status: "source-contract",
        modules: Vec::new(),
        findings: Vec::new(),
    }
}

/// Checks each declared module's directory in `origin` (beside a manifest, or embedded in the
/// binary): its `CHECKSUMS.txt` and the hook scripts the manifest names. `source-contract` when
/// no module directory is there.
pub fn check_origin(validated: &Validated, origin: Origin<'_>) -> Distribution {
    if !validated.modules.iter().any(|m| origin.has_module(&m.path)) {
        return source_contract();
    }
    let mut out = Vec::new();
    let mut findings = Vec::new();
    for module in &validated.modules {
        let mut check = ModuleCheck {
            id: module.id.clone(),
            path: module.path.clone(),
            status: "ok",
            checksums: None,
            missing_scripts: Vec::new(),
        };
        if !origin.has_module(&module.path) {
            check.status = "missing";
            findings.push(Finding::block(
                &module.id,
                format!("module directory {} is missing", module.path),
            ));
            out.push(check);
            continue;
        }
        check.missing_scripts = validated
            .hooks_of(&module.id)
            .filter(|h| !origin.has_file(&module.path, &h.script))
            .map(|h| h.script.clone())
            .collect();
        for script in &check.missing_scripts {
            findings.push(Finding::block(
                &module.id,
                format!("hook script {}/{script} is missing", module.path),
            ));
        }
        let inventory = origin
            .read(&module.path, CHECKSUMS_FILE)
            .ok()
            .filter(|_| origin.has_file(&module.path, CHECKSUMS_FILE))
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        match inventory {
            None => {
                check.status = "no-checksums";
                findings.push(Finding::warn(
                    &module.id,
                    format!(
                        "{}/{CHECKSUMS_FILE} is missing: run `git hpp module checksums {} --apply`",
                        module.path, module.path
                    ),
                ));
            }
            Some(text) => match (modules::parse(&text), origin.scan(&module.path)) {
                (Err(e), _) => {
                    check.status = "invalid-checksums";
                    findings.push(Finding::block(&module.id, format!("{}: {e}", module.path)));
                }
                (_, Err(e)) => {
                    check.status = "invalid-checksums";
                    findings.push(Finding::block(&module.id, e.to_string()));
                }
                (Ok(listed), Ok(present)) => {
                    let verification = modules::verify(&listed, &present);
                    if !verification.is_intact() {
                        check.status = "tampered";
                        findings.push(Finding::block(
                            &module.id,
                            format!(
                                "{}/{CHECKSUMS_FILE} does not verify: {}",
                                module.path,
                                verification.describe()
                            ),
                        ));
                    }
                    check.checksums = Some(verification);
                }
            },
        }
        if check.status == "ok" && !check.missing_scripts.is_empty() {
            check.status = "tampered";
        }
        out.push(check);
    }
    let status = if findings.iter().any(|f| f.severity == Severity::Block) {
        "failed"
    } else {
        "ok"
    };
    Distribution {
        checked: true,
        status,
        modules: out,
        findings,
    }
}

/// The namespaces under `refs/hpp/` this harness writes.
pub const KNOWN_NAMESPACES: [&str; 13] = [
    "loops",
    "evidence",
    "attestations",
    "deliberations",
    "lanes",
    "board",
    "hop",
    "handoffs",
    "gotchas",
    "preserved",
    "checkpoints",
    "monitors",
    "trust",
];

/// A note line the mirror lacks on one commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoteRepair {
    /// The commit that should carry the line.
    pub commit: CommitId,
    /// The attestation the line mirrors.
    pub attestation: String,
    /// The line to add.
    pub line: String,
}

/// A notes line that claims more than the records hold: no record behind it, a record that does
/// not verify, or an approval its checker has since revoked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NoteUnbacked {
    /// The commit whose note holds the line.
    pub commit: CommitId,
    /// The line.
    pub line: String,
    /// Why no record backs it.
    pub why: String,
}

/// What the store check found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoreCheck {
    /// How many refs under refs/hpp were read.
    pub refs: usize,
    /// How many loops were verified.
    pub loops: usize,
    /// How many attestations were read.
    pub attestations: usize,
    /// How many sealed House Sessions were verified.
    pub deliberations: usize,
    /// How many lane logs were checked.
    pub lanes: usize,
    /// How many board events re-validated.
    pub board_events: usize,
    /// How many handoffs were checked.
    pub handoffs: usize,
    /// How many gotcha-memory records (failures and gotchas) were checked.
    pub gotchas: usize,
    /// How many Hop states were checked (by `hop doctor`'s own diagnosis).
    pub hop_states: usize,
    /// Note lines missing from refs/notes/hpp (repairable).
    pub notes_missing: Vec<NoteRepair>,
    /// Note lines that no verified record backs (repairable: the rebuild drops them).
    pub notes_unbacked: Vec<NoteUnbacked>,
    /// What is wrong.
    pub findings: Vec<Finding>,
}

/// Returns the note line that mirrors an attestation record at `attestation_ref` (the same
/// sentence `git hpp attest create` writes).
pub fn note_line(record: &Value, attestation_ref: &str) -> String {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("?").to_owned();
    format!(
        "hpp attestation: {} by {} (maker {}, session {}) {attestation_ref}\n",
        text(record.get("verdict")),
        text(record.pointer("/actors/checker")),
        text(record.pointer("/actors/maker")),
        text(record.get("session")),
    )
}

/// Reads every ref under refs/hpp and checks it parses, then checks the notes mirror against the
/// records, verified with `options`: a line must mirror a record that holds (and, for an
/// approval, one its checker has not revoked).
pub fn check_store(
    store: &Store,
    spec: &LoopSpec,
    options: attest::VerifyOptions<'_>,
) -> Result<StoreCheck, store::Error> {
    let all = store.list(refs::PREFIX)?;
    let mut check = StoreCheck {
        refs: all.len(),
        ..StoreCheck::default()
    };
    // The attestation refs whose record reads, as positions in `all`: names only, so memory does
    // not grow with the records (each is read again, one tree at a time, where the notes need
    // it). Allocated once before the walk: small allocations that outlive each record's
    // temporary buffers would leave the heap fragmented by the record count.
    let mut readable: Vec<usize> = Vec::with_capacity(all.len());
    for (position, (name, tip)) in all.iter().enumerate() {
        let rest = name.strip_prefix(refs::PREFIX).unwrap_or(name);
        let namespace = rest.split('/').next().unwrap_or_default();
        if !KNOWN_NAMESPACES.contains(&namespace) {
            check.findings.push(Finding::warn(
                name,
                format!("refs/hpp/{namespace}/ is not a namespace this harness writes"),
            ));
            continue;
        }
        if let Some(short) = name.strip_prefix(refs::LOOPS_PREFIX) {
            check.loops += 1;
            if let Some(f) = check_loop(store, spec, name, short) {
                check.findings.push(f);
            }
        } else if name.starts_with(refs::EVIDENCE_PREFIX) {
            if let Some(f) = check_record(store, name, tip, hpp_core::evidence::RECORD_FILE) {
                check.findings.push(f);
            }
        } else if name.starts_with(refs::ATTESTATIONS_PREFIX) {
            check.attestations += 1;
            match attestation_reads(store, name, tip) {
                Ok(()) => readable.push(position),
                Err(f) => check.findings.push(f),
            }
        } else if store.commit_tree(tip).is_err() {
            // Every record of the other namespaces is a commit, so a ref that names anything
            // else is broken before its format is even looked at.
            check
                .findings
                .push(Finding::block(name, "does not point at a record commit"));
        } else if let Some(f) = check_newer(store, name, &mut check) {
            check.findings.push(f);
        }
    }
    if all
        .iter()
        .any(|(name, _)| name.starts_with(refs::HOP_PREFIX))
    {
        check_hop(store, &mut check);
    }
    let attested = by_tree(readable.iter().map(|&position| all[position].0.as_str()));
    let notes = check_notes(store, &attested, options, &[])?;
    check.notes_missing = notes.missing;
    check.notes_unbacked = notes.unbacked;
    for repair in &check.notes_missing {
        check.findings.push(Finding::warn(
            repair.commit.as_str(),
            format!(
                "refs/notes/hpp lacks the note of {}: run `git hpp doctor --repair --apply`",
                repair.attestation
            ),
        ));
    }
    for unbacked in &check.notes_unbacked {
        check.findings.push(Finding::block(
            unbacked.commit.as_str(),
            format!(
                "refs/notes/hpp claims more than the records: {:?}: {}; run `git hpp doctor --repair --apply` to rebuild the notes from verified records",
                unbacked.line.trim_end(),
                unbacked.why
            ),
        ));
    }
    Ok(check)
}

/// What [`check_store`] says of the notes mirror, and only that: the notes the attestation
/// records that read owe HEAD, the branch tips and `noting` (the commits a remote's notes
/// name, say), and the lines no record backs. Nothing else in the store is read, so a fetch that rebuilds the notes after
/// taking records in does not read every record again (a 10,000-entry board, say).
pub fn check_notes_noting(
    store: &Store,
    options: attest::VerifyOptions<'_>,
    noting: &[CommitId],
) -> Result<StoreCheck, store::Error> {
    let all = store.list(refs::ATTESTATIONS_PREFIX)?;
    let attested = by_tree(
        all.iter()
            .filter(|(name, tip)| attestation_reads(store, name, tip).is_ok())
            .map(|(name, _)| name.as_str()),
    );
    let notes = check_notes(store, &attested, options, noting)?;
    Ok(StoreCheck {
        refs: all.len(),
        attestations: all.len(),
        notes_missing: notes.missing,
        notes_unbacked: notes.unbacked,
        ..StoreCheck::default()
    })
}

/// Attestation refs (`refs/hpp/attestations/<tree>/<id>`) grouped by the tree they attest.
fn by_tree<'a>(names: impl Iterator<Item = &'a str>) -> Attested<'a> {
    let mut attested: Attested<'a> = BTreeMap::new();
    for name in names {
        let tree = name[refs::ATTESTATIONS_PREFIX.len()..]
            .split('/')
            .next()
            .unwrap_or_default();
        attested.entry(tree).or_default().push(name);
    }
    attested
}

/// Tells whether the attestation ref `name` is well formed
/// (`refs/hpp/attestations/<tree>/<id>`) and its record reads.
fn attestation_reads(store: &Store, name: &str, tip: &CommitId) -> Result<(), Finding> {
    let rest = &name[refs::ATTESTATIONS_PREFIX.len()..];
    let tree = rest.split('/').next().unwrap_or_default();
    if TreeId::parse(tree).is_none() || rest.split('/').count() != 2 {
        return Err(Finding::block(
            name,
            "an attestation ref must be refs/hpp/attestations/<tree>/<id>",
        ));
    }
    read_record_at(store, name, tip, hpp_core::attestation::RECORD_FILE).map(|_| ())
}

fn check_loop(store: &Store, spec: &LoopSpec, name: &str, short: &str) -> Option<Finding> {
    let Ok(id) = short.parse::<LoopId>() else {
        return Some(Finding::block(name, "is not a valid loop name"));
    };
    match events::read(store, spec, &id) {
        Ok(state) if state.chain.is_broken() => Some(Finding::block(
            name,
            format!(
                "the chain does not verify at {}: {}",
                state.chain.first_divergent.clone().unwrap_or_default(),
                state.chain.problem.clone().unwrap_or_default()
            ),
        )),
        Ok(_) => None,
        Err(e) => Some(Finding::block(
            name,
            format!("the loop cannot be read: {e}"),
        )),
    }
}

/// Checks a ref of the namespaces whose records their own modules read: deliberations, lanes,
/// the board, handoffs and gotchas (Hop's states are checked together by [`check_hop`]).
fn check_newer(store: &Store, name: &str, check: &mut StoreCheck) -> Option<Finding> {
    if let Some(id) = name.strip_prefix(refs::DELIBERATIONS_PREFIX) {
        check.deliberations += 1;
        check_deliberation(store, name, id)
    } else if let Some(lane) = name.strip_prefix(refs::LANES_PREFIX) {
        check.lanes += 1;
        check_lane(store, name, lane)
    } else if name.starts_with(refs::BOARD_PREFIX) {
        if name != refs::BOARD_LOG {
            return Some(Finding::warn(
                name,
                format!("the board writes only {}", refs::BOARD_LOG),
            ));
        }
        match board::read(store) {
            Ok(read) => {
                check.board_events = read.events.len();
                None
            }
            Err(e) => Some(Finding::block(name, e.to_string())),
        }
    } else if let Some(lane) = name.strip_prefix(refs::HANDOFFS_PREFIX) {
        check_handoffs(store, name, lane, &mut check.handoffs)
    } else if name.starts_with(refs::GOTCHAS_PREFIX) {
        check_gotchas(store, name, &mut check.gotchas)
    } else {
        // refs/hpp/hop/*: checked once, as a graph, by check_hop; refs/hpp/preserved/*: a
        // history `event reconcile` did not keep, any commit; refs/hpp/checkpoints/*: turn
        // checkpoints, each a commit.
        None
    }
}

/// Hop's state graph, checked by `hop doctor`'s own diagnosis: a state that `hop doctor
/// --repair` can re-derive (a missing pin) is a warning, anything else is broken.
fn check_hop(store: &Store, check: &mut StoreCheck) {
    let report = crate::hop::Hop::new(store).and_then(|hop| hop.doctor(false));
    match report {
        Ok(report) => {
            check.hop_states = report.states;
            for problem in report.problems {
                let name = problem.state.map_or_else(
                    || refs::HOP_PREFIX.to_owned(),
                    |id| format!("hop state {id}"),
                );
                check.findings.push(if problem.repairable {
                    Finding::warn(
                        &name,
                        format!("{}: run `hop doctor --repair`", problem.problem),
                    )
                } else {
                    Finding::block(&name, problem.problem)
                });
            }
        }
        Err(e) => check.findings.push(Finding::block(
            refs::HOP_PREFIX,
            format!("the Hop states cannot be read: {e}"),
        )),
    }
}

/// A sealed House Session: its tree holds the sealed parts, the seal holds and every key
/// re-derives (as `deliberate verify`, without a signature requirement), and the ref's id is
/// the record's.
fn check_deliberation(store: &Store, name: &str, id: &str) -> Option<Finding> {
    let loaded = match crate::deliberation::load(store, name, None) {
        Ok(loaded) => loaded,
        Err(crate::deliberation::StoreError::Unreadable { detail, .. }) => {
            return Some(Finding::block(name, detail));
        }
        Err(e) => {
            return Some(Finding::block(
                name,
                format!("the record cannot be read: {e}"),
            ));
        }
    };
    if let hpp_core::deliberation::Verification::Broken { reason, .. } =
        hpp_core::deliberation::verify_record(&loaded.record)
    {
        return Some(Finding::block(
            name,
            format!("the sealed record does not verify: {reason}"),
        ));
    }
    if let Some(problem) = loaded.problems.first() {
        return Some(Finding::block(name, problem.clone()));
    }
    let expected = hpp_core::deliberation::record_id(&loaded.record);
    (id != expected).then(|| {
        Finding::block(
            name,
            format!("the record is kept under {id}, but its id is {expected}"),
        )
    })
}

/// A lane log: a valid lane id, every commit's `lane.json` an `hpp.lane/v1` record, and the
/// records following one another as the lane commands write them.
fn check_lane(store: &Store, name: &str, lane: &str) -> Option<Finding> {
    let Ok(id) = lane.parse::<LaneId>() else {
        return Some(Finding::block(name, "is not a valid lane id"));
    };
    let chain = match store.read_chain(name, lanes::LANE_FILE) {
        Ok(chain) => chain,
        Err(e) => return Some(Finding::block(name, format!("the log cannot be read: {e}"))),
    };
    // Two machines wrote this lane and a fetch merged them: the records are read as a set, and
    // each must still be a record of this lane; the order rules hold on each side alone.
    let merged = chain.links.iter().any(|l| l.parents.len() >= 2);
    let chain = if merged {
        match store.read_set(name, lanes::LANE_FILE) {
            Ok(chain) => chain,
            Err(e) => return Some(Finding::block(name, format!("the log cannot be read: {e}"))),
        }
    } else {
        chain
    };
    let mut records: Vec<LaneRecord> = Vec::with_capacity(chain.links.len());
    for link in &chain.links {
        let Some(bytes) = &link.payload else {
            return Some(Finding::block(
                name,
                format!("commit {} has no {}", link.commit, lanes::LANE_FILE),
            ));
        };
        match LaneRecord::parse(&format!("commit {}", link.commit), bytes) {
            Ok(record) => records.push(record),
            Err(e) => return Some(Finding::block(name, e.to_string())),
        }
    }
    if merged {
        return records
            .iter()
            .find(|r| r.id != id)
            .map(|r| Finding::block(name, format!("a record names lane {}", r.id)));
    }
    claim::check_log(&id, &records)
        .err()
        .map(|e| Finding::block(name, e.to_string()))
}

/// A lane's handoff log: a valid lane name, and every handoff parses, validates and names
/// that lane.
fn check_handoffs(store: &Store, name: &str, lane: &str, count: &mut usize) -> Option<Finding> {
    if let Err(e) = continuity::check_lane(lane) {
        return Some(Finding::block(name, e.to_string()));
    }
    let handoffs = match store.read_log(&refs::handoffs(lane), continuity::FILE) {
        Ok(log) => log.entries,
        Err(e) => return Some(Finding::block(name, format!("the log cannot be read: {e}"))),
    };
    for (commit, bytes) in &handoffs {
        *count += 1;
        match continuity::parse(bytes) {
            Ok(handoff) if handoff.session.lane_id != lane => {
                return Some(Finding::block(
                    name,
                    format!(
                        "the handoff at {commit} names lane {}",
                        handoff.session.lane_id
                    ),
                ));
            }
            Ok(_) => {}
            Err(e) => {
                return Some(Finding::block(
                    name,
                    format!("the handoff at {commit}: {e}"),
                ));
            }
        }
    }
    None
}

/// The two gotcha-memory logs: every failure and every promoted gotcha parses and validates.
fn check_gotchas(store: &Store, name: &str, count: &mut usize) -> Option<Finding> {
    type Parse = fn(&[u8]) -> Result<(), gotcha::Error>;
    let (read, parse, what): (Result<Vec<Vec<u8>>, store::Error>, Parse, &str) =
        if name == refs::GOTCHA_FAILURES {
            (
                store
                    .read_log(name, gotcha::FAILURE_FILE)
                    .map(|log| log.entries.into_iter().map(|(_, b)| b).collect()),
                |b| gotcha::parse_failure(b).map(drop),
                "failure",
            )
        } else if name == refs::GOTCHA_PROMOTED {
            (
                store
                    .read_log(name, gotcha::GOTCHA_FILE)
                    .map(|log| log.entries.into_iter().map(|(_, b)| b).collect()),
                |b| gotcha::parse_gotcha(b).map(drop),
                "gotcha",
            )
        } else {
            return Some(Finding::warn(
                name,
                format!(
                    "gotcha memory writes only {} and {}",
                    refs::GOTCHA_FAILURES,
                    refs::GOTCHA_PROMOTED
                ),
            ));
        };
    let records = match read {
        Ok(records) => records,
        Err(e) => return Some(Finding::block(name, format!("the log cannot be read: {e}"))),
    };
    for (n, bytes) in records.iter().enumerate() {
        *count += 1;
        if let Err(e) = parse(bytes) {
            return Some(Finding::block(name, format!("{what} {}: {e}", n + 1)));
        }
    }
    None
}

fn read_record(store: &Store, name: &str, file: &str) -> Result<Value, Finding> {
    parse_record(name, file, store.read_file(name, file))
}

/// As [`read_record`], of the record commit `tip` the ref `name` was listed at: the walk over
/// every ref reads each record without looking its ref up again.
fn read_record_at(store: &Store, name: &str, tip: &CommitId, file: &str) -> Result<Value, Finding> {
    parse_record(name, file, store.read_commit_file(tip, file))
}

fn parse_record(
    name: &str,
    file: &str,
    read: Result<Option<Vec<u8>>, store::Error>,
) -> Result<Value, Finding> {
    match read {
        Ok(Some(bytes)) => serde_json::from_slice::<Value>(&bytes)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| Finding::block(name, format!("{file} is not a JSON object"))),
        Ok(None) => Err(Finding::block(name, format!("the record has no {file}"))),
        Err(e) => Err(Finding::block(
            name,
            format!("the record cannot be read: {e}"),
        )),
    }
}

fn check_record(store: &Store, name: &str, tip: &CommitId, file: &str) -> Option<Finding> {
    read_record_at(store, name, tip, file).err()
}

/// Attested trees and the attestation refs of each whose record reads.
type Attested<'a> = BTreeMap<&'a str, Vec<&'a str>>;

/// What the notes mirror lacks and what it claims without a record.
struct Notes {
    missing: Vec<NoteRepair>,
    unbacked: Vec<NoteUnbacked>,
}

/// Checks every note line of the commits at hand (HEAD and the branch tips) and of every commit
/// that has a note: each must mirror an attestation of that commit's tree that holds, and every
/// attestation that holds of a commit at hand must have its line.
fn check_notes(
    store: &Store,
    attested: &Attested<'_>,
    options: attest::VerifyOptions<'_>,
    noting: &[CommitId],
) -> Result<Notes, store::Error> {
    let mut at_hand: Vec<CommitId> = store.head_commit()?.into_iter().collect();
    at_hand.extend(store.list("refs/heads/")?.into_iter().map(|(_, id)| id));
    at_hand.extend(noting.iter().cloned());
    at_hand.sort();
    at_hand.dedup();
    let mut commits = at_hand.clone();
    commits.extend(
        store
            .noted_objects()?
            .iter()
            .filter_map(|hex| store.commit_id(hex)),
    );
    commits.sort();
    commits.dedup();
    let mut notes = Notes {
        missing: Vec::new(),
        unbacked: Vec::new(),
    };
    let mut backing: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for commit in commits {
        let tree = store.commit_tree(&commit)?;
        if !backing.contains_key(tree.as_str()) {
            let lines = backed_lines(store, &tree, attested.get(tree.as_str()), options)?;
            backing.insert(tree.to_string(), lines);
        }
        let backed = &backing[tree.as_str()];
        let text = store
            .note(&commit)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let line = format!("{line}\n");
            if !backed.iter().any(|(_, backed)| *backed == line) {
                let why = why_unbacked(store, &tree, &line, attested, options)?;
                notes.unbacked.push(NoteUnbacked {
                    commit: commit.clone(),
                    line,
                    why,
                });
            }
        }
        if at_hand.contains(&commit) {
            for (name, line) in backed {
                if !text.contains(name.as_str()) {
                    notes.missing.push(NoteRepair {
                        commit: commit.clone(),
                        attestation: name.clone(),
                        line: line.clone(),
                    });
                }
            }
        }
    }
    Ok(notes)
}

/// Tells whether every line of every note in `notes_ref` (a remote's notes, staged) is one a
/// verified record held here backs, so the notes can be taken as they are. Returns the commits
/// those notes name beside the answer.
pub fn notes_backed_in(
    store: &Store,
    notes_ref: &str,
    options: attest::VerifyOptions<'_>,
) -> Result<(bool, Vec<CommitId>), store::Error> {
    let names: Vec<String> = store
        .list(refs::ATTESTATIONS_PREFIX)?
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let mut attested: Attested<'_> = BTreeMap::new();
    for name in &names {
        let tree = name[refs::ATTESTATIONS_PREFIX.len()..]
            .split('/')
            .next()
            .unwrap_or_default();
        attested.entry(tree).or_default().push(name);
    }
    let noted = store.noted_objects_in(notes_ref)?;
    let commits: Vec<CommitId> = noted
        .iter()
        .filter_map(|hex| store.commit_id(hex))
        .collect();
    // A note on a commit not held here names nothing a record here can back.
    let mut all_backed = commits.len() == noted.len();
    for commit in &commits {
        let tree = store.commit_tree(commit)?;
        let backed = backed_lines(store, &tree, attested.get(tree.as_str()), options)?;
        let text = store.note_in(notes_ref, commit)?.unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        if text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .any(|l| !backed.iter().any(|(_, b)| b.trim_end() == l))
        {
            all_backed = false;
        }
    }
    Ok((all_backed, commits))
}

/// The note lines the records of `tree` back, as `(attestation ref, line)`: each record that
/// holds but for its verdict, and for an approval only while the tree verifies (its checker has
/// not revoked it).
fn backed_lines(
    store: &Store,
    tree: &TreeId,
    records: Option<&Vec<&str>>,
    options: attest::VerifyOptions<'_>,
) -> Result<Vec<(String, String)>, store::Error> {
    let Some(records) = records else {
        return Ok(Vec::new());
    };
    let whole = verify(attest::verify_tree(store, tree, None, options))?;
    let mut out = Vec::new();
    for name in records {
        let Ok(record) = read_record(store, name, hpp_core::attestation::RECORD_FILE) else {
            continue;
        };
        let record = &record;
        let Some(judged) = whole.candidates.iter().find(|c| c.attestation_ref == *name) else {
            continue;
        };
        let holds = judged.mismatches.iter().all(|m| *m == "verdict");
        let approval = record.get("verdict").and_then(Value::as_str) == Some("approved");
        if holds && (!approval || whole.is_valid()) {
            out.push(((*name).to_owned(), note_line(record, name)));
        }
    }
    Ok(out)
}

/// Says why a note line on a commit of `tree` has no record behind it.
fn why_unbacked(
    store: &Store,
    tree: &TreeId,
    line: &str,
    attested: &Attested<'_>,
    options: attest::VerifyOptions<'_>,
) -> Result<String, store::Error> {
    let Some(named) = line
        .split_whitespace()
        .last()
        .filter(|w| w.starts_with(refs::ATTESTATIONS_PREFIX))
    else {
        return Ok("it names no attestation record".to_owned());
    };
    let Some(record) = attested
        .get(tree.as_str())
        .and_then(|records| records.iter().find(|name| **name == named))
        .and_then(|name| read_record(store, name, hpp_core::attestation::RECORD_FILE).ok())
    else {
        return Ok(format!(
            "{named} is not an attestation of this commit's tree {tree}"
        ));
    };
    if note_line(&record, named) != line {
        return Ok(format!("{named} does not say what the line says"));
    }
    let whole = verify(attest::verify_tree(store, tree, None, options))?;
    if let Some(revoker) = &whole.revoked_by {
        return Ok(format!("the approval was revoked by {revoker}"));
    }
    let mismatches = whole
        .candidates
        .iter()
        .find(|c| c.attestation_ref == named)
        .map(|c| c.mismatches.join(", "))
        .unwrap_or_default();
    Ok(format!("{named} does not verify ({mismatches})"))
}

/// Keeps the store's failure of a verification, and nothing else, as an error: a record that
/// does not verify is what the caller reports.
fn verify(
    result: Result<attest::TreeVerification, attest::Error>,
) -> Result<attest::TreeVerification, store::Error> {
    match result {
        Ok(v) => Ok(v),
        Err(attest::Error::Store(e)) => Err(e),
        Err(e) => Err(store::Error::Io {
            what: "verifying attestations for the notes".into(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
}

/// Rebuilds refs/notes/hpp from the records: on every commit the check named, the note becomes
/// the lines verified records back (the existing ones kept in their order, the missing ones
/// added); a note left with none is removed. Returns how many notes changed.
pub fn repair_notes(store: &Store, check: &StoreCheck) -> Result<usize, store::Error> {
    let mut by_commit: BTreeMap<&CommitId, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
    for repair in &check.notes_missing {
        by_commit
            .entry(&repair.commit)
            .or_default()
            .0
            .push(&repair.line);
    }
    for unbacked in &check.notes_unbacked {
        by_commit
            .entry(&unbacked.commit)
            .or_default()
            .1
            .push(&unbacked.line);
    }
    for (commit, (add, drop)) in &by_commit {
        let text = store
            .note(commit)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let mut lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| format!("{l}\n"))
            .filter(|l| !drop.contains(&l.as_str()))
            .collect();
        lines.extend(add.iter().map(|l| (*l).to_owned()));
        if lines.is_empty() {
            store.remove_note(commit)?;
        } else {
            store.update_note(commit, |_| lines.concat().into_bytes())?;
        }
    }
    Ok(by_commit.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpp_core::manifest;

    fn validated() -> Validated {
        let value: Value = serde_json::from_str(manifest::BUILT_IN).unwrap();
        manifest::validate(&value).unwrap()
    }

    #[test]
    fn without_module_directories_nothing_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let d = check_origin(&validated(), Origin::Dir(dir.path()));
        assert_eq!((d.checked, d.status), (false, "source-contract"));
        let embedded = check_origin(&validated(), Origin::Embedded);
        assert_eq!((embedded.checked, embedded.status), (true, "ok"));
    }

    #[test]
    fn control_a_changed_file_and_a_missing_inventory_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let v = validated();
        for module in &v.modules {
            let root = dir.path().join(&module.path);
            for hook in v.hooks_of(&module.id) {
                let p = root.join(&hook.script);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, "#!/bin/sh\n").unwrap();
            }
            let listed = crate::modules::files::scan(&root).unwrap();
            std::fs::write(root.join(CHECKSUMS_FILE), modules::render(&listed)).unwrap();
        }
        let d = check_origin(&v, Origin::Dir(dir.path()));
        assert_eq!(d.status, "ok", "{:?}", d.findings);
        let first = &v.modules[0];
        let script = v.hooks_of(&first.id).next().unwrap().script.clone();
        std::fs::write(dir.path().join(&first.path).join(&script), "tampered\n").unwrap();
        std::fs::remove_file(dir.path().join(&v.modules[1].path).join(CHECKSUMS_FILE)).unwrap();
        let d = check_origin(&v, Origin::Dir(dir.path()));
        assert_eq!(d.status, "failed");
        assert_eq!(d.modules[0].status, "tampered");
        assert_eq!(d.modules[1].status, "no-checksums");
        assert!(
            d.findings[0]
                .problem
                .contains(&format!("changed: {script}")),
            "{:?}",
            d.findings
        );
    }

    #[test]
    fn the_note_line_matches_the_attestation_writer() {
        let record = serde_json::json!({"verdict": "approved", "session": "s1",
            "actors": {"maker": "maker-a", "checker": "checker-b"}});
        assert_eq!(
            note_line(&record, "refs/hpp/attestations/t/i"),
            "hpp attestation: approved by checker-b (maker maker-a, session s1) refs/hpp/attestations/t/i\n"
        );
    }
}
