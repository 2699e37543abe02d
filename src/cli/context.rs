//! `git hpp context compile`: fit whole context blocks under a character budget.
//!
//! Also home, for now, of [`read_json`], the JSON-file reader the text rulers (context, cite,
//! findings, route) share, with the reference's refusal sentences.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::Value;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use crate::context;

/// The `context` verbs.
#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// Compile context blocks under a budget, with provenance
    ///
    /// Reads a JSON list of {"source", "priority", "content"} blocks and fits whole blocks, highest
    /// priority first, under the budget in characters; the 2-character "\n\n" between two blocks is
    /// charged too, and a block that does not fit is left out whole while the scan goes on. Prints
    /// hpp.context/v1 with each block's source, size and sha256. Exits 0; refuses (exit 2) a
    /// malformed list, a duplicate source, secret-like content or a negative budget. Needs no
    /// repository.
    Compile(ContextCompileArgs),
}

/// The arguments of `git hpp context compile` (the help text sits on its verb).
#[derive(Debug, clap::Args)]
pub struct ContextCompileArgs {
    /// JSON list of input blocks
    #[arg(value_name = "INPUTS.json")]
    inputs: PathBuf,
    /// Budget in characters, separators included
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    budget: i64,
}

/// Runs one `context` verb.
pub fn dispatch(ctx: &Ctx, command: ContextCommand) -> Result<Outcome, CliError> {
    match command {
        ContextCommand::Compile(args) => cmd_context_compile(ctx, &args),
    }
}

/// Compiles the inputs and prints `hpp.context/v1`.
pub fn cmd_context_compile(ctx: &Ctx, args: &ContextCompileArgs) -> Result<Outcome, CliError> {
    let inputs = read_json(ctx, &args.inputs, JsonRoot::Array)?;
    let compiled = context::compile(&inputs, args.budget).map_err(CliError::refused)?;
    Ok(Outcome::json(&compiled, Exit::Ok))
}

/// The JSON root a command expects in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonRoot {
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
}

/// Reads a JSON file (relative to the working directory), refusing with the reference's
/// sentences: `JSON file not found: P`, `invalid JSON in P: msg`, `JSON root in P must be an
/// object|array`.
pub fn read_json(ctx: &Ctx, path: &Path, root: JsonRoot) -> Result<Value, CliError> {
    let shown = path.display();
    let full = ctx.cwd().join(path);
    if !full.is_file() {
        return Err(CliError::refused(format!("JSON file not found: {shown}")));
    }
    let bytes =
        std::fs::read(&full).map_err(|e| CliError::refused(format!("cannot read {shown}: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::refused(format!("invalid JSON in {shown}: not UTF-8 text")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| CliError::refused(format!("invalid JSON in {shown}: {e}")))?;
    match (root, &value) {
        (JsonRoot::Object, Value::Object(_)) | (JsonRoot::Array, Value::Array(_)) => Ok(value),
        (JsonRoot::Object, _) => Err(CliError::refused(format!(
            "JSON root in {shown} must be an object"
        ))),
        (JsonRoot::Array, _) => Err(CliError::refused(format!(
            "JSON root in {shown} must be an array"
        ))),
    }
}
