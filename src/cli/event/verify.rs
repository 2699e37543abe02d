//! `git hpp event verify`: check a loop's chain.

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::events;

/// Check a loop's commit chain, hash chain and transitions
///
/// Prints an hpp.event-chain/v1 report: status empty, intact, legacy or broken, the first
/// divergent event, and the head commit (the anchor to keep elsewhere). Broken means an event
/// commit without a valid event.json, a seq out of order, a commit with other than one parent
/// (the first: none), a prev_sha256 that does not match the previous event, or a transition the
/// loop forbids. Exits 2 when broken, else 0. Reads refs/hpp/loops/<loop>.
#[derive(Debug, clap::Args)]
pub struct EventVerifyArgs {
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Verifies the loop and renders the report.
pub fn cmd_event_verify(ctx: &Ctx, args: &EventVerifyArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.loop_id(args.target.name.as_ref())?;
    let state = events::read(store, manifest.loop_spec(), &id)?;
    let chain = &state.chain;
    let mut value = serde_json::to_value(chain).expect("a chain report serialises");
    value["loop"] = serde_json::json!(state.id);
    value["log"] = serde_json::json!(state.ref_name);
    value["head"] = serde_json::json!(state.head);
    let status = serde_json::to_value(chain.status).expect("a status serialises");
    let status = status.as_str().unwrap_or_default();
    let human = match (&chain.first_divergent, &chain.problem) {
        (Some(at), Some(problem)) => {
            format!("HPP event chain: broken at {at} · loop={id}\n{problem}")
        }
        _ => format!(
            "HPP event chain: {status} · loop={id} · events={} · head={}",
            chain.events,
            state.head.as_ref().map_or("none", |h| h.as_str())
        ),
    };
    let exit = if chain.is_broken() {
        Exit::Block
    } else {
        Exit::Ok
    };
    Ok(Outcome::document(args.format.json, &value, human, exit))
}
