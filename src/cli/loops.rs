//! `git hpp loops`: every loop in the repository.

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::events;

/// List every loop with its state
///
/// One line per ref under refs/hpp/loops/: name, state, event count and chain status. A state
/// whose gates rest on another tree than the workspace's says so beside it ("verified (on tree
/// X, not this one)"; `standing: false` in the JSON), as `status` does. A broken loop is listed
/// as broken with its first divergent event, and the command then exits 2.
#[derive(Debug, clap::Args)]
pub struct LoopsArgs {
    #[command(flatten)]
    format: JsonArg,
}

/// Lists the loops.
pub fn cmd_loops(ctx: &Ctx, args: &LoopsArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let spec = manifest.loop_spec();
    let loops = events::list(store, spec)?;
    let trust = ctx.trust(None, false, false)?;
    let tree = crate::gates::workspace_tree(store, spec)?;
    let mut rows = Vec::with_capacity(loops.len());
    let mut human = String::new();
    let width = loops.iter().map(|l| l.id.as_str().len()).max().unwrap_or(0);
    for l in &loops {
        let state = l.projection.as_ref().map(|p| p.state.clone());
        // The headline agrees with the gates: the same qualifier `status` prints.
        let qualifier = if l.chain.is_broken() {
            None
        } else {
            crate::gates::outlook_at(
                store,
                spec,
                l,
                crate::attest::VerifyOptions::of(&trust),
                tree.clone(),
            )?
            .qualifier()
        };
        rows.push(json!({
            "loop": l.id, "state": state, "event_count": l.projection.as_ref().map(|p| p.event_count),
            "chain": l.chain.status, "first_divergent": l.chain.first_divergent, "head": l.head,
            "standing": state.is_some() && qualifier.is_none(), "qualifier": qualifier,
        }));
        let line = match (&state, &l.chain.first_divergent) {
            (Some(state), _) => {
                let shown = match &qualifier {
                    Some(q) => format!("{state} ({q})"),
                    None => state.clone(),
                };
                format!(
                    "{:<width$}  {shown:<10} events={}\n",
                    l.id.as_str(),
                    l.chain.events
                )
            }
            (None, at) => format!(
                "{:<width$}  broken     at {}\n",
                l.id.as_str(),
                at.as_deref().unwrap_or("?")
            ),
        };
        human.push_str(&line);
    }
    if loops.is_empty() {
        human.push_str("no loops yet: start one with `git hpp event append --type work_started`\n");
    }
    let exit = if loops.iter().any(|l| l.chain.is_broken()) {
        Exit::Block
    } else {
        Exit::Ok
    };
    Ok(Outcome::document(
        args.format.json,
        &json!({"schema": "hpp.loops/v1", "loops": rows}),
        human,
        exit,
    ))
}
