//! `git hpp event reconcile`: keep one side of a loop two machines appended to.

use serde_json::json;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::events::reconcile::{self, Keep};

/// Keep one side of a loop that diverged from the remote's, and join the other to it
///
/// A loop both this machine and another appended to between fetches cannot be merged event
/// by event: `git hpp fetch` reports it and stages the remote's history under
/// refs/hpp-remote/<remote>/loops/<loop>. This keeps one side as the loop (`ours`: this
/// machine's; `theirs`: the staged one, which must verify) and moves the loop forward to a
/// join commit whose parents are both tips: the kept side's last event (its tree, plus
/// reconcile.json recording the choice) and the other side's tip, which also stays at
/// refs/hpp/preserved/loops/<loop>/<commit>. Nothing is deleted or forced: `git hpp push`
/// then moves the remote's loop forward too. The choice is a person's: with --by it is signed
/// (reconcile.sig, in the person's namespace) with --sign-key or git's signing key, and where
/// signatures are required another machine's fetch takes in only a signed join. Exits 0 when
/// reconciled, 2 when refused (the loop has not diverged, nothing is staged, the side to keep
/// does not verify, or signatures are required and the choice is not signed).
#[derive(Debug, clap::Args)]
pub struct EventReconcileArgs {
    #[command(flatten)]
    target: LoopArg,
    /// Which side becomes the loop
    #[arg(long, value_enum)]
    keep: Keep,
    /// The remote whose staged history is the other side
    #[arg(long, default_value = "origin")]
    remote: String,
    /// The person who chooses (a principal the allowed signers mark as a person)
    #[arg(long)]
    by: Option<String>,
    /// Key the person signs the choice with [default with --by: git's user.signingKey when
    /// gpg.format=ssh]
    #[arg(long, requires = "by")]
    sign_key: Option<std::path::PathBuf>,
    /// Do not sign the choice with git's signing key
    #[arg(long, conflicts_with = "sign_key")]
    no_sign: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Reconciles the loop.
pub fn cmd_event_reconcile(ctx: &Ctx, args: &EventReconcileArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.loop_id(args.target.name.as_ref())?;
    let at = hpp_core::timestamp::rfc3339(time::OffsetDateTime::now_utc());
    let trust = ctx.trust(None, false, false)?;
    let signing = match (&args.by, &args.sign_key) {
        (Some(by), Some(key)) => Some(ctx.signing(key, by)?),
        (Some(by), None) if !args.no_sign => ctx.git_signing(by)?,
        _ => None,
    };
    if trust.require_signed && signing.is_none() {
        return Err(CliError::refused(
            "signatures are required, and keeping one side of a loop is a person's choice: it must be signed",
        )
        .hint("git hpp event reconcile --keep ours|theirs --by NAME --sign-key KEY"));
    }
    let sign = |bytes: &[u8]| -> Result<Vec<u8>, String> {
        let signing = signing.as_ref().expect("signed only with a key");
        signing
            .sign_for(crate::sign::Purpose::Person, bytes)
            .map(String::into_bytes)
            .map_err(|e| e.to_string())
    };
    let person = signing.as_ref().map(|s| reconcile::Person {
        by: s.signer.as_str(),
        sign: &sign,
    });
    let done = reconcile::reconcile(
        store,
        manifest.loop_spec(),
        &id,
        &args.remote,
        args.keep,
        &at,
        person.as_ref(),
    )
    .map_err(|e| match e {
        reconcile::Error::Store(inner) => CliError::from(inner),
        reconcile::Error::Loop(inner) => CliError::from(inner),
        refused => CliError::refused(refused),
    })?;
    let side = match args.keep {
        Keep::Ours => "this machine's",
        Keep::Theirs => "the remote's",
    };
    let human = format!(
        "loop {id}: kept {side} history ({} events); the other side is joined at {} and preserved at {}\nnext: `git hpp push {}` moves the remote's loop forward to the join",
        done.events, done.commit, done.record.preserved_ref, args.remote
    );
    let value = json!({
        "loop": id,
        "commit": done.commit,
        "events": done.events,
        "record": done.record,
    });
    let outcome = Outcome::document(args.format.json, &value, human, Exit::Ok);
    Ok(match (&args.by, &signing) {
        (Some(by), None) => outcome.warn(crate::cli::output::unsigned(
            &format!("{by}'s choice"),
            &trust,
        )),
        _ => outcome,
    })
}
