//! git's view of a worktree, as facts the review guard fingerprints (the lane-kit's read-only
//! checker): what `git` itself reports, so every ignore source, `core.hooksPath` and included
//! config files count exactly as git counts them.
//!
//! Through the `git` CLI, as the reference does: `status --porcelain -z --untracked-files=all`,
//! `diff HEAD --binary`, `rev-parse HEAD`, `symbolic-ref HEAD`, `for-each-ref`,
//! `worktree list --porcelain`, `config --list --show-origin`. Every git call runs without
//! optional locks, so reading the facts never rewrites the index.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::git_cli;
use super::status::{StatusEntry, git_in, parse_status};
use super::{Error, Store};

/// What git reports about one worktree at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeFacts {
    /// The worktree's root.
    pub root: PathBuf,
    /// The commit HEAD resolves to, `None` on an unborn branch.
    pub head: Option<String>,
    /// The ref HEAD points at, `None` when detached.
    pub symbolic_head: Option<String>,
    /// `git status --porcelain` entries, untracked files each listed.
    pub status: Vec<StatusEntry>,
    /// `git diff HEAD --binary` (against the index on an unborn branch).
    pub diff: Vec<u8>,
    /// Every ref and the object it names, as `for-each-ref` lists them.
    pub refs: Vec<(String, String)>,
    /// `git worktree list --porcelain`, one line each.
    pub worktrees: Vec<String>,
    /// `<origin> <key>` → its values in order, each followed by a NUL byte.
    pub config: BTreeMap<String, Vec<u8>>,
    /// The hooks directory git uses (`core.hooksPath` respected).
    pub hooks_dir: PathBuf,
    /// The repository's `info/exclude` file (which may not exist).
    pub info_exclude: PathBuf,
}

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

impl Store {
    /// Reads git's view of this repository's worktree (see the module documentation). A bare
    /// repository has no worktree to read.
    pub fn worktree_facts(&self) -> Result<WorktreeFacts, Error> {
        let root = self.workdir().ok_or_else(|| Error::Bare {
            what: "the worktree fingerprint".into(),
            needs: "worktree",
        })?;
        let head = git_try(root, &["rev-parse", "--verify", "-q", "HEAD"])?.map(|b| text(&b));
        let symbolic_head = git_try(root, &["symbolic-ref", "-q", "HEAD"])?.map(|b| text(&b));
        let status = parse_status(&run(
            root,
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
        )?);
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
        let diff = run(root, diff_args)?;
        let refs_out = run(root, &["for-each-ref", "--format=%(refname) %(objectname)"])?;
        let refs = String::from_utf8_lossy(&refs_out)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(n, id)| (n.to_owned(), id.to_owned()))
            .collect();
        let worktrees = String::from_utf8_lossy(&run(root, &["worktree", "list", "--porcelain"])?)
            .lines()
            .map(str::to_owned)
            .collect();
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
        Ok(WorktreeFacts {
            root: root.to_owned(),
            head,
            symbolic_head,
            status,
            diff,
            refs,
            worktrees,
            config: values,
            hooks_dir: self.hooks_dir(),
            info_exclude: self.common_dir().join("info").join("exclude"),
        })
    }
}
