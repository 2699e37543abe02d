//! `git hpp attest import`: the reference harness's attestation files into refs.

use std::path::PathBuf;

use serde_json::json;

use crate::attest::VerifyOptions;
use crate::attest::import::{self, Error};
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, TrustArgs};

/// Bring the Python harness's attestation files (hpp attest create --output) into refs
///
/// Each FILE (schema hpp.evidence-attestation/v1) is verified first in the workspace now by the
/// reference's own rules: sha256 per file of the snapshot (the file itself left out), HEAD as
/// its base commit, the spec's sha256, the repository's name and origin-URL hash, actors and
/// session, and its embedded signature when an allowed-signers file is given or configured (or
/// required). A signature that verifies must also be the checker's own, as `attest verify`
/// requires (not the maker's, not a third key, a checker role where a trust policy stands): a
/// record that would not count for its signer is refused, not imported. The verdict is carried
/// as it is: a revise or blocked is imported as the checker's verdict. A record that holds is kept with its exact bytes at
/// refs/hpp/attestations/<snapshot tree>/imported-<hash>, with the spec, the snapshot tree and an
/// imported.json saying where it came from and what it cannot carry (a time, evidence
/// bindings). `attest verify` and the pre-push gate then judge it from the tree: its digests
/// against the tree's files, its signature, its base commit in this repository. Importing the
/// same file again changes nothing. Exits 0 when every file was imported (or was already), 2
/// when one was refused (nothing written for it; the files before it stay imported).
#[derive(Debug, clap::Args)]
pub struct AttestImportArgs {
    /// The reference's attestation files
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    trust: TrustArgs,
    #[command(flatten)]
    format: JsonArg,
}

/// Imports the attestations.
pub fn cmd_attest_import(ctx: &Ctx, args: &AttestImportArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let trust = args.trust.policy(ctx)?;
    let options = VerifyOptions::of(&trust);
    let now = hpp_core::timestamp::rfc3339(time::OffsetDateTime::now_utc());
    let mut done = Vec::new();
    for file in &args.files {
        let bytes = crate::cli::input::read_named_file(ctx, file, "attestation")?.0;
        let imported =
            import::import(store, ctx.cwd(), file, &bytes, options, &now).map_err(|e| match e {
                Error::Attest(inner) => CliError::from(inner),
                refused => CliError::refused(refused),
            })?;
        done.push(imported);
    }
    let rows = done.iter().map(|i| {
        let judged = if i.mismatches.is_empty() {
            "holds".to_owned()
        } else {
            format!("does not count: {}", i.mismatches.join(", "))
        };
        (
            i.created,
            format!(
                "{} ({}) → {} ({judged})",
                i.file, i.verdict, i.attestation_ref
            ),
        )
    });
    Ok(crate::cli::output::imported(
        args.format.json,
        &json!({"imported": done}),
        rows,
        &import::NOT_CARRIED,
    ))
}
