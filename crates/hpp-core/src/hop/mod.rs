//! The Hop agent protocol (seeds/HOP-PROTOCOL.md; CONCEPTS.md "lane", ARCHITECTURE §5): prompt,
//! checkpoint and proposal states of agent attempts, and the accepted chain they land on.
//!
//! The pure parts live here, each taking values and returning values: state ids ([`ids`]),
//! states with their parent roles, digests and undo rule ([`states`]), the commit-message
//! trailers that carry a state's metadata ([`trailers`]), and the landing overlap rule
//! ([`overlap`]). The application's `hop` workflow combines them with the store (states are
//! commits under `refs/hpp/hop/`) and the bounded process runner.

pub mod ids;
pub mod overlap;
pub mod states;
pub mod trailers;

pub use ids::{AttemptId, CheckId, Kind, StateId, TaskId};
pub use states::{Parent, Role, State};

/// Why a hop value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A string is not a well-formed id of the expected family.
    #[error("invalid {what} id {id:?}: expected {prefix}_ followed by 23 base32 characters")]
    InvalidId {
        /// What kind of id was expected (`state`, `task`, `attempt`, `check`).
        what: &'static str,
        /// The prefix(es) it should start with.
        prefix: &'static str,
        /// The refused text.
        id: String,
    },
    /// A commit message has no `Hop-State` trailer, so it is not a hop state.
    #[error("not a hop state: the commit message has no Hop-State trailer")]
    NotAState,
    /// A trailer a state needs is missing.
    #[error("state {id}: missing trailer {trailer}")]
    MissingTrailer {
        /// The state (or what could be read of it).
        id: String,
        /// The trailer key.
        trailer: &'static str,
    },
    /// A trailer's value cannot be read.
    #[error("state {id}: malformed trailer {trailer}: {detail}")]
    BadTrailer {
        /// The state.
        id: String,
        /// The trailer key.
        trailer: String,
        /// What is wrong with it.
        detail: String,
    },
    /// `hop undo` on the initial accepted state.
    #[error("the initial accepted state cannot be undone")]
    NothingToUndo,
    /// An accepted state names a canonical parent that cannot be found.
    #[error("accepted state {id} names {missing} as its canonical parent, which does not exist")]
    BrokenChain {
        /// The state.
        id: String,
        /// The missing parent.
        missing: String,
    },
    /// A `HOP_*` variable an agent command needs is not set.
    #[error(
        "invalid agent launch: {var} is not set; stop before editing and ask for a Hop-controlled launch (`eval \"$(hop env P_...)\"`)"
    )]
    MissingLaunchVar {
        /// The variable.
        var: &'static str,
    },
    /// A `HOP_*` variable disagrees with the state the command names.
    #[error("invalid agent launch: {var} is {found:?} but {state} belongs to {expected:?}")]
    LaunchMismatch {
        /// The variable.
        var: &'static str,
        /// Its value.
        found: String,
        /// The state named on the command line.
        state: String,
        /// What the state says.
        expected: String,
    },
}
