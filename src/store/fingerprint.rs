//! git's view of a worktree, fingerprinted for the review guard ([`crate::review_guard`]).
//!
//! Through the `git` CLI, as the reference does, so what is compared is exactly what git reports
//! (every ignore source, `core.hooksPath`, included config files): `status --porcelain -z
//! --untracked-files=all`, `diff HEAD --binary`, `rev-parse HEAD`, `symbolic-ref HEAD`,
//! `for-each-ref`, `worktree list --porcelain`, `config --list --show-origin`, plus the bytes of
//! untracked files, of the hooks directory and of `info/exclude`. Every git call runs without
//! optional locks, so taking a fingerprint never rewrites the index.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::git_cli;
use super::lanes::{git_in, parse_status};
use super::{Error, Store};
use crate::record::sha256_hex;
use crate::review_guard::Fingerprint;

/// Runs `git` in `dir` and returns stdout, or `None` when git exits non-zero (an unborn HEAD,
/// a detached HEAD for `symbolic-ref`).
fn git_try(dir: &Path, args: &[&str]) -> Result<Option<Vec<u8>>, Error> {
    let what = format!("git {}", args.join(" "));
    let out = git_cli::output(git_cli::in_dir(dir).args(args), &what)?;
    Ok(out.status.success().then_some(out.stdout))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_owned()
}

fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, Error> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    git_in(dir, &args, "the worktree fingerprint")
}

/// The digest of a file's bytes (a symlink's target) and its executable bit; `None` if unreadable.
fn file_digest(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        return Some(format!(
            "link:{}",
            sha256_hex(target.as_os_str().as_encoded_bytes())
        ));
    }
    if meta.is_dir() {
        return Some("dir".to_owned());
    }
    let bytes = std::fs::read(path).ok()?;
    let exec = meta.permissions().mode() & 0o111 != 0;
    Some(format!(
        "{}:{}",
        if exec { "x" } else { "-" },
        sha256_hex(&bytes)
    ))
}

impl Store {
    /// Fingerprints git's view of this repository's worktree (see the module documentation).
    /// Refs under `refs/hpp/` are left out. A bare repository has no worktree to fingerprint.
    pub fn fingerprint(&self) -> Result<Fingerprint, Error> {
        let root = self.workdir().ok_or_else(|| Error::Corrupt {
            name: "the worktree fingerprint".into(),
            detail: "a bare repository has no worktree".into(),
        })?;
        let head = git_try(root, &["rev-parse", "--verify", "-q", "HEAD"])?.map(|b| text(&b));
        let symbolic_head = git_try(root, &["symbolic-ref", "-q", "HEAD"])?.map(|b| text(&b));
        let entries = parse_status(&run(
            root,
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
        )?);
        let status: Vec<String> = entries
            .iter()
            .map(|e| format!("{}{} {}", e.staged, e.worktree, e.path))
            .collect();
        let untracked: BTreeMap<String, String> = entries
            .iter()
            .filter(|e| e.is_untracked())
            .map(|e| {
                let digest =
                    file_digest(&root.join(&e.path)).unwrap_or_else(|| "unreadable".into());
                (e.path.clone(), digest)
            })
            .collect();
        let diff_args: &[&str] = if head.is_some() {
            &[
                "diff",
                "HEAD",
                "--binary",
                "--no-ext-diff",
                "--no-textconv",
                "--no-color",
            ]
        } else {
            &[
                "diff",
                "--cached",
                "--binary",
                "--no-ext-diff",
                "--no-textconv",
                "--no-color",
            ]
        };
        let diff = sha256_hex(&run(root, diff_args)?);
        let refs_out = run(root, &["for-each-ref", "--format=%(refname) %(objectname)"])?;
        let refs = String::from_utf8_lossy(&refs_out)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(name, _)| !name.starts_with(super::refs::PREFIX))
            .map(|(n, id)| (n.to_owned(), id.to_owned()))
            .collect();
        let worktrees = String::from_utf8_lossy(&run(root, &["worktree", "list", "--porcelain"])?)
            .lines()
            .map(str::to_owned)
            .collect();
        let mut config: BTreeMap<String, String> = BTreeMap::new();
        let config_out = run(root, &["config", "--list", "--show-origin", "-z"])?;
        let mut fields = config_out.split(|b| *b == 0);
        let mut values: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        while let (Some(origin), Some(entry)) = (fields.next(), fields.next()) {
            let (key, value) = match entry.iter().position(|b| *b == b'\n') {
                Some(at) => (&entry[..at], &entry[at + 1..]),
                None => (entry, &[][..]),
            };
            let name = format!("{} {}", text(origin), text(key));
            let slot = values.entry(name).or_default();
            slot.extend_from_slice(value);
            slot.push(0);
        }
        for (name, bytes) in values {
            config.insert(name, sha256_hex(&bytes));
        }
        let mut hooks = BTreeMap::new();
        if let Ok(dir) = std::fs::read_dir(self.hooks_dir()) {
            for entry in dir.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let digest = file_digest(&entry.path()).unwrap_or_else(|| "unreadable".into());
                hooks.insert(name, digest);
            }
        }
        let info_exclude = std::fs::read(self.common_dir().join("info").join("exclude"))
            .ok()
            .map(|b| sha256_hex(&b));
        Ok(Fingerprint {
            head,
            symbolic_head,
            status,
            diff,
            untracked,
            refs,
            worktrees,
            config,
            hooks,
            info_exclude,
        })
    }
}
