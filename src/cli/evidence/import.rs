//! `git hpp evidence import`: the reference harness's evidence records into refs.

use std::path::PathBuf;

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::evidence::import;

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
#[derive(Debug, clap::Args)]
pub struct EvidenceImportArgs {
    /// The reference's record files
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    format: JsonArg,
}

/// Imports the records.
pub fn cmd_evidence_import(ctx: &Ctx, args: &EvidenceImportArgs) -> Result<Outcome, CliError> {
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
        args.format.json,
        &json!({"imported": done}),
        rows,
        &import::NOT_CARRIED,
    ))
}
