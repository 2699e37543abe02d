//! The lanes the board knows of, and which are alive.

/// What the lane registry (`refs/hpp/lanes/`) says about each registered lane at the time of a
/// request: lane id → alive. A lane absent from it is not registered; the board takes it (a
/// board lane need not be a worktree), and refuses only a lane known to be dead.
pub type LaneRegistry = std::collections::BTreeMap<String, bool>;

/// Seconds without a heartbeat after which a registered lane is dead (the reference's default).
pub const DEAD_AFTER_S: i64 = 30 * 60;

/// Builds the [`LaneRegistry`] from the lane-map source document (`[{"id", "status",
/// "heartbeat_at", ...}]`, heartbeat in Unix seconds) at `now`: a lane is dead when its status
/// is closed, aborted, dead or inactive, or its last heartbeat is older than [`DEAD_AFTER_S`].
pub fn lane_registry(source: &serde_json::Value, now: i64) -> LaneRegistry {
    source
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|lane| {
            let id = lane.get("id")?.as_str()?.to_owned();
            let status = lane
                .get("status")
                .and_then(|s| s.as_str())
                .unwrap_or("open");
            let closed = matches!(status, "closed" | "aborted" | "dead" | "inactive");
            let stale = lane
                .get("heartbeat_at")
                .and_then(serde_json::Value::as_i64)
                .is_some_and(|at| now - at > DEAD_AFTER_S);
            Some((id, !closed && !stale))
        })
        .collect()
}
