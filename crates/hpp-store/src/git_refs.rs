//! Refs through git's own ref backend, for repositories whose refs gix 0.91 cannot read: the
//! reftable backend (`git init --ref-format=reftable`, `extensions.refStorage=reftable`).
//!
//! Objects are read and written by gix in every repository; only refs take this path. Every
//! read is one `git for-each-ref` (a whole prefix at once, never a process per ref), every move
//! one `git update-ref --stdin` transaction: each edit is a compare-and-swap on its expected
//! value (`create` when the ref must not exist), all edits of one call land together or none
//! does, and git fsyncs what it writes (`core.fsync=reference`) after the store has flushed the
//! objects the new values reach ([`Store::sync_closure_beyond`]), so the durability order is the one
//! the files backend keeps.

use std::io::Write;
use std::process::{Command, Stdio};

use gix::ObjectId;

use super::{Error, Store};

/// How git writes refs for the store: what it writes is fsynced (`core.fsync=reference`); a
/// writer waits its turn on the table stack's one lock (up to 10 s) rather than failing after
/// git's default 100 ms, since in reftable every writer of any ref takes that lock, where in
/// the files backend only writers of the same ref meet; and the user's hooks do not run (the
/// `reference-transaction` hook would), as they never do for the store's own writes.
const WRITING: [&str; 6] = [
    "-c",
    "core.fsync=reference",
    "-c",
    "reftable.lockTimeout=10000",
    "-c",
    "core.hooksPath=/dev/null",
];

/// One line of `for-each-ref`: a ref's name, the id it holds and, for an annotated tag, the
/// commit it peels to. Symbolic refs are left out.
pub(crate) struct Listed {
    pub name: String,
    pub id: ObjectId,
    pub peeled: ObjectId,
}

/// One edit of a transaction: `name` from `expected` (`None`: must not exist) to `new`
/// (`None`: deleted).
pub(crate) struct Edit<'a> {
    pub name: &'a str,
    pub expected: Option<ObjectId>,
    pub new: Option<ObjectId>,
}

impl Store {
    fn git_refs_cli(&self) -> Command {
        super::git_cli::in_repo(self.repo.git_dir(), self.workdir())
    }

    /// The refs whose names start with `prefix` (any string, not only a whole directory),
    /// sorted by name.
    pub(crate) fn git_list(&self, prefix: &str) -> Result<Vec<Listed>, Error> {
        // for-each-ref matches a pattern literally up to a slash; ask for the directory that
        // holds `prefix` and keep the names that start with it.
        let pattern = match prefix.rfind('/') {
            Some(at) => &prefix[..at],
            None => "",
        };
        let mut cmd = self.git_refs_cli();
        cmd.args([
            "for-each-ref",
            "--format=%(objectname) %(*objectname) %(symref)%00%(refname)",
        ]);
        if !pattern.is_empty() {
            cmd.arg(pattern);
        }
        let out = super::git_cli::stdout(&mut cmd, &format!("listing {prefix}"))?;
        let mut listed = Vec::new();
        for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let line = String::from_utf8_lossy(line);
            let Some((ids, name)) = line.split_once('\0') else {
                continue;
            };
            if !name.starts_with(prefix) {
                continue;
            }
            let mut parts = ids.split(' ');
            let (Some(id), Some(peeled), Some(symref)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if !symref.is_empty() {
                continue;
            }
            let Ok(id) = ObjectId::from_hex(id.as_bytes()) else {
                continue;
            };
            let peeled = ObjectId::from_hex(peeled.as_bytes()).unwrap_or(id);
            listed.push(Listed {
                name: name.to_owned(),
                id,
                peeled,
            });
        }
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(listed)
    }

    /// The id `name` holds, `None` when it does not exist; a symbolic ref is an error.
    pub(crate) fn git_tip(&self, name: &str) -> Result<Option<ObjectId>, Error> {
        let mut cmd = self.git_refs_cli();
        // A pattern also matches the refs below it; the exact name sorts first when it exists,
        // and the name is checked rather than trusted.
        cmd.args([
            "for-each-ref",
            "--count=1",
            "--format=%(objectname) %(symref)%00%(refname)",
            name,
        ]);
        let out = super::git_cli::stdout(&mut cmd, &format!("reading {name}"))?;
        for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let line = String::from_utf8_lossy(line);
            let Some((ids, found)) = line.split_once('\0') else {
                continue;
            };
            if found != name {
                continue;
            }
            let (id, symref) = ids.split_once(' ').unwrap_or((ids, ""));
            if !symref.is_empty() {
                return Err(Error::Symbolic {
                    name: name.to_owned(),
                });
            }
            return Ok(ObjectId::from_hex(id.as_bytes()).ok());
        }
        Ok(None)
    }

    /// Makes every edit in one `git update-ref --stdin` transaction. `Ok(Err(stderr))` when git
    /// refused it (nothing moved); the caller re-reads the refs to say which edit lost.
    pub(crate) fn git_update(
        &self,
        edits: &[Edit<'_>],
        message: &str,
    ) -> Result<Result<(), String>, Error> {
        let mut script = String::new();
        for edit in edits {
            match (edit.new, edit.expected) {
                (Some(new), Some(old)) => {
                    script.push_str(&format!("update {} {new} {old}\n", edit.name));
                }
                (Some(new), None) => script.push_str(&format!("create {} {new}\n", edit.name)),
                (None, Some(old)) => script.push_str(&format!("delete {} {old}\n", edit.name)),
                (None, None) => {}
            }
        }
        let what = "git update-ref --stdin";
        let mut child = self
            .git_refs_cli()
            .args(WRITING)
            .args(["update-ref", "--stdin", "-m", message])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| Error::GitUnavailable {
                what: what.to_owned(),
                source,
            })?;
        if let Some(mut stdin) = child.stdin.take() {
            // A git that exits early closes the pipe; its exit status says why.
            let _ = stdin.write_all(script.as_bytes());
        }
        let out = child
            .wait_with_output()
            .map_err(|source| Error::GitUnavailable {
                what: what.to_owned(),
                source,
            })?;
        if out.status.success() {
            Ok(Ok(()))
        } else {
            Ok(Err(String::from_utf8_lossy(&out.stderr).trim().to_owned()))
        }
    }

    /// A handle on this repository for gix to walk or diff with, and the directory to keep
    /// while it is used. gix reads HEAD of its own accord in a few places (its status walk
    /// looks for `.gitmodules` in HEAD's tree when neither the worktree nor the index has one;
    /// attributes in a bare repository come from HEAD's tree), and cannot read a reftable HEAD.
    /// In a reftable repository the handle gets a ref store of its own: a private directory
    /// holding HEAD, detached at the commit git says HEAD is at (or unborn), and `info` (the
    /// excludes and attributes gix reads from the git directory), linked to the repository's.
    /// Every ref the store itself reads or moves goes through git, never this handle. In a
    /// files repository: a plain clone of the handle, and no directory.
    pub(crate) fn walkable(&self) -> Result<(gix::Repository, Option<tempfile::TempDir>), Error> {
        let mut repo = self.repo.clone();
        if !self.git_refs {
            return Ok((repo, None));
        }
        let io = |source| Error::Io {
            what: "a readable HEAD for gix".into(),
            source,
        };
        let dir = tempfile::Builder::new()
            .prefix("hpp-head-")
            .tempdir()
            .map_err(io)?;
        let head = match self.git_head()? {
            Some(id) => format!("{id}\n"),
            None => "ref: refs/heads/unborn\n".to_owned(),
        };
        std::fs::write(dir.path().join("HEAD"), head).map_err(io)?;
        let info = self.repo.common_dir().join("info");
        if info.is_dir() {
            std::os::unix::fs::symlink(&info, dir.path().join("info")).map_err(io)?;
        }
        repo.refs = gix::refs::file::Store::at(dir.path().to_owned(), repo.object_hash());
        Ok((repo, Some(dir)))
    }

    /// The note on `commit` in `notes_ref`, read from the notes tree as git lays it out (the
    /// object's hex name at the top, or under two-character fan-out directories), `None` when
    /// it has none. gix's notes API reads the notes ref itself, which it cannot in a reftable
    /// repository.
    pub(crate) fn git_note(
        &self,
        notes_ref: &str,
        commit: &super::CommitId,
    ) -> Result<Option<Vec<u8>>, Error> {
        let Some(tip) = self.tip_oid(notes_ref)? else {
            return Ok(None);
        };
        let what = || format!("reading the note of {commit}");
        let mut tree = self
            .repo
            .find_commit(tip)
            .map_err(super::git(what()))?
            .tree()
            .map_err(super::git(what()))?;
        let mut rest = commit.as_str();
        loop {
            let mut next = None;
            for entry in tree.iter() {
                let entry = entry.map_err(super::git(what()))?;
                let name = entry.filename().to_string();
                if name == rest && entry.mode().is_blob() {
                    let blob = entry.object().map_err(super::git(what()))?;
                    return Ok(Some(blob.data.clone()));
                }
                if name.len() == 2
                    && rest.len() > 2
                    && rest.starts_with(&name)
                    && entry.mode().is_tree()
                {
                    next = Some(entry.oid().to_owned());
                }
            }
            let Some(sub) = next else {
                return Ok(None);
            };
            rest = &rest[2..];
            tree = self.repo.find_tree(sub).map_err(super::git(what()))?;
        }
    }

    /// Sets (`Some`) or removes (`None`) the note on `commit` in `notes_ref` through `git notes`,
    /// the text stored as given (`--no-stripspace`), under this store's identity (the
    /// configured one, else the fallback records carry), since git's own would refuse where
    /// none is configured.
    pub(crate) fn git_set_note(
        &self,
        notes_ref: &str,
        commit: &super::CommitId,
        text: Option<&[u8]>,
    ) -> Result<(), Error> {
        let who = self.signature();
        let (name, email) = (who.name.to_string(), who.email.to_string());
        let mut cmd = self.git_refs_cli();
        cmd.args(WRITING)
            .args(["notes", "--ref", notes_ref])
            .env("GIT_AUTHOR_NAME", &name)
            .env("GIT_AUTHOR_EMAIL", &email)
            .env("GIT_COMMITTER_NAME", &name)
            .env("GIT_COMMITTER_EMAIL", &email)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        match text {
            Some(_) => cmd.args(["add", "-f", "--allow-empty", "--no-stripspace", "-F", "-"]),
            None => cmd.args(["remove", "--ignore-missing"]),
        };
        cmd.arg(commit.as_str());
        let what = format!("git notes of {commit}");
        let mut child = cmd.spawn().map_err(|source| Error::GitUnavailable {
            what: what.clone(),
            source,
        })?;
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(text.unwrap_or_default());
        }
        let out = child
            .wait_with_output()
            .map_err(|source| Error::GitUnavailable {
                what: what.clone(),
                source,
            })?;
        if !out.status.success() {
            return Err(Error::GitFailed {
                what,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            });
        }
        self.sync_reftable_dir();
        Ok(())
    }

    /// The commit HEAD of this worktree points at, `None` when it has none yet.
    pub(crate) fn git_head(&self) -> Result<Option<ObjectId>, Error> {
        self.git_rev_parse("HEAD")
    }

    /// The full name of the ref HEAD points at, `None` when HEAD is detached.
    pub(crate) fn git_head_name(&self) -> Result<Option<String>, Error> {
        let out = super::git_cli::output(
            self.git_refs_cli().args(["symbolic-ref", "-q", "HEAD"]),
            "reading HEAD",
        )?;
        let name = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !name.is_empty()).then_some(name))
    }

    /// What git resolves `spec` to (any revision git names), `None` when it names nothing.
    pub(crate) fn git_rev_parse(&self, spec: &str) -> Result<Option<ObjectId>, Error> {
        let out = super::git_cli::output(
            self.git_refs_cli()
                .args(["rev-parse", "--verify", "-q", "--end-of-options"])
                .arg(spec),
            &format!("resolving {spec}"),
        )?;
        if !out.status.success() {
            return Ok(None);
        }
        Ok(ObjectId::from_hex(String::from_utf8_lossy(&out.stdout).trim().as_bytes()).ok())
    }
}
