//! `git hpp deliberate tally|stop`: count a session and say whether it stops.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::input::{JsonRoot, read_json};
use crate::cli::output::Outcome;
use hpp_core::deliberation::{self, TALLY_SCHEMA};

/// Count a session round by round
///
/// Validates the panel and its turns (one turn per seat per round, a blind first round, seen
/// turns only of earlier rounds, rounds without gaps, no turns after the round where a stop rule
/// held) and prints hpp.deliberation-tally/v1: per round, grounded and ungrounded votes per
/// option, abstentions, seats not judged, the leader, grounded convergence, dissent, moves,
/// flips without new evidence, new references and characters. Needs no repository.
///
/// Exit codes: 0 counted, 2 refused input.
#[derive(Debug, clap::Args)]
pub struct DeliberateTallyArgs {
    /// The panel (hpp.panel/v1)
    #[arg(long, value_name = "FILE")]
    panel: PathBuf,
    /// The turns (a JSON list of hpp.turn/v1)
    #[arg(long, value_name = "FILE")]
    turns: PathBuf,
}

/// Say whether a session continues or stops, and by which rule
///
/// The first rule that holds on the last round stops it, in this order: not-judged (a seat did
/// not answer), grounded-convergence, paused-budget (characters used reach max_chars),
/// no-new-evidence (round 2 or later, no new reference, nobody moved), max-rounds. Prints
/// {"decision": "stop", "reason", "round", "escalate"} or {"decision": "continue",
/// "next_round", "reason", "escalate": false}; escalate is true when the budget, the rounds or
/// the evidence ran out with more than one grounded position standing. Needs no repository.
///
/// Exit codes: 0 decided, 2 refused input.
#[derive(Debug, clap::Args)]
pub struct DeliberateStopArgs {
    #[command(flatten)]
    pub(super) session: DeliberateTallyArgs,
}

pub(super) fn inputs(ctx: &Ctx, args: &DeliberateTallyArgs) -> Result<(Value, Value), CliError> {
    let panel = read_json(ctx, &args.panel, JsonRoot::Object)?;
    let turns = read_json(ctx, &args.turns, JsonRoot::Array)?;
    Ok((panel, turns))
}

/// `git hpp deliberate tally`.
pub fn cmd_deliberate_tally(ctx: &Ctx, args: &DeliberateTallyArgs) -> Result<Outcome, CliError> {
    let (panel, turns) = inputs(ctx, args)?;
    let rounds = deliberation::tally(&panel, &turns)?;
    Ok(Outcome::json(
        &json!({"schema": TALLY_SCHEMA, "rounds": rounds}),
        Exit::Ok,
    ))
}

/// `git hpp deliberate stop`.
pub fn cmd_deliberate_stop(ctx: &Ctx, args: &DeliberateTallyArgs) -> Result<Outcome, CliError> {
    let (panel, turns) = inputs(ctx, args)?;
    let stop = deliberation::decide_stop(&panel, &turns)?;
    Ok(Outcome::json(&stop, Exit::Ok))
}
