//! Maps (CONCEPTS.md "lane", "monitor", "context budget"): lane, agent, monitor and context
//! projections, `git hpp map lane|agent|monitor|context`.
//!
//! A map is a projection of data you supply against a clock you supply: it never reads the clock
//! itself, never probes anything, and gives the same bytes for the same input in any order.
//! - Lane map (`hpp.map/v1`, view `lane`): each lane's liveness (`alive`, `suspect`, `dead`,
//!   `unknown`, or its declared status when no `now` is given) and the collisions between live
//!   exclusive lanes whose territories are equal or nested at a `/` boundary. A dead lane never
//!   collides; a heartbeat in the future of `now` is an error, not liveness.
//! - Agent map: roles, modules and the capabilities they provide, and an execution chain of events.
//! - Context map: the context compiler's provenance under a budget.
//! - Monitor map (`hpp.monitor-map/v1`): each declared monitor `healthy`, `stale`, `skew` or
//!   `unknown` against `now`.
//!
//! Pure: touches no refs (the CLI reads live lanes from `refs/hpp/lanes/*` and hands them here).
//!
//! ```
//! use serde_json::json;
//! let lanes = json!([
//!     {"id": "maker", "territory": ["src"], "heartbeat_at": 990},
//!     {"id": "checker", "territory": ["src/api"], "heartbeat_at": 950},
//! ]);
//! let map = hpp_core::maps::lane_map(&lanes, &hpp_core::maps::LaneClock::at(1000)).expect("valid");
//! assert_eq!(map.collisions[0].lanes, ["checker", "maker"]);
//! ```

mod agent;
mod context;
mod lane;
mod monitor;
#[cfg(test)]
mod tests;

use serde_json::Value;

pub use agent::{GraphMap, agent_map};
pub use context::{ContextMap, ContextProvenance, context_map};
pub use lane::{Collision, LaneClock, LaneMap, lane_collision_control, lane_map, paths_overlap};
pub use monitor::{
    MonitorMap, MonitorState, MonitorStatus, classify, monitor_freshness_control, monitor_map,
};

/// The schema of the lane, agent and context maps.
pub const SCHEMA: &str = "hpp.map/v1";

/// The schema of the monitor map.
pub const MONITOR_SCHEMA: &str = "hpp.monitor-map/v1";

/// Default seconds after which a lane's heartbeat makes it suspect.
pub const DEFAULT_SUSPECT_AFTER: i64 = 300;

/// Default seconds after which a lane's heartbeat makes it dead.
pub const DEFAULT_DEAD_AFTER: i64 = 900;

/// Default seconds a monitor's signal may lie in the future before it is skew.
pub const DEFAULT_SKEW_TOLERANCE: i64 = 5;

/// Why a map source was refused (the reference's sentences).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The source is not a JSON array (`what` is `lanes`, `monitors` or `events`).
    #[error("{0} must be a list")]
    NotAList(&'static str),
    /// `now` is negative.
    #[error("now must be a non-negative integer")]
    BadNow,
    /// The liveness thresholds are out of order.
    #[error("lane thresholds must satisfy 0 < suspect_after < dead_after")]
    Thresholds,
    /// A lane has no id, or an empty one.
    #[error("every lane needs an id")]
    LaneId,
    /// Two lanes share an id.
    #[error("duplicate lane: {0}")]
    DuplicateLane(String),
    /// A lane's territory is missing, empty, or holds a non-string or empty path.
    #[error("lane {0} needs non-empty territory")]
    NoTerritory(String),
    /// A territory path is nothing but slashes.
    #[error("lane {0} has invalid territory")]
    BadTerritory(String),
    /// A lane's `exclusive` or `status` field has the wrong type.
    #[error("lane {lane} has invalid {field}")]
    BadLaneField {
        /// The lane.
        lane: String,
        /// The field.
        field: &'static str,
    },
    /// A heartbeat is not an integer, is negative, or lies in the future of `now`.
    #[error("lane {lane} has invalid heartbeat_at ({why})")]
    Heartbeat {
        /// The lane.
        lane: String,
        /// What is wrong with it.
        why: String,
    },
    /// The manifest's roles or modules have the wrong shape.
    #[error("manifest {0}")]
    Manifest(&'static str),
    /// A module has no id.
    #[error("every module needs an id")]
    ModuleId,
    /// A module's capability is not a non-empty string.
    #[error("module {0} has invalid capability")]
    Capability(String),
    /// An event has no type (1-based index).
    #[error("event {0} needs a type")]
    EventType(usize),
    /// The context inputs or budget were refused.
    #[error(transparent)]
    Context(#[from] crate::context::Error),
    /// A monitor is not an object.
    #[error("every monitor must be an object")]
    MonitorObject,
    /// A monitor lacks one of its string fields.
    #[error("monitor needs non-empty id, target, type, severity, cost and consumer_gate")]
    MonitorFields,
    /// Two monitors share an id.
    #[error("duplicate monitor: {0}")]
    DuplicateMonitor(String),
    /// A monitor's cadence or freshness is not a positive integer.
    #[error("monitor {0} needs positive cadence and freshness")]
    MonitorTiming(String),
    /// A monitor's `last_signal` is not a non-negative integer.
    #[error("monitor {0} has invalid last_signal")]
    Signal(String),
    /// The skew tolerance is negative.
    #[error("skew_tolerance must be a non-negative integer")]
    SkewTolerance,
}

/// A JSON integer of any size, as Python's `int` (a float or a bool is not one).
pub(crate) fn int(value: &Value) -> Option<crate::int::Int> {
    crate::int::Int::from_json(value)
}

pub(crate) fn non_empty_str(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}
