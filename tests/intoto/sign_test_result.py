"""Sign an in-toto test result as a CI using the in-toto reference implementation would.

    python sign_test_result.py KEY TREE RESULT COMMAND_URI > result.intoto.jsonl

KEY is an unencrypted OpenSSH private key (ed25519, ecdsa nistp256/384); the signature's
keyid is its public key's SSH fingerprint (SHA256:...). TREE is the git tree the tests ran
on, RESULT one of PASSED, WARNED, FAILED, COMMAND_URI where the CI's configuration lives. The
statement (https://in-toto.io/attestation/test-result/v0.1) is wrapped in a DSSE envelope by
securesystemslib and signed by its CryptoSigner; one line of JSON is printed.
"""

import base64
import hashlib
import json
import sys

from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_ssh_private_key,
)
from securesystemslib.dsse import Envelope
from securesystemslib.signer import CryptoSigner, SSlibKey


def main() -> int:
    key_path, tree, result, uri = sys.argv[1:5]
    with open(key_path, "rb") as f:
        private = load_ssh_private_key(f.read(), password=None)
    line = private.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH)
    blob = base64.b64decode(line.split()[1])
    keyid = "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    signer = CryptoSigner(private, SSlibKey.from_crypto(private.public_key(), keyid=keyid))
    statement = {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "source", "digest": {"gitTree": tree}}],
        "predicateType": "https://in-toto.io/attestation/test-result/v0.1",
        "predicate": {
            "result": result,
            "configuration": [{"uri": uri, "digest": {"sha256": "00" * 32}}],
            "passedTests": ["unit"] if result == "PASSED" else [],
            "failedTests": [] if result == "PASSED" else ["unit"],
        },
    }
    envelope = Envelope(
        json.dumps(statement).encode(), "application/vnd.in-toto+json", {}
    )
    envelope.sign(signer)
    print(json.dumps(envelope.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
