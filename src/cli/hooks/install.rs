//! `git hpp hooks install`: plan, then apply.

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::hooks;

/// Plan (then, with --apply, install) the pre-push gate
///
/// Installs hooks/pre-push into the hooks directory git really uses (core.hooksPath respected).
/// An existing pre-push hook is kept as pre-push.hpp-chained and still runs first. Without
/// --apply nothing is written. Exits 0.
#[derive(Debug, clap::Args)]
pub struct HooksInstallArgs {
    /// Perform the plan
    #[arg(long)]
    apply: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Plans or installs the hook.
pub fn cmd_hooks_install(ctx: &Ctx, args: &HooksInstallArgs) -> Result<Outcome, CliError> {
    let plan = hooks::plan(ctx.store()?)?;
    if args.apply {
        hooks::apply(&plan)?;
    }
    let mut human = String::new();
    if plan.steps.is_empty() {
        human.push_str(&format!(
            "the pre-push gate is already installed at {}\n",
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
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}
