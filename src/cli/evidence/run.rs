//! `git hpp evidence run`: run a criterion command and record what it did.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::cli::{JsonArg, LoopArg, TrustArgs};
use crate::evidence::RunRequest;
use crate::gates::{self, GateOptions};
use hpp_core::evidence::{EvidenceId, Verdict};
use hpp_core::record::to_object;

/// Run a criterion command and record an evidence bundle
///
/// Runs the command after `--` as an argv (never through a shell) at the worktree root, in its
/// own process group, killing the whole tree at the timeout, and records an hpp.evidence/v1
/// bundle at refs/hpp/evidence/<id>-<UTC stamp>[-N]. An artifact counts only if this run
/// created or changed it. Verdicts: passed, failed, missing-artifacts, timeout,
/// could-not-start. Exits 0 when passed, 1 for any other verdict, 2 when refused (a
/// secret-like command line, an artifact outside the workspace, a bad id or timeout) or when
/// --record-event could not append its event.
#[derive(Debug, clap::Args)]
pub struct EvidenceRunArgs {
    /// Bundle id: 1-80 letters, digits, '.', '_' or '-'
    #[arg(long)]
    id: String,
    /// Artifact the run must create or change, a glob relative to the worktree root (can be repeated)
    #[arg(long = "artifact", value_name = "GLOB")]
    artifacts: Vec<String>,
    /// Seconds before the whole process tree is killed
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
    /// Append evidence_recorded to the loop when the bundle passed (no --artifact needed: the
    /// bundle binds the command, its exit code, its output and the workspace tree)
    #[arg(long)]
    record_event: bool,
    /// Store the artifacts' bytes in the record, so a clone can inspect them
    #[arg(long)]
    keep_artifacts: bool,
    /// Key to sign the record with: an OpenSSH private key (ed25519 or ecdsa), or a public key
    /// whose private half is in ssh-agent [default with --signer: git's user.signingKey when
    /// gpg.format=ssh]
    #[arg(long, value_name = "KEY", requires = "signer")]
    sign_key: Option<PathBuf>,
    /// Principal the allowed-signers file lists for that key (signs the record)
    #[arg(long, value_name = "NAME")]
    signer: Option<String>,
    #[command(flatten)]
    trust: TrustArgs,
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
    /// The criterion command
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Runs and records.
pub fn cmd_evidence_run(ctx: &Ctx, args: &EvidenceRunArgs) -> Result<Outcome, CliError> {
    let id: EvidenceId = args.id.parse()?;
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let record_event = if args.record_event {
        Some((
            manifest.loop_spec(),
            ctx.loop_id(args.target.name.as_ref())?,
        ))
    } else {
        None
    };
    let signing = ctx.named_signing(args.sign_key.as_deref(), args.signer.as_deref())?;
    let trust = args.trust.policy(ctx)?;
    let recorded = gates::record_evidence(
        store,
        RunRequest {
            id,
            command: args.command.clone(),
            artifacts: args.artifacts.clone(),
            timeout_s: args.timeout,
            keep_artifacts: args.keep_artifacts,
            signing,
            echo: (!ctx.quiet()).then(crate::cli::output::echo_to_stderr),
        },
        record_event,
        &GateOptions::of(&trust, None),
    )
    .map_err(CliError::from)?;
    let outcome = &recorded.run;
    let mut printed = Value::Object(to_object(&outcome.record));
    printed["event"] = recorded.event.as_ref().map_or(
        Value::Null,
        |e| json!({"type": "evidence_recorded", "loop": e.id, "commit": e.commit}),
    );
    if let Some(error) = &recorded.event_error {
        printed["event_error"] = json!(error);
    }
    let verdict = outcome.record.verdict;
    let exit = match (verdict, &recorded.event_error) {
        (_, Some(_)) => Exit::Block,
        (Verdict::Passed, None) => Exit::Ok,
        (
            Verdict::Failed | Verdict::MissingArtifacts | Verdict::Timeout | Verdict::CouldNotStart,
            None,
        ) => Exit::Warn,
    };
    let mut human = format!(
        "evidence {}: {verdict} (exit code {})\nrecorded at {}",
        args.id, printed["exit_code"], outcome.record_ref
    );
    for missing in printed["missing"].as_array().into_iter().flatten() {
        human.push_str(&format!("\nno new or changed file for {missing}"));
    }
    if let Some(event) = &recorded.event {
        human.push_str(&format!(
            "\nappended {} evidence_recorded to loop {}",
            event.event, event.id
        ));
    }
    if verdict != Verdict::Passed
        && let Some(tail) = &outcome.record.output_tail
    {
        let lines = tail.last_lines(20);
        if !lines.is_empty() {
            human.push_str("\nits output ended with:");
            for line in lines {
                human.push_str(&format!("\n  | {line}"));
            }
            human.push_str(&format!(
                "\n(the last {} characters of each stream are kept: `git hpp evidence show {}`)",
                tail.max_chars, args.id
            ));
        }
    }
    let mut result = Outcome::document(args.format.json, &printed, human, exit);
    if let Some(snapshot) = &outcome.record.snapshot
        && let Some(drift) = crate::cli::drift::note(ctx.store()?, &snapshot.tree, "this evidence")?
    {
        result = result.warn(drift);
    }
    if outcome.record.signer.is_none() {
        result = result.warn(crate::cli::output::unsigned("the evidence bundle", &trust));
    }
    if let Some(error) = &recorded.event_error {
        result = result.warn(format!("the event was not appended: {error}"));
    }
    Ok(result)
}
