//! `git hpp lane guard`: the territory guard an agent host runs before every file edit.

use super::{ThresholdArgs, now, refuse};
use crate::cli::HostArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::input::{HookNoun, read_hook_input};
use crate::cli::output::Outcome;
use crate::lanes;
use hpp_core::host::{Answer, Blank};
use hpp_core::lane::guard::{Decision, OutsideEdits};
use hpp_store::Store;

/// Check a file edit against the lanes (a PreToolUse hook)
///
/// Reads the host's PreToolUse JSON on stdin (tool_name Edit, Write or NotebookEdit
/// with tool_input.file_path or notebook_path; Codex apply_patch with the patch text; cwd) and
/// denies an edit outside the territory of the lane whose worktree holds cwd, inside another
/// live exclusive lane's territory, or in another worktree of the repository. A session in no
/// lane that edits inside a live exclusive lane's territory is asked (git config
/// hpp.lane.outsideEdits: ask, the default; deny; allow); any other edit outside a lane, or
/// another tool, is allowed silently. Claude Code: a denial is printed as
/// hookSpecificOutput.permissionDecision "deny" with the reason, a question as "ask", exit 0.
/// Codex: a denial is exit 2 with the reason on stderr; it cannot ask, so a question is answered
/// with permissionDecision "deny", as the policy hook answers MANUAL.
/// A payload that is not a JSON object is refused (exit 2).
#[derive(Debug, clap::Args)]
pub struct LaneGuardArgs {
    /// The agent host whose payload is on stdin
    #[arg(long, value_name = "HOST")]
    host: HostArg,
    #[command(flatten)]
    thresholds: ThresholdArgs,
}

/// Decides the edit.
pub fn cmd_lane_guard(ctx: &Ctx, args: &LaneGuardArgs) -> Result<Outcome, CliError> {
    let input = read_hook_input(ctx, Blank::Refused, HookNoun::Payload)?;
    let allow = || Outcome::answer(Answer::Silent);
    if let Ok(Some(command)) = input.bash_command()
        && let Some(answer) = git_guard(ctx, args, &input, command)?
    {
        return Outcome::answer(answer);
    }
    // An edit, or a shell call's writes (a patch handed to `apply_patch`, `> path`, `tee`).
    let paths = input.edited_paths();
    if paths.is_empty() {
        return allow();
    }
    let cwd = input.dir(ctx.cwd());
    let Ok(store) = Store::discover(&cwd) else {
        return allow();
    };
    let thresholds = args.thresholds.resolve(&store)?;
    let outside = outside_edits(&store)?;
    let mut asked = None;
    for path in paths {
        match lanes::guard_edit(&store, &cwd, &path, now(), thresholds, outside).map_err(refuse)? {
            Decision::Allow => {}
            Decision::Deny(reason) => {
                return Outcome::answer(
                    args.host.0.deny(format!("lane territory guard: {reason}")),
                );
            }
            Decision::Ask(reason) => {
                asked.get_or_insert(reason);
            }
        }
    }
    match asked {
        // Codex cannot ask: it refuses, as for the policy's MANUAL.
        Some(reason) => Outcome::answer(args.host.0.ask(format!("lane territory guard: {reason}"))),
        None => allow(),
    }
}

/// `git config hpp.lane.outsideEdits`: what a session in no lane gets for an edit inside a live
/// exclusive lane's territory (`ask`, the default; `deny`; `allow`). Another value is refused.
fn outside_edits(store: &Store) -> Result<OutsideEdits, CliError> {
    store
        .config_string("hpp.lane.outsideEdits")
        .map_or(Ok(OutsideEdits::default()), |value| value.parse())
        .map_err(|e| CliError::refused(e).hint("git config hpp.lane.outsideEdits ask"))
}

/// A shell command: the lane git guard. `git config hpp.lane.gitGuard` says what a sweeping git
/// call gets while another lane is alive: `warn` (the default: Claude Code asks the person;
/// Codex, which cannot ask, refuses, as for the policy's MANUAL) or `block` (refused). `None`
/// when the command makes no such call.
fn git_guard(
    ctx: &Ctx,
    args: &LaneGuardArgs,
    input: &hpp_core::host::HookInput,
    command: &str,
) -> Result<Option<Answer>, CliError> {
    let cwd = input.dir(ctx.cwd());
    let Ok(store) = Store::discover(&cwd) else {
        return Ok(None);
    };
    let thresholds = args.thresholds.resolve(&store)?;
    let Some((call, others)) =
        lanes::guard_git(&store, &cwd, command, now(), thresholds).map_err(refuse)?
    else {
        return Ok(None);
    };
    let reason = format!(
        "lane git guard: `{call}` acts on the whole worktree or shared history while lane(s) {} are alive; name the files (`git add PATH`, `git commit PATH`), or settle it with the other lanes first",
        others.join(", ")
    );
    let block = store
        .config_string("hpp.lane.gitGuard")
        .is_some_and(|mode| mode.eq_ignore_ascii_case("block"));
    Ok(Some(if block {
        args.host.0.deny(reason)
    } else {
        args.host.0.ask(reason)
    }))
}
