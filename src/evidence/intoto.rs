//! `evidence import --format in-toto`: an in-toto test result, a DSSE envelope signed by a key
//! the allowed signers (or the trust policy) list, kept as an evidence bundle, so a CI that
//! already emits in-toto test results can satisfy the fresh-evidence gate.
//!
//! The bundle states what the statement says: the tree it ran on (its one `gitTree` subject,
//! before and after), `passed` for `PASSED` and `failed` for anything else (`WARNED`
//! included), the command its configuration carries ([`hpp_core::intoto::read_test_result`]),
//! the principal whose key signed the envelope as `signer`, and the import time as
//! `started_at` (the statement carries none). Its tree keeps the envelope exactly as given,
//! which is then the bundle's signature: `evidence verify` (and so the gate) checks it against
//! the allowed signers and checks that the record still says what the statement says.

use std::time::Duration;

use hpp_core::evidence::{Bundle, ENVELOPE_FILE, EvidenceId, Measured, RECORD_FILE, Snapshot};
use hpp_core::intoto::{self, Envelope};
use hpp_core::run::Finished;
use hpp_store::refs;
use hpp_store::{Content, Store};
use serde::Serialize;
use time::OffsetDateTime;

use super::Error;
use crate::sign::{self, AllowedSigners};

/// What one import recorded.
#[derive(Debug, Clone, Serialize)]
pub struct Imported {
    /// The bundle's ref.
    #[serde(rename = "ref")]
    pub record_ref: String,
    /// The principal whose key signed the envelope.
    pub signer: String,
    /// The tree the tests ran on.
    pub tree: String,
    /// The statement's result.
    pub result: String,
    /// The bundle's verdict.
    pub verdict: String,
}

/// Imports one envelope (`bytes`, a JSON object) as bundle `id`, signed by `signer` (any
/// principal the allowed signers name exactly, when `None`).
pub fn import(
    store: &Store,
    bytes: &[u8],
    id: &EvidenceId,
    signer: Option<&str>,
    allowed: Option<&AllowedSigners>,
    now: OffsetDateTime,
) -> Result<Imported, Error> {
    let refused = |why: String| Error::Intoto {
        record: "the in-toto test result".to_owned(),
        why,
    };
    let envelope = Envelope::parse(bytes).map_err(|e| refused(e.to_string()))?;
    let Some(allowed) = allowed else {
        return Err(refused(
            "importing it needs to know whose key signed it: give --allowed-signers FILE, configure hpp.allowedSignersFile, or keep a trust policy".into(),
        ));
    };
    let report = sign::dsse::check_signed(&envelope, signer, Some(allowed), now);
    let Some(principal) = report.signer.clone().filter(|_| report.is_verified()) else {
        return Err(refused(format!(
            "its signature does not verify: {}",
            report.detail.unwrap_or_default()
        )));
    };
    let payload = envelope
        .payload_bytes()
        .map_err(|e| refused(e.to_string()))?;
    let said = intoto::read_test_result(&payload).map_err(|e| refused(e.to_string()))?;
    if hpp_core::secrets::command_line_carries_secret(&said.command) {
        return Err(Error::Secret);
    }
    hpp_core::secrets::check_name("the evidence id", &id.to_string())?;
    let finished = Finished {
        exit_code: Some(if said.passed() { 0 } else { 1 }),
        signal: None,
        timed_out: false,
        stdout: Vec::new(),
        stderr: Vec::new(),
        duration: Duration::ZERO,
    };
    let mut record = Bundle::assemble(Measured {
        id: id.clone(),
        command: said.command.clone(),
        base_commit: None,
        started_at: hpp_core::timestamp::utc_seconds(now),
        timeout_s: 0.0,
        finished: Some(&finished),
        duration: Duration::ZERO,
        artifacts: Vec::new(),
        kept_artifacts: false,
        snapshot: Some(Snapshot {
            tree: said.tree.clone(),
            after: said.tree.clone(),
        }),
        signer: Some(principal.clone()),
    });
    let line = envelope.to_line().into_bytes();
    let stamp = hpp_core::timestamp::compact(now);
    let record_ref =
        store.create_first_free(&format!("{id}-{stamp}"), refs::evidence, |record_ref| {
            let bytes = record.seal(record_ref.to_owned());
            let entries = vec![
                (RECORD_FILE.to_owned(), Content::Bytes(bytes)),
                (ENVELOPE_FILE.to_owned(), Content::Bytes(line.clone())),
            ];
            let message = format!(
                "hpp evidence {}: {} (in-toto test result signed by {principal})",
                record_ref
                    .strip_prefix(refs::EVIDENCE_PREFIX)
                    .unwrap_or(record_ref),
                record.verdict
            );
            Ok::<_, Error>((entries, message))
        })?;
    Ok(Imported {
        record_ref,
        signer: principal,
        tree: said.tree,
        result: said.result,
        verdict: record.verdict.to_string(),
    })
}
