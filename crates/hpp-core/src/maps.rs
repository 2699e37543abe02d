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

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::context;
use crate::graph::{Edge, Graph, Node, edge, node};

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
    Context(#[from] context::Error),
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

fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

fn non_empty_str(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The clock and thresholds a lane map is projected against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneClock {
    /// Unix seconds; `None` projects each lane's declared status.
    pub now: Option<i64>,
    /// A heartbeat older than this makes a lane suspect.
    pub suspect_after: i64,
    /// A heartbeat older than this makes a lane dead.
    pub dead_after: i64,
}

impl LaneClock {
    /// Returns the clock at `now` with the default thresholds.
    pub fn at(now: i64) -> Self {
        Self {
            now: Some(now),
            suspect_after: DEFAULT_SUSPECT_AFTER,
            dead_after: DEFAULT_DEAD_AFTER,
        }
    }
}

/// Two lanes whose exclusive territories overlap.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Collision {
    /// The two lanes, sorted.
    pub lanes: [String; 2],
    /// Every path of either lane that takes part in an overlap, sorted.
    pub territory: Vec<String>,
}

/// A lane map, `hpp.map/v1` view `lane`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LaneMap {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// Always `lane`.
    pub view: &'static str,
    /// Lanes and territories; edges lane → territory `owns:<liveness>`.
    #[serde(flatten)]
    pub graph: Graph,
    /// The collisions, sorted.
    pub collisions: Vec<Collision>,
    /// Each lane's liveness.
    pub liveness: BTreeMap<String, String>,
}

impl LaneMap {
    /// Returns what `--format mermaid` draws: the map's graph plus one
    /// `collides:<paths joined ", ">` edge per collision.
    pub fn drawing(&self) -> Graph {
        let mut edges = self.graph.edges.clone();
        for c in &self.collisions {
            edges.push(edge(
                format!("lane:{}", c.lanes[0]),
                format!("lane:{}", c.lanes[1]),
                format!("collides:{}", c.territory.join(", ")),
            ));
        }
        Graph::new(self.graph.nodes.clone(), edges)
    }
}

fn normalise_path(path: &str) -> String {
    path.replace('\\', "/").trim_matches('/').to_owned()
}

/// Returns whether two normalised paths are equal or one contains the other at a `/` boundary.
pub fn paths_overlap(a: &str, b: &str) -> bool {
    let nested = |long: &str, short: &str| {
        long.strip_prefix(short)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    a == b || nested(a, b) || nested(b, a)
}

fn liveness(
    lane: &str,
    object: &serde_json::Map<String, Value>,
    clock: &LaneClock,
) -> Result<String, Error> {
    let declared = match object.get("status") {
        None => "declared",
        Some(Value::String(s)) => s.as_str(),
        Some(_) => {
            return Err(Error::BadLaneField {
                lane: lane.to_owned(),
                field: "status",
            });
        }
    };
    if matches!(declared, "closed" | "dead" | "inactive") {
        return Ok("dead".into());
    }
    let Some(now) = clock.now else {
        return Ok(declared.to_owned());
    };
    let heartbeat = match object.get("heartbeat_at") {
        None | Some(Value::Null) => return Ok("unknown".into()),
        Some(value) => int(value),
    };
    let bad = |why: String| Error::Heartbeat {
        lane: lane.to_owned(),
        why,
    };
    let heartbeat = heartbeat.ok_or_else(|| bad("not an integer".into()))?;
    if heartbeat < 0 {
        return Err(bad(format!("{heartbeat} is negative")));
    }
    if heartbeat > now {
        return Err(bad(format!("{heartbeat} is in the future of now {now}")));
    }
    let age = now - heartbeat;
    Ok(if age <= clock.suspect_after {
        "alive"
    } else if age <= clock.dead_after {
        "suspect"
    } else {
        "dead"
    }
    .into())
}

struct Projected {
    id: String,
    paths: Vec<String>,
    exclusive: bool,
    dead: bool,
}

/// Projects a lane source `[{"id", "territory", "exclusive"?, "status"?, "heartbeat_at"?}]`:
/// liveness per lane and the collisions between live exclusive lanes.
pub fn lane_map(lanes: &Value, clock: &LaneClock) -> Result<LaneMap, Error> {
    let items = lanes.as_array().ok_or(Error::NotAList("lanes"))?;
    if clock.now.is_some_and(|n| n < 0) {
        return Err(Error::BadNow);
    }
    if !(0 < clock.suspect_after && clock.suspect_after < clock.dead_after) {
        return Err(Error::Thresholds);
    }
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    let mut projected: Vec<Projected> = Vec::new();
    let mut states = BTreeMap::new();
    for item in items {
        let object = item.as_object().ok_or(Error::LaneId)?;
        let id = non_empty_str(object.get("id"))
            .ok_or(Error::LaneId)?
            .to_owned();
        if states.contains_key(&id) {
            return Err(Error::DuplicateLane(id));
        }
        let territory = object
            .get("territory")
            .and_then(Value::as_array)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| Error::NoTerritory(id.clone()))?;
        let mut paths = BTreeSet::new();
        for path in territory {
            let path = non_empty_str(Some(path)).ok_or_else(|| Error::NoTerritory(id.clone()))?;
            let path = normalise_path(path);
            if path.is_empty() {
                return Err(Error::BadTerritory(id));
            }
            paths.insert(path);
        }
        let exclusive = match object.get("exclusive") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(Error::BadLaneField {
                    lane: id,
                    field: "exclusive",
                });
            }
        };
        let state = liveness(&id, object, clock)?;
        let lane_node = format!("lane:{id}");
        nodes.push(node(&lane_node, "lane", &id));
        for path in &paths {
            let territory_node = format!("territory:{path}");
            nodes.push(node(&territory_node, "territory", path));
            edges.push(edge(&lane_node, territory_node, format!("owns:{state}")));
        }
        projected.push(Projected {
            id: id.clone(),
            paths: paths.into_iter().collect(),
            exclusive,
            dead: state == "dead",
        });
        states.insert(id, state);
    }
    let mut collisions = Vec::new();
    for (i, left) in projected.iter().enumerate() {
        for right in &projected[i + 1..] {
            if !(left.exclusive && right.exclusive) || left.dead || right.dead {
                continue;
            }
            let mut overlap = BTreeSet::new();
            for l in &left.paths {
                for r in &right.paths {
                    if paths_overlap(l, r) {
                        overlap.insert(l.clone());
                        overlap.insert(r.clone());
                    }
                }
            }
            if !overlap.is_empty() {
                let mut pair = [left.id.clone(), right.id.clone()];
                pair.sort();
                collisions.push(Collision {
                    lanes: pair,
                    territory: overlap.into_iter().collect(),
                });
            }
        }
    }
    collisions.sort();
    Ok(LaneMap {
        schema: SCHEMA,
        view: "lane",
        graph: Graph::new(nodes, edges),
        collisions,
        liveness: states,
    })
}

/// A map that is only a graph: the agent map (`view: agent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphMap {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The view's name.
    pub view: &'static str,
    /// The nodes and edges.
    #[serde(flatten)]
    pub graph: Graph,
}

/// Projects the manifest's roles, its modules and the capabilities they provide, and the
/// `events` (a JSON array of `{"type", ...}`) as an execution chain `event:<i>:<type>` linked
/// by `then`.
pub fn agent_map(manifest: &Value, events: Option<&Value>) -> Result<GraphMap, Error> {
    let manifest = manifest
        .as_object()
        .ok_or(Error::Manifest("must be an object"))?;
    let empty = Vec::new();
    let roles = match manifest.get("roles") {
        None => &empty,
        Some(Value::Array(r)) => r,
        Some(_) => return Err(Error::Manifest("roles must be strings")),
    };
    let mut nodes: Vec<Node> = Vec::new();
    let mut edges: Vec<Edge> = Vec::new();
    for role in roles {
        let role = non_empty_str(Some(role)).ok_or(Error::Manifest("roles must be strings"))?;
        nodes.push(node(format!("role:{role}"), "role", role));
    }
    let modules = match manifest.get("modules") {
        None => &empty,
        Some(Value::Array(m)) => m,
        Some(_) => return Err(Error::Manifest("modules must be a list")),
    };
    for module in modules {
        let id = non_empty_str(module.get("id")).ok_or(Error::ModuleId)?;
        let module_node = format!("module:{id}");
        nodes.push(node(&module_node, "module", id));
        let capabilities = match module.get("capabilities") {
            None => &empty,
            Some(Value::Array(c)) => c,
            Some(_) => return Err(Error::Capability(id.to_owned())),
        };
        for capability in capabilities {
            let capability =
                non_empty_str(Some(capability)).ok_or_else(|| Error::Capability(id.to_owned()))?;
            let capability_node = format!("capability:{capability}");
            nodes.push(node(&capability_node, "capability", capability));
            edges.push(edge(&module_node, capability_node, "provides"));
        }
    }
    if let Some(events) = events {
        let events = events.as_array().ok_or(Error::NotAList("events"))?;
        let mut previous: Option<String> = None;
        for (i, event) in events.iter().enumerate() {
            let kind = non_empty_str(event.get("type")).ok_or(Error::EventType(i + 1))?;
            let event_node = format!("event:{}:{kind}", i + 1);
            nodes.push(node(&event_node, "execution", kind));
            if let Some(prev) = previous.replace(event_node.clone()) {
                edges.push(edge(prev, event_node, "then"));
            }
        }
    }
    Ok(GraphMap {
        schema: SCHEMA,
        view: "agent",
        graph: Graph::new(nodes, edges),
    })
}

/// One block's provenance in a context map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextProvenance {
    /// The compiler's record of the block.
    #[serde(flatten)]
    pub record: context::Provenance,
    /// `included` or `omitted`.
    pub status: &'static str,
}

/// A context map, `hpp.map/v1` view `context`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextMap {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// Always `context`.
    pub view: &'static str,
    /// Sources → `context:compiled`, `included` or `omitted`.
    #[serde(flatten)]
    pub graph: Graph,
    /// The budget, in characters.
    pub budget: u64,
    /// Characters used, separators included.
    pub used: u64,
    /// `budget - used`.
    pub remaining: u64,
    /// Every block, sorted by source.
    pub provenance: Vec<ContextProvenance>,
}

/// Projects the context compiler's provenance for `inputs` under `budget`.
pub fn context_map(inputs: &Value, budget: i64) -> Result<ContextMap, Error> {
    let compiled = context::compile(inputs, budget)?;
    let mut nodes = vec![node("context:compiled", "context", "compiled context")];
    let mut edges = Vec::new();
    let mut provenance = Vec::new();
    for (status, records) in [
        ("included", &compiled.included),
        ("omitted", &compiled.omitted),
    ] {
        for record in records {
            let source = format!("source:{}", record.source);
            nodes.push(node(&source, "source", &record.source));
            edges.push(edge(source, "context:compiled", status));
            provenance.push(ContextProvenance {
                record: record.clone(),
                status,
            });
        }
    }
    provenance.sort_by(|a, b| a.record.source.cmp(&b.record.source));
    Ok(ContextMap {
        schema: SCHEMA,
        view: "context",
        graph: Graph::new(nodes, edges),
        budget: compiled.budget,
        used: compiled.used,
        remaining: compiled.remaining,
        provenance,
    })
}

/// A monitor's state against `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MonitorStatus {
    /// `now - last_signal <= freshness`.
    Healthy,
    /// The signal is older than its freshness window.
    Stale,
    /// The signal lies further in the future than the skew tolerance.
    Skew,
    /// No signal was supplied.
    Unknown,
}

impl MonitorStatus {
    /// Returns the status's name.
    pub fn as_str(self) -> &'static str {
        match self {
            MonitorStatus::Healthy => "healthy",
            MonitorStatus::Stale => "stale",
            MonitorStatus::Skew => "skew",
            MonitorStatus::Unknown => "unknown",
        }
    }
}

/// Classifies a signal: none is unknown, beyond `now + skew_tolerance` is skew, within the
/// freshness window is healthy, otherwise stale.
pub fn classify(
    signal: Option<i64>,
    now: i64,
    freshness: i64,
    skew_tolerance: i64,
) -> MonitorStatus {
    match signal {
        None => MonitorStatus::Unknown,
        Some(s) if s > now.saturating_add(skew_tolerance) => MonitorStatus::Skew,
        Some(s) if now.saturating_sub(s) <= freshness => MonitorStatus::Healthy,
        Some(_) => MonitorStatus::Stale,
    }
}

/// One monitor, projected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MonitorState {
    /// The monitor's id.
    pub id: String,
    /// What it observes.
    pub target: String,
    /// Its probe type.
    #[serde(rename = "type")]
    pub probe: String,
    /// Seconds between probes.
    pub cadence: i64,
    /// Seconds a signal stays fresh.
    pub freshness: i64,
    /// The last signal, Unix seconds, if any.
    pub last_signal: Option<i64>,
    /// The state against `now`.
    pub status: MonitorStatus,
    /// How bad a failure is.
    pub severity: String,
    /// What a probe costs.
    pub cost: String,
    /// The gate that consumes it.
    pub consumer_gate: String,
}

/// A monitor map, `hpp.monitor-map/v1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MonitorMap {
    /// Always [`MONITOR_SCHEMA`].
    pub schema: &'static str,
    /// The clock it was projected against.
    pub now: i64,
    /// Seconds a signal may lie in the future.
    pub skew_tolerance: i64,
    /// Every monitor, sorted by id.
    pub monitors: Vec<MonitorState>,
}

impl MonitorMap {
    /// Returns what `--format mermaid` draws: `monitor:<id>` (label `<id> · <status>`)
    /// `observes` `target:<target>` and `gates` `gate:<consumer_gate>`.
    pub fn drawing(&self) -> Graph {
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        for m in &self.monitors {
            let monitor = format!("monitor:{}", m.id);
            let target = format!("target:{}", m.target);
            let gate = format!("gate:{}", m.consumer_gate);
            nodes.push(node(
                &monitor,
                "monitor",
                format!("{} · {}", m.id, m.status.as_str()),
            ));
            nodes.push(node(&target, "target", &m.target));
            nodes.push(node(&gate, "gate", &m.consumer_gate));
            edges.push(edge(&monitor, target, "observes"));
            edges.push(edge(monitor, gate, "gates"));
        }
        Graph::new(nodes, edges)
    }
}

/// Projects declared monitors `[{"id", "target", "type", "cadence", "freshness", "severity",
/// "cost", "consumer_gate", "last_signal"?}]` against `now`.
pub fn monitor_map(monitors: &Value, now: i64, skew_tolerance: i64) -> Result<MonitorMap, Error> {
    let items = monitors.as_array().ok_or(Error::NotAList("monitors"))?;
    if now < 0 {
        return Err(Error::BadNow);
    }
    if skew_tolerance < 0 {
        return Err(Error::SkewTolerance);
    }
    let mut out: Vec<MonitorState> = Vec::new();
    for item in items {
        let object = item.as_object().ok_or(Error::MonitorObject)?;
        let field = |k: &str| {
            non_empty_str(object.get(k))
                .map(str::to_owned)
                .ok_or(Error::MonitorFields)
        };
        let id = field("id")?;
        if out.iter().any(|m| m.id == id) {
            return Err(Error::DuplicateMonitor(id));
        }
        let positive = |k: &str| object.get(k).and_then(int).filter(|v| *v > 0);
        let (Some(cadence), Some(freshness)) = (positive("cadence"), positive("freshness")) else {
            return Err(Error::MonitorTiming(id));
        };
        let last_signal = match object.get("last_signal") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                int(v)
                    .filter(|s| *s >= 0)
                    .ok_or_else(|| Error::Signal(id.clone()))?,
            ),
        };
        out.push(MonitorState {
            target: field("target")?,
            probe: field("type")?,
            severity: field("severity")?,
            cost: field("cost")?,
            consumer_gate: field("consumer_gate")?,
            status: classify(last_signal, now, freshness, skew_tolerance),
            id,
            cadence,
            freshness,
            last_signal,
        });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(MonitorMap {
        schema: MONITOR_SCHEMA,
        now,
        skew_tolerance,
        monitors: out,
    })
}

/// The lane-collision control: two live exclusive lanes with nested territory collide, and the
/// same pair does not when one of them is dead or shared. `Err` says what went wrong.
pub fn lane_collision_control() -> Result<(), String> {
    let clock = LaneClock {
        now: Some(1000),
        suspect_after: 60,
        dead_after: 300,
    };
    let project = |lanes: Value| lane_map(&lanes, &clock).map_err(|e| e.to_string());
    let live = project(serde_json::json!([
        {"id": "maker", "territory": ["src"], "heartbeat_at": 980},
        {"id": "checker", "territory": ["src/api"], "heartbeat_at": 850},
        {"id": "old", "territory": ["src/api/routes"], "heartbeat_at": 100},
        {"id": "docs", "territory": ["srcdocs"], "heartbeat_at": 990},
    ]))?;
    let expected = vec![Collision {
        lanes: ["checker".into(), "maker".into()],
        territory: vec!["src".into(), "src/api".into()],
    }];
    if live.collisions != expected {
        return Err(format!(
            "expected only checker and maker to collide on src, src/api; got {:?}",
            live.collisions
        ));
    }
    if live.liveness.get("old").map(String::as_str) != Some("dead") {
        return Err("a lane 900 s past its heartbeat is not dead".into());
    }
    let shared = project(serde_json::json!([
        {"id": "maker", "territory": ["src"], "heartbeat_at": 980},
        {"id": "checker", "territory": ["src/api"], "heartbeat_at": 980, "exclusive": false},
    ]))?;
    if !shared.collisions.is_empty() {
        return Err("a shared lane produced a collision".into());
    }
    let future = lane_map(
        &serde_json::json!([{"id": "a", "territory": ["src"], "heartbeat_at": 1001}]),
        &clock,
    );
    if future.is_ok() {
        return Err("a heartbeat in the future was taken as liveness".into());
    }
    Ok(())
}

/// The monitor-freshness control: with freshness 120 at now 1000, a signal at 980 is healthy,
/// at 700 stale, at 1100 skew and a missing one unknown. `Err` says what went wrong.
pub fn monitor_freshness_control() -> Result<(), String> {
    let monitor = |id: &str, signal: Value| {
        serde_json::json!({"id": id, "target": "t", "type": "timestamp", "cadence": 60,
            "freshness": 120, "severity": "warn", "cost": "low", "consumer_gate": "resume",
            "last_signal": signal})
    };
    let map = monitor_map(
        &serde_json::json!([
            monitor("fresh", 980.into()),
            monitor("old", 700.into()),
            monitor("ahead", 1100.into()),
            monitor("silent", Value::Null),
        ]),
        1000,
        DEFAULT_SKEW_TOLERANCE,
    )
    .map_err(|e| e.to_string())?;
    let got: Vec<(&str, &str)> = map
        .monitors
        .iter()
        .map(|m| (m.id.as_str(), m.status.as_str()))
        .collect();
    let expected = [
        ("ahead", "skew"),
        ("fresh", "healthy"),
        ("old", "stale"),
        ("silent", "unknown"),
    ];
    if got != expected {
        return Err(format!("expected {expected:?}, got {got:?}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn clock(now: Option<i64>) -> LaneClock {
        LaneClock {
            now,
            suspect_after: 60,
            dead_after: 300,
        }
    }

    #[test]
    fn the_controls_pass() {
        assert_eq!(lane_collision_control(), Ok(()));
        assert_eq!(monitor_freshness_control(), Ok(()));
    }

    #[test]
    fn liveness_follows_the_heartbeat_age() {
        let map = lane_map(
            &json!([
                {"id": "a", "territory": ["x"], "heartbeat_at": 940},
                {"id": "b", "territory": ["y"], "heartbeat_at": 939},
                {"id": "c", "territory": ["z"], "heartbeat_at": 700},
                {"id": "d", "territory": ["w"], "heartbeat_at": 699},
                {"id": "e", "territory": ["v"]},
                {"id": "f", "territory": ["u"], "status": "closed", "heartbeat_at": 999},
            ]),
            &clock(Some(1000)),
        )
        .expect("valid");
        let got: Vec<&str> = map.liveness.values().map(String::as_str).collect();
        assert_eq!(
            got,
            ["alive", "suspect", "suspect", "dead", "unknown", "dead"]
        );
    }

    #[test]
    fn without_now_the_declared_status_is_projected() {
        let map = lane_map(
            &json!([{"id": "a", "territory": ["x"], "status": "active", "heartbeat_at": 5},
                    {"id": "b", "territory": ["y"]}]),
            &clock(None),
        )
        .expect("valid");
        assert_eq!(map.liveness["a"], "active");
        assert_eq!(map.liveness["b"], "declared");
    }

    #[test]
    fn paths_overlap_only_at_slash_boundaries() {
        assert!(paths_overlap("src", "src"));
        assert!(paths_overlap("src", "src/api"));
        assert!(paths_overlap("src/api/x", "src"));
        assert!(!paths_overlap("src", "srcdocs"));
        assert!(!paths_overlap("src/a", "src/b"));
    }

    #[test]
    fn territory_is_normalised() {
        let map = lane_map(
            &json!([{"id": "a", "territory": ["\\src\\api\\", "/src/api"]},
                    {"id": "b", "territory": ["src/"]}]),
            &clock(None),
        )
        .expect("valid");
        assert_eq!(map.collisions[0].territory, ["src", "src/api"]);
        assert!(map.graph.nodes.iter().any(|n| n.id == "territory:src/api"));
    }

    #[test]
    fn control_bad_lane_sources_are_refused() {
        let c = clock(Some(1000));
        let refuse = |v: Value, c: &LaneClock| lane_map(&v, c).expect_err("refused");
        assert!(matches!(
            refuse(
                json!([{"id": "a", "territory": ["x"], "heartbeat_at": 1001}]),
                &c
            ),
            Error::Heartbeat { .. }
        ));
        assert!(matches!(
            refuse(
                json!([{"id": "a", "territory": ["x"], "heartbeat_at": -1}]),
                &c
            ),
            Error::Heartbeat { .. }
        ));
        let bad = LaneClock {
            now: Some(1000),
            suspect_after: 300,
            dead_after: 300,
        };
        assert_eq!(refuse(json!([]), &bad), Error::Thresholds);
        assert_eq!(
            refuse(
                json!([]),
                &LaneClock {
                    suspect_after: 0,
                    ..c
                }
            ),
            Error::Thresholds
        );
        assert_eq!(
            refuse(
                json!([{"id": "a", "territory": ["x"]}, {"id": "a", "territory": ["y"]}]),
                &c
            ),
            Error::DuplicateLane("a".into())
        );
        assert_eq!(
            refuse(json!([{"id": "a", "territory": []}]), &c),
            Error::NoTerritory("a".into())
        );
        assert_eq!(
            refuse(json!([{"id": "a", "territory": ["//"]}]), &c),
            Error::BadTerritory("a".into())
        );
        assert_eq!(refuse(json!({}), &c), Error::NotAList("lanes"));
    }

    #[test]
    fn collision_drawing_adds_one_collides_edge() {
        let map = lane_map(
            &json!([{"id": "m", "territory": ["src"]}, {"id": "c", "territory": ["src/a"]}]),
            &clock(None),
        )
        .expect("valid");
        let drawing = map.drawing();
        assert!(
            drawing
                .edges
                .contains(&edge("lane:c", "lane:m", "collides:src, src/a"))
        );
    }

    #[test]
    fn monitor_statuses_are_classified() {
        assert_eq!(classify(None, 1000, 120, 5), MonitorStatus::Unknown);
        assert_eq!(classify(Some(1005), 1000, 120, 5), MonitorStatus::Healthy);
        assert_eq!(classify(Some(1006), 1000, 120, 5), MonitorStatus::Skew);
        assert_eq!(classify(Some(880), 1000, 120, 5), MonitorStatus::Healthy);
        assert_eq!(classify(Some(879), 1000, 120, 5), MonitorStatus::Stale);
    }

    #[test]
    fn control_bad_monitor_sources_are_refused() {
        let good = json!({"id": "m", "target": "t", "type": "x", "cadence": 1, "freshness": 1,
            "severity": "s", "cost": "c", "consumer_gate": "g"});
        assert_eq!(
            monitor_map(&json!([good, good]), 0, 5),
            Err(Error::DuplicateMonitor("m".into()))
        );
        let mut zero = good.clone();
        zero["freshness"] = json!(0);
        assert_eq!(
            monitor_map(&json!([zero]), 0, 5),
            Err(Error::MonitorTiming("m".into()))
        );
        let mut bad_signal = good.clone();
        bad_signal["last_signal"] = json!(-3);
        assert_eq!(
            monitor_map(&json!([bad_signal]), 0, 5),
            Err(Error::Signal("m".into()))
        );
        assert_eq!(monitor_map(&json!([good]), -1, 5), Err(Error::BadNow));
        assert_eq!(monitor_map(&json!([]), 0, -1), Err(Error::SkewTolerance));
    }

    #[test]
    fn the_agent_map_chains_events() {
        let map = agent_map(
            &json!({"roles": ["maker"], "modules": [{"id": "k", "capabilities": ["c"]}]}),
            Some(&json!([{"type": "work_started"}, {"type": "evidence_recorded"}])),
        )
        .expect("valid");
        assert!(map.graph.edges.contains(&edge(
            "event:1:work_started",
            "event:2:evidence_recorded",
            "then"
        )));
        assert!(
            map.graph
                .edges
                .contains(&edge("module:k", "capability:c", "provides"))
        );
        assert_eq!(
            agent_map(&json!({}), Some(&json!([{"type": ""}]))),
            Err(Error::EventType(1))
        );
    }

    #[test]
    fn the_context_map_keeps_provenance_sorted_by_source() {
        let map = context_map(
            &json!([{"source": "b", "priority": 1, "content": "xx"},
                    {"source": "a", "priority": 2, "content": "yyyyyyyy"}]),
            5,
        )
        .expect("valid");
        assert_eq!(map.provenance[0].record.source, "a");
        assert_eq!(map.provenance[0].status, "omitted");
        assert_eq!(map.provenance[1].status, "included");
        assert_eq!(map.used, 2);
    }
}
