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
#[error("{record} keeps {path}, which looks like it holds {shape}; fix: {fix}")]
pub struct Leak {
    /// The record's ref.
    pub record: String,
    /// The file inside it.
    pub path: String,
    /// The shape found.
    pub shape: &'static str,
    /// What takes it out: the record made again, or its log moved back before the entry.
    pub fix: String,
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
        if let Some(shape) = in_pieces(store, tree, &path, |piece| {
            secrets::shape_in_text_at(Some(&path), piece)
        })? {
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
    secrets_brought_except(store, base, tree, None)
}

/// [`secrets_brought`] without the entry `except` (a record's kept snapshot, read on its own)
/// and what is under it.
fn secrets_brought_except(
    store: &Store,
    base: &TreeId,
    tree: &TreeId,
    except: Option<&str>,
) -> Result<Vec<(String, &'static str)>, store::Error> {
    // The kept snapshot is never walked here; every other changed file is read by the id the
    // diff gives, not looked up again from the root.
    let changes = match except {
        Some(except) => store.tree_changes_except(base, tree, except)?,
        None => store.tree_changes(base, tree)?,
    };
    let mut edited: Vec<(&str, String)> = changes.edited_files().collect();
    edited.sort_unstable();
    let mut found = Vec::new();
    for (path, blob) in edited {
        let at = Some(path);
        let reader = || store.blob_reader(&blob, path);
        // Most files hold no secret: one match of each piece decides them.
        if pieces(reader()?, path, |piece| {
            secrets::shape_in_text_at(at, piece)
        })?
        .is_none()
        {
            continue;
        }
        let mut held = std::collections::HashSet::new();
        in_pieces(store, base, path, |piece| {
            held.extend(
                secrets::shaped_units_at(at, piece)
                    .into_iter()
                    .map(|(unit, _)| unit),
            );
            None::<()>
        })?;
        let brought = pieces(reader()?, path, |piece| {
            secrets::shaped_units_at(at, piece)
                .into_iter()
                .find(|(unit, _)| !held.contains(unit))
                .map(|(_, shape)| shape)
        })?;
        if let Some(shape) = brought {
            found.push((path.to_owned(), shape));
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
    each: impl FnMut(&[u8]) -> Option<R>,
) -> Result<Option<R>, store::Error> {
    pieces(store.tree_blob_reader(tree, path)?, path, each)
}

/// [`in_pieces`] of a blob already opened (`None`: there is none).
fn pieces<R>(
    reader: Option<store::BlobReader>,
    path: &str,
    mut each: impl FnMut(&[u8]) -> Option<R>,
) -> Result<Option<R>, store::Error> {
    use std::io::Read as _;
    let Some(mut reader) = reader else {
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
        // Read up to a piece without zeroing a piece's worth of buffer first: a small blob
        // costs its own size.
        if !eof && buf.len() < PIECE {
            let want = PIECE - buf.len();
            let n = (&mut reader)
                .take(want as u64)
                .read_to_end(&mut buf)
                .map_err(failed)?;
            eof = n < want;
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

/// Reads every record under `refs/hpp/` and the notes mirror that `remote` does not have in
/// the state they are here, and returns each that would publish a secret ([`record_leak`]),
/// to be held back while the rest is pushed. What the remote has is what its staging
/// namespace (`refs/hpp-remote/<remote>/`) last saw: `git hpp fetch` fills it, and a push
/// updates it where `remote setup` mapped it. With nothing staged, one `git ls-remote` asks. A
/// record the remote has at the same commit costs nothing; one that moved (a log) is read from
/// the commit the remote has on.
pub fn unpushed_leaks(store: &Store, remote: &str) -> Result<Vec<Leak>, store::Error> {
    let staging = format!("{}{}/", store::STAGING_PREFIX, store.staging_name(remote));
    // Names first: which write-once records the remote has is a question of names, and reading
    // 10,000 staged refs' files would cost a third of a push with nothing new. A record that
    // moves (a log) is then read from the commit the remote has on.
    let staged = store.list_names(&staging)?;
    let advertised = if staged.is_empty() {
        store.remote_record_tips(remote)?
    } else {
        std::collections::BTreeMap::new()
    };
    let there = |name: &str| -> Result<Option<Option<String>>, store::Error> {
        let rest = &name[refs::PREFIX.len()..];
        if staged.is_empty() {
            return Ok(advertised.get(name).map(|tip| Some(tip.clone())));
        }
        let staged_name = format!("{staging}{rest}");
        if !staged.contains(&staged_name) {
            return Ok(None);
        }
        if refs::WRITE_ONCE.iter().any(|p| name.starts_with(p)) {
            return Ok(Some(None));
        }
        Ok(Some(store.tip(&staged_name)?.map(|tip| tip.to_string())))
    };
    let mut leaks = Vec::new();
    for name in store.list_names(refs::PREFIX)? {
        let old = match there(&name)? {
            // A write-once record the remote has is the one here.
            Some(_) if refs::WRITE_ONCE.iter().any(|p| name.starts_with(p)) => {
                continue;
            }
            Some(old) => old,
            None => None,
        };
        // A symbolic ref is no record (a listing with ids skips it too).
        let tip = match store.tip(&name) {
            Ok(Some(tip)) => tip,
            Ok(None) | Err(store::Error::Symbolic { .. }) => continue,
            Err(e) => return Err(e),
        };
        if old.as_deref() == Some(tip.as_str()) {
            continue;
        }
        if let Some(leak) = record_leak(store, &name, tip.as_str(), old.as_deref())? {
            leaks.push(leak);
        }
    }
    if let Some(notes) = store.tip(store::NOTES_REF)? {
        let old = store
            .tip(&store::notes_staging(&store.staging_name(remote)))?
            .map(|tip| tip.to_string());
        if old.as_deref() != Some(notes.as_str())
            && let Some(leak) =
                record_leak(store, store::NOTES_REF, notes.as_str(), old.as_deref())?
        {
            leaks.push(leak);
        }
    }
    Ok(leaks)
}

/// Reads what the record `name` brings at `commit` over `old` (the commit the other side
/// already has of it, `None` when it has none), and returns the first secret it would publish:
///
/// - every entry of its log (each commit from `commit` back to `old`): the files the entry adds
///   or changes against the entry before it (an event, a deliberation's seats, a handoff, a
///   board or lane entry, a Hop prompt, a policy, a note), each line read for a secret's shape
///   ([`secrets::shaped_units_at`]);
/// - a record that keeps a workspace snapshot (an attestation, a checkpoint): the snapshot
///   against the tree of the commit it was made at, so what the branch holds is not a leak;
/// - a Hop state or the accepted chain, whose commit tree is the workspace: that tree against
///   the state before it.
///
/// Any ref outside `refs/hpp/` and the notes mirror is not read (`None`).
pub fn record_leak(
    store: &Store,
    name: &str,
    commit: &str,
    old: Option<&str>,
) -> Result<Option<Leak>, store::Error> {
    if !name.starts_with(refs::PREFIX) && name != store::NOTES_REF {
        return Ok(None);
    }
    let Some(tip) = store.commit_id(commit) else {
        return Ok(None);
    };
    let old = old.and_then(|hex| store.commit_id(hex));
    if let Some(leak) = snapshot_leak(store, name, commit)? {
        return Ok(Some(leak));
    }
    // The workspace a record keeps was read above; its own files are read here.
    let kept = if name.starts_with(refs::ATTESTATIONS_PREFIX) {
        Some(hpp_core::attestation::SNAPSHOT_ENTRY)
    } else if name.starts_with(refs::CHECKPOINTS_PREFIX) {
        Some(crate::continuity_checkpoint::SNAPSHOT)
    } else {
        None
    };
    let workspace = name.starts_with(refs::HOP_STATES_PREFIX) || name == refs::HOP_ACCEPTED;
    for entry in entries(store, &tip, old.as_ref())? {
        let (tree, parents, _) = store.read_commit(&entry)?;
        // A parent this clone lacks (past a shallow boundary) cannot be pushed from here
        // either: the entry is read whole.
        let base = match parents
            .first()
            .filter(|p| store.commit_id(p.as_str()).is_some())
        {
            Some(parent) => store.commit_tree(parent)?,
            None => store.empty_tree(),
        };
        let found = if workspace {
            // Read by snapshot_leak at the tip; an older state against the one before it.
            if entry == tip {
                continue;
            }
            secrets_brought(store, &base, &tree)?.into_iter().next()
        } else {
            secrets_brought_except(store, &base, &tree, kept)?
                .into_iter()
                .next()
        };
        if let Some((path, shape)) = found {
            let fix = match (entry == tip, parents.first()) {
                (true, None) => format!(
                    "take the secret out of {path}, then `git update-ref -d {name}` and make the record again"
                ),
                (_, Some(parent)) => format!(
                    "`git update-ref {name} {parent} {tip}` drops entry {} and every entry after it (the reflog keeps them)",
                    &entry.as_str()[..12]
                ),
                (false, None) => format!(
                    "`git update-ref -d {name}` drops the whole log, whose first entry {} holds it (the reflog keeps it)",
                    &entry.as_str()[..12]
                ),
            };
            return Ok(Some(Leak {
                record: name.to_owned(),
                path,
                shape,
                fix,
            }));
        }
    }
    Ok(None)
}

/// The commits of a record's log from `tip` back to `old` (not included), newest first: every
/// parent is followed, and a commit `old` is (or that was already seen) ends that line.
fn entries(
    store: &Store,
    tip: &store::CommitId,
    old: Option<&store::CommitId>,
) -> Result<Vec<store::CommitId>, store::Error> {
    let mut seen = std::collections::HashSet::new();
    let mut queue = std::collections::VecDeque::from([tip.clone()]);
    let mut out = Vec::new();
    while let Some(commit) = queue.pop_front() {
        if Some(&commit) == old || !seen.insert(commit.clone()) {
            continue;
        }
        let (_, parents, _) = store.read_commit(&commit)?;
        // What this clone lacks (past a shallow boundary) it cannot push either.
        queue.extend(
            parents
                .into_iter()
                .filter(|p| store.commit_id(p.as_str()).is_some()),
        );
        out.push(commit);
    }
    Ok(out)
}

/// For an attestation or a checkpoint, its snapshot against the tree of the commit it was made
/// at; for an evidence bundle, its kept artifacts; for a Hop state or the accepted chain, its
/// tree (the workspace it names) against the state before it. The first file that holds a
/// secret the base does not.
fn snapshot_leak(store: &Store, name: &str, commit: &str) -> Result<Option<Leak>, store::Error> {
    // A Hop state's commit tree is the workspace it names; its base is the state before it.
    if name.starts_with(refs::HOP_STATES_PREFIX) || name == refs::HOP_ACCEPTED {
        let Some(id) = store.commit_id(commit) else {
            return Ok(None);
        };
        let (tree, parents, _) = store.read_commit(&id)?;
        let base = match parents
            .first()
            .filter(|p| store.commit_id(p.as_str()).is_some())
        {
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
            fix: format!(
                "take the secret out of {path}, then `git update-ref -d {name}` and make the record again"
            ),
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
