//! The receive side of "nothing secret leaves": a push that brings a record keeping a secret
//! the branch it was made on does not hold is refused, by the server's `pre-receive` gate (and
//! the client's `pre-push`), as `git hpp push` refuses it before sending ([`crate::outbound`]).
//!
//! Only the updates of the push under `refs/hpp/` and the notes mirror are read, each from the
//! commit the ref was at ([`crate::outbound::record_leak`]): every entry the update brings, and
//! a kept workspace snapshot against the commit it was made at. Deletions, refs that did not
//! move and every other ref cost nothing.

use hpp_core::gate::Update;
use hpp_store::{self as store, Store, refs};

use crate::outbound::{self, Leak};

/// Why the check refused the push or could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A record the push brings keeps a secret-shaped file its base does not hold.
    #[error(
        "{} keeps {}, which looks like it holds {}; the branch it was made on does not hold it, so the record would publish it (fix: {}, and push again)",
        .0.record, .0.path, .0.shape, .0.fix
    )]
    Leak(Leak),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Reads every record under `refs/hpp/` that `updates` create or move (the ref is the one
/// updated, the commit the new one) and refuses the first that keeps a secret its base does
/// not hold. Its objects must be readable: on the server, after the push's quarantine is
/// joined.
pub fn check(store: &Store, updates: &[Update]) -> Result<(), Error> {
    for update in updates {
        let new = update.local_oid.as_str();
        let moved = !new.bytes().all(|b| b == b'0') && update.old() != Some(new);
        if !moved
            || !(update.remote_ref.starts_with(refs::PREFIX)
                || update.remote_ref == store::NOTES_REF)
        {
            continue;
        }
        if let Some(leak) = outbound::record_leak(store, &update.remote_ref, new, update.old())? {
            return Err(Error::Leak(leak));
        }
    }
    Ok(())
}
