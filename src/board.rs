//! The board's workflow: read the log from `refs/hpp/board/log`, decide, append by
//! compare-and-swap. A writer that loses the race re-reads the new tip, decides again against
//! it (so no rule is checked against a stale board) and retries, by the store's one retry rule ([`retry::retry`]).

use serde_json::Value;

use hpp_core::board::{Event, Request, decide};
use hpp_core::record::canonical_json;
use hpp_store::retry::{self, Attempt};
use hpp_store::{self as store, CommitId, NewRecord, Store, refs};

/// The schema of each write's `events.json`: `{"schema": SCHEMA, "events": [...]}`.
pub const SCHEMA: &str = "hpp.board/v1";

/// The blob of each board commit: the 1..n events of one write.
pub const FILE: &str = "events.json";

/// Why reading or writing the board failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A board rule refused the request.
    #[error(transparent)]
    Rule(#[from] hpp_core::board::Error),
    /// A commit of the log does not hold a list of board events.
    #[error("the board log is corrupt at {commit}: {detail}")]
    Corrupt {
        /// The commit.
        commit: String,
        /// What is wrong.
        detail: String,
    },
    /// The log holds an event no rule allows after the ones before it.
    #[error("the board log holds an invalid event (#{}): {detail}", index + 1)]
    Invalid {
        /// Where, counting from 0.
        index: usize,
        /// Why.
        detail: String,
    },
    /// Too many writers at once.
    #[error("the board log kept moving: gave up after {0} attempts")]
    Contended(usize),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// The board as read: its tip and every event, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Board {
    /// The log's tip (`None`: the board is empty).
    pub tip: Option<CommitId>,
    /// Every event, in the order written.
    pub events: Vec<Event>,
}

/// One write of the log, as stored.
/// The schema is borrowed from the bytes read when it can be (it always is, unescaped): one
/// allocation fewer for each of a fetch's 10,000 writes.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Write<'a> {
    #[serde(borrow)]
    schema: std::borrow::Cow<'a, str>,
    #[serde(deserialize_with = "events_as_written")]
    events: Vec<Event>,
}

/// The write `bytes` hold when every event is an item's, read straight into item events;
/// `None` leaves it to the full read (and its refusal). `Event` is an untagged enum, which
/// serde reads by buffering each event and trying a competition first; an event can only be
/// a competition's if its kind is the string `competition`, so bytes without that word hold
/// item events only, which the full read would give too, only after buffering each.
fn items_only(text: &str) -> Option<Write<'_>> {
    #[derive(serde::Deserialize)]
    struct Items<'a> {
        #[serde(borrow)]
        schema: std::borrow::Cow<'a, str>,
        #[serde(deserialize_with = "items_as_events")]
        events: Vec<Event>,
    }
    // Built once: building the searcher was a sixth of the search of a one-event write.
    static COMPETITION: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"competition"));
    if COMPETITION.find(text.as_bytes()).is_some() {
        return None;
    }
    let items: Items<'_> = serde_json::from_str(text).ok()?;
    Some(Write {
        schema: items.schema,
        events: items.events,
    })
}

/// A write's events in a vector as long as the list: serde's own starts at four (an `Event`
/// is 448 bytes), and a fetch that reads 10,000 one-event writes would touch 18 MB of new
/// memory where 4.5 MB hold them; its page faults were most of the parse.
fn events_as_written<'de, D>(d: D) -> Result<Vec<Event>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    d.deserialize_seq(Events::<Event>(std::marker::PhantomData))
}

/// As [`events_as_written`], each element read as an item's event: straight into the vector
/// the write keeps, not into one of item events copied into it after.
fn items_as_events<'de, D>(d: D) -> Result<Vec<Event>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    d.deserialize_seq(Events::<hpp_core::board::ItemEvent>(
        std::marker::PhantomData,
    ))
}

/// Reads a list of `T`, each kept as the [`Event`] it is.
struct Events<T>(std::marker::PhantomData<T>);

impl<'de, T: serde::Deserialize<'de> + Into<Event>> serde::de::Visitor<'de> for Events<T> {
    type Value = Vec<Event>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Event>, A::Error> {
        let mut events = Vec::with_capacity(seq.size_hint().unwrap_or(1).clamp(1, 64));
        while let Some(event) = seq.next_element::<T>()? {
            events.push(event.into());
        }
        Ok(events)
    }
}

/// What a write appended.
#[derive(Debug, Clone)]
pub struct Written {
    /// The commit of the write.
    pub commit: CommitId,
    /// The events appended.
    pub events: Vec<Event>,
    /// How many attempts it took.
    pub attempts: usize,
}

/// Reads every board event: the log as a set (two machines' writes joined by a merge are
/// read once each, in the graph's order), every rule checked.
pub fn read(store: &Store) -> Result<Board, Error> {
    board_of(store.read_set(refs::BOARD_LOG, FILE)?)
}

fn board_of(chain: store::Chain) -> Result<Board, Error> {
    let mut events = Vec::new();
    for link in &chain.links {
        events.extend(parse_write(&link.commit, link.payload.as_deref())?);
    }
    // A write that did not come through the rules (by hand, by another tool) is found here,
    // before any rule is checked against it.
    if let Err((index, detail)) = hpp_core::board::validate(&events) {
        return Err(Error::Invalid { index, detail });
    }
    Ok(Board {
        tip: chain.tip,
        events,
    })
}

/// The events of one write of the log: the commit and its blob.
fn parse_write(commit: &CommitId, payload: Option<&[u8]>) -> Result<Vec<Event>, Error> {
    let corrupt = |detail: String| Error::Corrupt {
        commit: commit.to_string(),
        detail,
    };
    let bytes = payload.ok_or_else(|| corrupt(format!("no {FILE}")))?;
    // Checked as text once, whole: read from bytes, the parser checked each string again.
    let text = std::str::from_utf8(bytes).map_err(|e| corrupt(format!("not UTF-8: {e}")))?;
    let write = match items_only(text) {
        Some(write) => write,
        None => serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?,
    };
    if write.schema != SCHEMA {
        return Err(corrupt(format!(
            "schema {:?}, expected {SCHEMA}",
            write.schema
        )));
    }
    if write.events.is_empty() {
        return Err(corrupt("a write with no event".into()));
    }
    Ok(write.events)
}

/// Board writes already read in this command, by commit: a fetch checks the remote's board
/// before taking it in, then the merge of both boards, and the second check reads and parses
/// only the writes the first did not.
#[derive(Debug, Default)]
pub struct Writes(std::collections::HashMap<CommitId, Vec<Event>, foldhash::fast::RandomState>);

/// Checks the board as it stands at `commit` (a staged board, or a merge of two machines' logs
/// before the ref moves to it) as [`read`] checks the tip: every write reads, every rule holds
/// over the log's order. Reads only the writes `writes` lacks, and keeps them.
pub fn check_at(store: &Store, commit: &CommitId, writes: &mut Writes) -> Result<(), Error> {
    let entries = store.read_set_with(
        refs::BOARD_LOG,
        commit,
        FILE,
        |c| writes.0.contains_key(c),
        // A refusal boxed: each of the 10,000 results is moved twice, and an error held
        // inline made every one 200 bytes larger.
        |c, bytes| parse_write(c, bytes.as_deref()).map_err(Box::new),
    )?;
    let mut order = Vec::with_capacity(entries.len());
    writes
        .0
        .reserve(entries.iter().filter(|e| e.read.is_some()).count());
    for entry in entries {
        if let Some(parsed) = entry.read {
            writes
                .0
                .insert(entry.commit.clone(), parsed.map_err(|e| *e)?);
        }
        order.push(entry.commit);
    }
    let events = order.iter().flat_map(|commit| &writes.0[commit]);
    hpp_core::board::validate(events).map_err(|(index, detail)| Error::Invalid { index, detail })
}

/// Decides `request` against the board and appends what it produced, in one commit.
pub fn write(store: &Store, request: &Request, ts: &str) -> Result<Written, Error> {
    let written = retry::retry(|attempt| {
        let board = read(store)?;
        let events = decide(&board.events, request, ts)?;
        let value = serde_json::to_value(Write {
            schema: SCHEMA.into(),
            events: events.clone(),
        })
        .expect("board events serialise");
        let bytes = canonical_json(&value);
        let message = summary(&events);
        let record = NewRecord {
            file: FILE,
            bytes: &bytes,
            message: &message,
        };
        let appended = Attempt::of(store.append(refs::BOARD_LOG, board.tip.as_ref(), &record))?;
        Ok::<_, Error>(appended.map(|commit| Written {
            commit,
            events,
            attempts: attempt,
        }))
    })?;
    written.ok_or(Error::Contended(retry::ATTEMPTS))
}

/// The commit message: one line per event (`hpp board: ITEM STATE`).
fn summary(events: &[Event]) -> String {
    let lines: Vec<String> = events
        .iter()
        .map(|e| match e {
            Event::Item(e) => format!("{} {}", e.item_id, e.state),
            Event::Competition(e) => format!("competition {} {}", e.task_id, e.state.as_str()),
        })
        .collect();
    format!("hpp board: {}", lines.join(", "))
}

/// The events as one JSON value (for `status`).
pub fn to_value(events: &[&Event]) -> Value {
    serde_json::to_value(events).expect("board events serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A commit id to name in refusals (made by a real store: outside it, ids are not made).
    fn commit() -> CommitId {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = Store::init(dir.path()).expect("a repository");
        let record = NewRecord {
            file: FILE,
            bytes: b"{}",
            message: "test",
        };
        store
            .append("refs/hpp/test", None, &record)
            .expect("a commit")
    }

    /// What the full read (the untagged `Event`) makes of `bytes`.
    fn full(bytes: &[u8]) -> Result<Vec<Event>, String> {
        serde_json::from_slice::<Write>(bytes)
            .map(|w| w.events)
            .map_err(|e| e.to_string())
    }

    const ITEM: &str = r#"{"ts":"2026-01-01T00:00:00Z","item_id":"I-1","state":"CLAIMED","lane_id":"l","role":"executor","model":"m"}"#;
    const COMPETITION: &str = r#"{"ts":"2026-01-01T00:00:00Z","kind":"competition","task_id":"T1","state":"DECLARED","candidates":["a","b"],"lane_id":"l","role":"coordinator","model":"m"}"#;

    fn write(events: &[&str]) -> Vec<u8> {
        format!(r#"{{"schema":"{SCHEMA}","events":[{}]}}"#, events.join(",")).into_bytes()
    }

    #[test]
    fn item_writes_read_straight_as_the_full_read_reads_them() {
        for events in [vec![ITEM], vec![ITEM, ITEM]] {
            let bytes = write(&events);
            let fast = items_only(std::str::from_utf8(&bytes).unwrap())
                .expect("items only")
                .events;
            assert_eq!(Ok(fast.clone()), full(&bytes));
            assert_eq!(parse_write(&commit(), Some(&bytes)).unwrap(), fast);
        }
    }

    #[test]
    fn control_a_competition_or_a_bad_item_goes_to_the_full_read() {
        let mixed = write(&[ITEM, COMPETITION]);
        assert!(
            items_only(std::str::from_utf8(&mixed).unwrap()).is_none(),
            "a competition event is not an item's"
        );
        let read = parse_write(&commit(), Some(&mixed)).unwrap();
        assert!(matches!(read[1], Event::Competition(_)), "{read:?}");
        // An item missing its lane: refused with the full read's words.
        let bad = write(&[&ITEM.replace(r#","lane_id":"l""#, "")]);
        assert!(items_only(std::str::from_utf8(&bad).unwrap()).is_none());
        let refused = parse_write(&commit(), Some(&bad)).unwrap_err().to_string();
        assert!(refused.contains(&full(&bad).unwrap_err()), "{refused}");
        // Bytes that are not text are refused before any is parsed.
        let mut not_text = write(&[ITEM]);
        not_text[20] = 0xff;
        let refused = parse_write(&commit(), Some(&not_text))
            .unwrap_err()
            .to_string();
        assert!(refused.contains("not UTF-8"), "{refused}");
    }
}
