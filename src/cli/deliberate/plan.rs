//! `git hpp deliberate plan|validate`: check a panel (and add the evidence its seats may cite),
//! a turn, or a sealed record.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use super::verify;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::input::{JsonRoot, read_json};
use crate::cli::output::Outcome;
use crate::evidence::{self, ArtifactCheck};
use hpp_core::citations;
use hpp_core::deliberation::{
    self, Error, PANEL_SCHEMA, SCHEMA, SCHEMA_V1, TURN_SCHEMA, normalise_panel, panel,
};
use hpp_core::record::{canonical_json, pretty_json, sha256_hex};

/// Check a House Session panel (hpp.panel/v1) and declare the evidence its seats may cite
///
/// Validates an hpp.panel/v1: at least two model families among the participants, exactly one
/// judge in a lane no participant uses, every participant in its own lane, the role minimums of
/// its session type (plan, review, release-gate, incident, design), pinned models (an alias such
/// as -latest is refused), one family per pinned model, and a budget. With --context or
/// --evidence the panel as given is validated first, then the context ids and the ids of
/// evidence bundles that verify now are added as evidence.ids with their sources. --evidence
/// takes an hpp.evidence/v1 record file, or a bundle id or ref under refs/hpp/evidence/ (then
/// the command opens the repository). Prints {"status": "valid", "panel": <normalised, with
/// sha256, judge, families, judge_independence>}; --out also writes that panel.
///
/// Exit codes: 0 valid, 2 refused (a rule broken, or an evidence record that does not verify).
#[derive(Debug, clap::Args)]
pub struct DeliberatePlanArgs {
    /// The panel (hpp.panel/v1)
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Context the seats were given ([{"id", "text"}] or bare ids); its ids become citable
    #[arg(long, value_name = "CTX.json")]
    context: Option<PathBuf>,
    /// Evidence bundle whose id becomes citable: a record file, a bundle id or a ref (repeatable)
    #[arg(long, value_name = "RECORD", num_args = 1..)]
    evidence: Vec<String>,
    /// Also write the normalised panel to this file (pretty, sorted keys)
    #[arg(long, value_name = "PANEL.json")]
    out: Option<PathBuf>,
}

/// Check a panel, a turn or a sealed record
///
/// A panel is checked as by `plan` (without adding evidence); a turn (hpp.turn/v1) needs
/// --panel, the panel it belongs to, and prints {"status": "valid", "turn": <normalised, with
/// sha256>}; a sealed record (hpp.deliberation/v1 or v2) is verified as by `verify`. Needs no
/// repository.
///
/// Exit codes: 0 valid or intact, 2 refused or broken.
#[derive(Debug, clap::Args)]
pub struct DeliberateValidateArgs {
    /// The document to check
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The panel a turn belongs to
    #[arg(long, value_name = "FILE")]
    panel: Option<PathBuf>,
}

/// `git hpp deliberate plan`.
pub fn cmd_deliberate_plan(ctx: &Ctx, args: &DeliberatePlanArgs) -> Result<Outcome, CliError> {
    let document = read_json(ctx, &args.file, JsonRoot::Object)?;
    check_schema(&document)?;
    let document = if args.context.is_some() || !args.evidence.is_empty() {
        let (ids, sources) = declared_evidence(ctx, args)?;
        panel::with_evidence(&document, &ids, &sources)?
    } else {
        document
    };
    let normalised = normalise_panel(&document)?;
    if let Some(out) = &args.out {
        write_file(ctx, out, &normalised)?;
    }
    Ok(Outcome::json(
        &json!({"status": "valid", "panel": normalised}),
        Exit::Ok,
    ))
}

/// `git hpp deliberate validate`.
pub fn cmd_deliberate_validate(
    ctx: &Ctx,
    args: &DeliberateValidateArgs,
) -> Result<Outcome, CliError> {
    let document = read_json(ctx, &args.file, JsonRoot::Object)?;
    match document.get("schema").and_then(Value::as_str) {
        Some(SCHEMA | SCHEMA_V1) => {
            let report = deliberation::verify_record(&document);
            Ok(verify::outcome(
                serde_json::to_value(&report).expect("a report serialises"),
                report.is_intact(),
            ))
        }
        Some(TURN_SCHEMA) => {
            let panel_path = args
                .panel
                .as_ref()
                .ok_or_else(|| CliError::from(Error::TurnNeedsPanel))?;
            let panel = normalise_panel(&read_json(ctx, panel_path, JsonRoot::Object)?)?;
            let turn = deliberation::normalise_turn(&document, &panel)?;
            Ok(Outcome::json(
                &json!({"status": "valid", "turn": turn}),
                Exit::Ok,
            ))
        }
        _ => {
            check_schema(&document)?;
            let panel = normalise_panel(&document)?;
            Ok(Outcome::json(
                &json!({"status": "valid", "panel": panel}),
                Exit::Ok,
            ))
        }
    }
}

/// Refuses a document that is not an hpp.panel/v1 with the reference's sentence.
pub(super) fn check_schema(document: &Value) -> Result<(), CliError> {
    if document.get("schema").and_then(Value::as_str) == Some(PANEL_SCHEMA) {
        return Ok(());
    }
    Err(CliError::from(Error::ExpectedSchema(
        hpp_core::pyrepr::optional(document.get("schema")),
    )))
}

/// Writes `value` as pretty sorted-key JSON, creating parent directories.
pub(super) fn write_file(ctx: &Ctx, path: &Path, value: &impl Serialize) -> Result<(), CliError> {
    let full = ctx.cwd().join(path);
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError::refused(format!("cannot write {}: {e}", path.display())))?;
    }
    let value = serde_json::to_value(value).expect("a record serialises: its keys are strings");
    std::fs::write(&full, pretty_json(&value))
        .map_err(|e| CliError::refused(format!("cannot write {}: {e}", path.display())))
}

/// The ids and sources `--context` and `--evidence` declare.
fn declared_evidence(
    ctx: &Ctx,
    args: &DeliberatePlanArgs,
) -> Result<(Vec<String>, Vec<Value>), CliError> {
    let mut ids = Vec::new();
    let mut sources = Vec::new();
    if let Some(path) = &args.context {
        let context = read_json(ctx, path, JsonRoot::Array)?;
        ids.extend(citations::context_ids(&context)?);
        sources.push(json!({"kind": "context", "sha256": sha256_hex(&canonical_json(&context))}));
    }
    for name in &args.evidence {
        let (status, record) = if ctx.cwd().join(name).is_file() {
            let record = read_json(ctx, Path::new(name), JsonRoot::Object)?;
            (evidence::verify_record_file(ctx.cwd(), &record), record)
        } else {
            let store = ctx.store()?;
            let found = evidence::resolve(store, name)?;
            let check = store
                .workdir()
                .map_or(ArtifactCheck::RecordOnly, ArtifactCheck::Workspace);
            let report = evidence::verify(store, &found, None, check)?;
            let bytes = store
                .read_file(&found, hpp_core::evidence::RECORD_FILE)?
                .unwrap_or_default();
            let record = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            (report.status, record)
        };
        if status != hpp_core::evidence::Status::Valid {
            return Err(CliError::from(Error::EvidenceNotValid {
                name: name.clone(),
                status: status.to_string(),
            }));
        }
        let id = record["id"].as_str().unwrap_or_default().to_owned();
        sources
            .push(json!({"kind": "evidence-record", "id": id, "sha256": record["record_sha256"]}));
        ids.push(id);
    }
    Ok((ids, sources))
}
