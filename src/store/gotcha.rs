//! Store support for gotcha memory (see [`crate::gotcha`]): two CAS logs,
//! `refs/hpp/gotchas/failures` (one `failure.json` per commit) and `refs/hpp/gotchas/promoted`
//! (one `gotcha.json` per commit, written once per task key and family).

use super::refs::GOTCHAS_PREFIX;
use super::{CommitId, Error, Store};

/// The blob name of a failure.
pub const FAILURE_FILE: &str = "failure.json";
/// The blob name of a promoted gotcha.
pub const GOTCHA_FILE: &str = "gotcha.json";

/// The log of recorded failures.
pub fn failures_ref() -> String {
    format!("{GOTCHAS_PREFIX}failures")
}

/// The log of promoted gotchas.
pub fn promoted_ref() -> String {
    format!("{GOTCHAS_PREFIX}promoted")
}

impl Store {
    /// Appends a failure record.
    pub fn append_failure(&self, bytes: &[u8], message: &str) -> Result<CommitId, Error> {
        self.append_retrying(&failures_ref(), FAILURE_FILE, bytes, message)
    }

    /// Appends a promoted gotcha, only if the promoted log is still at `expected` (the tip the
    /// caller read when it decided to promote); a lost race is [`Error::Moved`].
    pub fn append_gotcha(
        &self,
        expected: Option<&CommitId>,
        bytes: &[u8],
        message: &str,
    ) -> Result<CommitId, Error> {
        self.append(
            &promoted_ref(),
            expected,
            &super::NewRecord {
                file: GOTCHA_FILE,
                bytes,
                message,
            },
        )
    }

    /// Reads the failures, oldest first.
    pub fn failures(&self) -> Result<Vec<Vec<u8>>, Error> {
        self.payloads(&failures_ref(), FAILURE_FILE)
            .map(|(_, records)| records)
    }

    /// Reads the promoted gotchas, oldest first, with the tip of their log.
    pub fn gotchas(&self) -> Result<(Option<CommitId>, Vec<Vec<u8>>), Error> {
        self.payloads(&promoted_ref(), GOTCHA_FILE)
    }

    fn payloads(&self, name: &str, file: &str) -> Result<(Option<CommitId>, Vec<Vec<u8>>), Error> {
        let chain = self.read_chain(name, file)?;
        let records = chain
            .links
            .into_iter()
            .map(|link| {
                link.payload.ok_or_else(|| Error::Corrupt {
                    name: name.to_owned(),
                    detail: format!("{} has no {file}", link.commit),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok((chain.tip, records))
    }
}
