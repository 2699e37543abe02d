//! Long chains written as one pack: an imported loop of 10,000 events is 30,000 objects, which
//! as loose files cost a file each to write, to flush and, later, to read. Written as one pack
//! with its index (gix-pack encodes and indexes it), they are two files and one flush, and reads
//! come from one mapped file, as after `git gc`.

use std::sync::atomic::AtomicBool;

use gix::ObjectId;
use gix::objs::tree::EntryKind;
use gix::objs::{Kind, WriteTo};
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
        let entries = objects
            .iter()
            .map(|(id, kind, data)| {
                output::Entry::from_data(
                    &output::Count::from_data(*id, None),
                    &gix::objs::Data::new(data, *kind, hash),
                    gix::zlib::Compression::BEST_SPEED,
                )
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(git("compressing a record object"))?;
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
