//! The roots a commit's history starts from, remembered across runs: a record names the roots
//! of the history it was made in, and every verify checks them against the history of the
//! commit it verifies. Walking a 10,000-commit history costs about 30 ms; a commit's history
//! never changes, so what was learnt once is kept under the git directory
//! (`<common git dir>/hpp-cache/roots`: one `<commit> <root> [<root>...]` line per commit, the
//! last [`KEPT`] kept), and a later walk stops wherever it meets a commit it already knows, so
//! HEAD moving forward by a few commits costs a few commit reads.
//!
//! The file is local (never pushed) and only this tool writes it; it is written whole to a
//! temporary file and renamed. A line that does not read is ignored, and a file that cannot be
//! written costs the next run its walk, never correctness.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;

use gix::ObjectId;

use super::{CommitId, Error, Store};

/// How many commits' roots the file keeps (the newest).
const KEPT: usize = 64;

impl Store {
    /// The root commits of `commit`'s history, sorted: walked here, down to the roots or to a
    /// commit whose roots are remembered, then remembered for `commit`. In a shallow clone whose
    /// boundary cuts the history: [`Error::Shallow`], never the boundary named as a root.
    ///
    /// # Errors
    ///
    /// [`Error::Shallow`]; a commit that cannot be read.
    pub fn history_roots(&self, commit: &CommitId) -> Result<Vec<CommitId>, Error> {
        let known = self.remembered_roots();
        if let Some(roots) = known.get(&commit.oid()) {
            return Ok(roots.iter().copied().map(CommitId::from).collect());
        }
        // A commit whose roots are known is not walked past: its roots are taken as they are.
        let met: std::rc::Rc<std::cell::RefCell<BTreeSet<ObjectId>>> = std::rc::Rc::default();
        let walk = {
            let met = std::rc::Rc::clone(&met);
            self.repo
                .rev_walk([commit.oid()])
                .selected(move |id| match known.get(id) {
                    Some(roots) => {
                        met.borrow_mut().extend(roots.iter().copied());
                        false
                    }
                    None => true,
                })
                .map_err(super::git(format!("walking the history of {commit}")))?
        };
        let mut roots: BTreeSet<ObjectId> = BTreeSet::new();
        for info in walk {
            let info = info.map_err(super::git(format!("walking the history of {commit}")))?;
            if info.parent_ids.is_empty() {
                // gix's walk ends at the shallow boundary as if it were the root.
                if self.is_cut(info.id) {
                    return Err(Error::Shallow {
                        commit: commit.clone(),
                        boundary: info.id.into(),
                    });
                }
                roots.insert(info.id);
            }
        }
        roots.extend(met.borrow().iter().copied());
        let roots: Vec<CommitId> = roots.into_iter().map(CommitId::from).collect();
        self.remember_roots(commit, &roots);
        Ok(roots)
    }

    /// Remembers that `commit`'s history starts from `roots` (learnt elsewhere: the history's
    /// commits fetched from a remote for a shallow clone).
    pub fn remember_roots(&self, commit: &CommitId, roots: &[CommitId]) {
        let path = self.roots_cache_path();
        let mut lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.starts_with(commit.as_str()))
            .map(str::to_owned)
            .collect();
        let mut line = commit.to_string();
        for root in roots {
            line.push(' ');
            line.push_str(root.as_str());
        }
        lines.push(line);
        let skip = lines.len().saturating_sub(KEPT);
        let text: String = lines[skip..].iter().map(|l| format!("{l}\n")).collect();
        // Best effort: a cache that cannot be written costs the next run its walk.
        let _ = (|| -> std::io::Result<()> {
            let dir = path.parent().expect("the cache file has a directory");
            std::fs::create_dir_all(dir)?;
            let mut file = tempfile::NamedTempFile::new_in(dir)?;
            file.write_all(text.as_bytes())?;
            file.persist(&path).map_err(|e| e.error)?;
            Ok(())
        })();
    }

    fn roots_cache_path(&self) -> std::path::PathBuf {
        self.repo.common_dir().join("hpp-cache").join("roots")
    }

    /// What the cache file holds, by commit; lines that do not read are left out.
    fn remembered_roots(&self) -> HashMap<ObjectId, Vec<ObjectId>> {
        let text = std::fs::read_to_string(self.roots_cache_path()).unwrap_or_default();
        text.lines()
            .filter_map(|line| {
                let mut ids = line
                    .split(' ')
                    .map(|h| ObjectId::from_hex(h.as_bytes()).ok());
                let commit = ids.next()??;
                let roots: Option<Vec<ObjectId>> = ids.collect();
                roots.filter(|r| !r.is_empty()).map(|r| (commit, r))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::git;

    use super::*;

    fn repo_with(commits: usize) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        git(dir.path(), &["init", "-q", "-b", "main"]);
        for i in 0..commits {
            git(
                dir.path(),
                &["commit", "-q", "--allow-empty", "-m", &format!("c{i}")],
            );
        }
        let store = Store::discover(dir.path()).expect("a repository");
        (dir, store)
    }

    #[test]
    fn the_roots_are_walked_once_and_a_later_walk_stops_at_what_is_known() {
        let (dir, store) = repo_with(5);
        let head = store.head_commit().expect("readable").expect("a commit");
        let walked = store.root_commits(&head).expect("walked");
        assert_eq!(store.history_roots(&head).expect("found"), walked);
        let text =
            std::fs::read_to_string(dir.path().join(".git/hpp-cache/roots")).expect("remembered");
        assert!(text.starts_with(head.as_str()), "{text}");
        git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "next"]);
        let store = Store::discover(dir.path()).expect("a repository");
        let next = store.head_commit().expect("readable").expect("a commit");
        assert_eq!(store.history_roots(&next).expect("found"), walked);
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".git/hpp-cache/roots"))
                .expect("remembered")
                .lines()
                .count(),
            2
        );
    }

    #[test]
    fn control_a_merge_of_another_history_adds_its_root_and_a_bad_line_is_ignored() {
        let (dir, store) = repo_with(2);
        let head = store.head_commit().expect("readable").expect("a commit");
        let mine = store.history_roots(&head).expect("found");
        git(dir.path(), &["checkout", "-q", "--orphan", "other"]);
        git(
            dir.path(),
            &["commit", "-q", "--allow-empty", "-m", "other root"],
        );
        git(dir.path(), &["checkout", "-q", "main"]);
        git(
            dir.path(),
            &[
                "merge",
                "-q",
                "--allow-unrelated-histories",
                "-m",
                "join",
                "other",
            ],
        );
        std::fs::write(
            dir.path().join(".git/hpp-cache/roots"),
            format!("{head} not-an-id\ngarbage\n{head} {}\n", mine[0]),
        )
        .expect("writable");
        let store = Store::discover(dir.path()).expect("a repository");
        let merged = store.head_commit().expect("readable").expect("a commit");
        let roots = store.history_roots(&merged).expect("found");
        assert_eq!(roots.len(), 2, "{roots:?}");
        assert!(roots.contains(&mine[0]));
    }
}
