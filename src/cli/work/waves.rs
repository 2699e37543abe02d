//! `git hpp work waves`: print the waves of a compiled WorkGraph.

use std::path::PathBuf;

use super::{Format, read_spec};
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;

/// Arguments of `git hpp work waves`.
#[derive(Debug, clap::Args)]
pub struct WorkWavesArgs {
    /// WorkGraph spec: {"work": [{"id", "tier", "acceptance", "depends_on"?, "gate"?}]}
    #[arg(value_name = "SPEC")]
    spec: PathBuf,
    /// Output format (mermaid draws the same flowchart as plan)
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
}

/// Compiles the spec and prints hpp.workgraph-waves/v1, or the Mermaid flowchart.
pub fn cmd_work_waves(ctx: &Ctx, args: &WorkWavesArgs) -> Result<Outcome, CliError> {
    let graph = read_spec(ctx, &args.spec)?;
    Ok(match args.format {
        Format::Json => Outcome::json(&graph.waves_document(), Exit::Ok),
        Format::Mermaid => Outcome::raw(graph.mermaid().into_bytes()),
    })
}
