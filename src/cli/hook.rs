//! `git hpp hook pre-push`: what the installed hook calls.

use clap::Subcommand;

use crate::attest::{self, VerifyOptions};
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use hpp_core::gate::{self, Decision};

/// The hooks git runs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum HookCommand {
    PrePush(PrePushArgs),
}

/// Refuse a push of a protected ref whose tip does not pass `git hpp verify`
///
/// Reads git's pre-push lines on stdin. Protected refs come from git config hpp.protect (ref
/// patterns; default refs/heads/main and refs/heads/master); signatures are required as `git hpp
/// verify` requires them (an allowed-signers file configured, unless hpp.requireSigned=false). Deleting a ref and pushing refs/hpp/* pass. Exits 0 to let the
/// push go, 2 to refuse it (with the commit, what is missing, and the command that would fix it).
#[derive(Debug, clap::Args)]
pub struct PrePushArgs {
    /// The remote's name, as git passes it
    remote: Option<String>,
    /// The remote's URL, as git passes it
    url: Option<String>,
}

/// Runs one hook.
pub fn dispatch(ctx: &Ctx, command: HookCommand) -> Result<Outcome, CliError> {
    match command {
        HookCommand::PrePush(args) => cmd_hook_pre_push(ctx, &args),
    }
}

/// Checks the push.
pub fn cmd_hook_pre_push(ctx: &Ctx, args: &PrePushArgs) -> Result<Outcome, CliError> {
    let input = ctx
        .read_stdin()
        .map_err(|e| CliError::refused(format!("cannot read the pre-push input: {e}")))?;
    let updates = gate::parse(&input)?;
    let store = ctx.store()?;
    let decisions = gate::decide(&updates, &store.config_strings("hpp.protect"))?;
    let (allowed, require_signed) = ctx.signature_policy(None, false, false)?;
    let options = VerifyOptions {
        allowed: allowed.as_ref(),
        require_signed,
    };
    let mut refused = Vec::new();
    for (update, decision) in updates.iter().zip(decisions) {
        if decision != Decision::Verify {
            continue;
        }
        for verdict in attest::verify_commits(store, &update.local_oid, options)? {
            if !verdict.ok {
                refused.push((update.remote_ref.clone(), verdict));
            }
        }
    }
    match refused.first() {
        None => Ok(Outcome::raw(Vec::new())),
        Some((name, verdict)) => {
            let mut error = CliError::refused(format!(
                "push to {} refused: {name} at {} was never verified: {}",
                args.remote
                    .as_deref()
                    .or(args.url.as_deref())
                    .unwrap_or("the remote"),
                &verdict.commit.as_str()[..12],
                verdict.missing.as_deref().unwrap_or_default()
            ));
            error = error.hint(verdict.fix.clone().unwrap_or_default());
            for (other, v) in refused.iter().skip(1) {
                error = error.hint(format!(
                    "also {other} at {}: {}",
                    &v.commit.as_str()[..12],
                    v.missing.as_deref().unwrap_or_default()
                ));
            }
            Err(error)
        }
    }
}
