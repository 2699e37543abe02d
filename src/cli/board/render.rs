//! `git hpp board render`: print the board as Markdown.

use super::{markdown, read_board};
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;

/// Print the board as Markdown
#[derive(Debug, clap::Args)]
pub struct RenderArgs {}

/// Prints one section per item, then the competitions.
pub fn cmd_board_render(ctx: &Ctx) -> Result<Outcome, CliError> {
    let board = read_board(ctx)?;
    Ok(Outcome::raw(markdown::markdown(&board.events).into_bytes()))
}
