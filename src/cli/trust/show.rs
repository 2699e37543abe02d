//! `git hpp trust show`: the policy in force and its history.

use serde_json::json;

use crate::cli::JsonArg;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::trust::{self, Pinning};

/// Show who may sign what: principals, roles, keys, roots, threshold, history
///
/// Reads refs/hpp/trust and verifies it from the pinned root (hpp.trustRoot; with none pinned,
/// its first policy is trusted and its current root pinned, and the output says so): every
/// change in its place (its signed version), signed by enough roots of the policy before it,
/// and a change of roots by the new roots too. Prints each principal with its roles and key fingerprint, the
/// roots and threshold, and each change with the roots that signed it. Exits 0, 1 when the
/// repository has no policy, 2 when the policy does not verify (naming the commit).
#[derive(Debug, clap::Args)]
pub struct TrustShowArgs {
    #[command(flatten)]
    format: JsonArg,
}

/// Shows the policy.
pub fn cmd_trust_show(ctx: &Ctx, args: &TrustShowArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let Some((verified, pinning)) = trust::in_force_from(store, trust::From::Start)? else {
        let human = "no trust policy: readers use an allowed-signers file if one is given or configured, else unsigned records pass (start one with `git hpp trust init`)";
        return Ok(Outcome::document(
            args.format.json,
            &json!({"policy": null}),
            human,
            Exit::Warn,
        ));
    };
    let policy = &verified.policy;
    let mut human = format!(
        "trust policy {} (version {}), roots {}{}\n",
        &verified.tip.as_str()[..12],
        verified.seq,
        verified.roots.join(", "),
        match &pinning {
            Pinning::Pinned => " (pinned)".to_owned(),
            Pinning::FirstUse { .. } =>
                format!(" (not pinned before: pinned now as {})", trust::PIN_KEY),
        }
    );
    let mut principals = Vec::new();
    for (name, p) in &policy.principals {
        let fingerprint = trust::fingerprint(&p.key).unwrap_or_default();
        let mut roles: Vec<String> = p.roles.iter().map(ToString::to_string).collect();
        if policy.roots.contains(name) {
            roles.push("root".to_owned());
        }
        human.push_str(&format!(
            "  {name:<20} {:<24} {fingerprint}\n",
            roles.join(", ")
        ));
        principals
            .push(json!({"name": name, "roles": roles, "fingerprint": fingerprint, "key": p.key}));
    }
    human.push_str(&format!(
        "roots: {} (threshold {})\nhistory:\n",
        policy.roots.iter().cloned().collect::<Vec<_>>().join(", "),
        policy.threshold
    ));
    for change in &verified.history {
        human.push_str(&format!(
            "  {} {} (signed by {})\n",
            &change.commit.as_str()[..12],
            change.summary.trim_start_matches("hpp trust: "),
            change.signed_by.join(", ")
        ));
    }
    let value = json!({
        "policy": policy,
        "commit": verified.tip,
        "principals": principals,
        "roots": policy.roots,
        "threshold": policy.threshold,
        "version": verified.seq,
        "root_fingerprints": verified.roots,
        "pinning": pinning,
        "history": verified.history,
    });
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}
