//! `git hpp route`: choose a tier and provider for a request.

use std::path::PathBuf;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{JsonRoot, read_json};
use super::output::Outcome;
use crate::deliberation::read_sealed;
use hpp_core::deliberation::{self, Grounding, SessionType};
use hpp_core::routing::{self, Tier};

/// Choose a tier and provider for a request: a risk floor, fallback only upward
///
/// Risk, complexity and context size set a floor under the policy's tier; the route takes a
/// provider at that tier, or else the lowest tier above it, and never one below. Prints
/// hpp.route/v1. With --deliberation, a sealed plan session (a file, or a ref or id under
/// refs/hpp/deliberations) judged outside the maker's family can only raise the request's risk,
/// never lower it; the route then carries "deliberation": {record_sha256, verdict, status,
/// applied, raised_from}. Exits 0; refuses (exit 2) a malformed request or provider list, a
/// session that does not verify, is not a plan session or was judged by the maker's family, and a
/// request no provider can serve at or above its floor. Needs no repository unless the session is
/// named by ref.
#[derive(Debug, clap::Args)]
pub struct RouteArgs {
    /// JSON object {"stage", "risk", "complexity", "context"}
    #[arg(long, value_name = "FILE")]
    request: PathBuf,
    /// JSON list of {"id", "tiers", "stages", "max_context"}
    #[arg(long, value_name = "FILE")]
    providers: PathBuf,
    /// Routing policy: the tier for low-stakes work
    #[arg(long, value_enum, default_value_t = TierArg(Tier::Balanced))]
    policy: TierArg,
    /// A sealed plan session whose verdict can only raise the risk: a file, a ref or an id
    #[arg(long, value_name = "REF")]
    deliberation: Option<String>,
    /// The maker's model family; a judge of that family is refused
    #[arg(long, value_name = "F")]
    maker_family: Option<String>,
}

/// A tier as a command-line value (the core knows no clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TierArg(Tier);

impl clap::ValueEnum for TierArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [TierArg; 3] = [
            TierArg(Tier::ALL[0]),
            TierArg(Tier::ALL[1]),
            TierArg(Tier::ALL[2]),
        ];
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.as_str()).help(self.0.about()))
    }
}

impl std::fmt::Display for TierArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Routes the request.
pub fn cmd_route(ctx: &Ctx, args: &RouteArgs) -> Result<Outcome, CliError> {
    let request = read_json(ctx, &args.request, JsonRoot::Object)?;
    let providers = read_json(ctx, &args.providers, JsonRoot::Array)?;
    let mut request = routing::parse_request(&request)?;
    let providers = routing::parse_providers(&providers)?;
    let mut applied = None;
    if let Some(name) = &args.deliberation {
        let family = args
            .maker_family
            .as_deref()
            .ok_or_else(|| CliError::refused(deliberation::Error::NeedsMakerFamily))?;
        let sealed = read_sealed(
            ctx.cwd(),
            name,
            |path| read_json(ctx, path, JsonRoot::Object),
            || ctx.store(),
        )?;
        let verdict = deliberation::panel_verdict(
            &sealed.record,
            SessionType::Plan,
            &["low", "medium", "high"],
            family,
            Grounding::Any,
        )?;
        applied = Some(routing::raise_risk(
            &mut request,
            &verdict.record_sha256,
            verdict.status.as_str(),
            verdict.value.as_deref(),
        ));
    }
    let mut chosen = routing::route(&request, args.policy.0, &providers)?;
    chosen.deliberation = applied;
    Ok(Outcome::json(&chosen, Exit::Ok))
}
