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
mod error;
mod event;
mod registry;
mod request;
mod rules;
mod state;

pub use error::Error;
pub use event::{
    Actor, Compared, CompetitionEvent, CompetitionKind, Event, EvidenceCheck, EvidenceRef,
    ItemEvent, RED, VerdictBy,
};
pub use registry::{DEAD_AFTER_S, LaneRegistry, lane_registry};
pub use request::{Choice, Deliberated, DeliberationRef, Request, SetRequest};
pub use rules::{decide, validate};
pub use state::{CompetitionState, State, UnknownState};
