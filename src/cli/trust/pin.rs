//! `git hpp trust pin`: the root this clone trusts.

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::trust;

/// Pin the root this clone trusts (plan, then --apply)
///
/// Plans `git config hpp.trustRoot FINGERPRINT` (SHA256:..., as `ssh-keygen -lf ROOT.pub` and
/// `git hpp trust show` print it): every reader then verifies refs/hpp/trust from the policy
/// where that key became a root (any root the log has held, signed by it there), and refuses a
/// log with no such policy. Pin before the first fetch to trust nothing on first use. Exits 0,
/// 2 for a malformed fingerprint.
#[derive(Debug, clap::Args)]
pub struct TrustPinArgs {
    /// The root key's fingerprint
    fingerprint: String,
    /// Write the pin
    #[arg(long)]
    apply: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Plans or writes the pin.
pub fn cmd_trust_pin(ctx: &Ctx, args: &TrustPinArgs) -> Result<Outcome, CliError> {
    let fingerprint = trust::parse_fingerprint(&args.fingerprint)?;
    let store = ctx.store()?;
    let before = store.config_string(trust::PIN_KEY);
    if args.apply {
        store.config_set(trust::PIN_KEY, &fingerprint)?;
    }
    let human = format!(
        "{}git config {} {fingerprint}{}\n{}",
        if args.apply { "done: " } else { "" },
        trust::PIN_KEY,
        before
            .as_deref()
            .filter(|b| *b != fingerprint)
            .map(|b| format!(" (replacing {b})"))
            .unwrap_or_default(),
        if args.apply {
            ""
        } else {
            "(plan only: run again with --apply to pin it)\n"
        }
    );
    Ok(Outcome::document(
        args.format.json,
        &json!({"key": trust::PIN_KEY, "fingerprint": fingerprint, "before": before, "applied": args.apply}),
        human,
        Exit::Ok,
    ))
}
