//! How each event's gate stands now: every record it names re-checked, as `event verify`
//! reports it and as a closing gate re-checks the gates it holds on.

use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;

use hpp_core::attestation::TreeVerdict;
use hpp_core::event_log::{EVENT_FILE, LoggedEvent, SIGNATURE_FILE};
use hpp_core::event_loop::LoopSpec;
use hpp_core::event_loop::gates::{Condition, Named, Stamp, Standing};
use hpp_store::{CommitId, Store, TreeId};

use super::Error;
use super::records::{bundle_holds, verify_tree, why_not};
use crate::attest::{self, VerifyOptions};
use crate::events::LoopState;
use crate::evidence::ArtifactCheck;
use crate::sign::{self, Purpose, SignatureStatus};

/// How an event's gate stands now: every record it names re-checked under the signature rule
/// `trust` (where signatures are required, an approval or a person's event that is not signed
/// does not hold). An event with no stamp is legacy: its chain is checked, its gate never was.
pub fn standing(
    store: &Store,
    event: &LoggedEvent,
    commit: &CommitId,
    trust: VerifyOptions<'_>,
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
        let (sha, problem) =
            bundle_holds(store, record_ref, &tree, ArtifactCheck::RecordOnly, trust)?;
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
        let verification = verify_tree(store, &resolved.0, trust)?;
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
        && trust.require_signed
        && store.read_file(commit.as_str(), SIGNATURE_FILE)?.is_none()
    {
        return Ok(Standing::NoLongerHolds {
            reason: format!("{by}'s approval is not signed, and signatures are required"),
        });
    }
    if let Some(by) = &named.by
        && let Some(armored) = store.read_file(commit.as_str(), SIGNATURE_FILE)?
    {
        let bytes = store
            .read_file(commit.as_str(), EVENT_FILE)?
            .unwrap_or_default();
        let report = sign::check_for(
            Purpose::Person,
            &bytes,
            Some(&armored),
            Some(by),
            trust.allowed,
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

/// Why an event without a gate record does not hold when an earlier event carries one: legacy
/// (unchecked) events are only ever a log's prefix, an imported history.
pub const UNGATED_AFTER_GATED: &str =
    "it carries no gate record after a gated event: only a log's first events may be legacy";

/// Tells whether an event of `kind`, with no gate record, breaks the loop: an earlier event
/// (`before`) carries a gate record and `kind`'s transition has a gate condition.
pub fn ungated_after_gated(spec: &LoopSpec, before: &[LoggedEvent], kind: &str) -> bool {
    spec.transitions()
        .iter()
        .any(|t| t.event == kind && spec.condition(&t.gate).is_some())
        && before.iter().any(|e| Stamp::of(&e.data).is_some())
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
    trust: VerifyOptions<'_>,
) -> Result<Vec<EventGate>, Error> {
    let mut out: Vec<EventGate> = Vec::with_capacity(state.events.len());
    for (i, (event, commit)) in state.events.iter().zip(&state.commits).enumerate() {
        let gate = Stamp::of(&event.data).map(|s| s.name);
        let mut standing = standing(store, event, commit, trust)?;
        if standing == Standing::UncheckedLegacy
            && ungated_after_gated(spec, &state.events[..i], &event.kind)
        {
            standing = Standing::NoLongerHolds {
                reason: UNGATED_AFTER_GATED.to_owned(),
            };
        }
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
