//! `git hpp hooks`: install and inspect the pre-push gate.

pub mod install;
pub mod status;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `hooks` verbs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum HooksCommand {
    Install(install::HooksInstallArgs),
    Status(status::HooksStatusArgs),
}

/// The warning a server gate gets when its repository trusts no signer: with neither a trust
/// policy nor an allowed-signers file, unsigned approvals pass the gate.
fn unsigned_warning(ctx: &Ctx, server: bool) -> Result<Option<String>, CliError> {
    if !server {
        return Ok(None);
    }
    let trust = ctx.trust(None, false, false)?;
    Ok((trust.policy.is_none() && trust.allowed.is_none()).then(|| {
        "this repository has neither a trust policy (refs/hpp/trust) nor an allowed-signers file: the gate lets unsigned approvals through; push a policy (`git hpp trust init`) or set hpp.allowedSignersFile here".to_owned()
    }))
}

/// Runs one `hooks` verb.
pub fn dispatch(ctx: &Ctx, command: HooksCommand) -> Result<Outcome, CliError> {
    match command {
        HooksCommand::Install(args) => install::cmd_hooks_install(ctx, &args),
        HooksCommand::Status(args) => status::cmd_hooks_status(ctx, &args),
    }
}
