//! The seat runner's rules (CONCEPTS.md "House Session"): the seats file (`hpp.seats/v1`) that
//! declares each seat's command and the judge's, what a seat reads on stdin, what it may answer
//! and the turn that answer becomes, what the judge reads and answers, the judge failure kept
//! when the judge gives nothing usable, and the verbatim text kept beside each turn. Pure: the
//! application runs the commands and hands their runs in as values.
//!
//! ```
//! use hpp_core::deliberation::{normalise_panel, seat};
//! let panel = normalise_panel(&serde_json::from_str(include_str!(
//!     "../../../../examples/house-session/design/panel.json"
//! )).unwrap()).unwrap();
//! let answer = serde_json::json!({"position": "single-log", "confidence": null,
//!     "claims": [{"kind": "fact", "refs": ["one-ref-one-writer"]}], "text": "One ref."});
//! let spoken = seat::turn_of_answer(&answer, &panel, "p1", 1, &[]).unwrap();
//! assert_eq!(spoken.turn.chars, 8);
//! assert!(seat::text_matches(&spoken.turn, b"One ref."));
//! ```

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Value, json};

use super::panel::Panel;
use super::session::{Stopped, Tally, Turn, normalise_turn};
use super::{Error, TURN_SCHEMA};
use crate::decision;
use crate::instrument::{RunFailure, read_answer};
use crate::record::sha256_hex;
use crate::run::{Finished, NotFinished};

/// Schema of the seats file.
pub const SEATS_SCHEMA: &str = "hpp.seats/v1";
/// The keys a seat's answer may carry (as the reference's seat runner).
pub const ANSWER_KEYS: [&str; 4] = ["position", "confidence", "claims", "text"];
/// The keys the judge's answer may carry.
pub const JUDGE_KEYS: [&str; 2] = ["decision", "rationale"];
/// The most bytes a seat or the judge may print as its answer: a text is kept in a record that
/// is pushed, so an answer that large is a runaway, not a turn.
pub const MAX_ANSWER_BYTES: usize = 4 << 20;

/// The commands a seats file declares, checked against a normalised panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seats {
    /// Every participant seat with its argv, in the panel's seat order.
    pub seats: Vec<(String, Vec<String>)>,
    /// The judge seat's argv.
    pub judge: Vec<String>,
    /// The method the runner writes in the judge's instrument-failure record
    /// (`local-model` or `external-model`; default `external-model`).
    pub judge_method: &'static str,
}

fn argv(value: Option<&Value>, who: &str) -> Result<Vec<String>, Error> {
    let items = value
        .and_then(Value::as_array)
        .filter(|items| !items.is_empty())
        .ok_or_else(|| Error::SeatArgv(who.to_owned()))?;
    items
        .iter()
        .map(|item| match item {
            // A NUL cannot reach a program's argv: refused here, before any seat runs, rather
            // than found when the first seat fails to start.
            Value::String(s) if !s.is_empty() && !s.contains('\0') => Ok(s.clone()),
            _ => Err(Error::SeatArgv(who.to_owned())),
        })
        .collect()
}

/// Parses a seats file (`{"schema": "hpp.seats/v1", "seats": {seat: argv}, "judge": argv,
/// "judge_method"?}`) against a normalised panel: every participant has an argv, no other seat
/// is named (the judge's command is `judge`), every argv is a non-empty list of non-empty
/// strings without a NUL byte.
///
/// # Errors
///
/// The first broken rule, naming the seat.
pub fn parse_seats(document: &Value, panel: &Panel) -> Result<Seats, Error> {
    let map = document.as_object().ok_or(Error::SeatsShape)?;
    if map.get("schema").and_then(Value::as_str) != Some(SEATS_SCHEMA) {
        return Err(Error::SeatsSchema);
    }
    if let Some(key) = map
        .keys()
        .find(|k| !matches!(k.as_str(), "schema" | "seats" | "judge" | "judge_method"))
    {
        return Err(Error::SeatsKey(key.clone()));
    }
    let declared = map
        .get("seats")
        .and_then(Value::as_object)
        .ok_or(Error::SeatsShape)?;
    let order = panel.participant_ids();
    let judge = panel.judge.as_str();
    let known: BTreeSet<&str> = order.iter().copied().collect();
    if let Some(stranger) = declared.keys().find(|k| !known.contains(k.as_str())) {
        return Err(if stranger == judge {
            Error::SeatIsJudge(stranger.clone())
        } else {
            Error::SeatUnknown(stranger.clone())
        });
    }
    let seats = order
        .iter()
        .map(|seat| match declared.get(*seat) {
            None => Err(Error::SeatMissing((*seat).to_owned())),
            some => Ok(((*seat).to_owned(), argv(some, &format!("seat {seat}"))?)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let judge_argv = argv(map.get("judge"), "judge")?;
    let judge_method = match map.get("judge_method") {
        None => "external-model",
        Some(Value::String(m)) if m == "local-model" => "local-model",
        Some(Value::String(m)) if m == "external-model" => "external-model",
        Some(_) => return Err(Error::JudgeMethodDeclared),
    };
    Ok(Seats {
        seats,
        judge: judge_argv,
        judge_method,
    })
}

/// A turn a seat gave, with the verbatim text its `text_sha256` and `chars` were taken from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spoken {
    /// The normalised `hpp.turn/v1`, with its `sha256`.
    pub turn: Turn,
    /// The verbatim text.
    pub text: String,
}

/// What a seat reads on stdin in a round (`{"panel", "seat", "round", "seen_turns",
/// "turns"}`).
#[derive(Debug, Clone, Serialize)]
pub struct SeatRequest<'a> {
    /// The normalised panel.
    pub panel: &'a Panel,
    /// The seat asked.
    pub seat: &'a str,
    /// The round.
    pub round: i64,
    /// The hashes of the turns shown.
    pub seen_turns: Vec<&'a str>,
    /// The turns of earlier rounds, each with its text (`{"turn", "text"}`).
    pub turns: &'a [Spoken],
}

/// Returns what a seat reads on stdin in `round`: the normalised panel, its seat and round,
/// and `earlier`, the turns of earlier rounds (hashes in `seen_turns`, each turn with its text
/// in `turns`). Round 1 is blind: the runner passes no earlier turns.
pub fn seat_request<'a>(
    panel: &'a Panel,
    seat: &'a str,
    round: i64,
    earlier: &'a [Spoken],
) -> SeatRequest<'a> {
    SeatRequest {
        panel,
        seat,
        round,
        seen_turns: earlier.iter().map(|s| s.turn.sha256.as_str()).collect(),
        turns: earlier,
    }
}

/// Why a seat's run gave no turn: the seat is then not judged that round.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnswerFailure {
    /// The command timed out, could not start, exited non-zero, or printed nothing or no JSON.
    #[error(transparent)]
    Run(#[from] RunFailure),
    /// The command printed more than [`MAX_ANSWER_BYTES`].
    #[error("the answer is larger than {MAX_ANSWER_BYTES} bytes")]
    TooLarge,
    /// The answer is not a JSON object.
    #[error("the answer must be one JSON object")]
    NotObject,
    /// The answer carries keys outside the contract.
    #[error("the answer carries keys outside {allowed}: {keys}")]
    Keys {
        /// The keys allowed, as a list.
        allowed: String,
        /// The keys found outside them, as a list.
        keys: String,
    },
    /// The seat's answer has no text.
    #[error("text must be the verbatim text of the turn (a string)")]
    Text,
    /// The text has the shape of a secret: a sealed text is kept in the record, and records
    /// are pushed.
    #[error(
        "the text looks like it holds {0}; a sealed text is kept in the record and pushed, so this answer is not taken"
    )]
    Secret(&'static str),
    /// The text is an `hpp.findings` document that does not pass `findings check`.
    #[error("the text is a findings document that does not check: {0}")]
    Findings(String),
    /// The judge's answer has no decision object.
    #[error("the judge's answer needs decision (an hpp.decision/v1 object)")]
    NoDecision,
    /// The answer does not make a valid turn.
    #[error("the answer is not a valid turn: {0}")]
    Turn(Error),
}

/// Turns one run of a seat's or the judge's command into its JSON answer (`instrument` is
/// `seat` or `judge`, as failures name it).
///
/// # Errors
///
/// What [`read_answer`] refuses, or an answer over [`MAX_ANSWER_BYTES`].
pub fn read_run(
    instrument: &'static str,
    run: Result<&Finished, &NotFinished>,
    timeout_s: f64,
) -> Result<Value, AnswerFailure> {
    if let Ok(finished) = run
        && finished.stdout.len() > MAX_ANSWER_BYTES
    {
        return Err(AnswerFailure::TooLarge);
    }
    Ok(read_answer(instrument, run, timeout_s)?)
}

fn only_keys(map: &serde_json::Map<String, Value>, allowed: &[&str]) -> Result<(), AnswerFailure> {
    let extra: Vec<&String> = map
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .collect();
    if extra.is_empty() {
        return Ok(());
    }
    Err(AnswerFailure::Keys {
        allowed: super::repr_list(allowed),
        keys: super::repr_list(&extra),
    })
}

/// Builds the `hpp.turn/v1` of `seat` in `round` from its answer (only `position`,
/// `confidence`, `claims`, `text`): `text_sha256` and `chars` come from the text, `seen_turns`
/// are the hashes the seat was shown, and the turn is checked by the panel's turn rules. A text
/// that is itself an `hpp.findings/*` document must pass `findings check`; a text with the
/// shape of a secret ([`crate::secrets::shape_in_file`]) is not taken, since the text is sealed
/// into the record.
///
/// # Errors
///
/// Why the answer gives no turn, as [`AnswerFailure`].
pub fn turn_of_answer(
    answer: &Value,
    panel: &Panel,
    seat: &str,
    round: i64,
    seen: &[String],
) -> Result<Spoken, AnswerFailure> {
    let map = answer.as_object().ok_or(AnswerFailure::NotObject)?;
    only_keys(map, &ANSWER_KEYS)?;
    let text = map
        .get("text")
        .and_then(Value::as_str)
        .ok_or(AnswerFailure::Text)?
        .to_owned();
    if let Some(shape) = crate::secrets::shape_in_file(text.as_bytes()) {
        return Err(AnswerFailure::Secret(shape));
    }
    if let Ok(document) = serde_json::from_str::<Value>(&text)
        && document
            .get("schema")
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with("hpp.findings/"))
    {
        crate::findings::check(&document, None)
            .map_err(|e| AnswerFailure::Findings(e.to_string()))?;
    }
    // The answer's parts are the seat's, so the turn they make is checked like any turn given.
    let turn = json!({
        "schema": TURN_SCHEMA, "panel_sha256": panel.sha256, "seat": seat, "round": round,
        "position": map.get("position").cloned().unwrap_or(Value::Null),
        "confidence": map.get("confidence").cloned().unwrap_or(Value::Null),
        "claims": map.get("claims").cloned().unwrap_or_else(|| json!([])),
        "text_sha256": sha256_hex(text.as_bytes()),
        "chars": text.chars().count(),
        "seen_turns": seen,
    });
    let turn = normalise_turn(&turn, panel).map_err(AnswerFailure::Turn)?;
    Ok(Spoken { turn, text })
}

/// What the judge reads on stdin (`{"panel", "turns", "tally", "stop"}`).
#[derive(Debug, Clone, Serialize)]
pub struct JudgeRequest<'a> {
    /// The normalised panel.
    pub panel: &'a Panel,
    /// Every turn with its text (`{"turn", "text"}`).
    pub turns: &'a [Spoken],
    /// The count of each round.
    pub tally: &'a [Tally],
    /// How the session stopped.
    pub stop: &'a Stopped,
}

/// Returns what the judge reads on stdin: the normalised panel, every turn with its text, the
/// tally and the stop.
pub fn judge_request<'a>(
    panel: &'a Panel,
    spoken: &'a [Spoken],
    tally: &'a [Tally],
    stop: &'a Stopped,
) -> JudgeRequest<'a> {
    JudgeRequest {
        panel,
        turns: spoken,
        tally,
        stop,
    }
}

/// Splits the judge's answer (`{"decision": hpp.decision/v1, "rationale"?: hpp.rationale/v1}`)
/// into the decision and the rationale; the records themselves are checked when the session is
/// sealed.
///
/// # Errors
///
/// An answer that is not an object, has other keys, or has no decision object.
pub fn judge_answer(answer: &Value) -> Result<(Value, Option<Value>), AnswerFailure> {
    let map = answer.as_object().ok_or(AnswerFailure::NotObject)?;
    only_keys(map, &JUDGE_KEYS)?;
    let decision = map
        .get("decision")
        .filter(|d| d.is_object())
        .ok_or(AnswerFailure::NoDecision)?
        .clone();
    let rationale = map.get("rationale").filter(|r| !r.is_null()).cloned();
    Ok((decision, rationale))
}

/// Returns the judge seat's `hpp.decision/v1` instrument failure, written by the runner when
/// the judge gave nothing usable: the panel's question and state, the judge seat's provider and
/// pinned model, `method`, and `error` saying what happened. It carries no raw response: there
/// was none to hash.
pub fn judge_failure(panel: &Panel, method: &str, error: &str) -> Value {
    let seat = panel.judge_seat();
    json!({
        "schema": decision::SCHEMA, "question": panel.question,
        "state_sha256": panel.state_sha256, "method": method,
        "authority": "advisory", "direction": "informational",
        "provider": {"id": seat.provider, "model_served": seat.model_served},
        "outcome": {"status": "instrument-failure", "value": null, "confidence": null,
                    "error": error},
    })
}

/// Tells whether `bytes` are the verbatim text of `turn`: UTF-8 whose sha256 is the turn's
/// `text_sha256` and whose length in characters is its `chars`.
pub fn text_matches(turn: &Turn, bytes: &[u8]) -> bool {
    text_is(Some(&turn.text_sha256), Some(turn.chars), bytes)
}

/// Tells whether `bytes` are UTF-8 whose sha256 is `text_sha256` and whose length in
/// characters is `chars` (both as a turn document spells them, so absent ones never match).
pub fn text_is(text_sha256: Option<&str>, chars: Option<i64>, bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|text| {
        text_sha256 == Some(sha256_hex(bytes).as_str())
            && chars.and_then(|c| u64::try_from(c).ok()) == Some(text.chars().count() as u64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deliberation::normalise_panel;

    fn panel() -> Panel {
        normalise_panel(
            &serde_json::from_str(include_str!(
                "../../../../examples/house-session/design/panel.json"
            ))
            .expect("the example is JSON"),
        )
        .expect("the example panel is valid")
    }

    fn seats(extra: Value) -> Value {
        let mut doc = json!({"schema": SEATS_SCHEMA, "judge": ["judge"],
            "seats": {"p1": ["a"], "p2": ["b", "--x"], "d": ["c"]}});
        for (k, v) in extra.as_object().expect("an object") {
            doc[k] = v.clone();
        }
        doc
    }

    #[test]
    fn a_seats_file_gives_every_participant_its_argv_in_panel_order() {
        let parsed = parse_seats(&seats(json!({})), &panel()).expect("valid");
        let order: Vec<&str> = parsed.seats.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(order, ["p1", "p2", "d"]);
        assert_eq!(parsed.seats[1].1, ["b", "--x"]);
        assert_eq!(parsed.judge_method, "external-model");
    }

    #[test]
    fn control_a_seats_file_missing_a_seat_naming_a_stranger_or_the_judge_is_refused() {
        let panel = panel();
        let mut missing = seats(json!({}));
        missing["seats"].as_object_mut().expect("seats").remove("d");
        assert_eq!(
            parse_seats(&missing, &panel),
            Err(Error::SeatMissing("d".into()))
        );
        let mut stranger = seats(json!({}));
        stranger["seats"]["zz"] = json!(["z"]);
        assert_eq!(
            parse_seats(&stranger, &panel),
            Err(Error::SeatUnknown("zz".into()))
        );
        let mut judge = seats(json!({}));
        judge["seats"]["j"] = json!(["z"]);
        assert_eq!(
            parse_seats(&judge, &panel),
            Err(Error::SeatIsJudge("j".into()))
        );
        assert_eq!(
            parse_seats(&seats(json!({"judge": []})), &panel),
            Err(Error::SeatArgv("judge".into()))
        );
        assert_eq!(
            parse_seats(&seats(json!({"judge": "judge --now"})), &panel),
            Err(Error::SeatArgv("judge".into()))
        );
        assert_eq!(
            parse_seats(&seats(json!({"judge": ["judge", "a\u{0}b"]})), &panel),
            Err(Error::SeatArgv("judge".into()))
        );
        let mut nul = seats(json!({}));
        nul["seats"]["d"] = json!(["d\u{0}"]);
        assert_eq!(
            parse_seats(&nul, &panel),
            Err(Error::SeatArgv("seat d".into()))
        );
        assert_eq!(
            parse_seats(&seats(json!({"extra": 1})), &panel),
            Err(Error::SeatsKey("extra".into()))
        );
        assert_eq!(
            parse_seats(&seats(json!({"judge_method": "human"})), &panel),
            Err(Error::JudgeMethodDeclared)
        );
    }

    #[test]
    fn an_answer_becomes_a_turn_whose_text_hash_and_length_come_from_its_text() {
        let panel = panel();
        let answer = json!({"position": "log-per-item", "text": "café"});
        let spoken = turn_of_answer(&answer, &panel, "d", 2, &["a".repeat(64)]).expect("a turn");
        assert_eq!(spoken.turn.chars, 4, "characters, not bytes");
        assert_eq!(spoken.turn.seen_turns, ["a".repeat(64)]);
        assert_eq!(spoken.turn.claims, []);
        assert!(text_matches(&spoken.turn, "café".as_bytes()));
        assert!(!text_matches(&spoken.turn, b"cafe"));
    }

    #[test]
    fn control_an_answer_outside_the_contract_gives_no_turn() {
        let panel = panel();
        let extra = json!({"position": "log-per-item", "text": "t", "model": "x"});
        assert!(matches!(
            turn_of_answer(&extra, &panel, "d", 1, &[]),
            Err(AnswerFailure::Keys { keys, .. }) if keys == "['model']"
        ));
        let no_text = json!({"position": "log-per-item"});
        assert_eq!(
            turn_of_answer(&no_text, &panel, "d", 1, &[]),
            Err(AnswerFailure::Text)
        );
        let stranger = json!({"position": "three-logs", "text": "t"});
        assert!(matches!(
            turn_of_answer(&stranger, &panel, "d", 1, &[]),
            Err(AnswerFailure::Turn(Error::Position(_)))
        ));
        let seeing = json!({"position": "log-per-item", "text": "t"});
        assert_eq!(
            turn_of_answer(&seeing, &panel, "d", 1, &["a".repeat(64)]),
            Err(AnswerFailure::Turn(Error::NotBlind))
        );
        let leaking = json!({"position": "log-per-item",
            "text": "use GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789 here"});
        assert_eq!(
            turn_of_answer(&leaking, &panel, "d", 1, &[]),
            Err(AnswerFailure::Secret("a GitHub token"))
        );
        let findings = json!({"position": "log-per-item",
            "text": "{\"schema\": \"hpp.findings/v1\", \"lens\": \"deletion\"}"});
        assert!(matches!(
            turn_of_answer(&findings, &panel, "d", 1, &[]),
            Err(AnswerFailure::Findings(_))
        ));
        assert_eq!(
            judge_answer(&json!({"decision": {}, "note": "x"})).map(|_| ()),
            Err(AnswerFailure::Keys {
                allowed: "['decision', 'rationale']".into(),
                keys: "['note']".into()
            })
        );
        assert_eq!(
            judge_answer(&json!({"rationale": {}})).map(|_| ()),
            Err(AnswerFailure::NoDecision)
        );
    }

    #[test]
    fn the_judges_failure_is_a_decision_record_the_decision_rules_accept() {
        let panel = panel();
        let record = judge_failure(&panel, "local-model", "judge exited 4: no stderr");
        let checked = decision::validate(&record).expect("a valid instrument failure");
        assert_eq!(checked.method.as_str(), "local-model");
        assert_eq!(record["provider"]["model_served"], "qwen3-32b-q5");
    }
}
