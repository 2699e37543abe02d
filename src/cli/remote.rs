//! `git hpp remote setup`: make plain `git fetch`/`git push` carry the records.

use clap::Subcommand;
use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use hpp_store::{NOTES_PUSH, RECORDS, notes_fetch, records_fetch};

/// The `remote` verbs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum RemoteCommand {
    Setup(RemoteSetupArgs),
}

/// Print (then, with --apply, add) the refspecs that make git fetch and push carry records
///
/// Plans `remote.<remote>.fetch` entries that mirror the remote's records into the staging
/// namespace refs/hpp-remote/<remote>/* and its notes into refs/notes/remote-hpp/<remote>/hpp
/// (forced: they are mirrors, so a plain `git fetch` or `git pull` never fails on a record),
/// and `remote.<remote>.push` entries for refs/hpp/* and the notes (without `+`: a push never
/// overwrites). `git hpp fetch` takes staged records into refs/hpp/ (merging logs both machines
/// wrote); nothing does that behind the user's back. An older entry fetching straight into
/// refs/hpp/ is removed. Because any push refspec replaces git's default of pushing the
/// current branch, `HEAD` is added too when the remote has no push refspec yet. Without
/// --apply nothing is written. Exits 0.
#[derive(Debug, clap::Args)]
pub struct RemoteSetupArgs {
    /// The remote
    #[arg(default_value = "origin")]
    remote: String,
    /// Add the entries to git config
    #[arg(long)]
    apply: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Runs one `remote` verb.
pub fn dispatch(ctx: &Ctx, command: RemoteCommand) -> Result<Outcome, CliError> {
    match command {
        RemoteCommand::Setup(args) => cmd_remote_setup(ctx, &args),
    }
}

/// Plans or applies the refspecs.
pub fn cmd_remote_setup(ctx: &Ctx, args: &RemoteSetupArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    if store
        .config_string(&format!("remote.{}.url", args.remote))
        .is_none()
    {
        return Err(
            CliError::refused(format!("no remote named {}", args.remote))
                .hint("add it with `git remote add NAME URL`"),
        );
    }
    let fetch = store.remote_config(&args.remote, "fetch");
    let push = store.remote_config(&args.remote, "push");
    let mut plan: Vec<(String, String)> = Vec::new();
    // Earlier versions fetched records straight into refs/hpp/, which made every plain fetch
    // fail on one diverged record: that entry goes.
    let removals: Vec<(String, String)> = fetch
        .iter()
        .filter(|spec| spec.as_str() == RECORDS)
        .map(|spec| (format!("remote.{}.fetch", args.remote), spec.clone()))
        .collect();
    for spec in [records_fetch(&args.remote), notes_fetch(&args.remote)] {
        if !fetch.contains(&spec) {
            plan.push((format!("remote.{}.fetch", args.remote), spec));
        }
    }
    if push.is_empty() {
        plan.push((format!("remote.{}.push", args.remote), "HEAD".to_owned()));
    }
    for spec in [RECORDS, NOTES_PUSH] {
        if !push.iter().any(|p| p == spec) {
            plan.push((format!("remote.{}.push", args.remote), spec.to_owned()));
        }
    }
    if args.apply {
        for (key, value) in &removals {
            store.config_unset(key, value)?;
        }
        for (key, value) in &plan {
            store.config_add(key, value)?;
        }
    }
    let nothing = plan.is_empty() && removals.is_empty();
    let mut human = String::new();
    if nothing {
        human.push_str(&format!(
            "remote {} already carries the records\n",
            args.remote
        ));
    }
    for (key, value) in &removals {
        human.push_str(&format!(
            "{}git config --fixed-value --unset {key} '{value}'\n",
            if args.apply { "done: " } else { "" }
        ));
    }
    for (key, value) in &plan {
        human.push_str(&format!(
            "{}git config --add {key} '{value}'\n",
            if args.apply { "done: " } else { "" }
        ));
    }
    if !args.apply && !nothing {
        human.push_str("(plan only: run again with --apply to add these)\n");
    }
    let steps: Vec<_> = removals
        .iter()
        .map(|(k, v)| json!({"key": k, "value": v, "action": "unset"}))
        .chain(
            plan.iter()
                .map(|(k, v)| json!({"key": k, "value": v, "action": "add"})),
        )
        .collect();
    Ok(Outcome::document(
        args.format.json,
        &json!({"remote": args.remote, "applied": args.apply, "steps": steps}),
        human,
        Exit::Ok,
    ))
}
