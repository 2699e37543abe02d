//! `git hpp context compile`: fit whole context blocks under a character budget.

use std::path::PathBuf;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{JsonRoot, read_json};
use super::output::Outcome;
use hpp_core::context;
use hpp_core::int::Int;

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
    budget: Int,
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
    let compiled = context::compile(&inputs, args.budget.clone())?;
    Ok(Outcome::json(&compiled, Exit::Ok))
}
