//! `git hpp event verify`: check a loop's chain, and re-check every gate's records.

use std::path::PathBuf;

use hpp_core::event_loop::gates::Standing;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg};
use crate::events;
use crate::gates;

/// Check a loop's chain, and re-check the records each event's gate checked
///
/// The chain: an hpp.event-chain/v1 report, status empty, intact, legacy or broken, the first
/// divergent event, and the head commit (the anchor to keep elsewhere). Broken means an event
/// commit without a valid event.json, a seq out of order, a commit with other than one parent
/// (the first: none), a prev_sha256 that does not match the previous event, or a transition the
/// loop forbids. The gates, per event: ok; reference missing (a record it names is not in this
/// repository: run `git hpp fetch`); no longer holds (revoked, edited, or about another tree);
/// unchecked (legacy), for events written before gates measured or imported, never counted as
/// checked. Exits 2 when the chain is broken or a gate no longer holds, 1 when a reference is
/// missing, else 0. Reads refs/hpp/loops/<loop> and the records its events name.
#[derive(Debug, clap::Args)]
pub struct EventVerifyArgs {
    /// Allowed-signers file a person's signature is re-checked against [default: git config
    /// hpp.allowedSignersFile, then gpg.ssh.allowedSignersFile]
    #[arg(long, value_name = "FILE")]
    allowed_signers: Option<PathBuf>,
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Verifies the loop and renders the report.
pub fn cmd_event_verify(ctx: &Ctx, args: &EventVerifyArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let id = ctx.existing_loop_id(args.target.name.as_ref())?;
    let state = events::read(store, manifest.loop_spec(), &id)?;
    let trust = ctx.trust(args.allowed_signers.as_deref(), false, false)?;
    let chain = &state.chain;
    let report = if chain.is_broken() {
        Vec::new()
    } else {
        gates::report(
            store,
            manifest.loop_spec(),
            &state,
            crate::attest::VerifyOptions::of(&trust),
        )?
    };
    let mut value = serde_json::to_value(chain).expect("a chain report serialises");
    value["loop"] = serde_json::json!(state.id);
    value["log"] = serde_json::json!(state.ref_name);
    value["head"] = serde_json::json!(state.head);
    value["gates"] = serde_json::to_value(&report).expect("a gate report serialises");
    let status = serde_json::to_value(chain.status).expect("a status serialises");
    let status = status.as_str().unwrap_or_default();
    let mut human = match (&chain.first_divergent, &chain.problem) {
        (Some(at), Some(problem)) => {
            format!("HPP event chain: broken at {at} · loop={id}\n{problem}")
        }
        _ => format!(
            "HPP event chain: {status} · loop={id} · events={} · head={}",
            chain.events,
            state.head.as_ref().map_or("none", |h| h.as_str())
        ),
    };
    for line in &report {
        let gate = line
            .gate
            .as_deref()
            .map_or_else(|| "gates".to_owned(), |g| format!("gate {g}"));
        let standing = match &line.standing {
            Standing::Ok => "ok".to_owned(),
            Standing::ReferenceMissing { record } => {
                format!("reference missing: {record} (run `git hpp fetch`)")
            }
            Standing::NoLongerHolds { reason } => format!("no longer holds: {reason}"),
            Standing::UncheckedLegacy => "unchecked (legacy)".to_owned(),
        };
        human.push_str(&format!(
            "\n  {} {} · {gate}: {standing}",
            line.event, line.kind
        ));
    }
    let fails = |f: fn(&Standing) -> bool| report.iter().any(|l| f(&l.standing));
    let exit = if chain.is_broken() || fails(|s| matches!(s, Standing::NoLongerHolds { .. })) {
        Exit::Block
    } else if fails(|s| matches!(s, Standing::ReferenceMissing { .. })) {
        Exit::Warn
    } else {
        Exit::Ok
    };
    if trust.policy.is_some() {
        human.push_str(&format!("\n  signatures required by the {}", trust.source));
    }
    Ok(crate::cli::output::with_notes(
        Outcome::document(args.format.json, &value, human, exit),
        &trust,
    ))
}
