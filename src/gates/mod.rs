//! The gates: the top of the trust spine, where the log meets the records that justify it.
//!
//! CONCEPTS.md "gate", "maker and checker", "evidence" and "attestation". The loop log below
//! ([`crate::events`]) knows transitions; the records beside it ([`crate::evidence`],
//! [`crate::attest`]) know whether they still verify. This floor joins them and is the only
//! place that does:
//!
//! - [`admit`]: the loop gates, one function per gate condition, asked by every append attempt
//!   (it implements [`crate::events::Admission`]);
//! - [`append`] (the module): the gated append, and evidence recorded into a loop;
//! - [`standing`]: how each event's gate stands now, every record it names re-checked (what
//!   `event verify` reports), and [`outlook`]: where a loop's gates stand against the workspace
//!   (what `status` and `resume` show);
//! - [`push`]: the pre-push and pre-receive gates (which commits of a push must verify);
//! - [`secrets`]: the records a push brings, read for a secret their branch does not hold;
//! - [`stop`]: the cap on the consecutive blocks of one session's stop, shared by the Stop gates;
//! - [`criteria`]: the evidence gate's criteria under the Stop hook's budget (a run that cannot
//!   finish in it goes on in the background, and is answered from its evidence later);
//! - [`records`]: the record checks the loop gates share (a bundle that still holds for a tree,
//!   an approval by a checker who is not the maker).
//!
//! A gated event records what it passed in its data (`"gate": {"name", "tree"}`, the refs it
//! checked), so a reviewer re-checks the same records from a clone.

pub mod admit;
pub mod append;
pub mod criteria;
pub mod outlook;
pub mod push;
pub mod records;
pub mod secrets;
pub mod standing;
pub mod stop;

use hpp_core::event_loop::gates::Refusal;
use hpp_store as store;

use crate::attest::VerifyOptions;
use crate::events;
use crate::sign::{self, AllowedSigners, Signing};
use hpp_core::trust::Policy;

pub use self::append::{EvidenceRecorded, append, record_evidence};
pub use self::outlook::{GateNow, Outlook, outlook, outlook_at, workspace_tree};
pub use self::standing::{EventGate, UNGATED_AFTER_GATED, report, standing, ungated_after_gated};

/// How strictly the gates check: the signers known, whether signatures are required, and the
/// key a person signs their approval with.
#[derive(Clone, Copy, Default)]
pub struct GateOptions<'a> {
    /// The allowed-signers file in force, if any.
    pub allowed: Option<&'a AllowedSigners>,
    /// Whether signatures are required (the trust policy of `verify`).
    pub require_signed: bool,
    /// The key the person named by `--by` signs with.
    pub person: Option<&'a Signing>,
    /// The trust policy in force, when there is one: whose verdicts count.
    pub policy: Option<&'a Policy>,
}

impl<'a> GateOptions<'a> {
    /// The gates of the signature rule in force ([`crate::trust::Trust`]), with the person's
    /// key when one signs.
    pub fn of(trust: &'a crate::trust::Trust, person: Option<&'a Signing>) -> Self {
        Self {
            allowed: trust.allowed.as_ref(),
            require_signed: trust.require_signed,
            person,
            policy: trust.policy.as_ref().map(|v| &v.policy),
        }
    }

    /// How the records a gate names are verified under these options.
    pub fn verify(&self) -> VerifyOptions<'a> {
        VerifyOptions {
            allowed: self.allowed,
            require_signed: self.require_signed,
            policy: self.policy,
            history_elsewhere: false,
            history: None,
        }
    }
}

/// Why a gated operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The loop log refused the event or could not be read (a transition the loop does not
    /// take, a broken chain, a secret's shape).
    #[error(transparent)]
    Loop(#[from] events::Error),
    /// A gate's condition does not hold: the gate, what it requires, the record it looked at.
    #[error(transparent)]
    Gate(#[from] Refusal),
    /// The person's key could not sign the approval.
    #[error(transparent)]
    Sign(#[from] sign::Error),
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// A gate's refusal: `gate` requires `requires`; `record` is what it looked at.
fn refuse(gate: &str, requires: &str, record: Option<String>, reason: String) -> Error {
    Error::Gate(Refusal {
        gate: gate.to_owned(),
        requires: requires.to_owned(),
        record,
        reason,
    })
}

/// The first 12 hex digits of an object id.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
