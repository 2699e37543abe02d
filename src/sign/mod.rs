//! SSH signatures over hpp records: signing with an OpenSSH key and checking a signature
//! against an allowed-signers file.
//!
//! Implements the reference harness's optional *signature* object (CONCEPTS: signature; anchor
//! behaviour §3.4): an armored SSHSIG in namespace [`NAMESPACE`] over a record's exact bytes,
//! byte-compatible with `ssh-keygen -Y sign -n hpp`, and checked the way
//! `ssh-keygen -Y verify -n hpp -I <signer>` checks it. The allowed-signers format is git's
//! `gpg.ssh.allowedSignersFile` (see [`allowed`]).
//!
//! This module touches no refs and never prints: [`check`] returns a [`SignatureReport`] that
//! the caller stores or renders, and failures are [`Error`] values naming the key or file.
//!
//! Supported signing keys are ed25519 and ECDSA on nistp256/nistp384. RSA keys are refused when
//! signing, because ssh-key 0.6.7 cannot sign with RSA; RSA (and nistp521) signatures made by
//! other tools are refused when checked, because this build does not verify them.

pub mod allowed;
pub mod dsse;
mod repair;
pub mod source;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Serialize;
use sha2::{Digest, Sha256};
use ssh_key::{Algorithm, EcdsaCurve, HashAlg, LineEnding, PrivateKey, PublicKey, SshSig};
use time::OffsetDateTime;

pub use allowed::{AllowedSigners, LineProblem, Refusal};
pub use source::{Key, Signing};

/// The SSHSIG namespace of every hpp signature (`ssh-keygen -Y sign -n hpp`).
pub const NAMESPACE: &str = "hpp";

/// The SSHSIG namespace a person signs their approval of a loop in
/// ([`hpp_core::event_loop::gates::PERSON_NAMESPACE`]); an allowed-signers line that lists it by
/// name (`namespaces="hpp,hpp-human"`) marks its principal as a person.
pub const PERSON_NAMESPACE: &str = hpp_core::event_loop::gates::PERSON_NAMESPACE;

/// What a signature vouches for, which decides its namespace and who may have made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A record (evidence, attestation, decision): namespace [`NAMESPACE`].
    Record,
    /// A person's approval: namespace [`PERSON_NAMESPACE`], from a principal the
    /// allowed-signers file marks as a person ([`AllowedSigners::admit_person`]).
    Person,
    /// A root's signature over a trust policy: namespace [`hpp_core::trust::NAMESPACE`], from a
    /// principal whose allowed-signers line lists it by name (the policy's roots).
    Policy,
}

impl Purpose {
    /// The SSHSIG namespace.
    pub fn namespace(self) -> &'static str {
        match self {
            Self::Record => NAMESPACE,
            Self::Person => PERSON_NAMESPACE,
            Self::Policy => hpp_core::trust::NAMESPACE,
        }
    }
}

/// The environment variable the CLI reads a signing key's passphrase from and passes to
/// [`load_key`] (the library itself never reads the environment).
pub const PASSPHRASE_ENV: &str = "HPP_SIGNING_PASSPHRASE";

/// The longest principal a [`SignerId`] may be, in bytes.
const SIGNER_MAX_LEN: usize = 128;

/// Errors of the signing layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The signing key file does not exist.
    #[error("signing key not found: {}", path.display())]
    KeyNotFound {
        /// The key file.
        path: PathBuf,
    },
    /// The signing key file exists but cannot be read.
    #[error("cannot read the signing key {}", path.display())]
    ReadKey {
        /// The key file.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// The signing key file is not an OpenSSH private key.
    #[error(
        "{} is not an OpenSSH private key (expected \"-----BEGIN OPENSSH PRIVATE KEY-----\", as \
         ssh-keygen writes)",
        path.display()
    )]
    NotAPrivateKey {
        /// The key file.
        path: PathBuf,
        /// What the parser reported.
        #[source]
        source: ssh_key::Error,
    },
    /// The signing key is encrypted and no passphrase was supplied.
    #[error(
        "signing key {} is encrypted, and encrypted keys are not supported yet: use an \
         unencrypted key (for example a dedicated signing key made with `ssh-keygen -t ed25519 \
         -N ''`), or set {PASSPHRASE_ENV} to its passphrase",
        path.display()
    )]
    EncryptedKey {
        /// The key file.
        path: PathBuf,
    },
    /// The passphrase supplied for an encrypted key does not decrypt it.
    #[error("the passphrase in {PASSPHRASE_ENV} does not decrypt the signing key {}", path.display())]
    WrongPassphrase {
        /// The key file.
        path: PathBuf,
    },
    /// The encrypted key could not be decrypted for a reason other than the passphrase: a
    /// cipher this build does not support, or an ECDSA key whose scalar ssh-key 0.6.7 cannot
    /// read (about 1 in 1,000 nistp256 keys; the workaround for unencrypted keys cannot reach
    /// inside an encrypted one).
    #[error(
        "cannot decrypt the signing key {} (if it is an ECDSA key, ssh-key 0.6.7 cannot read \
         some of those once decrypted: use an unencrypted or an ed25519 key)",
        path.display()
    )]
    Decrypt {
        /// The key file.
        path: PathBuf,
        /// What the decryption reported.
        #[source]
        source: ssh_key::Error,
    },
    /// The key's algorithm cannot sign here (RSA, DSA, nistp521, security keys).
    #[error("{}", unsupported_key_message(algorithm))]
    UnsupportedKey {
        /// The key's algorithm.
        algorithm: Algorithm,
    },
    /// Making or encoding the signature failed (for example with a key still encrypted).
    #[error("cannot make the SSH signature")]
    Sign {
        /// What ssh-key reported.
        #[source]
        source: ssh_key::Error,
    },
    /// A principal does not match `^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$`.
    #[error(
        "invalid signer {value:?}: a signer is 1 to 128 characters from A-Z a-z 0-9 . _ : @ + -, \
         starting with a letter or digit"
    )]
    InvalidSigner {
        /// The rejected text.
        value: String,
    },
    /// The allowed-signers file does not exist.
    #[error("allowed signers file not found: {}", path.display())]
    AllowedSignersNotFound {
        /// The file.
        path: PathBuf,
    },
    /// The allowed-signers file exists but cannot be read.
    #[error("cannot read the allowed signers file {}", path.display())]
    ReadAllowedSigners {
        /// The file.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        source: std::io::Error,
    },
    /// A key in ssh-agent could not sign through `ssh-keygen -Y sign`.
    #[error("cannot sign with the key of {origin}: {reason}")]
    Agent {
        /// Where the key was named.
        origin: String,
        /// Why, in a sentence.
        reason: String,
    },
}

/// Returns the sentence for [`Error::UnsupportedKey`].
fn unsupported_key_message(algorithm: &Algorithm) -> String {
    const USE: &str =
        "use an ed25519 key (ssh-keygen -t ed25519) or an ECDSA nistp256/nistp384 key";
    match algorithm {
        Algorithm::Rsa { .. } => format!(
            "RSA signing keys are not supported: the ssh-key 0.6.7 library git-hpp uses cannot sign \
             with RSA; {USE}"
        ),
        other => format!("{other} signing keys are not supported; {USE}"),
    }
}

/// A validated signer principal: 1 to 128 characters from `A-Za-z0-9._:@+-`, starting with a
/// letter or digit (the reference's `^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$`).
///
/// It is the `-I` principal of `ssh-keygen -Y verify`, looked up in the allowed-signers file.
///
/// ```
/// use git_hpp::sign::SignerId;
/// let alice: SignerId = "alice@example.com".parse().expect("a valid principal");
/// assert_eq!(alice.to_string(), "alice@example.com");
/// assert!("-alice".parse::<SignerId>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct SignerId(String);

impl SignerId {
    /// Returns the principal as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for SignerId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bytes = s.as_bytes();
        let valid = !bytes.is_empty()
            && bytes.len() <= SIGNER_MAX_LEN
            && bytes[0].is_ascii_alphanumeric()
            && bytes
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"._:@+-".contains(&b));
        if valid {
            Ok(SignerId(s.to_owned()))
        } else {
            Err(Error::InvalidSigner {
                value: s.to_owned(),
            })
        }
    }
}

impl fmt::Display for SignerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for SignerId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl<'de> serde::Deserialize<'de> for SignerId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Reads an OpenSSH private key file (as `ssh-keygen` writes it) for [`sign`].
///
/// An encrypted key is decrypted with `passphrase`; without one it is refused with
/// [`Error::EncryptedKey`]. The CLI passes the value of [`PASSPHRASE_ENV`] here. A passphrase
/// given for an unencrypted key is ignored.
///
/// # Errors
///
/// [`Error::KeyNotFound`], [`Error::ReadKey`], [`Error::NotAPrivateKey`],
/// [`Error::EncryptedKey`], [`Error::WrongPassphrase`] or [`Error::Decrypt`], each naming
/// `path`.
pub fn load_key(path: &Path, passphrase: Option<&str>) -> Result<PrivateKey, Error> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::KeyNotFound {
                path: path.to_owned(),
            });
        }
        Err(source) => {
            return Err(Error::ReadKey {
                path: path.to_owned(),
                source,
            });
        }
    };
    let key = match PrivateKey::from_openssh(&bytes) {
        Ok(key) => key,
        // ssh-key 0.6.7 cannot read some ECDSA keys ssh-keygen writes (a scalar with leading
        // zero bytes); retry with the scalar padded (see `repair`).
        Err(source) => repair::pad_ecdsa_scalar(&bytes)
            .and_then(|blob| PrivateKey::from_bytes(&blob).ok())
            .ok_or_else(|| Error::NotAPrivateKey {
                path: path.to_owned(),
                source,
            })?,
    };
    if !key.is_encrypted() {
        return Ok(key);
    }
    let Some(passphrase) = passphrase else {
        return Err(Error::EncryptedKey {
            path: path.to_owned(),
        });
    };
    key.decrypt(passphrase).map_err(|source| match source {
        // A wrong passphrase derives a wrong key, and the decrypted check integers differ.
        ssh_key::Error::Crypto => Error::WrongPassphrase {
            path: path.to_owned(),
        },
        source => Error::Decrypt {
            path: path.to_owned(),
            source,
        },
    })
}

/// Signs `bytes` in namespace [`NAMESPACE`] with SHA-512 and returns the armored signature
/// (`-----BEGIN SSH SIGNATURE-----`, LF line endings), as `ssh-keygen -Y sign -n hpp` writes it.
///
/// # Errors
///
/// [`Error::UnsupportedKey`] for keys other than ed25519 and ECDSA nistp256/nistp384, and
/// [`Error::Sign`] when signing fails (for example with a key that is still encrypted).
pub fn sign(key: &PrivateKey, bytes: &[u8]) -> Result<String, Error> {
    sign_for(key, Purpose::Record, bytes)
}

/// As [`sign`], in the namespace of `purpose`.
///
/// # Errors
///
/// As [`sign`].
pub fn sign_for(key: &PrivateKey, purpose: Purpose, bytes: &[u8]) -> Result<String, Error> {
    match key.algorithm() {
        Algorithm::Ed25519
        | Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP256 | EcdsaCurve::NistP384,
        } => {}
        algorithm => return Err(Error::UnsupportedKey { algorithm }),
    }
    key.sign(purpose.namespace(), HashAlg::Sha512, bytes)
        .and_then(|signature| signature.to_pem(LineEnding::LF))
        .map_err(|source| Error::Sign { source })
}

/// Generates an ed25519 key pair: writes the private key to `path` (OpenSSH format, mode 600,
/// unencrypted) and returns the public key line (`ssh-ed25519 AAAA...`), as
/// `ssh-keygen -t ed25519 -N '' -f PATH` would. Used by the tour for a throwaway key.
pub fn generate_key(path: &Path) -> Result<String, Error> {
    let key = PrivateKey::random(&mut ssh_key::rand_core::OsRng, ssh_key::Algorithm::Ed25519)
        .map_err(|source| Error::Sign { source })?;
    key.write_openssh_file(path, ssh_key::LineEnding::LF)
        .map_err(|source| Error::Sign { source })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
            |source| Error::ReadKey {
                path: path.to_owned(),
                source,
            },
        )?;
    }
    key.public_key()
        .to_openssh()
        .map_err(|source| Error::Sign { source })
}

/// The outcome of checking a record's signature ([`check`]), serialized as the reference's
/// signature report (`{"status":…,"signer":…,"sha256":…,"detail":…}`, absent fields left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignatureReport {
    /// What the check concluded.
    pub status: SignatureStatus,
    /// The principal the record names, when it is signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// Lowercase hex SHA-256 of the signed bytes, when verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Why the signature was refused or not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl SignatureReport {
    /// Tells whether the signature was verified.
    pub fn is_verified(&self) -> bool {
        self.status == SignatureStatus::Verified
    }

    fn new(status: SignatureStatus, signer: Option<&str>, detail: Option<String>) -> Self {
        SignatureReport {
            status,
            signer: signer.map(str::to_owned),
            sha256: None,
            detail,
        }
    }

    pub(crate) fn refused(signer: Option<&str>, detail: impl Into<String>) -> Self {
        Self::new(SignatureStatus::Refused, signer, Some(detail.into()))
    }

    pub(crate) fn not_signed() -> Self {
        Self::new(SignatureStatus::NotSigned, None, None)
    }

    pub(crate) fn not_verified(signer: Option<&str>, detail: impl Into<String>) -> Self {
        Self::new(SignatureStatus::NotVerified, signer, Some(detail.into()))
    }

    pub(crate) fn verified(signer: &str, bytes: &[u8]) -> Self {
        SignatureReport {
            status: SignatureStatus::Verified,
            signer: Some(signer.to_owned()),
            sha256: Some(format!("{:x}", Sha256::digest(bytes))),
            detail: None,
        }
    }
}

/// The verdict of a signature check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignatureStatus {
    /// The record carries no signature and no allowed-signers file was given.
    NotSigned,
    /// The record is signed but no allowed-signers file was given, so nothing was checked.
    NotVerified,
    /// The signature is good and an allowed-signers entry admits the signer's key.
    Verified,
    /// The signature, its signer or its absence is not acceptable; the detail says why.
    Refused,
}

impl SignatureStatus {
    /// Returns the status as the reference spells it (`not-signed`, `verified`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotSigned => "not-signed",
            Self::NotVerified => "not-verified",
            Self::Verified => "verified",
            Self::Refused => "refused",
        }
    }
}

impl fmt::Display for SignatureStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Checks the signature the Python harness embeds in a record (`{"scheme": "sshsig",
/// "namespace": "hpp", "signer", "sha256", "signature"}`, made over `bytes`) against the allowed
/// signers, as the reference does: an unknown form or a `sha256` that is not the bytes' is
/// refused before the signature is read; then as [`check`].
pub fn check_embedded(
    bytes: &[u8],
    signature: Option<&serde_json::Value>,
    allowed: Option<&AllowedSigners>,
) -> SignatureReport {
    let field = |key: &str| {
        signature
            .and_then(|o| o.get(key))
            .and_then(serde_json::Value::as_str)
    };
    let signer = field("signer");
    if signature.is_some() {
        if field("scheme") != Some("sshsig") || field("namespace") != Some(NAMESPACE) {
            return SignatureReport::refused(
                signer,
                "unknown signature form; expected sshsig in namespace hpp",
            );
        }
        let digest = format!("{:x}", Sha256::digest(bytes));
        if field("sha256") != Some(digest.as_str()) {
            return SignatureReport::refused(
                signer,
                "the record's bytes changed after it was signed",
            );
        }
    }
    check(
        bytes,
        field("signature").map(str::as_bytes),
        signer,
        allowed,
        OffsetDateTime::now_utc(),
    )
}

/// Checks a record's signature the way `ssh-keygen -Y verify -f <allowed> -I <signer> -n hpp`
/// would, at time `at`.
///
/// - `bytes`: the exact bytes that were signed;
/// - `armored`: the armored signature, if the record has one;
/// - `signer`: the principal the record names;
/// - `allowed`: the allowed-signers file, or `None` when none was given;
/// - `at`: the verification time, compared with `valid-after`/`valid-before`.
///
/// Statuses: no signature is `not-signed` without a file and `refused` ("the record is not
/// signed") with one; a signature is first checked over `bytes` with the key it carries (a
/// forged or garbled one is `refused` either way); then without a file it is `not-verified`
/// (the key's fingerprint in the detail), and with a file `verified` (with `sha256` of `bytes`)
/// or `refused` with the reason. A signature whose record
/// names no valid signer is refused whether or not a file was given.
pub fn check(
    bytes: &[u8],
    armored: Option<&[u8]>,
    signer: Option<&str>,
    allowed: Option<&AllowedSigners>,
    at: OffsetDateTime,
) -> SignatureReport {
    check_for(Purpose::Record, bytes, armored, signer, allowed, at)
}

/// As [`check`], for a signature made for `purpose`: a person's approval is in namespace
/// [`PERSON_NAMESPACE`] and verifies only for a principal the allowed-signers file marks as a
/// person ([`AllowedSigners::admit_person`]).
pub fn check_for(
    purpose: Purpose,
    bytes: &[u8],
    armored: Option<&[u8]>,
    signer: Option<&str>,
    allowed: Option<&AllowedSigners>,
    at: OffsetDateTime,
) -> SignatureReport {
    let namespace = purpose.namespace();
    let Some(armored) = armored else {
        return match allowed {
            None => SignatureReport::new(SignatureStatus::NotSigned, None, None),
            Some(_) => SignatureReport::refused(signer, "the record is not signed"),
        };
    };
    let Some(signer) = signer else {
        return SignatureReport::refused(
            None,
            "the record is signed but names no signer; the signature cannot be checked",
        );
    };
    let signer_id = match signer.parse::<SignerId>() {
        Ok(id) => id,
        Err(e) => return SignatureReport::refused(Some(signer), e.to_string()),
    };
    let Ok(signature) = SshSig::from_pem(armored) else {
        return SignatureReport::refused(Some(signer), "the signature is not an SSH signature");
    };
    let wrong_form = format!("unknown signature form; expected sshsig in namespace {namespace}");
    if signature.namespace() != namespace {
        return SignatureReport::refused(Some(signer), wrong_form);
    }
    // The same order as ssh-keygen: the signature itself first, then who may have made it.
    let public = PublicKey::new(signature.public_key().clone(), "");
    match public.verify(namespace, bytes, &signature) {
        Ok(()) => {}
        Err(ssh_key::Error::AlgorithmUnsupported { algorithm }) => {
            return SignatureReport::refused(
                Some(signer),
                format!("the signature uses {algorithm} keys, which git-hpp cannot verify"),
            );
        }
        Err(ssh_key::Error::Namespace) => {
            return SignatureReport::refused(Some(signer), wrong_form);
        }
        Err(_) => {
            return SignatureReport::refused(
                Some(signer),
                "the record's bytes changed after it was signed",
            );
        }
    }
    // Without allowed signers the signature is still checked over the bytes (a forged or
    // garbled one is refused); only who made it cannot be told.
    let Some(allowed) = allowed else {
        return SignatureReport::new(
            SignatureStatus::NotVerified,
            Some(signer),
            Some(format!(
                "signed with key {}; no allowed-signers file was given, so whether {signer} holds that key was not checked",
                PublicKey::new(signature.public_key().clone(), "").fingerprint(Default::default())
            )),
        );
    };
    let admitted = match purpose {
        Purpose::Record => allowed.admit(signer_id.as_str(), signature.public_key(), namespace, at),
        Purpose::Person => allowed.admit_person(signer_id.as_str(), signature.public_key(), at),
        Purpose::Policy => {
            allowed.admit_named(signer_id.as_str(), signature.public_key(), namespace, at)
        }
    };
    match admitted {
        Ok(()) => SignatureReport {
            status: SignatureStatus::Verified,
            signer: Some(signer.to_owned()),
            sha256: Some(format!("{:x}", Sha256::digest(bytes))),
            detail: None,
        },
        Err(refusal) => SignatureReport::refused(Some(signer), refusal.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssh_key::private::Ed25519Keypair;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2025-06-01 12:00 UTC);
    const RECORD: &[u8] = b"{\"schema\":\"hpp.evidence/v1\"}";

    fn key(seed: u8) -> PrivateKey {
        PrivateKey::from(Ed25519Keypair::from_seed(&[seed; 32]))
    }

    fn allowed_for(principal: &str, seed: u8, options: &str) -> AllowedSigners {
        let public = key(seed)
            .public_key()
            .to_openssh()
            .expect("an ed25519 key encodes");
        AllowedSigners::parse(&format!("{principal} {options} {public}\n"))
    }

    fn signed(seed: u8) -> String {
        sign(&key(seed), RECORD).expect("ed25519 signs")
    }

    fn detail(report: &SignatureReport) -> &str {
        report.detail.as_deref().expect("the report has a detail")
    }

    #[test]
    fn control_a_tampered_record_is_refused() {
        let allowed = allowed_for("alice", 1, "");
        let sig = signed(1);
        let good = check(
            RECORD,
            Some(sig.as_bytes()),
            Some("alice"),
            Some(&allowed),
            NOW,
        );
        assert_eq!(good.status, SignatureStatus::Verified);
        let bad = check(
            b"{}",
            Some(sig.as_bytes()),
            Some("alice"),
            Some(&allowed),
            NOW,
        );
        assert_eq!(bad.status, SignatureStatus::Refused);
        assert_eq!(
            detail(&bad),
            "the record's bytes changed after it was signed"
        );
    }

    #[test]
    fn a_verified_report_carries_signer_and_sha256() {
        let allowed = allowed_for("alice@example.com", 1, "");
        let sig = signed(1);
        let report = check(
            RECORD,
            Some(sig.as_bytes()),
            Some("alice@example.com"),
            Some(&allowed),
            NOW,
        );
        assert!(report.is_verified());
        assert_eq!(
            serde_json::to_value(&report).expect("serializable"),
            serde_json::json!({
                "status": "verified",
                "signer": "alice@example.com",
                "sha256": format!("{:x}", Sha256::digest(RECORD)),
            })
        );
    }

    #[test]
    fn the_signature_is_armored_sshsig_in_namespace_hpp() {
        let sig = signed(1);
        assert!(sig.starts_with("-----BEGIN SSH SIGNATURE-----\n"));
        assert!(sig.ends_with("-----END SSH SIGNATURE-----\n"));
        assert!(!sig.contains('\r'));
        let parsed = SshSig::from_pem(&sig).expect("parses back");
        assert_eq!(parsed.namespace(), "hpp");
        assert_eq!(parsed.hash_alg(), HashAlg::Sha512);
        assert!(sig.lines().all(|line| line.len() <= 70));
    }

    #[test]
    fn statuses_without_an_allowed_signers_file() {
        let unsigned = check(RECORD, None, None, None, NOW);
        assert_eq!(
            serde_json::to_value(&unsigned).expect("serializable"),
            serde_json::json!({"status": "not-signed"})
        );
        let sig = signed(1);
        let unchecked = check(RECORD, Some(sig.as_bytes()), Some("alice"), None, NOW);
        assert_eq!(unchecked.status, SignatureStatus::NotVerified);
        assert_eq!(unchecked.signer.as_deref(), Some("alice"));
        let fingerprint = key(1)
            .public_key()
            .fingerprint(Default::default())
            .to_string();
        assert!(detail(&unchecked).contains(&fingerprint), "{unchecked:?}");
        assert!(
            detail(&unchecked).contains("was not checked"),
            "{unchecked:?}"
        );
    }

    #[test]
    fn control_a_forged_signature_is_refused_even_without_an_allowed_signers_file() {
        let sig = signed(1);
        let other = check(
            b"other bytes",
            Some(sig.as_bytes()),
            Some("alice"),
            None,
            NOW,
        );
        assert_eq!(other.status, SignatureStatus::Refused);
        assert_eq!(
            detail(&other),
            "the record's bytes changed after it was signed"
        );
        let garbage = check(RECORD, Some(b"not a signature"), Some("alice"), None, NOW);
        assert_eq!(garbage.status, SignatureStatus::Refused);
    }

    #[test]
    fn an_unsigned_record_is_refused_when_signers_are_required() {
        let allowed = allowed_for("alice", 1, "");
        let report = check(RECORD, None, None, Some(&allowed), NOW);
        assert_eq!(report.status, SignatureStatus::Refused);
        assert_eq!(detail(&report), "the record is not signed");
    }

    #[test]
    fn a_signature_needs_a_valid_signer() {
        let allowed = allowed_for("alice", 1, "");
        let sig = signed(1);
        let missing = check(RECORD, Some(sig.as_bytes()), None, Some(&allowed), NOW);
        assert_eq!(missing.status, SignatureStatus::Refused);
        assert!(detail(&missing).contains("names no signer"));
        for bad in [
            "",
            "-alice",
            "alice bob",
            "alice,bob",
            "al*ce",
            &"a".repeat(129),
        ] {
            let report = check(RECORD, Some(sig.as_bytes()), Some(bad), None, NOW);
            assert_eq!(report.status, SignatureStatus::Refused, "signer {bad:?}");
            assert!(
                detail(&report).starts_with("invalid signer"),
                "signer {bad:?}"
            );
        }
    }

    #[test]
    fn refusal_details_name_the_reason() {
        let sig = signed(1);
        let sig = Some(sig.as_bytes());
        let cases = [
            (
                allowed_for("alice", 2, ""),
                "the signature names no valid signer",
            ),
            (
                allowed_for("bob", 1, ""),
                "the signature names no valid signer",
            ),
            (
                allowed_for("alice", 1, "namespaces=\"git\""),
                "the allowed-signers entry on line 1 does not allow namespace \"hpp\"",
            ),
            (
                allowed_for("alice", 1, "valid-before=\"20200101Z\""),
                "the allowed-signers entry on line 1 expired at 2020-01-01T00:00:00Z",
            ),
            (
                allowed_for("alice", 1, "valid-after=\"20300101\""),
                "the allowed-signers entry on line 1 is not valid until 2030-01-01T00:00:00Z",
            ),
            (
                allowed_for("alice", 1, "cert-authority"),
                "cert-authority entries are not supported",
            ),
            (
                allowed_for("alice", 1, "verify-required"),
                "line 1 of the allowed-signers file is malformed: unknown option \"verify-required\"",
            ),
        ];
        for (allowed, expected) in cases {
            let report = check(RECORD, sig, Some("alice"), Some(&allowed), NOW);
            assert_eq!(report.status, SignatureStatus::Refused);
            assert_eq!(detail(&report), expected);
            assert_eq!(report.sha256, None);
        }
    }

    #[test]
    fn a_foreign_namespace_or_non_ssh_blob_is_refused() {
        let allowed = allowed_for("alice", 1, "");
        let git_sig = key(1)
            .sign("git", HashAlg::Sha512, RECORD)
            .and_then(|s| s.to_pem(LineEnding::LF))
            .expect("signs");
        let report = check(
            RECORD,
            Some(git_sig.as_bytes()),
            Some("alice"),
            Some(&allowed),
            NOW,
        );
        assert_eq!(
            detail(&report),
            "unknown signature form; expected sshsig in namespace hpp"
        );
        let pgp = b"-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----\n";
        let report = check(RECORD, Some(pgp), Some("alice"), Some(&allowed), NOW);
        assert_eq!(detail(&report), "the signature is not an SSH signature");
    }

    #[test]
    fn sha256_signatures_verify_too() {
        let allowed = allowed_for("alice", 1, "");
        let sig = key(1)
            .sign(NAMESPACE, HashAlg::Sha256, RECORD)
            .and_then(|s| s.to_pem(LineEnding::LF))
            .expect("signs");
        let report = check(
            RECORD,
            Some(sig.as_bytes()),
            Some("alice"),
            Some(&allowed),
            NOW,
        );
        assert!(report.is_verified(), "{report:?}");
    }

    #[test]
    fn signer_ids_follow_the_reference_pattern() {
        for good in ["a", "alice@example.com", "A1._:@+-", &"a".repeat(128)] {
            let id: SignerId = good.parse().expect("valid");
            assert_eq!(id.as_str(), good);
            assert_eq!(
                serde_json::to_string(&id).expect("serializable"),
                format!("\"{good}\"")
            );
        }
        for bad in ["", ".a", "a b", "a/b", "é", &"a".repeat(129)] {
            assert!(bad.parse::<SignerId>().is_err(), "{bad:?} must be refused");
        }
        assert!(serde_json::from_str::<SignerId>("\"-x\"").is_err());
        assert_eq!(
            serde_json::from_str::<SignerId>("\"x\"").expect("valid"),
            SignerId("x".into())
        );
    }

    #[test]
    fn load_key_names_the_path_when_it_fails() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let missing = dir.path().join("missing");
        let err = load_key(&missing, None).expect_err("missing");
        assert!(matches!(err, Error::KeyNotFound { .. }));
        assert!(err.to_string().contains(&missing.display().to_string()));

        let public = dir.path().join("key.pub");
        std::fs::write(&public, key(1).public_key().to_openssh().expect("encodes"))
            .expect("writable");
        let err = load_key(&public, None).expect_err("a public key");
        assert!(matches!(err, Error::NotAPrivateKey { .. }));
        assert!(err.to_string().contains(&public.display().to_string()));

        let err = load_key(dir.path(), None).expect_err("a directory");
        assert!(matches!(err, Error::ReadKey { .. }), "{err:?}");

        let private = dir.path().join("key");
        std::fs::write(
            &private,
            key(1)
                .to_openssh(LineEnding::LF)
                .expect("encodes")
                .as_bytes(),
        )
        .expect("writable");
        let loaded = load_key(&private, Some("ignored")).expect("an unencrypted key");
        assert_eq!(loaded.public_key(), key(1).public_key());
    }

    #[test]
    fn unsupported_key_errors_say_what_to_use() {
        let rsa = unsupported_key_message(&Algorithm::Rsa { hash: None });
        assert!(rsa.contains("cannot sign with RSA"), "{rsa}");
        assert!(rsa.contains("ed25519"), "{rsa}");
        let p521 = Error::UnsupportedKey {
            algorithm: Algorithm::Ecdsa {
                curve: EcdsaCurve::NistP521,
            },
        };
        assert!(
            p521.to_string()
                .starts_with("ecdsa-sha2-nistp521 signing keys are not supported")
        );
    }

    #[test]
    fn the_encrypted_key_error_says_what_to_do() {
        let text = Error::EncryptedKey {
            path: PathBuf::from("/k"),
        }
        .to_string();
        assert!(
            text.contains("encrypted keys are not supported yet"),
            "{text}"
        );
        assert!(text.contains("use an unencrypted key"), "{text}");
        assert!(text.contains(PASSPHRASE_ENV), "{text}");
    }
}
