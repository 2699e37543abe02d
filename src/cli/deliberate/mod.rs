//! `git hpp deliberate plan|validate|tally|stop|record|run|verify|decide`: House Sessions (CONCEPTS.md
//! "House Session"). The rules are [`crate::deliberation`]; these files read the inputs, print,
//! and keep the sealed record at `refs/hpp/deliberations/<id>`.

pub mod decide;
pub mod plan;
pub mod record;
pub mod run;
pub mod session;
pub mod verify;

use std::path::Path;

use clap::Subcommand;
use serde_json::Value;

use super::ctx::Ctx;
use super::exit::CliError;
use super::input::{JsonRoot, read_json};
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

/// Reads a sealed record named by a file path, a `refs/hpp/deliberations/<id>` ref or an id:
/// an existing file wins. Returns the record and, when it came from a ref, the ref's name.
pub fn read_sealed(ctx: &Ctx, name: &str) -> Result<(Value, Option<String>), CliError> {
    if ctx.cwd().join(name).is_file() {
        return Ok((read_json(ctx, Path::new(name), JsonRoot::Object)?, None));
    }
    let store = ctx.store()?;
    let full = crate::deliberation::resolve(store, name)?;
    let loaded = crate::deliberation::load(store, &full, None)?;
    if let Some(problem) = loaded.problems.first() {
        return Err(CliError::refused(format!(
            "the deliberation record does not verify: {problem}"
        )));
    }
    Ok((loaded.record, Some(full)))
}
