//! The board as Markdown: one section per item (its state and its history), then
//! `## COMPETITIONS`.

use std::collections::BTreeMap;
use std::fmt::Write;

use hpp_core::board::{CompetitionEvent, Event, ItemEvent};

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn list(items: Option<&Vec<String>>) -> String {
    items.map_or_else(String::new, |v| v.join(", "))
}

/// Renders every event as the Markdown board.
pub fn markdown(events: &[Event]) -> String {
    let mut items: BTreeMap<&str, Vec<&ItemEvent>> = BTreeMap::new();
    let mut competitions: BTreeMap<&str, Vec<&CompetitionEvent>> = BTreeMap::new();
    for event in events {
        match event {
            Event::Item(e) => items.entry(&e.item_id).or_default().push(e),
            Event::Competition(e) => competitions.entry(&e.task_id).or_default().push(e),
        }
    }
    let mut out = String::from("# LANE BOARD\n\n");
    if items.is_empty() {
        out.push_str("No items on the board.\n\n");
    }
    for (item, history) in &items {
        let last = history.last().expect("an item has at least one event");
        let red = history.iter().any(|e| e.is_red());
        let _ = writeln!(out, "## {item}\n");
        let _ = writeln!(
            out,
            "State: **{}** · lane {} ({}, {}){}\n",
            last.state,
            last.lane_id,
            last.role,
            last.model,
            if red { " · tag: red" } else { "" }
        );
        out.push_str("| ts | state | lane | role | model | evidence | verdict by | note |\n");
        out.push_str("|---|---|---|---|---|---|---|---|\n");
        for e in history {
            let evidence = e
                .evidence_record
                .as_ref()
                .map(|r| r.record_ref.clone())
                .or_else(|| e.evidence.clone())
                .unwrap_or_default();
            let verdict = e
                .verdict_by
                .as_ref()
                .map(|v| format!("{} ({})", v.lane, v.model))
                .unwrap_or_default();
            let mut note = Vec::new();
            if let Some(target) = &e.target_lane {
                note.push(format!("target {target}"));
            }
            if let Some(branch) = &e.branch {
                note.push(format!("branch {branch}"));
            }
            if let Some(winner) = &e.winner {
                note.push(format!("winner {winner}"));
            }
            if e.is_red() {
                note.push("red".into());
            }
            if e.human_approved {
                note.push("human-approved".into());
            }
            if e.checker_unavailable {
                note.push("checker unavailable".into());
            }
            if let Some(reason) = &e.reason {
                note.push(reason.clone());
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                e.ts,
                e.state,
                cell(&e.lane_id),
                cell(&e.role),
                cell(&e.model),
                cell(&evidence),
                cell(&verdict),
                cell(&note.join("; "))
            );
        }
        out.push('\n');
    }
    out.push_str("## COMPETITIONS\n\n");
    if competitions.is_empty() {
        out.push_str("No competitions.\n");
    } else {
        out.push_str("| task | state | candidates | winner | not selected | withdrawn | by |\n");
        out.push_str("|---|---|---|---|---|---|---|\n");
        for (task, history) in &competitions {
            let last = history
                .last()
                .expect("a competition has at least one event");
            let decided = history.iter().find(|e| e.winner.is_some());
            let withdrawn = history.iter().rev().find_map(|e| e.withdrawn.as_ref());
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(task),
                last.state.as_str(),
                cell(&last.candidates.join(", ")),
                cell(decided.and_then(|e| e.winner.as_deref()).unwrap_or("")),
                cell(&list(decided.and_then(|e| e.not_selected.as_ref()))),
                cell(&list(withdrawn)),
                cell(&match &last.deliberation {
                    Some(d) => format!(
                        "{} ({}) by House Session {}",
                        last.lane_id, last.model, d.id
                    ),
                    None => format!("{} ({})", last.lane_id, last.model),
                }),
            );
        }
    }
    out
}
