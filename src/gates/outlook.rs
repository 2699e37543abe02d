//! Where a loop's gates stand against the workspace as it is now, and what passes the next one:
//! what `status`, `resume` and the atlas show.

use serde::Serialize;

use hpp_core::event_loop::LoopSpec;
use hpp_core::event_loop::gates::{Condition, Stamp, Standing};
use hpp_store::Store;

use super::admit::maker;
use super::{Error, short};
use crate::attest::VerifyOptions;
use crate::events::LoopState;

/// One gate of a loop, as `status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct GateNow {
    /// The gate.
    pub gate: String,
    /// What it requires.
    pub requires: String,
    /// The event that passed it, if one did.
    pub event: Option<String>,
    /// How it stands now: `holds`, `not yet`, `unchecked (legacy)`, `reference missing: …`,
    /// `no longer holds: …`, or `held on another tree`.
    pub status: String,
}

/// Where a loop's gates stand and what passes the next one, in words.
#[derive(Debug, Clone, Serialize)]
pub struct Outlook {
    /// Each gate with a condition, in the loop's order.
    pub gates: Vec<GateNow>,
    /// What to do next, as a command to run.
    pub next_action: String,
    /// The workspace tree now (none in a bare repository).
    pub tree: Option<String>,
}

impl Outlook {
    /// What the loop's headline state must say beside it when its gates do not stand on this
    /// tree: `not standing: gate …` when one no longer holds or names a record that is not
    /// here, else `on tree X, not this one` when they were passed on another tree; `None` when
    /// they stand here.
    pub fn qualifier(&self) -> Option<String> {
        let fallen: Vec<&str> = self
            .gates
            .iter()
            .filter(|g| {
                g.status.starts_with("no longer holds") || g.status.starts_with("reference missing")
            })
            .map(|g| g.gate.as_str())
            .collect();
        if !fallen.is_empty() {
            return Some(format!(
                "not standing: gate {} does not hold; `git hpp event verify` says why",
                fallen.join(", ")
            ));
        }
        self.gates
            .iter()
            .find_map(|g| g.status.strip_prefix("held on "))
            .map(|rest| format!("on {rest}"))
    }
}

/// Reads where each gate of an intact loop stands, against the workspace as it is now.
pub fn outlook(
    store: &Store,
    spec: &LoopSpec,
    state: &LoopState,
    trust: VerifyOptions<'_>,
) -> Result<Outlook, Error> {
    let tree = workspace_tree(store, spec)?;
    outlook_at(store, spec, state, trust, tree)
}

/// The workspace tree the gates of `spec` measure against now; `None` in a bare repository or
/// when no gate has a condition.
pub fn workspace_tree(store: &Store, spec: &LoopSpec) -> Result<Option<String>, Error> {
    Ok(
        if store.workdir().is_some() && !spec.conditions().is_empty() {
            Some(store.snapshot()?.to_string())
        } else {
            None
        },
    )
}

/// As [`outlook`], against a workspace tree already computed (one snapshot for many loops).
pub fn outlook_at(
    store: &Store,
    spec: &LoopSpec,
    state: &LoopState,
    trust: VerifyOptions<'_>,
    tree: Option<String>,
) -> Result<Outlook, Error> {
    let mut gates: Vec<GateNow> = Vec::new();
    let mut moved: Option<(String, String)> = None;
    for t in spec.transitions() {
        let Some(condition) = spec.condition(&t.gate) else {
            continue;
        };
        let passed = state
            .events
            .iter()
            .zip(&state.commits)
            .enumerate()
            .rev()
            .find(|(_, (e, _))| e.kind == t.event);
        let (event, status) = match passed {
            None => (None, "not yet".to_owned()),
            Some((i, (e, _)))
                if Stamp::of(&e.data).is_none()
                    && super::ungated_after_gated(spec, &state.events[..i], &e.kind) =>
            {
                let at = hpp_core::event_log::event_id(e.seq);
                (
                    Some(at),
                    format!("no longer holds: {}", super::UNGATED_AFTER_GATED),
                )
            }
            Some((_, (e, commit))) => {
                let at = hpp_core::event_log::event_id(e.seq);
                let status = match super::standing(store, e, commit, trust)? {
                    Standing::Ok => match (Stamp::of(&e.data), &tree) {
                        (Some(stamp), Some(now))
                            if stamp.tree != *now && !matches!(condition, Condition::Scope) =>
                        {
                            moved.get_or_insert((at.clone(), stamp.tree.clone()));
                            format!("held on tree {}, not this one", short(&stamp.tree))
                        }
                        _ => "holds".to_owned(),
                    },
                    Standing::ReferenceMissing { record } => {
                        format!("reference missing: {record}")
                    }
                    Standing::NoLongerHolds { reason } => format!("no longer holds: {reason}"),
                    Standing::UncheckedLegacy => "unchecked (legacy)".to_owned(),
                };
                (Some(at), status)
            }
        };
        let status = match condition {
            Condition::Closure { holds } if status == "holds" => {
                let broken: Vec<&str> = gates
                    .iter()
                    .filter(|g| holds.contains(&g.gate) && g.status != "holds")
                    .map(|g| g.gate.as_str())
                    .collect();
                if broken.is_empty() {
                    status
                } else {
                    format!("no longer holds: {} does not hold now", broken.join(", "))
                }
            }
            _ => status,
        };
        gates.push(GateNow {
            gate: t.gate.clone(),
            requires: condition.describe(),
            event,
            status,
        });
    }
    let here = state
        .projection
        .as_ref()
        .map_or(spec.initial(), |p| p.state.as_str());
    let fixed = maker(state).map(|(_, m)| m);
    let next = spec.transitions().iter().find(|t| t.from == here);
    let mut next_action = match next {
        None => "nothing: the loop is closed".to_owned(),
        Some(t) => match spec.condition(&t.gate) {
            Some(c) => hpp_core::event_loop::gates::instruction(
                c,
                &t.event,
                state.id.as_str(),
                fixed.as_deref(),
            ),
            None => format!(
                "run `git hpp event append --loop {} --type {}`",
                state.id, t.event
            ),
        },
    };
    if let (Some((at, then)), Some(now), Some(_)) = (moved, &tree, next) {
        next_action = format!(
            "the workspace changed since {at} (tree {} then, {} now): restore that tree, or start a new loop on this one; then {next_action}",
            short(&then),
            short(now)
        );
    }
    Ok(Outlook {
        gates,
        next_action,
        tree,
    })
}
