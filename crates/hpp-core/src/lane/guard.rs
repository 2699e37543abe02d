//! The territory guard: may the agent of a lane edit this file? Pure.
//!
//! A lane edits only inside its own territory, never inside the territory of another live
//! (alive, suspect or unknown) exclusive lane, and never in another worktree of the repository.
//! A session that is in no lane is not guarded; a file outside every worktree of the repository
//! is not the repository's business.

use std::path::{Component, Path, PathBuf};

use super::claim::{LaneRecord, inside};
use super::liveness::Liveness;

/// The guard's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The edit may go ahead.
    Allow,
    /// The edit is refused, with the reason the agent reads.
    Deny(String),
}

/// Removes `.` and resolves `..` lexically (no file system access).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Decides whether `file` (absolute, lexically clean) may be edited by the session whose lane
/// is `own` with its worktree at `own_root`. `others` are the repository's other lanes with
/// their liveness now; `worktrees` every worktree root of the repository.
pub fn decide(
    own: Option<&LaneRecord>,
    own_root: &Path,
    file: &Path,
    others: &[(LaneRecord, Liveness)],
    worktrees: &[PathBuf],
) -> Decision {
    let Some(own) = own.filter(|o| !o.is_closed()) else {
        return Decision::Allow;
    };
    let territory = own.territory.join(", ");
    let Ok(rel) = file.strip_prefix(own_root) else {
        if let Some(other) = worktrees
            .iter()
            .filter(|w| w.as_path() != own_root && file.starts_with(w))
            .max_by_key(|w| w.components().count())
        {
            return Decision::Deny(format!(
                "{} is in the worktree {}, not in lane {}'s worktree {}; edit inside the lane ({territory})",
                file.display(),
                other.display(),
                own.id,
                own_root.display()
            ));
        }
        return Decision::Allow;
    };
    let rel = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    if !inside(&own.territory, &rel) {
        return Decision::Deny(format!(
            "{rel} is outside lane {}'s territory ({territory})",
            own.id
        ));
    }
    for (other, liveness) in others {
        if other.id != own.id
            && other.exclusive
            && !other.is_closed()
            && liveness.holds_claim()
            && inside(&other.territory, &rel)
        {
            return Decision::Deny(format!(
                "{rel} is inside the territory of {} exclusive lane {} ({})",
                liveness.as_str(),
                other.id,
                other.territory.join(", ")
            ));
        }
    }
    Decision::Allow
}

/// The git calls that act on a whole worktree or its shared history rather than on named
/// files: what the lane git guard flags while another lane is alive (the reference's
/// lane-kit git guard). Returns the first such call in words, or `None`.
///
/// ```
/// use hpp_core::lane::guard::sweeping_git;
/// let call = |args: &[&str]| vec![args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>()];
/// assert!(sweeping_git(&call(&["add", "-A"])).is_some());
/// assert!(sweeping_git(&call(&["commit", "-am", "wip"])).is_some());
/// assert!(sweeping_git(&call(&["reset", "--hard", "HEAD~1"])).is_some());
/// assert_eq!(sweeping_git(&call(&["add", "src/a.rs"])), None);
/// assert_eq!(sweeping_git(&call(&["commit", "-m", "named files only"])), None);
/// ```
pub fn sweeping_git(calls: &[Vec<String>]) -> Option<String> {
    for args in calls {
        // Global options before the subcommand (`-C dir`, `-c k=v`, ...).
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            if matches!(
                arg.as_str(),
                "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            ) {
                i += 2;
            } else if arg.starts_with('-') {
                i += 1;
            } else {
                break;
            }
        }
        let Some(sub) = args.get(i) else {
            continue;
        };
        let rest = &args[i + 1..];
        let has = |opts: &[&str]| rest.iter().any(|a| opts.contains(&a.as_str()));
        // A cluster of short options (`-am`) counts for each letter in it.
        let short = |letter: char| {
            rest.iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(letter))
        };
        let everything = has(&[".", ":/", "*", "-A", "--all"]);
        let swept = match sub.as_str() {
            "add" => everything || has(&["-u", "--update"]),
            "commit" => has(&["--all"]) || short('a'),
            "reset" => has(&["--hard", "--merge", "--keep"]),
            "checkout" | "restore" => has(&[".", ":/", "-f", "--force"]),
            "clean" => short('f') || has(&["--force"]),
            "stash" => !matches!(
                rest.first().map(String::as_str),
                Some("list" | "show" | "apply" | "pop" | "branch" | "drop" | "clear")
            ),
            _ => false,
        };
        if swept {
            return Some(format!("git {}", args[i..].join(" ")));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::claim::{Event, SCHEMA};
    use super::*;

    fn lane(id: &str, territory: &[&str], exclusive: bool, root: &str) -> LaneRecord {
        LaneRecord {
            schema: SCHEMA.into(),
            event: Event::Claim,
            id: id.parse().unwrap(),
            territory: territory.iter().map(|t| (*t).to_owned()).collect(),
            exclusive,
            role: "maker".into(),
            model: "m".into(),
            worktree: root.into(),
            branch: None,
            started_at: 0,
            heartbeat_at: 0,
            closed_at: None,
            closing: None,
        }
    }

    fn roots() -> Vec<PathBuf> {
        vec![PathBuf::from("/r"), PathBuf::from("/r.lanes/a")]
    }

    #[test]
    fn an_edit_inside_the_lane_territory_is_allowed() {
        let own = lane("a", &["src"], false, "/r.lanes/a");
        let d = decide(
            Some(&own),
            Path::new("/r.lanes/a"),
            Path::new("/r.lanes/a/src/x.rs"),
            &[],
            &roots(),
        );
        assert_eq!(d, Decision::Allow);
        let none = decide(None, Path::new("/r"), Path::new("/r/x"), &[], &roots());
        assert_eq!(none, Decision::Allow, "no lane, no guard");
        let outside_repo = decide(
            Some(&own),
            Path::new("/r.lanes/a"),
            Path::new("/tmp/notes.md"),
            &[],
            &roots(),
        );
        assert_eq!(outside_repo, Decision::Allow);
    }

    #[test]
    fn control_edits_outside_the_territory_or_in_a_live_exclusive_lane_are_denied() {
        let own = lane("a", &["src"], false, "/r.lanes/a");
        let root = Path::new("/r.lanes/a");
        let out = decide(
            Some(&own),
            root,
            Path::new("/r.lanes/a/srcx/y.rs"),
            &[],
            &roots(),
        );
        assert!(matches!(out, Decision::Deny(ref m) if m.contains("outside lane a's territory")));
        let main = decide(Some(&own), root, Path::new("/r/src/y.rs"), &[], &roots());
        assert!(matches!(main, Decision::Deny(ref m) if m.contains("in the worktree /r,")));
        let b = lane("b", &["src/core"], true, "/r.lanes/b");
        let others = vec![(b.clone(), Liveness::Alive)];
        let taken = decide(
            Some(&own),
            root,
            Path::new("/r.lanes/a/src/core/m.rs"),
            &others,
            &roots(),
        );
        assert!(matches!(taken, Decision::Deny(ref m) if m.contains("alive exclusive lane b")));
        let dead = vec![(b, Liveness::Dead)];
        let free = decide(
            Some(&own),
            root,
            Path::new("/r.lanes/a/src/core/m.rs"),
            &dead,
            &roots(),
        );
        assert_eq!(free, Decision::Allow, "a dead lane holds nothing");
    }

    #[test]
    fn lexical_cleaning_resolves_dot_dot() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
