//! `git hpp route`: choose a tier and provider for a request.

use std::path::PathBuf;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{JsonRoot, read_json};
use super::output::Outcome;
use crate::routing::{self, Tier};

/// Choose a tier and provider for a request: a risk floor, fallback only upward
///
/// Risk, complexity and context size set a floor under the policy's tier; the route takes a
/// provider at that tier, or else the lowest tier above it, and never one below. Prints
/// hpp.route/v1. Exits 0; refuses (exit 2) a malformed request or provider list, and a request
/// no provider can serve at or above its floor. Needs no repository.
#[derive(Debug, clap::Args)]
pub struct RouteArgs {
    /// JSON object {"stage", "risk", "complexity", "context"}
    #[arg(long, value_name = "FILE")]
    request: PathBuf,
    /// JSON list of {"id", "tiers", "stages", "max_context"}
    #[arg(long, value_name = "FILE")]
    providers: PathBuf,
    /// Routing policy: the tier for low-stakes work
    #[arg(long, value_enum, default_value_t = Tier::Balanced)]
    policy: Tier,
}

/// Routes the request.
pub fn cmd_route(ctx: &Ctx, args: &RouteArgs) -> Result<Outcome, CliError> {
    let request = read_json(ctx, &args.request, JsonRoot::Object)?;
    let providers = read_json(ctx, &args.providers, JsonRoot::Array)?;
    let request = routing::parse_request(&request).map_err(CliError::refused)?;
    let providers = routing::parse_providers(&providers).map_err(CliError::refused)?;
    let chosen = routing::route(&request, args.policy, &providers).map_err(CliError::refused)?;
    Ok(Outcome::json(&chosen, Exit::Ok))
}
