//! `git hpp restore`: bring back, from a checkpoint, what a later command deleted or changed.

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::continuity_checkpoint::{self as checkpoint, Listed, RestorePlan};

/// Bring back what a command deleted or changed, from a checkpoint
///
/// The policy gate takes a checkpoint of the workspace (tracked files and untracked ones that
/// are not ignored, bytes and modes) before every shell call it cannot prove harmless, and
/// continuity-kit one after each turn. Without --apply this lists what the checkpoint would
/// bring back: files it holds that are gone from the workspace (deleted) or differ (changed);
/// files added since are named and left alone. --apply writes the deleted and changed files back
/// as the checkpoint holds them, leaving the index and HEAD alone. Without CHECKPOINT: the newest
/// checkpoint (of --session) from which something would come back. --list lists the
/// checkpoints, oldest first. Exit codes: 0 listed or restored; 2 no such checkpoint, or none.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// A checkpoint: its ref, or SESSION/KIND/N (refs/hpp/checkpoints/SESSION/KIND/N)
    #[arg(value_name = "CHECKPOINT")]
    checkpoint: Option<String>,
    /// Only the checkpoints of this session
    #[arg(long, value_name = "SESSION")]
    session: Option<String>,
    /// List the checkpoints instead
    #[arg(long, conflicts_with_all = ["checkpoint", "apply"])]
    list: bool,
    /// Write the files back (without it, only list them)
    #[arg(long)]
    apply: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Lists or restores.
pub fn cmd_restore(ctx: &Ctx, args: &RestoreArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let all = checkpoint::list(store, args.session.as_deref()).map_err(refused)?;
    if args.list {
        let human = all.iter().map(describe).collect::<Vec<_>>().join("\n");
        let human = if human.is_empty() {
            "no checkpoints".to_owned()
        } else {
            human
        };
        return Ok(Outcome::document(
            args.format.json,
            &json!({"checkpoints": all}),
            human,
            Exit::Ok,
        ));
    }
    if store.workdir().is_none() {
        return Err(CliError::refused(
            "a bare repository has no workspace to restore into",
        ));
    }
    let now = store.snapshot()?;
    let plan = match &args.checkpoint {
        Some(given) => {
            let name = if given.starts_with("refs/") {
                given.clone()
            } else {
                format!("{}{given}", hpp_store::refs::CHECKPOINTS_PREFIX)
            };
            checkpoint::plan_restore(store, &name, &now)
                .map_err(refused)?
                .ok_or_else(|| CliError::refused(format!("{given}: no such checkpoint")))?
        }
        None => {
            let newest = all.last().ok_or_else(|| {
                CliError::refused("no checkpoint to restore from")
                    .hint("the policy gate takes one before each shell call it cannot prove harmless (operator-kit)")
            })?;
            let mut chosen = None;
            for listed in all.iter().rev() {
                let plan = checkpoint::plan_restore(store, &listed.name, &now).map_err(refused)?;
                if let Some(plan) = plan.filter(|p| !p.deleted.is_empty() || !p.changed.is_empty())
                {
                    chosen = Some(plan);
                    break;
                }
            }
            match chosen {
                Some(plan) => plan,
                None => checkpoint::plan_restore(store, &newest.name, &now)
                    .map_err(refused)?
                    .ok_or_else(|| CliError::refused("no checkpoint to restore from"))?,
            }
        }
    };
    let listed = all.iter().find(|c| c.name == plan.name);
    let count = plan.deleted.len() + plan.changed.len();
    if args.apply {
        checkpoint::restore(store, &plan).map_err(refused)?;
    }
    let mut human = vec![match listed {
        Some(c) => format!("checkpoint {}", describe(c)),
        None => format!("checkpoint {}", plan.name),
    }];
    human.extend(lines(&plan));
    human.push(match (count, args.apply) {
        (0, _) => "nothing to restore: the workspace holds everything the checkpoint kept".into(),
        (n, true) => format!("restored {n} file(s)"),
        (n, false) => format!("{n} file(s) to restore; run again with --apply to write them"),
    });
    let value = json!({
        "ref": plan.name,
        "tree": plan.tree,
        "deleted": plan.deleted,
        "changed": plan.changed,
        "added": plan.added,
        "applied": args.apply,
    });
    Ok(Outcome::document(
        args.format.json,
        &value,
        human.join("\n"),
        Exit::Ok,
    ))
}

fn describe(c: &Listed) -> String {
    let before = c
        .command
        .as_deref()
        .map(|command| {
            let line = command.lines().next().unwrap_or_default();
            format!(", before `{line}`")
        })
        .unwrap_or_default();
    format!("{} ({}{before})", c.name, c.created_at)
}

fn lines(plan: &RestorePlan) -> Vec<String> {
    let mut out = Vec::new();
    for path in &plan.deleted {
        out.push(format!("restore  {path}  (deleted)"));
    }
    for path in &plan.changed {
        out.push(format!("restore  {path}  (changed)"));
    }
    for path in &plan.added {
        out.push(format!("keep     {path}  (added since)"));
    }
    out
}

fn refused(e: checkpoint::Error) -> CliError {
    CliError::refused(e.to_string())
}
