//! The record checks the loop gates share: an evidence bundle that still verifies and ran on a
//! tree, and an approval of a tree by a checker who is not the loop's maker.

use hpp_core::attestation::TreeVerdict;
use hpp_core::evidence::{Snapshot, Status};
use hpp_store::{Store, TreeId};

use super::{Error, short};
use crate::attest::{self, TreeVerification, VerifyOptions};
use crate::evidence::{self, ArtifactCheck};

/// Re-verifies one bundle for a gate: it verifies, passed, and its run saw `tree`; under a
/// trust policy it is signed by a principal of the policy too. Returns its self-hash and, when
/// it does not hold, why.
pub(super) fn bundle_holds(
    store: &Store,
    record_ref: &str,
    tree: &TreeId,
    check: ArtifactCheck<'_>,
    trust: VerifyOptions<'_>,
) -> Result<(Option<String>, Option<String>), Error> {
    let signers = trust.policy.and(trust.allowed);
    let verification = match evidence::verify(store, record_ref, signers, check) {
        Ok(v) => v,
        Err(evidence::Error::Store(e)) => return Err(e.into()),
        Err(e) => return Ok((None, Some(format!("{record_ref}: {e}")))),
    };
    let sha = verification.record_sha256.clone();
    if verification.status != Status::Valid {
        let why = if verification.problems.is_empty() {
            verification.status.to_string()
        } else {
            verification.problems.join("; ")
        };
        return Ok((sha, Some(format!("{record_ref} does not verify: {why}"))));
    }
    let problem = match verification.snapshot.as_ref() {
        None => Some(format!(
            "{record_ref} was recorded before bundles carried the tree they ran on: run it again with `git hpp evidence run`"
        )),
        Some(Snapshot { tree: ran, .. })
            if !verification
                .snapshot
                .as_ref()
                .is_some_and(|s| s.covers(tree.as_str())) =>
        {
            Some(format!(
                "{record_ref} ran on tree {}; the loop is at {}: run it again on this tree",
                short(ran),
                short(tree.as_str())
            ))
        }
        Some(_) => None,
    };
    Ok((sha, problem))
}

/// Why [`find_approval`] found none.
pub(super) enum Found {
    /// The store failed while looking.
    Store(Error),
    /// No approval holds: the record looked at, and why.
    No {
        /// The record that came closest, if any.
        record: Option<String>,
        /// Why it does not count.
        reason: String,
    },
}

/// Verifies the attestations of `tree` for a gate: a store failure stays an error.
pub(super) fn verify_tree(
    store: &Store,
    tree: &TreeId,
    trust: VerifyOptions<'_>,
) -> Result<TreeVerification, Error> {
    attest::verify_tree(store, tree, None, trust).map_err(attest_error)
}

/// Finds the approval of `tree` by a checker other than `maker`: the one named, or else the
/// latest standing approval of any such checker. Returns its ref and checker.
pub(super) fn find_approval(
    store: &Store,
    tree: &TreeId,
    maker: &str,
    named: Option<&str>,
    options: VerifyOptions<'_>,
) -> Result<(String, String), Found> {
    if let Some(name) = named {
        let (attested, reference) = match attest::resolve(store, name) {
            Ok(r) => r,
            Err(attest::Error::Store(e)) => return Err(Found::Store(e.into())),
            Err(_) => {
                return Err(Found::No {
                    record: Some(name.to_owned()),
                    reason: format!("no attestation named {name} in this repository"),
                });
            }
        };
        if attested != *tree {
            return Err(Found::No {
                record: Some(reference),
                reason: format!(
                    "it attests tree {}; the loop is at {}: the checker must check this tree",
                    short(attested.as_str()),
                    short(tree.as_str())
                ),
            });
        }
        let verification = verify_tree(store, tree, options).map_err(Found::Store)?;
        let checker = verification
            .candidates
            .iter()
            .find(|c| c.attestation_ref == reference)
            .and_then(|c| c.checker.clone())
            .unwrap_or_default();
        if checker == maker {
            return Err(Found::No {
                record: Some(reference),
                reason: format!(
                    "its checker {checker} is the loop's maker: a maker cannot check their own work"
                ),
            });
        }
        return match verification.verdict_of(&checker) {
            TreeVerdict::Approved { .. } => Ok((reference, checker)),
            TreeVerdict::Revoked { revoked_by, .. } => Err(Found::No {
                record: Some(reference),
                reason: format!("{checker} revoked this approval ({revoked_by})"),
            }),
            _ => Err(Found::No {
                reason: why_not(&verification, &reference),
                record: Some(reference),
            }),
        };
    }
    let verification = verify_tree(store, tree, options).map_err(Found::Store)?;
    for checker in verification.checkers() {
        if checker == maker {
            continue;
        }
        if let TreeVerdict::Approved { reference } = verification.verdict_of(checker) {
            return Ok((reference, checker.to_owned()));
        }
    }
    let by_maker = matches!(verification.verdict_of(maker), TreeVerdict::Approved { .. });
    Err(Found::No {
        record: verification.attestation.clone(),
        reason: if by_maker {
            format!(
                "the only approval of tree {} is by {maker}, the loop's maker: a maker cannot check their own work",
                short(tree.as_str())
            )
        } else if verification.candidates.is_empty() {
            format!(
                "no attestation of tree {} exists: a checker other than {maker} runs `git hpp attest create ... --verdict approved`",
                short(tree.as_str())
            )
        } else {
            format!(
                "no approval of tree {} by a checker other than {maker} holds: {}",
                short(tree.as_str()),
                why_not(
                    &verification,
                    verification.attestation.as_deref().unwrap_or_default()
                )
            )
        },
    })
}

/// Why an attestation does not count, from its judgement.
pub(super) fn why_not(verification: &TreeVerification, reference: &str) -> String {
    let Some(judged) = verification
        .candidates
        .iter()
        .find(|c| c.attestation_ref == reference)
    else {
        return "it cannot be read".to_owned();
    };
    let mut why: Vec<String> = Vec::new();
    if judged.verdict.as_deref() != Some("approved") {
        why.push(format!(
            "its verdict is {}",
            judged.verdict.as_deref().unwrap_or("missing")
        ));
    }
    why.extend(judged.signer_problem.clone());
    why.extend(judged.evidence_problems.iter().cloned());
    let others: Vec<&str> = judged
        .mismatches
        .iter()
        .copied()
        .filter(|m| *m != "verdict")
        .collect();
    if !others.is_empty() {
        why.push(format!(
            "mismatches: {} ({})",
            others.join(", "),
            judged.checked
        ));
    }
    if why.is_empty() {
        why.push("it does not hold".to_owned());
    }
    why.join("; ")
}

/// Keeps the store's failure of an attestation check as an error; anything else the check
/// refuses is the record not holding, said by the gate that asked ([`Found::No`], [`super::standing`]).
fn attest_error(e: attest::Error) -> Error {
    match e {
        attest::Error::Store(e) => e.into(),
        other => Error::Store(hpp_store::Error::Io {
            what: "checking the attestations of a tree".into(),
            source: std::io::Error::other(other.to_string()),
        }),
    }
}
