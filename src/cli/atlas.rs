//! `git hpp atlas` (being built).

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// Not built yet
#[derive(Debug, clap::Args)]
pub struct AtlasArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `git hpp atlas`.
pub fn dispatch(_ctx: &Ctx, _args: AtlasArgs) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp atlas is not built yet"))
}
