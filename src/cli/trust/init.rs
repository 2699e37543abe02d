//! `git hpp trust init`: start the policy with its first root.

use std::path::PathBuf;

use super::{RootKeys, plan_or_apply};
use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::trust;

/// Start the trust policy with its first root (plan, then --apply)
///
/// Plans refs/hpp/trust's first commit: a policy whose one root is NAME with the public key
/// KEY, threshold 1, signed by that root (--sign-key must be its private key, or its public key
/// with the private half in ssh-agent). With --apply it is written and the root's fingerprint is
/// pinned as hpp.trustRoot here; every reader then requires signatures and takes keys and roles
/// from the policy. Refused when the repository has a policy. Exits 0, 2 when refused.
#[derive(Debug, clap::Args)]
pub struct TrustInitArgs {
    /// The root principal's name
    #[arg(long, value_name = "NAME")]
    root: String,
    /// The root's public key file (`ssh-keygen -f ROOT` writes ROOT.pub)
    #[arg(long, value_name = "ROOT.pub")]
    key: PathBuf,
    #[command(flatten)]
    keys: RootKeys,
    #[command(flatten)]
    format: JsonArg,
}

/// Plans or writes the first policy.
pub fn cmd_trust_init(ctx: &Ctx, args: &TrustInitArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let key = read_key(ctx, &args.key)?;
    let planned = trust::plan_init(store, &args.root, &key)?;
    plan_or_apply(ctx, &planned, &args.keys, args.format.json)
}

/// Reads a public key file as its key line.
pub(super) fn read_key(ctx: &Ctx, path: &std::path::Path) -> Result<String, CliError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(ctx.cwd().join(path))
        .map_err(|e| CliError::refused(format!("cannot read the key {shown}: {e}")))?;
    Ok(trust::key_line(&text, &shown)?)
}
