//! `git hpp lane close`: end a lane's claim and remove its worktree when nothing would be lost.

use serde_json::json;

use super::{now, refuse};
use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::lanes;
use hpp_core::lane::claim::LaneId;

/// Close a lane: record the close and remove its worktree and branch
///
/// The worktree is removed only when it holds no unsaved work: no modified, staged or
/// untracked (not ignored) file, and no commit on the lane's branch or HEAD that no other branch
/// or ref reaches. Otherwise nothing is closed and the refusal says exactly what is there.
/// --keep-worktree closes the claim only. Appends to refs/hpp/lanes/<ID>. Exit 0 closed,
/// 2 refused, 3 usage.
#[derive(Debug, clap::Args)]
pub struct LaneCloseArgs {
    /// The lane to close
    id: LaneId,
    /// Close the claim only; leave the worktree and the branch as they are
    #[arg(long)]
    keep_worktree: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Closes the lane.
pub fn cmd_lane_close(ctx: &Ctx, args: &LaneCloseArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let closed = lanes::close(store, &args.id, args.keep_worktree, now()).map_err(refuse)?;
    let value = json!({
        "lane": closed.record,
        "worktree_removed": closed.worktree_removed,
        "branch_deleted": closed.branch_deleted,
    });
    let mut human = format!("lane {} closed", args.id);
    if closed.worktree_removed {
        human.push_str(&format!(" · worktree {} removed", closed.record.worktree));
    } else {
        human.push_str(&format!(" · worktree {} kept", closed.record.worktree));
    }
    if closed.branch_deleted
        && let Some(branch) = &closed.record.branch
    {
        human.push_str(&format!(
            " · branch {branch} deleted (its commits are on other refs)"
        ));
    }
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}
