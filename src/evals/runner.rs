//! Running a suite's cases: the workflow behind `git hpp eval run`, `benchmark` and
//! `--self-test`.
//!
//! Replay cases read their record ([`super::replay`]); command cases run their argv k times
//! through [`crate::process::run_bounded`] (argv only, never a shell; a run passes when it exits
//! 0 before its timeout, and a program that cannot start is a failed run); hpp-control cases run
//! the built-in [`super::controls`] entry k times in this process. No refs of the working
//! directory's repository are touched: only the controls write, and only to throwaway ones.

use std::path::Path;

use super::controls;
use crate::process;
use hpp_core::evals::{Case, CaseRun, Error, Gate, Report, Runner, Suite, evaluate, replay};

/// Runs every case of `suite` k times, commands in `cwd`, and decides `gate`.
pub fn run_suite(suite: &Suite, k: i64, gate: Gate, cwd: &Path) -> Result<Report, Error> {
    evaluate(suite, k, gate, &mut |case, k| run_case(case, k, cwd))
}

/// Runs one case k times.
pub fn run_case(case: &Case, k: usize, cwd: &Path) -> CaseRun {
    match &case.runner {
        Runner::Replay(recorded) => replay(recorded, k),
        Runner::Command { argv, timeout_s } => {
            CaseRun::from_results((0..k).map(|_| run_command(argv, *timeout_s, cwd)))
        }
        Runner::Control => match controls::find(&case.id) {
            Some(control) => controls::run(control, k),
            // Suite::parse refuses unknown controls; a hand-built case still gets a verdict.
            None => CaseRun::NotRun {
                reason: format!("unknown hpp-control: {}", case.id),
            },
        },
    }
}

/// Runs a command once: `Ok` when it exits 0 within its timeout, else why not.
fn run_command(argv: &[String], timeout_s: f64, cwd: &Path) -> Result<(), String> {
    let timeout = process::valid_timeout(timeout_s).map_err(|e| e.to_string())?;
    let finished = process::run_bounded(&process::Request {
        argv,
        cwd,
        timeout,
        stdin: None,
        env: &[],
    })
    .map_err(|e| e.to_string())?;
    match (finished.timed_out, finished.exit_code, finished.signal) {
        (true, _, _) => Err(format!("timed out after {timeout_s}s")),
        (false, Some(0), _) => Ok(()),
        (false, Some(code), _) => Err(format!("exit {code}")),
        (false, None, Some(signal)) => Err(format!("killed by signal {signal}")),
        (false, None, None) => Err("ended without an exit code".into()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn command_cases_pass_on_exit_zero_only() {
        let suite = Suite::parse(
            &json!({"version": "1", "cases": [
                {"id": "yes", "runner": "command", "command": ["true"]},
                {"id": "no", "runner": "command", "command": ["false"]},
                {"id": "absent", "runner": "command", "command": ["hpp-no-such-program-here"]},
            ]}),
            "t",
        )
        .unwrap();
        let report = run_suite(&suite, 2, Gate::Capability, Path::new(".")).unwrap();
        assert_eq!(report.cases[0].outcomes, vec![true, true]);
        assert_eq!(report.cases[1].outcomes, vec![false, false]);
        assert_eq!(report.cases[1].failures, vec!["exit 1"]);
        assert_eq!(report.cases[2].outcomes, vec![false, false]);
        assert!(report.cases[2].failures[0].contains("could not start"));
        assert!(!report.gate.passed);
    }

    #[test]
    fn control_the_packaged_benchmark_runs_all_ten_controls_and_passes() {
        let report = run_suite(&Suite::packaged(), 2, Gate::Both, Path::new(".")).unwrap();
        assert!(report.gate.passed, "{:?}", report.failing());
        assert_eq!(report.metrics.pass_caret_k, Some(1.0));
        assert!(report.not_run.is_empty(), "{:?}", report.not_run);
        assert_eq!(report.cases.len(), 10);
    }
}
