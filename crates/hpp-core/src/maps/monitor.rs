//! The monitor map (`hpp.monitor-map/v1`): each declared monitor `healthy`, `stale`, `skew` or
//! `unknown` against `now`.

use serde::Serialize;
use serde_json::Value;

use crate::graph::{Graph, edge, node};
use crate::int::Int;

use super::{DEFAULT_SKEW_TOLERANCE, Error, MONITOR_SCHEMA, int, non_empty_str};

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
    signal: Option<&Int>,
    now: &Int,
    freshness: &Int,
    skew_tolerance: &Int,
) -> MonitorStatus {
    match signal {
        None => MonitorStatus::Unknown,
        Some(s) if *s > now + skew_tolerance => MonitorStatus::Skew,
        Some(s) if now - s <= *freshness => MonitorStatus::Healthy,
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
    pub cadence: Int,
    /// Seconds a signal stays fresh.
    pub freshness: Int,
    /// The last signal, Unix seconds, if any.
    pub last_signal: Option<Int>,
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
    pub now: Int,
    /// Seconds a signal may lie in the future.
    pub skew_tolerance: Int,
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
pub fn monitor_map(
    monitors: &Value,
    now: impl Into<Int>,
    skew_tolerance: impl Into<Int>,
) -> Result<MonitorMap, Error> {
    let (now, skew_tolerance) = (now.into(), skew_tolerance.into());
    let items = monitors.as_array().ok_or(Error::NotAList("monitors"))?;
    if now.is_negative() {
        return Err(Error::BadNow);
    }
    if skew_tolerance.is_negative() {
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
        let positive = |k: &str| object.get(k).and_then(int).filter(|v| *v > Int::from(0));
        let (Some(cadence), Some(freshness)) = (positive("cadence"), positive("freshness")) else {
            return Err(Error::MonitorTiming(id));
        };
        let last_signal = match object.get("last_signal") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                int(v)
                    .filter(|s| !s.is_negative())
                    .ok_or_else(|| Error::Signal(id.clone()))?,
            ),
        };
        out.push(MonitorState {
            target: field("target")?,
            probe: field("type")?,
            severity: field("severity")?,
            cost: field("cost")?,
            consumer_gate: field("consumer_gate")?,
            status: classify(last_signal.as_ref(), &now, &freshness, &skew_tolerance),
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
