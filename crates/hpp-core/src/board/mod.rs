//! The lane board (CONCEPTS.md "lane", "maker and checker", "evidence bundle"): work items move
//! through the reference's states, only along its transitions; competitions (best-of-N) put
//! several items built by different lanes against each other and a checker of another model
//! family selects one.
//!
//! [`decide`] is the whole rule book: it takes every event written so far and one request and
//! returns the events to append, or the refusal. It reads no file and touches no git: an
//! evidence bundle is verified at the edge and only its verdict comes in ([`EvidenceCheck`]).
//! [`checker`] picks a checker of another provider (the reference's checker router). The
//! application keeps the board in one compare-and-swap log under `refs/hpp/board/`.

pub mod checker;
mod rules;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use rules::{decide, validate};

/// The states an item moves through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
pub enum State {
    /// A lane took the item.
    Claimed,
    /// The lane is building it.
    Building,
    /// The builder says it is ready, with evidence that verifies.
    CheckpointReady,
    /// A checker is reviewing it.
    UnderReview,
    /// A checker of another family found it good.
    Verified,
    /// A checker found defects.
    NeedsFix,
    /// A fix is queued for a named lane (`release-fix`).
    FixQueued,
    /// A person approved a red item (`approve`).
    Approved,
    /// No checker was available; the review waits.
    Deferred,
    /// Merged: final.
    Merged,
    /// Lost a competition: final.
    NotSelected,
    /// Withdrawn from a competition: final.
    Withdrawn,
}

impl State {
    /// Every state, in the order of the reference's table.
    pub const ALL: [State; 12] = [
        State::Claimed,
        State::Building,
        State::CheckpointReady,
        State::UnderReview,
        State::Verified,
        State::NeedsFix,
        State::FixQueued,
        State::Approved,
        State::Deferred,
        State::Merged,
        State::NotSelected,
        State::Withdrawn,
    ];

    /// The state's name on the board (`CHECKPOINT-READY`).
    pub fn as_str(self) -> &'static str {
        match self {
            State::Claimed => "CLAIMED",
            State::Building => "BUILDING",
            State::CheckpointReady => "CHECKPOINT-READY",
            State::UnderReview => "UNDER-REVIEW",
            State::Verified => "VERIFIED",
            State::NeedsFix => "NEEDS-FIX",
            State::FixQueued => "FIX-QUEUED",
            State::Approved => "APPROVED",
            State::Deferred => "DEFERRED",
            State::Merged => "MERGED",
            State::NotSelected => "NOT-SELECTED",
            State::Withdrawn => "WITHDRAWN",
        }
    }

    /// Whether nothing may follow this state.
    pub fn is_terminal(self) -> bool {
        matches!(self, State::Merged | State::NotSelected | State::Withdrawn)
    }

    /// Whether an event in this state names a builder of the item (the reference's "builder
    /// events": CLAIMED, BUILDING, CHECKPOINT-READY).
    pub fn is_build(self) -> bool {
        matches!(
            self,
            State::Claimed | State::Building | State::CheckpointReady
        )
    }

    /// The states that may follow `from` (`None`: the item has no event yet).
    pub fn successors(from: Option<State>) -> &'static [State] {
        match from {
            None => &[State::Claimed],
            Some(State::Claimed) => &[State::Building, State::Claimed],
            Some(State::Building) => &[State::CheckpointReady, State::Building],
            Some(State::CheckpointReady) => &[State::UnderReview],
            Some(State::UnderReview) => &[State::Verified, State::NeedsFix, State::Deferred],
            Some(State::NeedsFix) => &[State::Building, State::FixQueued],
            Some(State::FixQueued) => &[State::Building],
            Some(State::Verified) => &[State::Merged, State::Approved],
            Some(State::Approved) => &[State::Merged],
            Some(State::Deferred) => &[State::UnderReview],
            Some(State::Merged | State::NotSelected | State::Withdrawn) => &[],
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a state name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown board state {0:?}: expected one of CLAIMED, BUILDING, CHECKPOINT-READY, UNDER-REVIEW, VERIFIED, NEEDS-FIX, FIX-QUEUED, APPROVED, DEFERRED, MERGED, NOT-SELECTED, WITHDRAWN"
)]
pub struct UnknownState(pub String);

impl FromStr for State {
    type Err = UnknownState;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_uppercase().replace('_', "-");
        State::ALL
            .into_iter()
            .find(|s| s.as_str() == wanted)
            .ok_or_else(|| UnknownState(text.to_owned()))
    }
}

/// The states of a competition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
pub enum CompetitionState {
    /// Declared by `compete`.
    Declared,
    /// A winner was selected; the others are NOT-SELECTED.
    Selected,
    /// No checker was available: no winner, the competition stays open.
    Deferred,
    /// One candidate was withdrawn; the competition stays open.
    Withdrawn,
}

impl CompetitionState {
    /// The state's name on the board.
    pub fn as_str(self) -> &'static str {
        match self {
            CompetitionState::Declared => "DECLARED",
            CompetitionState::Selected => "SELECTED",
            CompetitionState::Deferred => "DEFERRED",
            CompetitionState::Withdrawn => "WITHDRAWN",
        }
    }
}

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
    pub ts: String,
    /// The item.
    pub item_id: String,
    /// Its new state.
    pub state: State,
    /// The writer's lane.
    pub lane_id: String,
    /// The writer's role.
    pub role: String,
    /// The writer's model.
    pub model: String,
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
            ts: ts.to_owned(),
            item_id: item.to_owned(),
            state,
            lane_id: actor.lane.clone(),
            role: actor.role.clone(),
            model: actor.model.clone(),
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

/// What the lane registry (`refs/hpp/lanes/`) says about each registered lane at the time of a
/// request: lane id → alive. A lane absent from it is not registered; the board takes it (a
/// board lane need not be a worktree), and refuses only a lane known to be dead.
pub type LaneRegistry = std::collections::BTreeMap<String, bool>;

/// Seconds without a heartbeat after which a registered lane is dead (the reference's default).
pub const DEAD_AFTER_S: i64 = 30 * 60;

/// Builds the [`LaneRegistry`] from the lane-map source document (`[{"id", "status",
/// "heartbeat_at", ...}]`, heartbeat in Unix seconds) at `now`: a lane is dead when its status
/// is closed, aborted, dead or inactive, or its last heartbeat is older than [`DEAD_AFTER_S`].
pub fn lane_registry(source: &serde_json::Value, now: i64) -> LaneRegistry {
    source
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|lane| {
            let id = lane.get("id")?.as_str()?.to_owned();
            let status = lane
                .get("status")
                .and_then(|s| s.as_str())
                .unwrap_or("open");
            let closed = matches!(status, "closed" | "aborted" | "dead" | "inactive");
            let stale = lane
                .get("heartbeat_at")
                .and_then(serde_json::Value::as_i64)
                .is_some_and(|at| now - at > DEAD_AFTER_S);
            Some((id, !closed && !stale))
        })
        .collect()
}

/// How `select` ends a competition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// This candidate wins; every other active candidate becomes NOT-SELECTED.
    Winner(String),
    /// No checker was available: record DEFERRED, never a winner.
    CheckerUnavailable,
    /// A sealed House Session, verified at the edge, decides: its recommendation wins and its
    /// judge is the selector.
    Deliberation(Deliberated),
}

/// What `select --deliberation` takes from a sealed House Session that verified: its type, the
/// options it weighed, its verdict and its judge seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deliberated {
    /// The panel's session type (`design` is the only one select takes).
    pub session_type: String,
    /// The options the panel weighed.
    pub options: Vec<String>,
    /// The verdict's status (`recommendation` is the only one select takes).
    pub status: String,
    /// The verdict's value.
    pub value: Option<String>,
    /// The judge seat's lane and pinned model: the selector.
    pub judge: VerdictBy,
    /// The record, as the competition event names it.
    pub record: DeliberationRef,
}

/// The sealed House Session a competition was decided by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliberationRef {
    /// The record's id (`<panel id>-<first 12 of the seal>`).
    pub id: String,
    /// The seal.
    pub record_sha256: String,
    /// The ref it is kept at, when it was read from one.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// `set ITEM STATE`: every flag of the reference's `set`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRequest {
    /// The item.
    pub item: String,
    /// The state asked for.
    pub state: State,
    /// Who writes it.
    pub actor: Actor,
    /// Free-text evidence note.
    pub evidence: Option<String>,
    /// The evidence bundle named, as verified at the edge.
    pub evidence_record: Option<EvidenceCheck>,
    /// `--verdict-by-lane`.
    pub verdict_by_lane: Option<String>,
    /// `--verdict-by-model`.
    pub verdict_by_model: Option<String>,
    /// `--tag red`.
    pub red: bool,
    /// `--human-approved`.
    pub human_approved: bool,
    /// `--checker-unavailable`.
    pub checker_unavailable: bool,
    /// `--branch`.
    pub branch: Option<String>,
    /// `--reason`.
    pub reason: Option<String>,
}

impl SetRequest {
    /// A request with no optional flag.
    pub fn new(item: &str, state: State, actor: Actor) -> Self {
        Self {
            item: item.to_owned(),
            state,
            actor,
            evidence: None,
            evidence_record: None,
            verdict_by_lane: None,
            verdict_by_model: None,
            red: false,
            human_approved: false,
            checker_unavailable: false,
            branch: None,
            reason: None,
        }
    }
}

/// One request to the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `set ITEM STATE` (and `claim ITEM`, which is `set ITEM CLAIMED`).
    Set(SetRequest),
    /// `compete --task T --items A,B,...`.
    Compete {
        /// The competition's id.
        task: String,
        /// The candidates.
        items: Vec<String>,
        /// Who declares it.
        actor: Actor,
    },
    /// `select --task T (--winner X | --checker-unavailable | --deliberation REC)`.
    Select {
        /// The competition.
        task: String,
        /// The outcome.
        choice: Choice,
        /// The checker who selects.
        actor: Actor,
        /// Why.
        reason: Option<String>,
    },
    /// `withdraw --task T --item X --reason R`.
    Withdraw {
        /// The competition.
        task: String,
        /// The candidate withdrawn.
        item: String,
        /// Who withdraws it.
        actor: Actor,
        /// Why (required).
        reason: String,
    },
    /// `release-fix ITEM --target-lane L`: NEEDS-FIX → FIX-QUEUED.
    ReleaseFix {
        /// The item.
        item: String,
        /// The lane that will build the fix.
        target_lane: String,
        /// Who releases it.
        actor: Actor,
        /// An operator releases it (reroutes a queued fix whose lane is not known dead).
        operator: bool,
        /// The lane registry now.
        lanes: LaneRegistry,
    },
    /// `start-review ITEM --target-lane L`: CHECKPOINT-READY or DEFERRED → UNDER-REVIEW.
    StartReview {
        /// The item.
        item: String,
        /// The reviewer's lane.
        target_lane: String,
        /// The reviewer's model, when known.
        target_model: Option<String>,
        /// Who starts the review.
        actor: Actor,
        /// The lane registry now.
        lanes: LaneRegistry,
    },
    /// `approve ITEM`: VERIFIED → APPROVED, for red items.
    Approve {
        /// The item.
        item: String,
        /// The person who approves.
        actor: Actor,
        /// Why.
        reason: Option<String>,
    },
}

/// Why the board refused a request. Most are the board's rules (exit 1); [`Error::is_input`]
/// tells the refused input (exit 2) apart.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A required value is empty.
    #[error("{0} must not be empty")]
    Empty(&'static str),
    /// An id with characters the board does not take.
    #[error("invalid {what} {value:?}: use letters, digits, '.', '_', '-' and '/' only")]
    BadId {
        /// Which id.
        what: &'static str,
        /// The value.
        value: String,
    },
    /// A state that only a dedicated verb may write.
    #[error("{state} is written only by `git hpp board {verb}`")]
    OnlyVia {
        /// The state.
        state: State,
        /// The verb.
        verb: &'static str,
    },
    /// The item is in a final state.
    #[error("{item} is {state}, a final state: it never moves again")]
    Terminal {
        /// The item.
        item: String,
        /// Its state.
        state: State,
    },
    /// Not one of the reference's transitions.
    #[error("invalid transition for {item}: {from} -> {to}")]
    Transition {
        /// The item.
        item: String,
        /// Its state (`None` when it has no event).
        from: String,
        /// The state asked for.
        to: State,
    },
    /// BUILDING from FIX-QUEUED by a lane other than the queued one.
    #[error("{item} is queued for lane {target}; lane {lane} may not take it to BUILDING")]
    NotQueuedLane {
        /// The item.
        item: String,
        /// The lane asking.
        lane: String,
        /// The queued lane.
        target: String,
    },
    /// A lane that built one candidate may not build a rival.
    #[error(
        "lane {lane} built {rival}, a rival of {item} in competition {task}: it may not build {item}"
    )]
    RivalBuilder {
        /// The lane.
        lane: String,
        /// The item asked for.
        item: String,
        /// The rival it built.
        rival: String,
        /// The competition.
        task: String,
    },
    /// CHECKPOINT-READY by another role than executor.
    #[error("CHECKPOINT-READY needs --role executor, not {role:?}")]
    CheckpointRole {
        /// The role given.
        role: String,
    },
    /// CHECKPOINT-READY by a lane other than the item's owner.
    #[error(
        "only the owner of {item} (lane {owner}) may mark it CHECKPOINT-READY, not lane {lane}"
    )]
    NotOwner {
        /// The item.
        item: String,
        /// The lane asking.
        lane: String,
        /// The lane of the item's last event.
        owner: String,
    },
    /// CHECKPOINT-READY without an evidence bundle.
    #[error(
        "CHECKPOINT-READY needs --evidence-record: an evidence bundle under refs/hpp/evidence/ that verifies valid"
    )]
    NoEvidence,
    /// The evidence bundle does not verify.
    #[error("evidence {record} does not verify ({status}): {problems}")]
    EvidenceInvalid {
        /// The bundle's ref.
        record: String,
        /// The verification's status.
        status: String,
        /// Its problems, joined.
        problems: String,
    },
    /// A verdict by another role than reviewer.
    #[error("{state} needs --role reviewer, not {role:?}")]
    VerdictRole {
        /// The verdict.
        state: State,
        /// The role given.
        role: String,
    },
    /// A verdict while declaring the checker unavailable.
    #[error("{state} is a checker's verdict: with --checker-unavailable record DEFERRED instead")]
    VerdictUnavailable {
        /// The verdict.
        state: State,
    },
    /// A verdict without naming its checker.
    #[error("{state} needs both --verdict-by-lane and --verdict-by-model")]
    VerdictByMissing {
        /// The verdict.
        state: State,
    },
    /// The checker's lane claimed or built the item.
    #[error("reviewer lane {lane} claimed or built {item}: a checker may not judge its own work")]
    ReviewerBuilt {
        /// The checker's lane.
        lane: String,
        /// The item.
        item: String,
    },
    /// The checker's model names no family.
    #[error(
        "reviewer model {0:?} names no model family (empty, auto and default are refused): name the model"
    )]
    NoFamily(String),
    /// A builder's model names no family, so a different family cannot be shown.
    #[error(
        "builder model {model:?} of {item} names no model family, so the checker cannot be shown to be of another family"
    )]
    BuilderNoFamily {
        /// The builder's model.
        model: String,
        /// The item.
        item: String,
    },
    /// The checker is of a builder's family.
    #[error(
        "reviewer model {model} is of family {family}, like a builder of {item}: the checker must be of another model family"
    )]
    SameFamily {
        /// The checker's model.
        model: String,
        /// The shared family.
        family: String,
        /// The item.
        item: String,
    },
    /// DEFERRED without `--checker-unavailable`.
    #[error("DEFERRED is recorded only with --checker-unavailable")]
    DeferredNeedsUnavailable,
    /// MERGED before any VERIFIED.
    #[error("{0} was never VERIFIED: it cannot be MERGED")]
    NeverVerified(String),
    /// The item's competition is not decided.
    #[error(
        "{item} is a candidate of competition {task}, which is not decided: select a winner first"
    )]
    Undecided {
        /// The item.
        item: String,
        /// The competition.
        task: String,
    },
    /// A red item merged without a person's approval.
    #[error("{0} is tagged red: MERGED needs --human-approved or an APPROVED event")]
    RedNeedsHuman(String),
    /// `approve` on an item that is not red.
    #[error("{0} is not tagged red: approve is only for red items")]
    NotRed(String),
    /// A competition of fewer than two distinct items.
    #[error("a competition needs at least two distinct items")]
    TooFewItems,
    /// A competition id already in use.
    #[error("competition {0} already exists: choose another --task")]
    TaskUsed(String),
    /// A candidate that was never claimed.
    #[error("{0} is not claimed: claim it before it competes")]
    NotClaimed(String),
    /// A candidate already in another competition.
    #[error("{item} is already a candidate of competition {task}")]
    OtherCompetition {
        /// The item.
        item: String,
        /// The other competition.
        task: String,
    },
    /// Two candidates built by the same lane.
    #[error("{first} and {second} share builder lane {lane}: candidates need distinct builders")]
    SharedBuilder {
        /// The lane.
        lane: String,
        /// One candidate.
        first: String,
        /// The other.
        second: String,
    },
    /// No competition by that id.
    #[error("no competition {0}")]
    NoCompetition(String),
    /// The competition was already decided.
    #[error("competition {0} is already decided")]
    Decided(String),
    /// The winner is not an active candidate.
    #[error("{winner} is not an active candidate of competition {task}")]
    NotCandidate {
        /// The item named.
        winner: String,
        /// The competition.
        task: String,
    },
    /// `select --deliberation` with a session that is not a design session.
    #[error("the deliberation is a {0} session: select takes a design session")]
    DeliberationType(String),
    /// `select --deliberation` with a verdict that is not a recommendation.
    #[error("the deliberation's verdict is {0}, not a recommendation: it cannot select")]
    DeliberationVerdict(String),
    /// `select --deliberation` where the selector is not the session's judge.
    #[error("the selector of a deliberation is its judge ({lane}, {model})")]
    DeliberationJudge {
        /// The judge's lane.
        lane: String,
        /// The judge's model.
        model: String,
    },
    /// `select --deliberation` with options other than the remaining candidates.
    #[error(
        "the deliberation weighed {}, but the remaining candidates of {task} are {}",
        options.join(", "), remaining.join(", ")
    )]
    DeliberationOptions {
        /// The competition.
        task: String,
        /// The options the session weighed, sorted.
        options: Vec<String>,
        /// The active candidates, sorted.
        remaining: Vec<String>,
    },
    /// A candidate not ready to be compared.
    #[error(
        "candidate {item} is {state}: every candidate must be CHECKPOINT-READY with evidence, or VERIFIED, before select"
    )]
    NotReady {
        /// The candidate.
        item: String,
        /// Its state.
        state: String,
    },
    /// The selector built a candidate.
    #[error("lane {lane} built candidate {item} of competition {task}: it may not select")]
    SelectorBuilt {
        /// The selector's lane.
        lane: String,
        /// The candidate it built.
        item: String,
        /// The competition.
        task: String,
    },
    /// `withdraw` without a reason.
    #[error("withdraw needs --reason")]
    ReasonRequired,
    /// Withdrawing from a competition of one.
    #[error("competition {0} has fewer than two remaining candidates: nothing can be withdrawn")]
    TooFewRemaining(String),
    /// The lane withdrawing built a rival of the item.
    #[error("lane {lane} built {rival}, a rival of {item}: it may not withdraw {item}")]
    WithdrawerBuiltRival {
        /// The lane.
        lane: String,
        /// The candidate withdrawn.
        item: String,
        /// The rival it built.
        rival: String,
    },
    /// A second release of a queued fix whose lane is not known dead, without `--operator`.
    #[error(
        "{item} is already queued for lane {target}, which is not known to be dead: rerouting it needs --operator"
    )]
    RerouteNeedsOperator {
        /// The item.
        item: String,
        /// The queued lane.
        target: String,
    },
    /// A fix or a review handed to a registered lane that is dead.
    #[error(
        "lane {0} is registered but dead (closed, or no heartbeat for 30 minutes): hand the work to a live lane"
    )]
    DeadLane(String),
    /// A review handed to a lane that claimed or built the item.
    #[error("lane {lane} claimed or built {item}: it may not review it")]
    TargetBuilt {
        /// The lane.
        lane: String,
        /// The item.
        item: String,
    },
}

impl Error {
    /// Whether this is refused input (exit 2) rather than a board rule (exit 1).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            Error::Empty(_)
                | Error::BadId { .. }
                | Error::DeliberationType(_)
                | Error::DeliberationVerdict(_)
                | Error::DeliberationJudge { .. }
        )
    }
}
