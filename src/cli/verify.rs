//! `git hpp verify`: verification from a clone.

use std::path::PathBuf;

use serde_json::json;

use crate::attest::{self, VerifyOptions};
use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use hpp_core::attestation::Status;

/// Verify commits: each needs an approved attestation of its tree
///
/// For each commit of the revision or range (default HEAD): is there an approved attestation
/// of its tree, signed by an allowed signer when signing is required (--require-signed or git
/// config hpp.requireSigned), whose evidence bundles still verify? Needs only the repository
/// (with refs/hpp fetched) and an allowed-signers file. Prints one line per commit with what is
/// missing and the command that would fix it. Exits 0 when every commit passes, 2 otherwise.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Commit or range (A..B) to verify
    #[arg(default_value = "HEAD", value_name = "COMMIT|RANGE")]
    revision: String,
    /// Allowed-signers file (git's format) [default: git config hpp.allowedSignersFile, then gpg.ssh.allowedSignersFile]
    #[arg(long, value_name = "FILE")]
    allowed_signers: Option<PathBuf>,
    /// Require a signature by an allowed signer
    #[arg(long)]
    require_signed: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Verifies the commits.
pub fn cmd_verify(ctx: &Ctx, args: &VerifyArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let allowed = ctx.allowed_signers(args.allowed_signers.as_deref())?;
    let require_signed =
        args.require_signed || store.config_bool("hpp.requireSigned").unwrap_or(false);
    let verdicts = attest::verify_commits(
        store,
        &args.revision,
        VerifyOptions {
            allowed: allowed.as_ref(),
            require_signed,
        },
    )?;
    let mut human = String::new();
    for v in &verdicts {
        let short = &v.commit.as_str()[..12];
        if v.ok {
            let by = v
                .verification
                .candidates
                .iter()
                .find(|c| c.mismatches.is_empty())
                .and_then(|c| c.checker.clone())
                .unwrap_or_default();
            human.push_str(&format!(
                "ok   {short} approved by {by} ({})\n",
                v.verification.attestation.as_deref().unwrap_or_default()
            ));
        } else {
            human.push_str(&format!(
                "FAIL {short} {}\n     fix: {}\n",
                v.missing.as_deref().unwrap_or_default(),
                v.fix.as_deref().unwrap_or_default()
            ));
        }
    }
    if verdicts.is_empty() {
        human.push_str("no commits in that range\n");
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
    let value = json!({"status": status, "require_signed": require_signed, "commits": verdicts});
    Ok(Outcome::document(args.format.json, &value, human, exit))
}
