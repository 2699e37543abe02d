//! Extending a loop by one event, from a verified tip, by compare-and-swap.
//!
//! The log decides what is the log's: the event type is not empty, nothing in it has a secret's
//! shape, and it takes a transition from where the verified history left the loop. Whether the
//! gate that transition passes holds is decided above the log ([`Admission`], which the loop
//! gates implement): the log asks it on every attempt, with the loop as that attempt read it,
//! and never names what it checks.

use serde_json::{Map, Value};

use hpp_core::event_log::{self, EVENT_FILE, SIGNATURE_FILE};
use hpp_core::event_loop::{self, KeptEvent, LoopSpec, Projection, STATE_FILE, TipState};
use hpp_core::record::{GENESIS_SHA256, canonical_json, sha256_hex};
use hpp_core::secrets;
use hpp_store::refs::LoopId;
use hpp_store::retry::{self, Attempt};
use hpp_store::{NewRecord, Store};

use super::{Appended, Error, LoopState, cache, chain};

/// What an [`Admission`] lets one attempt write.
pub struct Admitted {
    /// The event's data as it will be written (a gate stamps what it checked into it).
    pub data: Map<String, Value>,
    /// Whether the event's exact bytes are to be signed ([`Admission::sign`]).
    pub signed: bool,
}

/// The decision an append asks for before it writes, made by the floor above the log.
///
/// [`append`] calls [`Admission::admit`] on every attempt of the store's retry, after the
/// transition was checked against the tip that attempt read, so a writer that lost a race is
/// judged again against the new tip; then, when admitted data is to be signed, it hands the
/// event's exact bytes to [`Admission::sign`] and keeps the signature beside the event.
pub trait Admission {
    /// The caller's error; every loop error converts into it.
    type Error: From<Error>;

    /// Decides whether an event of type `kind` with `data` may follow `state` (the loop as this
    /// attempt read it), and returns what to write.
    fn admit(
        &self,
        state: &LoopState,
        kind: &str,
        data: Map<String, Value>,
    ) -> Result<Admitted, Self::Error>;

    /// Returns the signature (the armored SSHSIG) over `bytes`, the event as it will be written
    /// with admitted `data`; called only when the admission said the event is signed.
    fn sign(&self, bytes: &[u8], data: &Map<String, Value>) -> Result<Vec<u8>, Self::Error>;
}

/// Appends one event to a loop, refusing it unless it takes a transition from where the
/// verified history left the loop and `admission` admits it. The tip is read alone when it was
/// verified here before ([`cache::read_tip`]), so an append costs the same at ten events and at
/// a hundred thousand. Concurrent writers never lose an event: a writer whose compare-and-swap
/// fails reads the new tip, checks the transition and asks the admission again, by the store's
/// one retry rule ([`retry::retry`]).
pub fn append<A: Admission>(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    kind: &str,
    data: Map<String, Value>,
    admission: &A,
) -> Result<Appended, A::Error> {
    refuse_before_reading(id, kind, &data)?;
    let appended = retry::retry(|attempt| {
        let state = cache::read_tip(store, spec, id)?;
        let projection = step(spec, &state, kind)?;
        let admitted = admission.admit(&state, kind, data.clone())?;
        let seq = state.chain.events + 1;
        let prev = state.chain.head_sha256.as_deref().unwrap_or(GENESIS_SHA256);
        let bytes = event_log::new_event(seq, kind, admitted.data.clone(), prev);
        let signature = if admitted.signed {
            Some(admission.sign(&bytes, &admitted.data)?)
        } else {
            None
        };
        let recorded = canonical_json(
            &serde_json::to_value(tip_state(spec, &state, &projection, seq, &bytes))
                .expect("a loop state serialises"),
        );
        let beside: Vec<(&str, &[u8])> = signature
            .as_deref()
            .map(|s| (SIGNATURE_FILE, s))
            .into_iter()
            .chain([(STATE_FILE, recorded.as_slice())])
            .collect();
        let message = format!("hpp event {seq}: {kind}");
        let record = NewRecord {
            file: EVENT_FILE,
            bytes: &bytes,
            message: &message,
        };
        let written =
            Attempt::of(store.append_with(&state.ref_name, state.head.as_ref(), &record, &beside))
                .map_err(Error::from)?;
        if let Attempt::Done(commit) = &written {
            cache::mark(store, spec, id, commit);
        }
        Ok::<_, A::Error>(written.map(|commit| Appended {
            id: id.clone(),
            commit,
            event: event_log::event_id(seq),
            projection,
            attempts: attempt,
        }))
    })?;
    appended.ok_or_else(|| {
        Error::Contended {
            id: id.clone(),
            attempts: retry::ATTEMPTS,
        }
        .into()
    })
}

/// Refuses what no tip could admit, before the loop is read: an empty type, a secret's shape
/// in the type or the data, a loop name with a secret's shape.
fn refuse_before_reading(id: &LoopId, kind: &str, data: &Map<String, Value>) -> Result<(), Error> {
    if kind.trim().is_empty() {
        return Err(Error::EmptyType);
    }
    let depth = event_log::depth(&Value::Object(data.clone()));
    if depth > event_log::MAX_DATA_DEPTH {
        return Err(Error::TooDeep { depth });
    }
    let data = Value::Object(data.clone());
    if let Some(path) = hpp_core::record::non_finite_number(&data) {
        return Err(Error::NonFinite { path });
    }
    let data_text = String::from_utf8(canonical_json(&data)).expect("canonical JSON is UTF-8");
    if secrets::looks_secret(&data_text) || secrets::looks_secret(kind) {
        return Err(Error::Secret);
    }
    secrets::check_name("the loop name", id.as_str())?;
    Ok(())
}

/// Checks that `kind` takes a transition from where the verified `state` stands, and returns
/// the projection after it. A tip read alone carries only the history it read, so the history
/// is extended only when it is whole.
fn step(spec: &LoopSpec, state: &LoopState, kind: &str) -> Result<Projection, Error> {
    let before = state.require_intact()?;
    let mut walk = spec.resume(&before.state, before.event_count, before.evidence_count)?;
    walk.step(kind)?;
    let mut projection = walk.projection();
    if before.history.len() == before.event_count {
        projection.history = before
            .history
            .iter()
            .cloned()
            .chain([kind.to_owned()])
            .collect();
    }
    Ok(projection)
}

/// What the new tip records about where the loop stands after the event with `bytes` at `seq`:
/// the events a gate reads are those of the tip it extends, as [`chain::kept`] picks them.
fn tip_state(
    spec: &LoopSpec,
    state: &LoopState,
    projection: &Projection,
    seq: usize,
    bytes: &[u8],
) -> TipState {
    TipState {
        schema: event_loop::TIP_STATE_SCHEMA.to_owned(),
        machine: spec.machine_id(),
        seq,
        state: projection.state.clone(),
        evidence_count: projection.evidence_count,
        legacy: state.chain.legacy,
        head_sha256: sha256_hex(bytes),
        kept: chain::kept(&state.events)
            .into_iter()
            .map(|i| KeptEvent {
                seq: state.events[i].seq,
                commit: state.commits[i].to_string(),
            })
            .collect(),
    }
}
