//! `git hpp event reconcile`: keep one side of a loop two machines appended to.

use serde_json::json;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::events::reconcile::{self, Keep};

/// Keep one side of a loop that diverged from the remote's, and join the other to it
///
/// A loop both this machine and another appended to between fetches cannot be merged event
/// by event: `git hpp fetch` reports it and stages the remote's history under
/// refs/hpp-remote/<remote>/loops/<loop>. This keeps one side as the loop (`ours`: this
/// machine's; `theirs`: the staged one, which must verify) and moves the loop forward to a
/// join commit whose parents are both tips: the kept side's last event (its tree, plus
/// reconcile.json recording the choice) and the other side's tip, which also stays at
/// refs/hpp/preserved/loops/<loop>/<commit>. Nothing is deleted or forced: `git hpp push`
/// then moves the remote's loop forward too. Exits 0 when reconciled, 2 when refused (the
/// loop has not diverged, nothing is staged, or the side to keep does not verify).
#[derive(Debug, clap::Args)]
pub struct EventReconcileArgs {
    #[command(flatten)]
    target: LoopArg,
    /// Which side becomes the loop
    #[arg(long, value_enum)]
    keep: Keep,
    /// The remote whose staged history is the other side
    #[arg(long, default_value = "origin")]
    remote: String,
    #[command(flatten)]
    format: JsonArg,
}

/// Reconciles the loop.
pub fn cmd_event_reconcile(ctx: &Ctx, args: &EventReconcileArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.loop_id(args.target.name.as_ref())?;
    let at = hpp_core::timestamp::rfc3339(time::OffsetDateTime::now_utc());
    let done = reconcile::reconcile(
        store,
        manifest.loop_spec(),
        &id,
        &args.remote,
        args.keep,
        &at,
    )
    .map_err(|e| match e {
        reconcile::Error::Store(inner) => CliError::from(inner),
        reconcile::Error::Loop(inner) => CliError::from(inner),
        refused => CliError::refused(refused),
    })?;
    let side = match args.keep {
        Keep::Ours => "this machine's",
        Keep::Theirs => "the remote's",
    };
    let human = format!(
        "loop {id}: kept {side} history ({} events); the other side is joined at {} and preserved at {}\nnext: `git hpp push {}` moves the remote's loop forward to the join",
        done.events, done.commit, done.record.preserved_ref, args.remote
    );
    let value = json!({
        "loop": id,
        "commit": done.commit,
        "events": done.events,
        "record": done.record,
    });
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}
