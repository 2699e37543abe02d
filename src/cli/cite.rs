//! `git hpp cite`: being written.

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `cite` verbs.
#[derive(Debug, Subcommand)]
pub enum CiteCommand {
    /// Check that every claim cites context that exists
    Check,
}

/// Runs one `cite` verb.
pub fn dispatch(_ctx: &Ctx, _command: CiteCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp cite is not implemented yet"))
}
