//! The snapshot's own stat cache: what the last snapshot learned about files whose stat the
//! user's index does not describe, kept under the git directory (never pushed, never the index).
//!
//! One file per index (a linked worktree has its own), at
//! `<common git dir>/hpp-cache/snapshot/<key>`, holding:
//! - `files`: path → (stat, blob id, kind on disk, fence) for every file a snapshot read whose
//!   stat the user's index does not vouch for: modified and mtime-only touched tracked files,
//!   tracked files the index holds racily clean, and untracked files. An entry is a fact about
//!   the file, not about the index ("a file with exactly this stat had this content"), so it
//!   stays true when the user's index changes. It is trusted only when the file's mtime and
//!   ctime are older than the entry's `fence` (the start of the snapshot that read it, less
//!   [`FENCE_SLACK`]): a file rewritten in the same clock tick as it was read (same size, same
//!   mtime: racily clean) is read again;
//! - `inputs`: what turns a file into a blob besides its bytes (the `core`, `filter` and
//!   `gitoxide` config sections, attribute files outside the worktree); entries hashed under
//!   other inputs are dropped whole;
//! - `attributes`: the `.gitattributes` files of the last snapshot by path and blob id; when
//!   they differ, entries read from the cache are read again;
//! - `result_key` and `result_tree`: the last snapshot tree and what it was built from (the
//!   user's index checksum and every edit on top of it), so an unchanged workspace costs no
//!   tree writes.
//!
//! Every blob an entry names is in `result_tree`, so while that tree is in the object database
//! the blobs are too (git prunes the objects reachable from a recent one only with it); a cache
//! whose tree is gone is dropped whole. The file is written whole to a temporary file and
//! renamed, and carries its own checksum: a cache that cannot be read, is cut short or corrupt
//! is ignored, and one that cannot be written costs the next snapshot time, never correctness.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use gix::ObjectId;
use gix::bstr::BString;
use gix::index::entry::Stat;
use gix::index::entry::stat::Time;
use gix::objs::tree::EntryKind;

/// The file's first bytes, with its format version.
const MAGIC: &[u8] = b"git-hpp snapshot cache 1\n";

/// How far before a snapshot's start its fence lies: more than the coarsest timestamp
/// granularity of common filesystems (FAT: 2 s) and any lag of the kernel's coarse clock.
pub(super) const FENCE_SLACK: Duration = Duration::from_secs(2);

/// What the cache knows of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Known {
    /// The file's stat when it was read (taken before reading).
    pub stat: Stat,
    /// The blob the file's content makes (after clean filters).
    pub id: ObjectId,
    /// The kind on disk: a blob, an executable blob or a link.
    pub kind: EntryKind,
    /// The fence of the snapshot that read the file; `None` for the snapshot running now, whose
    /// fence is fixed when the cache is written.
    pub fence: Option<Time>,
}

impl Known {
    /// Whether a file whose stat equals `self.stat` may be taken to hold `self.id`: its mtime
    /// and its ctime are older than the fence (compared in whole seconds, as git compares
    /// stats by default), so any later write gave it another mtime, and another ctime even
    /// when the writer set the old mtime back (`touch -r`, `tar x`, `rsync -t`).
    pub fn trusted(&self) -> bool {
        self.fence.is_some_and(|fence| {
            self.stat.mtime.secs < fence.secs && self.stat.ctime.secs < fence.secs
        })
    }
}

/// The cache as read, or as it will be written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Cache {
    pub inputs: Option<ObjectId>,
    pub attributes: Option<ObjectId>,
    pub result_key: Option<ObjectId>,
    pub result_tree: Option<ObjectId>,
    pub files: HashMap<BString, Known>,
}

/// Where the cache of the index at `index_path` lives.
pub(super) fn location(common_dir: &Path, index_path: &Path) -> PathBuf {
    let absolute = std::path::absolute(index_path).unwrap_or_else(|_| index_path.to_owned());
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(absolute.as_os_str().as_encoded_bytes());
    let name = hasher
        .try_finalize()
        .map(|id| id.to_hex_with_len(16).to_string())
        .unwrap_or_else(|_| "index".to_owned());
    common_dir.join("hpp-cache").join("snapshot").join(name)
}

/// The digest of what turns a file's bytes into a blob besides the bytes and the worktree's
/// `.gitattributes` files (see the module documentation).
pub(super) fn inputs(repo: &gix::Repository) -> Option<ObjectId> {
    let mut hasher = gix::hash::hasher(repo.object_hash());
    hasher.update(MAGIC);
    let config = repo.config_snapshot();
    for name in ["core", "filter", "gitoxide"] {
        if let Some(sections) = config.plumbing().sections_by_name(name) {
            for section in sections {
                hasher.update(&section.to_bstring());
                hasher.update(b"\0");
            }
        }
    }
    // The attribute files git reads besides the worktree's: the repository's, the system's and
    // the user's (core.attributesFile, else the XDG default), where gix looks for them.
    let mut env = |name: &str| std::env::var_os(name);
    let user = config
        .trusted_path("core.attributesFile")
        .ok()
        .flatten()
        .or_else(|| gix::attrs::Source::Git.storage_location(&mut env));
    let system = gix::attrs::Source::System.storage_location(&mut env);
    let files = [
        Some(repo.common_dir().join("info").join("attributes")),
        system,
        user,
    ];
    for file in files.into_iter().flatten() {
        hasher.update(file.as_os_str().as_encoded_bytes());
        match std::fs::read(&file) {
            Ok(bytes) => {
                hasher.update(&(bytes.len() as u64).to_le_bytes());
                hasher.update(&bytes);
            }
            Err(_) => hasher.update(b"\0absent\0"),
        }
    }
    hasher.try_finalize().ok()
}

/// The digest of the `.gitattributes` files of a snapshot, by path and blob id.
pub(super) fn attributes(
    kind: gix::hash::Kind,
    mut files: Vec<(BString, ObjectId)>,
) -> Option<ObjectId> {
    files.sort();
    let mut hasher = gix::hash::hasher(kind);
    for (path, id) in &files {
        hasher.update(path);
        hasher.update(b"\0");
        hasher.update(id.as_bytes());
    }
    hasher.try_finalize().ok()
}

/// Reads the cache at `path`; `None` when it is missing, unreadable, cut short or corrupt.
pub(super) fn read(path: &Path, kind: gix::hash::Kind) -> Option<Cache> {
    let bytes = std::fs::read(path).ok()?;
    decode(&bytes, kind)
}

fn decode(bytes: &[u8], kind: gix::hash::Kind) -> Option<Cache> {
    let len = kind.len_in_bytes();
    let (body, trailer) = bytes.split_at_checked(bytes.len().checked_sub(len)?)?;
    let mut hasher = gix::hash::hasher(kind);
    hasher.update(body);
    if hasher.try_finalize().ok()?.as_bytes() != trailer {
        return None;
    }
    let mut r = Reader(body.strip_prefix(MAGIC)?);
    let mut cache = Cache {
        inputs: r.optional_id(kind)?,
        attributes: r.optional_id(kind)?,
        result_key: r.optional_id(kind)?,
        result_tree: r.optional_id(kind)?,
        files: HashMap::new(),
    };
    let count = r.u32()?;
    for _ in 0..count {
        let path_len = usize::try_from(r.u32()?).ok()?;
        let path = BString::from(r.take(path_len)?);
        let mut time = || {
            Some(Time {
                secs: r.u32()?,
                nsecs: r.u32()?,
            })
        };
        let (mtime, ctime) = (time()?, time()?);
        let stat = Stat {
            mtime,
            ctime,
            dev: r.u32()?,
            ino: r.u32()?,
            uid: r.u32()?,
            gid: r.u32()?,
            size: r.u32()?,
        };
        let id = ObjectId::try_from(r.take(len)?).ok()?;
        let kind = match r.take(1)?[0] {
            0 => EntryKind::Blob,
            1 => EntryKind::BlobExecutable,
            2 => EntryKind::Link,
            _ => return None,
        };
        let fence = Some(Time {
            secs: r.u32()?,
            nsecs: r.u32()?,
        });
        cache.files.insert(
            path,
            Known {
                stat,
                id,
                kind,
                fence,
            },
        );
    }
    r.0.is_empty().then_some(cache)
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (head, tail) = self.0.split_at_checked(n)?;
        self.0 = tail;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn optional_id(&mut self, kind: gix::hash::Kind) -> Option<Option<ObjectId>> {
        match self.take(1)?[0] {
            0 => Some(None),
            1 => Some(Some(
                ObjectId::try_from(self.take(kind.len_in_bytes())?).ok()?,
            )),
            _ => None,
        }
    }
}

/// Writes `cache` at `path`, atomically (a temporary file renamed over it), fixing the fence of
/// the entries read by the snapshot that started at `started`. Best effort: a cache that cannot
/// be written is left as it was, or absent.
pub(super) fn write(path: &Path, kind: gix::hash::Kind, cache: &Cache, started: SystemTime) {
    let _ = try_write(path, kind, cache, started);
}

fn try_write(path: &Path, kind: gix::hash::Kind, cache: &Cache, started: SystemTime) -> Option<()> {
    let dir = path.parent()?;
    std::fs::create_dir_all(dir).ok()?;
    let mut file = tempfile::NamedTempFile::new_in(dir).ok()?;
    // The fence: the snapshot's start by the system clock, or by the filesystem's clock when
    // that lags (a network filesystem stamps files with the server's time), less the slack.
    let now = SystemTime::now();
    let fs_now = file.as_file().metadata().ok()?.modified().ok()?;
    let elapsed = now.duration_since(started).unwrap_or_default();
    let fs_started = fs_now.checked_sub(elapsed).unwrap_or(started);
    let fence = started.min(fs_started).checked_sub(FENCE_SLACK)?;
    let fence = Time::try_from(fence).ok()?;

    let mut out = Vec::with_capacity(64 + cache.files.len() * 96);
    out.extend_from_slice(MAGIC);
    for id in [
        cache.inputs,
        cache.attributes,
        cache.result_key,
        cache.result_tree,
    ] {
        match id {
            Some(id) => {
                out.push(1);
                out.extend_from_slice(id.as_bytes());
            }
            None => out.push(0),
        }
    }
    let mut files: Vec<_> = cache.files.iter().collect();
    files.sort_by(|a, b| a.0.cmp(b.0));
    out.extend_from_slice(&u32::try_from(files.len()).ok()?.to_le_bytes());
    for (path, known) in files {
        out.extend_from_slice(&u32::try_from(path.len()).ok()?.to_le_bytes());
        out.extend_from_slice(path);
        let s = &known.stat;
        let fence = known.fence.unwrap_or(fence);
        for n in [
            s.mtime.secs,
            s.mtime.nsecs,
            s.ctime.secs,
            s.ctime.nsecs,
            s.dev,
            s.ino,
            s.uid,
            s.gid,
            s.size,
        ] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(known.id.as_bytes());
        out.push(match known.kind {
            EntryKind::BlobExecutable => 1,
            EntryKind::Link => 2,
            _ => 0,
        });
        out.extend_from_slice(&fence.secs.to_le_bytes());
        out.extend_from_slice(&fence.nsecs.to_le_bytes());
    }
    let mut hasher = gix::hash::hasher(kind);
    hasher.update(&out);
    out.extend_from_slice(hasher.try_finalize().ok()?.as_bytes());
    file.write_all(&out).ok()?;
    file.persist(path).ok()?;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Cache {
        let id = ObjectId::empty_blob(gix::hash::Kind::Sha1);
        let mut files = HashMap::new();
        files.insert(
            BString::from("dir/a.txt"),
            Known {
                stat: Stat {
                    mtime: Time {
                        secs: 100,
                        nsecs: 5,
                    },
                    size: 7,
                    ..Stat::default()
                },
                id,
                kind: EntryKind::BlobExecutable,
                fence: Some(Time {
                    secs: 200,
                    nsecs: 0,
                }),
            },
        );
        Cache {
            inputs: Some(id),
            attributes: None,
            result_key: Some(id),
            result_tree: Some(ObjectId::empty_tree(gix::hash::Kind::Sha1)),
            files,
        }
    }

    #[test]
    fn a_written_cache_reads_back_equal() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("sub").join("cache");
        let cache = sample();
        write(&path, gix::hash::Kind::Sha1, &cache, SystemTime::now());
        assert_eq!(read(&path, gix::hash::Kind::Sha1), Some(cache));
    }

    #[test]
    fn control_a_corrupt_or_short_cache_is_ignored() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("cache");
        write(&path, gix::hash::Kind::Sha1, &sample(), SystemTime::now());
        let good = std::fs::read(&path).expect("the cache was written");
        assert!(read(&path, gix::hash::Kind::Sha1).is_some());
        let mut flipped = good.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 1;
        std::fs::write(&path, &flipped).expect("writable");
        assert_eq!(read(&path, gix::hash::Kind::Sha1), None, "one flipped bit");
        std::fs::write(&path, &good[..good.len() - 1]).expect("writable");
        assert_eq!(read(&path, gix::hash::Kind::Sha1), None, "cut short");
        std::fs::write(&path, b"").expect("writable");
        assert_eq!(read(&path, gix::hash::Kind::Sha1), None, "empty");
    }

    #[test]
    fn an_entry_is_trusted_only_when_older_than_its_fence() {
        let mut known = sample().files.into_values().next().expect("one entry");
        assert!(known.trusted(), "mtime 100 s, ctime 0 s, fence 200 s");
        known.stat.ctime.secs = 200;
        assert!(
            !known.trusted(),
            "changed (a forged mtime) in the fence's second"
        );
        known.stat.ctime.secs = 0;
        known.fence = Some(Time {
            secs: 100,
            nsecs: 999,
        });
        assert!(!known.trusted(), "the same second as the fence");
        known.fence = None;
        assert!(!known.trusted(), "not yet fenced");
    }
}
