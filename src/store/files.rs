//! The worktree's files as git sees them: tracked, plus untracked files that no ignore rule
//! matches. Used to copy a workspace (criterion sensitivity runs every mutant in a fresh copy).
//! Listed through the `git` CLI because gix 0.91's dirwalk does not apply every ignore source
//! git does (`core.excludesFile`, `info/exclude` and nested `.gitignore` files together).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::Command;

use super::{Error, Store};

impl Store {
    /// Returns the paths, relative to the worktree root and sorted, of the tracked files and of
    /// the untracked files that are not ignored (`git ls-files --cached --others
    /// --exclude-standard`). A tracked file deleted from the worktree is still listed; a bare
    /// repository lists nothing.
    pub fn worktree_files(&self) -> Result<Vec<PathBuf>, Error> {
        let Some(root) = self.workdir() else {
            return Ok(Vec::new());
        };
        let out = super::git_cli::stdout(
            Command::new("git")
                .arg("--git-dir")
                .arg(self.repo.git_dir())
                .arg("--work-tree")
                .arg(root)
                .args([
                    "ls-files",
                    "-z",
                    "--cached",
                    "--others",
                    "--exclude-standard",
                ])
                .current_dir(root),
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
}
