//! A reference (Python harness) attestation as the store keeps it once imported: the files it
//! attests (every file of its snapshot tree but the one path the reference left out, see
//! [`super::import`]) and the signature it carries inside itself. Both `attest import`, before
//! a record is taken, and `attest verify`, on every later judgement, read a record this way.

use serde_json::{Map, Value};

use crate::sign::{self, AllowedSigners, SignatureReport};
use hpp_core::attestation::{self as record, TreeFile};
use hpp_core::record::sha256_hex;
use hpp_store::{FileKind, Store, TreeId};

/// The blob beside an imported record that says where it came from.
pub const IMPORT_FILE: &str = "imported.json";

/// The key of [`IMPORT_FILE`] naming the path the reference left out of its snapshot digest:
/// the attestation file itself, when it was inside the worktree.
pub const LEFT_OUT: &str = "left_out";

/// The files of `tree` an imported reference record `name` (whose bytes are `record`) is
/// compared with: all of them, but the path its `imported.json` says the reference left out,
/// while the tree holds exactly the record's bytes there (anything else there is compared, and
/// so is not attested).
pub fn attested_files(
    store: &Store,
    name: &str,
    tree: &TreeId,
    record: &[u8],
) -> Result<Vec<TreeFile>, hpp_store::Error> {
    let mut files = tree_files(store, tree)?;
    let left_out = store
        .read_file(name, IMPORT_FILE)?
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v.get(LEFT_OUT).and_then(Value::as_str).map(str::to_owned));
    if let Some(path) = left_out {
        let own = sha256_hex(record);
        files.retain(|f| !(f.path == path && f.kind == "file" && f.sha256 == own));
    }
    Ok(files)
}

/// The files of `tree` as a reference snapshot names them (a nested repository is listed as
/// neither a file nor a symlink, so no reference entry matches it).
pub fn tree_files(store: &Store, tree: &TreeId) -> Result<Vec<TreeFile>, hpp_store::Error> {
    let mut files = Vec::new();
    store.visit_files(tree, |path, kind, bytes| {
        files.push(TreeFile {
            path: path.to_owned(),
            kind: match kind {
                FileKind::File => "file",
                FileKind::Symlink => "symlink",
                FileKind::Gitlink => "gitlink",
            },
            sha256: sha256_hex(bytes),
        });
    })?;
    Ok(files)
}

/// The armored signature a reference record carries inside itself, if any.
pub fn embedded_signature(record: &Map<String, Value>) -> Option<Vec<u8>> {
    record
        .get("signature")?
        .get("signature")?
        .as_str()
        .map(|s| s.as_bytes().to_vec())
}

/// Checks a reference record's embedded signature (`{"scheme": "sshsig", "namespace": "hpp",
/// "signer", "sha256", "signature"}` over the record's canonical JSON without it) against the
/// allowed signers, as the reference does.
pub fn check_embedded(
    record: &Map<String, Value>,
    allowed: Option<&AllowedSigners>,
) -> SignatureReport {
    sign::check_embedded(
        &record::reference_signed_bytes(record),
        record.get("signature"),
        allowed,
    )
}
