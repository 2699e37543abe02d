//! `git hpp retrieval`: being written.

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `retrieval` verbs.
#[derive(Debug, Subcommand)]
pub enum RetrievalCommand {
    /// Measure a retriever against a suite
    Eval,
}

/// Runs one `retrieval` verb.
pub fn dispatch(_ctx: &Ctx, _command: RetrievalCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp retrieval is not implemented yet"))
}
