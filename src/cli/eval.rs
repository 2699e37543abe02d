//! `git hpp eval run`: run an eval suite k times and report pass@k and pass^k.
//!
//! Reads the suite file; the suite logic is [`crate::evals`]. Opens no repository and touches no
//! refs; hpp-control cases use throwaway repositories of their own.

use std::path::PathBuf;

use clap::Subcommand;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{JsonRoot, read_json};
use super::output::Outcome;
use hpp_core::evals::{self, Gate, Report, Suite};

/// The `eval` verbs.
#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Run an eval suite k times: pass@k and pass^k
    ///
    /// Each case of the suite ({"version", "name"?, "cases": [{"id", "runner", ...}]}) runs k times:
    /// replay reads its recorded outcomes (the first k), command runs its argv (no shell; a run
    /// passes when it exits 0 within "timeout" seconds, default 20), hpp-control runs the built-in
    /// control of that id. pass@k is true when some run passed, pass^k when all did; the metrics are
    /// shares of the cases that ran (null when none ran); a case that could not run is listed under
    /// not_run and never counted. Prints the report as JSON. Works outside any repository.
    ///
    /// Exit codes: 0 the gate passed, 1 it failed, 2 the suite or k was refused.
    Run(EvalRunArgs),
}

/// The gate to decide.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum GateArg {
    /// pass@k >= 0.90
    Capability,
    /// pass^k == 1.0
    Regression,
    /// both
    Both,
}

impl From<GateArg> for Gate {
    fn from(gate: GateArg) -> Self {
        match gate {
            GateArg::Capability => Gate::Capability,
            GateArg::Regression => Gate::Regression,
            GateArg::Both => Gate::Both,
        }
    }
}

/// The flags of `git hpp eval run` (its help text is on the command variant).
#[derive(Debug, clap::Args)]
pub struct EvalRunArgs {
    /// Suite to run
    #[arg(value_name = "SUITE")]
    suite: PathBuf,
    /// Runs per case
    #[arg(short = 'k', value_name = "N", default_value_t = evals::DEFAULT_K, allow_negative_numbers = true)]
    k: i64,
    /// Gate to decide
    #[arg(long, value_enum, default_value = "capability")]
    gate: GateArg,
}

/// Runs one `eval` verb.
pub fn dispatch(ctx: &Ctx, command: EvalCommand) -> Result<Outcome, CliError> {
    match command {
        EvalCommand::Run(args) => cmd_eval_run(ctx, &args),
    }
}

/// `git hpp eval run`.
pub fn cmd_eval_run(ctx: &Ctx, args: &EvalRunArgs) -> Result<Outcome, CliError> {
    if args.k < 1 {
        return Err(CliError::refused(evals::Error::K));
    }
    // Read as JSON first for the reference's refusals; hashed by the file's own bytes.
    read_json(ctx, &args.suite, JsonRoot::Object)?;
    let (bytes, stem) = crate::cli::input::read_named_file(ctx, &args.suite, "suite")?;
    let suite = Suite::from_file(&bytes, &stem)?;
    let report = crate::evals::runner::run_suite(&suite, args.k, args.gate.into(), ctx.cwd())?;
    Ok(Outcome::json(&report, gate_exit(&report)))
}

/// 0 when the gate passed, 1 when it failed.
pub fn gate_exit(report: &Report) -> Exit {
    if report.gate.passed {
        Exit::Ok
    } else {
        Exit::Warn
    }
}
