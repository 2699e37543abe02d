//! `git hpp doctor`: the whole protocol contract, the module inventories and the record store.

use serde_json::{Value, json};

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use crate::doctor::{self, Distribution, Finding, Severity, StoreCheck};
use crate::modules;
use crate::modules::files::Origin;
use hpp_core::manifest::{self, Validated};
use hpp_store::{self as store, Store};

/// The schema of `--report`.
const REPORT_SCHEMA: &str = "hpp.doctor-report/v1";

/// Check the manifest, the module directories and the record store
///
/// Applies every rule of the protocol to the manifest in force (refused with exit 2 and the
/// rule's sentence), verifies each module's CHECKSUMS.txt and hook scripts when the module
/// directories sit beside the manifest, and, inside a repository, reads every ref under
/// refs/hpp once and checks it with the code that owns its format (a loop whose chain does not
/// verify, an evidence or attestation record without its blob, a House Session that does not
/// verify, a lane log that does not parse or follow itself, a board log that does not
/// re-validate, a handoff or gotcha record that does not parse, an unknown namespace) and checks
/// that refs/notes/hpp mirrors every attestation on the commits at hand. Each broken record is a
/// finding naming its ref and the reason. Nothing is written except by --repair --apply.
/// Exits 0 when all is well, 1 on warnings (a missing note, a module without CHECKSUMS.txt), 2
/// on anything broken. `--repair` plans the rebuild of what is derived (the notes mirror);
/// `--repair --apply` writes refs/notes/hpp. Never uses the network.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print one pretty, sorted-key JSON document instead of text
    #[arg(long)]
    json: bool,
    /// Print the host matrix as Markdown and nothing else
    #[arg(long, conflicts_with_all = ["report", "repair"])]
    matrix: bool,
    /// Print a report to paste when asking for help (no machine paths, no network)
    #[arg(long, conflicts_with = "repair")]
    report: bool,
    /// Plan the rebuild of derived records (the notes mirror of attestations)
    #[arg(long)]
    repair: bool,
    /// With --repair, perform the plan (writes refs/notes/hpp)
    #[arg(long, requires = "repair")]
    apply: bool,
}

/// Runs `git hpp doctor`.
pub fn dispatch(ctx: &Ctx, args: DoctorArgs) -> Result<Outcome, CliError> {
    let manifest = ctx.manifest()?;
    let file = ctx.manifest_file()?;
    let validated = manifest::validate(manifest.value())
        .map_err(|e| CliError::refused(format!("{}: {e}", manifest.origin())))?;
    if args.matrix {
        return Ok(Outcome::raw(modules::host_matrix(&validated).into_bytes()));
    }
    let root = file.as_ref().map(|f| {
        let parent = f.parent().unwrap_or(std::path::Path::new(""));
        ctx.cwd().join(parent)
    });
    let distribution = doctor::check_origin(&validated, Origin::of(root.as_deref()));
    let store = match Store::discover(ctx.cwd()) {
        Ok(store) => Some(store),
        Err(store::Error::NotARepository { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    let spec = manifest.loop_spec();
    let trust = match &store {
        Some(_) => Some(ctx.trust(None, false, false)?),
        None => None,
    };
    let options = trust
        .as_ref()
        .map(crate::attest::VerifyOptions::of)
        .unwrap_or_default();
    let mut store_check = store
        .as_ref()
        .map(|s| doctor::check_store(s, spec, options))
        .transpose()?;
    let mut repaired = None;
    let planned = store_check.clone();
    let plan: Vec<doctor::NoteRepair> = planned
        .as_ref()
        .map(|c| c.notes_missing.clone())
        .unwrap_or_default();
    let drops: Vec<doctor::NoteUnbacked> = planned
        .as_ref()
        .map(|c| c.notes_unbacked.clone())
        .unwrap_or_default();
    if args.repair
        && args.apply
        && let Some(store) = &store
        && let Some(check) = &store_check
    {
        repaired = Some(doctor::repair_notes(store, check)?);
        store_check = Some(doctor::check_store(store, spec, options)?);
    }
    let mut findings: Vec<&Finding> = distribution.findings.iter().collect();
    findings.extend(store_check.iter().flat_map(|c| c.findings.iter()));
    let exit = match findings.iter().map(|f| f.severity).max() {
        None => Exit::Ok,
        Some(Severity::Warn) => Exit::Warn,
        Some(Severity::Block) => Exit::Block,
    };
    let status = match exit {
        Exit::Ok => "ok",
        Exit::Warn => "warn",
        _ => "fail",
    };
    let summary = summary_line(status, &validated);
    if args.report {
        return Ok(report(args.json, &validated, &distribution, &summary, exit));
    }
    let census = validated.census();
    let mut value = json!({
        "status": status,
        "version": env!("CARGO_PKG_VERSION"),
        "manifest": manifest.origin(),
        "modules": validated.modules.len(),
        "bundles": validated.bundles.keys().collect::<Vec<_>>(),
        "hosts": validated.hosts,
        "distribution": distribution,
        "hooks": census,
        "store": store_check.as_ref().map_or(json!({"checked": false}), store_json),
        "findings": findings,
    });
    if args.repair {
        value["repair"] = json!({"plan": plan, "drop": drops, "applied": repaired.is_some(),
                                 "notes_written": repaired});
    }
    let human = human(
        &summary,
        &distribution,
        store_check.as_ref(),
        &findings,
        args.repair.then_some((&plan, &drops, repaired)),
    );
    Ok(Outcome::document(args.json, &value, human, exit))
}

fn summary_line(status: &str, validated: &Validated) -> String {
    let census = validated.census();
    let count = |group: &str| census.by_capability.get(group).copied().unwrap_or(0);
    format!(
        "HPP doctor: {status} · modules={} · hosts={} · hooks={} (permission gates={} · llm egress={})",
        validated.modules.len(),
        validated.hosts.join(", "),
        census.declared,
        count("automatic-permission-gates"),
        count("transcript-derived-llm-egress"),
    )
}

fn store_json(check: &StoreCheck) -> Value {
    json!({"checked": true, "refs": check.refs, "loops": check.loops,
           "attestations": check.attestations, "deliberations": check.deliberations,
           "lanes": check.lanes, "board_events": check.board_events,
           "handoffs": check.handoffs, "gotchas": check.gotchas, "hop_states": check.hop_states,
           "notes_missing": check.notes_missing.len(),
           "notes_unbacked": check.notes_unbacked.len()})
}

fn human(
    summary: &str,
    distribution: &Distribution,
    store: Option<&StoreCheck>,
    findings: &[&Finding],
    repair: Option<(
        &Vec<doctor::NoteRepair>,
        &Vec<doctor::NoteUnbacked>,
        Option<usize>,
    )>,
) -> String {
    let mut out = format!("{summary}\n");
    if distribution.checked {
        out.push_str(&format!(
            "modules: {} checked · {}\n",
            distribution.modules.len(),
            distribution.status
        ));
    } else {
        out.push_str("modules: not checked (no module directory beside the manifest)\n");
    }
    match store {
        Some(c) => {
            // Every count that is not zero, spelled for its number; the refs always.
            let mut parts = vec![counted(c.refs, "ref", "refs")];
            for (n, one, many) in [
                (c.loops, "loop", "loops"),
                (c.attestations, "attestation", "attestations"),
                (c.deliberations, "deliberation", "deliberations"),
                (c.lanes, "lane", "lanes"),
                (c.board_events, "board event", "board events"),
                (c.handoffs, "handoff", "handoffs"),
                (c.gotchas, "gotcha record", "gotcha records"),
                (c.hop_states, "hop state", "hop states"),
            ] {
                if n > 0 {
                    parts.push(counted(n, one, many));
                }
            }
            if !c.notes_missing.is_empty() {
                parts.push(format!(
                    "{} missing",
                    counted(c.notes_missing.len(), "note", "notes")
                ));
            }
            out.push_str(&format!("store: {}\n", parts.join(" · ")));
        }
        None => out.push_str("store: not checked (not inside a git repository)\n"),
    }
    for finding in findings {
        let label = match finding.severity {
            Severity::Warn => "warn",
            Severity::Block => "block",
        };
        out.push_str(&format!(
            "{label}: {}: {}\n",
            finding.subject, finding.problem
        ));
    }
    if let Some((plan, drops, done)) = repair {
        if plan.is_empty() && drops.is_empty() {
            out.push_str("repair: nothing derived is out of step\n");
        }
        let prefix = if done.is_some() { "done: " } else { "" };
        for step in plan {
            out.push_str(&format!(
                "{prefix}add the note of {} to commit {}\n",
                step.attestation, step.commit
            ));
        }
        for drop in drops {
            out.push_str(&format!(
                "{prefix}drop from the note of commit {} the line {:?} ({})\n",
                drop.commit,
                drop.line.trim_end(),
                drop.why
            ));
        }
        if done.is_none() && !(plan.is_empty() && drops.is_empty()) {
            out.push_str("(plan only: run again with --repair --apply to write refs/notes/hpp)\n");
        }
    }
    out
}

fn report(
    json_flag: bool,
    validated: &Validated,
    distribution: &Distribution,
    summary: &str,
    exit: Exit,
) -> Outcome {
    let census = validated.census();
    let report = json!({
        "schema": REPORT_SCHEMA,
        "version": env!("CARGO_PKG_VERSION"),
        "protocol_version": validated.protocol_version,
        "platform": format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
        "modules": validated.modules.len(),
        "hosts": validated.hosts,
        "hooks": {"declared": census.declared, "by_capability": census.by_capability},
        "distribution": {"checked": distribution.checked, "status": distribution.status},
    });
    let human = format!(
        "{summary}\n\nNo network call was made, and nothing is sent anywhere: the report below \
         only leaves this machine if you copy it.\n\nPaste this report where you ask for help:\n{}",
        hpp_core::record::pretty_json(&report)
    );
    Outcome::document(json_flag, &json!({ "report": report }), human, exit)
}

/// `n` and the word for it: `1 loop`, `2 loops`, `0 refs`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
