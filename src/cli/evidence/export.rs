//! `git hpp evidence export`: one bundle in a format other tools read.

use crate::cli::attest::export::ExportFormat;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::evidence;

/// Print one bundle as an in-toto test result in a DSSE envelope
///
/// One line of JSON: a DSSE envelope (payloadType application/vnd.in-toto+json) whose Statement
/// v1 is an in-toto test result (https://in-toto.io/attestation/test-result/v0.1): the subject
/// is the tree the run started on (gitTree), result PASSED when the run passed and FAILED
/// otherwise, the configuration the command (its argv, as JSON), the test the bundle's id. A
/// bundle signed with a key file carries an envelope signed with that key when it was recorded
/// (keyid: the key's SSH fingerprint), exported exactly as stored, so a stock DSSE verifier
/// checks it with the public key alone; any other bundle is exported unsigned, with a note on
/// stderr. Needs no key.
#[derive(Debug, clap::Args)]
pub struct EvidenceExportArgs {
    /// Bundle to export: an id (its newest bundle), <id>-<stamp>, or a full ref
    bundle: String,
    /// The format
    #[arg(long, value_enum, default_value = "in-toto")]
    format: ExportFormat,
}

/// Exports the bundle.
pub fn cmd_evidence_export(ctx: &Ctx, args: &EvidenceExportArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let name = evidence::resolve(store, &args.bundle)?;
    let (envelope, note) = evidence::export::export(store, &name)?;
    let mut outcome = Outcome::raw(format!("{}\n", envelope.to_line()).into_bytes());
    if let Some(note) = note {
        outcome = outcome.warn(note);
    }
    Ok(outcome)
}
