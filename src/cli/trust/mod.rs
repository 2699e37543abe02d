//! `git hpp trust`: the signed policy at refs/hpp/trust that says who may sign what.

pub mod change;
pub mod init;
pub mod pin;
pub mod seal;
pub mod set;
pub mod show;

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::{Value, json};

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use crate::sign::{self, Signing};
use crate::trust::{self, Planned};
use hpp_core::trust::{Held, Policy, roles_text};

/// The `trust` verbs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum TrustCommand {
    Init(init::TrustInitArgs),
    Add(change::TrustAddArgs),
    Remove(change::TrustRemoveArgs),
    Show(show::TrustShowArgs),
    Pin(pin::TrustPinArgs),
    Set(set::TrustSetArgs),
    Seal(seal::TrustSealArgs),
}

/// Runs one `trust` verb.
pub fn dispatch(ctx: &Ctx, command: TrustCommand) -> Result<Outcome, CliError> {
    match command {
        TrustCommand::Init(args) => init::cmd_trust_init(ctx, &args),
        TrustCommand::Add(args) => change::cmd_trust_add(ctx, &args),
        TrustCommand::Remove(args) => change::cmd_trust_remove(ctx, &args),
        TrustCommand::Show(args) => show::cmd_trust_show(ctx, &args),
        TrustCommand::Pin(args) => pin::cmd_trust_pin(ctx, &args),
        TrustCommand::Set(args) => set::cmd_trust_set(ctx, &args),
        TrustCommand::Seal(args) => seal::cmd_trust_seal(ctx, &args),
    }
}

/// The roots' keys that sign a change, shared by the verbs that write the policy.
#[derive(Debug, Clone, clap::Args)]
pub struct RootKeys {
    /// A root's key to sign the change with: an OpenSSH private key, or a public key whose
    /// private half is in ssh-agent; the root is the principal the policy gives that key (can
    /// be repeated, up to the threshold) [default: git's user.signingKey when gpg.format=ssh]
    #[arg(long = "sign-key", value_name = "KEY")]
    pub sign_keys: Vec<PathBuf>,
    /// Sign and write the change (without it, the plan is printed and nothing is written)
    #[arg(long)]
    pub apply: bool,
}

impl RootKeys {
    /// Loads each key and names it by the root that holds it: of the policy in force, or, for a
    /// change of the roots, of the policy it makes; refuses a key that is no such root's.
    fn signings(&self, ctx: &Ctx, planned: &Planned) -> Result<Vec<Signing>, CliError> {
        let policy = &planned.signing_policy;
        let next =
            (planned.parent.is_some() && planned.next.rotates(policy)).then_some(&planned.next);
        let passphrase = std::env::var(sign::PASSPHRASE_ENV).ok();
        let mut keys = Vec::new();
        for path in &self.sign_keys {
            keys.push((
                path.display().to_string(),
                sign::source::load(&ctx.cwd().join(path), passphrase.as_deref())?,
            ));
        }
        if keys.is_empty()
            && let Some(from_git) = ctx.git_signing("root")?
        {
            keys.push(("git's user.signingKey".to_owned(), from_git.key));
        }
        if keys.is_empty() {
            return Err(CliError::refused(
                "a change of the trust policy is signed by its roots: pass --sign-key ROOT_KEY (or set git's user.signingKey with gpg.format=ssh)",
            ));
        }
        keys.into_iter()
            .map(|(origin, key)| {
                let probe = Signing {
                    key,
                    signer: "root".parse().expect("a valid principal"),
                };
                let public = trust::key_line(
                    &probe.public_key().to_openssh().unwrap_or_default(),
                    &origin,
                )?;
                let holds = |p: &'_ Policy| {
                    p.roots
                        .iter()
                        .find(|r| p.principals[*r].key == public)
                        .cloned()
                };
                let root = holds(policy)
                    .or_else(|| next.and_then(holds))
                    .ok_or_else(|| {
                        CliError::refused(format!(
                            "the key {origin} is not the key of any root of the policy in force ({})",
                            policy.roots.iter().cloned().collect::<Vec<_>>().join(", ")
                        ))
                    })?;
                Ok(Signing {
                    key: probe.key,
                    signer: root.parse()?,
                })
            })
            .collect()
    }
}

/// Plans or applies a change, and renders it.
fn plan_or_apply(
    ctx: &Ctx,
    planned: &Planned,
    keys: &RootKeys,
    json: bool,
) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let signings = keys.signings(ctx, planned)?;
    let changes = describe(
        planned.parent.is_none(),
        &planned.signing_policy,
        &planned.next,
    );
    let message = format!("hpp trust: {}", changes.join("; "));
    let signers: Vec<String> = signings.iter().map(|s| s.signer.to_string()).collect();
    let mut human = String::new();
    let mut value = json!({
        "applied": keys.apply,
        "changes": changes,
        "signed_by": signers,
        "threshold": planned.signing_policy.threshold,
    });
    if keys.apply {
        let refs: Vec<&Signing> = signings.iter().collect();
        let written = trust::apply(store, planned, &refs, &message)?;
        human.push_str(&format!(
            "wrote refs/hpp/trust {}: {}\nsigned by {}\n",
            &written.commit.as_str()[..12],
            changes.join("; "),
            written.signed_by.join(", ")
        ));
        if let Some(pin) = &written.pinned {
            human.push_str(&format!(
                "pinned {pin} as {} (clones pin it with `git hpp trust pin {pin}`)\n",
                trust::PIN_KEY
            ));
        }
        value["commit"] = Value::String(written.commit.to_string());
        value["pinned"] = json!(written.pinned);
    } else {
        for change in &changes {
            human.push_str(&format!("{change}\n"));
        }
        human.push_str(&format!(
            "signed by {} ({} of the {} required)\n(plan only: run again with --apply to sign and write refs/hpp/trust)\n",
            signers.join(", "),
            signers.len(),
            planned.signing_policy.threshold
        ));
    }
    Ok(Outcome::document(json, &value, human, Exit::Ok))
}

/// The change from `before` to `after`, one line per principal, root or threshold changed.
fn describe(first: bool, before: &Policy, after: &Policy) -> Vec<String> {
    let fp = |key: &str| trust::fingerprint(key).unwrap_or_default();
    let mut out = Vec::new();
    for (name, p) in &after.principals {
        let was = before.principals.get(name).filter(|_| !first);
        let root = after.roots.contains(name) && (first || !before.roots.contains(name));
        let added_roles: Vec<_> = p
            .roles
            .iter()
            .filter(|r| !was.is_some_and(|w| w.roles.contains(r)))
            .copied()
            .collect();
        match was {
            None => out.push(format!(
                "add {name}{}{} ({})",
                if root { " as a root" } else { "" },
                if added_roles.is_empty() {
                    String::new()
                } else {
                    format!(" with role {}", roles_text(added_roles))
                },
                fp(&p.key)
            )),
            Some(_) if !added_roles.is_empty() || root => out.push(format!(
                "give {name}{}{}",
                if root { " the root role" } else { "" },
                if added_roles.is_empty() {
                    String::new()
                } else {
                    format!(" role {}", roles_text(added_roles))
                }
            )),
            Some(_) => {}
        }
    }
    if !first {
        for (name, p) in &before.principals {
            let held = before.held(name);
            if !after.principals.contains_key(name) {
                out.push(format!(
                    "remove {name}, taking away {} ({})",
                    held_text(&held),
                    fp(&p.key)
                ));
            } else {
                let lost: Vec<Held> = held
                    .into_iter()
                    .filter(|h| !after.held(name).contains(h))
                    .collect();
                if !lost.is_empty() {
                    out.push(format!("take from {name} {}", held_text(&lost)));
                }
            }
        }
    }
    if !first && after.version.is_some() && before.version.is_none() {
        out.push(format!(
            "seal the log: version {}, following the policy before it",
            after.version.unwrap_or_default()
        ));
    }
    if first || before.threshold != after.threshold {
        out.push(format!("threshold {}", after.threshold));
    }
    if before.settings != after.settings {
        if !after.settings.protect.is_empty() {
            out.push(format!("protect {}", after.settings.protect.join(", ")));
        }
        if let Some(verify) = &after.settings.verify {
            out.push(format!("verify {verify}"));
        }
    }
    out
}

/// Roles in words: `the roles person, root`.
fn held_text(held: &[Held]) -> String {
    let names: Vec<String> = held.iter().map(ToString::to_string).collect();
    match names.as_slice() {
        [] => "no role".to_owned(),
        [one] => format!("the role {one}"),
        _ => format!("the roles {}", names.join(", ")),
    }
}
