//! `git hpp map lane|agent|monitor|context`: projections of lanes, agents, monitors and context
//! budgets, as JSON or Mermaid.

use std::path::PathBuf;

use super::ctx::Ctx;
use super::exit::CliError;
use super::graph::{Format, manifest_anywhere, render};
use super::input::{JsonRoot, read_json};
use super::output::Outcome;
use hpp_core::int::Int;
use hpp_core::maps::{self, LaneClock};

/// The verbs of `git hpp map`.
#[derive(Debug, clap::Subcommand)]
pub enum MapCommand {
    /// Project lanes: liveness and collisions between live exclusive lanes
    ///
    /// Reads a lane SOURCE (a JSON array of {"id", "territory": [paths], "exclusive"?, "status"?,
    /// "heartbeat_at"?}), or without SOURCE the live lanes under refs/hpp/lanes/. With --now each
    /// lane is alive (heartbeat age <= --suspect-after), suspect (<= --dead-after), dead, or
    /// unknown (no heartbeat); a closed, dead or inactive status is dead; without --now a SOURCE's
    /// declared status is shown, while the lanes from refs are projected against the current
    /// time. Two live exclusive lanes collide when a path of one equals or contains a path of the
    /// other at a `/` boundary; a dead lane never collides. Prints hpp.map/v1. Exits 0; refuses
    /// (exit 2) a heartbeat in the future of --now or negative, thresholds not satisfying
    /// 0 < suspect-after < dead-after, or a malformed source.
    Lane(MapLaneArgs),
    /// Project roles, modules, capabilities and an execution chain
    ///
    /// Reads the manifest's roles and modules (the global --manifest, else the repository's,
    /// else the built-in one) and, with --events, a JSON array of {"type"} events drawn as a
    /// chain linked by `then`. Prints hpp.map/v1 view agent. Exits 0; refuses (exit 2) a
    /// malformed manifest or events file. Reads no refs.
    Agent(MapAgentArgs),
    /// Project monitors against an explicit clock: healthy, stale, skew or unknown
    ///
    /// Reads a monitor SOURCE (a JSON array of {"id", "target", "type", "cadence", "freshness",
    /// "severity", "cost", "consumer_gate", "last_signal"?}), or without SOURCE the monitors the
    /// manifest declares. A missing signal is unknown, one beyond --now + --skew-tolerance is
    /// skew, one within its freshness window is healthy, any other stale. Prints
    /// hpp.monitor-map/v1. --now is required: the projection never reads the clock. Exits 0;
    /// refuses (exit 2) a missing --now or a malformed source.
    Monitor(MapMonitorArgs),
    /// Project context provenance under a budget
    ///
    /// Compiles a context SOURCE ([{"source", "priority", "content"}]) under --budget characters
    /// and prints hpp.map/v1 view context: each block included or omitted, with its size and
    /// sha256. Exits 0; refuses (exit 2) what `git hpp context compile` refuses.
    Context(MapContextArgs),
}

/// The arguments of `git hpp map lane` (the help text sits on its verb).
#[derive(Debug, clap::Args)]
pub struct MapLaneArgs {
    /// Lane source, a JSON array [default: the live lanes under refs/hpp/lanes/]
    #[arg(value_name = "SOURCE")]
    source: Option<PathBuf>,
    /// Unix seconds to project liveness against [default: a SOURCE's declared status; for the
    /// lanes from refs, the current time]
    #[arg(long, value_name = "INT", allow_negative_numbers = true)]
    now: Option<Int>,
    /// Seconds after a heartbeat when a lane becomes suspect
    #[arg(long, value_name = "SECONDS", default_value_t = Int::from(maps::DEFAULT_SUSPECT_AFTER), allow_negative_numbers = true)]
    suspect_after: Int,
    /// Seconds after a heartbeat when a lane becomes dead
    #[arg(long, value_name = "SECONDS", default_value_t = Int::from(maps::DEFAULT_DEAD_AFTER), allow_negative_numbers = true)]
    dead_after: Int,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
}

/// The arguments of `git hpp map agent`.
#[derive(Debug, clap::Args)]
pub struct MapAgentArgs {
    /// A JSON array of events, each {"type", ...}
    #[arg(long, value_name = "EVENTS.json")]
    events: Option<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
}

/// The arguments of `git hpp map monitor`.
#[derive(Debug, clap::Args)]
pub struct MapMonitorArgs {
    /// Monitor source, a JSON array [default: the manifest's monitors]
    #[arg(value_name = "SOURCE")]
    source: Option<PathBuf>,
    /// Unix seconds to project against (required)
    #[arg(long, value_name = "INT", allow_negative_numbers = true)]
    now: Option<Int>,
    /// Seconds a signal may lie in the future before it is skew
    #[arg(long, value_name = "SECONDS", default_value_t = Int::from(maps::DEFAULT_SKEW_TOLERANCE), allow_negative_numbers = true)]
    skew_tolerance: Int,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
}

/// The arguments of `git hpp map context`.
#[derive(Debug, clap::Args)]
pub struct MapContextArgs {
    /// Context inputs, a JSON array of {"source", "priority", "content"}
    #[arg(value_name = "SOURCE")]
    source: PathBuf,
    /// Budget in characters, separators included
    #[arg(long, value_name = "INT", allow_negative_numbers = true)]
    budget: Int,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
}

/// Runs one verb of `git hpp map`.
pub fn dispatch(ctx: &Ctx, cmd: MapCommand) -> Result<Outcome, CliError> {
    match cmd {
        MapCommand::Lane(args) => cmd_map_lane(ctx, &args),
        MapCommand::Agent(args) => cmd_map_agent(ctx, &args),
        MapCommand::Monitor(args) => cmd_map_monitor(ctx, &args),
        MapCommand::Context(args) => cmd_map_context(ctx, &args),
    }
}

/// Returns the current time in Unix seconds (only for lanes read from refs without --now).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Projects the lane map.
pub fn cmd_map_lane(ctx: &Ctx, args: &MapLaneArgs) -> Result<Outcome, CliError> {
    let (source, now) = match &args.source {
        Some(path) => (read_json(ctx, path, JsonRoot::Array)?, args.now.clone()),
        None => {
            let lanes = crate::lanes::open_lane_source(ctx.store()?)?;
            let now = args.now.clone().unwrap_or_else(|| unix_now().into());
            (lanes, Some(now))
        }
    };
    let clock = LaneClock {
        now,
        suspect_after: args.suspect_after.clone(),
        dead_after: args.dead_after.clone(),
    };
    let map = maps::lane_map(&source, &clock)?;
    render(args.format, &map, &map.drawing())
}

/// Projects the agent map.
pub fn cmd_map_agent(ctx: &Ctx, args: &MapAgentArgs) -> Result<Outcome, CliError> {
    let events = args
        .events
        .as_ref()
        .map(|p| read_json(ctx, p, JsonRoot::Array))
        .transpose()?;
    let manifest = manifest_anywhere(ctx)?;
    let map = maps::agent_map(manifest.value(), events.as_ref())?;
    render(args.format, &map, &map.graph)
}

/// Projects the monitor map.
pub fn cmd_map_monitor(ctx: &Ctx, args: &MapMonitorArgs) -> Result<Outcome, CliError> {
    let Some(now) = args.now.clone() else {
        return Err(CliError::refused(
            "map monitor needs --now: the projection never reads the clock",
        )
        .hint("pass the time to project against, e.g. --now $(date +%s)"));
    };
    let source = match &args.source {
        Some(path) => read_json(ctx, path, JsonRoot::Array)?,
        None => {
            let declared = manifest_anywhere(ctx)?
                .value()
                .get("monitors")
                .cloned()
                .unwrap_or_default();
            // In a repository, each monitor's last signal is the newest passing probe recorded
            // under refs/hpp/monitors/ (`git hpp monitor probe`).
            match ctx.store() {
                Ok(store) => crate::monitors::with_signals(store, &declared)?,
                Err(_) => declared,
            }
        }
    };
    let map = maps::monitor_map(&source, now, args.skew_tolerance.clone())?;
    render(args.format, &map, &map.drawing())
}

/// Projects the context map.
pub fn cmd_map_context(ctx: &Ctx, args: &MapContextArgs) -> Result<Outcome, CliError> {
    let inputs = read_json(ctx, &args.source, JsonRoot::Array)?;
    let map = maps::context_map(&inputs, args.budget.clone())?;
    render(args.format, &map, &map.graph)
}
