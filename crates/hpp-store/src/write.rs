//! The one write path: objects written, flushed to disk with their directories, then the ref
//! moved by compare-and-swap. gix does not fsync; this does, so a crash can lose the last write
//! but never leave a ref naming an object that did not reach the disk.

use std::sync::atomic::Ordering;

use gix::ObjectId;
use gix::objs::tree::EntryKind;
use gix::refs::Target;
use gix::refs::file::transaction::prepare::{MustNotExist, ReferenceOutOfDate};
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use super::{
    CommitId, Error, FALLBACK_EMAIL, FALLBACK_NAME, LOOSE_LIMIT, NewRecord, RefMove, Store, WRITES,
    git,
};

/// How many new objects are flushed one by one before one syncfs(2) is cheaper (Linux).
#[cfg(target_os = "linux")]
const SYNCFS_BATCH: usize = 64;

/// What a store already made durable in this process.
#[derive(Default)]
pub(crate) struct Synced {
    /// Loose object files flushed (with their directories).
    files: std::collections::HashSet<ObjectId>,
    /// Objects whose whole closure of new objects was flushed: a walk stops at them.
    closures: std::collections::HashSet<ObjectId>,
}

/// Now, with the local time zone's offset, as a commit records it.
///
/// gix's `Time::now_local_or_utc` asks jiff for the system zone, and naming it lists the whole
/// zoneinfo directory (23 directories, about a millisecond, once per commit). A commit needs
/// only the offset, which `/etc/localtime` alone gives: that zone is read once per process.
/// With `TZ` set, or no readable `/etc/localtime`, gix's way.
pub(crate) fn now_local() -> gix::date::Time {
    static LOCAL: std::sync::OnceLock<Option<jiff::tz::TimeZone>> = std::sync::OnceLock::new();
    let zone = LOCAL.get_or_init(|| {
        if std::env::var_os("TZ").is_some() {
            return None;
        }
        let tzif = std::fs::read("/etc/localtime").ok()?;
        jiff::tz::TimeZone::tzif("localtime", &tzif).ok()
    });
    match zone {
        Some(zone) => {
            let now = jiff::Timestamp::now();
            gix::date::Time {
                seconds: now.as_second(),
                offset: zone.to_offset(now).seconds(),
            }
        }
        None => gix::date::Time::now_local_or_utc(),
    }
}

impl Store {
    /// Who writes the store's commits, as git resolves a committer (`GIT_COMMITTER_NAME` and
    /// `_EMAIL`, then `committer.name` and `.email`, then `user.name` and `.email`, then `EMAIL`
    /// for the address), name and address each on its own, and the store's fallback for what
    /// is still missing; stamped now. Resolved here rather than by gix's `committer()`, which
    /// also computes the default commit times and so loads jiff's whole time zone database,
    /// about a millisecond of every writing command.
    pub(crate) fn signature(&self) -> gix::actor::Signature {
        let config = self.repo.config_snapshot();
        let env = |key: &str| std::env::var(key).ok().filter(|v| !v.trim().is_empty());
        let setting = |key: &str| {
            config
                .string(key)
                .map(|v| v.to_string())
                .filter(|v| !v.trim().is_empty())
        };
        let name = env("GIT_COMMITTER_NAME")
            .or_else(|| setting("committer.name"))
            .or_else(|| setting("user.name"))
            .unwrap_or_else(|| FALLBACK_NAME.to_owned());
        let email = env("GIT_COMMITTER_EMAIL")
            .or_else(|| setting("committer.email"))
            .or_else(|| setting("user.email"))
            .or_else(|| env("EMAIL"))
            .unwrap_or_else(|| FALLBACK_EMAIL.to_owned());
        gix::actor::Signature {
            name: name.into(),
            email: email.into(),
            time: now_local(),
        }
    }

    pub(crate) fn write_record(
        &self,
        parent: Option<ObjectId>,
        record: &NewRecord<'_>,
        beside: &[(&str, &[u8])],
    ) -> Result<ObjectId, Error> {
        let mut editor = self
            .repo
            .edit_tree(ObjectId::empty_tree(self.repo.object_hash()))
            .map_err(git("editing a tree"))?;
        for (file, bytes) in
            std::iter::once((record.file, record.bytes)).chain(beside.iter().copied())
        {
            let blob = self
                .repo
                .write_blob(bytes)
                .map_err(git("writing a record blob"))?
                .detach();
            editor
                .upsert(file, EntryKind::Blob, blob)
                .map_err(git("editing a tree"))?;
        }
        let tree = editor
            .write()
            .map_err(git("writing a record tree"))?
            .detach();
        let id = self.new_commit(tree, parent, record.message)?;
        Ok(id)
    }

    /// Writes a commit of `tree` on `parent` with the store's identity and a writer trailer.
    pub(crate) fn new_commit(
        &self,
        tree: ObjectId,
        parent: Option<ObjectId>,
        message: &str,
    ) -> Result<ObjectId, Error> {
        let commit = self.commit_object(tree, parent, message);
        Ok(self
            .repo
            .write_object(&commit)
            .map_err(git("writing a record commit"))?
            .detach())
    }

    /// The commit [`Store::new_commit`] writes: the store's identity, and a writer trailer that
    /// makes every commit unique (two writers recording identical payloads on the same parent
    /// in the same second would otherwise make one commit and both "win").
    pub(crate) fn commit_object(
        &self,
        tree: ObjectId,
        parent: Option<ObjectId>,
        message: &str,
    ) -> gix::objs::Commit {
        let writer = format!(
            "{}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
            WRITES.fetch_add(1, Ordering::Relaxed)
        );
        let sig = self.signature();
        gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: format!("{}\n\nHpp-Writer: {writer}\n", message.trim_end()).into(),
            extra_headers: Vec::new(),
        }
    }

    /// Flushes the loose object files of `ids` (those that exist loose) and their directories.
    pub(crate) fn sync_objects(&self, ids: &[ObjectId]) -> Result<usize, Error> {
        let ids: Vec<ObjectId> = {
            let synced = self.synced.lock().unwrap_or_else(|e| e.into_inner());
            ids.iter()
                .filter(|id| !synced.files.contains(*id))
                .copied()
                .collect()
        };
        let synced = self.flush_loose(&ids)?;
        self.synced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .files
            .extend(ids);
        Ok(synced)
    }

    /// [`Store::sync_objects`] without the memory of what was flushed before.
    fn flush_loose(&self, ids: &[ObjectId]) -> Result<usize, Error> {
        let objects = self.repo.objects.store_ref().path().to_owned();
        // Past a batch size, one syncfs(2) of the filesystem holding the objects costs less than
        // an fsync per object (an imported loop writes three objects per event).
        #[cfg(target_os = "linux")]
        if ids.len() > SYNCFS_BATCH
            && let Ok(dir) = std::fs::File::open(&objects)
            && nix::unistd::syncfs(&dir).is_ok()
        {
            return Ok(ids.len());
        }
        let mut dirs = std::collections::BTreeSet::new();
        let mut synced = 0;
        for id in ids {
            let hex = id.to_hex().to_string();
            let dir = objects.join(&hex[..2]);
            let path = dir.join(&hex[2..]);
            if let Ok(file) = std::fs::File::open(&path) {
                file.sync_all().map_err(|source| Error::Flush {
                    id: hex.clone(),
                    source,
                })?;
                dirs.insert(dir);
                synced += 1;
            }
        }
        for dir in dirs {
            // Directory fsync makes the new entries durable; not every platform allows opening a
            // directory, and there it is skipped.
            if let Ok(handle) = std::fs::File::open(&dir) {
                let _ = handle.sync_all();
            }
        }
        Ok(synced)
    }

    /// [`Store::sync_closure_beyond`] with no value known to be durable: a new ref.
    #[cfg(test)]
    pub(crate) fn sync_closure(&self, tip: ObjectId) -> Result<usize, Error> {
        self.sync_closure_beyond(tip, None)
    }

    /// Makes what a new ref tip names durable before the ref moves: every loose object written
    /// since this store opened that `tip` reaches (a record's commit and its new parents, its
    /// tree, a snapshot tree and the blobs written for it, nested artifact trees) is fsynced,
    /// then the object directories holding them. The walk stops at objects older than the
    /// store and at packed ones: they were durable already, and so is what they reach. It
    /// stops at `durable` too, the value the ref names now: what a ref names was made durable
    /// before that ref moved. Returns how many it synced.
    ///
    /// The walk reads each new tree beside the tree at the same path in its commit's first
    /// parent: an entry both share is reached through the parent (durable, or walked in its
    /// turn), so only what the commit changed is looked at. A landing on a tree of 50,000
    /// files looks at the few entries on the changed path, not at every directory of the root.
    pub(crate) fn sync_closure_beyond(
        &self,
        tip: ObjectId,
        durable: Option<ObjectId>,
    ) -> Result<usize, Error> {
        let objects = self.repo.objects.store_ref().path().to_owned();
        let ours = |id: &ObjectId| -> Option<std::path::PathBuf> {
            let hex = id.to_hex().to_string();
            let path = objects.join(&hex[..2]).join(&hex[2..]);
            let written = std::fs::metadata(&path).ok()?.modified().ok()?;
            (written >= self.opened).then_some(path)
        };
        let closed = |id: &ObjectId| {
            self.synced
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .closures
                .contains(id)
        };
        let tree_of = |commit: ObjectId| -> Option<ObjectId> {
            let commit = self.repo.find_commit(commit).ok()?;
            commit.tree_id().ok().map(|id| id.detach())
        };
        let mut fresh = Vec::new();
        // Each object to look at, with the tree at the same path in a parent commit, if any.
        let mut stack: Vec<(ObjectId, Option<ObjectId>)> = vec![(tip, None)];
        let mut seen: std::collections::HashSet<ObjectId> = durable.into_iter().collect();
        while let Some((id, beside)) = stack.pop() {
            if !seen.insert(id) || closed(&id) || ours(&id).is_none() {
                continue;
            }
            fresh.push(id);
            let Ok(object) = self.repo.find_object(id) else {
                continue;
            };
            match object.kind {
                gix::object::Kind::Commit => {
                    if let Ok(commit) = object.try_into_commit() {
                        let parents: Vec<ObjectId> =
                            commit.parent_ids().map(|p| p.detach()).collect();
                        if let Ok(tree) = commit.tree_id() {
                            let beside = parents.first().and_then(|p| tree_of(*p));
                            stack.push((tree.detach(), beside));
                        }
                        stack.extend(parents.into_iter().map(|p| (p, None)));
                    }
                }
                gix::object::Kind::Tree => {
                    let tree = object.into_tree();
                    let Ok(decoded) = tree.decode() else {
                        continue;
                    };
                    let beside = beside.and_then(|id| self.repo.find_tree(id).ok());
                    let beside = beside.as_ref().and_then(|t| t.decode().ok());
                    let shared = |name: &gix::bstr::BStr| {
                        beside.as_ref().and_then(|b| {
                            b.entries
                                .binary_search_by(|e| e.filename.cmp(name))
                                .ok()
                                .map(|i| &b.entries[i])
                        })
                    };
                    for entry in &decoded.entries {
                        if entry.mode.is_commit() {
                            continue;
                        }
                        let twin = shared(entry.filename);
                        if twin.is_some_and(|t| t.oid == entry.oid) {
                            continue;
                        }
                        let twin = twin
                            .filter(|t| t.mode.is_tree() && entry.mode.is_tree())
                            .map(|t| t.oid.to_owned());
                        stack.push((entry.oid.to_owned(), twin));
                    }
                }
                _ => {}
            }
        }
        let synced = self.sync_objects(&fresh)?;
        // Everything the walk reached is durable now: a later ref naming any of it stops there.
        self.synced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .closures
            .extend(fresh);
        Ok(synced)
    }

    /// Makes a moved ref durable: fsyncs the directory holding it, where the rename that moved
    /// it is an entry. Its bytes were flushed in the lock file before that rename (the same
    /// inode), so the ref file itself needs no second flush.
    fn sync_ref(&self, name: &str) {
        if self.git_refs {
            // git fsynced the table it wrote and the list naming it (`core.fsync=reference`);
            // the directory holds the rename that published them.
            self.sync_reftable_dir();
            return;
        }
        let path = self.repo.common_dir().join(name);
        if let Some(dir) = path.parent()
            && let Ok(handle) = std::fs::File::open(dir)
        {
            let _ = handle.sync_all();
        }
    }

    /// Moves `name` from `expected` to `new` by compare-and-swap, durably: the objects `new`
    /// reaches are fsynced first ([`Store::sync_closure_beyond`], stopping at `expected`), the
    /// new value in its lock file before the rename, the ref's directory after.
    pub(crate) fn cas(
        &self,
        name: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
    ) -> Result<(), Error> {
        self.sync_closure_beyond(new, expected)?;
        self.cas_unsynced(name, expected, new)?;
        self.sync_ref(name);
        Ok(())
    }

    /// Flushes the lock file gix wrote `name`'s new value into, before it is renamed over the
    /// ref. A lock that cannot be opened or flushed fails the move: publishing a value that may
    /// not be on disk is what this order exists to prevent.
    fn sync_ref_lock(&self, name: &str) -> gix::error::Result<()> {
        use gix::error::ResultExt as _;
        let mut path = self.repo.common_dir().join(name).into_os_string();
        path.push(".lock");
        std::fs::File::open(&path)
            .and_then(|lock| lock.sync_all())
            .or_raise(|| gix::error::message("could not flush the ref's lock file"))
    }

    /// How long to wait for a ref's lock and for `packed-refs`' lock: git's settings
    /// `core.filesRefLockTimeout` (default 100 ms) and `core.packedRefsTimeout` (default
    /// 1,000 ms), in milliseconds, a negative value waiting for ever, as gix reads them for
    /// its own ref edits.
    pub(crate) fn lock_timeouts(&self) -> (gix::lock::acquire::Fail, gix::lock::acquire::Fail) {
        let timeout = |key: &str, default_ms: u64| match self
            .config_string(key)
            .and_then(|v| v.trim().parse::<i64>().ok())
        {
            Some(ms) if ms < 0 => {
                gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::MAX)
            }
            Some(0) => gix::lock::acquire::Fail::Immediately,
            Some(ms) => gix::lock::acquire::Fail::AfterDurationWithBackoff(
                std::time::Duration::from_millis(ms.unsigned_abs()),
            ),
            None => gix::lock::acquire::Fail::AfterDurationWithBackoff(
                std::time::Duration::from_millis(default_ms),
            ),
        };
        (
            timeout("core.filesRefLockTimeout", 100),
            timeout("core.packedRefsTimeout", 1000),
        )
    }

    pub(crate) fn sync_reftable_dir(&self) {
        if let Ok(dir) = std::fs::File::open(self.repo.common_dir().join("reftable")) {
            let _ = dir.sync_all();
        }
    }

    fn cas_unsynced(
        &self,
        name: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
    ) -> Result<(), Error> {
        if self.git_refs {
            return self.cas_through_git(name, expected, new);
        }
        let full: gix::refs::FullName =
            name.try_into()
                .map_err(
                    |e: gix::validate::reference::name::Error| Error::InvalidRefName {
                        name: name.to_owned(),
                        reason: e.to_string(),
                    },
                )?;
        let edit = RefEdit {
            change: Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: "hpp: append".into(),
                },
                expected: match expected {
                    Some(old) => PreviousValue::MustExistAndMatch(Target::Object(old)),
                    None => PreviousValue::MustNotExist,
                },
                new: Target::Object(new),
            },
            name: full,
            deref: false,
        };
        let who = self.signature();
        let mut buf = gix::date::parse::TimeBuf::default();
        let (files, packed) = self.lock_timeouts();
        // gix writes the new value into `<ref>.lock` when it prepares, and renames the lock
        // over the ref when it commits; it flushes neither. The lock's bytes are flushed in
        // between, so the rename can only ever publish a value that is on disk.
        let outcome = self
            .repo
            .refs
            .transaction()
            .prepare([edit], files, packed)
            .and_then(|prepared| {
                self.sync_ref_lock(name)?;
                prepared.commit(Some(who.to_ref(&mut buf)))
            });
        match outcome {
            Ok(_) => Ok(()),
            Err(e) => {
                if let Some(out) = e.downcast_any_ref::<ReferenceOutOfDate>() {
                    return Err(Error::Moved {
                        name: name.to_owned(),
                        expected: expected.map(Into::into),
                        actual: out.actual.try_id().map(|id| id.to_owned().into()),
                    });
                }
                if let Some(exists) = e.downcast_any_ref::<MustNotExist>() {
                    return Err(Error::Moved {
                        name: name.to_owned(),
                        expected: None,
                        actual: exists.actual.try_id().map(|id| id.to_owned().into()),
                    });
                }
                if e.is_retryable() {
                    return Err(Error::Busy {
                        name: name.to_owned(),
                    });
                }
                // A loop `a` exists as a file where `a/b` needs a directory, or the reverse.
                if expected.is_none() && self.clashes(name) {
                    return Err(Error::Clash {
                        name: name.to_owned(),
                    });
                }
                // The ref may have vanished or appeared between our read and the lock.
                match self.tip_oid(name) {
                    Ok(actual) if actual != expected => Err(Error::Moved {
                        name: name.to_owned(),
                        expected: expected.map(Into::into),
                        actual: actual.map(Into::into),
                    }),
                    _ => Err(git(format!("updating {name}"))(e)),
                }
            }
        }
    }

    /// [`Store::cas_unsynced`] for a repository whose refs git moves (reftable): one
    /// `update-ref` transaction, its refusal told apart as gix's is.
    fn cas_through_git(
        &self,
        name: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
    ) -> Result<(), Error> {
        if let Err(e) = gix::refs::FullName::try_from(name) {
            return Err(Error::InvalidRefName {
                name: name.to_owned(),
                reason: e.to_string(),
            });
        }
        let edit = super::git_refs::Edit {
            name,
            expected,
            new: Some(new),
        };
        let Err(stderr) = self.git_update(&[edit], "hpp: append")? else {
            return Ok(());
        };
        let actual = self.tip_oid(name)?;
        if actual != expected {
            return Err(Error::Moved {
                name: name.to_owned(),
                expected: expected.map(Into::into),
                actual: actual.map(Into::into),
            });
        }
        if expected.is_none() && self.clashes(name) {
            return Err(Error::Clash {
                name: name.to_owned(),
            });
        }
        if stderr.contains("lock") {
            return Err(Error::Busy {
                name: name.to_owned(),
            });
        }
        Err(Error::GitFailed {
            what: format!("updating {name}"),
            stderr,
        })
    }

    /// Moves every ref of `moves` in one ref transaction, each edit still a compare-and-swap on
    /// its expected value: the objects every new value reaches are fsynced first, the edits are
    /// written into `packed-refs` (one file, not a loose file per ref) and that file and its
    /// directory are fsynced once after. All move or none: when one edit lost its race (the
    /// ref moved since it was read), nothing moved and [`Error::Moved`] names it, so the caller
    /// can settle the rest one by one.
    ///
    /// Only the refs that have a file of their own (a loose ref, a reflog) are locked; the
    /// rest take no lock file (the `packed` module says why that is safe). A batch the packed
    /// write does not take moves as loose refs, each lock flushed before its rename. Returns
    /// the refs another writer took while the packed write ran: each holds that writer's
    /// value, as if this move had lost its race (always none through the loose transaction,
    /// which fails instead).
    pub fn move_refs(&self, moves: &[RefMove]) -> Result<Vec<String>, Error> {
        if moves.is_empty() {
            return Ok(Vec::new());
        }
        for m in moves {
            self.sync_closure_beyond(m.new.oid(), m.expected.as_ref().map(CommitId::oid))?;
        }
        if self.git_refs {
            return self.move_refs_through_git(moves).map(|()| Vec::new());
        }
        for m in moves {
            full_name(&m.name)?;
        }
        if let Some(taken) = self.move_packed(moves)? {
            return Ok(taken);
        }
        self.move_loose(moves)
    }

    /// [`Store::move_refs`] for a batch [`Store::move_packed`] does not take (a ref outside
    /// `refs/hpp/`, a clash, a symbolic ref, group-shared permissions, reflogs for every ref):
    /// every ref moves as a loose file through gix's transaction, each new value flushed in
    /// its lock file before any rename, the refs' directories after.
    fn move_loose(&self, moves: &[RefMove]) -> Result<Vec<String>, Error> {
        let all: Vec<&RefMove> = moves.iter().collect();
        let prepared = self.prepare_loose(&all)?;
        self.commit_loose(prepared, &all)?;
        Ok(Vec::new())
    }

    /// Locks each ref of `moves` and writes its new value into its lock file, checking the
    /// value it holds now against the one expected, then flushes every lock: committing the
    /// result renames values that are on disk. Dropping it moves nothing.
    fn prepare_loose(
        &self,
        moves: &[&RefMove],
    ) -> Result<gix::refs::file::Transaction<'_, '_>, Error> {
        let mut edits = Vec::with_capacity(moves.len());
        for m in moves {
            edits.push(RefEdit {
                change: Change::Update {
                    log: LogChange {
                        mode: RefLog::AndReference,
                        force_create_reflog: false,
                        message: "hpp: fetch".into(),
                    },
                    expected: match &m.expected {
                        Some(old) => PreviousValue::MustExistAndMatch(Target::Object(old.oid())),
                        None => PreviousValue::MustNotExist,
                    },
                    new: Target::Object(m.new.oid()),
                },
                name: full_name(&m.name)?,
                deref: false,
            });
        }
        let (files, packed) = self.lock_timeouts();
        let flushed = self
            .repo
            .refs
            .transaction()
            .prepare(edits, files, packed)
            .and_then(|prepared| {
                for m in moves {
                    self.sync_ref_lock(&m.name)?;
                }
                Ok(prepared)
            });
        match flushed {
            Ok(prepared) => Ok(prepared),
            Err(e) => {
                let owned: Vec<RefMove> = moves.iter().map(|m| (*m).clone()).collect();
                Err(self.lost_move(&owned, &e.to_string())?)
            }
        }
    }

    /// Renames the flushed locks of [`Store::prepare_loose`] over their refs, then flushes
    /// the directories holding them.
    fn commit_loose(
        &self,
        prepared: gix::refs::file::Transaction<'_, '_>,
        moves: &[&RefMove],
    ) -> Result<(), Error> {
        let who = self.signature();
        let mut buf = gix::date::parse::TimeBuf::default();
        prepared
            .commit(Some(who.to_ref(&mut buf)))
            .map_err(git(format!("moving {} refs", moves.len())))?;
        let dirs: std::collections::BTreeSet<&str> = moves
            .iter()
            .map(|m| m.name.rsplit_once('/').map_or("", |(dir, _)| dir))
            .collect();
        for dir in dirs {
            if let Ok(handle) = std::fs::File::open(self.repo.common_dir().join(dir)) {
                let _ = handle.sync_all();
            }
        }
        Ok(())
    }

    /// [`Store::move_refs`] for a repository whose refs git moves (reftable): one
    /// `update-ref --stdin` transaction, one new table.
    fn move_refs_through_git(&self, moves: &[RefMove]) -> Result<(), Error> {
        let edits: Vec<_> = moves
            .iter()
            .map(|m| super::git_refs::Edit {
                name: &m.name,
                expected: m.expected.as_ref().map(super::CommitId::oid),
                new: Some(m.new.oid()),
            })
            .collect();
        let Err(stderr) = self.git_update(&edits, "hpp: fetch")? else {
            self.sync_reftable_dir();
            return Ok(());
        };
        Err(self.lost_move(moves, &stderr)?)
    }

    /// Why a transaction of `moves` was refused (`reason`, the backend's words): the first
    /// edit whose ref is no longer where it was read ([`Error::Moved`]), else [`Error::Busy`].
    fn lost_move(&self, moves: &[RefMove], reason: &str) -> Result<Error, Error> {
        for m in moves {
            let actual = self.tip_oid(&m.name)?;
            if actual != m.expected.as_ref().map(super::CommitId::oid) {
                return Ok(Error::Moved {
                    name: m.name.clone(),
                    expected: m.expected.clone(),
                    actual: actual.map(Into::into),
                });
            }
        }
        Ok(Error::Busy {
            name: format!("{} refs ({reason})", moves.len()),
        })
    }

    /// Keeps the records packed. Appends write each record as loose objects (three or four
    /// files an event), and git's housekeeping runs only after git's own commands, so a loop
    /// appended event by event would stay loose until `gc.auto`'s 6,700 files, and reading
    /// it cost several system calls per object. So after a command that wrote, when an estimate
    /// of the loose objects passes [`LOOSE_LIMIT`] (or `gc.auto`, when that is lower), the
    /// store runs `git repack -d -l --geometric=2`: the loose objects go into one new pack,
    /// small packs are rolled into larger ones so their number stays logarithmic, and nothing
    /// older is rewritten. It runs in the foreground (a second or so at most on a large
    /// repository, usually tens of milliseconds), and `gc.auto` of 0 or less turns it off as it
    /// turns off git's own. Returns whether it ran.
    ///
    /// The estimate counts sixteen of the 256 object directories, `07`, `17`, … `f7` (an
    /// object's directory is the first byte of its id, so each holds a 256th of them). git's
    /// own counts one (`17`), and the loose objects there are when it repacks spread so widely
    /// (past 2,900 in one run of a hundred at a limit of 1,024, by simulation) that "about the
    /// limit" would not hold. Sixteen cost sixteen listings and keep the count within about a
    /// third of the limit (at most 1,352 in 99 runs of 100, 1,466 in 999 of 1,000).
    pub fn keep_packed(&self) -> Result<bool, Error> {
        if WRITES.load(Ordering::Relaxed) == 0 || !self.pending.is_empty() {
            return Ok(false);
        }
        let gc_auto = self
            .config_string("gc.auto")
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(6700);
        if gc_auto <= 0 {
            return Ok(false);
        }
        let limit = gc_auto.min(LOOSE_LIMIT);
        let objects = self.repo.objects.store_ref().path();
        let files: usize = SAMPLED
            .iter()
            .map(|dir| {
                std::fs::read_dir(objects.join(dir))
                    .map(|entries| entries.filter_map(Result::ok).count())
                    .unwrap_or(0)
            })
            .sum();
        // The limit spread over the directories read, rounded up, as git rounds its one.
        let sampled_limit = (limit * SAMPLED.len() as i64 + 255) / 256;
        if i64::try_from(files).unwrap_or(i64::MAX) <= sampled_limit {
            return Ok(false);
        }
        let what = "git repack -d -l --geometric=2";
        let out = super::git_cli::output(
            super::git_cli::in_repo(self.repo.git_dir(), self.workdir()).args([
                "repack",
                "-d",
                "-l",
                "-q",
                "--geometric=2",
            ]),
            what,
        )?;
        if !out.status.success() {
            return Err(Error::GitFailed {
                what: what.into(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        Ok(true)
    }

    fn clashes(&self, name: &str) -> bool {
        let mut prefix = String::new();
        for part in name.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            if prefix != name && matches!(self.tip_oid(&prefix), Ok(Some(_))) {
                return true;
            }
        }
        self.list(&format!("{name}/"))
            .is_ok_and(|refs| !refs.is_empty())
    }
}

/// The object directories [`Store::keep_packed`] counts to estimate the loose objects: one in
/// sixteen, git's own sample (`17`) among them.
const SAMPLED: [&str; 16] = [
    "07", "17", "27", "37", "47", "57", "67", "77", "87", "97", "a7", "b7", "c7", "d7", "e7", "f7",
];

/// `name` as gix's validated full ref name.
fn full_name(name: &str) -> Result<gix::refs::FullName, Error> {
    name.try_into().map_err(
        |e: gix::validate::reference::name::Error| Error::InvalidRefName {
            name: name.to_owned(),
            reason: e.to_string(),
        },
    )
}
