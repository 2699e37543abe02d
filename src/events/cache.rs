//! Verified loop tips, remembered under the git directory (never pushed): what `status`,
//! `resume` and the atlas need of a long loop, so reading where it stands does not walk and
//! re-verify every event each time.
//!
//! An entry is keyed by the loop's tip commit and by the loop machine: it is used only while
//! the ref still points at the commit that was verified, under the same manifest. A tip that
//! moved, was forged or rewritten is a different commit, so it is verified whole again (and a
//! broken chain is refused as before). Appends, `event verify`, `doctor` and `export` never read
//! the cache: they verify the chain themselves. The entry keeps the projection, the chain's
//! counts, and the events a gate's standing is read from: the first that names the maker and
//! the latest of each type, with their commits.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use hpp_core::event_log::{ChainReport, ChainStatus, LoggedEvent};
use hpp_core::event_loop::{LoopSpec, Projection};
use hpp_core::record::sha256_hex;
use hpp_store::Store;
use hpp_store::refs::{self, LoopId};

use super::{Error, LoopState};

/// Loops shorter than this are read whole every time: reading them costs less than the cache.
pub const MIN_EVENTS: usize = 64;

#[derive(Serialize, Deserialize)]
struct Entry {
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

/// Reads a loop for showing where it stands: from the cache when its tip is the one verified
/// under this machine, else whole (and remembered when it is long and not broken). The events
/// of a cached state are only those kept (see the module documentation).
pub fn read_standing(store: &Store, spec: &LoopSpec, id: &LoopId) -> Result<LoopState, Error> {
    let ref_name = refs::loop_log(id);
    let tip = store.tip(&ref_name)?;
    let file = path(store, id);
    let machine = machine(spec);
    if let Some(tip) = &tip
        && let Some(entry) = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Entry>(&bytes).ok())
            .filter(|e| e.tip == tip.as_str() && e.machine == machine)
    {
        let (events, commits) = entry
            .kept
            .into_iter()
            .filter_map(|(event, commit)| store.commit_id(&commit).map(|c| (event, c)))
            .unzip();
        return Ok(LoopState {
            id: id.clone(),
            ref_name,
            head: Some(tip.clone()),
            chain: ChainReport {
                schema: hpp_core::event_log::CHAIN_SCHEMA,
                status: entry.status,
                events: entry.events,
                chained: entry.chained,
                legacy: entry.legacy,
                first_divergent: None,
                problem: None,
                head_sha256: entry.head_sha256,
            },
            events,
            commits,
            projection: Some(entry.projection),
        });
    }
    let state = super::read(store, spec, id)?;
    if !state.chain.is_broken() && state.events.len() >= MIN_EVENTS {
        write(store, spec, &state);
    }
    Ok(state)
}

/// Remembers the tip an append just wrote, from the state it was appended to (verified whole,
/// or itself read from a verified tip) and the new event: so the next append or status of a
/// long loop reads one entry instead of the whole chain.
pub fn remember_append(
    store: &Store,
    spec: &LoopSpec,
    before: &LoopState,
    event: LoggedEvent,
    commit: &hpp_store::CommitId,
    projection: &Projection,
) {
    let events = before.chain.events + 1;
    if events < MIN_EVENTS {
        return;
    }
    let mut kept: Vec<(LoggedEvent, String)> = before
        .events
        .iter()
        .zip(&before.commits)
        .map(|(e, c)| (e.clone(), c.to_string()))
        .collect();
    kept.push((event, commit.to_string()));
    let state = LoopState {
        id: before.id.clone(),
        ref_name: before.ref_name.clone(),
        head: Some(commit.clone()),
        chain: ChainReport {
            schema: hpp_core::event_log::CHAIN_SCHEMA,
            status: match before.chain.status {
                ChainStatus::Legacy => ChainStatus::Legacy,
                _ => ChainStatus::Intact,
            },
            events,
            chained: before.chain.chained + 1,
            legacy: before.chain.legacy,
            first_divergent: None,
            problem: None,
            head_sha256: kept.last().map(|(e, _)| e.sha256.clone()),
        },
        commits: Vec::new(),
        events: Vec::new(),
        projection: Some(projection.clone()),
    };
    let (events_kept, commits_kept): (Vec<LoggedEvent>, Vec<String>) = kept.into_iter().unzip();
    let sparse = LoopState {
        events: events_kept,
        commits: commits_kept
            .iter()
            .filter_map(|c| store.commit_id(c))
            .collect(),
        ..state
    };
    write(store, spec, &sparse);
}

/// Writes the entry of a verified (or verified-then-extended) state; best effort.
fn write(store: &Store, spec: &LoopSpec, state: &LoopState) {
    let (Some(tip), Some(projection)) = (&state.head, &state.projection) else {
        return;
    };
    let entry = Entry {
        tip: tip.to_string(),
        machine: machine(spec),
        status: state.chain.status,
        events: state.chain.events,
        chained: state.chain.chained,
        legacy: state.chain.legacy,
        head_sha256: state.chain.head_sha256.clone(),
        projection: projection.clone(),
        kept: kept(state),
    };
    // A cache that cannot be written is only slower next time.
    let file = path(store, &state.id);
    if let Some(dir) = file.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(bytes) = serde_json::to_vec(&entry)
    {
        let partial = file.with_extension(format!("{}.tmp", std::process::id()));
        if std::fs::write(&partial, bytes).is_ok() {
            let _ = std::fs::rename(&partial, &file);
        }
    }
}

/// The events a gate's standing is read from: the first naming the maker, and the latest of
/// each type, oldest first.
fn kept(state: &LoopState) -> Vec<(LoggedEvent, String)> {
    let mut keep: Vec<usize> = Vec::new();
    if let Some(i) = state.events.iter().position(|e| {
        hpp_core::event_loop::gates::Named::from_data(&e.data)
            .maker
            .is_some()
    }) {
        keep.push(i);
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, event) in state.events.iter().enumerate().rev() {
        if seen.insert(event.kind.as_str()) {
            keep.push(i);
        }
    }
    keep.sort_unstable();
    keep.dedup();
    keep.into_iter()
        .map(|i| (state.events[i].clone(), state.commits[i].to_string()))
        .collect()
}

/// The cache file of loop `id`: named by a hash, since loop names hold `/`.
fn path(store: &Store, id: &LoopId) -> PathBuf {
    store
        .common_dir()
        .join("hpp-cache")
        .join("loops")
        .join(&sha256_hex(id.as_str().as_bytes())[..32])
}

/// What identifies the loop machine an entry was verified under.
fn machine(spec: &LoopSpec) -> String {
    sha256_hex(format!("{spec:?}").as_bytes())
}
