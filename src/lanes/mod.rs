//! Lanes (CONCEPTS.md "lane"): a linked git worktree plus a claim kept at `refs/hpp/lanes/<id>`.
//!
//! A lane is one concurrent session's claim on a territory: an id, a list of paths, an
//! exclusivity flag, a role, a model and a heartbeat. `lane start` creates the claim (the first
//! commit of the lane's log) and a linked worktree on a new branch `hpp/lane/<id>` at HEAD,
//! outside the user's working tree; heartbeats and the close are later commits of the same log,
//! appended by compare-and-swap. Every record carries the whole claim, so the tip alone says
//! where a lane stands.
//!
//! Concurrent starts are serialised by one local ref, [`STARTS_REF`]: a starter reads its tip,
//! checks the lanes, writes its claim, then moves [`STARTS_REF`] forward by compare-and-swap
//! from the tip it read. A starter whose swap loses re-reads the lanes, now including the
//! winner's claim (written before the winner's swap), and withdraws its own claim if they
//! collide; so two colliding starts never both succeed. The ref lives outside `refs/hpp/` on
//! purpose: every machine writes it, so pushing it would diverge, and it holds nothing a
//! verdict reads (the claims are in the lane logs, which travel).
//!
//! The submodules are pure: [`claim`] (ids, territories, records), [`liveness`], [`guard`].

pub mod review;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use hpp_core::lane::claim::{Closing, Event, LaneId, LaneRecord, SCHEMA, overlapping_paths};
use hpp_core::lane::liveness::{Liveness, Thresholds};
use hpp_core::lane::{claim, guard, liveness};
use hpp_core::record::canonical_json;
use hpp_store::refs::{self, LANES_PREFIX};
use hpp_store::retry::{self, Attempt};
use hpp_store::{self as store, Checkout, CommitId, NewRecord, Store};

/// The blob of every commit in a lane's log.
pub const LANE_FILE: &str = "lane.json";

/// The local ref that serialises lane starts (see the module documentation).
pub const STARTS_REF: &str = refs::LANE_STARTS;

/// The blob of every commit on [`STARTS_REF`].
pub const STARTS_FILE: &str = "start.json";

/// Why a lane operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad id, territory, role, model or record.
    #[error(transparent)]
    Claim(#[from] claim::Error),
    /// Bad thresholds or a heartbeat in the future.
    #[error(transparent)]
    Liveness(#[from] liveness::Error),
    /// The record store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// A territory path leads outside the worktree, or into `.git`, through a symlink.
    #[error(
        "invalid territory path {path:?}: it resolves outside the worktree or into .git (through a symlink)"
    )]
    TerritoryEscapes {
        /// The path, as normalised.
        path: String,
    },
    /// The lane is already started and not closed.
    #[error("lane {id} is already started and open; close it first or pick another id")]
    Exists {
        /// The lane.
        id: LaneId,
    },
    /// The territory collides with a live exclusive lane's.
    #[error(
        "lane {id} would collide with {liveness} exclusive lane {other} on {}",
        paths.join(", ")
    )]
    Collision {
        /// The lane being started.
        id: LaneId,
        /// The lane it collides with.
        other: LaneId,
        /// How alive the other lane is.
        liveness: &'static str,
        /// The paths of both territories that overlap.
        paths: Vec<String>,
    },
    /// The lane's branch exists already.
    #[error("branch {branch} already exists; delete it or pick another lane id")]
    BranchExists {
        /// The branch's short name.
        branch: String,
    },
    /// The worktree directory exists and is not empty.
    #[error("{} exists and is not empty; pass --path DIR for the lane's worktree", path.display())]
    PathTaken {
        /// The directory.
        path: PathBuf,
    },
    /// The worktree directory would be inside a worktree of the repository.
    #[error(
        "{} is inside the worktree {}; a lane's worktree lives outside the user's working tree",
        path.display(),
        worktree.display()
    )]
    InsideWorktree {
        /// The directory asked for.
        path: PathBuf,
        /// The worktree it is inside.
        worktree: PathBuf,
    },
    /// There is no main worktree to put lanes next to.
    #[error("the repository has no working tree to put lanes next to; pass --path DIR")]
    NoMainWorktree,
    /// HEAD has no commit to branch from.
    #[error("HEAD has no commit yet; commit something before starting a lane")]
    NoHead,
    /// No such lane.
    #[error("no lane {id} (refs/hpp/lanes/{id} does not exist)")]
    NotFound {
        /// The lane.
        id: LaneId,
    },
    /// The directory belongs to no open lane.
    #[error("{} is in no open lane's worktree; name the lane", dir.display())]
    NoLaneHere {
        /// The directory.
        dir: PathBuf,
    },
    /// The lane is closed.
    #[error("lane {id} is closed")]
    Closed {
        /// The lane.
        id: LaneId,
    },
    /// The worktree holds work that removing it would lose.
    #[error(
        "lane {id}'s worktree {} holds unsaved work: {what}; nothing was closed",
        path.display()
    )]
    Unsaved {
        /// The lane.
        id: LaneId,
        /// Its worktree.
        path: PathBuf,
        /// What is there.
        what: String,
    },
    /// Other starts kept winning the race on [`STARTS_REF`].
    #[error("lane {id} could not be registered: other lanes kept starting; try again")]
    Raced {
        /// The lane.
        id: LaneId,
    },
}

/// What `lane start` needs.
#[derive(Debug, Clone)]
pub struct StartRequest {
    /// The lane.
    pub id: LaneId,
    /// The territory paths as given (normalised here).
    pub territory: Vec<String>,
    /// Whether the claim is exclusive.
    pub exclusive: bool,
    /// The lane's role.
    pub role: String,
    /// The model it runs.
    pub model: String,
    /// Where its worktree goes (absolute); `None` for `<main worktree>.lanes/<id>`.
    pub path: Option<PathBuf>,
    /// Now, Unix seconds.
    pub now: i64,
    /// When other lanes stop holding their claims.
    pub thresholds: Thresholds,
}

/// Reads the tip record of one lane, with the tip's commit.
pub fn read_lane(store: &Store, id: &LaneId) -> Result<Option<(CommitId, LaneRecord)>, Error> {
    let name = refs::lane(id.as_str());
    let Some(tip) = store.tip(&name)? else {
        return Ok(None);
    };

    let bytes = store
        .read_file(tip.as_str(), LANE_FILE)?
        .ok_or_else(|| claim::Error::Record {
            lane: name.clone(),
            detail: format!("{tip} has no {LANE_FILE}"),
        })?;
    let record = LaneRecord::parse(&name, &bytes)?;
    if record.id != *id {
        return Err(claim::Error::Record {
            lane: name,
            detail: format!("the record names lane {}", record.id),
        }
        .into());
    }
    Ok(Some((tip, record)))
}

/// Reads the tip record of every lane, sorted by id. Refs under `refs/hpp/lanes/` whose name
/// is not a lane id are skipped (no lane command writes them).
pub fn read_all(store: &Store) -> Result<Vec<LaneRecord>, Error> {
    let mut out = Vec::new();
    for (name, _) in store.list(LANES_PREFIX)? {
        let Ok(id) = name[LANES_PREFIX.len()..].parse::<LaneId>() else {
            continue;
        };
        if let Some((_, record)) = read_lane(store, &id)? {
            out.push(record);
        }
    }
    Ok(out)
}

/// The live lanes as the reference's lane-map SOURCE document: a JSON array of
/// `{"id", "territory": [paths], "exclusive": bool, "status": str, "heartbeat_at": int}`
/// (heartbeat in Unix seconds), one entry per `refs/hpp/lanes/<id>`, sorted by id. `status` is
/// `open`, `closed` or `aborted` (the map counts the last two as dead).
/// `git hpp map lane` without a SOURCE projects this.
pub fn live_lane_source(store: &Store) -> Result<Value, Error> {
    let lanes = read_all(store)?;
    Ok(Value::Array(
        lanes
            .iter()
            .map(|l| {
                json!({
                    "id": l.id,
                    "territory": l.territory,
                    "exclusive": l.exclusive,
                    "status": l.status(),
                    "heartbeat_at": l.heartbeat_at,
                })
            })
            .collect(),
    ))
}

/// As [`live_lane_source`], without the lanes that were closed: what `map lane` and the atlas
/// show (a closed lane is over, not dead; `lane list` still names it).
pub fn open_lane_source(store: &Store) -> Result<Value, Error> {
    let all = live_lane_source(store)?;
    Ok(Value::Array(
        all.as_array()
            .into_iter()
            .flatten()
            .filter(|lane| lane["status"] == "open")
            .cloned()
            .collect(),
    ))
}

/// Judges a lane now; a heartbeat in the future counts as alive for the collision check and
/// the guard (a claim that cannot be shown dead still holds).
fn holding(record: &LaneRecord, now: i64, thresholds: Thresholds) -> Liveness {
    liveness::liveness(
        record.id.as_str(),
        record.status(),
        Some(record.heartbeat_at),
        now,
        thresholds,
    )
    .unwrap_or(Liveness::Alive)
}

/// One lane as `lane list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct LaneView {
    /// The tip record.
    #[serde(flatten)]
    pub record: LaneRecord,
    /// `open`, `closed` or `aborted`.
    pub status: String,
    /// How alive it is now.
    pub liveness: Liveness,
    /// Seconds since its last heartbeat.
    pub age: i64,
}

/// Lists every lane with its liveness at `now`.
pub fn list(store: &Store, now: i64, thresholds: Thresholds) -> Result<Vec<LaneView>, Error> {
    read_all(store)?
        .into_iter()
        .map(|record| {
            let liveness = liveness::liveness(
                record.id.as_str(),
                record.status(),
                Some(record.heartbeat_at),
                now,
                thresholds,
            )?;
            Ok(LaneView {
                status: record.status().to_owned(),
                age: now - record.heartbeat_at,
                liveness,
                record,
            })
        })
        .collect()
}

/// Returns `path` with symlinks resolved as far as it exists, the rest appended lexically.
pub fn real_path(path: &Path) -> PathBuf {
    let path = guard::lexical(path);
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return path,
        }
    }
}

/// Returns the open lane whose worktree contains `dir` (the innermost, if worktrees nest).
pub fn lane_of_dir(store: &Store, dir: &Path) -> Result<Option<LaneRecord>, Error> {
    Ok(innermost_lane(&read_all(store)?, dir).cloned())
}

/// Returns the open lane of `lanes` whose worktree contains `dir` (the innermost).
fn innermost_lane<'a>(lanes: &'a [LaneRecord], dir: &Path) -> Option<&'a LaneRecord> {
    let dir = real_path(dir);
    lanes
        .iter()
        .filter(|l| !l.is_closed())
        .filter(|l| dir.starts_with(real_path(Path::new(&l.worktree))))
        .max_by_key(|l| l.worktree.len())
}

fn start_record(req: &StartRequest, worktree: &Path, territory: Vec<String>) -> LaneRecord {
    LaneRecord {
        schema: SCHEMA.to_owned(),
        event: Event::Claim,
        id: req.id.clone(),
        territory,
        exclusive: req.exclusive,
        role: req.role.clone(),
        model: req.model.clone(),
        worktree: worktree.display().to_string(),
        branch: Some(req.id.branch()),
        started_at: req.now,
        heartbeat_at: req.now,
        closed_at: None,
        closing: None,
    }
}

fn message(event: &str, id: &LaneId) -> String {
    format!("hpp: lane {event} {id}")
}

/// Where a lane's worktree goes: the path asked for, else `<main worktree>.lanes/<id>`; refused
/// when it is taken or inside a worktree of the repository.
fn worktree_path(store: &Store, req: &StartRequest) -> Result<PathBuf, Error> {
    let worktrees = store.list_worktrees()?;
    let path = match &req.path {
        Some(path) => guard::lexical(path),
        None => {
            let main = worktrees
                .first()
                .filter(|w| w.head.is_some())
                .ok_or(Error::NoMainWorktree)?;
            let name = main
                .path
                .file_name()
                .ok_or(Error::NoMainWorktree)?
                .to_string_lossy()
                .into_owned();
            main.path
                .with_file_name(format!("{name}.lanes"))
                .join(req.id.as_str())
        }
    };
    let real = real_path(&path);
    for wt in &worktrees {
        let root = real_path(&wt.path);
        if real.starts_with(&root) {
            return Err(Error::InsideWorktree {
                path,
                worktree: wt.path.clone(),
            });
        }
    }
    if path.exists()
        && std::fs::read_dir(&path).map_or(true, |mut entries| entries.next().is_some())
    {
        return Err(Error::PathTaken { path });
    }
    Ok(path)
}

/// Starts a lane: checks the claim against every lane holding one, writes the claim, takes its
/// turn on [`STARTS_REF`], then creates the worktree on a new branch `hpp/lane/<id>` at HEAD.
/// Nothing is written when the claim is refused up front.
pub fn start(store: &Store, req: &StartRequest) -> Result<LaneRecord, Error> {
    let territory = claim::normalise_territory(&req.territory)?;
    if let Some(root) = store.workdir()
        && let Some(path) = territory
            .iter()
            .find(|p| !crate::paths::resolves_inside(root, Path::new(p.as_str())))
    {
        return Err(Error::TerritoryEscapes { path: path.clone() });
    }
    claim::check_role(&req.role)?;
    claim::check_model(&req.model)?;
    let head = store.head_commit()?.ok_or(Error::NoHead)?;
    let previous = read_lane(store, &req.id)?;
    if let Some((_, rec)) = &previous
        && !rec.is_closed()
    {
        return Err(Error::Exists { id: req.id.clone() });
    }
    let branch = req.id.branch();
    if store.tip(&refs::branch(&branch))?.is_some() {
        return Err(Error::BranchExists { branch });
    }
    let path = worktree_path(store, req)?;
    let record = start_record(req, &path, territory);
    let name = refs::lane(req.id.as_str());
    let mut claimed: Option<CommitId> = None;
    let started = retry::retry(|_| {
        let turn = store.tip(STARTS_REF)?;
        if req.exclusive
            && let Some(err) = collision(store, &record, req.now, req.thresholds)?
        {
            if let Some(tip) = &claimed {
                abort(store, &record, tip, req.now);
            }
            return Err(err);
        }
        let tip = match &claimed {
            Some(tip) => tip.clone(),
            None => {
                let bytes = canonical_json(&record.to_value());
                let new = NewRecord {
                    file: LANE_FILE,
                    bytes: &bytes,
                    message: &message("claim", &req.id),
                };
                let written = match &previous {
                    None => store.create_chain(&name, &[new]),
                    Some((old, _)) => store.append(&name, Some(old), &new),
                };
                let tip = written.map_err(|e| match e {
                    store::Error::Moved { .. } => Error::Exists { id: req.id.clone() },
                    other => other.into(),
                })?;
                claimed = Some(tip.clone());
                tip
            }
        };
        let entry = json!({
            "schema": "hpp.lane-start/v1",
            "lane": req.id,
            "claim": tip,
            "at": req.now,
        });
        let bytes = canonical_json(&entry);
        let turn_record = NewRecord {
            file: STARTS_FILE,
            bytes: &bytes,
            message: &message("start", &req.id),
        };
        match Attempt::of(store.append(STARTS_REF, turn.as_ref(), &turn_record)) {
            Ok(Attempt::Done(_)) => {
                if let Err(e) = store.add_worktree(&path, Checkout::NewBranch(&branch, &head)) {
                    abort(store, &record, &tip, req.now);
                    return Err(e.into());
                }
                Ok(Attempt::Done(()))
            }
            Ok(Attempt::Lost) => Ok(Attempt::Lost),
            Err(other) => {
                abort(store, &record, &tip, req.now);
                Err(other.into())
            }
        }
    })?;
    if started.is_some() {
        return Ok(record);
    }
    if let Some(tip) = &claimed {
        abort(store, &record, tip, req.now);
    }
    Err(Error::Raced { id: req.id.clone() })
}

/// The first live exclusive lane (other than `record`'s own) whose territory overlaps.
fn collision(
    store: &Store,
    record: &LaneRecord,
    now: i64,
    thresholds: Thresholds,
) -> Result<Option<Error>, Error> {
    for other in read_all(store)? {
        if other.id == record.id || !other.exclusive || other.is_closed() {
            continue;
        }
        let alive = holding(&other, now, thresholds);
        if !alive.holds_claim() {
            continue;
        }
        let paths = overlapping_paths(&record.territory, &other.territory);
        if !paths.is_empty() {
            return Ok(Some(Error::Collision {
                id: record.id.clone(),
                other: other.id,
                liveness: alive.as_str(),
                paths,
            }));
        }
    }
    Ok(None)
}

/// Withdraws a claim that did not take hold (best effort: the start already failed, and a
/// claim left open would only make later starts more careful).
fn abort(store: &Store, record: &LaneRecord, tip: &CommitId, now: i64) {
    let closed = record.close(
        now,
        Closing {
            reason: "aborted".into(),
            worktree_removed: false,
            branch_deleted: false,
        },
    );
    let bytes = canonical_json(&closed.to_value());
    let _ = store.append(
        &refs::lane(record.id.as_str()),
        Some(tip),
        &NewRecord {
            file: LANE_FILE,
            bytes: &bytes,
            message: &message("abort", &record.id),
        },
    );
}

/// Appends `next(current)` to a lane's log, re-reading and retrying when another writer moved
/// it first. `next` returns `None` to write nothing.
fn append_to_lane(
    store: &Store,
    id: &LaneId,
    event: &str,
    mut next: impl FnMut(&LaneRecord) -> Result<Option<LaneRecord>, Error>,
) -> Result<(LaneRecord, bool), Error> {
    let appended = retry::retry(|_| {
        let (tip, current) =
            read_lane(store, id)?.ok_or_else(|| Error::NotFound { id: id.clone() })?;
        if current.is_closed() {
            return Err(Error::Closed { id: id.clone() });
        }
        let Some(record) = next(&current)? else {
            return Ok(Attempt::Done((current, false)));
        };
        let bytes = canonical_json(&record.to_value());
        let new = NewRecord {
            file: LANE_FILE,
            bytes: &bytes,
            message: &message(event, id),
        };
        let written = Attempt::of(store.append(&refs::lane(id.as_str()), Some(&tip), &new))?;
        Ok(written.map(|_| (record, true)))
    })?;
    appended.ok_or_else(|| Error::Raced { id: id.clone() })
}

/// Records a heartbeat at `now`, unless the last one is less than `min_interval` seconds old.
/// Returns the lane's tip record and whether a heartbeat was written.
pub fn heartbeat(
    store: &Store,
    id: &LaneId,
    now: i64,
    min_interval: i64,
) -> Result<(LaneRecord, bool), Error> {
    append_to_lane(store, id, "heartbeat", |current| {
        Ok(
            (now - current.heartbeat_at >= min_interval || min_interval <= 0)
                .then(|| current.heartbeat(now)),
        )
    })
}

/// What `lane close` did.
#[derive(Debug, Clone, Serialize)]
pub struct Closed {
    /// The closing record.
    pub record: LaneRecord,
    /// Whether the worktree was removed.
    pub worktree_removed: bool,
    /// Whether the lane's branch was deleted.
    pub branch_deleted: bool,
}

fn summary(kind: &str, items: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut names = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        names.push_str(&format!(", and {} more", items.len() - SHOWN));
    }
    format!("{} {kind} ({names})", items.len())
}

/// Describes what removing the worktree at `path` (lane branch `branch`) would lose; empty when
/// nothing.
fn unsaved(store: &Store, path: &Path, branch: Option<&str>) -> Result<String, Error> {
    let status = store.worktree_status(path)?;
    let pick = |f: fn(&store::StatusEntry) -> bool| -> Vec<String> {
        status
            .iter()
            .filter(|e| f(e))
            .map(|e| e.path.clone())
            .collect()
    };
    let mut parts = Vec::new();
    for (kind, items) in [
        ("modified", pick(store::StatusEntry::is_modified)),
        ("staged", pick(store::StatusEntry::is_staged)),
        ("untracked", pick(store::StatusEntry::is_untracked)),
    ] {
        if !items.is_empty() {
            parts.push(summary(kind, &items));
        }
    }
    let real = real_path(path);
    let mut tips = Vec::new();
    let branch_ref = branch.map(refs::branch);
    if let Some(name) = &branch_ref
        && let Some(tip) = store.tip(name)?
    {
        tips.push(tip);
    }
    for wt in store.list_worktrees()? {
        if real_path(&wt.path) == real
            && let Some(head) = wt.head
        {
            tips.push(head);
        }
    }
    let except = branch_ref.unwrap_or_default();
    let commits = store.commits_only_on(&tips, &except, path)?;
    if !commits.is_empty() {
        let short: Vec<String> = commits
            .iter()
            .map(|c| c.as_str()[..12].to_owned())
            .collect();
        let on = branch.unwrap_or("its HEAD");
        let kind = if short.len() == 1 {
            "commit"
        } else {
            "commits"
        };
        parts.push(format!(
            "{} not on any other branch or ref",
            summary(&format!("{kind} on {on}"), &short)
        ));
    }
    Ok(parts.join("; "))
}

/// Closes a lane: unless `keep_worktree`, first refuses when its worktree holds unsaved work
/// (modified, staged or untracked-not-ignored files, or commits reachable from nothing but the
/// lane), then removes the worktree and the lane's branch; then records the close.
pub fn close(store: &Store, id: &LaneId, keep_worktree: bool, now: i64) -> Result<Closed, Error> {
    // Closing from inside the lane's own worktree opens the repository through it; once it is
    // removed that handle reads nothing, so everything goes through the shared git directory.
    let shared = Store::discover(store.common_dir())?;
    let store = &shared;
    let (_, current) = read_lane(store, id)?.ok_or_else(|| Error::NotFound { id: id.clone() })?;
    if current.is_closed() {
        return Err(Error::Closed { id: id.clone() });
    }
    let path = PathBuf::from(&current.worktree);
    let mut worktree_removed = false;
    let mut branch_deleted = false;
    if !keep_worktree && path.is_dir() {
        let what = unsaved(store, &path, current.branch.as_deref())?;
        if !what.is_empty() {
            return Err(Error::Unsaved {
                id: id.clone(),
                path,
                what,
            });
        }
        store.remove_worktree(&path, false)?;
        worktree_removed = true;
        if let Some(branch) = &current.branch {
            let name = refs::branch(branch);
            if let Some(tip) = store.tip(&name)? {
                store.delete_ref(&name, &tip)?;
                branch_deleted = true;
            }
        }
    }
    let closing = Closing {
        reason: "closed".into(),
        worktree_removed,
        branch_deleted,
    };
    let (record, _) = append_to_lane(store, id, "close", |current| {
        Ok(Some(current.close(now, closing.clone())))
    })?;
    Ok(Closed {
        record,
        worktree_removed,
        branch_deleted,
    })
}

/// Decides whether the session working in `cwd` may edit `file` (relative to `cwd` or
/// absolute): see [`guard::decide`]. `outside` is what a session in no lane gets for an edit
/// inside a live exclusive lane's territory.
pub fn guard_edit(
    store: &Store,
    cwd: &Path,
    file: &Path,
    now: i64,
    thresholds: Thresholds,
    outside: guard::OutsideEdits,
) -> Result<guard::Decision, Error> {
    let records = read_all(store)?;
    let own = innermost_lane(&records, cwd);
    let lanes: Vec<(LaneRecord, Liveness)> = records
        .iter()
        .map(|l| (l.clone(), holding(l, now, thresholds)))
        .collect();
    // Outside every lane, only a live exclusive claim can make an edit the guard's business:
    // without one, the worktree list (a git process) is not worth asking for.
    let claimed = lanes
        .iter()
        .any(|(l, alive)| l.exclusive && !l.is_closed() && alive.holds_claim());
    if own.is_none() && (outside == guard::OutsideEdits::Allow || !claimed) {
        return Ok(guard::Decision::Allow);
    }
    let own_root = own.map_or_else(|| real_path(cwd), |o| real_path(Path::new(&o.worktree)));
    let file = real_path(&cwd.join(file));
    let worktrees: Vec<PathBuf> = store
        .list_worktrees()?
        .into_iter()
        .map(|w| real_path(&w.path))
        .collect();
    Ok(guard::decide(
        own, &own_root, &file, &lanes, &worktrees, outside,
    ))
}

/// The lane git guard: a git call from the worktree of `cwd`'s lane that sweeps the whole
/// worktree or shared history (`add -A`, `commit -a`, `reset --hard`, `clean -f`, `stash`),
/// while another lane is alive. Returns the call and the lanes alive, or `None` (no lane here,
/// no other lane alive, or no sweeping call).
pub fn guard_git(
    store: &Store,
    cwd: &Path,
    command: &str,
    now: i64,
    thresholds: Thresholds,
) -> Result<Option<(String, Vec<String>)>, Error> {
    let Some(call) = guard::sweeping_git(&hpp_core::policy::git_calls(command)) else {
        return Ok(None);
    };
    let own = lane_of_dir(store, cwd)?;
    let others: Vec<String> = read_all(store)?
        .into_iter()
        .filter(|l| !l.is_closed())
        .filter(|l| own.as_ref().is_none_or(|o| o.id != l.id))
        .filter(|l| holding(l, now, thresholds) != Liveness::Dead)
        .map(|l| l.id.to_string())
        .collect();
    if others.is_empty() {
        return Ok(None);
    }
    Ok(Some((call, others)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, territory: &[&str], event: Event, heartbeat_at: i64) -> LaneRecord {
        LaneRecord {
            schema: SCHEMA.into(),
            event,
            id: id.parse().unwrap(),
            territory: territory.iter().map(|t| (*t).to_owned()).collect(),
            exclusive: id != "shared",
            role: "maker".into(),
            model: "m".into(),
            worktree: format!("/w/{id}"),
            branch: Some(format!("hpp/lane/{id}")),
            started_at: 100,
            heartbeat_at,
            closed_at: None,
            closing: None,
        }
    }

    fn write(store: &Store, records: &[LaneRecord]) {
        let bytes: Vec<Vec<u8>> = records
            .iter()
            .map(|r| canonical_json(&r.to_value()))
            .collect();
        let new: Vec<NewRecord<'_>> = bytes
            .iter()
            .map(|b| NewRecord {
                file: LANE_FILE,
                bytes: b,
                message: "test",
            })
            .collect();
        store
            .create_chain(&refs::lane(records[0].id.as_str()), &new)
            .unwrap();
    }

    #[test]
    fn the_lane_source_is_the_reference_shape_sorted_by_id_from_each_tip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let zeta = record("zeta", &["src"], Event::Claim, 100);
        write(&store, &[zeta.clone(), zeta.heartbeat(250)]);
        let gone = record("gone", &["docs"], Event::Claim, 100);
        let closing = Closing {
            reason: "closed".into(),
            worktree_removed: true,
            branch_deleted: true,
        };
        write(&store, &[gone.clone(), gone.close(300, closing)]);
        write(&store, &[record("shared", &["src/a"], Event::Claim, 120)]);
        let source = live_lane_source(&store).unwrap();
        assert_eq!(
            source,
            json!([
                {"id": "gone", "territory": ["docs"], "exclusive": true, "status": "closed", "heartbeat_at": 100},
                {"id": "shared", "territory": ["src/a"], "exclusive": false, "status": "open", "heartbeat_at": 120},
                {"id": "zeta", "territory": ["src"], "exclusive": true, "status": "open", "heartbeat_at": 250},
            ])
        );
    }

    #[test]
    fn control_a_lane_record_naming_another_lane_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::init(dir.path()).unwrap();
        let mut liar = record("a", &["src"], Event::Claim, 100);
        write(&store, std::slice::from_ref(&liar));
        liar.id = "b".parse().unwrap();
        let bytes = canonical_json(&liar.to_value());
        store
            .create_chain(
                "refs/hpp/lanes/c",
                &[NewRecord {
                    file: LANE_FILE,
                    bytes: &bytes,
                    message: "test",
                }],
            )
            .unwrap();
        assert!(live_lane_source(&store).is_err());
        let err = read_lane(&store, &"c".parse().unwrap()).unwrap_err();
        assert!(err.to_string().contains("the record names lane b"), "{err}");
    }
}
