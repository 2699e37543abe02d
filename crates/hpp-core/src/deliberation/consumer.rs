//! What a command that acts on a sealed House Session may take from it: the verdict of a
//! session judged outside the maker's family ([`panel_verdict`]), and the whole panel as one
//! decision record ([`as_decision`]). Pure.

use std::collections::BTreeSet;

use serde::Serialize;

use super::panel::{SessionType, SourceKind};
use super::record::{EvidenceGate, Record, VerdictStatus};
use super::{Error, repr_list};
use crate::decision::{self, DecisionOutcome, Direction, Method, Provider, Status};
use crate::family::model_family;

/// What a consumer requires the panel's facts to be grounded on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grounding {
    /// Whatever the panel declared, or nothing.
    Any,
    /// Only evidence bundles: the panel declared its evidence from `hpp.evidence/v1` records
    /// (`deliberate plan --evidence`) and nothing else. A release gate asks this.
    EvidenceRecordsOnly,
}

/// What a consumer (route, attest) may act on from a sealed session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PanelVerdict {
    /// The verdict's status.
    pub status: VerdictStatus,
    /// The verdict's value, if any.
    pub value: Option<String>,
    /// The seal.
    pub record_sha256: String,
    /// The judge seat's declared family.
    pub judge_family: String,
    /// The session type the consumer asked for.
    pub session_type: SessionType,
}

/// The folded names a family or model goes by: itself, case-folded, and its provider family.
fn family_names(names: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for name in names {
        let trimmed = name.trim().to_lowercase();
        if !trimmed.is_empty() {
            out.insert(trimmed);
        }
        if let Some(family) = model_family(name) {
            out.insert(family);
        }
    }
    out
}

/// Returns the verdict of a sealed session for a command that acts on it. Refused unless the
/// record is of `session_type`, asks only options among `allowed`, and was judged outside the
/// maker's family: the judge seat's declared family and its pinned model are folded
/// ([`crate::family`]) and compared with the folded `maker_family`. With
/// [`Grounding::EvidenceRecordsOnly`] (a release gate), the panel must have grounded its facts
/// on declared evidence bundles only. A panel can only make an outcome stricter; the consumer
/// decides. The record verified when it was read ([`Record::from_sealed`]).
///
/// # Errors
///
/// [`Error::SessionNeeded`], [`Error::ConsumerOptions`], [`Error::MakerFamily`],
/// [`Error::SameFamily`] or [`Error::ReleaseEvidence`].
pub fn panel_verdict(
    record: &Record,
    session_type: SessionType,
    allowed: &[&str],
    maker_family: &str,
    grounding: Grounding,
) -> Result<PanelVerdict, Error> {
    let panel = &record.panel;
    if panel.session_type != session_type {
        return Err(Error::SessionNeeded {
            needed: session_type,
            got: panel.session_type,
        });
    }
    let asked: BTreeSet<&str> = panel.options().iter().map(String::as_str).collect();
    if !asked.iter().all(|o| allowed.contains(o)) {
        let mut allowed: Vec<&str> = allowed.to_vec();
        allowed.sort_unstable();
        return Err(Error::ConsumerOptions {
            asked: repr_list(&asked.into_iter().collect::<Vec<_>>()),
            allowed: repr_list(&allowed),
        });
    }
    let judge = panel.judge_seat();
    if maker_family.trim().is_empty() {
        return Err(Error::MakerFamily);
    }
    let judge_names = family_names(&[&judge.family, &judge.model_served]);
    let maker_names = family_names(&[maker_family]);
    if judge_names.intersection(&maker_names).next().is_some() {
        return Err(Error::SameFamily(judge.family.clone()));
    }
    if grounding == Grounding::EvidenceRecordsOnly {
        let sources = panel.evidence.as_ref().and_then(|e| e.sources.as_ref());
        let only_bundles = sources.is_some_and(|s| {
            !s.is_empty() && s.iter().all(|src| src.kind == SourceKind::EvidenceRecord)
        });
        if record.evidence_gate() != Some(EvidenceGate::Resolved) || !only_bundles {
            return Err(Error::ReleaseEvidence);
        }
    }
    Ok(PanelVerdict {
        status: record.verdict.status,
        value: record.verdict.value.clone(),
        record_sha256: record.record_sha256.clone(),
        judge_family: judge.family.clone(),
        session_type,
    })
}

/// The whole panel as one `hpp.decision/v1` record (method `panel`, provider the panel id and
/// the judge seat's model, confidence null, raw response hash = the seal), so `decide eval`
/// measures it like any decider. A blocked verdict is an instrument failure.
pub fn as_decision(record: &Record) -> decision::Record {
    let panel = &record.panel;
    let verdict = &record.verdict;
    let failure = |error: String| DecisionOutcome {
        status: Status::InstrumentFailure,
        value: None,
        confidence: None,
        probabilities: None,
        error: Some(error),
    };
    let outcome = match verdict.status {
        VerdictStatus::Blocked => failure(format!("panel blocked: {}", verdict.reason)),
        VerdictStatus::InstrumentFailure => failure(format!(
            "judge failed: {}",
            verdict.error.as_deref().unwrap_or("unknown")
        )),
        VerdictStatus::Recommendation | VerdictStatus::Abstention => DecisionOutcome {
            status: match verdict.status {
                VerdictStatus::Recommendation => Status::Recommendation,
                _ => Status::Abstention,
            },
            value: verdict.value.clone(),
            confidence: None,
            probabilities: None,
            error: None,
        },
    };
    let judge = record.judge.as_ref();
    decision::Record {
        schema: decision::SCHEMA,
        question: panel.question.clone(),
        state_sha256: panel.state_sha256.clone(),
        method: Method::Panel,
        authority: "advisory",
        direction: judge.map_or(Direction::Informational, |j| j.direction),
        outcome,
        provider: Some(Provider {
            id: panel.id.clone(),
            model_served: Some(panel.judge_seat().model_served.clone()),
        }),
        raw_response_sha256: Some(record.record_sha256.clone()),
        declared: judge.and_then(|j| j.declared.clone()),
        usage: None,
    }
}
