//! Gathering the atlas: graph views from the manifest, maps and records from refs.
//!
//! Reads `refs/hpp/lanes/*` (through [`crate::lanes::live_lane_source`]), `refs/hpp/loops/*`,
//! `refs/hpp/evidence/*`, `refs/hpp/attestations/*`, the lane board, the sealed House Sessions
//! and Hop's states, and verifies HEAD and the protected branches as `git hpp verify` does;
//! writes nothing.

use serde_json::{Value, json};

use super::{Atlas, Section, Table, Verdict};
use crate::{attest, board, events, evidence, gates, hop, lanes};
use hpp_core::graph::{self, View};
use hpp_core::manifest::Manifest;
use hpp_core::maps::{self, LaneClock};
use hpp_core::record::{canonical_json, sha256_hex};
use hpp_store::{self as store, Store, refs};

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
    /// A loop's gates could not be read.
    #[error(transparent)]
    Gates(#[from] gates::Error),
    /// The evidence could not be listed.
    #[error(transparent)]
    Evidence(#[from] evidence::Error),
    /// The lanes could not be read.
    #[error(transparent)]
    Lanes(#[from] lanes::Error),
    /// A commit's attestations could not be read.
    #[error(transparent)]
    Attest(#[from] attest::Error),
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
                        lane.get("heartbeat_at")
                            .and_then(Value::as_i64)
                            .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
                            .map_or_else(
                                || text(lane.get("heartbeat_at")),
                                hpp_core::timestamp::rfc3339,
                            ),
                    ]
                })
                .collect();
            section.tables.push(Table {
                caption: "lanes".into(),
                columns: [
                    "lane",
                    "liveness",
                    "territory",
                    "exclusive",
                    "last heartbeat (UTC)",
                ]
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
                            m.last_signal
                                .as_ref()
                                .map_or_else(|| "-".into(), |s| s.to_string()),
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

fn loops_section(
    store: &Store,
    manifest: &Manifest,
    trust: attest::VerifyOptions<'_>,
) -> Result<Section, Error> {
    let spec = manifest.loop_spec();
    let loops = events::list(store, spec)?;
    let tree = gates::workspace_tree(store, spec)?;
    let mut rows: Vec<Value> = Vec::with_capacity(loops.len());
    for l in &loops {
        // Each gate as it stands now, and the command that passes the next one.
        let (gates, next_action, qualifier) = if l.chain.is_broken() {
            (String::new(), String::new(), None)
        } else {
            let outlook = gates::outlook_at(store, spec, l, trust, tree.clone())?;
            let gates = outlook
                .gates
                .iter()
                .map(|g| format!("{}: {}", g.gate, g.status))
                .collect::<Vec<_>>()
                .join("; ");
            (gates, outlook.next_action.clone(), outlook.qualifier())
        };
        // The headline agrees with the gates, as in `status`: "verified (on tree X, not this
        // one)" when they rest on another tree.
        rows.push(
            json!({"loop": l.id, "state": l.projection.as_ref().map(|p| p.state.clone()),
                "standing": l.projection.is_some() && qualifier.is_none(), "qualifier": qualifier,
                "event_count": l.chain.events, "chain": l.chain.status,
                "next_step": l.projection.as_ref().map(|p| p.next_step.clone()),
                "gates": gates, "next_action": next_action,
                "first_divergent": l.chain.first_divergent, "head": l.head}),
        );
    }
    let mut section = Section::note(
        "loops",
        "Loops",
        "git hpp loops --json",
        &sha(&Value::Array(rows.clone())),
        "Each loop under refs/hpp/loops/ with its state, its event count, whether its chain holds, how each gate stands on the workspace now, and what passes the next one.",
    );
    section.tables.push(Table {
        caption: "loops".into(),
        columns: ["loop", "state", "events", "chain", "gates", "next", "head"]
            .map(String::from)
            .to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    text(r.get("loop")),
                    match (r.get("state"), r.get("qualifier")) {
                        (Some(Value::String(s)), Some(Value::String(q))) => format!("{s} ({q})"),
                        (Some(Value::String(s)), _) => s.clone(),
                        _ => format!("broken at {}", text(r.get("first_divergent"))),
                    },
                    text(r.get("event_count")),
                    text(r.get("chain")),
                    text(r.get("gates")),
                    text(r.get("next_action")),
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

fn attestations_section(store: &Store, trust: attest::VerifyOptions<'_>) -> Result<Section, Error> {
    let mut rows: Vec<Value> = Vec::new();
    for (name, _) in store.list(refs::ATTESTATIONS_PREFIX)? {
        let record = store
            .read_file(&name, hpp_core::attestation::RECORD_FILE)?
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .unwrap_or(Value::Null);
        rows.push(json!({
            "ref": name,
            "verdict": record.get("verdict"),
            "maker": record.pointer("/actors/maker"),
            "checker": record.pointer("/actors/checker"),
            "session": record.get("session"),
            "created_at": record.get("created_at"),
        }));
    }
    rows.sort_by(|a, b| {
        text(b.get("created_at"))
            .cmp(&text(a.get("created_at")))
            .then_with(|| text(a.get("ref")).cmp(&text(b.get("ref"))))
    });
    rows.truncate(RECENT);
    // What a reader needs of a signature is whether it verified, and for whom: checked here
    // against the allowed signers in force, as `verify` checks it.
    for row in &mut rows {
        let name = text(row.get("ref"));
        let tree = name
            .strip_prefix(refs::ATTESTATIONS_PREFIX)
            .and_then(|rest| rest.split('/').next())
            .and_then(hpp_store::TreeId::parse);
        let signature = match tree {
            Some(tree) => attest::verify_tree(store, &tree, Some(&name), trust)
                .ok()
                .and_then(|v| v.candidates.into_iter().next())
                .map_or_else(|| "unreadable".to_owned(), |c| c.checked),
            None => "unreadable".to_owned(),
        };
        // Once signatures are required, an unsigned record is not neutral: it does not count.
        let signature = if trust.require_signed && signature.starts_with("unsigned") {
            format!("{}unsigned: signatures are required", super::DOES_NOT_COUNT)
        } else {
            signature
        };
        row["signature"] = json!(signature);
        row["ref"] = json!(
            name.strip_prefix(refs::ATTESTATIONS_PREFIX)
                .unwrap_or(&name)
        );
    }
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
            "signature",
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
                    "signature",
                ]
                .iter()
                .map(|k| text(r.get(*k)))
                .collect()
            })
            .collect(),
    });
    Ok(section)
}

/// The lane board: every item's current state, and every competition's. A board that cannot be
/// read is reported in the section rather than failing the page.
fn board_section(store: &Store) -> Section {
    let events = match board::read(store) {
        Ok(read) => read.events,
        Err(e) => {
            return Section::note(
                "board",
                "Lane board",
                "git hpp board render",
                &sha(&json!({"error": e.to_string()})),
                &format!("not drawn: {e}"),
            );
        }
    };
    let value = serde_json::to_value(&events).expect("board events serialise");
    let mut section = Section::note(
        "board",
        "Lane board",
        "git hpp board render",
        &sha(&value),
        "Every item's state on the board (refs/hpp/board/log), and every best-of-N competition.",
    );
    let mut items: std::collections::BTreeMap<String, &Value> = Default::default();
    let mut competitions: std::collections::BTreeMap<String, &Value> = Default::default();
    for event in value.as_array().into_iter().flatten() {
        if event.get("kind").and_then(Value::as_str) == Some("competition") {
            competitions.insert(text(event.get("task_id")), event);
        } else {
            items.insert(text(event.get("item_id")), event);
        }
    }
    section.tables.push(Table {
        caption: "items, with their latest event".into(),
        columns: ["item", "state", "lane", "model", "at"]
            .map(String::from)
            .to_vec(),
        rows: items
            .iter()
            .map(|(item, e)| {
                vec![
                    item.clone(),
                    text(e.get("state")),
                    text(e.get("lane_id")),
                    text(e.get("model")),
                    text(e.get("ts")),
                ]
            })
            .collect(),
    });
    section.tables.push(Table {
        caption: "competitions".into(),
        columns: ["task", "state", "candidates", "winner"]
            .map(String::from)
            .to_vec(),
        rows: competitions
            .iter()
            .map(|(task, e)| {
                let candidates = e
                    .get("candidates")
                    .and_then(Value::as_array)
                    .map(|c| {
                        c.iter()
                            .map(|v| text(Some(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                vec![
                    task.clone(),
                    text(e.get("state")),
                    candidates,
                    text(e.get("winner")),
                ]
            })
            .collect(),
    });
    section
}

/// The sealed House Sessions: type, stop, verdict, dissent and a person's decision.
fn sessions_section(store: &Store) -> Result<Section, Error> {
    let mut rows: Vec<Value> = Vec::new();
    for (name, _) in store.list(refs::DELIBERATIONS_PREFIX)? {
        let id = name
            .strip_prefix(refs::DELIBERATIONS_PREFIX)
            .unwrap_or(&name)
            .to_owned();
        let row = match crate::deliberation::load(store, &name, None) {
            Ok(loaded) => {
                let r = &loaded.record;
                let dissent = r
                    .get("dissent")
                    .and_then(Value::as_array)
                    .map(|d| {
                        d.iter()
                            .map(|s| {
                                format!("{} at {}", text(s.get("seat")), text(s.get("position")))
                            })
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                let human = r
                    .get("human_decision")
                    .filter(|h| !h.is_null())
                    .map(|h| format!("{} by {}", text(h.get("value")), text(h.get("by"))));
                json!({"id": id, "type": r.pointer("/panel/session_type"),
                       "stop": r.pointer("/stop/reason"), "verdict": r.pointer("/verdict/value"),
                       "status": r.pointer("/verdict/status"), "dissent": dissent,
                       "human_decision": human})
            }
            Err(e) => json!({"id": id, "status": format!("unreadable: {e}")}),
        };
        rows.push(row);
    }
    let mut section = Section::note(
        "sessions",
        "House Sessions",
        "git for-each-ref refs/hpp/deliberations/",
        &sha(&Value::Array(rows.clone())),
        "Every sealed House Session under refs/hpp/deliberations/: how it stopped, the judge's verdict, the dissent kept, and a person's decision when one was recorded.",
    );
    let keys = [
        "id",
        "type",
        "stop",
        "status",
        "verdict",
        "dissent",
        "human_decision",
    ];
    section.tables.push(Table {
        caption: "sealed sessions".into(),
        columns: [
            "session", "type", "stop", "status", "verdict", "dissent", "decided",
        ]
        .map(String::from)
        .to_vec(),
        rows: rows
            .iter()
            .map(|r| keys.iter().map(|k| text(r.get(*k))).collect())
            .collect(),
    });
    Ok(section)
}

/// Hop: the accepted chain and every attempt, or a note when Hop was never initialised here.
fn hop_section(store: &Store) -> Result<Section, Error> {
    let command = "hop status --json";
    if store.list(refs::HOP_STATES_PREFIX)?.is_empty() {
        return Ok(Section::note(
            "hop",
            "Hop",
            command,
            &sha(&json!([])),
            "No Hop state in this repository (hop init starts one).",
        ));
    }
    let status = match hop::Hop::new(store).and_then(|h| h.status()) {
        Ok(status) => status,
        Err(e) => {
            return Ok(Section::note(
                "hop",
                "Hop",
                command,
                &sha(&json!({"error": e.to_string()})),
                &format!("not drawn: {e}"),
            ));
        }
    };
    let value = serde_json::to_value(&status).expect("a Hop status serialises");
    let mut section = Section::note(
        "hop",
        "Hop",
        command,
        &sha(&value),
        "The accepted chain under refs/hpp/hop/accepted, newest first, and every attempt.",
    );
    let hop = hop::Hop::new(store).ok();
    section.tables.push(Table {
        caption: "accepted states, newest first".into(),
        columns: ["state", "summary", "created at"]
            .map(String::from)
            .to_vec(),
        rows: status
            .history
            .iter()
            .map(|id| {
                let state = hop.as_ref().and_then(|h| h.load(id).ok()).map(|l| l.state);
                vec![
                    id.to_string(),
                    state
                        .as_ref()
                        .and_then(|s| s.summary.clone())
                        .unwrap_or_else(|| "-".into()),
                    state.map_or_else(|| "-".into(), |s| s.created_at),
                ]
            })
            .collect(),
    });
    section.tables.push(Table {
        caption: "attempts".into(),
        columns: ["attempt", "agent", "head", "status"]
            .map(String::from)
            .to_vec(),
        rows: status
            .attempts
            .iter()
            .map(|a| {
                vec![
                    a.attempt.clone(),
                    a.agent.clone().unwrap_or_else(|| "-".into()),
                    a.head.to_string(),
                    a.status.to_owned(),
                ]
            })
            .collect(),
    });
    Ok(section)
}

/// Gathers every section of the atlas: the graph views of `manifest`, the lane map of the live
/// lanes and the monitor map of the manifest's monitors at `now`, the loops, the recent
/// evidence and attestations, the lane board, the sealed House Sessions and Hop's states.
pub fn collect(
    store: &Store,
    manifest: &Manifest,
    now: i64,
    trust: attest::VerifyOptions<'_>,
    protect: &[String],
) -> Result<Atlas, Error> {
    // The user's own records first, the tool's manifest views last.
    let mut sections = vec![
        loops_section(store, manifest, trust)?,
        evidence_section(store)?,
        attestations_section(store, trust)?,
        lane_section(&lanes::open_lane_source(store)?, now),
        board_section(store),
        sessions_section(store)?,
        hop_section(store)?,
        monitor_section(
            &json!({"monitors": crate::monitors::with_signals(
                store,
                &manifest.value().get("monitors").cloned().unwrap_or(json!([])),
            )?}),
            now,
        ),
    ];
    graph_sections(manifest.value(), &mut sections);
    let signatures = if trust.policy.is_some() {
        "Signatures are required by the repository's trust policy (refs/hpp/trust): an unsigned record does not count."
    } else if trust.require_signed {
        "Signatures are required by the allowed signers configured here: an unsigned record does not count."
    } else {
        "Signatures are not required here: unsigned records count. Require them with a trust policy (git hpp trust init)."
    };
    Ok(Atlas {
        now,
        verdicts: verdicts(store, protect, trust)?,
        signatures: signatures.to_owned(),
        sections,
    })
}

/// HEAD and each local branch the push gates protect (`protect`, ref patterns; default
/// `refs/heads/main` and `refs/heads/master`), each as `git hpp verify` answers it.
pub fn verdicts(
    store: &Store,
    protect: &[String],
    trust: attest::VerifyOptions<'_>,
) -> Result<Vec<Verdict>, Error> {
    let patterns: Vec<String> = if protect.is_empty() {
        hpp_core::gate::DEFAULT_PROTECTED
            .iter()
            .map(|p| (*p).to_owned())
            .collect()
    } else {
        protect.to_vec()
    };
    let matchers: Vec<globset::GlobMatcher> = patterns
        .iter()
        .filter_map(|p| globset::Glob::new(p).ok())
        .map(|g| g.compile_matcher())
        .collect();
    let mut asked: Vec<(String, String)> = Vec::new();
    if let Some(head) = store.head_commit()? {
        asked.push(("HEAD".to_owned(), head.as_str().to_owned()));
    }
    for (name, commit) in store.list("refs/heads/")? {
        if matchers.iter().any(|m| m.is_match(&name)) {
            let short = name.strip_prefix("refs/heads/").unwrap_or(&name);
            asked.push((short.to_owned(), commit.as_str().to_owned()));
        }
    }
    let mut out = Vec::with_capacity(asked.len());
    for (subject, commit) in asked {
        let verdict = attest::verify_commits(store, &commit, trust)?
            .into_iter()
            .next();
        let (verified, why) = match verdict {
            Some(v) if v.ok => {
                let by = v.approved_by();
                (
                    true,
                    format!(
                        "approved by {by}: {}",
                        v.verification.checked.unwrap_or_default()
                    ),
                )
            }
            Some(v) => (
                false,
                format!(
                    "{}; fix: {}",
                    v.missing.unwrap_or_default(),
                    v.fix.unwrap_or_default()
                ),
            ),
            None => (false, "the commit could not be read".to_owned()),
        };
        out.push(Verdict {
            subject,
            commit,
            verified,
            why,
        });
    }
    Ok(out)
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
