//! `git hpp board select`: decide a competition, by a lane or by a sealed design House Session.

use super::Writer;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::input::{JsonRoot, read_json};
use crate::deliberation::read_sealed;
use hpp_core::board::{Actor, Choice, Deliberated, DeliberationRef, Request, VerdictBy};

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
    let sealed = read_sealed(
        ctx.cwd(),
        name,
        |path| read_json(ctx, path, JsonRoot::Object),
        || ctx.store(),
    )?;
    let record = &sealed.record;
    let judge = record.panel.judge_seat();
    Ok(Deliberated {
        session_type: record.panel.session_type,
        options: record.panel.options().to_vec(),
        status: record.verdict.status.to_string(),
        value: record.verdict.value.clone(),
        judge: VerdictBy {
            lane: judge.lane.clone(),
            model: judge.model_served.clone(),
        },
        record: DeliberationRef {
            id: record.id(),
            record_sha256: record.record_sha256.clone(),
            reference: sealed.reference,
        },
    })
}
