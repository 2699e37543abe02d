//! `git hpp lane` (being built).

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The verbs of `git hpp lane`.
#[derive(Debug, clap::Subcommand)]
pub enum LaneCommand {
    /// Not built yet
    Pending(Pending),
}

/// Arguments not parsed yet.
#[derive(Debug, clap::Args)]
pub struct Pending {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs one verb of `git hpp lane`.
pub fn dispatch(_ctx: &Ctx, _cmd: LaneCommand) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp lane is not built yet"))
}
