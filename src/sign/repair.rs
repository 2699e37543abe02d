//! A workaround for ssh-key 0.6.7 rejecting some ECDSA private keys that `ssh-keygen` writes.
//!
//! OpenSSH stores an ECDSA private scalar as an SSH `mpint`, which drops leading zero bytes.
//! ssh-key 0.6.7 insists on the full curve size (32, 48 or 66 bytes, or one more with a zero
//! sign byte), so some keys fail to load with a length error: 5 of 4,000 nistp256 keys made by
//! `ssh-keygen` here, and about 1 in 4 nistp521 keys. For an *unencrypted* key this module
//! rewrites the scalar zero-padded to the curve size, which ssh-key then reads. Encrypted keys cannot be rewritten before
//! decryption, which happens inside ssh-key, so they still fail (see [`super::Error::Decrypt`]).
//!
//! Touches no refs and no files.

/// The binary format's magic, `openssh-key-v1\0`.
const MAGIC: &[u8] = b"openssh-key-v1\0";

/// The cipher block size of an unencrypted key, which the private section is padded to.
const BLOCK: usize = 8;

/// Returns the binary OpenSSH private key in `pem` with its ECDSA scalar zero-padded to the
/// curve size, or `None` when `pem` is not an unencrypted ECDSA key with a short scalar.
pub(super) fn pad_ecdsa_scalar(pem: &[u8]) -> Option<Vec<u8>> {
    rewrite_scalar(&decode_pem(pem)?, |scalar, size| {
        (scalar.len() < size).then(|| {
            let mut padded = vec![0; size - scalar.len()];
            padded.extend_from_slice(scalar);
            padded
        })
    })
}

/// Decodes the base64 body of a `-----BEGIN OPENSSH PRIVATE KEY-----` PEM block.
fn decode_pem(pem: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(pem).ok()?;
    let begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
    let end = "-----END OPENSSH PRIVATE KEY-----";
    let start = text.find(begin)? + begin.len();
    let stop = start + text[start..].find(end)?;
    decode_base64(&text[start..stop])
}

/// Decodes standard, padded base64, ignoring ASCII whitespace.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    fn value(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let chars: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    if !chars.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(chars.len() / 4 * 3);
    for (index, quad) in chars.chunks(4).enumerate() {
        let last = index + 1 == chars.len() / 4;
        let padding = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut bits = 0u32;
        for &c in &quad[..4 - padding] {
            bits = (bits << 6) | value(c)?;
        }
        bits <<= 6 * padding as u32;
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - padding]);
    }
    Some(out)
}

/// Reads SSH wire-format values from a byte slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = self.0.split_at_checked(n)?;
        self.0 = tail;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        let bytes = self.take(4)?;
        Some(u32::from_be_bytes(bytes.try_into().ok()?))
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u32()?).ok()?;
        self.take(len)
    }
}

/// Appends an SSH `string` (u32 length, then the bytes).
fn put_string(out: &mut Vec<u8>, bytes: &[u8]) -> Option<()> {
    out.extend_from_slice(&u32::try_from(bytes.len()).ok()?.to_be_bytes());
    out.extend_from_slice(bytes);
    Some(())
}

/// Rebuilds an unencrypted single-key ECDSA `openssh-key-v1` blob with its scalar replaced by
/// `replace(scalar, curve_size)`; `None` when the blob is anything else or `replace` declines.
fn rewrite_scalar(
    blob: &[u8],
    replace: impl Fn(&[u8], usize) -> Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    let mut outer = Reader(blob.strip_prefix(MAGIC)?);
    let cipher = outer.string()?;
    let kdf = outer.string()?;
    let kdf_options = outer.string()?;
    if cipher != b"none" || kdf != b"none" || outer.u32()? != 1 {
        return None;
    }
    let public = outer.string()?;
    let private = outer.string()?;
    if !outer.0.is_empty() {
        return None;
    }

    let mut inner = Reader(private);
    let check1 = inner.u32()?;
    let check2 = inner.u32()?;
    let key_type = inner.string()?;
    let curve = inner.string()?;
    let size = match (key_type, curve) {
        (b"ecdsa-sha2-nistp256", b"nistp256") => 32,
        (b"ecdsa-sha2-nistp384", b"nistp384") => 48,
        (b"ecdsa-sha2-nistp521", b"nistp521") => 66,
        _ => return None,
    };
    let point = inner.string()?;
    let scalar = replace(inner.string()?, size)?;
    let comment = inner.string()?;

    let mut section = Vec::new();
    section.extend_from_slice(&check1.to_be_bytes());
    section.extend_from_slice(&check2.to_be_bytes());
    put_string(&mut section, key_type)?;
    put_string(&mut section, curve)?;
    put_string(&mut section, point)?;
    put_string(&mut section, &scalar)?;
    put_string(&mut section, comment)?;
    // OpenSSH pads with 1, 2, 3, … up to the block size.
    let mut pad = 1u8;
    while !section.len().is_multiple_of(BLOCK) {
        section.push(pad);
        pad += 1;
    }

    let mut out = MAGIC.to_vec();
    put_string(&mut out, cipher)?;
    put_string(&mut out, kdf)?;
    put_string(&mut out, kdf_options)?;
    out.extend_from_slice(&1u32.to_be_bytes());
    put_string(&mut out, public)?;
    put_string(&mut out, &section)?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssh_key::private::{EcdsaKeypair, KeypairData};
    use ssh_key::rand_core::{CryptoRng, Error as RandError, RngCore};
    use ssh_key::{EcdsaCurve, HashAlg, LineEnding, PrivateKey};

    /// A deterministic "random" source counting up from a start byte; for tests only.
    struct Counting(u8);

    impl RngCore for Counting {
        fn next_u32(&mut self) -> u32 {
            let mut bytes = [0; 4];
            self.fill_bytes(&mut bytes);
            u32::from_be_bytes(bytes)
        }
        fn next_u64(&mut self) -> u64 {
            let mut bytes = [0; 8];
            self.fill_bytes(&mut bytes);
            u64::from_be_bytes(bytes)
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            for byte in dest {
                *byte = self.0;
                self.0 = self.0.wrapping_add(1);
            }
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), RandError> {
            self.fill_bytes(dest);
            Ok(())
        }
    }

    impl CryptoRng for Counting {}

    /// Returns an ECDSA key whose scalar starts with a zero byte.
    fn short_scalar_key(curve: EcdsaCurve) -> PrivateKey {
        let mut rng = Counting(0);
        loop {
            let keypair = EcdsaKeypair::random(&mut rng, curve).expect("the curve is enabled");
            if keypair.private_key_bytes()[0] == 0 {
                return PrivateKey::new(KeypairData::from(keypair), "short").expect("a valid key");
            }
        }
    }

    /// Returns `key` as OpenSSH writes it: the scalar as a minimal mpint.
    fn as_openssh_writes_it(key: &PrivateKey) -> Vec<u8> {
        let blob = key.to_bytes().expect("encodes");
        rewrite_scalar(&blob, |scalar, _| {
            let first = scalar.iter().position(|&b| b != 0).unwrap_or(scalar.len());
            let mut minimal = scalar[first..].to_vec();
            if minimal.first().is_some_and(|&b| b >= 0x80) {
                minimal.insert(0, 0);
            }
            Some(minimal)
        })
        .expect("an unencrypted ECDSA key")
    }

    #[test]
    fn control_ssh_key_alone_rejects_a_short_scalar() {
        let key = short_scalar_key(EcdsaCurve::NistP256);
        assert!(PrivateKey::from_bytes(&as_openssh_writes_it(&key)).is_err());
    }

    #[test]
    fn a_padded_short_scalar_loads_and_signs() {
        for curve in [EcdsaCurve::NistP256, EcdsaCurve::NistP384] {
            let key = short_scalar_key(curve);
            let openssh = as_openssh_writes_it(&key);
            let padded = rewrite_scalar(&openssh, |scalar, size| {
                let mut padded = vec![0; size - scalar.len()];
                padded.extend_from_slice(scalar);
                Some(padded)
            })
            .expect("repairable");
            let loaded = PrivateKey::from_bytes(&padded).expect("the padded key loads");
            assert_eq!(loaded.key_data(), key.key_data());
            let sig = loaded.sign("hpp", HashAlg::Sha512, b"msg").expect("signs");
            key.public_key()
                .verify("hpp", b"msg", &sig)
                .expect("the repaired key signs as the original");
        }
    }

    #[test]
    fn pem_decoding_matches_the_binary_form() {
        let key = short_scalar_key(EcdsaCurve::NistP256);
        let pem = key.to_openssh(LineEnding::LF).expect("encodes");
        assert_eq!(
            decode_pem(pem.as_bytes()).expect("decodes"),
            key.to_bytes().expect("encodes").to_vec()
        );
        // ssh-key writes the full-size scalar, so there is nothing to repair.
        assert_eq!(pad_ecdsa_scalar(pem.as_bytes()), None);
        assert_eq!(decode_base64("QUJD"), Some(b"ABC".to_vec()));
        assert_eq!(decode_base64("QUI="), Some(b"AB".to_vec()));
        assert_eq!(decode_base64("QQ=="), Some(b"A".to_vec()));
        assert_eq!(decode_base64("QQ==QUJD"), None);
        assert_eq!(decode_base64("QUJ"), None);
        assert_eq!(decode_base64("Q!=="), None);
    }

    #[test]
    fn other_keys_are_left_alone() {
        let ed = PrivateKey::from(ssh_key::private::Ed25519Keypair::from_seed(&[1; 32]));
        let pem = ed.to_openssh(LineEnding::LF).expect("encodes");
        assert_eq!(pad_ecdsa_scalar(pem.as_bytes()), None);
        assert_eq!(pad_ecdsa_scalar(b"not a key"), None);
    }
}
