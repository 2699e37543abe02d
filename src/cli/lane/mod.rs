//! `git hpp lane`: lanes on linked worktrees, their heartbeats, the territory guard and the
//! review guard.

pub mod close;
pub mod guard;
pub mod heartbeat;
pub mod list;
pub mod review_guard;
pub mod start;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;
use crate::lanes;
use hpp_core::lane::liveness;
use hpp_store::Store;

/// The verbs of `git hpp lane`.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum LaneCommand {
    Start(start::LaneStartArgs),
    Heartbeat(heartbeat::LaneHeartbeatArgs),
    List(list::LaneListArgs),
    Close(close::LaneCloseArgs),
    Guard(guard::LaneGuardArgs),
    ReviewGuard(review_guard::LaneReviewGuardArgs),
}

/// Runs one verb of `git hpp lane`.
pub fn dispatch(ctx: &Ctx, cmd: LaneCommand) -> Result<Outcome, CliError> {
    match cmd {
        LaneCommand::Start(args) => start::cmd_lane_start(ctx, &args),
        LaneCommand::Heartbeat(args) => heartbeat::cmd_lane_heartbeat(ctx, &args),
        LaneCommand::List(args) => list::cmd_lane_list(ctx, &args),
        LaneCommand::Close(args) => close::cmd_lane_close(ctx, &args),
        LaneCommand::Guard(args) => guard::cmd_lane_guard(ctx, &args),
        LaneCommand::ReviewGuard(args) => review_guard::cmd_lane_review_guard(ctx, &args),
    }
}

/// The liveness flags shared by the verbs that judge lanes.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ThresholdArgs {
    /// Seconds without a heartbeat after which a lane is suspect [default: git config hpp.lane.suspectAfter, else 600]
    #[arg(long, value_name = "S")]
    pub suspect_after: Option<i64>,
    /// Seconds without a heartbeat after which a lane is dead [default: git config hpp.lane.deadAfter, else 1800]
    #[arg(long, value_name = "D")]
    pub dead_after: Option<i64>,
}

impl ThresholdArgs {
    /// Resolves the thresholds: flags, else git config, else the defaults.
    pub fn resolve(&self, store: &Store) -> Result<liveness::Thresholds, CliError> {
        let config = |key: &str, default: i64| -> Result<i64, CliError> {
            match store.config_string(key) {
                None => Ok(default),
                Some(text) => text.trim().parse().map_err(|_| {
                    CliError::refused(format!(
                        "git config {key} must be a whole number of seconds, not {text:?}"
                    ))
                }),
            }
        };
        let suspect = match self.suspect_after {
            Some(s) => s,
            None => config("hpp.lane.suspectAfter", liveness::DEFAULT_SUSPECT_AFTER)?,
        };
        let dead = match self.dead_after {
            Some(d) => d,
            None => config("hpp.lane.deadAfter", liveness::DEFAULT_DEAD_AFTER)?,
        };
        liveness::Thresholds::new(suspect, dead).map_err(CliError::from)
    }
}

/// Now, in Unix seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// What a lane failure means to the user: a store failure keeps its own mapping, everything
/// else is a refusal (exit 2) with a hint where one helps.
pub fn refuse(e: lanes::Error) -> CliError {
    CliError::from(e)
}
