//! `git hpp trust seal`: a log written before policies carried their place gets one.

use super::{RootKeys, plan_or_apply};
use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::trust;

/// Seal a policy log written before policies carried their version (plan, then --apply)
///
/// Policies written by earlier versions of git-hpp carry no version and no predecessor in the
/// bytes their roots sign, so an older one could be replayed as a newer change. They keep
/// verifying; this writes the policy in force again, unchanged but sealed (its version and the
/// digest of the policy before it), signed by its roots. From then on every change must follow
/// in its place and an unsealed policy is refused after it. Every change written now is sealed
/// anyway. Exits 0, 2 when the log is sealed already or the signatures do not suffice.
#[derive(Debug, clap::Args)]
pub struct TrustSealArgs {
    #[command(flatten)]
    keys: RootKeys,
    #[command(flatten)]
    format: JsonArg,
}

/// Plans or writes the seal.
pub fn cmd_trust_seal(ctx: &Ctx, args: &TrustSealArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let planned = trust::plan_change(store, |policy| match policy.version {
        Some(version) => Err(hpp_core::trust::Error::Sealed(version)),
        None => Ok(policy.clone()),
    })?;
    plan_or_apply(ctx, &planned, &args.keys, args.format.json)
}
