//! The trust root in the repository: the signed policy at `refs/hpp/trust`, and the one
//! signature rule every reader takes from it.
//!
//! CONCEPTS.md "signature", "maker and checker". The policy ([`hpp_core::trust::Policy`]) is a
//! log, one commit per change. Each commit's tree holds `policy.json` (its canonical bytes,
//! sealed with its place in the log and the digest of the policy before it), `allowed_signers`
//! (rendered from it, so `ssh-keygen -Y verify -f` reads the same keys and roles) and
//! `signatures/<root>.sig`: SSHSIGs in namespace `hpp-trust` over `policy.json` by roots of the
//! *previous* policy (the first: by its own roots), at least its threshold of them, and for a
//! change of the roots or threshold by the threshold of the new roots too. The seal makes a
//! replayed older policy fail where it lands.
//!
//! A clone pins a root as `hpp.trustRoot` (a key fingerprint, `SHA256:...`): before fetching
//! with `git hpp trust pin`, or on first use, said once. Verification starts where the pinned
//! root became a root and signed, or, on first use, at the first policy. A clone remembers the
//! newest policy it verified (`hpp.trustVerified`): readers check only what follows it, and
//! refuse a log that does not descend from it. So a policy edited, signed by a key outside the
//! roots in force, replayed, rolled back or rooted elsewhere is refused by every reader, naming
//! the commit.
//!
//! [`Trust`] is what readers use: with a policy, its signers, signatures required, and the
//! roles that say whose verdicts and approvals count; without one, an allowed-signers file
//! given or configured as before; with neither, unsigned records pass and say so.

use std::collections::HashMap;

use serde::Serialize;
use ssh_key::{HashAlg, PublicKey};
use time::OffsetDateTime;

use hpp_core::trust::{self as rules, POLICY_FILE, Policy, SIGNATURES_DIR, SIGNERS_FILE};
use hpp_store::{self as store, CommitId, NewRecord, Store, refs};

use crate::sign::{self, AllowedSigners, Purpose, SignatureStatus, Signing};

/// The git config key that holds the pinned root's fingerprint.
pub const PIN_KEY: &str = "hpp.trustRoot";

/// The git config key where a clone remembers the newest policy it verified, as `<version>
/// <commit> <pinned root>`: readers under the same pin check only what came after it, and every
/// reader refuses a log that does not descend from it (a rollback, a replacement).
pub const VERIFIED_KEY: &str = "hpp.trustVerified";

/// Why the policy could not be read, verified or changed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A policy commit does not verify from the pinned root: refused by every reader.
    #[error("the trust policy at {commit} is refused: {reason}")]
    Refused {
        /// The policy commit.
        commit: String,
        /// Why.
        reason: String,
    },
    /// The change breaks the policy's own rules.
    #[error(transparent)]
    Rule(#[from] rules::Error),
    /// `trust init` on a repository that has a policy.
    #[error("refs/hpp/trust already holds a policy: change it with `git hpp trust add|remove`")]
    Exists,
    /// A change to a repository without a policy.
    #[error("this repository has no trust policy: start one with `git hpp trust init`")]
    NoPolicy,
    /// A root is pinned (`hpp.trustRoot`) and the repository holds no policy: the clone trusts
    /// that root, so its records are never read as if nobody signed them.
    #[error(
        "the trust policy's root is pinned ({PIN_KEY} = {fingerprint}) but refs/hpp/trust holds no policy: nothing can be checked against it"
    )]
    PinnedButMissing {
        /// The pinned fingerprint.
        fingerprint: String,
    },
    /// The clone trusts its own signers (an allowed-signers file or `hpp.requireSigned`) and no
    /// root is pinned: a policy found in the repository is not adopted on first use.
    #[error(
        "refs/hpp/trust holds a policy rooted at {fingerprint}, and this clone trusts {trusted} with no root pinned: a policy is not adopted on first use"
    )]
    NotPinned {
        /// The root the policy would be pinned to.
        fingerprint: String,
        /// What the clone trusts already (the setting's name).
        trusted: String,
    },
    /// The key to sign with is not the one the policy names for that root.
    #[error("{signer} is not a root of the policy in force, or that is not their key: {detail}")]
    NotARoot {
        /// The principal asked to sign.
        signer: String,
        /// Why the signature does not count.
        detail: String,
    },
    /// The remembered policy is not `<version> <commit>`.
    #[error(
        "{VERIFIED_KEY} is {0:?}, not `<version> <commit>`: remove it (`git config --unset {VERIFIED_KEY}`) to verify the policy from the pinned root again"
    )]
    Remembered(String),
    /// A change of the roots or threshold not signed by enough of the new roots.
    #[error(
        "the change makes the roots {roots} (threshold {needed}): the new roots sign it too, and {got} of them did (pass --sign-key with their keys)"
    )]
    NewRoots {
        /// The new roots.
        roots: String,
        /// How many of them must sign.
        needed: usize,
        /// How many did.
        got: usize,
    },
    /// Fewer roots signed than the policy in force requires.
    #[error("the change needs {needed} root signature(s) of the policy in force; {got} given")]
    Threshold {
        /// How many are needed.
        needed: usize,
        /// How many verified.
        got: usize,
    },
    /// A key file or line that is not an SSH public key.
    #[error("{what} is not an SSH public key: {detail}")]
    BadKey {
        /// What was read.
        what: String,
        /// Why.
        detail: String,
    },
    /// A fingerprint that is not `SHA256:<base64>`.
    #[error("{0:?} is not a key fingerprint: use SHA256:... as `ssh-keygen -lf KEY` prints it")]
    BadFingerprint(String),
    /// The policy moved while a change was written.
    #[error("refs/hpp/trust moved while the change was written: run the command again")]
    Moved,
    /// Signing failed.
    #[error(transparent)]
    Sign(#[from] sign::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// One change of the policy, as the log holds it.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The policy commit.
    pub commit: CommitId,
    /// Its position, from 1.
    pub seq: usize,
    /// The roots whose signatures verified; empty for a change a reader did not check because
    /// a later checked change chains over it (`trust show` checks every one).
    pub signed_by: Vec<String>,
    /// The commit's message: what changed.
    pub summary: String,
}

/// The policy in force, verified.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The policy.
    pub policy: Policy,
    /// Its commit (the log's tip).
    pub tip: CommitId,
    /// Its place in the log, from 1.
    pub seq: u64,
    /// The fingerprints of its roots, in the order of their names: what a clone pins.
    pub roots: Vec<String>,
    /// The changes this read verified, oldest first: every one from where verification
    /// started ([`From::Start`]), or those after the remembered policy.
    pub history: Vec<Change>,
}

impl Verified {
    /// The allowed-signers the policy renders: what every reader checks signatures against.
    pub fn signers(&self) -> AllowedSigners {
        AllowedSigners::parse(&self.policy.allowed_signers())
    }
}

/// How a verified policy was trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pinning {
    /// A root it holds (or held) is the one pinned (`hpp.trustRoot`).
    Pinned,
    /// Nothing was pinned: the log was verified from its first policy, and its current root is
    /// trusted from now on (and pinned by the caller).
    FirstUse {
        /// The fingerprint to pin.
        fingerprint: String,
    },
}

/// Returns the SHA-256 fingerprint of a public key line, as `ssh-keygen -lf` prints it.
///
/// # Errors
///
/// [`Error::BadKey`] for a line that is not a public key.
pub fn fingerprint(key_line: &str) -> Result<String, Error> {
    let key = PublicKey::from_openssh(key_line.trim()).map_err(|e| Error::BadKey {
        what: "the key".to_owned(),
        detail: e.to_string(),
    })?;
    Ok(key.fingerprint(HashAlg::Sha256).to_string())
}

/// Checks a fingerprint as a user types it: `SHA256:` and 43 base64 characters.
///
/// # Errors
///
/// [`Error::BadFingerprint`].
pub fn parse_fingerprint(text: &str) -> Result<String, Error> {
    let text = text.trim();
    let ok = text.strip_prefix("SHA256:").is_some_and(|b64| {
        b64.len() == 43
            && b64
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
    });
    if ok {
        Ok(text.to_owned())
    } else {
        Err(Error::BadFingerprint(text.to_owned()))
    }
}

/// Reads the key line of an SSH public key file (or of the public half of a private key).
///
/// # Errors
///
/// [`Error::BadKey`].
pub fn key_line(text: &str, what: &str) -> Result<String, Error> {
    let key = PublicKey::from_openssh(text.trim()).map_err(|e| Error::BadKey {
        what: what.to_owned(),
        detail: e.to_string(),
    })?;
    let line = key.to_openssh().map_err(|e| Error::BadKey {
        what: what.to_owned(),
        detail: e.to_string(),
    })?;
    rules::key_text(&line).ok_or_else(|| Error::BadKey {
        what: what.to_owned(),
        detail: "not a key line".to_owned(),
    })
}

/// Where a read of the log starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    /// From the newest policy this clone verified ([`VERIFIED_KEY`]), checking only what came
    /// after it (every reader); from the start when the clone verified none.
    Remembered,
    /// From the start, whatever the clone remembers, which must lie on the log (`trust show`,
    /// which lists every change).
    Start,
}

/// The newest policy a clone verified: its place in the log, its commit, and the root pinned
/// when it was verified (a read under another pin verifies from that pin again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remembered {
    /// The policy's place in the log, from 1.
    pub seq: u64,
    /// Its commit.
    pub commit: CommitId,
    /// The pinned root it was verified from.
    pub pin: Option<String>,
}

impl Remembered {
    fn value(&self) -> String {
        match &self.pin {
            Some(pin) => format!("{} {} {pin}", self.seq, self.commit),
            None => format!("{} {}", self.seq, self.commit),
        }
    }
}

/// Returns the newest policy this clone verified, from [`VERIFIED_KEY`].
///
/// # Errors
///
/// [`Error::Remembered`] when the value is not `<version> <commit>`.
pub fn remembered(store: &Store) -> Result<Option<Remembered>, Error> {
    let Some(value) = store.config_string(VERIFIED_KEY) else {
        return Ok(None);
    };
    let mut fields = value.split(' ');
    let parsed = (|| {
        let seq = fields.next()?.parse::<u64>().ok().filter(|s| *s > 0)?;
        let commit = CommitId::parse(fields.next()?)?;
        let pin = match fields.next() {
            Some(pin) => Some(parse_fingerprint(pin).ok()?),
            None => None,
        };
        fields
            .next()
            .is_none()
            .then_some(Remembered { seq, commit, pin })
    })();
    parsed.map(Some).ok_or(Error::Remembered(value))
}

/// Remembers `verified`, verified from `pin`, as the newest policy this clone verified.
fn remember(store: &Store, verified: &Verified, pin: Option<&str>) -> Result<(), Error> {
    let now = Remembered {
        seq: verified.seq,
        commit: verified.tip.clone(),
        pin: pin.map(str::to_owned),
    };
    if remembered(store)?.as_ref() != Some(&now) {
        store.config_set(VERIFIED_KEY, &now.value())?;
    }
    Ok(())
}

/// Reads and verifies the policy log at `ref_name` (the repository's, or one a fetch staged).
///
/// Each commit has one parent (the first none), its policy valid and in canonical form, its
/// signers file the one the policy renders, its sealed version its place in the log and its
/// `previous` the digest of the policy before it (a policy written before logs were sealed may
/// open a log, never follow a sealed policy), and it is signed by at least the threshold of the
/// roots of the policy before it and, when it changes the roots or the threshold, of its own.
///
/// Where verification starts: with [`From::Remembered`] and a remembered policy, right after
/// it, and the log must descend from it; otherwise at the policy where the pinned root (`pin`)
/// becomes a root, which that root must have signed, with its own threshold; with no pin, at
/// the first policy (first use). `None` when the ref does not exist.
///
/// # Errors
///
/// [`Error::Refused`] naming the first commit that does not verify, or the tip that does not
/// descend from the remembered policy; [`Error::Remembered`]; [`Error::Store`].
pub fn verify_log(
    store: &Store,
    ref_name: &str,
    pin: Option<&str>,
    from: From,
) -> Result<Option<(Verified, Pinning)>, Error> {
    let Some(tip) = store.tip(ref_name)? else {
        return Ok(None);
    };
    let remembered = remembered(store)?;
    let key = (
        tip.clone(),
        pin.map(str::to_owned),
        remembered.as_ref().map(|r| r.commit.clone()),
    );
    let cached = from == From::Remembered;
    if cached
        && let Some((_, found)) = VERIFIED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|(k, _)| *k == key)
    {
        return Ok(Some(found.clone()));
    }
    let found = verify_uncached(store, ref_name, pin, from, tip, remembered.as_ref())?;
    VERIFIED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push((key, found.clone()));
    Ok(Some(found))
}

/// A verified log: its tip, the pin and the remembered policy it was verified under.
type VerifiedKey = (CommitId, Option<String>, Option<CommitId>);

/// The logs this process verified. A fetch verifies the policy it stages, reads the records
/// against it, then takes it in: each would read the same log again. The result depends only on
/// the tip, the pin and the remembered policy, which the key holds.
static VERIFIED: std::sync::Mutex<Vec<(VerifiedKey, (Verified, Pinning))>> =
    std::sync::Mutex::new(Vec::new());

/// [`verify_log`] of the log at `tip`, read through.
fn verify_uncached(
    store: &Store,
    ref_name: &str,
    pin: Option<&str>,
    from: From,
    tip: CommitId,
    remembered: Option<&Remembered>,
) -> Result<(Verified, Pinning), Error> {
    let mut walk = Walk::new(store);
    walk.summaries = from == From::Start;
    let verified = match (remembered, from) {
        (Some(r), From::Remembered) if r.pin.as_deref() == pin => {
            let before = store
                .read_commit_file(&r.commit, POLICY_FILE)?
                .ok_or_else(|| not_descending(&tip, r))?;
            let policy = Policy::parse(&before).map_err(|e| Error::Refused {
                commit: r.commit.to_string(),
                reason: e.to_string(),
            })?;
            if r.commit == tip {
                verified_at(tip, r.seq, policy, Vec::new())?
            } else {
                let chain = store
                    .read_chain_since(ref_name, POLICY_FILE, &r.commit, usize::MAX)?
                    .ok_or_else(|| not_descending(&tip, r))?;
                walk.checked =
                    check_signatures(store, &chain.links, Some(&before), walk.now, false)?;
                walk.trusted = Some((policy, before));
                walk.seq = r.seq;
                for link in &chain.links {
                    walk.step(link, None)?;
                }
                walk.into_verified(tip)?
            }
        }
        _ => {
            let chain = store.read_chain(ref_name, POLICY_FILE)?;
            // A reader (not `trust show`, which lists who signed each change) checks the roots'
            // signatures only where they decide what is trusted now.
            let chained = !walk.summaries;
            walk.checked = check_signatures(store, &chain.links, None, walk.now, chained)?;
            if let Some(r) = remembered {
                let place = chain.links.iter().position(|l| l.commit == r.commit);
                if place.map(|p| p as u64 + 1) != Some(r.seq) {
                    return Err(not_descending(&tip, r));
                }
            }
            let mut seen_roots: Vec<String> = Vec::new();
            for link in &chain.links {
                if walk.trusted.is_some() || pin.is_none() {
                    walk.step(link, None)?;
                } else if let Some(pin) = pin
                    && walk.pinned_root_signed(link, pin, &mut seen_roots)?
                {
                    walk.step(link, Some(pin))?;
                } else {
                    walk.skip(link);
                }
            }
            if walk.trusted.is_none()
                && let Some(pin) = pin
            {
                return Err(Error::Refused {
                    commit: tip.to_string(),
                    reason: format!(
                        "no policy in its log is rooted at the pinned root {pin} ({PIN_KEY}) and signed by it; its roots were {}",
                        if seen_roots.is_empty() {
                            "none".to_owned()
                        } else {
                            seen_roots.join(", ")
                        }
                    ),
                });
            }
            walk.into_verified(tip)?
        }
    };
    let pinning = match pin {
        Some(_) => Pinning::Pinned,
        None => Pinning::FirstUse {
            fingerprint: verified.roots.first().cloned().unwrap_or_default(),
        },
    };
    Ok((verified, pinning))
}

fn not_descending(tip: &CommitId, r: &Remembered) -> Error {
    Error::Refused {
        commit: tip.to_string(),
        reason: format!(
            "it does not descend from the newest policy this clone verified (version {}, {}; {VERIFIED_KEY}): a policy rolled back or replaced (if its owner replaced it on purpose, `git config --unset {VERIFIED_KEY}` verifies it from the pinned root again)",
            r.seq, r.commit
        ),
    }
}

/// The log read so far: the policy trusted last, and its place.
struct Walk<'s> {
    store: &'s Store,
    now: OffsetDateTime,
    /// The policy trusted last and its bytes (`None` before the anchor).
    trusted: Option<(Policy, Vec<u8>)>,
    /// The bytes of the link before the next one, trusted or not (what its `previous` names).
    before: Option<Vec<u8>>,
    /// The place of the last link read.
    seq: u64,
    /// Whether a sealed policy was trusted: every later one must be sealed too.
    sealed: bool,
    history: Vec<Change>,
    /// Whether each change's summary (its commit message's first line) is read.
    summaries: bool,
    /// The signatures of the links to read, checked beforehand on every core.
    checked: HashMap<CommitId, Checked>,
}

impl<'s> Walk<'s> {
    fn new(store: &'s Store) -> Self {
        Walk {
            store,
            now: OffsetDateTime::now_utc(),
            trusted: None,
            before: None,
            seq: 0,
            sealed: false,
            history: Vec::new(),
            summaries: false,
            checked: HashMap::new(),
        }
    }

    /// Tells whether `link` can anchor a pinned read: its policy has the pinned root among its
    /// roots and that root's signature over it verifies. The roots of each policy passed over
    /// are added to `seen` (for the refusal when none can).
    fn pinned_root_signed(
        &self,
        link: &store::Link,
        pin: &str,
        seen: &mut Vec<String>,
    ) -> Result<bool, Error> {
        let Some(bytes) = link.payload.as_deref() else {
            return Ok(false);
        };
        let Ok(policy) = Policy::parse(bytes) else {
            return Ok(false);
        };
        let mut pinned = None;
        for root in &policy.roots {
            let Ok(fp) = fingerprint(&policy.principals[root].key) else {
                continue;
            };
            if fp == pin {
                pinned = Some(root.clone());
            }
            if !seen.contains(&fp) {
                seen.push(fp);
            }
        }
        let Some(root) = pinned else {
            return Ok(false);
        };
        let tree = tree_of(self.store, link)?;
        let signed = root_signatures(self.store, &tree, &policy, bytes, self.now)?;
        Ok(signed.contains(&root))
    }

    /// Passes over a link before the anchor: counted, not trusted.
    fn skip(&mut self, link: &store::Link) {
        self.seq += 1;
        self.before = link.payload.clone();
    }

    /// Verifies the next link; `anchor` is the pin for the first trusted link of a pinned read
    /// (the pinned root must have signed it), `None` otherwise.
    fn step(&mut self, link: &store::Link, anchor: Option<&str>) -> Result<(), Error> {
        let seq = self.seq + 1;
        let refuse = |reason: String| Error::Refused {
            commit: link.commit.to_string(),
            reason,
        };
        if link.parents.len() != usize::from(seq > 1) {
            return Err(refuse(format!(
                "it has {} parents: a policy change has exactly one, the policy before it",
                link.parents.len()
            )));
        }
        let Some(bytes) = link.payload.as_deref() else {
            return Err(refuse(format!("it holds no {POLICY_FILE}")));
        };
        let parsed = self
            .checked
            .get_mut(&link.commit)
            .and_then(|c| c.policy.take());
        let policy = match parsed {
            Some(policy) => policy,
            None => Policy::parse(bytes).map_err(|e| refuse(e.to_string()))?,
        };
        // A change a later checked one chains over (see [`Checked::chained`]): its bytes are
        // vouched for by that one, so only its place, its digest and its roots are read.
        let chained = self.checked.get(&link.commit).is_some_and(|c| c.chained)
            && self
                .trusted
                .as_ref()
                .is_some_and(|(previous, _)| !policy.rotates(previous));
        let tree = tree_of(self.store, link)?;
        if !chained {
            if policy.to_bytes() != bytes {
                return Err(refuse(format!(
                    "its {POLICY_FILE} is not in canonical form"
                )));
            }
            // The signers file is compared by blob id: the same bytes, without reading them.
            let rendered = self.store.blob_id(policy.allowed_signers().as_bytes());
            if self.store.tree_entry_id(&tree, SIGNERS_FILE)?.as_deref() != Some(rendered.as_str())
            {
                return Err(refuse(format!(
                    "its {SIGNERS_FILE} is not the one its policy renders"
                )));
            }
        }
        let before = self
            .trusted
            .as_ref()
            .map(|(_, b)| b.as_slice())
            .or(self.before.as_deref());
        match policy.version {
            Some(version) => {
                if version != seq {
                    return Err(refuse(format!(
                        "its signed version is {version} but it is change {seq} of the log: a policy replayed or moved out of its place"
                    )));
                }
                let expected = before.map(rules::digest);
                if policy.previous != expected {
                    return Err(refuse(format!(
                        "it names {} as the policy before it, but the policy before it is {}: a policy replayed or moved out of its place",
                        policy.previous.as_deref().unwrap_or("none"),
                        expected.as_deref().unwrap_or("none")
                    )));
                }
            }
            None if self.sealed => {
                return Err(refuse(
                    "it carries no version after a sealed policy: a policy from before the log was sealed, replayed".to_owned(),
                ));
            }
            None => {}
        }
        let checked = self.checked.get(&link.commit);
        let own = || match checked.and_then(|c| c.own.clone()) {
            Some(own) => Ok(own),
            None => root_signatures(self.store, &tree, &policy, bytes, self.now),
        };
        let signed_by = match &self.trusted {
            Some(_) if chained => Vec::new(),
            Some((previous, _)) => {
                let signed = match checked {
                    Some(c) => c.previous.clone(),
                    None => root_signatures(self.store, &tree, previous, bytes, self.now)?,
                };
                if !previous.threshold_met(signed.iter().map(String::as_str)) {
                    return Err(refuse(format!(
                        "it is signed by {} of the {} root signature(s) the policy before it requires ({})",
                        signed.len(),
                        previous.threshold,
                        roots_text(previous)
                    )));
                }
                let mut all = signed;
                if policy.version.is_some() && policy.rotates(previous) {
                    let own = own()?;
                    if !policy.threshold_met(own.iter().map(String::as_str)) {
                        return Err(refuse(format!(
                            "it changes the roots or the threshold and is signed by {} of the {} signature(s) its own roots must add ({})",
                            own.len(),
                            policy.threshold,
                            roots_text(&policy)
                        )));
                    }
                    all.extend(own);
                    all.sort();
                    all.dedup();
                }
                all
            }
            None => {
                let own = own()?;
                if !policy.threshold_met(own.iter().map(String::as_str)) {
                    return Err(refuse(format!(
                        "it is signed by {} of the {} root signature(s) the policy itself requires ({})",
                        own.len(),
                        policy.threshold,
                        roots_text(&policy)
                    )));
                }
                if let Some(pin) = anchor {
                    let pinned_signed = own.iter().any(|root| {
                        fingerprint(&policy.principals[root].key).is_ok_and(|f| f == pin)
                    });
                    if !pinned_signed {
                        return Err(refuse(format!(
                            "the pinned root {pin} ({PIN_KEY}) becomes a root here without signing it"
                        )));
                    }
                }
                own
            }
        };
        // What each change says is read only for a reader that lists them (`trust show`).
        let summary = if self.summaries {
            self.store
                .commit_message(&link.commit)?
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned()
        } else {
            String::new()
        };
        self.history.push(Change {
            commit: link.commit.clone(),
            seq: usize::try_from(seq).unwrap_or(usize::MAX),
            signed_by,
            summary,
        });
        self.sealed |= policy.version.is_some();
        self.seq = seq;
        self.before = Some(bytes.to_vec());
        self.trusted = Some((policy, bytes.to_vec()));
        Ok(())
    }

    fn into_verified(self, tip: CommitId) -> Result<Verified, Error> {
        let Some((policy, _)) = self.trusted else {
            return Err(Error::Refused {
                commit: tip.to_string(),
                reason: "it holds no policy".to_owned(),
            });
        };
        verified_at(tip, self.seq, policy, self.history)
    }
}

/// The verified policy `policy` at `tip`, its place `seq`, with the changes read to get there.
fn verified_at(
    tip: CommitId,
    seq: u64,
    policy: Policy,
    history: Vec<Change>,
) -> Result<Verified, Error> {
    let roots = root_fingerprints(&policy).map_err(|e| Error::Refused {
        commit: tip.to_string(),
        reason: e.to_string(),
    })?;
    Ok(Verified {
        policy,
        tip,
        seq,
        roots,
        history,
    })
}

/// Which roots' signatures over one policy verify: roots of the policy before it, and its own.
#[derive(Debug, Clone, Default)]
struct Checked {
    previous: Vec<String>,
    /// Checked only where the walk needs them (the log's first policy, a change of roots);
    /// `None` elsewhere, and the walk checks them itself if it asks.
    own: Option<Vec<String>>,
    /// Not checked: a sealed change that keeps the roots and the threshold, with a sealed
    /// change after it. The change after it signs its digest (`previous`), and so on up to the
    /// newest policy, whose signatures are checked; so its bytes are the ones the roots in
    /// force vouch for, and the roots it names are those of the last change of roots, which is
    /// checked against the roots before it and its own (TUF's rule: every root version in
    /// turn, and the newest of the rest).
    chained: bool,
    /// The policy as parsed for the checks, handed to the walk (which parses once).
    policy: Option<Policy>,
}

/// Checks the signatures of `links` (the policy before the first is `before`, when there is
/// one) ahead of the walk, on every core: a fresh clone checks every change of the log once,
/// and the checks, not the reads, are the cost. Each link is checked against the policy the
/// link before it holds, which is the one the walk trusts there or it refuses the log; a link
/// whose policy does not read is left to the walk, which refuses it.
fn check_signatures(
    store: &Store,
    links: &[store::Link],
    before: Option<&[u8]>,
    now: OffsetDateTime,
    chained_ok: bool,
) -> Result<HashMap<CommitId, Checked>, Error> {
    struct Job {
        link: usize,
        own: bool,
        root: String,
        armored: Vec<u8>,
    }
    let policies: Vec<Option<Policy>> = links
        .iter()
        .map(|l| l.payload.as_deref().and_then(|b| Policy::parse(b).ok()))
        .collect();
    let before = before.and_then(|b| Policy::parse(b).ok());
    let mut jobs = Vec::new();
    let mut own_checked_at = vec![false; links.len()];
    let mut chained_at = vec![false; links.len()];
    let mut signers: Vec<(Option<AllowedSigners>, Option<AllowedSigners>)> = Vec::new();
    for (i, link) in links.iter().enumerate() {
        let previous = if i == 0 {
            before.as_ref()
        } else {
            policies[i - 1].as_ref()
        };
        let (Some(own), Some(_)) = (policies[i].as_ref(), link.payload.as_ref()) else {
            signers.push((None, None));
            continue;
        };
        let next_sealed = policies
            .get(i + 1)
            .is_some_and(|next| next.as_ref().is_some_and(|n| n.version.is_some()));
        let chained = chained_ok
            && next_sealed
            && own.version.is_some()
            && previous.is_some_and(|p| p.version.is_some() && !own.rotates(p));
        if chained {
            chained_at[i] = true;
            signers.push((None, None));
            continue;
        }
        let tree = tree_of(store, link)?;
        let own_needed = previous.is_none_or(|p| own.version.is_some() && own.rotates(p));
        let own_checked = own_needed.then_some(own);
        own_checked_at[i] = own_needed;
        for (policy, is_own) in [(previous, false), (own_checked, true)] {
            let Some(policy) = policy else { continue };
            for root in &policy.roots {
                if let Some(armored) = store.tree_blob(&tree, &signature_path(root))? {
                    jobs.push(Job {
                        link: i,
                        own: is_own,
                        root: root.clone(),
                        armored,
                    });
                }
            }
        }
        signers.push((
            previous.map(|p| AllowedSigners::parse(&p.allowed_signers())),
            Some(AllowedSigners::parse(&own.allowed_signers())),
        ));
    }
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let per = jobs.len().div_ceil(threads).max(1);
    let results: Vec<bool> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(per)
            .map(|chunk| {
                let (links, signers) = (&links, &signers);
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|job| {
                            let allowed = if job.own {
                                signers[job.link].1.as_ref()
                            } else {
                                signers[job.link].0.as_ref()
                            };
                            let bytes = links[job.link].payload.as_deref().unwrap_or_default();
                            allowed.is_some_and(|allowed| {
                                sign::check_for(
                                    Purpose::Policy,
                                    bytes,
                                    Some(&job.armored),
                                    Some(&job.root),
                                    Some(allowed),
                                    now,
                                )
                                .status
                                    == SignatureStatus::Verified
                            })
                        })
                        .collect::<Vec<bool>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    drop(signers);
    let mut checked: HashMap<CommitId, Checked> = links
        .iter()
        .zip(own_checked_at.iter().zip(&chained_at))
        .zip(policies)
        .map(|((l, (own, chained)), policy)| {
            (
                l.commit.clone(),
                Checked {
                    previous: Vec::new(),
                    own: own.then(Vec::new),
                    chained: *chained,
                    policy,
                },
            )
        })
        .collect();
    for (job, ok) in jobs.iter().zip(results) {
        if !ok {
            continue;
        }
        let entry = checked
            .get_mut(&links[job.link].commit)
            .expect("every link has an entry");
        if job.own {
            entry
                .own
                .get_or_insert_with(Vec::new)
                .push(job.root.clone());
        } else {
            entry.previous.push(job.root.clone());
        }
    }
    Ok(checked)
}

/// The tree of a policy commit: as the chain's read had it, else read.
fn tree_of(store: &Store, link: &store::Link) -> Result<store::TreeId, Error> {
    match &link.tree {
        Some(tree) => Ok(tree.clone()),
        None => Ok(store.commit_tree(&link.commit)?),
    }
}

/// The roots of `policy` whose signature in the policy commit's `tree` verifies over `bytes`.
fn root_signatures(
    store: &Store,
    tree: &store::TreeId,
    policy: &Policy,
    bytes: &[u8],
    now: OffsetDateTime,
) -> Result<Vec<String>, Error> {
    let signers = AllowedSigners::parse(&policy.allowed_signers());
    let mut verified = Vec::new();
    for root in &policy.roots {
        let Some(armored) = store.tree_blob(tree, &signature_path(root))? else {
            continue;
        };
        let report = sign::check_for(
            Purpose::Policy,
            bytes,
            Some(&armored),
            Some(root),
            Some(&signers),
            now,
        );
        if report.status == SignatureStatus::Verified {
            verified.push(root.clone());
        }
    }
    Ok(verified)
}

fn signature_path(root: &str) -> String {
    format!("{SIGNATURES_DIR}/{root}.sig")
}

fn roots_text(policy: &Policy) -> String {
    let names: Vec<&str> = policy.roots.iter().map(String::as_str).collect();
    format!("roots: {}", names.join(", "))
}

fn root_fingerprints(policy: &Policy) -> Result<Vec<String>, Error> {
    policy
        .roots
        .iter()
        .map(|root| fingerprint(&policy.principals[root].key))
        .collect()
}

/// The setting by which this clone already trusts signers of its own, when one is set: an
/// allowed-signers file (`hpp.allowedSignersFile`, `gpg.ssh.allowedSignersFile`) or
/// `hpp.requireSigned=true`. Such a clone adopts no policy on first use: its owner pins the
/// policy's root (`git hpp trust pin`) once they have checked it.
pub fn trusts_already(store: &Store) -> Option<String> {
    ["hpp.allowedSignersFile", "gpg.ssh.allowedSignersFile"]
        .into_iter()
        .find(|key| store.config_string(key).is_some())
        .map(|key| format!("its allowed-signers file ({key})"))
        .or_else(|| {
            (store.config_bool("hpp.requireSigned") == Some(true))
                .then(|| "signatures it requires (hpp.requireSigned)".to_owned())
        })
}

/// Reads the repository's policy (`refs/hpp/trust`) and verifies it ([`verify_log`] from
/// `from`): from the newest policy this clone verified, else from the pinned root, else (first
/// use) from its first policy, whose current root is then pinned (`hpp.trustRoot`) and
/// reported as [`Pinning::FirstUse`]. The policy verified is remembered ([`VERIFIED_KEY`]).
/// `None` when the repository has no policy.
///
/// # Errors
///
/// As [`verify_log`]; [`Error::Store`] when the pin cannot be written.
pub fn in_force_from(store: &Store, from: From) -> Result<Option<(Verified, Pinning)>, Error> {
    let pin = store.config_string(PIN_KEY);
    let found = verify_log(store, refs::TRUST, pin.as_deref(), from)?;
    // A push being received, or a fetch's staging, may never land: nothing is pinned or
    // remembered from it.
    if let Some((verified, pinning)) = found.as_ref().filter(|_| !store.is_provisional()) {
        let pinned = match pinning {
            Pinning::FirstUse { fingerprint } => {
                store.config_set(PIN_KEY, fingerprint)?;
                Some(fingerprint.as_str())
            }
            Pinning::Pinned => pin.as_deref(),
        };
        remember(store, verified, pinned)?;
    }
    Ok(found)
}

/// [`in_force_from`] the remembered policy: what every reader uses.
///
/// # Errors
///
/// As [`in_force_from`].
pub fn in_force(store: &Store) -> Result<Option<(Verified, Pinning)>, Error> {
    in_force_from(store, From::Remembered)
}

/// What a change wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    /// The new policy commit.
    pub commit: CommitId,
    /// The policy now in force.
    #[serde(skip)]
    pub policy: Policy,
    /// The roots that signed it.
    pub signed_by: Vec<String>,
    /// The fingerprint pinned, when the change pinned one (`trust init`).
    pub pinned: Option<String>,
}

/// A change planned from the policy in force: what it would write, not yet signed.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The policy the change makes.
    pub next: Policy,
    /// The policy whose roots must sign it: the one in force, or for the first, itself.
    pub signing_policy: Policy,
    /// The policy commit it goes on (`None` for the first).
    pub parent: Option<CommitId>,
    /// The place in the log the change takes, from 1.
    pub seq: u64,
}

/// Plans the first policy: `root` with `key_line` is its one root, threshold 1. Refused when a
/// policy exists.
///
/// # Errors
///
/// [`Error::Exists`], [`Error::Rule`].
pub fn plan_init(store: &Store, root: &str, key_line: &str) -> Result<Planned, Error> {
    if store.tip(refs::TRUST)?.is_some() {
        return Err(Error::Exists);
    }
    let policy = Policy::init(root, key_line)?;
    Ok(Planned {
        signing_policy: policy.clone(),
        next: policy,
        parent: None,
        seq: 1,
    })
}

/// Plans a change of the policy in force: `change` makes the next policy from it.
///
/// # Errors
///
/// [`Error::NoPolicy`], what [`in_force`] refuses, [`Error::Rule`].
pub fn plan_change(
    store: &Store,
    change: impl FnOnce(&Policy) -> Result<Policy, rules::Error>,
) -> Result<Planned, Error> {
    let Some((verified, _)) = in_force(store)? else {
        return Err(Error::NoPolicy);
    };
    let next = change(&verified.policy)?.sealed_after(&verified.policy, verified.seq);
    Ok(Planned {
        next,
        signing_policy: verified.policy,
        parent: Some(verified.tip),
        seq: verified.seq + 1,
    })
}

/// Signs a planned change with `signings` (roots of the policy in force, at least its
/// threshold; for the first policy, its root) and writes it by compare-and-swap on the tip it
/// was planned from, so two changes at once cannot both win. The first policy's root is pinned
/// here (`hpp.trustRoot`).
///
/// # Errors
///
/// [`Error::NotARoot`], [`Error::Threshold`], [`Error::Moved`], [`Error::Sign`].
pub fn apply(
    store: &Store,
    planned: &Planned,
    signings: &[&Signing],
    message: &str,
) -> Result<Written, Error> {
    let written = write_change(
        store,
        planned.parent.as_ref(),
        &planned.signing_policy,
        &planned.next,
        signings,
        message,
    )?;
    if planned.parent.is_some() {
        let remembered = Remembered {
            seq: planned.seq,
            commit: written.commit.clone(),
            pin: store.config_string(PIN_KEY),
        };
        store.config_set(VERIFIED_KEY, &remembered.value())?;
        return Ok(written);
    }
    let root = planned.next.roots.first().expect("a policy has a root");
    let pinned = fingerprint(&planned.next.principals[root].key)?;
    store.config_set(PIN_KEY, &pinned)?;
    let remembered = Remembered {
        seq: 1,
        commit: written.commit.clone(),
        pin: Some(pinned.clone()),
    };
    store.config_set(VERIFIED_KEY, &remembered.value())?;
    Ok(Written {
        pinned: Some(pinned),
        ..written
    })
}

/// Signs `next` with each of `signings` (each must verify as a root of `signing_policy`),
/// checks the threshold, and writes the commit on `parent` by compare-and-swap.
fn write_change(
    store: &Store,
    parent: Option<&CommitId>,
    signing_policy: &Policy,
    next: &Policy,
    signings: &[&Signing],
    message: &str,
) -> Result<Written, Error> {
    let bytes = next.to_bytes();
    let signers = AllowedSigners::parse(&signing_policy.allowed_signers());
    // A change of the roots or threshold is signed by the new roots too (the first policy's
    // roots are both).
    let rotates = parent.is_some() && next.rotates(signing_policy);
    let new_signers = AllowedSigners::parse(&next.allowed_signers());
    let now = OffsetDateTime::now_utc();
    let mut signatures: Vec<(String, Vec<u8>)> = Vec::new();
    let (mut old_roots, mut new_roots) = (Vec::new(), Vec::new());
    for signing in signings {
        let name = signing.signer.as_str().to_owned();
        let armored = signing.sign_for(Purpose::Policy, &bytes)?;
        let verifies = |signers: &AllowedSigners| {
            sign::check_for(
                Purpose::Policy,
                &bytes,
                Some(armored.as_bytes()),
                Some(&name),
                Some(signers),
                now,
            )
        };
        let old = verifies(&signers);
        let new = verifies(&new_signers);
        let old_ok = old.status == SignatureStatus::Verified;
        let new_ok = rotates && new.status == SignatureStatus::Verified;
        if !old_ok && !new_ok {
            return Err(Error::NotARoot {
                signer: name,
                detail: old.detail.unwrap_or_default(),
            });
        }
        if old_ok {
            old_roots.push(name.clone());
        }
        if new_ok {
            new_roots.push(name.clone());
        }
        if !signatures.iter().any(|(n, _)| *n == name) {
            signatures.push((name, armored.into_bytes()));
        }
    }
    let signed_by: Vec<String> = signatures.iter().map(|(n, _)| n.clone()).collect();
    if !signing_policy.threshold_met(old_roots.iter().map(String::as_str)) {
        return Err(Error::Threshold {
            needed: signing_policy.threshold,
            got: old_roots.len(),
        });
    }
    if rotates && !next.threshold_met(new_roots.iter().map(String::as_str)) {
        return Err(Error::NewRoots {
            roots: next.roots.iter().cloned().collect::<Vec<_>>().join(", "),
            needed: next.threshold,
            got: new_roots.len(),
        });
    }
    let rendered = next.allowed_signers();
    let paths: Vec<String> = signatures.iter().map(|(n, _)| signature_path(n)).collect();
    let beside: Vec<(&str, &[u8])> = std::iter::once((SIGNERS_FILE, rendered.as_bytes()))
        .chain(
            paths
                .iter()
                .zip(&signatures)
                .map(|(p, (_, s))| (p.as_str(), s.as_slice())),
        )
        .collect();
    let record = NewRecord {
        file: POLICY_FILE,
        bytes: &bytes,
        message,
    };
    let commit = match store.append_with(refs::TRUST, parent, &record, &beside) {
        Ok(commit) => commit,
        Err(store::Error::Moved { .. }) => return Err(Error::Moved),
        Err(e) => return Err(e.into()),
    };
    Ok(Written {
        commit,
        policy: next.clone(),
        signed_by,
        pinned: None,
    })
}

/// The signature rule every reader uses, and where it came from.
#[derive(Debug, Clone)]
pub struct Trust {
    /// The signers in force: the policy's, else the allowed-signers file's.
    pub allowed: Option<AllowedSigners>,
    /// Whether signatures are required.
    pub require_signed: bool,
    /// The policy, when one is in force: whose verdicts and approvals count.
    pub policy: Option<Verified>,
    /// What is in force, in words (`trust policy <commit> (root SHA256:...)`, `allowed-signers
    /// file`, `no signers: unsigned records pass`).
    pub source: String,
    /// Lines to tell the user once: a root pinned on first use, a signers file that adds
    /// nothing beside a policy.
    pub notes: Vec<String>,
}

/// Decides the rule in force: the repository's policy when it has one (verified; signatures
/// required; roles from it; a `file` given or configured then adds nothing, and a note says
/// so), else `file` with `required` as the caller decided it from flags and config.
///
/// # Errors
///
/// As [`in_force`]: a policy that does not verify is refused, never skipped.
pub fn decide(store: &Store, file: Option<AllowedSigners>, required: bool) -> Result<Trust, Error> {
    let pin = store.config_string(PIN_KEY);
    if pin.is_none()
        && let Some(trusted) = trusts_already(store)
        && let Some((_, Pinning::FirstUse { fingerprint })) =
            verify_log(store, refs::TRUST, None, From::Remembered)?
    {
        return Err(Error::NotPinned {
            fingerprint,
            trusted,
        });
    }
    match in_force(store)? {
        Some((verified, pinning)) => {
            let mut notes = Vec::new();
            if let Pinning::FirstUse { fingerprint } = &pinning {
                notes.push(format!(
                    "trusting the trust policy's root {fingerprint} from now on (pinned as {PIN_KEY}; check it with the repository's owner)"
                ));
            }
            if file.is_some() {
                notes.push(
                    "the trust policy at refs/hpp/trust is in force; the allowed-signers file adds nothing to it".to_owned(),
                );
            }
            Ok(Trust {
                allowed: Some(verified.signers()),
                require_signed: true,
                source: format!(
                    "trust policy {} (version {}, roots {})",
                    &verified.tip.as_str()[..12],
                    verified.seq,
                    verified.roots.join(", ")
                ),
                policy: Some(verified),
                notes,
            })
        }
        None if pin.is_some() => Err(Error::PinnedButMissing {
            fingerprint: pin.unwrap_or_default(),
        }),
        None => Ok(Trust {
            source: match (&file, required) {
                (Some(_), _) => "allowed-signers file".to_owned(),
                (None, true) => "signatures required, no signers known".to_owned(),
                (None, false) => {
                    "no trust policy and no allowed-signers file: unsigned records pass".to_owned()
                }
            },
            allowed: file,
            require_signed: required,
            policy: None,
            notes: Vec::new(),
        }),
    }
}
