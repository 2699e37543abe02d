//! `git hpp init` (being built).

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// Not built yet
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `git hpp init`.
pub fn dispatch(_ctx: &Ctx, _args: InitArgs) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp init is not built yet"))
}
