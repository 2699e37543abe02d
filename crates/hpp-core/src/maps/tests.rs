//! Tests of the four maps.

use super::*;
use crate::graph::edge;
use serde_json::json;

fn clock(now: Option<i64>) -> LaneClock {
    LaneClock {
        now: now.map(Into::into),
        suspect_after: 60.into(),
        dead_after: 300.into(),
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
        now: Some(1000.into()),
        suspect_after: 300.into(),
        dead_after: 300.into(),
    };
    assert_eq!(refuse(json!([]), &bad), Error::Thresholds);
    assert_eq!(
        refuse(
            json!([]),
            &LaneClock {
                suspect_after: 0.into(),
                ..c.clone()
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
    let classify = |signal: Option<i64>, now: i64, freshness: i64, skew: i64| {
        classify(
            signal.map(crate::int::Int::from).as_ref(),
            &now.into(),
            &freshness.into(),
            &skew.into(),
        )
    };
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
