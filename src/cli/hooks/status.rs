//! `git hpp hooks status`: is the gate really wired?

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::hooks;

/// Tell whether the pre-push gate (with --server, the pre-receive gate) is really wired
///
/// Checks the hook git would run: present, ours, executable, and able to call `git hpp`
/// (git-hpp on PATH). A silent gate looks like a passing one, so anything missing exits 1.
#[derive(Debug, clap::Args)]
pub struct HooksStatusArgs {
    /// Inspect the server's pre-receive gate instead
    #[arg(long)]
    server: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Inspects the hook.
pub fn cmd_hooks_status(ctx: &Ctx, args: &HooksStatusArgs) -> Result<Outcome, CliError> {
    let gate = if args.server {
        hooks::Gate::PreReceive
    } else {
        hooks::Gate::PrePush
    };
    let status = hooks::status(ctx.store()?, &ctx.path_dirs(), gate)?;
    let mut human = if status.wired {
        format!(
            "the {} gate is wired: {}{}",
            gate.hook_name(),
            status.hook.display(),
            if status.chained {
                " (a previous hook runs first)"
            } else {
                ""
            }
        )
    } else {
        format!("the {} gate is NOT wired", gate.hook_name())
    };
    for problem in &status.problems {
        human.push_str(&format!("\n- {problem}"));
    }
    let outcome = Outcome::document(
        args.format.json,
        &status,
        human,
        if status.wired { Exit::Ok } else { Exit::Warn },
    );
    Ok(match super::unsigned_warning(ctx, args.server)? {
        Some(warning) => outcome.warn(warning),
        None => outcome,
    })
}
