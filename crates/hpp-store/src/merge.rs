//! Logs kept by several machines at once.
//!
//! A log whose entries commute (the board, a lane's log, handoffs, the gotcha memory) may be
//! written on two machines between fetches; its two tips are then joined by a merge commit and
//! the log is read as the set of every entry commit its tip reaches, each exactly once.
//!
//! The order of the set is the commit graph's own logical clock: an entry's Lamport time is
//! its depth (one more than the deepest of its parents, a root is 1), so an entry always comes
//! after every entry its writer had read; entries written without seeing one another are
//! ordered by their commit time, then by id. A linear log reads exactly as its first-parent
//! chain did. Merge commits carry no entry.
//!
//! A merge commit is a function of the two tips alone: its parents sorted by id, the tree it is
//! given, a fixed identity dated at the later parent's commit time, and a message naming the
//! log. Two machines merging the same two tips write the same commit, so neither has to merge
//! the other's merge, and both reach it on their next fetch.

use gix::ObjectId;
use gix::hashtable::HashMap;

use super::{Chain, CommitId, Error, FALLBACK_EMAIL, FALLBACK_NAME, Link, Store, TreeId, git};

/// How two tips of one ref stand to each other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Relation {
    /// The same commit.
    Same,
    /// Ours contains theirs: nothing to take.
    Ahead,
    /// Theirs contains ours: a fast-forward.
    Behind,
    /// Each has commits the other lacks; the common base, if any, when git found it
    /// ([`Store::set_relation`] does not look for it).
    Diverged(Option<CommitId>),
}

/// One set-log commit as the set reads it.
struct Node {
    parents: super::shape::Parents,
    tree: ObjectId,
    time: i64,
    /// Its depth (see the module), once a set's order asked for it; 0 before. A commit's depth
    /// is a function of its own history, so it holds for every set that reaches it.
    depth: u64,
}

/// One entry of a set log as [`Store::read_set_with`] reads it.
#[derive(Debug)]
pub struct SetEntry<T> {
    /// The commit.
    pub commit: CommitId,
    /// What the caller's reader made of its blob; `None` when the caller held it already.
    pub read: Option<T>,
}

/// What this command learnt of set logs: their commits decoded, each once and numbered in the
/// order decoded, and the set each tip it read reaches ([`Store::read_set_at`]). A walk, a
/// depth and a set name commits by number: one lookup by id per commit decoded, where a map
/// per question (reached, depth, node) made four of them, each growing as it went.
#[derive(Default)]
pub(crate) struct SetCommits {
    /// Each decoded commit's number.
    numbers: HashMap<ObjectId, u32>,
    /// The decoded commits, by number.
    nodes: Vec<Node>,
    sets: HashMap<ObjectId, std::sync::Arc<Set>>,
}

impl SetCommits {
    /// The number of the commit `id` if it was decoded.
    fn number(&self, id: &ObjectId) -> Option<u32> {
        self.numbers.get(id).copied()
    }

    /// The number of the commit `id` of the set log `name`, decoding it if this command has not.
    fn decoded(&mut self, store: &Store, name: &str, id: ObjectId) -> Result<u32, Error> {
        if let Some(number) = self.number(&id) {
            return Ok(number);
        }
        let (parents, tree, time) = store.commit_shape(name, id)?;
        // Past 2^32 commits a log is not one this store can number (nor hold in memory); it is
        // refused as unreadable rather than numbered wrong.
        let number = u32::try_from(self.nodes.len()).map_err(|_| Error::NotACommit {
            name: name.to_owned(),
            id: Some(id.to_string()),
        })?;
        self.nodes.push(Node {
            parents,
            tree,
            time,
            depth: 0,
        });
        if number == 0 {
            // The first commit read joined the fetch's decoding, if there is one: how many
            // commits it holds sizes the tables once (growing them rehashed and copied a
            // 10,000-commit log's nodes at each doubling), up to a bound.
            let fetched = store.fresh_commits().min(1 << 17);
            self.numbers.reserve(fetched);
            self.nodes.reserve(fetched);
        }
        self.numbers.insert(id, number);
        Ok(number)
    }

    /// The depth of the decoded commit `at`, every commit it reaches decoded (a set's walk
    /// decoded them), without recursion: a long log is deeper than any stack. Depths found
    /// are kept in the nodes, so a second set sharing the history computes only its own.
    fn depth(&mut self, at: u32) -> u64 {
        let mut stack = vec![(at, false)];
        while let Some((at, expanded)) = stack.pop() {
            let node = &self.nodes[at as usize];
            if node.depth != 0 {
                continue;
            }
            let parents: smallvec::SmallVec<[u32; 2]> =
                node.parents.iter().map(|p| self.numbers[p]).collect();
            if expanded {
                let deepest = parents
                    .iter()
                    .map(|&p| self.nodes[p as usize].depth)
                    .max()
                    .unwrap_or(0);
                self.nodes[at as usize].depth = deepest + 1;
            } else {
                stack.push((at, true));
                stack.extend(
                    parents
                        .iter()
                        .filter(|&&p| self.nodes[p as usize].depth == 0)
                        .map(|&p| (p, false)),
                );
            }
        }
        self.nodes[at as usize].depth
    }
}

/// The set a tip reaches: its entries in the set's order (each with its commit's number), and
/// every commit it reaches (merges included), by number. What a tip reaches never changes, so
/// a merge of two tips read before is the union of theirs: an entry's place in the order (its
/// depth, commit time and id) is a function of its own history alone.
struct Set {
    entries: Vec<(Key, u32)>,
    reachable: Reached,
}

/// Decoded commits by number, one bit each.
#[derive(Default, Clone)]
struct Reached(Vec<u64>);

impl Reached {
    /// Marks `at`; whether it was not marked before.
    fn insert(&mut self, at: u32) -> bool {
        let (word, bit) = (at as usize / 64, 1u64 << (at % 64));
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let new = self.0[word] & bit == 0;
        self.0[word] |= bit;
        new
    }

    fn contains(&self, at: u32) -> bool {
        self.0
            .get(at as usize / 64)
            .is_some_and(|word| word & (1u64 << (at % 64)) != 0)
    }

    /// Marks every commit `other` marks.
    fn extend(&mut self, other: &Reached) {
        if other.0.len() > self.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (word, theirs) in self.0.iter_mut().zip(&other.0) {
            *word |= theirs;
        }
    }
}

/// An entry's place in a set's order: its depth (its Lamport time), commit time, and id.
type Key = (u64, i64, ObjectId);

impl Store {
    /// How `ours` stands to `theirs`.
    pub fn relation(&self, ours: &CommitId, theirs: &CommitId) -> Result<Relation, Error> {
        if ours == theirs {
            return Ok(Relation::Same);
        }
        let base = self
            .repo
            .merge_base(ours.oid(), theirs.oid())
            .map_err(git("finding a merge base"))?
            .map(|b| CommitId::from(b.detach()));
        Ok(match base {
            Some(b) if b == *theirs => Relation::Ahead,
            Some(b) if b == *ours => Relation::Behind,
            other => Relation::Diverged(other),
        })
    }

    /// [`Store::relation`] of two tips of the set log `name`, found in the commits the set's
    /// reads decode (and keep): a set log is read whole to be checked or merged anyway, so this
    /// costs no second walk of its history, where git's merge base decodes it all again.
    pub fn set_relation(
        &self,
        name: &str,
        ours: &CommitId,
        theirs: &CommitId,
    ) -> Result<Relation, Error> {
        if ours == theirs {
            return Ok(Relation::Same);
        }
        if self.reaches(name, theirs.oid(), ours.oid())? {
            return Ok(Relation::Behind);
        }
        if self.reaches(name, ours.oid(), theirs.oid())? {
            return Ok(Relation::Ahead);
        }
        Ok(Relation::Diverged(None))
    }

    /// Reads the log at `name` as a set: every commit its tip reaches that is not a merge, in
    /// Lamport order (see the module), with the blob `file` of each.
    pub fn read_set(&self, name: &str, file: &str) -> Result<Chain, Error> {
        match self.tip_oid(name)? {
            None => Ok(Chain::default()),
            Some(tip) => self.read_set_at(name, &tip.into(), file),
        }
    }

    /// As [`Store::read_set`], from `tip` (a merge not yet on the log, say); `name` is for errors.
    pub fn read_set_at(&self, name: &str, tip: &CommitId, file: &str) -> Result<Chain, Error> {
        let entries = self.read_set_with(
            name,
            tip,
            file,
            |_| false,
            |_, bytes| bytes.map(std::borrow::Cow::into_owned),
        )?;
        let known = self.set_commits.lock().unwrap_or_else(|e| e.into_inner());
        Ok(Chain {
            tip: Some(tip.clone()),
            links: entries
                .into_iter()
                .map(|entry| {
                    let node = &known.nodes[known.numbers[&entry.commit.oid()] as usize];
                    Link {
                        parents: node.parents.iter().map(|p| (*p).into()).collect(),
                        tree: Some(node.tree.into()),
                        commit: entry.commit,
                        payload: entry.read.flatten(),
                    }
                })
                .collect(),
        })
    }

    /// As [`Store::read_set_at`], handing each entry's blob to `read` (on every core when the
    /// log is long; borrowed when a fetch's decoded objects hold it), except an entry `held` holds: its [`SetEntry::read`] is `None`. A caller
    /// that checks a log and then a join of it (a fetch admits the remote's board, then the
    /// merge of both) reads and parses each entry once, and the join's order is the union of
    /// the two it read, not a second walk.
    pub fn read_set_with<T: Send>(
        &self,
        name: &str,
        tip: &CommitId,
        file: &str,
        held: impl Fn(&CommitId) -> bool,
        read: impl Fn(&CommitId, Option<std::borrow::Cow<'_, [u8]>>) -> T + Sync,
    ) -> Result<Vec<SetEntry<T>>, Error> {
        let set = self.set_of(name, tip.oid())?;
        // Each entry in order, and the ones to read with their trees, oldest first: the order
        // a pack's delta chains are cheapest to resolve in (newest first costs three times as
        // much). A join of a log checked before reads a handful of its 10,000 entries, so
        // nothing here is made per entry but its id.
        let mut entries: Vec<SetEntry<T>> = Vec::with_capacity(set.entries.len());
        let mut pending: Vec<(ObjectId, ObjectId)> = Vec::new();
        let mut pending_at: Vec<usize> = Vec::new();
        {
            let known = self.set_commits.lock().unwrap_or_else(|e| e.into_inner());
            for ((_, _, id), at) in &set.entries {
                let commit = CommitId::from(*id);
                if !held(&commit) {
                    pending.push((*id, known.nodes[*at as usize].tree));
                    pending_at.push(entries.len());
                }
                entries.push(SetEntry { commit, read: None });
            }
        }
        let reads = self.read_files_with(&pending, file, &read)?;
        for (at, read) in pending_at.into_iter().zip(reads) {
            entries[at].read = Some(read);
        }
        Ok(entries)
    }

    /// The set `tip` reaches, read once per command: a merge of two tips read before (or one
    /// read before and one cheap to read) is the union of their sets; any other tip is walked.
    fn set_of(&self, name: &str, tip: ObjectId) -> Result<std::sync::Arc<Set>, Error> {
        let parents = {
            let mut known = self.set_commits.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(set) = known.sets.get(&tip) {
                return Ok(std::sync::Arc::clone(set));
            }
            let at = known.decoded(self, name, tip)?;
            let parents = known.nodes[at as usize].parents.clone();
            let any_known = parents.iter().any(|p| known.sets.contains_key(p));
            (parents.len() >= 2 && any_known).then_some(parents)
        };
        let set = match parents {
            Some(parents) => {
                let sets = parents
                    .iter()
                    .map(|p| self.set_of(name, *p))
                    .collect::<Result<Vec<_>, Error>>()?;
                let known = self.set_commits.lock().unwrap_or_else(|e| e.into_inner());
                union(known.number(&tip), &sets)
            }
            None => self.walked_set(name, tip)?,
        };
        let set = std::sync::Arc::new(set);
        self.set_commits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .sets
            .insert(tip, std::sync::Arc::clone(&set));
        Ok(set)
    }

    /// The set `tip` reaches, from a walk of its history.
    fn walked_set(&self, name: &str, tip: ObjectId) -> Result<Set, Error> {
        let (visited, reachable) = self.walk(name, tip)?;
        let mut known = self.set_commits.lock().unwrap_or_else(|e| e.into_inner());
        // The walk decoded every commit the tip reaches; the first it visited is the tip.
        if let Some(&(_, tip)) = visited.first() {
            known.depth(tip);
        }
        // Each key computed once (a comparison that looked the depth up hashed twice), in the
        // reverse of the walk's order: a linear log is then in order already, which the sort
        // finds in one pass, where the order of a hash map cost it 1,200 instructions an entry.
        let mut entries: Vec<(Key, u32)> = visited
            .iter()
            .rev()
            .map(|&(id, at)| (id, at, &known.nodes[at as usize]))
            .filter(|(_, _, node)| node.parents.len() < 2)
            .map(|(id, at, node)| ((node.depth, node.time, id), at))
            .collect();
        entries.sort_unstable_by_key(|(key, _)| *key);
        Ok(Set { entries, reachable })
    }

    /// Writes the merge commit of two tips of the set log `name` with `tree` (no ref moves).
    /// The same two tips and tree give the same commit on every machine.
    pub fn write_set_merge(
        &self,
        name: &str,
        one: &CommitId,
        other: &CommitId,
        tree: &TreeId,
    ) -> Result<CommitId, Error> {
        let time = |id: &CommitId| -> Result<i64, Error> {
            let commit = self
                .repo
                .find_commit(id.oid())
                .map_err(|_| Error::NotACommit {
                    name: name.to_owned(),
                    id: Some(id.to_string()),
                })?;
            Ok(commit.time().map(|t| t.seconds).unwrap_or(0))
        };
        let seconds = time(one)?.max(time(other)?);
        let mut parents = [one.oid(), other.oid()];
        parents.sort();
        let who = gix::actor::Signature {
            name: FALLBACK_NAME.into(),
            email: FALLBACK_EMAIL.into(),
            time: gix::date::Time::new(seconds, 0),
        };
        if tree.oid() == ObjectId::empty_tree(self.repo.object_hash()) {
            // git knows the empty tree without storing it; a clone that fetches the merge needs
            // the object itself.
            self.repo
                .write_object(gix::objs::Tree::empty())
                .map_err(git("writing the empty tree"))?;
        }
        let commit = gix::objs::Commit {
            tree: tree.oid(),
            parents: parents.into_iter().collect(),
            author: who.clone(),
            committer: who,
            encoding: None,
            message: format!("hpp merge {name}\n\nHpp-Merge: {name}\n").into(),
            extra_headers: Vec::new(),
        };
        let id = self
            .repo
            .write_object(&commit)
            .map_err(git(format!("writing a merge of {name}")))?
            .detach();
        Ok(id.into())
    }

    /// Whether the set log's commit `from` reaches `target`, walked through the commits this
    /// command decoded (decoding the rest), with no copy of the graph made.
    fn reaches(&self, name: &str, from: ObjectId, target: ObjectId) -> Result<bool, Error> {
        let mut known = self.set_commits.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(set) = known.sets.get(&from) {
            return Ok(from == target
                || known
                    .number(&target)
                    .is_some_and(|at| set.reachable.contains(at)));
        }
        let mut seen = Reached::default();
        let mut stack = vec![from];
        while let Some(id) = stack.pop() {
            if id == target {
                return Ok(true);
            }
            let at = known.decoded(self, name, id)?;
            if !seen.insert(at) {
                continue;
            }
            stack.extend(known.nodes[at as usize].parents.iter().copied());
        }
        Ok(false)
    }

    /// Every commit `tip` reaches, in the order the walk visited them (from the tip, each
    /// commit before its parents' histories) and as a set. Each commit is decoded once and
    /// kept for the command, in [`SetCommits::nodes`] only.
    fn walk(&self, name: &str, tip: ObjectId) -> Result<(Vec<(ObjectId, u32)>, Reached), Error> {
        let mut reachable = Reached::default();
        let mut visited = Vec::new();
        let mut stack = vec![tip];
        let mut known = self.set_commits.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(id) = stack.pop() {
            let at = known.decoded(self, name, id)?;
            if !reachable.insert(at) {
                continue;
            }
            stack.extend(known.nodes[at as usize].parents.iter().copied());
            visited.push((id, at));
        }
        Ok((visited, reachable))
    }
}

/// The set of the merge `tip` of `sets` (its parents' sets): their entries merged in order,
/// each once (an entry both reach has the same key in both), and every commit they reach.
fn union(tip: Option<u32>, sets: &[std::sync::Arc<Set>]) -> Set {
    let mut entries: Vec<(Key, u32)> = Vec::new();
    for set in sets {
        let mut merged = Vec::with_capacity(entries.len() + set.entries.len());
        let (mut a, mut b) = (entries.iter().peekable(), set.entries.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    b.next();
                    a.next()
                }
                (Some(x), Some(y)) if x.0 < y.0 => a.next(),
                (Some(_), Some(_)) | (None, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => break,
            };
            merged.extend(next.copied());
        }
        entries = merged;
    }
    let mut reachable = Reached::default();
    for set in sets {
        reachable.extend(&set.reachable);
    }
    if let Some(tip) = tip {
        reachable.insert(tip);
    }
    Set { entries, reachable }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewRecord;

    fn record(bytes: &[u8]) -> NewRecord<'_> {
        NewRecord {
            file: "e.json",
            bytes,
            message: "test",
        }
    }

    fn payloads(chain: &Chain) -> Vec<String> {
        chain
            .links
            .iter()
            .map(|l| String::from_utf8(l.payload.clone().unwrap_or_default()).unwrap())
            .collect()
    }

    /// A board log `base` ← `a1` ← `a2`, and `b1` written on `base` on a side ref.
    fn diverged_log(store: &Store) -> [CommitId; 4] {
        let log = "refs/hpp/board/log";
        let base = store.append(log, None, &record(b"base")).unwrap();
        let a1 = store.append(log, Some(&base), &record(b"a1")).unwrap();
        let a2 = store.append(log, Some(&a1), &record(b"a2")).unwrap();
        store.create_ref("refs/hpp/side", &base).unwrap();
        let b1 = store
            .append("refs/hpp/side", Some(&base), &record(b"b1"))
            .unwrap();
        [base, a1, a2, b1]
    }

    #[test]
    fn a_merged_log_reads_each_entry_once_after_everything_its_writer_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let log = "refs/hpp/board/log";
        let [base, a1, a2, b1] = diverged_log(&store);
        assert_eq!(
            store.relation(&a2, &b1).unwrap(),
            Relation::Diverged(Some(base.clone()))
        );
        assert_eq!(store.relation(&a2, &a1).unwrap(), Relation::Ahead);
        assert_eq!(store.relation(&a1, &a2).unwrap(), Relation::Behind);
        let empty = store.empty_tree();
        let one = store.write_set_merge(log, &a2, &b1, &empty).unwrap();
        let two = store.write_set_merge(log, &b1, &a2, &empty).unwrap();
        assert_eq!(one, two, "either side merging writes the same commit");
        store.move_ref(log, &a2, &one).unwrap();
        let set = store.read_set(log, "e.json").unwrap();
        let read = payloads(&set);
        assert_eq!(read.len(), 4);
        assert_eq!(read[0], "base");
        assert!(read.iter().position(|p| p == "a1") < read.iter().position(|p| p == "a2"));
        let c = store.append(log, Some(&one), &record(b"after")).unwrap();
        let read = payloads(&store.read_set(log, "e.json").unwrap());
        assert_eq!(read.last().map(String::as_str), Some("after"));
        assert_eq!(store.tip(log).unwrap(), Some(c));
    }

    #[test]
    fn a_set_relation_found_in_the_decoded_commits_agrees_with_git() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let log = "refs/hpp/board/log";
        let [base, a1, a2, b1] = diverged_log(&store);
        for (ours, theirs, want) in [
            (&a2, &a2, Relation::Same),
            (&a2, &a1, Relation::Ahead),
            (&a1, &a2, Relation::Behind),
            (&base, &b1, Relation::Behind),
            (&a2, &b1, Relation::Diverged(None)),
        ] {
            assert_eq!(store.set_relation(log, ours, theirs).unwrap(), want);
            // git's answer is the same, with the merge base it finds where they diverged.
            let by_git = match store.relation(ours, theirs).unwrap() {
                Relation::Diverged(_) => Relation::Diverged(None),
                other => other,
            };
            assert_eq!(by_git, want);
        }
    }

    #[test]
    fn control_a_set_relation_is_not_taken_from_a_stale_read() {
        // What one read decoded is kept; a later tip is walked from its own commits, so a
        // relation asked after the log moved on is still the right one.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let log = "refs/hpp/board/log";
        let base = store.append(log, None, &record(b"base")).unwrap();
        let a1 = store.append(log, Some(&base), &record(b"a1")).unwrap();
        assert_eq!(
            store.set_relation(log, &base, &a1).unwrap(),
            Relation::Behind
        );
        let a2 = store.append(log, Some(&a1), &record(b"a2")).unwrap();
        assert_eq!(store.set_relation(log, &a2, &a1).unwrap(), Relation::Ahead);
        assert_ne!(store.set_relation(log, &a1, &a2).unwrap(), Relation::Ahead);
    }

    #[test]
    fn control_a_linear_log_reads_as_its_chain() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let log = "refs/hpp/gotchas/failures";
        let mut tip = None;
        for i in 0..5 {
            tip = Some(
                store
                    .append(log, tip.as_ref(), &record(format!("{i}").as_bytes()))
                    .unwrap(),
            );
        }
        let set = store.read_set(log, "e.json").unwrap();
        let chain = store.read_chain(log, "e.json").unwrap();
        assert_eq!(set, chain);
        assert_eq!(payloads(&set), ["0", "1", "2", "3", "4"]);
    }

    #[test]
    fn a_set_read_hands_over_only_the_entries_the_caller_does_not_hold() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let log = "refs/hpp/board/log";
        let [base, a1, a2, b1] = diverged_log(&store);
        let merged = store
            .write_set_merge(log, &a2, &b1, &store.empty_tree())
            .unwrap();
        let held = [base, a1, a2];
        let handed = std::sync::Mutex::new(Vec::new());
        let entries = store
            .read_set_with(
                log,
                &merged,
                "e.json",
                |c| held.contains(c),
                |c, bytes| {
                    handed.lock().unwrap().push(c.clone());
                    String::from_utf8(bytes.unwrap().into_owned()).unwrap()
                },
            )
            .unwrap();
        assert_eq!(handed.into_inner().unwrap(), std::slice::from_ref(&b1));
        let whole = store.read_set_at(log, &merged, "e.json").unwrap();
        let order: Vec<&CommitId> = entries.iter().map(|e| &e.commit).collect();
        let want: Vec<&CommitId> = whole.links.iter().map(|l| &l.commit).collect();
        assert_eq!(order, want, "the same order as a whole read");
        for entry in &entries {
            let read = entry.read.as_deref();
            if entry.commit == b1 {
                assert_eq!(read, Some("b1"));
            } else {
                assert_eq!(read, None, "{} is held", entry.commit);
            }
        }
    }

    #[test]
    fn a_merge_of_two_tips_read_before_reads_as_a_walk_of_it_reads() {
        // A fetch reads the remote's board, then the merge of both: the second read is the
        // union of the two sets, and must be what a store that never read either walks.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let log = "refs/hpp/board/log";
        let [base, a1, a2, b1] = diverged_log(&store);
        let more = store
            .append("refs/hpp/side", Some(&b1), &record(b"b2"))
            .unwrap();
        let merged = store
            .write_set_merge(log, &a2, &more, &store.empty_tree())
            .unwrap();
        store.read_set_at(log, &more, "e.json").unwrap();
        assert_eq!(
            store.set_relation(log, &a2, &more).unwrap(),
            Relation::Diverged(None)
        );
        let union = store.read_set_at(log, &merged, "e.json").unwrap();
        assert!(
            store
                .set_commits
                .lock()
                .unwrap()
                .sets
                .contains_key(&a2.oid()),
            "the other side's set was read for the union"
        );
        let fresh = Store::discover(dir.path()).unwrap();
        let walked = fresh.read_set_at(log, &merged, "e.json").unwrap();
        assert_eq!(union, walked);
        assert_eq!(payloads(&union).len(), 5, "base, a1, a2, b1, b2 once each");
        for (from, to, want) in [
            (&merged, &base, true),
            (&more, &a1, false),
            (&more, &b1, true),
        ] {
            assert_eq!(
                store.reaches(log, from.oid(), to.oid()).unwrap(),
                want,
                "{from} to {to}"
            );
            assert_eq!(fresh.reaches(log, from.oid(), to.oid()).unwrap(), want);
        }
    }

    #[test]
    fn control_a_long_set_read_in_two_threads_reads_as_its_chain() {
        // Past the parallel threshold the files are read in two halves: each entry still gets
        // its own file, in the chain's order, and a held entry is still skipped.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let log = "refs/hpp/gotchas/failures";
        let bytes: Vec<String> = (0..700).map(|i| format!("entry {i}")).collect();
        let records: Vec<NewRecord<'_>> = bytes.iter().map(|b| record(b.as_bytes())).collect();
        let tip = store.create_chain(log, &records).unwrap();
        let chain = store.read_chain(log, "e.json").unwrap();
        assert_eq!(store.read_set_at(log, &tip, "e.json").unwrap(), chain);
        let skipped = chain.links[350].commit.clone();
        let entries = store
            .read_set_with(
                log,
                &tip,
                "e.json",
                |c| *c == skipped,
                |_, bytes| bytes.map(|b| String::from_utf8(b.into_owned()).unwrap()),
            )
            .unwrap();
        let read: Vec<Option<String>> = entries.into_iter().map(|e| e.read.flatten()).collect();
        let mut want: Vec<Option<String>> = bytes.into_iter().map(Some).collect();
        want[350] = None;
        assert_eq!(read, want);
    }
}
