//! Loops in the store: append, read, verify, export and import event logs.
//!
//! The workflow behind `git hpp event ...`, `status`, `resume` and `loops`. It joins the pure
//! [`event_log`] rules and the [`event_loop`] machine with the [`store`]: each event is a commit
//! on `refs/hpp/loops/<loop>` whose tree holds `event.json`, the exact bytes of one line of the
//! reference's `events.jsonl`. A chain is intact only if both the commit chain and the hash chain
//! hold and the history walks the loop. Every write is refused before anything reaches the
//! repository unless the new event takes a transition from the state the verified history left
//! the loop in, and the gate it passes holds against the records it names ([`gates`]). That
//! state is read from the tip when the tip was verified here before (its `state.json`, see
//! [`cache`]), else from the whole history, verified.

pub mod cache;
pub mod gates;
pub mod reconcile;

use serde::Serialize;
use serde_json::{Map, Value};

use hpp_core::event_log::{self, ChainReport, ChainStatus, LoggedEvent};
use hpp_core::event_loop::{self, KeptEvent, LoopSpec, Projection, TipState};
use hpp_core::record::GENESIS_SHA256;
use hpp_core::secrets;
use hpp_store::refs::{self, LoopId};
use hpp_store::retry::{self, Attempt};
use hpp_store::{self as store, Chain, CommitId, NewRecord, Store};

pub use gates::GateOptions;

/// The blob that holds an event in its commit's tree.
pub const EVENT_FILE: &str = "event.json";

/// The blob beside it that records where the loop stands after the event
/// ([`hpp_core::event_loop::TipState`]): what an append on this tip checks the next event
/// against, without reading the history.
pub const STATE_FILE: &str = "state.json";

/// Why a loop operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The event does not follow the loop (the reference's refusal message).
    #[error(transparent)]
    Transition(#[from] event_loop::Error),
    /// The loop's chain is broken, so nothing may be appended or exported.
    #[error("loop {id} is broken at {at}: {problem}")]
    Broken {
        /// The loop.
        id: LoopId,
        /// The first divergent event.
        at: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A ref under `refs/hpp/loops/` whose name is not a loop name (written by another tool).
    #[error("{name}: is not a valid loop name")]
    BadLoopRef {
        /// The ref.
        name: String,
    },
    /// The event type is empty.
    #[error("event type must be a non-empty string")]
    EmptyType,
    /// Event data looks like it carries a secret; records are pushed with the repository.
    #[error(
        "event data looks like it carries a secret; records under refs/hpp are pushed with the repository"
    )]
    Secret,
    /// The loop's name looks like a secret.
    #[error(transparent)]
    SecretName(#[from] secrets::SecretName),
    /// Every attempt lost the race for the loop's ref.
    #[error("loop {id} kept moving: gave up after {attempts} attempts")]
    Contended {
        /// The loop.
        id: LoopId,
        /// How many attempts were made.
        attempts: usize,
    },
    /// Export of a loop that has no events.
    #[error("loop {id} has no events")]
    NoEvents {
        /// The loop.
        id: LoopId,
    },
    /// Import into a loop that already exists.
    #[error("loop {id} already has events: import into a new loop with --loop NAME")]
    AlreadyExists {
        /// The loop.
        id: LoopId,
    },
    /// The imported file breaks the chain rules or the loop.
    #[error("refusing to import: {problem} (first divergent: {at})")]
    ImportBroken {
        /// The first divergent event or line.
        at: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The imported file cannot become a loop as it is.
    #[error("refusing to import: {0}")]
    ImportRefused(String),
    /// A gate's condition does not hold: the gate, what it requires, the record it looked at.
    #[error(transparent)]
    Gate(#[from] event_loop::gates::Refusal),
    /// The person's key could not sign the approval.
    #[error(transparent)]
    Sign(#[from] crate::sign::Error),
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A loop as read from its ref and checked.
#[derive(Debug, Clone, Serialize)]
pub struct LoopState {
    /// The loop's name.
    #[serde(rename = "loop")]
    pub id: LoopId,
    /// The ref holding its log.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// The tip commit: the anchor of the commit chain.
    pub head: Option<CommitId>,
    /// The chain report.
    pub chain: ChainReport,
    /// The events that passed the rules, oldest first.
    #[serde(skip)]
    pub events: Vec<LoggedEvent>,
    /// The commit of each of those events.
    #[serde(skip)]
    pub commits: Vec<CommitId>,
    /// The projection, when the chain is not broken.
    pub projection: Option<Projection>,
}

impl LoopState {
    fn broken_error(&self) -> Option<Error> {
        self.chain.is_broken().then(|| Error::Broken {
            id: self.id.clone(),
            at: self.chain.first_divergent.clone().unwrap_or_default(),
            problem: self.chain.problem.clone().unwrap_or_default(),
        })
    }

    /// Returns the projection, or refuses a broken chain.
    pub fn require_intact(&self) -> Result<&Projection, Error> {
        match (self.broken_error(), &self.projection) {
            (Some(e), _) => Err(e),
            (None, Some(p)) => Ok(p),
            (None, None) => unreachable!("an unbroken chain always projects"),
        }
    }
}

/// The outcome of an append.
#[derive(Debug, Clone, Serialize)]
pub struct Appended {
    /// The loop's name.
    #[serde(rename = "loop")]
    pub id: LoopId,
    /// The new event's commit, now the loop's head.
    pub commit: CommitId,
    /// The new event's id (`event:<n>`).
    pub event: String,
    /// The projection after the append.
    pub projection: Projection,
    /// How many read-check-swap rounds it took (1 when nobody else was writing).
    pub attempts: usize,
}

/// Reads a loop and checks its chain; a loop with no ref is empty.
pub fn read(store: &Store, spec: &LoopSpec, id: &LoopId) -> Result<LoopState, Error> {
    Ok(read_with_chain(store, spec, id)?.0)
}

/// As [`read`], also returning the commit chain it read (each event's exact bytes), so a caller
/// that needs them reads the log once.
fn read_with_chain(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
) -> Result<(LoopState, Chain), Error> {
    read_with_chain_at(store, spec, id, refs::loop_log(id))
}

/// As [`read_with_chain`], of loop `id`'s history as `ref_name` holds it (a fetch's staged
/// copy, say).
fn read_with_chain_at(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    ref_name: String,
) -> Result<(LoopState, Chain), Error> {
    let chain = reconcile::without_joins(store, store.read_chain(&ref_name, EVENT_FILE)?)?;
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
pub(crate) enum Recorded {
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
pub(crate) fn recorded_state(
    store: &Store,
    spec: &LoopSpec,
    commit: &CommitId,
) -> Result<Recorded, Error> {
    let Some(bytes) = store.read_commit_file(commit, STATE_FILE)? else {
        return Ok(Recorded::Nothing);
    };
    Ok(match serde_json::from_slice::<TipState>(&bytes) {
        Ok(recorded) if cache::usable(spec, &recorded) => Recorded::Usable(recorded),
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
pub(crate) fn at_tip(
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
/// [`cache::EXTEND_LIMIT`] events, or when anything in the new events is wrong (the caller then
/// reads the loop whole, which names the problem). The events kept are those a gate reads.
pub(crate) fn extend(
    store: &Store,
    spec: &LoopSpec,
    before: &LoopState,
) -> Result<Option<LoopState>, Error> {
    let (Some(from), Some(projection)) = (&before.head, &before.projection) else {
        return Ok(None);
    };
    let Some(chain) =
        store.read_chain_since(&before.ref_name, EVENT_FILE, from, cache::EXTEND_LIMIT)?
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
pub(crate) fn kept(events: &[LoggedEvent]) -> Vec<usize> {
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

/// Appends one event to a loop, refusing it unless it takes a transition from where the
/// verified history left the loop (read from a tip verified before, [`cache::read_tip`]) and
/// the gate it passes holds ([`gates::admit`]: the records it names are checked against
/// the workspace tree now). Concurrent writers never lose an event: a writer whose
/// compare-and-swap fails re-reads the tip, re-checks the transition and the gate against it
/// and tries again, by the store's one retry rule ([`retry::retry`]).
pub fn append(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    kind: &str,
    data: Map<String, Value>,
    options: &GateOptions<'_>,
) -> Result<Appended, Error> {
    if kind.trim().is_empty() {
        return Err(Error::EmptyType);
    }
    let data_text = String::from_utf8(hpp_core::record::canonical_json(&Value::Object(
        data.clone(),
    )))
    .expect("canonical JSON is UTF-8");
    if secrets::looks_secret(&data_text) || secrets::looks_secret(kind) {
        return Err(Error::Secret);
    }
    secrets::check_name("the loop name", id.as_str())?;
    // The tree the gates measure against: the workspace as it is now (none in a bare
    // repository, where only a loop without conditions can move).
    let tree = if spec.conditions().is_empty() {
        None
    } else {
        Some(store.snapshot()?)
    };
    let appended = retry::retry(|attempt| {
        // A verified tip is read alone (its recorded state and the events the gates look at),
        // so the append costs the same however long the loop is; one more step is checked.
        let state = cache::read_tip(store, spec, id)?;
        let before = state.require_intact()?;
        let mut walk = spec.resume(&before.state, before.event_count, before.evidence_count)?;
        walk.step(kind)?;
        let mut projection = walk.projection();
        if before.history.len() == before.event_count {
            projection.history = before
                .history
                .iter()
                .cloned()
                .chain([kind.to_owned()])
                .collect();
        }
        let admitted = match &tree {
            Some(tree) => gates::admit(store, spec, &state, tree, kind, data.clone(), options)?,
            None => gates::Admitted {
                data: data.clone(),
                sign: None,
            },
        };
        let seq = state.chain.events + 1;
        let prev = state.chain.head_sha256.as_deref().unwrap_or(GENESIS_SHA256);
        let bytes = event_log::new_event(seq, kind, admitted.data.clone(), prev);
        let signature = match admitted.sign {
            Some(signing) => {
                let armored = signing.sign_for(crate::sign::Purpose::Person, &bytes)?;
                let gate = event_loop::gates::Stamp::of(&admitted.data)
                    .map(|s| s.name)
                    .unwrap_or_default();
                gates::check_person(
                    &bytes,
                    armored.as_bytes(),
                    signing.signer.as_str(),
                    options,
                    &gate,
                )?;
                Some(armored)
            }
            None => None,
        };
        let recorded = TipState {
            schema: event_loop::TIP_STATE_SCHEMA.to_owned(),
            machine: spec.machine_id(),
            seq,
            state: projection.state.clone(),
            evidence_count: projection.evidence_count,
            legacy: state.chain.legacy,
            head_sha256: hpp_core::record::sha256_hex(&bytes),
            kept: kept(&state.events)
                .into_iter()
                .map(|i| KeptEvent {
                    seq: state.events[i].seq,
                    commit: state.commits[i].to_string(),
                })
                .collect(),
        };
        let recorded = hpp_core::record::canonical_json(
            &serde_json::to_value(&recorded).expect("a loop state serialises"),
        );
        let beside: Vec<(&str, &[u8])> = signature
            .as_deref()
            .map(|s| (gates::SIGNATURE_FILE, s.as_bytes()))
            .into_iter()
            .chain([(STATE_FILE, recorded.as_slice())])
            .collect();
        let message = format!("hpp event {seq}: {kind}");
        let record = NewRecord {
            file: EVENT_FILE,
            bytes: &bytes,
            message: &message,
        };
        let written =
            Attempt::of(store.append_with(&state.ref_name, state.head.as_ref(), &record, &beside))?;
        if let Attempt::Done(commit) = &written {
            cache::mark(store, spec, id, commit);
        }
        Ok::<_, Error>(written.map(|commit| Appended {
            id: id.clone(),
            commit,
            event: event_log::event_id(seq),
            projection,
            attempts: attempt,
        }))
    })?;
    appended.ok_or_else(|| Error::Contended {
        id: id.clone(),
        attempts: retry::ATTEMPTS,
    })
}

/// Returns the loop's events as the reference's `events.jsonl`: each event's exact bytes and
/// `\n`. A broken or empty loop is refused.
pub fn export(store: &Store, spec: &LoopSpec, id: &LoopId) -> Result<Vec<u8>, Error> {
    let (state, chain) = read_with_chain(store, spec, id)?;
    state.require_intact()?;
    if state.events.is_empty() {
        return Err(Error::NoEvents { id: id.clone() });
    }
    let mut out = Vec::new();
    for link in &chain.links {
        out.extend_from_slice(
            link.payload
                .as_deref()
                .expect("an intact chain has a payload on every link"),
        );
        out.push(b'\n');
    }
    Ok(out)
}

/// Verifies a reference `events.jsonl` with the reference's rules and records it as a new loop,
/// one commit per line holding that line's exact bytes. Refuses a broken chain (naming the first
/// divergent event), a history the loop forbids, blank lines between events, secret-shaped lines,
/// and a loop that already exists. Nothing is written unless every line is accepted.
pub fn import(
    store: &Store,
    spec: &LoopSpec,
    id: &LoopId,
    bytes: &[u8],
) -> Result<LoopState, Error> {
    let entries = event_log::split_lines(bytes);
    let (report, events) = event_log::verify(entries.iter().copied(), Some(spec));
    if report.is_broken() {
        return Err(Error::ImportBroken {
            at: report.first_divergent.unwrap_or_default(),
            problem: report.problem.unwrap_or_default(),
        });
    }
    if events.is_empty() {
        return Err(Error::ImportRefused("the file holds no events".into()));
    }
    if let Some(i) = entries
        .iter()
        .enumerate()
        .position(|(i, (line, _))| *line != i + 1)
    {
        return Err(Error::ImportRefused(format!(
            "line {} is blank: in the git store events are contiguous, so remove blank lines between events",
            i + 1
        )));
    }
    if let Some((line, _)) = entries
        .iter()
        .find(|(_, text)| secrets::looks_secret(&String::from_utf8_lossy(text)))
    {
        return Err(Error::ImportRefused(format!(
            "line {line} looks like it carries a secret; records under refs/hpp are pushed with the repository"
        )));
    }
    let ref_name = refs::loop_log(id);
    if store.tip(&ref_name)?.is_some() {
        return Err(Error::AlreadyExists { id: id.clone() });
    }
    let messages: Vec<String> = events
        .iter()
        .map(|e| format!("hpp event {}: {} (imported)", e.seq, e.kind))
        .collect();
    let records: Vec<NewRecord<'_>> = entries
        .iter()
        .zip(&messages)
        .map(|((_, bytes), message)| NewRecord {
            file: EVENT_FILE,
            bytes,
            message,
        })
        .collect();
    match store.create_chain(&ref_name, &records) {
        // Read back as `status` would: a long loop's standing is remembered, so the first
        // append on it does not verify it whole again.
        Ok(_) => cache::read_standing(store, spec, id),
        Err(store::Error::Moved { .. }) => Err(Error::AlreadyExists { id: id.clone() }),
        Err(e) => Err(e.into()),
    }
}

/// Reads every loop under `refs/hpp/loops/`, sorted by name, for showing where each stands:
/// a long loop's tip verified before is read from what was remembered of it
/// ([`cache::read_standing`]), so listing costs what changed since, not every event again.
pub fn list(store: &Store, spec: &LoopSpec) -> Result<Vec<LoopState>, Error> {
    let mut out = Vec::new();
    for (name, _) in store.list(refs::LOOPS_PREFIX)? {
        let short = name.strip_prefix(refs::LOOPS_PREFIX).unwrap_or(&name);
        let id: LoopId = short
            .parse()
            .map_err(|_| Error::BadLoopRef { name: name.clone() })?;
        out.push(cache::read_standing(store, spec, &id)?);
    }
    Ok(out)
}
