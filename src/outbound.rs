//! What leaves the machine: before `git hpp push`, the records the remote does not have yet are
//! read for workspace bytes that look like a secret, so a record written before these checks
//! existed, or by another tool, cannot publish one.
//!
//! Only records that keep workspace bytes are read: an attestation's snapshot, a turn
//! checkpoint's snapshot and an evidence bundle's kept artifacts. Event data, names and command
//! lines are refused when they are written. Hop's states are not read here: `hop` refuses a
//! state that adds a secret-shaped file when it writes one.
//!
//! What the branch already holds is not a leak. An attestation's snapshot is compared with the
//! tree of the commit it was made at (its `base_commit`, the branch's tip then; the empty tree
//! when this repository lacks that commit): paths whose blob id is the same there are not read
//! at all (one tree diff), and a file that differs counts only for a secret-shaped line (or
//! private key block) the same path there does not hold ([`secrets::shape_added`]). So an edit
//! next to a committed secret passes, and a secret added to a tracked file, uncommitted, does
//! not. A turn checkpoint is compared the same way with the HEAD it recorded; an evidence
//! bundle's artifacts are all read.

use hpp_core::secrets;
use hpp_store::{self as store, Store, TreeId, refs};

/// A record that would publish something secret-shaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{record} keeps {path}, which looks like it holds {shape}; fix: take the secret out of {path}, then `git update-ref -d {record}` and make the record again"
)]
pub struct Leak {
    /// The record's ref.
    pub record: String,
    /// The file inside it.
    pub path: String,
    /// The shape found.
    pub shape: &'static str,
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
        if let Some(shape) = in_pieces(store, tree, &path, secrets::shape_in_text)? {
            return Ok(Some((path, shape)));
        }
    }
    Ok(None)
}

/// Finds every file `tree` holds with a secret-shaped line (or private key block) that the
/// same path in `base` does not hold ([`secrets::shape_added`]): its path and the shape, in path
/// order. Paths whose blob is the same in both trees are not read.
pub fn secrets_brought(
    store: &Store,
    base: &TreeId,
    tree: &TreeId,
) -> Result<Vec<(String, &'static str)>, store::Error> {
    let mut found = Vec::new();
    for path in store.changed_paths(base, tree)? {
        // Most files hold no secret: one match of each piece decides them.
        if in_pieces(store, tree, &path, secrets::shape_in_text)?.is_none() {
            continue;
        }
        let mut held = std::collections::HashSet::new();
        in_pieces(store, base, &path, |piece| {
            held.extend(
                secrets::shaped_units(piece)
                    .into_iter()
                    .map(|(unit, _)| unit),
            );
            None::<()>
        })?;
        let brought = in_pieces(store, tree, &path, |piece| {
            secrets::shaped_units(piece)
                .into_iter()
                .find(|(unit, _)| !held.contains(unit))
                .map(|(_, shape)| shape)
        })?;
        if let Some(shape) = brought {
            found.push((path, shape));
        }
    }
    Ok(found)
}

/// Bytes of a blob read at a time for its secret check: most files are one piece.
const PIECE: usize = 4 << 20;

/// Bytes a forced cut (a line longer than a piece) keeps from the piece before it, so a secret
/// that spans the cut is still seen whole in the next: longer than any shape's match.
const OVERLAP: usize = 4096;

/// Hands `each` the text of the blob at `path` in `tree` in pieces that end where a line ends
/// ([`secrets::piece_end`]), until it answers. `None` when `tree` holds no blob there, when
/// the blob is binary (judged by its first bytes, [`secrets::is_binary`]) or when `each` never
/// answers. A piece at a time is held, whatever the blob's size.
fn in_pieces<R>(
    store: &Store,
    tree: &TreeId,
    path: &str,
    mut each: impl FnMut(&[u8]) -> Option<R>,
) -> Result<Option<R>, store::Error> {
    use std::io::Read as _;
    let Some(mut reader) = store.tree_blob_reader(tree, path)? else {
        return Ok(None);
    };
    let failed = |source| store::Error::Io {
        what: format!("reading {path}"),
        source,
    };
    let mut buf: Vec<u8> = Vec::new();
    let mut first = true;
    let mut eof = false;
    loop {
        while !eof && buf.len() < PIECE {
            let start = buf.len();
            buf.resize(PIECE.max(start + 1), 0);
            let n = reader.read(&mut buf[start..]).map_err(failed)?;
            buf.truncate(start + n);
            eof = n == 0;
        }
        if first {
            if secrets::is_binary(&buf) {
                return Ok(None);
            }
            first = false;
        }
        if buf.is_empty() {
            return Ok(None);
        }
        let (end, keep_from) = match secrets::piece_end(&buf) {
            _ if eof => (buf.len(), buf.len()),
            0 => (buf.len(), buf.len().saturating_sub(OVERLAP)),
            end => (end, end),
        };
        if let Some(answer) = each(&buf[..end]) {
            return Ok(Some(answer));
        }
        if eof {
            return Ok(None);
        }
        buf.drain(..keep_from);
    }
}

/// Reads every record under `refs/hpp/attestations/`, `refs/hpp/checkpoints/`,
/// `refs/hpp/evidence/` and `refs/hpp/hop/states/` that `remote` does not have, and returns
/// each that keeps a secret the branch does not already hold ([`record_leak`]), to be held
/// back while the rest is pushed. What the remote has is what its staging
/// namespace (`refs/hpp-remote/<remote>/`) last saw: `git hpp fetch` fills it, and a push
/// updates it where `remote setup` mapped it; these records are write-once, so one seen there
/// has left already. With nothing staged, one `git ls-remote` asks. A push with nothing new
/// then costs no round trip before git's own.
pub fn unpushed_leaks(store: &Store, remote: &str) -> Result<Vec<Leak>, store::Error> {
    let prefix = format!("{}{}/", store::STAGING_PREFIX, store.staging_name(remote));
    // Names only: which records the remote has is a question of names, and reading 10,000
    // staged refs' files would cost a third of a push with nothing new.
    let mut there = store.list_names(&prefix)?;
    // Compared by what follows each namespace, so 10,000 names are not written out again.
    let mut under = prefix.len();
    if there.is_empty() {
        there = store.remote_records(remote)?;
        under = refs::PREFIX.len();
    }
    let there: std::collections::HashSet<&str> = there.iter().map(|n| &n[under..]).collect();
    let mut leaks = Vec::new();
    for prefix in [
        refs::ATTESTATIONS_PREFIX,
        refs::CHECKPOINTS_PREFIX,
        refs::EVIDENCE_PREFIX,
        refs::HOP_STATES_PREFIX,
    ] {
        for name in store.list_names(prefix)? {
            if there.contains(&name[refs::PREFIX.len()..]) {
                continue;
            }
            // A symbolic ref is no record (a listing with ids skips it too).
            let commit = match store.tip(&name) {
                Ok(Some(commit)) => commit,
                Ok(None) | Err(store::Error::Symbolic { .. }) => continue,
                Err(e) => return Err(e),
            };
            if let Some(leak) = record_leak(store, &name, commit.as_str())? {
                leaks.push(leak);
            }
        }
    }
    Ok(leaks)
}

/// Reads the record `name` at `commit`: for an attestation or a checkpoint, its snapshot
/// against the tree of the commit it was made at; for an evidence bundle, its kept artifacts;
/// for a Hop state, its tree (the workspace it names) against the state before it.
/// Returns the first file that holds a secret the base does not. Any other ref is not read
/// (`None`).
pub fn record_leak(store: &Store, name: &str, commit: &str) -> Result<Option<Leak>, store::Error> {
    // A Hop state's commit tree is the workspace it names; its base is the state before it.
    if name.starts_with(refs::HOP_STATES_PREFIX) {
        let Some(id) = store.commit_id(commit) else {
            return Ok(None);
        };
        let (tree, parents, _) = store.read_commit(&id)?;
        let base = match parents.first() {
            Some(parent) => store.commit_tree(parent)?,
            None => store.empty_tree(),
        };
        return first_leak(store, name, &base, &tree);
    }
    let (kept, base) = if name.starts_with(refs::ATTESTATIONS_PREFIX) {
        (
            hpp_core::attestation::SNAPSHOT_ENTRY,
            recorded_base(
                store,
                commit,
                hpp_core::attestation::RECORD_FILE,
                "base_commit",
            )?,
        )
    } else if name.starts_with(refs::CHECKPOINTS_PREFIX) {
        (
            crate::continuity_checkpoint::SNAPSHOT,
            recorded_base(store, commit, crate::continuity_checkpoint::FILE, "head")?,
        )
    } else if name.starts_with(refs::EVIDENCE_PREFIX) {
        (hpp_core::evidence::ARTIFACTS_DIR, store.empty_tree())
    } else {
        return Ok(None);
    };
    let Some(tree) = store
        .entry_id(commit, kept)?
        .and_then(|id| TreeId::parse(&id))
    else {
        return Ok(None);
    };
    first_leak(store, name, &base, &tree)
}

/// The first secret-shaped file `tree` holds that `base` does not, as the record `name`'s leak.
fn first_leak(
    store: &Store,
    name: &str,
    base: &TreeId,
    tree: &TreeId,
) -> Result<Option<Leak>, store::Error> {
    Ok(secrets_brought(store, base, tree)?
        .into_iter()
        .next()
        .map(|(path, shape)| Leak {
            record: name.to_owned(),
            path,
            shape,
        }))
}

/// The tree of the commit the record at `commit` was made at (named by `field` of its JSON
/// `file`), when this repository has it; else the empty tree (every file is then read).
fn recorded_base(
    store: &Store,
    commit: &str,
    file: &str,
    field: &str,
) -> Result<TreeId, store::Error> {
    let base = store
        .read_file(commit, file)?
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|record| {
            record
                .get(field)
                .and_then(serde_json::Value::as_str)
                .and_then(|hex| store.commit_id(hex))
        });
    Ok(match base {
        Some(commit) => store.commit_tree(&commit)?,
        None => store.empty_tree(),
    })
}
