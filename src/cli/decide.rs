//! `git hpp decide`: being written.

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `decide` verbs.
#[derive(Debug, Subcommand)]
pub enum DecideCommand {
    /// Validate a typed decision record
    Validate,
    /// Measure a decider against a suite
    Eval,
}

/// Runs one `decide` verb.
pub fn dispatch(_ctx: &Ctx, _command: DecideCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp decide is not implemented yet"))
}
