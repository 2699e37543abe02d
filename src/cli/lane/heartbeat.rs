//! `git hpp lane heartbeat`: a lane's sign of life, also run by the lane-kit session hooks.

use serde_json::json;

use super::{now, refuse};
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::input::{HookNoun, read_hook_input};
use crate::cli::output::Outcome;
use crate::cli::{HostArg, JsonArg};
use crate::lanes;
use hpp_core::host::{Answer, Blank, Event, Host};
use hpp_core::lane::claim::LaneId;
use hpp_store::Store;

/// Record a heartbeat for a lane
///
/// Appends a heartbeat to refs/hpp/lanes/<ID>; without ID, to the open lane whose worktree
/// contains the working directory. --min-interval skips the write when the last heartbeat is
/// younger (the session hook passes 60). With --hook HOST it reads the agent host's hook JSON on
/// stdin (its `cwd` picks the lane), is silent outside a lane, and on SessionStart always writes
/// (no --min-interval) and prints the lane's claim as context for the agent (Claude Code reads it
/// as hookSpecificOutput.additionalContext, Codex as plain text). Exit 0, 2 refused (no such lane,
/// closed), 3 usage.
#[derive(Debug, clap::Args)]
pub struct LaneHeartbeatArgs {
    /// The lane [default: the open lane whose worktree contains the working directory]
    id: Option<LaneId>,
    /// Write nothing when the last heartbeat is younger than this many seconds
    #[arg(long, value_name = "S", default_value_t = 0)]
    min_interval: i64,
    /// Read a hook payload of this agent host on stdin (SessionStart or PostToolUse)
    #[arg(long, value_name = "HOST")]
    hook: Option<HostArg>,
    #[command(flatten)]
    format: JsonArg,
}

/// Records the heartbeat.
pub fn cmd_lane_heartbeat(ctx: &Ctx, args: &LaneHeartbeatArgs) -> Result<Outcome, CliError> {
    if let Some(HostArg(host)) = args.hook {
        return from_hook(ctx, args, host);
    }
    let store = ctx.store()?;
    let id = match &args.id {
        Some(id) => id.clone(),
        None => {
            lanes::lane_of_dir(store, ctx.cwd())
                .map_err(refuse)?
                .ok_or_else(|| {
                    refuse(lanes::Error::NoLaneHere {
                        dir: ctx.cwd().to_owned(),
                    })
                })?
                .id
        }
    };
    let (record, written) =
        lanes::heartbeat(store, &id, now(), args.min_interval).map_err(refuse)?;
    let value = json!({"lane": record, "written": written});
    let human = if written {
        format!("lane {id}: heartbeat at {}", record.heartbeat_at)
    } else {
        format!(
            "lane {id}: last heartbeat at {} is recent; nothing written",
            record.heartbeat_at
        )
    };
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}

/// The hook form: never in the agent's way. Outside a repository or a lane it is silent; on
/// SessionStart it tells the agent its lane.
fn from_hook(ctx: &Ctx, args: &LaneHeartbeatArgs, host: Host) -> Result<Outcome, CliError> {
    let input = read_hook_input(ctx, Blank::Refused, HookNoun::Payload)?;
    let cwd = input.dir(ctx.cwd());
    let silent = || Outcome::answer(Answer::Silent);
    let Ok(store) = Store::discover(&cwd) else {
        return silent();
    };
    let lane = match &args.id {
        Some(id) => lanes::read_lane(&store, id)
            .map_err(refuse)?
            .map(|(_, r)| r)
            .filter(|r| !r.is_closed()),
        None => lanes::lane_of_dir(&store, &cwd).map_err(refuse)?,
    };
    let Some(lane) = lane else {
        return silent();
    };
    let session_start = input.event.is(Event::SessionStart);
    // A new session always shows its sign of life; tool calls are throttled.
    let min_interval = if session_start { 0 } else { args.min_interval };
    let (record, _) = lanes::heartbeat(&store, &lane.id, now(), min_interval).map_err(refuse)?;
    if !session_start {
        return silent();
    }
    let context = format!(
        "You work in lane {} (role {}, model {}), worktree {}, branch {}. Edit only inside its {} territory: {}. \
         Run `git hpp lane list` to see the other lanes and `git hpp lane close {}` when the work is merged.",
        record.id,
        record.role,
        record.model,
        record.worktree,
        record.branch.as_deref().unwrap_or("(detached)"),
        if record.exclusive {
            "exclusive"
        } else {
            "shared"
        },
        record.territory.join(", "),
        record.id,
    );
    Outcome::answer(host.session_context(&context))
}
