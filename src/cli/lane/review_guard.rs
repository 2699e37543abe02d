//! `git hpp lane review-guard`: run a checker and void its review if it changed anything.

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::lanes::review::RefScope;
use crate::process::{self, Request};
use hpp_core::review_guard::{self, SCHEMA, Verdict};

/// Run a checker's command and void its review if it changed git's view of the worktree
///
/// Fingerprints the worktree before and after the command (status with untracked files, the
/// diff against HEAD, untracked files' contents, HEAD and where it points, refs outside
/// refs/hpp, the worktree list, config, the hooks directory, info/exclude). The command runs as
/// an argv, never through a shell, in its own process group, stopped at --timeout. Exit 0 when
/// nothing changed and the command exited 0, 1 when nothing changed and it failed or timed out,
/// 2 when anything changed (the review is void; each changed part is named) or the command
/// could not start, 3 usage.
#[derive(Debug, clap::Args)]
pub struct LaneReviewGuardArgs {
    /// Seconds the command may run
    #[arg(long, value_name = "S", default_value_t = 600.0)]
    timeout: f64,
    #[command(flatten)]
    format: JsonArg,
    /// The checker's command, after --
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Runs the guarded review.
pub fn cmd_lane_review_guard(ctx: &Ctx, args: &LaneReviewGuardArgs) -> Result<Outcome, CliError> {
    let timeout = process::valid_timeout(args.timeout)?;
    let store = ctx.store()?;
    let before = crate::lanes::review::fingerprint(store, RefScope::OutsideHpp)?;
    let finished = process::run_bounded(&Request {
        argv: &args.command,
        cwd: ctx.cwd(),
        timeout,
        stdin: None,
        env: &[],
    })
    .map_err(|e| match e {
        process::Error::CouldNotStart { .. } => CliError::refused(format!(
            "{e}: {}",
            std::error::Error::source(&e).map_or_else(String::new, ToString::to_string)
        )),
        other => CliError::internal("running the checker's command", &other),
    })?;
    let after = crate::lanes::review::fingerprint(store, RefScope::OutsideHpp)?;
    let changes = review_guard::compare(&before, &after);
    let verdict = review_guard::verdict(&changes, finished.exit_code, finished.timed_out);
    let stdout = String::from_utf8_lossy(&finished.stdout).into_owned();
    let value = json!({
        "schema": SCHEMA,
        "command": args.command,
        "exit_code": finished.exit_code,
        "timed_out": finished.timed_out,
        "verdict": verdict,
        "changed": changes,
        "stdout": stdout,
        "stderr": String::from_utf8_lossy(&finished.stderr),
    });
    let ended = match (finished.exit_code, finished.timed_out) {
        (_, true) => "timed out".to_owned(),
        (Some(code), false) => format!("exited {code}"),
        (None, false) => format!("was killed by signal {}", finished.signal.unwrap_or(0)),
    };
    let (human, exit) = match verdict {
        Verdict::Void => (
            format!(
                "review-guard: void · the command {ended} but changed git's view of the worktree, so its review does not count:\n{}",
                review_guard::describe(&changes)
            ),
            Exit::Block,
        ),
        Verdict::Passed => (
            format!("{stdout}review-guard: unchanged · the command {ended} · passed"),
            Exit::Ok,
        ),
        Verdict::Failed | Verdict::TimedOut => (
            format!("{stdout}review-guard: unchanged · the command {ended} · failed"),
            Exit::Warn,
        ),
    };
    Ok(Outcome::document(args.format.json, &value, human, exit))
}
