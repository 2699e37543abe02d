//! Verified loop tips, remembered under the git directory (never pushed), so that reading a long
//! loop's tip, or where it stands, does not re-verify every event each time.
//!
//! Two files per loop under `<git dir>/hpp-cache/loops/`, both keyed by the tip commit they
//! were verified at and by the loop machine:
//!
//! - the *tip mark* (`<loop hash>.tip`): only a commit id that was verified whole (or extended
//!   from one that was). An append reads the tip's own recorded state (`state.json` in the event
//!   commit, [`hpp_core::event_loop::TipState`]) when the ref still points at that commit, so it
//!   costs the same at 10 events and at 100,000. Writing it is constant in size too.
//! - the *standing* (`<loop hash>`): what `status`, `resume`, `loops` and the atlas show: the
//!   projection with its whole history of types, the chain's counts, and the events a gate's
//!   standing is read from.
//!
//! Neither is ever trusted for a tip it does not name. A ref that moved to a descendant (another
//! writer's append, a fetch) is extended: the new events alone are verified from the remembered
//! tip (hash chain, one parent each, the loop's transitions) and the new tip's recorded state is
//! checked against them. A tip that was forged or rewritten is a commit id nobody verified, so it
//! is verified whole (and a broken chain is refused as before). Anything odd in a cache file
//! falls back to the whole read: the cache can only save time. `event verify`, `doctor` and
//! `export` never read it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use hpp_core::event_log::{ChainReport, ChainStatus, LoggedEvent};
use hpp_core::event_loop::{LoopSpec, Projection};
use hpp_core::record::sha256_hex;
use hpp_store::refs::{self, LoopId};
use hpp_store::{CommitId, Store};

use super::{Error, LoopState, chain};

/// Loops shorter than this are read whole every time: reading them costs less than the cache.
pub const MIN_EVENTS: usize = 64;

#[derive(Serialize, Deserialize)]
struct Standing {
    tip: String,
    machine: String,
    status: ChainStatus,
    events: usize,
    chained: usize,
    legacy: usize,
    head_sha256: Option<String>,
    projection: Projection,
    kept: Vec<(LoggedEvent, String)>,
}

#[derive(Serialize, Deserialize)]
struct Mark {
    tip: String,
    machine: String,
}

/// Reads a loop for showing where it stands: from the standing when its tip is the ref's,
/// extended when the ref moved on from it, else whole (and remembered when it is long and not
/// broken). The events of a remembered state are only those kept (see the module documentation).
pub fn read_standing(store: &Store, spec: &LoopSpec, id: &LoopId) -> Result<LoopState, Error> {
    let ref_name = refs::loop_log(id);
    let Some(tip) = store.tip(&ref_name)? else {
        return chain::read(store, spec, id);
    };
    if let Some(standing) =
        read_json::<Standing>(&standing_path(store, id)).filter(|s| s.machine == machine(spec))
        && let Some(before) = standing.into_state(store, id, &ref_name)
    {
        if before.head.as_ref() == Some(&tip) {
            if matches_tip_state(store, spec, &before) {
                return Ok(before);
            }
        } else if let Some(state) = chain::extend(store, spec, &before)? {
            // A few new events are cheaper to read again than the whole standing (its history
            // grows with the loop) is to write at every read.
            if state.chain.events - before.chain.events >= MIN_EVENTS {
                write_standing(store, spec, &state);
            }
            return Ok(state);
        }
    }
    let state = chain::read(store, spec, id)?;
    if !state.chain.is_broken() && state.events.len() >= MIN_EVENTS {
        write_standing(store, spec, &state);
    }
    Ok(state)
}

/// Reads a loop's tip for an append: the tip's recorded state when that tip was verified here
/// before, extended when the ref moved on from it, else as [`read_standing`] reads it. The
/// events of the state returned are those a gate reads, and its projection's history may hold
/// only what was read: the caller checks one more step from the state, not from the history.
pub fn read_tip(store: &Store, spec: &LoopSpec, id: &LoopId) -> Result<LoopState, Error> {
    let ref_name = refs::loop_log(id);
    let Some(tip) = store.tip(&ref_name)? else {
        return chain::read(store, spec, id);
    };
    if let Some(mark) =
        read_json::<Mark>(&mark_path(store, id)).filter(|m| m.machine == machine(spec))
        && let Some(remembered) = store.commit_id(&mark.tip)
        && let Some(state) = chain::at_tip(store, spec, id, &remembered)?
    {
        if remembered == tip {
            return Ok(state);
        }
        if let Some(extended) = chain::extend(store, spec, &state)? {
            if let Some(head) = &extended.head {
                self::mark(store, spec, id, head);
            }
            return Ok(extended);
        }
    }
    let state = read_standing(store, spec, id)?;
    if let (false, Some(head)) = (state.chain.is_broken(), &state.head) {
        mark(store, spec, id, head);
    }
    Ok(state)
}

/// Remembers that `tip` was verified (read whole, extended, or just written on top of a
/// verified tip by an append): the next append on it reads the tip alone. Best effort.
pub fn mark(store: &Store, spec: &LoopSpec, id: &LoopId, tip: &CommitId) {
    write_json(
        &mark_path(store, id),
        &Mark {
            tip: tip.to_string(),
            machine: machine(spec),
        },
    );
}

impl Standing {
    fn into_state(self, store: &Store, id: &LoopId, ref_name: &str) -> Option<LoopState> {
        let head = store.commit_id(&self.tip)?;
        let (events, commits): (Vec<_>, Vec<_>) = self
            .kept
            .into_iter()
            .map(|(event, commit)| store.commit_id(&commit).map(|c| (event, c)))
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .unzip();
        Some(LoopState {
            id: id.clone(),
            ref_name: ref_name.to_owned(),
            head: Some(head),
            chain: ChainReport {
                schema: hpp_core::event_log::CHAIN_SCHEMA,
                status: self.status,
                events: self.events,
                chained: self.chained,
                legacy: self.legacy,
                first_divergent: None,
                problem: None,
                head_sha256: self.head_sha256,
            },
            events,
            commits,
            projection: Some(self.projection),
        })
    }
}

/// Whether a remembered standing agrees with what its tip commit records about itself (when it
/// records anything under this machine): an edited standing file is not shown.
fn matches_tip_state(store: &Store, spec: &LoopSpec, state: &LoopState) -> bool {
    let (Some(tip), Some(projection)) = (&state.head, &state.projection) else {
        return false;
    };
    match chain::recorded_state(store, spec, tip) {
        Ok(chain::Recorded::Usable(recorded)) => {
            recorded.seq == state.chain.events
                && recorded.state == projection.state
                && recorded.evidence_count == projection.evidence_count
                && Some(&recorded.head_sha256) == state.chain.head_sha256.as_ref()
                && projection.history.len() == state.chain.events
        }
        Ok(chain::Recorded::Nothing | chain::Recorded::Other) => {
            projection.history.len() == state.chain.events
        }
        Ok(chain::Recorded::Unreadable) | Err(_) => false,
    }
}

/// Writes the standing of a verified (or verified-then-extended) state; best effort.
fn write_standing(store: &Store, spec: &LoopSpec, state: &LoopState) {
    let (Some(tip), Some(projection)) = (&state.head, &state.projection) else {
        return;
    };
    let kept = chain::kept(&state.events)
        .into_iter()
        .map(|i| (state.events[i].clone(), state.commits[i].to_string()))
        .collect();
    write_json(
        &standing_path(store, &state.id),
        &Standing {
            tip: tip.to_string(),
            machine: machine(spec),
            status: state.chain.status,
            events: state.chain.events,
            chained: state.chain.chained,
            legacy: state.chain.legacy,
            head_sha256: state.chain.head_sha256.clone(),
            projection: projection.clone(),
            kept,
        },
    );
}

fn read_json<T: for<'de> Deserialize<'de>>(file: &std::path::Path) -> Option<T> {
    std::fs::read(file)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
}

/// Writes a cache file by rename, so a reader sees the old file or the new one. A cache that
/// cannot be written is only slower next time.
fn write_json(file: &std::path::Path, value: &impl Serialize) {
    if let Some(dir) = file.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(bytes) = serde_json::to_vec(value)
    {
        let partial = file.with_extension(format!("{}.tmp", std::process::id()));
        if std::fs::write(&partial, bytes).is_ok() && std::fs::rename(&partial, file).is_err() {
            let _ = std::fs::remove_file(&partial);
        }
    }
}

/// The standing of loop `id`: named by a hash, since loop names hold `/`.
fn standing_path(store: &Store, id: &LoopId) -> PathBuf {
    store
        .common_dir()
        .join("hpp-cache")
        .join("loops")
        .join(&sha256_hex(id.as_str().as_bytes())[..32])
}

/// The tip mark of loop `id`.
fn mark_path(store: &Store, id: &LoopId) -> PathBuf {
    standing_path(store, id).with_extension("tip")
}

/// What identifies the loop machine (with its gates and next steps) an entry was read under.
fn machine(spec: &LoopSpec) -> String {
    sha256_hex(format!("{spec:?}").as_bytes())
}
