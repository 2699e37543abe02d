//! `git hpp deliberate decide`: a person's decision on a sealed House Session kept in a ref.

use serde_json::{Map, Value, json};

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::deliberation::{HUMAN_DECISION_FILE, HUMAN_DECISION_SIGNATURE};
use hpp_core::deliberation;
use hpp_core::record::canonical_json;
use hpp_core::secrets;

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
    for text in [Some(&args.by), args.note.as_ref()].into_iter().flatten() {
        if secrets::looks_secret(text) {
            return Err(CliError::refused(
                "the decision carries text shaped like a secret; it would be pushed with the record",
            ));
        }
    }
    let store = ctx.store()?;
    let signing = match (&args.sign_key, args.no_sign) {
        (Some(key), _) => Some(ctx.signing(key, &args.by)?),
        (None, false) => ctx.git_signing(&args.by)?,
        (None, true) => None,
    };
    let name = crate::deliberation::resolve(store, &args.record)?;
    let tip = store
        .tip(&name)?
        .ok_or_else(|| CliError::refused(format!("no deliberation record named {name}")))?;
    let loaded = crate::deliberation::load(store, &name, None)?;
    if let Some(problem) = loaded.problems.first() {
        return Err(CliError::refused(format!("{name}: {problem}")));
    }
    if let Some(decided) = loaded.record.get("human_decision").filter(|h| !h.is_null()) {
        return Err(CliError::refused(format!(
            "{name} is already decided by {}: a decision is recorded once",
            decided.get("by").and_then(Value::as_str).unwrap_or("?")
        )));
    }
    let mut decision = Map::new();
    decision.insert("value".into(), json!(args.value));
    decision.insert("by".into(), json!(args.by));
    if let Some(note) = &args.note {
        decision.insert("note".into(), json!(note));
    }
    let decision = Value::Object(decision);
    let mut decided = loaded.record.clone();
    decided["human_decision"] = decision.clone();
    if let deliberation::Verification::Broken { reason, .. } = deliberation::verify_record(&decided)
    {
        return Err(CliError::refused(format!("{name}: {reason}")));
    }
    let bytes = canonical_json(&decision);
    let armored = signing.as_ref().map(|s| s.sign(&bytes)).transpose()?;
    let mut files: Vec<(&str, &[u8])> = vec![(HUMAN_DECISION_FILE, &bytes)];
    if let Some(armored) = &armored {
        files.push((HUMAN_DECISION_SIGNATURE, armored.as_bytes()));
    }
    store.extend_record(
        &name,
        &tip,
        &files,
        &format!("hpp: human decision on {name}"),
    )?;
    Ok(Outcome::json(
        &json!({"status": "decided", "ref": name, "human_decision": decision,
                "signed": armored.is_some()}),
        Exit::Ok,
    ))
}
