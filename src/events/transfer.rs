//! A loop's log in and out as the reference's `events.jsonl`: export writes each event's exact
//! bytes, import verifies a file with the reference's rules and records it as a new loop.

use hpp_core::event_log::{self, EVENT_FILE};
use hpp_core::event_loop::LoopSpec;
use hpp_core::secrets;
use hpp_store::refs::{self, LoopId};
use hpp_store::{self as store, NewRecord, Store};

use super::{Error, LoopState, cache, chain};

/// Returns the loop's events as the reference's `events.jsonl`: each event's exact bytes and
/// `\n`. A broken or empty loop is refused.
pub fn export(store: &Store, spec: &LoopSpec, id: &LoopId) -> Result<Vec<u8>, Error> {
    let (state, log) = chain::read_with_chain(store, spec, id)?;
    state.require_intact()?;
    if state.events.is_empty() {
        return Err(Error::NoEvents { id: id.clone() });
    }
    let mut out = Vec::new();
    for link in &log.links {
        out.extend_from_slice(
            link.payload
                .as_deref()
                .expect("an intact chain has a payload on every link"),
        );
        out.push(b'\n');
    }
    Ok(out)
}

/// The longest event line an import reads: 2 MiB, the cap on any JSON document read whole.
pub const MAX_EVENT_LINE: usize = 2 << 20;

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
    // Each line is parsed on its own and its data dropped once checked, so the file is held as
    // its bytes plus one parsed line; a line is bounded as any JSON document read whole is.
    if let Some((line, text)) = entries.iter().find(|(_, text)| text.len() > MAX_EVENT_LINE) {
        return Err(Error::ImportRefused(format!(
            "line {line} is {} bytes: an event is at most 2 MiB, the cap on a JSON document read whole",
            text.len()
        )));
    }
    let (report, events) = event_log::verify_lean(entries.iter().copied(), Some(spec));
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
