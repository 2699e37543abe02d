//! `git hpp deliberate plan|validate|tally|stop|record|run|verify|decide`: House Sessions (CONCEPTS.md
//! "House Session"). The rules are [`crate::deliberation`]; these files read the inputs, print,
//! and keep the sealed record at `refs/hpp/deliberations/<id>`.

pub mod decide;
pub mod plan;
pub mod record;
pub mod run;
pub mod session;
pub mod verify;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The verbs of `git hpp deliberate`.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb's help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum DeliberateCommand {
    Plan(plan::DeliberatePlanArgs),
    Validate(plan::DeliberateValidateArgs),
    Tally(session::DeliberateTallyArgs),
    Stop(session::DeliberateStopArgs),
    Record(record::DeliberateRecordArgs),
    Run(run::DeliberateRunArgs),
    Verify(verify::DeliberateVerifyArgs),
    Decide(decide::DeliberateDecideArgs),
}

/// Runs one verb of `git hpp deliberate`.
pub fn dispatch(ctx: &Ctx, cmd: DeliberateCommand) -> Result<Outcome, CliError> {
    match cmd {
        DeliberateCommand::Plan(args) => plan::cmd_deliberate_plan(ctx, &args),
        DeliberateCommand::Validate(args) => plan::cmd_deliberate_validate(ctx, &args),
        DeliberateCommand::Tally(args) => session::cmd_deliberate_tally(ctx, &args),
        DeliberateCommand::Stop(args) => session::cmd_deliberate_stop(ctx, &args.session),
        DeliberateCommand::Record(args) => record::cmd_deliberate_record(ctx, &args),
        DeliberateCommand::Run(args) => run::cmd_deliberate_run(ctx, &args),
        DeliberateCommand::Verify(args) => verify::cmd_deliberate_verify(ctx, &args),
        DeliberateCommand::Decide(args) => decide::cmd_deliberate_decide(ctx, &args),
    }
}
