//! `git hpp resume`: the three facts an agent needs to pick a loop up again.

use serde_json::json;

use crate::cli::LoopArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::events;

/// Print the state, next step and event count of a loop as JSON
///
/// Always JSON: {"state", "next_step", "event_count", "standing", "next_action", "gates"}: next_action is
/// the command that passes the next gate, gates how each stands now (as `status` shows them).
/// A broken chain is refused with exit 2. Reads refs/hpp/loops/<loop> (a long loop's verified
/// tip from .git/hpp-cache, as status does).
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    #[command(flatten)]
    target: LoopArg,
}

/// Reads the loop and prints where to resume.
pub fn cmd_resume(ctx: &Ctx, args: &ResumeArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.existing_loop_id(args.target.name.as_ref())?;
    let state = events::cache::read_standing(store, manifest.loop_spec(), &id)?;
    let p = state.require_intact()?;
    let outlook = super::status::outlook(ctx, manifest.loop_spec(), &state)?;
    let value = json!({"schema": "hpp.resume/v1", "state": p.state, "next_step": p.next_step, "event_count": p.event_count,
                       "standing": outlook.qualifier().is_none(),
                       "next_action": outlook.next_action, "gates": outlook.gates});
    Ok(Outcome::json(&value, Exit::Ok))
}
