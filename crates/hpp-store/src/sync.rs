//! Moving records between repositories, through the `git` CLI: gix 0.91 has no push, and a
//! fetch through gix's local transport runs `git upload-pack` anyway. Record refspecs never
//! carry `+`: an update that is not a fast-forward is rejected by git and reported as
//! divergence, never resolved by overwriting.
//!
//! The notes mirror is the one ref every machine writes, so it is not fetched over the local
//! one: the remote's notes land in a staging ref, `refs/notes/remote-hpp/<remote>/hpp` (which
//! mirrors the remote and may move any way, like `refs/remotes/`), and are merged into
//! `refs/notes/hpp` forward: a fast-forward when one side contains the other, else
//! `git notes merge -s cat_sort_uniq` (the union of the lines of both notes). After a fetch, a
//! push of the notes is a fast-forward again.

use std::process::Command;

use serde::Serialize;

use super::{Error, Store};

/// The refspec that carries every record under the same name, in both directions.
pub const RECORDS: &str = "refs/hpp/*:refs/hpp/*";

/// The push refspec of the notes mirror (a glob, so it is quiet when there are no notes yet).
pub const NOTES_PUSH: &str = "refs/notes/hpp*:refs/notes/hpp*";

/// Returns the fetch refspec that stages `remote`'s notes mirror.
pub fn notes_fetch(remote: &str) -> String {
    format!("+refs/notes/hpp*:refs/notes/remote-hpp/{remote}/hpp*")
}

/// Returns the staging ref of `remote`'s notes mirror.
pub fn notes_staging(remote: &str) -> String {
    format!("refs/notes/remote-hpp/{remote}/hpp")
}

/// A ref git refused to move.
#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    /// The ref.
    #[serde(rename = "ref")]
    pub name: String,
    /// git's reason.
    pub reason: String,
}

/// What a push or fetch did.
#[derive(Debug, Clone, Serialize, Default)]
pub struct SyncReport {
    /// The remote.
    pub remote: String,
    /// Refs created or fast-forwarded.
    pub updated: Vec<String>,
    /// Refs already equal on both sides.
    pub up_to_date: usize,
    /// Refs git refused to move (divergence).
    pub rejected: Vec<Rejected>,
}

impl Store {
    fn git_cli(&self) -> Command {
        super::git_cli::in_repo(self.repo.git_dir(), self.workdir())
    }

    fn run_git(&self, args: &[&str], what: &str) -> Result<(bool, String, String), Error> {
        let out = super::git_cli::output(self.git_cli().args(args), what)?;
        Ok((
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    /// Pushes every record to `remote` without forcing.
    pub fn push_records(&self, remote: &str) -> Result<SyncReport, Error> {
        let args = vec!["push", "--porcelain", remote, RECORDS, NOTES_PUSH];
        let (ok, stdout, stderr) = self.run_git(&args, &format!("git push {remote}"))?;
        let mut report = SyncReport {
            remote: remote.to_owned(),
            ..SyncReport::default()
        };
        for line in stdout.lines() {
            let mut parts = line.splitn(3, '\t');
            let (Some(flag), Some(refs), summary) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let name = refs.split(':').nth(1).unwrap_or(refs).to_owned();
            match flag {
                "=" => report.up_to_date += 1,
                "!" => report.rejected.push(Rejected {
                    name,
                    reason: summary.unwrap_or_default().to_owned(),
                }),
                _ => report.updated.push(name),
            }
        }
        if !ok && report.rejected.is_empty() {
            return Err(Error::GitFailed {
                what: format!("git push {remote}"),
                stderr: whole_error(&stderr),
            });
        }
        Ok(report)
    }

    /// Lists the record refs `remote` has (`git ls-remote <remote> refs/hpp/*`), by name.
    pub fn remote_records(
        &self,
        remote: &str,
    ) -> Result<std::collections::BTreeSet<String>, Error> {
        let (ok, advertised, stderr) = self.run_git(
            &["ls-remote", remote, "refs/hpp/*"],
            &format!("git ls-remote {remote}"),
        )?;
        if !ok {
            return Err(Error::GitFailed {
                what: format!("git ls-remote {remote}"),
                stderr: whole_error(&stderr),
            });
        }
        Ok(advertised
            .lines()
            .filter_map(|line| line.split_once('\t').map(|(_, name)| name.to_owned()))
            .collect())
    }

    /// Fetches every record from `remote` without forcing.
    pub fn fetch_records(&self, remote: &str) -> Result<SyncReport, Error> {
        // The outcome is read from the refs themselves, before and after, against what the
        // remote advertises: no parsing of git's fetch output, which changes across versions
        // (`--porcelain` only exists since git 2.41).
        let (ok, advertised, stderr) = self.run_git(
            &["ls-remote", remote, "refs/hpp/*"],
            &format!("git ls-remote {remote}"),
        )?;
        if !ok {
            return Err(Error::GitFailed {
                what: format!("git ls-remote {remote}"),
                stderr: whole_error(&stderr),
            });
        }
        let before: std::collections::BTreeMap<String, super::CommitId> =
            self.list(super::refs::PREFIX)?.into_iter().collect();
        let staging_spec = notes_fetch(remote);
        let args = [
            "fetch",
            "--quiet",
            "--no-tags",
            remote,
            RECORDS,
            staging_spec.as_str(),
        ];
        let (ok, _, stderr) = self.run_git(&args, &format!("git fetch {remote}"))?;
        let after: std::collections::BTreeMap<String, super::CommitId> =
            self.list(super::refs::PREFIX)?.into_iter().collect();
        let mut report = SyncReport {
            remote: remote.to_owned(),
            ..SyncReport::default()
        };
        for line in advertised.lines() {
            let Some((id, name)) = line.split_once('\t') else {
                continue;
            };
            match after.get(name) {
                Some(local) if local.as_str() == id => {
                    if before.get(name) == Some(local) {
                        report.up_to_date += 1;
                    } else {
                        report.updated.push(name.to_owned());
                    }
                }
                _ => report.rejected.push(Rejected {
                    name: name.to_owned(),
                    reason: "non-fast-forward: the local record differs and was kept".into(),
                }),
            }
        }
        if !ok && report.rejected.is_empty() {
            return Err(Error::GitFailed {
                what: format!("git fetch {remote}"),
                stderr: whole_error(&stderr),
            });
        }
        if self.merge_notes(remote)? {
            report.updated.push(super::NOTES_REF.to_owned());
        }
        Ok(report)
    }

    /// Merges the staged notes of `remote` into the local notes mirror, forward only. Returns
    /// whether the local notes moved.
    fn merge_notes(&self, remote: &str) -> Result<bool, Error> {
        let staging = notes_staging(remote);
        let Some(theirs) = self.tip_oid(&staging)? else {
            return Ok(false);
        };
        let ours = self.tip_oid(super::NOTES_REF)?;
        let is_ancestor = |a: &str, b: &str| -> Result<bool, Error> {
            Ok(self
                .run_git(&["merge-base", "--is-ancestor", a, b], "git merge-base")?
                .0)
        };
        match ours {
            None => {
                self.cas(super::NOTES_REF, None, theirs)?;
                Ok(true)
            }
            Some(ours)
                if ours == theirs || is_ancestor(&theirs.to_string(), &ours.to_string())? =>
            {
                Ok(false)
            }
            Some(ours) if is_ancestor(&ours.to_string(), &theirs.to_string())? => {
                self.cas(super::NOTES_REF, Some(ours), theirs)?;
                Ok(true)
            }
            Some(_) => {
                let mut cmd = self.git_cli();
                cmd.args([
                    "notes",
                    "--ref",
                    super::NOTES_REF,
                    "merge",
                    "-q",
                    "-s",
                    "cat_sort_uniq",
                    &staging,
                ]);
                // git needs an identity for the merge commit; give it ours where it has none.
                if !self
                    .git_cli()
                    .args(["var", "GIT_COMMITTER_IDENT"])
                    .output()
                    .is_ok_and(|o| o.status.success())
                {
                    for (k, v) in [
                        ("GIT_AUTHOR_NAME", super::FALLBACK_NAME),
                        ("GIT_AUTHOR_EMAIL", super::FALLBACK_EMAIL),
                        ("GIT_COMMITTER_NAME", super::FALLBACK_NAME),
                        ("GIT_COMMITTER_EMAIL", super::FALLBACK_EMAIL),
                    ] {
                        cmd.env(k, v);
                    }
                }
                let out = super::git_cli::output(&mut cmd, super::NOTES_REF)?;
                if !out.status.success() {
                    return Err(Error::GitFailed {
                        what: super::NOTES_REF.into(),
                        stderr: whole_error(&String::from_utf8_lossy(&out.stderr)),
                    });
                }
                Ok(true)
            }
        }
    }

    /// Returns the values of `remote.<name>.<key>`.
    pub fn remote_config(&self, remote: &str, key: &str) -> Vec<String> {
        self.config_strings(&format!("remote.{remote}.{key}"))
    }

    /// Adds `value` to the multi-valued git config `key` (through git, so its locking and file
    /// format are respected).
    pub fn config_add(&self, key: &str, value: &str) -> Result<(), Error> {
        let (ok, _, stderr) = self.run_git(&["config", "--add", key, value], "git config")?;
        if ok {
            Ok(())
        } else {
            Err(Error::GitFailed {
                what: key.to_owned(),
                stderr: whole_error(&stderr),
            })
        }
    }

    /// Returns the directory git runs hooks from: `core.hooksPath` (relative to the worktree
    /// root) or the common git directory's `hooks`.
    pub fn hooks_dir(&self) -> std::path::PathBuf {
        match self.config_string("core.hooksPath") {
            Some(path) => {
                let path = std::path::PathBuf::from(path);
                if path.is_absolute() {
                    path
                } else {
                    self.workdir().unwrap_or(self.repo.git_dir()).join(path)
                }
            }
            None => self.common_dir().join("hooks"),
        }
    }
}

/// git's whole complaint on one line: every non-empty line of its stderr, in order (a remote
/// error's cause is often on the first line and its advice on the last).
fn whole_error(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        "git failed".to_owned()
    } else {
        lines.join(" ")
    }
}
