//! `git hpp eval`: being written.

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `eval` verbs.
#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Run an eval suite k times: pass@k and pass^k
    Run,
}

/// Runs one `eval` verb.
pub fn dispatch(_ctx: &Ctx, _command: EvalCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp eval is not implemented yet"))
}
