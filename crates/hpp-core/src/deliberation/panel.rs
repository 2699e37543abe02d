//! The panel, `hpp.panel/v1`: seats, roles per session type, the budget and the declared
//! evidence. Pure.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::{Map, Value, json};

use super::{Error, MAX_ROUNDS, PANEL_SCHEMA, hash, hex, int, repr, text};
use crate::decision::{is_alias, normalise_question};

/// The seat roles.
pub const ROLES: [&str; 4] = ["proponent", "dissent", "examiner", "judge"];

/// The session types, in the reference's order.
pub const SESSION_TYPES: [&str; 5] = ["plan", "review", "release-gate", "incident", "design"];

/// How many seats of a role a session type needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Minimum {
    /// At least this many.
    Seats(usize),
    /// One per option of the question.
    PerOption,
}

/// The role minimums of a session type, and its round ceiling if it has one.
pub fn rules(session_type: &str) -> (Vec<(&'static str, Minimum)>, Option<i64>) {
    use Minimum::{PerOption, Seats};
    match session_type {
        "plan" => (
            vec![
                ("proponent", Seats(2)),
                ("dissent", Seats(1)),
                ("examiner", Seats(1)),
            ],
            None,
        ),
        "review" => (vec![("examiner", Seats(2)), ("dissent", Seats(1))], None),
        "release-gate" => (vec![("examiner", Seats(1)), ("dissent", Seats(1))], None),
        // Two blind diagnoses already agree or disagree independently; a second reply rarely
        // adds evidence the first did not.
        "incident" => (vec![("proponent", Seats(2))], Some(2)),
        _ => (vec![("proponent", PerOption), ("dissent", Seats(1))], None),
    }
}

fn seat(raw: &Value) -> Result<Value, Error> {
    let raw = raw.as_object().ok_or(Error::SeatNotObject)?;
    let id = text(raw.get("id"), "seat id")?;
    let role = match raw.get("role").and_then(Value::as_str) {
        Some(role) if ROLES.contains(&role) => role.to_owned(),
        _ => return Err(Error::Role(id)),
    };
    let model = text(raw.get("model_served"), &format!("seat {id}: model_served"))?;
    if is_alias(&model) {
        return Err(Error::Alias {
            seat: id,
            model: repr(raw.get("model_served")),
        });
    }
    let provider = text(raw.get("provider"), &format!("seat {id}: provider"))?;
    let family = text(raw.get("family"), &format!("seat {id}: family"))?;
    let lane = text(raw.get("lane"), &format!("seat {id}: lane"))?;
    Ok(
        json!({"id": id, "role": role, "provider": provider, "model_served": model,
        "family": family, "lane": lane}),
    )
}

fn evidence(raw: &Value) -> Result<Value, Error> {
    let raw = raw.as_object().ok_or(Error::Evidence)?;
    if raw.keys().any(|k| k != "ids" && k != "sources") {
        return Err(Error::Evidence);
    }
    let ids = match raw.get("ids") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|item| match item {
                Value::String(s) if !s.is_empty() && s.trim() == s => Ok(s.clone()),
                _ => Err(Error::EvidenceIds),
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(Error::EvidenceIds),
    };
    let unique: BTreeSet<&String> = ids.iter().collect();
    if unique.len() != ids.len() {
        return Err(Error::EvidenceIds);
    }
    let mut out = Map::new();
    out.insert("ids".into(), json!(unique));
    if let Some(sources) = raw.get("sources") {
        let sources = sources.as_array().ok_or(Error::EvidenceSources)?;
        let mut normalised = Vec::new();
        for source in sources {
            let source = source.as_object().ok_or(Error::EvidenceSource)?;
            let kind = source.get("kind").and_then(Value::as_str);
            if !matches!(kind, Some("context" | "evidence-record"))
                || source
                    .keys()
                    .any(|k| !matches!(k.as_str(), "kind" | "sha256" | "id"))
            {
                return Err(Error::EvidenceSource);
            }
            let mut item = Map::new();
            item.insert("kind".into(), json!(kind));
            item.insert(
                "sha256".into(),
                json!(hex(source.get("sha256"), "evidence.sources sha256")?),
            );
            if source.contains_key("id") {
                item.insert(
                    "id".into(),
                    json!(text(source.get("id"), "evidence.sources id")?),
                );
            }
            normalised.push(Value::Object(item));
        }
        out.insert("sources".into(), Value::Array(normalised));
    }
    Ok(Value::Object(out))
}

/// Validates a panel and returns it normalised with its `sha256`, the judge seat's id, the
/// sorted participant families and `judge_independence` (`partial` when the judge's family is a
/// participant's, else `full`). A `sha256` the panel carries must match.
///
/// # Errors
///
/// The first broken rule, as [`Error`].
pub fn normalise_panel(panel: &Value) -> Result<Value, Error> {
    let map = panel.as_object().ok_or(Error::PanelNotObject)?;
    if map.get("schema").and_then(Value::as_str) != Some(PANEL_SCHEMA) {
        return Err(Error::PanelSchema);
    }
    let id = text(map.get("id"), "panel id")?;
    let session_type = match map.get("session_type").and_then(Value::as_str) {
        Some(t) if SESSION_TYPES.contains(&t) => t.to_owned(),
        _ => return Err(Error::SessionType),
    };
    let question =
        normalise_question(map.get("question").unwrap_or(&Value::Null)).map_err(Error::Question)?;
    let state = hex(map.get("state_sha256"), "state_sha256")?;
    let raw_seats = match map.get("seats") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => return Err(Error::NoSeats),
    };
    let seats = raw_seats.iter().map(seat).collect::<Result<Vec<_>, _>>()?;
    let field = |seat: &Value, key: &str| seat[key].as_str().unwrap_or_default().to_owned();
    let ids: HashSet<String> = seats.iter().map(|s| field(s, "id")).collect();
    if ids.len() != seats.len() {
        return Err(Error::SeatIds);
    }
    let mut families_of: BTreeMap<String, String> = BTreeMap::new();
    for seat in &seats {
        let (model, family) = (field(seat, "model_served"), field(seat, "family"));
        let known = families_of.entry(model.clone()).or_insert(family.clone());
        if *known != family {
            return Err(Error::ModelFamilies {
                model: repr(Some(&json!(model))),
                known: repr(Some(&json!(known))),
                family: repr(Some(&json!(family))),
            });
        }
    }
    let judges: Vec<&Value> = seats
        .iter()
        .filter(|s| s["role"] == "judge")
        .collect::<Vec<_>>();
    if judges.len() != 1 {
        return Err(Error::JudgeCount(judges.len()));
    }
    let judge = judges[0];
    let participants: Vec<&Value> = seats.iter().filter(|s| s["role"] != "judge").collect();
    let lanes: Vec<String> = participants.iter().map(|s| field(s, "lane")).collect();
    if lanes.iter().collect::<HashSet<_>>().len() != lanes.len() {
        return Err(Error::SharedLane);
    }
    if lanes.contains(&field(judge, "lane")) {
        return Err(Error::JudgeLane);
    }
    let families: BTreeSet<String> = participants.iter().map(|s| field(s, "family")).collect();
    if families.len() < 2 {
        return Err(Error::OneFamily);
    }
    let (minimums, ceiling) = rules(&session_type);
    for (role, minimum) in minimums {
        let present = participants.iter().filter(|s| s["role"] == role).count();
        let needed = match minimum {
            Minimum::Seats(n) => n,
            Minimum::PerOption => question.options.len(),
        };
        if present < needed {
            return Err(match minimum {
                Minimum::PerOption => Error::ProponentPerOption {
                    session_type,
                    needed,
                    present,
                },
                Minimum::Seats(_) => Error::RoleMinimum {
                    session_type,
                    needed,
                    role: role.to_owned(),
                    present,
                },
            });
        }
    }
    let budget = map
        .get("budget")
        .and_then(Value::as_object)
        .ok_or(Error::Budget)?;
    let max_rounds = int(budget.get("max_rounds"))
        .filter(|n| (1..=MAX_ROUNDS).contains(n))
        .ok_or(Error::MaxRounds)?;
    if let Some(ceiling) = ceiling
        && max_rounds > ceiling
    {
        return Err(Error::RoundCeiling {
            session_type,
            ceiling,
        });
    }
    let max_chars = int(budget.get("max_chars"))
        .filter(|n| *n >= 1)
        .ok_or(Error::MaxChars)?;
    let mut body = Map::new();
    body.insert("schema".into(), json!(PANEL_SCHEMA));
    body.insert("id".into(), json!(id));
    body.insert("session_type".into(), json!(session_type));
    body.insert(
        "question".into(),
        serde_json::to_value(&question).expect("a question serialises"),
    );
    body.insert("state_sha256".into(), json!(state));
    body.insert("seats".into(), Value::Array(seats.clone()));
    body.insert(
        "budget".into(),
        json!({"max_rounds": max_rounds, "max_chars": max_chars}),
    );
    // Only a panel that declares evidence carries the key, so an older panel keeps its hash.
    if let Some(raw) = map.get("evidence") {
        body.insert("evidence".into(), evidence(raw)?);
    }
    let computed = hash(&Value::Object(body.clone()));
    if let Some(given) = map.get("sha256")
        && given.as_str() != Some(computed.as_str())
    {
        return Err(Error::PanelHash);
    }
    let independence = if families.contains(&field(judge, "family")) {
        "partial"
    } else {
        "full"
    };
    body.insert("sha256".into(), json!(computed));
    body.insert("judge".into(), json!(field(judge, "id")));
    body.insert("families".into(), json!(families));
    body.insert("judge_independence".into(), json!(independence));
    Ok(Value::Object(body))
}

/// Returns the participant seat ids of a normalised panel, in seat order.
pub fn participants(panel: &Value) -> Vec<String> {
    panel["seats"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["role"] != "judge")
        .filter_map(|s| s["id"].as_str().map(str::to_owned))
        .collect()
}

/// Returns the judge seat of a normalised panel.
pub fn judge_seat(panel: &Value) -> &Value {
    let judge = panel["judge"].as_str().unwrap_or_default();
    panel["seats"]
        .as_array()
        .and_then(|seats| seats.iter().find(|s| s["id"] == judge))
        .unwrap_or(&Value::Null)
}

/// Returns the principals that may sign a session judged by the panel's judge seat: the
/// `principal` the seat declares, else its lane and its seat id.
///
/// ```
/// use serde_json::json;
/// use hpp_core::deliberation::panel::judge_principals;
/// let panel = json!({"judge": "j", "seats": [{"id": "j", "lane": "lane-j"}]});
/// assert_eq!(judge_principals(&panel), ["lane-j", "j"]);
/// let declared = json!({"judge": "j", "seats": [{"id": "j", "lane": "l", "principal": "judge-9"}]});
/// assert_eq!(judge_principals(&declared), ["judge-9"]);
/// ```
pub fn judge_principals(panel: &Value) -> Vec<String> {
    let seat = judge_seat(panel);
    if let Some(principal) = seat["principal"].as_str().filter(|p| !p.is_empty()) {
        return vec![principal.to_owned()];
    }
    ["lane", "id"]
        .iter()
        .filter_map(|key| seat[*key].as_str().filter(|v| !v.is_empty()))
        .map(str::to_owned)
        .collect()
}

/// Returns why `signer` may not sign a session of `panel` (the signer is the judge's seat or
/// the principal it declares), or `None` when it may.
pub fn signer_problem(panel: &Value, signer: &str) -> Option<String> {
    let allowed = judge_principals(panel);
    (!allowed.iter().any(|p| p == signer)).then(|| {
        format!(
            "signed by {signer}, but only the judge's seat signs the session ({})",
            if allowed.is_empty() {
                "the panel names no judge seat".to_owned()
            } else {
                allowed.join(" or ")
            }
        )
    })
}

/// Returns the panel's options.
pub fn options(panel: &Value) -> Vec<String> {
    panel["question"]["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o.as_str().map(str::to_owned))
        .collect()
}

/// Returns the ids a reference must name to resolve, or `None` when the panel declared no
/// evidence (then any reference resolves).
pub fn known_ids(panel: &Value) -> Option<BTreeSet<String>> {
    let evidence = panel.get("evidence").filter(|e| !e.is_null())?;
    Some(
        evidence["ids"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i.as_str().map(str::to_owned))
            .collect(),
    )
}

/// Returns `panel` with evidence ids added: its declared evidence (validated first, so an edited
/// panel is refused, not repaired), plus `ids` with their `sources`; ids sorted and
/// deduplicated, the stale `sha256` dropped.
///
/// # Errors
///
/// The panel as given breaks a rule.
pub fn with_evidence(panel: &Value, ids: &[String], sources: &[Value]) -> Result<Value, Error> {
    let declared = normalise_panel(panel)?;
    let mut all_ids: BTreeSet<String> = known_ids(&declared).unwrap_or_default();
    all_ids.extend(ids.iter().cloned());
    let mut all_sources: Vec<Value> = declared
        .get("evidence")
        .and_then(|e| e.get("sources"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    all_sources.extend(sources.iter().cloned());
    let mut updated = panel.as_object().cloned().unwrap_or_default();
    updated.remove("sha256");
    updated.insert(
        "evidence".into(),
        json!({"ids": all_ids, "sources": all_sources}),
    );
    Ok(Value::Object(updated))
}
