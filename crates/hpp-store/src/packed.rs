//! Many refs moved at git's cost: one `packed-refs` write and no lock file per ref.
//!
//! gix's ref transaction, like git's, takes `<ref>.lock` for every ref it moves, even when the
//! new values go into `packed-refs`. A fetch of 10,000 new records therefore creates and
//! deletes 10,000 lock files, and on ext4 each one is an inode allocation: together they cost
//! as much as the `git fetch` that staged the records. A ref that exists only in
//! `packed-refs`, or not at all, needs none of those files. [`Store::move_packed`] takes
//! `packed-refs.lock`, checks each expected value against the `packed-refs` it holds locked,
//! writes the new file, flushes it and renames it in place.
//!
//! A ref of the batch that has a file of its own (a loose ref, such as a loop appended here,
//! or a reflog) is locked first, as git locks it (the refs, then `packed-refs`), and its
//! expected value checked against its loose file. Its new value goes into `packed-refs` too;
//! once that is renamed in place, its reflog gets the move's line and its loose file, which
//! would shadow the packed value, is removed, still under its lock. A crash in between leaves
//! the old loose value in force: the ref reads as not moved, never as something unflushed.
//!
//! A writer that moves one ref as a loose file (git, gix, another git-hpp) takes `<ref>.lock`
//! before it reads the ref's value, and holds it until its new file is in place. So the
//! directories of the batch's refs are listed twice:
//!
//! - **before the write.** A lock another writer holds on one of the batch's refs makes the
//!   batch [`Error::Busy`]: nothing is written.
//! - **after the rename.** A lock or loose file that appeared meanwhile, for a ref this batch
//!   did not hold locked, belongs to a writer that may have read the old `packed-refs`; its
//!   loose value, if it writes one, shadows the packed one. Those refs are returned as taken
//!   by another writer, and the caller reports them as it reports a lost compare-and-swap.
//!   The value meant for them is not lost: the caller still holds it where it read it from
//!   (a fetch's staging ref).
//!
//! A writer that locked after the second listing read `packed-refs` after the rename, so its
//! own compare-and-swap sees this batch's values.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::{Error, RefMove, Store};

/// Only records: per-worktree refs (`refs/bisect/`, `refs/worktree/`) live elsewhere, and
/// nothing outside `refs/hpp/` is moved in batches.
const BATCHED: &str = "refs/hpp/";

/// The header git writes, and the only one this writer continues: every tag's peeled value is
/// on its own line and the file is sorted.
const HEADER: &[u8] = b"# pack-refs with: peeled fully-peeled sorted \n";

/// The names found in each directory of a batch's refs: loose refs, lock files, directories.
type Listing = BTreeMap<PathBuf, BTreeSet<String>>;

impl Store {
    /// Moves `moves` by one write of `packed-refs`, each a compare-and-swap on the file held
    /// locked (module docs). A ref of the batch with a file of its own (a loose ref, a reflog)
    /// is locked first, as git locks it, checked against its loose value, and its loose file
    /// removed under that lock once `packed-refs` holds the new value (its reflog gets the
    /// move's line). `Ok(None)` when the batch does not qualify (a ref outside `refs/hpp/`, a
    /// symbolic or clashing ref, reflogs for every ref or group-shared permissions by
    /// configuration, `packed-refs` written by a git older than its peeled lines): nothing
    /// was written, and the ordinary transaction must move it. A ref whose lock another writer
    /// holds is [`Error::Busy`]. `Ok(Some(taken))` when it moved: `taken` names the refs
    /// another writer held or wrote while it did, whose value is that writer's.
    pub(crate) fn move_packed(&self, moves: &[RefMove]) -> Result<Option<Vec<String>>, Error> {
        let mut names = BTreeSet::new();
        if !moves
            .iter()
            .all(|m| m.name.starts_with(BATCHED) && names.insert(m.name.as_str()))
        {
            return Ok(None);
        }
        // Reflogs every ref would keep, and group-shared permissions, are the transaction's.
        if self
            .config_string("core.logAllRefUpdates")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("always"))
            || self
                .config_string("core.sharedRepository")
                .is_some_and(|v| {
                    !matches!(
                        v.trim().to_ascii_lowercase().as_str(),
                        "" | "false" | "umask" | "0"
                    )
                })
        {
            return Ok(None);
        }
        let common = self.repo.common_dir().to_owned();
        let Some(before) = listing(&common, &names) else {
            return Ok(None);
        };
        let Some(logged) = listing(&common.join("logs"), &names) else {
            return Ok(None);
        };
        // The refs with a file of their own, locked (git's order: the refs, then packed-refs).
        let mut own: BTreeMap<&str, Own> = BTreeMap::new();
        for name in &names {
            let (dir, file) = parent(name);
            let entries = before.get(&dir);
            if entries.is_some_and(|e| e.contains(&format!("{file}.lock"))) {
                return Err(Error::Busy {
                    name: (*name).to_owned(),
                });
            }
            let loose = entries.is_some_and(|e| e.contains(file));
            let log = logged.get(&dir).is_some_and(|e| e.contains(file));
            if !loose && !log {
                continue;
            }
            let path = common.join(name);
            if path.is_dir() || common.join("logs").join(name).is_dir() {
                return Ok(None);
            }
            let lock = gix::lock::File::acquire_to_update_resource(
                &path,
                self.lock_timeouts().0,
                Some(common.clone()),
                Default::default(),
            )
            .map_err(|_| Error::Busy {
                name: (*name).to_owned(),
            })?;
            let value = match std::fs::read(&path) {
                Ok(bytes) => match loose_value(&bytes, self.repo.object_hash()) {
                    Some(id) => Some(id),
                    // A symbolic ref, or what git would not read as a ref.
                    None => return Ok(None),
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(source) => return Err(io(name, source)),
            };
            own.insert(
                name,
                Own {
                    _lock: lock,
                    value,
                    log,
                },
            );
        }

        let path = common.join("packed-refs");
        let mut lock = gix::lock::File::acquire_to_update_resource(
            &path,
            self.lock_timeouts().1,
            None,
            Default::default(),
        )
        .map_err(|_| Error::Busy {
            name: "packed-refs".to_owned(),
        })?;
        let current = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => return Err(io("packed-refs", source)),
        };
        if !current.is_empty() && !current.starts_with(HEADER) {
            return Ok(None);
        }
        let buffer = if current.is_empty() {
            None
        } else {
            Some(
                gix::refs::packed::Buffer::from_bytes(&current, self.repo.object_hash())
                    .map_err(super::git("reading packed-refs"))?,
            )
        };
        let packed = |name: &str| -> Result<Option<ObjectId>, Error> {
            let Some(buffer) = &buffer else {
                return Ok(None);
            };
            let found = buffer
                .try_find(name)
                .map_err(super::git(format!("reading {name} in packed-refs")))?;
            Ok(found.and_then(|r| ObjectId::from_hex(r.target).ok()))
        };
        for m in moves {
            let actual = match own.get(m.name.as_str()).and_then(|o| o.value) {
                Some(loose) => Some(loose),
                None => packed(&m.name)?,
            };
            if actual != m.expected.as_ref().map(super::CommitId::oid) {
                return Err(Error::Moved {
                    name: m.name.clone(),
                    expected: m.expected.clone(),
                    actual: actual.map(Into::into),
                });
            }
            if m.expected.is_none() && buffer.as_ref().is_some_and(|b| clashes(b, &m.name)) {
                return Ok(None);
            }
        }

        let mut out = Vec::with_capacity(current.len() + moves.len() * 100);
        out.extend_from_slice(HEADER);
        let mut edits: Vec<&RefMove> = moves.iter().collect();
        edits.sort_by(|a, b| a.name.cmp(&b.name));
        let mut edits = edits.into_iter().peekable();
        if let Some(buffer) = &buffer {
            let iter = buffer.iter().map_err(super::git("reading packed-refs"))?;
            for kept in iter {
                let kept = kept.map_err(super::git("reading packed-refs"))?;
                let name: &[u8] = kept.name.as_bstr();
                while let Some(edit) = edits.next_if(|e| e.name.as_bytes() < name) {
                    line(&mut out, edit);
                }
                if edits.peek().is_some_and(|e| e.name.as_bytes() == name) {
                    continue;
                }
                out.extend_from_slice(kept.target);
                out.push(b' ');
                out.extend_from_slice(name);
                out.push(b'\n');
                if let Some(peeled) = kept.object {
                    out.push(b'^');
                    out.extend_from_slice(peeled);
                    out.push(b'\n');
                }
            }
        }
        for edit in edits {
            line(&mut out, edit);
        }
        // The new file's bytes reach the disk before the rename publishes them, and the
        // rename before this returns.
        lock.with_mut(|file| {
            file.write_all(&out)?;
            file.sync_all()
        })
        .map_err(|source| io("packed-refs", source))?;
        lock.commit().map_err(|e| io("packed-refs", e.error))?;
        if let Ok(dir) = std::fs::File::open(&common) {
            let _ = dir.sync_all();
        }
        #[cfg(test)]
        tests::AFTER_RENAME.with(|hook| {
            if let Some(hook) = hook.borrow_mut().take() {
                hook();
            }
        });

        // The refs this batch held locked were moved by no one else.
        let after = listing(&common, &names).unwrap_or_default();
        let taken = names
            .iter()
            .filter(|name| !own.contains_key(*name))
            .filter(|name| !after.contains_key(parent(name).0.as_path()) || present(&after, name))
            .map(|name| (*name).to_owned())
            .collect();
        self.settle_own(&common, moves, own)?;
        Ok(Some(taken))
    }

    /// After `packed-refs` holds the batch's values: each locked ref's reflog gets its line,
    /// its loose file (which would shadow the packed value) is removed under its lock, and
    /// the lock released; the directories that changed are flushed.
    fn settle_own(
        &self,
        common: &Path,
        moves: &[RefMove],
        own: BTreeMap<&str, Own>,
    ) -> Result<(), Error> {
        if own.is_empty() {
            return Ok(());
        }
        let signature = self.signature();
        let mut dirs = BTreeSet::new();
        for m in moves {
            let Some(held) = own.get(m.name.as_str()) else {
                continue;
            };
            if held.log {
                let line = gix::refs::log::Line {
                    previous_oid: m.expected.as_ref().map_or_else(
                        || ObjectId::null(self.repo.object_hash()),
                        super::CommitId::oid,
                    ),
                    new_oid: m.new.oid(),
                    signature: signature.clone(),
                    message: "hpp: fetch".into(),
                };
                let path = common.join("logs").join(&m.name);
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .and_then(|mut log| {
                        line.write_to(&mut log)?;
                        log.sync_all()
                    })
                    .map_err(|source| io(&format!("the reflog of {}", m.name), source))?;
            }
            if held.value.is_some() {
                let path = common.join(&m.name);
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(source) => return Err(io(&m.name, source)),
                }
                dirs.insert(parent(&m.name).0);
            }
        }
        // Dropping a lock removes its file: the refs are free again.
        drop(own);
        for dir in dirs {
            if let Ok(handle) = std::fs::File::open(common.join(dir)) {
                let _ = handle.sync_all();
            }
        }
        Ok(())
    }
}

/// A ref of the batch with a file of its own, held locked while the batch moves.
struct Own {
    /// Its lock; dropping it releases the ref.
    _lock: gix::lock::File,
    /// The value of its loose file (`None`: it has only a reflog, its value is packed).
    value: Option<ObjectId>,
    /// Whether it keeps a reflog.
    log: bool,
}

/// The object a loose ref file names (`<hex>` and a newline); `None` for a symbolic ref or
/// anything else.
fn loose_value(bytes: &[u8], hash: gix::hash::Kind) -> Option<ObjectId> {
    let hex = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    (hex.len() == hash.len_in_hex())
        .then(|| ObjectId::from_hex(hex).ok())
        .flatten()
}

fn io(what: &str, source: std::io::Error) -> Error {
    Error::Io {
        what: what.to_owned(),
        source,
    }
}

/// One ref's line: a record's tip is a commit, which has no peeled line.
fn line(out: &mut Vec<u8>, edit: &RefMove) {
    out.extend_from_slice(edit.new.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(edit.name.as_bytes());
    out.push(b'\n');
}

/// The directory of `name` (relative to the refs' root) and its last component.
fn parent(name: &str) -> (PathBuf, &str) {
    let (dir, file) = name.rsplit_once('/').unwrap_or(("", name));
    (PathBuf::from(dir), file)
}

/// Whether `listing` holds `name` as a loose ref, a directory or a lock.
fn present(listing: &Listing, name: &str) -> bool {
    let (dir, file) = parent(name);
    listing
        .get(&dir)
        .is_some_and(|entries| entries.contains(file) || entries.contains(&format!("{file}.lock")))
}

/// The entries of every directory under `root` that holds one of `names`; a directory that
/// does not exist holds nothing. `None` when one cannot be listed (a loose ref where a
/// directory must be, or an error): the caller then leaves the batch to the transaction.
fn listing(root: &Path, names: &BTreeSet<&str>) -> Option<Listing> {
    let mut seen = Listing::new();
    for name in names {
        let (dir, _) = parent(name);
        if seen.contains_key(&dir) {
            continue;
        }
        let entries = match std::fs::read_dir(root.join(&dir)) {
            Ok(entries) => entries
                .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect::<Result<BTreeSet<_>, _>>()
                .ok()?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A missing directory under a loose ref where a directory must be is a clash.
                let blocked = dir
                    .ancestors()
                    .skip(1)
                    .any(|up| !up.as_os_str().is_empty() && root.join(up).is_file());
                if blocked {
                    return None;
                }
                BTreeSet::new()
            }
            Err(_) => return None,
        };
        seen.insert(dir, entries);
    }
    Some(seen)
}

/// Whether creating `name` clashes with a packed ref: one of its parents is a ref, or it is
/// the parent of one.
fn clashes(buffer: &gix::refs::packed::Buffer, name: &str) -> bool {
    let mut prefix = name;
    while let Some((up, _)) = prefix.rsplit_once('/') {
        if up == "refs" {
            break;
        }
        if !matches!(buffer.try_find(up), Ok(None)) {
            return true;
        }
        prefix = up;
    }
    buffer
        .iter_prefixed(format!("{name}/").into())
        .is_ok_and(|mut refs| refs.next().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CommitId, NewRecord};

    thread_local! {
        /// Runs once between the rename and the second listing: another writer's moment.
        pub(super) static AFTER_RENAME: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
            std::cell::RefCell::new(None);
    }

    fn repo() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::init(dir.path()).expect("a new repository");
        (dir, store)
    }

    use crate::testing::git;

    /// Three commits, each the tip of a loose `refs/hpp/src/<n>`.
    fn commits(store: &Store) -> Vec<CommitId> {
        ["a", "b", "c"]
            .iter()
            .map(|n| {
                let record = NewRecord {
                    file: "e.json",
                    bytes: n.as_bytes(),
                    message: "test",
                };
                store
                    .append(&format!("refs/hpp/src/{n}"), None, &record)
                    .unwrap()
            })
            .collect()
    }

    fn create(name: &str, new: &CommitId) -> RefMove {
        RefMove {
            name: name.to_owned(),
            expected: None,
            new: new.clone(),
        }
    }

    fn packed_refs(dir: &Path) -> Vec<u8> {
        std::fs::read(dir.join(".git/packed-refs")).unwrap_or_default()
    }

    #[test]
    fn new_refs_are_written_into_packed_refs_with_no_file_per_ref_and_git_reads_them() {
        let (dir, store) = repo();
        let ids = commits(&store);
        git(dir.path(), &["pack-refs", "--all"]);
        let moves: Vec<RefMove> = ["x", "y", "z"]
            .iter()
            .zip(&ids)
            .map(|(n, id)| create(&format!("refs/hpp/dst/{n}"), id))
            .collect();
        assert_eq!(store.move_packed(&moves).unwrap(), Some(Vec::new()));
        assert!(
            !dir.path().join(".git/refs/hpp/dst").exists(),
            "no loose file, no lock"
        );
        assert!(!dir.path().join(".git/packed-refs.lock").exists());
        let listed = git(
            dir.path(),
            &[
                "for-each-ref",
                "--format=%(objectname) %(refname)",
                "refs/hpp/",
            ],
        );
        for (n, id) in ["a", "b", "c"].iter().zip(&ids) {
            assert!(
                listed.contains(&format!("{} refs/hpp/src/{n}", id.as_str())),
                "{listed}"
            );
        }
        for (n, id) in ["x", "y", "z"].iter().zip(&ids) {
            assert!(
                listed.contains(&format!("{} refs/hpp/dst/{n}", id.as_str())),
                "{listed}"
            );
            assert_eq!(
                store.tip(&format!("refs/hpp/dst/{n}")).unwrap().as_ref(),
                Some(id)
            );
        }
        assert!(packed_refs(dir.path()).starts_with(HEADER));
        git(dir.path(), &["fsck", "--connectivity-only"]);
    }

    #[test]
    fn a_packed_ref_moves_by_compare_and_swap_in_packed_refs() {
        let (dir, store) = repo();
        let ids = commits(&store);
        git(dir.path(), &["pack-refs", "--all"]);
        let forward = RefMove {
            name: "refs/hpp/src/a".to_owned(),
            expected: Some(ids[0].clone()),
            new: ids[1].clone(),
        };
        assert_eq!(store.move_packed(&[forward]).unwrap(), Some(Vec::new()));
        assert_eq!(store.tip("refs/hpp/src/a").unwrap(), Some(ids[1].clone()));
        let shown = git(dir.path(), &["rev-parse", "refs/hpp/src/a"]);
        assert_eq!(shown.trim(), ids[1].as_str());
    }

    #[test]
    fn control_a_stale_expected_value_moves_nothing() {
        let (dir, store) = repo();
        let ids = commits(&store);
        git(dir.path(), &["pack-refs", "--all"]);
        let before = packed_refs(dir.path());
        let stale = [
            create("refs/hpp/dst/x", &ids[0]),
            RefMove {
                name: "refs/hpp/src/a".to_owned(),
                expected: Some(ids[2].clone()),
                new: ids[1].clone(),
            },
        ];
        let err = store.move_packed(&stale).unwrap_err();
        assert!(
            matches!(&err, Error::Moved { name, .. } if name == "refs/hpp/src/a"),
            "{err}"
        );
        assert_eq!(packed_refs(dir.path()), before, "packed-refs is untouched");
        assert!(!dir.path().join(".git/packed-refs.lock").exists());
        assert_eq!(store.tip("refs/hpp/dst/x").unwrap(), None);
        let exists = create("refs/hpp/src/b", &ids[0]);
        assert!(matches!(
            store.move_packed(&[exists]).unwrap_err(),
            Error::Moved { .. }
        ));
    }

    /// The lock files under `.git/refs/` and the packed-refs lock.
    fn locks(dir: &Path) -> Vec<String> {
        let out = std::process::Command::new("find")
            .args([".git/refs", ".git/packed-refs.lock", "-name", "*.lock"])
            .current_dir(dir)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_loose_ref_moves_into_packed_refs_under_its_lock_and_leaves_no_file() {
        let (dir, store) = repo();
        let ids = commits(&store);
        let loose = RefMove {
            name: "refs/hpp/src/a".to_owned(),
            expected: Some(ids[0].clone()),
            new: ids[1].clone(),
        };
        let moves = [create("refs/hpp/dst/x", &ids[0]), loose];
        assert_eq!(store.move_packed(&moves).unwrap(), Some(Vec::new()));
        let packed = String::from_utf8(packed_refs(dir.path())).unwrap();
        assert!(
            packed.contains(&format!("{} refs/hpp/src/a\n", ids[1].as_str())),
            "{packed}"
        );
        assert!(
            packed.contains(&format!("{} refs/hpp/dst/x\n", ids[0].as_str())),
            "{packed}"
        );
        assert!(
            !dir.path().join(".git/refs/hpp/src/a").exists(),
            "the loose file would shadow it"
        );
        assert!(locks(dir.path()).is_empty(), "{:?}", locks(dir.path()));
        assert_eq!(
            git(dir.path(), &["rev-parse", "refs/hpp/src/a"]),
            ids[1].as_str()
        );
        // The other loose refs of the directory were not touched.
        assert!(dir.path().join(".git/refs/hpp/src/b").is_file());
    }

    #[test]
    fn control_a_stale_loose_ref_or_a_held_lock_moves_nothing() {
        let (dir, store) = repo();
        let ids = commits(&store);
        let before = packed_refs(dir.path());
        // The loose value is ids[0]; the batch expects ids[2].
        let stale = RefMove {
            name: "refs/hpp/src/a".to_owned(),
            expected: Some(ids[2].clone()),
            new: ids[1].clone(),
        };
        let moved = store.move_packed(&[create("refs/hpp/dst/x", &ids[0]), stale]);
        assert!(matches!(moved, Err(Error::Moved { .. })), "{moved:?}");
        assert_eq!(packed_refs(dir.path()), before);
        assert_eq!(store.tip("refs/hpp/src/a").unwrap(), Some(ids[0].clone()));
        assert_eq!(store.tip("refs/hpp/dst/x").unwrap(), None);
        assert!(locks(dir.path()).is_empty(), "{:?}", locks(dir.path()));

        let lock = dir.path().join(".git/refs/hpp/dst/x.lock");
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        std::fs::write(&lock, b"").unwrap();
        let held = create("refs/hpp/dst/x", &ids[0]);
        assert!(matches!(
            store.move_refs(&[held]).unwrap_err(),
            Error::Busy { .. }
        ));
        assert_eq!(store.tip("refs/hpp/dst/x").unwrap(), None);
        assert_eq!(packed_refs(dir.path()), before);
    }

    #[test]
    fn a_ref_with_a_reflog_gets_its_line() {
        let (dir, store) = repo();
        let ids = commits(&store);
        let logs = dir.path().join(".git/logs/refs/hpp/dst");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("x"), b"").unwrap();
        let moves = [create("refs/hpp/dst/x", &ids[0])];
        assert_eq!(store.move_packed(&moves).unwrap(), Some(Vec::new()));
        let log = git(
            dir.path(),
            &["reflog", "show", "--format=%H %gs", "refs/hpp/dst/x"],
        );
        assert_eq!(log, format!("{} hpp: fetch", ids[0].as_str()));
        assert!(locks(dir.path()).is_empty(), "{:?}", locks(dir.path()));
    }

    #[test]
    fn a_name_that_clashes_with_a_ref_is_left_to_the_transaction() {
        let (dir, store) = repo();
        let ids = commits(&store);
        git(dir.path(), &["pack-refs", "--all"]);
        for name in ["refs/hpp/src/a/deeper", "refs/hpp/src"] {
            assert_eq!(
                store.move_packed(&[create(name, &ids[0])]).unwrap(),
                None,
                "{name}"
            );
        }
        git(dir.path(), &["config", "core.logAllRefUpdates", "always"]);
        let store = Store::discover(dir.path()).unwrap();
        let logged = create("refs/hpp/dst/y", &ids[0]);
        assert_eq!(
            store.move_packed(std::slice::from_ref(&logged)).unwrap(),
            None
        );
        // The transaction moves it as a loose ref, with the reflog every ref keeps.
        assert_eq!(store.move_refs(&[logged]).unwrap(), Vec::<String>::new());
        assert!(dir.path().join(".git/refs/hpp/dst/y").is_file());
        assert!(dir.path().join(".git/logs/refs/hpp/dst/y").is_file());
        assert!(locks(dir.path()).is_empty(), "{:?}", locks(dir.path()));
    }

    #[test]
    fn a_writer_that_locks_a_ref_while_packed_refs_is_written_is_reported_as_taking_it() {
        let (dir, store) = repo();
        let ids = commits(&store);
        let lock = dir.path().join(".git/refs/hpp/dst/y.lock");
        let held = lock.clone();
        AFTER_RENAME.with(|hook| {
            *hook.borrow_mut() = Some(Box::new(move || {
                std::fs::create_dir_all(held.parent().unwrap()).unwrap();
                std::fs::write(&held, b"").unwrap();
            }));
        });
        let moves = [
            create("refs/hpp/dst/x", &ids[0]),
            create("refs/hpp/dst/y", &ids[1]),
        ];
        let taken = store.move_packed(&moves).unwrap();
        assert_eq!(taken, Some(vec!["refs/hpp/dst/y".to_owned()]));
        assert!(lock.exists(), "the other writer's lock is its own");
        assert_eq!(store.tip("refs/hpp/dst/x").unwrap(), Some(ids[0].clone()));
    }

    #[test]
    fn control_packed_refs_from_a_git_that_wrote_no_peeled_lines_is_left_alone() {
        let (dir, store) = repo();
        let ids = commits(&store);
        let old = format!(
            "# pack-refs with: peeled \n{} refs/hpp/old\n",
            ids[2].as_str()
        );
        std::fs::write(dir.path().join(".git/packed-refs"), &old).unwrap();
        assert_eq!(
            store
                .move_packed(&[create("refs/hpp/dst/x", &ids[0])])
                .unwrap(),
            None
        );
        assert_eq!(packed_refs(dir.path()), old.as_bytes());
    }
}
