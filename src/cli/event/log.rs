//! `git hpp event log`: list a loop's events.

use serde_json::json;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::events;

/// List a loop's events, oldest first
///
/// Shows each event's id, type, commit and data. On a broken chain it lists the events before
/// the first divergent one, names it, and exits 2. Reads refs/hpp/loops/<loop>.
#[derive(Debug, clap::Args)]
pub struct EventLogArgs {
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Reads the loop and renders its events.
pub fn cmd_event_log(ctx: &Ctx, args: &EventLogArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.existing_loop_id(args.target.name.as_ref())?;
    let state = events::read(store, manifest.loop_spec(), &id)?;
    let rows: Vec<_> = state
        .events
        .iter()
        .zip(&state.commits)
        .map(|(e, commit)| {
            json!({"id": hpp_core::event_log::event_id(e.seq), "seq": e.seq, "type": e.kind, "data": e.data,
                   "commit": commit, "sha256": e.sha256, "chained": e.chained})
        })
        .collect();
    let mut human = String::new();
    for (e, commit) in state.events.iter().zip(&state.commits) {
        let data = serde_json::to_string(&e.data).expect("a map serialises");
        human.push_str(&format!(
            "{:<9} {:<18} {}  {data}\n",
            hpp_core::event_log::event_id(e.seq),
            e.kind,
            &commit.as_str()[..12]
        ));
    }
    if state.events.is_empty() && !state.chain.is_broken() {
        human.push_str(&format!("loop {id} has no events\n"));
    }
    if let (Some(at), Some(problem)) = (&state.chain.first_divergent, &state.chain.problem) {
        human.push_str(&format!("broken at {at}: {problem}\n"));
    }
    let value =
        json!({"loop": state.id, "ref": state.ref_name, "events": rows, "chain": state.chain});
    let exit = if state.chain.is_broken() {
        Exit::Block
    } else {
        Exit::Ok
    };
    Ok(Outcome::document(args.format.json, &value, human, exit))
}
