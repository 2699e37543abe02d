//! The states an item and a competition move through.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

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
