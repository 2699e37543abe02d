//! `git hpp lane start`: claim a territory and create the lane's worktree.

use std::path::PathBuf;

use serde_json::json;

use super::{ThresholdArgs, now, refuse};
use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::lanes::{self, StartRequest};
use hpp_core::lane::claim::LaneId;
use hpp_store::refs;

/// Start a lane: a claim on a territory and a linked worktree to work in
///
/// Writes the claim as the first commit of refs/hpp/lanes/<ID> and creates a linked worktree on a
/// new branch hpp/lane/<ID> at HEAD, next to the main worktree in <repo-dir>.lanes/<ID> (or at
/// --path, which must be outside every worktree). An exclusive lane whose territory equals or
/// nests with a live (not dead) exclusive lane's is refused before anything is written, naming
/// the other lane and the overlapping paths. Two racing starts never both take colliding
/// territory. Exit 0 started, 2 refused, 3 usage.
#[derive(Debug, clap::Args)]
pub struct LaneStartArgs {
    /// The lane id (one branch-name component)
    id: LaneId,
    /// Paths of the territory, relative to the worktree root (`.` for all of it)
    #[arg(long, value_name = "PATH", num_args = 1.., required = true)]
    territory: Vec<String>,
    /// Claim the territory shared, not exclusively
    #[arg(long)]
    shared: bool,
    /// The lane's role (maker, checker, ...)
    #[arg(long, default_value = "maker")]
    role: String,
    /// The model the lane runs; a person working the lane leaves it out
    #[arg(long, default_value = "human")]
    model: String,
    /// Directory for the lane's worktree [default: <repo-dir>.lanes/<ID> next to the main worktree]
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// Record the start at this Unix time instead of now (for replays and tests)
    #[arg(long, value_name = "T", hide = true)]
    now: Option<i64>,
    #[command(flatten)]
    thresholds: ThresholdArgs,
    #[command(flatten)]
    format: JsonArg,
}

/// Starts the lane.
pub fn cmd_lane_start(ctx: &Ctx, args: &LaneStartArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let req = StartRequest {
        id: args.id.clone(),
        territory: args.territory.clone(),
        exclusive: !args.shared,
        role: args.role.clone(),
        model: args.model.clone(),
        path: args.path.as_ref().map(|p| ctx.cwd().join(p)),
        now: args.now.unwrap_or_else(now),
        thresholds: args.thresholds.resolve(store)?,
    };
    let record = lanes::start(store, &req).map_err(refuse)?;
    let value = json!({"lane": record, "ref": refs::lane(record.id.as_str())});
    let human = format!(
        "lane {} started: {} territory {} · worktree {} · branch {}\nwork there: cd {}",
        record.id,
        if record.exclusive {
            "exclusive"
        } else {
            "shared"
        },
        record.territory.join(", "),
        record.worktree,
        record.branch.as_deref().unwrap_or("(detached)"),
        record.worktree,
    );
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}
