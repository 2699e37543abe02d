//! `git hpp evidence show`: one bundle's record.

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::evidence;

/// Print one bundle's record
///
/// Prints the record exactly as stored (pretty JSON) and, on stderr, where its signature and
/// kept artifacts can be read with plain git. Checks nothing: use `evidence verify` for that.
#[derive(Debug, clap::Args)]
pub struct EvidenceShowArgs {
    /// Bundle to show: an id (its newest bundle), <id>-<stamp>, or a full ref
    bundle: String,
}

/// Shows the bundle.
pub fn cmd_evidence_show(ctx: &Ctx, args: &EvidenceShowArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let name = evidence::resolve(store, &args.bundle)?;
    let bytes = store
        .read_file(&name, hpp_core::evidence::RECORD_FILE)?
        .ok_or_else(|| {
            CliError::refused(format!(
                "{name} holds no {}",
                hpp_core::evidence::RECORD_FILE
            ))
        })?;
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| CliError::refused(format!("{name}: the record is not JSON: {e}")))?;
    Ok(Outcome::json(&value, Exit::Ok))
}
