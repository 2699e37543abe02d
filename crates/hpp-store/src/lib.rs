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
//!
//! It knows git and nothing of the protocol: the application says what a record means. Outside
//! this crate a commit or a tree is an id ([`CommitId`], [`TreeId`]), never a gix type.
//!
//! - `log`: chains read oldest first, appends by compare-and-swap, logs of one blob per commit;
//! - `merge`: logs kept by several machines: read as sets, joined by deterministic merges;
//! - `write`: the one write path (objects, fsync, compare-and-swap), unique commits;
//! - [`retry`]: the one retry rule every compare-and-swap writer follows;
//! - [`refs`]: the `refs/hpp/` layout, the one place that builds ref names;
//! - `records`: records created once, extended once, files at a ref, revisions, config, notes;
//! - `trees`: commits with any parents, changed paths, three-way tree merges, ancestry;
//! - `diff`: the changes between two trees as git shows them (name-status and patch);
//! - `snapshot`: the workspace as a tree id, without touching the user's index;
//! - `worktrees`, `status`, `worktree_facts`: linked worktrees and what git says of them;
//! - `receive`: a push seen before it is accepted (quarantined objects, pending ref updates);
//! - `sync`: push and fetch of `refs/hpp/*` and the notes, never forcing;
//! - `fresh`: the packs a fetch wrote, decoded whole on every core when a read of them goes on;
//! - `loose`: loose objects read with one open and one read, once a command reads many;
//! - `clones`: shallow and partial clones: the boundary never taken for a root, promised
//!   objects fetched when read;
//! - `git_cli`: the one place that spawns `git`, for what gix has no API for;
//! - [`probe`]: what a command would destroy in a worktree, asked of git (the command
//!   policy's full rules);
//! - [`descriptors`]: `ulimit -n`, the descriptor table sized once, a walk's share of both.

mod clones;
pub mod descriptors;
mod diff;
mod fresh;
mod git_cli;
mod git_refs;
mod history;
mod log;
mod loose;
mod merge;
mod pack;
mod packed;
pub mod parameters;
pub mod probe;
mod receive;
mod records;
pub mod refs;
pub mod retry;
mod shape;
mod snapshot;
mod status;
mod sync;
mod trees;
mod worktree_facts;
mod worktrees;
mod write;

pub use diff::{ChangeStatus, PathChange, TreeDiff};
pub use merge::{Relation, SetEntry};
pub use receive::PendingUpdate;
pub use records::{BlobReader, Content, NOTES_REF};
pub use snapshot::{LEFT_OUT, SnapshotReport, is_left_out};
pub use status::StatusEntry;
pub use sync::{
    NOTES_PUSH, RECORDS, Rejected, STAGING_PREFIX, Staged, SyncReport, notes_fetch, notes_staging,
    records_fetch,
};
pub use trees::{FileKind, TreeChanges};
pub use worktree_facts::{LinkedFacts, WorktreeFacts};
pub use worktrees::{Checkout, Worktree};

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

use gix::ObjectId;
use gix::bstr::ByteSlice;

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
    /// The repository is in a format the store cannot read yet (an object format or a ref
    /// backend git ships that gix does not).
    #[error("this repository uses {format}, which git-hpp cannot read yet")]
    UnsupportedFormat {
        /// The format, with the setting that names it.
        format: String,
    },
    /// `GIT_CONFIG_PARAMETERS` (what `git -c` hands us) does not parse.
    #[error("{0}")]
    ConfigParameters(String),
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
        /// What git printed on stderr (its lines joined into one for remote operations).
        stderr: String,
    },
    /// A remote name or URL starts with `-`, so git would take it for an option.
    #[error(
        "{remote}: a remote name or URL cannot start with '-' (git would read it as an option)"
    )]
    OptionLikeRemote {
        /// The remote as given.
        remote: String,
    },
    /// A `git` command gave no answer in its time (a remote that accepts and never answers):
    /// it was killed, with everything it started.
    #[error("{what}: no answer within {seconds} s (git config hpp.fetchTimeout)")]
    GitHung {
        /// The operation.
        what: String,
        /// How long it was given.
        seconds: u64,
    },
    /// `hpp.fetchTimeout` is not a whole number of seconds from 1 to 86400.
    #[error("git config hpp.fetchTimeout is {value:?}: a whole number of seconds from 1 to 86400")]
    BadFetchTimeout {
        /// The value as set.
        value: String,
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
    /// A file the store needs for itself (outside the repository) could not be made.
    #[error("{what}: cannot be prepared")]
    Io {
        /// What it was.
        what: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The process ran out of file descriptors (`ulimit -n`, or the system's table).
    #[error("{what}: too many open files{}", limit.map_or(String::new(), |l| format!(" (the limit is {l}, see `ulimit -n`)")))]
    TooManyOpenFiles {
        /// What was being read.
        what: String,
        /// The soft limit in force, when there is one.
        limit: Option<u64>,
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
    /// A walk to the history's roots met the shallow boundary: the clone holds no root to name.
    #[error(
        "the history of {commit} is cut at {boundary} (a shallow clone): its root commits are not here"
    )]
    Shallow {
        /// The commit whose history was walked.
        commit: CommitId,
        /// The first boundary commit met.
        boundary: CommitId,
    },
    /// A range reaches the shallow boundary before its base: the commits beyond it are not in
    /// this clone, so they cannot be listed, let alone verified.
    #[error(
        "{spec}: the range runs past the shallow boundary at {boundary}: the commits beyond it are not here"
    )]
    ShallowRange {
        /// The range as given.
        spec: String,
        /// The boundary commit the walk met.
        boundary: CommitId,
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

/// What the store's unit tests share.
#[cfg(test)]
pub(crate) mod testing {
    /// A new repository in `dir` whose log `name` holds `n` entries (`e.json`: `{"n":i}`),
    /// appended one by one; the store and the log's tip.
    pub(crate) fn appended_log(
        dir: &std::path::Path,
        name: &str,
        n: usize,
    ) -> (super::Store, super::CommitId) {
        let store = super::Store::init(dir).expect("a new repository");
        let mut tip = None;
        for i in 0..n {
            let bytes = format!("{{\"n\":{i}}}");
            let record = super::NewRecord {
                file: "e.json",
                bytes: bytes.as_bytes(),
                message: "test",
            };
            tip = Some(
                store
                    .append(name, tip.as_ref(), &record)
                    .expect("an append"),
            );
        }
        (store, tip.expect("at least one entry"))
    }

    /// Runs git in `dir`, cut off from the user's config, with a fixed identity; its stdout,
    /// trimmed. Panics with git's output when it fails.
    pub(crate) fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "a")
            .env("GIT_AUTHOR_EMAIL", "a@example.com")
            .env("GIT_COMMITTER_NAME", "a")
            .env("GIT_COMMITTER_EMAIL", "a@example.com")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout)
            .expect("UTF-8")
            .trim()
            .to_owned()
    }
}

fn git(context: impl Into<String>) -> impl FnOnce(gix::Error) -> Error {
    let context = context.into();
    move |source| Error::Git { context, source }
}

/// An object id's hex, held inline: a fetch that reads a 10,000-entry board makes 40,000
/// of them, and a heap string each was an allocation to make, to format into through
/// `Display` and to free (a seventh of the fetch's own work after git's).
/// Room for the longest id of the object formats this build reads (40 hex digits for SHA-1).
#[derive(Clone, Copy)]
struct Hex {
    len: u8,
    bytes: [u8; HEX_LEN],
}

/// The hex length of the longest object id this build reads.
const HEX_LEN: usize = gix::hash::Kind::longest().len_in_hex();

impl Hex {
    fn of(id: &gix::oid) -> Self {
        let mut bytes = [0; HEX_LEN];
        let len = id.hex_to_buf(&mut bytes).len();
        Self {
            len: u8::try_from(len).expect("an object id's hex fits a byte's count"),
            bytes,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("hex is ASCII")
    }

    fn oid(&self) -> ObjectId {
        ObjectId::from_hex(self.as_bytes()).expect("made from a valid ObjectId")
    }
}

impl PartialEq for Hex {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Hex {}

impl PartialOrd for Hex {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Hex {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl std::hash::Hash for Hex {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl fmt::Debug for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl serde::Serialize for Hex {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A commit id, as hex. Outside the store a commit is an id, not a gix type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct CommitId(Hex);

impl CommitId {
    /// Returns the hex id.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    fn oid(&self) -> ObjectId {
        self.0.oid()
    }

    /// Parses a hex commit id (validated as hex only; existence is checked where it is used).
    pub fn parse(hex: &str) -> Option<Self> {
        ObjectId::from_hex(hex.as_bytes()).ok().map(Self::from)
    }
}

impl From<ObjectId> for CommitId {
    fn from(id: ObjectId) -> Self {
        Self(Hex::of(&id))
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tree id, as hex: a workspace snapshot, or the tree a commit points at.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct TreeId(Hex);

impl TreeId {
    /// Returns the hex id.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl TreeId {
    pub(crate) fn oid(&self) -> ObjectId {
        self.0.oid()
    }

    /// Parses a hex tree id (validated as hex only; existence is checked where it is used).
    pub fn parse(hex: &str) -> Option<Self> {
        ObjectId::from_hex(hex.as_bytes()).ok().map(Self::from)
    }
}

impl From<ObjectId> for TreeId {
    fn from(id: ObjectId) -> Self {
        Self(Hex::of(&id))
    }
}

impl fmt::Display for TreeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
    /// The commit's tree, where the read that made the link had it (so a reader of the tree
    /// does not decode the commit again).
    pub tree: Option<TreeId>,
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

/// One compare-and-swap of a batch ([`Store::move_refs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefMove {
    /// The ref.
    pub name: String,
    /// Where it must be now (`None`: it must not exist).
    pub expected: Option<CommitId>,
    /// Where it moves.
    pub new: CommitId,
}

/// An open repository.
pub struct Store {
    repo: gix::Repository,
    /// Ref updates of a push being received, seen as if they had landed ([`Store::receiving`]).
    pending: std::collections::BTreeMap<String, Option<ObjectId>>,
    /// The alternates directory that lets gix read a push's quarantined objects.
    _quarantine: Option<tempfile::TempDir>,
    /// Refs are read and moved through git itself ([`git_refs`]): the repository keeps them in
    /// a backend gix cannot read (reftable).
    git_refs: bool,
    /// When this store was opened, less a margin for coarse file times: a loose object written
    /// since is one of ours, to make durable before a ref names it ([`Store::sync_closure_beyond`]).
    opened: std::time::SystemTime,
    /// Objects this store (or a view of it) already flushed: a command that moves several refs
    /// flushes each new object once, not once per ref ([`Store::sync_closure_beyond`]).
    synced: std::sync::Arc<std::sync::Mutex<write::Synced>>,
    /// The commits of set logs this store (or a view of it) decoded: commits never change, so
    /// one read serves the next (a fetch reads the remote's board, then the merge of both).
    set_commits: std::sync::Arc<std::sync::Mutex<merge::SetCommits>>,
    /// The packs this store's fetch wrote, decoded whole once a read goes on long enough
    /// (`fresh`).
    fresh: std::sync::Arc<fresh::Fresh>,
    /// Loose objects read plainly once a read goes on long enough (`loose`).
    loose: std::sync::Arc<loose::Loose>,
    /// What commands handed over to be freed with the caches ([`Store::drop_with_caches`]).
    handed: std::sync::Arc<std::sync::Mutex<Vec<Handed>>>,
}

/// A value handed to a store to be freed with its caches.
type Handed = Box<dyn std::any::Any + Send>;

static WRITES: AtomicU64 = AtomicU64::new(0);

/// How many loose objects (git's estimate) the store lets a repository gather before it packs
/// them ([`Store::keep_packed`]): a loop appended event by event then reads at most about this
/// many object files; the rest comes from packs.
pub const LOOSE_LIMIT: i64 = 1024;

impl Store {
    /// Leaves what this store's reads decoded and kept (the objects a fetch decoded, the
    /// commits its checks walked, the loose objects read plainly) to the process's exit:
    /// dropping the store, or any view of it, then frees none of it. For a process about to
    /// end, as git's own commands leave theirs: freeing them one by one cost 2 to 3 ms after a
    /// board fetch, memory the exit returns at once. Nothing else is left: the store still
    /// removes a push's quarantine alternates and closes its handles when dropped.
    pub fn leave_caches_to_exit(&self) {
        std::mem::forget(std::sync::Arc::clone(&self.set_commits));
        std::mem::forget(std::sync::Arc::clone(&self.fresh));
        std::mem::forget(std::sync::Arc::clone(&self.loose));
        std::mem::forget(std::sync::Arc::clone(&self.handed));
    }

    /// Hands `value`, which a command read and no longer needs, to the store: it is freed with
    /// the store's caches, when the last view of the store drops, or left to the process's exit
    /// with them ([`Store::leave_caches_to_exit`]). A fetch's 10,000 parsed board writes took
    /// 9 million instructions to free one by one, beside a ref transaction that waits on the
    /// disk.
    pub fn drop_with_caches<T: Send + 'static>(&self, value: T) {
        self.handed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Box::new(value));
    }

    /// Opens the repository that git would use from `cwd`: `GIT_DIR` (and `GIT_WORK_TREE`) when
    /// set, else the first repository found upwards, linked worktrees included.
    pub fn discover(cwd: &Path) -> Result<Self, Error> {
        let repo = gix::discover_with_environment_overrides(cwd).map_err(|e| {
            // Tell "no repository here" apart from a repository that failed to open, and that
            // from one in a format this build cannot read (git names it).
            if gix::discover::upwards(cwd).is_err() {
                Error::NotARepository {
                    path: cwd.to_owned(),
                }
            } else if let Some(format) = git_cli::object_format(cwd).filter(|f| f != "sha1") {
                Error::UnsupportedFormat {
                    format: format!("the {format} object format (extensions.objectFormat)"),
                }
            } else {
                git(format!("opening the repository from {}", cwd.display()))(e)
            }
        })?;
        if let Some(backend) = ref_backend(&repo).filter(|b| b != "files" && b != "reftable") {
            return Err(Error::UnsupportedFormat {
                format: format!("the {backend} ref backend (extensions.refStorage)"),
            });
        }
        let mut store = Self::from_repo(repo);
        store.take_command_line_config()?;
        Ok(store)
    }

    /// Reads what `git -c` said (`GIT_CONFIG_PARAMETERS`) into the configuration, above every
    /// file, as git does.
    fn take_command_line_config(&mut self) -> Result<(), Error> {
        let Some(text) = std::env::var_os("GIT_CONFIG_PARAMETERS") else {
            return Ok(());
        };
        let text = text.into_string().map_err(|t| {
            Error::ConfigParameters(format!("GIT_CONFIG_PARAMETERS is not UTF-8: {t:?}"))
        })?;
        let settings = parameters::parse(&text).map_err(Error::ConfigParameters)?;
        if settings.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = settings
            .into_iter()
            .map(|(key, value)| match value {
                Some(value) => format!("{key}={value}"),
                None => key,
            })
            .collect();
        let mut config = self.repo.config_snapshot_mut();
        config
            .append_config(lines.iter().map(String::as_str), gix::config::Source::Cli)
            .map_err(|e| Error::ConfigParameters(format!("GIT_CONFIG_PARAMETERS: {e}")))?;
        config
            .commit()
            .map_err(|e| Error::ConfigParameters(format!("GIT_CONFIG_PARAMETERS: {e}")))?;
        Ok(())
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
    /// writes that need an identity (notes) work where git has none, and reading the index as
    /// git reads it: without hashing the whole file again to check its trailing checksum (git
    /// checks it only in `fsck`; a 50,000-entry index is 4 MB, a few milliseconds of every
    /// snapshot). The store never writes the user's index, so this changes no file it writes.
    fn from_repo(mut repo: gix::Repository) -> Self {
        use gix::config::tree::{Index, gitoxide};
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
        // A failure leaves the checksum checked, as gix does by default.
        let _ = config.set_value(&Index::SKIP_HASH, "true");
        let _ = config.commit();
        let opened = std::time::SystemTime::now()
            .checked_sub(std::time::Duration::from_secs(2))
            .unwrap_or(std::time::UNIX_EPOCH);
        let git_refs = ref_backend(&repo).is_some_and(|b| b == "reftable");
        Self {
            repo,
            pending: std::collections::BTreeMap::new(),
            _quarantine: None,
            git_refs,
            opened,
            synced: std::sync::Arc::default(),
            set_commits: std::sync::Arc::default(),
            fresh: std::sync::Arc::default(),
            loose: std::sync::Arc::default(),
            handed: std::sync::Arc::default(),
        }
    }

    /// Tells whether this repository keeps its refs in git's reftable backend (read and moved
    /// through git itself, not gix).
    pub fn is_reftable(&self) -> bool {
        self.git_refs
    }

    /// Returns the root of the worktree, or `None` for a bare repository.
    pub fn workdir(&self) -> Option<&Path> {
        self.repo.workdir()
    }

    /// Returns the short name of the branch HEAD points at (also when it has no commit yet),
    /// or `None` when HEAD is detached.
    pub fn current_branch(&self) -> Result<Option<String>, Error> {
        if self.git_refs {
            return Ok(self
                .git_head_name()?
                .and_then(|name| name.strip_prefix("refs/heads/").map(str::to_owned)));
        }
        let head = self.repo.head_name().map_err(git("reading HEAD"))?;
        Ok(head.and_then(|name| {
            name.as_bstr()
                .strip_prefix(b"refs/heads/")
                .and_then(|short| short.to_str().ok())
                .map(str::to_owned)
        }))
    }
}

/// The ref backend the repository's config names (`extensions.refStorage`, lowercased), `None`
/// when it names none (the files backend).
fn ref_backend(repo: &gix::Repository) -> Option<String> {
    repo.config_snapshot()
        .string("extensions.refStorage")
        .map(|v| v.to_string().to_ascii_lowercase())
}

#[cfg(test)]
mod exit_tests {
    use super::Store;

    #[test]
    fn caches_left_to_the_exit_outlive_the_store_and_its_quarantine_does_not() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        Store::init(dir.path()).expect("a repository");
        let quarantine = dir.path().join(".git").join("objects");
        let store = Store::discover(dir.path())
            .expect("the repository")
            .receiving(Some(&quarantine), &[], &[])
            .expect("a receiving store");
        let alternates = store
            ._quarantine
            .as_ref()
            .expect("alternates")
            .path()
            .to_owned();
        assert!(alternates.exists());
        let caches = (
            std::sync::Arc::downgrade(&store.set_commits),
            std::sync::Arc::downgrade(&store.fresh),
            std::sync::Arc::downgrade(&store.loose),
        );
        let handed = std::sync::Arc::new(());
        store.drop_with_caches(std::sync::Arc::clone(&handed));
        store.leave_caches_to_exit();
        drop(store);
        assert!(caches.0.upgrade().is_some() && caches.1.upgrade().is_some());
        assert!(caches.2.upgrade().is_some(), "every cache is left");
        assert_eq!(
            std::sync::Arc::strong_count(&handed),
            2,
            "what was handed is left too"
        );
        assert!(
            !alternates.exists(),
            "the quarantine's alternates are removed"
        );
    }

    #[test]
    fn control_a_store_dropped_as_usual_frees_its_caches() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::init(dir.path()).expect("a repository");
        let fresh = std::sync::Arc::downgrade(&store.fresh);
        let handed = std::sync::Arc::new(());
        let view = store.view();
        view.drop_with_caches(std::sync::Arc::clone(&handed));
        drop(view);
        assert_eq!(
            std::sync::Arc::strong_count(&handed),
            2,
            "a view's handed value lives as long as the store"
        );
        drop(store);
        assert!(fresh.upgrade().is_none());
        assert_eq!(
            std::sync::Arc::strong_count(&handed),
            1,
            "freed with the store"
        );
    }
}

#[cfg(test)]
mod id_tests {
    use super::{CommitId, TreeId};
    use gix::ObjectId;

    const A: &str = "49a956e1236da21543ba29b304de84b38386755f";
    const B: &str = "aafe7027c07529c993d646f756f8f7e19827a2d5";

    #[test]
    fn an_id_held_inline_reads_and_compares_as_its_hex() {
        let a = CommitId::parse(A).expect("hex");
        let b = CommitId::parse(B).expect("hex");
        assert_eq!(a.as_str(), A);
        assert_eq!(a.to_string(), A);
        assert_eq!(format!("{a:?}"), format!("CommitId({A:?})"));
        // Ordered as their hex strings are, equal only to the same id.
        assert!(a < b && A < B);
        assert_eq!(a, CommitId::from(ObjectId::from_hex(A.as_bytes()).unwrap()));
        assert_ne!(a, b);
        let set: std::collections::HashSet<CommitId> = [a.clone(), b, a.clone()].into();
        assert_eq!(set.len(), 2);
        assert_eq!(a.oid().to_string(), A, "back to the object id");
        let tree = TreeId::parse(B).expect("hex");
        assert_eq!((tree.as_str(), tree.oid().to_string().as_str()), (B, B));
    }

    #[test]
    fn control_what_is_not_an_object_ids_hex_is_not_an_id() {
        for bad in ["", "49a956e1", &A.replace('4', "g"), &format!("{A}0")] {
            assert!(CommitId::parse(bad).is_none(), "{bad:?} read as an id");
            assert!(TreeId::parse(bad).is_none(), "{bad:?} read as a tree id");
        }
    }
}
