//! `hop doctor`: check the state graph; `--repair` re-creates what can be re-derived.

use super::HopCtx;
use super::out::{HopError, HopExit, HopOutcome};

/// Check every state; --repair re-creates derivable refs
///
/// For every state reachable from refs/hpp/hop/: its commit and tree exist, the commit's tree
/// is the recorded tree, the digest recomputes, the provenance its kind needs is present, its
/// parents exist, a prompt's exact bytes match its digest, and refs pin the right commits.
/// --repair only re-creates refs that can be re-derived (a state ref found through the chain,
/// a missing accepted ref) and never rewrites a record. Exit 0 when healthy, 1 otherwise.
#[derive(Debug, clap::Args)]
pub struct HopDoctorArgs {
    /// Re-create the refs that can be re-derived, then check again
    #[arg(long)]
    repair: bool,
}

/// `hop doctor`.
pub fn cmd_hop_doctor(ctx: &HopCtx, args: &HopDoctorArgs) -> Result<HopOutcome, HopError> {
    let report = ctx.hop()?.doctor(args.repair)?;
    let mut human = String::new();
    for name in &report.repaired {
        human.push_str(&format!("repaired {name}\n"));
    }
    for p in &report.problems {
        human.push_str(&format!(
            "{}: {}{}\n",
            p.state.as_deref().unwrap_or("-"),
            p.problem,
            if p.repairable {
                " (repairable: hop doctor --repair)"
            } else {
                ""
            }
        ));
    }
    human.push_str(&format!(
        "{} state(s) checked, {} problem(s)",
        report.states,
        report.problems.len()
    ));
    if report.ok {
        Ok(HopOutcome::ok(&report, human))
    } else {
        let reason = format!("{} problem(s) in the state graph", report.problems.len());
        Ok(HopOutcome::failed(&report, human, HopExit::Error, reason))
    }
}
