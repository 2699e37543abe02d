//! `git hpp snapshot`: the workspace as a git tree id.

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;

/// Print the workspace snapshot: the tree id of tracked plus untracked-not-ignored files
///
/// The same tree `git add -A && git write-tree` would write with a copy of the index, computed
/// without touching the index or HEAD (blobs are written to the object database). This is what
/// attestations are keyed by. Reads the worktree; writes objects only.
#[derive(Debug, clap::Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    format: JsonArg,
}

/// Computes and prints the snapshot.
pub fn cmd_snapshot(ctx: &Ctx, args: &SnapshotArgs) -> Result<Outcome, CliError> {
    let tree = ctx.store()?.snapshot()?;
    Ok(Outcome::document(
        args.format.json,
        &json!({"tree": tree}),
        tree.to_string(),
        Exit::Ok,
    ))
}
