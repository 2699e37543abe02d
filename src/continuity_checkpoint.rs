//! Turn checkpoints (the reference's continuity-kit): at the end of each agent turn, the
//! workspace as a tree, kept at `refs/hpp/checkpoints/<session>/turn/<n>` without touching the
//! index or HEAD, so a person can see or restore what the agent left after any turn
//! (`git restore --source=refs/hpp/checkpoints/<session>/turn/<n>:snapshot --worktree -- .`).
//! A turn that changed nothing since the last checkpoint writes none.

use serde::Serialize;
use serde_json::json;

use hpp_core::record::canonical_json;
use hpp_store::{self as store, CommitId, Content, Store, TreeId, refs};

/// The record beside the snapshot.
pub const FILE: &str = "checkpoint.json";

/// The entry of the record's tree that keeps the workspace snapshot.
pub const SNAPSHOT: &str = "snapshot";

/// Its schema.
pub const SCHEMA: &str = "hpp.turn-checkpoint/v1";

/// Why a checkpoint was not written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The session id cannot name a ref, or looks like a secret.
    #[error("session id {0:?} cannot name a checkpoint: letters, digits, '.', '_' and '-' only")]
    BadSession(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A checkpoint written.
#[derive(Debug, Clone, Serialize)]
pub struct Checkpoint {
    /// Its ref.
    #[serde(rename = "ref")]
    pub name: String,
    /// The turn number.
    pub turn: usize,
    /// The workspace tree.
    pub tree: TreeId,
    /// The record commit.
    pub commit: CommitId,
}

/// Writes the next turn checkpoint of `session`, unless the workspace is the tree the last one
/// kept (`Ok(None)`).
pub fn write(store: &Store, session: &str, at: &str) -> Result<Option<Checkpoint>, Error> {
    let valid = !session.is_empty()
        && session.len() <= 80
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !session.starts_with('.')
        && !hpp_core::secrets::looks_secret(session);
    if !valid {
        return Err(Error::BadSession(session.to_owned()));
    }
    let prefix = format!("{}{session}/turn/", refs::CHECKPOINTS_PREFIX);
    let taken: Vec<usize> = store
        .list(&prefix)?
        .into_iter()
        .filter_map(|(name, _)| name[prefix.len()..].parse().ok())
        .collect();
    let last = taken.iter().copied().max().unwrap_or(0);
    let tree = store.snapshot()?;
    if last > 0
        && store
            .entry_id(&refs::turn_checkpoint(session, last), SNAPSHOT)?
            .as_deref()
            == Some(tree.as_str())
    {
        return Ok(None);
    }
    let head = store.head_commit()?.map(|c| c.to_string());
    // Two stops racing for one number: the loser takes the next.
    for turn in last + 1..last + 100 {
        let name = refs::turn_checkpoint(session, turn);
        let record = json!({
            "schema": SCHEMA,
            "session": session,
            "turn": turn,
            "tree": tree.as_str(),
            "head": head,
            "created_at": at,
        });
        match store.create_record(
            &name,
            &[
                (FILE, Content::Bytes(canonical_json(&record))),
                (SNAPSHOT, Content::Tree(tree.clone())),
            ],
            &format!("hpp turn checkpoint {session} #{turn}\n"),
        ) {
            Ok(commit) => {
                return Ok(Some(Checkpoint {
                    name,
                    turn,
                    tree,
                    commit,
                }));
            }
            Err(store::Error::Moved { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(store::Error::Contended {
        name: prefix,
        attempts: 99,
    }
    .into())
}
