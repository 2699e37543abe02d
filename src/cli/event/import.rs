//! `git hpp event import`: a reference events.jsonl into a new loop.

use std::path::PathBuf;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::events;

/// Verify a reference events.jsonl and record it as a new loop
///
/// Applies the reference's chain rules (refusing a broken chain and naming the first divergent
/// event) and the loop's transitions, then writes one commit per line, each holding that line's
/// exact bytes, and creates refs/hpp/loops/<loop>, which must not exist yet. All or nothing;
/// refusals exit 2.
#[derive(Debug, clap::Args)]
pub struct EventImportArgs {
    /// The events.jsonl to import
    file: PathBuf,
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Imports the file.
pub fn cmd_event_import(ctx: &Ctx, args: &EventImportArgs) -> Result<Outcome, CliError> {
    let bytes =
        crate::cli::input::read_capped(&args.file, crate::cli::input::EVENT_LOG_CAP, "event log")?;
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.loop_id(args.target.name.as_ref())?;
    let state = events::import(store, manifest.loop_spec(), &id, &bytes)?;
    let projection = state.require_intact()?;
    let status = serde_json::to_value(state.chain.status).expect("a status serialises");
    let human = format!(
        "imported {} events into loop {} (chain {}, head {})\nHPP status: {} · events={} · next={}",
        state.chain.events,
        id,
        status.as_str().unwrap_or_default(),
        state.head.as_ref().map_or("none", |h| h.as_str()),
        projection.state,
        projection.event_count,
        projection.next_step
    );
    Ok(Outcome::document(args.format.json, &state, human, Exit::Ok))
}
