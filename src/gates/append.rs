//! The gated append: an event reaches a loop only through its gates, and evidence that passed is
//! recorded into a loop the same way.

use serde_json::{Map, Value, json};

use hpp_core::event_loop::{EVIDENCE_EVENT, LoopSpec};
use hpp_core::evidence::Verdict;
use hpp_store::Store;
use hpp_store::refs::LoopId;

use super::admit::LoopGates;
use super::{Error, GateOptions};
use crate::events::{self, Appended};
use crate::evidence::{self, RunOutcome, RunRequest};

/// Appends one event to a loop through its gates: the log checks the transition from the
/// verified tip, and [`LoopGates`] checks the gate it passes against the records it names, on
/// every attempt ([`events::append`]).
pub fn append(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    kind: &str,
    data: Map<String, Value>,
    options: &GateOptions<'_>,
) -> Result<Appended, Error> {
    events::append(
        store,
        spec,
        id,
        kind,
        data,
        &LoopGates::new(store, spec, *options),
    )
}

/// A criterion run, and the event that recorded it into a loop when one was asked for.
#[derive(Debug, Clone)]
pub struct EvidenceRecorded {
    /// The run and its bundle.
    pub run: RunOutcome,
    /// The appended `evidence_recorded`, when a loop was named and the run passed.
    pub event: Option<Appended>,
    /// Why that event could not be appended, if it could not (the bundle is kept all the same).
    pub event_error: Option<String>,
}

/// Runs a criterion command and records its bundle ([`evidence::run`]); when `into` names a
/// loop and the run passed, appends `evidence_recorded` naming the bundle through the loop's
/// gates. A refused event does not undo the bundle: it is reported beside it.
pub fn record_evidence(
    store: &Store,
    request: RunRequest,
    into: Option<(&LoopSpec, LoopId)>,
    options: &GateOptions<'_>,
) -> Result<EvidenceRecorded, evidence::Error> {
    let id = request.id.clone();
    let run = evidence::run(store, request)?;
    let mut recorded = EvidenceRecorded {
        run,
        event: None,
        event_error: None,
    };
    if let (Some((spec, loop_id)), Verdict::Passed) = (into, recorded.run.record.verdict) {
        let data = json!({"evidence": [recorded.run.record_ref], "id": id});
        let data = data.as_object().cloned().expect("a JSON object literal");
        match append(store, spec, &loop_id, EVIDENCE_EVENT, data, options) {
            Ok(appended) => recorded.event = Some(appended),
            Err(e) => recorded.event_error = Some(e.to_string()),
        }
    }
    Ok(recorded)
}
