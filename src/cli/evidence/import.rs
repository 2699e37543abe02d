//! `git hpp evidence import`: the reference harness's evidence records into refs.

use std::path::PathBuf;

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::evidence::{import, intoto};
use hpp_core::evidence::EvidenceId;

/// Bring the Python harness's evidence records (.hpp/evidence/*.json) into refs
///
/// Each FILE is verified first under the reference's own rules: its self-hash, its verdict
/// against its exit code and missing list, and every artifact's sha256 in the workspace now. A
/// record that passes is stored at refs/hpp/evidence/<its file name> with its exact bytes
/// (record_path and record_sha256 kept) and an imported.json saying where it came from and what
/// it cannot carry: the reference records no workspace tree, so the fresh-evidence gate does not
/// count an imported bundle (run the criterion again with `git hpp evidence run` for that).
/// `evidence verify` then judges it by the same rules. Importing the same record again changes
/// nothing. Exits 0 when every file was imported (or was already), 2 when one was refused
/// (tampered, artifacts changed, not a record, or another record under its name); the files
/// before it stay imported.
///
/// With --format in-toto, each FILE is an in-toto test result
/// (https://in-toto.io/attestation/test-result/v0.1) in a DSSE envelope, one per line (a file
/// `evidence export` wrote, or a CI's), signed by a key the allowed signers or the trust policy
/// list (keyid: the key's SSH fingerprint; raw Ed25519 or DER ECDSA p256/p384 signatures). It
/// becomes a bundle of the tree its gitTree subject names, passed when the result is PASSED
/// (WARNED and FAILED are failed), signed by that principal, its command the configuration's,
/// the envelope kept beside it as its signature; the fresh-evidence gate counts it like a run.
#[derive(Debug, clap::Args)]
pub struct EvidenceImportArgs {
    /// The records to import
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// What the files hold
    #[arg(long, value_enum, default_value = "reference")]
    format: ImportFormat,
    /// The id of the bundles an in-toto import makes
    #[arg(long, value_name = "ID", default_value = "in-toto")]
    id: String,
    /// The principal whose key must have signed the envelope [default: any the allowed signers
    /// name exactly]
    #[arg(long, value_name = "PRINCIPAL")]
    signer: Option<String>,
    /// Allowed-signers file (git's format) the envelope's signer is looked up in [default: the
    /// trust policy's signers, else git config hpp.allowedSignersFile, then
    /// gpg.ssh.allowedSignersFile]
    #[arg(long, value_name = "FILE")]
    allowed_signers: Option<PathBuf>,
    #[command(flatten)]
    json: JsonArg,
}

/// What `evidence import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// The Python harness's evidence records (.hpp/evidence/*.json)
    Reference,
    /// In-toto test results in DSSE envelopes, one per line
    #[value(name = "in-toto")]
    InToto,
}

/// Imports the records.
pub fn cmd_evidence_import(ctx: &Ctx, args: &EvidenceImportArgs) -> Result<Outcome, CliError> {
    if args.format == ImportFormat::InToto {
        return import_intoto(ctx, args);
    }
    let store = ctx.store()?;
    let root = store
        .workdir()
        .ok_or_else(|| {
            CliError::refused(
                "evidence import needs a working tree: the artifacts are checked there",
            )
        })?
        .to_path_buf();
    let now = hpp_core::timestamp::rfc3339(time::OffsetDateTime::now_utc());
    let mut done = Vec::new();
    for file in &args.files {
        let shown = file.display().to_string();
        let bytes = crate::cli::input::read_named_file(ctx, file, "evidence record")?.0;
        let imported = import::import(store, &root, &bytes, &shown, &now).map_err(|e| match e {
            import::Error::Store(inner) => CliError::from(inner),
            refused => CliError::refused(refused),
        })?;
        done.push(imported);
    }
    let rows = done.iter().map(|i| {
        (
            i.created,
            format!("{} → {} ({})", i.file, i.record_ref, i.status),
        )
    });
    Ok(crate::cli::output::imported(
        args.json.json,
        &json!({"imported": done}),
        rows,
        &import::NOT_CARRIED,
    ))
}

/// Imports in-toto test results, one envelope per non-empty line of each file.
fn import_intoto(ctx: &Ctx, args: &EvidenceImportArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let id: EvidenceId = args
        .id
        .parse()
        .map_err(|e: hpp_core::evidence::InvalidEvidenceId| CliError::refused(e.to_string()))?;
    let trust = ctx.trust(args.allowed_signers.as_deref(), false, false)?;
    let now = time::OffsetDateTime::now_utc();
    let mut done = Vec::new();
    for file in &args.files {
        let shown = file.display().to_string();
        let bytes = crate::cli::input::read_named_file(ctx, file, "in-toto test result")?.0;
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            return Err(CliError::refused(format!("{shown} holds no envelope")));
        }
        for line in lines {
            let imported = intoto::import(
                store,
                line.as_bytes(),
                &id,
                args.signer.as_deref(),
                trust.allowed.as_ref(),
                now,
            )
            .map_err(|e| match e {
                crate::evidence::Error::Store(inner) => CliError::from(inner),
                refused => CliError::refused(format!("{shown}: {refused}")),
            })?;
            done.push(imported);
        }
    }
    let human: String = done
        .iter()
        .map(|i| {
            format!(
                "imported {} → {} ({}, tree {}, signed by {})\n",
                i.result,
                i.record_ref,
                i.verdict,
                i.tree.get(..12).unwrap_or(&i.tree),
                i.signer
            )
        })
        .collect();
    Ok(Outcome::document(
        args.json.json,
        &json!({"imported": done}),
        human,
        crate::cli::exit::Exit::Ok,
    ))
}
