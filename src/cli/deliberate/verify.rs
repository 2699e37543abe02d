//! `git hpp deliberate verify`: does a sealed record hold?

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::input::{JsonRoot, read_json};
use crate::cli::output::Outcome;
use crate::sign;
use hpp_core::deliberation;

/// Verify a sealed House Session: a file, a ref or an id
///
/// Checks the seal (record_sha256 over everything but human_decision), then re-derives every key
/// from the panel, the turns, the judge and the rationale the record holds; extra keys are
/// refused, and a v1 record verifies under v1 rules. RECORD is a file, or
/// refs/hpp/deliberations/<id>, <id> or a panel id naming one record (then the ref's panel.json,
/// turns/ and judge.json must be the sealed ones too). The signer the ref names must be the
/// judge's seat (its declared principal, else its lane or seat id). With --allowed-signers the
/// signature of record.json must verify for that signer, and a human decision must be signed by
/// the person it names. Prints {"status": "intact", "schema",
/// "record_sha256", "verdict", "stop"} (plus "ref" and "signature" for a ref) or {"status":
/// "broken", "reason"}.
///
/// Exit codes: 0 intact, 2 broken or refused.
#[derive(Debug, clap::Args)]
pub struct DeliberateVerifyArgs {
    /// The sealed record: a file, refs/hpp/deliberations/<id>, or <id>
    #[arg(value_name = "RECORD")]
    record: String,
    /// Allowed-signers file (git's format) the signature must verify against
    #[arg(long, value_name = "FILE")]
    allowed_signers: Option<PathBuf>,
}

/// Renders a verification report with its exit code.
pub(super) fn outcome(report: Value, intact: bool) -> Outcome {
    Outcome::json(&report, if intact { Exit::Ok } else { Exit::Block })
}

fn broken(reason: String) -> Value {
    json!({"status": "broken", "reason": reason})
}

/// `git hpp deliberate verify`.
pub fn cmd_deliberate_verify(ctx: &Ctx, args: &DeliberateVerifyArgs) -> Result<Outcome, CliError> {
    let explicit = args.allowed_signers.as_deref();
    let allowed = match explicit {
        Some(path) => Some(sign::AllowedSigners::load(&ctx.cwd().join(path))?),
        None => None,
    };
    if ctx.cwd().join(&args.record).is_file() {
        let record = read_json(ctx, Path::new(&args.record), JsonRoot::Object)?;
        let report = deliberation::verify_record(&record);
        let mut value = serde_json::to_value(&report).expect("a report serialises");
        let mut intact = report.is_intact();
        if let Some(allowed) = &allowed {
            // A file carries no signature: a check that was asked for cannot pass.
            let signature = sign::check(
                &[],
                None,
                None,
                Some(allowed),
                time::OffsetDateTime::now_utc(),
            );
            if intact {
                value = broken(format!(
                    "signature: {}",
                    signature.detail.clone().unwrap_or_default()
                ));
                intact = false;
            }
            value["signature"] = serde_json::to_value(&signature).expect("a report serialises");
        }
        return Ok(outcome(value, intact));
    }
    let store = ctx.store()?;
    let name = crate::deliberation::resolve(store, &args.record)?;
    let loaded = crate::deliberation::load(store, &name, allowed.as_ref())?;
    let report = deliberation::verify_record(&loaded.record);
    let mut intact = report.is_intact();
    let mut value = serde_json::to_value(&report).expect("a report serialises");
    if intact && let Some(problem) = loaded.problems.first() {
        value = broken(problem.clone());
        intact = false;
    }
    if intact && allowed.is_some() && !loaded.signature.is_verified() {
        value = broken(format!(
            "signature: {}",
            loaded.signature.detail.clone().unwrap_or_default()
        ));
        intact = false;
    }
    if let Some(decision) = &loaded.decision_signature
        && intact
        && allowed.is_some()
        && !decision.is_verified()
    {
        value = broken(format!(
            "human decision: {}",
            decision
                .detail
                .clone()
                .unwrap_or_else(|| "it is not signed by the person it names".into())
        ));
        intact = false;
    }
    value["ref"] = json!(name);
    if let Some(human) = loaded.record.get("human_decision").filter(|h| !h.is_null()) {
        value["human_decision"] = human.clone();
    }
    value["signature"] = serde_json::to_value(&loaded.signature).expect("a report serialises");
    if let Some(decision) = &loaded.decision_signature {
        value["human_decision_signature"] =
            serde_json::to_value(decision).expect("a report serialises");
    }
    Ok(outcome(value, intact))
}
