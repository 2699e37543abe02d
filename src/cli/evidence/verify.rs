//! `git hpp evidence verify`: re-derive a recorded bundle.

use std::path::PathBuf;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::evidence::{self, ArtifactCheck};
use hpp_core::evidence::Status;

/// Re-derive a bundle: self-hash, consistency, artifacts, signature
///
/// Checks that the record was not edited after it was written, that its verdict agrees with its
/// exit code and artifacts, that every artifact still has the bytes it had (in the workspace,
/// and in the record when they were kept), and the signature when an allowed-signers file is
/// given or configured (hpp.allowedSignersFile, gpg.ssh.allowedSignersFile). Exits 0 when valid,
/// 1 when the ref holds no evidence record, 2 when blocked.
#[derive(Debug, clap::Args)]
pub struct EvidenceVerifyArgs {
    /// Bundle to verify: an id (its newest bundle), <id>-<stamp>, a full ref, or the path of
    /// one of the Python harness's record files (.hpp/evidence/<id>-<stamp>.json), judged by
    /// its rules in place
    bundle: String,
    /// Allowed-signers file (git's format) to check the signature against
    #[arg(long, value_name = "FILE")]
    allowed_signers: Option<PathBuf>,
    #[command(flatten)]
    format: JsonArg,
}

/// Verifies the bundle.
pub fn cmd_evidence_verify(ctx: &Ctx, args: &EvidenceVerifyArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let file = ctx.cwd().join(&args.bundle);
    if args.bundle.ends_with(".json") && file.is_file() {
        return verify_reference_file(ctx, args, store);
    }
    // Under a trust policy the bundle must be signed by one of its principals; else an
    // allowed-signers file given or configured is checked as before.
    let trust = ctx.trust(args.allowed_signers.as_deref(), false, false)?;
    let allowed = trust.allowed.clone();
    let name = evidence::resolve(store, &args.bundle)?;
    let check = store
        .workdir()
        .map_or(ArtifactCheck::RecordOnly, ArtifactCheck::Workspace);
    let report = evidence::verify(store, &name, allowed.as_ref(), check)?;
    let exit = match report.status {
        Status::Valid => Exit::Ok,
        Status::NotEvidence => Exit::Warn,
        Status::Blocked => Exit::Block,
    };
    let signature = serde_json::to_value(report.signature.status).expect("a status serialises");
    let mut human = format!(
        "evidence {}: {} · verdict={} · signature={}",
        name,
        report.status,
        report.verdict.as_deref().unwrap_or("?"),
        signature.as_str().unwrap_or_default()
    );
    for problem in &report.problems {
        human.push_str(&format!("\n- {problem}"));
    }
    Ok(Outcome::document(args.format.json, &report, human, exit))
}

/// A record file of the Python harness, judged by its rules where it lies (`evidence import`
/// brings it into refs).
fn verify_reference_file(
    ctx: &Ctx,
    args: &EvidenceVerifyArgs,
    store: &hpp_store::Store,
) -> Result<Outcome, CliError> {
    let (bytes, _) = crate::cli::input::read_named_file(
        ctx,
        std::path::Path::new(&args.bundle),
        "evidence record",
    )?;
    let root = store.workdir().unwrap_or(ctx.cwd()).to_path_buf();
    // As the reference: a signature is required only where signers are known.
    let trust = ctx.trust(args.allowed_signers.as_deref(), false, false)?;
    let report = evidence::import::verify_file(&root, &bytes, trust.allowed.as_ref());
    let exit = match report.status {
        Status::Valid => Exit::Ok,
        Status::NotEvidence => Exit::Warn,
        Status::Blocked => Exit::Block,
    };
    let mut human = format!(
        "evidence {}: {} · verdict={} · signature={} · by the Python harness's rules (import it with `git hpp evidence import {}`)",
        args.bundle,
        report.status,
        report
            .verdict
            .as_ref()
            .and_then(serde_json::Value::as_str)
            .unwrap_or("?"),
        report.signature.status,
        args.bundle
    );
    for problem in &report.problems {
        human.push_str(&format!("\n- {problem}"));
    }
    let mut value = serde_json::to_value(&report).expect("a report serialises");
    value["file"] = serde_json::Value::String(args.bundle.clone());
    Ok(Outcome::document(args.format.json, &value, human, exit))
}
