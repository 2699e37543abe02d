//! Linked worktrees: the agents' lanes and Hop's attempt and check workspaces.
//!
//! gix 0.91 can open linked worktrees but has no API to add or remove one, so these go through
//! the `git` CLI (`git worktree add|remove|list`). git's hooks are switched off for these calls
//! (`core.hooksPath=/dev/null`): creating a workspace must not run the user's post-checkout hook.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{CommitId, Error, Store};

/// One worktree as `git worktree list --porcelain` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Its directory.
    pub path: PathBuf,
    /// The commit checked out, `None` for a bare entry.
    pub head: Option<CommitId>,
    /// The branch checked out (`refs/heads/...`), `None` when detached.
    pub branch: Option<String>,
    /// Whether git considers it locked.
    pub locked: bool,
    /// Whether its directory is gone (`git worktree prune` would drop it).
    pub prunable: bool,
}

/// What `git worktree add` should check out.
#[derive(Debug, Clone, Copy)]
pub enum Checkout<'a> {
    /// `commit`, detached.
    Detached(&'a CommitId),
    /// A new branch `name` (short name) created at `commit`.
    NewBranch(&'a str, &'a CommitId),
    /// `commit`, detached, with only the given directories (and the files at the top) checked
    /// out: git's sparse checkout in cone mode. The index holds every path; the others are
    /// marked skip-worktree, so a snapshot of the worktree is still the whole tree.
    Sparse(&'a CommitId, &'a [String]),
}

impl Store {
    /// Returns `git status --porcelain` of the worktree, one line per path (untracked files
    /// listed one by one); empty for a bare repository. Runs git, which reads the index as it is.
    pub fn worktree_porcelain(&self) -> Result<Vec<String>, Error> {
        let Some(root) = self.workdir() else {
            return Ok(Vec::new());
        };
        let out = super::git_cli::stdout(
            super::git_cli::in_repo(self.repo.git_dir(), Some(root)).args([
                "status",
                "--porcelain=v1",
                "--untracked-files=all",
            ]),
            "git status",
        )?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// Returns the paths, relative to the worktree root and sorted, of the tracked files and of
    /// the untracked files that are not ignored (`git ls-files --cached --others
    /// --exclude-standard`). A tracked file deleted from the worktree is still listed; a bare
    /// repository lists nothing.
    ///
    /// Through the `git` CLI because gix 0.91's dirwalk does not apply every ignore source git
    /// does (`core.excludesFile`, `info/exclude` and nested `.gitignore` files together).
    pub fn worktree_files(&self) -> Result<Vec<PathBuf>, Error> {
        let Some(root) = self.workdir() else {
            return Ok(Vec::new());
        };
        let out = super::git_cli::stdout(
            super::git_cli::in_repo(self.repo.git_dir(), Some(root)).args([
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ]),
            "the worktree's file list",
        )?;
        let mut files: Vec<PathBuf> = out
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(OsStr::from_bytes(p)))
            .collect();
        // An unmerged path is listed once per stage.
        files.sort();
        files.dedup();
        Ok(files)
    }

    fn worktree_git(&self) -> Command {
        // The common directory, so a worktree added from a linked one belongs to the
        // repository; hooks off, so a user's post-checkout hook never runs for a lane.
        let mut cmd = super::git_cli::in_dir(self.workdir().unwrap_or(self.common_dir()));
        cmd.arg("-c")
            .arg("core.hooksPath=/dev/null")
            .arg("--git-dir")
            .arg(self.common_dir());
        cmd
    }

    fn worktree_run(&self, args: &[&OsStr], what: &str) -> Result<Vec<u8>, Error> {
        super::git_cli::stdout(self.worktree_git().args(args), what)
    }

    /// Creates a linked worktree at `path` (which must not exist or be empty) checking out
    /// `checkout`. The user's hooks do not run.
    pub fn add_worktree(&self, path: &Path, checkout: Checkout<'_>) -> Result<(), Error> {
        let what = format!("worktree {}", path.display());
        let mut args: Vec<&OsStr> = vec![OsStr::new("worktree"), OsStr::new("add")];
        let commit = match checkout {
            Checkout::Detached(commit) => {
                args.push(OsStr::new("--detach"));
                commit
            }
            Checkout::NewBranch(name, commit) => {
                args.extend([OsStr::new("-b"), OsStr::new(name)]);
                commit
            }
            Checkout::Sparse(commit, _) => {
                args.extend([OsStr::new("--detach"), OsStr::new("--no-checkout")]);
                commit
            }
        };
        args.extend([OsStr::new("--quiet"), path.as_os_str()]);
        args.push(OsStr::new(commit.as_str()));
        self.worktree_run(&args, &what)?;
        if let Checkout::Sparse(_, dirs) = checkout {
            // The cone first, then the index and files from HEAD within it (git keeps the
            // sparse patterns per worktree).
            let in_worktree = |args: &[&OsStr]| {
                let mut cmd = super::git_cli::in_dir(path);
                cmd.arg("-c").arg("core.hooksPath=/dev/null").args(args);
                super::git_cli::stdout(&mut cmd, &what)
            };
            let mut set: Vec<&OsStr> = ["sparse-checkout", "set", "--cone", "--"]
                .map(OsStr::new)
                .to_vec();
            set.extend(dirs.iter().map(OsStr::new));
            in_worktree(&set)?;
            in_worktree(&["read-tree", "-mu", "HEAD"].map(OsStr::new))?;
        }
        Ok(())
    }

    /// Removes the linked worktree at `path`. Without `force`, git refuses when it holds
    /// modified or untracked files; callers that promise to lose nothing check first and say
    /// what is there.
    pub fn remove_worktree(&self, path: &Path, force: bool) -> Result<(), Error> {
        let what = format!("worktree {}", path.display());
        let mut args: Vec<&OsStr> = vec![OsStr::new("worktree"), OsStr::new("remove")];
        if force {
            args.push(OsStr::new("--force"));
        }
        args.push(path.as_os_str());
        self.worktree_run(&args, &what).map(drop)
    }

    /// Every worktree of the repository, the main one first, as git lists them.
    pub fn list_worktrees(&self) -> Result<Vec<Worktree>, Error> {
        let out = self.worktree_run(
            &[
                OsStr::new("worktree"),
                OsStr::new("list"),
                OsStr::new("--porcelain"),
                OsStr::new("-z"),
            ],
            "the worktree list",
        )?;
        Ok(parse_worktree_list(&out))
    }
}

/// Parses `git worktree list --porcelain -z`: records of NUL-terminated `key value` lines,
/// separated by an empty line.
fn parse_worktree_list(out: &[u8]) -> Vec<Worktree> {
    let mut list = Vec::new();
    let mut current: Option<Worktree> = None;
    for field in out.split(|b| *b == 0) {
        if field.is_empty() {
            list.extend(current.take());
            continue;
        }
        let (key, value) = match field.iter().position(|b| *b == b' ') {
            Some(at) => (&field[..at], &field[at + 1..]),
            None => (field, &[][..]),
        };
        match key {
            b"worktree" => {
                list.extend(current.take());
                current = Some(Worktree {
                    path: PathBuf::from(OsStr::from_bytes(value)),
                    head: None,
                    branch: None,
                    locked: false,
                    prunable: false,
                });
            }
            b"HEAD" => {
                if let Some(wt) = current.as_mut() {
                    wt.head = std::str::from_utf8(value).ok().and_then(CommitId::parse);
                }
            }
            b"branch" => {
                if let Some(wt) = current.as_mut() {
                    wt.branch = Some(String::from_utf8_lossy(value).into_owned());
                }
            }
            b"locked" => current.iter_mut().for_each(|wt| wt.locked = true),
            b"prunable" => current.iter_mut().for_each(|wt| wt.prunable = true),
            _ => {}
        }
    }
    list.extend(current);
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_records_parse_into_worktrees() {
        let out = b"worktree /r\0HEAD 1111\0branch refs/heads/main\0\0worktree /r-lane\0HEAD 2222\0detached\0locked\0\0";
        let list = parse_worktree_list(out);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].branch.as_deref(), Some("refs/heads/main"));
        assert_eq!(list[1].path, PathBuf::from("/r-lane"));
        assert!(list[1].branch.is_none() && list[1].locked && !list[1].prunable);
    }

    #[test]
    fn control_garbage_yields_no_worktree() {
        assert!(parse_worktree_list(b"nonsense\0\0").is_empty());
        assert!(parse_worktree_list(b"").is_empty());
    }
}
