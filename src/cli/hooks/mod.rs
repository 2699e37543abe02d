//! `git hpp hooks`: install and inspect the pre-push gate.

pub mod install;
pub mod status;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `hooks` verbs.
#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Plan (then, with --apply, install) the pre-push gate
    Install(install::HooksInstallArgs),
    /// Tell whether the pre-push gate is really wired
    Status(status::HooksStatusArgs),
}

/// Runs one `hooks` verb.
pub fn dispatch(ctx: &Ctx, command: HooksCommand) -> Result<Outcome, CliError> {
    match command {
        HooksCommand::Install(args) => install::cmd_hooks_install(ctx, &args),
        HooksCommand::Status(args) => status::cmd_hooks_status(ctx, &args),
    }
}
