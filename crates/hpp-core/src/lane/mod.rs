//! Lanes (CONCEPTS.md "lane"): an agent's claim on a territory of the repository, its
//! liveness, and the guard that keeps edits inside it. Pure: the application keeps each lane's
//! log at `refs/hpp/lanes/<id>` and its worktree on `hpp/lane/<id>`.
//!
//! - [`claim`]: lane ids, territories and the records of a lane's log, and the rule that a log
//!   must follow;
//! - [`liveness`]: when a lane counts as alive, stale or dead, from its last heartbeat;
//! - [`guard`]: whether an edit falls inside the lane's territory.

pub mod claim;
pub mod guard;
pub mod liveness;
