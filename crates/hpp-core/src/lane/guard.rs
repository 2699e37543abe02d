//! The territory guard: may the agent of a lane edit this file? Pure.
//!
//! A lane edits only inside its own territory, never inside the territory of another live
//! (alive, suspect or unknown) exclusive lane, and never in another worktree of the repository.
//! A session that is in no lane is asked about an edit inside a live exclusive lane's territory
//! ([`OutsideEdits`], git config `hpp.lane.outsideEdits`) and otherwise not guarded; a file
//! outside every worktree of the repository is not the repository's business.

use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use super::claim::{LaneRecord, inside};
use super::liveness::Liveness;

/// The guard's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The edit may go ahead.
    Allow,
    /// A person decides, with the reason they read (a host that cannot ask refuses).
    Ask(String),
    /// The edit is refused, with the reason the agent reads.
    Deny(String),
}

/// What a session in no lane gets for an edit inside a live exclusive lane's territory: the
/// value of git config `hpp.lane.outsideEdits`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutsideEdits {
    /// A person is asked (the default).
    #[default]
    Ask,
    /// The edit is refused.
    Deny,
    /// The edit goes ahead silently, as before lanes were guarded from outside.
    Allow,
}

/// A value of `hpp.lane.outsideEdits` that is none of `ask`, `deny`, `allow`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("hpp.lane.outsideEdits is `{0}`: expected ask, deny or allow")]
pub struct InvalidOutsideEdits(pub String);

impl FromStr for OutsideEdits {
    type Err = InvalidOutsideEdits;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "ask" => Ok(Self::Ask),
            "deny" => Ok(Self::Deny),
            "allow" => Ok(Self::Allow),
            _ => Err(InvalidOutsideEdits(text.to_owned())),
        }
    }
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
/// their liveness now; `worktrees` every worktree root of the repository. A session in no lane
/// (`own` is `None` or closed; `own_root` is then not read) gets `outside` for an edit inside a
/// live exclusive lane's territory, and [`Decision::Allow`] for any other.
pub fn decide(
    own: Option<&LaneRecord>,
    own_root: &Path,
    file: &Path,
    others: &[(LaneRecord, Liveness)],
    worktrees: &[PathBuf],
    outside: OutsideEdits,
) -> Decision {
    let Some(own) = own.filter(|o| !o.is_closed()) else {
        return outside_any_lane(file, others, worktrees, outside);
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
    let rel = slashed(rel);
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

/// The guard for a session in no lane: an edit inside a live exclusive lane's territory, judged
/// against the innermost worktree that holds the file (the main one, or the lane's own), gets
/// `outside`; every other edit is allowed.
fn outside_any_lane(
    file: &Path,
    others: &[(LaneRecord, Liveness)],
    worktrees: &[PathBuf],
    outside: OutsideEdits,
) -> Decision {
    if outside == OutsideEdits::Allow {
        return Decision::Allow;
    }
    let Some(rel) = worktrees
        .iter()
        .filter(|w| file.starts_with(w))
        .max_by_key(|w| w.components().count())
        .and_then(|root| file.strip_prefix(root).ok())
        .map(slashed)
    else {
        return Decision::Allow;
    };
    let Some((lane, liveness)) = others.iter().find(|(lane, liveness)| {
        lane.exclusive
            && !lane.is_closed()
            && liveness.holds_claim()
            && inside(&lane.territory, &rel)
    }) else {
        return Decision::Allow;
    };
    let reason = format!(
        "{rel} is inside the territory of {} exclusive lane {} ({}) and this session is in no lane; edit it from the lane's worktree {}, or settle it with the lane first",
        liveness.as_str(),
        lane.id,
        lane.territory.join(", "),
        lane.worktree
    );
    match outside {
        OutsideEdits::Deny => Decision::Deny(reason),
        OutsideEdits::Ask | OutsideEdits::Allow => Decision::Ask(reason),
    }
}

/// Returns a relative path with `/` between its components, as territories are written.
fn slashed(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
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
            OutsideEdits::Ask,
        );
        assert_eq!(d, Decision::Allow);
        let none = decide(
            None,
            Path::new("/r"),
            Path::new("/r/x"),
            &[],
            &roots(),
            OutsideEdits::Ask,
        );
        assert_eq!(none, Decision::Allow, "no lane, no guard");
        let outside_repo = decide(
            Some(&own),
            Path::new("/r.lanes/a"),
            Path::new("/tmp/notes.md"),
            &[],
            &roots(),
            OutsideEdits::Ask,
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
            OutsideEdits::Ask,
        );
        assert!(matches!(out, Decision::Deny(ref m) if m.contains("outside lane a's territory")));
        let main = decide(
            Some(&own),
            root,
            Path::new("/r/src/y.rs"),
            &[],
            &roots(),
            OutsideEdits::Ask,
        );
        assert!(matches!(main, Decision::Deny(ref m) if m.contains("in the worktree /r,")));
        let b = lane("b", &["src/core"], true, "/r.lanes/b");
        let others = vec![(b.clone(), Liveness::Alive)];
        let taken = decide(
            Some(&own),
            root,
            Path::new("/r.lanes/a/src/core/m.rs"),
            &others,
            &roots(),
            OutsideEdits::Ask,
        );
        assert!(matches!(taken, Decision::Deny(ref m) if m.contains("alive exclusive lane b")));
        let dead = vec![(b, Liveness::Dead)];
        let free = decide(
            Some(&own),
            root,
            Path::new("/r.lanes/a/src/core/m.rs"),
            &dead,
            &roots(),
            OutsideEdits::Ask,
        );
        assert_eq!(free, Decision::Allow, "a dead lane holds nothing");
    }

    #[test]
    fn outside_any_lane_an_edit_in_a_live_exclusive_territory_is_asked_about_or_refused() {
        let b = lane("b", &["src/core"], true, "/r.lanes/b");
        let others = vec![(b.clone(), Liveness::Suspect)];
        let worktrees = vec![PathBuf::from("/r"), PathBuf::from("/r.lanes/b")];
        let main = Path::new("/r");
        let asked = decide(
            None,
            main,
            Path::new("/r/src/core/m.rs"),
            &others,
            &worktrees,
            OutsideEdits::Ask,
        );
        assert_eq!(
            asked,
            Decision::Ask(
                "src/core/m.rs is inside the territory of suspect exclusive lane b (src/core) and this session is in no lane; edit it from the lane's worktree /r.lanes/b, or settle it with the lane first".into()
            )
        );
        // In the lane's own worktree the path is judged against that worktree's root.
        let in_its_worktree = decide(
            None,
            main,
            Path::new("/r.lanes/b/src/core/m.rs"),
            &others,
            &worktrees,
            OutsideEdits::Deny,
        );
        assert!(
            matches!(in_its_worktree, Decision::Deny(ref m) if m.starts_with("src/core/m.rs is inside"))
        );
        let allowed = decide(
            None,
            main,
            Path::new("/r/src/core/m.rs"),
            &others,
            &worktrees,
            OutsideEdits::Allow,
        );
        assert_eq!(allowed, Decision::Allow);
        assert_eq!("DENY".parse::<OutsideEdits>(), Ok(OutsideEdits::Deny));
        assert_eq!(
            "block".parse::<OutsideEdits>().map_err(|e| e.to_string()),
            Err("hpp.lane.outsideEdits is `block`: expected ask, deny or allow".into())
        );
    }

    #[test]
    fn control_outside_any_lane_other_paths_and_shared_or_dead_lanes_are_allowed_silently() {
        let worktrees = vec![PathBuf::from("/r"), PathBuf::from("/r.lanes/b")];
        let main = Path::new("/r");
        let b = lane("b", &["src/core"], true, "/r.lanes/b");
        let alive = vec![(b.clone(), Liveness::Alive)];
        for file in ["/r/src/corex.rs", "/r/docs/a.md", "/tmp/src/core/m.rs"] {
            let d = decide(
                None,
                main,
                Path::new(file),
                &alive,
                &worktrees,
                OutsideEdits::Deny,
            );
            assert_eq!(d, Decision::Allow, "{file}");
        }
        let shared = vec![(
            lane("s", &["src/core"], false, "/r.lanes/s"),
            Liveness::Alive,
        )];
        let dead = vec![(b, Liveness::Dead)];
        for others in [shared, dead] {
            let d = decide(
                None,
                main,
                Path::new("/r/src/core/m.rs"),
                &others,
                &worktrees,
                OutsideEdits::Deny,
            );
            assert_eq!(d, Decision::Allow);
        }
    }

    #[test]
    fn lexical_cleaning_resolves_dot_dot() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
