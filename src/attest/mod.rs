//! Attestations: a checker's verdict bound to exact bytes, kept under
//! `refs/hpp/attestations/<tree>/<id>`.
//!
//! CONCEPTS.md "attestation" and "maker and checker": the checker (never the maker) records
//! approved, revise or blocked for one workspace snapshot. Keyed by the snapshot tree, an
//! attestation applies to every commit with that tree, so it survives a rebase, amend or squash
//! that does not change content, and any change to a tracked or untracked file makes the current
//! snapshot unattested. The record commit's tree holds `attestation.json`, `attestation.sig`
//! when signed, the `spec` blob and the `snapshot` tree (file names in
//! [`hpp_core::attestation`]), so all of it travels with a push.
//!
//! Two workflows, apart: [`create`] records a verdict; [`verify`] judges the records of a tree,
//! a commit or a range. [`import`] keeps the Python harness's attestations, judged by its rules.

pub mod create;
pub mod export;
pub mod import;
pub mod reference;
pub mod verify;

use crate::events;
use crate::evidence;
use crate::sign;
use hpp_core::attestation as record;
use hpp_store as store;

pub use self::create::{
    CreateRequest, Created, Deliberation, SecretKept, create, create_with, refuse_secret_files,
    stricter,
};
pub use self::verify::{
    Broken, CommitVerdict, Judged, TreeVerification, VerifyOptions, repo_identity, resolve,
    verify_commits, verify_tree,
};

/// Why an attestation operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad actors, session or verdict.
    #[error(transparent)]
    Input(#[from] record::Error),
    /// The spec file does not exist.
    #[error("spec not found: {0}")]
    SpecNotFound(String),
    /// The spec is outside the worktree.
    #[error("spec must be inside the repository")]
    SpecOutside,
    /// A bare repository has no workspace to attest.
    #[error("attestations need a worktree: this repository is bare")]
    Bare,
    /// The record would be signed by someone other than the checker it names.
    #[error(
        "the signer must be the checker: {signer} cannot sign a verdict recorded for checker {checker}"
    )]
    SignerNotChecker {
        /// The principal asked to sign.
        signer: String,
        /// The checker the record names.
        checker: String,
    },
    /// HEAD has no commit, so the repository has no root commit to be named by.
    #[error(
        "attest create needs a commit: the record names the repository by its root commit; commit the work first"
    )]
    NoCommit,
    /// No attestation by that name.
    #[error("attestation not found: {0}")]
    NotFound(String),
    /// Evidence named by `--evidence` could not be found.
    #[error(transparent)]
    Evidence(#[from] evidence::Error),
    /// A file the record would keep looks like it holds a secret (the shape, never the value).
    #[error(
        "{path} looks like it holds {shape}: the record would keep it, and records are pushed; remove it, ignore it, or commit it on purpose first"
    )]
    SecretFile {
        /// The file, relative to the worktree root.
        path: String,
        /// The shape found.
        shape: &'static str,
    },
    /// An evidence bundle did not run on the tree being attested.
    #[error("{evidence} {why}: an attestation binds evidence of the tree it attests{fix}")]
    StaleEvidence {
        /// The bundle.
        evidence: String,
        /// What tree it ran on, in words.
        why: String,
        /// How to get fresh evidence, or leave the loop's out.
        fix: String,
    },
    /// Signing failed.
    #[error(transparent)]
    Sign(#[from] sign::Error),
    /// A record's in-toto envelope cannot be read.
    #[error("{record}: its in-toto envelope cannot be read: {why}")]
    Intoto {
        /// The record.
        record: String,
        /// Why.
        why: String,
    },
    /// The loop could not be read.
    #[error(transparent)]
    Loop(#[from] events::Error),
    /// The store failed or refused.
    #[error(transparent)]
    Store(#[from] store::Error),
}
