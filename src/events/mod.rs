//! The loop log: a loop's events in the store, read, verified, extended and carried in and out.
//!
//! CONCEPTS.md "event" and "loop". Each event is a commit on `refs/hpp/loops/<loop>` whose tree
//! holds `event.json`, the exact bytes of one line of the reference's `events.jsonl`, and
//! `state.json`, where the loop stands after it. A chain is intact only if both the commit chain
//! and the hash chain hold and the history walks the loop. This is the bottom of the trust
//! spine: it names no record above it (evidence, attestations) and no gate. An append asks the
//! floor above whether its event is admitted ([`Admission`], implemented by `crate::gates`).
//!
//! - [`chain`] reads a log and verifies it: whole, from a tip's recorded state, or extended
//!   from a verified tip;
//! - [`cache`] remembers verified tips under the git directory, so reads cost what changed;
//! - [`append`] (the module) extends a loop from a verified tip by compare-and-swap;
//! - [`transfer`] exports and imports the reference's `events.jsonl`;
//! - [`reconcile`] joins a loop two machines appended to, by a person's choice.

pub mod append;
pub mod cache;
pub mod chain;
pub mod reconcile;
pub mod transfer;

use serde::Serialize;

use hpp_core::event_log::{ChainReport, LoggedEvent};
use hpp_core::event_loop::{self, Projection};
use hpp_core::secrets;
use hpp_store::refs::{self, LoopId};
use hpp_store::{self as store, CommitId, Store};

pub use self::append::{Admission, Admitted, append};
pub use self::chain::read;
pub use self::transfer::{export, import};

/// Why a loop operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The event does not follow the loop (the reference's refusal message).
    #[error(transparent)]
    Transition(#[from] event_loop::Error),
    /// The loop's chain is broken, so nothing may be appended or exported.
    #[error("loop {id} is broken at {at}: {problem}")]
    Broken {
        /// The loop.
        id: LoopId,
        /// The first divergent event.
        at: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A ref under `refs/hpp/loops/` whose name is not a loop name (written by another tool).
    #[error("{name}: is not a valid loop name")]
    BadLoopRef {
        /// The ref.
        name: String,
    },
    /// The event type is empty.
    #[error("event type must be a non-empty string")]
    EmptyType,
    /// Event data nests deeper than any reader of the record would parse.
    #[error(
        "event data nests {depth} levels deep; at most {max} are kept, since every reader of an event parses it with serde_json's recursion limit (the reference takes up to about 990)",
        max = hpp_core::event_log::MAX_DATA_DEPTH
    )]
    TooDeep {
        /// How deep it nests (the data object is level 1).
        depth: usize,
    },
    /// Event data holds a number no finite float can carry (`1e400`).
    #[error(
        "event data holds a number too large for a finite float at {path}: it would be stored as written and read back as infinity"
    )]
    NonFinite {
        /// Where, as keys and indexes joined by `/`.
        path: String,
    },
    /// Event data looks like it carries a secret; records are pushed with the repository.
    #[error(
        "event data looks like it carries a secret; records under refs/hpp are pushed with the repository"
    )]
    Secret,
    /// The loop's name looks like a secret.
    #[error(transparent)]
    SecretName(#[from] secrets::SecretName),
    /// Every attempt lost the race for the loop's ref.
    #[error("loop {id} kept moving: gave up after {attempts} attempts")]
    Contended {
        /// The loop.
        id: LoopId,
        /// How many attempts were made.
        attempts: usize,
    },
    /// Export of a loop that has no events.
    #[error("loop {id} has no events")]
    NoEvents {
        /// The loop.
        id: LoopId,
    },
    /// Import into a loop that already exists.
    #[error("loop {id} already has events: import into a new loop with --loop NAME")]
    AlreadyExists {
        /// The loop.
        id: LoopId,
    },
    /// The imported file breaks the chain rules or the loop.
    #[error("refusing to import: {problem} (first divergent: {at})")]
    ImportBroken {
        /// The first divergent event or line.
        at: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The imported file cannot become a loop as it is.
    #[error("refusing to import: {0}")]
    ImportRefused(String),
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A loop as read from its ref and checked.
#[derive(Debug, Clone, Serialize)]
pub struct LoopState {
    /// The loop's name.
    #[serde(rename = "loop")]
    pub id: LoopId,
    /// The ref holding its log.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// The tip commit: the anchor of the commit chain.
    pub head: Option<CommitId>,
    /// The chain report.
    pub chain: ChainReport,
    /// The events that passed the rules, oldest first.
    #[serde(skip)]
    pub events: Vec<LoggedEvent>,
    /// The commit of each of those events.
    #[serde(skip)]
    pub commits: Vec<CommitId>,
    /// The projection, when the chain is not broken.
    pub projection: Option<Projection>,
}

impl LoopState {
    fn broken_error(&self) -> Option<Error> {
        self.chain.is_broken().then(|| Error::Broken {
            id: self.id.clone(),
            at: self.chain.first_divergent.clone().unwrap_or_default(),
            problem: self.chain.problem.clone().unwrap_or_default(),
        })
    }

    /// Returns the projection, or refuses a broken chain.
    pub fn require_intact(&self) -> Result<&Projection, Error> {
        match (self.broken_error(), &self.projection) {
            (Some(e), _) => Err(e),
            (None, Some(p)) => Ok(p),
            (None, None) => unreachable!("an unbroken chain always projects"),
        }
    }
}

/// The outcome of an append.
#[derive(Debug, Clone, Serialize)]
pub struct Appended {
    /// The loop's name.
    #[serde(rename = "loop")]
    pub id: LoopId,
    /// The new event's commit, now the loop's head.
    pub commit: CommitId,
    /// The new event's id (`event:<n>`).
    pub event: String,
    /// The projection after the append.
    pub projection: Projection,
    /// How many read-check-swap rounds it took (1 when nobody else was writing).
    pub attempts: usize,
}

/// Reads every loop under `refs/hpp/loops/`, sorted by name, for showing where each stands:
/// a long loop's tip verified before is read from what was remembered of it
/// ([`cache::read_standing`]), so listing costs what changed since, not every event again.
pub fn list(store: &Store, spec: &event_loop::LoopSpec) -> Result<Vec<LoopState>, Error> {
    let mut out = Vec::new();
    for (name, _) in store.list(refs::LOOPS_PREFIX)? {
        let short = name.strip_prefix(refs::LOOPS_PREFIX).unwrap_or(&name);
        let id: LoopId = short
            .parse()
            .map_err(|_| Error::BadLoopRef { name: name.clone() })?;
        out.push(cache::read_standing(store, spec, &id)?);
    }
    Ok(out)
}
