//! Workspace snapshots: the tree `git add -A && git write-tree` would write, without touching
//! the user's index or HEAD.
//!
//! The snapshot is tracked plus untracked-not-ignored files (every `.gitignore` level,
//! `info/exclude`, `core.excludesFile`), with executable bits, symlinks, clean/smudge and
//! end-of-line filters, and nested repositories as gitlinks, exactly as git stores them. The real
//! index is read, never written, and serves as a stat cache, with the snapshot's own cache beside
//! it (`cache`: what earlier snapshots read of files whose stat the index does not have, and the
//! last tree): only files whose stat changed since either saw them are read and hashed, so the
//! cost follows what changed rather than the size of the tree, and a workspace left as it was is
//! not read again however far it is from the index. Blobs are written to the object database
//! (as `git add` does), so the tree is complete and can be kept in a record.
//!
//! One difference from `git add -A`, on purpose: an untracked file whose name marks it as a
//! secret ([`LEFT_OUT`]: `.env`, private keys, credentials files) is left out of the snapshot,
//! since a snapshot tree is kept in records that are pushed. A tracked one stays (it is in the
//! history already). [`Store::snapshot_report`] names what was left out.

mod cache;
mod streamed;
mod walk;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stage, Stat};
use gix::objs::tree::{EntryKind, EntryMode};
use gix::status::index_worktree::Item;
use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
use gix::worktree::IndexPersistedOrInMemory;

use super::{Error, Store, TreeId, git};
use cache::{Cache, Known};
use walk::Walk;

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

/// A change the snapshot makes to the tree of the user's index at one path: the entry it gets
/// (kind and id), or `None` when the path leaves the tree.
type Edit = Option<(EntryKind, ObjectId)>;

/// What hashing a worktree path gave: the blob (or a nested repository's HEAD), the kind on
/// disk, and the stat taken before the file was read; `None` when nothing storable is there.
type Hashed = Option<(ObjectId, EntryKind, Option<Stat>)>;

impl Store {
    /// Reads the index on another thread while the caller goes on (an evidence run refuses a
    /// secret-shaped command first, which costs what reading a 50,000-entry index does): the
    /// repository's handles share one copy of it, so the next snapshot finds it read. Nothing
    /// is written; joining the thread is optional, and a snapshot that comes first reads the
    /// index itself.
    pub fn read_index_ahead(&self) -> std::thread::JoinHandle<()> {
        let shared = self.repo.clone().into_sync();
        std::thread::spawn(move || {
            let _ = shared.to_thread_local().index_or_empty();
        })
    }

    /// Computes the workspace snapshot and returns its tree id.
    pub fn snapshot(&self) -> Result<TreeId, Error> {
        Ok(self.snapshot_report()?.tree)
    }

    /// Computes the workspace snapshot, and names the untracked files it left out.
    ///
    /// The walk compares the worktree with the user's index, in which the entries the
    /// snapshot's own cache knows newer stats for (see `cache`) are refreshed in memory: a file
    /// modified or touched since the index was written is read once, not by every snapshot.
    pub fn snapshot_report(&self) -> Result<SnapshotReport, Error> {
        let started = SystemTime::now();
        let repo = &self.repo;
        let Some(root) = repo.workdir().map(Path::to_path_buf) else {
            return Err(Error::Bare {
                what: "snapshot".into(),
                needs: "workspace to snapshot",
            });
        };
        let hash_kind = repo.object_hash();
        let user = repo.index_or_empty().map_err(git("reading the index"))?;
        // What the tree of the user's index is a function of: its checksum (a null one when
        // there is no index; `None` with index.skipHash, which leaves the result uncached).
        let index_key = user
            .checksum()
            .or_else(|| user.entries().is_empty().then(|| ObjectId::null(hash_kind)));
        let file_mode = repo
            .config_snapshot()
            .boolean("core.fileMode")
            .unwrap_or(true);

        let cache_path = cache::location(repo.common_dir(), &repo.index_path());
        let inputs = cache::inputs(repo);
        let old = inputs
            .and_then(|_| cache::read(&cache_path, hash_kind))
            .filter(|c| {
                c.inputs == inputs && c.result_tree.is_some_and(|tree| repo.has_object(tree))
            });

        // Entries git would not trust by stat: not older than the index file (racily clean).
        let racy_from = user.timestamp().unix_seconds();
        // Whether the cache may stand in for the user's entry: one git leaves alone (not
        // intent-to-add, skip-worktree, assume-unchanged, a gitlink) whose stat or blob it
        // does not have, or whose stat git would not trust.
        let knows_more = |entry: &gix::index::Entry, known: &Known| {
            !entry.mode.is_submodule()
                && !entry
                    .flags
                    .intersects(Flags::INTENT_TO_ADD | Flags::SKIP_WORKTREE | Flags::ASSUME_VALID)
                && (entry.stat != known.stat
                    || entry.id != known.id
                    || i64::from(entry.stat.mtime.secs) >= racy_from)
        };
        // Tracked files the cache knows a newer stat and blob of: refresh their entries in a
        // private copy of the index, so the walk trusts them by stat as git trusts the index.
        let mut overrides: HashMap<BString, Known> = HashMap::new();
        let mut private = None;
        if let Some(old) = &old {
            let mut applicable = Vec::new();
            for (path, known) in &old.files {
                if !known.trusted() {
                    continue;
                }
                let Some(i) =
                    user.entry_index_by_path_and_stage(path.as_bstr(), Stage::Unconflicted)
                else {
                    continue;
                };
                if !knows_more(&user.entries()[i], known) {
                    continue;
                }
                applicable.push((i, path, known));
            }
            if !applicable.is_empty() {
                let mut index: gix::index::File = (**user).clone();
                // The walk trusts the stat of an entry older than the index's timestamp. Make
                // that the snapshot's start, so the cache's entries (each checked against its
                // own fence above) are trusted, and clear the stat of the user's entries that
                // are not older than the index file: git would read those (racily clean), and
                // so does the walk, as their stat no longer matches.
                index.set_timestamp(filetime::FileTime::from_system_time(started));
                let entries = index.entries_mut();
                for entry in entries.iter_mut() {
                    if i64::from(entry.stat.mtime.secs) >= racy_from {
                        entry.stat = Stat::default();
                    }
                }
                for (i, path, known) in applicable {
                    let entry = &mut entries[i];
                    entry.stat = known.stat;
                    entry.id = known.id;
                    entry.mode = mode_of(known.kind);
                    overrides.insert(path.clone(), *known);
                }
                private = Some(index);
            }
        }
        let walked = match private {
            Some(index) => IndexPersistedOrInMemory::InMemory(index),
            None => user.clone().into(),
        };
        let (found, refreshed) = if Walk::applies(repo) {
            (Walk::of(repo, &root, &walked)?, Vec::new())
        } else {
            self.gix_walk(&root, walked)?
        };
        let removed: HashSet<BString> = found.removed.into_iter().collect();
        let mut dirty = found.changed;
        let mut untracked: Vec<(BString, bool)> = Vec::new();
        let mut left_out: Vec<String> = Vec::new();
        for (path, file_or_link) in found.untracked {
            if is_left_out(&path) {
                left_out.push(path.to_string());
            } else {
                untracked.push((path, file_or_link));
            }
        }
        // Every tracked path the walk reported: the cache's entries for the others still hold.
        let reported: HashSet<BString> = removed
            .iter()
            .chain(&dirty)
            .chain(refreshed.iter().map(|(p, _)| p))
            .cloned()
            .collect();

        // Untracked files the cache knows by the very same stat are not read again.
        let mut reused: Vec<(BString, Known)> = Vec::new();
        for (path, file_or_link) in untracked {
            let known = old
                .as_ref()
                .and_then(|c| c.files.get(&path))
                .filter(|k| k.trusted())
                .filter(|_| file_or_link)
                .filter(|k| on_disk(&root, path.as_bstr()) == Some((k.stat, k.kind)));
            match known {
                Some(known) => reused.push((path, *known)),
                None => dirty.push(path),
            }
        }

        let recorded = |path: &BStr| {
            user.entry_by_path_and_stage(path, Stage::Unconflicted)
                .and_then(|e| e.mode.to_tree_entry_mode().map(|m| (m.kind(), e.id)))
        };
        let mut edits: BTreeMap<BString, Edit> = BTreeMap::new();
        // Records `edit` at `path`, unless it is what the user's index has there already.
        let put = |edits: &mut BTreeMap<BString, Edit>, path: BString, edit: Edit| {
            if edit == recorded(path.as_bstr()) {
                edits.remove(&path);
            } else {
                edits.insert(path, edit);
            }
        };
        let tree_kind_at = |path: &BStr, disk: EntryKind| {
            tree_kind(disk, recorded(path).map(|(kind, _)| kind), file_mode)
        };
        for (path, known) in &overrides {
            if !reported.contains(path) {
                let edit = Some((tree_kind_at(path.as_bstr(), known.kind), known.id));
                put(&mut edits, path.clone(), edit);
            }
        }
        for (path, known) in refreshed.iter().chain(&reused) {
            let edit = Some((tree_kind_at(path.as_bstr(), known.kind), known.id));
            put(&mut edits, path.clone(), edit);
        }
        for entry in user.entries() {
            if entry.stage() != Stage::Unconflicted || !entry.mode.is_submodule() {
                continue;
            }
            let path = entry.path(&user);
            let rel =
                gix::path::from_bstr(path).map_err(git(format!("reading the path {path}")))?;
            let dir = root.join(rel);
            if dir.join(".git").exists() {
                // A checked-out submodule: `git add -A` records its current HEAD.
                dirty.push(path.to_owned());
            } else if !dir.is_dir() {
                // Gone: so is its gitlink. Not checked out: git keeps the recorded gitlink.
                put(&mut edits, path.to_owned(), None);
            }
        }
        for path in &removed {
            put(&mut edits, path.clone(), None);
        }

        // The blobs the cache gave were made under the `.gitattributes` files it saw; when
        // those differ now (or one is about to be read again), read those files again too.
        let attributes_changed = dirty.iter().any(|p| is_attributes(p))
            || old.as_ref().is_some_and(|c| {
                c.attributes != cache::attributes(hash_kind, attribute_files(&user, &edits))
            });
        if attributes_changed {
            for (path, _) in overrides.drain().chain(reused.drain(..)) {
                if !removed.contains(&path) {
                    edits.remove(&path);
                    dirty.push(path);
                }
            }
        }

        dirty.sort();
        dirty.dedup();
        let hashed = self.add_paths(dirty)?;
        for (path, added) in &hashed {
            let edit = added.map(|(id, kind, _)| (tree_kind_at(path.as_bstr(), kind), id));
            put(&mut edits, path.clone(), edit);
        }

        let result_key = index_key.and_then(|index| {
            let mut hasher = gix::hash::hasher(hash_kind);
            hasher.update(b"snapshot result\0");
            hasher.update(index.as_bytes());
            for (path, edit) in &edits {
                hasher.update(path);
                match edit {
                    Some((kind, id)) => {
                        hasher.update(&[1]);
                        hasher.update(&EntryMode::from(*kind).value().to_le_bytes());
                        hasher.update(id.as_bytes());
                    }
                    None => hasher.update(&[0]),
                }
            }
            hasher.try_finalize().ok()
        });
        let tree = match (&old, result_key) {
            (Some(old), Some(key)) if old.result_key == Some(key) => {
                old.result_tree.expect("a cache is used only with its tree")
            }
            _ => self.edit_index_tree(&user, &edits)?,
        };

        // What the next snapshot may trust: every entry names a blob of `tree` (see `cache`).
        let differs_from_index = |path: &BString, known: &Known| {
            user.entry_by_path_and_stage(path.as_bstr(), Stage::Unconflicted)
                .is_none_or(|entry| knows_more(entry, known))
        };
        let mut files: HashMap<BString, Known> = HashMap::new();
        for (path, known) in &overrides {
            if !reported.contains(path) {
                files.insert(path.clone(), *known);
            }
        }
        for (path, known) in refreshed.into_iter().chain(reused) {
            if differs_from_index(&path, &known) {
                files.insert(path, known);
            }
        }
        for (path, added) in hashed {
            if let Some((
                id,
                kind @ (EntryKind::Blob | EntryKind::BlobExecutable | EntryKind::Link),
                Some(stat),
            )) = added
            {
                let known = Known {
                    stat,
                    id,
                    kind,
                    fence: None,
                };
                if differs_from_index(&path, &known) {
                    files.insert(path, known);
                }
            }
        }
        let new = Cache {
            inputs,
            attributes: cache::attributes(hash_kind, attribute_files(&user, &edits)),
            result_key,
            result_tree: Some(tree),
            files,
        };
        if old.as_ref() != Some(&new) {
            cache::write(&cache_path, hash_kind, &new, started);
        }

        left_out.sort();
        Ok(SnapshotReport {
            tree: TreeId::from(tree),
            left_out,
        })
    }

    /// The walk of [`Walk::of`] made by gix's status, for file systems that fold names (which
    /// it handles and ours does not): with it, the tracked files whose stat changed and content
    /// did not, which gix read to tell.
    fn gix_walk(
        &self,
        root: &Path,
        walked: IndexPersistedOrInMemory,
    ) -> Result<(Walk, Vec<(BString, Known)>), Error> {
        // The walk stats every tracked file. Named relative to the current directory when that
        // is in the worktree (git works from the worktree's root), each path costs the kernel
        // its own few components instead of the whole absolute path's.
        let (mut walker, _head) = self.walkable()?;
        if let Some(relative) = relative_root(root) {
            walker
                .set_workdir(relative)
                .map_err(git("preparing the status walk"))?;
        }
        let iter = walker
            .status(gix::progress::Discard)
            .map_err(git("preparing the status walk"))?
            .index(walked)
            .untracked_files(gix::status::UntrackedFiles::Files)
            .index_worktree_rewrites(None)
            .index_worktree_submodules(gix::status::Submodule::Given {
                ignore: gix::submodule::config::Ignore::All,
                check_dirty: false,
            })
            .into_index_worktree_iter(Vec::new())
            .map_err(git("walking the workspace"))?;
        let mut found = Walk::default();
        let mut refreshed = Vec::new();
        for item in iter {
            match item.map_err(git("walking the workspace"))? {
                Item::Modification {
                    entry,
                    rela_path,
                    status,
                    ..
                } => match status {
                    EntryStatus::Change(Change::Removed) => found.removed.push(rela_path),
                    EntryStatus::Change(_) | EntryStatus::IntentToAdd => {
                        found.changed.push(rela_path);
                    }
                    EntryStatus::NeedsUpdate(stat) => {
                        if let Some(kind) = entry.mode.to_tree_entry_mode().map(|m| m.kind())
                            && !entry.mode.is_submodule()
                        {
                            let known = Known {
                                stat,
                                id: entry.id,
                                kind,
                                fence: None,
                            };
                            refreshed.push((rela_path, known));
                        }
                    }
                    EntryStatus::Conflict { .. } => {
                        return Err(Error::Unmerged {
                            path: rela_path.to_string(),
                        });
                    }
                },
                Item::DirectoryContents { entry, .. }
                    if entry.status == gix::dir::entry::Status::Untracked =>
                {
                    let file_or_link = matches!(
                        entry.disk_kind,
                        Some(gix::dir::entry::Kind::File | gix::dir::entry::Kind::Symlink)
                    );
                    found.untracked.push((entry.rela_path, file_or_link));
                }
                _ => {}
            }
        }
        Ok((found, refreshed))
    }

    /// Writes the tree of the user's `index` with `edits` made to it. Every directory whose
    /// tree the index's cache-tree knows is reused whole, so only what changed is written (as
    /// `git write-tree` does).
    fn edit_index_tree(
        &self,
        index: &gix::index::State,
        edits: &BTreeMap<BString, Edit>,
    ) -> Result<ObjectId, Error> {
        let repo = &self.repo;
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
        for entry in index.entries() {
            let path = entry.path(index);
            if entry.stage() != Stage::Unconflicted || edits.contains_key(path) || is_covered(path)
            {
                continue;
            }
            let kind = entry
                .mode
                .to_tree_entry_mode()
                .ok_or_else(|| Error::UnstorableMode {
                    path: path.to_string(),
                })?
                .kind();
            editor
                .upsert(path, kind, entry.id)
                .map_err(git("editing a tree"))?;
        }
        for (path, edit) in edits {
            match edit {
                Some((kind, id)) => editor.upsert(path.as_bstr(), *kind, *id),
                None => editor.remove(path.as_bstr()),
            }
            .map_err(git("editing a tree"))?;
        }
        Ok(editor
            .write()
            .map_err(git("writing the snapshot tree"))?
            .detach())
    }

    /// Hashes and writes `paths` with `git add` semantics, on as many threads as there are
    /// cores, each with its stat taken before it is read.
    fn add_paths(&self, paths: Vec<BString>) -> Result<Vec<(BString, Hashed)>, Error> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let root = self.repo.workdir().expect("a snapshot has a worktree");
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(8);
        let chunk = paths.len().div_ceil(threads).max(1);
        // git's default when the setting is absent or unreadable is 512 MiB; up to 8 threads
        // each holding a file that size would be 4 GiB, so anything above the cap is streamed.
        let threshold = self
            .repo
            .big_file_threshold()
            .unwrap_or(streamed::CAP)
            .min(streamed::CAP);
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
                                let disk = on_disk(root, path.as_bstr());
                                let streamed = streamed::add(
                                    &repo,
                                    &mut pipeline,
                                    &index,
                                    root,
                                    path.as_bstr(),
                                    threshold,
                                )?;
                                let added = match streamed
                                    .map(|added| Ok(Some(added)))
                                    .unwrap_or_else(|| {
                                        pipeline
                                            .worktree_file_to_object(path.as_bstr(), &index)
                                            .map(|added| added.map(|(id, kind, _)| (id, kind)))
                                    }) {
                                    Ok(Some((id, kind))) => Some((id, kind)),
                                    // gix reads a nested repository's HEAD itself, and cannot
                                    // when its refs are in reftable: git says where it is.
                                    found => match nested_head(root, path.as_bstr()) {
                                        Some(head) => Some((head, EntryKind::Commit)),
                                        None => found.map_err(git(format!("adding {path}")))?,
                                    },
                                };
                                Ok((
                                    path.clone(),
                                    added.map(|(id, kind)| match (kind, disk) {
                                        // git's executable bit is the owner's (S_IXUSR), as lstat
                                        // saw it before the file was read.
                                        (
                                            EntryKind::Blob | EntryKind::BlobExecutable,
                                            Some((
                                                stat,
                                                disk
                                                @ (EntryKind::Blob | EntryKind::BlobExecutable),
                                            )),
                                        ) => (id, disk, Some(stat)),
                                        (kind, disk) => (id, kind, disk.map(|(stat, _)| stat)),
                                    }),
                                ))
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

/// The worktree `root` named relative to the current directory (`.`, `..`, `../..`), when the
/// current directory is in it; `None` otherwise.
fn relative_root(root: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let below = cwd.strip_prefix(root).ok()?;
    let mut relative = PathBuf::from(".");
    for _ in below.components() {
        relative.push("..");
    }
    Some(relative)
}

/// The stat of the file at `path` under `root` (not following a symlink) and its kind on disk
/// as a tree would record it; `None` when it is missing or neither a file nor a link.
/// The commit HEAD of the repository nested at `path` is at, as git reads it, `None` when
/// `path` holds no repository or its HEAD has no commit.
fn nested_head(root: &Path, path: &BStr) -> Option<ObjectId> {
    let dir = root.join(gix::path::from_bstr(path).ok()?);
    if !dir.join(".git").exists() {
        return None;
    }
    let out = super::git_cli::output(
        super::git_cli::in_dir(&dir).args(["rev-parse", "--verify", "-q", "HEAD"]),
        "reading a nested repository's HEAD",
    )
    .ok()?;
    if !out.status.success() {
        return None;
    }
    ObjectId::from_hex(String::from_utf8_lossy(&out.stdout).trim().as_bytes()).ok()
}

fn on_disk(root: &Path, path: &BStr) -> Option<(Stat, EntryKind)> {
    let rel = gix::path::from_bstr(path).ok()?;
    let meta = gix::index::fs::Metadata::from_path_no_follow(&root.join(rel)).ok()?;
    let kind = if meta.is_symlink() {
        EntryKind::Link
    } else if !meta.is_file() {
        return None;
    } else if meta.is_executable() {
        EntryKind::BlobExecutable
    } else {
        EntryKind::Blob
    };
    Some((Stat::from_fs(&meta).ok()?, kind))
}

/// The kind a tree records for a file that is `disk` on disk, where the index `recorded` its
/// kind (if it tracks the path). With core.fileMode false, git ignores the executable bit on
/// disk: a tracked file keeps its recorded mode and a new file is stored as 100644.
fn tree_kind(disk: EntryKind, recorded: Option<EntryKind>, file_mode: bool) -> EntryKind {
    match (disk, recorded) {
        (EntryKind::Blob | EntryKind::BlobExecutable, _) if !file_mode => match recorded {
            Some(kind @ (EntryKind::Blob | EntryKind::BlobExecutable)) => kind,
            _ => EntryKind::Blob,
        },
        _ => disk,
    }
}

/// The index mode of a file of tree kind `kind`.
fn mode_of(kind: EntryKind) -> Mode {
    match kind {
        EntryKind::BlobExecutable => Mode::FILE_EXECUTABLE,
        EntryKind::Link => Mode::SYMLINK,
        EntryKind::Commit => Mode::COMMIT,
        EntryKind::Tree => Mode::DIR,
        EntryKind::Blob => Mode::FILE,
    }
}

fn is_attributes(path: &[u8]) -> bool {
    path == b".gitattributes" || path.ends_with(b"/.gitattributes")
}

/// The `.gitattributes` files of the tree of `index` with `edits`, by path and blob id.
fn attribute_files(
    index: &gix::index::State,
    edits: &BTreeMap<BString, Edit>,
) -> Vec<(BString, ObjectId)> {
    let mut files: Vec<(BString, ObjectId)> = edits
        .iter()
        .filter(|(path, _)| is_attributes(path))
        .filter_map(|(path, edit)| edit.map(|(_, id)| (path.clone(), id)))
        .collect();
    for entry in index.entries() {
        let path = entry.path(index);
        if entry.stage() == Stage::Unconflicted && is_attributes(path) && !edits.contains_key(path)
        {
            files.push((path.to_owned(), entry.id));
        }
    }
    files
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
    use crate::Store;
    use crate::testing::git;

    /// A repository with one committed file whose index's trailing checksum is then damaged.
    fn damaged_checksum() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        Store::init(dir.path()).expect("a repository");
        std::fs::write(dir.path().join("f"), b"one\n").expect("a file");
        git(dir.path(), &["add", "f"]);
        let tree = git(dir.path(), &["write-tree"]);
        let index = dir.path().join(".git/index");
        let mut bytes = std::fs::read(&index).expect("the index");
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&index, &bytes).expect("writing it back");
        (dir, tree)
    }

    #[test]
    fn the_index_is_read_as_git_reads_it_without_hashing_it_again() {
        let (dir, tree) = damaged_checksum();
        // git does not check the trailer outside fsck, and neither does the store.
        assert_eq!(git(dir.path(), &["write-tree"]), tree);
        let store = Store::discover(dir.path()).expect("the repository");
        assert_eq!(store.snapshot().expect("a snapshot").as_str(), tree);
    }

    #[test]
    fn control_gix_by_default_refuses_the_damaged_checksum() {
        let (dir, _) = damaged_checksum();
        let repo = gix::open_opts(dir.path(), gix::open::Options::isolated()).expect("opens");
        assert!(
            repo.open_index().is_err(),
            "gix hashes the index and finds the mismatch"
        );
    }

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
