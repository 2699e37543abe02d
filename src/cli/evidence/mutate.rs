//! `git hpp evidence mutate`: being written.

use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;

/// Measure whether a criterion command notices planted bugs (criterion sensitivity)
#[derive(Debug, clap::Args)]
pub struct EvidenceMutateArgs {}

/// Runs the mutants.
pub fn cmd_evidence_mutate(_ctx: &Ctx, _args: &EvidenceMutateArgs) -> Result<Outcome, CliError> {
    Err(CliError::usage(
        "git hpp evidence mutate is not implemented yet",
    ))
}
