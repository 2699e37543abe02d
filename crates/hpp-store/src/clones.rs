//! The clones CI systems make: shallow ones (`--depth`, one commit fetched by id), whose history
//! is cut at a boundary that is not its root, and partial ones (`--filter=blob:none`,
//! `--filter=tree:0`), whose objects a promisor remote holds until they are read.
//!
//! gix reads neither kind as git does: it has no lazy fetch, so an object the promisor remote
//! holds reads as missing; and its history walk stops at the shallow boundary as if it were the
//! root. Here, an object missing from a partial clone is fetched from its promisor remote the
//! way git's own lazy fetch does it (`git fetch --filter=blob:none <promisor> <id>...`), and a
//! walk that meets the shallow boundary says so ([`Error::Shallow`]) instead of naming it a
//! root.

use std::path::Path;

use gix::ObjectId;

use super::{CommitId, Error, Store, git_cli, sync};

/// A path's entry inside a tree: its mode and id.
pub(crate) struct Entry {
    /// The entry's mode.
    pub mode: gix::objs::tree::EntryMode,
    /// The object it names.
    pub id: ObjectId,
}

impl Store {
    /// Tells whether this repository is a shallow clone (it has a non-empty `shallow` file).
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow().unwrap_or(false)
    }

    /// Returns the commits at the shallow boundary (those whose parents are not here), sorted;
    /// empty when the clone is not shallow.
    pub fn shallow_boundary(&self) -> Vec<CommitId> {
        let Ok(Some(commits)) = self.repo.shallow_commits() else {
            return Vec::new();
        };
        let mut ids: Vec<CommitId> = commits.iter().map(|id| CommitId::from(*id)).collect();
        ids.sort();
        ids
    }

    /// Tells whether `id` is cut off by the shallow boundary: listed in the `shallow` file while
    /// its commit names parents. A root commit that a depth-1 fetch listed there is not.
    pub(crate) fn is_cut(&self, id: ObjectId) -> bool {
        let Ok(Some(commits)) = self.repo.shallow_commits() else {
            return false;
        };
        commits.contains(&id)
            && self
                .repo
                .find_commit(id)
                .is_ok_and(|c| c.parent_ids().next().is_some())
    }

    /// Returns the remote a partial clone's missing objects come from (`extensions.partialClone`,
    /// else the first remote with `promisor = true`); `None` when this is not a partial clone.
    pub fn promisor_remote(&self) -> Option<String> {
        if let Some(name) = self.config_string("extensions.partialClone") {
            return Some(name);
        }
        self.repo
            .remote_names()
            .into_iter()
            .map(|n| n.to_string())
            .find(|name| self.config_bool(&format!("remote.{name}.promisor")) == Some(true))
    }

    /// Returns the remote to fetch what verification lacks from: the promisor remote of a
    /// partial clone, else the current branch's remote, else `origin`, else the only remote.
    pub fn source_remote(&self) -> Option<String> {
        if let Some(promisor) = self.promisor_remote() {
            return Some(promisor);
        }
        let branch = self.current_branch().ok().flatten();
        if let Some(remote) = branch.and_then(|b| self.config_string(&format!("branch.{b}.remote")))
        {
            return Some(remote);
        }
        let names: Vec<String> = self
            .repo
            .remote_names()
            .into_iter()
            .map(|n| n.to_string())
            .collect();
        if names.iter().any(|n| n == "origin") {
            return Some("origin".to_owned());
        }
        match names.as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        }
    }

    /// Fetches from the promisor remote those of `ids` that are not here, in one `git fetch`,
    /// as git's lazy fetch does. Does nothing outside a partial clone or when all are here; a
    /// fetch that fails leaves them missing, and the reader that needed them says so.
    pub(crate) fn fetch_promised(&self, ids: impl IntoIterator<Item = ObjectId>) {
        let Some(remote) = self.promisor_remote() else {
            return;
        };
        let mut missing: Vec<String> = ids
            .into_iter()
            .filter(|id| !self.repo.has_object(*id))
            .map(|id| id.to_string())
            .collect();
        missing.sort();
        missing.dedup();
        if missing.is_empty() || sync::not_an_option(&remote).is_err() {
            return;
        }
        let mut cmd = git_cli::in_repo(self.repo.git_dir(), self.workdir());
        cmd.args([
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            &remote,
        ])
        .args(&missing);
        // A failure is not an error here: the object stays missing and its reader reports it.
        let _ = git_cli::output(&mut cmd, "git fetch (promised objects)");
    }

    /// Reads the object `id`, fetching it first from the promisor remote of a partial clone
    /// when it is not here.
    pub(crate) fn object(&self, id: ObjectId) -> Result<gix::Object<'_>, gix::Error> {
        if !self.repo.has_object(id) {
            self.fetch_promised([id]);
        }
        self.repo.find_object(id)
    }

    /// Looks `path` (`/`-separated) up inside the tree `tree`, fetching each tree on the way
    /// that a partial clone lacks. `None` when there is no entry at that path.
    pub(crate) fn lookup(&self, tree: ObjectId, path: &str) -> Result<Option<Entry>, gix::Error> {
        let mut current = tree;
        let mut found = None;
        for part in path.split('/').filter(|p| !p.is_empty()) {
            if found.as_ref().is_some_and(|e: &Entry| !e.mode.is_tree()) {
                return Ok(None);
            }
            let object = self.object(current)?;
            let tree = object.try_into_tree()?;
            let Some(entry) = tree.find_entry(part) else {
                return Ok(None);
            };
            let next = Entry {
                mode: entry.mode(),
                id: entry.object_id(),
            };
            current = next.id;
            found = Some(next);
        }
        Ok(found)
    }

    /// Fetches the commits `ids` from `remote` at depth 1 (`git fetch --depth=1 <remote>
    /// <id>...`): how a shallow clone gets the root commits a record names, which its own
    /// history cannot reach. The remote must serve commits by id, as hosted forges do.
    pub fn fetch_commits(&self, remote: &str, ids: &[String]) -> Result<(), Error> {
        sync::not_an_option(remote)?;
        if let Some(bad) = ids
            .iter()
            .find(|id| ObjectId::from_hex(id.as_bytes()).is_err())
        {
            return Err(Error::NoSuchRevision { spec: bad.clone() });
        }
        let what = format!("git fetch --depth=1 {remote}");
        let mut cmd = git_cli::in_repo(self.repo.git_dir(), self.workdir());
        cmd.args([
            "fetch",
            "--quiet",
            "--depth=1",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            remote,
        ])
        .args(ids);
        let out = git_cli::output(&mut cmd, &what)?;
        if !out.status.success() {
            return Err(Error::GitFailed {
                what,
                stderr: reason(&out.stderr),
            });
        }
        Ok(())
    }
}

impl Store {
    /// Returns the root commits of `commit`'s history as `remote` holds it, for a shallow clone
    /// that does not hold that history: the commits alone (no trees, no blobs) are fetched into
    /// a throwaway repository beside it (`--filter=tree:0`, a partial clone of its own), their
    /// roots listed, and the repository removed. The clone itself is not changed. Needs a
    /// remote that serves filters (hosted forges do; `uploadpack.allowFilter` for git's own).
    ///
    /// # Errors
    ///
    /// [`Error::GitFailed`] with git's reason when the fetch or the listing fails.
    pub fn roots_from_remote(
        &self,
        remote: &str,
        commit: &CommitId,
    ) -> Result<Vec<CommitId>, Error> {
        sync::not_an_option(remote)?;
        let url = self
            .config_string(&format!("remote.{remote}.url"))
            .ok_or_else(|| Error::GitFailed {
                what: format!("the URL of {remote}"),
                stderr: format!("remote.{remote}.url is not set"),
            })?;
        let scratch = tempfile::Builder::new()
            .prefix("hpp-history-")
            .tempdir()
            .map_err(|source| Error::Io {
                what: "a scratch repository for the history".into(),
                source,
            })?;
        let git_dir = scratch.path().join("history.git");
        let here = self
            .workdir()
            .map_or_else(|| self.repo.git_dir().to_path_buf(), Path::to_path_buf);
        let run = |args: &[&str], what: &str| -> Result<Vec<u8>, Error> {
            // Run where the clone is, so a relative URL means what it means to the clone.
            let mut cmd = git_cli::in_dir(&here);
            cmd.arg("--git-dir").arg(&git_dir).args(args);
            let out = git_cli::output(&mut cmd, what)?;
            if out.status.success() {
                Ok(out.stdout)
            } else {
                Err(Error::GitFailed {
                    what: what.to_owned(),
                    stderr: reason(&out.stderr),
                })
            }
        };
        let init = git_cli::output(
            git_cli::in_dir(&here)
                .args(["init", "--quiet", "--bare"])
                .arg(&git_dir),
            "git init",
        )?;
        if !init.status.success() {
            return Err(Error::GitFailed {
                what: "git init of a scratch repository".into(),
                stderr: String::from_utf8_lossy(&init.stderr).trim().to_owned(),
            });
        }
        for (key, value) in [
            ("core.repositoryFormatVersion", "1"),
            ("extensions.partialClone", "origin"),
            ("remote.origin.url", url.as_str()),
            ("remote.origin.promisor", "true"),
            ("remote.origin.partialCloneFilter", "tree:0"),
        ] {
            run(&["config", key, value], "git config")?;
        }
        let what = format!("git fetch --filter=tree:0 {remote} {commit} (its commits only)");
        // A remote that accepts and never answers must not hang the reader: it is given
        // `hpp.fetchTimeout` seconds (default 120), then refused.
        let mut fetch = git_cli::in_dir(&here);
        fetch.arg("--git-dir").arg(&git_dir).args([
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--filter=tree:0",
            "--recurse-submodules=no",
            "origin",
            commit.as_str(),
        ]);
        let out = git_cli::output_within(&mut fetch, &what, self.fetch_timeout()?)?;
        if !out.status.success() {
            return Err(Error::GitFailed {
                what,
                stderr: reason(&out.stderr),
            });
        }
        let listed = run(
            &["rev-list", "--max-parents=0", commit.as_str()],
            "git rev-list --max-parents=0",
        )?;
        let mut roots: Vec<CommitId> = String::from_utf8_lossy(&listed)
            .lines()
            .filter_map(|l| CommitId::parse(l.trim()))
            .collect();
        roots.sort();
        Ok(roots)
    }
}

impl Store {
    /// How long a fetch the store makes on its own (a shallow clone's history) may take:
    /// `hpp.fetchTimeout` seconds, 120 when unset; a value that is not a whole number of
    /// seconds from 1 to 86400 is refused.
    pub fn fetch_timeout(&self) -> Result<std::time::Duration, Error> {
        match self.config_string("hpp.fetchTimeout") {
            None => Ok(std::time::Duration::from_secs(120)),
            Some(value) => match value.trim().parse::<u64>() {
                Ok(s) if (1..=86_400).contains(&s) => Ok(std::time::Duration::from_secs(s)),
                _ => Err(Error::BadFetchTimeout { value }),
            },
        }
    }
}

/// git's stderr as one line: its non-blank lines, trimmed, joined by `; `.
fn reason(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::git;

    /// A source repository of three commits, served from a bare copy over file:// that allows
    /// filters and fetches by id; returns (tempdir, source, url, root, head).
    fn served() -> (
        tempfile::TempDir,
        std::path::PathBuf,
        String,
        String,
        String,
    ) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let source = dir.path().join("source");
        std::fs::create_dir_all(&source).expect("writable");
        git(&source, &["init", "-q", "-b", "main"]);
        for i in 0..3 {
            std::fs::write(source.join("f"), format!("{i}\n")).expect("writable");
            git(&source, &["add", "f"]);
            git(&source, &["commit", "-q", "-m", &format!("c{i}")]);
        }
        let bare = dir.path().join("remote.git");
        let bare_text = bare.to_str().expect("UTF-8 path");
        git(dir.path(), &["clone", "-q", "--bare", "source", bare_text]);
        git(&bare, &["config", "uploadpack.allowFilter", "true"]);
        git(&bare, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
        let root = git(&source, &["rev-list", "--max-parents=0", "HEAD"]);
        let head = git(&source, &["rev-parse", "HEAD"]);
        (dir, source, format!("file://{bare_text}"), root, head)
    }

    #[test]
    fn a_shallow_boundary_is_not_named_a_root_and_the_root_can_be_fetched_by_id() {
        let (dir, _, url, root, head) = served();
        git(
            dir.path(),
            &["clone", "-q", "--depth", "1", &url, "shallow"],
        );
        let store = Store::discover(&dir.path().join("shallow")).expect("a repository");
        assert!(store.is_shallow());
        let head = CommitId::from(ObjectId::from_hex(head.as_bytes()).expect("hex"));
        match store.root_commits(&head) {
            Err(Error::Shallow { boundary, .. }) => assert_eq!(boundary, head),
            other => panic!("expected the boundary to be reported: {other:?}"),
        }
        assert!(!store.is_root_commit(&root));
        store
            .fetch_commits("origin", std::slice::from_ref(&root))
            .expect("the remote serves commits by id");
        assert!(store.is_root_commit(&root), "the root, fetched, is a root");
        assert!(
            matches!(store.root_commits(&head), Err(Error::Shallow { .. })),
            "still cut: the commits between are not here"
        );
    }

    #[test]
    fn control_a_whole_history_names_its_root() {
        let (_dir, source, _, root, head) = served();
        let store = Store::discover(&source).expect("a repository");
        assert!(!store.is_shallow());
        let head = CommitId::from(ObjectId::from_hex(head.as_bytes()).expect("hex"));
        let roots = store.root_commits(&head).expect("a whole history");
        assert_eq!(
            roots.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec![root]
        );
    }

    #[test]
    fn a_partial_clone_reads_a_blob_its_promisor_remote_holds() {
        let (dir, _, url, _, head) = served();
        git(
            dir.path(),
            &[
                "clone",
                "-q",
                "--no-checkout",
                "--filter=blob:none",
                &url,
                "partial",
            ],
        );
        let store = Store::discover(&dir.path().join("partial")).expect("a repository");
        assert_eq!(store.promisor_remote().as_deref(), Some("origin"));
        let blob = store
            .entry_id(&head, "f")
            .expect("readable")
            .expect("an entry");
        assert!(!store.has_object(&blob), "the clone lacks the blob");
        assert_eq!(
            store.read_file(&head, "f").expect("fetched when read"),
            Some(b"2\n".to_vec())
        );
    }

    #[test]
    fn control_without_a_promisor_a_missing_blob_stays_missing() {
        let (dir, _, url, _, head) = served();
        git(
            dir.path(),
            &[
                "clone",
                "-q",
                "--no-checkout",
                "--filter=blob:none",
                &url,
                "partial",
            ],
        );
        let clone = dir.path().join("partial");
        git(&clone, &["config", "--unset", "remote.origin.promisor"]);
        let store = Store::discover(&clone).expect("a repository");
        assert_eq!(store.promisor_remote(), None);
        assert!(
            store.read_file(&head, "f").is_err(),
            "nothing to fetch it from"
        );
    }
}
