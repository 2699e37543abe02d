//! `git hpp evidence`: bundles from commands that really ran.

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
pub enum EvidenceCommand {
    /// Run a criterion command and record an evidence bundle
    Run(run::EvidenceRunArgs),
    /// Re-derive a bundle: self-hash, consistency, artifacts, signature
    Verify(verify::EvidenceVerifyArgs),
    /// List every evidence bundle
    List(list::EvidenceListArgs),
    /// Print one bundle's record
    Show(show::EvidenceShowArgs),
    /// Measure whether a criterion command notices planted bugs
    Mutate(mutate::EvidenceMutateArgs),
}

/// Runs one `evidence` verb.
pub fn dispatch(ctx: &Ctx, command: EvidenceCommand) -> Result<Outcome, CliError> {
    match command {
        EvidenceCommand::Run(args) => run::cmd_evidence_run(ctx, &args),
        EvidenceCommand::Verify(args) => verify::cmd_evidence_verify(ctx, &args),
        EvidenceCommand::List(args) => list::cmd_evidence_list(ctx, &args),
        EvidenceCommand::Show(args) => show::cmd_evidence_show(ctx, &args),
        EvidenceCommand::Mutate(args) => mutate::cmd_evidence_mutate(ctx, &args),
    }
}
