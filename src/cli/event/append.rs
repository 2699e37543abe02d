//! `git hpp event append`: record one event on a loop.

use serde_json::Value;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::events;

/// Append one event to a loop and print where the loop stands
///
/// The whole history plus the new event must walk the loop (planned → active → evidenced →
/// checked → approved → verified); otherwise the event is refused with exit 2 and nothing is
/// written. Writes refs/hpp/loops/<loop> by compare-and-swap; concurrent writers lose nothing.
#[derive(Debug, clap::Args)]
pub struct EventAppendArgs {
    /// Event type (work_started, evidence_recorded, check_passed, human_approved, verified)
    #[arg(long = "type", value_name = "TYPE")]
    kind: String,
    /// Event data, a JSON object [default: {}]
    #[arg(long, value_name = "JSON")]
    data: Option<String>,
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Appends the event and renders the projection.
pub fn cmd_event_append(ctx: &Ctx, args: &EventAppendArgs) -> Result<Outcome, CliError> {
    let data = match args.data.as_deref() {
        None => serde_json::Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(CliError::refused("event data must be a JSON object")),
            Err(e) => return Err(CliError::refused(format!("invalid JSON in --data: {e}"))),
        },
    };
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.loop_id(args.target.name.as_ref())?;
    let appended = events::append(store, manifest.loop_spec(), &id, &args.kind, data)?;
    let p = &appended.projection;
    let human = format!(
        "appended {} {} to loop {} (commit {})\nHPP status: {} · events={} · evidence={} · next={}",
        appended.event,
        args.kind,
        appended.id,
        &appended.commit.as_str()[..12],
        p.state,
        p.event_count,
        p.evidence_count,
        p.next_step
    );
    let mut value = serde_json::to_value(p).expect("a projection serialises");
    value["loop"] = Value::String(appended.id.to_string());
    value["head"] = Value::String(appended.commit.to_string());
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}
