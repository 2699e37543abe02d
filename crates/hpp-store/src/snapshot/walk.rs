//! The comparison a snapshot starts from: which tracked files are gone, which may have changed,
//! and which untracked files are not ignored. It is the walk `git status` makes, made the way
//! git makes it, so that it costs what git's costs:
//!
//! - every tracked entry is `lstat`ed by its path on threads of their own, each leading
//!   directory checked once (a directory reached through a symbolic link is refused, as git
//!   refuses such a leading path);
//! - the directories are read once, each name looked up in hash sets of the index's paths and
//!   directories, and only a name the index does not have is matched against the ignore rules
//!   (gix's exclude stack: every `.gitignore` level, `info/exclude`, `core.excludesFile`, and an
//!   excluded directory excluding what it holds), by as many threads as there are cores (git
//!   reads them on one), each holding handles for its directory's ancestors alone.
//!
//! A tracked entry is reported as changed whenever git would not trust its stat (a different
//! stat, a different kind or executable bit, a racily clean stat, intent-to-add); the caller
//! reads and hashes those, and finds for itself which only had their stat touched. A case
//! insensitive file system (`core.ignoreCase`) is left to gix's walk, which knows how to fold
//! names; see [`Walk::applies`].

use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use foldhash::HashMap;
use gix::bstr::{BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stage, Stat, stat};
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{FileStat, SFlag, fstatat};

use super::super::{Error, descriptors, git};

/// Tracked entries one thread `lstat`s, and the most threads a walk starts: git's own numbers
/// for the same work (`preload-index`). Threads wait on the kernel more than they compute, so
/// there are more of them than cores; and on a machine another process keeps busy, a command's
/// share of the cores follows its runnable threads, so a walk with one thread per core queued
/// behind `git status` doing the same work.
const PER_THREAD: usize = 500;
const MAX_THREADS: usize = 20;

/// What the walk found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Walk {
    /// Tracked paths with nothing storable there any more (gone, a directory now, or reached
    /// through a symbolic link).
    pub removed: Vec<BString>,
    /// Tracked paths whose stat git would not trust: to be read and hashed.
    pub changed: Vec<BString>,
    /// Untracked paths that are not ignored, each with whether it is a file or a link (`false`:
    /// a nested repository).
    pub untracked: Vec<(BString, bool)>,
}

/// How tracked entries are compared with what `lstat` says, as the repository configures it.
#[derive(Debug, Clone, Copy)]
struct Compare {
    stat: stat::Options,
    symlinks: bool,
    executable_bit: bool,
    /// The index's timestamp: an entry's stat not older than this is racily clean.
    timestamp: filetime::FileTime,
}

/// A tracked entry's state on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tracked {
    Unchanged,
    Changed,
    Removed,
}

impl Walk {
    /// Whether this walk stands in for gix's in `repo`: not on a case-insensitive file system,
    /// whose name folding it does not do.
    pub fn applies(repo: &gix::Repository) -> bool {
        repo.filesystem_options()
            .is_ok_and(|caps| !caps.ignore_case && !caps.precompose_unicode)
    }

    /// Walks the worktree at `root` against `index`: the tracked entries on threads of
    /// [`PER_THREAD`] entries each (at most [`MAX_THREADS`]), the directories on this one
    /// meanwhile.
    pub fn of(
        repo: &gix::Repository,
        root: &Path,
        index: &gix::index::State,
    ) -> Result<Walk, Error> {
        if let Some(entry) = index
            .entries()
            .iter()
            .find(|e| e.stage() != Stage::Unconflicted)
        {
            return Err(Error::Unmerged {
                path: entry.path(index).to_string(),
            });
        }
        let caps = repo
            .filesystem_options()
            .map_err(git("reading the file system's options"))?;
        let compare = Compare {
            stat: repo
                .stat_options()
                .map_err(git("reading the stat options"))?,
            symlinks: caps.symlink,
            executable_bit: caps.executable_bit,
            timestamp: index.timestamp(),
        };
        let root_fd = openat(
            nix::fcntl::AT_FDCWD,
            root,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(|errno| io(format!("opening the worktree {}", root.display()), errno))?;

        let entries = index.entries().len();
        let chunks = (entries / PER_THREAD).clamp(1, MAX_THREADS);
        let per_chunk = entries.div_ceil(chunks).max(1);
        let ranges: Vec<Range<usize>> = (0..entries)
            .step_by(per_chunk)
            .map(|start| start..(start + per_chunk).min(entries))
            .collect();

        let (tracked, untracked) = std::thread::scope(|scope| {
            let root_fd = root_fd.as_fd();
            let handles: Vec<_> = ranges
                .into_iter()
                .map(|range| scope.spawn(move || tracked(root_fd, index, range, compare)))
                .collect();
            let plan = descriptors::walk_plan(descriptors::limit(), descriptors::MAX_WALKERS);
            let untracked = untracked(repo, root, root_fd, plan, index);
            let tracked: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().expect("a stat worker does not panic"))
                .collect();
            (tracked, untracked)
        });
        let mut walk = Walk {
            untracked: untracked?,
            ..Walk::default()
        };
        for part in tracked {
            let (removed, changed) = part?;
            walk.removed.extend(removed);
            walk.changed.extend(changed);
        }
        Ok(walk)
    }
}

/// The error for `errno` met while `what`: running out of descriptors says so, with the limit.
fn io(what: String, errno: Errno) -> Error {
    if descriptors::exhausted(errno) {
        return Error::TooManyOpenFiles {
            what,
            limit: descriptors::limit(),
        };
    }
    Error::Io {
        what,
        source: std::io::Error::from(errno),
    }
}

/// A path's directory and last component.
fn split(path: &[u8]) -> (&[u8], &[u8]) {
    match path.rfind_byte(b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[], path),
    }
}

/// Open handles on the directories from the worktree's root down to the last one asked for,
/// so that consecutive entries of one directory (the index is sorted) share its handle, and a
/// sibling or a child directory costs one open. Not every component keeps its handle: the
/// first `top` do, and the `bottom` above the last, and the last. So the handles a chain holds
/// are bounded whatever the tree's width or depth; going down a deep chain still costs one
/// open a level, and a directory whose ancestors let theirs go is reached again from the
/// deepest one that kept it.
///
/// The untracked walk lists each directory through the chain's own handle, so a directory is
/// opened once whether it is listed or only passed through.
struct Dirs<'root> {
    root: BorrowedFd<'root>,
    /// How a component is opened in its parent.
    flags: OFlag,
    /// How many leading components keep their handle.
    top: usize,
    /// How many components above the last keep theirs.
    bottom: usize,
    /// The components of `path`, each with its name's end in `path` and its handle, if kept.
    open: Vec<(usize, Option<OwnedFd>)>,
    /// The directory the handles reach, without a trailing slash.
    path: Vec<u8>,
}

impl<'root> Dirs<'root> {
    /// A chain under `root` that keeps `keep` ancestors of its last component open (at least
    /// one), the first half of them at the top and the rest just above the last.
    fn new(root: BorrowedFd<'root>, flags: OFlag, keep: usize) -> Self {
        let keep = keep.max(1);
        let top = keep.div_ceil(2);
        Dirs {
            root,
            flags,
            top,
            bottom: keep - top,
            open: Vec::new(),
            path: Vec::new(),
        }
    }

    /// The handle of the deepest component that has one (the root when none has).
    fn deepest(&self) -> BorrowedFd<'_> {
        self.open
            .iter()
            .rev()
            .find_map(|(_, handle)| handle.as_ref())
            .map_or(self.root, |handle| handle.as_fd())
    }

    /// Moves the chain to the directory `dir` (a relative path, empty for the root) and
    /// returns its handle. Each component is opened without following a symbolic link: a file
    /// behind one is not the tracked file (git's `has_symlink_leading_path`), and the error says
    /// so (`ELOOP` or `ENOTDIR`). On an error, `path` is the deepest directory reached.
    fn at(&mut self, dir: &[u8]) -> Result<BorrowedFd<'_>, Errno> {
        if dir != self.path.as_slice() {
            // Keep the components both paths share, back to the deepest with a handle; open
            // the rest.
            let mut share = 0;
            for (end, _) in &self.open {
                let end = *end;
                if dir.len() >= end
                    && dir[..end] == self.path[..end]
                    && (dir.len() == end || dir[end] == b'/')
                {
                    share += 1;
                } else {
                    break;
                }
            }
            self.open.truncate(share);
            while self.open.last().is_some_and(|(_, handle)| handle.is_none()) {
                self.open.pop();
            }
            let mut start = self.open.last().map_or(0, |(end, _)| *end + 1);
            self.path.clear();
            self.path.extend_from_slice(&dir[..start.saturating_sub(1)]);
            while start < dir.len() {
                let end = dir[start..]
                    .find_byte(b'/')
                    .map_or(dir.len(), |i| start + i);
                let handle = openat(
                    self.deepest(),
                    &dir[start..end],
                    self.flags,
                    nix::sys::stat::Mode::empty(),
                )?;
                // The component that leaves the window above the last lets its handle go,
                // unless it is one of the first `top`.
                if let Some(leaving) = self.open.len().checked_sub(self.bottom + 1)
                    && leaving >= self.top
                {
                    self.open[leaving].1 = None;
                }
                if !self.path.is_empty() {
                    self.path.push(b'/');
                }
                self.path.extend_from_slice(&dir[start..end]);
                self.open.push((end, Some(handle)));
                start = end + 1;
            }
        }
        Ok(self.deepest())
    }

    /// How many handles the chain holds.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.open
            .iter()
            .filter(|(_, handle)| handle.is_some())
            .count()
    }
}

/// The leading directories of the tracked entries a stat thread reads, checked as git checks
/// them (`has_symlink_leading_path`): each component `lstat`ed once, when the thread's entries
/// (sorted) first reach it, and found to be a directory, not a symbolic link to one. An entry
/// is then `lstat`ed by its path from the worktree's root: no handle held, so a stat thread
/// costs no descriptor, and a directory costs one `lstat`, where opening it cost two calls.
struct Leading<'root> {
    root: BorrowedFd<'root>,
    /// The deepest directory found real, without a trailing slash (empty: the root).
    verified: Vec<u8>,
}

impl<'root> Leading<'root> {
    fn new(root: BorrowedFd<'root>) -> Self {
        Leading {
            root,
            verified: Vec::new(),
        }
    }

    /// Checks that every component of `dir` is a directory: `ENOENT` when one is missing,
    /// `ELOOP` when one is a symbolic link, `ENOTDIR` when one is something else. On an error,
    /// `verified` is the deepest directory reached.
    fn check(&mut self, dir: &[u8]) -> Result<(), Errno> {
        if dir == self.verified.as_slice() {
            return Ok(());
        }
        // The components both paths share stay checked.
        let common = dir
            .iter()
            .zip(&self.verified)
            .take_while(|(a, b)| a == b)
            .count();
        let boundary = |path: &[u8]| path.len() == common || path[common] == b'/';
        let shared = if boundary(dir) && boundary(&self.verified) {
            common
        } else {
            dir[..common].rfind_byte(b'/').unwrap_or(0)
        };
        self.verified.truncate(shared);
        let mut start = if shared == 0 { 0 } else { shared + 1 };
        while start < dir.len() {
            let end = dir[start..]
                .find_byte(b'/')
                .map_or(dir.len(), |i| start + i);
            let st = fstatat(self.root, &dir[..end], AtFlags::AT_SYMLINK_NOFOLLOW)?;
            match kind_of(&st) {
                SFlag::S_IFDIR => {}
                SFlag::S_IFLNK => return Err(Errno::ELOOP),
                _ => return Err(Errno::ENOTDIR),
            }
            self.verified.truncate(0);
            self.verified.extend_from_slice(&dir[..end]);
            start = end + 1;
        }
        Ok(())
    }
}

/// How a directory is opened to read its names (and those of its subdirectories): never
/// through a symbolic link.
const DIR_FOR_LISTING: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// The stat gix records for what `lstat` returned (`gix_index::entry::Stat::from_fs`): times
/// before the epoch or past 2106 are zero, the rest truncated to 32 bits as git does.
pub(super) fn stat_of(st: &FileStat) -> Stat {
    let time = |secs: i64, nsecs: i64| match (u32::try_from(secs), u32::try_from(nsecs)) {
        (Ok(secs), Ok(nsecs)) => stat::Time { secs, nsecs },
        _ => stat::Time::default(),
    };
    Stat {
        mtime: time(st.st_mtime, st.st_mtime_nsec),
        ctime: time(st.st_ctime, st.st_ctime_nsec),
        dev: st.st_dev as u32,
        ino: st.st_ino as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        size: st.st_size as u32,
    }
}

fn kind_of(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

/// `entry`'s state, given what `lstat` says is at its path. This is gix's (and git's) rule for
/// trusting an entry by its stat; anything it would not trust is `Changed`.
fn compare(entry: &gix::index::Entry, st: &FileStat, how: Compare) -> Tracked {
    let kind = kind_of(st);
    let is_dir = kind == SFlag::S_IFDIR;
    if entry.mode.is_submodule() {
        // A checked-out submodule's HEAD is read by the caller; a file in its place is stored.
        return if is_dir {
            Tracked::Unchanged
        } else {
            Tracked::Changed
        };
    }
    if is_dir {
        return Tracked::Removed;
    }
    if entry.flags.contains(Flags::INTENT_TO_ADD) {
        return Tracked::Changed;
    }
    let is_file = kind == SFlag::S_IFREG;
    let is_link = kind == SFlag::S_IFLNK;
    let executable = st.st_mode & 0o100 != 0;
    if entry
        .mode
        .change_to_match_fs_with_values(
            is_file,
            is_dir,
            is_link,
            executable,
            how.symlinks,
            how.executable_bit,
        )
        .is_some()
    {
        return Tracked::Changed;
    }
    let now = stat_of(st);
    // A zero size with a non-empty blob is how git marks an entry it once found racily clean.
    let trusted = now.matches(&entry.stat, how.stat)
        && (!entry.id.is_empty_blob() || entry.stat.size == 0)
        && !now.is_racy(how.timestamp, how.stat);
    if trusted {
        Tracked::Unchanged
    } else {
        Tracked::Changed
    }
}

/// The tracked entries in `range` of `index` that are gone or changed.
fn tracked(
    root: BorrowedFd<'_>,
    index: &gix::index::State,
    range: Range<usize>,
    how: Compare,
) -> Result<(Vec<BString>, Vec<BString>), Error> {
    let mut removed = Vec::new();
    let mut changed = Vec::new();
    let mut leading = Leading::new(root);
    // A directory that is not there (or not a directory): every entry below it is gone too.
    let mut missing: Option<Vec<u8>> = None;
    for entry in &index.entries()[range] {
        if entry.flags.intersects(
            Flags::UPTODATE | Flags::SKIP_WORKTREE | Flags::ASSUME_VALID | Flags::FSMONITOR_VALID,
        ) {
            continue;
        }
        let path = entry.path(index);
        let (dir, _) = split(path);
        let below = |m: &[u8]| dir.starts_with(m) && (dir.len() == m.len() || dir[m.len()] == b'/');
        if missing.as_deref().is_some_and(below) {
            removed.push(path.to_owned());
            continue;
        }
        match leading.check(dir) {
            Ok(()) => {}
            Err(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP) => {
                // The first component that is not a directory, and all below it, are gone.
                let reached = leading.verified.len();
                let from = if reached == 0 { 0 } else { reached + 1 };
                let end = dir[from..].find_byte(b'/').map_or(dir.len(), |i| from + i);
                missing = Some(dir[..end].to_vec());
                removed.push(path.to_owned());
                continue;
            }
            Err(errno) => {
                return Err(io(
                    format!("reading the worktree at {}", dir.as_bstr()),
                    errno,
                ));
            }
        };
        let state = match fstatat(root, path.as_bytes(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => compare(entry, &st, how),
            Err(Errno::ENOENT | Errno::ENOTDIR) => Tracked::Removed,
            Err(errno) => {
                return Err(io(
                    format!("reading the worktree at {}", path.as_bstr()),
                    errno,
                ));
            }
        };
        match state {
            Tracked::Unchanged => {}
            Tracked::Changed => changed.push(path.to_owned()),
            Tracked::Removed => removed.push(path.to_owned()),
        }
    }
    Ok((removed, changed))
}

/// What the index holds directly in one directory: its files (each with whether it is a
/// gitlink) and its subdirectories (each with its entries' range in the index).
#[derive(Default)]
struct Children<'a> {
    files: HashMap<&'a [u8], bool>,
    dirs: HashMap<&'a [u8], Range<usize>>,
}

impl<'a> Children<'a> {
    /// Reads the children of the directory whose entries are `range` of `index`, each path
    /// starting with the directory's own and a slash (`skip` bytes; none for the root). The
    /// index is sorted, so a subdirectory's entries are contiguous and skipped at once.
    fn read(&mut self, index: &'a gix::index::State, range: Range<usize>, skip: usize) {
        self.files.clear();
        self.dirs.clear();
        let entries = index.entries();
        let mut i = range.start;
        while i < range.end {
            let path: &[u8] = entries[i].path(index);
            let rest = &path[skip..];
            match rest.find_byte(b'/') {
                None => {
                    self.files.insert(rest, entries[i].mode.is_submodule());
                    i += 1;
                }
                Some(slash) => {
                    let prefix = &path[..skip + slash + 1];
                    let end = i + entries[i..range.end]
                        .partition_point(|e| e.path(index).starts_with(prefix));
                    self.dirs.insert(&rest[..slash], i..end);
                    i = end;
                }
            }
        }
    }
}

/// A directory's entries in the index (`None`: it holds none).
type InIndex = Option<Range<usize>>;

/// A directory to read next: its path and its entries in the index.
type Subdir = (Vec<u8>, InIndex);

/// The untracked, not ignored files under `root` (and nested repositories, which `git add -A`
/// records as gitlinks), read directory by directory as git reads them, sorted by path. Each
/// directory's names are looked up among what the index holds in that directory alone: a small
/// table, built from the index's contiguous slice for it, instead of one of every path.
///
/// The root is read on this thread; when it has more than one directory to read below it, up
/// to `plan.walkers - 1` more threads (one a core) share the rest, a stack of directories to
/// read by name, each with its own chain of at most `plan.keep` ancestors' handles and its own
/// ignore-rule stack. A wide tree then costs its directories' listings spread over the cores,
/// where git lists them on one.
fn untracked(
    repo: &gix::Repository,
    root: &Path,
    root_fd: BorrowedFd<'_>,
    plan: descriptors::WalkPlan,
    index: &gix::index::State,
) -> Result<Vec<(BString, bool)>, Error> {
    let own_git_dir = std::fs::canonicalize(repo.git_dir()).ok();
    let queue = Queue::default();
    let mut first = Walker::new(
        repo,
        root,
        root_fd,
        plan.keep,
        index,
        own_git_dir.as_deref(),
    )?;
    let below = first.read(&[], Some(0..index.entries().len()))?;
    // A core a walker: the cores are counted (which reads the control groups) only when there
    // is more than one directory to share.
    let helpers = if below.len() > 1 {
        plan.walkers.min(descriptors::cores()) - 1
    } else {
        0
    };
    queue.push(below);

    let mut found = std::thread::scope(|scope| {
        let own_git_dir = own_git_dir.as_deref();
        let queue = &queue;
        let handles: Vec<_> = (0..helpers)
            .map(|_| {
                let repo = repo.clone();
                scope.spawn(move || {
                    Walker::new(&repo, root, root_fd, plan.keep, index, own_git_dir)
                        .and_then(|walker| walker.run(queue))
                })
            })
            .collect();
        let mut found = first.run(queue);
        for handle in handles {
            let theirs = handle.join().expect("a directory walker does not panic");
            found = match (found, theirs) {
                (Ok(mut ours), Ok(theirs)) => {
                    ours.extend(theirs);
                    Ok(ours)
                }
                (Err(error), _) | (_, Err(error)) => Err(error),
            };
        }
        found
    })?;
    found.sort_unstable();
    Ok(found)
}

/// The directories still to read, shared by the walkers: a stack (a walker alone reads the tree
/// depth first, in the index's order), and how many walkers are reading one now (the walk is
/// over when none is and none is left).
#[derive(Default)]
struct Queue {
    state: std::sync::Mutex<QueueState>,
    more: std::sync::Condvar,
}

#[derive(Default)]
struct QueueState {
    pending: Vec<Subdir>,
    busy: usize,
    /// A walker failed: the others stop at their next directory.
    stopped: bool,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds a directory's subdirectories, to be read first to last.
    fn push(&self, subdirs: Vec<Subdir>) {
        let mut state = self.lock();
        state.pending.extend(subdirs.into_iter().rev());
    }

    /// The next directory to read, waiting while others still read theirs; `None` when the
    /// walk is over (or stopped).
    fn next(&self) -> Option<Subdir> {
        let mut state = self.lock();
        loop {
            if state.stopped {
                return None;
            }
            if let Some(dir) = state.pending.pop() {
                state.busy += 1;
                return Some(dir);
            }
            if state.busy == 0 {
                return None;
            }
            state = self
                .more
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// A walker read its directory, which holds `subdirs`.
    fn done(&self, subdirs: Vec<Subdir>) {
        let mut state = self.lock();
        state.busy -= 1;
        let wake = !subdirs.is_empty() || state.busy == 0;
        state.pending.extend(subdirs.into_iter().rev());
        drop(state);
        if wake {
            self.more.notify_all();
        }
    }

    /// A walker failed: every other stops.
    fn stop(&self) {
        self.lock().stopped = true;
        self.more.notify_all();
    }
}

/// One thread's part of the untracked walk: its chain of directory handles, its listing buffer
/// and ignore-rule stack, and what it found.
struct Walker<'a, 'repo> {
    root: &'a Path,
    index: &'a gix::index::State,
    own_git_dir: Option<&'a Path>,
    excludes: gix::AttributeStack<'repo>,
    dirs: Dirs<'a>,
    buffer: Vec<std::mem::MaybeUninit<u8>>,
    path: Vec<u8>,
    children: Children<'a>,
    found: Vec<(BString, bool)>,
}

impl<'a, 'repo> Walker<'a, 'repo> {
    fn new(
        repo: &'repo gix::Repository,
        root: &'a Path,
        root_fd: BorrowedFd<'a>,
        keep: usize,
        index: &'a gix::index::State,
        own_git_dir: Option<&'a Path>,
    ) -> Result<Self, Error> {
        let excludes = repo
            .excludes(
                index,
                None,
                gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
            )
            .map_err(git("reading the ignore rules"))?;
        Ok(Walker {
            root,
            index,
            own_git_dir,
            excludes,
            // Directories are kept by name until read: a directory is opened when it is read,
            // through the handles of its ancestors, so the handles held grow with the depth,
            // not the width.
            dirs: Dirs::new(root_fd, DIR_FOR_LISTING, keep),
            buffer: Listing::buffer(),
            path: Vec::new(),
            children: Children::default(),
            found: Vec::new(),
        })
    }

    /// Reads directories from `queue` until the walk is over; what this walker found.
    fn run(mut self, queue: &Queue) -> Result<Vec<(BString, bool)>, Error> {
        // A walker that panics mid-directory would leave the others waiting for what it holds:
        // it stops them instead, and the panic reaches the caller when the threads are joined.
        struct StopOnPanic<'q>(&'q Queue);
        impl Drop for StopOnPanic<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.stop();
                }
            }
        }
        let _stop = StopOnPanic(queue);
        while let Some((dir, range)) = queue.next() {
            match self.read(&dir, range) {
                Ok(subdirs) => queue.done(subdirs),
                Err(error) => {
                    queue.stop();
                    return Err(error);
                }
            }
        }
        Ok(self.found)
    }

    /// Reads the directory `dir` (whose entries in the index are `range`), keeps its untracked
    /// files and nested repositories, and returns its subdirectories to read.
    fn read(&mut self, dir: &[u8], range: InIndex) -> Result<Vec<Subdir>, Error> {
        let Walker {
            root,
            index,
            own_git_dir,
            excludes,
            dirs,
            buffer,
            path,
            children,
            found,
        } = self;
        let mut is_excluded = |path: &[u8], is_dir: bool| -> Result<bool, Error> {
            let mode = if is_dir { Mode::DIR } else { Mode::FILE };
            Ok(excludes
                .at_entry(path.as_bstr(), Some(mode))
                .map_err(git(format!(
                    "matching {} against the ignore rules",
                    path.as_bstr()
                )))?
                .is_excluded())
        };
        let mut subdirs: Vec<Subdir> = Vec::new();
        let handle = match dirs.at(dir) {
            Ok(handle) => handle,
            // Gone since it was listed, or unreadable: git warns and goes on without it.
            Err(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP | Errno::EACCES)
                if !dir.is_empty() =>
            {
                return Ok(subdirs);
            }
            Err(errno) => {
                return Err(io(
                    format!("reading the directory {}", dir.as_bstr()),
                    errno,
                ));
            }
        };
        match &range {
            Some(range) => children.read(
                index,
                range.clone(),
                dir.len() + usize::from(!dir.is_empty()),
            ),
            None => {
                children.files.clear();
                children.dirs.clear();
            }
        }
        // Names the directory listing gave no type for: `lstat`ed once the listing is read.
        let mut unknown: Vec<Vec<u8>> = Vec::new();
        let mut visit = |name: &[u8], kind: SFlag, subdirs: &mut Vec<Subdir>| {
            path.clear();
            if !dir.is_empty() {
                path.extend_from_slice(dir);
                path.push(b'/');
            }
            path.extend_from_slice(name);
            if kind == SFlag::S_IFDIR {
                if children.files.get(name) == Some(&true) {
                    return Ok(()); // a submodule: the caller reads its HEAD
                }
                let tracked = children.dirs.get(name).cloned();
                if tracked.is_none() {
                    if is_excluded(path, true)? {
                        return Ok(());
                    }
                    if is_nested_repository(root, path, *own_git_dir) {
                        found.push((BString::from(path.as_slice()), false));
                        return Ok(());
                    }
                }
                subdirs.push((path.clone(), tracked));
            } else if (kind == SFlag::S_IFREG || kind == SFlag::S_IFLNK)
                && !children.files.contains_key(name)
                && !is_excluded(path, false)?
            {
                found.push((BString::from(path.as_slice()), true));
            }
            Ok::<_, Error>(())
        };
        Listing::read(handle, buffer, |name, kind| {
            if matches!(name, b"." | b".." | b".git") {
                return Ok(());
            }
            match kind {
                Some(kind @ (SFlag::S_IFDIR | SFlag::S_IFREG | SFlag::S_IFLNK)) => {
                    visit(name, kind, &mut subdirs)
                }
                Some(_) => Ok(()), // fifos, sockets, devices: git stores none of them
                None => {
                    unknown.push(name.to_vec());
                    Ok(())
                }
            }
        })
        .map_err(|failed| match failed {
            Listed::Os(errno) => io(format!("reading the directory {}", dir.as_bstr()), errno),
            Listed::Visit(error) => error,
        })?;
        for name in unknown {
            if let Ok(st) = fstatat(handle, name.as_slice(), AtFlags::AT_SYMLINK_NOFOLLOW) {
                visit(&name, kind_of(&st), &mut subdirs)?;
            }
        }
        Ok(subdirs)
    }
}

/// Why a directory's listing stopped: the system failed, or what was done with a name did.
enum Listed {
    Os(Errno),
    Visit(Error),
}

impl From<Error> for Listed {
    fn from(error: Error) -> Self {
        Listed::Visit(error)
    }
}

/// A directory's names read through a handle the caller keeps (it opens the subdirectories
/// through it next), with the kind the listing gives each (`None`: unknown, `lstat` it).
struct Listing;

impl Listing {
    /// The buffer a walk reads every directory's entries into.
    fn buffer() -> Vec<std::mem::MaybeUninit<u8>> {
        vec![std::mem::MaybeUninit::uninit(); 32 * 1024]
    }

    /// Reads the names of the directory open as `dir` (from its start: the handle was just
    /// opened, or is the worktree's root, read once) into `each`. On Linux by `getdents64`
    /// straight into `buffer`: no directory stream to set up, nothing allocated per name, no
    /// system call beyond the reads.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn read(
        dir: BorrowedFd<'_>,
        buffer: &mut [std::mem::MaybeUninit<u8>],
        mut each: impl FnMut(&[u8], Option<SFlag>) -> Result<(), Error>,
    ) -> Result<(), Listed> {
        use rustix::fs::FileType;
        let mut raw = rustix::fs::RawDir::new(dir, buffer);
        while let Some(entry) = raw.next() {
            let entry = entry.map_err(|e| Listed::Os(Errno::from_raw(e.raw_os_error())))?;
            let kind = match entry.file_type() {
                FileType::Directory => Some(SFlag::S_IFDIR),
                FileType::RegularFile => Some(SFlag::S_IFREG),
                FileType::Symlink => Some(SFlag::S_IFLNK),
                FileType::Unknown => None,
                _ => Some(SFlag::S_IFIFO),
            };
            each(entry.file_name().to_bytes(), kind)?;
        }
        Ok(())
    }

    /// Reads the names of the directory open as `dir` into `each`: elsewhere through a
    /// directory stream on a duplicate of the handle.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn read(
        dir: BorrowedFd<'_>,
        _buffer: &mut [std::mem::MaybeUninit<u8>],
        mut each: impl FnMut(&[u8], Option<SFlag>) -> Result<(), Error>,
    ) -> Result<(), Listed> {
        let own = dir
            .try_clone_to_owned()
            .map_err(|e| Listed::Os(Errno::from_raw(e.raw_os_error().unwrap_or(0))))?;
        let mut stream = nix::dir::Dir::from_fd(own).map_err(Listed::Os)?;
        for entry in stream.iter() {
            let entry = entry.map_err(Listed::Os)?;
            let kind = match entry.file_type() {
                Some(nix::dir::Type::Directory) => Some(SFlag::S_IFDIR),
                Some(nix::dir::Type::File) => Some(SFlag::S_IFREG),
                Some(nix::dir::Type::Symlink) => Some(SFlag::S_IFLNK),
                Some(_) => Some(SFlag::S_IFIFO),
                None => None,
            };
            each(entry.file_name().to_bytes(), kind)?;
        }
        Ok(())
    }
}

/// Whether the untracked directory `path` is the worktree of another repository (its `.git`
/// is a repository that is not this one's), which `git add -A` records as a gitlink.
fn is_nested_repository(root: &Path, path: &[u8], own: Option<&Path>) -> bool {
    let rel = std::ffi::OsStr::from_bytes(path);
    let dot_git = root.join(rel).join(".git");
    if gix::discover::is_git(&dot_git).is_err() {
        return false;
    }
    own.is_none_or(|own| std::fs::canonicalize(&dot_git).ok().as_deref() != Some(own))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(path: &Path) -> (Stat, Stat) {
        let ours = stat_of(
            &fstatat(nix::fcntl::AT_FDCWD, path, AtFlags::AT_SYMLINK_NOFOLLOW).expect("lstat"),
        );
        let theirs = Stat::from_fs(
            &gix::index::fs::Metadata::from_path_no_follow(path).expect("gix's lstat"),
        )
        .expect("a stat after the epoch");
        (ours, theirs)
    }

    #[test]
    fn a_stat_is_read_as_gix_records_it_in_the_index() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("file");
        std::fs::write(&file, "some bytes\n").expect("writable");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("file", &link).expect("symlinks can be made");
        for path in [&file, &link] {
            let (ours, theirs) = both(path);
            assert_eq!(ours, theirs, "{}", path.display());
        }
    }

    #[test]
    fn control_two_files_have_different_stats() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "a\n").expect("writable");
        std::fs::write(&b, "bb\n").expect("writable");
        assert_ne!(both(&a).0, both(&b).0, "inode and size tell them apart");
    }

    #[test]
    fn the_handles_follow_the_index_order_and_refuse_a_linked_directory() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b/c")).expect("writable");
        std::fs::create_dir_all(root.join("a/d")).expect("writable");
        std::os::unix::fs::symlink("b", root.join("a/link")).expect("symlinks can be made");
        let root_fd = std::fs::File::open(root).expect("the root opens");
        let mut dirs = Dirs::new(root_fd.as_fd(), DIR_FOR_LISTING, descriptors::KEEP);
        for path in ["a/b/c", "a/b", "a/d", "", "a/b/c", "a"] {
            dirs.at(path.as_bytes())
                .expect("an existing directory opens");
            assert_eq!(dirs.path, path.as_bytes(), "the handles reach {path}");
            assert_eq!(
                dirs.open.len(),
                path.split('/').filter(|c| !c.is_empty()).count()
            );
        }
        let refused = dirs
            .at(b"a/link")
            .expect_err("a linked directory is refused");
        assert!(
            matches!(refused, Errno::ELOOP | Errno::ENOTDIR),
            "{refused}"
        );
        assert!(matches!(dirs.at(b"a/none/x"), Err(Errno::ENOENT)));
        dirs.at(b"a/b")
            .expect("the handles recover after a refusal");
        assert_eq!(dirs.path, b"a/b");
    }

    #[test]
    fn leading_directories_are_checked_once_each_and_a_linked_one_is_refused() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b/c")).expect("writable");
        std::fs::create_dir_all(root.join("a/d")).expect("writable");
        std::fs::write(root.join("a/file"), "f").expect("writable");
        std::os::unix::fs::symlink("b", root.join("a/link")).expect("symlinks can be made");
        let root_fd = std::fs::File::open(root).expect("the root opens");
        let mut leading = Leading::new(root_fd.as_fd());
        for path in ["a/b/c", "a/b", "a/d", "", "a/b/c", "a"] {
            leading
                .check(path.as_bytes())
                .expect("real directories pass");
            assert_eq!(leading.verified, path.as_bytes());
        }
        assert_eq!(leading.check(b"a/link/c"), Err(Errno::ELOOP));
        assert_eq!(leading.verified, b"a", "the deepest directory reached");
        assert_eq!(leading.check(b"a/file/x"), Err(Errno::ENOTDIR));
        assert_eq!(leading.check(b"a/none/x"), Err(Errno::ENOENT));
        leading.check(b"a/b").expect("it recovers after a refusal");
        assert_eq!(leading.verified, b"a/b");
    }

    #[test]
    fn control_a_path_through_a_link_resolves_for_lstat_which_is_why_leading_dirs_are_checked() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(dir.path().join("real")).expect("writable");
        std::fs::write(dir.path().join("real/f"), "f").expect("writable");
        std::os::unix::fs::symlink("real", dir.path().join("link")).expect("a symlink");
        let root_fd = std::fs::File::open(dir.path()).expect("the root opens");
        // lstat alone follows the leading link and finds the file behind it.
        assert!(fstatat(root_fd.as_fd(), "link/f", AtFlags::AT_SYMLINK_NOFOLLOW).is_ok());
        assert_eq!(
            Leading::new(root_fd.as_fd()).check(b"link"),
            Err(Errno::ELOOP)
        );
    }

    /// A chain of `depth` nested directories `d0/d1/...` under a new temporary directory, each
    /// with a sibling `s<i>` beside it.
    fn deep(depth: usize) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut paths = Vec::new();
        let mut path = String::new();
        for i in 0..depth {
            let sibling = if path.is_empty() {
                format!("s{i}")
            } else {
                format!("{path}/s{i}")
            };
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(&format!("d{i}"));
            std::fs::create_dir_all(dir.path().join(&path)).expect("writable");
            std::fs::create_dir_all(dir.path().join(&sibling)).expect("writable");
            paths.push(path.clone());
            paths.push(sibling);
        }
        (dir, paths)
    }

    #[test]
    fn a_deep_chain_holds_a_window_of_its_components_whatever_the_depth() {
        let (dir, paths) = deep(40);
        let root_fd = std::fs::File::open(dir.path()).expect("the root opens");
        for keep in [1, 3, descriptors::KEEP] {
            let mut dirs = Dirs::new(root_fd.as_fd(), DIR_FOR_LISTING, keep);
            // Down the chain, each level's sibling, then back up: every move lands where asked,
            // and going straight down fills the window (each level one open).
            for (i, path) in paths.iter().chain(paths.iter().rev()).enumerate() {
                dirs.at(path.as_bytes())
                    .expect("an existing directory opens");
                assert_eq!(dirs.path, path.as_bytes());
                let depth = path.split('/').count();
                assert!(
                    dirs.held() <= keep + 1,
                    "{} handles at depth {depth} with keep {keep}",
                    dirs.held()
                );
                if i < paths.len() && !path.contains('s') {
                    assert_eq!(dirs.held(), depth.min(keep + 1), "at {path}");
                }
            }
            // The handle reached is the directory asked for: its sibling is there by name.
            let last = paths
                .iter()
                .rev()
                .find(|p| p.contains("d39"))
                .expect("the deepest");
            let fd = dirs.at(last.as_bytes()).expect("it opens");
            assert!(fstatat(fd, "s39", AtFlags::AT_SYMLINK_NOFOLLOW).is_err());
            let parent = &last[..last.rfind('/').expect("nested")];
            let fd = dirs.at(parent.as_bytes()).expect("it opens");
            assert!(fstatat(fd, "s39", AtFlags::AT_SYMLINK_NOFOLLOW).is_ok());
        }
    }

    #[test]
    fn control_a_chain_that_kept_every_component_would_hold_the_whole_depth() {
        let (dir, paths) = deep(40);
        let root_fd = std::fs::File::open(dir.path()).expect("the root opens");
        let mut dirs = Dirs::new(root_fd.as_fd(), DIR_FOR_LISTING, 64);
        let deepest = paths
            .iter()
            .rev()
            .find(|p| p.contains("d39"))
            .expect("the deepest");
        dirs.at(deepest.as_bytes()).expect("it opens");
        assert_eq!(dirs.held(), 40, "a keep of 64 keeps all 40");
    }

    #[test]
    fn a_component_that_became_a_link_is_refused_when_reached_again_from_a_kept_one() {
        let (dir, paths) = deep(6);
        let root_fd = std::fs::File::open(dir.path()).expect("the root opens");
        let mut dirs = Dirs::new(root_fd.as_fd(), DIR_FOR_LISTING, 1);
        let deepest = paths
            .iter()
            .rev()
            .find(|p| p.contains("d5"))
            .expect("the deepest");
        dirs.at(deepest.as_bytes()).expect("it opens");
        // d0/d1/d2 is not kept (keep 1): replace it with a link to its sibling directory.
        let d2 = dir.path().join("d0/d1/d2");
        std::fs::rename(&d2, dir.path().join("moved")).expect("writable");
        std::os::unix::fs::symlink(dir.path().join("moved"), &d2).expect("a symlink");
        let sibling = format!("{}/s5", &deepest[..deepest.rfind('/').expect("nested")]);
        let refused = dirs
            .at(sibling.as_bytes())
            .expect_err("a link on the way is refused");
        assert!(
            matches!(refused, Errno::ELOOP | Errno::ENOTDIR),
            "{refused}"
        );
        assert_eq!(dirs.path, b"d0/d1", "the deepest directory reached");
    }

    /// An index of `paths` (each file holding its own name), as git writes it.
    fn index_of(paths: &[&str]) -> (tempfile::TempDir, gix::index::File) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        crate::testing::git(dir.path(), &["init", "-q"]);
        for path in paths {
            let file = dir.path().join(path);
            std::fs::create_dir_all(file.parent().expect("a parent")).expect("writable");
            std::fs::write(&file, path).expect("writable");
        }
        crate::testing::git(dir.path(), &["add", "-A"]);
        let repo = gix::open(dir.path()).expect("the repository opens");
        let index = repo.open_index().expect("the index reads");
        (dir, index)
    }

    #[test]
    fn a_directory_reads_its_own_files_and_subdirectories_from_the_sorted_index() {
        // In the index "b-c" and "b.txt" sort before "b/x" ('-' and '.' come before '/'),
        // so a subdirectory's entries sit between files of its parent.
        let (_dir, index) = index_of(&["a", "b-c", "b.txt", "b/x", "b/y/z", "b/y0", "c"]);
        let mut children = Children::default();
        children.read(&index, 0..index.entries().len(), 0);
        let mut files: Vec<_> = children.files.keys().map(|f| f.as_bstr()).collect();
        files.sort();
        assert_eq!(files, ["a", "b-c", "b.txt", "c"]);
        assert_eq!(children.dirs.len(), 1);
        let b = children.dirs[b"b".as_slice()].clone();
        let under: Vec<_> = index.entries()[b.clone()]
            .iter()
            .map(|e| e.path(&index).to_string())
            .collect();
        assert_eq!(under, ["b/x", "b/y/z", "b/y0"]);
        children.read(&index, b, 2);
        let mut files: Vec<_> = children.files.keys().map(|f| f.as_bstr()).collect();
        files.sort();
        assert_eq!(files, ["x", "y0"]);
        assert_eq!(
            children
                .dirs
                .keys()
                .map(|d| d.as_bstr())
                .collect::<Vec<_>>(),
            ["y"]
        );
    }

    /// A tree with untracked files at every depth, beside tracked ones, in ignored and
    /// untracked directories; and what `git ls-files --others --exclude-standard` says of it.
    fn untracked_tree() -> (tempfile::TempDir, Vec<String>) {
        let (dir, _) = index_of(&["README", "a/kept.txt", "b/c/kept.txt"]);
        std::fs::write(dir.path().join(".gitignore"), "*.log\nbuild/\n").expect("writable");
        for i in 0..40 {
            for path in [
                format!("w{i}/new.txt"),
                format!("w{i}/deeper/new-{i}.txt"),
                format!("w{i}/skip.log"),
                format!("w{i}/build/out.o"),
            ] {
                let file = dir.path().join(path);
                std::fs::create_dir_all(file.parent().expect("a parent")).expect("writable");
                std::fs::write(&file, "x").expect("writable");
            }
        }
        std::fs::write(dir.path().join("b/c/new.txt"), "x").expect("writable");
        let out = std::process::Command::new("git")
            .current_dir(dir.path())
            .args(["ls-files", "-z", "--others", "--exclude-standard"])
            .output()
            .expect("git runs");
        let mut theirs: Vec<String> = String::from_utf8(out.stdout)
            .expect("utf-8 paths")
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        theirs.sort();
        (dir, theirs)
    }

    fn untracked_with(root: &Path, walkers: usize) -> Vec<String> {
        let repo = gix::open(root).expect("the repository opens");
        let index = repo.open_index().expect("the index reads");
        let root_fd = openat(
            nix::fcntl::AT_FDCWD,
            root,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .expect("the root opens");
        let plan = descriptors::WalkPlan {
            walkers,
            keep: descriptors::KEEP,
        };
        untracked(&repo, root, root_fd.as_fd(), plan, &index)
            .expect("the walk reads the tree")
            .into_iter()
            .map(|(path, _)| path.to_string())
            .collect()
    }

    #[test]
    fn any_number_of_walkers_finds_what_git_finds_in_its_order() {
        let (dir, theirs) = untracked_tree();
        assert_eq!(theirs.len(), 82, "{theirs:?}");
        for walkers in [1, 2, descriptors::MAX_WALKERS] {
            // More walkers than cores are never started; the plan's count is a ceiling.
            assert_eq!(
                untracked_with(dir.path(), walkers),
                theirs,
                "{walkers} walkers"
            );
        }
    }

    #[test]
    fn control_a_file_added_after_git_listed_the_tree_is_one_git_did_not_find() {
        let (dir, theirs) = untracked_tree();
        std::fs::write(dir.path().join("w7/deeper/late.txt"), "x").expect("writable");
        let ours = untracked_with(dir.path(), descriptors::MAX_WALKERS);
        assert_ne!(ours, theirs);
        assert_eq!(ours.len(), theirs.len() + 1);
    }

    #[test]
    fn the_queue_ends_when_nothing_is_left_and_no_walker_still_reads() {
        let queue = Queue::default();
        queue.push(vec![(b"a".to_vec(), None), (b"b".to_vec(), None)]);
        assert_eq!(
            queue.next().map(|d| d.0),
            Some(b"a".to_vec()),
            "first to last"
        );
        assert_eq!(queue.next().map(|d| d.0), Some(b"b".to_vec()));
        queue.done(Vec::new());
        // "a" is still being read: what it holds is yet to come, so the walk is not over.
        assert_eq!(queue.lock().busy, 1);
        queue.done(vec![(b"a/c".to_vec(), None)]);
        assert_eq!(queue.next().map(|d| d.0), Some(b"a/c".to_vec()));
        queue.done(Vec::new());
        assert!(queue.next().is_none(), "nothing left and nobody reading");
    }

    #[test]
    fn control_a_stopped_queue_hands_out_nothing_though_directories_are_left() {
        let queue = Queue::default();
        queue.push(vec![(b"a".to_vec(), None), (b"b".to_vec(), None)]);
        queue.stop();
        assert!(queue.next().is_none());
        assert_eq!(queue.lock().pending.len(), 2);
    }

    #[test]
    fn control_a_file_of_a_subdirectory_is_not_its_parents() {
        let (_dir, index) = index_of(&["d/inner.txt", "top.txt"]);
        let mut children = Children::default();
        children.read(&index, 0..index.entries().len(), 0);
        assert!(!children.files.contains_key(b"inner.txt".as_slice()));
        assert!(!children.files.contains_key(b"d/inner.txt".as_slice()));
        assert!(children.files.contains_key(b"top.txt".as_slice()));
    }
}
