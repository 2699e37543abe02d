//! Single records: one commit, created once, whose tree holds the record's blobs and whatever
//! the record names (a snapshot tree, a spec blob, artifact blobs), so `git gc` keeps them and
//! `git push` sends them. Also the small reads records need: files at a ref, HEAD, revisions,
//! config values, and notes on `refs/notes/hpp`. A record that takes one addition outside its
//! seal (a person's decision on a sealed House Session) moves forward by one child commit
//! ([`Store::extend_record`]) that leaves every earlier blob as it was.

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::clones::Entry;
use super::{CommitId, Error, Store, TreeId, git, git_cli, refs};

/// The notes ref that mirrors attestations for `git log --notes=hpp`.
pub const NOTES_REF: &str = "refs/notes/hpp";

/// What one path of a record's tree holds.
#[derive(Debug, Clone)]
pub enum Content {
    /// New bytes, written as a blob (mode 100644).
    Bytes(Vec<u8>),
    /// An existing tree (a snapshot), kept reachable by the record.
    Tree(TreeId),
}

impl Store {
    /// Creates `name` pointing at a new parentless commit whose tree holds `entries`. Refuses
    /// with [`Error::Moved`] if `name` exists: a record is written once.
    pub fn create_record(
        &self,
        name: &str,
        entries: &[(&str, Content)],
        message: &str,
    ) -> Result<CommitId, Error> {
        let repo = &self.repo;
        let mut editor = repo
            .edit_tree(ObjectId::empty_tree(repo.object_hash()))
            .map_err(git("editing a tree"))?;
        for (path, content) in entries {
            match content {
                Content::Bytes(bytes) => {
                    let blob = repo
                        .write_blob(bytes)
                        .map_err(git("writing a record blob"))?
                        .detach();
                    editor
                        .upsert(*path, EntryKind::Blob, blob)
                        .map_err(git("editing a tree"))?;
                }
                Content::Tree(tree) => {
                    editor
                        .upsert(*path, EntryKind::Tree, tree.oid())
                        .map_err(git("editing a tree"))?;
                }
            }
        }
        let tree = editor
            .write()
            .map_err(git("writing a record tree"))?
            .detach();
        let commit = self.new_commit(tree, None, message)?;
        self.cas(name, None, commit)?;
        Ok(commit.into())
    }

    /// Moves `name` forward from `expected` to a child commit whose tree is `expected`'s plus the
    /// blobs `files` (name and bytes). Refuses with [`Error::Moved`] when `name` no longer points
    /// at `expected`, so two people deciding at once cannot both win.
    pub fn extend_record(
        &self,
        name: &str,
        expected: &CommitId,
        files: &[(&str, &[u8])],
        message: &str,
    ) -> Result<CommitId, Error> {
        let parent = expected.oid();
        let tree = self.tree_with(parent, files)?;
        let commit = self.new_commit(tree, Some(parent), message)?;
        self.cas(name, Some(parent), commit)?;
        Ok(commit.into())
    }

    /// Writes the tree of `commit` plus the blobs `files` (name and bytes), and returns it.
    fn tree_with(&self, commit: ObjectId, files: &[(&str, &[u8])]) -> Result<ObjectId, Error> {
        let repo = &self.repo;
        let tree = repo
            .find_commit(commit)
            .map_err(git("reading a record commit"))?
            .tree_id()
            .map_err(git("reading a record tree"))?
            .detach();
        let mut editor = repo.edit_tree(tree).map_err(git("editing a tree"))?;
        for (file, bytes) in files {
            let blob = repo
                .write_blob(bytes)
                .map_err(git("writing a record blob"))?
                .detach();
            editor
                .upsert(*file, EntryKind::Blob, blob)
                .map_err(git("editing a tree"))?;
        }
        let tree = editor
            .write()
            .map_err(git("writing a record tree"))?
            .detach();
        Ok(tree)
    }

    /// Moves `name` forward from `expected` to a commit that joins two histories: its first
    /// parent `kept`, whose tree it carries plus the blobs `files`, and its second parent
    /// `joined`, kept reachable. `expected` must be one of the two, so the move is forward.
    /// Refuses with [`Error::Moved`] when `name` no longer points at `expected`.
    pub fn join_record(
        &self,
        name: &str,
        expected: &CommitId,
        kept: &CommitId,
        joined: &CommitId,
        files: &[(&str, &[u8])],
        message: &str,
    ) -> Result<CommitId, Error> {
        assert!(
            expected == kept || expected == joined,
            "a join moves its ref forward"
        );
        let repo = &self.repo;
        let tree = self.tree_with(kept.oid(), files)?;
        let mut commit = self.commit_object(tree, Some(kept.oid()), message);
        commit.parents.push(joined.oid());
        let id = repo
            .write_object(&commit)
            .map_err(git("writing a join commit"))?
            .detach();
        self.cas(name, Some(expected.oid()), id)?;
        Ok(id.into())
    }

    /// Creates a record under the first free name of [`refs::unique_names`] of `base` (`base`,
    /// `base-2`, ... `base-100`), so two writers recording in the same second get two names and
    /// neither overwrites the other. `build` is given the full ref name (records that name their
    /// own ref seal it in) and returns the entries and the commit message. Returns the ref.
    pub fn create_first_free<E: From<Error>>(
        &self,
        base: &str,
        ref_of: impl Fn(&str) -> String,
        mut build: impl FnMut(&str) -> Result<(Vec<(String, Content)>, String), E>,
    ) -> Result<String, E> {
        for name in refs::unique_names(base) {
            let full = ref_of(&name);
            let (entries, message) = build(&full)?;
            let borrowed: Vec<(&str, Content)> = entries
                .iter()
                .map(|(path, content)| (path.as_str(), content.clone()))
                .collect();
            match self.create_record(&full, &borrowed, &message) {
                Ok(_) => return Ok(full),
                Err(Error::Moved { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(Error::Contended {
            name: ref_of(base),
            attempts: refs::UNIQUE_NAMES,
        }
        .into())
    }

    /// Reads the blob at `path` in the tree of the commit `name` points at (a ref name or a
    /// commit id). `None` when the ref, or the path, does not exist.
    pub fn read_file(&self, name: &str, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let Some(commit) = self.resolve_commit(name)? else {
            return Ok(None);
        };
        let tree = self.tree_of_commit(name, commit)?;
        let Some(entry) = self
            .lookup(tree, path)
            .map_err(git(format!("looking up {path} in {name}")))?
        else {
            return Ok(None);
        };
        if !entry.mode.is_blob() {
            return Ok(None);
        }
        let blob = self
            .object(entry.id)
            .map_err(git(format!("reading {path} of {name}")))?;
        Ok(Some(blob.data.clone()))
    }

    /// Returns the id of the entry at `path` in the tree of `name`'s commit, if any.
    pub fn entry_id(&self, name: &str, path: &str) -> Result<Option<String>, Error> {
        let Some(commit) = self.resolve_commit(name)? else {
            return Ok(None);
        };
        let tree = self.tree_of_commit(name, commit)?;
        Ok(self
            .lookup(tree, path)
            .map_err(git(format!("looking up {path} in {name}")))?
            .map(|e| e.id.to_hex().to_string()))
    }

    /// The tree of the commit `commit` (reached as `name`).
    fn tree_of_commit(&self, name: &str, commit: ObjectId) -> Result<ObjectId, Error> {
        Ok(self
            .repo
            .find_commit(commit)
            .map_err(git(format!("reading {name}")))?
            .tree_id()
            .map_err(git(format!("reading the tree of {name}")))?
            .detach())
    }

    /// The entry at `path` inside the tree `tree`, if any.
    fn tree_entry(&self, tree: &TreeId, path: &str) -> Result<Option<Entry>, Error> {
        if self.object(tree.oid()).ok().map(|o| o.kind) != Some(gix::object::Kind::Tree) {
            return Err(Error::NotATree {
                id: tree.to_string(),
            });
        }
        self.lookup(tree.oid(), path)
            .map_err(git(format!("looking up {path}")))
    }

    /// Returns the entry id at `path` inside the tree `tree`, if any.
    pub fn tree_entry_id(&self, tree: &TreeId, path: &str) -> Result<Option<String>, Error> {
        Ok(self
            .tree_entry(tree, path)?
            .map(|e| e.id.to_hex().to_string()))
    }

    /// Tells whether `path` names a directory (a tree entry) inside the tree `tree`.
    pub fn is_dir_in(&self, tree: &TreeId, path: &str) -> Result<bool, Error> {
        Ok(self
            .tree_entry(tree, path)?
            .is_some_and(|e| e.mode.is_tree()))
    }

    /// Returns the bytes of the blob at `path` inside the tree `tree`; `None` when there is no
    /// entry there or it is not a blob (a directory, a gitlink).
    pub fn tree_blob(&self, tree: &TreeId, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let Some(entry) = self.tree_entry(tree, path)?.filter(|e| e.mode.is_blob()) else {
            return Ok(None);
        };
        let blob = self
            .object(entry.id)
            .map_err(git(format!("reading {path}")))?;
        // Taken, not copied: a big file's blob is held once.
        Ok(Some(blob.detach().data))
    }

    /// Returns a reader of the blob at `path` inside the tree `tree`, if there is one: the
    /// blob held whole when it is small, else streamed out of the object database by `git
    /// cat-file` (gix 0.91 reads an object whole, compressed and inflated at once: a 1 GiB
    /// file cost 2 GiB), so a reader that reads in pieces holds a piece at a time.
    pub fn tree_blob_reader(&self, tree: &TreeId, path: &str) -> Result<Option<BlobReader>, Error> {
        let Some(entry) = self.tree_entry(tree, path)?.filter(|e| e.mode.is_blob()) else {
            return Ok(None);
        };
        self.blob_reader_of(entry.id, path).map(Some)
    }

    /// [`Store::tree_blob_reader`] of a blob known by its id (hex), as a tree diff gives it
    /// ([`crate::TreeChanges::edited_files`]); `path` names it in errors. `None` for an id that
    /// is not one.
    pub fn blob_reader(&self, hex: &str, path: &str) -> Result<Option<BlobReader>, Error> {
        let Ok(id) = ObjectId::from_hex(hex.as_bytes()) else {
            return Ok(None);
        };
        self.blob_reader_of(id, path).map(Some)
    }

    fn blob_reader_of(&self, id: ObjectId, path: &str) -> Result<BlobReader, Error> {
        if !self.repo.has_object(id) {
            self.fetch_promised([id]);
        }
        let size = self
            .repo
            .find_header(id)
            .map_err(git(format!("reading {path}")))?
            .size();
        if size <= BlobReader::WHOLE {
            let blob = self.object(id).map_err(git(format!("reading {path}")))?;
            return Ok(BlobReader::Whole(std::io::Cursor::new(blob.detach().data)));
        }
        let what = format!("reading {path}");
        let mut child = super::git_cli::in_repo(self.repo.git_dir(), self.workdir())
            .args(["cat-file", "blob", &id.to_hex().to_string()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|source| Error::GitUnavailable {
                what: what.clone(),
                source,
            })?;
        let stdout = child.stdout.take().expect("stdout was piped");
        Ok(BlobReader::Streamed {
            child,
            stdout,
            left: size,
            what,
        })
    }

    /// Tells whether an object with this hex id exists in the repository.
    pub fn has_object(&self, hex: &str) -> bool {
        ObjectId::from_hex(hex.as_bytes()).is_ok_and(|id| self.repo.has_object(id))
    }

    /// Returns the git blob id of the `size` bytes `reader` gives, read in pieces, without
    /// writing anything: an error when it gives more or fewer (the file changed while read).
    pub fn blob_id_of_reader(
        &self,
        reader: &mut dyn std::io::Read,
        size: u64,
    ) -> std::io::Result<String> {
        let mut hasher = gix::hash::hasher(self.repo.object_hash());
        hasher.update(&gix::objs::encode::loose_header(
            gix::objs::Kind::Blob,
            size,
        ));
        let mut piece = vec![0u8; 256 * 1024];
        let mut read = 0u64;
        loop {
            let n = reader.read(&mut piece)?;
            if n == 0 {
                break;
            }
            read += n as u64;
            if read > size {
                break;
            }
            hasher.update(&piece[..n]);
        }
        if read != size {
            return Err(std::io::Error::other("the file changed while it was read"));
        }
        hasher
            .try_finalize()
            .map(|id| id.to_hex().to_string())
            .map_err(std::io::Error::other)
    }

    /// Returns the git blob id of `bytes` without writing anything.
    pub fn blob_id(&self, bytes: &[u8]) -> String {
        gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, bytes)
            .map(|id| id.to_hex().to_string())
            .unwrap_or_default()
    }

    /// Returns the commit HEAD points at, or `None` on an unborn branch.
    pub fn head_commit(&self) -> Result<Option<CommitId>, Error> {
        if self.git_refs {
            return Ok(self.git_head()?.map(Into::into));
        }
        let head = self.repo.head_id().ok();
        Ok(head.map(|id| id.detach().into()))
    }

    /// Resolves a ref name, `HEAD` or a commit id (full or abbreviated) to a commit; `None` when
    /// nothing by that name exists.
    pub fn resolve_commit(&self, spec: &str) -> Result<Option<ObjectId>, Error> {
        if let Ok(id) = ObjectId::from_hex(spec.as_bytes()) {
            return Ok(self.repo.has_object(id).then_some(id));
        }
        if spec.starts_with("refs/") {
            return self.tip_oid(spec);
        }
        let found = if self.git_refs {
            self.git_rev_parse(spec)?
                .map(|id| gix::prelude::ObjectIdExt::attach(id, &self.repo))
                .ok_or(())
        } else {
            self.repo
                .rev_parse_single(spec.as_bytes().as_bstr())
                .map_err(|_| ())
        };
        match found {
            Ok(id) => {
                let object = id.object().map_err(git(format!("reading {spec}")))?;
                let commit = object.peel_to_commit().map_err(|_| Error::NotCommitish {
                    spec: spec.to_owned(),
                })?;
                Ok(Some(commit.id))
            }
            Err(_) => Ok(None),
        }
    }

    /// Lists the commits of a revision or range (`A..B`, `A...B` excluded), newest first; a single
    /// revision gives itself.
    pub fn commits_in(&self, spec: &str) -> Result<Vec<CommitId>, Error> {
        if let Some((from, to)) = spec.split_once("..") {
            let to = if to.is_empty() { "HEAD" } else { to };
            let from = if from.is_empty() { "HEAD" } else { from };
            let tip = self
                .resolve_commit(to)?
                .ok_or_else(|| Error::NoSuchRevision {
                    spec: to.to_owned(),
                })?;
            let base = self
                .resolve_commit(from)?
                .ok_or_else(|| Error::NoSuchRevision {
                    spec: from.to_owned(),
                })?;
            let walk = self
                .repo
                .rev_walk([tip])
                .with_hidden([base])
                .all()
                .map_err(git(format!("walking {spec}")))?;
            let shallow = self.is_shallow();
            let mut out = Vec::new();
            for info in walk {
                let id = info.map_err(git(format!("walking {spec}")))?.id;
                // gix's walk ends at the shallow boundary as if the range ended there: the
                // commits beyond it, not here, would go unverified without a word.
                if shallow && self.is_cut(id) && self.cut_short(id, base)? {
                    return Err(Error::ShallowRange {
                        spec: spec.to_owned(),
                        boundary: id.into(),
                    });
                }
                out.push(id.into());
            }
            return Ok(out);
        }
        let id = self
            .resolve_commit(spec)?
            .ok_or_else(|| Error::NoSuchRevision {
                spec: spec.to_owned(),
            })?;
        Ok(vec![id.into()])
    }

    /// Tells whether the range down to `base` goes on past the boundary commit `id`: one of
    /// its parents is neither `base` nor an ancestor of it here.
    fn cut_short(&self, id: ObjectId, base: ObjectId) -> Result<bool, Error> {
        let parents: Vec<ObjectId> = self
            .repo
            .find_commit(id)
            .map_err(git(format!("reading {id}")))?
            .parent_ids()
            .map(|p| p.detach())
            .collect();
        for parent in parents {
            let inside = parent == base
                || (self.repo.has_object(parent)
                    && self.is_ancestor(&parent.into(), &base.into())?);
            if !inside {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Returns the tree of a commit.
    pub fn commit_tree(&self, commit: &CommitId) -> Result<TreeId, Error> {
        let c = self
            .repo
            .find_commit(commit.oid())
            .map_err(git(format!("reading {commit}")))?;
        Ok(c.tree_id()
            .map_err(git(format!("reading the tree of {commit}")))?
            .detach()
            .into())
    }

    /// Returns a commit's message, as text (lossy for bytes that are not UTF-8).
    pub fn commit_message(&self, commit: &CommitId) -> Result<String, Error> {
        let c = self
            .repo
            .find_commit(commit.oid())
            .map_err(git(format!("reading {commit}")))?;
        let message = c
            .message_raw()
            .map_err(git(format!("reading the message of {commit}")))?;
        Ok(String::from_utf8_lossy(message).into_owned())
    }

    /// Returns a git config value (last one wins), if set.
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|v| v.to_string())
    }

    /// Returns every value of a multi-valued git config key.
    pub fn config_strings(&self, key: &str) -> Vec<String> {
        self.repo
            .config_snapshot()
            .strings(key)
            .unwrap_or_default()
            .into_iter()
            .map(|v| v.to_string())
            .collect()
    }

    /// Returns a git config boolean, if set.
    pub fn config_bool(&self, key: &str) -> Option<bool> {
        self.repo.config_snapshot().boolean(key)
    }

    /// Returns the git directory shared by all worktrees.
    pub fn common_dir(&self) -> &std::path::Path {
        self.repo.common_dir()
    }

    /// Returns the note on `commit` in [`NOTES_REF`], if any.
    pub fn note(&self, commit: &CommitId) -> Result<Option<Vec<u8>>, Error> {
        self.note_in(NOTES_REF, commit)
    }

    /// Returns the note on `commit` in the notes ref `notes_ref` (a remote's, staged), if any.
    pub fn note_in(&self, notes_ref: &str, commit: &CommitId) -> Result<Option<Vec<u8>>, Error> {
        if self.git_refs {
            return match self.git_note(notes_ref, commit) {
                // A partial clone may lack the notes' objects; git's own read fetches them.
                Err(_) if self.promisor_remote().is_some() => self.note_by_git(notes_ref, commit),
                found => found,
            };
        }
        let mut notes = self
            .repo
            .notes()
            .map_err(git("opening notes"))?
            .with_refs([notes_ref])
            .map_err(git("opening notes"))?;
        let found = match notes.get(commit.oid()) {
            Ok(found) => found,
            // gix cannot fetch what a partial clone lacks; git's own read fetches it lazily.
            Err(e) if self.promisor_remote().is_some() => {
                return self.note_by_git(notes_ref, commit).map_err(|_| Error::Git {
                    context: format!("reading the note of {commit}"),
                    source: e,
                });
            }
            Err(e) => return Err(git(format!("reading the note of {commit}"))(e)),
        };
        Ok(found.into_iter().next().map(|n| n.blob.data.clone()))
    }

    /// Reads the note on `commit` through `git notes show`, which fetches what a partial clone
    /// lacks from its promisor remote.
    fn note_by_git(&self, notes_ref: &str, commit: &CommitId) -> Result<Option<Vec<u8>>, Error> {
        let what = format!("git notes show {commit}");
        let out = git_cli::output(
            git_cli::in_repo(self.repo.git_dir(), self.workdir()).args([
                "notes",
                "--ref",
                notes_ref,
                "show",
                commit.as_str(),
            ]),
            &what,
        )?;
        if out.status.success() {
            return Ok(Some(out.stdout));
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("no note found") {
            return Ok(None);
        }
        Err(Error::GitFailed {
            what,
            stderr: stderr.trim().to_owned(),
        })
    }

    /// Sets the note on `commit` in [`NOTES_REF`] (a derived, human-readable mirror).
    pub fn set_note(&self, commit: &CommitId, text: &[u8]) -> Result<(), Error> {
        if self.git_refs {
            return self.git_set_note(NOTES_REF, commit, Some(text));
        }
        self.write_note(commit, Some(text), "hpp: attestation note")
    }

    /// Writes the notes commit that sets (`Some`) or removes (`None`) the note on `commit` and
    /// moves [`NOTES_REF`] to it through the store's one durable path: the note's blob, trees
    /// and commit are flushed before the ref moves by compare-and-swap. (gix's notes platform
    /// moves the ref itself, with nothing flushed.) Removing a note that is not there writes
    /// nothing.
    fn write_note(
        &self,
        commit: &CommitId,
        text: Option<&[u8]>,
        message: &str,
    ) -> Result<(), Error> {
        use gix::note::plumbing::State;
        let what = || format!("writing the note of {commit}");
        let parent = self.tip_oid(NOTES_REF)?;
        let root = match parent {
            Some(parent) => self
                .repo
                .find_commit(parent)
                .map_err(git(what()))?
                .tree_id()
                .map_err(git(what()))?
                .detach(),
            None => ObjectId::empty_tree(self.repo.object_hash()),
        };
        let mut notes = State::new(root, &self.repo).map_err(git(what()))?;
        let edit = match text {
            Some(text) => {
                let blob = self.repo.write_blob(text).map_err(git(what()))?.detach();
                notes.replace(commit.oid(), blob, &self.repo)
            }
            None => notes.remove(commit.oid(), &self.repo),
        }
        .map_err(git(what()))?;
        if text.is_none() && edit.previous.is_none() {
            return Ok(());
        }
        let new = self.new_commit(edit.tree, parent, message)?;
        self.cas(NOTES_REF, parent, new)
    }

    /// Rewrites the note on `commit` in [`NOTES_REF`] from what it holds now: `edit` gets the
    /// current text (if any) and returns the new one. Writers of the same repository take turns
    /// on an advisory lock (`hpp-notes.lock` in the common git directory, released by the
    /// kernel if the process dies), so no two read the same note and the later drops the
    /// earlier's line; a failed write (the notes ref moved or locked by git itself) is retried
    /// by the one retry rule ([`crate::retry::retry`]). A failure that outlasts every attempt is
    /// returned as it was.
    pub fn update_note(
        &self,
        commit: &CommitId,
        mut edit: impl FnMut(Option<&[u8]>) -> Vec<u8>,
    ) -> Result<(), Error> {
        let lock_path = self.repo.common_dir().join("hpp-notes.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|source| Error::Io {
                what: format!("opening {}", lock_path.display()),
                source,
            })?;
        let _turn = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).map_err(
            |(_, errno)| Error::Io {
                what: format!("locking {}", lock_path.display()),
                source: std::io::Error::from(errno),
            },
        )?;
        let mut last = None;
        let done = crate::retry::retry(|_| {
            let text = edit(self.note(commit)?.as_deref());
            match self.set_note(commit, &text) {
                Ok(()) => Ok(crate::retry::Attempt::Done(())),
                Err(e) => {
                    last = Some(e);
                    Ok::<_, Error>(crate::retry::Attempt::Lost)
                }
            }
        })?;
        match (done, last) {
            (Some(()), _) => Ok(()),
            (None, Some(e)) => Err(e),
            (None, None) => Err(Error::Contended {
                name: NOTES_REF.to_owned(),
                attempts: crate::retry::ATTEMPTS,
            }),
        }
    }

    /// Removes the note on `commit` in [`NOTES_REF`], if it has one.
    pub fn remove_note(&self, commit: &CommitId) -> Result<(), Error> {
        if self.git_refs {
            return self.git_set_note(NOTES_REF, commit, None);
        }
        self.write_note(commit, None, "hpp: attestation note removed")
    }

    /// Lists every object that has a note in [`NOTES_REF`] (through `git notes list`, which
    /// reads every fan-out layout git writes), sorted.
    pub fn noted_objects(&self) -> Result<Vec<String>, Error> {
        self.noted_objects_in(NOTES_REF)
    }

    /// As [`Store::noted_objects`], of the notes ref `notes_ref` (a remote's, staged).
    pub fn noted_objects_in(&self, notes_ref: &str) -> Result<Vec<String>, Error> {
        if self.tip(notes_ref)?.is_none() {
            return Ok(Vec::new());
        }
        let out = super::git_cli::stdout(
            super::git_cli::in_repo(self.repo.git_dir(), self.workdir())
                .args(["notes", "--ref", notes_ref, "list"]),
            "git notes list",
        )?;
        let mut objects: Vec<String> = String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|line| line.split_whitespace().nth(1).map(str::to_owned))
            .collect();
        objects.sort();
        Ok(objects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::init(dir.path()).expect("a new repository");
        (dir, store)
    }

    fn create(store: &Store, base: &str) -> Result<String, Error> {
        store.create_first_free(
            base,
            |name| format!("refs/hpp/evidence/{name}"),
            |full| {
                Ok::<_, Error>((
                    vec![(
                        "record.json".to_owned(),
                        Content::Bytes(full.as_bytes().to_vec()),
                    )],
                    "test".to_owned(),
                ))
            },
        )
    }

    #[test]
    fn a_taken_name_moves_the_record_to_the_next_free_one() {
        let (_dir, store) = repo();
        assert_eq!(create(&store, "e-1").unwrap(), "refs/hpp/evidence/e-1");
        assert_eq!(create(&store, "e-1").unwrap(), "refs/hpp/evidence/e-1-2");
        let kept = store
            .read_file("refs/hpp/evidence/e-1-2", "record.json")
            .unwrap();
        assert_eq!(kept.as_deref(), Some(&b"refs/hpp/evidence/e-1-2"[..]));
    }

    #[test]
    fn control_when_every_name_is_taken_the_write_is_refused_not_overwritten() {
        let (_dir, store) = repo();
        for _ in 0..refs::UNIQUE_NAMES {
            create(&store, "e").unwrap();
        }
        let err = create(&store, "e").unwrap_err();
        assert!(matches!(err, Error::Contended { .. }), "{err}");
        assert!(store.tip("refs/hpp/evidence/e-101").unwrap().is_none());
    }
}

/// A blob's bytes, read in pieces ([`Store::tree_blob_reader`]).
#[derive(Debug)]
pub enum BlobReader {
    /// A small blob, held whole.
    Whole(std::io::Cursor<Vec<u8>>),
    /// A big blob, as `git cat-file` writes it.
    Streamed {
        /// The `git cat-file` process, waited for at the end and ended if dropped early.
        child: std::process::Child,
        /// Its output.
        stdout: std::process::ChildStdout,
        /// The bytes still to come.
        left: u64,
        /// What is being read, for an error.
        what: String,
    },
}

impl BlobReader {
    /// The largest blob held whole: 32 MiB, the snapshot's own cap on a file read whole.
    pub const WHOLE: u64 = 32 << 20;
}

impl std::io::Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            BlobReader::Whole(bytes) => bytes.read(buf),
            BlobReader::Streamed {
                child,
                stdout,
                left,
                what,
            } => {
                let n = stdout.read(buf)?;
                if n > 0 {
                    *left = left.saturating_sub(n as u64);
                    return Ok(n);
                }
                // The end: whole only if git wrote every byte and exited 0.
                let status = child.wait()?;
                if *left != 0 || !status.success() {
                    return Err(std::io::Error::other(format!(
                        "{what}: git cat-file ended early ({status})"
                    )));
                }
                Ok(0)
            }
        }
    }
}

impl Drop for BlobReader {
    fn drop(&mut self) {
        if let BlobReader::Streamed { child, .. } = self
            && child.try_wait().ok().flatten().is_none()
        {
            // A reader that stopped early (a secret found in the first piece) ends git too.
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
