//! Store support for sealed House Sessions (`refs/hpp/deliberations/<id>`): each record is one
//! commit created once with [`Store::create_record`]; this lists them.

use super::refs::DELIBERATIONS_PREFIX;
use super::{CommitId, Error, Store};

impl Store {
    /// Lists every sealed House Session as `(ref, commit)`, sorted by ref.
    pub fn deliberations(&self) -> Result<Vec<(String, CommitId)>, Error> {
        self.list(DELIBERATIONS_PREFIX)
    }
}
