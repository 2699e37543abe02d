//! Loose objects read the plain way, once a command reads many of them.
//!
//! gix reads a loose object by asking whether its file exists, opening it, asking its size,
//! mapping it, and unmapping and closing it afterwards: six system calls, and a mapping torn
//! down per object (with reading threads, each unmap is a TLB shootdown on every core). A log
//! whose objects are loose (appended events until the store packs them, [`crate::LOOSE_LIMIT`])
//! costs that per commit, tree and blob. Here the file is opened, read into a buffer the
//! thread keeps, and closed: three system calls, the inflate state reused from object to
//! object. A read short of the buffer is the end of a regular file; the zlib stream must end
//! there, at the size its header gives, or the read is left to gix.
//!
//! Only objects no pack holds are read here: the packs' indices are looked in first (memory,
//! no system call), so a packed object costs no failed open. A store with next to no loose
//! objects (none in git's own sample directory, `objects/17`, as `git gc --auto` estimates
//! them) never starts the reader, so a packed store pays nothing for it. Anything this reader
//! does not find or cannot decode (a pack written since, an alternate, a corrupt file) goes to
//! gix, which reads it or reports why not: nothing here decides that an object is missing.

use std::cell::RefCell;
use std::io::Read;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use gix::ObjectId;
use gix::object::Kind;
use gix::zlib::{Decompress, FlushDecompress as Flush, Status};

use super::Store;

/// Objects read through gix before the plain reader starts: a short read costs what it did.
pub(crate) const AFTER: usize = 256;

/// The buffer a thread reads object files into; a larger file grows it for that read.
const BUFFER: usize = 64 << 10;

/// The plain reader of a store and its views: the packs it knew of when it started.
#[derive(Default)]
pub(crate) struct Loose {
    /// Objects read before the reader started.
    reads: AtomicUsize,
    /// The reader, once started (`None`: the objects directory could not be listed).
    reader: OnceLock<Option<Reader>>,
}

/// The objects directory and the indices of its packs.
pub(crate) struct Reader {
    objects: PathBuf,
    indices: Vec<gix_pack::index::File>,
}

/// What a thread keeps between reads: the file's bytes and the inflate state.
struct Scratch {
    file: Vec<u8>,
    inflate: Decompress,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch {
        file: Vec::with_capacity(BUFFER),
        inflate: Decompress::new(),
    });
}

impl Store {
    /// The plain reader, once this store (or a view of it) has read [`AFTER`] objects; a read
    /// about to be made of `reads` more counts them.
    pub(crate) fn loose_reader(&self, reads: usize) -> Option<&Reader> {
        if let Some(reader) = self.loose.reader.get() {
            return reader.as_ref();
        }
        if self.loose.reads.fetch_add(reads, Ordering::Relaxed) + reads <= AFTER {
            return None;
        }
        self.loose
            .reader
            .get_or_init(|| Reader::open(self))
            .as_ref()
    }
}

impl Reader {
    /// The reader of `store`'s objects directory, with the indices of its packs now; `None`
    /// when git's sample directory (`objects/17`) holds nothing (few objects are loose: gix
    /// reads them) or an index does not open (which objects are packed is not known).
    fn open(store: &Store) -> Option<Reader> {
        let objects = store.repo.objects.store_ref().path().to_owned();
        std::fs::read_dir(objects.join("17")).ok()?.next()?.ok()?;
        let hash = store.repo.object_hash();
        let indices = store
            .pack_indices()
            .iter()
            .map(|path| gix_pack::index::File::at(path, hash).ok())
            .collect::<Option<Vec<_>>>()?;
        Some(Reader { objects, indices })
    }

    /// The object `id` when it is loose, of kind `kind`, and reads whole; `None` leaves the
    /// read to gix (packed, missing, another kind, or not decodable here).
    pub(crate) fn read(&self, id: &ObjectId, kind: Kind) -> Option<Vec<u8>> {
        if self.indices.iter().any(|index| index.lookup(id).is_some()) {
            return None;
        }
        let hex = id.to_hex().to_string();
        let mut path = self.objects.join(&hex[..2]);
        path.push(&hex[2..]);
        let mut file = std::fs::File::open(&path).ok()?;
        SCRATCH.with_borrow_mut(|scratch| {
            read_whole(&mut file, &mut scratch.file).ok()?;
            drop(file);
            inflate(&mut scratch.inflate, &scratch.file, kind)
        })
    }
}

/// Reads `file` to its end into `buf`: one read when it fits the buffer (a short read of a
/// regular file is its end; the zlib stream's own end checks that nothing was cut).
fn read_whole(file: &mut std::fs::File, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    if buf.capacity() < BUFFER {
        buf.reserve(BUFFER);
    }
    loop {
        let start = buf.len();
        let room = buf.capacity() - start;
        buf.resize(buf.capacity(), 0);
        let n = match file.read(&mut buf[start..]) {
            Ok(n) => n,
            Err(e) => {
                buf.truncate(start);
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
        };
        buf.truncate(start + n);
        if n < room {
            return Ok(());
        }
        buf.reserve(buf.len());
    }
}

/// Inflates the loose object `raw` when it is of kind `kind`: its body, exactly the size its
/// header names, with the zlib stream ending there and nothing after it.
fn inflate(state: &mut Decompress, raw: &[u8], kind: Kind) -> Option<Vec<u8>> {
    /// "commit 4294967295\0" and more: the longest header git writes fits.
    const HEAD: usize = 64;
    state.reset();
    let mut head = [0u8; HEAD];
    let mut status = state.decompress(raw, &mut head, Flush::None).ok()?;
    let written = state.total_out() as usize;
    let (found, size, header) = gix::objs::decode::loose_header(&head[..written]).ok()?;
    if found != kind {
        return None;
    }
    let size = usize::try_from(size).ok()?;
    let held = written.checked_sub(header).filter(|held| *held <= size)?;
    let mut body = vec![0u8; size];
    body[..held].copy_from_slice(&head[header..written]);
    // Each call makes progress or the stream is cut; the trailer needs no room of its own.
    while status != Status::StreamEnd {
        let (inn, out) = (state.total_in() as usize, state.total_out() as usize);
        let at = out - header;
        status = state
            .decompress(&raw[inn..], &mut body[at..], Flush::Finish)
            .ok()?;
        if status != Status::StreamEnd
            && state.total_in() as usize == inn
            && state.total_out() as usize == out
        {
            return None;
        }
    }
    let whole =
        state.total_in() as usize == raw.len() && state.total_out() as usize == header + size;
    whole.then_some(body)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testing::git;

    /// Writes loose blobs until one lands in git's sample directory (`objects/17`), so the
    /// store reads as one with many loose objects.
    pub(crate) fn fill_sample(store: &Store) {
        for i in 0.. {
            let id = store
                .repo
                .write_blob(format!("sample {i}"))
                .expect("a blob")
                .detach();
            if id.as_bytes()[0] == 0x17 {
                return;
            }
        }
    }

    /// A repository with one commit of `file` holding `bytes`, all loose (git's sample
    /// directory filled): (dir, store, commit, tree, blob).
    fn loose_commit(bytes: &[u8]) -> (tempfile::TempDir, Store, [ObjectId; 3]) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::init(dir.path()).expect("a new repository");
        fill_sample(&store);
        std::fs::write(dir.path().join("f"), bytes).expect("writing the file");
        git(dir.path(), &["add", "f"]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let id = |rev: &str| ObjectId::from_hex(git(dir.path(), &["rev-parse", rev]).as_bytes());
        let ids = [id("HEAD"), id("HEAD^{tree}"), id("HEAD:f")].map(|i| i.expect("an id"));
        (dir, store, ids)
    }

    /// The bytes gix reads for `id`.
    fn through_gix(store: &Store, id: ObjectId) -> Vec<u8> {
        store
            .repo
            .find_object(id)
            .expect("gix reads it")
            .data
            .clone()
    }

    /// The loose file of `id`, made writable.
    fn file_of(dir: &std::path::Path, id: ObjectId) -> PathBuf {
        let hex = id.to_hex().to_string();
        let path = dir.join(".git/objects").join(&hex[..2]).join(&hex[2..]);
        let mut perms = std::fs::metadata(&path)
            .expect("a loose file")
            .permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&path, perms).expect("making it writable");
        path
    }

    #[test]
    fn reads_each_kind_as_gix_does() {
        let (_dir, store, [commit, tree, blob]) = loose_commit(b"hello\n");
        let reader = Reader::open(&store).expect("a reader");
        for (id, kind) in [
            (commit, Kind::Commit),
            (tree, Kind::Tree),
            (blob, Kind::Blob),
        ] {
            assert_eq!(
                reader.read(&id, kind),
                Some(through_gix(&store, id)),
                "{kind}"
            );
        }
    }

    #[test]
    fn reads_an_object_larger_than_its_buffer() {
        // Incompressible enough that the file is larger than the buffer.
        let mut bytes = Vec::with_capacity(3 * BUFFER);
        let mut x: u32 = 1;
        while bytes.len() < 3 * BUFFER {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        let (dir, store, [_, _, blob]) = loose_commit(&bytes);
        let size = std::fs::metadata(file_of(dir.path(), blob))
            .expect("a file")
            .len();
        assert!(
            size > BUFFER as u64,
            "the object file should outgrow the buffer ({size})"
        );
        let reader = Reader::open(&store).expect("a reader");
        assert_eq!(reader.read(&blob, Kind::Blob), Some(bytes));
    }

    #[test]
    fn leaves_objects_packed_since_it_started_to_gix() {
        let (dir, store, [commit, _, _]) = loose_commit(b"x");
        let reader = Reader::open(&store).expect("a reader");
        git(dir.path(), &["repack", "-a", "-d", "-q"]);
        assert_eq!(reader.read(&commit, Kind::Commit), None);
        assert!(
            !through_gix(&store, commit).is_empty(),
            "gix reads it from the pack"
        );
    }

    #[test]
    fn control_a_store_with_nothing_loose_in_the_sample_starts_no_reader() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::init(dir.path()).expect("a new repository");
        // Loose objects, none of them in git's sample directory.
        for i in 0..8 {
            store.repo.write_blob(format!("blob {i}")).expect("a blob");
        }
        let _ = std::fs::remove_dir_all(dir.path().join(".git/objects/17"));
        assert!(Reader::open(&store).is_none(), "an empty sample: no reader");
        fill_sample(&store);
        assert!(Reader::open(&store).is_some(), "a filled sample: a reader");
    }

    #[test]
    fn control_refuses_another_kind_a_cut_file_and_bytes_after_the_stream() {
        let (dir, store, [commit, tree, blob]) = loose_commit(b"some content\n");
        let reader = Reader::open(&store).expect("a reader");
        assert_eq!(
            reader.read(&commit, Kind::Tree),
            None,
            "a commit is not a tree"
        );
        // Cut: the stream does not end.
        let path = file_of(dir.path(), tree);
        let raw = std::fs::read(&path).expect("the file");
        std::fs::write(&path, &raw[..raw.len() - 3]).expect("cutting it");
        assert_eq!(reader.read(&tree, Kind::Tree), None, "a cut file");
        // Bytes after the stream's end.
        let path = file_of(dir.path(), blob);
        let mut raw = std::fs::read(&path).expect("the file");
        raw.extend_from_slice(b"garbage");
        std::fs::write(&path, &raw).expect("appending");
        assert_eq!(reader.read(&blob, Kind::Blob), None, "bytes after the end");
        // Missing: left to gix.
        assert_eq!(
            reader.read(&ObjectId::null(gix::hash::Kind::Sha1), Kind::Blob),
            None
        );
    }

    #[test]
    fn starts_after_many_reads() {
        let (_dir, store, _) = loose_commit(b"x");
        assert!(
            store.loose_reader(AFTER).is_none(),
            "not before AFTER reads"
        );
        assert!(store.loose_reader(1).is_some(), "past AFTER reads");
        assert!(store.view().loose_reader(0).is_some(), "a view shares it");
    }
}
