//! `git hpp hooks install`: plan, then apply.

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::hooks;

/// Plan (then, with --apply, install) the pre-push gate, or with --server the pre-receive gate
///
/// Installs hooks/pre-push (with --server, hooks/pre-receive) into the hooks directory git
/// really uses (core.hooksPath respected). An existing hook of that name is kept as
/// <hook>.hpp-chained and still runs first. A client's pre-push can be skipped (--no-verify, a
/// hooksPath, a stub on PATH); the server's pre-receive, installed in the repository others push
/// to, cannot: it refuses an update of a protected ref whose commits do not verify, with the
/// records already there or pushed in the same push. Without --apply nothing is written. Exits 0.
#[derive(Debug, clap::Args)]
pub struct HooksInstallArgs {
    /// Install the server's pre-receive gate (in the repository others push to, usually bare)
    #[arg(long)]
    server: bool,
    /// Perform the plan
    #[arg(long)]
    apply: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Plans or installs the hook.
pub fn cmd_hooks_install(ctx: &Ctx, args: &HooksInstallArgs) -> Result<Outcome, CliError> {
    let gate = if args.server {
        hooks::Gate::PreReceive
    } else {
        hooks::Gate::PrePush
    };
    let plan = hooks::plan(ctx.store()?, gate)?;
    if args.apply {
        hooks::apply(&plan)?;
    }
    let mut human = String::new();
    if plan.steps.is_empty() {
        human.push_str(&format!(
            "the {} gate is already installed at {}\n",
            gate.hook_name(),
            plan.hook.display()
        ));
    }
    for step in &plan.steps {
        human.push_str(&format!(
            "{}{step}\n",
            if args.apply { "done: " } else { "" }
        ));
    }
    if !args.apply && !plan.steps.is_empty() {
        human.push_str("(plan only: run again with --apply to install)\n");
    }
    let mut value = serde_json::to_value(&plan).expect("a plan serialises");
    value["applied"] = serde_json::json!(args.apply);
    let outcome = Outcome::document(args.format.json, &value, human, Exit::Ok);
    Ok(match super::unsigned_warning(ctx, args.server)? {
        Some(warning) => outcome.warn(warning),
        None => outcome,
    })
}
