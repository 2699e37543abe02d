//! The state of a worktree (what closing a lane would lose), commits reachable from nothing
//! else, and deleting a ref by compare-and-swap.
//!
//! Status goes through the `git` CLI (`git status --porcelain -z`), as git reports it with every
//! ignore source applied; gix 0.91's status does not apply all of them together.

use std::ffi::OsStr;
use std::path::Path;

use gix::ObjectId;
use gix::refs::Target;
use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};

use super::git_cli;
use super::{CommitId, Error, Store, git};

/// One entry of `git status --porcelain=v1`: the two status letters and the path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct StatusEntry {
    /// The index (staged) letter, `?` for untracked.
    pub staged: char,
    /// The worktree letter, `?` for untracked.
    pub worktree: char,
    /// The path, relative to the worktree root (the new path of a rename).
    pub path: String,
}

impl StatusEntry {
    /// Tells whether the entry is an untracked (not ignored) file.
    pub fn is_untracked(&self) -> bool {
        self.staged == '?'
    }

    /// Tells whether the index differs from HEAD for this path.
    pub fn is_staged(&self) -> bool {
        !self.is_untracked() && self.staged != ' '
    }

    /// Tells whether the worktree file differs from the index.
    pub fn is_modified(&self) -> bool {
        !self.is_untracked() && self.worktree != ' '
    }
}

/// Runs `git` with `args` in `dir`, ignoring the caller's `GIT_DIR`/`GIT_WORK_TREE`/
/// `GIT_INDEX_FILE` (so a hook's environment does not redirect it) and without optional locks
/// (so reading status never rewrites the index). Returns stdout; a failure is [`Error::GitFailed`].
pub(super) fn git_in(dir: &Path, args: &[&OsStr], what: &str) -> Result<Vec<u8>, Error> {
    git_cli::stdout(git_cli::in_dir(dir).args(args), what)
}

/// Parses `git status --porcelain=v1 -z`: `XY path\0`, with a rename's source path as an
/// extra NUL-terminated field.
pub(super) fn parse_status(out: &[u8]) -> Vec<StatusEntry> {
    let mut entries = Vec::new();
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(field) = fields.next() {
        if field.len() < 4 {
            continue;
        }
        let staged = char::from(field[0]);
        let worktree = char::from(field[1]);
        let path = String::from_utf8_lossy(&field[3..]).into_owned();
        if matches!(staged, 'R' | 'C') {
            // The source of a rename or copy follows as its own field.
            fields.next();
        }
        entries.push(StatusEntry {
            staged,
            worktree,
            path,
        });
    }
    entries
}

impl Store {
    /// Returns the status of the worktree at `dir` (any worktree of this repository): modified,
    /// staged and untracked-not-ignored files, every untracked file listed on its own.
    pub fn worktree_status(&self, dir: &Path) -> Result<Vec<StatusEntry>, Error> {
        let out = git_in(
            dir,
            &[
                OsStr::new("status"),
                OsStr::new("--porcelain=v1"),
                OsStr::new("-z"),
                OsStr::new("--untracked-files=all"),
            ],
            &format!("the status of {}", dir.display()),
        )?;
        Ok(parse_status(&out))
    }

    /// Returns the commits reachable from `tips` that no ref other than `except` reaches, nor
    /// the HEAD of any worktree other than `except_worktree`: what would be lost if `except` and
    /// that worktree were gone. Newest first.
    pub fn commits_only_on(
        &self,
        tips: &[CommitId],
        except: &str,
        except_worktree: &Path,
    ) -> Result<Vec<CommitId>, Error> {
        let mut hidden: Vec<ObjectId> = Vec::new();
        if self.git_refs {
            hidden.extend(
                self.git_list("")?
                    .into_iter()
                    .filter(|listed| listed.name != except)
                    .map(|listed| listed.peeled),
            );
        } else {
            self.all_tips_but(except, &mut hidden)?;
        }
        let except_worktree =
            std::fs::canonicalize(except_worktree).unwrap_or_else(|_| except_worktree.to_owned());
        for wt in self.list_worktrees()? {
            let same =
                std::fs::canonicalize(&wt.path).unwrap_or(wt.path.clone()) == except_worktree;
            if !same
                && let Some(head) = wt.head
                && let Ok(id) = ObjectId::from_hex(head.as_str().as_bytes())
            {
                hidden.push(id);
            }
        }
        let hidden: Vec<ObjectId> = hidden
            .into_iter()
            .filter(|id| {
                self.repo
                    .find_object(*id)
                    .is_ok_and(|o| o.kind == gix::object::Kind::Commit)
            })
            .collect();
        let tips: Vec<ObjectId> = tips.iter().map(CommitId::oid).collect();
        let walk = self
            .repo
            .rev_walk(tips)
            .with_hidden(hidden)
            .all()
            .map_err(git("walking the lane's commits"))?;
        let mut out = Vec::new();
        for info in walk {
            out.push(info.map_err(git("walking the lane's commits"))?.id.into());
        }
        Ok(out)
    }

    /// Fast-forwards branch `name`, checked out in `worktree`, from `from` to `to` as
    /// `git merge --ff-only` would: the worktree's index and files move with it (git's two-tree
    /// merge, which refuses to overwrite a local change or an untracked file), then the ref moves
    /// by compare-and-swap. If the ref moved meanwhile, the files are put back and the lost race
    /// is [`Error::Moved`].
    pub fn fast_forward_checkout(
        &self,
        worktree: &Path,
        name: &str,
        from: &CommitId,
        to: &CommitId,
    ) -> Result<(), Error> {
        let what = format!("updating the files of {} to {to}", worktree.display());
        let read_tree = |a: &CommitId, b: &CommitId| {
            git_in(
                worktree,
                &[
                    OsStr::new("read-tree"),
                    OsStr::new("-m"),
                    OsStr::new("-u"),
                    OsStr::new(a.as_str()),
                    OsStr::new(b.as_str()),
                ],
                &what,
            )
        };
        read_tree(from, to)?;
        match self.move_ref(name, from, to) {
            Ok(()) => Ok(()),
            Err(e) => {
                // Best effort: the ref did not move, so neither should the files.
                let _ = read_tree(to, from);
                Err(e)
            }
        }
    }

    /// Deletes the ref `name` only if it still points at `expected` (a lost race is
    /// [`Error::Moved`]).
    pub fn delete_ref(&self, name: &str, expected: &CommitId) -> Result<(), Error> {
        let full: gix::refs::FullName =
            name.try_into()
                .map_err(
                    |e: gix::validate::reference::name::Error| Error::InvalidRefName {
                        name: name.to_owned(),
                        reason: e.to_string(),
                    },
                )?;
        let edit = RefEdit {
            change: Change::Delete {
                expected: PreviousValue::MustExistAndMatch(Target::Object(expected.oid())),
                log: RefLog::AndReference,
            },
            name: full,
            deref: false,
        };
        let refused = if self.git_refs {
            let edit = super::git_refs::Edit {
                name,
                expected: Some(expected.oid()),
                new: None,
            };
            match self.git_update(&[edit], "hpp: delete")? {
                Ok(()) => return Ok(()),
                Err(stderr) => Error::GitFailed {
                    what: format!("deleting {name}"),
                    stderr,
                },
            }
        } else {
            match self.repo.edit_references([edit]) {
                Ok(_) => return Ok(()),
                Err(e) => git(format!("deleting {name}"))(e),
            }
        };
        match self.tip_oid(name) {
            Ok(actual) if actual != Some(expected.oid()) => Err(Error::Moved {
                name: name.to_owned(),
                expected: Some(expected.clone()),
                actual: actual.map(Into::into),
            }),
            _ => Err(refused),
        }
    }

    /// Every ref's peeled tip but `except`'s, into `out` (the files backend, through gix).
    fn all_tips_but(&self, except: &str, out: &mut Vec<ObjectId>) -> Result<(), Error> {
        let platform = self.repo.references().map_err(git("listing refs"))?;
        for reference in platform.all().map_err(git("listing refs"))? {
            let Ok(mut reference) = reference else {
                continue;
            };
            if reference.name().as_bstr() == except.as_bytes() {
                continue;
            }
            if let Ok(id) = reference.peel_to_id() {
                out.push(id.detach());
            }
        }
        Ok(())
    }
}

impl Store {
    /// Writes `paths` (`/`-separated, from the worktree's top level) into the worktree as
    /// `tree` holds them, byte for byte with their modes (files, executables, symbolic links),
    /// through `git restore --source=TREE --worktree`: the index and HEAD are left alone, and a
    /// path `tree` lacks is an error, nothing written.
    pub fn restore_from(&self, tree: &super::TreeId, paths: &[String]) -> Result<(), Error> {
        use std::io::Write as _;
        let Some(root) = self.workdir() else {
            return Err(Error::Bare {
                what: "restore".to_owned(),
                needs: "worktree",
            });
        };
        if paths.is_empty() {
            return Ok(());
        }
        let mut cmd = super::git_cli::in_repo(self.repo.git_dir(), Some(root));
        cmd.args(["--literal-pathspecs", "restore", "--worktree"])
            .arg(format!("--source={tree}"))
            .args(["--pathspec-from-file=-", "--pathspec-file-nul"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let unavailable = |source| Error::GitUnavailable {
            what: "git restore".to_owned(),
            source,
        };
        let mut child = cmd.spawn().map_err(unavailable)?;
        let mut input = Vec::new();
        for path in paths {
            input.extend_from_slice(path.as_bytes());
            input.push(0);
        }
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(&input).map_err(unavailable)?;
        }
        let out = child.wait_with_output().map_err(unavailable)?;
        if out.status.success() {
            Ok(())
        } else {
            Err(Error::GitFailed {
                what: "git restore".to_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_status_parses_each_kind() {
        let out = b" M a.txt\0M  b.txt\0?? new.txt\0R  c.txt\0old.txt\0MM d.txt\0";
        let e = parse_status(out);
        assert_eq!(e.len(), 5);
        assert!(e[0].is_modified() && !e[0].is_staged());
        assert!(e[1].is_staged() && !e[1].is_modified());
        assert!(e[2].is_untracked() && !e[2].is_staged() && !e[2].is_modified());
        assert_eq!(e[3].path, "c.txt");
        assert!(e[4].is_staged() && e[4].is_modified());
    }

    #[test]
    fn control_an_empty_or_short_status_has_no_entries() {
        assert!(parse_status(b"").is_empty());
        assert!(parse_status(b"M\0").is_empty());
    }
}
