//! Workspace snapshots: the tree `git add -A && git write-tree` would write, without touching
//! the user's index or HEAD.
//!
//! The snapshot is tracked plus untracked-not-ignored files (every `.gitignore` level,
//! `info/exclude`, `core.excludesFile`), with executable bits, symlinks, clean/smudge and
//! end-of-line filters, and nested repositories as gitlinks, exactly as git stores them. The real
//! index is read, never written, and serves as a stat cache: only files whose stat changed, and
//! untracked files, are read and hashed, so the cost follows what changed rather than the size of
//! the tree. Blobs are written to the object database (as `git add` does), so the tree is
//! complete and can be kept in a record.
//!
//! One difference from `git add -A`, on purpose: an untracked file whose name marks it as a
//! secret ([`LEFT_OUT`]: `.env`, private keys, credentials files) is left out of the snapshot,
//! since a snapshot tree is kept in records that are pushed. A tracked one stays (it is in the
//! history already). [`Store::snapshot_report`] names what was left out.

use std::collections::HashSet;

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use gix::objs::tree::EntryKind;
use gix::status::index_worktree::Item;
use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};

use super::{Error, Store, TreeId, git};

/// The names of untracked files a snapshot leaves out, as a reader sees them: a file matches
/// by its last path component.
pub const LEFT_OUT: &[&str] = &[
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*, id_dsa*, id_ecdsa*, id_ed25519* (SSH private keys; never *.pub)",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
];

/// Tells whether an untracked file at `path` is one [`LEFT_OUT`] names.
pub fn is_left_out(path: &[u8]) -> bool {
    let name = path.rsplit(|b| *b == b'/').next().unwrap_or(path);
    let Ok(name) = std::str::from_utf8(name) else {
        return false;
    };
    let lower = name.to_ascii_lowercase();
    lower == ".env"
        || lower.starts_with(".env.")
        || [".pem", ".key", ".p12", ".pfx"]
            .iter()
            .any(|ext| lower.ends_with(ext))
        || (["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
            .iter()
            .any(|key| lower.starts_with(key))
            && !lower.ends_with(".pub"))
        || [".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials"].contains(&lower.as_str())
}

/// A snapshot and the untracked files it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotReport {
    /// The snapshot tree.
    pub tree: TreeId,
    /// The untracked files left out by name ([`LEFT_OUT`]), sorted.
    pub left_out: Vec<String>,
}

impl Store {
    /// Computes the workspace snapshot and returns its tree id.
    pub fn snapshot(&self) -> Result<TreeId, Error> {
        Ok(self.snapshot_report()?.tree)
    }

    /// Computes the workspace snapshot, and names the untracked files it left out.
    pub fn snapshot_report(&self) -> Result<SnapshotReport, Error> {
        let repo = &self.repo;
        if repo.workdir().is_none() {
            return Err(Error::Bare {
                what: "snapshot".into(),
                needs: "workspace to snapshot",
            });
        }
        let index = repo.index_or_empty().map_err(git("reading the index"))?;
        let iter = repo
            .status(gix::progress::Discard)
            .map_err(git("preparing the status walk"))?
            .index(index.clone().into())
            .untracked_files(gix::status::UntrackedFiles::Files)
            .index_worktree_rewrites(None)
            .index_worktree_submodules(gix::status::Submodule::Given {
                ignore: gix::submodule::config::Ignore::All,
                check_dirty: false,
            })
            .into_index_worktree_iter(Vec::new())
            .map_err(git("walking the workspace"))?;
        let mut removed = HashSet::new();
        let mut dirty: Vec<BString> = Vec::new();
        let mut left_out: Vec<String> = Vec::new();
        for item in iter {
            match item.map_err(git("walking the workspace"))? {
                Item::Modification {
                    rela_path, status, ..
                } => match status {
                    EntryStatus::Change(Change::Removed) => {
                        removed.insert(rela_path);
                    }
                    EntryStatus::Change(_) | EntryStatus::IntentToAdd => dirty.push(rela_path),
                    // The stat changed but the content did not: the index's blob id is right.
                    EntryStatus::NeedsUpdate(_) => {}
                    EntryStatus::Conflict { .. } => {
                        return Err(Error::Unmerged {
                            path: rela_path.to_string(),
                        });
                    }
                },
                Item::DirectoryContents { entry, .. }
                    if entry.status == gix::dir::entry::Status::Untracked =>
                {
                    if is_left_out(&entry.rela_path) {
                        left_out.push(entry.rela_path.to_string());
                    } else {
                        dirty.push(entry.rela_path);
                    }
                }
                _ => {}
            }
        }
        let dirty_set: HashSet<BString> = dirty.iter().cloned().collect();
        // Start from the index's cache-tree: every directory git already knows the tree of is
        // reused whole, so only what changed is edited (as `git write-tree` does).
        let mut covered: Vec<(BString, ObjectId)> = Vec::new();
        if let Some(cache) = index.tree() {
            valid_subtrees(repo, cache, &mut BString::default(), &mut covered);
        }
        let root_tree = covered
            .iter()
            .find(|(prefix, _)| prefix.is_empty())
            .map(|(_, id)| *id);
        let mut editor = repo
            .edit_tree(root_tree.unwrap_or_else(|| ObjectId::empty_tree(repo.object_hash())))
            .map_err(git("editing a tree"))?;
        if root_tree.is_none() {
            for (prefix, id) in &covered {
                editor
                    .upsert(prefix.as_bstr(), EntryKind::Tree, *id)
                    .map_err(git("editing a tree"))?;
            }
        }
        let prefixes: HashSet<&[u8]> = covered.iter().map(|(p, _)| p.as_slice()).collect();
        let is_covered = |path: &[u8]| {
            root_tree.is_some()
                || path
                    .iter()
                    .enumerate()
                    .any(|(i, b)| *b == b'/' && prefixes.contains(&path[..i]))
        };
        let root = repo.workdir().expect("checked above").to_path_buf();
        for entry in index.entries() {
            let path = entry.path(&index);
            if entry.stage() != gix::index::entry::Stage::Unconflicted {
                continue;
            }
            let kind = entry
                .mode
                .to_tree_entry_mode()
                .ok_or_else(|| Error::UnstorableMode {
                    path: path.to_string(),
                })?
                .kind();
            let covered = is_covered(path);
            if entry.mode.is_submodule() {
                let rel =
                    gix::path::from_bstr(path).map_err(git(format!("reading the path {path}")))?;
                let dir = root.join(rel);
                if dir.join(".git").exists() {
                    // A checked-out submodule: `git add -A` records its current HEAD.
                    dirty.push(path.to_owned());
                } else if dir.is_dir() {
                    // Not checked out (a plain clone, or deinit): git keeps the recorded gitlink.
                    if !covered {
                        editor
                            .upsert(path, kind, entry.id)
                            .map_err(git("editing a tree"))?;
                    }
                } else if covered {
                    editor.remove(path).map_err(git("editing a tree"))?;
                }
                continue;
            }
            if removed.contains(path) {
                if covered {
                    editor.remove(path).map_err(git("editing a tree"))?;
                }
                continue;
            }
            if !covered && !dirty_set.contains(path) {
                editor
                    .upsert(path, kind, entry.id)
                    .map_err(git("editing a tree"))?;
            }
        }
        // With core.fileMode false, git ignores the executable bit on disk: a tracked file keeps
        // its recorded mode and a new file is stored as 100644.
        let file_mode = repo
            .config_snapshot()
            .boolean("core.fileMode")
            .unwrap_or(true);
        for (path, added) in self.add_paths(dirty)? {
            match added {
                Some((id, mut kind)) => {
                    if !file_mode && matches!(kind, EntryKind::Blob | EntryKind::BlobExecutable) {
                        let recorded = index
                            .entry_by_path(path.as_bstr())
                            .and_then(|e| e.mode.to_tree_entry_mode())
                            .map(|m| m.kind());
                        kind = match recorded {
                            Some(recorded @ (EntryKind::Blob | EntryKind::BlobExecutable)) => {
                                recorded
                            }
                            _ => EntryKind::Blob,
                        };
                    }
                    editor
                        .upsert(path.as_bstr(), kind, id)
                        .map_err(git("editing a tree"))?;
                }
                None => {
                    editor
                        .remove(path.as_bstr())
                        .map_err(git("editing a tree"))?;
                }
            }
        }
        let tree = editor
            .write()
            .map_err(git("writing the snapshot tree"))?
            .detach();
        left_out.sort();
        Ok(SnapshotReport {
            tree: TreeId::from(tree),
            left_out,
        })
    }

    /// Hashes and writes `paths` with `git add` semantics, on as many threads as there are cores.
    #[allow(clippy::type_complexity)]
    fn add_paths(
        &self,
        paths: Vec<BString>,
    ) -> Result<Vec<(BString, Option<(ObjectId, gix::objs::tree::EntryKind)>)>, Error> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(8);
        let chunk = paths.len().div_ceil(threads).max(1);
        let sync = self.repo.clone().into_sync();
        std::thread::scope(|scope| {
            let handles: Vec<_> = paths
                .chunks(chunk)
                .map(|part| {
                    let sync = sync.clone();
                    scope.spawn(move || -> Result<Vec<_>, Error> {
                        let repo = sync.to_thread_local();
                        let (mut pipeline, index) = repo
                            .filter_pipeline(None)
                            .map_err(git("preparing filters"))?;
                        part.iter()
                            .map(|path| {
                                let added = pipeline
                                    .worktree_file_to_object(path.as_bstr(), &index)
                                    .map_err(git(format!("adding {path}")))?;
                                Ok((path.clone(), added.map(|(id, kind, _)| (id, kind))))
                            })
                            .collect()
                    })
                })
                .collect();
            let mut all = Vec::new();
            for handle in handles {
                all.extend(handle.join().expect("a snapshot worker does not panic")?);
            }
            Ok(all)
        })
    }
}

/// Collects the outermost valid nodes of the index's cache-tree (path prefix, tree id) whose
/// tree objects exist: whole directories whose tree git already wrote.
fn valid_subtrees(
    repo: &gix::Repository,
    node: &gix::index::extension::Tree,
    prefix: &mut BString,
    out: &mut Vec<(BString, ObjectId)>,
) {
    if node.num_entries.is_some() && repo.has_object(node.id) {
        out.push((prefix.clone(), node.id));
        return;
    }
    for child in &node.children {
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(&child.name);
        valid_subtrees(repo, child, prefix, out);
        prefix.truncate(len);
    }
}

#[cfg(test)]
mod tests {
    use super::is_left_out;

    #[test]
    fn secret_file_names_are_left_out_wherever_they_are() {
        for path in [
            ".env",
            "app/.env.local",
            "certs/server.pem",
            "tls.key",
            "keys/id_ed25519",
            "id_rsa_work",
            ".npmrc",
            "home/.git-credentials",
        ] {
            assert!(is_left_out(path.as_bytes()), "{path}");
        }
    }

    #[test]
    fn control_ordinary_and_public_files_stay() {
        for path in [
            "src/env.rs",
            ".envrc.md",
            "keys/id_ed25519.pub",
            "src/id_generator.py",
            "docs/keyboard.md",
            "environment",
        ] {
            assert!(!is_left_out(path.as_bytes()), "{path}");
        }
    }
}
