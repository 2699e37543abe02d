//! The review guard (CONCEPTS.md "maker and checker"; the lane-kit's read-only checker): git's
//! view of a worktree before and after a checker ran, and the verdict it leaves. Pure.
//!
//! A checker has no file-editing tools, but a shell reaches whatever it reaches, so read-only is
//! a promise verified by comparison: the status (untracked files included), the diff against
//! HEAD, the contents of untracked files, HEAD and where it points, every ref outside
//! `refs/hpp/`, the worktree list, the configuration, the hooks directory and `info/exclude` are
//! fingerprinted on both sides; any difference voids the review, naming each part that changed.
//! Records under `refs/hpp/` are left out: a checker may record evidence and attestations.

use std::collections::BTreeMap;

use serde::Serialize;

/// The schema of the guard's report.
pub const SCHEMA: &str = "hpp.review-guard/v1";

/// git's view of one worktree at one moment. Contents are kept as sha256 digests; configuration
/// values are never kept, only a digest per key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Fingerprint {
    /// The commit HEAD resolves to, `None` on an unborn branch.
    pub head: Option<String>,
    /// The ref HEAD points at, `None` when detached.
    pub symbolic_head: Option<String>,
    /// `git status --porcelain` entries (`XY path`), untracked files each listed.
    pub status: Vec<String>,
    /// sha256 of `git diff HEAD --binary`.
    pub diff: String,
    /// Untracked (not ignored) file → sha256 of its bytes.
    pub untracked: BTreeMap<String, String>,
    /// Every ref outside `refs/hpp/` → the object it names.
    pub refs: BTreeMap<String, String>,
    /// `git worktree list --porcelain`, one line each.
    pub worktrees: Vec<String>,
    /// `<origin> <key>` → sha256 of its values, in order.
    pub config: BTreeMap<String, String>,
    /// Hooks directory entry → sha256 of its bytes and mode.
    pub hooks: BTreeMap<String, String>,
    /// sha256 of `info/exclude`, `None` when absent.
    pub info_exclude: Option<String>,
    /// The repository's other worktrees (a lane's, a hop workspace's) → sha256 of their HEAD,
    /// status, diff and untracked contents; empty where only this worktree is read (the review
    /// guard: other lanes work on while a checker reviews one).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub other_worktrees: BTreeMap<String, String>,
}

/// One part of the fingerprint that changed, with what changed in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// The part (`status`, `diff`, `untracked contents`, `HEAD`, `symbolic HEAD`, `refs`,
    /// `worktrees`, `config`, `hooks`, `info/exclude`, `other worktrees`).
    pub part: &'static str,
    /// What changed in it (paths, ref names, config keys; never configuration values).
    pub details: Vec<String>,
}

fn map_changes(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in before {
        match after.get(key) {
            None => out.push(format!("{key} removed")),
            Some(now) if now != value => out.push(format!("{key} changed")),
            Some(_) => {}
        }
    }
    for key in after.keys() {
        if !before.contains_key(key) {
            out.push(format!("{key} created"));
        }
    }
    out
}

fn list_changes(before: &[String], after: &[String]) -> Vec<String> {
    let mut out: Vec<String> = before
        .iter()
        .filter(|e| !after.contains(e))
        .map(|e| format!("no longer: {e}"))
        .collect();
    out.extend(
        after
            .iter()
            .filter(|e| !before.contains(e))
            .map(|e| format!("now: {e}")),
    );
    out
}

fn show(value: Option<&String>) -> String {
    value.map_or_else(|| "(none)".to_owned(), Clone::clone)
}

/// Compares two fingerprints and names every part that changed, in a fixed order.
pub fn compare(before: &Fingerprint, after: &Fingerprint) -> Vec<Change> {
    let mut changes = Vec::new();
    let mut push = |part: &'static str, details: Vec<String>, changed: bool| {
        if changed {
            changes.push(Change { part, details });
        }
    };
    push(
        "HEAD",
        vec![format!(
            "{} -> {}",
            show(before.head.as_ref()),
            show(after.head.as_ref())
        )],
        before.head != after.head,
    );
    push(
        "symbolic HEAD",
        vec![format!(
            "{} -> {}",
            show(before.symbolic_head.as_ref()),
            show(after.symbolic_head.as_ref())
        )],
        before.symbolic_head != after.symbolic_head,
    );
    push(
        "status",
        list_changes(&before.status, &after.status),
        before.status != after.status,
    );
    push("diff", Vec::new(), before.diff != after.diff);
    push(
        "untracked contents",
        map_changes(&before.untracked, &after.untracked),
        before.untracked != after.untracked,
    );
    push(
        "refs",
        map_changes(&before.refs, &after.refs),
        before.refs != after.refs,
    );
    push(
        "worktrees",
        list_changes(&before.worktrees, &after.worktrees),
        before.worktrees != after.worktrees,
    );
    push(
        "config",
        map_changes(&before.config, &after.config),
        before.config != after.config,
    );
    push(
        "hooks",
        map_changes(&before.hooks, &after.hooks),
        before.hooks != after.hooks,
    );
    push(
        "info/exclude",
        Vec::new(),
        before.info_exclude != after.info_exclude,
    );
    push(
        "other worktrees",
        map_changes(&before.other_worktrees, &after.other_worktrees),
        before.other_worktrees != after.other_worktrees,
    );
    changes
}

/// What the review is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Nothing changed and the checker exited 0.
    Passed,
    /// Nothing changed and the checker exited non-zero or was killed.
    Failed,
    /// Nothing changed but the checker ran out of time.
    TimedOut,
    /// The checker changed git's view of the worktree: its findings do not count.
    Void,
}

/// Judges a review from what changed and how the checker ended.
pub fn verdict(changes: &[Change], exit_code: Option<i32>, timed_out: bool) -> Verdict {
    if !changes.is_empty() {
        Verdict::Void
    } else if timed_out {
        Verdict::TimedOut
    } else if exit_code == Some(0) {
        Verdict::Passed
    } else {
        Verdict::Failed
    }
}

/// Renders the changes as indented lines (`  - part: detail, detail`).
pub fn describe(changes: &[Change]) -> String {
    changes
        .iter()
        .map(|c| {
            if c.details.is_empty() {
                format!("  - {}", c.part)
            } else {
                format!("  - {}: {}", c.part, c.details.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Fingerprint {
        Fingerprint {
            head: Some("a".into()),
            symbolic_head: Some("refs/heads/main".into()),
            refs: BTreeMap::from([("refs/heads/main".into(), "a".into())]),
            ..Fingerprint::default()
        }
    }

    #[test]
    fn identical_fingerprints_leave_the_checker_verdict() {
        let changes = compare(&base(), &base());
        assert!(changes.is_empty());
        assert_eq!(verdict(&changes, Some(0), false), Verdict::Passed);
        assert_eq!(verdict(&changes, Some(1), false), Verdict::Failed);
        assert_eq!(verdict(&changes, None, true), Verdict::TimedOut);
    }

    #[test]
    fn control_every_changed_part_is_named_and_voids_the_review() {
        let mut after = base();
        after.refs.insert("refs/heads/sneaky".into(), "a".into());
        after.status.push("?? new.txt".into());
        after.untracked.insert("new.txt".into(), "x".into());
        after
            .config
            .insert("file:.git/config user.name".into(), "y".into());
        after.diff = "changed".into();
        let changes = compare(&base(), &after);
        let parts: Vec<&str> = changes.iter().map(|c| c.part).collect();
        assert_eq!(
            parts,
            ["status", "diff", "untracked contents", "refs", "config"]
        );
        assert_eq!(changes[3].details, ["refs/heads/sneaky created"]);
        assert_eq!(
            changes[4].details,
            ["file:.git/config user.name created"],
            "keys are named, values never"
        );
        assert_eq!(verdict(&changes, Some(0), false), Verdict::Void);
        assert!(describe(&changes).contains("  - refs: refs/heads/sneaky created"));
    }

    #[test]
    fn a_moved_head_is_shown_old_to_new() {
        let mut after = base();
        after.head = Some("b".into());
        let changes = compare(&base(), &after);
        assert_eq!(changes[0].part, "HEAD");
        assert_eq!(changes[0].details, ["a -> b"]);
    }
}
