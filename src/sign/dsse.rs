//! DSSE signatures with the record's own SSH key, for in-toto envelopes
//! ([`hpp_core::intoto`]): made beside the SSHSIG at the same moment, so exporting needs no key
//! and a stock DSSE verifier checks them with the public key alone.
//!
//! The signature covers the envelope's PAE, in the forms securesystemslib verifies: raw
//! Ed25519 (scheme `ed25519`) for ed25519 keys, DER ECDSA over SHA-256 / SHA-384 (schemes
//! `ecdsa-sha2-nistp256` / `ecdsa-sha2-nistp384`) for nistp256 / nistp384 keys. The keyid is
//! the key's SSH fingerprint (`SHA256:...`, as `ssh-keygen -l` prints it).
//!
//! A key held only by ssh-agent cannot make one: `ssh-keygen -Y sign` wraps every signature in
//! SSHSIG's own signed data, never the PAE. Such a record is exported unsigned, and says so.

use hpp_core::intoto::{self, Envelope};
use signature::{Signer, Verifier};
use ssh_key::public::KeyData;
use ssh_key::{Algorithm, EcdsaCurve, HashAlg, PrivateKey, PublicKey};

use super::source::Key;
use super::{Error, SignatureReport, Signing};

/// The DSSE keyid of a key: its SSH SHA-256 fingerprint.
pub fn keyid(key: &KeyData) -> String {
    key.fingerprint(HashAlg::Sha256).to_string()
}

/// Signs `pae` with `key`: raw Ed25519, or DER ECDSA (nistp256 with SHA-256, nistp384 with
/// SHA-384).
///
/// # Errors
///
/// [`Error::UnsupportedKey`] for other keys, [`Error::Sign`] when signing fails.
pub fn sign_pae(key: &PrivateKey, pae: &[u8]) -> Result<Vec<u8>, Error> {
    let signed = |key: &PrivateKey| {
        key.try_sign(pae).map_err(|_| Error::Sign {
            source: ssh_key::Error::Crypto,
        })
    };
    match key.algorithm() {
        Algorithm::Ed25519 => Ok(signed(key)?.as_bytes().to_vec()),
        Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP256,
        } => {
            let sig = p256::ecdsa::Signature::try_from(&signed(key)?)
                .map_err(|source| Error::Sign { source })?;
            Ok(sig.to_der().as_bytes().to_vec())
        }
        Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP384,
        } => {
            let sig = p384::ecdsa::Signature::try_from(&signed(key)?)
                .map_err(|source| Error::Sign { source })?;
            Ok(sig.to_der().as_bytes().to_vec())
        }
        algorithm => Err(Error::UnsupportedKey { algorithm }),
    }
}

/// Tells whether `sig` (as [`sign_pae`] makes it) is `key`'s signature over `pae`.
pub fn verify_pae(key: &KeyData, pae: &[u8], sig: &[u8]) -> bool {
    let ssh = match key.algorithm() {
        Algorithm::Ed25519 => ssh_key::Signature::new(Algorithm::Ed25519, sig.to_vec()).ok(),
        Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP256,
        } => p256::ecdsa::Signature::from_der(sig)
            .ok()
            .and_then(|s| ssh_key::Signature::try_from(s).ok()),
        Algorithm::Ecdsa {
            curve: EcdsaCurve::NistP384,
        } => p384::ecdsa::Signature::from_der(sig)
            .ok()
            .and_then(|s| ssh_key::Signature::try_from(s).ok()),
        _ => None,
    };
    ssh.is_some_and(|ssh| key.verify(pae, &ssh).is_ok())
}

impl Signing {
    /// Wraps `statement` (its payload bytes) in a DSSE envelope signed with this key, or `None`
    /// when the key is in ssh-agent (see the module's note).
    ///
    /// # Errors
    ///
    /// As [`sign_pae`].
    pub fn envelope(&self, statement: &[u8]) -> Result<Option<Envelope>, Error> {
        let Key::File(key) = &self.key else {
            return Ok(None);
        };
        let mut envelope = Envelope::unsigned(statement);
        let sig = sign_pae(key, &intoto::pae(intoto::PAYLOAD_TYPE, statement))?;
        envelope.signatures.push(intoto::Signature {
            keyid: keyid(key.public_key().key_data()),
            sig: intoto::encode(&sig),
        });
        Ok(Some(envelope))
    }
}

/// Checks that `envelope` is signed by `key`: a signature whose keyid is the key's fingerprint
/// verifies over the PAE. Returns why not.
pub fn check(envelope: &Envelope, key: &KeyData) -> Result<(), String> {
    let pae = envelope.pae().map_err(|e| e.to_string())?;
    let id = keyid(key);
    let mine: Vec<&intoto::Signature> = envelope
        .signatures
        .iter()
        .filter(|s| s.keyid == id)
        .collect();
    if mine.is_empty() {
        return Err(format!(
            "the in-toto envelope carries no signature by key {id}"
        ));
    }
    if mine
        .iter()
        .any(|s| intoto::decode(&s.sig).is_some_and(|sig| verify_pae(key, &pae, &sig)))
    {
        Ok(())
    } else {
        Err(format!(
            "the in-toto envelope's signature by key {id} does not verify"
        ))
    }
}

/// Checks an envelope that is a record's only signature (an in-toto test result imported as
/// evidence): one of its signatures verifies with a key the allowed-signers file lists for
/// `signer` (or, with no `signer`, for some principal it names exactly), admitted in namespace
/// [`super::NAMESPACE`] at `at`. Reported as [`super::check`] reports an SSHSIG: verified with
/// the principal, not verified without an allowed-signers file, refused otherwise.
pub fn check_signed(
    envelope: &Envelope,
    signer: Option<&str>,
    allowed: Option<&super::AllowedSigners>,
    at: time::OffsetDateTime,
) -> SignatureReport {
    if envelope.signatures.is_empty() {
        return match allowed {
            None => SignatureReport::not_signed(),
            Some(_) => SignatureReport::refused(signer, "the in-toto envelope is not signed"),
        };
    }
    let Ok(pae) = envelope.pae() else {
        return SignatureReport::refused(signer, "the in-toto envelope's payload is not base64");
    };
    let Some(allowed) = allowed else {
        return SignatureReport::not_verified(
            signer,
            format!(
                "signed in-toto envelope (keyid {}); no allowed-signers file was given, so who signed it was not checked",
                envelope.signatures[0].keyid
            ),
        );
    };
    for (principal, key) in allowed.named_keys() {
        if signer.is_some_and(|s| s != principal) {
            continue;
        }
        let id = keyid(key);
        let verifies = envelope.signatures.iter().any(|s| {
            s.keyid == id && intoto::decode(&s.sig).is_some_and(|sig| verify_pae(key, &pae, &sig))
        });
        if verifies && allowed.admit(&principal, key, super::NAMESPACE, at).is_ok() {
            return SignatureReport::verified(&principal, &pae);
        }
    }
    SignatureReport::refused(
        signer,
        match signer {
            Some(signer) => format!(
                "no signature of the in-toto envelope verifies with a key the allowed signers list for {signer}"
            ),
            None => "no signature of the in-toto envelope verifies with a key the allowed signers list by name".to_owned(),
        },
    )
}

/// Checks an envelope stored beside a record's SSHSIG (`armored`): signed with the same key,
/// and stating what `expected` builds again from the record (given the stored payload, whose
/// commit subject, if any, it may keep). Returns why not.
pub fn check_beside(
    stored: &[u8],
    armored: &[u8],
    expected: impl FnOnce(&[u8]) -> Option<Vec<u8>>,
) -> Result<(), String> {
    let envelope = Envelope::parse(stored)
        .map_err(|e| format!("the in-toto envelope beside the record cannot be read: {e}"))?;
    let key = sshsig_key(armored)
        .ok_or("the in-toto envelope has no SSH signature beside it to name its key")?;
    check(&envelope, &key)?;
    let payload = envelope.payload_bytes().map_err(|e| e.to_string())?;
    if expected(&payload).as_deref() == Some(payload.as_slice()) {
        Ok(())
    } else {
        Err("the in-toto envelope states something other than the record beside it".to_owned())
    }
}

/// The key a record's armored SSHSIG was made with, when it is one.
pub fn sshsig_key(armored: &[u8]) -> Option<KeyData> {
    ssh_key::SshSig::from_pem(armored)
        .ok()
        .map(|s| s.public_key().clone())
}

/// The key of an OpenSSH public key line.
pub fn public_key(line: &str) -> Option<KeyData> {
    PublicKey::from_openssh(line.trim())
        .ok()
        .map(|k| k.key_data().clone())
}

/// The note for a record exported with no signature.
pub fn unsigned_note(name: &str, sshsig: bool) -> String {
    if sshsig {
        format!(
            "{name}: exported unsigned: it is signed with SSHSIG only (through ssh-agent, whose keys sign no DSSE envelope, or recorded before envelopes); `attest verify` checks its SSHSIG"
        )
    } else {
        format!("{name}: exported unsigned: the record is not signed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssh_key::private::Ed25519Keypair;

    fn signing(key: PrivateKey) -> Signing {
        Signing {
            key: Key::File(Box::new(key)),
            signer: "alice".parse().expect("a principal"),
        }
    }

    #[test]
    fn every_supported_key_signs_an_envelope_that_checks() {
        let mut rng = ssh_key::rand_core::OsRng;
        let keys = [
            PrivateKey::from(Ed25519Keypair::from_seed(&[7; 32])),
            PrivateKey::random(
                &mut rng,
                Algorithm::Ecdsa {
                    curve: EcdsaCurve::NistP256,
                },
            )
            .expect("p256"),
            PrivateKey::random(
                &mut rng,
                Algorithm::Ecdsa {
                    curve: EcdsaCurve::NistP384,
                },
            )
            .expect("p384"),
        ];
        for key in keys {
            let public = key.public_key().key_data().clone();
            let envelope = signing(key)
                .envelope(b"{\"a\":1}")
                .expect("signs")
                .expect("a key file signs");
            assert_eq!(envelope.signatures[0].keyid, keyid(&public));
            assert_eq!(check(&envelope, &public), Ok(()));
            // Control: another payload under the same signature does not check.
            let mut tampered = envelope.clone();
            tampered.payload = intoto::encode(b"{\"a\":2}");
            assert!(check(&tampered, &public).is_err());
        }
    }

    #[test]
    fn an_ed25519_signature_is_raw_over_the_pae() {
        let key = PrivateKey::from(Ed25519Keypair::from_seed(&[3; 32]));
        let sig = sign_pae(&key, b"DSSEv1 1 t 1 x").expect("signs");
        assert_eq!(sig.len(), 64);
        let dalek = ed25519_dalek_verify(&key, b"DSSEv1 1 t 1 x", &sig);
        assert!(dalek);
    }

    /// Verifies with the key data directly, as a DSSE verifier does with the raw public key.
    fn ed25519_dalek_verify(key: &PrivateKey, msg: &[u8], sig: &[u8]) -> bool {
        verify_pae(key.public_key().key_data(), msg, sig)
            && !verify_pae(key.public_key().key_data(), b"other", sig)
    }

    #[test]
    fn control_a_signature_by_another_key_does_not_check() {
        let alice = PrivateKey::from(Ed25519Keypair::from_seed(&[1; 32]));
        let mallory = PrivateKey::from(Ed25519Keypair::from_seed(&[2; 32]));
        let envelope = signing(mallory)
            .envelope(b"{}")
            .expect("signs")
            .expect("a key file signs");
        let err = check(&envelope, alice.public_key().key_data()).expect_err("another key");
        assert!(err.contains("no signature by key"), "{err}");
        // Mallory's signature relabelled with alice's keyid still does not verify.
        let mut relabelled = envelope;
        relabelled.signatures[0].keyid = keyid(alice.public_key().key_data());
        let err = check(&relabelled, alice.public_key().key_data()).expect_err("forged");
        assert!(err.contains("does not verify"), "{err}");
    }
}
