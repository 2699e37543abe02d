//! `git hpp lane list`: every lane and how alive it is.

use serde_json::json;

use super::{ThresholdArgs, now, refuse};
use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::lanes;

/// List the lanes with their territory and liveness
///
/// Liveness comes from each lane's last heartbeat: at most --suspect-after seconds old is alive,
/// at most --dead-after is suspect, older (or closed) is dead. A heartbeat in the future of
/// --now is refused. Reads refs/hpp/lanes/*. Exit 0, 2 refused (bad thresholds, future
/// heartbeat), 3 usage.
#[derive(Debug, clap::Args)]
pub struct LaneListArgs {
    /// Judge liveness at this Unix time [default: now]
    #[arg(long, value_name = "T")]
    now: Option<i64>,
    #[command(flatten)]
    thresholds: ThresholdArgs,
    #[command(flatten)]
    format: JsonArg,
}

/// Lists the lanes.
pub fn cmd_lane_list(ctx: &Ctx, args: &LaneListArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let thresholds = args.thresholds.resolve(store)?;
    let at = args.now.unwrap_or_else(now);
    let lanes = lanes::list(store, at, thresholds).map_err(refuse)?;
    let value = json!({
        "schema": "hpp.lane-list/v1",
        "now": at,
        "suspect_after": thresholds.suspect_after,
        "dead_after": thresholds.dead_after,
        "lanes": lanes,
    });
    let mut human = String::new();
    if lanes.is_empty() {
        human.push_str("no lanes (start one with `git hpp lane start ID --territory PATH`, adding `--model MODEL` for an agent)");
    }
    for lane in &lanes {
        let r = &lane.record;
        // A closed lane is over: its liveness says nothing more than that.
        let standing = if lane.status == "open" {
            format!("{} · open", lane.liveness.as_str())
        } else {
            lane.status.to_string()
        };
        human.push_str(&format!(
            "{} · {standing} · {} {} · {}/{} · heartbeat {}s ago · {}\n",
            r.id,
            if r.exclusive { "exclusive" } else { "shared" },
            r.territory.join(", "),
            r.role,
            r.model,
            lane.age,
            r.worktree,
        ));
    }
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}
