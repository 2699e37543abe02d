//! Where a signature comes from: a private key file, read and used in Rust, or a public key
//! whose private half is in ssh-agent (or on a security key behind it), signed through
//! `ssh-keygen -Y sign` exactly as git does for `gpg.format=ssh`.
//!
//! Why `ssh-keygen` for the agent: it is what git itself runs for SSH signing, so every key
//! git users sign commits with (agent keys, FIDO `sk-` keys, keys in a hardware token) signs
//! here the same way, with the same prompts; and its output is checked in Rust
//! ([`super::check`]) before it is stored, so a signature that would not verify is never kept.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ssh_key::{PrivateKey, PublicKey, SshSig};

use super::{Error, Purpose, SignerId};
use crate::process;

/// How long `ssh-keygen -Y sign` may take (a security key waits for a touch).
const AGENT_TIMEOUT: Duration = Duration::from_secs(120);

/// A key to sign with.
#[derive(Debug, Clone)]
pub enum Key {
    /// A private key, read from its file.
    File(Box<PrivateKey>),
    /// A public key whose private half ssh-agent holds (`SSH_AUTH_SOCK`).
    Agent {
        /// The public key, as an OpenSSH line.
        public: PublicKey,
        /// Where it was named (a file, or git config `user.signingKey`), for messages.
        origin: String,
    },
}

/// A key and the principal it signs as.
#[derive(Debug, Clone)]
pub struct Signing {
    /// The key.
    pub key: Key,
    /// The principal recorded as the signer.
    pub signer: SignerId,
}

impl Signing {
    /// Signs `bytes` in namespace [`super::NAMESPACE`] and returns the armored signature.
    ///
    /// # Errors
    ///
    /// What [`super::sign`] refuses for a key file; for an agent key, [`Error::Agent`] when
    /// `ssh-keygen` cannot sign (no agent, the key not in it) or returns a signature that does
    /// not verify.
    pub fn sign(&self, bytes: &[u8]) -> Result<String, Error> {
        self.sign_for(Purpose::Record, bytes)
    }

    /// Returns the public half of the key.
    pub fn public_key(&self) -> PublicKey {
        match &self.key {
            Key::File(key) => key.public_key().clone(),
            Key::Agent { public, .. } => public.clone(),
        }
    }

    /// As [`Self::sign`], in the namespace of `purpose`.
    ///
    /// # Errors
    ///
    /// As [`Self::sign`].
    pub fn sign_for(&self, purpose: Purpose, bytes: &[u8]) -> Result<String, Error> {
        match &self.key {
            Key::File(key) => super::sign_for(key, purpose, bytes),
            Key::Agent { public, origin } => sign_with_agent(public, origin, purpose, bytes),
        }
    }
}

/// Reads the key at `path`: a private key (decrypted with `passphrase` when it is encrypted), or
/// a public key, which is then used through ssh-agent.
///
/// # Errors
///
/// As [`super::load_key`], when the file is neither a private nor a public key.
pub fn load(path: &Path, passphrase: Option<&str>) -> Result<Key, Error> {
    if let Ok(text) = std::fs::read_to_string(path)
        && let Ok(public) = PublicKey::from_openssh(text.trim())
    {
        return Ok(Key::Agent {
            public,
            origin: path.display().to_string(),
        });
    }
    super::load_key(path, passphrase).map(|key| Key::File(Box::new(key)))
}

/// Reads git's `user.signingKey` as git does for `gpg.format=ssh`: `key::<public key>` is a key
/// literal (in ssh-agent); anything else is a path (`~/` from `home`, relative from `base`) to
/// a private key or a public key.
///
/// # Errors
///
/// As [`load`]; a literal that is not a public key is [`Error::Agent`].
pub fn from_git_config(
    value: &str,
    home: &Path,
    base: &Path,
    passphrase: Option<&str>,
) -> Result<Key, Error> {
    if let Some(literal) = value.strip_prefix("key::") {
        let public = PublicKey::from_openssh(literal.trim()).map_err(|e| Error::Agent {
            origin: "git config user.signingKey".into(),
            reason: format!("key:: is not followed by a public key: {e}"),
        })?;
        return Ok(Key::Agent {
            public,
            origin: "git config user.signingKey".into(),
        });
    }
    let path: PathBuf = match value.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => base.join(value),
    };
    load(&path, passphrase)
}

fn sign_with_agent(
    public: &PublicKey,
    origin: &str,
    purpose: Purpose,
    bytes: &[u8],
) -> Result<String, Error> {
    let agent = |reason: String| Error::Agent {
        origin: origin.to_owned(),
        reason,
    };
    let dir = tempfile::Builder::new()
        .prefix("hpp-sign-")
        .tempdir()
        .map_err(|e| agent(format!("cannot prepare the public key for ssh-keygen: {e}")))?;
    let key_file = dir.path().join("key.pub");
    let line = public
        .to_openssh()
        .map_err(|e| agent(format!("cannot write the public key: {e}")))?;
    std::fs::write(&key_file, format!("{line}\n"))
        .map_err(|e| agent(format!("cannot prepare the public key for ssh-keygen: {e}")))?;
    let argv: Vec<String> = vec![
        "ssh-keygen".into(),
        "-q".into(),
        "-Y".into(),
        "sign".into(),
        "-n".into(),
        purpose.namespace().into(),
        "-f".into(),
        key_file.display().to_string(),
    ];
    let finished = process::run_bounded(&process::Request {
        argv: &argv,
        cwd: dir.path(),
        timeout: AGENT_TIMEOUT,
        stdin: Some(bytes),
        env: &[],
    })
    .map_err(|e| agent(format!("cannot run ssh-keygen: {e}")))?;
    if finished.exit_code != Some(0) {
        let why = process::stderr_tail(&finished.stderr, 300);
        return Err(agent(if why.is_empty() {
            "ssh-keygen -Y sign failed: is ssh-agent running (SSH_AUTH_SOCK) with this key added?"
                .to_owned()
        } else {
            format!("ssh-keygen -Y sign failed: {why}")
        }));
    }
    let armored = String::from_utf8_lossy(&finished.stdout).into_owned();
    let signature = SshSig::from_pem(armored.as_bytes())
        .map_err(|e| agent(format!("ssh-keygen returned no SSH signature: {e}")))?;
    if signature.public_key() != public.key_data()
        || public
            .verify(purpose.namespace(), bytes, &signature)
            .is_err()
    {
        return Err(agent(
            "ssh-keygen returned a signature that does not verify with the key named".into(),
        ));
    }
    Ok(armored)
}
