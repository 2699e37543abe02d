//! `git hpp route`: being written.

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// Choose a tier and provider for a request: a risk floor, fallback only upward
#[derive(Debug, clap::Args)]
pub struct RouteArgs {}

/// Routes the request.
pub fn cmd_route(_ctx: &Ctx, _args: &RouteArgs) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp route is not implemented yet"))
}
