//! `git hpp event`: a loop's event log.

pub mod append;
pub mod export;
pub mod import;
pub mod log;
pub mod reconcile;
pub mod verify;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `event` verbs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum EventCommand {
    Append(append::EventAppendArgs),
    Verify(verify::EventVerifyArgs),
    Log(log::EventLogArgs),
    Export(export::EventExportArgs),
    Import(import::EventImportArgs),
    Reconcile(reconcile::EventReconcileArgs),
}

/// Runs one `event` verb.
pub fn dispatch(ctx: &Ctx, command: EventCommand) -> Result<Outcome, CliError> {
    match command {
        EventCommand::Append(args) => append::cmd_event_append(ctx, &args),
        EventCommand::Verify(args) => verify::cmd_event_verify(ctx, &args),
        EventCommand::Log(args) => log::cmd_event_log(ctx, &args),
        EventCommand::Export(args) => export::cmd_event_export(ctx, &args),
        EventCommand::Import(args) => import::cmd_event_import(ctx, &args),
        EventCommand::Reconcile(args) => reconcile::cmd_event_reconcile(ctx, &args),
    }
}
