//! Many refs moved at git's cost: one `packed-refs` write and no lock file per ref.
//!
//! gix's ref transaction, like git's, takes `<ref>.lock` for every ref it moves, even when the
//! new values go into `packed-refs`. A fetch of 10,000 new records therefore creates and
//! deletes 10,000 lock files, and on ext4 each one is an inode allocation: together they cost
//! as much as the `git fetch` that staged the records. When no ref of a batch exists as a
//! loose file, has its lock held or keeps a reflog, the batch needs none of those files.
//! [`Store::move_packed`] takes `packed-refs.lock` alone, checks each expected value against
//! the `packed-refs` it holds locked, writes the new file, flushes it and renames it in place.
//!
//! A writer that moves one ref as a loose file (git, gix, another git-hpp) takes `<ref>.lock`
//! before it reads the ref's value, and holds it until its new file is in place. So the
//! directories of the batch's refs are listed twice:
//!
//! - **before the write.** A lock or a loose file for one of the batch's refs sends the whole
//!   batch to the ordinary transaction, which knows how to take them.
//! - **after the rename.** A lock or loose file that appeared meanwhile belongs to a writer
//!   that may have read the old `packed-refs`; its loose value, if it writes one, shadows the
//!   packed one. Those refs are returned as taken by another writer, and the caller reports
//!   them as it reports a lost compare-and-swap. The value meant for them is not lost: the
//!   caller still holds it where it read it from (a fetch's staging ref).
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
    /// locked (module docs). `Ok(None)` when the batch does not qualify (a ref of it is loose,
    /// locked, logged or clashes with another ref; `packed-refs` was written by a git older
    /// than its peeled lines): nothing was written, and the ordinary transaction must move it.
    /// `Ok(Some(taken))` when it moved: `taken` names the refs another writer held or wrote
    /// while it did, whose value is that writer's.
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
        if names.iter().any(|name| present(&before, name)) {
            return Ok(None);
        }
        let logs = common.join("logs");
        match listing(&logs, &names) {
            Some(logged) if !names.iter().any(|name| present(&logged, name)) => {}
            _ => return Ok(None),
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
            let actual = packed(&m.name)?;
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

        let after = listing(&common, &names).unwrap_or_default();
        Ok(Some(
            names
                .into_iter()
                .filter(|name| {
                    !after.contains_key(parent(name).0.as_path()) || present(&after, name)
                })
                .map(str::to_owned)
                .collect(),
        ))
    }
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

    #[test]
    fn a_loose_or_locked_ref_leaves_the_batch_to_the_transaction() {
        let (dir, store) = repo();
        let ids = commits(&store);
        let loose = RefMove {
            name: "refs/hpp/src/a".to_owned(),
            expected: Some(ids[0].clone()),
            new: ids[1].clone(),
        };
        let before = packed_refs(dir.path());
        assert_eq!(
            store
                .move_packed(&[create("refs/hpp/dst/x", &ids[0]), loose.clone()])
                .unwrap(),
            None
        );
        assert_eq!(packed_refs(dir.path()), before);
        // Through move_refs the transaction moves it, and the loose file is gone.
        assert_eq!(store.move_refs(&[loose]).unwrap(), Vec::<String>::new());
        assert_eq!(store.tip("refs/hpp/src/a").unwrap(), Some(ids[1].clone()));

        let lock = dir.path().join(".git/refs/hpp/dst/x.lock");
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        std::fs::write(&lock, b"").unwrap();
        let held = create("refs/hpp/dst/x", &ids[0]);
        assert_eq!(
            store.move_packed(std::slice::from_ref(&held)).unwrap(),
            None
        );
        assert!(matches!(
            store.move_refs(&[held]).unwrap_err(),
            Error::Busy { .. }
        ));
        assert_eq!(store.tip("refs/hpp/dst/x").unwrap(), None);
    }

    #[test]
    fn a_name_that_clashes_with_a_ref_or_a_reflog_is_left_to_the_transaction() {
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
        let logs = dir.path().join(".git/logs/refs/hpp/dst");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("x"), b"").unwrap();
        assert_eq!(
            store
                .move_packed(&[create("refs/hpp/dst/x", &ids[0])])
                .unwrap(),
            None
        );
        git(dir.path(), &["config", "core.logAllRefUpdates", "always"]);
        let store = Store::discover(dir.path()).unwrap();
        assert_eq!(
            store
                .move_packed(&[create("refs/hpp/dst/y", &ids[0])])
                .unwrap(),
            None
        );
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
