//! `git hpp attest export`: a tree's attestations in a format other tools read.

use crate::attest;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;

/// The formats records export to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// An in-toto attestation bundle: JSON Lines, one DSSE envelope per record
    #[value(name = "in-toto")]
    InToto,
}

/// Print the attestations of a commit's tree as an in-toto attestation bundle
///
/// One DSSE envelope per record, a line each (payloadType application/vnd.in-toto+json), whose
/// Statement v1 is a SLSA verification summary (https://slsa.dev/verification_summary/v1): the
/// subjects are the attested tree (gitTree) and the commit (gitCommit), verificationResult is
/// PASSED for approved and FAILED for revise and blocked, the verifier the checker
/// (git-hpp:checker/<principal>), the policy the spec's digests, the time the record's, and
/// inputAttestations links back to the record's ref. A record signed with a key file carries an
/// envelope signed with that key when it was made (keyid: the key's SSH fingerprint), exported
/// exactly as stored, so a stock DSSE verifier checks it with the public key alone; any other
/// record is exported unsigned, naming REV's commit, with a note on stderr. Needs no key.
#[derive(Debug, clap::Args)]
pub struct AttestExportArgs {
    /// The commit whose tree's attestations to export
    #[arg(default_value = "HEAD", value_name = "REV")]
    rev: String,
    /// The format
    #[arg(long, value_enum, default_value = "in-toto")]
    format: ExportFormat,
}

/// Exports the attestations.
pub fn cmd_attest_export(ctx: &Ctx, args: &AttestExportArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    if args.rev.contains("..") {
        return Err(CliError::refused(format!(
            "{} is a range: export names one commit",
            args.rev
        )));
    }
    let commit = store
        .commits_in(&args.rev)?
        .into_iter()
        .next()
        .ok_or_else(|| CliError::refused(format!("no commit named {}", args.rev)))?;
    let tree = store.commit_tree(&commit)?;
    let exported = attest::export::export(store, &tree, &commit)?;
    if exported.envelopes.is_empty() && exported.notes.is_empty() {
        return Err(CliError::refused(format!(
            "tree {tree} of {} has no attestation to export",
            args.rev
        )));
    }
    let mut text = String::new();
    for envelope in &exported.envelopes {
        text.push_str(&envelope.to_line());
        text.push('\n');
    }
    let mut outcome = Outcome::raw(text.into_bytes());
    outcome.exit = Exit::Ok;
    for note in exported.notes {
        outcome = outcome.warn(note);
    }
    Ok(outcome)
}
