//! `git hpp status`: where a loop stands.

use serde_json::json;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::events;

/// Show where a loop stands and what to do next
///
/// Prints the state, event and evidence counts, the history, the next step and the chain's
/// status; then each gate (holds, not yet, reference missing, no longer holds, held on another
/// tree, unchecked for legacy events) and the command that passes the next one, against the
/// workspace as it is now. A state whose gates no longer hold (or whose records are missing)
/// is marked "not standing" beside it, and one whose gates were passed on another tree "on tree
/// X, not this one" (`standing: false` in the JSON either way). A broken chain is refused with exit 2, naming the first divergent
/// event. Reads refs/hpp/loops/<loop> and the records its events name; a loop of 64 events or
/// more, once verified whole, is remembered by its tip under .git/hpp-cache (a moved or forged
/// tip is verified whole again).
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Where the gates of `state` stand against the workspace now, under the signature rule in
/// force (what `status` and `resume` show).
pub(super) fn outlook(
    ctx: &Ctx,
    spec: &hpp_core::event_loop::LoopSpec,
    state: &crate::events::LoopState,
) -> Result<crate::gates::Outlook, CliError> {
    let trust = ctx.trust(None, false, false)?;
    Ok(crate::gates::outlook(
        ctx.store()?,
        spec,
        state,
        crate::attest::VerifyOptions::of(&trust),
    )?)
}

/// Reads the loop and renders its status.
pub fn cmd_status(ctx: &Ctx, args: &StatusArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.existing_loop_id(args.target.name.as_ref())?;
    let state = events::cache::read_standing(store, manifest.loop_spec(), &id)?;
    let p = state.require_intact()?;
    let outlook = outlook(ctx, manifest.loop_spec(), &state)?;
    let outcome_tree = outlook.tree.clone();
    let chain = &state.chain;
    let status = serde_json::to_value(chain.status).expect("a status serialises");
    let status = status.as_str().unwrap_or_default();
    let mut value = json!({
        "schema": "hpp.status/v1",
        "loop": state.id,
        "event_log": state.ref_name,
        "manifest": manifest.origin(),
        "state": p.state,
        "event_count": p.event_count,
        "evidence_count": p.evidence_count,
        "history": p.history,
        "next_step": p.next_step,
        "gates": outlook.gates,
        "next_action": outlook.next_action,
        "tree": outlook.tree,
        "chain": {"status": chain.status, "chained": chain.chained, "legacy": chain.legacy,
                  "head_sha256": chain.head_sha256, "head": state.head},
    });
    let legacy = if chain.legacy > 0 {
        format!(" ({} unchained)", chain.legacy)
    } else {
        String::new()
    };
    // A state whose gates do not stand on this tree is not that state here: say so beside it,
    // first.
    let qualifier = outlook.qualifier();
    let standing = qualifier
        .as_deref()
        .map_or_else(String::new, |q| format!(" ({q})"));
    value["standing"] = json!(qualifier.is_none());
    use crate::cli::output::{Tone, paint};
    let headline = if qualifier.is_some() {
        paint(Tone::Bad, &format!("{}{standing}", p.state))
    } else {
        format!("{}{standing}", p.state)
    };
    let mut human = format!(
        "HPP status: {headline} · loop={} · events={} · next={} · chain={status}{legacy}",
        state.id, p.event_count, p.next_step
    );
    for gate in &outlook.gates {
        human.push_str(&format!(
            "\n  gate {}: {}{}",
            gate.gate,
            paint(Tone::of_gate(&gate.status), &gate.status),
            gate.event
                .as_ref()
                .map_or_else(String::new, |e| format!(" ({e})"))
        ));
    }
    human.push_str(&format!("\nnext: {}", outlook.next_action));
    let outcome = Outcome::document(args.format.json, &value, human, Exit::Ok);
    let drift = match &outcome_tree {
        Some(tree) if p.event_count > 0 => {
            crate::cli::drift::note(store, tree, "what the gates check")?
        }
        _ => None,
    };
    Ok(match drift {
        Some(drift) => outcome.warn(drift),
        None => outcome,
    })
}
