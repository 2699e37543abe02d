//! Moving records between repositories, through the `git` CLI: gix 0.91 has no push, and a
//! fetch through gix's local transport runs `git upload-pack` anyway. A push never forces: an
//! update that is not a fast-forward is rejected by git and reported as divergence. A fetch
//! never writes `refs/hpp/` at all: it mirrors the remote's records into
//! `refs/hpp-remote/<remote>/` (forced, as `refs/remotes/` is), and the application reconciles
//! each staged record into `refs/hpp/` forward only, so a plain `git fetch` with the same
//! refspec cannot fail on a diverged record.
//!
//! The notes mirror is the one ref every machine writes, so it is not fetched over the local
//! one: the remote's notes land in a staging ref, `refs/notes/remote-hpp/<remote>/hpp` (which
//! mirrors the remote and may move any way, like `refs/remotes/`). The application settles
//! `refs/notes/hpp` with them once the records are in ([`Store::settle_notes`]): a fast-forward
//! when every remote line is backed by a record held here, else their history is joined (a
//! commit with both tips as parents and the local notes' tree), never their lines; the notes
//! are derived from the records each machine holds. After a fetch, a push of the notes is a
//! fast-forward again.

use std::process::Command;

use serde::Serialize;

use super::{Error, Store};

/// The push refspec that carries every record under the same name, never forced.
pub const RECORDS: &str = "refs/hpp/*:refs/hpp/*";

/// Where fetched records are staged: `refs/hpp-remote/<remote>/…` mirrors the remote's
/// `refs/hpp/…` (outside `refs/hpp/`, so it is never pushed, never read as a record).
pub const STAGING_PREFIX: &str = "refs/hpp-remote/";

/// Returns the fetch refspec that stages `remote`'s records (forced: it is a mirror).
pub fn records_fetch(remote: &str) -> String {
    format!("+refs/hpp/*:{STAGING_PREFIX}{remote}/*")
}

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

/// The remote's records as a fetch staged them.
#[derive(Debug, Clone)]
pub struct Staged {
    /// The remote as given.
    pub remote: String,
    /// The staging prefix, `refs/hpp-remote/<name>/`.
    pub prefix: String,
    /// Each staged record under its local name (`refs/hpp/…`), with the remote's tip.
    pub refs: Vec<(String, super::CommitId)>,
    /// Where the remote's notes mirror is staged, when it has one; the local notes are left
    /// for the caller to settle ([`Store::settle_notes`]) once the records are taken in.
    pub notes: Option<String>,
}

/// What a push did.
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
        self.push_records_except(remote, &[])
    }

    /// As [`Store::push_records`], leaving out the records `held` names (negative refspecs,
    /// `^refs/hpp/...`): every other record still goes.
    pub fn push_records_except(&self, remote: &str, held: &[String]) -> Result<SyncReport, Error> {
        not_an_option(remote)?;
        let negatives: Vec<String> = held.iter().map(|name| format!("^{name}")).collect();
        let mut args = vec!["push", "--porcelain", "--", remote, RECORDS, NOTES_PUSH];
        args.extend(negatives.iter().map(String::as_str));
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
        // Every record held back and nothing else to send: git has no ref to push.
        let nothing_left =
            !held.is_empty() && stderr.contains("No refs in common and none specified");
        if !ok && report.rejected.is_empty() && !nothing_left {
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
        Ok(self.remote_record_tips(remote)?.into_keys().collect())
    }

    /// The records `remote` advertises under `refs/hpp/`, each with the commit it is at (hex):
    /// one `git ls-remote`.
    pub fn remote_record_tips(
        &self,
        remote: &str,
    ) -> Result<std::collections::BTreeMap<String, String>, Error> {
        not_an_option(remote)?;
        let (ok, advertised, stderr) = self.run_git(
            &["ls-remote", "--", remote, "refs/hpp/*"],
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
            .filter_map(|line| {
                line.split_once('\t')
                    .map(|(id, name)| (name.to_owned(), id.to_owned()))
            })
            .collect())
    }

    /// Fetches `remote`'s records and its notes mirror into their staging namespaces.
    ///
    /// `refs/hpp-remote/<remote>/*` mirrors the remote's `refs/hpp/*` and may move any way (as
    /// `refs/remotes/` does), so the fetch is forced there and never fails on divergence; the
    /// local records are not touched. Returns each staged record under its local name, sorted.
    pub fn fetch_staging(&self, remote: &str) -> Result<Staged, Error> {
        not_an_option(remote)?;
        let name = self.staging_name(remote);
        let records = format!("+refs/hpp/*:{STAGING_PREFIX}{name}/*");
        let notes = format!("+refs/notes/hpp*:refs/notes/remote-hpp/{name}/hpp*");
        let what = format!("git fetch {remote}");
        // The packs this fetch writes are the fetch's: a long read of what it brought decodes
        // them whole (`fresh`), starting while git still checks them.
        let packs = self.pack_indices();
        let fetch = |how: &[&str]| {
            let mut args = vec!["fetch"];
            args.extend_from_slice(how);
            args.extend(["--no-tags", "--prune", "--no-write-fetch-head", "--"]);
            args.extend([remote, records.as_str(), notes.as_str()]);
            super::git_cli::output_watching(
                self.git_cli().args(&args),
                &what,
                &self.pack_dir(),
                self.watch_for_fresh_pack(&packs),
            )
        };
        let failed = |out: &std::process::Output| Error::GitFailed {
            what: what.clone(),
            stderr: whole_error(&String::from_utf8_lossy(&out.stderr)),
        };
        let prefix = format!("{STAGING_PREFIX}{name}/");
        let staged_notes = notes_staging(&name);
        // git names every staging ref and its value as it moves them (`--porcelain`, git 2.41;
        // `--verbose` adds the unchanged ones), so 10,000 staged records are not read back one
        // file each. A git that predates it refuses the option (exit 129) before fetching.
        // The staging refs are a forced mirror, so whether git forced one is of no interest,
        // and finding out walks every new commit back to the old tip (a board of 10,000 new
        // entries: 50 ms of git's 300): `--no-show-forced-updates` (git 2.23) skips it.
        let out = fetch(&["--porcelain", "--verbose", "--no-show-forced-updates"])?;
        let reported = match out.status.code() {
            Some(0) => staged_from_porcelain(&out.stdout, &prefix, &staged_notes),
            Some(129) => None,
            _ => return Err(failed(&out)),
        };
        let (refs, notes) = match reported {
            Some(reported) => reported,
            None => {
                if out.status.code() == Some(129) {
                    let out = fetch(&["--quiet"])?;
                    if !out.status.success() {
                        return Err(failed(&out));
                    }
                }
                let refs = self.list(&prefix)?;
                (refs, self.tip_oid(&staged_notes)?.is_some())
            }
        };
        self.note_fresh_packs(&packs, self.pack_indices());
        let refs = refs
            .into_iter()
            .map(|(staged, id)| {
                (
                    format!("{}{}", super::refs::PREFIX, &staged[prefix.len()..]),
                    id,
                )
            })
            .collect();
        let notes = notes.then_some(staged_notes);
        Ok(Staged {
            remote: remote.to_owned(),
            prefix,
            refs,
            notes,
        })
    }

    /// The name `remote` is staged under: the remote's own name when it is a configured
    /// remote, else (a URL or a path) `url-` and twelve hex digits of its hash, which a ref name
    /// can always hold.
    pub fn staging_name(&self, remote: &str) -> String {
        if self
            .config_string(&format!("remote.{remote}.url"))
            .is_some()
        {
            remote.to_owned()
        } else {
            format!("url-{}", &self.blob_id(remote.as_bytes())[..12])
        }
    }

    /// Settles the local notes mirror with the remote's staged at `staging`, forward only.
    /// With `take` (the caller found every line of the remote's notes backed by a record held
    /// here) and the local notes its ancestor or absent, it fast-forwards to the remote's, so
    /// machines converge on one notes history. Otherwise it joins the remote's history without
    /// taking a line of it: the local notes move to a commit whose parents are both tips (the
    /// remote's alone when the local notes are its ancestor or absent) and whose tree is the
    /// local notes' own; the caller then derives the lines from the records held here. Either
    /// way the next push of the notes is a fast-forward. Returns whether the local notes moved.
    pub fn settle_notes(&self, staging: &str, take: bool) -> Result<bool, Error> {
        let Some(theirs) = self.tip_oid(staging)? else {
            return Ok(false);
        };
        let ours = self.tip_oid(super::NOTES_REF)?;
        let holds = |a: gix::ObjectId, b: gix::ObjectId| self.is_ancestor(&a.into(), &b.into());
        if let Some(ours) = ours
            && (ours == theirs || holds(theirs, ours)?)
        {
            return Ok(false);
        }
        // The local notes are the remote's ancestor (or absent): nothing of ours to keep.
        let behind = match ours {
            Some(ours) => holds(ours, theirs)?,
            None => true,
        };
        if take && behind {
            self.cas(super::NOTES_REF, ours, theirs)?;
            return Ok(true);
        }
        let tree = match ours {
            Some(ours) => self.commit_tree(&ours.into())?,
            None => {
                self.repo
                    .write_object(gix::objs::Tree::empty())
                    .map_err(super::git("writing the empty tree"))?;
                self.empty_tree()
            }
        };
        let mut parents: Vec<super::CommitId> = Vec::with_capacity(2);
        if let Some(ours) = ours
            && !behind
        {
            parents.push(ours.into());
        }
        parents.push(theirs.into());
        let joined = self.write_commit(
            &tree,
            &parents,
            "hpp notes: the remote's history joined, none of its lines taken\n\nThe notes mirror is derived from the records held here.\n",
        )?;
        self.cas(super::NOTES_REF, ours, joined.oid())?;
        Ok(true)
    }

    /// Returns the values of `remote.<name>.<key>`.
    pub fn remote_config(&self, remote: &str, key: &str) -> Vec<String> {
        self.config_strings(&format!("remote.{remote}.{key}"))
    }

    /// Adds `value` to the multi-valued git config `key` (through git, so its locking and file
    /// format are respected).
    pub fn config_add(&self, key: &str, value: &str) -> Result<(), Error> {
        self.git_config(key, &["config", "--add", key, value])
    }

    /// Sets the single-valued git config `key` to `value` in the repository's own config
    /// (through git, so its locking and file format are respected).
    pub fn config_set(&self, key: &str, value: &str) -> Result<(), Error> {
        self.git_config(key, &["config", "--local", "--replace-all", key, value])
    }

    /// Removes the value `value` (exactly) from the multi-valued git config `key`.
    pub fn config_unset(&self, key: &str, value: &str) -> Result<(), Error> {
        self.git_config(key, &["config", "--fixed-value", "--unset", key, value])
    }

    /// Runs `git config` with `args` (a change to `key`); git's whole error when it fails.
    fn git_config(&self, key: &str, args: &[&str]) -> Result<(), Error> {
        let (ok, _, stderr) = self.run_git(args, "git config")?;
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

/// Refuses a remote name or URL that git would read as an option (`--upload-pack=…` runs a
/// command). Every call below also puts it after `--`; this says why in one line, up front.
pub fn not_an_option(remote: &str) -> Result<(), Error> {
    if remote.starts_with('-') {
        Err(Error::OptionLikeRemote {
            remote: remote.to_owned(),
        })
    } else {
        Ok(())
    }
}

/// git's whole complaint on one line: every non-empty line of its stderr, in order (a remote
/// error's cause is often on the first line and its advice on the last).
/// The staged records (under `prefix`, sorted) and whether the notes mirror is staged at
/// `notes`, as `git fetch --porcelain --verbose` reported them: one `<flag> <old> <new> <ref>`
/// line per ref the refspecs reach, `-` for one pruned. `None` when a line does not read so, or
/// an update was refused (`!`: that staging ref keeps a value the report does not give): the
/// caller then reads the staging refs themselves.
fn staged_from_porcelain(
    stdout: &[u8],
    prefix: &str,
    notes: &str,
) -> Option<(Vec<(String, super::CommitId)>, bool)> {
    let mut refs = Vec::new();
    let mut has_notes = false;
    for line in std::str::from_utf8(stdout).ok()?.lines() {
        // The flag is one character, a space for a fast-forward.
        let (flag, fields) = (line.get(..1)?, line.get(1..)?.strip_prefix(' ')?);
        let mut fields = fields.splitn(3, ' ');
        let (_old, new, name) = (fields.next()?, fields.next()?, fields.next()?);
        match flag {
            "-" => continue,
            "!" => return None,
            _ => {}
        }
        let id = gix::ObjectId::from_hex(new.as_bytes()).ok()?;
        if name.starts_with(prefix) {
            refs.push((name.to_owned(), id.into()));
        } else if name == notes {
            has_notes = true;
        }
    }
    refs.sort();
    Some((refs, has_notes))
}

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

#[cfg(test)]
mod tests {
    use super::staged_from_porcelain;

    const A: &str = "49a956e1236da21543ba29b304de84b38386755f";
    const B: &str = "aafe7027c07529c993d646f756f8f7e19827a2d5";
    const NULL: &str = "0000000000000000000000000000000000000000";
    const PREFIX: &str = "refs/hpp-remote/origin/";
    const NOTES: &str = "refs/notes/remote-hpp/origin/hpp";

    #[test]
    fn porcelain_lines_give_every_staged_record_but_the_pruned_sorted() {
        let out = format!(
            "* {NULL} {B} {PREFIX}loops/b\n\
             = {A} {A} {PREFIX}loops/a\n  {A} {B} {PREFIX}board/log\n\
             + {B} {A} {PREFIX}lanes/x\n- {A} {NULL} {PREFIX}loops/gone\n\
             = {A} {A} {NOTES}\n"
        );
        let (refs, notes) = staged_from_porcelain(out.as_bytes(), PREFIX, NOTES).unwrap();
        let names: Vec<&str> = refs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "refs/hpp-remote/origin/board/log",
                "refs/hpp-remote/origin/lanes/x",
                "refs/hpp-remote/origin/loops/a",
                "refs/hpp-remote/origin/loops/b",
            ]
        );
        assert_eq!(refs[0].1.as_str(), B, "a fast-forward's new value");
        assert_eq!(refs[1].1.as_str(), A, "a forced update's new value");
        assert!(notes);
        let (_, notes) = staged_from_porcelain(b"", PREFIX, NOTES).unwrap();
        assert!(!notes, "nothing staged, no notes");
    }

    #[test]
    fn control_a_refused_update_or_a_line_that_does_not_read_asks_for_the_refs_themselves() {
        let refused = format!("= {A} {A} {PREFIX}loops/a\n! {A} {B} {PREFIX}loops/b\n");
        assert_eq!(
            staged_from_porcelain(refused.as_bytes(), PREFIX, NOTES),
            None
        );
        let garbled = format!("= {A} {PREFIX}loops/a\n");
        assert_eq!(
            staged_from_porcelain(garbled.as_bytes(), PREFIX, NOTES),
            None
        );
        let not_hex = format!("* {NULL} not-an-id {PREFIX}loops/a\n");
        assert_eq!(
            staged_from_porcelain(not_hex.as_bytes(), PREFIX, NOTES),
            None
        );
    }
}
