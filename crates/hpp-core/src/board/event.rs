//! The board's events: what is written to the log, one item or one competition at a time.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use super::{CompetitionState, DeliberationRef, State};

/// The evidence bundle an item event names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRef {
    /// The bundle's ref under `refs/hpp/evidence/`.
    #[serde(rename = "ref")]
    pub record_ref: String,
    /// The bundle's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The record's self-hash, as verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_sha256: Option<String>,
}

/// An evidence bundle as verified at the edge: what it is and whether it verified `valid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidenceCheck {
    /// The bundle.
    pub record: EvidenceRef,
    /// The verification's status (`valid`, `blocked`, `not-evidence`).
    pub status: String,
    /// What is wrong with it, in sentences (empty when valid).
    pub problems: Vec<String>,
}

impl EvidenceCheck {
    /// Whether the bundle verified `valid`.
    pub fn is_valid(&self) -> bool {
        self.status == "valid"
    }
}

/// Who gave a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictBy {
    /// The checker's lane.
    pub lane: String,
    /// The checker's model.
    pub model: String,
}

/// Who writes an event: a lane, its role and its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The lane id.
    pub lane: String,
    /// The role (`executor`, `reviewer`, `coordinator`, `human`, ...).
    pub role: String,
    /// The model.
    pub model: String,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One item event: the item's new state and who wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemEvent {
    /// When, UTC ISO-8601 (`2026-01-31T12:00:00Z`).
    pub ts: CompactString,
    /// The item.
    pub item_id: CompactString,
    /// Its new state.
    pub state: State,
    /// The writer's lane.
    pub lane_id: CompactString,
    /// The writer's role.
    pub role: CompactString,
    /// The writer's model.
    pub model: CompactString,
    /// Free-text evidence note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// The evidence bundle that verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_record: Option<EvidenceRef>,
    /// The checker that gave the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_by: Option<VerdictBy>,
    /// `red`: the item needs a person's approval to merge (sticky).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// The branch merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The lane a fix or a review is handed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_lane: Option<String>,
    /// That lane's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_model: Option<String>,
    /// A queued fix handed to another lane.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reroute: bool,
    /// Written by an operator.
    #[serde(default, skip_serializing_if = "is_false")]
    pub operator: bool,
    /// A person approved the merge.
    #[serde(default, skip_serializing_if = "is_false")]
    pub human_approved: bool,
    /// The competition this event belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The competition's winner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// No checker was available.
    #[serde(default, skip_serializing_if = "is_false")]
    pub checker_unavailable: bool,
}

impl ItemEvent {
    /// A bare event: `item` moves to `state`, written by `actor` at `ts`.
    pub fn new(ts: &str, item: &str, state: State, actor: &Actor) -> Self {
        Self {
            ts: ts.into(),
            item_id: item.into(),
            state,
            lane_id: actor.lane.as_str().into(),
            role: actor.role.as_str().into(),
            model: actor.model.as_str().into(),
            evidence: None,
            evidence_record: None,
            verdict_by: None,
            tag: None,
            branch: None,
            target_lane: None,
            target_model: None,
            reroute: false,
            operator: false,
            human_approved: false,
            task_id: None,
            winner: None,
            reason: None,
            checker_unavailable: false,
        }
    }

    /// Whether this event tags the item red.
    pub fn is_red(&self) -> bool {
        self.tag.as_deref() == Some(RED)
    }
}

/// The tag that makes an item need a person's approval to merge.
pub const RED: &str = "red";

/// The only value of a competition event's `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompetitionKind {
    /// `"competition"`.
    Competition,
}

/// What a candidate looked like when the competition was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compared {
    /// Its state.
    pub state: State,
    /// Its evidence note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Its evidence bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_record: Option<EvidenceRef>,
}

/// One competition event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompetitionEvent {
    /// When, UTC ISO-8601.
    pub ts: String,
    /// Always `competition`.
    pub kind: CompetitionKind,
    /// The competition's id.
    pub task_id: String,
    /// Its new state.
    pub state: CompetitionState,
    /// Every candidate item, as declared.
    pub candidates: Vec<String>,
    /// The writer's lane.
    pub lane_id: String,
    /// The writer's role.
    pub role: String,
    /// The writer's model.
    pub model: String,
    /// The selected item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// The candidates that lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_selected: Option<Vec<String>>,
    /// Every candidate withdrawn so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<Vec<String>>,
    /// The checker that selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_by: Option<VerdictBy>,
    /// The House Session that decided, for `select --deliberation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deliberation: Option<DeliberationRef>,
    /// The candidates as compared at selection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compared: Option<std::collections::BTreeMap<String, Compared>>,
    /// The candidate withdrawn by this event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// The candidates still in the competition after this event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<Vec<String>>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// No checker was available.
    #[serde(default, skip_serializing_if = "is_false")]
    pub checker_unavailable: bool,
}

impl CompetitionEvent {
    /// A bare event of competition `task` in `state`, written by `actor` at `ts`.
    pub fn new(
        ts: &str,
        task: &str,
        state: CompetitionState,
        candidates: Vec<String>,
        actor: &Actor,
    ) -> Self {
        Self {
            ts: ts.to_owned(),
            kind: CompetitionKind::Competition,
            task_id: task.to_owned(),
            state,
            candidates,
            lane_id: actor.lane.clone(),
            role: actor.role.clone(),
            model: actor.model.clone(),
            winner: None,
            not_selected: None,
            withdrawn: None,
            verdict_by: None,
            deliberation: None,
            compared: None,
            item: None,
            remaining: None,
            reason: None,
            checker_unavailable: false,
        }
    }
}

/// One board event: an item's or a competition's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Event {
    /// A competition event (`"kind": "competition"`).
    Competition(CompetitionEvent),
    /// An item event.
    Item(ItemEvent),
}

impl From<ItemEvent> for Event {
    fn from(event: ItemEvent) -> Self {
        Event::Item(event)
    }
}

impl Event {
    /// The item event, if it is one.
    pub fn as_item(&self) -> Option<&ItemEvent> {
        match self {
            Event::Item(e) => Some(e),
            Event::Competition(_) => None,
        }
    }

    /// The competition event, if it is one.
    pub fn as_competition(&self) -> Option<&CompetitionEvent> {
        match self {
            Event::Competition(e) => Some(e),
            Event::Item(_) => None,
        }
    }
}
