//! `git hpp event`: a loop's event log.

pub mod append;
pub mod export;
pub mod import;
pub mod log;
pub mod verify;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `event` verbs.
#[derive(Debug, Subcommand)]
pub enum EventCommand {
    /// Append one event to a loop and print where the loop stands
    Append(append::EventAppendArgs),
    /// Check a loop's commit chain, hash chain and transitions
    Verify(verify::EventVerifyArgs),
    /// List a loop's events, oldest first
    Log(log::EventLogArgs),
    /// Write a loop as the reference's hash-chained events.jsonl
    Export(export::EventExportArgs),
    /// Verify a reference events.jsonl and record it as a new loop
    Import(import::EventImportArgs),
}

/// Runs one `event` verb.
pub fn dispatch(ctx: &Ctx, command: EventCommand) -> Result<Outcome, CliError> {
    match command {
        EventCommand::Append(args) => append::cmd_event_append(ctx, &args),
        EventCommand::Verify(args) => verify::cmd_event_verify(ctx, &args),
        EventCommand::Log(args) => log::cmd_event_log(ctx, &args),
        EventCommand::Export(args) => export::cmd_event_export(ctx, &args),
        EventCommand::Import(args) => import::cmd_event_import(ctx, &args),
    }
}
