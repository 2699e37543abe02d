//! The trust policy: who may sign what, kept in the repository (`refs/hpp/trust`).
//!
//! CONCEPTS.md "signature", "maker and checker". A policy names principals, each with one
//! public key (git's allowed-signers syntax, so `ssh-keygen -Y verify` reads it) and roles:
//! a `checker`'s signature can carry a verdict, a `person`'s an approval of a loop, a `maker`'s
//! the evidence of their own work. It names its *roots*, the principals whose signatures change
//! it, and how many of them must sign a change (the threshold). Each change is a new policy
//! signed by enough roots of the previous one (the first by its own roots), so who was trusted
//! when, and who changed it, is answerable from the repository alone.
//!
//! This module is pure: it checks a policy, applies a change, renders the allowed-signers file
//! readers check signatures against, and counts whether verified root signatures meet the
//! threshold. Keys are text here; the application parses them with `ssh-key`.
//!
//! ```
//! use hpp_core::trust::{Policy, Role};
//! let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOZ+Z4E0uWJ0wC2Q9Hh2vXw2q0Q2l0m3m5n0m1m2m3m4";
//! let policy = Policy::init("root", key).unwrap();
//! let policy = policy.add("checker-b", key, &[Role::Checker]).unwrap();
//! assert!(policy.has_role("checker-b", Role::Checker));
//! assert!(!policy.has_role("checker-b", Role::Person));
//! assert!(policy.allowed_signers().contains("checker-b namespaces=\"hpp\" ssh-ed25519 "));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The schema of a policy.
pub const SCHEMA: &str = "hpp.trust-policy/v1";
/// The policy blob in a trust commit's tree.
pub const POLICY_FILE: &str = "policy.json";
/// The allowed-signers file rendered from the policy, beside it (`ssh-keygen -Y verify -f`).
pub const SIGNERS_FILE: &str = "allowed_signers";
/// The folder of root signatures over the policy's bytes: `signatures/<root>.sig`.
pub const SIGNATURES_DIR: &str = "signatures";
/// The SSHSIG namespace a root signs a policy in.
pub const NAMESPACE: &str = "hpp-trust";
/// The namespace a record (evidence, attestation, decision) is signed in.
const RECORD_NAMESPACE: &str = "hpp";
/// The namespace a person signs an approval in.
const PERSON_NAMESPACE: &str = crate::event_loop::gates::PERSON_NAMESPACE;

/// What a principal's signature may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Records verdicts on another's work: an attestation counts only from a checker.
    Checker,
    /// Approves a loop: a `human_approved` counts only from a person.
    Person,
    /// Makes work and records its evidence.
    Maker,
}

impl Role {
    /// Every role, in order.
    pub const ALL: [Role; 3] = [Role::Checker, Role::Person, Role::Maker];

    /// The role as the policy spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Checker => "checker",
            Role::Person => "person",
            Role::Maker => "maker",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| Error::UnknownRole(s.to_owned()))
    }
}

/// One principal: a key and what it may sign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Principal {
    /// The public key, as an allowed-signers line carries it: `<type> <base64>`.
    pub key: String,
    /// The roles; empty only for a root that signs nothing but policy changes.
    #[serde(default)]
    pub roles: BTreeSet<Role>,
}

/// Optional settings the policy carries for every clone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The protected branches (ref patterns, as `hpp.protect`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protect: Vec<String>,
    /// The pre-push verify mode (`tip` or `each`, as `hpp.verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<String>,
}

impl Settings {
    fn is_empty(&self) -> bool {
        self.protect.is_empty() && self.verify.is_none()
    }
}

/// A trust policy, `hpp.trust-policy/v1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The principals, by name.
    pub principals: BTreeMap<String, Principal>,
    /// The principals whose signatures change the policy.
    pub roots: BTreeSet<String>,
    /// How many roots of the policy in force must sign a change.
    pub threshold: usize,
    /// Settings for every clone.
    #[serde(default, skip_serializing_if = "Settings::is_empty")]
    pub settings: Settings,
    /// The policy's place in its log, from 1: signed with the rest, so a policy copied to
    /// another place (a replay of an older one) is refused. Absent only in policies written
    /// before logs were sealed, which may open a log but never follow a sealed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The digest ([`digest`]) of the policy this one follows; absent in the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
}

/// Why a policy or a change to it is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A role that is not checker, person or maker.
    #[error("unknown role {0:?}: a role is checker, person or maker")]
    UnknownRole(String),
    /// A principal name that is not one allowed-signers and git can carry.
    #[error(
        "{0:?} is not a principal name: 1-128 letters, digits or ._:@+-, starting with a letter or digit"
    )]
    BadName(String),
    /// A key that is not `<type> <base64>` on one line.
    #[error("the key of {name} is not an SSH public key line (\"ssh-ed25519 AAAA...\")")]
    BadKey {
        /// The principal.
        name: String,
    },
    /// The principal is already in the policy with another key.
    #[error("{0} is already in the policy with another key: remove it first")]
    KeyChanged(String),
    /// Nothing would change.
    #[error("{name} already has {what}: nothing to change")]
    Unchanged {
        /// The principal.
        name: String,
        /// What they have.
        what: String,
    },
    /// The principal is not in the policy.
    #[error("{0} is not in the trust policy")]
    NotAPrincipal(String),
    /// Removing the last root would leave nobody to change the policy.
    #[error("{0} is the last root: add another root before removing it")]
    LastRoot(String),
    /// Removing a root would leave fewer roots than the threshold.
    #[error("removing {name} leaves {left} root(s), fewer than the threshold {threshold}")]
    BelowThreshold {
        /// The root.
        name: String,
        /// How many would be left.
        left: usize,
        /// The threshold.
        threshold: usize,
    },
    /// The threshold is not between 1 and the number of roots.
    #[error("the threshold must be between 1 and the number of roots ({roots}), not {threshold}")]
    Threshold {
        /// The threshold asked for.
        threshold: usize,
        /// How many roots there are.
        roots: usize,
    },
    /// A root that is not a principal.
    #[error("root {0} is not a principal of the policy")]
    RootUnknown(String),
    /// A principal with no role that is not a root.
    #[error("{0} has no role: give it checker, person or maker")]
    NoRole(String),
    /// The schema is not [`SCHEMA`].
    #[error("the policy's schema is {0:?}, not {SCHEMA}")]
    Schema(String),
    /// The policy does not parse.
    #[error("the policy is not a {SCHEMA} document: {0}")]
    Unreadable(String),
    /// A setting that is not one the readers know.
    #[error("setting verify must be tip or each, not {0:?}")]
    VerifySetting(String),
    /// A version that is not a place in a log, or a predecessor that is not a digest.
    #[error("the policy's version must be 1 or more and its previous a sha256 digest")]
    BadSeal,
    /// `trust seal` on a log whose policy in force is sealed.
    #[error("the policy log is sealed already (the policy in force is version {0})")]
    Sealed(u64),
    /// The principal does not hold the role asked to be taken away.
    #[error("{name} does not hold the {role} role")]
    NoSuchRole {
        /// The principal.
        name: String,
        /// The role.
        role: String,
    },
}

/// The digest a policy names its predecessor by: `sha256:` and the hex SHA-256 of the
/// predecessor's canonical bytes (so the same in a SHA-1 and a SHA-256 repository).
pub fn digest(policy_bytes: &[u8]) -> String {
    format!("sha256:{}", crate::record::sha256_hex(policy_bytes))
}

/// A role a principal can hold in the policy: one of [`Role`], or root (kept in the policy's
/// root set, not in the principal's roles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// A role of [`Role`].
    Role(Role),
    /// Changes the policy.
    Root,
}

impl fmt::Display for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Held::Role(role) => role.fmt(f),
            Held::Root => f.write_str("root"),
        }
    }
}

impl FromStr for Held {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        if s == "root" {
            Ok(Held::Root)
        } else {
            s.parse().map(Held::Role)
        }
    }
}

/// Tells whether `name` can be a principal: what git's allowed-signers and our signer ids take.
pub fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"._:@+-".contains(&b))
}

/// Returns the `<type> <base64>` of a public key line (a comment after it is dropped), or
/// `None` when it is not one.
pub fn key_text(line: &str) -> Option<String> {
    let mut parts = line.split_whitespace();
    let kind = parts.next()?;
    let data = parts.next()?;
    let kind_ok =
        kind.starts_with("ssh-") || kind.starts_with("ecdsa-sha2-") || kind.starts_with("sk-");
    let data_ok = data.len() >= 16
        && data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b));
    (kind_ok && data_ok).then(|| format!("{kind} {data}"))
}

impl Policy {
    /// Returns the first policy: one root, who may sign changes, threshold 1.
    ///
    /// # Errors
    ///
    /// [`Error::BadName`] or [`Error::BadKey`].
    pub fn init(root: &str, key: &str) -> Result<Policy, Error> {
        let policy = Policy {
            schema: SCHEMA.to_owned(),
            principals: BTreeMap::from([(
                root.to_owned(),
                Principal {
                    key: checked_key(root, key)?,
                    roles: BTreeSet::new(),
                },
            )]),
            roots: BTreeSet::from([root.to_owned()]),
            threshold: 1,
            settings: Settings::default(),
            version: Some(1),
            previous: None,
        };
        policy.check()?;
        Ok(policy)
    }

    /// Returns this policy (a change made from `before`) sealed as the one that follows
    /// `before` in the log, whose place is `before_seq`: version `before_seq + 1`, previous
    /// `before`'s digest.
    #[must_use]
    pub fn sealed_after(&self, before: &Policy, before_seq: u64) -> Policy {
        Policy {
            version: Some(before_seq + 1),
            previous: Some(digest(&before.to_bytes())),
            ..self.clone()
        }
    }

    /// Tells whether going from `before` to this policy changes who changes it: the roots,
    /// a root's key or the threshold. Such a change is signed by the new roots too.
    pub fn rotates(&self, before: &Policy) -> bool {
        self.roots != before.roots
            || self.threshold != before.threshold
            || self
                .roots
                .iter()
                .any(|r| self.principals[r].key != before.principals[r].key)
    }

    /// Every role `name` holds, root included: what removing the principal takes away.
    pub fn held(&self, name: &str) -> Vec<Held> {
        let mut held: Vec<Held> = self
            .principals
            .get(name)
            .map(|p| p.roles.iter().copied().map(Held::Role).collect())
            .unwrap_or_default();
        if self.roots.contains(name) {
            held.push(Held::Root);
        }
        held
    }

    /// Returns the policy with `name` no longer holding `role`; a principal left with no role
    /// and no root is removed.
    ///
    /// # Errors
    ///
    /// [`Error::NotAPrincipal`], [`Error::NoSuchRole`], and for the root role what
    /// [`Policy::remove`] refuses for a root.
    pub fn remove_role(&self, name: &str, role: Held) -> Result<Policy, Error> {
        if !self.principals.contains_key(name) {
            return Err(Error::NotAPrincipal(name.to_owned()));
        }
        if !self.held(name).contains(&role) {
            return Err(Error::NoSuchRole {
                name: name.to_owned(),
                role: role.to_string(),
            });
        }
        let mut next = self.clone();
        match role {
            Held::Role(role) => {
                if let Some(p) = next.principals.get_mut(name) {
                    p.roles.remove(&role);
                }
            }
            Held::Root => {
                next.roots.remove(name);
                next.check_roots_left(name)?;
            }
        }
        if next.principals[name].roles.is_empty() && !next.roots.contains(name) {
            next.principals.remove(name);
        }
        next.check()?;
        Ok(next)
    }

    fn check_roots_left(&self, removed: &str) -> Result<(), Error> {
        if self.roots.is_empty() {
            return Err(Error::LastRoot(removed.to_owned()));
        }
        if self.roots.len() < self.threshold {
            return Err(Error::BelowThreshold {
                name: removed.to_owned(),
                left: self.roots.len(),
                threshold: self.threshold,
            });
        }
        Ok(())
    }

    /// Reads a policy from its canonical bytes and checks it.
    ///
    /// # Errors
    ///
    /// [`Error::Unreadable`], [`Error::Schema`], or what [`Policy::check`] refuses.
    pub fn parse(bytes: &[u8]) -> Result<Policy, Error> {
        let policy: Policy =
            serde_json::from_slice(bytes).map_err(|e| Error::Unreadable(e.to_string()))?;
        policy.check()?;
        Ok(policy)
    }

    /// Checks the policy's own rules: the schema, names, keys, roots among the principals, a
    /// threshold between 1 and the number of roots, every principal a root or with a role.
    ///
    /// # Errors
    ///
    /// The first rule broken.
    pub fn check(&self) -> Result<(), Error> {
        if self.schema != SCHEMA {
            return Err(Error::Schema(self.schema.clone()));
        }
        for (name, principal) in &self.principals {
            if !valid_name(name) {
                return Err(Error::BadName(name.clone()));
            }
            if key_text(&principal.key).as_deref() != Some(principal.key.as_str()) {
                return Err(Error::BadKey { name: name.clone() });
            }
            if principal.roles.is_empty() && !self.roots.contains(name) {
                return Err(Error::NoRole(name.clone()));
            }
        }
        if let Some(root) = self
            .roots
            .iter()
            .find(|r| !self.principals.contains_key(*r))
        {
            return Err(Error::RootUnknown(root.clone()));
        }
        if self.threshold == 0 || self.threshold > self.roots.len() {
            return Err(Error::Threshold {
                threshold: self.threshold,
                roots: self.roots.len(),
            });
        }
        if let Some(verify) = &self.settings.verify
            && verify != "tip"
            && verify != "each"
        {
            return Err(Error::VerifySetting(verify.clone()));
        }
        let previous_ok = self.previous.as_deref().is_none_or(|d| {
            d.strip_prefix("sha256:").is_some_and(|hex| {
                hex.len() == 64
                    && hex
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            })
        });
        if self.version == Some(0)
            || !previous_ok
            || (self.previous.is_some() && self.version.is_none())
        {
            return Err(Error::BadSeal);
        }
        Ok(())
    }

    /// Returns the policy with `name` holding `key` and `roles` added (a principal already there
    /// with the same key gains the roles).
    ///
    /// # Errors
    ///
    /// [`Error::BadName`], [`Error::BadKey`], [`Error::KeyChanged`], [`Error::Unchanged`],
    /// [`Error::NoRole`].
    pub fn add(&self, name: &str, key: &str, roles: &[Role]) -> Result<Policy, Error> {
        if !valid_name(name) {
            return Err(Error::BadName(name.to_owned()));
        }
        if roles.is_empty() {
            return Err(Error::NoRole(name.to_owned()));
        }
        let mut next = self.clone();
        let entry = next.principal_with_key(name, key)?;
        let before = entry.roles.len();
        entry.roles.extend(roles.iter().copied());
        if entry.roles.len() == before && self.principals.contains_key(name) {
            return Err(Error::Unchanged {
                name: name.to_owned(),
                what: roles_text(roles.iter().copied()),
            });
        }
        next.check()?;
        Ok(next)
    }

    /// Returns the policy with `name` made a root (its key must be in the policy already, or be
    /// given).
    ///
    /// # Errors
    ///
    /// As [`Policy::add`], and [`Error::Unchanged`] for a root already.
    pub fn add_root(&self, name: &str, key: &str) -> Result<Policy, Error> {
        if !valid_name(name) {
            return Err(Error::BadName(name.to_owned()));
        }
        let mut next = self.clone();
        next.principal_with_key(name, key)?;
        if !next.roots.insert(name.to_owned()) {
            return Err(Error::Unchanged {
                name: name.to_owned(),
                what: "the root role".to_owned(),
            });
        }
        next.check()?;
        Ok(next)
    }

    /// The principal `name`, added with `key` and no role when new; refused when it holds
    /// another key.
    fn principal_with_key(&mut self, name: &str, key: &str) -> Result<&mut Principal, Error> {
        let key = checked_key(name, key)?;
        let entry = self
            .principals
            .entry(name.to_owned())
            .or_insert_with(|| Principal {
                key: key.clone(),
                roles: BTreeSet::new(),
            });
        if entry.key != key {
            return Err(Error::KeyChanged(name.to_owned()));
        }
        Ok(entry)
    }

    /// Returns the policy without `name` (as a principal and as a root).
    ///
    /// # Errors
    ///
    /// [`Error::NotAPrincipal`], [`Error::LastRoot`], [`Error::BelowThreshold`].
    pub fn remove(&self, name: &str) -> Result<Policy, Error> {
        if !self.principals.contains_key(name) {
            return Err(Error::NotAPrincipal(name.to_owned()));
        }
        let mut next = self.clone();
        next.principals.remove(name);
        if next.roots.remove(name) {
            next.check_roots_left(name)?;
        }
        next.check()?;
        Ok(next)
    }

    /// Returns the policy with another threshold.
    ///
    /// # Errors
    ///
    /// [`Error::Threshold`].
    pub fn with_threshold(&self, threshold: usize) -> Result<Policy, Error> {
        let mut next = self.clone();
        next.threshold = threshold;
        next.check()?;
        Ok(next)
    }

    /// Tells whether `name` is a principal holding `role`.
    pub fn has_role(&self, name: &str, role: Role) -> bool {
        self.principals
            .get(name)
            .is_some_and(|p| p.roles.contains(&role))
    }

    /// The canonical bytes of the policy (what roots sign).
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::record::canonical_json(&serde_json::to_value(self).expect("a policy serialises"))
    }

    /// Renders the allowed-signers file of the policy, one line per principal, sorted: each
    /// principal's `namespaces=` says what its roles may sign (`hpp` for a checker's or maker's
    /// records, `hpp-human` for a person's approval, `hpp-trust` for a root's policy change), so
    /// `ssh-keygen -Y verify -f` and every reader here take the same rule from it.
    pub fn allowed_signers(&self) -> String {
        let mut out = String::new();
        for (name, principal) in &self.principals {
            let mut namespaces = Vec::new();
            if principal.roles.contains(&Role::Checker) || principal.roles.contains(&Role::Maker) {
                namespaces.push(RECORD_NAMESPACE);
            }
            if principal.roles.contains(&Role::Person) {
                namespaces.push(PERSON_NAMESPACE);
            }
            if self.roots.contains(name) {
                namespaces.push(NAMESPACE);
            }
            out.push_str(&format!(
                "{name} namespaces=\"{}\" {}\n",
                namespaces.join(","),
                principal.key
            ));
        }
        out
    }

    /// Tells whether the roots in `signed` (those whose signature verified) meet this policy's
    /// threshold: only roots of this policy count, each once.
    pub fn threshold_met<'a>(&self, signed: impl IntoIterator<Item = &'a str>) -> bool {
        let counted: BTreeSet<&str> = signed
            .into_iter()
            .filter(|name| self.roots.contains(*name))
            .collect();
        counted.len() >= self.threshold
    }
}

/// The roles as a list in words: `checker, person`.
pub fn roles_text(roles: impl IntoIterator<Item = Role>) -> String {
    let set: BTreeSet<Role> = roles.into_iter().collect();
    set.iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn checked_key(name: &str, key: &str) -> Result<String, Error> {
    key_text(key).ok_or_else(|| Error::BadKey {
        name: name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY_A: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOZ+Z4E0uWJ0wC2Q9Hh2vXw2q0Q2l0m3m5n0m1m2m3m4 root@host";
    const KEY_B: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

    #[test]
    fn a_policy_round_trips_through_its_canonical_bytes() {
        let policy = Policy::init("root", KEY_A)
            .and_then(|p| p.add("checker-b", KEY_B, &[Role::Checker, Role::Person]))
            .expect("a valid policy");
        let again = Policy::parse(&policy.to_bytes()).expect("it parses back");
        assert_eq!(again, policy);
        assert_eq!(again.to_bytes(), policy.to_bytes());
        // The comment after a key is not part of it.
        assert!(!String::from_utf8_lossy(&policy.to_bytes()).contains("root@host"));
    }

    #[test]
    fn the_signers_file_marks_what_each_role_may_sign() {
        let policy = Policy::init("root", KEY_A)
            .and_then(|p| p.add("alice", KEY_B, &[Role::Person]))
            .and_then(|p| p.add("bob", KEY_B, &[Role::Checker]))
            .expect("a valid policy");
        let text = policy.allowed_signers();
        assert!(
            text.contains("alice namespaces=\"hpp-human\" ssh-ed25519 "),
            "{text}"
        );
        assert!(
            text.contains("bob namespaces=\"hpp\" ssh-ed25519 "),
            "{text}"
        );
        assert!(
            text.contains("root namespaces=\"hpp-trust\" ssh-ed25519 "),
            "{text}"
        );
        assert_eq!(text.lines().count(), 3);
    }

    #[test]
    fn the_threshold_counts_each_root_of_the_policy_once() {
        let policy = Policy::init("root", KEY_A)
            .and_then(|p| p.add_root("root2", KEY_B))
            .and_then(|p| p.with_threshold(2))
            .expect("a valid policy");
        assert!(policy.threshold_met(["root", "root2"]));
        assert!(!policy.threshold_met(["root", "root"]));
        assert!(!policy.threshold_met(["root", "mallory"]));
    }

    #[test]
    fn control_bad_changes_are_refused_by_name() {
        let policy = Policy::init("root", KEY_A).expect("a valid policy");
        assert_eq!(
            "admin".parse::<Role>(),
            Err(Error::UnknownRole("admin".into()))
        );
        assert_eq!(
            policy.add("x", "not a key", &[Role::Checker]),
            Err(Error::BadKey { name: "x".into() })
        );
        assert_eq!(
            policy.add("-x", KEY_B, &[Role::Checker]),
            Err(Error::BadName("-x".into()))
        );
        assert_eq!(policy.remove("root"), Err(Error::LastRoot("root".into())));
        assert_eq!(
            policy.remove("nobody"),
            Err(Error::NotAPrincipal("nobody".into()))
        );
        assert_eq!(
            policy.with_threshold(2),
            Err(Error::Threshold {
                threshold: 2,
                roots: 1
            })
        );
        let with_b = policy.add("b", KEY_B, &[Role::Checker]).expect("added");
        assert_eq!(
            with_b.add("b", KEY_A, &[Role::Person]),
            Err(Error::KeyChanged("b".into()))
        );
        assert!(matches!(
            with_b.add("b", KEY_B, &[Role::Checker]),
            Err(Error::Unchanged { .. })
        ));
        let mut edited = with_b.clone();
        edited.roots.insert("ghost".into());
        assert_eq!(edited.check(), Err(Error::RootUnknown("ghost".into())));
        assert!(Policy::parse(br#"{"schema":"other"}"#).is_err());
    }

    #[test]
    fn a_sealed_policy_names_its_place_and_its_predecessor_in_the_bytes_roots_sign() {
        let first = Policy::init("root", KEY_A).expect("a valid policy");
        assert_eq!((first.version, first.previous.as_deref()), (Some(1), None));
        let next = first
            .add("b", KEY_B, &[Role::Checker])
            .expect("added")
            .sealed_after(&first, 1);
        assert_eq!(next.version, Some(2));
        assert_eq!(next.previous, Some(digest(&first.to_bytes())));
        let bytes = String::from_utf8(next.to_bytes()).expect("utf-8");
        assert!(bytes.contains("\"version\":2"), "{bytes}");
        assert_eq!(Policy::parse(next.to_bytes().as_slice()), Ok(next));
    }

    #[test]
    fn control_a_seal_that_is_no_place_or_no_digest_is_refused() {
        let mut policy = Policy::init("root", KEY_A).expect("a valid policy");
        policy.version = Some(0);
        assert_eq!(policy.check(), Err(Error::BadSeal));
        policy.version = Some(2);
        policy.previous = Some("sha256:xyz".into());
        assert_eq!(policy.check(), Err(Error::BadSeal));
        policy.version = None;
        policy.previous = Some(digest(b"x"));
        assert_eq!(policy.check(), Err(Error::BadSeal));
    }

    #[test]
    fn a_change_of_roots_or_threshold_rotates_and_a_change_of_roles_does_not() {
        let first = Policy::init("root", KEY_A).expect("a valid policy");
        let with_checker = first.add("b", KEY_B, &[Role::Checker]).expect("added");
        assert!(!with_checker.rotates(&first));
        let two_roots = with_checker.add_root("b", KEY_B).expect("a root");
        assert!(two_roots.rotates(&with_checker));
        let threshold = two_roots.with_threshold(2).expect("threshold");
        assert!(threshold.rotates(&two_roots));
    }

    #[test]
    fn one_role_is_taken_away_and_the_rest_stay() {
        let policy = Policy::init("root", KEY_A)
            .and_then(|p| p.add("me", KEY_B, &[Role::Person]))
            .and_then(|p| p.add_root("me", KEY_B))
            .expect("a valid policy");
        assert_eq!(
            policy.held("me"),
            vec![Held::Role(Role::Person), Held::Root]
        );
        let no_root = policy.remove_role("me", Held::Root).expect("removed");
        assert!(!no_root.roots.contains("me"));
        assert!(no_root.has_role("me", Role::Person));
        let gone = no_root
            .remove_role("me", Held::Role(Role::Person))
            .expect("removed");
        assert!(!gone.principals.contains_key("me"));
        assert_eq!(
            no_root.remove_role("me", Held::Root),
            Err(Error::NoSuchRole {
                name: "me".into(),
                role: "root".into()
            })
        );
        assert_eq!(
            Policy::init("root", KEY_A)
                .expect("valid")
                .remove_role("root", Held::Root),
            Err(Error::LastRoot("root".into()))
        );
    }
}
