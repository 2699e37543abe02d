//! `git hpp context`: being written.

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `context` verbs.
#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// Compile context blocks under a budget, with provenance
    Compile,
}

/// Runs one `context` verb.
pub fn dispatch(_ctx: &Ctx, _command: ContextCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp context is not implemented yet"))
}
