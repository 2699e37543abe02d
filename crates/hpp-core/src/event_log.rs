//! The event log: hash-chained events, in the reference harness's `hpp.event-chain/v1` format.
//!
//! CONCEPTS.md "event" and "loop": each event is one compact, sorted-key JSON object
//! `{"data","id":"event:<n>","prev_sha256","seq":<n>,"type"}` whose `prev_sha256` is the sha256
//! of the previous event's exact bytes (the first links to the sha256 of nothing). In the git
//! store each event is one commit whose `event.json` blob holds exactly those bytes, so the
//! commit chain and the hash chain describe the same history and an export is byte for byte the
//! reference's `events.jsonl`. This module is pure: it builds event bytes and checks sequences of
//! them with the reference's rules (legacy lines without `prev_sha256` are tolerated, as there).

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::event_loop::{LoopSpec, Walk};
use crate::record::{GENESIS_SHA256, canonical_json, is_sha256_hex, sha256_hex};

/// The schema name of a chain report.
pub const CHAIN_SCHEMA: &str = "hpp.event-chain/v1";

/// The blob that holds an event in its commit's tree: the exact bytes of one line of the
/// reference's `events.jsonl`.
pub const EVENT_FILE: &str = "event.json";

/// The blob beside [`EVENT_FILE`] that holds a person's signature (SSHSIG) over the event's bytes.
pub const SIGNATURE_FILE: &str = "event.sig";

/// The blob a *join* adds beside the kept event when a person reconciles a loop two machines
/// appended to (`hpp.loop-reconcile/v1`): a commit with two parents that carries it is skipped
/// when the loop is read.
pub const JOIN_FILE: &str = "reconcile.json";

/// The blob beside [`JOIN_FILE`] that holds the reconciling person's signature (SSHSIG, their
/// namespace) over the join record's bytes; required when signatures are.
pub const JOIN_SIGNATURE_FILE: &str = "reconcile.sig";

/// Returns the id of the event at 1-based position `seq`: `event:<seq>`.
pub fn event_id(seq: usize) -> String {
    format!("event:{seq}")
}

/// The deepest `data` an event may carry, counting the data object as level 1: the event
/// object around it makes it one level deeper, and every reader parses an event with
/// serde_json, whose recursion limit takes 127 levels. Deeper data would be written and then
/// read by no one (the loop broken at that event), so the writer refuses it.
pub const MAX_DATA_DEPTH: usize = 126;

/// The nesting depth of `value`: 0 for a scalar, 1 for an empty array or object, one more per
/// level inside. Counted without recursion, so no input overflows the stack here.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((value, level)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        deepest = deepest.max(level);
        pending.extend(children.map(|child| (child, level + 1)));
    }
    deepest
}

/// Returns the canonical bytes of a new event at position `seq`, linked to `prev_sha256`.
///
/// ```
/// use hpp_core::{event_log::new_event, record::GENESIS_SHA256};
/// let line = new_event(1, "work_started", serde_json::Map::new(), GENESIS_SHA256);
/// assert!(line.starts_with(br#"{"data":{},"id":"event:1","prev_sha256":"e3b0"#));
/// ```
pub fn new_event(seq: usize, kind: &str, data: Map<String, Value>, prev_sha256: &str) -> Vec<u8> {
    canonical_json(&json!({
        "data": data,
        "id": event_id(seq),
        "prev_sha256": prev_sha256,
        "seq": seq,
        "type": kind,
    }))
}

/// One event that passed the chain rules.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct LoggedEvent {
    /// 1-based position (the physical line number for a file).
    pub seq: usize,
    /// The event type.
    pub kind: String,
    /// The `data` object (empty when absent).
    pub data: Map<String, Value>,
    /// Whether it carried `prev_sha256` (false for a legacy line).
    pub chained: bool,
    /// sha256 of its exact bytes: what the next event links to.
    pub sha256: String,
}

/// The verdict of a chain check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChainStatus {
    /// No events.
    Empty,
    /// Every event is chained and every link holds.
    Intact,
    /// Every link holds, but some events predate chaining.
    Legacy,
    /// Some event breaks a rule; `first_divergent` names it.
    Broken,
}

/// A `hpp.event-chain/v1` report: the reference's fields, plus `problem`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChainReport {
    /// Always [`CHAIN_SCHEMA`].
    pub schema: &'static str,
    /// The verdict.
    pub status: ChainStatus,
    /// Events that passed before the first problem.
    pub events: usize,
    /// How many of them were chained.
    pub chained: usize,
    /// How many were legacy.
    pub legacy: usize,
    /// `event:N` (a bad event or link) or `line N` (an unreadable line of a file); null if none.
    pub first_divergent: Option<String>,
    /// What is wrong with it, in a sentence; null if nothing.
    pub problem: Option<String>,
    /// sha256 of the last good event: the anchor to keep elsewhere.
    pub head_sha256: Option<String>,
}

impl ChainReport {
    /// Tells whether the chain is broken.
    pub fn is_broken(&self) -> bool {
        self.status == ChainStatus::Broken
    }
}

/// Why one event failed the rules, and how the report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Divergence {
    name: String,
    problem: String,
}

/// Checks a sequence of events, each given with its 1-based position and exact bytes.
///
/// Applies the reference's rules in order and stops at the first problem: the bytes must be a
/// UTF-8 JSON object with a string `type` and (our addition) an object `data` if any; a present
/// `seq` must equal the position, a present `id` must be `event:<position>`, and a present
/// `prev_sha256` must be a digest equal to the sha256 of the previous event's bytes (or of
/// nothing, first). With `spec`, the history must also walk the loop.
pub fn verify<'a>(
    entries: impl IntoIterator<Item = (usize, &'a [u8])>,
    spec: Option<&LoopSpec>,
) -> (ChainReport, Vec<LoggedEvent>) {
    let verified = verify_from(Start::genesis(spec), entries);
    (verified.report, verified.events)
}

/// As [`verify`], but each event's `data` is dropped once its line is checked (every
/// [`LoggedEvent::data`] returned is empty): a long file is then held as its bytes and one
/// parsed line at a time, never as every line's parsed data at once (which costs tens of times
/// the bytes). For a reader that needs only the chain, the kinds and the positions, as an
/// import does.
pub fn verify_lean<'a>(
    entries: impl IntoIterator<Item = (usize, &'a [u8])>,
    spec: Option<&LoopSpec>,
) -> (ChainReport, Vec<LoggedEvent>) {
    let verified = verify_steps(Start::genesis(spec), entries, false);
    (verified.report, verified.events)
}

/// Where a verification starts: the genesis, or the tip of a chain already verified, which the
/// entries extend (their positions then continue from it).
#[derive(Debug, Clone)]
pub struct Start<'s> {
    /// How many events were verified before the first entry.
    pub before: usize,
    /// How many of those carry no `prev_sha256`.
    pub legacy: usize,
    /// What the first entry must link to: the sha256 of the last verified event's bytes.
    pub prev_sha256: String,
    /// The loop walk as the verified events left it, when the history is checked against a loop.
    pub walk: Option<Walk<'s>>,
}

impl<'s> Start<'s> {
    /// The start of a chain: no event before, the genesis hash, the loop's initial state.
    pub fn genesis(spec: Option<&'s LoopSpec>) -> Self {
        Self {
            before: 0,
            legacy: 0,
            prev_sha256: GENESIS_SHA256.to_owned(),
            walk: spec.map(LoopSpec::walk),
        }
    }
}

/// What [`verify_from`] found: the report over the whole chain (the verified part before the
/// start included), the events that passed after the start, and the walk where they left it.
#[derive(Debug, Clone)]
pub struct Verified<'s> {
    /// The chain report.
    pub report: ChainReport,
    /// The entries after the start that passed, oldest first.
    pub events: Vec<LoggedEvent>,
    /// The loop walk after them.
    pub walk: Option<Walk<'s>>,
}

/// As [`verify`], from `start`: checks only the entries after a verified tip, one step each, so
/// extending a verified chain by `k` events costs `k`, whatever its length.
pub fn verify_from<'a, 's>(
    start: Start<'s>,
    entries: impl IntoIterator<Item = (usize, &'a [u8])>,
) -> Verified<'s> {
    verify_steps(start, entries, true)
}

fn verify_steps<'a, 's>(
    start: Start<'s>,
    entries: impl IntoIterator<Item = (usize, &'a [u8])>,
    keep_data: bool,
) -> Verified<'s> {
    let Start {
        before,
        legacy,
        prev_sha256,
        mut walk,
    } = start;
    let mut events: Vec<LoggedEvent> = Vec::new();
    let mut divergence = None;
    // One step of the loop per event: the walk carries the state from one event to the next.
    for (position, bytes) in entries {
        let prev = events
            .last()
            .map_or(prev_sha256.as_str(), |e| e.sha256.as_str());
        let prev_position = events
            .last()
            .map(|e| e.seq)
            .or((before > 0).then_some(before));
        match check_event(position, bytes, prev, prev_position) {
            Ok(mut event) => {
                if !keep_data {
                    event.data = Map::new();
                }
                if let Some(walk) = walk.as_mut()
                    && let Err(e) = walk.step(&event.kind)
                {
                    divergence = Some(Divergence {
                        name: event_id(position),
                        problem: e.to_string(),
                    });
                    break;
                }
                events.push(event);
            }
            Err(d) => {
                divergence = Some(d);
                break;
            }
        }
    }
    let total = before + events.len();
    let legacy = legacy + events.iter().filter(|e| !e.chained).count();
    let status = match (&divergence, total, legacy == 0) {
        (Some(_), _, _) => ChainStatus::Broken,
        (None, 0, _) => ChainStatus::Empty,
        (None, _, true) => ChainStatus::Intact,
        (None, _, false) => ChainStatus::Legacy,
    };
    let head_sha256 = match events.last() {
        Some(e) => Some(e.sha256.clone()),
        None => (before > 0).then_some(prev_sha256),
    };
    let report = ChainReport {
        schema: CHAIN_SCHEMA,
        status,
        events: total,
        chained: total - legacy,
        legacy,
        first_divergent: divergence.as_ref().map(|d| d.name.clone()),
        problem: divergence.map(|d| d.problem),
        head_sha256,
    };
    Verified {
        report,
        events,
        walk,
    }
}

fn check_event(
    position: usize,
    bytes: &[u8],
    prev: &str,
    prev_position: Option<usize>,
) -> Result<LoggedEvent, Divergence> {
    let line_problem = |why: &str| Divergence {
        name: format!("line {position}"),
        problem: format!("corrupt event log at line {position}: {why}"),
    };
    let text = std::str::from_utf8(bytes).map_err(|_| line_problem("not a UTF-8 JSON object"))?;
    let value: Value = serde_json::from_str(text).map_err(|e| {
        // Valid JSON nested past what serde_json reads is not a corrupt log: say what it is.
        if e.to_string().starts_with("recursion limit exceeded") {
            Divergence {
                name: format!("line {position}"),
                problem: format!(
                    "the event at line {position} nests deeper than {MAX_DATA_DEPTH} levels of data, \
                     the most any reader here parses (the reference takes up to about 990)"
                ),
            }
        } else {
            line_problem("not a UTF-8 JSON object")
        }
    })?;
    let obj = value
        .as_object()
        .ok_or_else(|| line_problem("not a UTF-8 JSON object"))?;
    let kind = obj
        .get("type")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| line_problem("event needs a type"))?;
    let data = match obj.get("data") {
        None => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(line_problem("event data must be a JSON object")),
    };
    if obj
        .get("seq")
        .is_some_and(|seq| seq.as_u64() != u64::try_from(position).ok())
    {
        return Err(line_problem("non-contiguous seq"));
    }
    if obj
        .get("id")
        .is_some_and(|id| id.as_str() != Some(event_id(position).as_str()))
    {
        return Err(line_problem("invalid event id"));
    }
    let chained = match obj.get("prev_sha256") {
        None => false,
        Some(link) => {
            let link = link
                .as_str()
                .filter(|l| is_sha256_hex(l))
                .ok_or_else(|| line_problem("prev_sha256 is not a sha256 digest"))?;
            if link != prev {
                let what = prev_position.map_or("the genesis hash".to_owned(), |p| {
                    format!("line {p} as written")
                });
                return Err(Divergence {
                    name: event_id(position),
                    problem: format!(
                        "corrupt event log at line {position}: hash chain broken at {} (prev_sha256 does not match {what})",
                        event_id(position)
                    ),
                });
            }
            true
        }
    };
    Ok(LoggedEvent {
        seq: position,
        kind: kind.to_owned(),
        data,
        chained,
        sha256: sha256_hex(bytes),
    })
}

/// Reads one event of a chain already verified (its type, data and digest) without checking
/// its link: for a reader that holds a verified tip and looks one of its earlier events up.
pub fn read_event(position: usize, bytes: &[u8]) -> Option<LoggedEvent> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let obj = value.as_object()?;
    let kind = obj.get("type")?.as_str().filter(|t| !t.is_empty())?;
    let data = match obj.get("data") {
        None => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return None,
    };
    Some(LoggedEvent {
        seq: position,
        kind: kind.to_owned(),
        data,
        chained: obj.contains_key("prev_sha256"),
        sha256: sha256_hex(bytes),
    })
}

/// Splits a JSON-lines file the reference's way: on `\n`, a trailing `\r` stripped, blank lines
/// skipped but counted, so each entry carries its physical 1-based line number.
pub fn split_lines(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .map(|(i, line)| (i + 1, line.strip_suffix(b"\r").unwrap_or(line)))
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;

    fn chain(types: &[&str]) -> Vec<Vec<u8>> {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for (i, kind) in types.iter().enumerate() {
            let prev = lines
                .last()
                .map_or(GENESIS_SHA256.to_owned(), |l| sha256_hex(l));
            lines.push(new_event(i + 1, kind, Map::new(), &prev));
        }
        lines
    }

    fn entries(lines: &[Vec<u8>]) -> Vec<(usize, &[u8])> {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| (i + 1, l.as_slice()))
            .collect()
    }

    #[test]
    fn a_built_chain_is_intact_and_anchored_at_its_last_line() {
        let lines = chain(&["work_started", "evidence_recorded"]);
        let (report, events) = verify(entries(&lines), Some(Manifest::built_in().loop_spec()));
        assert_eq!(report.status, ChainStatus::Intact);
        assert_eq!((report.events, report.chained, report.legacy), (2, 2, 0));
        assert_eq!(
            report.head_sha256.as_deref(),
            Some(sha256_hex(&lines[1]).as_str())
        );
        assert_eq!(events[1].kind, "evidence_recorded");
    }

    #[test]
    fn event_bytes_are_the_reference_line_format() {
        let line = new_event(2, "evidence_recorded", Map::new(), GENESIS_SHA256);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            format!(
                r#"{{"data":{{}},"id":"event:2","prev_sha256":"{GENESIS_SHA256}","seq":2,"type":"evidence_recorded"}}"#
            )
        );
    }

    #[test]
    fn legacy_lines_are_tolerated_and_counted() {
        let legacy = br#"{"type":"work_started"}"#.to_vec();
        let next = new_event(2, "evidence_recorded", Map::new(), &sha256_hex(&legacy));
        let (report, _) = verify([(1, legacy.as_slice()), (2, next.as_slice())], None);
        assert_eq!(
            (report.status, report.legacy, report.chained),
            (ChainStatus::Legacy, 1, 1)
        );
    }

    #[test]
    fn control_an_edited_line_breaks_the_link_after_it() {
        let mut lines = chain(&["work_started", "evidence_recorded", "check_passed"]);
        lines[1] = String::from_utf8(lines[1].clone())
            .unwrap()
            .replace("{}", r#"{"x":1}"#)
            .into_bytes();
        let (report, events) = verify(entries(&lines), None);
        assert_eq!(report.status, ChainStatus::Broken);
        assert_eq!(report.first_divergent.as_deref(), Some("event:3"));
        assert_eq!(events.len(), 2);
        assert!(
            report
                .problem
                .unwrap()
                .contains("hash chain broken at event:3")
        );
    }

    #[test]
    fn control_each_rule_names_the_first_divergent_event() {
        let good = chain(&["work_started"]);
        let cases: [(&[u8], &str, &str); 6] = [
            (b"not json", "line 1", "not a UTF-8 JSON object"),
            (br#"{"seq":1}"#, "line 1", "event needs a type"),
            (
                br#"{"type":"work_started","seq":2}"#,
                "line 1",
                "non-contiguous seq",
            ),
            (
                br#"{"type":"work_started","id":"event:9"}"#,
                "line 1",
                "invalid event id",
            ),
            (
                br#"{"type":"work_started","prev_sha256":"abc"}"#,
                "line 1",
                "not a sha256 digest",
            ),
            (
                br#"{"type":"work_started","data":[1]}"#,
                "line 1",
                "data must be a JSON object",
            ),
        ];
        for (bytes, name, needle) in cases {
            let (report, _) = verify([(1, bytes)], None);
            assert_eq!(report.first_divergent.as_deref(), Some(name), "{needle}");
            assert!(report.problem.unwrap().contains(needle), "{needle}");
        }
        let (report, _) = verify(entries(&good), None);
        assert_eq!(report.status, ChainStatus::Intact);
    }

    #[test]
    fn control_a_forbidden_transition_breaks_the_chain_when_a_spec_is_given() {
        let lines = chain(&["work_started", "verified"]);
        let (report, _) = verify(entries(&lines), Some(Manifest::built_in().loop_spec()));
        assert_eq!(report.first_divergent.as_deref(), Some("event:2"));
        assert_eq!(
            report.problem.as_deref(),
            Some("invalid transition at event 2: active --verified--> ?")
        );
        let (report, _) = verify(entries(&lines), None);
        assert_eq!(
            report.status,
            ChainStatus::Intact,
            "without a spec only the chain rules apply"
        );
    }

    #[test]
    fn split_lines_counts_blank_lines_and_strips_carriage_returns() {
        let lines = split_lines(b"a\r\n\nb\n");
        assert_eq!(lines, vec![(1, b"a".as_slice()), (3, b"b".as_slice())]);
    }
}
