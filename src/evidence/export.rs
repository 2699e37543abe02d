//! `evidence export --format in-toto`: one bundle as an in-toto test result in a DSSE envelope
//! ([`hpp_core::intoto::evidence_statement`]).
//!
//! A bundle signed with a key file carries its envelope, signed when the bundle was recorded;
//! it is exported exactly as stored. Any other bundle is stated now and exported unsigned, with
//! a note saying so.

use hpp_core::evidence::{Bundle, ENVELOPE_FILE, RECORD_FILE, SIGNATURE_FILE};
use hpp_core::intoto::{self, Envelope};
use hpp_store::Store;

use super::Error;

/// Exports the bundle at `record_ref`: its envelope, and a note when it is unsigned.
pub fn export(store: &Store, record_ref: &str) -> Result<(Envelope, Option<String>), Error> {
    if let Some(stored) = store.read_file(record_ref, ENVELOPE_FILE)? {
        let envelope = Envelope::parse(&stored).map_err(|why| Error::Intoto {
            record: record_ref.to_owned(),
            why: why.to_string(),
        })?;
        return Ok((envelope, None));
    }
    let bytes = store
        .read_file(record_ref, RECORD_FILE)?
        .ok_or_else(|| Error::NotFound(record_ref.to_owned()))?;
    let bundle: Bundle = serde_json::from_slice(&bytes).map_err(|e| Error::Intoto {
        record: record_ref.to_owned(),
        why: format!("not an hpp.evidence/v1 record this build can state ({e})"),
    })?;
    let statement = intoto::evidence_statement(&bundle).map_err(|why| Error::Intoto {
        record: record_ref.to_owned(),
        why: why.to_string(),
    })?;
    let sshsig = store.read_file(record_ref, SIGNATURE_FILE)?.is_some();
    let note = crate::sign::dsse::unsigned_note(record_ref, sshsig);
    Ok((
        Envelope::unsigned(&intoto::statement_bytes(&statement)),
        Some(note),
    ))
}
