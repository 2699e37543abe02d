//! `git hpp push` and `git hpp fetch`: move records without ever forcing.

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use hpp_store::SyncReport;

/// Push every record (refs/hpp/*, refs/notes/hpp) to a remote, never forcing
///
/// Runs `git push <remote> 'refs/hpp/*:refs/hpp/*' 'refs/notes/hpp*:refs/notes/hpp*'`. A
/// record the remote has in another form is rejected by git and reported as divergence with
/// what to do; nothing is overwritten. Exits 0 when everything moved, 2 on divergence.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// The remote
    #[arg(default_value = "origin")]
    remote: String,
    #[command(flatten)]
    format: JsonArg,
}

/// Fetch every record (refs/hpp/*, refs/notes/hpp) from a remote, never forcing
///
/// Runs `git fetch <remote> 'refs/hpp/*:refs/hpp/*'`; a local record that differs from the
/// remote's is kept and reported as divergence. The remote's notes mirror is staged and merged
/// into refs/notes/hpp (union of both sides' notes), so a later push is a fast-forward. Exits 0
/// when everything moved, 2 on divergence.
#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    /// The remote
    #[arg(default_value = "origin")]
    remote: String,
    #[command(flatten)]
    format: JsonArg,
}

/// Pushes the records.
pub fn cmd_push(ctx: &Ctx, args: &PushArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    crate::outbound::check_unpushed(store, &args.remote).map_err(|e| match e {
        crate::outbound::Error::Store(inner) => CliError::from(inner),
        leak => CliError::refused(leak),
    })?;
    let report = store.push_records(&args.remote)?;
    Ok(render(
        &report,
        "pushed to",
        args.format.json,
        &format!("git hpp fetch {}", args.remote),
    ))
}

/// Fetches the records.
pub fn cmd_fetch(ctx: &Ctx, args: &FetchArgs) -> Result<Outcome, CliError> {
    let report = ctx.store()?.fetch_records(&args.remote)?;
    Ok(render(
        &report,
        "fetched from",
        args.format.json,
        &format!("git hpp push {}", args.remote),
    ))
}

fn render(report: &SyncReport, verb: &str, json: bool, other_side: &str) -> Outcome {
    let mut human = format!(
        "{verb} {}: {} updated, {} up to date",
        report.remote,
        report.updated.len(),
        report.up_to_date
    );
    for name in &report.updated {
        human.push_str(&format!("\n  {name}"));
    }
    for r in &report.rejected {
        human.push_str(&format!(
            "\ndiverged: {} ({}). Both sides recorded different history; nothing was overwritten. \
             Compare with `git fetch {remote} {name}:refs/hpp-remote/{remote}/{short}`, keep one, and record the other's work as new events or records; then `{other_side}`.",
            r.name,
            r.reason,
            remote = report.remote,
            name = r.name,
            short = r.name.trim_start_matches("refs/"),
        ));
    }
    let exit = if report.rejected.is_empty() {
        Exit::Ok
    } else {
        Exit::Block
    };
    Outcome::document(json, report, human, exit)
}
