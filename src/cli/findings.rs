//! `git hpp findings check`: hold review lenses' answers to the hpp.findings/v1 shape.

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::{Value, json};

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{JsonRoot, read_json};
use super::output::Outcome;
use hpp_core::findings::{self, Verdict};

/// The `findings` verbs.
#[derive(Debug, Subcommand)]
pub enum FindingsCommand {
    /// Check review findings documents and derive their verdicts
    ///
    /// Each document must hold the hpp.findings/v1 contract exactly; its verdict is derived (fail
    /// on a high finding, warn on any finding, pass on none). Prints {"reports": [...]}, one per
    /// file in the order given. Exits 0 when every verdict is pass, 1 when any lens found
    /// something; one refused document refuses the whole command (exit 2, nothing printed).
    /// Needs no repository.
    Check(FindingsCheckArgs),
}

/// The arguments of `git hpp findings check` (the help text sits on its verb).
#[derive(Debug, clap::Args)]
pub struct FindingsCheckArgs {
    /// hpp.findings/v1 documents (one or more)
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// The change reviewed: every document must name its sha256
    #[arg(long, value_name = "CHANGEFILE")]
    subject: Option<PathBuf>,
}

/// Runs one `findings` verb.
pub fn dispatch(ctx: &Ctx, command: FindingsCommand) -> Result<Outcome, CliError> {
    match command {
        FindingsCommand::Check(args) => cmd_findings_check(ctx, &args),
    }
}

/// Checks every document and prints the reports.
pub fn cmd_findings_check(ctx: &Ctx, args: &FindingsCheckArgs) -> Result<Outcome, CliError> {
    let subject =
        match &args.subject {
            None => None,
            Some(path) => {
                let full = ctx.cwd().join(path);
                if !full.is_file() {
                    return Err(CliError::refused(format!(
                        "subject not found: {}",
                        path.display()
                    )));
                }
                Some(std::fs::read(&full).map_err(|e| {
                    CliError::refused(format!("cannot read {}: {e}", path.display()))
                })?)
            }
        };
    let mut reports = Vec::with_capacity(args.files.len());
    let mut all_pass = true;
    for path in &args.files {
        let document = read_json(ctx, path, JsonRoot::Object)?;
        // Why the path prefix: with several documents, the refusal must say which one.
        let report = findings::check(&document, subject.as_deref())
            .map_err(|e| CliError::refused(format!("{}: {e}", path.display())))?;
        all_pass &= report.verdict == Verdict::Pass;
        let mut value = serde_json::to_value(&report).expect("a findings report serialises");
        value["file"] = Value::String(path.display().to_string());
        reports.push(value);
    }
    let exit = if all_pass { Exit::Ok } else { Exit::Warn };
    Ok(Outcome::json(&json!({ "reports": reports }), exit))
}
