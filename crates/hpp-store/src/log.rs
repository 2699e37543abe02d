//! Logs: a chain of record commits reached from one ref, read oldest first, and moved forward
//! only by compare-and-swap against the tip the writer read.

use std::borrow::Cow;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{Chain, CommitId, Error, Link, Log, NewRecord, Store, git, refs, retry};

/// What a long read hands each commit's blob to, in the reading thread: the commit, and the
/// blob (`None`: the tree has no such file), borrowed when it can be.
pub(crate) type Reader<'r, T> = dyn Fn(&CommitId, Option<Cow<'_, [u8]>>) -> T + Sync + 'r;

impl Store {
    /// Reads the log at `name`: the tip and the first-parent chain from the root, with the
    /// blob `file` of each commit's tree.
    pub fn read_chain(&self, name: &str, file: &str) -> Result<Chain, Error> {
        let Some(tip) = self.tip_oid(name)? else {
            return Ok(Chain::default());
        };
        let links = self.walk_links(name, tip, file, None, usize::MAX)?;
        Ok(Chain {
            tip: Some(tip.into()),
            links: links.expect("a walk without a stop reaches the root"),
        })
    }

    /// Reads the part of the log at `name` that `since` does not hold: the commits after it
    /// up to the tip, oldest first, with the blob `file` of each. Returns `None` when the ref
    /// does not exist, or when `since` is not found within `limit` commits of the tip on the
    /// first-parent chain (it was rewritten, or is too far back to be worth it).
    pub fn read_chain_since(
        &self,
        name: &str,
        file: &str,
        since: &CommitId,
        limit: usize,
    ) -> Result<Option<Chain>, Error> {
        let Some(tip) = self.tip_oid(name)? else {
            return Ok(None);
        };
        Ok(self
            .walk_links(name, tip, file, Some(since.oid()), limit)?
            .map(|links| Chain {
                tip: Some(tip.into()),
                links,
            }))
    }

    /// Walks first parents from `tip` until the root or `stop` (not included), reading each
    /// commit's `file`; `None` when `stop` is given and not met within `limit` commits.
    fn walk_links(
        &self,
        name: &str,
        tip: ObjectId,
        file: &str,
        stop: Option<ObjectId>,
        limit: usize,
    ) -> Result<Option<Vec<Link>>, Error> {
        // First the commits, one after the other (each names the next); then each one's file,
        // which does not depend on the others, on every core.
        let mut commits: Vec<(ObjectId, super::shape::Parents, ObjectId)> = Vec::new();
        let mut next = Some(tip);
        let mut met = stop.is_none();
        while let Some(id) = next {
            if Some(id) == stop {
                met = true;
                break;
            }
            if commits.len() >= limit {
                return Ok(None);
            }
            let (parents, tree, _) = self.commit_shape(name, id)?;
            next = parents.first().copied();
            commits.push((id, parents, tree));
        }
        if !met {
            return Ok(None);
        }
        commits.reverse();
        Ok(Some(self.read_links(commits, file)?))
    }

    /// Fetches, in two `git fetch`es rather than one per commit, the trees of `commits` and
    /// their blob `file` that a partial clone lacks.
    pub(crate) fn fetch_log_files(&self, commits: &[(ObjectId, ObjectId)], file: &str) {
        self.fetch_promised(commits.iter().map(|(_, tree)| *tree));
        let blobs: Vec<ObjectId> = commits
            .iter()
            .filter_map(|(_, tree)| {
                let tree = self.repo.find_tree(*tree).ok()?;
                let entry = tree.find_entry(file)?;
                entry.mode().is_blob().then(|| entry.object_id())
            })
            .collect();
        self.fetch_promised(blobs);
    }

    /// A commit of the log `name`: its parents, its tree and its commit time (seconds).
    pub(crate) fn commit_shape(
        &self,
        name: &str,
        id: ObjectId,
    ) -> Result<super::shape::Shape, Error> {
        if let Some(shape) = self.fresh_objects(true).and_then(|o| o.commit(&id)) {
            return Ok(shape);
        }
        if let Some(bytes) = self
            .loose_reader(1)
            .and_then(|loose| loose.read(&id, gix::object::Kind::Commit))
        {
            return super::shape::shape_of_bytes(&bytes, self.repo.object_hash(), name, id);
        }
        let commit = self.repo.find_commit(id).map_err(|_| Error::NotACommit {
            name: name.to_owned(),
            id: Some(id.to_string()),
        })?;
        super::shape::shape_of_bytes(&commit.data, self.repo.object_hash(), name, id)
    }
    /// Makes each commit (id, parents, tree) a link holding the blob `file` of its tree, in
    /// order.
    pub(crate) fn read_links(
        &self,
        commits: Vec<(ObjectId, super::shape::Parents, ObjectId)>,
        file: &str,
    ) -> Result<Vec<Link>, Error> {
        let trees: Vec<(ObjectId, ObjectId)> =
            commits.iter().map(|(id, _, tree)| (*id, *tree)).collect();
        let payloads = self.read_files(&trees, file)?;
        Ok(commits
            .into_iter()
            .zip(payloads)
            .map(|((id, parents, tree), payload)| Link {
                commit: id.into(),
                parents: parents.into_iter().map(Into::into).collect(),
                payload,
                tree: Some(tree.into()),
            })
            .collect())
    }

    /// Reads the blob `file` of each commit's tree (commit, tree), in order; in parallel when
    /// there are many.
    pub(crate) fn read_files(
        &self,
        commits: &[(ObjectId, ObjectId)],
        file: &str,
    ) -> Result<Vec<Option<Vec<u8>>>, Error> {
        self.read_files_with(commits, file, &|_, bytes| bytes.map(Cow::into_owned))
    }

    /// As [`Store::read_files`], handing each commit's blob to `read` in the reading thread
    /// (borrowed where the fetch's decoded objects hold it: a reader that parses it copies
    /// nothing). Past a few hundred commits they are read in contiguous runs, one per thread:
    /// each thread's delta-base cache then sees one stretch of the pack's delta chains.
    pub(crate) fn read_files_with<T: Send>(
        &self,
        commits: &[(ObjectId, ObjectId)],
        file: &str,
        read: &Reader<'_, T>,
    ) -> Result<Vec<T>, Error> {
        let fresh = self.fresh_objects(false);
        let loose = self.loose_reader(commits.len());
        let each = |repo: &gix::Repository, part: &[(ObjectId, ObjectId)]| {
            part.iter()
                .map(|(id, tree)| {
                    Ok(read(
                        &(*id).into(),
                        read_file(repo, fresh, loose, *id, *tree, file)?,
                    ))
                })
                .collect::<Result<Vec<T>, Error>>()
        };
        if self.promisor_remote().is_some() {
            self.fetch_log_files(commits, file);
        }
        const PARALLEL_FROM: usize = 512;
        // As many threads as the decoding of a fetched pack, for the same reason.
        let threads = super::fresh::parallelism();
        if commits.len() < PARALLEL_FROM {
            return each(&self.repo, commits);
        }
        let sync = self.repo.clone().into_sync();
        std::thread::scope(|scope| {
            let handles: Vec<_> = commits
                .chunks(commits.len().div_ceil(threads))
                .map(|part| {
                    let sync = sync.clone();
                    scope.spawn(move || each(&sync.to_thread_local(), part))
                })
                .collect();
            let mut all = Vec::with_capacity(commits.len());
            for handle in handles {
                all.extend(handle.join().expect("a reader does not panic")?);
            }
            Ok(all)
        })
    }

    /// Writes `record` as a commit on top of `expected` and moves `name` to it, but only if
    /// `name` still points at `expected` (`None`: the ref must not exist). On a lost race returns
    /// [`Error::Moved`] with the tip now in place; nothing is overwritten.
    pub fn append(
        &self,
        name: &str,
        expected: Option<&CommitId>,
        record: &NewRecord<'_>,
    ) -> Result<CommitId, Error> {
        self.append_with(name, expected, record, &[])
    }

    /// As [`Store::append`], with more blobs `beside` the record in the commit's tree (a
    /// signature over the record's bytes, say).
    pub fn append_with(
        &self,
        name: &str,
        expected: Option<&CommitId>,
        record: &NewRecord<'_>,
        beside: &[(&str, &[u8])],
    ) -> Result<CommitId, Error> {
        let id = self.write_record(expected.map(CommitId::oid), record, beside)?;
        self.cas(name, expected.map(CommitId::oid), id)?;
        Ok(id.into())
    }

    /// Appends `record` to the log `name` on whatever its tip is, retrying a lost
    /// compare-and-swap race by [`retry::retry`]'s rule. For logs whose entries do not depend on
    /// the entry before them (a retry writes the same record on the new tip).
    pub fn append_retrying(&self, name: &str, record: &NewRecord<'_>) -> Result<CommitId, Error> {
        let written = retry::retry(|_| {
            let tip = self.tip(name)?;
            retry::Attempt::of(self.append(name, tip.as_ref(), record))
        })?;
        written.ok_or_else(|| Error::Contended {
            name: name.to_owned(),
            attempts: retry::ATTEMPTS,
        })
    }

    /// Reads the log at `name` whose every entry commit must hold the blob `file`, as a set
    /// (merges of two machines' writes joined, see `merge`), oldest first.
    pub fn read_log(&self, name: &str, file: &str) -> Result<Log, Error> {
        let chain = self.read_set(name, file)?;
        let entries = chain
            .links
            .into_iter()
            .map(|link| match link.payload {
                Some(bytes) => Ok((link.commit, bytes)),
                None => Err(Error::MissingFile {
                    name: name.to_owned(),
                    commit: link.commit,
                    file: file.to_owned(),
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok(Log {
            tip: chain.tip,
            entries,
        })
    }

    /// Writes a whole chain of records and creates `name` pointing at its last commit, only if
    /// `name` does not exist yet. Either every record lands or none does.
    pub fn create_chain(&self, name: &str, records: &[NewRecord<'_>]) -> Result<CommitId, Error> {
        if records.len() >= super::pack::PACK_FROM {
            // Many records: one pack and one flush instead of three loose files each.
            let packed = self.write_chain_pack(records)?;
            let tip = packed.tip;
            let moved = self.cas(name, None, tip);
            packed.release();
            moved?;
            return Ok(tip.into());
        }
        let mut parent = None;
        for record in records {
            parent = Some(self.write_record(parent, record, &[])?);
        }
        let tip = parent.ok_or_else(|| Error::NothingToWrite {
            name: name.to_owned(),
        })?;
        self.cas(name, None, tip)?;
        Ok(tip.into())
    }

    /// Tells whether any ref exists under `prefix`, reading no more than the first.
    pub fn has_refs(&self, prefix: &str) -> Result<bool, Error> {
        if self.pending.keys().any(|name| name.starts_with(prefix)) {
            return Ok(true);
        }
        if self.git_refs {
            return Ok(!self.git_list(prefix)?.is_empty());
        }
        let platform = self.repo.references().map_err(git("listing refs"))?;
        let mut iter = platform
            .prefixed(prefix.as_bytes().as_bstr())
            .map_err(git(format!("listing {prefix}")))?;
        Ok(iter.next().is_some())
    }

    /// Lists the refs under `prefix` with their tips, sorted by name.
    pub fn list(&self, prefix: &str) -> Result<Vec<(String, CommitId)>, Error> {
        let mut out = Vec::new();
        if self.git_refs {
            for listed in self.git_list(prefix)? {
                if !self.pending.contains_key(&listed.name) {
                    out.push((listed.name, listed.id.into()));
                }
            }
        } else {
            self.list_files(prefix, &mut out)?;
        }
        for (name, id) in self.pending.range(prefix.to_owned()..) {
            if !name.starts_with(prefix) {
                break;
            }
            if let Some(id) = id {
                out.push((name.clone(), (*id).into()));
            }
        }
        out.sort();
        Ok(out)
    }

    /// The names of the refs under `prefix` (a directory: it ends in `/`), without reading
    /// them: loose refs by their files' names (one directory read per directory, where
    /// [`Store::list`] opens every file), packed ones from packed-refs. For a question about
    /// names only, such as which records the remote lacks, asked over 10,000 staged refs.
    pub fn list_names(&self, prefix: &str) -> Result<std::collections::BTreeSet<String>, Error> {
        debug_assert!(prefix.ends_with('/'), "{prefix} names a directory");
        if self.git_refs {
            return Ok(self.list(prefix)?.into_iter().map(|(n, _)| n).collect());
        }
        // Gathered, then sorted once: 10,000 inserts into a tree of strings cost more than the
        // directory read.
        let mut names: Vec<String> = Vec::new();
        let packed = self
            .repo
            .refs
            .cached_packed_buffer()
            .map_err(|e| git(format!("listing {prefix}"))(e))?;
        if let Some(packed) = packed {
            let iter = packed
                .iter_prefixed(prefix.into())
                .map_err(|e| git(format!("listing {prefix}"))(e))?;
            for reference in iter {
                let reference = reference.map_err(|e| git(format!("listing {prefix}"))(e))?;
                names.push(reference.name.as_bstr().to_string());
            }
        }
        let io = |source| Error::Io {
            what: format!("listing {prefix}"),
            source,
        };
        // Refs outside refs/worktree/ and the like are shared: they live in the common dir.
        let root = self.repo.common_dir();
        // Each directory with the ref name it stands for (`refs/hpp/checkpoints/`), and whether
        // every component below the prefix is plain.
        let mut dirs = vec![(root.join(prefix), prefix.to_owned(), true)];
        while let Some((dir, under, plain)) = dirs.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(e)),
            };
            for entry in entries {
                let entry = entry.map_err(io)?;
                let file = entry.file_name();
                let Some(file) = file.to_str() else {
                    continue;
                };
                if entry.file_type().map_err(io)?.is_dir() {
                    let plain = plain && plain_component(file);
                    dirs.push((entry.path(), format!("{under}{file}/"), plain));
                    continue;
                }
                // A lock or any other file that is not a ref name is not a ref.
                if (plain && plain_component(file))
                    || gix::validate::reference::name(format!("{under}{file}").as_bytes().as_bstr())
                        .is_ok()
                {
                    names.push(format!("{under}{file}"));
                }
            }
        }
        let mut names: std::collections::BTreeSet<String> = names.into_iter().collect();
        for (name, id) in self.pending.range(prefix.to_owned()..) {
            if !name.starts_with(prefix) {
                break;
            }
            match id {
                Some(_) => names.insert(name.clone()),
                None => names.remove(name),
            };
        }
        Ok(names)
    }

    fn list_files(&self, prefix: &str, out: &mut Vec<(String, CommitId)>) -> Result<(), Error> {
        let platform = self.repo.references().map_err(git("listing refs"))?;
        let iter = platform
            .prefixed(prefix.as_bytes().as_bstr())
            .map_err(git(format!("listing {prefix}")))?;
        for reference in iter {
            let reference = reference.map_err(|e| Error::Git {
                context: format!("listing {prefix}"),
                source: e,
            })?;
            let name = reference.name().as_bstr().to_string();
            if self.pending.contains_key(&name) {
                continue;
            }
            if let Some(id) = reference.target().try_id() {
                out.push((name, id.to_owned().into()));
            }
        }
        Ok(())
    }

    /// Returns the commit `name` points at, or `None` if the ref does not exist.
    pub fn tip(&self, name: &str) -> Result<Option<CommitId>, Error> {
        Ok(self.tip_oid(name)?.map(CommitId::from))
    }

    pub(crate) fn tip_oid(&self, name: &str) -> Result<Option<ObjectId>, Error> {
        if let Some(pending) = self.pending.get(name) {
            return Ok(*pending);
        }
        if self.git_refs {
            return self.git_tip(name);
        }
        if let Some(found) = self.exact_tip(name)? {
            return Ok(found);
        }
        let reference = self
            .repo
            .try_find_reference(name)
            .map_err(git(format!("reading {name}")))?;
        match reference {
            None => Ok(None),
            Some(r) => r
                .target()
                .try_id()
                .map(|id| Some(id.to_owned()))
                .ok_or_else(|| Error::Symbolic {
                    name: name.to_owned(),
                }),
        }
    }
}

impl Store {
    /// Looks `name` up as the full name it is: its loose file in the common directory, then
    /// packed-refs, one look each. gix's lookup reads every name as git's rev-parse reads a
    /// partial one (`refs/tags/<name>`, `refs/heads/<name>`, `refs/remotes/<name>/HEAD`, ...),
    /// four failed opens per missing ref: a fetch of 10,000 new records asks twice each.
    /// `None` when the name is not one this lookup answers (outside `refs/hpp/`, a namespace,
    /// a name that is not plain ASCII): the caller asks gix.
    fn exact_tip(&self, name: &str) -> Result<Option<Option<ObjectId>>, Error> {
        if !name.starts_with(refs::PREFIX)
            || !name.is_ascii()
            || self.repo.namespace().is_some()
            || gix::validate::reference::name(name.as_bytes().as_bstr()).is_err()
        {
            return Ok(None);
        }
        let full: gix::refs::FullName = match name.try_into() {
            Ok(full) => full,
            Err(_) => return Ok(None),
        };
        let read = |e: std::io::Error| Error::Io {
            what: format!("reading {name}"),
            source: e,
        };
        match std::fs::read(self.repo.common_dir().join(name)) {
            Ok(bytes) => {
                let loose = gix::refs::file::loose::Reference::try_from_path(
                    full,
                    &bytes,
                    self.repo.object_hash(),
                )
                .map_err(|e| git(format!("reading {name}"))(e))?;
                return match loose.target {
                    gix::refs::Target::Object(id) => Ok(Some(Some(id))),
                    gix::refs::Target::Symbolic(_) => Err(Error::Symbolic {
                        name: name.to_owned(),
                    }),
                };
            }
            // No file, a directory of deeper refs, or a parent that is a file: not loose.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound
                        | std::io::ErrorKind::IsADirectory
                        | std::io::ErrorKind::NotADirectory
                ) => {}
            Err(e) => return Err(read(e)),
        }
        let packed = self
            .repo
            .refs
            .cached_packed_buffer()
            .map_err(|e| git(format!("reading {name}"))(e))?;
        let Some(packed) = packed else {
            return Ok(Some(None));
        };
        let found = packed
            .try_find(full.as_ref())
            .map_err(|e| git(format!("reading {name}"))(e))?;
        // A packed ref's target is an object id (the parser validated it).
        Ok(Some(found.map(|r| r.target())))
    }
}

/// Whether `file` is a ref-name component git always accepts (letters, digits, `-`, `_`, and
/// dots that neither lead, double, nor end it as `.lock`), so a listing need not ask gix: the
/// names every record is written under.
fn plain_component(file: &str) -> bool {
    !file.is_empty()
        && !file.starts_with('.')
        && !file.ends_with('.')
        && !file.ends_with(".lock")
        && !file.contains("..")
        && file
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The blob `file` of the tree `tree` of commit `id` (`None`: no such blob).
/// What a fetch wrote (`fresh`, when decoded) is read from memory, loose objects through the
/// plain reader (`loose`, when started).
pub(crate) fn read_file<'a>(
    repo: &gix::Repository,
    fresh: Option<&'a super::fresh::Objects>,
    loose: Option<&super::loose::Reader>,
    id: ObjectId,
    tree: ObjectId,
    file: &str,
) -> Result<Option<Cow<'a, [u8]>>, Error> {
    use gix::object::Kind;
    let held = |id: &ObjectId, kind: Kind| match fresh.and_then(|objects| objects.get(id, kind)) {
        Some(bytes) => Some(Cow::Borrowed(bytes)),
        None => loose
            .and_then(|reader| reader.read(id, kind))
            .map(Cow::Owned),
    };
    if let Some(bytes) = held(&tree, Kind::Tree) {
        let entry = gix::objs::TreeRefIter::from_bytes(&bytes, repo.object_hash())
            .filter_map(Result::ok)
            .find(|e| e.filename == file.as_bytes());
        return match entry {
            Some(entry) if entry.mode.is_blob() => match held(&entry.oid.to_owned(), Kind::Blob) {
                Some(blob) => Ok(Some(blob)),
                None => {
                    let mut blob = repo
                        .find_blob(entry.oid)
                        .map_err(|e| git(format!("reading {file} of {id}"))(e))?;
                    Ok(Some(Cow::Owned(std::mem::take(&mut blob.data))))
                }
            },
            _ => Ok(None),
        };
    }
    // The context is formatted on failure only: this runs once per entry of a long log.
    let tree = repo
        .find_tree(tree)
        .map_err(|e| git(format!("reading the tree of {id}"))(e))?;
    match tree.find_entry(file) {
        Some(entry) if entry.mode().is_blob() => {
            let mut blob = repo
                .find_blob(entry.object_id())
                .map_err(|e| git(format!("reading {file} of {id}"))(e))?;
            Ok(Some(Cow::Owned(std::mem::take(&mut blob.data))))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        (dir, store)
    }

    fn record(bytes: &[u8]) -> NewRecord<'_> {
        NewRecord {
            file: "event.json",
            bytes,
            message: "test",
        }
    }

    #[test]
    fn append_then_read_returns_the_chain_oldest_first() {
        let (_dir, store) = repo();
        let a = store
            .append("refs/hpp/loops/t", None, &record(b"1"))
            .unwrap();
        let b = store
            .append("refs/hpp/loops/t", Some(&a), &record(b"2"))
            .unwrap();
        let chain = store.read_chain("refs/hpp/loops/t", "event.json").unwrap();
        assert_eq!(chain.tip.as_ref(), Some(&b));
        let payloads: Vec<_> = chain
            .links
            .iter()
            .map(|l| l.payload.clone().unwrap())
            .collect();
        assert_eq!(payloads, [b"1".to_vec(), b"2".to_vec()]);
        assert_eq!(chain.links[1].parents, [a]);
    }

    #[test]
    fn control_append_against_a_stale_tip_is_refused_and_the_winner_stays() {
        let (_dir, store) = repo();
        let a = store
            .append("refs/hpp/loops/t", None, &record(b"1"))
            .unwrap();
        let lost = store
            .append("refs/hpp/loops/t", None, &record(b"1"))
            .unwrap_err();
        assert!(
            matches!(&lost, Error::Moved { actual: Some(actual), .. } if *actual == a),
            "{lost}"
        );
        let b = store
            .append("refs/hpp/loops/t", Some(&a), &record(b"2"))
            .unwrap();
        let stale = store
            .append("refs/hpp/loops/t", Some(&a), &record(b"3"))
            .unwrap_err();
        assert!(
            matches!(&stale, Error::Moved { actual: Some(actual), .. } if *actual == b),
            "{stale}"
        );
        assert_eq!(store.tip("refs/hpp/loops/t").unwrap(), Some(b));
    }

    #[test]
    fn the_ref_moves_only_after_everything_it_reaches_that_is_new_is_flushed() {
        let (_dir, store) = repo();
        let first = store.write_record(None, &record(b"one"), &[]).unwrap();
        let second = store
            .write_record(Some(first), &record(b"two"), &[])
            .unwrap();
        // Two commits, two trees, two blobs: the new parent is reached too.
        assert_eq!(store.sync_closure(second).unwrap(), 6);
    }

    #[test]
    fn an_object_is_flushed_once_per_store_however_many_refs_name_it() {
        let (_dir, store) = repo();
        let first = store.write_record(None, &record(b"one"), &[]).unwrap();
        assert_eq!(store.sync_closure(first).unwrap(), 3);
        // A second ref naming the same tip flushes nothing; a record on top flushes its own
        // three objects and stops at the parent already made durable.
        assert_eq!(store.sync_closure(first).unwrap(), 0);
        let second = store
            .write_record(Some(first), &record(b"two"), &[])
            .unwrap();
        assert_eq!(store.sync_closure(second).unwrap(), 3);
        // A view of the store (a fetch's staging handle) shares what was flushed.
        assert_eq!(store.view().sync_closure(second).unwrap(), 0);
    }

    #[test]
    fn the_walk_stops_at_the_value_the_ref_names_now() {
        let (_dir, store) = repo();
        let first = store.write_record(None, &record(b"one"), &[]).unwrap();
        let second = store
            .write_record(Some(first), &record(b"two"), &[])
            .unwrap();
        // A ref moving from `first` to `second`: `first` was made durable before a ref named
        // it, so only the new record's three objects are flushed (six without that knowledge,
        // as the test above shows).
        assert_eq!(store.sync_closure_beyond(second, Some(first)).unwrap(), 3);
    }

    /// A commit of `files` (path, content) on `parent`.
    fn commit_of(store: &Store, files: &[(&str, &str)], parent: Option<ObjectId>) -> ObjectId {
        let tree = crate::trees::tests::tree_of(store, files);
        store.new_commit(tree.oid(), parent, "test").unwrap()
    }

    #[test]
    fn what_a_commit_shares_with_a_parent_not_yet_flushed_is_flushed_through_the_parent() {
        let (_dir, store) = repo();
        // Neither commit is durable yet. The child's tree is read beside its parent's, so the
        // directory both share (`d2`) is skipped there and must be reached through the parent.
        let parent = commit_of(&store, &[("d1/a", "1"), ("d2/b", "2")], None);
        let child = commit_of(&store, &[("d1/a", "changed"), ("d2/b", "2")], Some(parent));
        // child: commit, tree, d1, blob; parent: commit, tree, d1, d2, two blobs.
        assert_eq!(store.sync_closure(child).unwrap(), 10);
    }

    #[test]
    fn control_a_commit_on_a_durable_parent_flushes_only_what_it_changed() {
        let (_dir, store) = repo();
        let parent = commit_of(&store, &[("d1/a", "1"), ("d2/b", "2")], None);
        assert_eq!(store.sync_closure(parent).unwrap(), 6);
        let child = commit_of(&store, &[("d1/a", "changed"), ("d2/b", "2")], Some(parent));
        assert_eq!(store.sync_closure(child).unwrap(), 4);
    }

    #[test]
    fn control_an_object_flushed_alone_still_has_its_closure_flushed() {
        let (_dir, store) = repo();
        let id = store.write_record(None, &record(b"alone"), &[]).unwrap();
        // The commit file alone was flushed (as a hop state is, when written): its tree and
        // blob are not durable yet, so the walk must not stop at it.
        assert_eq!(store.sync_objects(&[id]).unwrap(), 1);
        assert_eq!(store.sync_closure(id).unwrap(), 2);
    }

    #[test]
    fn a_large_batch_is_flushed_in_one_go() {
        let (_dir, store) = repo();
        let mut parent = None;
        for i in 0..40 {
            parent = Some(
                store
                    .write_record(parent, &record(format!("{i}").as_bytes()), &[])
                    .unwrap(),
            );
        }
        // Forty commits, forty trees, forty blobs: past the batch size, one syncfs.
        assert_eq!(store.sync_closure(parent.unwrap()).unwrap(), 120);
    }

    #[test]
    fn control_objects_older_than_the_store_are_not_flushed_again() {
        let (_dir, mut store) = repo();
        let id = store.write_record(None, &record(b"old"), &[]).unwrap();
        store.opened = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
        assert_eq!(store.sync_closure(id).unwrap(), 0);
    }

    #[test]
    fn a_commit_time_carries_the_offset_gix_would_give_it() {
        let ours = crate::write::now_local();
        let theirs = gix::date::Time::now_local_or_utc();
        assert_eq!(ours.offset, theirs.offset);
        assert!((ours.seconds - theirs.seconds).abs() <= 2);
    }

    #[test]
    fn control_another_zone_gives_another_offset() {
        // The comparison above can tell offsets apart: a zone that is not this machine's
        // (India's, +05:30, which no CI machine's clock is set to) disagrees with gix.
        let zone =
            jiff::tz::TimeZone::fixed(jiff::tz::offset(5) + jiff::SignedDuration::from_mins(30));
        let offset = zone.to_offset(jiff::Timestamp::now()).seconds();
        assert_eq!(offset, 5 * 3600 + 1800);
        assert_ne!(offset, gix::date::Time::now_local_or_utc().offset);
    }

    #[test]
    fn identical_payloads_make_distinct_commits() {
        let (_dir, store) = repo();
        let one = store.write_record(None, &record(b"same"), &[]).unwrap();
        let two = store.write_record(None, &record(b"same"), &[]).unwrap();
        assert_ne!(one, two);
    }

    #[test]
    fn new_objects_are_flushed_before_the_ref_moves() {
        let (_dir, store) = repo();
        let id = store.write_record(None, &record(b"flush me"), &[]).unwrap();
        assert_eq!(
            store.sync_closure(id).unwrap(),
            3,
            "blob, tree and commit are loose files"
        );
    }

    #[test]
    fn control_a_loop_name_that_clashes_with_an_existing_one_is_reported_as_a_clash() {
        let (_dir, store) = repo();
        store
            .append("refs/hpp/loops/a", None, &record(b"1"))
            .unwrap();
        let err = store
            .append("refs/hpp/loops/a/b", None, &record(b"1"))
            .unwrap_err();
        assert!(matches!(err, Error::Clash { .. }), "{err}");
    }

    #[test]
    fn names_under_a_prefix_are_the_listed_refs_loose_and_packed() {
        let (dir, store) = repo();
        let a = store
            .append("refs/hpp/checkpoints/s/turn/1", None, &record(b"a"))
            .unwrap();
        store
            .create_ref("refs/hpp/checkpoints/s/turn/2", &a)
            .unwrap();
        let packed = std::process::Command::new("git")
            .args(["pack-refs", "--all"])
            .current_dir(dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap();
        assert!(packed.success());
        store
            .create_ref("refs/hpp/checkpoints/t/turn/1", &a)
            .unwrap();
        store.create_ref("refs/hpp/evidence/e", &a).unwrap();
        let prefix = "refs/hpp/checkpoints/";
        let names = store.list_names(prefix).unwrap();
        let listed: std::collections::BTreeSet<String> = store
            .list(prefix)
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, listed);
        assert_eq!(names.len(), 3, "{names:?}");
        let mut view = store.view();
        view.stage("refs/hpp/checkpoints/s/turn/1", None);
        view.stage("refs/hpp/checkpoints/u/turn/1", Some(&a));
        let names = view.list_names(prefix).unwrap();
        let listed: std::collections::BTreeSet<String> = view
            .list(prefix)
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            names, listed,
            "a view's staged moves count as its list's do"
        );
    }

    #[test]
    fn control_a_lock_file_among_the_refs_is_not_a_name() {
        let (dir, store) = repo();
        let a = store
            .append("refs/hpp/checkpoints/s/turn/1", None, &record(b"a"))
            .unwrap();
        let lock = dir.path().join(".git/refs/hpp/checkpoints/s/turn/2.lock");
        std::fs::write(&lock, format!("{a}\n")).unwrap();
        let names = store.list_names("refs/hpp/checkpoints/").unwrap();
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            ["refs/hpp/checkpoints/s/turn/1"]
        );
        assert!(store.list_names("refs/hpp/none/").unwrap().is_empty());
    }

    #[test]
    fn control_files_whose_names_git_refuses_are_not_names_and_odd_ones_it_takes_are() {
        let (dir, store) = repo();
        let a = store
            .append("refs/hpp/checkpoints/s/1", None, &record(b"a"))
            .unwrap();
        let root = dir.path().join(".git/refs/hpp/checkpoints");
        for bad in [
            "s/.hidden",
            "s/end.",
            "s/two..dots",
            "odd..dir/1",
            "s/x.lock",
        ] {
            let path = root.join(bad);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, format!("{a}\n")).unwrap();
        }
        // Not plain, yet a ref name git takes: asked of gix, and kept.
        std::fs::write(root.join("s/plus+sign"), format!("{a}\n")).unwrap();
        let names = store.list_names("refs/hpp/checkpoints/").unwrap();
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            [
                "refs/hpp/checkpoints/s/1",
                "refs/hpp/checkpoints/s/plus+sign"
            ]
        );
    }

    /// `git commit-tree` in `dir` with the given dates, parents and tree; the new commit.
    fn commit_tree(
        dir: &std::path::Path,
        tree: &str,
        parents: &[&str],
        author: &str,
        committer: &str,
    ) -> ObjectId {
        let mut cmd = std::process::Command::new("git");
        cmd.arg("commit-tree").arg(tree).current_dir(dir);
        for parent in parents {
            cmd.args(["-p", parent]);
        }
        let out = cmd
            .args(["-m", "shape"])
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "a")
            .env("GIT_AUTHOR_EMAIL", "a@example.invalid")
            .env("GIT_COMMITTER_NAME", "c")
            .env("GIT_COMMITTER_EMAIL", "c@example.invalid")
            .env("GIT_AUTHOR_DATE", author)
            .env("GIT_COMMITTER_DATE", committer)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ObjectId::from_hex(String::from_utf8(out.stdout).unwrap().trim().as_bytes()).unwrap()
    }

    #[test]
    fn a_commits_shape_is_its_tree_its_parents_in_order_and_its_committer_time() {
        let (dir, store) = repo();
        let one = store.append("refs/hpp/a", None, &record(b"1")).unwrap();
        let two = store.append("refs/hpp/b", None, &record(b"2")).unwrap();
        let tree = store.commit_tree(&one).unwrap();
        let merged = commit_tree(
            dir.path(),
            tree.as_str(),
            &[two.as_str(), one.as_str()],
            "@1000000000 +0000",
            "@1700000000 +0200",
        );
        let (parents, got_tree, time) = store.commit_shape("refs/hpp/a", merged).unwrap();
        assert_eq!(parents.as_slice(), [two.oid(), one.oid()]);
        assert_eq!(got_tree.to_string(), tree.as_str());
        assert_eq!(
            time, 1_700_000_000,
            "the committer's time, not the author's"
        );
    }

    /// A chain of `n` records written one at a time (all loose, as appends leave them).
    fn loose_chain(store: &Store, name: &str, n: usize) -> Vec<Vec<u8>> {
        crate::loose::tests::fill_sample(store);
        let payloads: Vec<Vec<u8>> = (0..n)
            .map(|i| format!("{{\"seq\":{i}}}").into_bytes())
            .collect();
        let mut parent = None;
        for bytes in &payloads {
            parent = Some(store.write_record(parent, &record(bytes), &[]).unwrap());
        }
        store.cas(name, None, parent.unwrap()).unwrap();
        payloads
    }

    #[test]
    fn a_long_loose_chain_reads_through_the_plain_reader_as_through_gix() {
        let (_dir, store) = repo();
        let n = super::super::loose::AFTER + 100;
        let payloads = loose_chain(&store, "refs/hpp/loops/long", n);
        assert!(
            store.pack_indices().is_empty(),
            "every object should be loose"
        );
        let chain = store
            .read_chain("refs/hpp/loops/long", "event.json")
            .unwrap();
        assert!(
            store.loose_reader(0).is_some(),
            "the walk should have started the reader"
        );
        let read: Vec<Vec<u8>> = chain
            .links
            .into_iter()
            .map(|l| l.payload.unwrap())
            .collect();
        assert_eq!(read, payloads);
    }

    #[test]
    fn control_a_damaged_loose_object_in_a_long_chain_is_an_error_not_a_missing_record() {
        let (dir, store) = repo();
        let n = super::super::loose::AFTER + 100;
        loose_chain(&store, "refs/hpp/loops/long", n);
        // The event blob of the last record, cut short on disk.
        let out = std::process::Command::new("git")
            .current_dir(dir.path())
            .args(["rev-parse", "refs/hpp/loops/long:event.json"])
            .output()
            .unwrap();
        let hex = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let path = dir
            .path()
            .join(".git/objects")
            .join(&hex[..2])
            .join(&hex[2..]);
        let raw = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &raw[..raw.len() / 2]).unwrap();
        let read = store.read_chain("refs/hpp/loops/long", "event.json");
        assert!(
            read.is_err(),
            "a cut object must not read as a record: {read:?}"
        );
    }

    #[test]
    fn control_a_commits_shape_is_refused_for_what_is_not_a_commit() {
        let (_dir, store) = repo();
        let one = store.append("refs/hpp/a", None, &record(b"1")).unwrap();
        let tree = store.commit_tree(&one).unwrap();
        let tree = ObjectId::from_hex(tree.as_str().as_bytes()).unwrap();
        assert!(matches!(
            store.commit_shape("refs/hpp/a", tree),
            Err(Error::NotACommit { .. })
        ));
    }
}
