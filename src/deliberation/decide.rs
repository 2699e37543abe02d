//! A person's decision on a sealed House Session (CONCEPTS.md "House Session"; `git hpp
//! deliberate decide`): the decision stands outside the seal, as `human_decision.json` (and
//! `human_decision.sig` when signed) in one child commit of the session's ref at
//! `refs/hpp/deliberations/<id>`, which moves forward by compare-and-swap, so a session is
//! decided once and two people deciding at once cannot both win.

use serde::Serialize;
use serde_json::Value;

use super::{HUMAN_DECISION_FILE, HUMAN_DECISION_SIGNATURE, StoreError, load, resolve};
use crate::sign::{self, Signing};
use hpp_core::deliberation::{self as rules, HumanDecision, Verification};
use hpp_core::record::canonical_record;
use hpp_core::secrets;
use hpp_store::Store;

/// Why a decision was not recorded; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `by` or `note` has the shape of a secret.
    #[error("the decision carries text shaped like a secret; it would be pushed with the record")]
    Secret,
    /// The ref's tree or the record with the decision does not verify (the value is not an
    /// option, say).
    #[error("{name}: {reason}")]
    Broken {
        /// The ref.
        name: String,
        /// What does not hold.
        reason: String,
    },
    /// The session already carries a person's decision.
    #[error("{name} is already decided by {by}: a decision is recorded once")]
    Decided {
        /// The ref.
        name: String,
        /// Who decided, as the decision names them (`?` when it does not).
        by: String,
    },
    /// No record by that name, several, or the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Signing failed.
    #[error(transparent)]
    Sign(#[from] sign::Error),
}

/// A decision recorded: what `deliberate decide` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decided {
    /// Always `decided`.
    pub status: &'static str,
    /// The session's ref.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The decision, as kept in `human_decision.json`.
    pub human_decision: HumanDecision,
    /// Whether `human_decision.sig` was written beside it.
    pub signed: bool,
}

/// Refuses a decision whose `by` or `note` has the shape of a secret: it would be pushed with
/// the record. Checked before anything is read.
///
/// # Errors
///
/// [`Error::Secret`].
pub fn refuse_secrets(decision: &HumanDecision) -> Result<(), Error> {
    let texts = [Some(&decision.by), decision.note.as_ref()];
    if texts
        .into_iter()
        .flatten()
        .any(|t| secrets::looks_secret(t))
    {
        return Err(Error::Secret);
    }
    Ok(())
}

/// Records `decision` on the sealed session `record` names (a ref, an id or a panel id naming
/// one record): the ref's tree must hold the sealed parts, the session must not be decided yet,
/// and the record with the decision must verify (the value is one of the panel's options). The
/// decision's canonical bytes are signed with `signing` when given, and written in one child
/// commit of the session's ref, moved by compare-and-swap from the tip read.
///
/// # Errors
///
/// [`Error`]; nothing is written.
pub fn decide(
    store: &Store,
    record: &str,
    decision: HumanDecision,
    signing: Option<&Signing>,
) -> Result<Decided, Error> {
    refuse_secrets(&decision)?;
    let name = resolve(store, record)?;
    let tip = store
        .tip(&name)
        .map_err(StoreError::from)?
        .ok_or_else(|| StoreError::NotFound(name.clone()))?;
    let loaded = load(store, &name, None)?;
    if let Some(problem) = loaded.problems.first() {
        return Err(Error::Broken {
            name,
            reason: problem.clone(),
        });
    }
    if let Some(decided) = loaded.record.get("human_decision").filter(|h| !h.is_null()) {
        let by = decided.get("by").and_then(Value::as_str).unwrap_or("?");
        return Err(Error::Decided {
            by: by.to_owned(),
            name,
        });
    }
    // The record as read stays a document here: what `verify` says of it, with the decision
    // added, is the refusal a person reads.
    let mut with_decision = loaded.record;
    with_decision["human_decision"] =
        serde_json::to_value(&decision).expect("a decision serialises: its keys are strings");
    if let Verification::Broken { reason, .. } = rules::verify_record(&with_decision) {
        return Err(Error::Broken { name, reason });
    }
    let bytes = canonical_record(&decision);
    let armored = signing.map(|s| s.sign(&bytes)).transpose()?;
    let mut files: Vec<(&str, &[u8])> = vec![(HUMAN_DECISION_FILE, &bytes)];
    if let Some(armored) = &armored {
        files.push((HUMAN_DECISION_SIGNATURE, armored.as_bytes()));
    }
    store
        .extend_record(
            &name,
            &tip,
            &files,
            &format!("hpp: human decision on {name}"),
        )
        .map_err(StoreError::from)?;
    Ok(Decided {
        status: "decided",
        reference: name,
        human_decision: decision,
        signed: armored.is_some(),
    })
}
