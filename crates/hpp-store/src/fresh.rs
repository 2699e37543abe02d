//! What a fetch brought, decoded once: the objects of the packs `git fetch` wrote, read in pack
//! order on every core when a command goes on to read many of them.
//!
//! A fetch verifies what it takes in (the remote's board, a loop's new events), so right after
//! `git fetch` it reads thousands of the objects that fetch wrote: a log of 10,000 entries is
//! 30,000 objects (commit, tree, blob each). Read one at a time, every commit names the next,
//! so the walk is one thread's, and each read pays an index lookup and a delta-base cache probe
//! on top of its inflate: about 3.4 µs a commit, where inflating it is 1 µs. The packs the fetch
//! wrote hold exactly those objects, so once a read has gone past [`AFTER`] commits the store
//! decodes the fetch's packs whole instead, their entries split by offset across threads
//! ([`parallelism`]; each resolving its deltas against the bases it decoded, or through the
//! pack), and every further commit, tree and small blob read comes from memory. The decoding
//! starts while `git fetch` still runs: git links a pack's index once the pack is in place,
//! then checks connectivity and moves the staging refs on one core, and the fetch watching for
//! the index starts decoding beside it ([`Store::watch_for_fresh_pack`]); the first commit
//! read after the fetch then joins it. The objects are git's own bytes, as the object
//! database would return them; nothing here decides what they mean, and nothing is read from
//! them until the fetch succeeded and a ref it staged names them.
//!
//! Bounded: a pack larger than [`MAX_PACK_BYTES`] or with more than [`MAX_OBJECTS`] entries is
//! not decoded (reads go to the object database as before), and a blob larger than
//! [`MAX_BLOB`] is not kept. A pack that does not decode (a base outside it, a truncated entry)
//! leaves every read to the object database.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use gix::ObjectId;
use gix::hashtable::HashMap;

use super::Store;
use super::git_cli::Tick;

/// Commits read one by one before the fetch's packs are decoded whole, when the fetch did not
/// start decoding them while git ran: a short log (a lane's, a loop of a few events) costs no
/// more than it did.
pub(crate) const AFTER: usize = 256;

/// How often a fetch watching for its pack lists the pack directory even though its
/// modification time did not move (see [`Store::watch_for_fresh_pack`]).
const RELIST: usize = 16;

/// The largest pack decoded whole, in bytes as stored (below 4 GiB: its offsets are sorted as
/// 32-bit numbers).
pub(crate) const MAX_PACK_BYTES: u64 = 256 << 20;

/// The most entries a pack decoded whole may have.
pub(crate) const MAX_OBJECTS: u32 = 1_000_000;

/// The largest blob kept in memory; larger ones are read from the object database.
pub(crate) const MAX_BLOB: usize = 64 << 10;

/// The packs a fetch wrote and, once decoded, their objects. Shared by a store and its views.
#[derive(Default)]
pub(crate) struct Fresh {
    /// The index files of the packs the fetch wrote.
    packs: Mutex<Vec<PathBuf>>,
    /// Commits read while the packs were not decoded.
    reads: AtomicUsize,
    /// The decoded objects (`None`: not decodable, or not worth it).
    objects: OnceLock<Option<Objects>>,
    /// A decoding started while the fetch still ran, of these packs: after it writes its pack,
    /// git checks connectivity and moves the staging refs on one core, so the other decodes.
    background: Mutex<Option<Background>>,
}

/// A decoding in the background: the packs it decodes, and the thread.
type Background = (Vec<PathBuf>, std::thread::JoinHandle<Option<Objects>>);

/// Decoded objects by id, as each decoding thread found them (joining them would cost a third
/// of the decoding; a lookup asks each part).
#[derive(Default)]
pub(crate) struct Objects {
    parts: Vec<Part>,
}

thread_local! {
    /// The part where this thread last found the commit, the tree and the blob it asked for
    /// ([`Objects::find`]). Each reading thread walks its own run of a log, whose objects a
    /// part or two hold, so a lookup that asks that part first mostly finds them there: asking
    /// every part in turn was a cache miss in each map that did not hold it (3 ms of a board
    /// fetch), and one hint shared by the reading threads was wrong for all but one of them
    /// and moved between their caches at each miss (5 ms).
    static LAST: std::cell::Cell<[usize; 3]> = const { std::cell::Cell::new([0; 3]) };

    /// Where in its part the commit after the one this thread last found is (part, place).
    /// git writes a pack's commits newest first, each history in the order its walk visits
    /// them, so the commit a walk asks for next is most often the next one: found there, it
    /// costs no lookup by id, whose table another thread built (a cache miss each, 2 ms of a
    /// board fetch's walk).
    static NEXT_COMMIT: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// What one decoding thread found, in two arenas: 30,000 objects are two allocations, not
/// 30,000, to make and to free.
#[derive(Default)]
struct Part {
    /// Commits in pack order, parsed in the decoding thread (a walk of a log asks only this of
    /// them): the id, where the parents start in `parents`, how many, the tree and the
    /// committer time.
    commits: Vec<(ObjectId, u32, u32, ObjectId, i64)>,
    /// Where each commit is in `commits`.
    commit_at: HashMap<ObjectId, u32>,
    /// Every commit's parents, one after the other.
    parents: Vec<ObjectId>,
    /// Trees and blobs no larger than [`MAX_BLOB`]: their kind and where their bytes are.
    others: HashMap<ObjectId, (gix::object::Kind, Slot)>,
    /// The bytes of every tree and blob decoded (no larger than [`MAX_BLOB`]), by where its
    /// data starts in the pack: also the delta bases the decoding asks for again.
    arena: Arena,
}

/// Where an object's bytes are in an [`Arena`]: the chunk, the start and the length.
#[derive(Debug, Clone, Copy)]
struct Slot {
    chunk: u32,
    start: u32,
    len: u32,
}

/// Decoded objects one after the other in chunks that are never moved (a growing buffer would
/// copy everything each time it doubled), found by their offset in the pack. It is the
/// decoding's delta-base cache too: every base a delta names comes before it in the pack, so
/// reading in pack order finds each one here, and no object is copied into a cache of its own.
#[derive(Default)]
struct Arena {
    chunks: Vec<Vec<u8>>,
    by_offset: foldhash::HashMap<u64, (gix::object::Kind, Slot)>,
}

/// The size of an arena's chunk (a larger object gets a chunk of its own size).
const CHUNK: usize = 1 << 20;

impl Arena {
    fn bytes(&self, slot: Slot) -> Option<&[u8]> {
        self.chunks
            .get(slot.chunk as usize)?
            .get(slot.start as usize..(slot.start + slot.len) as usize)
    }

    /// Keeps `data`, decoded at `offset`, unless it is larger than [`MAX_BLOB`] or kept already.
    fn keep(&mut self, offset: u64, data: &[u8], kind: gix::object::Kind) -> Option<Slot> {
        if let Some((_, slot)) = self.by_offset.get(&offset) {
            return Some(*slot);
        }
        if data.len() > MAX_BLOB {
            return None;
        }
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= data.len());
        if !fits {
            self.chunks.push(Vec::with_capacity(CHUNK.max(data.len())));
        }
        let chunk = self.chunks.len() - 1;
        let last = self.chunks.last_mut()?;
        let slot = Slot {
            chunk: u32::try_from(chunk).ok()?,
            start: u32::try_from(last.len()).ok()?,
            len: u32::try_from(data.len()).ok()?,
        };
        last.extend_from_slice(data);
        self.by_offset.insert(offset, (kind, slot));
        Some(slot)
    }
}

impl gix_pack::cache::DecodeEntry for Arena {
    fn put(&mut self, _pack: u32, offset: u64, data: &[u8], kind: gix::object::Kind, _: usize) {
        self.keep(offset, data, kind);
    }

    fn get(
        &mut self,
        _pack: u32,
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Option<(gix::object::Kind, usize)> {
        let (kind, slot) = *self.by_offset.get(&offset)?;
        let bytes = self.bytes(slot)?;
        out.clear();
        out.extend_from_slice(bytes);
        Some((kind, bytes.len()))
    }
}

impl Objects {
    /// The shape of the commit `id`, if the fetch brought it.
    pub(crate) fn commit(&self, id: &ObjectId) -> Option<super::shape::Shape> {
        let (at, place) = NEXT_COMMIT.with(std::cell::Cell::get);
        let next = self.parts.get(at).and_then(|part| part.commits.get(place));
        let (part, place) = match next {
            Some(commit) if commit.0 == *id => (at, place),
            _ => {
                let (at, _, &place) = self.find(0, |part| part.commit_at.get(id))?;
                (at, place as usize)
            }
        };
        NEXT_COMMIT.with(|next| next.set((part, place + 1)));
        let part = &self.parts[part];
        let &(_, start, count, tree, time) = part.commits.get(place)?;
        let parents = part.parents.get(start as usize..(start + count) as usize)?;
        Some((super::shape::Parents::from_slice(parents), tree, time))
    }

    /// The bytes of `id` if the fetch brought it as a `kind` (a tree or a small blob).
    pub(crate) fn get(&self, id: &ObjectId, kind: gix::object::Kind) -> Option<&[u8]> {
        let hint = if kind == gix::object::Kind::Tree {
            1
        } else {
            2
        };
        let (_, part, &(k, slot)) = self.find(hint, |part| part.others.get(id))?;
        (k == kind).then(|| part.arena.bytes(slot))?
    }

    /// The first part that has what `lookup` finds (its place, itself, and what was found),
    /// asking first the part this thread's hint `hint` names ([`LAST`]), and noting where it
    /// was found there.
    fn find<'a, T>(
        &'a self,
        hint: usize,
        lookup: impl Fn(&'a Part) -> Option<&'a T>,
    ) -> Option<(usize, &'a Part, &'a T)> {
        let first = LAST.with(|last| last.get()[hint]);
        if let Some(found) = self.parts.get(first).and_then(&lookup) {
            return Some((first, &self.parts[first], found));
        }
        let (at, part, found) = self
            .parts
            .iter()
            .enumerate()
            .filter(|(at, _)| *at != first)
            .find_map(|(at, part)| Some((at, part, lookup(part)?)))?;
        LAST.with(|last| {
            let mut hints = last.get();
            hints[hint] = at;
            last.set(hints);
        });
        Some((at, part, found))
    }

    /// How many objects are held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.parts
            .iter()
            .map(|p| p.commits.len() + p.others.len())
            .sum()
    }
}

impl Store {
    /// The directory of the object database's packs, `objects/pack/`.
    pub(crate) fn pack_dir(&self) -> PathBuf {
        self.repo.objects.store_ref().path().join("pack")
    }

    /// The index files under `objects/pack/` now.
    pub(crate) fn pack_indices(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.pack_dir()) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .collect();
        found.sort();
        found
    }

    /// Notes the packs a fetch wrote: those in `now` that were not in `before`.
    pub(crate) fn note_fresh_packs(&self, before: &[PathBuf], now: Vec<PathBuf>) {
        let fresh: Vec<PathBuf> = now.into_iter().filter(|p| !before.contains(p)).collect();
        if fresh.is_empty() {
            return;
        }
        lock(&self.fresh.packs).extend(fresh);
    }

    /// Returns what a fetch calls while git runs ([`super::git_cli::output_watching`]) when the
    /// pack directory changed, or every few milliseconds where the kernel cannot say: the
    /// first time a pack not in `before` is in place (git links its index last), its decoding
    /// starts in the background, beside git's check of connectivity, and it returns `false`:
    /// nothing more to watch for.
    ///
    /// Told that the directory changed ([`Tick::Changed`]), it lists it. Only told that time
    /// passed, it lists the directory when its modification time moved (git creates, then
    /// renames, the pack's files in it), and every [`RELIST`] calls whatever it says, for a
    /// file system whose times are too coarse to show two changes a second apart: listing it
    /// every call was a third of what the fetch's own thread did while git ran.
    pub(crate) fn watch_for_fresh_pack<'a>(
        &'a self,
        before: &'a [PathBuf],
    ) -> impl FnMut(Tick) -> bool + 'a {
        let dir = self.pack_dir();
        let mut started = false;
        let mut seen = None;
        let mut calls = 0usize;
        move |tick| {
            if started {
                return false;
            }
            calls += 1;
            if tick == Tick::Elapsed {
                let modified = std::fs::metadata(&dir).and_then(|m| m.modified()).ok();
                if modified.is_some() && modified == seen && !calls.is_multiple_of(RELIST) {
                    return true;
                }
                seen = modified;
            }
            let new: Vec<PathBuf> = self
                .pack_indices()
                .into_iter()
                .filter(|p| !before.contains(p))
                .collect();
            if new.is_empty() {
                return true;
            }
            started = true;
            let hash = self.repo.object_hash();
            let packs = new.clone();
            let handle = std::thread::spawn(move || decode(&packs, hash, parallelism()));
            *lock(&self.fresh.background) = Some((new, handle));
            false
        }
    }

    /// How many commits the fetch's decoded objects hold (0 when none are decoded).
    pub(crate) fn fresh_commits(&self) -> usize {
        self.fresh_objects(false)
            .map_or(0, |o| o.parts.iter().map(|p| p.commits.len()).sum())
    }

    /// The fetch's objects, when they are decoded. A read of a commit (`counting`) joins the
    /// decoding the fetch started while git ran: its objects are decoded already, or nearly,
    /// and each commit read through the object database instead costs an index lookup and an
    /// inflate of its own (the first [`AFTER`] of a board fetch were 10% of what the command
    /// did after git). With no decoding started, a read past [`AFTER`] commits decodes the
    /// fetch's packs first.
    pub(crate) fn fresh_objects(&self, counting: bool) -> Option<&Objects> {
        if let Some(decoded) = self.fresh.objects.get() {
            return decoded.as_ref();
        }
        if !counting {
            return None;
        }
        let started = lock(&self.fresh.background).is_some();
        if !started && self.fresh.reads.fetch_add(1, Ordering::Relaxed) < AFTER {
            return None;
        }
        let packs = lock(&self.fresh.packs).clone();
        if packs.is_empty() {
            return None;
        }
        let background = lock(&self.fresh.background).take();
        self.fresh
            .objects
            .get_or_init(|| match background {
                // It decoded every pack the fetch wrote.
                Some((started, handle)) if started == packs => handle.join().ok().flatten(),
                _ => decode(&packs, self.repo.object_hash(), parallelism()),
            })
            .as_ref()
    }
}

/// `mutex`'s guard; a thread that panicked holding it left nothing half-written here (each
/// holder replaces or takes a whole value), so the value stands.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many threads a decoding (or a parse of what it decoded) takes: every core, up to eight,
/// and at least four. On a small machine that another process keeps busy, the scheduler shares
/// the cores by runnable thread, so one thread per core would leave a fetch a smaller share
/// than the busy process; more than four, and each part's first delta chains (whose bases the
/// part before decoded) cost more than the share gains (one core busy on two: 1.34x `git
/// fetch` with one thread a core, about 1.2x with four, no change quiet).
pub(crate) fn parallelism() -> usize {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(4, 8)
}

/// Every object of `packs`, decoded in pack order on `threads` threads; `None` when one pack is
/// too large or does not decode.
fn decode(packs: &[PathBuf], hash: gix::hash::Kind, threads: usize) -> Option<Objects> {
    let mut objects = Objects::default();
    for index in packs {
        let bundle = gix_pack::Bundle::at(index, hash).ok()?;
        if bundle.pack.data_len() as u64 > MAX_PACK_BYTES
            || bundle.index.num_objects() > MAX_OBJECTS
        {
            return None;
        }
        // In pack order, each thread's reads run forward through the file, and a delta's base
        // is most often just before it. Sorted as one number each, the offset above the
        // entry's place in the index (no two entries share an offset, and a pack no larger
        // than `MAX_PACK_BYTES` has offsets below 2^32): sorting the (offset, id) pairs
        // themselves was three quarters of what this thread did before the decoding started.
        let index = &bundle.index;
        let mut order: Vec<u64> = (0..index.num_objects())
            .map(|at| (index.pack_offset_at_index(at) << 32) | u64::from(at))
            .collect();
        order.sort_unstable();
        let entries: Vec<(u64, ObjectId)> = order
            .iter()
            .map(|key| {
                let at = (key & u64::from(u32::MAX)) as u32;
                (key >> 32, index.oid_at_index(at).to_owned())
            })
            .collect();
        let parts = std::thread::scope(|scope| {
            let handles: Vec<_> = by_bytes(&entries, threads)
                .map(|part| scope.spawn(|| decode_part(&bundle, part)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect::<Option<Vec<_>>>()
        })?;
        objects.parts.extend(parts);
    }
    Some(objects)
}

/// `entries` (sorted by offset) in `parts` runs of about as many bytes of the pack each: what
/// an entry costs follows its compressed size (a commit's own Huffman tables make it five times
/// a small delta's), so runs of as many entries would leave one thread with every commit.
fn by_bytes(entries: &[(u64, ObjectId)], parts: usize) -> impl Iterator<Item = &[(u64, ObjectId)]> {
    let (first, last) = match (entries.first(), entries.last()) {
        (Some(first), Some(last)) => (first.0, last.0),
        _ => (0, 0),
    };
    let span = (last - first).max(1);
    let mut starts: Vec<usize> = (0..parts as u64)
        .map(|k| entries.partition_point(|(offset, _)| offset - first < span * k / parts as u64))
        .collect();
    starts.push(entries.len());
    starts.dedup();
    (0..starts.len().saturating_sub(1)).map(move |i| &entries[starts[i]..starts[i + 1]])
}

/// The objects at `entries` (offset, id) of one pack.
fn decode_part(bundle: &gix_pack::Bundle, entries: &[(u64, ObjectId)]) -> Option<Part> {
    let (pack, index) = (&bundle.pack, &bundle.index);
    // libdeflate for what this thread decodes itself; gix's zlib stream for the chains it
    // leaves to gix-pack.
    let mut whole = libdeflater::Decompressor::new();
    // Made when a chain first needs it: its state is 20 pages a thread, and most parts never do.
    let mut streaming: Option<gix::zlib::Inflate> = None;
    let mut buf = Vec::new();
    let mut scratch = Vec::new();
    let mut out = Part::default();
    out.commit_at.reserve(entries.len());
    out.others.reserve(entries.len());
    // Every base once: a blob at the end of a chain of 50 deltas is not decoded 50 times.
    out.arena.by_offset.reserve(entries.len());
    // A delta names its base by id only in a thin pack; `git fetch` completes those, so a base
    // is in the pack or the pack is not taken.
    let resolve = |id: &gix::oid, _: &mut Vec<u8>| {
        index
            .lookup(id)
            .map(|at| {
                pack.entry(index.pack_offset_at_index(at))
                    .map(gix_pack::data::decode::entry::ResolvedBase::InPack)
            })
            .transpose()
    };
    for (offset, id) in entries {
        let entry = pack.entry(*offset).ok()?;
        // The decoding names an object by where its data starts, past the entry's header.
        let data_offset = entry.data_offset;
        let kind = match inflate_one(pack, &entry, &mut whole, &mut scratch, &mut buf, &out.arena) {
            Some(kind) => kind,
            // A base outside what this thread decoded, or a base by id: gix resolves the chain.
            None => {
                let decoded = pack
                    .decode_entry(
                        entry,
                        &mut buf,
                        streaming.get_or_insert_with(Default::default),
                        &resolve,
                        &mut out.arena,
                    )
                    .ok()?;
                buf.truncate(usize::try_from(decoded.object_size).ok()?);
                decoded.kind
            }
        };
        let bytes = buf.as_slice();
        match kind {
            // A commit is kept as its shape, not its bytes (nothing reads them from here):
            // 10,000 commits are 3 MB that a fetch no longer writes into fresh pages. A commit
            // that a later delta names as its base is decoded again through gix, as any base
            // outside the arena is.
            gix::object::Kind::Commit => {
                // A commit that does not read is left to the object database, which says so.
                if let Ok((parents, tree, time)) =
                    super::shape::shape_of_bytes(bytes, index.object_hash(), "", *id)
                {
                    let start = u32::try_from(out.parents.len()).ok()?;
                    let count = u32::try_from(parents.len()).ok()?;
                    out.parents.extend(parents);
                    let place = u32::try_from(out.commits.len()).ok()?;
                    out.commit_at.insert(*id, place);
                    out.commits.push((*id, start, count, tree, time));
                }
            }
            kind => {
                // A delta's result the decoding kept already is not kept twice.
                if let Some(slot) = out.arena.keep(data_offset, bytes, kind) {
                    out.others.insert(*id, (kind, slot));
                }
            }
        }
    }
    Some(out)
}

/// Room left past an object's end when it is inflated: a decoder keeps to its fast loop only
/// while a whole match (258 bytes) and its overrun fit in what is left (libdeflate: 299 bytes;
/// zlib: 258), so an object inflated into a buffer of its exact size, as gix does, is decoded
/// symbol by symbol to its end.
const SLACK: usize = 320;

/// Inflates the zlib stream of `entry` into `out`, which ends up exactly the stream's size;
/// `None` when the stream does not read, fails its checksum, or is not the size the entry says.
/// libdeflate inflates a whole buffer at once, building each stream's Huffman tables faster
/// than zlib's streaming inflate: a board's 30,000 small objects took a third fewer
/// instructions, and the decoding is most of a board fetch's own work.
fn inflate_into(
    pack: &gix_pack::data::File,
    entry: &gix_pack::data::Entry,
    inflate: &mut libdeflater::Decompressor,
    out: &mut Vec<u8>,
) -> Option<()> {
    let size = usize::try_from(entry.decompressed_size).ok()?;
    // The stream runs to its own end; what follows it in the pack is not read as its data.
    let input = pack.entry_slice(entry.data_offset..pack.data_len() as u64)?;
    out.clear();
    out.resize(size.checked_add(SLACK)?, 0);
    let written = inflate.zlib_decompress(input, out).ok()?;
    if written != size {
        return None;
    }
    out.truncate(size);
    Some(())
}

/// Decodes `entry` into `out` with room for the decoder's fast loop: a whole object, or a delta on a
/// base `arena` holds already. `None` leaves it to gix's decoding (a base this thread has not
/// decoded, a base named by id, a stream that does not read).
fn inflate_one(
    pack: &gix_pack::data::File,
    entry: &gix_pack::data::Entry,
    inflate: &mut libdeflater::Decompressor,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
    arena: &Arena,
) -> Option<gix::object::Kind> {
    use gix_pack::data::entry::Header;
    match entry.header {
        Header::OfsDelta { base_distance } => {
            let base_offset = entry.checked_base_pack_offset(base_distance)?;
            let base = pack.entry(base_offset).ok()?;
            let (kind, slot) = *arena.by_offset.get(&base.data_offset)?;
            inflate_into(pack, entry, inflate, scratch)?;
            apply_delta(arena.bytes(slot)?, scratch, out)?;
            Some(kind)
        }
        Header::RefDelta { .. } => None,
        header => {
            let kind = header.as_kind()?;
            inflate_into(pack, entry, inflate, out)?;
            Some(kind)
        }
    }
}

/// Applies the git delta `delta` to `base` into `out` (pack-format: the base's size and the
/// result's size as little-endian base-128 numbers, then instructions that copy a range of
/// the base or insert the bytes that follow them). `None` when it does not apply exactly.
fn apply_delta(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Option<()> {
    fn size(d: &mut &[u8]) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = d.split_first()?;
            *d = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let mut d = delta;
    if size(&mut d)? != base.len() as u64 {
        return None;
    }
    let target = usize::try_from(size(&mut d)?).ok()?;
    out.clear();
    out.reserve(target);
    while let Some((&op, rest)) = d.split_first() {
        d = rest;
        if op & 0x80 != 0 {
            // Copy: which of four offset bytes and three length bytes follow, low bits first.
            let (mut offset, mut len) = (0usize, 0usize);
            for i in 0..7 {
                if op & (1 << i) != 0 {
                    let (&byte, rest) = d.split_first()?;
                    d = rest;
                    if i < 4 {
                        offset |= usize::from(byte) << (8 * i);
                    } else {
                        len |= usize::from(byte) << (8 * (i - 4));
                    }
                }
            }
            if len == 0 {
                len = 0x10000;
            }
            out.extend_from_slice(base.get(offset..offset.checked_add(len)?)?);
        } else if op != 0 {
            // Insert the next `op` bytes.
            let (bytes, rest) = d.split_at_checked(usize::from(op))?;
            out.extend_from_slice(bytes);
            d = rest;
        } else {
            return None;
        }
        if out.len() > target {
            return None;
        }
    }
    (out.len() == target).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::git;

    /// A repository whose log `refs/hpp/board/log` of `n` entries is all in one pack, noted as
    /// a fetch's.
    fn packed_log(n: usize) -> (tempfile::TempDir, Store, crate::CommitId) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (store, tip) = crate::testing::appended_log(dir.path(), "refs/hpp/board/log", n);
        let before = store.pack_indices();
        git(dir.path(), &["repack", "-adq"]);
        let store = Store::discover(dir.path()).expect("the repository reopens");
        store.note_fresh_packs(&[], store.pack_indices());
        assert_ne!(before, store.pack_indices(), "repack wrote a pack");
        (dir, store, tip)
    }

    /// Blobs of `size` bytes that differ in one line each: git stores all but one of them as
    /// deltas, in long chains.
    fn deltified_pack(n: usize, size: usize) -> (tempfile::TempDir, PathBuf, Vec<ObjectId>) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        git(dir.path(), &["init", "-q"]);
        let filler: String = (0..size / 32)
            .map(|i| format!("line {i:05} of the filler ...\n"))
            .collect();
        let mut ids = Vec::new();
        for i in 0..n {
            std::fs::write(dir.path().join("f"), format!("{filler}version {i}\n")).unwrap();
            ids.push(
                git(dir.path(), &["hash-object", "-w", "f"])
                    .parse()
                    .unwrap(),
            );
        }
        let list: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let out = std::process::Command::new("git")
            .args([
                "pack-objects",
                "-q",
                "--window=50",
                "--depth=50",
                ".git/objects/pack/pack",
            ])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(list.as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        assert!(out.status.success());
        let name = String::from_utf8(out.stdout).unwrap();
        let index = dir
            .path()
            .join(format!(".git/objects/pack/pack-{}.idx", name.trim()));
        (dir, index, ids)
    }

    #[test]
    fn a_delta_copies_and_inserts_as_the_pack_format_says() {
        let base = b"hello, base world";
        // Base size 17, result size 14; copy 7 bytes at 0, insert "delta", copy 2 at 15.
        let delta = [
            17, 14, 0x90, 7, 5, b'd', b'e', b'l', b't', b'a', 0x91, 15, 2,
        ];
        let mut out = Vec::new();
        apply_delta(base, &delta, &mut out).expect("the delta applies");
        assert_eq!(out, b"hello, deltald");
    }

    #[test]
    fn control_a_delta_that_does_not_fit_its_base_is_refused() {
        let base = b"hello, base world";
        let mut out = Vec::new();
        for (why, delta) in [
            ("another base size", vec![16, 7, 0x90, 7]),
            ("a copy past the base", vec![17, 7, 0x91, 15, 7]),
            ("an insert cut short", vec![17, 5, 5, b'a', b'b']),
            ("a longer result than announced", vec![17, 2, 0x90, 7]),
            ("the reserved instruction", vec![17, 1, 0]),
        ] {
            assert_eq!(apply_delta(base, &delta, &mut out), None, "{why}");
        }
    }

    #[test]
    fn deltas_decode_against_the_bases_kept_in_the_arena() {
        let (dir, index, ids) = deltified_pack(60, 4_000);
        let verified = git(dir.path(), &["verify-pack", "-v", index.to_str().unwrap()]);
        assert!(
            verified.contains("chain length = 2"),
            "the pack holds delta chains:\n{verified}"
        );
        let repo = gix::open(dir.path()).unwrap();
        for threads in [1, 3] {
            let objects = decode(std::slice::from_ref(&index), repo.object_hash(), threads)
                .expect("the pack decodes");
            for id in &ids {
                let expected = repo.find_object(*id).unwrap().data.clone();
                assert_eq!(
                    objects.get(id, gix::object::Kind::Blob),
                    Some(expected.as_slice()),
                    "{id} with {threads} threads"
                );
            }
        }
    }

    /// Commits are kept as their shapes, not their bytes: a commit that git stored as a delta
    /// on another commit decodes through gix, and every commit reads as git reads it, asked
    /// for in any order across the decoding's parts.
    #[test]
    fn commits_deltified_on_commits_decode_to_the_shapes_git_reads() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        git(dir.path(), &["init", "-q"]);
        let tree = git(dir.path(), &["mktree"]);
        let filler: String = (0..100)
            .map(|i| format!("line {i:03} of a long commit message ...\n"))
            .collect();
        let mut ids: Vec<ObjectId> = Vec::new();
        for i in 0..40 {
            let message = format!("commit {i}\n\n{filler}");
            let mut args = vec!["commit-tree".to_owned(), tree.clone()];
            if let Some(parent) = ids.last() {
                args.extend(["-p".to_owned(), parent.to_string()]);
            }
            args.extend(["-m".to_owned(), message]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ids.push(git(dir.path(), &args).parse().unwrap());
        }
        let tip = ids.last().unwrap().to_string();
        git(dir.path(), &["update-ref", "refs/heads/main", &tip]);
        git(
            dir.path(),
            &["repack", "-adfq", "--window=50", "--depth=50"],
        );
        let index = std::fs::read_dir(dir.path().join(".git/objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "idx"))
            .expect("a pack");
        let verified = git(dir.path(), &["verify-pack", "-v", index.to_str().unwrap()]);
        assert!(
            verified
                .lines()
                .any(|l| l.contains(" commit ") && l.split_whitespace().count() == 7),
            "the pack holds a commit stored as a delta:\n{verified}"
        );
        let repo = gix::open(dir.path()).unwrap();
        let expected = |id: &ObjectId| {
            let commit = repo.find_commit(*id).unwrap();
            let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
            (parents, commit.tree_id().unwrap().detach())
        };
        for threads in [1, 4] {
            let objects = decode(std::slice::from_ref(&index), repo.object_hash(), threads)
                .expect("the pack decodes");
            // From both ends inwards (each lookup asks a part other than the last one's, and
            // never for the commit after the last one found), then as a walk reads them, tip
            // first (mostly the next commit in the pack: found without a lookup by id).
            let mut order: Vec<&ObjectId> = Vec::new();
            for k in 0..ids.len() / 2 {
                order.extend([&ids[k], &ids[ids.len() - 1 - k]]);
            }
            order.extend(ids.iter().rev());
            for id in order {
                let (parents, tree, _) = objects.commit(id).expect("every commit decoded");
                assert_eq!(
                    (parents.to_vec(), tree),
                    expected(id),
                    "{id} with {threads} threads"
                );
                assert_eq!(objects.get(id, gix::object::Kind::Commit), None);
            }
        }
    }

    #[test]
    fn control_an_id_the_pack_does_not_hold_is_not_found_in_any_part() {
        let (_dir, index, ids) = deltified_pack(30, 2_000);
        let objects = decode(std::slice::from_ref(&index), gix::hash::Kind::Sha1, 4)
            .expect("the pack decodes");
        assert!(objects.get(&ids[0], gix::object::Kind::Blob).is_some());
        let absent = ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        assert_eq!(objects.get(&absent, gix::object::Kind::Blob), None);
        assert_eq!(objects.commit(&absent), None);
        // A blob asked for as a tree is not one.
        assert_eq!(objects.get(&ids[1], gix::object::Kind::Tree), None);
    }

    #[test]
    fn control_a_hint_left_by_another_packs_decoding_never_answers_for_this_one() {
        // Two logs, each packed and decoded on its own. A walk of the first leaves this
        // thread's hints (the part and place of the next commit, the part of the last tree
        // and blob) pointing into the first's parts; every answer about the second is still
        // the second's, found by id.
        let objects_of = |store: &Store| {
            decode(&store.pack_indices(), store.repo.object_hash(), 2).expect("the pack decodes")
        };
        let (_one, first, first_tip) = packed_log(40);
        let (_two, second, second_tip) = packed_log(40);
        let (a, b) = (objects_of(&first), objects_of(&second));
        let chain = |store: &Store, objects: &Objects, tip: &crate::CommitId| {
            let mut at = Some(tip.oid());
            let mut shapes = Vec::new();
            while let Some(id) = at {
                let (parents, tree, time) = objects.commit(&id).expect("decoded");
                let (want, want_tree, want_time) = store.commit_shape("log", id).unwrap();
                assert_eq!(
                    (parents.as_slice(), tree, time),
                    (want.as_slice(), want_tree, want_time)
                );
                at = parents.first().copied();
                shapes.push(id);
            }
            shapes
        };
        let first_ids = chain(&first, &a, &first_tip);
        let second_ids = chain(&second, &b, &second_tip);
        assert_eq!((first_ids.len(), second_ids.len()), (40, 40));
        // Alternating between the two: each hint the other left is wrong, and is not taken.
        for (x, y) in first_ids.iter().zip(&second_ids) {
            assert!(a.commit(x).is_some() && b.commit(y).is_some());
            assert_eq!(
                a.commit(y),
                None,
                "the first pack does not hold the second's commits"
            );
            assert_eq!(b.commit(x), None, "nor the second the first's");
        }
    }

    /// The first whole (not deltified) entry of the pack at `index`, with its object's bytes.
    fn whole_entry(dir: &std::path::Path, index: &std::path::Path) -> (u64, Vec<u8>) {
        let bundle = gix_pack::Bundle::at(index, gix::hash::Kind::Sha1).unwrap();
        let repo = gix::open(dir).unwrap();
        bundle
            .index
            .iter()
            .find_map(|e| {
                let entry = bundle.pack.entry(e.pack_offset).ok()?;
                entry.header.as_kind()?;
                Some((e.pack_offset, repo.find_object(e.oid).ok()?.data.clone()))
            })
            .expect("a pack holds at least one whole object")
    }

    #[test]
    fn a_whole_object_inflates_to_its_bytes_and_no_further() {
        let (dir, index, _) = deltified_pack(4, 4_000);
        let (offset, expected) = whole_entry(dir.path(), &index);
        let pack =
            gix_pack::data::File::at(index.with_extension("pack"), gix::hash::Kind::Sha1).unwrap();
        let entry = pack.entry(offset).unwrap();
        let mut inflate = libdeflater::Decompressor::new();
        let mut out = Vec::new();
        assert_eq!(
            inflate_into(&pack, &entry, &mut inflate, &mut out),
            Some(())
        );
        assert_eq!(out, expected, "the object database's bytes");
    }

    #[test]
    fn control_a_stream_that_is_not_the_size_its_entry_says_or_is_damaged_does_not_inflate() {
        let (dir, index, _) = deltified_pack(4, 4_000);
        let (offset, _) = whole_entry(dir.path(), &index);
        let path = index.with_extension("pack");
        let pack = gix_pack::data::File::at(&path, gix::hash::Kind::Sha1).unwrap();
        let entry = pack.entry(offset).unwrap();
        let mut inflate = libdeflater::Decompressor::new();
        let mut out = Vec::new();
        for size in [entry.decompressed_size - 1, entry.decompressed_size + 1] {
            let claimed = gix_pack::data::Entry {
                decompressed_size: size,
                ..entry.clone()
            };
            assert_eq!(
                inflate_into(&pack, &claimed, &mut inflate, &mut out),
                None,
                "an entry claiming {size} bytes"
            );
        }
        // One byte of the compressed stream changed: its checksum (or its codes) no longer hold.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[usize::try_from(entry.data_offset).unwrap() + 8] ^= 0x55;
        let damaged = dir.path().join("damaged.pack");
        std::fs::write(&damaged, &bytes).unwrap();
        let pack = gix_pack::data::File::at(&damaged, gix::hash::Kind::Sha1).unwrap();
        assert_eq!(inflate_into(&pack, &entry, &mut inflate, &mut out), None);
    }

    #[test]
    fn control_a_blob_past_the_limit_is_left_to_the_object_database() {
        let (dir, index, ids) = deltified_pack(3, 2 * MAX_BLOB);
        let repo = gix::open(dir.path()).unwrap();
        let objects = decode(std::slice::from_ref(&index), repo.object_hash(), 1).unwrap();
        for id in &ids {
            assert_eq!(
                objects.get(id, gix::object::Kind::Blob),
                None,
                "{id} is too large to keep"
            );
        }
    }

    #[test]
    fn a_long_read_decodes_the_fetched_pack_and_reads_the_same_entries_from_it() {
        let (_dir, store, tip) = packed_log(AFTER + 50);
        let chain = store
            .read_set_at("refs/hpp/board/log", &tip, "e.json")
            .unwrap();
        let objects = store
            .fresh
            .objects
            .get()
            .expect("the read went past the threshold")
            .as_ref()
            .expect("the pack decoded");
        // Every commit, tree and blob of the log: one of each per entry.
        assert_eq!(objects.len(), 3 * (AFTER + 50));
        let payloads: Vec<String> = chain
            .links
            .iter()
            .map(|l| String::from_utf8(l.payload.clone().unwrap()).unwrap())
            .collect();
        let expected: Vec<String> = (0..AFTER + 50).map(|i| format!("{{\"n\":{i}}}")).collect();
        assert_eq!(
            payloads, expected,
            "the same log as the object database reads"
        );
        // A fresh store reading the same log through the object database agrees link by link.
        let plain = Store::discover(store.workdir().unwrap()).unwrap();
        assert_eq!(
            plain
                .read_set_at("refs/hpp/board/log", &tip, "e.json")
                .unwrap(),
            chain
        );
        assert!(plain.fresh.objects.get().is_none(), "no fetch, no decoding");
    }

    #[test]
    fn a_pack_that_appears_while_git_runs_is_decoded_beside_it_and_joined_by_the_first_read() {
        // A short log too: with a decoding started, no commit is read one by one first.
        for n in [10, AFTER + 20] {
            let (dir, _noted, tip) = packed_log(n);
            // The same log, with its pack as a fetch in progress would leave it: not yet noted.
            let store = Store::discover(dir.path()).unwrap();
            let before: Vec<PathBuf> = Vec::new();
            let mut tick = store.watch_for_fresh_pack(&before);
            tick(Tick::Changed);
            tick(Tick::Changed);
            drop(tick);
            let started = store
                .fresh
                .background
                .lock()
                .unwrap()
                .as_ref()
                .map(|(p, _)| p.clone());
            assert_eq!(
                started,
                Some(store.pack_indices()),
                "one decoding, of the new pack"
            );
            store.note_fresh_packs(&before, store.pack_indices());
            let chain = store
                .read_set_at("refs/hpp/board/log", &tip, "e.json")
                .unwrap();
            assert!(store.fresh.background.lock().unwrap().is_none(), "joined");
            let objects = store.fresh.objects.get().unwrap().as_ref().unwrap();
            assert_eq!(objects.len(), 3 * n, "every entry's commit, tree and blob");
            assert_eq!(chain.links.len(), n);
        }
    }

    #[test]
    fn a_pack_whose_directory_time_did_not_move_is_found_by_the_periodic_listing() {
        let (_dir, store, _tip) = packed_log(10);
        let index = store.pack_indices().pop().expect("one pack");
        let pack_dir = index.parent().unwrap().to_owned();
        let aside = pack_dir.parent().unwrap().join("aside.idx");
        std::fs::rename(&index, &aside).unwrap();
        let before: Vec<PathBuf> = Vec::new();
        let mut tick = store.watch_for_fresh_pack(&before);
        // First call: listed, no index yet; the directory's time is noted.
        tick(Tick::Elapsed);
        let seen = std::fs::metadata(&pack_dir).unwrap().modified().unwrap();
        // The index lands, on a file system whose time does not show it.
        std::fs::rename(&aside, &index).unwrap();
        std::fs::File::open(&pack_dir)
            .unwrap()
            .set_modified(seen)
            .unwrap();
        let started = |store: &Store| store.fresh.background.lock().unwrap().is_some();
        for _ in 2..RELIST {
            tick(Tick::Elapsed);
        }
        assert!(
            !started(&store),
            "an unmoved directory is not listed between the periodic listings"
        );
        tick(Tick::Elapsed);
        drop(tick);
        assert!(started(&store), "the periodic listing finds the pack");
    }

    #[test]
    fn control_a_short_read_or_a_pack_that_does_not_decode_reads_through_the_object_database() {
        let (_dir, store, tip) = packed_log(10);
        store
            .read_set_at("refs/hpp/board/log", &tip, "e.json")
            .unwrap();
        assert!(
            store.fresh.objects.get().is_none(),
            "ten commits do not decode a pack"
        );
        // A pack whose index names entries its data does not hold is not taken.
        let (dir, store, tip) = packed_log(AFTER + 10);
        let index = store.pack_indices().pop().expect("one pack");
        let pack = index.with_extension("pack");
        let bytes = std::fs::read(&pack).unwrap();
        let copy = dir.path().join("truncated.pack");
        std::fs::write(&copy, &bytes[..bytes.len() / 2]).unwrap();
        assert!(decode(std::slice::from_ref(&index), gix::hash::Kind::Sha1, 2).is_some());
        std::fs::copy(&index, dir.path().join("truncated.idx")).unwrap();
        assert!(
            decode(
                &[dir.path().join("truncated.idx")],
                gix::hash::Kind::Sha1,
                2
            )
            .is_none()
        );
        // The store's reads are unaffected by an undecodable pack noted as the fetch's.
        store.note_fresh_packs(&[], vec![dir.path().join("truncated.idx")]);
        let chain = store
            .read_set_at("refs/hpp/board/log", &tip, "e.json")
            .unwrap();
        assert_eq!(chain.links.len(), AFTER + 10);
    }
}
