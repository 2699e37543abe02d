//! The lane map (`hpp.map/v1`, view `lane`): each lane's liveness against a clock, and the
//! collisions between live exclusive lanes whose territories are equal or nested.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::{DEFAULT_DEAD_AFTER, DEFAULT_SUSPECT_AFTER, Error, SCHEMA, int, non_empty_str};
use crate::graph::{Graph, edge, node};
use crate::int::Int;

/// The clock and thresholds a lane map is projected against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneClock {
    /// Unix seconds (an integer of any size); `None` projects each lane's declared status.
    pub now: Option<Int>,
    /// A heartbeat older than this makes a lane suspect.
    pub suspect_after: Int,
    /// A heartbeat older than this makes a lane dead.
    pub dead_after: Int,
}

impl LaneClock {
    /// Returns the clock at `now` with the default thresholds.
    pub fn at(now: i64) -> Self {
        Self {
            now: Some(now.into()),
            suspect_after: DEFAULT_SUSPECT_AFTER.into(),
            dead_after: DEFAULT_DEAD_AFTER.into(),
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
    let Some(now) = &clock.now else {
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
    if heartbeat.is_negative() {
        return Err(bad(format!("{heartbeat} is negative")));
    }
    if heartbeat > *now {
        return Err(bad(format!("{heartbeat} is in the future of now {now}")));
    }
    let age = now - &heartbeat;
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
    if clock.now.as_ref().is_some_and(Int::is_negative) {
        return Err(Error::BadNow);
    }
    if !(Int::from(0) < clock.suspect_after && clock.suspect_after < clock.dead_after) {
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

/// The lane-collision control: two live exclusive lanes with nested territory collide, and the
/// same pair does not when one of them is dead or shared. `Err` says what went wrong.
pub fn lane_collision_control() -> Result<(), String> {
    let clock = LaneClock {
        now: Some(1000.into()),
        suspect_after: 60.into(),
        dead_after: 300.into(),
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
