//! `git hpp hook pre-push|pre-receive`: what the installed hooks call.

use clap::Subcommand;

use crate::attest::VerifyOptions;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::gate::{self, Refusal};
use hpp_core::gate::{Scope, Update};
use hpp_store::PendingUpdate;

/// The hooks git runs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum HookCommand {
    PrePush(PrePushArgs),
    PreReceive(PreReceiveArgs),
}

/// Refuse a push of a protected ref whose commits do not pass `git hpp verify`
///
/// Reads git's pre-push lines on stdin. Protected refs come from git config hpp.protect (ref
/// patterns; default refs/heads/main and refs/heads/master); git config hpp.verify says whether
/// the pushed tip (tip, the default) or every commit the push brings (each) must verify;
/// signatures are required as `git hpp verify` requires them (an allowed-signers file
/// configured, unless hpp.requireSigned=false). Deleting a ref and pushing refs/hpp/* pass.
/// Exits 0 to let the push go, 2 to refuse it (with the commit, what is missing, and the command
/// that would fix it). A client hook can be skipped (--no-verify): the server's pre-receive gate
/// is the one that holds.
#[derive(Debug, clap::Args)]
pub struct PrePushArgs {
    /// The remote's name, as git passes it
    remote: Option<String>,
    /// The remote's URL, as git passes it
    url: Option<String>,
}

/// Refuse, on the server, an update of a protected ref whose commits do not verify
///
/// What `git hpp hooks install --server` installs as hooks/pre-receive in the repository others
/// push to. Reads git's pre-receive lines (<old> <new> <ref>) on stdin; the push's objects are
/// read from git's quarantine and its refs/hpp/* updates count as landed, so an atomic push of
/// the records and the branch together passes. Protected refs, hpp.verify and the signature
/// requirement are read from the server repository's config, as for pre-push. Exits 0 to accept
/// the push, 2 to refuse all of it (git then updates no ref).
#[derive(Debug, clap::Args)]
pub struct PreReceiveArgs {}

/// Runs one hook.
pub fn dispatch(ctx: &Ctx, command: HookCommand) -> Result<Outcome, CliError> {
    match command {
        HookCommand::PrePush(args) => cmd_hook_pre_push(ctx, &args),
        HookCommand::PreReceive(args) => cmd_hook_pre_receive(ctx, &args),
    }
}

/// Checks the push, on the client.
pub fn cmd_hook_pre_push(ctx: &Ctx, args: &PrePushArgs) -> Result<Outcome, CliError> {
    let input = ctx.read_stdin(crate::cli::input::PUSH_INPUT_CAP, "the pre-push input")?;
    let updates = hpp_core::gate::parse(&input)?;
    let destination = args
        .remote
        .as_deref()
        .or(args.url.as_deref())
        .unwrap_or("the remote")
        .to_owned();
    ctx.store()?;
    check(ctx, &updates, &destination)
}

/// Checks the push, on the server.
pub fn cmd_hook_pre_receive(ctx: &Ctx, _args: &PreReceiveArgs) -> Result<Outcome, CliError> {
    let input = ctx.read_stdin(crate::cli::input::PUSH_INPUT_CAP, "the pre-receive input")?;
    let updates = hpp_core::gate::parse_receive(&input)?;
    let pending: Vec<PendingUpdate> = updates
        .iter()
        .map(|u| PendingUpdate {
            name: u.remote_ref.clone(),
            new: (!u.local_oid.bytes().all(|b| b == b'0')).then(|| u.local_oid.clone()),
        })
        .collect();
    ctx.receive(&pending)?;
    check(ctx, &updates, "this repository")
}

/// Runs the gate over `updates` with the repository's configuration; a refusal names the first
/// commit that does not verify, what is missing, the fix, and every other one after it.
fn check(ctx: &Ctx, updates: &[Update], destination: &str) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let (allowed, require_signed) = ctx.signature_policy(None, false, false)?;
    let scope = Scope::from_config(store.config_string("hpp.verify").as_deref())?;
    let options = VerifyOptions {
        allowed: allowed.as_ref(),
        require_signed,
    };
    let refused = gate::check(
        store,
        updates,
        &store.config_strings("hpp.protect"),
        scope,
        options,
    )?;
    match refused.first() {
        None => Ok(Outcome::raw(Vec::new())),
        Some(first) => Err(refusal(first, &refused[1..], destination)),
    }
}

fn refusal(first: &Refusal, rest: &[Refusal], destination: &str) -> CliError {
    let Refusal { reference, verdict } = first;
    let mut error = CliError::refused(format!(
        "push to {destination} refused: {reference} at {} was never verified: {}",
        &verdict.commit.as_str()[..12],
        verdict.missing.as_deref().unwrap_or_default()
    ));
    error = error.hint(verdict.fix.clone().unwrap_or_default());
    for other in rest {
        error = error.hint(format!(
            "also {} at {}: {}",
            other.reference,
            &other.verdict.commit.as_str()[..12],
            other.verdict.missing.as_deref().unwrap_or_default()
        ));
    }
    error
}
