//! `hop skill print` and `hop skill install`: the protocol instructions an agent host loads.
//!
//! The text is generated here, from one source: the state kinds come from
//! `hpp_core::hop::Kind`, the environment from `hpp_core::hop::states::LAUNCH_VARS`, the
//! command list from this binary's own clap tree and the exit codes from [`HopExit::ALL`], so the
//! skill cannot name a command, flag, variable or code that `hop` does not have. The rules, the
//! workflow and the recovery steps are the prose of seeds/HOP-PROTOCOL.md, written once below.

use std::path::PathBuf;

use clap::CommandFactory;

use super::out::{HopError, HopExit, HopOutcome};
use super::{HopCli, HopCtx};
use crate::hop::skill::{self, Action};
use hpp_core::hop::Kind;
use hpp_core::hop::states::LAUNCH_VARS;

/// Print or install the Hop skill for agent hosts
///
/// The skill is the protocol as an agent host loads it: states, environment variables,
/// commands, exit codes and recovery, as one Markdown text with the YAML front matter (name,
/// description) that Claude Code and Codex skills use.
#[derive(Debug, clap::Args)]
pub struct HopSkillArgs {
    #[command(subcommand)]
    command: HopSkillCommand,
}

/// The skill verbs.
#[derive(Debug, clap::Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb's help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum HopSkillCommand {
    Print(HopSkillPrintArgs),
    Install(HopSkillInstallArgs),
}

/// Print the Hop skill (SKILL.md) on stdout
///
/// Needs no repository. With --json: {"skill": "<the text>"}. Exit 0.
#[derive(Debug, clap::Args)]
pub struct HopSkillPrintArgs {}

/// Write the Hop skill where Claude Code and Codex look for it
///
/// Writes the text `hop skill print` prints to .claude/skills/hop/SKILL.md (Claude Code) and
/// .agents/skills/hop/SKILL.md (Codex) under the repository root, or under DIR with --path
/// (then no repository is needed). A file that already holds the same text is left as it is;
/// a different one is refused (exit 1, nothing written) unless --force; a symlink or directory
/// in its place is always refused. Exit 0, or 1 on a refusal or error.
#[derive(Debug, clap::Args)]
pub struct HopSkillInstallArgs {
    /// Install under DIR instead of the repository root
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
    /// Replace skill files that differ
    #[arg(long)]
    force: bool,
}

/// The skill's name and the description hosts match tasks against.
const NAME: &str = "hop";
const DESCRIPTION: &str = "Work inside a Hop attempt: act only on a recorded prompt state, edit only the assigned workspace, check and propose through hop, and land or undo only when the user asks. Use whenever HOP_STATE_ID, HOP_TASK_ID or HOP_ATTEMPT_ID is set, or when asked to isolate, checkpoint, check, propose, land, inspect or undo coding-agent work with hop.";

fn kind_meaning(kind: Kind) -> &'static str {
    match kind {
        Kind::Accepted => "a canonical project revision (the accepted chain)",
        Kind::Prompt => "an exact instruction, recorded before anything acts on it",
        Kind::Checkpoint => "immutable workspace progress",
        Kind::Proposal => "a frozen candidate result",
        Kind::Failed => "a durable failed execution or validation",
        Kind::Cancelled => "a durable cancelled state",
    }
}

fn var_meaning(var: &str) -> &'static str {
    match var {
        "HOP_ROOT" => "the canonical project root (never edit it)",
        "HOP_STATE_ID" => "the prompt state authorising the current instruction",
        "HOP_TASK_ID" => "the task grouping related prompts and attempts",
        "HOP_ATTEMPT_ID" => "the current attempt (this agent's approach)",
        "HOP_WORKSPACE" => "the only directory you may modify",
        _ => "",
    }
}

/// Returns `hop <verb> ...` usage and the one-line help of every command, depth first.
fn command_rows() -> Vec<(String, String)> {
    fn walk(cmd: &clap::Command, path: &str, rows: &mut Vec<(String, String)>) {
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let name = format!("{path} {}", sub.get_name());
            if sub.has_subcommands() {
                walk(sub, &name, rows);
                continue;
            }
            // clap's usage with its `[OPTIONS]` spelled out: the optional flags, then the rest.
            let usage = sub.clone().render_usage().to_string();
            let usage = usage
                .trim()
                .trim_start_matches("Usage:")
                .trim()
                .replace("[OPTIONS] ", "")
                .replace(" [OPTIONS]", "");
            let rest = usage.strip_prefix(name.as_str()).unwrap_or(&usage);
            let mut flags = String::new();
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                if arg.is_global_set()
                    || arg.is_required_set()
                    || ["help", "version"].contains(&long)
                {
                    continue;
                }
                let choices: Vec<String> = arg
                    .get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_owned())
                    .collect();
                let value = if !choices.is_empty() {
                    format!(" <{}>", choices.join("|"))
                } else if arg.get_action().takes_values() {
                    let names = arg.get_value_names().unwrap_or_default();
                    format!(" <{}>", names.first().map_or("VALUE", |n| n.as_str()))
                } else {
                    String::new()
                };
                flags.push_str(&format!(" [--{long}{value}]"));
            }
            let usage = format!("{name}{flags}{rest}");
            let mut about = sub.get_about().map(ToString::to_string).unwrap_or_default();
            let aliases: Vec<&str> = sub.get_visible_aliases().collect();
            if !aliases.is_empty() {
                about.push_str(&format!(" (also `{path} {}`)", aliases.join("`, `hop ")));
            }
            rows.push((usage, about));
        }
    }
    let mut root = HopCli::command();
    root.build();
    let mut rows = Vec::new();
    walk(&root, "hop", &mut rows);
    rows
}

/// Returns the Hop skill: one Markdown text with Claude Code and Codex skill front matter.
pub fn skill_text() -> String {
    let mut t = String::new();
    t.push_str(&format!(
        "---\nname: {NAME}\ndescription: '{}'\n---\n\n",
        DESCRIPTION.replace('\'', "''")
    ));
    t.push_str(
        "# Hop\n\n\
Hop is the change-control boundary between your work and the accepted state of the project. \
Every state is a git commit pinned under `refs/hpp/hop/`, whose tree is the workspace snapshot \
and whose trailers record its kind, task, attempt and parents. (`hop skill print` prints this \
text; `hop skill install` writes it for Claude Code and Codex.)\n\n\
## Rules\n\n\
- Act only on a prompt state recorded before the instruction reached you (`HOP_STATE_ID`).\n\
- Modify only `HOP_WORKSPACE`; never edit `HOP_ROOT`.\n\
- Do not commit, stage, branch, check out, rebase, reset, stash or manage worktrees: hop owns \
snapshots and worktrees, and captures every non-ignored file of the workspace.\n\
- Do not land or undo unless the user explicitly asks. Stop after the proposal.\n\
- Never resolve an overlap by merging by hand: keep the proposal and ask for a reconciliation \
prompt.\n\
- Never put credentials in prompts, commands or workspace files: hop refuses secret-shaped \
ones, and everything it records is pushed with `git hpp push`.\n\n",
    );
    t.push_str("## States\n\n| prefix | kind | meaning |\n|---|---|---|\n");
    for kind in Kind::ALL {
        t.push_str(&format!(
            "| `{}_` | {} | {} |\n",
            kind.prefix(),
            kind.name(),
            kind_meaning(kind)
        ));
    }
    t.push_str(
        "\nPrompt, checkpoint and proposal states may share a tree and stay distinct occurrences. \
A state's parents carry roles: `run_parent` (the previous state of the attempt), \
`canonical_anchor` (the accepted state a prompt or proposal was issued against), \
`canonical_parent` and `proposal_parent` (of an accepted state), `integration_parent` (of a \
failed landing), `reverts` and `restores` (of an undo).\n\n",
    );
    t.push_str("## Environment\n\n| variable | meaning |\n|---|---|\n");
    for var in LAUNCH_VARS {
        t.push_str(&format!("| `{var}` | {} |\n", var_meaning(var)));
    }
    t.push_str(
        "\nA missing variable is an invalid launch: stop before editing and ask for a \
Hop-controlled launch (`eval \"$(hop env P_...)\"`). Do not infer an attempt from a nearby \
worktree.\n\n## Before editing\n\n```sh\n",
    );
    for var in LAUNCH_VARS {
        t.push_str(&format!("test -n \"${var}\"\n"));
    }
    t.push_str(
        "hop state \"$HOP_STATE_ID\" --json\nhop status --json\ncd \"$HOP_WORKSPACE\"\n```\n\n\
## Workflow\n\n\
1. Read the prompt state (`hop state \"$HOP_STATE_ID\"`) and keep the change to that instruction.\n\
2. Edit files in `HOP_WORKSPACE` only.\n\
3. Test through hop, so the result is bound to an immutable checkpoint of exactly what you \
tested: `hop check \"$HOP_STATE_ID\" -- <command> [args...]` (no shell: pass `sh -c '...'` \
when you need one). Fix failures in the workspace and check again.\n\
4. Freeze the result: `hop propose --summary \"<what changed and why>\" \"$HOP_STATE_ID\"`. \
Later edits cannot change the proposal.\n\
5. Report the proposal id, the checks run and what is left. Do not edit further: a change to \
a frozen proposal needs a new prompt (`hop prompt --from <state> \"<exact follow-up>\"`, \
which checkpoints the workspace first) and a new proposal.\n\n\
`hop checkpoint \"$HOP_STATE_ID\"` records the workspace as a checkpoint at any time; \
`hop diff <state>` shows what a state changed, `hop diff --base <state>` what the attempt \
changed since its base, `hop history` the accepted chain and `hop graph` every state.\n\n\
Landing (only when asked): `hop land <R_...> -- <final test command>` checks that no path \
the proposal changed was accepted since its base, composes the trees, runs the command on the \
composed tree and moves the accepted head by compare-and-swap.\n\n",
    );
    t.push_str(
        "## Commands\n\nEvery command takes `--json`: `{\"ok\":true,\"data\":...}` or \
`{\"ok\":false,\"error\":...,\"exit_code\":N}`.\n\n| command | what it does |\n|---|---|\n",
    );
    for (usage, about) in command_rows() {
        t.push_str(&format!(
            "| `{}` | {} |\n",
            usage.replace('|', "\\|"),
            about.replace('|', "\\|")
        ));
    }
    t.push_str("\n## Exit codes\n\n| code | meaning |\n|---:|---|\n");
    for exit in HopExit::ALL {
        t.push_str(&format!("| {} | {} |\n", exit.code(), exit.meaning()));
    }
    t.push_str(
        "\n## Recovery\n\n\
- **Missing Hop environment (exit 2):** stop before editing and ask for a Hop-controlled \
launch.\n\
- **Check failed (exit 22):** the run is recorded; fix the workspace, check again, then \
propose anew.\n\
- **Frozen proposal needs changes:** ask for (or record) a follow-up prompt; never change the \
stored proposal.\n\
- **Overlap on landing (exit 20):** both lineages are kept; reconcile through a new prompt \
against the current accepted state.\n\
- **Head moved (exit 21):** another landing won the compare-and-swap; read `hop status` and \
land again.\n\
- **Final validation failed (exit 22):** an `F_` state records the composed tree and the head \
did not move; ask for a corrective follow-up.\n\
- **Refs look wrong:** run `hop doctor`; `hop doctor --repair` re-creates only refs that can \
be re-derived. Do not repair from inside a validation command.\n\
- **Undo (only when asked):** `hop undo` records a new accepted state with the tree before the \
last landing; history only grows.\n",
    );
    t
}

impl From<skill::Error> for HopError {
    fn from(e: skill::Error) -> Self {
        let hint = match &e {
            skill::Error::Differs { .. } => Some("compare it with `hop skill print`"),
            _ => None,
        };
        let error = HopError::new(HopExit::Error, e);
        match hint {
            Some(hint) => error.hint(hint),
            None => error,
        }
    }
}

/// `hop skill`.
pub fn cmd_hop_skill(ctx: &HopCtx, args: &HopSkillArgs) -> Result<HopOutcome, HopError> {
    match &args.command {
        HopSkillCommand::Print(_) => {
            let text = skill_text();
            Ok(HopOutcome::ok(&serde_json::json!({ "skill": text }), text))
        }
        HopSkillCommand::Install(install) => {
            let root = match &install.path {
                Some(dir) => ctx.absolute(dir),
                None => ctx
                    .hop()
                    .map_err(|e| e.hint("or pass --path DIR to install outside a repository"))?
                    .root()
                    .to_path_buf(),
            };
            let done = skill::install(&root, &skill_text(), install.force)?;
            let mut human = String::new();
            for file in &done.files {
                let verb = match file.action {
                    Action::Created => "wrote",
                    Action::Unchanged => "unchanged",
                    Action::Replaced => "replaced",
                };
                human.push_str(&format!("{verb} {} ({})\n", file.path.display(), file.host));
            }
            Ok(HopOutcome::ok(&done, human))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{command_rows, skill_text, var_meaning};
    use hpp_core::hop::states::LAUNCH_VARS;

    #[test]
    fn the_skill_lists_every_command_variable_and_exit_code() {
        let text = skill_text();
        assert!(text.starts_with("---\nname: hop\ndescription: '"));
        let rows = command_rows();
        for verb in [
            "init",
            "start",
            "checkpoint",
            "diff",
            "graph",
            "skill install",
        ] {
            assert!(
                rows.iter()
                    .any(|(usage, _)| usage.starts_with(&format!("hop {verb}"))),
                "{verb} in {rows:?}"
            );
        }
        assert!(text.contains("(also `hop submit`)"), "aliases are listed");
        for var in LAUNCH_VARS {
            assert!(!var_meaning(var).is_empty(), "{var} has a meaning");
            assert!(text.contains(&format!("| `{var}` |")), "{var}");
        }
        for code in ["| 0 |", "| 20 |", "| 21 |", "| 22 |"] {
            assert!(text.contains(code), "{code}");
        }
    }

    #[test]
    fn control_every_hop_command_the_prose_names_exists() {
        let text = skill_text();
        let rows = command_rows();
        let verbs: Vec<String> = rows
            .iter()
            .filter_map(|(usage, _)| usage.split_whitespace().nth(1).map(str::to_owned))
            .collect();
        for named in text.split("`hop ").skip(1) {
            let verb = named
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                .next()
                .unwrap_or_default();
            assert!(
                verbs.iter().any(|v| v == verb) || ["submit", "accept", "inspect"].contains(&verb),
                "the skill names `hop {verb}`, which is not a command"
            );
        }
        assert!(!verbs.iter().any(|v| v == "fly"), "the check can fail");
    }
}
