//! `git hpp trust set`: the settings every clone and server takes from the policy.

use super::{RootKeys, plan_or_apply};
use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::trust;

/// Set the policy's threshold and gate settings for every clone and server (plan, then --apply)
///
/// --threshold N: how many roots must sign each later change.
/// Plans a change of refs/hpp/trust whose settings name the protected refs (--protect, ref
/// patterns as hpp.protect takes them) and the push gates' mode (--verify tip|each, as
/// hpp.verify). The pre-push and pre-receive gates then use them in place of the repository's
/// git config, so a server guards what the policy says with no configuration of its own.
/// Signed by roots of the policy in force. Exits 0, 2 when refused.
#[derive(Debug, clap::Args)]
pub struct TrustSetArgs {
    /// A protected ref pattern (can be repeated; replaces the policy's list)
    #[arg(long = "protect", value_name = "PATTERN")]
    protect: Vec<String>,
    /// What the push gates verify: the new tip, or each commit an update brings
    #[arg(long, value_parser = ["tip", "each"])]
    verify: Option<String>,
    /// How many roots must sign each later change (1 to the number of roots)
    #[arg(long, value_name = "N")]
    threshold: Option<usize>,
    #[command(flatten)]
    keys: RootKeys,
    #[command(flatten)]
    format: JsonArg,
}

/// Plans or writes the settings.
pub fn cmd_trust_set(ctx: &Ctx, args: &TrustSetArgs) -> Result<Outcome, CliError> {
    if args.protect.is_empty() && args.verify.is_none() && args.threshold.is_none() {
        return Err(CliError::refused(
            "nothing to set: pass --protect PATTERN, --verify tip|each or --threshold N",
        ));
    }
    let store = ctx.store()?;
    let planned = trust::plan_change(store, |policy| {
        let mut next = policy.clone();
        if !args.protect.is_empty() {
            next.settings.protect = args.protect.clone();
        }
        if let Some(verify) = &args.verify {
            next.settings.verify = Some(verify.clone());
        }
        match args.threshold {
            Some(threshold) => next.with_threshold(threshold),
            None => {
                next.check()?;
                Ok(next)
            }
        }
    })?;
    plan_or_apply(ctx, &planned, &args.keys, args.format.json)
}
