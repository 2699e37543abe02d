//! `git hpp install` (being built).

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// Not built yet
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `git hpp install`.
pub fn dispatch(_ctx: &Ctx, _args: InstallArgs) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp install is not built yet"))
}
