//! Files above `core.bigFileThreshold` (git's default: 512 MiB), added as git adds them: read
//! in pieces, never held whole. The blob's id is hashed from the file first, and the object is
//! written (streamed through zlib into the loose object database) only when the repository
//! lacks it, so a snapshot's memory is bounded by a constant whatever the largest file, and a
//! big file that did not change costs one read.
//!
//! gix's `worktree_file_to_object` copies every file into memory before hashing it; below the
//! threshold that is the faster way and stays in use. The threshold is git's setting or
//! [`CAP`], whichever is lower: git's default (512 MiB) held by each of a snapshot's threads
//! would be gigabytes.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use gix::ObjectId;
use gix::bstr::BStr;
use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
use gix::objs::tree::EntryKind;

use super::super::{Error, git};

/// The largest file read whole, whatever `core.bigFileThreshold` says: 32 MiB.
pub(super) const CAP: u64 = 32 << 20;

/// The size of each piece read.
const PIECE: usize = 256 * 1024;

/// The blob of the regular file at `path` (relative to the worktree `root`), when it is larger
/// than `threshold` bytes and no filter converts it: hashed as it is read, and written in
/// pieces when the object database lacks it. `None` leaves the file to the caller's usual
/// path: not a regular file, not above the threshold, behind a symbolic link, or converted by
/// a filter (`text`, `eol`, a driver), which git reads whole too.
pub(super) fn add(
    repo: &gix::Repository,
    pipeline: &mut gix::filter::Pipeline<'_>,
    index: &gix::index::State,
    root: &Path,
    path: &BStr,
    threshold: u64,
) -> Result<Option<(ObjectId, EntryKind)>, Error> {
    let Ok(rel) = gix::path::from_bstr(path) else {
        return Ok(None);
    };
    let full = root.join(&rel);
    let Ok(meta) = std::fs::symlink_metadata(&full) else {
        return Ok(None);
    };
    if !meta.is_file() || meta.len() <= threshold || !leads_straight(root, &rel) {
        return Ok(None);
    }
    let reading = |source: std::io::Error| Error::Io {
        what: format!("reading {path}"),
        source,
    };
    let file = File::open(&full).map_err(reading)?;
    let size = file.metadata().map_err(reading)?.len();
    let mut file = match pipeline
        .convert_to_git(file, &rel, index)
        .map_err(git(format!("preparing filters for {path}")))?
    {
        ToGitOutcome::Unchanged(file) => file,
        ToGitOutcome::Buffer(_) | ToGitOutcome::Process(_) => return Ok(None),
    };
    let kind = if std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o100 != 0 {
        EntryKind::BlobExecutable
    } else {
        EntryKind::Blob
    };
    let id = hash(repo.object_hash(), &mut file, size, path)?;
    if repo.has_object(id) {
        return Ok(Some((id, kind)));
    }
    file.seek(SeekFrom::Start(0)).map_err(reading)?;
    let mut exact = Exact {
        inner: &mut file,
        left: size,
        path,
    };
    let written =
        gix::objs::Write::write_stream(&repo.objects, gix::objs::Kind::Blob, size, &mut exact)
            .map_err(git(format!("writing the blob of {path}")))?;
    Ok(Some((written, kind)))
}

/// Whether the leading directories of `rel` under `root` are directories, not symbolic links
/// to one (git's `has_symlink_leading_path`): otherwise the file is not the worktree's, and gix's
/// usual path refuses it.
fn leads_straight(root: &Path, rel: &Path) -> bool {
    let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return true;
    };
    match (
        std::fs::canonicalize(root),
        std::fs::canonicalize(root.join(parent)),
    ) {
        (Ok(root), Ok(real)) => real == root.join(parent),
        _ => false,
    }
}

/// The id of a blob of `size` bytes read from `file`, in pieces. A file that is not `size`
/// bytes long any more changed while it was read: an error, as in git.
fn hash(kind: gix::hash::Kind, file: &mut File, size: u64, path: &BStr) -> Result<ObjectId, Error> {
    let mut hasher = gix::hash::hasher(kind);
    hasher.update(&gix::objs::encode::loose_header(
        gix::objs::Kind::Blob,
        size,
    ));
    let mut exact = Exact {
        inner: file,
        left: size,
        path,
    };
    let mut piece = vec![0; PIECE];
    loop {
        let n = exact.read(&mut piece).map_err(|source| Error::Io {
            what: format!("reading {path}"),
            source,
        })?;
        if n == 0 {
            break;
        }
        hasher.update(&piece[..n]);
    }
    hasher.try_finalize().map_err(|e| Error::Io {
        what: format!("hashing {path}"),
        source: std::io::Error::other(e),
    })
}

/// A reader that gives exactly `left` bytes of `inner` and fails if it has fewer or more: the
/// size written into an object's header must be the size of what follows it.
struct Exact<'a> {
    inner: &'a mut File,
    left: u64,
    path: &'a BStr,
}

impl Read for Exact<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // One byte more would mean the file grew while it was read.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(changed(self.path)),
            };
        }
        let room = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..room])?;
        if n == 0 {
            return Err(changed(self.path));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

fn changed(path: &BStr) -> std::io::Error {
    std::io::Error::other(format!("{path} changed while it was read"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_of(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("f");
        std::fs::write(&path, bytes).expect("writable");
        let file = File::open(&path).expect("readable");
        (dir, file)
    }

    #[test]
    fn a_file_is_hashed_in_pieces_to_the_id_git_gives_it() {
        // More than one piece, and not a multiple of a piece.
        let bytes: Vec<u8> = (0..PIECE * 2 + 17).map(|i| (i % 251) as u8).collect();
        let (_dir, mut file) = file_of(&bytes);
        let id = hash(
            gix::hash::Kind::Sha1,
            &mut file,
            bytes.len() as u64,
            "f".into(),
        )
        .expect("it hashes");
        let whole = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes)
            .expect("it hashes");
        assert_eq!(id, whole);
    }

    #[test]
    fn control_a_file_that_is_not_the_size_it_was_is_an_error() {
        let (_dir, mut file) = file_of(b"twelve bytes");
        for size in [11, 13] {
            file.seek(SeekFrom::Start(0)).expect("seekable");
            let refused = hash(gix::hash::Kind::Sha1, &mut file, size, "f".into())
                .expect_err("a different size is refused");
            assert!(
                refused.to_string().contains("reading f"),
                "{refused}: {:?}",
                std::error::Error::source(&refused)
            );
        }
    }
}
