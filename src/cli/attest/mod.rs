//! `git hpp attest`: a checker's verdict bound to exact bytes.

pub mod create;
pub mod verify;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `attest` verbs.
#[derive(Debug, Subcommand)]
pub enum AttestCommand {
    /// Record a checker's verdict on the current workspace snapshot
    Create(create::AttestCreateArgs),
    /// Check that a snapshot has a valid approved attestation
    Verify(verify::AttestVerifyArgs),
}

/// Runs one `attest` verb.
pub fn dispatch(ctx: &Ctx, command: AttestCommand) -> Result<Outcome, CliError> {
    match command {
        AttestCommand::Create(args) => create::cmd_attest_create(ctx, &args),
        AttestCommand::Verify(args) => verify::cmd_attest_verify(ctx, &args),
    }
}
