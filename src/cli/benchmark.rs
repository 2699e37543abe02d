//! `git hpp benchmark` and `git hpp --self-test`: the packaged controls, gate both.
//!
//! The suite is `examples/reliable-coding/benchmark-suite.json`, compiled into the binary
//! ([`crate::evals::PACKAGED_SUITE`]). Opens no repository: the controls that need git make
//! throwaway ones.

use std::fmt::Write as _;

use super::JsonArg;
use super::ctx::Ctx;
use super::eval::gate_exit;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use hpp_core::evals::{self, Gate, Report, Suite};

/// Run the packaged benchmark of controls with gate both
///
/// Runs each control of the packaged suite k times against the real code, each in both
/// directions (a known-good case accepted, a known-bad case refused), and decides gate both:
/// pass@k >= 0.90 and pass^k == 1.0. Works outside any repository; touches no refs of it.
///
/// Exit codes: 0 the gate passed, 1 it failed, 2 k was refused.
#[derive(Debug, clap::Args)]
pub struct BenchmarkArgs {
    /// Runs per control
    #[arg(short = 'k', value_name = "N", default_value_t = evals::DEFAULT_K, allow_negative_numbers = true)]
    k: i64,
    #[command(flatten)]
    json: JsonArg,
}

/// `git hpp benchmark`.
pub fn cmd_benchmark(ctx: &Ctx, args: &BenchmarkArgs) -> Result<Outcome, CliError> {
    let report = run_packaged(args.k, ctx.cwd())?;
    Ok(Outcome::document(
        args.json.json,
        &report,
        human(&report),
        gate_exit(&report),
    ))
}

/// `git hpp --self-test`: the packaged benchmark with k=3 and gate both must pass. Prints
/// `hpp self-test OK` (exit 0), or refuses with the reason (exit 2).
pub fn self_test() -> Result<Outcome, CliError> {
    // Controls never use the working directory; a directory that must exist will do.
    let report = run_packaged(evals::DEFAULT_K, &std::env::temp_dir())?;
    if report.gate.passed {
        return Ok(Outcome::document(false, &(), "hpp self-test OK", Exit::Ok));
    }
    let why = match report.failing().as_slice() {
        [] => "no control ran".to_owned(),
        failing => failing.join(" | "),
    };
    Err(CliError::refused(format!(
        "self-test failed: the packaged benchmark did not pass gate both: {why}"
    )))
}

fn run_packaged(k: i64, cwd: &std::path::Path) -> Result<Report, CliError> {
    crate::evals::runner::run_suite(&Suite::packaged(), k, Gate::Both, cwd).map_err(CliError::from)
}

fn human(report: &Report) -> String {
    let metric = |m: Option<f64>| m.map_or_else(|| "null".to_owned(), |v| format!("{v:.2}"));
    let mut text = format!(
        "HPP benchmark: pass@k={} · pass^k={} · gate={}\n",
        metric(report.metrics.pass_at_k),
        metric(report.metrics.pass_caret_k),
        if report.gate.passed { "PASS" } else { "FAIL" }
    );
    for failing in report.failing() {
        let _ = writeln!(text, "failed: {failing}");
    }
    if !report.not_run.is_empty() {
        let names: Vec<String> = report
            .not_run
            .iter()
            .map(|n| format!("{} ({})", n.id, n.reason))
            .collect();
        let _ = writeln!(text, "not run: {}", names.join(", "));
    }
    text
}
