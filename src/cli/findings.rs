//! `git hpp findings`: being written.

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `findings` verbs.
#[derive(Debug, Subcommand)]
pub enum FindingsCommand {
    /// Check review findings documents and derive their verdicts
    Check,
}

/// Runs one `findings` verb.
pub fn dispatch(_ctx: &Ctx, _command: FindingsCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp findings is not implemented yet"))
}
