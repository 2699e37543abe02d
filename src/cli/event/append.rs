//! `git hpp event append`: record one event on a loop.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg, TrustArgs};
use crate::events;
use crate::gates::{self, GateOptions};

/// Append one event to a loop and print where the loop stands
///
/// The whole history plus the new event must walk the loop (planned → active → evidenced →
/// checked → approved → verified), and the gate the event passes must hold against the records
/// it names, on the workspace tree as it is now: scope (work_started) names the work item and
/// the maker; fresh-evidence (evidence_recorded) names bundles that verify, passed, and ran on
/// this tree; read-only-checker (check_passed) finds an approved attestation of this tree by a
/// checker who is not the maker; human (human_approved) names a person, signed by them with a
/// key the allowed-signers file marks as a person (namespaces="hpp-human") when signatures are
/// required; closure (verified) re-checks all three. A refusal names the gate, the record it
/// looked at and why; it exits 2 and writes nothing. Writes refs/hpp/loops/<loop> by
/// compare-and-swap; concurrent writers lose nothing.
#[derive(Debug, clap::Args)]
pub struct EventAppendArgs {
    /// Event type (work_started, evidence_recorded, check_passed, human_approved, verified)
    #[arg(long = "type", value_name = "TYPE")]
    kind: String,
    /// Event data, a JSON object [default: {}]; the flags below add to it
    #[arg(long, value_name = "JSON")]
    data: Option<String>,
    /// The work item the loop is about (scope)
    #[arg(long, value_name = "ITEM")]
    work: Option<String>,
    /// Who makes the work; fixed for the loop from its first event (scope)
    #[arg(long, value_name = "NAME")]
    maker: Option<String>,
    /// Evidence bundle, an id or a ref (fresh-evidence; can be repeated)
    #[arg(long, value_name = "ID|REF")]
    evidence: Vec<String>,
    /// The attestation that checked this tree [default: the latest approval of the tree by a
    /// checker other than the maker] (read-only-checker)
    #[arg(long, value_name = "REF")]
    attestation: Option<String>,
    /// The person who approves (human)
    #[arg(long, value_name = "NAME")]
    by: Option<String>,
    /// Key the person signs their approval with: an OpenSSH private key, or a public key whose
    /// private half is in ssh-agent [default with --by: git's user.signingKey when
    /// gpg.format=ssh]
    #[arg(long, value_name = "KEY", requires = "by")]
    sign_key: Option<PathBuf>,
    /// Do not sign the approval with git's signing key
    #[arg(long, conflicts_with = "sign_key")]
    no_sign: bool,
    #[command(flatten)]
    trust: TrustArgs,
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Appends the event and renders the projection.
pub fn cmd_event_append(ctx: &Ctx, args: &EventAppendArgs) -> Result<Outcome, CliError> {
    let mut data = match args.data.as_deref() {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(CliError::refused("event data must be a JSON object")),
            // Why a bound on depth: every reader of the event (verify, export, the gates, a
            // server's pre-receive) parses it with serde_json, whose recursion limit keeps a deep
            // record from overflowing a reader's stack (events::Error::TooDeep).
            Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
                return Err(CliError::refused(format!(
                    "event data nests more than {} levels deep; at most {} are kept, since every reader of an event parses it with serde_json's recursion limit (the reference takes up to about 990)",
                    hpp_core::event_log::MAX_DATA_DEPTH,
                    hpp_core::event_log::MAX_DATA_DEPTH
                )));
            }
            Err(e) => return Err(CliError::refused(format!("invalid JSON in --data: {e}"))),
        },
    };
    for (key, value) in [
        ("work", &args.work),
        ("maker", &args.maker),
        ("attestation", &args.attestation),
        ("by", &args.by),
    ] {
        if let Some(value) = value {
            data.insert(key.to_owned(), Value::String(value.clone()));
        }
    }
    if !args.evidence.is_empty() {
        data.insert(
            "evidence".to_owned(),
            Value::Array(args.evidence.iter().cloned().map(Value::String).collect()),
        );
    }
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.loop_id(args.target.name.as_ref())?;
    let trust = args.trust.policy(ctx)?;
    let person = match (&args.by, &args.sign_key) {
        (Some(by), Some(key)) => Some(ctx.signing(key, by)?),
        (Some(by), None) if !args.no_sign => ctx.git_signing(by)?,
        _ => None,
    };
    let options = GateOptions::of(&trust, person.as_ref());
    let spec = manifest.loop_spec();
    let appended = match gates::append(store, spec, &id, &args.kind, data, &options) {
        Ok(appended) => appended,
        Err(gates::Error::Loop(events::Error::Transition(
            e @ hpp_core::event_loop::Error::InvalidTransition { .. },
        ))) => {
            return Err(transition_refused(
                spec,
                &args.kind,
                args.target.name.as_ref(),
                e,
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let mut p = appended.projection.clone();
    if args.format.json && p.history.len() != p.event_count {
        // The append read only the tip; the document names every event type, as status does.
        let standing = events::cache::read_standing(store, manifest.loop_spec(), &id)?;
        if let Some(whole) = standing
            .projection
            .filter(|_| standing.head.as_ref() == Some(&appended.commit))
        {
            p = whole;
        }
    }
    let p = &p;
    let human = format!(
        "appended {} {} to loop {} (commit {})\nHPP status: {} · events={} · evidence={} · next={}",
        appended.event,
        args.kind,
        appended.id,
        &appended.commit.as_str()[..12],
        p.state,
        p.event_count,
        p.evidence_count,
        p.next_step
    );
    let mut value = serde_json::to_value(p).expect("a projection serialises");
    value["loop"] = Value::String(appended.id.to_string());
    value["head"] = Value::String(appended.commit.to_string());
    let outcome = Outcome::document(args.format.json, &value, human, Exit::Ok);
    Ok(match (&args.by, &person) {
        (Some(by), None) => outcome.warn(crate::cli::output::unsigned(
            &format!("{by}'s approval"),
            &trust,
        )),
        _ => outcome,
    })
}

/// An event the loop has no transition for, with the events the loop takes from where it is.
fn transition_refused(
    spec: &hpp_core::event_loop::LoopSpec,
    kind: &str,
    named: Option<&hpp_store::refs::LoopId>,
    e: hpp_core::event_loop::Error,
) -> CliError {
    // The hint is the command to type next: on the loop the refused one named.
    let on = named.map(|id| format!(" --loop {id}")).unwrap_or_default();
    let hpp_core::event_loop::Error::InvalidTransition { state, .. } = &e else {
        return CliError::refused(e);
    };
    let allowed: Vec<&str> = spec
        .transitions()
        .iter()
        .filter(|t| &t.from == state)
        .map(|t| t.event.as_str())
        .collect();
    let hint = if allowed.is_empty() {
        format!("from {state} the loop takes no further event")
    } else {
        format!(
            "from {state} the loop takes: {} (git hpp event append{on} --type {})",
            allowed.join(", "),
            allowed[0]
        )
    };
    // A new work item on a branch whose loop has moved on belongs in a loop of its own.
    let starts = spec
        .transitions()
        .iter()
        .any(|t| t.from == spec.initial() && t.event == kind);
    let elsewhere = starts && state != spec.initial();
    let refused = CliError::refused(e).hint(hint);
    if elsewhere {
        refused.hint(format!(
            "to start another work item here, name a new loop: git hpp event append --loop NAME --type {kind} ..."
        ))
    } else {
        refused
    }
}
