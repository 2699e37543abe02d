//! The human or controller commands: `hop init`, `start`, `env`, `prompt`, `land`, `undo`.

use std::ffi::OsString;
use std::time::Duration;

use serde_json::json;

use super::out::{HopError, HopExit, HopOutcome};
use super::{HopCtx, prompt_bytes, state_arg};
use crate::hop::{Env, Landing, Prompted};
use hpp_core::hop::StateId;

/// Record the initial accepted state from HEAD
///
/// Creates refs/hpp/hop/accepted and refs/hpp/hop/states/A_... from HEAD's tree, with HEAD as
/// the state commit's parent. HEAD, the branch, the index and the working tree are not touched.
/// Running it again reports the existing head. With PATH, initialises the repository there
/// instead of the current one. Exit 0, or 1 on error (PATH is not in a git repository).
#[derive(Debug, clap::Args)]
pub struct HopInitArgs {
    /// A directory of the repository to initialise (default: the current one)
    #[arg(value_name = "PATH")]
    path: Option<std::path::PathBuf>,
}

/// Start a task and attempt with its exact initial prompt
///
/// Records the task, the attempt, the prompt state (its exact bytes under
/// refs/hpp/hop/prompts/) and then creates the attempt's detached workspace at the accepted
/// commit. Deliver the prompt to the agent only after exit 0. Exit 2 on an empty prompt.
#[derive(Debug, clap::Args)]
pub struct HopStartArgs {
    /// The agent that will run the attempt
    #[arg(long, value_name = "NAME")]
    agent: String,
    /// The exact initial prompt, as one argument (kept byte for byte)
    #[arg(allow_hyphen_values = true)]
    prompt: OsString,
    /// Check out only this directory of the repository in the workspace (repeatable; git's
    /// sparse checkout in cone mode, top-level files included). Proposals still carry the
    /// whole tree.
    #[arg(long, value_name = "DIR")]
    sparse: Vec<String>,
}

/// Print the launch environment of a prompt state
///
/// Prints `export HOP_*=...` for HOP_ROOT, HOP_STATE_ID, HOP_TASK_ID, HOP_ATTEMPT_ID and
/// HOP_WORKSPACE, then `cd` into the workspace: `eval "$(hop env P_...)"`. Exit 2 for a state
/// that is not a prompt.
#[derive(Debug, clap::Args)]
pub struct HopEnvArgs {
    /// The prompt state
    #[arg(value_parser = state_arg)]
    state: StateId,
}

/// Record a follow-up prompt, checkpointing the workspace first
///
/// Captures a checkpoint (C_) of the attempt's live workspace, then the prompt state (P_)
/// against the current accepted state. Exit 21 if the attempt's head moved meanwhile.
#[derive(Debug, clap::Args)]
pub struct HopPromptArgs {
    /// Any state of the attempt to continue
    #[arg(long, value_name = "STATE", value_parser = state_arg)]
    from: StateId,
    /// The exact follow-up prompt, as one argument (kept byte for byte)
    #[arg(allow_hyphen_values = true)]
    prompt: OsString,
}

/// Land a proposal on the accepted state
///
/// Blocks (exit 20, with the paths) when the proposal's changed paths collide with paths
/// accepted since its base: equal paths, a file against a directory, or a case-only
/// difference; a rename counts both paths. Composes disjoint changes with a three-way tree
/// merge, runs the validation command after `--` in a disposable worktree of the composed tree
/// (exit 22 and an F_ state on failure; the head does not move), then moves
/// refs/hpp/hop/accepted by compare-and-swap. A lost swap recomposes on the new head, up to 8
/// times; with --expect-head it exits 21 instead. The validation is recorded as an
/// hpp.evidence/v1 bundle of the composed tree (`git hpp evidence verify` checks it).
///
/// With --branch, the branch is fast-forwarded to the landed commit; when it is checked out
/// (main, usually), its worktree's index and files move with it as `git merge --ff-only`
/// would, and local changes there refuse the landing first (exit 23, naming the files). The
/// accepted chain starts at the commit hop was initialised on, so the branch gains only the
/// landed commits, each with trailers naming its states.
#[derive(Debug, clap::Args)]
pub struct HopLandArgs {
    /// The proposal (R_) to land
    #[arg(value_parser = state_arg)]
    proposal: StateId,
    /// Fast-forward this branch to the accepted commit, with its worktree when checked out (exit 20 unless a fast-forward, 23 if that worktree has local changes)
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
    /// Land only if the accepted head is still this state (exit 21 otherwise)
    #[arg(long, value_name = "STATE", value_parser = state_arg)]
    expect_head: Option<StateId>,
    /// Seconds the validation command may run
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    timeout: u64,
    #[command(flatten)]
    sign: super::signing::SignArgs,
    /// The final validation command (after --), run without a shell
    #[arg(last = true, value_name = "COMMAND")]
    validation: Vec<String>,
}

/// Step back one landing
///
/// Records a new accepted state whose tree is the one before the last landing not yet undone;
/// history only grows, and a second undo steps back one more landing. Exit 1 on the initial
/// state, 21 if the head moved meanwhile.
#[derive(Debug, clap::Args)]
pub struct HopUndoArgs {}

/// Quotes `value` for a POSIX shell.
pub fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

fn env_script(env: &Env) -> String {
    let mut text = String::new();
    for (name, value) in env.pairs() {
        text.push_str(&format!("export {name}={}\n", shell_quote(value)));
    }
    text.push_str(&format!("cd {}\n", shell_quote(&env.workspace)));
    text
}

/// `hop init`.
pub fn cmd_hop_init(ctx: &HopCtx, args: &HopInitArgs) -> Result<HopOutcome, HopError> {
    let elsewhere = args.path.as_deref().map(|p| ctx.store_at(p)).transpose()?;
    let hop = match &elsewhere {
        Some(store) => crate::hop::Hop::new(store)?,
        None => ctx.hop()?,
    };
    let done = hop.init()?;
    let verb = if done.created {
        "initialised"
    } else {
        "already initialised"
    };
    let root = hop.root().display().to_string();
    let human = format!(
        "{verb} {root}: accepted {} (tree {})",
        done.accepted.state.id, done.accepted.state.tree
    );
    let mut data = json!(done);
    data["root"] = json!(root);
    Ok(HopOutcome::ok(&data, human))
}

fn prompted(done: &Prompted) -> HopOutcome {
    let mut human = format!(
        "prompt {} (task {}, attempt {})\n",
        done.state.state.id, done.env.task, done.env.attempt
    );
    if let Some(checkpoint) = &done.checkpoint {
        human.push_str(&format!("checkpoint {checkpoint}\n"));
    }
    human.push_str(&format!(
        "workspace {}\nlaunch: eval \"$(hop env {})\"",
        done.env.workspace, done.state.state.id
    ));
    HopOutcome::ok(done, human)
}

/// `hop start`.
pub fn cmd_hop_start(ctx: &HopCtx, args: &HopStartArgs) -> Result<HopOutcome, HopError> {
    let done = ctx
        .hop()?
        .start(&args.agent, &prompt_bytes(&args.prompt), &args.sparse)?;
    Ok(prompted(&done))
}

/// `hop env`.
pub fn cmd_hop_env(ctx: &HopCtx, args: &HopEnvArgs) -> Result<HopOutcome, HopError> {
    let env = ctx.hop()?.env(&args.state)?;
    Ok(HopOutcome::ok(&env, env_script(&env)))
}

/// `hop prompt`.
pub fn cmd_hop_prompt(ctx: &HopCtx, args: &HopPromptArgs) -> Result<HopOutcome, HopError> {
    let done = ctx.hop()?.prompt(&args.from, &prompt_bytes(&args.prompt))?;
    Ok(prompted(&done))
}

/// `hop land`.
pub fn cmd_hop_land(ctx: &HopCtx, args: &HopLandArgs) -> Result<HopOutcome, HopError> {
    if args.timeout == 0 || args.timeout > 86_400 {
        return Err(HopError::new(
            HopExit::Usage,
            "--timeout must be between 1 and 86400 seconds",
        ));
    }
    let validation = (!args.validation.is_empty()).then_some(args.validation.as_slice());
    let landing = ctx.hop()?.signing_evidence(args.sign.signing(ctx)?).land(
        &args.proposal,
        args.branch.as_deref(),
        validation,
        args.expect_head.as_ref(),
        Duration::from_secs(args.timeout),
    )?;
    Ok(match &landing {
        Landing::Landed {
            accepted,
            previous,
            proposal,
            retries,
            branch,
            validation,
        } => {
            let mut human = format!(
                "landed {proposal} as {} (tree {}) on {previous}",
                accepted.state.id, accepted.state.tree
            );
            if let Some(evidence) = validation.as_ref().and_then(|v| v.evidence.as_ref()) {
                human.push_str(&format!(
                    "
validation passed · evidence {evidence}"
                ));
            }
            if *retries > 0 {
                human.push_str(&format!(
                    "\nrecomposed {retries} time(s) after the head moved"
                ));
            }
            if let Some(branch) = branch {
                human.push_str(&format!("\nfast-forwarded {branch} to {}", accepted.commit));
            }
            HopOutcome::ok(&landing, human)
        }
        Landing::ValidationFailed { failed, validation } => {
            let human = format!(
                "validation failed (exit {}): recorded {}; the accepted head did not move\n{}{}",
                validation
                    .exit_code
                    .map_or_else(|| "none".to_owned(), |c| c.to_string()),
                failed.state.id,
                validation.stdout,
                validation.stderr
            );
            HopOutcome::failed(
                &landing,
                human,
                HopExit::CheckFailed,
                format!("final validation failed: {} recorded", failed.state.id),
            )
        }
    })
}

/// `hop undo`.
pub fn cmd_hop_undo(ctx: &HopCtx, _args: &HopUndoArgs) -> Result<HopOutcome, HopError> {
    let done = ctx.hop()?.undo()?;
    let human = format!(
        "undo: {} restores the tree of {} (reverts {})",
        done.accepted.state.id, done.restores, done.reverts
    );
    let value = json!(done);
    Ok(HopOutcome::ok(&value, human))
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }

    #[test]
    fn control_an_empty_value_is_still_quoted() {
        assert_eq!(shell_quote(""), "''");
    }
}
