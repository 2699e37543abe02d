//! `git hpp trust add|remove`: a change of the policy, signed by its roots.

use std::path::PathBuf;

use super::init::read_key;
use super::{RootKeys, plan_or_apply};
use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::trust;
use hpp_core::trust::{Held, Role};

/// A role as a command-line value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoleArg {
    /// Records verdicts on another's work (attestations)
    Checker,
    /// Approves a loop (human_approved)
    Person,
    /// Makes work and records its evidence
    Maker,
    /// Signs changes of the policy
    Root,
}

/// Add a principal, or give one a role (plan, then --apply)
///
/// Plans a change of refs/hpp/trust: NAME with the public key KEY gains the roles given
/// (checker: their verdicts count; person: their approvals count; maker: their evidence; root:
/// they sign policy changes). A principal already in the policy keeps its key. Signed by roots
/// of the policy in force, at least its threshold (--sign-key, repeated). Exits 0, 2 when
/// refused (an unknown role, a bad key, a key that is no root's, too few roots).
#[derive(Debug, clap::Args)]
pub struct TrustAddArgs {
    /// The principal
    name: String,
    /// Their public key file
    #[arg(long, value_name = "NAME.pub")]
    key: PathBuf,
    /// A role to give (can be repeated)
    #[arg(long = "role", value_name = "ROLE", required = true)]
    roles: Vec<RoleArg>,
    #[command(flatten)]
    keys: RootKeys,
    #[command(flatten)]
    format: JsonArg,
}

/// Remove a principal, or one role of it, from the policy (plan, then --apply)
///
/// Plans a change of refs/hpp/trust without NAME, as a principal and as a root; with --role,
/// NAME loses that role only (a principal left with none is removed). The plan lists every role
/// taken away. Refused for the last root, or a root whose removal leaves fewer roots than the
/// threshold. Signed by roots of the policy in force (--sign-key, repeated). Exits 0, 2 when
/// refused.
#[derive(Debug, clap::Args)]
pub struct TrustRemoveArgs {
    /// The principal
    name: String,
    /// The one role to take away (checker, person, maker or root)
    #[arg(long, value_name = "ROLE")]
    role: Option<RoleArg>,
    #[command(flatten)]
    keys: RootKeys,
    #[command(flatten)]
    format: JsonArg,
}

impl RoleArg {
    /// The role as the policy holds it.
    fn held(self) -> Held {
        match self {
            RoleArg::Checker => Held::Role(Role::Checker),
            RoleArg::Person => Held::Role(Role::Person),
            RoleArg::Maker => Held::Role(Role::Maker),
            RoleArg::Root => Held::Root,
        }
    }
}

/// Plans or writes an addition.
pub fn cmd_trust_add(ctx: &Ctx, args: &TrustAddArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let key = read_key(ctx, &args.key)?;
    let roles: Vec<Role> = args
        .roles
        .iter()
        .filter_map(|r| match r {
            RoleArg::Checker => Some(Role::Checker),
            RoleArg::Person => Some(Role::Person),
            RoleArg::Maker => Some(Role::Maker),
            RoleArg::Root => None,
        })
        .collect();
    let root = args.roles.contains(&RoleArg::Root);
    let planned = trust::plan_change(store, |policy| {
        let with_roles = if roles.is_empty() {
            policy.clone()
        } else {
            policy.add(&args.name, &key, &roles)?
        };
        if root {
            with_roles.add_root(&args.name, &key)
        } else {
            Ok(with_roles)
        }
    })?;
    plan_or_apply(ctx, &planned, &args.keys, args.format.json)
}

/// Plans or writes a removal.
pub fn cmd_trust_remove(ctx: &Ctx, args: &TrustRemoveArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let planned = trust::plan_change(store, |policy| match args.role {
        None => policy.remove(&args.name),
        Some(role) => policy.remove_role(&args.name, role.held()),
    })?;
    plan_or_apply(ctx, &planned, &args.keys, args.format.json)
}
