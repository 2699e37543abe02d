//! `git hpp attest verify`: does a snapshot have a valid approved attestation?

use crate::attest::{self, VerifyOptions};
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, TrustArgs};
use hpp_core::attestation::Status;
use hpp_store::TreeId;

/// Check that a snapshot has a valid approved attestation
///
/// Without arguments, checks the current workspace snapshot: change any tracked or untracked
/// file and it no longer has one. Given a file the Python harness wrote (`hpp attest create
/// --output`, hpp.evidence-attestation/v1), judges it in place by that harness's own rules
/// (sha256 per file of the workspace, HEAD, spec, repository, signature) and stores nothing;
/// `attest import` keeps it. With an attestation (ref or <tree>/<id>), --tree or --commit,
/// checks that tree. Reports valid or blocked with the reference's mismatch names (verdict,
/// actors, session, repo, spec_sha256, snapshot_digest, signature, plus evidence). The signature
/// is checked when an allowed-signers file is given or configured. Exits 0 valid, 2 blocked.
#[derive(Debug, clap::Args)]
pub struct AttestVerifyArgs {
    /// One attestation to verify: refs/hpp/attestations/<tree>/<id>, <tree>/<id>, or a file the
    /// Python harness wrote
    attestation: Option<String>,
    /// Verify the attestations of this tree id
    #[arg(long, value_name = "TREE", conflicts_with_all = ["attestation", "commit"])]
    tree: Option<String>,
    /// Verify the attestations of this commit's tree
    #[arg(long, value_name = "COMMIT", conflicts_with = "attestation")]
    commit: Option<String>,
    #[command(flatten)]
    trust: TrustArgs,
    #[command(flatten)]
    format: JsonArg,
}

/// Verifies the snapshot.
pub fn cmd_attest_verify(ctx: &Ctx, args: &AttestVerifyArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let trust = args.trust.policy(ctx)?;
    if let Some(name) = &args.attestation
        && ctx.cwd().join(name).is_file()
    {
        return verify_file(ctx, name, VerifyOptions::of(&trust), args.format.json);
    }
    let (tree, only) = match (&args.attestation, &args.tree, &args.commit) {
        (Some(name), _, _) => {
            let (tree, full) = attest::resolve(store, name)?;
            (tree, Some(full))
        }
        (None, Some(tree), _) => (
            TreeId::parse(tree)
                .ok_or_else(|| CliError::refused(format!("not a tree id: {tree}")))?,
            None,
        ),
        (None, None, Some(commit)) => {
            let id = store
                .commits_in(commit)?
                .into_iter()
                .next()
                .ok_or_else(|| CliError::refused(format!("no commit named {commit}")))?;
            (store.commit_tree(&id)?, None)
        }
        (None, None, None) => (store.snapshot()?, None),
    };
    let report = attest::verify_tree(store, &tree, only.as_deref(), VerifyOptions::of(&trust))?;
    let human = if report.is_valid() {
        format!(
            "attestation valid for snapshot {}: {}\n{}",
            tree,
            report.checked.as_deref().unwrap_or_default(),
            report.attestation.as_deref().unwrap_or_default()
        )
    } else if report.candidates.is_empty() {
        format!(
            "blocked: snapshot {tree} has no attestation\nhint: git hpp attest create --spec SPEC --maker MAKER --checker CHECKER --session ID --verdict approved"
        )
    } else {
        format!(
            "blocked: snapshot {tree}: mismatches {}",
            report.mismatches.join(", ")
        )
    };
    let exit = match report.status {
        Status::Valid => Exit::Ok,
        Status::Blocked => Exit::Block,
    };
    Ok(Outcome::document(args.format.json, &report, human, exit))
}

/// Judges the Python harness's attestation file `name` in place, by its own rules.
fn verify_file(
    ctx: &Ctx,
    name: &str,
    options: VerifyOptions<'_>,
    json: bool,
) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let file = std::path::Path::new(name);
    let bytes = crate::cli::input::read_named_file(ctx, file, "attestation")?.0;
    let report =
        attest::import::verify_in_place(store, ctx.cwd(), file, &bytes, options).map_err(|e| {
            match e {
                attest::import::Error::Attest(inner) => CliError::from(inner),
                refused => CliError::refused(refused),
            }
        })?;
    let human = match report.status {
        Status::Valid => format!("attestation valid: {name} (the workspace is what it attests)"),
        Status::Blocked => format!(
            "blocked: {name}: mismatches {}{}",
            report.mismatches.join(", "),
            report
                .detail
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        ),
    };
    let exit = match report.status {
        Status::Valid => Exit::Ok,
        Status::Blocked => Exit::Block,
    };
    Ok(Outcome::document(json, &report, human, exit))
}
