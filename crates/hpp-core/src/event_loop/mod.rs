//! The loop: the state machine every piece of work walks, and its projection.
//!
//! CONCEPTS.md "loop" and "gate": work advances only through a recorded event, and each
//! transition passes a named gate (scope, fresh-evidence, read-only-checker, human, closure).
//! The machine is data, read from the `loop` block of `hpp.manifest.json`; there is no built-in
//! default, so a missing or invalid block is a refusal. This module is pure: it validates the
//! block and projects a history of event types onto it.

pub mod gates;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

/// The event type that counts as recorded evidence.
pub const EVIDENCE_EVENT: &str = "evidence_recorded";
/// The event type that closes a loop; it requires at least one evidence event before it.
pub const CLOSING_EVENT: &str = "verified";

/// Why a loop block or a history was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The manifest's `loop` block is missing or does not describe a machine.
    #[error("invalid loop block in the manifest: {0}")]
    InvalidSpec(String),
    /// An event has no transition from the state the loop is in.
    #[error("invalid transition at event {index}: {state} --{event}--> ?")]
    InvalidTransition {
        /// 1-based position of the refused event.
        index: usize,
        /// The state the loop was in.
        state: String,
        /// The refused event type.
        event: String,
    },
    /// A closing event came before any evidence was recorded.
    #[error("verified requires at least one recorded evidence item")]
    ClosingWithoutEvidence,
}

/// One allowed move of the loop: `from --event--> to`, guarded by `gate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// The state the loop must be in.
    pub from: String,
    /// The event type that moves it.
    pub event: String,
    /// The state it moves to.
    pub to: String,
    /// The gate this transition passes through.
    pub gate: String,
}

/// The loop machine: initial state, transitions and the next step to show per state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopSpec {
    initial: String,
    transitions: Vec<Transition>,
    next_step: BTreeMap<String, String>,
    gates: BTreeMap<String, gates::Condition>,
}

/// Where a history of events leaves the loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Projection {
    /// The current state.
    pub state: String,
    /// How many events the history holds.
    pub event_count: usize,
    /// How many of them recorded evidence.
    pub evidence_count: usize,
    /// The event types, oldest first.
    pub history: Vec<String>,
    /// What to do next, from the manifest's `next_step` map.
    pub next_step: String,
}

/// The next steps the reference harness prints for its own states (built into its code, not
/// its manifest).
pub const REFERENCE_NEXT_STEPS: [(&str, &str); 6] = [
    ("planned", "start work"),
    ("active", "record fresh evidence"),
    ("evidenced", "run read-only checker"),
    ("checked", "request human gate"),
    ("approved", "verify closure"),
    ("verified", "no-op"),
];

impl LoopSpec {
    /// Reads and validates a manifest's `loop` block.
    ///
    /// The block is `{"initial": S, "states": [S...], "next_step": {S: text}, "transitions":
    /// [{"from", "event", "to", "gate"}...]}`; every state it names must be declared, each
    /// `(from, event)` pair must be unique, and every state needs a next step.
    ///
    /// The reference's own protocol-2.1 manifest (`hpp` 2.11) gives only `initial` and
    /// `transitions`: without `states`, the states are the initial one and every state a
    /// transition names; without `next_step`, each state takes the reference's built-in step
    /// ([`REFERENCE_NEXT_STEPS`]), and a state it does not name takes "take a transition:
    /// <events>" (or "no-op" when none leaves it).
    pub fn from_json(block: &Value) -> Result<Self, Error> {
        let bad = |why: &str| Error::InvalidSpec(why.to_owned());
        let obj = block
            .as_object()
            .ok_or_else(|| bad("loop must be an object"))?;
        let text = |v: Option<&Value>, what: &str| -> Result<String, Error> {
            match v.and_then(Value::as_str) {
                Some(s) if !s.trim().is_empty() => Ok(s.to_owned()),
                _ => Err(bad(&format!("{what} must be a non-empty string"))),
            }
        };
        let initial = text(obj.get("initial"), "initial")?;
        let states: BTreeSet<String> = match obj.get("states") {
            // The reference's manifest declares no states: they are the ones its transitions name.
            None => {
                let mut named = BTreeSet::from([initial.clone()]);
                for t in obj
                    .get("transitions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    for key in ["from", "to"] {
                        if let Some(state) = t.get(key).and_then(Value::as_str) {
                            named.insert(state.to_owned());
                        }
                    }
                }
                named
            }
            Some(list) => list
                .as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| bad("states must be a non-empty list"))?
                .iter()
                .map(|s| text(Some(s), "every state"))
                .collect::<Result<_, _>>()?,
        };
        if !states.contains(&initial) {
            return Err(bad(&format!(
                "initial state {initial} is not a declared state"
            )));
        }
        let raw = obj
            .get("transitions")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| bad("transitions must be a non-empty list"))?;
        let mut transitions = Vec::with_capacity(raw.len());
        let mut seen = BTreeSet::new();
        for t in raw {
            let t = Transition {
                from: text(t.get("from"), "transition from")?,
                event: text(t.get("event"), "transition event")?,
                to: text(t.get("to"), "transition to")?,
                gate: text(t.get("gate"), "transition gate")?,
            };
            for state in [&t.from, &t.to] {
                if !states.contains(state) {
                    return Err(bad(&format!("transition names undeclared state {state}")));
                }
            }
            if !seen.insert((t.from.clone(), t.event.clone())) {
                return Err(bad(&format!(
                    "two transitions leave {} on {}",
                    t.from, t.event
                )));
            }
            transitions.push(t);
        }
        let mut next_step = BTreeMap::new();
        match obj.get("next_step") {
            None => {
                for state in &states {
                    let step = match REFERENCE_NEXT_STEPS.iter().find(|(s, _)| s == state) {
                        Some((_, step)) => (*step).to_owned(),
                        None => {
                            let events: Vec<&str> = transitions
                                .iter()
                                .filter(|t| &t.from == state)
                                .map(|t| t.event.as_str())
                                .collect();
                            if events.is_empty() {
                                "no-op".to_owned()
                            } else {
                                format!("take a transition: {}", events.join(", "))
                            }
                        }
                    };
                    next_step.insert(state.clone(), step);
                }
            }
            Some(steps) => {
                let steps = steps.as_object().ok_or_else(|| {
                    bad("next_step must be an object mapping each state to a step")
                })?;
                for state in &states {
                    next_step.insert(
                        state.clone(),
                        text(steps.get(state), &format!("next_step.{state}"))?,
                    );
                }
            }
        }
        let gates = gates::from_block(obj).map_err(Error::InvalidSpec)?;
        for gate in gates.keys() {
            if !transitions.iter().any(|t| &t.gate == gate) {
                return Err(bad(&format!("gates.{gate} names no transition's gate")));
            }
        }
        Ok(Self {
            initial,
            transitions,
            next_step,
            gates,
        })
    }

    /// Returns the condition of `gate`, or `None` when the manifest gives it none (the gate then
    /// checks only the order of events).
    pub fn condition(&self, gate: &str) -> Option<&gates::Condition> {
        self.gates.get(gate)
    }

    /// Returns the same machine with no gate conditions: only the order of events is checked,
    /// as by the Python reference and by a manifest without a `gates` block.
    pub fn ungated(&self) -> Self {
        Self {
            gates: BTreeMap::new(),
            ..self.clone()
        }
    }

    /// Returns every gate that has a condition.
    pub fn conditions(&self) -> &BTreeMap<String, gates::Condition> {
        &self.gates
    }

    /// Returns the initial state.
    pub fn initial(&self) -> &str {
        &self.initial
    }

    /// Returns the transitions, in manifest order.
    pub fn transitions(&self) -> &[Transition] {
        &self.transitions
    }

    /// Returns the transition `state --event-->`, if the machine has one.
    pub fn step(&self, state: &str, event: &str) -> Option<&Transition> {
        self.transitions
            .iter()
            .find(|t| t.from == state && t.event == event)
    }

    /// Projects a history of event types onto the machine, refusing the first event that has no
    /// transition from the state before it.
    ///
    /// ```
    /// # let manifest: serde_json::Value = serde_json::from_str(hpp_core::manifest::BUILT_IN).unwrap();
    /// let spec = hpp_core::event_loop::LoopSpec::from_json(&manifest["loop"]).unwrap();
    /// let p = spec.project(["work_started", "evidence_recorded"]).unwrap();
    /// assert_eq!(p.state, "evidenced");
    /// assert!(spec.project(["verified"]).is_err());
    /// ```
    pub fn project<'a>(
        &self,
        history: impl IntoIterator<Item = &'a str>,
    ) -> Result<Projection, Error> {
        let mut walk = self.walk();
        for event in history {
            walk.step(event)?;
        }
        Ok(walk.projection())
    }

    /// Starts a walk of the machine from its initial state, one event at a time: what
    /// [`LoopSpec::project`] does for a whole history, for a reader that checks each event as
    /// it reads it (one step per event, so checking a loop costs its length, not its square).
    pub fn walk(&self) -> Walk<'_> {
        Walk {
            spec: self,
            state: self.initial.as_str(),
            before: 0,
            history: Vec::new(),
            evidence_count: 0,
        }
    }

    /// Resumes a walk where a verified prefix of `before` events left it, in `state` with
    /// `evidence_count` evidence events: for a reader that extends a verified tip instead of
    /// replaying the whole history. The walk's history then holds only the events taken after
    /// the resume. Refuses a state this machine does not have.
    pub fn resume(
        &self,
        state: &str,
        before: usize,
        evidence_count: usize,
    ) -> Result<Walk<'_>, Error> {
        let state = std::iter::once(self.initial.as_str())
            .chain(self.transitions.iter().map(|t| t.to.as_str()))
            .find(|s| *s == state)
            .ok_or_else(|| {
                Error::InvalidSpec(format!(
                    "the recorded loop state {state} is not a state of this machine"
                ))
            })?;
        Ok(Walk {
            spec: self,
            state,
            before,
            history: Vec::new(),
            evidence_count,
        })
    }

    /// Names the machine by what a projection depends on: the initial state and the
    /// transitions (the sha256 of their JSON). A recorded [`TipState`] is trusted only under the
    /// machine that projected it; gate conditions and next steps do not change where a history
    /// leaves the loop, so they are not part of it.
    pub fn machine_id(&self) -> String {
        let value = serde_json::json!({
            "initial": self.initial,
            "transitions": self.transitions,
        });
        crate::record::sha256_hex(&crate::record::canonical_json(&value))
    }
}

/// Schema of [`TipState`].
pub const TIP_STATE_SCHEMA: &str = "hpp.loop-state/v1";

/// The blob beside an event that records where its loop stands after it (a [`TipState`]): what
/// an append on this tip checks the next event against, without reading the history.
pub const STATE_FILE: &str = "state.json";

/// Where a loop stands after one of its events, recorded beside the event (`state.json` in the
/// event commit's tree) so an append can check the next event against the tip alone, without
/// reading the history. Constant in size whatever the loop's length. It is a claim like any
/// other: a reader trusts it only for a tip it has verified whole once (or extended from one),
/// and checks it against the history whenever it verifies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TipState {
    /// [`TIP_STATE_SCHEMA`].
    pub schema: String,
    /// [`LoopSpec::machine_id`] of the machine that projected it.
    pub machine: String,
    /// How many events the loop holds, this one included.
    pub seq: usize,
    /// The state after this event.
    pub state: String,
    /// How many of the events recorded evidence.
    pub evidence_count: usize,
    /// How many events carry no `prev_sha256` (imported legacy lines).
    pub legacy: usize,
    /// sha256 of this event's bytes: what the next event links to.
    pub head_sha256: String,
    /// The earlier events a gate reads (the first that names the maker and the latest of each
    /// type), oldest first; the event itself is the tip.
    pub kept: Vec<KeptEvent>,
}

/// An earlier event a [`TipState`] points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct KeptEvent {
    /// Its position in the loop.
    pub seq: usize,
    /// Its event commit.
    pub commit: String,
}

/// A walk of the loop, one event at a time ([`LoopSpec::walk`]).
#[derive(Debug, Clone)]
pub struct Walk<'a> {
    spec: &'a LoopSpec,
    state: &'a str,
    /// Events taken before the walk was resumed ([`LoopSpec::resume`]); 0 from the start.
    before: usize,
    history: Vec<String>,
    evidence_count: usize,
}

impl Walk<'_> {
    /// Takes one event, refusing it (and staying put) when the machine has no transition for
    /// it from the current state, or when it closes the loop before any evidence.
    pub fn step(&mut self, event: &str) -> Result<(), Error> {
        let t = self
            .spec
            .step(self.state, event)
            .ok_or_else(|| Error::InvalidTransition {
                index: self.before + self.history.len() + 1,
                state: self.state.to_owned(),
                event: event.to_owned(),
            })?;
        let evidence = self.evidence_count + usize::from(event == EVIDENCE_EVENT);
        if event == CLOSING_EVENT && evidence == 0 {
            return Err(Error::ClosingWithoutEvidence);
        }
        self.evidence_count = evidence;
        self.state = &t.to;
        self.history.push(event.to_owned());
        Ok(())
    }

    /// Where the walk has left the loop. The history holds the events this walk took (all of
    /// them unless it was resumed).
    pub fn projection(&self) -> Projection {
        Projection {
            state: self.state.to_owned(),
            event_count: self.before + self.history.len(),
            evidence_count: self.evidence_count,
            next_step: self
                .spec
                .next_step
                .get(self.state)
                .cloned()
                .unwrap_or_default(),
            history: self.history.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> LoopSpec {
        let manifest: Value = serde_json::from_str(crate::manifest::BUILT_IN).unwrap();
        LoopSpec::from_json(&manifest["loop"]).unwrap()
    }

    #[test]
    fn five_events_reach_verified_through_the_five_gates() {
        let p = spec()
            .project([
                "work_started",
                "evidence_recorded",
                "check_passed",
                "human_approved",
                "verified",
            ])
            .unwrap();
        assert_eq!(p.state, "verified");
        assert_eq!(p.event_count, 5);
        assert_eq!(p.evidence_count, 1);
        assert_eq!(p.next_step, "no-op");
        let gates: Vec<_> = spec()
            .transitions()
            .iter()
            .map(|t| t.gate.clone())
            .collect();
        assert_eq!(
            gates,
            [
                "scope",
                "fresh-evidence",
                "read-only-checker",
                "human",
                "closure"
            ]
        );
    }

    #[test]
    fn a_walk_takes_one_event_at_a_time_and_ends_where_project_does() {
        let spec = spec();
        let mut walk = spec.walk();
        for event in ["work_started", "evidence_recorded"] {
            walk.step(event).unwrap();
        }
        assert_eq!(
            walk.projection(),
            spec.project(["work_started", "evidence_recorded"]).unwrap()
        );
    }

    #[test]
    fn control_a_walk_refuses_a_wrong_event_at_its_place_and_stays_put() {
        let spec = spec();
        let mut walk = spec.walk();
        walk.step("work_started").unwrap();
        let err = walk.step("verified").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid transition at event 2: active --verified--> ?"
        );
        assert_eq!(walk.projection().state, "active");
        assert_eq!(walk.projection().event_count, 1);
    }

    #[test]
    fn an_empty_history_is_the_initial_state() {
        let p = spec().project([]).unwrap();
        assert_eq!(
            (p.state.as_str(), p.next_step.as_str()),
            ("planned", "start work")
        );
    }

    #[test]
    fn control_out_of_order_event_is_refused_with_the_reference_message() {
        let err = spec().project(["verified"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid transition at event 1: planned --verified--> ?"
        );
        let err = spec()
            .project(["work_started", "work_started"])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid transition at event 2: active --work_started--> ?"
        );
    }

    #[test]
    fn control_closing_without_evidence_is_refused_even_if_a_manifest_allows_it() {
        let block = json!({
            "initial": "a", "states": ["a", "b"], "next_step": {"a": "go", "b": "done"},
            "transitions": [{"from": "a", "event": "verified", "to": "b", "gate": "closure"}]
        });
        let spec = LoopSpec::from_json(&block).unwrap();
        assert_eq!(
            spec.project(["verified"]).unwrap_err(),
            Error::ClosingWithoutEvidence
        );
    }

    #[test]
    fn control_invalid_loop_blocks_are_refused() {
        let ok = json!({
            "initial": "a", "states": ["a"], "next_step": {"a": "go"},
            "transitions": [{"from": "a", "event": "e", "to": "a", "gate": "g"}]
        });
        assert!(LoopSpec::from_json(&ok).is_ok());
        let cases = [
            (json!(null), "loop must be an object"),
            (json!({"initial": "x", "states": ["a"]}), "initial state x"),
            (json!({"initial": "a", "states": []}), "states must be"),
            (
                json!({"initial": "a", "states": ["a"], "transitions": []}),
                "transitions must be",
            ),
            (
                json!({"initial": "a", "states": ["a"], "next_step": {"a": "go"},
                       "transitions": [{"from": "a", "event": "e", "to": "z", "gate": "g"}]}),
                "undeclared state z",
            ),
            (
                json!({"initial": "a", "states": ["a"], "next_step": {},
                       "transitions": [{"from": "a", "event": "e", "to": "a", "gate": "g"}]}),
                "next_step.a",
            ),
            (
                json!({"initial": "a", "states": ["a"], "next_step": {"a": "go"},
                       "transitions": [{"from": "a", "event": "e", "to": "a", "gate": "g"},
                                       {"from": "a", "event": "e", "to": "a", "gate": "h"}]}),
                "two transitions leave a on e",
            ),
        ];
        for (block, needle) in cases {
            let err = LoopSpec::from_json(&block).unwrap_err().to_string();
            assert!(err.contains(needle), "{err} should contain {needle}");
        }
    }
}
