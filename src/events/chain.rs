//! Reading a loop's log and verifying it: the whole chain, a tip from what it records about
//! itself, and the events a ref gained since a verified tip.
//!
//! CONCEPTS.md "event" and "loop". A loop is intact only if the commit chain (one parent per
//! event, the first none) and the hash chain both hold and the history walks the loop's
//! machine; a tip's `state.json` ([`TipState`]) is checked against the history whenever the
//! history is read, and trusted alone only for a tip verified here before ([`super::cache`]).
//! Nothing here reads the cache or judges a gate: this is the bottom of the loop's floor.

use hpp_core::event_log::{self, ChainReport, ChainStatus, EVENT_FILE, JOIN_FILE, LoggedEvent};
use hpp_core::event_loop::{self, KeptEvent, LoopSpec, STATE_FILE, TipState};
use hpp_core::record::GENESIS_SHA256;
use hpp_store::refs::{self, LoopId};
use hpp_store::{self as store, Chain, CommitId, Store};

use super::{Error, LoopState};

/// How far back from the tip a remembered commit is looked for before a loop is read whole:
/// beyond this, one whole verification costs about what the walk back would.
pub const EXTEND_LIMIT: usize = 4096;

/// Reads a loop and checks its chain; a loop with no ref is empty.
pub fn read(store: &Store, spec: &LoopSpec, id: &LoopId) -> Result<LoopState, Error> {
    Ok(read_with_chain(store, spec, id)?.0)
}

/// As [`read`], also returning the commit chain it read (each event's exact bytes), so a caller
/// that needs them reads the log once.
pub(super) fn read_with_chain(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
) -> Result<(LoopState, Chain), Error> {
    read_with_chain_at(store, spec, id, refs::loop_log(id))
}

/// Reads loop `id`'s history as `ref_name` holds it (a fetch's staged copy) and checks it as
/// [`read`] does: the commit chain, the hash chain, the transitions and the tip's state.
pub fn read_at(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    ref_name: &str,
) -> Result<LoopState, Error> {
    Ok(read_with_chain_at(store, spec, id, ref_name.to_owned())?.0)
}

/// As [`read_with_chain`], of loop `id`'s history as `ref_name` holds it (a fetch's staged
/// copy, say).
pub(super) fn read_with_chain_at(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    ref_name: String,
) -> Result<(LoopState, Chain), Error> {
    let chain = without_joins(store, store.read_chain(&ref_name, EVENT_FILE)?)?;
    let (chain_report, events) = check_chain(&chain, spec);
    let projection = if chain_report.is_broken() {
        None
    } else {
        Some(spec.project(events.iter().map(|e| e.kind.as_str()))?)
    };
    let commits = chain
        .links
        .iter()
        .take(events.len())
        .map(|l| l.commit.clone())
        .collect();
    let mut state = LoopState {
        id: id.clone(),
        ref_name,
        head: chain.tip.clone(),
        chain: chain_report,
        events,
        commits,
        projection,
    };
    check_recorded_state(store, spec, &mut state)?;
    Ok((state, chain))
}

/// What a tip commit records about where its loop stands.
pub(super) enum Recorded {
    /// Nothing: an event written before tips recorded their state, or imported.
    Nothing,
    /// A state projected under this machine.
    Usable(TipState),
    /// A state of another machine or schema: not ours to check.
    Other,
    /// A `state.json` that does not parse.
    Unreadable,
}

/// Reads the state recorded in `commit`'s tree.
pub(super) fn recorded_state(
    store: &Store,
    spec: &LoopSpec,
    commit: &CommitId,
) -> Result<Recorded, Error> {
    let Some(bytes) = store.read_commit_file(commit, STATE_FILE)? else {
        return Ok(Recorded::Nothing);
    };
    Ok(match serde_json::from_slice::<TipState>(&bytes) {
        Ok(recorded) if usable(spec, &recorded) => Recorded::Usable(recorded),
        Ok(_) => Recorded::Other,
        Err(_) => Recorded::Unreadable,
    })
}

/// The state a tip should record, from a verified `state` whose last event is the tip.
fn tip_state(spec: &LoopSpec, state: &LoopState) -> Option<TipState> {
    let projection = state.projection.as_ref()?;
    let (_, before) = state.events.split_last()?;
    Some(TipState {
        schema: event_loop::TIP_STATE_SCHEMA.to_owned(),
        machine: spec.machine_id(),
        seq: state.chain.events,
        state: projection.state.clone(),
        evidence_count: projection.evidence_count,
        legacy: state.chain.legacy,
        head_sha256: state.chain.head_sha256.clone()?,
        kept: kept(before)
            .into_iter()
            .map(|i| KeptEvent {
                seq: state.events[i].seq,
                commit: state.commits[i].to_string(),
            })
            .collect(),
    })
}

/// Checks what the tip of a verified chain records about itself against what the chain says:
/// a tip whose `state.json` disagrees (a forged or edited tip) breaks the chain at the tip.
/// Earlier events' records are never read: only a tip's is ever trusted, and only once it was
/// checked here or written on top of a checked one.
fn check_recorded_state(
    store: &Store,
    spec: &LoopSpec,
    state: &mut LoopState,
) -> Result<(), Error> {
    if state.chain.is_broken() {
        return Ok(());
    }
    let Some(tip) = state.head.clone() else {
        return Ok(());
    };
    let problem = match recorded_state(store, spec, &tip)? {
        Recorded::Nothing | Recorded::Other => None,
        Recorded::Unreadable => Some(format!("its {STATE_FILE} is not a loop state")),
        Recorded::Usable(recorded) => {
            let expected = tip_state(spec, state);
            (Some(&recorded) != expected.as_ref()).then(|| {
                format!(
                    "its {STATE_FILE} records {} after {} events with {} evidence, but its history leads to {}",
                    recorded.state,
                    recorded.seq,
                    recorded.evidence_count,
                    expected.map_or_else(
                        || "no state".to_owned(),
                        |e| format!(
                            "{} after {} events with {} evidence (or other kept events)",
                            e.state, e.seq, e.evidence_count
                        )
                    )
                )
            })
        }
    };
    if let Some(problem) = problem {
        let at = event_log::event_id(state.chain.events);
        state.chain.status = ChainStatus::Broken;
        state.chain.problem = Some(format!("{at} (commit {tip}): {problem}"));
        state.chain.first_divergent = Some(at);
        state.projection = None;
    }
    Ok(())
}

/// Reads a loop at a verified `tip` from what the tip records: its own event, its state, and
/// the earlier events a gate reads. `None` when the tip records no state usable here (the
/// caller reads the loop whole). The projection's history is empty: nothing before was read.
pub(super) fn at_tip(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    tip: &CommitId,
) -> Result<Option<LoopState>, Error> {
    let Recorded::Usable(recorded) = recorded_state(store, spec, tip)? else {
        return Ok(None);
    };
    let mut events = Vec::with_capacity(recorded.kept.len() + 1);
    let mut commits = Vec::with_capacity(recorded.kept.len() + 1);
    let wanted = recorded
        .kept
        .iter()
        .map(|k| (k.seq, store.commit_id(&k.commit)))
        .chain([(recorded.seq, Some(tip.clone()))]);
    for (seq, commit) in wanted {
        let Some(commit) = commit else {
            return Ok(None);
        };
        let Some(event) = store
            .read_commit_file(&commit, EVENT_FILE)?
            .and_then(|bytes| event_log::read_event(seq, &bytes))
        else {
            return Ok(None);
        };
        events.push(event);
        commits.push(commit);
    }
    if events.last().map(|e| e.sha256.as_str()) != Some(recorded.head_sha256.as_str()) {
        return Ok(None);
    }
    let Ok(walk) = spec.resume(&recorded.state, recorded.seq, recorded.evidence_count) else {
        return Ok(None);
    };
    Ok(Some(LoopState {
        id: id.clone(),
        ref_name: refs::loop_log(id),
        head: Some(tip.clone()),
        chain: ChainReport {
            schema: event_log::CHAIN_SCHEMA,
            status: if recorded.legacy == 0 {
                ChainStatus::Intact
            } else {
                ChainStatus::Legacy
            },
            events: recorded.seq,
            chained: recorded.seq - recorded.legacy.min(recorded.seq),
            legacy: recorded.legacy,
            first_divergent: None,
            problem: None,
            head_sha256: Some(recorded.head_sha256),
        },
        events,
        commits,
        projection: Some(walk.projection()),
    }))
}

/// Extends a verified loop state to the ref's tip: reads only the events after `before`'s tip
/// and verifies them from it (one parent each, hash chain, the loop's transitions), and checks
/// what the new tip records. `None` when the ref no longer descends from that tip within
/// [`EXTEND_LIMIT`] events, or when anything in the new events is wrong (the caller then
/// reads the loop whole, which names the problem). The events kept are those a gate reads.
pub(super) fn extend(
    store: &Store,
    spec: &LoopSpec,
    before: &LoopState,
) -> Result<Option<LoopState>, Error> {
    let (Some(from), Some(projection)) = (&before.head, &before.projection) else {
        return Ok(None);
    };
    let Some(chain) = store.read_chain_since(&before.ref_name, EVENT_FILE, from, EXTEND_LIMIT)?
    else {
        return Ok(None);
    };
    if chain
        .links
        .iter()
        .any(|l| l.parents.len() != 1 || l.payload.is_none())
    {
        return Ok(None);
    }
    let Ok(walk) = spec.resume(
        &projection.state,
        before.chain.events,
        projection.evidence_count,
    ) else {
        return Ok(None);
    };
    let start = event_log::Start {
        before: before.chain.events,
        legacy: before.chain.legacy,
        prev_sha256: before
            .chain
            .head_sha256
            .clone()
            .unwrap_or_else(|| GENESIS_SHA256.to_owned()),
        walk: Some(walk),
    };
    let entries = chain.links.iter().enumerate().map(|(i, l)| {
        (
            before.chain.events + i + 1,
            l.payload.as_deref().expect("checked above"),
        )
    });
    let verified = event_log::verify_from(start, entries);
    if verified.report.is_broken() {
        return Ok(None);
    }
    let walk = verified.walk.expect("a walk was given");
    let mut projection_now = walk.projection();
    let mut history = projection.history.clone();
    history.append(&mut projection_now.history);
    projection_now.history = history;
    let mut events = before.events.clone();
    let mut commits = before.commits.clone();
    events.extend(verified.events);
    commits.extend(chain.links.into_iter().map(|l| l.commit));
    let mut state = LoopState {
        id: before.id.clone(),
        ref_name: before.ref_name.clone(),
        head: chain.tip,
        chain: verified.report,
        events,
        commits,
        projection: Some(projection_now),
    };
    // Checked against every event read (the tip's kept events are those of the events before
    // it), then only the kept ones are carried on.
    check_recorded_state(store, spec, &mut state)?;
    if state.chain.is_broken() {
        return Ok(None);
    }
    let keep = kept(&state.events);
    state.events = keep.iter().map(|&i| state.events[i].clone()).collect();
    state.commits = keep.iter().map(|&i| state.commits[i].clone()).collect();
    Ok(Some(state))
}

/// The events a gate's standing is read from, as indexes into `events`: the first naming the
/// maker, and the latest of each type, oldest first.
pub(super) fn kept(events: &[LoggedEvent]) -> Vec<usize> {
    let mut keep: Vec<usize> = Vec::new();
    if let Some(i) = events
        .iter()
        .position(|e| event_loop::gates::Named::from_data(&e.data).maker.is_some())
    {
        keep.push(i);
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, event) in events.iter().enumerate().rev() {
        if seen.insert(event.kind.as_str()) {
            keep.push(i);
        }
    }
    keep.sort_unstable();
    keep.dedup();
    keep
}

/// Checks a commit chain: each commit has one parent (the first none) and an `event.json`,
/// and the events pass the chain rules and walk the loop.
fn check_chain(chain: &Chain, spec: &LoopSpec) -> (ChainReport, Vec<LoggedEvent>) {
    let mut structural = None;
    let mut entries = Vec::with_capacity(chain.links.len());
    for (i, link) in chain.links.iter().enumerate() {
        let position = i + 1;
        let expected_parents = usize::from(i > 0);
        let problem = if link.parents.len() != expected_parents {
            Some(format!(
                "{} (commit {}) has {} parents: an event commit has exactly one parent, the previous event (the first has none)",
                event_log::event_id(position),
                link.commit,
                link.parents.len()
            ))
        } else if link.payload.is_none() {
            Some(format!(
                "{} (commit {}) has no {EVENT_FILE}",
                event_log::event_id(position),
                link.commit
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            structural = Some((position, problem));
            break;
        }
        entries.push((position, link.payload.as_deref().expect("checked above")));
    }
    let (mut report, events) = event_log::verify(entries, Some(spec));
    if let (false, Some((position, problem))) = (report.is_broken(), structural) {
        report.status = ChainStatus::Broken;
        report.first_divergent = Some(event_log::event_id(position));
        report.problem = Some(problem);
    }
    if let Some(at) = report.first_divergent.as_mut() {
        // In the store every entry is an event commit: name it as an event, not a file line.
        if let Some(line) = at.strip_prefix("line ") {
            *at = format!("event:{line}");
        }
    }
    (report, events)
}

/// A [`TipState`] is used only when it names this machine.
fn usable(spec: &LoopSpec, recorded: &TipState) -> bool {
    recorded.schema == event_loop::TIP_STATE_SCHEMA && recorded.machine == spec.machine_id()
}

/// Drops the joins from a loop's first-parent chain: a commit with two parents whose first
/// parent is the link before it, whose event is that link's event byte for byte, and which
/// carries a [`JOIN_FILE`]. Anything else with two parents stays, and the chain check calls it
/// broken.
fn without_joins(store: &Store, chain: Chain) -> Result<Chain, store::Error> {
    if chain.links.iter().all(|l| l.parents.len() < 2) {
        return Ok(chain);
    }
    let mut links: Vec<store::Link> = Vec::with_capacity(chain.links.len());
    for link in chain.links {
        let join = link.parents.len() == 2
            && links.last().is_some_and(|previous| {
                previous.commit == link.parents[0] && previous.payload == link.payload
            })
            && store.read_commit_file(&link.commit, JOIN_FILE)?.is_some();
        if !join {
            links.push(link);
        }
    }
    Ok(Chain {
        tip: chain.tip,
        links,
    })
}
