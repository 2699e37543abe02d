//! `git hpp atlas --html OUT.html`: one self-contained static page of the whole repository's
//! graph views, maps, loops and records.

use std::path::PathBuf;

use serde_json::json;

use super::JsonArg;
use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::map::unix_now;
use super::output::Outcome;
use crate::atlas;

/// Write one static HTML page of every graph view, map, loop and record
///
/// Opens with whether HEAD and each protected branch (hpp.protect or the trust policy's; default
/// main and master) verify, as `git hpp verify` answers, and under which signature rule. Then
/// draws every graph view of the manifest (folded, last), the lane map of the live lanes under refs/hpp/lanes/,
/// the monitor map of the manifest's monitors, the loops under refs/hpp/loops/ with their states,
/// and the newest evidence bundles and attestations, each labelled with the command that
/// reproduces it and the sha256 of its source. The page is self-contained: inline CSS and SVG,
/// no script and no outside reference; with --now the same repository gives the same bytes.
/// Writes only OUT.html (the path you name), and refuses to replace an existing file unless
/// --force. Reads refs/hpp/, writes no ref. Exits 0; refuses (exit 2) an existing file, or
/// outside a repository.
#[derive(Debug, clap::Args)]
pub struct AtlasArgs {
    /// Where to write the page
    #[arg(long, value_name = "OUT.html")]
    html: PathBuf,
    /// Unix seconds to project the lane and monitor maps against [default: the current time]
    #[arg(long, value_name = "INT", allow_negative_numbers = true)]
    now: Option<i64>,
    /// Replace OUT.html if it exists
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Runs `git hpp atlas`.
pub fn dispatch(ctx: &Ctx, args: AtlasArgs) -> Result<Outcome, CliError> {
    let target = ctx.cwd().join(&args.html);
    let shown = args.html.display();
    if target.exists() && !args.force {
        return Err(
            CliError::refused(format!("{shown} exists; not replacing it"))
                .hint("pass --force to replace it, or name another file"),
        );
    }
    let store = ctx.store()?;
    let manifest = ctx.manifest()?;
    let now = args.now.unwrap_or_else(unix_now);
    let trust = ctx.trust(None, false, false)?;
    // The branches the push gates protect: the policy's settings, else git config hpp.protect.
    let protect = trust
        .policy
        .as_ref()
        .map(|v| v.policy.settings.protect.clone())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| store.config_strings("hpp.protect"));
    let page = atlas::collect(
        store,
        &manifest,
        now,
        crate::attest::VerifyOptions::of(&trust),
        &protect,
    )?;
    let html = atlas::render(&page);
    std::fs::write(&target, html.as_bytes())
        .map_err(|e| CliError::refused(format!("cannot write {shown}: {e}")))?;
    let sections: Vec<_> = page
        .sections
        .iter()
        .map(|s| json!({"id": s.id, "command": s.command, "source_sha256": s.source_sha256}))
        .collect();
    let summary = json!({"written": args.html, "now": now, "bytes": html.len(),
        "sha256": hpp_core::record::sha256_hex(html.as_bytes()), "sections": sections});
    let human = format!(
        "wrote {shown}: {} sections, {} bytes, projected at --now {now}",
        page.sections.len(),
        html.len()
    );
    Ok(Outcome::document(
        args.format.json,
        &summary,
        human,
        Exit::Ok,
    ))
}
