//! Checkpoints: the workspace as a tree (the snapshot, tracked files and untracked ones that are
//! not ignored, with the stat cache), kept without touching the index or HEAD.
//!
//! - Turn checkpoints (the reference's continuity-kit): at the end of each agent turn, at
//!   `refs/hpp/checkpoints/<session>/turn/<n>`.
//! - Command checkpoints: before each shell call the command policy cannot prove harmless (the
//!   policy gate's PreToolUse hook), at `refs/hpp/checkpoints/<session>/command/<n>`.
//!
//! A checkpoint whose tree is the session's newest one's is not written. [`plan_restore`] and
//! [`restore`] bring back, byte for byte with modes, what a later command deleted or changed;
//! [`prune`] drops checkpoints older than an age, keeping each session's newest.

use serde::Serialize;
use serde_json::json;

use hpp_core::record::canonical_json;
use hpp_store::{self as store, CommitId, Content, Store, TreeId, refs};

/// The record beside the snapshot.
pub const FILE: &str = "checkpoint.json";

/// The entry of the record's tree that keeps the workspace snapshot.
pub const SNAPSHOT: &str = "snapshot";

/// The schema of a turn checkpoint.
pub const SCHEMA: &str = "hpp.turn-checkpoint/v1";

/// The schema of a command checkpoint.
pub const COMMAND_SCHEMA: &str = "hpp.command-checkpoint/v1";

/// When a checkpoint is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// At the end of an agent turn.
    Turn,
    /// Before a shell call.
    Command,
}

impl Kind {
    /// The ref segment: `turn` or `command`.
    pub fn segment(self) -> &'static str {
        match self {
            Kind::Turn => "turn",
            Kind::Command => "command",
        }
    }
}

/// Why a checkpoint was not written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The session id cannot name a ref, or looks like a secret.
    #[error("session id {0:?} cannot name a checkpoint: letters, digits, '.', '_' and '-' only")]
    BadSession(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A checkpoint written.
#[derive(Debug, Clone, Serialize)]
pub struct Checkpoint {
    /// Its ref.
    #[serde(rename = "ref")]
    pub name: String,
    /// The turn number.
    pub turn: usize,
    /// The workspace tree.
    pub tree: TreeId,
    /// The record commit.
    pub commit: CommitId,
}

/// Writes the next turn checkpoint of `session`, unless the workspace is the tree the last one
/// kept (`Ok(None)`).
pub fn write(store: &Store, session: &str, at: &str) -> Result<Option<Checkpoint>, Error> {
    write_kind(store, session, at, Kind::Turn, None)
}

/// Writes a command checkpoint of `session` before `command` runs, unless the workspace is the
/// tree the session's newest checkpoint of either kind kept (`Ok(None)`). The command is kept in
/// the record unless it has a secret's shape.
pub fn write_before(
    store: &Store,
    session: &str,
    at: &str,
    command: &str,
) -> Result<Option<Checkpoint>, Error> {
    write_kind(store, session, at, Kind::Command, Some(command))
}

/// Tells whether `session` can name a checkpoint ref.
pub fn valid_session(session: &str) -> bool {
    !session.is_empty()
        && session.len() <= 80
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !session.starts_with('.')
        && !hpp_core::secrets::looks_secret(session)
}

fn write_kind(
    store: &Store,
    session: &str,
    at: &str,
    kind: Kind,
    command: Option<&str>,
) -> Result<Option<Checkpoint>, Error> {
    if !valid_session(session) {
        return Err(Error::BadSession(session.to_owned()));
    }
    let prefix = format!("{}{session}/{}/", refs::CHECKPOINTS_PREFIX, kind.segment());
    let taken: Vec<usize> = store
        .list(&prefix)?
        .into_iter()
        .filter_map(|(name, _)| name[prefix.len()..].parse().ok())
        .collect();
    let last = taken.iter().copied().max().unwrap_or(0);
    let tree = store.snapshot()?;
    // The session's newest checkpoint of either kind already keeps this tree.
    let kept = match kind {
        Kind::Turn if last > 0 => vec![refs::checkpoint(session, kind.segment(), last)],
        Kind::Turn => Vec::new(),
        Kind::Command => newest_of_session(store, session)?.into_iter().collect(),
    };
    for name in kept {
        if store.entry_id(&name, SNAPSHOT)?.as_deref() == Some(tree.as_str()) {
            return Ok(None);
        }
    }
    let head = store.head_commit()?.map(|c| c.to_string());
    // Two writers racing for one number: the loser takes the next.
    for turn in last + 1..last + 100 {
        let name = refs::checkpoint(session, kind.segment(), turn);
        let record = match kind {
            Kind::Turn => json!({
                "schema": SCHEMA,
                "session": session,
                "turn": turn,
                "tree": tree.as_str(),
                "head": head,
                "created_at": at,
            }),
            Kind::Command => {
                let command = command.unwrap_or_default();
                let shown = if hpp_core::secrets::shape_in_file(command.as_bytes()).is_some() {
                    "[withheld: the command has a secret's shape]"
                } else {
                    command
                };
                json!({
                    "schema": COMMAND_SCHEMA,
                    "session": session,
                    "n": turn,
                    "command": shown,
                    "tree": tree.as_str(),
                    "head": head,
                    "created_at": at,
                })
            }
        };
        let message = match kind {
            Kind::Turn => format!("hpp turn checkpoint {session} #{turn}\n"),
            Kind::Command => format!("hpp command checkpoint {session} #{turn}\n"),
        };
        match store.create_record(
            &name,
            &[
                (FILE, Content::Bytes(canonical_json(&record))),
                (SNAPSHOT, Content::Tree(tree.clone())),
            ],
            &message,
        ) {
            Ok(commit) => {
                return Ok(Some(Checkpoint {
                    name,
                    turn,
                    tree,
                    commit,
                }));
            }
            Err(store::Error::Moved { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Err(store::Error::Contended {
        name: prefix,
        attempts: 99,
    }
    .into())
}

/// One checkpoint as listed: its ref, its commit and when it was taken.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    /// Its ref.
    #[serde(rename = "ref")]
    pub name: String,
    /// The session it belongs to.
    pub session: String,
    /// `turn` or `command`.
    pub kind: String,
    /// Its record's `created_at`.
    pub created_at: String,
    /// The command it was taken before (command checkpoints).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The record commit.
    #[serde(skip)]
    pub commit: CommitId,
}

/// Every checkpoint, oldest first (by `created_at`, then ref); of one session when given.
pub fn list(store: &Store, session: Option<&str>) -> Result<Vec<Listed>, Error> {
    let prefix = match session {
        Some(session) => format!("{}{session}/", refs::CHECKPOINTS_PREFIX),
        None => refs::CHECKPOINTS_PREFIX.to_owned(),
    };
    let mut out = Vec::new();
    for (name, commit) in store.list(&prefix)? {
        let rest = &name[refs::CHECKPOINTS_PREFIX.len()..];
        let mut parts = rest.split('/');
        let (Some(session), Some(kind), Some(_), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let record: serde_json::Value = store
            .read_file(&name, FILE)?
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        out.push(Listed {
            session: session.to_owned(),
            kind: kind.to_owned(),
            created_at: record["created_at"].as_str().unwrap_or_default().to_owned(),
            command: record["command"].as_str().map(str::to_owned),
            name,
            commit,
        });
    }
    out.sort_by(|a, b| (&a.created_at, &a.name).cmp(&(&b.created_at, &b.name)));
    Ok(out)
}

/// The ref of the newest checkpoint of `session`, of either kind: the higher-numbered of each
/// kind, the later by `created_at` (two records read, however many the session has).
fn newest_of_session(store: &Store, session: &str) -> Result<Option<String>, Error> {
    let mut best: Option<(String, String)> = None;
    for kind in [Kind::Turn, Kind::Command] {
        let prefix = format!("{}{session}/{}/", refs::CHECKPOINTS_PREFIX, kind.segment());
        let last = store
            .list(&prefix)?
            .into_iter()
            .filter_map(|(name, _)| {
                name[prefix.len()..]
                    .parse::<usize>()
                    .ok()
                    .map(|n| (n, name))
            })
            .max();
        let Some((_, name)) = last else {
            continue;
        };
        let at = store
            .read_file(&name, FILE)?
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|v| v["created_at"].as_str().map(str::to_owned))
            .unwrap_or_default();
        if best.as_ref().is_none_or(|(b, _)| at > *b) {
            best = Some((at, name));
        }
    }
    Ok(best.map(|(_, name)| name))
}

/// What [`restore`] would write back from one checkpoint.
#[derive(Debug, Clone, Serialize)]
pub struct RestorePlan {
    /// The checkpoint's ref.
    #[serde(rename = "ref")]
    pub name: String,
    /// Its workspace tree.
    pub tree: TreeId,
    /// Paths the checkpoint holds that are gone from the workspace now.
    pub deleted: Vec<String>,
    /// Paths the checkpoint holds that differ now (content, mode or kind).
    pub changed: Vec<String>,
    /// Paths added since, left as they are.
    pub added: Vec<String>,
}

/// Compares the workspace tree `now` (a snapshot) with the checkpoint at `name`; `None` when
/// `name` holds no checkpoint.
pub fn plan_restore(store: &Store, name: &str, now: &TreeId) -> Result<Option<RestorePlan>, Error> {
    let Some(tree) = store.entry_id(name, SNAPSHOT)? else {
        return Ok(None);
    };
    let Some(tree) = TreeId::parse(&tree).filter(|t| store.has_tree(t)) else {
        return Ok(None);
    };
    let mut plan = RestorePlan {
        name: name.to_owned(),
        tree: tree.clone(),
        deleted: Vec::new(),
        changed: Vec::new(),
        added: Vec::new(),
    };
    for path in store.changed_paths(&tree, now)? {
        let then = store.tree_entry_id(&tree, &path)?;
        let present = store.tree_entry_id(now, &path)?;
        match (then, present) {
            (Some(_), None) => plan.deleted.push(path),
            (Some(_), Some(_)) => plan.changed.push(path),
            (None, _) => plan.added.push(path),
        }
    }
    Ok(Some(plan))
}

/// Writes back every deleted and changed path of `plan`, as the checkpoint holds it.
pub fn restore(store: &Store, plan: &RestorePlan) -> Result<(), Error> {
    let paths: Vec<String> = plan.deleted.iter().chain(&plan.changed).cloned().collect();
    store.restore_from(&plan.tree, &paths)?;
    Ok(())
}

/// Deletes every checkpoint whose `created_at` is before `cutoff` (RFC 3339, UTC), except the
/// newest of each session; each by compare-and-swap, a moved ref left alone. Returns the refs
/// deleted.
pub fn prune(store: &Store, cutoff: &str) -> Result<Vec<String>, Error> {
    let all = list(store, None)?;
    let mut newest: std::collections::BTreeMap<&str, &Listed> = std::collections::BTreeMap::new();
    for checkpoint in &all {
        newest.insert(&checkpoint.session, checkpoint);
    }
    let mut gone = Vec::new();
    for checkpoint in &all {
        let keep = newest
            .get(checkpoint.session.as_str())
            .is_some_and(|n| n.name == checkpoint.name);
        if keep || checkpoint.created_at.is_empty() || checkpoint.created_at.as_str() >= cutoff {
            continue;
        }
        match store.delete_ref(&checkpoint.name, &checkpoint.commit) {
            Ok(()) => gone.push(checkpoint.name.clone()),
            Err(store::Error::Moved { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(gone)
}

/// How long a checkpoint is kept when `hpp.checkpoint.maxAgeDays` says nothing: two weeks.
pub const MAX_AGE_DAYS: i64 = 14;

/// What the policy gate did before a shell call.
#[derive(Debug, Default)]
pub struct Before {
    /// The checkpoint written (`None`: the session's newest already keeps this tree).
    pub written: Option<Checkpoint>,
    /// Checkpoints pruned on the way (at most once an hour).
    pub pruned: Vec<String>,
}

/// The policy gate's step before a shell call it cannot prove harmless: a command checkpoint
/// of the session (a session id that cannot name a ref is checkpointed under `s-` and its
/// hash), then, at most once an hour, [`prune`] of what is older than
/// `hpp.checkpoint.maxAgeDays` days (default [`MAX_AGE_DAYS`]).
pub fn before_command(
    store: &Store,
    session: &str,
    now: time::OffsetDateTime,
    command: &str,
) -> Result<Before, Error> {
    let session = if valid_session(session) {
        session.to_owned()
    } else {
        let digest = hpp_core::record::sha256_hex(session.as_bytes());
        format!("s-{}", &digest[..16])
    };
    let at = hpp_core::timestamp::rfc3339(now);
    let written = write_before(store, &session, &at, command)?;
    let stamp = store
        .common_dir()
        .join("hpp-cache")
        .join("checkpoints-pruned");
    let recent = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() < 3600));
    let mut pruned = Vec::new();
    if !recent {
        let days = store
            .config_string("hpp.checkpoint.maxAgeDays")
            .and_then(|d| d.parse::<i64>().ok())
            .filter(|d| *d > 0)
            .unwrap_or(MAX_AGE_DAYS);
        let cutoff = hpp_core::timestamp::rfc3339(now - time::Duration::days(days));
        pruned = prune(store, &cutoff)?;
        if let Some(dir) = stamp.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(&stamp, b"");
    }
    Ok(Before { written, pruned })
}
