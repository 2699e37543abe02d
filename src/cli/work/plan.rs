//! `git hpp work plan`: print the compiled WorkGraph.

use std::path::PathBuf;

use super::{Format, read_spec};
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;

/// Arguments of `git hpp work plan`.
#[derive(Debug, clap::Args)]
pub struct WorkPlanArgs {
    /// WorkGraph spec: {"work": [{"id", "tier", "acceptance", "depends_on"?, "gate"?}]}
    #[arg(value_name = "SPEC")]
    spec: PathBuf,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
}

/// Compiles the spec and prints hpp.workgraph/v1, or its Mermaid flowchart.
pub fn cmd_work_plan(ctx: &Ctx, args: &WorkPlanArgs) -> Result<Outcome, CliError> {
    let graph = read_spec(ctx, &args.spec)?;
    Ok(match args.format {
        Format::Json => Outcome::json(&graph, Exit::Ok),
        Format::Mermaid => Outcome::raw(graph.mermaid().into_bytes()),
    })
}
