//! `git hpp snapshot`: the workspace as a git tree id.

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;

/// Print the workspace snapshot: the tree id of tracked plus untracked-not-ignored files
///
/// The same tree `git add -A && git write-tree` would write with a copy of the index, computed
/// without touching the index or HEAD (blobs are written to the object database), except that
/// untracked files named like secrets (.env, .env.*, *.pem, *.key, *.p12, *.pfx, SSH private
/// keys, .netrc, .pgpass, .npmrc, .pypirc, .git-credentials) are left out: snapshot trees are
/// kept in records that are pushed. Tracked files always stay. This is what attestations are
/// keyed by. --explain prints the rule and the files it left out. Reads the worktree; writes
/// objects only.
#[derive(Debug, clap::Args)]
pub struct SnapshotArgs {
    /// Also print which untracked files were left out, and why
    #[arg(long)]
    explain: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Computes and prints the snapshot.
pub fn cmd_snapshot(ctx: &Ctx, args: &SnapshotArgs) -> Result<Outcome, CliError> {
    let report = ctx.store()?.snapshot_report()?;
    let mut human = report.tree.to_string();
    let mut value = json!({"tree": report.tree});
    if args.explain {
        value["left_out"] = json!(report.left_out);
        value["rule"] = json!(hpp_store::LEFT_OUT);
        human.push_str(&format!(
            "\nleft out when untracked (names like secrets; snapshots are kept in pushed records): {}",
            hpp_store::LEFT_OUT.join(", ")
        ));
        if report.left_out.is_empty() {
            human.push_str("\nleft out here: nothing");
        }
        for path in &report.left_out {
            human.push_str(&format!("\nleft out: {path}"));
        }
    }
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}
