//! Store support for the lane board: every board event lives in one compare-and-swap log,
//! `refs/hpp/board/log`, one commit per write whose tree holds `events.json` (the 1..n events
//! of that write), so a write of several events (select's SELECTED and NOT-SELECTED) lands
//! whole or not at all.

use super::{Chain, CommitId, Error, NewRecord, Store, refs};

impl Store {
    /// The ref of the board log.
    pub const BOARD_LOG: &str = "refs/hpp/board/log";

    /// The blob of each board commit.
    pub const BOARD_FILE: &str = "events.json";

    /// Reads the board log, oldest write first (an empty chain when the board is empty).
    pub fn read_board(&self) -> Result<Chain, Error> {
        debug_assert!(Self::BOARD_LOG.starts_with(refs::BOARD_PREFIX));
        self.read_chain(Self::BOARD_LOG, Self::BOARD_FILE)
    }

    /// Appends one write (`events.json` bytes) on top of `expected`, by compare-and-swap:
    /// [`Error::Moved`] when another writer got there first.
    pub fn append_board(
        &self,
        expected: Option<&CommitId>,
        events_json: &[u8],
        message: &str,
    ) -> Result<CommitId, Error> {
        self.append(
            Self::BOARD_LOG,
            expected,
            &NewRecord {
                file: Self::BOARD_FILE,
                bytes: events_json,
                message,
            },
        )
    }
}
