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

/// Runs one `hooks` verb.
pub fn dispatch(ctx: &Ctx, command: HooksCommand) -> Result<Outcome, CliError> {
    match command {
        HooksCommand::Install(args) => install::cmd_hooks_install(ctx, &args),
        HooksCommand::Status(args) => status::cmd_hooks_status(ctx, &args),
    }
}
