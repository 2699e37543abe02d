//! The `refs/hpp/` layout: the one place that builds ref names.
//!
//! | ref | holds |
//! |---|---|
//! | `refs/hpp/loops/<loop>` | the event log of one loop, one commit per event |
//! | `refs/hpp/evidence/<id>-<stamp>[-N]` | one evidence bundle |
//! | `refs/hpp/attestations/<tree>/<id>` | one attestation of the snapshot tree `<tree>` |
//!
//! Later record kinds (lanes, hop states) add their prefixes here.

use std::fmt;
use std::str::FromStr;

use gix::bstr::ByteSlice;

/// The prefix of every record ref.
pub const PREFIX: &str = "refs/hpp/";

/// The prefix of every loop's event log.
pub const LOOPS_PREFIX: &str = "refs/hpp/loops/";

/// The name of a loop, validated as a ref path under [`LOOPS_PREFIX`].
///
/// A loop name follows git's rules for a branch name (so the default, the current branch, is
/// always valid): components separated by `/`, none empty, none starting with `.` or ending in
/// `.lock`, no `..`, no `@{`, no space, control character or any of `~^:?*[\`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct LoopId(String);

/// Why a loop name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid loop name {name:?}: a loop name must be a valid git ref name (like a branch name)"
)]
pub struct InvalidLoopId {
    /// The refused name.
    pub name: String,
}

impl FromStr for LoopId {
    type Err = InvalidLoopId;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidLoopId {
            name: name.to_owned(),
        };
        if name.is_empty() || name == "@" || name.starts_with('-') {
            return Err(invalid());
        }
        gix::validate::reference::name_partial(name.as_bytes().as_bstr()).map_err(|_| invalid())?;
        gix::refs::FullName::try_from(format!("{LOOPS_PREFIX}{name}")).map_err(|_| invalid())?;
        Ok(Self(name.to_owned()))
    }
}

impl fmt::Display for LoopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl LoopId {
    /// Returns the name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The prefix of every evidence bundle.
pub const EVIDENCE_PREFIX: &str = "refs/hpp/evidence/";

/// The prefix of every attestation.
pub const ATTESTATIONS_PREFIX: &str = "refs/hpp/attestations/";

/// The prefix of every sealed House Session (`refs/hpp/deliberations/<id>`).
pub const DELIBERATIONS_PREFIX: &str = "refs/hpp/deliberations/";

/// The prefix of every lane's claim and heartbeat log (`refs/hpp/lanes/<lane>`).
pub const LANES_PREFIX: &str = "refs/hpp/lanes/";

/// The prefix of the lane board: every board event lives in the one log `refs/hpp/board/log`.
pub const BOARD_PREFIX: &str = "refs/hpp/board/";

/// The prefix of every Hop state (`refs/hpp/hop/states/<ID>`).
pub const HOP_STATES_PREFIX: &str = "refs/hpp/hop/states/";

/// The chain of accepted Hop states.
pub const HOP_ACCEPTED: &str = "refs/hpp/hop/accepted";

/// The prefix of every handoff log (`refs/hpp/handoffs/<lane>`).
pub const HANDOFFS_PREFIX: &str = "refs/hpp/handoffs/";

/// The prefix of the gotcha memory (failures and promoted gotchas).
pub const GOTCHAS_PREFIX: &str = "refs/hpp/gotchas/";

/// Every ref the harness keeps, for push and fetch refspecs.
pub const ALL: &str = "refs/hpp/*";

/// Returns the ref of an evidence bundle named `name` (`<id>-<stamp>[-N]`, already validated).
pub fn evidence(name: &str) -> String {
    format!("{EVIDENCE_PREFIX}{name}")
}

/// Returns the prefix under which the attestations of `tree` live (ends with `/`).
pub fn attestations_of(tree: &str) -> String {
    format!("{ATTESTATIONS_PREFIX}{tree}/")
}

/// Returns the ref of one attestation of `tree`.
pub fn attestation(tree: &str, id: &str) -> String {
    format!("{ATTESTATIONS_PREFIX}{tree}/{id}")
}

/// Returns the ref holding a loop's event log.
pub fn loop_log(id: &LoopId) -> String {
    format!("{LOOPS_PREFIX}{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_like_names_are_loop_names() {
        for name in ["main", "feature/login", "ITEM-1", "v1.2", "a_b"] {
            let id: LoopId = name.parse().unwrap();
            assert_eq!(loop_log(&id), format!("refs/hpp/loops/{name}"));
        }
    }

    #[test]
    fn control_names_git_would_refuse_are_refused() {
        for name in [
            "", "a..b", ".hidden", "x.lock", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b",
            "a/", "/a", "a//b", "@", "a@{1}", "-x", "tab\t",
        ] {
            assert!(
                name.parse::<LoopId>().is_err(),
                "{name:?} should be refused"
            );
        }
    }
}
