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

/// What git reports about one of the repository's other worktrees (a lane's, a hop
/// workspace's): its HEAD, status and diff, the parts a write there changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedFacts {
    /// The worktree's root, as `git worktree list` names it.
    pub root: PathBuf,
    /// The commit HEAD resolves to there, `None` on an unborn branch.
    pub head: Option<String>,
    /// The ref HEAD points at there, `None` when detached.
    pub symbolic_head: Option<String>,
    /// `git status --porcelain` entries there, untracked files each listed.
    pub status: Vec<StatusEntry>,
    /// `git diff HEAD --binary` there.
    pub diff: Vec<u8>,
}

/// `git diff` against HEAD, or against the index on an unborn branch.
fn diff_args(born: bool) -> &'static [&'static str] {
    if born {
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
    }
}

impl Store {
    /// Reads git's view of every worktree of the repository but this one (see
    /// [`LinkedFacts`]): the main worktree when this is a linked one, and every linked one.
    /// A worktree whose directory is gone is left out (the worktree list names it).
    pub fn linked_worktree_facts(&self) -> Result<Vec<LinkedFacts>, Error> {
        let root = self.workdir().ok_or_else(|| Error::Bare {
            what: "the worktree fingerprint".into(),
            needs: "worktree",
        })?;
        let here = root.canonicalize().unwrap_or_else(|_| root.to_owned());
        let listed = run(root, &["worktree", "list", "--porcelain", "-z"])?;
        let mut out = Vec::new();
        for field in listed.split(|b| *b == 0) {
            let Some(path) = field.strip_prefix(b"worktree ") else {
                continue;
            };
            let path = PathBuf::from(String::from_utf8_lossy(path).into_owned());
            let Ok(real) = path.canonicalize() else {
                continue;
            };
            // A bare main repository is listed too, with no worktree to read.
            if real == here || !real.join(".git").exists() {
                continue;
            }
            let head = git_try(&real, &["rev-parse", "--verify", "-q", "HEAD"])?.map(|b| text(&b));
            let symbolic_head = git_try(&real, &["symbolic-ref", "-q", "HEAD"])?.map(|b| text(&b));
            let status = parse_status(&run(
                &real,
                &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
            )?);
            let diff = run(&real, diff_args(head.is_some()))?;
            out.push(LinkedFacts {
                root: real,
                head,
                symbolic_head,
                status,
                diff,
            });
        }
        Ok(out)
    }

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
        let diff = run(root, diff_args(head.is_some()))?;
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
