//! `git hpp work`: compile WorkGraph specs into waves and measure spec coverage.
//!
//! Every verb reads only the files named on its command line: it opens no repository and
//! touches no ref, so it works outside any git repository (and answers in milliseconds).

pub mod coverage;
pub mod plan;
pub mod waves;

use std::path::Path;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::CliError;
use super::input::{JsonRoot, read_json};
use super::output::Outcome;
use hpp_core::workgraph::{self, WorkGraph};

/// The `work` verbs.
#[derive(Debug, Subcommand)]
pub enum WorkCommand {
    /// Compile a WorkGraph spec into units, edges, waves and tier counts
    ///
    /// Prints hpp.workgraph/v1 (or the Mermaid flowchart with --format mermaid). Reads no
    /// repository. Exits 0 when the spec compiles, 2 when it is refused (an unknown dependency,
    /// a cycle with its path, empty acceptance criteria, an invalid tier).
    Plan(plan::WorkPlanArgs),
    /// Order a WorkGraph spec into waves
    ///
    /// Prints hpp.workgraph-waves/v1: each wave's index and its units, alphabetically, and the
    /// tier counts (or the Mermaid flowchart with --format mermaid). Reads no repository.
    /// Exits 0 when the spec compiles, 2 when it is refused.
    Waves(waves::WorkWavesArgs),
    /// Join spec criteria to the tests that cite them and the reports that ran them
    ///
    /// Tests cite a criterion with [spec: capability/scenario]: in a Python docstring, or in the
    /// comments directly above a Rust #[test] function. Without --junit prints
    /// hpp.spec-coverage/v1; with --junit prints hpp.spec-execution/v1. Reads no repository.
    /// Exits 0 when complete, 1 when not, 2 when an input is refused.
    Coverage(coverage::WorkCoverageArgs),
}

/// How `plan` and `waves` print the compiled graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Pretty, sorted-key JSON
    #[default]
    Json,
    /// A Mermaid flowchart with one subgraph per wave
    Mermaid,
}

/// Runs one `work` verb.
pub fn dispatch(ctx: &Ctx, command: WorkCommand) -> Result<Outcome, CliError> {
    match command {
        WorkCommand::Plan(args) => plan::cmd_work_plan(ctx, &args),
        WorkCommand::Waves(args) => waves::cmd_work_waves(ctx, &args),
        WorkCommand::Coverage(args) => coverage::cmd_work_coverage(ctx, &args),
    }
}

/// Reads and compiles a spec, refusing with the reference's sentences.
fn read_spec(ctx: &Ctx, path: &Path) -> Result<WorkGraph, CliError> {
    let spec = read_json(ctx, path, JsonRoot::Object)?;
    workgraph::compile(&spec).map_err(CliError::from)
}
