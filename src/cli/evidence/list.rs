//! `git hpp evidence list`: every bundle.

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::evidence;

/// List every evidence bundle
///
/// One line per ref under refs/hpp/evidence/: verdict, start time and ref.
#[derive(Debug, clap::Args)]
pub struct EvidenceListArgs {
    #[command(flatten)]
    format: JsonArg,
}

/// Lists the bundles.
pub fn cmd_evidence_list(ctx: &Ctx, args: &EvidenceListArgs) -> Result<Outcome, CliError> {
    let bundles = evidence::list(ctx.store()?)?;
    let mut human = String::new();
    for b in &bundles {
        human.push_str(&format!(
            "{:<18} {}  {}\n",
            b.verdict.as_deref().unwrap_or("not-evidence"),
            b.started_at.as_deref().unwrap_or("-"),
            b.record_ref
        ));
    }
    if bundles.is_empty() {
        human.push_str(
            "no evidence yet: record some with `git hpp evidence run --id NAME -- <command>`\n",
        );
    }
    Ok(Outcome::document(
        args.format.json,
        &json!({"evidence": bundles}),
        human,
        Exit::Ok,
    ))
}
