//! Long chains written as one pack: an imported loop of 10,000 events is 30,000 objects, which
//! as loose files cost a file each to write, to flush and, later, to read. Written as one pack
//! with its index (gix-pack encodes and indexes it), they are two files and one flush, and reads
//! come from one mapped file, as after `git gc`.

use std::sync::atomic::AtomicBool;

use gix::ObjectId;
use gix::objs::tree::EntryKind;
use gix::objs::{Kind, WriteTo};
use gix::zlib::Status;
use gix::zlib::stream::deflate::{Compress, FlushCompress};
use gix_pack::data::output;

use super::{Error, NewRecord, Store, git};

/// From how many records a new chain is written as one pack rather than as loose objects.
pub(crate) const PACK_FROM: usize = 256;

/// A chain written as a pack, not yet named by any ref.
pub(crate) struct PackedChain {
    /// The last record's commit.
    pub tip: ObjectId,
    /// The marker that keeps `git gc` from collecting the pack before a ref names its objects;
    /// removed once the ref moved (or the write was given up).
    pub keep: Option<std::path::PathBuf>,
}

impl PackedChain {
    /// Lets `git gc` treat the pack as any other, once a ref names the chain or nothing will.
    pub fn release(self) {
        if let Some(keep) = self.keep {
            let _ = std::fs::remove_file(keep);
        }
    }
}

/// Deflates `data` as one zlib stream with `deflate` (reset first), through `chunk`.
fn compress(deflate: &mut Compress, data: &[u8], chunk: &mut [u8]) -> Result<Vec<u8>, Error> {
    deflate.reset();
    let (read, written) = (deflate.total_in(), deflate.total_out());
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    loop {
        let consumed = usize::try_from(deflate.total_in() - read).expect("within the input");
        let before = deflate.total_out();
        let status = deflate
            .compress(&data[consumed..], chunk, FlushCompress::Finish)
            .map_err(git("compressing a record object"))?;
        let produced = usize::try_from(deflate.total_out() - before).expect("within the chunk");
        out.extend_from_slice(&chunk[..produced]);
        if status == Status::StreamEnd {
            debug_assert_eq!(deflate.total_out() - written, out.len() as u64);
            return Ok(out);
        }
    }
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        what: what.to_owned(),
        source,
    }
}

impl Store {
    /// Writes `records` as a chain of commits (each the parent of the next, the first with none),
    /// each tree holding its record's blob, into one new pack and index; flushes both and the
    /// pack directory to disk. No ref moves.
    pub(crate) fn write_chain_pack(&self, records: &[NewRecord<'_>]) -> Result<PackedChain, Error> {
        let hash = self.repo.object_hash();
        let mut objects: Vec<(ObjectId, Kind, Vec<u8>)> = Vec::with_capacity(records.len() * 3);
        let mut seen = std::collections::HashSet::with_capacity(records.len() * 3);
        let mut add = |kind: Kind, data: Vec<u8>| -> Result<ObjectId, Error> {
            let id = gix::objs::compute_hash(hash, kind, &data)
                .map_err(git("hashing a record object"))?;
            if seen.insert(id) {
                objects.push((id, kind, data));
            }
            Ok(id)
        };
        let mut parent = None;
        for record in records {
            let blob = add(Kind::Blob, record.bytes.to_vec())?;
            let tree = gix::objs::Tree {
                entries: vec![gix::objs::tree::Entry {
                    mode: EntryKind::Blob.into(),
                    filename: record.file.into(),
                    oid: blob,
                }],
            };
            let mut bytes = Vec::new();
            tree.write_to(&mut bytes).map_err(io("encoding a tree"))?;
            let tree = add(Kind::Tree, bytes)?;
            let mut bytes = Vec::new();
            self.commit_object(tree, parent, record.message)
                .write_to(&mut bytes)
                .map_err(io("encoding a commit"))?;
            parent = Some(add(Kind::Commit, bytes)?);
        }
        let tip = parent.ok_or_else(|| Error::NothingToWrite {
            name: "a packed chain".into(),
        })?;
        // One compressor for every object: a deflate state is a few hundred KiB, and making
        // one per object (as `output::Entry::from_data` does) let 30,000 of them pile up in the
        // heap, 50 MiB to 3 GiB from run to run for the same 10,000 events.
        let mut deflate = Compress::new(gix::zlib::Compression::BEST_SPEED);
        let mut chunk = vec![0_u8; 64 * 1024];
        let mut entries = Vec::with_capacity(objects.len());
        for (id, kind, data) in &objects {
            entries.push(output::Entry {
                id: *id,
                kind: output::entry::Kind::Base(*kind),
                decompressed_size: data.len(),
                compressed_data: compress(&mut deflate, data, &mut chunk)?,
            });
        }
        let count = u32::try_from(entries.len()).expect("a chain holds fewer than 2^32 objects");
        let mut pack = Vec::new();
        for written in output::bytes::FromEntriesIter::new(
            std::iter::once(Ok(entries)),
            &mut pack,
            count,
            gix_pack::data::Version::V2,
            hash,
        ) {
            written.map_err(git("writing a pack"))?;
        }
        let dir = self.repo.objects.store_ref().path().join("pack");
        std::fs::create_dir_all(&dir).map_err(io("creating the pack directory"))?;
        let outcome = gix_pack::Bundle::write_to_directory(
            &mut pack.as_slice(),
            Some(&dir),
            &mut gix::progress::Discard,
            &AtomicBool::new(false),
            None::<gix::objs::find::Never>,
            hash,
            gix_pack::bundle::write::Options::default(),
        )
        .map_err(git("indexing a pack"))?;
        // gix does not flush: the pack and its index reach the disk before any ref names them.
        for file in [&outcome.data_path, &outcome.index_path]
            .into_iter()
            .flatten()
        {
            std::fs::File::open(file)
                .and_then(|f| f.sync_all())
                .map_err(io("flushing a new pack"))?;
        }
        if let Ok(handle) = std::fs::File::open(&dir) {
            let _ = handle.sync_all();
        }
        Ok(PackedChain {
            tip,
            keep: outcome.keep_path,
        })
    }
}
