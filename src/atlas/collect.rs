//! Gathering the atlas: graph views from the manifest, maps and records from refs.
//!
//! Reads `refs/hpp/lanes/*` (through [`crate::lanes::live_lane_source`]), `refs/hpp/loops/*`,
//! `refs/hpp/evidence/*` and `refs/hpp/attestations/*`; writes nothing.

use serde_json::{Value, json};

use super::{Atlas, Section, Table};
use crate::graph::{self, View};
use crate::manifest::Manifest;
use crate::maps::{self, LaneClock};
use crate::record::{canonical_json, sha256_hex};
use crate::store::{self, Store, refs};
use crate::{attest, events, evidence, lanes};

/// How many evidence bundles and attestations the page lists, newest first.
pub const RECENT: usize = 20;

/// Why the atlas could not be gathered.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// A loop could not be read.
    #[error(transparent)]
    Loops(#[from] events::Error),
    /// The evidence could not be listed.
    #[error(transparent)]
    Evidence(#[from] evidence::Error),
}

fn sha(value: &Value) -> String {
    sha256_hex(&canonical_json(value))
}

fn text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".into(),
        Some(other) => other.to_string(),
    }
}

fn graph_sections(manifest: &Value, out: &mut Vec<Section>) {
    let hash = sha(manifest);
    for view in View::ALL {
        let command = format!("git hpp graph --view {view}");
        let note = match view {
            View::Capability => {
                "Hosts, modules, the capabilities they provide and the bundles that include them."
            }
            View::Operational => {
                "The loop: each event passes through its named gate to the next state."
            }
            View::Agent => {
                "The roles: a maker submits, a read-only checker reports, a human gate approves or returns."
            }
            View::Evidence => {
                "A criterion requires recorded evidence, which supports a verified verdict."
            }
            View::Code => "Modules and the components they declare.",
        };
        let mut section = Section::note(
            &format!("graph-{view}"),
            &format!("Graph view: {view}"),
            &command,
            &hash,
            note,
        );
        match graph::require_declared(manifest, view.as_str())
            .and_then(|()| graph::build(manifest, view))
        {
            Ok(built) => section.graph = Some(built.graph),
            Err(e) => section.note = format!("not drawn: {e}"),
        }
        out.push(section);
    }
}

fn lane_section(source: &Value, now: i64) -> Section {
    let mut section = Section::note(
        "map-lane",
        "Lane map",
        &format!("git hpp map lane --now {now}"),
        &sha(source),
        "The live lanes under refs/hpp/lanes/: liveness from each heartbeat, and collisions between live exclusive lanes with equal or nested territory.",
    );
    match maps::lane_map(source, &LaneClock::at(now)) {
        Ok(map) => {
            let rows = source
                .as_array()
                .into_iter()
                .flatten()
                .map(|lane| {
                    let id = text(lane.get("id"));
                    let territory = lane
                        .get("territory")
                        .and_then(Value::as_array)
                        .map(|t| {
                            t.iter()
                                .map(|p| text(Some(p)))
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default();
                    vec![
                        id.clone(),
                        map.liveness.get(&id).cloned().unwrap_or_default(),
                        territory,
                        text(lane.get("exclusive")),
                        text(lane.get("heartbeat_at")),
                    ]
                })
                .collect();
            section.tables.push(Table {
                caption: "lanes".into(),
                columns: ["lane", "liveness", "territory", "exclusive", "heartbeat_at"]
                    .map(String::from)
                    .to_vec(),
                rows,
            });
            section.tables.push(Table {
                caption: "collisions".into(),
                columns: vec!["lanes".into(), "territory".into()],
                rows: map
                    .collisions
                    .iter()
                    .map(|c| vec![c.lanes.join(" × "), c.territory.join(", ")])
                    .collect(),
            });
            section.graph = Some(map.drawing());
        }
        Err(e) => section.note = format!("refused: {e}"),
    }
    section
}

fn monitor_section(manifest: &Value, now: i64) -> Section {
    let source = manifest.get("monitors").cloned().unwrap_or(json!([]));
    let mut section = Section::note(
        "map-monitor",
        "Monitor map",
        &format!("git hpp map monitor --now {now}"),
        &sha(&source),
        "The monitors the manifest declares, against --now: a missing signal is unknown, not stale.",
    );
    match maps::monitor_map(&source, now, maps::DEFAULT_SKEW_TOLERANCE) {
        Ok(map) => {
            section.tables.push(Table {
                caption: "monitors".into(),
                columns: [
                    "monitor",
                    "status",
                    "target",
                    "type",
                    "last_signal",
                    "freshness",
                    "gate",
                ]
                .map(String::from)
                .to_vec(),
                rows: map
                    .monitors
                    .iter()
                    .map(|m| {
                        vec![
                            m.id.clone(),
                            m.status.as_str().to_owned(),
                            m.target.clone(),
                            m.probe.clone(),
                            m.last_signal.map_or_else(|| "-".into(), |s| s.to_string()),
                            m.freshness.to_string(),
                            m.consumer_gate.clone(),
                        ]
                    })
                    .collect(),
            });
            section.graph = Some(map.drawing());
        }
        Err(e) => section.note = format!("refused: {e}"),
    }
    section
}

fn loops_section(store: &Store, manifest: &Manifest) -> Result<Section, Error> {
    let loops = events::list(store, manifest.loop_spec())?;
    let rows: Vec<Value> = loops
        .iter()
        .map(|l| {
            json!({"loop": l.id, "state": l.projection.as_ref().map(|p| p.state.clone()),
                "event_count": l.chain.events, "chain": l.chain.status,
                "next_step": l.projection.as_ref().map(|p| p.next_step.clone()),
                "first_divergent": l.chain.first_divergent, "head": l.head})
        })
        .collect();
    let mut section = Section::note(
        "loops",
        "Loops",
        "git hpp loops --json",
        &sha(&Value::Array(rows.clone())),
        "Each loop under refs/hpp/loops/ with its state, its event count and whether its chain holds.",
    );
    section.tables.push(Table {
        caption: "loops".into(),
        columns: ["loop", "state", "events", "chain", "next step", "head"]
            .map(String::from)
            .to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    text(r.get("loop")),
                    match r.get("state") {
                        Some(Value::String(s)) => s.clone(),
                        _ => format!("broken at {}", text(r.get("first_divergent"))),
                    },
                    text(r.get("event_count")),
                    text(r.get("chain")),
                    text(r.get("next_step")),
                    text(r.get("head")).chars().take(12).collect(),
                ]
            })
            .collect(),
    });
    Ok(section)
}

fn evidence_section(store: &Store) -> Result<Section, Error> {
    let mut listed = evidence::list(store)?;
    listed.sort_by(|a, b| {
        b.started_at
            .cmp(&a.started_at)
            .then_with(|| a.record_ref.cmp(&b.record_ref))
    });
    listed.truncate(RECENT);
    let value = serde_json::to_value(&listed).expect("a listing serialises");
    let mut section = Section::note(
        "evidence",
        "Recent evidence",
        "git hpp evidence list --json",
        &sha(&value),
        "The newest evidence bundles under refs/hpp/evidence/.",
    );
    section.tables.push(Table {
        caption: format!("up to {RECENT} bundles, newest first"),
        columns: ["bundle", "verdict", "started at"]
            .map(String::from)
            .to_vec(),
        rows: listed
            .iter()
            .map(|b| {
                vec![
                    b.record_ref
                        .strip_prefix(refs::EVIDENCE_PREFIX)
                        .unwrap_or(&b.record_ref)
                        .to_owned(),
                    b.verdict.clone().unwrap_or_else(|| "-".into()),
                    b.started_at.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect(),
    });
    Ok(section)
}

fn attestations_section(store: &Store) -> Result<Section, Error> {
    let mut rows: Vec<Value> = Vec::new();
    for (name, _) in store.list(refs::ATTESTATIONS_PREFIX)? {
        let record = store
            .read_file(&name, attest::RECORD_FILE)?
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .unwrap_or(Value::Null);
        rows.push(json!({
            "ref": name.strip_prefix(refs::ATTESTATIONS_PREFIX).unwrap_or(&name),
            "verdict": record.get("verdict"),
            "maker": record.pointer("/actors/maker"),
            "checker": record.pointer("/actors/checker"),
            "session": record.get("session"),
            "created_at": record.get("created_at"),
            "signed": record.get("signer").is_some(),
        }));
    }
    rows.sort_by(|a, b| {
        text(b.get("created_at"))
            .cmp(&text(a.get("created_at")))
            .then_with(|| text(a.get("ref")).cmp(&text(b.get("ref"))))
    });
    rows.truncate(RECENT);
    let mut section = Section::note(
        "attestations",
        "Recent attestations",
        "git for-each-ref refs/hpp/attestations/",
        &sha(&Value::Array(rows.clone())),
        "The newest attestations, each keyed by the snapshot tree it judged (tree/id).",
    );
    section.tables.push(Table {
        caption: format!("up to {RECENT} attestations, newest first"),
        columns: [
            "tree/id",
            "verdict",
            "maker",
            "checker",
            "session",
            "created at",
            "signed",
        ]
        .map(String::from)
        .to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                [
                    "ref",
                    "verdict",
                    "maker",
                    "checker",
                    "session",
                    "created_at",
                    "signed",
                ]
                .iter()
                .map(|k| text(r.get(*k)))
                .collect()
            })
            .collect(),
    });
    Ok(section)
}

/// Gathers every section of the atlas: the graph views of `manifest`, the lane map of the live
/// lanes and the monitor map of the manifest's monitors at `now`, the loops, and the recent
/// evidence and attestations.
pub fn collect(store: &Store, manifest: &Manifest, now: i64) -> Result<Atlas, Error> {
    let mut sections = Vec::new();
    graph_sections(manifest.value(), &mut sections);
    sections.push(lane_section(&lanes::live_lane_source(store)?, now));
    sections.push(monitor_section(manifest.value(), now));
    sections.push(loops_section(store, manifest)?);
    sections.push(evidence_section(store)?);
    sections.push(attestations_section(store)?);
    Ok(Atlas { now, sections })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lane_section_reports_a_refusal_instead_of_failing_the_page() {
        let source = json!([{"id": "a", "territory": ["src"], "heartbeat_at": 2000}]);
        let section = lane_section(&source, 1000);
        assert!(
            section
                .note
                .starts_with("refused: lane a has invalid heartbeat_at")
        );
        assert!(section.graph.is_none());
    }

    #[test]
    fn control_a_collision_shows_in_the_lane_section() {
        let source = json!([{"id": "a", "territory": ["src"], "heartbeat_at": 990},
                            {"id": "b", "territory": ["src/x"], "heartbeat_at": 990}]);
        let section = lane_section(&source, 1000);
        assert_eq!(section.tables[1].rows, [["a × b", "src, src/x"]]);
    }
}
