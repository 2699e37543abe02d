//! The loop's gates measured against the records under `refs/hpp/`.
//!
//! [`hpp_core::event_loop::gates`] says what each gate requires; this module looks the records
//! an event names up in the store and decides, before anything is written ([`admit`]), and
//! again whenever a loop is read back ([`standing`]): an evidence bundle that still verifies
//! and ran on the loop's tree, an approved attestation of that tree by a checker who is not the
//! maker and has not revoked it, a person's signature. A gated event records what it passed
//! in its data (`"gate": {"name", "tree"}`, the refs it checked), so a reviewer re-checks the
//! same records from a clone.

use serde::Serialize;
use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use hpp_core::attestation::TreeVerdict;
use hpp_core::event_log::LoggedEvent;
use hpp_core::event_loop::LoopSpec;
use hpp_core::event_loop::gates::{Condition, Named, Refusal, Signed, Stamp, Standing};
use hpp_core::evidence::{Snapshot, Status};
use hpp_store::{CommitId, Store, TreeId};

use super::{Error, LoopState};
use crate::attest::{self, TreeVerification, VerifyOptions};
use crate::evidence::{self, ArtifactCheck};
use crate::sign::{self, AllowedSigners, Purpose, SignatureStatus, Signing};

/// The blob beside `event.json` that holds a person's signature over the event's bytes.
pub const SIGNATURE_FILE: &str = "event.sig";

/// How strictly the gates check: the signers known, whether signatures are required, and the
/// key a person signs their approval with.
#[derive(Clone, Copy, Default)]
pub struct GateOptions<'a> {
    /// The allowed-signers file in force, if any.
    pub allowed: Option<&'a AllowedSigners>,
    /// Whether signatures are required (the trust policy of `verify`).
    pub require_signed: bool,
    /// The key the person named by `--by` signs with.
    pub person: Option<&'a Signing>,
}

/// What a gate admitted: the event's data as it will be written (stamped with the gate and the
/// tree, the references resolved), and whether the person must sign it.
pub(super) struct Admitted<'a> {
    /// The data to write.
    pub data: Map<String, Value>,
    /// The person's key, when the event is to be signed.
    pub sign: Option<&'a Signing>,
}

/// The loop's maker, from the first event that names one.
pub fn maker(state: &LoopState) -> Option<(String, String)> {
    state.events.iter().find_map(|e| {
        Named::from_data(&e.data)
            .maker
            .map(|m| (hpp_core::event_log::event_id(e.seq), m))
    })
}

/// Checks `kind`'s gate on loop `state` at workspace tree `tree`, before anything is written.
pub(super) fn admit<'a>(
    store: &Store,
    spec: &LoopSpec,
    state: &LoopState,
    tree: &TreeId,
    kind: &str,
    mut data: Map<String, Value>,
    options: &GateOptions<'a>,
) -> Result<Admitted<'a>, Error> {
    let state_now = state
        .projection
        .as_ref()
        .map_or(spec.initial(), |p| p.state.as_str());
    let Some(gate) = spec.step(state_now, kind).map(|t| t.gate.clone()) else {
        // The transition check has already refused it; nothing to measure.
        return Ok(Admitted { data, sign: None });
    };
    let named = Named::from_data(&data);
    let fixed = maker(state);
    if let (Some((at, fixed)), Some(named_maker)) = (&fixed, &named.maker)
        && fixed != named_maker
    {
        return Err(refuse(
            &gate,
            "the loop's maker, fixed at its first event",
            Some(at.clone()),
            format!("the loop's maker is {fixed} (named at {at}); this event names {named_maker}"),
        ));
    }
    let Some(condition) = spec.condition(&gate) else {
        return Ok(Admitted { data, sign: None });
    };
    let refuse_here = |record: Option<String>, reason: String| {
        refuse(&gate, &condition.describe(), record, reason)
    };
    let mut sign = None;
    match condition {
        Condition::Scope => {
            if named.work.is_none() || named.maker.is_none() {
                return Err(refuse_here(
                    None,
                    format!(
                        "{kind} names no {}: pass --work ITEM --maker NAME (or \"work\" and \"maker\" in --data)",
                        match (&named.work, &named.maker) {
                            (None, None) => "work item and no maker",
                            (None, Some(_)) => "work item",
                            _ => "maker",
                        }
                    ),
                ));
            }
        }
        Condition::Evidence { at_least } => {
            if named.evidence.len() < *at_least {
                return Err(refuse_here(
                    None,
                    format!(
                        "{kind} names {} evidence bundle(s), at least {at_least} required: run `git hpp evidence run --id ID --artifact GLOB --record-event -- COMMAND`, or pass --evidence ID",
                        named.evidence.len()
                    ),
                ));
            }
            let root = store.workdir().map(std::path::Path::to_path_buf);
            let mut refs = Vec::new();
            let mut hashes = Vec::new();
            for name in &named.evidence {
                let record_ref = match evidence::resolve(store, name) {
                    Ok(r) => r,
                    Err(evidence::Error::Store(e)) => return Err(e.into()),
                    Err(_) => {
                        return Err(refuse_here(
                            Some(name.clone()),
                            format!("no evidence bundle named {name} in this repository"),
                        ));
                    }
                };
                let check = root
                    .as_deref()
                    .map_or(ArtifactCheck::RecordOnly, ArtifactCheck::Workspace);
                let (sha, problem) = bundle_holds(store, &record_ref, tree, check)?;
                if let Some(problem) = problem {
                    return Err(refuse_here(Some(record_ref), problem));
                }
                refs.push(Value::String(record_ref));
                hashes.push(json!(sha));
            }
            data.insert("evidence".into(), Value::Array(refs));
            data.insert("evidence_sha256".into(), Value::Array(hashes));
        }
        Condition::Checker { signed } => {
            let Some((_, maker)) = &fixed else {
                return Err(refuse_here(
                    None,
                    "the loop names no maker (its first event was recorded before gates measured): start a new loop with --work and --maker".into(),
                ));
            };
            if let Some((at, evidence_tree)) = latest_tree(
                state,
                kind_of(spec, |c| matches!(c, Condition::Evidence { .. })),
            ) && evidence_tree != tree.as_str()
            {
                return Err(refuse_here(
                    Some(at.clone()),
                    format!(
                        "the evidence of {at} ran on tree {}; the workspace is at {} now: the checker must check the tree the evidence ran on",
                        short(&evidence_tree),
                        short(tree.as_str())
                    ),
                ));
            }
            let verify = VerifyOptions {
                allowed: options.allowed,
                require_signed: options.require_signed || *signed == Signed::Always,
            };
            let (reference, checker) =
                find_approval(store, tree, maker, named.attestation.as_deref(), verify).map_err(
                    |e| match e {
                        Found::Store(e) => e,
                        Found::No { record, reason } => refuse_here(record, reason),
                    },
                )?;
            data.insert("attestation".into(), Value::String(reference));
            data.insert("checker".into(), Value::String(checker));
        }
        Condition::Person { signed } => {
            let Some(by) = &named.by else {
                return Err(refuse_here(
                    None,
                    format!("{kind} names no person: pass --by NAME"),
                ));
            };
            let required = options.require_signed || *signed == Signed::Always;
            match options.person {
                Some(signing) if signing.signer.as_str() != by => {
                    return Err(refuse_here(
                        None,
                        format!(
                            "the key is {}'s, but the event names {by}: a person signs their own approval",
                            signing.signer.as_str()
                        ),
                    ));
                }
                Some(signing) => {
                    if required && options.allowed.is_none() {
                        return Err(refuse_here(
                            None,
                            "signatures are required, but no allowed-signers file is configured to mark anyone as a person".into(),
                        ));
                    }
                    sign = Some(signing);
                }
                None if required => {
                    return Err(refuse_here(
                        None,
                        format!(
                            "signatures are required: {by} signs the approval with --sign-key KEY (or git's user.signingKey with gpg.format=ssh), from a key the allowed-signers file marks as a person (namespaces=\"{}\")",
                            sign::PERSON_NAMESPACE
                        ),
                    ));
                }
                None => {}
            }
        }
        Condition::Closure { holds } => {
            for held in holds {
                let Some((index, event)) = state
                    .events
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(_, e)| Stamp::of(&e.data).is_some_and(|s| &s.name == held))
                else {
                    return Err(refuse_here(
                        None,
                        format!(
                            "no event of this loop passed gate {held} with its records checked"
                        ),
                    ));
                };
                let at = hpp_core::event_log::event_id(event.seq);
                let stamp = Stamp::of(&event.data).expect("found by its stamp");
                if stamp.tree != tree.as_str() {
                    return Err(refuse_here(
                        Some(at.clone()),
                        format!(
                            "{held} held at {at} on tree {}; the workspace is at {} now: the loop can only close on the tree its gates measured",
                            short(&stamp.tree),
                            short(tree.as_str())
                        ),
                    ));
                }
                let commit = &state.commits[index];
                match standing(store, event, commit, options.allowed)? {
                    Standing::Ok => {}
                    Standing::ReferenceMissing { record } => {
                        return Err(refuse_here(
                            Some(record.clone()),
                            format!(
                                "{held} ({at}) names {record}, which is not in this repository"
                            ),
                        ));
                    }
                    Standing::NoLongerHolds { reason } => {
                        return Err(refuse_here(
                            Some(at.clone()),
                            format!("{held} ({at}) no longer holds: {reason}"),
                        ));
                    }
                    Standing::UncheckedLegacy => unreachable!("a stamped event is checked"),
                }
            }
        }
    }
    Stamp {
        name: gate,
        tree: tree.to_string(),
    }
    .put(&mut data);
    Ok(Admitted { data, sign })
}

/// Checks a person's signature over the event's bytes before it is written.
pub(super) fn check_person(
    bytes: &[u8],
    armored: &[u8],
    by: &str,
    options: &GateOptions<'_>,
    gate: &str,
) -> Result<(), Error> {
    let report = sign::check_for(
        Purpose::Person,
        bytes,
        Some(armored),
        Some(by),
        options.allowed,
        OffsetDateTime::now_utc(),
    );
    if report.status == SignatureStatus::Refused {
        return Err(refuse(
            gate,
            "names a person, signed by them when signatures are required",
            None,
            format!(
                "{by}'s signature does not admit them as a person: {}",
                report.detail.unwrap_or_default()
            ),
        ));
    }
    Ok(())
}

/// How an event's gate stands now: every record it names re-checked. An event with no stamp is
/// legacy: its chain is checked, its gate never was.
pub fn standing(
    store: &Store,
    event: &LoggedEvent,
    commit: &CommitId,
    allowed: Option<&AllowedSigners>,
) -> Result<Standing, Error> {
    let Some(stamp) = Stamp::of(&event.data) else {
        return Ok(Standing::UncheckedLegacy);
    };
    let Some(tree) = TreeId::parse(&stamp.tree) else {
        return Ok(Standing::NoLongerHolds {
            reason: format!("the recorded tree {:?} is not a tree id", stamp.tree),
        });
    };
    let named = Named::from_data(&event.data);
    let hashes: Vec<Option<&str>> = match event.data.get("evidence_sha256") {
        Some(Value::Array(a)) => a.iter().map(Value::as_str).collect(),
        Some(Value::String(one)) => vec![Some(one.as_str())],
        _ => Vec::new(),
    };
    for (i, record_ref) in named.evidence.iter().enumerate() {
        if store.tip(record_ref)?.is_none() {
            return Ok(Standing::ReferenceMissing {
                record: record_ref.clone(),
            });
        }
        let (sha, problem) = bundle_holds(store, record_ref, &tree, ArtifactCheck::RecordOnly)?;
        if let Some(reason) = problem {
            return Ok(Standing::NoLongerHolds { reason });
        }
        if hashes
            .get(i)
            .copied()
            .flatten()
            .is_some_and(|h| Some(h) != sha.as_deref())
        {
            return Ok(Standing::NoLongerHolds {
                reason: format!("{record_ref} is not the bundle the gate checked"),
            });
        }
    }
    if let Some(reference) = &named.attestation {
        let resolved = match attest::resolve(store, reference) {
            Ok(r) => r,
            Err(attest::Error::Store(e)) => return Err(e.into()),
            Err(_) => {
                return Ok(Standing::ReferenceMissing {
                    record: reference.clone(),
                });
            }
        };
        let checker = event
            .data
            .get("checker")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let verification = verify_tree(store, &resolved.0, allowed, false)?;
        match verification.verdict_of(checker) {
            TreeVerdict::Approved { .. } => {}
            TreeVerdict::Revoked { revoked_by, .. } => {
                return Ok(Standing::NoLongerHolds {
                    reason: format!("{checker} revoked the approval ({revoked_by})"),
                });
            }
            _ => {
                return Ok(Standing::NoLongerHolds {
                    reason: format!(
                        "{reference} no longer holds: {}",
                        why_not(&verification, &resolved.1)
                    ),
                });
            }
        }
    }
    if let Some(by) = &named.by
        && let Some(armored) = store.read_file(commit.as_str(), SIGNATURE_FILE)?
    {
        let bytes = store
            .read_file(commit.as_str(), super::EVENT_FILE)?
            .unwrap_or_default();
        let report = sign::check_for(
            Purpose::Person,
            &bytes,
            Some(&armored),
            Some(by),
            allowed,
            OffsetDateTime::now_utc(),
        );
        if report.status == SignatureStatus::Refused {
            return Ok(Standing::NoLongerHolds {
                reason: format!(
                    "{by}'s signature does not verify: {}",
                    report.detail.unwrap_or_default()
                ),
            });
        }
    }
    Ok(Standing::Ok)
}

/// One event's gate, as `event verify` reports it.
#[derive(Debug, Clone, Serialize)]
pub struct EventGate {
    /// The event (`event:<n>`).
    pub event: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The gate it passed, when it recorded one.
    pub gate: Option<String>,
    /// How it stands now.
    #[serde(flatten)]
    pub standing: Standing,
}

/// Re-checks every event's gate of an intact loop, oldest first. A closing event stands only
/// as long as the gates it re-checked (their latest events before it) still do.
pub fn report(
    store: &Store,
    spec: &LoopSpec,
    state: &LoopState,
    allowed: Option<&AllowedSigners>,
) -> Result<Vec<EventGate>, Error> {
    let mut out: Vec<EventGate> = Vec::with_capacity(state.events.len());
    for (event, commit) in state.events.iter().zip(&state.commits) {
        let gate = Stamp::of(&event.data).map(|s| s.name);
        let mut standing = standing(store, event, commit, allowed)?;
        if let (Standing::Ok, Some(Condition::Closure { holds })) =
            (&standing, gate.as_deref().and_then(|g| spec.condition(g)))
        {
            // The worst of what it re-checked: a record that no longer holds, else one missing.
            let held: Vec<&EventGate> = holds
                .iter()
                .filter_map(|held| {
                    out.iter()
                        .rev()
                        .find(|e| e.gate.as_deref() == Some(held.as_str()))
                })
                .collect();
            if let Some(e) = held
                .iter()
                .find(|e| matches!(e.standing, Standing::NoLongerHolds { .. }))
            {
                standing = Standing::NoLongerHolds {
                    reason: format!(
                        "{} ({}) does not hold now",
                        e.gate.as_deref().unwrap_or_default(),
                        e.event
                    ),
                };
            } else if let Some(e) = held
                .iter()
                .find(|e| matches!(e.standing, Standing::ReferenceMissing { .. }))
            {
                standing = e.standing.clone();
            }
        }
        out.push(EventGate {
            event: hpp_core::event_log::event_id(event.seq),
            kind: event.kind.clone(),
            gate,
            standing,
        });
    }
    Ok(out)
}

/// Re-verifies one bundle for a gate: it verifies, passed, and its run saw `tree`. Returns its
/// self-hash and, when it does not hold, why.
fn bundle_holds(
    store: &Store,
    record_ref: &str,
    tree: &TreeId,
    check: ArtifactCheck<'_>,
) -> Result<(Option<String>, Option<String>), Error> {
    let verification = match evidence::verify(store, record_ref, None, check) {
        Ok(v) => v,
        Err(evidence::Error::Store(e)) => return Err(e.into()),
        Err(e) => return Ok((None, Some(format!("{record_ref}: {e}")))),
    };
    let sha = verification.record_sha256.clone();
    if verification.status != Status::Valid {
        let why = if verification.problems.is_empty() {
            verification.status.to_string()
        } else {
            verification.problems.join("; ")
        };
        return Ok((sha, Some(format!("{record_ref} does not verify: {why}"))));
    }
    let problem = match verification.snapshot.as_ref() {
        None => Some(format!(
            "{record_ref} was recorded before bundles carried the tree they ran on: run it again with `git hpp evidence run`"
        )),
        Some(Snapshot { tree: ran, .. })
            if !verification
                .snapshot
                .as_ref()
                .is_some_and(|s| s.covers(tree.as_str())) =>
        {
            Some(format!(
                "{record_ref} ran on tree {}; the loop is at {}: run it again on this tree",
                short(ran),
                short(tree.as_str())
            ))
        }
        Some(_) => None,
    };
    Ok((sha, problem))
}

/// Why [`find_approval`] found none.
enum Found {
    Store(Error),
    No {
        record: Option<String>,
        reason: String,
    },
}

fn verify_tree(
    store: &Store,
    tree: &TreeId,
    allowed: Option<&AllowedSigners>,
    require_signed: bool,
) -> Result<TreeVerification, Error> {
    attest::verify_tree(
        store,
        tree,
        None,
        VerifyOptions {
            allowed,
            require_signed,
        },
    )
    .map_err(attest_error)
}

/// Finds the approval of `tree` by a checker other than `maker`: the one named, or else the
/// latest standing approval of any such checker. Returns its ref and checker.
fn find_approval(
    store: &Store,
    tree: &TreeId,
    maker: &str,
    named: Option<&str>,
    options: VerifyOptions<'_>,
) -> Result<(String, String), Found> {
    if let Some(name) = named {
        let (attested, reference) = match attest::resolve(store, name) {
            Ok(r) => r,
            Err(attest::Error::Store(e)) => return Err(Found::Store(e.into())),
            Err(_) => {
                return Err(Found::No {
                    record: Some(name.to_owned()),
                    reason: format!("no attestation named {name} in this repository"),
                });
            }
        };
        if attested != *tree {
            return Err(Found::No {
                record: Some(reference),
                reason: format!(
                    "it attests tree {}; the loop is at {}: the checker must check this tree",
                    short(attested.as_str()),
                    short(tree.as_str())
                ),
            });
        }
        let verification = verify_tree(store, tree, options.allowed, options.require_signed)
            .map_err(Found::Store)?;
        let checker = verification
            .candidates
            .iter()
            .find(|c| c.attestation_ref == reference)
            .and_then(|c| c.checker.clone())
            .unwrap_or_default();
        if checker == maker {
            return Err(Found::No {
                record: Some(reference),
                reason: format!(
                    "its checker {checker} is the loop's maker: a maker cannot check their own work"
                ),
            });
        }
        return match verification.verdict_of(&checker) {
            TreeVerdict::Approved { .. } => Ok((reference, checker)),
            TreeVerdict::Revoked { revoked_by, .. } => Err(Found::No {
                record: Some(reference),
                reason: format!("{checker} revoked this approval ({revoked_by})"),
            }),
            _ => Err(Found::No {
                reason: why_not(&verification, &reference),
                record: Some(reference),
            }),
        };
    }
    let verification =
        verify_tree(store, tree, options.allowed, options.require_signed).map_err(Found::Store)?;
    for checker in verification.checkers() {
        if checker == maker {
            continue;
        }
        if let TreeVerdict::Approved { reference } = verification.verdict_of(checker) {
            return Ok((reference, checker.to_owned()));
        }
    }
    let by_maker = matches!(verification.verdict_of(maker), TreeVerdict::Approved { .. });
    Err(Found::No {
        record: verification.attestation.clone(),
        reason: if by_maker {
            format!(
                "the only approval of tree {} is by {maker}, the loop's maker: a maker cannot check their own work",
                short(tree.as_str())
            )
        } else if verification.candidates.is_empty() {
            format!(
                "no attestation of tree {} exists: a checker other than {maker} runs `git hpp attest create ... --verdict approved`",
                short(tree.as_str())
            )
        } else {
            format!(
                "no approval of tree {} by a checker other than {maker} holds: {}",
                short(tree.as_str()),
                why_not(
                    &verification,
                    verification.attestation.as_deref().unwrap_or_default()
                )
            )
        },
    })
}

/// Why an attestation does not count, from its judgement.
fn why_not(verification: &TreeVerification, reference: &str) -> String {
    let Some(judged) = verification
        .candidates
        .iter()
        .find(|c| c.attestation_ref == reference)
    else {
        return "it cannot be read".to_owned();
    };
    let mut why: Vec<String> = Vec::new();
    if judged.verdict.as_deref() != Some("approved") {
        why.push(format!(
            "its verdict is {}",
            judged.verdict.as_deref().unwrap_or("missing")
        ));
    }
    why.extend(judged.signer_problem.clone());
    why.extend(judged.evidence_problems.iter().cloned());
    let others: Vec<&str> = judged
        .mismatches
        .iter()
        .copied()
        .filter(|m| *m != "verdict")
        .collect();
    if !others.is_empty() {
        why.push(format!(
            "mismatches: {} ({})",
            others.join(", "),
            judged.checked
        ));
    }
    if why.is_empty() {
        why.push("it does not hold".to_owned());
    }
    why.join("; ")
}

/// The latest event that passed a gate of `kind`'s type, with the tree it recorded.
fn latest_tree(state: &LoopState, kind: Option<&str>) -> Option<(String, String)> {
    let kind = kind?;
    state
        .events
        .iter()
        .rev()
        .find(|e| e.kind == kind)
        .and_then(|e| Stamp::of(&e.data).map(|s| (hpp_core::event_log::event_id(e.seq), s.tree)))
}

/// The event type whose transition's gate has a condition that `is` picks.
fn kind_of(spec: &LoopSpec, is: impl Fn(&Condition) -> bool) -> Option<&str> {
    spec.transitions()
        .iter()
        .find(|t| spec.condition(&t.gate).is_some_and(&is))
        .map(|t| t.event.as_str())
}

/// Keeps the store's failure of an attestation check as an error; anything else the check
/// refuses is the record not holding, said by the gate that asked ([`Found::No`], [`standing`]).
fn attest_error(e: attest::Error) -> Error {
    match e {
        attest::Error::Store(e) => e.into(),
        other => Error::Store(hpp_store::Error::Io {
            what: "checking the attestations of a tree".into(),
            source: std::io::Error::other(other.to_string()),
        }),
    }
}

fn refuse(gate: &str, requires: &str, record: Option<String>, reason: String) -> Error {
    Error::Gate(Refusal {
        gate: gate.to_owned(),
        requires: requires.to_owned(),
        record,
        reason,
    })
}

/// The first 12 hex digits of an object id.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// One gate of a loop, as `status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct GateNow {
    /// The gate.
    pub gate: String,
    /// What it requires.
    pub requires: String,
    /// The event that passed it, if one did.
    pub event: Option<String>,
    /// How it stands now: `holds`, `not yet`, `unchecked (legacy)`, `reference missing: …`,
    /// `no longer holds: …`, or `held on another tree`.
    pub status: String,
}

/// Where a loop's gates stand and what passes the next one, in words.
#[derive(Debug, Clone, Serialize)]
pub struct Outlook {
    /// Each gate with a condition, in the loop's order.
    pub gates: Vec<GateNow>,
    /// What to do next, as a command to run.
    pub next_action: String,
    /// The workspace tree now (none in a bare repository).
    pub tree: Option<String>,
}

/// Reads where each gate of an intact loop stands, against the workspace as it is now.
pub fn outlook(
    store: &Store,
    spec: &LoopSpec,
    state: &LoopState,
    allowed: Option<&AllowedSigners>,
) -> Result<Outlook, Error> {
    let tree = workspace_tree(store, spec)?;
    outlook_at(store, spec, state, allowed, tree)
}

/// The workspace tree the gates of `spec` measure against now; `None` in a bare repository or
/// when no gate has a condition.
pub fn workspace_tree(store: &Store, spec: &LoopSpec) -> Result<Option<String>, Error> {
    Ok(
        if store.workdir().is_some() && !spec.conditions().is_empty() {
            Some(store.snapshot()?.to_string())
        } else {
            None
        },
    )
}

/// As [`outlook`], against a workspace tree already computed (one snapshot for many loops).
pub fn outlook_at(
    store: &Store,
    spec: &LoopSpec,
    state: &LoopState,
    allowed: Option<&AllowedSigners>,
    tree: Option<String>,
) -> Result<Outlook, Error> {
    let mut gates: Vec<GateNow> = Vec::new();
    let mut moved: Option<(String, String)> = None;
    for t in spec.transitions() {
        let Some(condition) = spec.condition(&t.gate) else {
            continue;
        };
        let passed = state
            .events
            .iter()
            .zip(&state.commits)
            .rev()
            .find(|(e, _)| e.kind == t.event);
        let (event, status) = match passed {
            None => (None, "not yet".to_owned()),
            Some((e, commit)) => {
                let at = hpp_core::event_log::event_id(e.seq);
                let status = match standing(store, e, commit, allowed)? {
                    Standing::Ok => match (Stamp::of(&e.data), &tree) {
                        (Some(stamp), Some(now))
                            if stamp.tree != *now && !matches!(condition, Condition::Scope) =>
                        {
                            moved.get_or_insert((at.clone(), stamp.tree.clone()));
                            format!("held on tree {}, not this one", short(&stamp.tree))
                        }
                        _ => "holds".to_owned(),
                    },
                    Standing::ReferenceMissing { record } => {
                        format!("reference missing: {record}")
                    }
                    Standing::NoLongerHolds { reason } => format!("no longer holds: {reason}"),
                    Standing::UncheckedLegacy => "unchecked (legacy)".to_owned(),
                };
                (Some(at), status)
            }
        };
        let status = match condition {
            Condition::Closure { holds } if status == "holds" => {
                let broken: Vec<&str> = gates
                    .iter()
                    .filter(|g| holds.contains(&g.gate) && g.status != "holds")
                    .map(|g| g.gate.as_str())
                    .collect();
                if broken.is_empty() {
                    status
                } else {
                    format!("no longer holds: {} does not hold now", broken.join(", "))
                }
            }
            _ => status,
        };
        gates.push(GateNow {
            gate: t.gate.clone(),
            requires: condition.describe(),
            event,
            status,
        });
    }
    let here = state
        .projection
        .as_ref()
        .map_or(spec.initial(), |p| p.state.as_str());
    let fixed = maker(state).map(|(_, m)| m);
    let next = spec.transitions().iter().find(|t| t.from == here);
    let mut next_action = match next {
        None => "nothing: the loop is closed".to_owned(),
        Some(t) => match spec.condition(&t.gate) {
            Some(c) => hpp_core::event_loop::gates::instruction(
                c,
                &t.event,
                state.id.as_str(),
                fixed.as_deref(),
            ),
            None => format!(
                "run `git hpp event append --loop {} --type {}`",
                state.id, t.event
            ),
        },
    };
    if let (Some((at, then)), Some(now), Some(_)) = (moved, &tree, next) {
        next_action = format!(
            "the workspace changed since {at} (tree {} then, {} now): restore that tree, or start a new loop on this one; then {next_action}",
            short(&then),
            short(now)
        );
    }
    Ok(Outlook {
        gates,
        next_action,
        tree,
    })
}
