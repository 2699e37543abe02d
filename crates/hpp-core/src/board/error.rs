//! Why the board refused a request.

use super::State;

/// Why the board refused a request. Most are the board's rules (exit 1); [`Error::is_input`]
/// tells the refused input (exit 2) apart.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A required value is empty.
    #[error("{0} must not be empty")]
    Empty(&'static str),
    /// A name looks like a secret.
    #[error(transparent)]
    Secret(#[from] crate::secrets::SecretName),
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
                | Error::Secret(_)
                | Error::BadId { .. }
                | Error::DeliberationType(_)
                | Error::DeliberationVerdict(_)
                | Error::DeliberationJudge { .. }
        )
    }
}
