//! `git hpp deliberate decide`: a person's decision on a sealed House Session kept in a ref.

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::deliberation::decide;
use hpp_core::deliberation::HumanDecision;

/// Record a person's decision on a sealed House Session kept in a ref
///
/// The decision stands outside the seal: the record, its hash and its signature are not touched.
/// It is added as human_decision.json in one child commit of the session's ref, which moves
/// forward by compare-and-swap, so a session is decided once and two people deciding at once
/// cannot both win. VALUE must be one of the panel's question options. The deciding person signs
/// the decision as --by with --sign-key (a private key file, or a public key in ssh-agent), or
/// with git's user.signingKey when gpg.format=ssh; it is kept as human_decision.sig beside it.
/// `deliberate verify` then reports the decision and checks it (with --allowed-signers, it must
/// be signed by --by). Prints {"status": "decided", "ref", "human_decision", "signed"}.
///
/// Exit codes: 0 decided, 2 refused (the record does not verify, it is already decided, the value
/// is not an option, or a text looks like a secret); nothing is written when refused.
#[derive(Debug, clap::Args)]
pub struct DeliberateDecideArgs {
    /// The sealed record: refs/hpp/deliberations/<id>, <id> or a panel id naming one record
    #[arg(value_name = "RECORD")]
    record: String,
    /// The decision: one of the panel's question options
    #[arg(long, value_name = "OPTION")]
    value: String,
    /// Who decided
    #[arg(long, value_name = "NAME")]
    by: String,
    /// Why, in a sentence
    #[arg(long, value_name = "TEXT")]
    note: Option<String>,
    /// The deciding person's key to sign the decision with, as --by [default: git's
    /// user.signingKey when gpg.format=ssh]
    #[arg(long, value_name = "KEY")]
    sign_key: Option<std::path::PathBuf>,
    /// Record the decision unsigned even where git has a signing key
    #[arg(long, conflicts_with = "sign_key")]
    no_sign: bool,
}

/// `git hpp deliberate decide`.
pub fn cmd_deliberate_decide(ctx: &Ctx, args: &DeliberateDecideArgs) -> Result<Outcome, CliError> {
    let decision = HumanDecision::new(args.value.clone(), args.by.clone(), args.note.clone());
    decide::refuse_secrets(&decision)?;
    let store = ctx.store()?;
    let signing = match (&args.sign_key, args.no_sign) {
        (Some(key), _) => Some(ctx.signing(key, &args.by)?),
        (None, false) => ctx.git_signing(&args.by)?,
        (None, true) => None,
    };
    let decided = decide::decide(store, &args.record, decision, signing.as_ref())?;
    Ok(Outcome::json(&decided, Exit::Ok))
}
