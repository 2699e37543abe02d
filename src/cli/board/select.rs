//! `git hpp board select`: decide a competition, by a lane or by a sealed design House Session.

use serde_json::Value;

use super::Writer;
use crate::cli::ctx::Ctx;
use crate::cli::deliberate::read_sealed;
use crate::cli::exit::CliError;
use hpp_core::board::{Actor, Choice, Deliberated, DeliberationRef, Request, VerdictBy};
use hpp_core::deliberation;

/// Decide a competition
#[derive(Debug, clap::Args)]
#[command(group(
    clap::ArgGroup::new("outcome")
        .required(true)
        .multiple(true)
        .args(["winner", "checker_unavailable", "deliberation"])
))]
pub struct SelectArgs {
    /// The competition
    #[arg(long)]
    task: String,
    /// The winning candidate
    #[arg(long)]
    winner: Option<String>,
    /// No checker of another family was available: record DEFERRED, no winner
    #[arg(long)]
    checker_unavailable: bool,
    /// A sealed design House Session decides (a file, refs/hpp/deliberations/<id> or <id>)
    #[arg(long, value_name = "REC")]
    deliberation: Option<String>,
    /// The selecting lane's id (required without --deliberation)
    #[arg(long, value_name = "LANE")]
    lane: Option<String>,
    /// The selecting lane's model (required without --deliberation)
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// The selecting lane's role
    #[arg(long, default_value = "reviewer")]
    role: String,
    /// Why
    #[arg(long)]
    reason: Option<String>,
}

/// The request of `select`: a winner or DEFERRED by the writing lane, or the verdict of a
/// sealed House Session by its judge.
pub fn request(ctx: &Ctx, args: SelectArgs) -> Result<Request, CliError> {
    let Some(name) = args.deliberation.as_deref() else {
        if args.winner.is_some() && args.checker_unavailable {
            return Err(CliError::usage(
                "--winner and --checker-unavailable exclude each other",
            ));
        }
        let (Some(lane), Some(model)) = (args.lane, args.model) else {
            return Err(CliError::usage("select needs --lane and --model"));
        };
        let writer = Writer { lane, model };
        return Ok(Request::Select {
            task: args.task,
            choice: match args.winner {
                Some(winner) => Choice::Winner(winner),
                None => Choice::CheckerUnavailable,
            },
            actor: writer.actor(&args.role),
            reason: args.reason,
        });
    };
    let forbidden: Vec<&str> = [
        ("--winner", args.winner.is_some()),
        ("--lane", args.lane.is_some()),
        ("--model", args.model.is_some()),
        ("--checker-unavailable", args.checker_unavailable),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect();
    if !forbidden.is_empty() {
        return Err(CliError::refused(format!(
            "{} cannot be given with --deliberation: the session's recommendation is the winner \
             and its judge the selector",
            forbidden.join(", ")
        )));
    }
    let deliberated = deliberated(ctx, name)?;
    let actor = Actor {
        lane: deliberated.judge.lane.clone(),
        role: args.role,
        model: deliberated.judge.model.clone(),
    };
    Ok(Request::Select {
        task: args.task,
        choice: Choice::Deliberation(deliberated),
        actor,
        reason: args.reason,
    })
}

/// Reads a sealed House Session (a file, a ref or an id), refuses it unless it verifies, and
/// takes what `select` needs from it.
fn deliberated(ctx: &Ctx, name: &str) -> Result<Deliberated, CliError> {
    let (record, reference) = read_sealed(ctx, name)?;
    if let deliberation::Verification::Broken { reason, .. } = deliberation::verify_record(&record)
    {
        return Err(CliError::refused(format!(
            "the deliberation record does not verify: {reason}"
        )));
    }
    let panel = &record["panel"];
    let judge = deliberation::panel::judge_seat(panel);
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Ok(Deliberated {
        session_type: text(&panel["session_type"]),
        options: deliberation::panel::options(panel),
        status: text(&record["verdict"]["status"]),
        value: record["verdict"]["value"].as_str().map(str::to_owned),
        judge: VerdictBy {
            lane: text(&judge["lane"]),
            model: text(&judge["model_served"]),
        },
        record: DeliberationRef {
            id: deliberation::record_id(&record),
            record_sha256: text(&record["record_sha256"]),
            reference,
        },
    })
}
