//! `git hpp push` and `git hpp fetch`: move records without ever forcing; a fetch reconciles
//! (see [`crate::reconcile`]).

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use hpp_store::SyncReport;

/// Push every record (refs/hpp/*, refs/notes/hpp) to a remote, never forcing
///
/// Runs `git push <remote> 'refs/hpp/*:refs/hpp/*' 'refs/notes/hpp*:refs/notes/hpp*'`. A
/// record the remote has in another form is rejected by git and reported as divergence with
/// what to do; nothing is overwritten. First reads every attestation, turn checkpoint and
/// evidence record the remote lacks (one `git ls-remote`): one whose kept files hold a
/// secret-shaped line the branch it was made on does not hold refuses the push, naming the
/// record, the file and the shape.
/// Exits 0 when everything moved, 2 on divergence or a refusal.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// The remote
    #[arg(default_value = "origin")]
    remote: String,
    #[command(flatten)]
    format: JsonArg,
}

/// Fetch every record (refs/hpp/*, refs/notes/hpp) from a remote and take it in, never forcing
///
/// Stages the remote's records under refs/hpp-remote/<remote>/ (the same forced refspec
/// `remote setup` gives plain `git fetch`), then takes each into refs/hpp/ by compare-and-swap:
/// a new record is created, one the remote moved on is fast-forwarded, and one both machines
/// wrote is merged when its entries commute (the board, lane logs and heartbeats, handoffs,
/// the gotcha memory: each entry kept exactly once), re-landed for Hop's accepted chain, and
/// otherwise reported with the command that settles it (a loop: `event reconcile`). The
/// remote's notes history is joined so a push stays a fast-forward, then refs/notes/hpp is
/// rebuilt from the records held here: a line no verified record backs is dropped. Each record
/// is read before its ref moves: a write-once record never moves once here, a set log's every
/// entry must read, a loop's new events must verify with their gates' records, and a join the
/// remote wrote must be a well-formed reconciliation (signed by a person where signatures are
/// required) whose dropped side is then preserved here. Exits 0 when everything was taken in,
/// 1 when something was left out (named, with the reason; it stays staged and the local record
/// is kept).
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
    // A record that would publish a secret is held back; every other one still goes.
    let held = crate::outbound::unpushed_leaks(store, &args.remote)?;
    let names: Vec<String> = held.iter().map(|leak| leak.record.clone()).collect();
    let report = store.push_records_except(&args.remote, &names)?;
    render_push(store, &report, &held, args.format.json)
}

/// Fetches the records.
pub fn cmd_fetch(ctx: &Ctx, args: &FetchArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let mut report = crate::reconcile::fetch(store, manifest.loop_spec(), &args.remote)?;
    let to_push = (!report.ahead.is_empty()).then(|| {
        format!(
            "{} to push (`git hpp push {}`)",
            report.ahead.len(),
            report.remote
        )
    });
    // A remote with no records (a new one, or one never pushed to) gives nothing to take in,
    // and the local notes are left as they are.
    if report.remote_records == 0 && report.notes_staged.is_none() {
        let mut human = format!(
            "fetched from {}: it holds no records (nothing under refs/hpp/ or refs/notes/hpp); nothing was taken in",
            report.remote
        );
        if let Some(to_push) = &to_push {
            human.push_str(&format!("; {to_push}"));
        }
        return Ok(Outcome::document(
            args.format.json,
            &report,
            human,
            Exit::Ok,
        ));
    }
    let noting = match report.notes_staged.clone() {
        Some(staged) => settle_notes(ctx, store, &staged, &mut report)?,
        None => Vec::new(),
    };
    report.notes_rebuilt = rebuild_notes(ctx, store, &noting)?;
    let mut human = format!(
        "fetched from {}: {} updated, {} merged, {} up to date",
        report.remote,
        report.updated.len(),
        report.merged.len(),
        report.up_to_date
    );
    if let Some(to_push) = &to_push {
        human.push_str(&format!(", {to_push}"));
    }
    for name in &report.updated {
        human.push_str(&format!("\n  updated {name}"));
    }
    for p in &report.preserved {
        human.push_str(&format!(
            "\n  reconciled {} on the remote, keeping its side ({}); this machine's side is preserved at {}",
            p.name,
            &p.kept[..12],
            p.preserved_ref
        ));
    }
    for name in &report.merged {
        human.push_str(&format!(
            "\n  merged  {name} (both machines wrote it; `git hpp push {}` shares the merge)",
            report.remote
        ));
    }
    if report.notes_joined {
        human.push_str(&format!(
            "\n  joined  the history of {} (its lines are rebuilt from the records held here)",
            hpp_store::NOTES_REF
        ));
    }
    if report.notes_rebuilt > 0 {
        human.push_str(&format!(
            "\n  rebuilt {} on {} commit(s) from the records held here",
            hpp_store::NOTES_REF,
            report.notes_rebuilt
        ));
    }
    if let Some(pin) = &report.pinned {
        human.push_str(&format!(
            "\n  trusting the trust policy's root {pin} from now on (pinned as {}; check it with the repository's owner)",
            crate::trust::PIN_KEY
        ));
    }
    if let Some(roots) = &report.roots_changed {
        human.push_str(&format!("\n  roots: {roots}"));
    }
    for d in &report.diverged {
        human.push_str(&format!(
            "\ndiverged: {} ({}); the local record was kept and the remote's stays at {}. Next: {}.",
            d.name, d.reason, d.staged, d.next
        ));
    }
    // Something left out is "not yet", not a refusal: everything else was taken in.
    let exit = if report.diverged.is_empty() {
        Exit::Ok
    } else {
        Exit::Warn
    };
    Ok(Outcome::document(args.format.json, &report, human, exit))
}

/// Settles the local notes with the remote's staged at `staged`: taken as they are only when
/// every line is backed by a record held here, else their history joined without their lines.
/// Returns the commits the remote's notes name (owed their lines by the rebuild).
fn settle_notes(
    ctx: &Ctx,
    store: &hpp_store::Store,
    staged: &str,
    report: &mut crate::reconcile::Report,
) -> Result<Vec<hpp_store::CommitId>, CliError> {
    let trust = ctx.trust(None, false, false)?;
    let (backed, noting) =
        crate::doctor::notes_backed_in(store, staged, crate::attest::VerifyOptions::of(&trust))?;
    report.notes_joined = store.settle_notes(staged, backed)?;
    Ok(noting)
}

/// Rebuilds the notes mirror from the records this repository holds, as
/// `doctor --repair --apply` does: a line no verified record backs (a remote's forged line)
/// is dropped, a verified record's missing line added, on HEAD, the branch tips and the
/// commits in `noting`. Returns how many notes changed.
fn rebuild_notes(
    ctx: &Ctx,
    store: &hpp_store::Store,
    noting: &[hpp_store::CommitId],
) -> Result<usize, CliError> {
    let trust = ctx.trust(None, false, false)?;
    let check =
        crate::doctor::check_notes_noting(store, crate::attest::VerifyOptions::of(&trust), noting)?;
    if check.notes_missing.is_empty() && check.notes_unbacked.is_empty() {
        return Ok(0);
    }
    Ok(crate::doctor::repair_notes(store, &check)?)
}

/// Renders a push. A rejected loop whose remote form the last fetch already staged as diverged
/// gets the command that settles it (`event reconcile`), not another fetch.
fn render_push(
    store: &hpp_store::Store,
    report: &SyncReport,
    held: &[crate::outbound::Leak],
    json: bool,
) -> Result<Outcome, CliError> {
    let mut human = format!(
        "pushed to {}: {} updated, {} up to date",
        report.remote,
        report.updated.len(),
        report.up_to_date
    );
    for name in &report.updated {
        human.push_str(&format!("\n  {name}"));
    }
    for r in &report.rejected {
        if let Some(id) = diverged_loop(store, &report.remote, &r.name)? {
            human.push_str(&format!(
                "\ndiverged: {} ({}). Both machines appended to this loop, and the last fetch \
                 staged the remote's; nothing was overwritten. Next: `git hpp event reconcile \
                 --loop {id} --keep ours` (or `--keep theirs`, --remote {}), then push again.",
                r.name, r.reason, report.remote,
            ));
            continue;
        }
        human.push_str(&format!(
            "\ndiverged: {} ({}). The remote holds records this machine has not taken in; \
             nothing was overwritten. Next: `git hpp fetch {}` (it merges what merges and says \
             what to do with the rest), then push again.",
            r.name, r.reason, report.remote,
        ));
    }
    for leak in held {
        human.push_str(&format!("\nheld back: {leak}"));
    }
    let exit = match (report.rejected.is_empty(), held.is_empty()) {
        (false, _) => Exit::Block,
        (true, false) => Exit::Warn,
        (true, true) => Exit::Ok,
    };
    let mut value =
        serde_json::to_value(report).map_err(|e| CliError::internal("the push report", &e))?;
    value["held_back"] = serde_json::json!(
        held.iter()
            .map(|l| serde_json::json!({"ref": l.record, "path": l.path, "shape": l.shape, "fix": l.fix, "reason": l.to_string()}))
            .collect::<Vec<_>>()
    );
    Ok(Outcome::document(json, &value, human, exit))
}

/// The loop `name` names, when the remote's form of it is staged and neither side holds the
/// other (what `fetch` reported as diverged).
fn diverged_loop(
    store: &hpp_store::Store,
    remote: &str,
    name: &str,
) -> Result<Option<String>, CliError> {
    let Some(id) = name.strip_prefix(hpp_store::refs::LOOPS_PREFIX) else {
        return Ok(None);
    };
    let staged = format!(
        "{}{}/{}",
        hpp_store::STAGING_PREFIX,
        store.staging_name(remote),
        &name[hpp_store::refs::PREFIX.len()..]
    );
    let (Some(ours), Some(theirs)) = (store.tip(name)?, store.tip(&staged)?) else {
        return Ok(None);
    };
    Ok(matches!(
        store.relation(&ours, &theirs)?,
        hpp_store::Relation::Diverged(_)
    )
    .then(|| id.to_owned()))
}
