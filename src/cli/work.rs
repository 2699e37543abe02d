//! `git hpp work`: being written.

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `work` verbs.
#[derive(Debug, Subcommand)]
pub enum WorkCommand {
    /// Compile a WorkGraph spec
    Plan,
    /// Order a WorkGraph spec into waves
    Waves,
    /// Join spec criteria to the tests that cite them and the reports that ran them
    Coverage,
}

/// Runs one `work` verb.
pub fn dispatch(_ctx: &Ctx, _command: WorkCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp work is not implemented yet"))
}
