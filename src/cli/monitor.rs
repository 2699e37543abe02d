//! `git hpp monitor probe`: run the manifest's declared health probes and record each signal.

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;

/// The `monitor` verbs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum MonitorCommand {
    Probe(MonitorProbeArgs),
}

/// Run the health probes the manifest's monitors declare, and record each signal
///
/// A monitor with `"probe": {"command": [program, args...], "timeout_s"?: N}` (default 60 s) has
/// its command run from the worktree root as an argv (no shell) and passes on exit 0; one with
/// `"probe": {"http": "http://host[:port]/path"}` is fetched (GET, no redirects) and passes on a
/// 2xx answer (https: use a command probe, e.g. curl -fsS URL). Each run is appended to
/// refs/hpp/monitors/<id> (signal.json, hpp.monitor-signal/v1: when, whether it passed, exit
/// code or http status, duration). `map monitor` and the atlas then take a monitor's
/// last_signal from its newest passing signal, so their freshness is measured, not unknown.
/// Monitors without a probe are skipped; with --due, so is one probed less than its cadence
/// ago (health-kit's SessionStart hook runs `monitor probe --due`). Every probe is read before
/// any runs: a malformed one records nothing. Exits 0 when every probe run passed, 1 when one
/// failed, 2 for a malformed probe or an unknown --id.
#[derive(Debug, clap::Args)]
pub struct MonitorProbeArgs {
    /// Only this monitor (can be repeated)
    #[arg(long = "id", value_name = "ID")]
    ids: Vec<String>,
    /// Only monitors whose newest signal is older than their cadence (or that have none)
    #[arg(long)]
    due: bool,
    /// Record the signals at this Unix time [default: now]
    #[arg(long, value_name = "T")]
    now: Option<i64>,
    /// Manifest monitors from this file instead [default: the manifest in force]
    #[arg(long = "monitors", value_name = "FILE", hide = true)]
    monitors_file: Option<PathBuf>,
    #[command(flatten)]
    format: JsonArg,
}

/// Runs one `monitor` verb.
pub fn dispatch(ctx: &Ctx, command: MonitorCommand) -> Result<Outcome, CliError> {
    match command {
        MonitorCommand::Probe(args) => cmd_monitor_probe(ctx, &args),
    }
}

fn cmd_monitor_probe(ctx: &Ctx, args: &MonitorProbeArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let monitors = manifest
        .value()
        .get("monitors")
        .cloned()
        .unwrap_or_else(|| json!([]));
    for id in &args.ids {
        let declared = monitors
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["id"] == id.as_str());
        if !declared {
            return Err(CliError::refused(format!(
                "no monitor named {id} in the manifest"
            )));
        }
    }
    let root = store
        .workdir()
        .map_or_else(|| ctx.cwd().to_path_buf(), std::path::Path::to_path_buf);
    let now = args
        .now
        .unwrap_or_else(|| time::OffsetDateTime::now_utc().unix_timestamp());
    let probes = crate::monitors::probe(store, &root, &monitors, &args.ids, now, args.due)
        .map_err(|e| match e {
            crate::monitors::Error::Store(inner) => CliError::from(inner),
            crate::monitors::Error::Process(inner) => CliError::internal("running a probe", &inner),
            refused => CliError::refused(refused),
        })?;
    let mut human = String::new();
    if probes.probed.is_empty() && probes.not_due.is_empty() {
        human.push_str("no monitor declares a probe (add \"probe\": {\"command\": [...]} or {\"http\": URL} to a monitor in the manifest)\n");
    }
    for p in &probes.probed {
        let answer = match (p.http_status, p.exit_code) {
            (Some(status), _) => format!("http {status}"),
            (None, Some(code)) => format!("exit {code}"),
            (None, None) => "no answer".to_owned(),
        };
        human.push_str(&format!(
            "{} {} ({answer}) → {}\n",
            p.id,
            if p.ok { "ok" } else { "FAILED" },
            crate::monitors::signals_ref(&p.id)
        ));
    }
    for id in &probes.not_due {
        human.push_str(&format!("{id} not due (probed within its cadence)\n"));
    }
    let exit = if probes.probed.iter().all(|p| p.ok) {
        Exit::Ok
    } else {
        Exit::Warn
    };
    Ok(Outcome::document(
        args.format.json,
        &json!({"now": now, "probed": probes.probed, "not_due": probes.not_due}),
        human,
        exit,
    ))
}
