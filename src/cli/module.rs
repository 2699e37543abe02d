//! `git hpp module checksums`: keep each module's CHECKSUMS.txt in step with its files.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::json;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use crate::modules::{self, CHECKSUMS_FILE, files};
use hpp_core::manifest;

/// The verbs of `git hpp module`.
#[derive(Debug, clap::Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb's help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum ModuleCommand {
    Checksums(ModuleChecksumsArgs),
}

/// Plan (then, with --apply, write) each module's CHECKSUMS.txt
///
/// Lists every file of each module directory except CHECKSUMS.txt itself, sorted, as
/// `<sha256>  <relative path>` lines, and compares the result with the CHECKSUMS.txt there.
/// Without --apply nothing is written and the differences are printed; with --apply the files
/// are written. Exits 0; with --check exits 2 when any CHECKSUMS.txt is out of date.
#[derive(Debug, clap::Args)]
pub struct ModuleChecksumsArgs {
    /// Module directories [default: every module directory the manifest declares]
    #[arg(value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Write the CHECKSUMS.txt files
    #[arg(long, conflicts_with = "check")]
    apply: bool,
    /// Write nothing; exit 2 when any CHECKSUMS.txt is out of date
    #[arg(long)]
    check: bool,
    /// Print one pretty, sorted-key JSON document instead of text
    #[arg(long)]
    json: bool,
}

/// One directory's inventory, compared.
#[derive(Debug, Serialize)]
struct DirPlan {
    dir: String,
    /// `up-to-date`, `would-write`, `written` or `out-of-date`.
    status: &'static str,
    files: usize,
    added: Vec<String>,
    removed: Vec<String>,
}

/// Runs one verb of `git hpp module`.
pub fn dispatch(ctx: &Ctx, cmd: ModuleCommand) -> Result<Outcome, CliError> {
    match cmd {
        ModuleCommand::Checksums(args) => cmd_module_checksums(ctx, &args),
    }
}

fn default_dirs(ctx: &Ctx) -> Result<Vec<(PathBuf, String)>, CliError> {
    let manifest = ctx.manifest()?;
    let validated = manifest::validate(manifest.value())
        .map_err(|e| CliError::refused(format!("{}: {e}", manifest.origin())))?;
    let root = ctx
        .manifest_file()?
        .and_then(|f| f.parent().map(|p| ctx.cwd().join(p)))
        .ok_or_else(|| {
            CliError::refused("the built-in manifest has no module directories: name them")
                .hint("git hpp module checksums modules/<id>")
        })?;
    Ok(validated
        .modules
        .iter()
        .map(|m| (root.join(&m.path), m.path.clone()))
        .filter(|(d, _)| d.is_dir())
        .collect())
}

/// Compares (and with --apply writes) the inventories.
pub fn cmd_module_checksums(ctx: &Ctx, args: &ModuleChecksumsArgs) -> Result<Outcome, CliError> {
    let dirs = if args.dirs.is_empty() {
        default_dirs(ctx)?
    } else {
        args.dirs
            .iter()
            .map(|d| (ctx.cwd().join(d), d.display().to_string()))
            .collect()
    };
    let mut plans = Vec::new();
    let mut writes = Vec::new();
    for (dir, shown) in dirs {
        let dir = dir.as_path();
        if !dir.is_dir() {
            return Err(CliError::refused(format!("not a directory: {shown}")));
        }
        let present = files::scan(dir)?;
        if present.is_empty() {
            return Err(CliError::refused(format!(
                "{shown} has no file to list: an empty inventory cannot verify anything"
            )));
        }
        let text = modules::render(&present);
        let current = std::fs::read_to_string(dir.join(CHECKSUMS_FILE)).unwrap_or_default();
        let old: Vec<&str> = current.lines().collect();
        let new: Vec<&str> = text.lines().collect();
        let status = if current == text {
            "up-to-date"
        } else if args.apply {
            writes.push((dir.join(CHECKSUMS_FILE), text.clone()));
            "written"
        } else if args.check {
            "out-of-date"
        } else {
            "would-write"
        };
        plans.push(DirPlan {
            dir: shown,
            status,
            files: present.len(),
            added: new
                .iter()
                .filter(|l| !old.contains(l))
                .map(|l| (*l).to_owned())
                .collect(),
            removed: old
                .iter()
                .filter(|l| !new.contains(l))
                .map(|l| (*l).to_owned())
                .collect(),
        });
    }
    for (path, text) in &writes {
        std::fs::write(path, text)
            .map_err(|e| CliError::refused(format!("cannot write {}: {e}", path.display())))?;
    }
    let stale = plans.iter().any(|p| p.status == "out-of-date");
    let exit = if stale { Exit::Block } else { Exit::Ok };
    let mut human = String::new();
    for plan in &plans {
        human.push_str(&format!(
            "{}: {} ({} file(s))\n",
            plan.dir, plan.status, plan.files
        ));
        for line in &plan.removed {
            human.push_str(&format!("- {line}\n"));
        }
        for line in &plan.added {
            human.push_str(&format!("+ {line}\n"));
        }
    }
    if !args.apply && !args.check && plans.iter().any(|p| p.status == "would-write") {
        human.push_str("(plan only: run again with --apply to write)\n");
    }
    let value = json!({"applied": args.apply, "modules": plans});
    Ok(Outcome::document(args.json, &value, human, exit))
}
