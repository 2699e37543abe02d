//! House Session (CONCEPTS.md "House Session"): panels, turns, stop rules, the sealed record.
//!
//! A deliberation between pinned deciders, recorded so it can be verified and measured. The
//! harness calls no model: seats answer elsewhere (a lane, a CLI, a person), and this module says
//! what a panel (`hpp.panel/v1`), a turn (`hpp.turn/v1`), the judge seat's rationale
//! (`hpp.rationale/v1`) and a finished session (`hpp.deliberation/v2`) must look like to be
//! recorded, when a session stops, and what a consumer may act on.
//!
//! - **Diversity is declared, not assumed.** Every seat names its pinned model (an alias such as
//!   `-latest` is refused) and its family; the participants come from at least two families, the
//!   one judge sits in a lane no participant uses, and each session type has its role minimums.
//! - **The first round is blind, and that is checkable.** A round-1 turn that saw anything is
//!   refused; a later turn may only have seen turns of earlier rounds.
//! - **A seat that did not answer is not judged.** It is never a vote against; it blocks the
//!   verdict.
//! - **The session stops by rule**, in a fixed order: not-judged, grounded-convergence,
//!   paused-budget, no-new-evidence, max-rounds. Turns after the round where a rule first held
//!   are refused.
//! - **The record seals itself.** `record_sha256` covers everything but `human_decision`, and
//!   [`verify_record`] re-derives every key from the panel, the turns, the judge and the
//!   rationale the record holds. The seal is not a signature: the store can add one.
//!
//! Every record is a typed value: a [`Panel`], its [`Turn`]s, a [`Session`] with its
//! [`Tally`] and [`Stop`], and the sealed [`Record`] with its [`Verdict`] and [`Rationale`].
//! Documents from outside (files, a seat's or the judge's answer, a ref's `record.json`) are
//! read into them at the edge ([`normalise_panel`], [`normalise_turn`], [`Session::parse`],
//! [`Record::from_sealed`]), which keeps the reference's refusal sentences. Serialised, a
//! record is its canonical JSON byte for byte, so its seal stays what it was.
//!
//! [`panel`], [`session`] and [`record`] hold the rules, [`consumer`] what route, attest and
//! the board may take from a sealed session, [`seat`] what a seat runner hands the seats and
//! the judge and takes back from them; the application keeps a sealed record at
//! `refs/hpp/deliberations/<id>` under the id [`Record::id`] gives it.

pub mod consumer;
pub mod panel;
pub mod record;
pub mod seat;
pub mod session;
#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_json::Value;

use crate::decision;
use crate::record::{canonical_json, is_sha256_hex, sha256_hex, to_object};

pub use self::consumer::{Grounding, PanelVerdict, as_decision, panel_verdict};
pub use self::panel::{Panel, Role, SessionType, normalise_panel};
pub use self::record::{
    EvidenceGate, HumanDecision, Rationale, Record, Verdict, VerdictStatus, Verification,
    build_record, record_exit_is_ok, verify_record,
};
pub use self::session::{
    Session, Stop, StopReason, Stopped, Tally, Turn, decide_stop, normalise_turn, tally,
};

/// Schema of a panel.
pub const PANEL_SCHEMA: &str = "hpp.panel/v1";
/// Schema of a turn.
pub const TURN_SCHEMA: &str = "hpp.turn/v1";
/// Schema of a sealed session (current).
pub const SCHEMA: &str = "hpp.deliberation/v2";
/// The sealed record blob in a deliberation commit's tree (`refs/hpp/deliberations/<id>`).
pub const RECORD_FILE: &str = "record.json";
/// The signature blob beside it (SSHSIG, namespace `hpp`, over the bytes of [`RECORD_FILE`]).
pub const SIGNATURE_FILE: &str = "record.sig";
/// The principal that signed, beside the signature (the record's own keys are fixed by its
/// schema).
pub const SIGNER_FILE: &str = "signer";
/// Schema of a session sealed before the evidence gate and the rationale.
pub const SCHEMA_V1: &str = "hpp.deliberation/v1";
/// Schema of the judge seat's rationale.
pub const RATIONALE_SCHEMA: &str = "hpp.rationale/v1";
/// Schema of `deliberate tally` output.
pub const TALLY_SCHEMA: &str = "hpp.deliberation-tally/v1";
/// The most rounds any session may have.
pub const MAX_ROUNDS: i64 = 10;
/// A turn's position when the seat declines to choose.
pub const ABSTAIN: &str = decision::ABSTAIN;

/// A panel, turn, judge record, rationale or sealed record that breaks the contract; the
/// messages are the reference's refusal sentences.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The panel is not an object.
    #[error("a panel must be an object")]
    PanelNotObject,
    /// The panel's schema is not [`PANEL_SCHEMA`].
    #[error("schema must be hpp.panel/v1")]
    PanelSchema,
    /// A required text is missing or blank.
    #[error("{0} must be non-empty text")]
    Text(String),
    /// The session type is unknown.
    #[error("session_type must be one of plan, review, release-gate, incident, design")]
    SessionType,
    /// The panel's question breaks a decision rule.
    #[error("question: {0}")]
    Question(decision::Error),
    /// A hash field is not a lowercase sha256.
    #[error("{0} must be a 64-character lowercase sha256")]
    Hex(String),
    /// No seats.
    #[error("a panel needs seats")]
    NoSeats,
    /// A seat is not an object.
    #[error("every seat must be an object")]
    SeatNotObject,
    /// A seat's role is unknown.
    #[error("seat {0}: role must be one of proponent, dissent, examiner, judge")]
    Role(String),
    /// A seat names a moving alias instead of a pinned model.
    #[error("seat {seat}: model_served {model} is a moving alias; name the pinned version")]
    Alias {
        /// The seat id.
        seat: String,
        /// The model, quoted.
        model: String,
    },
    /// Two seats share an id.
    #[error("seat ids must be unique")]
    SeatIds,
    /// One pinned model declared under two families.
    #[error(
        "the same model {model} is declared under two families ({known} and {family}); one pinned model is one family"
    )]
    ModelFamilies {
        /// The model, quoted.
        model: String,
        /// The family declared first, quoted.
        known: String,
        /// The other family, quoted.
        family: String,
    },
    /// Not exactly one judge.
    #[error("a panel needs exactly one judge seat, found {0}")]
    JudgeCount(usize),
    /// Two participants share a lane.
    #[error("every participant answers from its own lane; two seats share one")]
    SharedLane,
    /// The judge sits in a participant's lane.
    #[error("the judge sits outside the participants: its lane is a participant's lane")]
    JudgeLane,
    /// The participants come from one family.
    #[error(
        "the participants must come from at least two model families; one family arguing with itself is ceremony, not diversity"
    )]
    OneFamily,
    /// A design session without one proponent per option.
    #[error("a {session_type} session needs one proponent per option ({needed}), found {present}")]
    ProponentPerOption {
        /// The session type.
        session_type: SessionType,
        /// Proponents needed.
        needed: usize,
        /// Proponents present.
        present: usize,
    },
    /// A role below its minimum.
    #[error("a {session_type} session needs at least {needed} {role} seat(s), found {present}")]
    RoleMinimum {
        /// The session type.
        session_type: SessionType,
        /// Seats needed.
        needed: usize,
        /// The role.
        role: Role,
        /// Seats present.
        present: usize,
    },
    /// No budget object.
    #[error("a panel declares its budget: max_rounds and max_chars")]
    Budget,
    /// `max_rounds` outside 1..=10.
    #[error("budget.max_rounds must be a whole number from 1 to 10")]
    MaxRounds,
    /// More rounds than the session type allows.
    #[error("an {session_type} session allows at most {ceiling} rounds (one reply)")]
    RoundCeiling {
        /// The session type.
        session_type: SessionType,
        /// Its ceiling.
        ceiling: i64,
    },
    /// `max_chars` is not a positive integer.
    #[error("budget.max_chars must be a positive whole number of characters")]
    MaxChars,
    /// `evidence` has the wrong shape.
    #[error("evidence must be an object with ids and, optionally, sources")]
    Evidence,
    /// `evidence.ids` has the wrong shape.
    #[error("evidence.ids must be a non-empty list of unique, non-empty ids")]
    EvidenceIds,
    /// `evidence.sources` is not a list.
    #[error("evidence.sources must be a list")]
    EvidenceSources,
    /// A source has the wrong shape.
    #[error("evidence.sources: each source is {{kind: context or evidence-record, sha256, id?}}")]
    EvidenceSource,
    /// The panel's `sha256` does not match its content.
    #[error("panel sha256 does not match its content; the panel was edited after hashing")]
    PanelHash,
    /// A turn is not an object.
    #[error("a turn must be an object")]
    TurnNotObject,
    /// A turn's schema is not [`TURN_SCHEMA`].
    #[error("turn schema must be hpp.turn/v1")]
    TurnSchema,
    /// A turn of another panel.
    #[error("the turn belongs to a different panel (panel_sha256 does not match)")]
    TurnPanel,
    /// A turn by the judge or a stranger.
    #[error("seat {0} is not a participant of this panel (the judge takes no turns)")]
    NotParticipant(String),
    /// A round outside the budget.
    #[error("turn round must be from 1 to {0}")]
    TurnRound(i64),
    /// A position that is neither an option nor `abstain`.
    #[error("position {0} is neither an option nor 'abstain'")]
    Position(String),
    /// A confidence outside 0..=1.
    #[error("confidence must be a number between 0 and 1, or null")]
    Confidence,
    /// `claims` is not a list.
    #[error("claims must be a list")]
    Claims,
    /// A claim of an unknown kind.
    #[error("claim kind must be one of fact, inference, opinion")]
    ClaimKind,
    /// A claim's refs have the wrong shape.
    #[error("claim refs must be a list of unique, non-empty ids")]
    ClaimRefs,
    /// `chars` is not a non-negative integer.
    #[error("chars must be the length of the verbatim text, a whole number >= 0")]
    Chars,
    /// `seen_turns` has the wrong shape.
    #[error("seen_turns must list the hashes of the turns this seat had read")]
    SeenTurns,
    /// A round-1 turn saw something.
    #[error("the first round is blind: a round-1 turn cannot have seen other turns")]
    NotBlind,
    /// The turn's `sha256` does not match its content.
    #[error("turn sha256 does not match its content; the turn was edited after hashing")]
    TurnHash,
    /// `turns` is not a list.
    #[error("turns must be a list")]
    Turns,
    /// Two turns of one seat in one round.
    #[error("seat {seat} spoke twice in round {round}")]
    SpokeTwice {
        /// The seat.
        seat: String,
        /// The round.
        round: i64,
    },
    /// A seen turn that is not part of the session.
    #[error("seat {seat} (round {round}) lists a seen turn that is not in this session")]
    SeenUnknown {
        /// The seat.
        seat: String,
        /// The round.
        round: i64,
    },
    /// A seen turn of the same or a later round.
    #[error("seat {seat} (round {round}) can only have seen turns of an earlier round")]
    SeenLater {
        /// The seat.
        seat: String,
        /// The round.
        round: i64,
    },
    /// Rounds with a gap.
    #[error("rounds must run without gaps from 1; found {0}")]
    RoundGaps(String),
    /// Turns after the session stopped.
    #[error(
        "the session stopped at round {round} ({reason}); turns of later rounds are not part of it"
    )]
    Stopped {
        /// The round where a rule first held.
        round: i64,
        /// The rule.
        reason: StopReason,
    },
    /// The session has not stopped yet.
    #[error("the session has not stopped (next round {0}); run it or stop it first")]
    NotStopped(i64),
    /// A verdict without the judge's record.
    #[error("a verdict needs the judge's decision record (hpp.decision/v1)")]
    JudgeMissing,
    /// The judge's record breaks a decision rule.
    #[error("judge record: {0}")]
    Judge(decision::Error),
    /// The judge answered another question.
    #[error("the judge answered a different question than the panel's")]
    JudgeQuestion,
    /// The judge judged another state.
    #[error("the judge judged a different state than the panel's")]
    JudgeState,
    /// The judge's record is not a model's.
    #[error(
        "the judge seat pins a model, so the judge record must come from it (method local-model or external-model), not {0}"
    )]
    JudgeMethod(String),
    /// The judge's record names another provider.
    #[error("the judge record names provider {given}, not the judge seat's {seat}")]
    JudgeProvider {
        /// The provider in the record, quoted.
        given: String,
        /// The seat's provider, quoted.
        seat: String,
    },
    /// The judge's record was served by another model.
    #[error("the judge record was served by {given}, not by the judge seat's pinned model {seat}")]
    JudgeModel {
        /// The model in the record, quoted.
        given: String,
        /// The seat's model, quoted.
        seat: String,
    },
    /// Grounded dissent stands and no rationale was given.
    #[error(
        "a verdict over grounded dissent needs the judge seat's rationale: a steelman of each dissenting position ({0}) and would_change_if"
    )]
    RationaleMissing(String),
    /// The rationale has the wrong shape.
    #[error(
        "a rationale is an hpp.rationale/v1 object: panel_sha256, author, steelman, would_change_if"
    )]
    RationaleShape,
    /// A rationale of another panel.
    #[error("the rationale belongs to another panel (panel_sha256 does not match)")]
    RationalePanel,
    /// A rationale not written by the judge seat.
    #[error("the rationale is written by the judge seat ({judge}), not by {given}")]
    RationaleAuthor {
        /// The judge seat.
        judge: String,
        /// The author given, quoted.
        given: String,
    },
    /// A rationale list is not a list.
    #[error("rationale {0} must be a list")]
    RationaleList(&'static str),
    /// A rationale entry has the wrong shape.
    #[error("rationale {0}: each entry holds the hash and length of its verbatim text")]
    RationaleEntry(&'static str),
    /// A rationale entry's `chars` is not a positive integer.
    #[error("rationale {0}: chars must be the length of a non-empty verbatim text")]
    RationaleChars(&'static str),
    /// The steelman does not argue exactly the dissenting positions.
    #[error(
        "the steelman must argue exactly the dissenting positions ({positions}), once each; got {got}"
    )]
    Steelman {
        /// The dissenting positions, or `none`.
        positions: String,
        /// The positions written, as a list.
        got: String,
    },
    /// A would_change_if entry names a position.
    #[error("rationale would_change_if: an entry names a condition, not a position")]
    WouldChangePosition,
    /// Grounded dissent stands and nothing would change the verdict.
    #[error("a verdict over grounded dissent must say what would change it (would_change_if)")]
    WouldChangeEmpty,
    /// A v1 record with a rationale.
    #[error("a hpp.deliberation/v1 record carries no rationale")]
    V1Rationale,
    /// A v1 record whose panel declares evidence.
    #[error("a hpp.deliberation/v1 record predates the evidence gate; a panel with evidence is v2")]
    V1Evidence,
    /// A human decision with no options to check it against.
    #[error("the record has no question options to check human_decision against")]
    HumanOptions,
    /// A human decision of the wrong shape.
    #[error("human_decision must be null or {{value: an option, by: who decided, note?: text}}")]
    Human,
    /// A consumer was handed a record that does not verify.
    #[error("the deliberation record does not verify: {0}")]
    NotIntact(String),
    /// A consumer needs another session type.
    #[error("a {needed} session is needed here, this record is a {got} session")]
    SessionNeeded {
        /// The type the consumer needs.
        needed: SessionType,
        /// The record's type.
        got: SessionType,
    },
    /// The panel asked options the consumer does not understand.
    #[error("the panel's options {asked} are not all among {allowed}")]
    ConsumerOptions {
        /// The panel's options, as a sorted list.
        asked: String,
        /// The consumer's options, as a sorted list.
        allowed: String,
    },
    /// No maker family named.
    #[error("name the maker's model family: a judge of that family is refused")]
    MakerFamily,
    /// `--deliberation` without `--maker-family`.
    #[error("--deliberation needs --maker-family: a judge of the maker's family is refused")]
    NeedsMakerFamily,
    /// The judge is of the maker's family.
    #[error(
        "the judge is of the same family as the maker ({0}); a panel cannot be judged by the family it is checking"
    )]
    SameFamily(String),
    /// A release gate grounded on something other than evidence bundles.
    #[error(
        "a release gate counts only evidence bundles: the panel must declare its evidence from hpp.evidence/v1 records (deliberate plan --evidence)"
    )]
    ReleaseEvidence,
    /// `validate` got a document of another schema.
    #[error("expected a hpp.panel/v1, hpp.turn/v1 or hpp.deliberation/v2 document, got {0}")]
    ExpectedSchema(String),
    /// `validate` got a turn without its panel.
    #[error("validating a turn needs --panel, the panel it belongs to")]
    TurnNeedsPanel,
    /// The seats file is not an object with `seats` as an object.
    #[error(
        "a seats file is an object: {{schema: hpp.seats/v1, seats: {{seat: argv}}, judge: argv}}"
    )]
    SeatsShape,
    /// The seats file's schema is not `hpp.seats/v1`.
    #[error("seats file schema must be hpp.seats/v1")]
    SeatsSchema,
    /// The seats file carries a key the contract does not define.
    #[error("the seats file carries a key the contract does not define: {0}")]
    SeatsKey(String),
    /// The seats file gives the judge seat a participant's command.
    #[error("seat {0} is the judge: its command is the seats file's judge, not one of its seats")]
    SeatIsJudge(String),
    /// The seats file names a seat the panel does not have.
    #[error("seat {0} is not a participant of this panel")]
    SeatUnknown(String),
    /// A participant has no command.
    #[error("seat {0} has no command in the seats file; every participant needs one")]
    SeatMissing(String),
    /// A command that is not a non-empty list of non-empty strings.
    #[error(
        "{0}: a command is a non-empty list of non-empty strings without a NUL byte (an argv, never a shell line)"
    )]
    SeatArgv(String),
    /// `judge_method` is neither model method.
    #[error("judge_method must be local-model or external-model")]
    JudgeMethodDeclared,
    /// An evidence record given to `plan --evidence` does not verify.
    #[error("evidence record {name} does not verify ({status}): it resolves nothing")]
    EvidenceNotValid {
        /// The record as named.
        name: String,
        /// Its verification status.
        status: String,
    },
}

/// Returns the sha256 of the canonical JSON of `value`.
pub(crate) fn hash(value: &Value) -> String {
    sha256_hex(&canonical_json(value))
}

/// Returns the sha256 of the canonical JSON of a typed record without `keys`: what its own
/// hash field covers.
pub(crate) fn hash_without<T: Serialize + ?Sized>(record: &T, keys: &[&str]) -> String {
    let mut object = to_object(record);
    for key in keys {
        object.remove(*key);
    }
    hash(&Value::Object(object))
}

/// Returns `value` as a lowercase sha256, or refuses with `label`.
pub(crate) fn hex(value: Option<&Value>, label: &str) -> Result<String, Error> {
    match value {
        Some(Value::String(text)) if is_sha256_hex(text) => Ok(text.clone()),
        _ => Err(Error::Hex(label.to_owned())),
    }
}

/// Returns `value` as non-blank text, or refuses with `label`.
pub(crate) fn text(value: Option<&Value>, label: &str) -> Result<String, Error> {
    match value {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.clone()),
        _ => Err(Error::Text(label.to_owned())),
    }
}

/// Returns a strict integer (not a bool, not a float).
pub(crate) fn int(value: Option<&Value>) -> Option<i64> {
    match value {
        Some(Value::Number(n)) => n.as_i64(),
        _ => None,
    }
}

/// Python's `repr` of a value (`None` when absent) and of a list of strings, as the
/// refusals quote them.
pub(crate) use crate::pyrepr::{list as repr_list, optional as repr};

/// Returns the string behind a key, or `""`.
pub fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Returns the id a sealed record document is kept under: `<panel id>-<first 12 of
/// record_sha256>` when the panel id is a portable name, else `session-<first 12>`.
pub fn record_id(record: &Value) -> String {
    let panel_id = record
        .get("panel")
        .map(|p| str_of(p, "id"))
        .unwrap_or_default();
    id_of(panel_id, str_of(record, "record_sha256"))
}

/// The id of a record of panel `panel_id` sealed as `sha`.
pub(crate) fn id_of(panel_id: &str, sha: &str) -> String {
    let short = &sha[..sha.len().min(12)];
    let portable = !panel_id.is_empty()
        && panel_id.len() <= 80
        && panel_id
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && panel_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !panel_id.contains("..")
        && !panel_id.ends_with(".lock");
    if portable {
        format!("{panel_id}-{short}")
    } else {
        format!("session-{short}")
    }
}
