//! `git hpp doctor` (being built).

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// Not built yet
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `git hpp doctor`.
pub fn dispatch(_ctx: &Ctx, _args: DoctorArgs) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp doctor is not built yet"))
}
