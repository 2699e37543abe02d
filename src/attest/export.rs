//! `attest export --format in-toto`: a tree's attestations as an in-toto attestation bundle,
//! one DSSE envelope each ([`hpp_core::intoto`]).
//!
//! A record signed with a key file carries its envelope, signed when the record was
//! ([`crate::sign::Signing::envelope`]): it is exported exactly as stored, so no key is needed.
//! Any other record (unsigned, signed through ssh-agent, or recorded before envelopes) is
//! stated now, naming the commit asked for, and exported with no signature; a note says so.

use hpp_core::attestation::{ENVELOPE_FILE, RECORD_FILE, Record, SCHEMA};
use hpp_core::intoto::{self, Envelope};
use hpp_store::refs;
use hpp_store::{CommitId, Store, TreeId};

use super::Error;

/// What an export gives: the envelopes, in the order of their refs, and a note per record
/// whose envelope is not what the reader might expect.
#[derive(Debug, Clone, Default)]
pub struct Exported {
    /// One envelope per record.
    pub envelopes: Vec<Envelope>,
    /// Notes for stderr: unsigned envelopes, a signed statement naming another commit, records
    /// that cannot be stated.
    pub notes: Vec<String>,
}

/// Exports every attestation of `tree`, naming `commit` (whose tree it is).
pub fn export(store: &Store, tree: &TreeId, commit: &CommitId) -> Result<Exported, Error> {
    let mut out = Exported::default();
    for (name, _) in store.list(&refs::attestations_of(tree.as_str()))? {
        let bytes = store.read_file(&name, RECORD_FILE)?.unwrap_or_default();
        if let Some(stored) = store.read_file(&name, ENVELOPE_FILE)? {
            let envelope = Envelope::parse(&stored).map_err(|why| Error::Intoto {
                record: name.clone(),
                why: why.to_string(),
            })?;
            let named = envelope
                .payload_bytes()
                .ok()
                .and_then(|p| serde_json::from_slice(&p).ok())
                .map(|s| intoto::subject_digests(&s, "gitCommit"))
                .unwrap_or_default();
            if !named.iter().any(|c| c == commit.as_str()) {
                out.notes.push(format!(
                    "{name}: its signed statement names {} (signed when the record was made); commit {} has the same tree",
                    match named.first() {
                        Some(other) => format!("commit {}", short(other)),
                        None => "the tree alone".to_owned(),
                    },
                    short(commit.as_str())
                ));
            }
            out.envelopes.push(envelope);
            continue;
        }
        let record: Record = match serde_json::from_slice(&bytes) {
            Ok(record) => record,
            Err(_) => {
                out.notes.push(format!(
                    "{name}: not exported: only {SCHEMA} records can be stated in in-toto"
                ));
                continue;
            }
        };
        if record.schema != SCHEMA {
            out.notes.push(format!(
                "{name}: not exported: {} records cannot be stated in in-toto, only {SCHEMA}",
                record.schema
            ));
            continue;
        }
        let statement = intoto::attestation_statement(intoto::AttestationFacts {
            record: &record,
            record_bytes: &bytes,
            record_ref: &name,
            commit: Some(commit.as_str()),
        });
        out.notes.push(crate::sign::dsse::unsigned_note(
            &name,
            record.signer.is_some(),
        ));
        out.envelopes
            .push(Envelope::unsigned(&intoto::statement_bytes(&statement)));
    }
    Ok(out)
}

/// The first 12 digits of an object id.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
