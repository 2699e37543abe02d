//! The `refs/hpp/` layout: the one place that builds ref names.
//!
//! | ref | holds |
//! |---|---|
//! | `refs/hpp/loops/<loop>` | the event log of one loop, one commit per event |
//! | `refs/hpp/evidence/<id>-<stamp>[-N]` | one evidence bundle |
//! | `refs/hpp/attestations/<tree>/<id>` | one attestation of the snapshot tree `<tree>` |
//!
//! and every later kind below (lanes, the board, House Sessions, Hop, handoffs, gotchas).

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

/// The local ref that serialises lane starts on one machine. Outside `refs/hpp/`, so it is
/// never pushed: it orders starts, it records nothing.
pub const LANE_STARTS: &str = "refs/hpp-local/lane-starts";

/// The prefix of the lane board: every board event lives in the one log [`BOARD_LOG`].
pub const BOARD_PREFIX: &str = "refs/hpp/board/";

/// The lane board's log.
pub const BOARD_LOG: &str = "refs/hpp/board/log";

/// The prefix of every Hop ref.
pub const HOP_PREFIX: &str = "refs/hpp/hop/";

/// The prefix of every Hop state (`refs/hpp/hop/states/<ID>`).
pub const HOP_STATES_PREFIX: &str = "refs/hpp/hop/states/";

/// The chain of accepted Hop states.
pub const HOP_ACCEPTED: &str = "refs/hpp/hop/accepted";

/// The prefix of every Hop attempt's head (`refs/hpp/hop/attempts/<AT_ID>`).
pub const HOP_ATTEMPTS_PREFIX: &str = "refs/hpp/hop/attempts/";

/// The prefix of every Hop prompt record (`refs/hpp/hop/prompts/<P_ID>`).
pub const HOP_PROMPTS_PREFIX: &str = "refs/hpp/hop/prompts/";

/// The prefix of every Hop check record (`refs/hpp/hop/checks/<EVIDENCE_ID>`).
pub const HOP_CHECKS_PREFIX: &str = "refs/hpp/hop/checks/";

/// The prefix of every handoff log (`refs/hpp/handoffs/<lane>`).
pub const HANDOFFS_PREFIX: &str = "refs/hpp/handoffs/";

/// The prefix of the gotcha memory (failures and promoted gotchas).
pub const GOTCHAS_PREFIX: &str = "refs/hpp/gotchas/";

/// The log of recorded failures of the gotcha memory.
pub const GOTCHA_FAILURES: &str = "refs/hpp/gotchas/failures";

/// The log of promoted gotchas.
pub const GOTCHA_PROMOTED: &str = "refs/hpp/gotchas/promoted";

/// Where a session's turn checkpoints live: `refs/hpp/checkpoints/<session>/turn/<n>`.
pub const CHECKPOINTS_PREFIX: &str = "refs/hpp/checkpoints/";

/// The record kinds of the ref layout, each with where its refs live: an exact name, or a
/// prefix (ending in `/`) that at least one more segment follows.
pub const NAMESPACES: [(&str, &str); 18] = [
    ("loop", LOOPS_PREFIX),
    ("evidence", EVIDENCE_PREFIX),
    ("attestation", ATTESTATIONS_PREFIX),
    ("deliberation", DELIBERATIONS_PREFIX),
    ("lane", LANES_PREFIX),
    ("board", BOARD_LOG),
    ("hop state", HOP_STATES_PREFIX),
    ("hop accepted", HOP_ACCEPTED),
    ("hop attempt", HOP_ATTEMPTS_PREFIX),
    ("hop prompt", HOP_PROMPTS_PREFIX),
    ("hop check", HOP_CHECKS_PREFIX),
    ("handoff", HANDOFFS_PREFIX),
    ("gotcha failures", GOTCHA_FAILURES),
    ("gotcha promoted", GOTCHA_PROMOTED),
    ("trust policy", TRUST),
    ("monitor", "refs/hpp/monitors/"),
    ("checkpoint", CHECKPOINTS_PREFIX),
    ("preserved", PRESERVED_PREFIX),
];

/// Records created once: a ref that names one never moves once it exists.
pub const WRITE_ONCE: [&str; 7] = [
    EVIDENCE_PREFIX,
    ATTESTATIONS_PREFIX,
    HOP_STATES_PREFIX,
    HOP_PROMPTS_PREFIX,
    HOP_CHECKS_PREFIX,
    CHECKPOINTS_PREFIX,
    PRESERVED_PREFIX,
];

/// The record kind whose namespace holds `name` (a full ref name), `None` outside the ref
/// layout (`refs/hpp/whatever/x`).
///
/// ```
/// use hpp_store::refs::namespace;
/// assert_eq!(namespace("refs/hpp/hop/states/S_1"), Some("hop state"));
/// assert_eq!(namespace("refs/hpp/whatever/x"), None);
/// assert_eq!(namespace("refs/hpp/loops/"), None);
/// ```
pub fn namespace(name: &str) -> Option<&'static str> {
    NAMESPACES.iter().find_map(|(kind, place)| {
        let holds = match place.strip_suffix('/') {
            Some(_) => name.len() > place.len() && name.starts_with(place),
            None => name == *place,
        };
        holds.then_some(*kind)
    })
}

/// Returns the ref of turn `n` of `session` (the session already checked).
pub fn turn_checkpoint(session: &str, n: usize) -> String {
    checkpoint(session, "turn", n)
}

/// Returns the ref of checkpoint `n` of `kind` (`turn`, `command`) of `session`.
pub fn checkpoint(session: &str, kind: &str, n: usize) -> String {
    format!("{CHECKPOINTS_PREFIX}{session}/{kind}/{n}")
}

/// Where a loop's history not kept by `event reconcile` is preserved:
/// `refs/hpp/preserved/loops/<loop>/<commit>`, created once.
pub const PRESERVED_PREFIX: &str = "refs/hpp/preserved/";

/// Returns the ref that preserves the side of loop `id` ending at `commit`.
pub fn preserved_loop(id: &LoopId, commit: &str) -> String {
    format!("{PRESERVED_PREFIX}loops/{id}/{commit}")
}

/// The trust policy's log: one commit per change, each signed by the roots of the one before.
pub const TRUST: &str = "refs/hpp/trust";

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

/// How many names [`unique_names`] offers.
pub const UNIQUE_NAMES: usize = 100;

/// The names a record created once may take when its natural name is taken: `base`, then
/// `base-2`, `base-3`, ... up to [`UNIQUE_NAMES`] names.
pub fn unique_names(base: &str) -> impl Iterator<Item = String> + '_ {
    (1..=UNIQUE_NAMES).map(move |n| {
        if n == 1 {
            base.to_owned()
        } else {
            format!("{base}-{n}")
        }
    })
}

/// Returns the ref of a sealed House Session.
pub fn deliberation(id: &str) -> String {
    format!("{DELIBERATIONS_PREFIX}{id}")
}

/// Returns the ref of a lane's claim and heartbeat log (the id already validated).
pub fn lane(id: &str) -> String {
    format!("{LANES_PREFIX}{id}")
}

/// Returns the ref of a lane's handoff log.
pub fn handoffs(lane: &str) -> String {
    format!("{HANDOFFS_PREFIX}{lane}")
}

/// Returns the ref pinning the Hop state `id`.
pub fn hop_state(id: &str) -> String {
    format!("{HOP_STATES_PREFIX}{id}")
}

/// Returns the ref of a Hop attempt's head state.
pub fn hop_attempt(id: &str) -> String {
    format!("{HOP_ATTEMPTS_PREFIX}{id}")
}

/// Returns the ref of a Hop prompt record.
pub fn hop_prompt(id: &str) -> String {
    format!("{HOP_PROMPTS_PREFIX}{id}")
}

/// Returns the ref of a Hop check record.
pub fn hop_check(id: &str) -> String {
    format!("{HOP_CHECKS_PREFIX}{id}")
}

/// The prefix of every local branch.
pub const HEADS_PREFIX: &str = "refs/heads/";

/// Returns the full ref of the local branch `short` (`main` gives `refs/heads/main`).
pub fn branch(short: &str) -> String {
    format!("{HEADS_PREFIX}{short}")
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
    fn every_record_kind_has_its_prefix() {
        assert_eq!(lane("ui"), "refs/hpp/lanes/ui");
        assert_eq!(handoffs("ui"), "refs/hpp/handoffs/ui");
        assert_eq!(deliberation("s-1"), "refs/hpp/deliberations/s-1");
        assert_eq!(hop_state("P_1"), "refs/hpp/hop/states/P_1");
        assert_eq!(hop_attempt("AT_1"), "refs/hpp/hop/attempts/AT_1");
        assert_eq!(hop_prompt("P_1"), "refs/hpp/hop/prompts/P_1");
        assert_eq!(hop_check("E_1"), "refs/hpp/hop/checks/E_1");
        assert_eq!(branch("main"), "refs/heads/main");
        for name in [BOARD_LOG, GOTCHA_FAILURES, GOTCHA_PROMOTED, HOP_ACCEPTED] {
            assert!(name.starts_with(PREFIX), "{name}");
        }
        assert!(
            !LANE_STARTS.starts_with(PREFIX),
            "the start lock is never pushed"
        );
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
