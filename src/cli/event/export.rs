//! `git hpp event export`: a loop as the reference's events.jsonl.

use crate::cli::LoopArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::events;

/// Write a loop as the reference's hash-chained events.jsonl
///
/// Prints one compact, sorted-key JSON line per event, byte for byte as the Python harness
/// writes .hpp/events.jsonl (seq, id event:<n>, prev_sha256 chaining each line to the one
/// before). A broken or empty loop is refused with exit 2. Reads refs/hpp/loops/<loop>.
#[derive(Debug, clap::Args)]
pub struct EventExportArgs {
    #[command(flatten)]
    target: LoopArg,
}

/// Exports the loop.
pub fn cmd_event_export(ctx: &Ctx, args: &EventExportArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.existing_loop_id(args.target.name.as_ref())?;
    Ok(Outcome::raw(events::export(
        store,
        manifest.loop_spec(),
        &id,
    )?))
}
