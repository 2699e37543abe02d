//! The record store of git-hpp: the only code that talks to git (gix and the git CLI).
//!
//! Records are commits whose trees hold named blobs; a log is a chain of such commits reached
//! from one ref under `refs/hpp/`. Refs move only forward, by compare-and-swap against the tip
//! the writer read ([`Store::append`]); a record is never rewritten. Commits are written with
//! gix directly, so the user's hooks never run, and they carry the user's committer identity
//! when git has one and a fixed `git-hpp <git-hpp@localhost>` identity otherwise.
//!
//! Durability: gix does not fsync. Before a ref is moved to name new objects, the loose object
//! files written for it are flushed to disk ([`Store::append`]), so a crash can lose the last
//! append but cannot leave a ref naming an object that never reached the disk.

mod git_cli;
mod records;
pub mod refs;
pub mod retry;
mod snapshot;
mod status;
mod sync;
mod trees;
mod worktree_facts;
mod worktrees;

pub use records::{Content, NOTES_REF};
pub use status::StatusEntry;
pub use sync::{NOTES_PUSH, RECORDS, Rejected, SyncReport, notes_fetch, notes_staging};
pub use worktree_facts::WorktreeFacts;
pub use worktrees::{Checkout, Worktree};

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;
use gix::refs::Target;
use gix::refs::file::transaction::prepare::{MustNotExist, ReferenceOutOfDate};
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

/// The identity of commits the store makes when git has none configured.
pub const FALLBACK_NAME: &str = "git-hpp";
/// The email of that identity.
pub const FALLBACK_EMAIL: &str = "git-hpp@localhost";

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No repository was found from the starting directory.
    #[error("not a git repository (or any parent up to the root): {}", path.display())]
    NotARepository {
        /// Where the search started.
        path: PathBuf,
    },
    /// A compare-and-swap lost: the ref is no longer where the writer read it.
    #[error("{name} moved: expected {}, found {}", expected.as_ref().map_or("nothing", CommitId::as_str), actual.as_ref().map_or("nothing", CommitId::as_str))]
    Moved {
        /// The ref.
        name: String,
        /// The tip the writer read.
        expected: Option<CommitId>,
        /// The tip found under the lock.
        actual: Option<CommitId>,
    },
    /// Another writer held the ref's lock longer than git's lock timeout.
    #[error("{name} is locked by another writer")]
    Busy {
        /// The ref.
        name: String,
    },
    /// A ref, or a revision, names an object that is not a commit in this repository.
    #[error("{name}: {} is not a commit in this repository", id.as_deref().unwrap_or(""))]
    NotACommit {
        /// The ref or revision.
        name: String,
        /// The id it names, when that differs from `name`.
        id: Option<String>,
    },
    /// A revision resolves to an object that does not peel to a commit (a tree, a blob).
    #[error("{spec}: does not name a commit")]
    NotCommitish {
        /// The revision as given.
        spec: String,
    },
    /// A revision (a ref name, `HEAD`, an id) names nothing in this repository.
    #[error("{spec}: names no commit")]
    NoSuchRevision {
        /// The revision as given.
        spec: String,
    },
    /// An id names no tree in this repository.
    #[error("{id}: is not a tree in this repository")]
    NotATree {
        /// The id.
        id: String,
    },
    /// A commit of a log lacks the blob every commit of that log holds.
    #[error("{name}: {commit} has no {file}")]
    MissingFile {
        /// The log's ref.
        name: String,
        /// The commit.
        commit: CommitId,
        /// The blob's name.
        file: String,
    },
    /// A ref that should name a record is symbolic.
    #[error("{name}: is a symbolic ref, not a record")]
    Symbolic {
        /// The ref.
        name: String,
    },
    /// A name is not a valid git ref name.
    #[error("{name}: {reason}")]
    InvalidRefName {
        /// The name.
        name: String,
        /// git's reason.
        reason: String,
    },
    /// The operation needs a worktree and the repository is bare.
    #[error("{what}: a bare repository has no {needs}")]
    Bare {
        /// What was asked.
        what: String,
        /// What a bare repository lacks (`workspace to snapshot`, `worktree`).
        needs: &'static str,
    },
    /// The index holds a conflict, so the workspace has no one content to snapshot.
    #[error("{path}: is unmerged: resolve the conflict before taking a snapshot")]
    Unmerged {
        /// The conflicting path.
        path: String,
    },
    /// The index holds an entry whose mode git cannot store in a tree.
    #[error("{path}: has an index mode git cannot store")]
    UnstorableMode {
        /// The path.
        path: String,
    },
    /// A `git` command ran and failed; its stderr says why.
    #[error("{what}: {stderr}")]
    GitFailed {
        /// The operation, as the user would name it (`git push origin`).
        what: String,
        /// What git printed on stderr (its last line for remote operations).
        stderr: String,
    },
    /// The `git` program could not be started: not installed, or not on `PATH`.
    #[error("cannot run git")]
    GitUnavailable {
        /// The operation.
        what: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A new object could not be flushed to disk, so no ref was moved to name it.
    #[error("{id}: cannot flush to disk")]
    Flush {
        /// The object.
        id: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A write was asked for with nothing to write (a caller's bug).
    #[error("{name}: no records to write")]
    NothingToWrite {
        /// The ref.
        name: String,
    },
    /// Other writers kept moving the ref through every attempt of the retry rule.
    #[error("{name} kept moving: gave up after {attempts} attempts")]
    Contended {
        /// The ref.
        name: String,
        /// How many attempts were made.
        attempts: usize,
    },
    /// The ref name clashes with an existing ref (a loop `a` blocks a loop `a/b`, as in git).
    #[error("{name} cannot be created: it clashes with an existing ref")]
    Clash {
        /// The ref.
        name: String,
    },
    /// git itself failed.
    #[error("git operation failed on {context}")]
    Git {
        /// What the store was doing.
        context: String,
        /// gix's error.
        #[source]
        source: gix::Error,
    },
}

fn git(context: impl Into<String>) -> impl FnOnce(gix::Error) -> Error {
    let context = context.into();
    move |source| Error::Git { context, source }
}

/// A commit id, as hex. Outside the store a commit is an id, not a gix type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct CommitId(String);

impl CommitId {
    /// Returns the hex id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn oid(&self) -> ObjectId {
        ObjectId::from_hex(self.0.as_bytes())
            .expect("a CommitId is only made from a valid ObjectId")
    }
}

impl From<ObjectId> for CommitId {
    fn from(id: ObjectId) -> Self {
        Self(id.to_hex().to_string())
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A tree id, as hex: a workspace snapshot, or the tree a commit points at.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct TreeId(String);

impl TreeId {
    /// Returns the hex id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TreeId {
    pub(crate) fn oid(&self) -> ObjectId {
        ObjectId::from_hex(self.0.as_bytes()).expect("a TreeId is only made from a valid ObjectId")
    }

    /// Parses a hex tree id (validated as hex only; existence is checked where it is used).
    pub fn parse(hex: &str) -> Option<Self> {
        ObjectId::from_hex(hex.as_bytes()).ok().map(Self::from)
    }
}

impl From<ObjectId> for TreeId {
    fn from(id: ObjectId) -> Self {
        Self(id.to_hex().to_string())
    }
}

impl fmt::Display for TreeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One commit of a log, as read: its id, its parents and the named blob, if its tree has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The commit.
    pub commit: CommitId,
    /// Its parents, in order.
    pub parents: Vec<CommitId>,
    /// The bytes of the record blob, or `None` if the tree has no such blob.
    pub payload: Option<Vec<u8>>,
}

/// A log as read from its ref: the tip, and the first-parent chain oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chain {
    /// Where the ref points, or `None` if it does not exist.
    pub tip: Option<CommitId>,
    /// The commits from the root to the tip, following first parents.
    pub links: Vec<Link>,
}

/// A log whose every commit holds the same blob, as read: the tip and each commit's bytes,
/// oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Log {
    /// Where the ref points, or `None` if it does not exist.
    pub tip: Option<CommitId>,
    /// Each commit and the bytes of its blob, from the root to the tip.
    pub entries: Vec<(CommitId, Vec<u8>)>,
}

/// One new record to write as a commit: the blob's file name and bytes, and the commit message.
#[derive(Debug, Clone)]
pub struct NewRecord<'a> {
    /// The blob's name in the commit's tree (`event.json`).
    pub file: &'a str,
    /// The blob's bytes.
    pub bytes: &'a [u8],
    /// The commit message; the store adds a writer trailer that makes every commit unique.
    pub message: &'a str,
}

/// An open repository.
pub struct Store {
    repo: gix::Repository,
}

static WRITES: AtomicU64 = AtomicU64::new(0);

impl Store {
    /// Opens the repository that git would use from `cwd`: `GIT_DIR` (and `GIT_WORK_TREE`) when
    /// set, else the first repository found upwards, linked worktrees included.
    pub fn discover(cwd: &Path) -> Result<Self, Error> {
        gix::discover_with_environment_overrides(cwd)
            .map(Self::from_repo)
            .map_err(|e| {
                // Tell "no repository here" apart from a repository that failed to open.
                if gix::discover::upwards(cwd).is_err() {
                    Error::NotARepository {
                        path: cwd.to_owned(),
                    }
                } else {
                    git(format!("opening the repository from {}", cwd.display()))(e)
                }
            })
    }

    /// Creates a new repository with a worktree at `path`, isolated from the environment and
    /// global configuration (for throwaway repositories: the controls, tests).
    pub fn init(path: &Path) -> Result<Self, Error> {
        // Isolated: a throwaway repository must not pick up GIT_DIR or GIT_WORK_TREE from a
        // caller such as a git hook, which would point it at the caller's worktree.
        let repo = gix::ThreadSafeRepository::init_opts(
            path,
            gix::create::Kind::WithWorktree,
            gix::create::Options::default(),
            gix::open::Options::isolated(),
        )
        .map_err(git(format!("initialising {}", path.display())))?;
        Ok(Self::from_repo(repo.into()))
    }

    /// Wraps a repository, giving it the fixed identity as git's lowest-precedence fallback, so
    /// writes that need an identity (notes) work where git has none.
    fn from_repo(mut repo: gix::Repository) -> Self {
        use gix::config::tree::gitoxide;
        let mut config = repo.config_snapshot_mut();
        for (key, value) in [
            (&gitoxide::Committer::NAME_FALLBACK, FALLBACK_NAME),
            (&gitoxide::Committer::EMAIL_FALLBACK, FALLBACK_EMAIL),
            (&gitoxide::Author::NAME_FALLBACK, FALLBACK_NAME),
            (&gitoxide::Author::EMAIL_FALLBACK, FALLBACK_EMAIL),
        ] {
            // A failure leaves the fallback unset; record commits carry their own fallback.
            let _ = config.set_value(key, value);
        }
        let _ = config.commit();
        Self { repo }
    }

    /// Returns the root of the worktree, or `None` for a bare repository.
    pub fn workdir(&self) -> Option<&Path> {
        self.repo.workdir()
    }

    /// Returns the short name of the branch HEAD points at (also when it has no commit yet),
    /// or `None` when HEAD is detached.
    pub fn current_branch(&self) -> Result<Option<String>, Error> {
        let head = self.repo.head_name().map_err(git("reading HEAD"))?;
        Ok(head.and_then(|name| {
            name.as_bstr()
                .strip_prefix(b"refs/heads/")
                .and_then(|short| short.to_str().ok())
                .map(str::to_owned)
        }))
    }

    /// Reads the log at `name`: the tip and the first-parent chain from the root, with the
    /// blob `file` of each commit's tree.
    pub fn read_chain(&self, name: &str, file: &str) -> Result<Chain, Error> {
        let Some(tip) = self.tip_oid(name)? else {
            return Ok(Chain::default());
        };
        let mut links = Vec::new();
        let mut next = Some(tip);
        while let Some(id) = next {
            let commit = self.repo.find_commit(id).map_err(|_| Error::NotACommit {
                name: name.to_owned(),
                id: Some(id.to_string()),
            })?;
            let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
            let tree = commit
                .tree()
                .map_err(git(format!("reading the tree of {id}")))?;
            let payload = match tree.find_entry(file) {
                Some(entry) if entry.mode().is_blob() => {
                    let blob = self
                        .repo
                        .find_blob(entry.object_id())
                        .map_err(git(format!("reading {file} of {id}")))?;
                    Some(blob.data.clone())
                }
                _ => None,
            };
            next = parents.first().copied();
            links.push(Link {
                commit: id.into(),
                parents: parents.into_iter().map(Into::into).collect(),
                payload,
            });
        }
        links.reverse();
        Ok(Chain {
            tip: Some(tip.into()),
            links,
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
        let mut written = Vec::new();
        let id = self.write_record(expected.map(CommitId::oid), record, &mut written)?;
        self.sync_objects(&written)?;
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

    /// Reads the log at `name` whose every commit must hold the blob `file`.
    pub fn read_log(&self, name: &str, file: &str) -> Result<Log, Error> {
        let chain = self.read_chain(name, file)?;
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
        let mut written = Vec::new();
        let mut parent = None;
        for record in records {
            parent = Some(self.write_record(parent, record, &mut written)?);
        }
        let tip = parent.ok_or_else(|| Error::NothingToWrite {
            name: name.to_owned(),
        })?;
        self.sync_objects(&written)?;
        self.cas(name, None, tip)?;
        Ok(tip.into())
    }

    /// Lists the refs under `prefix` with their tips, sorted by name.
    pub fn list(&self, prefix: &str) -> Result<Vec<(String, CommitId)>, Error> {
        let platform = self.repo.references().map_err(git("listing refs"))?;
        let iter = platform
            .prefixed(prefix.as_bytes().as_bstr())
            .map_err(git(format!("listing {prefix}")))?;
        let mut out = Vec::new();
        for reference in iter {
            let reference = reference.map_err(|e| Error::Git {
                context: format!("listing {prefix}"),
                source: e,
            })?;
            if let Some(id) = reference.target().try_id() {
                out.push((reference.name().as_bstr().to_string(), id.to_owned().into()));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Returns the commit `name` points at, or `None` if the ref does not exist.
    pub fn tip(&self, name: &str) -> Result<Option<CommitId>, Error> {
        Ok(self.tip_oid(name)?.map(CommitId::from))
    }

    fn tip_oid(&self, name: &str) -> Result<Option<ObjectId>, Error> {
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

    fn signature(&self) -> gix::actor::Signature {
        let now = gix::date::Time::now_local_or_utc();
        match self.repo.committer() {
            Some(Ok(sig)) => gix::actor::Signature {
                name: sig.name.into(),
                email: sig.email.into(),
                time: now,
            },
            _ => gix::actor::Signature {
                name: FALLBACK_NAME.into(),
                email: FALLBACK_EMAIL.into(),
                time: now,
            },
        }
    }

    fn write_record(
        &self,
        parent: Option<ObjectId>,
        record: &NewRecord<'_>,
        written: &mut Vec<ObjectId>,
    ) -> Result<ObjectId, Error> {
        let blob = self
            .repo
            .write_blob(record.bytes)
            .map_err(git("writing a record blob"))?
            .detach();
        let mut editor = self
            .repo
            .edit_tree(ObjectId::empty_tree(self.repo.object_hash()))
            .map_err(git("editing a tree"))?;
        editor
            .upsert(record.file, EntryKind::Blob, blob)
            .map_err(git("editing a tree"))?;
        let tree = editor
            .write()
            .map_err(git("writing a record tree"))?
            .detach();
        let id = self.new_commit(tree, parent, record.message)?;
        written.extend([blob, tree, id]);
        Ok(id)
    }

    /// Writes a commit of `tree` on `parent` with the store's identity and a writer trailer.
    fn new_commit(
        &self,
        tree: ObjectId,
        parent: Option<ObjectId>,
        message: &str,
    ) -> Result<ObjectId, Error> {
        // A writer trailer makes every commit unique: two writers recording identical payloads
        // on the same parent in the same second would otherwise make one commit and both "win".
        let writer = format!(
            "{}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
            WRITES.fetch_add(1, Ordering::Relaxed)
        );
        let sig = self.signature();
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: format!("{}\n\nHpp-Writer: {writer}\n", message.trim_end()).into(),
            extra_headers: Vec::new(),
        };
        Ok(self
            .repo
            .write_object(&commit)
            .map_err(git("writing a record commit"))?
            .detach())
    }

    /// Flushes the loose object files of `ids` (those that exist loose) and their directories.
    fn sync_objects(&self, ids: &[ObjectId]) -> Result<usize, Error> {
        let objects = self.repo.objects.store_ref().path().to_owned();
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

    fn cas(&self, name: &str, expected: Option<ObjectId>, new: ObjectId) -> Result<(), Error> {
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
        match self
            .repo
            .edit_references_as([edit], Some(who.to_ref(&mut buf)))
        {
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
    fn identical_payloads_make_distinct_commits() {
        let (_dir, store) = repo();
        let mut written = Vec::new();
        let one = store
            .write_record(None, &record(b"same"), &mut written)
            .unwrap();
        let two = store
            .write_record(None, &record(b"same"), &mut written)
            .unwrap();
        assert_ne!(one, two);
    }

    #[test]
    fn new_objects_are_flushed_before_the_ref_moves() {
        let (_dir, store) = repo();
        let mut written = Vec::new();
        store
            .write_record(None, &record(b"flush me"), &mut written)
            .unwrap();
        assert_eq!(
            store.sync_objects(&written).unwrap(),
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
}
