//! The seat runner (CONCEPTS.md "House Session"; the reference's `house_session.py seat`): a
//! session driven round by round through each seat's declared command, then the judge's, with
//! the rules of [`hpp_core::deliberation`] deciding every turn, every stop and the seal. Seats
//! are read-only: git's view of the repository (every ref, `refs/hpp/` included) is
//! fingerprinted before the first command and after each one, and any change ends the run with
//! nothing sealed. Touches no refs itself; the caller keeps what it returns
//! ([`super::store_record`]).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::lanes::review::fingerprint_every_worktree;
use crate::process;
use hpp_core::deliberation::seat::{self, AnswerFailure, Seats, Spoken};
use hpp_core::deliberation::{self, Panel, Record, Session, Stop, StopReason, Stopped};
use hpp_core::instrument::ascii_json;
use hpp_core::review_guard::{self, Fingerprint};
use hpp_store::{self as store, Store};

/// What a session needs to run.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The normalised panel.
    pub panel: &'a Panel,
    /// The seats' and the judge's commands.
    pub seats: &'a Seats,
    /// Where the commands run.
    pub cwd: &'a Path,
    /// How long each command may run.
    pub timeout: Duration,
}

/// A seat (or the judge) that gave nothing usable in a round, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Failure {
    /// The seat id (the judge's seat id for the judge).
    pub seat: String,
    /// The round (for the judge, the round the session stopped at).
    pub round: i64,
    /// What happened.
    pub reason: String,
}

/// How a run ended without a refusal.
#[derive(Debug, Clone)]
pub enum Ended {
    /// The session stopped by rule and is ready to keep: the sealed record, and the verbatim
    /// text of each of its turns, in its turn order.
    Sealed {
        /// The sealed `hpp.deliberation/v2` record.
        record: Box<Record>,
        /// One text per turn of the record.
        texts: Vec<String>,
        /// The seats (and the judge) that gave nothing usable.
        failures: Vec<Failure>,
    },
    /// No seat answered in `round`: a round without a turn is no round, so there is nothing the
    /// rules can seal.
    NoTurns {
        /// The round nobody answered.
        round: i64,
        /// Why each seat gave nothing.
        failures: Vec<Failure>,
    },
}

/// Why a run ended with nothing sealed, other than the seats' silence.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A seat or the judge changed git's view of the repository.
    #[error("{who} changed the repository, so nothing is sealed: {changes}")]
    Changed {
        /// `seat <id> (round <n>)` or `the judge (seat <id>)`.
        who: String,
        /// Each part that changed, with what changed in it.
        changes: String,
    },
    /// The rules refused what the runner built (a bug, or a panel the rules reject).
    #[error(transparent)]
    Rules(#[from] deliberation::Error),
    /// The repository could not be read.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// One read-only run of a command: its answer (or why none), with the repository checked
/// against `before`, which becomes the fingerprint after the run.
fn run_one(
    store: &Store,
    req: &Request<'_>,
    argv: &[String],
    stdin: &impl Serialize,
    who: impl FnOnce() -> String,
    instrument: &'static str,
    before: &mut Fingerprint,
) -> Result<Result<Value, AnswerFailure>, Error> {
    let bytes = ascii_json(
        &serde_json::to_value(stdin).expect("what a seat reads serialises: its keys are strings"),
    );
    // Nothing a seat starts outlives it: a child that wrote after the seat ended would write
    // after the fingerprint below.
    let run = process::run_contained(&process::Request {
        argv,
        cwd: req.cwd,
        timeout: req.timeout,
        stdin: Some(&bytes),
        env: &[],
    })
    .map_err(|e| e.not_finished());
    let after = fingerprint_every_worktree(store)?;
    let changes = review_guard::compare(before, &after);
    if !changes.is_empty() {
        let changes: Vec<String> = changes
            .iter()
            .map(|c| match c.details.as_slice() {
                [] => c.part.to_owned(),
                details => format!("{} ({})", c.part, details.join(", ")),
            })
            .collect();
        return Err(Error::Changed {
            who: who(),
            changes: changes.join("; "),
        });
    }
    *before = after;
    Ok(seat::read_run(
        instrument,
        run.as_ref(),
        req.timeout.as_secs_f64(),
    ))
}

/// Runs the session: rounds from 1, each participant seat in panel order (round 1 blind, later
/// rounds shown every turn of earlier rounds), the stop rules after each round, then the judge
/// unless the session stopped not-judged. A judge that gives nothing usable is kept as the judge
/// seat's instrument failure.
///
/// # Errors
///
/// [`Error::Changed`] when a command changed the repository; the others when reading it or the
/// rules fail.
pub fn run_session(store: &Store, req: &Request<'_>) -> Result<Ended, Error> {
    let panel = req.panel;
    let mut before = fingerprint_every_worktree(store)?;
    let mut spoken: Vec<Spoken> = Vec::new();
    let mut failures = Vec::new();
    let mut session = session_of(panel, &spoken)?;
    for round in 1..=panel.budget.max_rounds {
        let earlier = spoken.clone();
        let seen: Vec<String> = earlier.iter().map(|s| s.turn.sha256.clone()).collect();
        let mut answered = 0;
        for (id, argv) in &req.seats.seats {
            let stdin = seat::seat_request(panel, id, round, &earlier);
            let who = || format!("seat {id} (round {round})");
            let answer = run_one(store, req, argv, &stdin, who, "seat", &mut before)?;
            match answer.and_then(|a| seat::turn_of_answer(&a, panel, id, round, &seen)) {
                Ok(turn) => {
                    spoken.push(turn);
                    answered += 1;
                }
                Err(why) => failures.push(Failure {
                    seat: id.clone(),
                    round,
                    reason: why.to_string(),
                }),
            }
        }
        if answered == 0 {
            return Ok(Ended::NoTurns { round, failures });
        }
        session = session_of(panel, &spoken)?;
        if matches!(session.stop(), Stop::Stop(_)) {
            break;
        }
    }
    let record = match session.stop() {
        Stop::Stop(stopped) if stopped.reason == StopReason::NotJudged => {
            session.record(None, None)?
        }
        Stop::Stop(stopped) => judged(
            store,
            req,
            &session,
            &spoken,
            &stopped,
            &mut before,
            &mut failures,
        )?,
        // The last round of the budget always stops the session; sealing says so if not.
        Stop::Continue { .. } => session.record(None, None)?,
    };
    let texts = texts_in_record_order(&record, &spoken);
    Ok(Ended::Sealed {
        record: Box::new(record),
        texts,
        failures,
    })
}

/// The session the turns spoken so far make.
fn session_of(panel: &Panel, spoken: &[Spoken]) -> Result<Session, deliberation::Error> {
    Session::new(
        panel.clone(),
        spoken.iter().map(|s| s.turn.clone()).collect(),
    )
}

/// Asks the judge and seals its ruling, or its instrument failure.
fn judged(
    store: &Store,
    req: &Request<'_>,
    session: &Session,
    spoken: &[Spoken],
    stop: &Stopped,
    before: &mut Fingerprint,
    failures: &mut Vec<Failure>,
) -> Result<Record, Error> {
    let panel = req.panel;
    let judge = panel.judge.clone();
    let stdin = seat::judge_request(panel, spoken, &session.tally, stop);
    let who = || format!("the judge (seat {judge})");
    let answer = run_one(store, req, &req.seats.judge, &stdin, who, "judge", before)?;
    let ruling = answer.and_then(|a| seat::judge_answer(&a)).map_or_else(
        |why| Err(why.to_string()),
        |(decision, rationale)| {
            session
                .record(Some(&decision), rationale.as_ref())
                .map_err(|e| e.to_string())
        },
    );
    match ruling {
        Ok(record) => Ok(record),
        Err(reason) => {
            let failed = seat::judge_failure(panel, req.seats.judge_method, &reason);
            failures.push(Failure {
                seat: judge,
                round: stop.round,
                reason,
            });
            Ok(session.record(Some(&failed), None)?)
        }
    }
}

/// The texts of the record's turns, in the record's order (turns are matched by their hash).
fn texts_in_record_order(record: &Record, spoken: &[Spoken]) -> Vec<String> {
    record
        .turns
        .iter()
        .filter_map(|turn| {
            spoken
                .iter()
                .find(|s| s.turn.sha256 == turn.sha256)
                .map(|s| s.text.clone())
        })
        .collect()
}

/// The failures as the lines a person reads on stderr.
pub fn describe(failures: &[Failure], judge: &str) -> Vec<String> {
    failures
        .iter()
        .map(|f| {
            if f.seat == judge {
                format!(
                    "the judge (seat {}) gave no usable ruling: {}",
                    f.seat, f.reason
                )
            } else {
                format!(
                    "seat {} is not judged in round {}: {}",
                    f.seat, f.round, f.reason
                )
            }
        })
        .collect()
}
