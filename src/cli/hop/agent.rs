//! The agent commands: `hop state`, `status`, `check`, `propose`.

use std::time::Duration;

use super::out::{HopError, HopExit, HopOutcome};
use super::{HopCtx, state_arg};
use hpp_core::hop::StateId;

/// Show one state
///
/// Prints the state's kind, task, attempt, tree, parents with their roles, digest (and whether
/// it recomputes), its exact prompt for a prompt state, and the checks recorded on its tree.
/// Reads refs/hpp/hop/. Exit 1 for an unknown state.
#[derive(Debug, clap::Args)]
pub struct HopStateArgs {
    /// The state
    #[arg(value_parser = state_arg)]
    state: StateId,
}

/// Show the accepted head, its history and every attempt
///
/// Reads refs/hpp/hop/. Exit 1 when hop is not initialised.
#[derive(Debug, clap::Args)]
pub struct HopStatusArgs {}

/// Checkpoint the attempt and run a command on that exact tree
///
/// Needs the agent launch (every HOP_* variable; exit 2 otherwise). Snapshots the live
/// workspace as a checkpoint (C_), runs the command after `--` (without a shell) in a
/// disposable worktree of that checkpoint, so concurrent edits in the workspace cannot change
/// what is tested, and records the run under refs/hpp/hop/checks/. Exit 22 if it failed.
#[derive(Debug, clap::Args)]
pub struct HopCheckArgs {
    /// The prompt state of the launch ("$HOP_STATE_ID")
    #[arg(value_parser = state_arg)]
    state: StateId,
    /// Seconds the command may run
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    timeout: u64,
    #[command(flatten)]
    sign: super::signing::SignArgs,
    /// The command to run
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Freeze the workspace as a proposal
///
/// Needs the agent launch (every HOP_* variable; exit 2 otherwise). Records the live
/// workspace's non-ignored tree as a proposal (R_); later edits cannot change it. Lists the
/// checks recorded on exactly that tree.
#[derive(Debug, clap::Args)]
pub struct HopProposeArgs {
    /// What the proposal does
    #[arg(long, value_name = "TEXT")]
    summary: Option<String>,
    /// The prompt state of the launch ("$HOP_STATE_ID")
    #[arg(value_parser = state_arg)]
    state: StateId,
}

/// `hop state`.
pub fn cmd_hop_state(ctx: &HopCtx, args: &HopStateArgs) -> Result<HopOutcome, HopError> {
    let view = ctx.hop()?.state(&args.state)?;
    let s = &view.loaded.state;
    let mut human = format!(
        "{} {}\ncommit {}\ntree {}\n",
        view.loaded.kind, s.id, view.loaded.commit, s.tree
    );
    for (label, value) in [
        ("task", s.task.as_ref().map(ToString::to_string)),
        ("attempt", s.attempt.as_ref().map(ToString::to_string)),
        ("agent", s.agent.clone()),
        ("summary", s.summary.clone()),
    ] {
        if let Some(value) = value {
            human.push_str(&format!("{label} {value}\n"));
        }
    }
    for parent in &s.parents {
        human.push_str(&format!("parent {} {}\n", parent.role.name(), parent.state));
    }
    human.push_str(&format!(
        "digest {} ({})\n",
        view.loaded.recorded_digest.as_deref().unwrap_or("none"),
        if view.digest_ok { "ok" } else { "MISMATCH" }
    ));
    human.push_str(&format!("checks {}\n", view.checks.len()));
    for check in &view.checks {
        let field = |key: &str| check.get(key).and_then(serde_json::Value::as_str);
        human.push_str(&format!(
            "  {} {} {}{}\n",
            field("id").unwrap_or("?"),
            field("purpose").unwrap_or("check"),
            if check.get("passed").and_then(serde_json::Value::as_bool) == Some(true) {
                "passed"
            } else {
                "failed"
            },
            field("evidence").map_or_else(String::new, |e| format!(" · evidence {e}")),
        ));
    }
    if let Some(prompt) = &view.prompt {
        human.push_str(&format!("prompt:\n{prompt}"));
    }
    Ok(HopOutcome::ok(&view, human))
}

/// `hop status`.
pub fn cmd_hop_status(ctx: &HopCtx, _args: &HopStatusArgs) -> Result<HopOutcome, HopError> {
    let status = ctx.hop()?.status()?;
    let mut human = format!(
        "accepted {} (tree {}), {} in history, {} states\n",
        status.accepted.state.id,
        status.accepted.state.tree,
        status.history.len(),
        status.states
    );
    for a in &status.attempts {
        human.push_str(&format!(
            "{} {} {} head {}{}\n",
            a.attempt,
            a.agent.as_deref().unwrap_or("-"),
            a.status,
            a.head,
            if a.workspace_exists {
                ""
            } else {
                " (no workspace here)"
            }
        ));
    }
    Ok(HopOutcome::ok(&status, human))
}

fn timeout(seconds: u64) -> Result<Duration, HopError> {
    if seconds == 0 || seconds > 86_400 {
        return Err(HopError::new(
            HopExit::Usage,
            "--timeout must be between 1 and 86400 seconds",
        ));
    }
    Ok(Duration::from_secs(seconds))
}

/// `hop check`.
pub fn cmd_hop_check(ctx: &HopCtx, args: &HopCheckArgs) -> Result<HopOutcome, HopError> {
    let launch = ctx.launch()?;
    let limit = timeout(args.timeout)?;
    let run = ctx.hop()?.signing_evidence(args.sign.signing(ctx)?).check(
        &args.state,
        &launch,
        &args.command,
        limit,
    )?;
    let code = run
        .exit_code
        .map_or_else(|| "none".to_owned(), |c| c.to_string());
    let human = format!(
        "check {} {} (exit {code}) on {} (tree {})\n{}{}{}",
        run.id,
        if run.passed { "passed" } else { "failed" },
        run.checkpoint,
        run.tree,
        run.evidence
            .as_ref()
            .map_or_else(String::new, |e| format!("evidence {e}\n")),
        run.stdout,
        run.stderr
    );
    if run.passed {
        Ok(HopOutcome::ok(&run, human))
    } else {
        let reason = format!("check {} failed (exit {code})", run.id);
        Ok(HopOutcome::failed(
            &run,
            human,
            HopExit::CheckFailed,
            reason,
        ))
    }
}

/// `hop propose`.
pub fn cmd_hop_propose(ctx: &HopCtx, args: &HopProposeArgs) -> Result<HopOutcome, HopError> {
    let launch = ctx.launch()?;
    let done = ctx
        .hop()?
        .propose(&args.state, &launch, args.summary.clone())?;
    let human = format!(
        "proposal {} (tree {}), {} check(s) on this tree\nland it with: hop land {}",
        done.state.state.id,
        done.state.state.tree,
        done.checks.len(),
        done.state.state.id
    );
    Ok(HopOutcome::ok(&done, human))
}
