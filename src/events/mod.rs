//! Loops in the store: append, read, verify, export and import event logs.
//!
//! The workflow behind `git hpp event ...`, `status`, `resume` and `loops`. It joins the pure
//! [`event_log`] rules and the [`event_loop`] machine with the [`store`]: each event is a commit
//! on `refs/hpp/loops/<loop>` whose tree holds `event.json`, the exact bytes of one line of the
//! reference's `events.jsonl`. A chain is intact only if both the commit chain and the hash chain
//! hold and the history walks the loop. Every write is refused before anything reaches the
//! repository unless the whole history plus the new event projects onto the loop, and the
//! gate it passes holds against the records it names ([`gates`]).

pub mod cache;
pub mod gates;

use serde::Serialize;
use serde_json::{Map, Value};

use hpp_core::event_log::{self, ChainReport, ChainStatus, LoggedEvent};
use hpp_core::event_loop::{self, LoopSpec, Projection};
use hpp_core::record::GENESIS_SHA256;
use hpp_core::secrets;
use hpp_store::refs::{self, LoopId};
use hpp_store::retry::{self, Attempt};
use hpp_store::{self as store, Chain, CommitId, NewRecord, Store};

pub use gates::GateOptions;

/// The blob that holds an event in its commit's tree.
pub const EVENT_FILE: &str = "event.json";

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
    let ref_name = refs::loop_log(id);
    let chain = store.read_chain(&ref_name, EVENT_FILE)?;
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
    let state = LoopState {
        id: id.clone(),
        ref_name,
        head: chain.tip.clone(),
        chain: chain_report,
        events,
        commits,
        projection,
    };
    Ok((state, chain))
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

/// Appends one event to a loop, refusing it unless the whole history plus the event walks the
/// loop and the gate it passes holds ([`gates::admit`]: the records it names are checked against
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
        // A long loop's verified tip is read from the cache: the events it keeps are the ones
        // the gates look at, and its projection carries the whole history of types.
        let state = cache::read_standing(store, spec, id)?;
        let before = state.require_intact()?;
        let history = before.history.iter().map(String::as_str).chain([kind]);
        let projection = spec.project(history)?;
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
        let beside: Vec<(&str, &[u8])> = signature
            .as_deref()
            .map(|s| (gates::SIGNATURE_FILE, s.as_bytes()))
            .into_iter()
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
            let event = LoggedEvent {
                seq,
                kind: kind.to_owned(),
                data: admitted.data.clone(),
                chained: true,
                sha256: hpp_core::record::sha256_hex(&bytes),
            };
            cache::remember_append(store, spec, &state, event, commit, &projection);
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
        Ok(_) => read(store, spec, id),
        Err(store::Error::Moved { .. }) => Err(Error::AlreadyExists { id: id.clone() }),
        Err(e) => Err(e.into()),
    }
}

/// Reads every loop under `refs/hpp/loops/`, sorted by name.
pub fn list(store: &Store, spec: &LoopSpec) -> Result<Vec<LoopState>, Error> {
    let mut out = Vec::new();
    for (name, _) in store.list(refs::LOOPS_PREFIX)? {
        let short = name.strip_prefix(refs::LOOPS_PREFIX).unwrap_or(&name);
        let id: LoopId = short
            .parse()
            .map_err(|_| Error::BadLoopRef { name: name.clone() })?;
        out.push(read(store, spec, &id)?);
    }
    Ok(out)
}
