"""Verify the DSSE envelopes of an in-toto attestation bundle with the in-toto reference
implementation, given only an OpenSSH public key.

    python verify_envelopes.py KEY.pub BUNDLE.jsonl

KEY.pub is one OpenSSH public key line (ssh-ed25519, ecdsa-sha2-nistp256/384). Its keyid is its
SSH fingerprint (SHA256:..., as `ssh-keygen -l` prints it). Each line of BUNDLE.jsonl is read
with in-toto's own loader (in_toto.models.metadata.Metadata.from_dict, which must give a DSSE
Envelope) and its signature checked with in-toto's Envelope.verify_signature, which is
securesystemslib's DSSE verification (PAE, threshold 1, keyid matched). Prints one JSON object
per line: whether it verified, why not, and the statement's type, predicate type, subject
digests and result. Exits 0 when every envelope verified, 1 when one did not.
"""

import base64
import hashlib
import json
import sys

from cryptography.hazmat.primitives.serialization import load_ssh_public_key
from in_toto.models.metadata import Envelope, Metadata
from securesystemslib.signer import SSlibKey


def ssh_fingerprint(line: str) -> str:
    blob = base64.b64decode(line.split()[1])
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode()
    return "SHA256:" + digest.rstrip("=")


def main() -> int:
    key_path, bundle_path = sys.argv[1], sys.argv[2]
    with open(key_path, encoding="utf-8") as f:
        line = f.read().strip()
    key = SSlibKey.from_crypto(
        load_ssh_public_key(line.encode()), keyid=ssh_fingerprint(line)
    )
    verification_key = dict(key.to_dict(), keyid=key.keyid)
    all_ok = True
    with open(bundle_path, encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    for text in lines:
        report = {"verified": False, "keyid": key.keyid, "scheme": key.scheme}
        try:
            envelope = Metadata.from_dict(json.loads(text))
            if not isinstance(envelope, Envelope):
                raise ValueError("not a DSSE envelope")
            statement = json.loads(envelope.payload.decode("utf-8"))
            predicate = statement.get("predicate", {})
            report.update(
                {
                    "payloadType": envelope.payload_type,
                    "_type": statement.get("_type"),
                    "predicateType": statement.get("predicateType"),
                    "subject": [s.get("digest", {}) for s in statement.get("subject", [])],
                    "result": predicate.get("verificationResult", predicate.get("result")),
                    "signatures": len(envelope.signatures),
                }
            )
            envelope.verify_signature(verification_key)
            report["verified"] = True
        except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
            report["error"] = f"{type(e).__name__}: {e}"
        all_ok = all_ok and report["verified"]
        print(json.dumps(report, sort_keys=True))
    return 0 if all_ok and lines else 1


if __name__ == "__main__":
    sys.exit(main())
