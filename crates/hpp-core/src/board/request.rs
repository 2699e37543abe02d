//! What a board command asks for, before the rules decide.

use serde::{Deserialize, Serialize};

use super::{Actor, EvidenceCheck, LaneRegistry, State, VerdictBy};
use crate::deliberation::SessionType;

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
    pub session_type: SessionType,
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
