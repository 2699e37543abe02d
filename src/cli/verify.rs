//! `git hpp verify`: verification from a clone.

use serde_json::json;

use crate::attest::{self, VerifyOptions};
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, TrustArgs};
use hpp_core::attestation::Status;

/// Verify commits: each needs an approved attestation of its tree
///
/// For each commit of the revision or range (default HEAD): is there an approved attestation of
/// its tree whose checker has not revoked it since (a later revise or blocked of the same
/// checker), signed by that checker (never the maker) when signatures are required, for this
/// repository's history, whose evidence bundles still verify? Signatures are required when an
/// allowed-signers file is given or configured (hpp.allowedSignersFile, gpg.ssh.allowedSignersFile)
/// unless --allow-unsigned or hpp.requireSigned=false. Each line says what was checked
/// ("signature verified (checker-b)" or "unsigned: not checked"), what is missing and the
/// command that would fix it. Refs that hold no readable record are named, never fatal. Works in
/// a bare repository, from a plain clone, and in the clones CI makes: in a shallow clone the
/// root commits a record names are fetched by id from the remote (when they cannot be, the
/// identity is said to be not checked, and the commit fails); in a partial clone what a record
/// lacks is fetched from the promisor remote. Exits 0 when every commit passes, 2 otherwise.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Commit or range (A..B) to verify
    #[arg(default_value = "HEAD", value_name = "COMMIT|RANGE")]
    revision: String,
    #[command(flatten)]
    trust: TrustArgs,
    #[command(flatten)]
    format: JsonArg,
}

/// When HEAD fails for want of an attestation of its tree while the workspace snapshot (HEAD's
/// tree plus untracked or uncommitted files) has one, says that this is the cause, naming the
/// files, with the two ways out (issue 31: the loop said verified, verify refused HEAD, and the
/// fix said "check out this commit").
fn name_the_snapshot_cause(
    store: &hpp_store::Store,
    verdicts: &mut [attest::CommitVerdict],
) -> Result<(), CliError> {
    if store.workdir().is_none() {
        return Ok(());
    }
    let Some(head) = store.head_commit()? else {
        return Ok(());
    };
    let Some(verdict) = verdicts
        .iter_mut()
        .find(|v| !v.ok && v.commit == head && v.verification.candidates.is_empty())
    else {
        return Ok(());
    };
    let snapshot = store.snapshot()?;
    let attested = store.list(&hpp_store::refs::attestations_of(snapshot.as_str()))?;
    if attested.is_empty() || store.commit_tree(&head)? == snapshot {
        return Ok(());
    }
    let paths = store.changed_paths(&store.commit_tree(&head)?, &snapshot)?;
    if paths.is_empty() {
        return Ok(());
    }
    let mut named = paths.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > 5 {
        named.push_str(&format!(" and {} more", paths.len() - 5));
    }
    let missing = verdict.missing.take().unwrap_or_default();
    verdict.missing = Some(format!(
        "{missing}; the attestation is of the workspace snapshot {}, which is not HEAD's tree: {named} (untracked or not committed)",
        &snapshot.as_str()[..12]
    ));
    let listed = paths.iter().take(5).cloned().collect::<Vec<_>>().join(" ");
    verdict.fix = Some(format!(
        "commit them as they are (`git add -A -- {listed} && git commit`): the new HEAD's tree is the attested one, and `git hpp verify` passes with nothing recorded again; or leave them out (.gitignore), and then record the evidence and the attestation again on the tree HEAD has"
    ));
    Ok(())
}

/// Verifies the commits.
pub fn cmd_verify(ctx: &Ctx, args: &VerifyArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let trust = args.trust.policy(ctx)?;
    let mut verdicts = attest::verify_commits(store, &args.revision, VerifyOptions::of(&trust))?;
    name_the_snapshot_cause(store, &mut verdicts)?;
    let mut human = String::new();
    for v in &verdicts {
        let short = &v.commit.as_str()[..12];
        if v.ok {
            let attestation = v.verification.attestation.as_deref().unwrap_or_default();
            let by = v.approved_by();
            human.push_str(&format!(
                "{}   {short} approved by {by}: {} ({attestation})\n",
                crate::cli::output::paint(crate::cli::output::Tone::Good, "ok"),
                v.verification.checked.as_deref().unwrap_or_default()
            ));
        } else {
            human.push_str(&format!(
                "{} {short} {}\n     fix: {}\n",
                crate::cli::output::paint(crate::cli::output::Tone::Bad, "FAIL"),
                v.missing.as_deref().unwrap_or_default(),
                v.fix.as_deref().unwrap_or_default()
            ));
        }
    }
    if verdicts.is_empty() {
        human.push_str("no commits in that range\n");
    }
    for v in &verdicts {
        for broken in &v.verification.broken {
            human.push_str(&format!(
                "warn {} holds no readable record: {}\n",
                broken.attestation_ref, broken.reason
            ));
        }
    }
    let require_signed = trust.require_signed;
    let unsigned_hint = (!require_signed).then_some(
        "signatures are not required: require them with a trust policy (`git hpp trust init`) or `git config hpp.allowedSignersFile FILE`",
    );
    if trust.policy.is_some() {
        human.push_str(&format!("signatures required by the {}\n", trust.source));
    }
    if let Some(hint) = unsigned_hint {
        human.push_str(&format!("note: {hint}\n"));
    }
    let status = if verdicts.iter().all(|v| v.ok) {
        Status::Valid
    } else {
        Status::Blocked
    };
    let exit = match status {
        Status::Valid => Exit::Ok,
        Status::Blocked => Exit::Block,
    };
    let value = json!({
        "schema": "hpp.verify/v1",
        "status": status,
        "require_signed": require_signed,
        "signatures": if require_signed { "required" } else { "not-required" },
        "hint": unsigned_hint,
        "trust": trust.source,
        "commits": verdicts,
    });
    Ok(crate::cli::output::with_notes(
        Outcome::document(args.format.json, &value, human, exit),
        &trust,
    ))
}
