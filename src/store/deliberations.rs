//! Store support for sealed House Sessions (`refs/hpp/deliberations/<id>`): each record is one
//! commit created once with [`Store::create_record`]; a person's decision, which stands outside
//! the seal, is one child commit that adds a file and leaves every sealed blob as it was.

use gix::objs::tree::EntryKind;

use super::refs::DELIBERATIONS_PREFIX;
use super::{CommitId, Error, Store, git};

impl Store {
    /// Lists every sealed House Session as `(ref, commit)`, sorted by ref.
    pub fn deliberations(&self) -> Result<Vec<(String, CommitId)>, Error> {
        self.list(DELIBERATIONS_PREFIX)
    }

    /// Moves `name` forward from `expected` to a child commit whose tree is `expected`'s plus the
    /// blob `file`. Refuses with [`Error::Moved`] when `name` no longer points at `expected`, so
    /// two people deciding at once cannot both win.
    pub fn extend_record(
        &self,
        name: &str,
        expected: &CommitId,
        file: &str,
        bytes: &[u8],
        message: &str,
    ) -> Result<CommitId, Error> {
        let repo = &self.repo;
        let parent = expected.oid();
        let tree = repo
            .find_commit(parent)
            .map_err(git("reading a record commit"))?
            .tree_id()
            .map_err(git("reading a record tree"))?
            .detach();
        let blob = repo
            .write_blob(bytes)
            .map_err(git("writing a record blob"))?
            .detach();
        let mut editor = repo.edit_tree(tree).map_err(git("editing a tree"))?;
        editor
            .upsert(file, EntryKind::Blob, blob)
            .map_err(git("editing a tree"))?;
        let tree = editor
            .write()
            .map_err(git("writing a record tree"))?
            .detach();
        let commit = self.new_commit(tree, Some(parent), message)?;
        self.sync_objects(&[blob, tree, commit])?;
        self.cas(name, Some(parent), commit)?;
        Ok(commit.into())
    }
}
