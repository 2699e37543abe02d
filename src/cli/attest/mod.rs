//! `git hpp attest`: a checker's verdict bound to exact bytes.

pub mod create;
pub mod export;
pub mod import;
pub mod verify;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `attest` verbs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum AttestCommand {
    Create(create::AttestCreateArgs),
    Export(export::AttestExportArgs),
    Import(import::AttestImportArgs),
    Verify(verify::AttestVerifyArgs),
}

/// Runs one `attest` verb.
pub fn dispatch(ctx: &Ctx, command: AttestCommand) -> Result<Outcome, CliError> {
    match command {
        AttestCommand::Create(args) => create::cmd_attest_create(ctx, &args),
        AttestCommand::Export(args) => export::cmd_attest_export(ctx, &args),
        AttestCommand::Import(args) => import::cmd_attest_import(ctx, &args),
        AttestCommand::Verify(args) => verify::cmd_attest_verify(ctx, &args),
    }
}
