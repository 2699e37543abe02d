//! `git hpp lane guard`: the territory guard an agent host runs before every file edit.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::heartbeat::{Host, payload_cwd, read_payload};
use super::{ThresholdArgs, now, refuse};
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::lanes;
use hpp_core::lane::guard::Decision;
use hpp_store::Store;

/// The tools that edit files by path.
const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// Check a file edit against the lanes (a PreToolUse hook)
///
/// Reads the host's PreToolUse JSON on stdin (tool_name Edit, Write, MultiEdit or NotebookEdit
/// with tool_input.file_path or notebook_path; Codex apply_patch with the patch text; cwd) and
/// denies an edit outside the territory of the lane whose worktree holds cwd, inside another
/// live exclusive lane's territory, or in another worktree of the repository. Outside a lane,
/// or for other tools, it allows silently. Claude Code: a denial is printed as
/// hookSpecificOutput.permissionDecision "deny" with the reason, exit 0. Codex: a denial is exit
/// 2 with the reason on stderr. A payload that is not a JSON object is refused (exit 2).
#[derive(Debug, clap::Args)]
pub struct LaneGuardArgs {
    /// The agent host whose payload is on stdin
    #[arg(long, value_name = "HOST")]
    host: Host,
    #[command(flatten)]
    thresholds: ThresholdArgs,
}

/// The paths a tool call would write, relative to the payload's cwd or absolute.
fn edited_paths(payload: &Value) -> Vec<PathBuf> {
    let tool = payload
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
    if EDIT_TOOLS.contains(&tool) {
        return ["file_path", "notebook_path", "path"]
            .iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .map(PathBuf::from)
            .into_iter()
            .collect();
    }
    if tool.eq_ignore_ascii_case("apply_patch") {
        let patch = ["command", "input", "patch"]
            .iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .or_else(|| input.as_str())
            .unwrap_or_default();
        return patch
            .lines()
            .filter_map(|line| {
                [
                    "*** Add File: ",
                    "*** Update File: ",
                    "*** Delete File: ",
                    "*** Move to: ",
                ]
                .iter()
                .find_map(|p| line.strip_prefix(p))
            })
            .map(|p| PathBuf::from(p.trim()))
            .collect();
    }
    Vec::new()
}

/// Decides the edit.
pub fn cmd_lane_guard(ctx: &Ctx, args: &LaneGuardArgs) -> Result<Outcome, CliError> {
    let payload = read_payload(ctx)?;
    let allow = || Ok(Outcome::raw(Vec::new()));
    let paths = edited_paths(&payload);
    if paths.is_empty() {
        return allow();
    }
    let cwd = payload_cwd(ctx, &payload);
    let Ok(store) = Store::discover(&cwd) else {
        return allow();
    };
    let thresholds = args.thresholds.resolve(&store)?;
    for path in paths {
        let decision = lanes::guard_edit(&store, &cwd, &path, now(), thresholds).map_err(refuse)?;
        if let Decision::Deny(reason) = decision {
            let reason = format!("lane territory guard: {reason}");
            return match args.host {
                Host::ClaudeCode => Ok(Outcome::json(
                    &json!({"hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": reason,
                    }}),
                    Exit::Ok,
                )),
                Host::Codex => Err(CliError::refused(reason)),
            };
        }
    }
    allow()
}
