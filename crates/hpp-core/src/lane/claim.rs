//! The lane claim (CONCEPTS.md "lane"): an id, a territory of paths, an exclusivity flag, a
//! role and a model, and the records of a lane's log. Pure: values in, values out.
//!
//! Every record of a lane's log (`lane.json`, schema `hpp.lane/v1`) carries the whole claim and
//! the lane's last heartbeat, so the tip of `refs/hpp/lanes/<id>` alone says where the lane
//! stands: reading a lane does not walk its history.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The schema of every record in a lane's log.
pub const SCHEMA: &str = "hpp.lane/v1";

/// Why a lane value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The lane id is not a single git ref component.
    #[error(
        "invalid lane id {0:?}: a lane id must be one branch-name component (letters, digits, `-`, `_`, `.`; no `/`)"
    )]
    Id(String),
    /// No territory path was given.
    #[error("a lane needs at least one territory path (--territory PATH)")]
    NoTerritory,
    /// A territory path is empty once normalised, or leaves the worktree.
    #[error(
        "invalid territory path {0:?}: a territory path is relative to the worktree root, non-empty, without `..`"
    )]
    Path(String),
    /// A territory path is absolute: it would silently become a relative one.
    #[error(
        "invalid territory path {0:?}: a territory is relative to the worktree root, not an absolute path"
    )]
    Absolute(String),
    /// A territory path is a glob: the guard and the collision checks match paths, not
    /// patterns, so a glob would be accepted at start and then deny the files it names.
    #[error(
        "invalid territory path {0:?}: a territory is a path, not a glob ({1}); a directory already covers everything under it"
    )]
    Glob(String, String),
    /// A territory path names git's own directory.
    #[error("invalid territory path {0:?}: a territory cannot be inside .git")]
    GitDir(String),
    /// A name looks like a secret.
    #[error(transparent)]
    Secret(#[from] crate::secrets::SecretName),
    /// The role is not a simple word.
    #[error(
        "invalid role {0:?}: a role is one word of lowercase letters, digits and `-` (maker, checker, ...)"
    )]
    Role(String),
    /// The model is empty or holds control characters.
    #[error("invalid model {0:?}: name the model the lane runs (for example claude-sonnet-4)")]
    Model(String),
    /// A record in a lane log does not parse.
    #[error("{lane}: lane record does not parse: {detail}")]
    Record {
        /// The lane (ref) whose record is bad.
        lane: String,
        /// What is wrong.
        detail: String,
    },
    /// A lane log's records do not follow one another as the lane commands write them.
    #[error("lane {lane}: the log is inconsistent: {detail}")]
    Log {
        /// The lane.
        lane: String,
        /// What is wrong.
        detail: String,
    },
}

/// A lane id: one component of a git ref name, so `refs/hpp/lanes/<id>`, the branch
/// `hpp/lane/<id>` and the directory `<repo>.lanes/<id>` are all valid and flat.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LaneId(String);

impl FromStr for LaneId {
    type Err = Error;

    fn from_str(id: &str) -> Result<Self, Self::Err> {
        let ok = !id.is_empty()
            && id.len() <= 100
            && !id.starts_with(['.', '-'])
            && !id.ends_with(".lock")
            && !id.ends_with('.')
            && !id.contains("..")
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if ok {
            Ok(Self(id.to_owned()))
        } else {
            Err(Error::Id(id.to_owned()))
        }
    }
}

impl fmt::Display for LaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl LaneId {
    /// Returns the id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Returns the short name of the lane's branch, `hpp/lane/<id>`.
    pub fn branch(&self) -> String {
        format!("hpp/lane/{}", self.0)
    }
}

/// The territory path that stands for the whole worktree.
pub const WHOLE_TREE: &str = ".";

/// Normalises one territory path as the reference does (`\` becomes `/`, leading and trailing
/// `/` are stripped), and also drops `./` components; `.` alone is the whole worktree.
/// Refuses a path that is empty or holds a `..` component.
pub fn normalise_path(path: &str) -> Result<String, Error> {
    let replaced = path.replace('\\', "/");
    let parts: Vec<&str> = replaced
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return Err(Error::Path(path.to_owned()));
    }
    if parts.is_empty() {
        // "." (or "./") names the whole worktree; an empty string or "/" names nothing.
        return if replaced.split('/').any(|p| p == ".") {
            Ok(WHOLE_TREE.to_owned())
        } else {
            Err(Error::Path(path.to_owned()))
        };
    }
    Ok(parts.join("/"))
}

/// The characters that make a path a glob (globset's syntax): refused in a territory.
const GLOB_CHARS: [char; 4] = ['*', '?', '[', '{'];

/// Normalises a territory: every path normalised, sorted, duplicates dropped; at least one.
/// Stricter than one path: an absolute path (`/etc`, `C:\x`) is refused rather than read as
/// relative, and so is any path through `.git`.
pub fn normalise_territory(paths: &[String]) -> Result<Vec<String>, Error> {
    if paths.is_empty() {
        return Err(Error::NoTerritory);
    }
    for path in paths {
        let path = path.trim();
        let drive = path.len() >= 2 && path.as_bytes()[1] == b':';
        if path.starts_with(['/', '\\']) || drive {
            return Err(Error::Absolute(path.to_owned()));
        }
        if path
            .split(['/', '\\'])
            .any(|part| part.eq_ignore_ascii_case(".git"))
        {
            return Err(Error::GitDir(path.to_owned()));
        }
        if path.contains(GLOB_CHARS) {
            let stem: Vec<&str> = path
                .split(['/', '\\'])
                .take_while(|part| !part.contains(GLOB_CHARS))
                .filter(|part| !part.is_empty())
                .collect();
            let hint = if stem.is_empty() {
                "name the directory or files it should cover".to_owned()
            } else {
                format!("use {:?}", stem.join("/"))
            };
            return Err(Error::Glob(path.to_owned(), hint));
        }
    }
    let mut out = paths
        .iter()
        .map(|p| normalise_path(p))
        .collect::<Result<Vec<_>, _>>()?;
    out.sort();
    out.dedup();
    Ok(out)
}

/// Tells whether two normalised paths overlap: equal, or one nests in the other at a `/`
/// boundary (`src` and `src/a` overlap, `src` and `srcx` do not). `.` overlaps everything.
pub fn paths_overlap(a: &str, b: &str) -> bool {
    fn nests(outer: &str, inner: &str) -> bool {
        outer == WHOLE_TREE
            || inner == outer
            || inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with('/'))
    }
    nests(a, b) || nests(b, a)
}

/// Returns the paths of both territories that take part in an overlap, sorted and unique.
pub fn overlapping_paths(a: &[String], b: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for p in a {
        for q in b {
            if paths_overlap(p, q) {
                out.push(p.clone());
                out.push(q.clone());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Tells whether `path` (normalised, relative to the worktree root) lies inside `territory`.
pub fn inside(territory: &[String], path: &str) -> bool {
    territory.iter().any(|t| {
        t == WHOLE_TREE
            || path == t
            || path
                .strip_prefix(t.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Checks a role: one word of lowercase ASCII letters, digits and `-`.
pub fn check_role(role: &str) -> Result<(), Error> {
    let ok = !role.is_empty()
        && role.len() <= 40
        && role
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::Role(role.to_owned()))
    }
}

/// Checks a model name: non-empty, at most 200 characters, no control characters.
pub fn check_model(model: &str) -> Result<(), Error> {
    let ok = !model.trim().is_empty() && model.len() <= 200 && !model.chars().any(char::is_control);
    if ok {
        crate::secrets::check_name("--model", model)?;
        Ok(())
    } else {
        Err(Error::Model(model.to_owned()))
    }
}

/// What one record of a lane's log records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    /// The lane was started: the claim.
    Claim,
    /// The lane is still working.
    Heartbeat,
    /// The lane was closed; its claim no longer holds.
    Close,
}

/// How a lane was closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Closing {
    /// Why: `closed` (by `lane close`) or `aborted` (a start that lost a race or failed).
    pub reason: String,
    /// Whether the worktree was removed.
    pub worktree_removed: bool,
    /// Whether the lane's branch was deleted (its commits were all on other refs).
    pub branch_deleted: bool,
}

/// One record of a lane's log (`lane.json`): the whole claim plus what this record adds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaneRecord {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// What this record records.
    pub event: Event,
    /// The lane.
    pub id: LaneId,
    /// The normalised territory paths, sorted.
    pub territory: Vec<String>,
    /// Whether the territory is claimed exclusively.
    pub exclusive: bool,
    /// The lane's role (maker, checker, ...).
    pub role: String,
    /// The model the lane runs.
    pub model: String,
    /// The absolute path of the lane's worktree.
    pub worktree: String,
    /// The lane's branch (short name), or `None` when its worktree is detached.
    pub branch: Option<String>,
    /// When the lane was started, Unix seconds.
    pub started_at: i64,
    /// The last sign of life, Unix seconds (the start counts as the first).
    pub heartbeat_at: i64,
    /// When the lane was closed, Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<i64>,
    /// How it was closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closing: Option<Closing>,
}

impl LaneRecord {
    /// Returns this record as JSON (for canonical serialisation).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a lane record serialises")
    }

    /// Parses a record read from `lane`'s log, checking its schema.
    pub fn parse(lane: &str, bytes: &[u8]) -> Result<Self, Error> {
        let record: Self = serde_json::from_slice(bytes).map_err(|e| Error::Record {
            lane: lane.to_owned(),
            detail: e.to_string(),
        })?;
        if record.schema != SCHEMA {
            return Err(Error::Record {
                lane: lane.to_owned(),
                detail: format!("schema is {:?}, expected {SCHEMA:?}", record.schema),
            });
        }
        Ok(record)
    }

    /// Tells whether the lane is closed.
    pub fn is_closed(&self) -> bool {
        self.event == Event::Close
    }

    /// The declared status of the lane: `open` or `closed` (`aborted` for a start that never
    /// took hold).
    pub fn status(&self) -> &str {
        match (&self.event, &self.closing) {
            (Event::Close, Some(c)) if c.reason == "aborted" => "aborted",
            (Event::Close, _) => "closed",
            _ => "open",
        }
    }

    /// The next record: a heartbeat at `now`.
    pub fn heartbeat(&self, now: i64) -> Self {
        Self {
            event: Event::Heartbeat,
            heartbeat_at: now.max(self.heartbeat_at),
            ..self.clone()
        }
    }

    /// The next record: the close at `now`.
    pub fn close(&self, now: i64, closing: Closing) -> Self {
        Self {
            event: Event::Close,
            closed_at: Some(now),
            closing: Some(closing),
            ..self.clone()
        }
    }
}

/// Checks that a lane's log, oldest record first, is what the lane commands write: a claim
/// first, then heartbeats and at most one close; after a close only a new claim (the lane
/// started again). Every record names `lane` and repeats the claim it follows (territory,
/// exclusivity, role, model, worktree, branch, start time); heartbeats never go back in time
/// within a claim; only a close carries `closed_at` and `closing`.
pub fn check_log(lane: &LaneId, records: &[LaneRecord]) -> Result<(), Error> {
    let bad = |n: usize, detail: &str| Error::Log {
        lane: lane.to_string(),
        detail: format!("record {n}: {detail}"),
    };
    let Some(mut claim) = records.first() else {
        return Err(Error::Log {
            lane: lane.to_string(),
            detail: "the log holds no record".into(),
        });
    };
    let mut heartbeat = claim.started_at;
    for (i, record) in records.iter().enumerate() {
        let n = i + 1;
        if record.id != *lane {
            return Err(bad(n, &format!("it names lane {}", record.id)));
        }
        let closed = i > 0 && records[i - 1].event == Event::Close;
        match record.event {
            Event::Claim if i == 0 || closed => {
                claim = record;
                heartbeat = record.started_at;
            }
            Event::Claim => return Err(bad(n, "a second claim while the lane is open")),
            _ if i == 0 => return Err(bad(n, "the first record is not the claim")),
            _ if closed => return Err(bad(n, "only a new claim may follow a close")),
            Event::Heartbeat | Event::Close => {}
        }
        let same_claim = record.territory == claim.territory
            && record.exclusive == claim.exclusive
            && record.role == claim.role
            && record.model == claim.model
            && record.worktree == claim.worktree
            && record.branch == claim.branch
            && record.started_at == claim.started_at;
        if !same_claim {
            return Err(bad(n, "it does not repeat the claim"));
        }
        if record.heartbeat_at < heartbeat {
            return Err(bad(n, "its heartbeat goes back in time"));
        }
        heartbeat = record.heartbeat_at;
        let closing = record.closed_at.is_some() || record.closing.is_some();
        if closing != (record.event == Event::Close) {
            return Err(bad(n, "closed_at and closing belong to the close alone"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(paths: &[&str]) -> Vec<String> {
        normalise_territory(&paths.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    fn claimed(id: &str) -> LaneRecord {
        LaneRecord {
            schema: SCHEMA.to_owned(),
            event: Event::Claim,
            id: id.parse().unwrap(),
            territory: vec!["src".into()],
            exclusive: true,
            role: "maker".into(),
            model: "claude-sonnet-4".into(),
            worktree: "/w/a".into(),
            branch: Some("hpp/lane/a".into()),
            started_at: 100,
            heartbeat_at: 100,
            closed_at: None,
            closing: None,
        }
    }

    fn closing() -> Closing {
        Closing {
            reason: "closed".into(),
            worktree_removed: true,
            branch_deleted: false,
        }
    }

    #[test]
    fn a_log_written_by_start_heartbeat_and_close_is_consistent() {
        let claim = claimed("a");
        let beat = claim.heartbeat(150);
        let log = [claim.clone(), beat.clone(), beat.close(160, closing())];
        assert_eq!(check_log(&claim.id, &log), Ok(()));
        assert_eq!(check_log(&claim.id, &log[..1]), Ok(()));
        // Started again after the close: a new claim, with its own territory and times.
        let mut again = claimed("a");
        again.territory = vec![".".into()];
        again.started_at = 200;
        again.heartbeat_at = 200;
        let restarted = [log.to_vec(), vec![again.clone(), again.heartbeat(210)]].concat();
        assert_eq!(check_log(&claim.id, &restarted), Ok(()));
    }

    #[test]
    fn control_a_log_out_of_order_or_changing_its_claim_is_inconsistent() {
        let claim = claimed("a");
        let id = claim.id.clone();
        let beat = claim.heartbeat(150);
        let close = beat.close(160, closing());
        let broken = |log: &[LaneRecord]| check_log(&id, log).unwrap_err().to_string();
        assert!(broken(&[]).contains("holds no record"));
        assert!(
            broken(std::slice::from_ref(&beat))
                .contains("record 1: the first record is not the claim")
        );
        assert!(
            broken(&[claim.clone(), close.clone(), beat.clone()])
                .contains("record 3: only a new claim may follow a close")
        );
        assert!(
            broken(&[claim.clone(), claim.clone()])
                .contains("record 2: a second claim while the lane is open")
        );
        let mut moved = beat.clone();
        moved.territory = vec![".".into()];
        assert!(broken(&[claim.clone(), moved]).contains("record 2: it does not repeat the claim"));
        assert!(
            broken(&[claim.clone(), beat.clone(), claim.heartbeat(120)])
                .contains("goes back in time")
        );
        assert!(broken(&[claimed("b")]).contains("record 1: it names lane b"));
        let mut half_closed = beat.clone();
        half_closed.closed_at = Some(170);
        assert!(broken(&[claim, half_closed]).contains("belong to the close alone"));
    }

    #[test]
    fn paths_normalise_like_the_reference() {
        assert_eq!(normalise_path("/src/a/").unwrap(), "src/a");
        assert_eq!(normalise_path("src\\a").unwrap(), "src/a");
        assert_eq!(normalise_path("./src//a").unwrap(), "src/a");
        assert_eq!(normalise_path(".").unwrap(), ".");
        assert_eq!(t(&["b", "a/", "./a"]), ["a", "b"]);
    }

    #[test]
    fn control_empty_escaping_or_missing_paths_are_refused() {
        for bad in ["", "/", "//", "a/../b", ".."] {
            assert!(normalise_path(bad).is_err(), "{bad:?}");
        }
        assert_eq!(normalise_territory(&[]), Err(Error::NoTerritory));
        let one = |p: &str| normalise_territory(&[p.to_owned()]);
        assert_eq!(one("/etc"), Err(Error::Absolute("/etc".into())));
        assert_eq!(one("C:\\x"), Err(Error::Absolute("C:\\x".into())));
        assert_eq!(one(".git/hooks"), Err(Error::GitDir(".git/hooks".into())));
        assert_eq!(one("sub/.GIT"), Err(Error::GitDir("sub/.GIT".into())));
        assert_eq!(one("etc"), Ok(vec!["etc".to_owned()]));
    }

    #[test]
    fn a_glob_territory_is_refused_with_the_path_that_covers_it() {
        // Issue 30: `docs/**` was accepted, then the guard denied `docs/inside.md`.
        let one = |p: &str| normalise_territory(&[p.to_owned()]);
        assert_eq!(
            one("docs/**"),
            Err(Error::Glob("docs/**".into(), "use \"docs\"".into()))
        );
        assert_eq!(
            one("docs/*").map_err(|e| e.to_string()),
            Err("invalid territory path \"docs/*\": a territory is a path, not a glob (use \"docs\"); a directory already covers everything under it".into())
        );
        assert!(matches!(one("src/{a,b}"), Err(Error::Glob(..))));
        assert!(
            matches!(one("*.md"), Err(Error::Glob(_, hint)) if hint == "name the directory or files it should cover")
        );
        // The path the refusal names is inside itself, as the guard reads it.
        assert!(inside(&one("docs").unwrap(), "docs/inside.md"));
    }

    #[test]
    fn overlap_is_at_slash_boundaries() {
        assert!(paths_overlap("src", "src"));
        assert!(paths_overlap("src", "src/a"));
        assert!(paths_overlap("src/a/b", "src"));
        assert!(!paths_overlap("src", "srcx"));
        assert!(!paths_overlap("src/a", "src/ab"));
        assert!(paths_overlap(".", "docs"));
        assert_eq!(
            overlapping_paths(&t(&["src/a", "docs"]), &t(&["src", "srcx"])),
            ["src", "src/a"]
        );
        assert!(inside(&t(&["src"]), "src/x.rs"));
        assert!(!inside(&t(&["src"]), "srcx/y.rs"));
        assert!(inside(&t(&["."]), "anything/at/all"));
    }

    #[test]
    fn lane_ids_are_flat_ref_components() {
        for good in ["a", "lane-1", "ui_2", "v1.2"] {
            assert!(good.parse::<LaneId>().is_ok(), "{good}");
        }
        let id: LaneId = "ui".parse().unwrap();
        assert_eq!(id.branch(), "hpp/lane/ui");
    }

    #[test]
    fn control_ids_that_are_not_one_flat_component_are_refused() {
        for bad in [
            "", "a/b", "a..b", ".x", "-x", "x.lock", "a b", "a~", "a:b", "é", "x.",
        ] {
            assert!(bad.parse::<LaneId>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn control_roles_and_models_must_name_something() {
        assert!(check_role("maker").is_ok() && check_role("checker").is_ok());
        assert!(check_role("").is_err() && check_role("Make r").is_err());
        assert!(check_model("claude-sonnet-4").is_ok());
        assert!(check_model(" ").is_err() && check_model("a\nb").is_err());
    }

    #[test]
    fn records_round_trip_and_refuse_another_schema() {
        let rec = LaneRecord {
            schema: SCHEMA.into(),
            event: Event::Claim,
            id: "a".parse().unwrap(),
            territory: vec!["src".into()],
            exclusive: true,
            role: "maker".into(),
            model: "m".into(),
            worktree: "/w".into(),
            branch: Some("hpp/lane/a".into()),
            started_at: 10,
            heartbeat_at: 10,
            closed_at: None,
            closing: None,
        };
        let bytes = serde_json::to_vec(&rec).unwrap();
        assert_eq!(LaneRecord::parse("a", &bytes).unwrap(), rec);
        assert_eq!(rec.heartbeat(20).heartbeat_at, 20);
        assert_eq!(
            rec.heartbeat(5).heartbeat_at,
            10,
            "a heartbeat never goes back"
        );
        let mut other = rec.to_value();
        other["schema"] = "hpp.lane/v0".into();
        assert!(LaneRecord::parse("a", other.to_string().as_bytes()).is_err());
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn path() -> impl Strategy<Value = String> {
            proptest::collection::vec("[a-c]{1,3}", 1..4).prop_map(|parts| parts.join("/"))
        }

        proptest! {
            #[test]
            fn overlap_is_symmetric_and_matches_nesting(a in path(), b in path()) {
                prop_assert_eq!(paths_overlap(&a, &b), paths_overlap(&b, &a));
                let nested = a == b
                    || b.starts_with(&format!("{a}/"))
                    || a.starts_with(&format!("{b}/"));
                prop_assert_eq!(paths_overlap(&a, &b), nested);
                let child = format!("{a}/x");
                prop_assert!(inside(std::slice::from_ref(&a), &child));
            }

            #[test]
            fn normalising_is_idempotent(raw in r"[/\\]?[a-c./\\]{0,8}") {
                if let Ok(once) = normalise_path(&raw) {
                    prop_assert_eq!(normalise_path(&once), Ok(once.clone()));
                    prop_assert!(!once.starts_with('/') && !once.ends_with('/'));
                    prop_assert!(!once.contains('\\'));
                }
            }
        }
    }
}
