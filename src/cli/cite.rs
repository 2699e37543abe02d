//! `git hpp cite check`: check a text's citation markers against its context.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::Value;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use hpp_core::citations::{self, Verdict};

/// The `cite` verbs.
#[derive(Debug, Subcommand)]
pub enum CiteCommand {
    /// Check that every claim cites context that exists
    ///
    /// Reads exactly the two files given. A marker naming an id missing from the context
    /// (UNKNOWN_ID), a range or list in one marker (RANGE) or an empty marker (EMPTY_MARKER)
    /// blocks; too many markers in a sentence (TOO_MANY), a number, amount or date with no marker
    /// (UNCITED_CLAIM) or no marker at all (NO_MARKERS) warns. Never reads a cited source. Prints
    /// hpp.citation-check/v1. Exits 0 ok, 1 warn, 2 block (with the report); refuses (exit 2,
    /// nothing printed) empty or secret-like text or context, a context file over 2 MiB and an
    /// unusable marker regex. Needs no repository.
    Check(CiteCheckArgs),
}

/// The arguments of `git hpp cite check` (the help text sits on its verb).
#[derive(Debug, clap::Args)]
pub struct CiteCheckArgs {
    /// The text to check (UTF-8)
    #[arg(long, value_name = "FILE")]
    text: PathBuf,
    /// JSON list of {"id", "text"} context items, or of bare ids
    #[arg(long, value_name = "FILE")]
    context: PathBuf,
    /// Markers allowed in one sentence before it warns
    #[arg(long, value_name = "N", default_value_t = citations::DEFAULT_MAX_PER_SENTENCE, allow_negative_numbers = true)]
    max_per_sentence: i64,
    /// Marker regex with exactly one capture group, the id [default: \[ID:([^\]\n]*)\]]
    #[arg(long, value_name = "REGEX", allow_hyphen_values = true)]
    marker: Option<String>,
}

/// Runs one `cite` verb.
pub fn dispatch(ctx: &Ctx, command: CiteCommand) -> Result<Outcome, CliError> {
    match command {
        CiteCommand::Check(args) => cmd_cite_check(ctx, &args),
    }
}

/// Checks the text and prints the report; the exit code follows the verdict.
pub fn cmd_cite_check(ctx: &Ctx, args: &CiteCheckArgs) -> Result<Outcome, CliError> {
    let text_path = existing(ctx, "text", &args.text)?;
    let context_path = existing(ctx, "context", &args.context)?;
    let text = String::from_utf8(read(&text_path, &args.text)?)
        .map_err(|e| CliError::refused(format!("text file is not UTF-8: {}", e.utf8_error())))?;
    // Parsed whole, so bounded as every JSON document read whole is (a list of tiny items costs
    // tens of times its size once parsed).
    let context_bytes = crate::cli::caps::read_capped(
        &context_path,
        crate::cli::caps::JSON_FILE_CAP,
        "context file",
    )?;
    let context: Value = String::from_utf8(context_bytes)
        .map_err(|e| e.utf8_error().to_string())
        .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()))
        .map_err(|e| CliError::refused(format!("invalid context JSON: {e}")))?;
    let marker = args.marker.as_deref().unwrap_or(citations::DEFAULT_MARKER);
    let report = citations::check(&text, &context, args.max_per_sentence, marker)?;
    let exit = match report.verdict {
        Verdict::Ok => Exit::Ok,
        Verdict::Warn => Exit::Warn,
        Verdict::Block => Exit::Block,
    };
    Ok(Outcome::json(&report, exit))
}

fn existing(ctx: &Ctx, label: &str, path: &Path) -> Result<PathBuf, CliError> {
    let full = ctx.cwd().join(path);
    if full.is_file() {
        Ok(full)
    } else {
        Err(CliError::refused(format!(
            "{label} file not found: {}",
            path.display()
        )))
    }
}

fn read(full: &Path, shown: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(full)
        .map_err(|e| CliError::refused(format!("cannot read {}: {e}", shown.display())))
}
