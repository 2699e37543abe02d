//! `git hpp board set`: move an item to a state, along the board's transitions only.

use super::Writer;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::evidence::{self, ArtifactCheck};
use hpp_core::board::{EvidenceCheck, EvidenceRef, Request, SetRequest, State};
use hpp_store::refs;

/// Move an item to a state
#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// The item
    item: String,
    /// The new state (CLAIMED, BUILDING, CHECKPOINT-READY, UNDER-REVIEW, VERIFIED, NEEDS-FIX,
    /// DEFERRED, MERGED)
    state: State,
    #[command(flatten)]
    writer: Writer,
    /// The writing lane's role (executor, reviewer, coordinator, ...)
    #[arg(long)]
    role: String,
    /// A free-text note on the evidence (CHECKPOINT-READY still needs --evidence-record)
    #[arg(long, value_name = "TEXT")]
    evidence: Option<String>,
    /// An evidence bundle: an id (its newest bundle), <id>-<stamp>, or refs/hpp/evidence/...
    #[arg(long, value_name = "ID")]
    evidence_record: Option<String>,
    /// The checker's lane (VERIFIED, NEEDS-FIX)
    #[arg(long, value_name = "LANE")]
    verdict_by_lane: Option<String>,
    /// The checker's model (VERIFIED, NEEDS-FIX)
    #[arg(long, value_name = "MODEL")]
    verdict_by_model: Option<String>,
    /// Tag the item (red: merging it needs a person's approval; sticky)
    #[arg(long, value_parser = ["red"])]
    tag: Option<String>,
    /// A person approved the merge of a red item
    #[arg(long)]
    human_approved: bool,
    /// No checker of another family was available (records DEFERRED)
    #[arg(long)]
    checker_unavailable: bool,
    /// The branch merged
    #[arg(long)]
    branch: Option<String>,
    /// Why
    #[arg(long)]
    reason: Option<String>,
}

/// The request `set` makes; an evidence bundle it names is verified now.
pub fn request(ctx: &Ctx, args: SetArgs) -> Result<Request, CliError> {
    Ok(Request::Set(set_request(ctx, args)?))
}

fn set_request(ctx: &Ctx, args: SetArgs) -> Result<SetRequest, CliError> {
    let mut set = SetRequest::new(&args.item, args.state, args.writer.actor(&args.role));
    set.evidence = args.evidence;
    set.verdict_by_lane = args.verdict_by_lane;
    set.verdict_by_model = args.verdict_by_model;
    set.red = args.tag.is_some();
    set.human_approved = args.human_approved;
    set.checker_unavailable = args.checker_unavailable;
    set.branch = args.branch;
    set.reason = args.reason;
    if let Some(name) = args.evidence_record.as_deref() {
        set.evidence_record = Some(check_evidence(ctx, name)?);
    }
    Ok(set)
}

/// Resolves and verifies an evidence bundle now; the board rule only sees the verdict. A name
/// that resolves to no bundle is refused input (exit 2).
fn check_evidence(ctx: &Ctx, name: &str) -> Result<EvidenceCheck, CliError> {
    if name.starts_with("refs/") && !name.starts_with(refs::EVIDENCE_PREFIX) {
        return Err(CliError::refused(format!(
            "--evidence-record must name a bundle under {}, not {name}",
            refs::EVIDENCE_PREFIX
        )));
    }
    let store = ctx.store()?;
    let record_ref = evidence::resolve(store, name)?;
    let allowed = ctx.allowed_signers(None)?;
    let check = store
        .workdir()
        .map_or(ArtifactCheck::RecordOnly, ArtifactCheck::Workspace);
    let report = evidence::verify(store, &record_ref, allowed.as_ref(), check)?;
    Ok(EvidenceCheck {
        record: EvidenceRef {
            record_ref,
            id: report.id,
            record_sha256: report.record_sha256,
        },
        status: report.status.to_string(),
        problems: report.problems,
    })
}
