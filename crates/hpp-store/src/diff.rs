//! The changes between two trees as git shows them: a name-status list (renames paired up) and
//! a unified patch.
//!
//! Both come from the `git` CLI, in one place: the list and the patch must agree on what a
//! rename is, and the patch must read as git's own (its headers, mode lines, binary files and
//! quoting), which gix 0.91 does not render. Configuration that would change the output is
//! overridden on the command line (colour, external diff drivers, textconv, prefixes,
//! `diff.relative`), so the result depends on the two trees only.

use serde::Serialize;

use super::{Error, Store, TreeId, git_cli};

/// What happened to one path between two trees (git's `--name-status` letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ChangeStatus {
    /// Added (`A`).
    #[serde(rename = "A")]
    Added,
    /// Deleted (`D`).
    #[serde(rename = "D")]
    Deleted,
    /// Modified in content or mode (`M`).
    #[serde(rename = "M")]
    Modified,
    /// Renamed, perhaps with edits (`R`).
    #[serde(rename = "R")]
    Renamed,
    /// Copied (`C`).
    #[serde(rename = "C")]
    Copied,
    /// Changed type: a file became a symlink or a submodule, or back (`T`).
    #[serde(rename = "T")]
    TypeChanged,
}

impl ChangeStatus {
    /// Returns git's letter for the status.
    pub fn letter(self) -> char {
        match self {
            ChangeStatus::Added => 'A',
            ChangeStatus::Deleted => 'D',
            ChangeStatus::Modified => 'M',
            ChangeStatus::Renamed => 'R',
            ChangeStatus::Copied => 'C',
            ChangeStatus::TypeChanged => 'T',
        }
    }

    fn parse(letter: u8) -> Option<Self> {
        Some(match letter {
            b'A' => ChangeStatus::Added,
            b'D' => ChangeStatus::Deleted,
            b'M' => ChangeStatus::Modified,
            b'R' => ChangeStatus::Renamed,
            b'C' => ChangeStatus::Copied,
            b'T' => ChangeStatus::TypeChanged,
            _ => return None,
        })
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathChange {
    /// What happened to it.
    pub status: ChangeStatus,
    /// The path in the newer tree (for a deletion, the path that went away).
    pub path: String,
    /// The path in the older tree, for a rename or copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// The similarity of a rename or copy, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<u8>,
}

/// The changes from one tree to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeDiff {
    /// Every changed path, in git's order (sorted by path).
    pub changes: Vec<PathChange>,
    /// The unified patch (`diff --git a/... b/...`), as git prints it; lossy UTF-8.
    pub patch: String,
}

/// Parses `git diff --name-status -z` output.
fn parse_name_status(out: &[u8]) -> Result<Vec<PathChange>, String> {
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    while let Some(head) = fields.next() {
        let (&letter, score) = head
            .split_first()
            .ok_or_else(|| "an empty status".to_owned())?;
        let status =
            ChangeStatus::parse(letter).ok_or_else(|| format!("unknown status {}", text(head)))?;
        let similarity = std::str::from_utf8(score)
            .ok()
            .and_then(|s| s.parse::<u8>().ok());
        let first = fields
            .next()
            .ok_or_else(|| format!("status {} without a path", text(head)))?;
        let change = if matches!(status, ChangeStatus::Renamed | ChangeStatus::Copied) {
            let second = fields
                .next()
                .ok_or_else(|| format!("status {} without its new path", text(head)))?;
            PathChange {
                status,
                path: text(second),
                old_path: Some(text(first)),
                similarity,
            }
        } else {
            PathChange {
                status,
                path: text(first),
                old_path: None,
                similarity: None,
            }
        };
        changes.push(change);
    }
    Ok(changes)
}

impl Store {
    /// Returns the changes from tree `from` to tree `to`: git's name-status list, renames paired
    /// up, and its unified patch.
    pub fn diff_trees(&self, from: &TreeId, to: &TreeId) -> Result<TreeDiff, Error> {
        for tree in [from, to] {
            // The empty tree is known to git without being stored.
            if tree != &self.empty_tree() && !self.has_tree(tree) {
                return Err(Error::NotATree {
                    id: tree.to_string(),
                });
            }
        }
        let what = format!("git diff {from} {to}");
        let common = [
            "-c",
            "core.quotePath=false",
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-relative",
            "--find-renames",
            "--src-prefix=a/",
            "--dst-prefix=b/",
        ];
        let run = |extra: &[&str]| {
            git_cli::stdout(
                git_cli::in_repo(self.repo.git_dir(), None)
                    .args(common)
                    .args(extra)
                    .arg(from.as_str())
                    .arg(to.as_str())
                    .arg("--"),
                &what,
            )
        };
        let list = run(&["--name-status", "-z"])?;
        let changes = parse_name_status(&list).map_err(|stderr| Error::GitFailed {
            what: what.clone(),
            stderr,
        })?;
        let patch = String::from_utf8_lossy(&run(&["--patch"])?).into_owned();
        Ok(TreeDiff { changes, patch })
    }
}

#[cfg(test)]
mod tests {
    use super::{ChangeStatus, parse_name_status};

    #[test]
    fn name_status_pairs_renames_and_keeps_plain_changes() {
        let out = b"M\0a.txt\0R087\0old name\0new name\0A\0b\0D\0c\0";
        let changes = parse_name_status(out).expect("well formed");
        assert_eq!(changes.len(), 4);
        assert_eq!(changes[0].status, ChangeStatus::Modified);
        assert_eq!(changes[1].path, "new name");
        assert_eq!(changes[1].old_path.as_deref(), Some("old name"));
        assert_eq!(changes[1].similarity, Some(87));
        assert_eq!(changes[3].status.letter(), 'D');
    }

    #[test]
    fn control_a_truncated_rename_is_an_error() {
        assert!(parse_name_status(b"R100\0only-old\0").is_err());
        assert!(parse_name_status(b"Q\0x\0").is_err());
    }
}
