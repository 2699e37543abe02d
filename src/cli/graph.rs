//! `git hpp graph` (being built).

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// Not built yet
#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `git hpp graph`.
pub fn dispatch(_ctx: &Ctx, _args: GraphArgs) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp graph is not built yet"))
}
