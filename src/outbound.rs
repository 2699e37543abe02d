//! What leaves the machine: before `git hpp push`, the records the remote does not have yet are
//! read for workspace bytes that look like a secret, so a record written before these checks
//! existed, or by another tool, cannot publish one.
//!
//! Only records that keep workspace bytes are read: an attestation's snapshot (the files it
//! adds to the commit it was made at, as `attest create` checks them) and an evidence bundle's
//! kept artifacts. Event data, names and command lines are refused when they are written.

use hpp_core::secrets;
use hpp_store::{self as store, Store, TreeId, refs};

/// A record that would publish something secret-shaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to push: {record} keeps {path}, which looks like it holds {shape}; nothing was pushed (delete the record with git update-ref -d, or rewrite it without the file)"
)]
pub struct Leak {
    /// The record's ref.
    pub record: String,
    /// The file inside it.
    pub path: String,
    /// The shape found.
    pub shape: &'static str,
}

/// Why the check could not run or refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A record would publish something secret-shaped.
    #[error(transparent)]
    Leak(#[from] Leak),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Finds the first file `tree` adds to `base` whose contents have a secret's shape
/// ([`secrets::shape_in_file`]): its path and the shape. Files `base` has are not re-read.
pub fn secret_file_added(
    store: &Store,
    base: &TreeId,
    tree: &TreeId,
) -> Result<Option<(String, &'static str)>, store::Error> {
    for path in store.changed_paths(base, tree)? {
        if store.tree_entry_id(base, &path)?.is_some() {
            continue;
        }
        if let Some(bytes) = store.tree_blob(tree, &path)?
            && let Some(shape) = secrets::shape_in_file(&bytes)
        {
            return Ok(Some((path, shape)));
        }
    }
    Ok(None)
}

/// Reads every record under `refs/hpp/attestations/` and `refs/hpp/evidence/` that `remote`
/// does not have, and refuses the first that keeps a secret-shaped file.
pub fn check_unpushed(store: &Store, remote: &str) -> Result<(), Error> {
    let there = store.remote_records(remote)?;
    for prefix in [refs::ATTESTATIONS_PREFIX, refs::EVIDENCE_PREFIX] {
        for (name, commit) in store.list(prefix)? {
            if there.contains(&name) {
                continue;
            }
            let (kept, base) = if prefix == refs::ATTESTATIONS_PREFIX {
                (
                    hpp_core::attestation::SNAPSHOT_ENTRY,
                    attested_base(store, &name)?,
                )
            } else {
                (hpp_core::evidence::ARTIFACTS_DIR, store.empty_tree())
            };
            let Some(tree) = store
                .entry_id(commit.as_str(), kept)?
                .and_then(|id| TreeId::parse(&id))
            else {
                continue;
            };
            if let Some((path, shape)) = secret_file_added(store, &base, &tree)? {
                return Err(Leak {
                    record: name,
                    path,
                    shape,
                }
                .into());
            }
        }
    }
    Ok(())
}

/// The tree of the commit an attestation was made at, when this repository has it; else the
/// empty tree (every file of the snapshot is then read).
fn attested_base(store: &Store, name: &str) -> Result<TreeId, Error> {
    let base = store
        .read_file(name, hpp_core::attestation::RECORD_FILE)?
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|record| {
            record
                .get("base_commit")
                .and_then(serde_json::Value::as_str)
                .and_then(|hex| store.commit_id(hex))
        });
    Ok(match base {
        Some(commit) => store.commit_tree(&commit)?,
        None => store.empty_tree(),
    })
}
