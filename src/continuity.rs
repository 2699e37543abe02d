//! Handoffs in the store (CONCEPTS.md "continuity"): each lane's handoffs are a log at
//! `refs/hpp/handoffs/<lane>`, one `handoff.json` per commit, appended by the store's retry
//! rule. The handoff itself (what it records, when it is stale) is [`hpp_core::continuity`];
//! this reads and writes the logs and measures the git state a handoff records.

use hpp_core::continuity::{self, GitState, Handoff};
use hpp_store::refs::{self, HANDOFFS_PREFIX};
use hpp_store::{self as store, CommitId, NewRecord, Store};

/// Why reading or writing a handoff log failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A handoff in a log does not parse or validate.
    #[error("{HANDOFFS_PREFIX}{lane} at {commit}: {source}")]
    Unreadable {
        /// The lane.
        lane: String,
        /// The commit holding it.
        commit: CommitId,
        /// Why.
        #[source]
        source: continuity::Error,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// One handoff as read: its lane, its commit and the handoff.
#[derive(Debug, Clone)]
pub struct Found {
    /// The lane whose log holds it.
    pub lane: String,
    /// Its commit.
    pub commit: CommitId,
    /// The handoff.
    pub handoff: Handoff,
}

/// Measures the git state of the worktree a handoff records: HEAD, the branch and what
/// `git status --porcelain` says.
pub fn git_state(store: &Store) -> Result<GitState, store::Error> {
    let head = store.head_commit()?.map(|c| c.as_str().to_owned());
    let branch = store.current_branch()?;
    let porcelain = store.worktree_porcelain()?;
    Ok(GitState::from_porcelain(head, branch, porcelain))
}

/// Appends a handoff to its lane's log.
pub fn write(store: &Store, lane: &str, handoff: &Handoff) -> Result<CommitId, store::Error> {
    let bytes = continuity::to_bytes(handoff);
    let message = format!("hpp handoff {}\n", handoff.handoff_id);
    store.append_retrying(
        &refs::handoffs(lane),
        &NewRecord {
            file: continuity::FILE,
            bytes: &bytes,
            message: &message,
        },
    )
}

/// Returns the raw bytes of a lane's last handoff, if any (unparsed: a caller comparing states
/// treats a broken one as different).
pub fn last_bytes(store: &Store, lane: &str) -> Result<Option<Vec<u8>>, store::Error> {
    Ok(store
        .read_log(&refs::handoffs(lane), continuity::FILE)?
        .entries
        .pop()
        .map(|(_, bytes)| bytes))
}

/// Reads a lane's last handoff.
pub fn last(store: &Store, lane: &str) -> Result<Option<Found>, Error> {
    let Some((commit, bytes)) = store
        .read_log(&refs::handoffs(lane), continuity::FILE)?
        .entries
        .pop()
    else {
        return Ok(None);
    };
    let handoff = continuity::parse(&bytes).map_err(|source| Error::Unreadable {
        lane: lane.to_owned(),
        commit: commit.clone(),
        source,
    })?;
    Ok(Some(Found {
        lane: lane.to_owned(),
        commit,
        handoff,
    }))
}

/// The handoff to resume from: the lane's last, else (when the lane was not named) the newest
/// of any lane's.
pub fn latest(store: &Store, lane: &str, explicit: bool) -> Result<Option<Found>, Error> {
    if let Some(found) = last(store, lane)? {
        return Ok(Some(found));
    }
    if explicit {
        return Ok(None);
    }
    let mut newest: Option<Found> = None;
    let lanes = store
        .list(HANDOFFS_PREFIX)?
        .into_iter()
        .filter_map(|(name, _)| name.strip_prefix(HANDOFFS_PREFIX).map(str::to_owned));
    for other in lanes {
        if let Some(found) = last(store, &other)?
            && newest
                .as_ref()
                .is_none_or(|n| found.handoff.created_at > n.handoff.created_at)
        {
            newest = Some(found);
        }
    }
    Ok(newest)
}
