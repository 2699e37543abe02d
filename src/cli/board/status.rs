//! `git hpp board status`: print board events as JSON.

use serde_json::Value;

use super::read_board;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use hpp_core::board::Event;

/// Print board events
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// An item or a competition id [default: every event]
    id: Option<String>,
}

/// Prints every event, or one item's or one competition's.
pub fn cmd_board_status(ctx: &Ctx, args: &StatusArgs) -> Result<Outcome, CliError> {
    let board = read_board(ctx)?;
    let selected: Vec<&Event> = board
        .events
        .iter()
        .filter(|e| match (&args.id, e) {
            (None, _) => true,
            (Some(id), Event::Item(e)) => e.item_id == id,
            (Some(id), Event::Competition(e)) => &e.task_id == id,
        })
        .collect();
    let value: Value = crate::board::to_value(&selected);
    Ok(Outcome::json(&value, Exit::Ok))
}
