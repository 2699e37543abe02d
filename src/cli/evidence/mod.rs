//! `git hpp evidence`: bundles from commands that really ran.

pub mod export;
pub mod import;
pub mod list;
pub mod mutate;
pub mod run;
pub mod show;
pub mod verify;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// The `evidence` verbs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum EvidenceCommand {
    Run(run::EvidenceRunArgs),
    Verify(verify::EvidenceVerifyArgs),
    List(list::EvidenceListArgs),
    Show(show::EvidenceShowArgs),
    Mutate(mutate::EvidenceMutateArgs),
    Import(import::EvidenceImportArgs),
    Export(export::EvidenceExportArgs),
}

/// Runs one `evidence` verb.
pub fn dispatch(ctx: &Ctx, command: EvidenceCommand) -> Result<Outcome, CliError> {
    match command {
        EvidenceCommand::Run(args) => run::cmd_evidence_run(ctx, &args),
        EvidenceCommand::Verify(args) => verify::cmd_evidence_verify(ctx, &args),
        EvidenceCommand::List(args) => list::cmd_evidence_list(ctx, &args),
        EvidenceCommand::Show(args) => show::cmd_evidence_show(ctx, &args),
        EvidenceCommand::Mutate(args) => mutate::cmd_evidence_mutate(ctx, &args),
        EvidenceCommand::Import(args) => import::cmd_evidence_import(ctx, &args),
        EvidenceCommand::Export(args) => export::cmd_evidence_export(ctx, &args),
    }
}
