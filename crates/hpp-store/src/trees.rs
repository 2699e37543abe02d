//! Commits and trees beyond single records: commits with any parents and a caller's message,
//! refs created once or moved by compare-and-swap, changed paths between trees, three-way tree
//! merges, ancestry, and snapshots of other worktrees. Hop's states and landings are built on
//! these.

use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{CommitId, Error, Store, TreeId, git};

/// How one tree differs from another ([`Store::tree_changes`]).
#[derive(Debug, Clone, Default)]
pub struct TreeChanges {
    /// Every changed path, sorted, as [`Store::changed_paths`] lists them.
    paths: Vec<String>,
    /// Each added or modified file's new entry.
    edits: Vec<(String, gix::objs::tree::EntryKind, ObjectId)>,
    /// Whether anything was removed, or turned from a directory into a file or back.
    removes: bool,
}

impl TreeChanges {
    /// Every changed path, sorted.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Each added or modified file (a blob, executable or not) with its new blob's id in hex,
    /// in no particular order: what a reader of the new side's bytes needs, without looking
    /// each path up again from the root.
    pub fn edited_files(&self) -> impl Iterator<Item = (&str, String)> {
        self.edits
            .iter()
            .filter(|(_, kind, _)| {
                matches!(
                    kind,
                    gix::objs::tree::EntryKind::Blob | gix::objs::tree::EntryKind::BlobExecutable
                )
            })
            .map(|(path, _, id)| (path.as_str(), id.to_hex().to_string()))
    }

    /// Tells whether no path changed here is one changed there, or a directory of one (a file
    /// `d` against `d/e`): then each side's files can be put beside the other's as they are.
    fn apart_from(&self, other: &TreeChanges) -> bool {
        let dirs = |path: &str| -> Vec<String> {
            path.match_indices('/')
                .map(|(i, _)| path[..i].to_owned())
                .collect()
        };
        let files: std::collections::HashSet<&str> =
            self.paths.iter().map(String::as_str).collect();
        let holding: std::collections::HashSet<String> =
            self.paths.iter().flat_map(|p| dirs(p)).collect();
        other.paths.iter().all(|path| {
            !files.contains(path.as_str())
                && !holding.contains(path)
                && dirs(path).iter().all(|dir| !files.contains(dir.as_str()))
        })
    }
}

/// What a non-tree entry of a tree is, as [`Store::visit_files`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular or executable file: its bytes are the blob's.
    File,
    /// A symbolic link: its bytes are the link's target.
    Symlink,
    /// A nested repository: its bytes are the commit id it pins, in hex.
    Gitlink,
}

impl Store {
    /// Calls `each` with the path (`/`-separated), kind and bytes of every entry below `tree`
    /// that is not itself a tree, in no particular order.
    pub fn visit_files(
        &self,
        tree: &TreeId,
        mut each: impl FnMut(&str, FileKind, &[u8]),
    ) -> Result<(), Error> {
        let root = self
            .repo
            .find_tree(tree.oid())
            .map_err(|_| Error::NotATree {
                id: tree.to_string(),
            })?;
        let mut recorder = gix::traverse::tree::Recorder::default();
        root.traverse()
            .breadthfirst(&mut recorder)
            .map_err(git(format!("walking tree {tree}")))?;
        for entry in recorder.records {
            let path = entry.filepath.to_str_lossy();
            if entry.mode.is_tree() {
                continue;
            }
            if entry.mode.is_commit() {
                each(
                    &path,
                    FileKind::Gitlink,
                    entry.oid.to_hex().to_string().as_bytes(),
                );
                continue;
            }
            let kind = if entry.mode.is_link() {
                FileKind::Symlink
            } else {
                FileKind::File
            };
            let blob = self
                .repo
                .find_blob(entry.oid)
                .map_err(git(format!("reading {path}")))?;
            each(&path, kind, &blob.data);
        }
        Ok(())
    }

    /// Returns the id of the empty tree.
    pub fn empty_tree(&self) -> TreeId {
        ObjectId::empty_tree(self.repo.object_hash()).into()
    }

    /// Parses a hex commit id that names an existing commit.
    pub fn commit_id(&self, hex: &str) -> Option<CommitId> {
        let id = ObjectId::from_hex(hex.as_bytes()).ok()?;
        self.repo.find_commit(id).ok().map(|_| id.into())
    }

    /// Writes a commit of `tree` with `parents` and `message` (no trailer added: the caller makes
    /// it unique, as Hop states are by their ids) and flushes it to disk. No ref moves.
    pub fn write_commit(
        &self,
        tree: &TreeId,
        parents: &[CommitId],
        message: &str,
    ) -> Result<CommitId, Error> {
        let sig = self.signature();
        let commit = gix::objs::Commit {
            tree: tree.oid(),
            parents: parents.iter().map(CommitId::oid).collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        let id = self
            .repo
            .write_object(&commit)
            .map_err(git("writing a hop state"))?
            .detach();
        self.sync_objects(&[id])?;
        Ok(id.into())
    }

    /// Reads a commit's tree, parents and message.
    pub fn read_commit(&self, commit: &CommitId) -> Result<(TreeId, Vec<CommitId>, String), Error> {
        let c = self
            .repo
            .find_commit(commit.oid())
            .map_err(|_| Error::NotACommit {
                name: commit.to_string(),
                id: None,
            })?;
        let tree = c
            .tree_id()
            .map_err(git(format!("reading the tree of {commit}")))?
            .detach();
        let message = c
            .message_raw()
            .map_err(git(format!("reading the message of {commit}")))?
            .to_str_lossy()
            .into_owned();
        Ok((
            tree.into(),
            c.parent_ids().map(|p| p.detach().into()).collect(),
            message,
        ))
    }

    /// Tells whether an object exists.
    pub fn has_tree(&self, tree: &TreeId) -> bool {
        self.repo.has_object(tree.oid())
    }

    /// Creates `name` at `commit`; refuses with [`Error::Moved`] if it exists.
    pub fn create_ref(&self, name: &str, commit: &CommitId) -> Result<(), Error> {
        self.cas(name, None, commit.oid())
    }

    /// Moves `name` from `expected` to `new`, only if it still points at `expected`.
    pub fn move_ref(&self, name: &str, expected: &CommitId, new: &CommitId) -> Result<(), Error> {
        self.cas(name, Some(expected.oid()), new.oid())
    }

    /// Writes a once-only record of named blobs (and an optional kept tree) at `name`.
    pub fn create_blobs(
        &self,
        name: &str,
        blobs: &[(&str, &[u8])],
        keep: Option<(&str, &TreeId)>,
        message: &str,
    ) -> Result<CommitId, Error> {
        let mut entries: Vec<(&str, super::Content)> = blobs
            .iter()
            .map(|(path, bytes)| (*path, super::Content::Bytes(bytes.to_vec())))
            .collect();
        if let Some((path, tree)) = keep {
            entries.push((path, super::Content::Tree(tree.clone())));
        }
        self.create_record(name, &entries, message)
    }

    /// Reads the blob `path` of the commit `commit`.
    pub fn read_commit_file(
        &self,
        commit: &CommitId,
        path: &str,
    ) -> Result<Option<Vec<u8>>, Error> {
        self.read_file(commit.as_str(), path)
    }

    /// Returns every path whose entry differs between `from` and `to` (files, symlinks and
    /// gitlinks; not the directories themselves), sorted. Renames are not paired up: a rename
    /// is a deletion of its old path and an addition of its new one, so both are listed.
    pub fn changed_paths(&self, from: &TreeId, to: &TreeId) -> Result<Vec<String>, Error> {
        Ok(self.tree_changes(from, to)?.paths)
    }

    /// How `to` differs from `from`: the paths [`Store::changed_paths`] lists, and each
    /// changed file's new entry, which [`Store::merge_disjoint_trees`] can apply directly.
    pub fn tree_changes(&self, from: &TreeId, to: &TreeId) -> Result<TreeChanges, Error> {
        let mut changes = TreeChanges::default();
        if from == to {
            return Ok(changes);
        }
        let old = self
            .repo
            .find_tree(from.oid())
            .map_err(git(format!("reading tree {from}")))?;
        let new = self
            .repo
            .find_tree(to.oid())
            .map_err(git(format!("reading tree {to}")))?;
        // A plain tree diff: no rename pairing, so no blob is read, and no resource cache (whose
        // attributes gix would take from the whole worktree index).
        let mut recorder = gix::diff::tree::Recorder::default();
        gix::diff::tree(
            gix::objs::TreeRefIter::from_bytes(&old.data, old.id.kind()),
            gix::objs::TreeRefIter::from_bytes(&new.data, new.id.kind()),
            &mut gix::diff::tree::State::default(),
            &self.repo.objects,
            &mut recorder,
        )
        .map_err(gix::Error::from_error)
        .map_err(git(format!("diffing {from} and {to}")))?;
        for change in recorder.records {
            use gix::diff::tree::recorder::Change;
            let (before, after, path) = match change {
                Change::Addition {
                    entry_mode,
                    oid,
                    path,
                    ..
                } => (None, Some((entry_mode, oid)), path),
                Change::Deletion {
                    entry_mode, path, ..
                } => (Some(entry_mode), None, path),
                Change::Modification {
                    previous_entry_mode,
                    entry_mode,
                    oid,
                    path,
                    ..
                } => (Some(previous_entry_mode), Some((entry_mode, oid)), path),
            };
            let was_tree = before.is_some_and(|m| m.is_tree());
            let is_tree = after.is_some_and(|(m, _)| m.is_tree());
            // A directory's own entry changes with anything below it: only what it holds counts.
            if (was_tree || before.is_none()) && (is_tree || after.is_none()) {
                changes.removes |= was_tree && after.is_none();
                continue;
            }
            let path = path.to_str_lossy().into_owned();
            match after {
                Some((mode, id)) if !was_tree && !is_tree => {
                    changes.edits.push((path.clone(), mode.kind(), id));
                }
                _ => changes.removes = true,
            }
            changes.paths.push(path);
        }
        changes.paths.sort();
        changes.paths.dedup();
        Ok(changes)
    }

    /// [`Store::tree_changes`] without the top-level entry `except` of either tree and what is
    /// under it: that subtree is never walked (a record's kept 50,000-file snapshot, read on
    /// its own). Each other top-level entry is compared by id, and a subtree that differs is
    /// diffed under its name.
    pub fn tree_changes_except(
        &self,
        from: &TreeId,
        to: &TreeId,
        except: &str,
    ) -> Result<TreeChanges, Error> {
        use gix::objs::tree::EntryKind;
        type Top = (String, EntryKind, ObjectId);
        let entries = |tree: &TreeId| -> Result<Vec<Top>, Error> {
            let found = self
                .repo
                .find_tree(tree.oid())
                .map_err(git(format!("reading tree {tree}")))?;
            let decoded = found
                .decode()
                .map_err(git(format!("reading tree {tree}")))?;
            Ok(decoded
                .entries
                .iter()
                .filter(|e| e.filename != except.as_bytes())
                .map(|e| (e.filename.to_string(), e.mode.kind(), e.oid.to_owned()))
                .collect())
        };
        let old = entries(from)?;
        let new = entries(to)?;
        let empty = self.empty_tree();
        let mut changes = TreeChanges::default();
        let names: std::collections::BTreeSet<&String> =
            old.iter().chain(new.iter()).map(|(n, _, _)| n).collect();
        for name in names {
            let before = old.iter().find(|(n, _, _)| n == name);
            let after = new.iter().find(|(n, _, _)| n == name);
            if let (Some(b), Some(a)) = (before, after)
                && (b.1, b.2) == (a.1, a.2)
            {
                continue;
            }
            let subtree = |e: Option<&Top>| match e {
                Some((_, EntryKind::Tree, id)) => TreeId::from(*id),
                _ => empty.clone(),
            };
            let (before_tree, after_tree) = (subtree(before), subtree(after));
            if before_tree != after_tree {
                let inner = self.tree_changes(&before_tree, &after_tree)?;
                changes.removes |= inner.removes;
                changes
                    .paths
                    .extend(inner.paths.into_iter().map(|p| format!("{name}/{p}")));
                changes.edits.extend(
                    inner
                        .edits
                        .into_iter()
                        .map(|(p, kind, id)| (format!("{name}/{p}"), kind, id)),
                );
            }
            let before_file = before.filter(|(_, kind, _)| *kind != EntryKind::Tree);
            let after_file = after.filter(|(_, kind, _)| *kind != EntryKind::Tree);
            match (before_file, after_file) {
                (None, None) => {}
                (_, Some((_, kind, id))) => {
                    changes.edits.push((name.clone(), *kind, *id));
                    changes.paths.push(name.clone());
                }
                (Some(_), None) => {
                    changes.removes = true;
                    changes.paths.push(name.clone());
                }
            }
        }
        changes.paths.sort();
        changes.paths.dedup();
        Ok(changes)
    }

    /// Merges `theirs` into `ours` with `base` as the common ancestor (git's three-way tree
    /// merge, in memory), for sides whose changed paths the caller has checked are disjoint
    /// (hop's overlap rule: no path, nor a directory of one, changed on both). Any conflict
    /// git would leave unresolved, and any forced resolution (a directory against a file,
    /// say), is a conflict: then the inner result is the sorted conflicting paths instead of
    /// the composed tree.
    ///
    /// Disjoint sides never merge a file's content, so no `.gitattributes` in the trees is
    /// consulted (merge drivers, `text`, `binary`): this reads only the repository-wide
    /// attribute files, not the worktree's index. gix's own merge loads and checksums the
    /// whole index for attributes first, which in a repository of 50,000 files was a third
    /// of a landing's CPU.
    ///
    /// `ours_changed` and `theirs_changed` are each side's [`Store::tree_changes`] from `base`.
    /// When neither side removed anything, nothing can be taken for a rename (of a file or a
    /// directory), so the merge is `ours` with the files `theirs` added or modified put in:
    /// that tree is written directly, without diffing the sides again.
    pub fn merge_disjoint_trees(
        &self,
        base: &TreeId,
        (ours, ours_changed): (&TreeId, &TreeChanges),
        (theirs, theirs_changed): (&TreeId, &TreeChanges),
    ) -> Result<Result<TreeId, Vec<String>>, Error> {
        if !ours_changed.removes
            && !theirs_changed.removes
            && ours_changed.apart_from(theirs_changed)
        {
            let mut editor = self
                .repo
                .edit_tree(ours.oid())
                .map_err(git("editing the merged tree"))?;
            for (path, kind, id) in &theirs_changed.edits {
                editor
                    .upsert(path.as_str(), *kind, *id)
                    .map_err(git("editing the merged tree"))?;
            }
            let tree = editor
                .write()
                .map_err(git("writing the merged tree"))?
                .detach();
            return Ok(Ok(tree.into()));
        }
        self.merge_three_way(base, ours, theirs)
    }

    /// git's three-way tree merge of [`Store::merge_disjoint_trees`], by gix, reading no index.
    fn merge_three_way(
        &self,
        base: &TreeId,
        ours: &TreeId,
        theirs: &TreeId,
    ) -> Result<Result<TreeId, Vec<String>>, Error> {
        use gix::merge::tree::TreatAsUnresolved;
        use gix::worktree::stack::state::attributes::Source;
        let (repo, _head) = self.walkable()?;
        let options = repo
            .tree_merge_options()
            .map_err(git("reading merge options"))?;
        let labels = gix::merge::blob::builtin_driver::text::Labels {
            ancestor: Some("base".into()),
            current: Some("accepted".into()),
            other: Some("proposal".into()),
        };
        // Attributes from the repository-wide files only: an empty index maps no in-tree
        // `.gitattributes`.
        let attributes = || {
            repo.attributes_only(
                &gix::index::State::new(repo.object_hash()),
                Source::IdMapping,
            )
            .map(gix::AttributeStack::detach)
            .map_err(git("reading attributes"))
        };
        let mut diff_cache = gix::diff::resource_cache(
            &repo,
            gix::diff::blob::pipeline::Mode::ToGit,
            attributes()?,
            Default::default(),
        )
        .map_err(git("preparing the merge"))?;
        let filter = gix::filter::plumbing::Pipeline::new(
            repo.command_context().map_err(git("preparing the merge"))?,
            repo.object_hash(),
            gix::filter::Pipeline::options(&repo).map_err(git("preparing the merge"))?,
        );
        let mut blob_merge = gix::merge::blob::Platform::new(
            gix::merge::blob::Pipeline::new(Default::default(), filter, Default::default()),
            gix::merge::blob::pipeline::Mode::ToGit,
            attributes()?,
            Vec::new(),
            Default::default(),
        );
        let outcome = gix::merge::plumbing::tree(
            base.oid().as_ref(),
            ours.oid().as_ref(),
            theirs.oid().as_ref(),
            labels,
            &repo.objects,
            |buf| repo.write_blob(buf).map(|id| id.detach()),
            &mut Default::default(),
            &mut diff_cache,
            &mut blob_merge,
            gix::merge::plumbing::tree::Context { submodule: None },
            options.into(),
        )
        .map_err(git("merging trees"))?;
        let how = TreatAsUnresolved::forced_resolution();
        if outcome.has_unresolved_conflicts(how) {
            let mut paths: Vec<String> = outcome
                .conflicts
                .iter()
                .filter(|c| c.is_unresolved(how))
                .flat_map(|c| {
                    [
                        c.ours.location().to_str_lossy().into_owned(),
                        c.theirs.location().to_str_lossy().into_owned(),
                    ]
                })
                .collect();
            paths.sort();
            paths.dedup();
            return Ok(Err(paths));
        }
        let mut editor = outcome.tree;
        let tree = editor
            .write(|tree| repo.write_object(tree).map(|id| id.detach()))
            .map_err(git("writing the merged tree"))?;
        Ok(Ok(tree.into()))
    }

    /// Tells whether `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: &CommitId, descendant: &CommitId) -> Result<bool, Error> {
        if ancestor == descendant {
            return Ok(true);
        }
        let base = self
            .repo
            .merge_base(ancestor.oid(), descendant.oid())
            .map_err(git("finding a merge base"))?;
        Ok(base.is_some_and(|b| b.detach() == ancestor.oid()))
    }

    /// Returns the root commits (those without parents) of the history of `commit`, sorted.
    /// Walks the whole history once. In a shallow clone whose boundary cuts that history, the
    /// roots are not here: [`Error::Shallow`], never the boundary named as a root.
    pub fn root_commits(&self, commit: &CommitId) -> Result<Vec<CommitId>, Error> {
        let walk = self
            .repo
            .rev_walk([commit.oid()])
            .all()
            .map_err(git(format!("walking the history of {commit}")))?;
        let mut roots = Vec::new();
        for info in walk {
            let info = info.map_err(git(format!("walking the history of {commit}")))?;
            if info.parent_ids.is_empty() {
                // gix's walk ends at the shallow boundary as if it were the root.
                if self.is_cut(info.id) {
                    return Err(Error::Shallow {
                        commit: commit.clone(),
                        boundary: info.id.into(),
                    });
                }
                roots.push(CommitId::from(info.id));
            }
        }
        roots.sort();
        Ok(roots)
    }

    /// Returns the commits a ref update brings, newest first: those reachable from `new` and
    /// not from `old`, or, for a new ref (`old` is `None`), not from any branch or tag that has
    /// already landed (a push's pending updates are not counted as landed).
    pub fn commits_brought(
        &self,
        new: &CommitId,
        old: Option<&CommitId>,
    ) -> Result<Vec<CommitId>, Error> {
        let hidden: Vec<ObjectId> = match old {
            Some(old) => vec![old.oid()],
            None if self.git_refs => {
                let mut tips = Vec::new();
                for prefix in ["refs/heads/", "refs/tags/"] {
                    tips.extend(self.git_list(prefix)?.into_iter().map(|l| l.peeled));
                }
                tips
            }
            None => {
                let platform = self.repo.references().map_err(git("listing refs"))?;
                let mut tips = Vec::new();
                for prefix in ["refs/heads/", "refs/tags/"] {
                    let iter = platform
                        .prefixed(prefix.as_bytes().as_bstr())
                        .map_err(git(format!("listing {prefix}")))?;
                    for reference in iter.flatten() {
                        let mut reference = reference;
                        if let Ok(id) = reference.peel_to_id() {
                            tips.push(id.detach());
                        }
                    }
                }
                tips
            }
        };
        let hidden: Vec<ObjectId> = hidden
            .into_iter()
            .filter(|id| {
                self.repo
                    .find_object(*id)
                    .is_ok_and(|o| o.kind == gix::object::Kind::Commit)
            })
            .collect();
        let walk = self
            .repo
            .rev_walk([new.oid()])
            .with_hidden(hidden)
            .all()
            .map_err(git(format!("walking the commits of {new}")))?;
        let mut out = Vec::new();
        for info in walk {
            out.push(
                info.map_err(git(format!("walking the commits of {new}")))?
                    .id
                    .into(),
            );
        }
        Ok(out)
    }

    /// Tells whether `hex` names a commit of this repository that has no parent.
    pub fn is_root_commit(&self, hex: &str) -> bool {
        ObjectId::from_hex(hex.as_bytes())
            .ok()
            .and_then(|id| self.repo.find_commit(id).ok())
            .is_some_and(|c| c.parent_ids().next().is_none())
    }

    /// Takes the snapshot of the workspace at `dir` (a linked worktree of this repository).
    pub fn snapshot_of(dir: &Path) -> Result<TreeId, Error> {
        Store::discover(dir)?.snapshot()
    }

    /// Returns the root of the main worktree (for a repository opened from a linked one too),
    /// or `None` for a bare repository.
    pub fn main_worktree_root(&self) -> Option<std::path::PathBuf> {
        let common = self.repo.common_dir();
        if common.file_name().is_some_and(|n| n == ".git") {
            return common.parent().map(Path::to_path_buf);
        }
        self.workdir().map(Path::to_path_buf)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn repo_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Store, TreeId) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let tree = tree_of(&store, files);
        (dir, store, tree)
    }

    /// A tree of `files` (path, content), written to `store`.
    pub(crate) fn tree_of(store: &Store, files: &[(&str, &str)]) -> TreeId {
        let mut editor = store
            .repo
            .edit_tree(ObjectId::empty_tree(store.repo.object_hash()))
            .unwrap();
        for (path, text) in files {
            let blob = store.repo.write_blob(text.as_bytes()).unwrap().detach();
            editor
                .upsert(*path, gix::objs::tree::EntryKind::Blob, blob)
                .unwrap();
        }
        editor.write().unwrap().detach().into()
    }

    #[test]
    fn changes_except_one_entry_are_the_changes_outside_it() {
        let (_dir, store, base) = repo_with(&[("snapshot/a.txt", "a\n"), ("record.json", "1\n")]);
        let after = tree_of(
            &store,
            &[
                ("snapshot/a.txt", "changed\n"),
                ("snapshot/new.txt", "n\n"),
                ("record.json", "2\n"),
                ("spec/SPEC.md", "s\n"),
            ],
        );
        let all = store.tree_changes(&base, &after).unwrap();
        let outside = store
            .tree_changes_except(&base, &after, "snapshot")
            .unwrap();
        let expected: Vec<&String> = all
            .paths()
            .iter()
            .filter(|p| !p.starts_with("snapshot/"))
            .collect();
        assert_eq!(outside.paths().iter().collect::<Vec<_>>(), expected);
        let mut edited: Vec<String> = outside.edited_files().map(|(p, _)| p.to_owned()).collect();
        edited.sort();
        assert_eq!(edited, ["record.json", "spec/SPEC.md"]);
        // Against the empty tree, as a record's first commit is read.
        let first = store
            .tree_changes_except(&store.empty_tree(), &after, "snapshot")
            .unwrap();
        assert_eq!(first.paths(), ["record.json", "spec/SPEC.md"]);
    }

    #[test]
    fn control_without_the_exception_the_snapshot_s_changes_are_listed() {
        let (_dir, store, base) = repo_with(&[("snapshot/a.txt", "a\n")]);
        let after = tree_of(&store, &[("snapshot/a.txt", "b\n")]);
        let listed = store.tree_changes_except(&base, &after, "other").unwrap();
        assert_eq!(listed.paths(), ["snapshot/a.txt"]);
        assert!(
            store
                .tree_changes_except(&base, &after, "snapshot")
                .unwrap()
                .paths()
                .is_empty()
        );
    }

    #[test]
    fn changed_paths_list_both_sides_of_a_rename_and_skip_directories() {
        let (_dir, store, base) = repo_with(&[("a/old.txt", "x\n"), ("b.txt", "b\n")]);
        let after = tree_of(
            &store,
            &[("a/new.txt", "x\n"), ("b.txt", "b2\n"), ("c/d.txt", "d")],
        );
        assert_eq!(
            store.changed_paths(&base, &after).unwrap(),
            ["a/new.txt", "a/old.txt", "b.txt", "c/d.txt"]
        );
    }

    /// Merges as hop does: each side's changes from `base`, then the merge.
    fn merge(
        store: &Store,
        base: &TreeId,
        ours: &TreeId,
        theirs: &TreeId,
    ) -> Result<TreeId, Vec<String>> {
        let ours_changed = store.tree_changes(base, ours).unwrap();
        let theirs_changed = store.tree_changes(base, theirs).unwrap();
        store
            .merge_disjoint_trees(base, (ours, &ours_changed), (theirs, &theirs_changed))
            .unwrap()
    }

    #[test]
    fn disjoint_changes_merge_cleanly() {
        let (_dir, store, base) = repo_with(&[("a", "1\n"), ("b", "1\n")]);
        let ours = tree_of(&store, &[("a", "2\n"), ("b", "1\n")]);
        let theirs = tree_of(&store, &[("a", "1\n"), ("b", "2\n")]);
        let want = tree_of(&store, &[("a", "2\n"), ("b", "2\n")]);
        assert_eq!(merge(&store, &base, &ours, &theirs), Ok(want));
    }

    #[test]
    fn added_and_modified_files_are_put_in_as_the_three_way_merge_would() {
        let base_files = [
            ("d/a", "1\n"),
            ("d/b", "1\n"),
            ("e/c", "1\n"),
            ("top", "1\n"),
        ];
        let (_dir, store, base) = repo_with(&base_files);
        let ours = tree_of(
            &store,
            &[
                ("d/a", "2\n"),
                ("d/b", "1\n"),
                ("e/c", "1\n"),
                ("top", "1\n"),
                ("n/x", "x\n"),
            ],
        );
        let theirs = tree_of(
            &store,
            &[
                ("d/a", "1\n"),
                ("d/b", "3\n"),
                ("e/c", "1\n"),
                ("top", "4\n"),
                ("n/y", "y\n"),
                ("m/z/w", "w\n"),
            ],
        );
        let composed = merge(&store, &base, &ours, &theirs).unwrap();
        // The same as gix's three-way merge of the same trees, and as written out by hand.
        assert_eq!(
            store.merge_three_way(&base, &ours, &theirs).unwrap(),
            Ok(composed.clone())
        );
        let want = tree_of(
            &store,
            &[
                ("d/a", "2\n"),
                ("d/b", "3\n"),
                ("e/c", "1\n"),
                ("top", "4\n"),
                ("n/x", "x\n"),
                ("n/y", "y\n"),
                ("m/z/w", "w\n"),
            ],
        );
        assert_eq!(composed, want);
    }

    #[test]
    fn a_side_that_removes_a_file_is_merged_by_the_three_way_merge() {
        let (_dir, store, base) = repo_with(&[("a", "1\n"), ("b", "1\n"), ("c", "1\n")]);
        let ours = tree_of(&store, &[("b", "1\n"), ("c", "1\n")]);
        let theirs = tree_of(&store, &[("a", "1\n"), ("b", "2\n"), ("c", "1\n")]);
        assert!(store.tree_changes(&base, &ours).unwrap().removes);
        let want = tree_of(&store, &[("b", "2\n"), ("c", "1\n")]);
        assert_eq!(merge(&store, &base, &ours, &theirs), Ok(want));
    }

    #[test]
    fn control_a_file_against_a_directory_is_a_conflict() {
        // Neither side removes anything, so only the disjointness check keeps this from being
        // composed as if the sides were apart.
        let (_dir, store, base) = repo_with(&[("x", "1\n")]);
        let ours = tree_of(&store, &[("x", "1\n"), ("d", "file\n")]);
        let theirs = tree_of(&store, &[("x", "1\n"), ("d/e", "inside\n")]);
        assert!(matches!(
            merge(&store, &base, &ours, &theirs),
            Err(paths) if !paths.is_empty()
        ));
    }
}
