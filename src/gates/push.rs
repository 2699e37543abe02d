//! The gates (ARCHITECTURE §4 "The pre-push gate"): which commits of a push must verify, and
//! which do not. The client's `pre-push` hook and the server's `pre-receive` hook run the same
//! check; the rules of which updates are protected are [`hpp_core::gate`].

use serde::Serialize;

use crate::attest::{self, CommitVerdict, VerifyOptions};
use hpp_core::gate::{self, Decision, Scope, Update};
use hpp_store::{CommitId, Store};

/// One commit a protected update brings that does not verify.
#[derive(Debug, Clone, Serialize)]
pub struct Refusal {
    /// The protected ref the push updates.
    pub reference: String,
    /// The commit's verification.
    pub verdict: CommitVerdict,
}

/// Why the gate could not decide.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input or the configuration is not what a gate reads.
    #[error(transparent)]
    Rule(#[from] gate::Error),
    /// An update names something that is not a commit id.
    #[error("{reference}: {oid} is not a commit id")]
    BadOid {
        /// The ref.
        reference: String,
        /// What it names.
        oid: String,
    },
    /// Verification failed to run.
    #[error(transparent)]
    Attest(#[from] attest::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] hpp_store::Error),
}

/// Checks every protected update: the tip, or with [`Scope::Each`] every commit it brings.
/// Returns the commits that do not verify (none: the push may go).
pub fn check(
    store: &Store,
    updates: &[Update],
    protect: &[String],
    scope: Scope,
    options: VerifyOptions<'_>,
) -> Result<Vec<Refusal>, Error> {
    let decisions = gate::decide(updates, protect)?;
    let mut refused = Vec::new();
    for (update, decision) in updates.iter().zip(decisions) {
        if decision != Decision::Verify {
            continue;
        }
        let id = |oid: &str| {
            store.commit_id(oid).ok_or_else(|| Error::BadOid {
                reference: update.remote_ref.clone(),
                oid: oid.to_owned(),
            })
        };
        let new = id(&update.local_oid)?;
        let commits: Vec<CommitId> = match scope {
            Scope::Tip => vec![new],
            Scope::Each => {
                // An old commit the receiving side does not have (a client's stale view of the
                // remote) hides nothing: every commit of the new tip is then checked.
                let old = update.old().and_then(|oid| store.commit_id(oid));
                store.commits_brought(&new, old.as_ref())?
            }
        };
        for commit in commits {
            for verdict in attest::verify_commits(store, commit.as_str(), options)? {
                if !verdict.ok {
                    refused.push(Refusal {
                        reference: update.remote_ref.clone(),
                        verdict,
                    });
                }
            }
        }
    }
    Ok(refused)
}
