//! `git hpp benchmark`: being written.

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;

/// Run the packaged benchmark of controls with gate both
#[derive(Debug, clap::Args)]
pub struct BenchmarkArgs {}

/// Runs the benchmark.
pub fn cmd_benchmark(_ctx: &Ctx, _args: &BenchmarkArgs) -> Result<Outcome, CliError> {
    Err(CliError::usage("git hpp benchmark is not implemented yet"))
}
