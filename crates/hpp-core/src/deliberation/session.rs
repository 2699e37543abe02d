//! Turns (`hpp.turn/v1`), the per-round tally and the stop rules. Pure.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value, json};

use super::panel::{known_ids, normalise_panel, options, participants};
use super::{ABSTAIN, Error, TURN_SCHEMA, hash, hex, int, repr};
use crate::record::is_sha256_hex;

/// The claim kinds.
pub const CLAIM_KINDS: [&str; 3] = ["fact", "inference", "opinion"];

/// Validates a turn against a normalised panel and returns it normalised with its `sha256`.
///
/// # Errors
///
/// The first broken rule, as [`Error`].
pub fn normalise_turn(turn: &Value, panel: &Value) -> Result<Value, Error> {
    let map = turn.as_object().ok_or(Error::TurnNotObject)?;
    if map.get("schema").and_then(Value::as_str) != Some(TURN_SCHEMA) {
        return Err(Error::TurnSchema);
    }
    if map.get("panel_sha256") != Some(&panel["sha256"]) {
        return Err(Error::TurnPanel);
    }
    let seat = match map.get("seat") {
        Some(Value::String(s)) if participants(panel).contains(s) => s.clone(),
        other => return Err(Error::NotParticipant(repr(other))),
    };
    let max_rounds = panel["budget"]["max_rounds"].as_i64().unwrap_or(1);
    let round = int(map.get("round"))
        .filter(|r| (1..=max_rounds).contains(r))
        .ok_or(Error::TurnRound(max_rounds))?;
    let position = match map.get("position") {
        Some(Value::String(p)) if p == ABSTAIN || options(panel).contains(p) => p.clone(),
        other => return Err(Error::Position(repr(other))),
    };
    let confidence = match map.get("confidence") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(
            n.as_f64()
                .filter(|c| (0.0..=1.0).contains(c))
                .ok_or(Error::Confidence)?,
        ),
        Some(_) => return Err(Error::Confidence),
    };
    let raw_claims = match map.get("claims") {
        None => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(Error::Claims),
    };
    let mut claims = Vec::new();
    for claim in &raw_claims {
        let kind = claim
            .as_object()
            .and_then(|c| c.get("kind"))
            .and_then(Value::as_str)
            .filter(|k| CLAIM_KINDS.contains(k))
            .ok_or(Error::ClaimKind)?;
        let refs = match claim.get("refs") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|r| match r {
                    Value::String(s) if !s.is_empty() => Ok(s.clone()),
                    _ => Err(Error::ClaimRefs),
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return Err(Error::ClaimRefs),
        };
        if refs.iter().collect::<HashSet<_>>().len() != refs.len() {
            return Err(Error::ClaimRefs);
        }
        claims.push(json!({"kind": kind, "refs": refs}));
    }
    let text_sha256 = hex(map.get("text_sha256"), "text_sha256")?;
    let chars = int(map.get("chars"))
        .filter(|c| *c >= 0)
        .ok_or(Error::Chars)?;
    let seen: Vec<String> = match map.get("seen_turns") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) if is_sha256_hex(s) => Ok(s.clone()),
                _ => Err(Error::SeenTurns),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(Error::SeenTurns),
    };
    if seen.iter().collect::<HashSet<_>>().len() != seen.len() {
        return Err(Error::SeenTurns);
    }
    if round == 1 && !seen.is_empty() {
        return Err(Error::NotBlind);
    }
    let mut body = json!({
        "schema": TURN_SCHEMA, "panel_sha256": panel["sha256"], "seat": seat, "round": round,
        "position": position, "confidence": confidence, "claims": claims,
        "text_sha256": text_sha256, "chars": chars, "seen_turns": seen,
    });
    let computed = hash(&body);
    if let Some(given) = map.get("sha256")
        && given.as_str() != Some(computed.as_str())
    {
        return Err(Error::TurnHash);
    }
    body["sha256"] = json!(computed);
    Ok(body)
}

fn resolves(reference: &str, known: Option<&BTreeSet<String>>) -> bool {
    known.is_none_or(|k| k.contains(reference))
}

fn claims(turn: &Value) -> impl Iterator<Item = &Value> {
    turn["claims"].as_array().into_iter().flatten()
}

fn claim_refs(claim: &Value) -> impl Iterator<Item = &str> {
    claim["refs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Tells whether a turn is grounded: it states a `fact` through at least one reference that
/// resolves (any reference when the panel declared no evidence).
pub fn grounded(turn: &Value, known: Option<&BTreeSet<String>>) -> bool {
    claims(turn).any(|c| c["kind"] == "fact" && claim_refs(c).any(|r| resolves(r, known)))
}

/// The resolving references of a turn: an id nobody declared is not evidence, so it can neither
/// keep a session going nor excuse a change of position.
fn turn_refs(turn: &Value, known: Option<&BTreeSet<String>>) -> BTreeSet<String> {
    claims(turn)
        .flat_map(claim_refs)
        .filter(|r| resolves(r, known))
        .map(str::to_owned)
        .collect()
}

fn unsupported(turn: &Value, known: &BTreeSet<String>) -> Vec<String> {
    claims(turn)
        .flat_map(claim_refs)
        .filter(|r| !known.contains(*r))
        .map(str::to_owned)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// A normalised panel with its normalised turns, in (round, seat order) order.
pub(crate) type Session = (Value, Vec<Value>);

/// Validates a panel and its turns: one turn per seat per round, seen turns only of earlier
/// rounds of this session, rounds without gaps.
pub(crate) fn session(panel: &Value, turns: &Value) -> Result<Session, Error> {
    let panel = normalise_panel(panel)?;
    let turns = turns.as_array().ok_or(Error::Turns)?;
    let mut normalised = turns
        .iter()
        .map(|t| normalise_turn(t, &panel))
        .collect::<Result<Vec<_>, _>>()?;
    let order: HashMap<String, usize> = participants(&panel)
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s, i))
        .collect();
    let key = |t: &Value| {
        (
            t["round"].as_i64().unwrap_or(0),
            order[t["seat"].as_str().unwrap_or_default()],
        )
    };
    normalised.sort_by_key(key);
    let round_of: HashMap<String, i64> = normalised
        .iter()
        .map(|t| (str_(t, "sha256"), t["round"].as_i64().unwrap_or(0)))
        .collect();
    let mut pairs = HashSet::new();
    for turn in &normalised {
        let (seat, round) = (str_(turn, "seat"), turn["round"].as_i64().unwrap_or(0));
        if !pairs.insert((seat.clone(), round)) {
            return Err(Error::SpokeTwice { seat, round });
        }
        for seen in turn["seen_turns"].as_array().into_iter().flatten() {
            match round_of.get(seen.as_str().unwrap_or_default()) {
                None => {
                    return Err(Error::SeenUnknown { seat, round });
                }
                Some(r) if *r >= round => return Err(Error::SeenLater { seat, round }),
                Some(_) => {}
            }
        }
    }
    let rounds: BTreeSet<i64> = normalised
        .iter()
        .map(|t| t["round"].as_i64().unwrap_or(0))
        .collect();
    if let Some(last) = rounds.last()
        && rounds.iter().copied().ne(1..=*last)
    {
        let found: Vec<String> = rounds.iter().map(i64::to_string).collect();
        return Err(Error::RoundGaps(format!("[{}]", found.join(", "))));
    }
    Ok((panel, normalised))
}

fn str_(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_owned()
}

/// Counts each round: grounded and ungrounded votes per option, abstentions, seats not judged,
/// the unique leader, grounded convergence, dissent, moves, flips without new evidence, new
/// references and characters.
pub(crate) fn count(panel: &Value, turns: &[Value]) -> Vec<Value> {
    let seats = participants(panel);
    let options = options(panel);
    let known = known_ids(panel);
    let known = known.as_ref();
    let last = turns
        .iter()
        .filter_map(|t| t["round"].as_i64())
        .max()
        .unwrap_or(0);
    let index = |seat: &str| seats.iter().position(|s| s == seat).unwrap_or(usize::MAX);
    let mut tallies = Vec::new();
    let mut earlier: BTreeSet<String> = BTreeSet::new();
    let mut by_seat: HashMap<String, BTreeSet<String>> = HashMap::new();
    let mut previous: HashMap<String, String> = HashMap::new();
    for round in 1..=last {
        let current: BTreeMap<usize, &Value> = turns
            .iter()
            .filter(|t| t["round"].as_i64() == Some(round))
            .map(|t| (index(t["seat"].as_str().unwrap_or_default()), t))
            .collect();
        let mut votes: BTreeMap<String, (u64, u64)> =
            options.iter().map(|o| (o.clone(), (0, 0))).collect();
        let (mut abstained, mut not_judged) = (Vec::new(), Vec::new());
        for (i, seat) in seats.iter().enumerate() {
            match current.get(&i) {
                None => not_judged.push(seat.clone()),
                Some(t) if t["position"] == ABSTAIN => abstained.push(seat.clone()),
                Some(t) => {
                    let entry = votes
                        .get_mut(t["position"].as_str().unwrap_or_default())
                        .expect("a normalised position is an option");
                    if grounded(t, known) {
                        entry.0 += 1;
                    } else {
                        entry.1 += 1;
                    }
                }
            }
        }
        let best = options.iter().map(|o| votes[o].0).max().unwrap_or(0);
        let top: Vec<&String> = options.iter().filter(|o| votes[*o].0 == best).collect();
        let leading = (best > 0 && top.len() == 1).then(|| top[0].clone());
        let answered: Vec<&Value> = current.values().copied().collect();
        let convergence = not_judged.is_empty()
            && abstained.is_empty()
            && leading.as_ref().is_some_and(|lead| {
                answered
                    .iter()
                    .all(|t| t["position"] == lead.as_str() && grounded(t, known))
            });
        let dissent: Vec<String> = match &leading {
            Some(lead) => answered
                .iter()
                .filter(|t| {
                    grounded(t, known) && t["position"] != lead.as_str() && t["position"] != ABSTAIN
                })
                .map(|t| str_(t, "seat"))
                .collect(),
            None => Vec::new(),
        };
        let moved: Vec<String> = answered
            .iter()
            .filter(|t| {
                previous
                    .get(&str_(t, "seat"))
                    .is_some_and(|p| *p != str_(t, "position"))
            })
            .map(|t| str_(t, "seat"))
            .collect();
        let flips: Vec<String> = answered
            .iter()
            .filter(|t| moved.contains(&str_(t, "seat")))
            .filter(|t| {
                let before = by_seat.get(&str_(t, "seat")).cloned().unwrap_or_default();
                turn_refs(t, known).difference(&before).next().is_none()
            })
            .map(|t| str_(t, "seat"))
            .collect();
        let round_refs: BTreeSet<String> =
            answered.iter().flat_map(|t| turn_refs(t, known)).collect();
        let chars: i64 = answered.iter().filter_map(|t| t["chars"].as_i64()).sum();
        let votes_json: Map<String, Value> = votes
            .iter()
            .map(|(o, (g, u))| (o.clone(), json!({"grounded": g, "ungrounded": u})))
            .collect();
        let mut entry = json!({
            "round": round, "votes": votes_json, "abstained": abstained,
            "not_judged": not_judged, "leading": leading, "grounded_convergence": convergence,
            "dissent": dissent, "moved": moved, "flips_without_new_evidence": flips,
            "new_refs": round_refs.difference(&earlier).cloned().collect::<Vec<_>>(),
            "chars": chars,
        });
        if let Some(known) = known {
            let unsupported: Vec<Value> = answered
                .iter()
                .filter_map(|t| {
                    let refs = unsupported(t, known);
                    (!refs.is_empty()).then(|| json!({"seat": str_(t, "seat"), "refs": refs}))
                })
                .collect();
            entry["unsupported"] = Value::Array(unsupported);
        }
        tallies.push(entry);
        earlier.extend(round_refs);
        for t in &answered {
            by_seat
                .entry(str_(t, "seat"))
                .or_default()
                .extend(turn_refs(t, known));
            previous.insert(str_(t, "seat"), str_(t, "position"));
        }
    }
    tallies
}

/// The stop decision after `tallies`: `continue` with the next round, or `stop` with the first
/// rule that holds, in order: not-judged, grounded-convergence, paused-budget, no-new-evidence,
/// max-rounds.
pub(crate) fn stop_of(panel: &Value, tallies: &[Value]) -> Value {
    let Some(last) = tallies.last() else {
        return json!({"decision": "continue", "next_round": 1, "reason": "no-turns-yet", "escalate": false});
    };
    let round = last["round"].as_i64().unwrap_or(0);
    let used: i64 = tallies.iter().filter_map(|t| t["chars"].as_i64()).sum();
    let empty = |key: &str| last[key].as_array().is_none_or(Vec::is_empty);
    let reason = if !empty("not_judged") {
        Some("not-judged")
    } else if last["grounded_convergence"] == true {
        Some("grounded-convergence")
    } else if used >= panel["budget"]["max_chars"].as_i64().unwrap_or(i64::MAX) {
        Some("paused-budget")
    } else if round >= 2 && empty("new_refs") && empty("moved") {
        Some("no-new-evidence")
    } else if round >= panel["budget"]["max_rounds"].as_i64().unwrap_or(0) {
        Some("max-rounds")
    } else {
        None
    };
    let Some(reason) = reason else {
        return json!({"decision": "continue", "next_round": round + 1, "reason": "not-converged", "escalate": false});
    };
    // Two grounded positions standing at the end go to a person, with the dissent kept; a
    // grounded split with no leader (1-1-1) counts too.
    let grounded_positions = last["votes"].as_object().map_or(0, |v| {
        v.values()
            .filter(|c| c["grounded"].as_u64() > Some(0))
            .count()
    });
    let escalate = matches!(reason, "no-new-evidence" | "max-rounds" | "paused-budget")
        && grounded_positions > 1;
    json!({"decision": "stop", "reason": reason, "round": round, "escalate": escalate})
}

/// Validates the session and counts it, refusing turns of rounds after the one where a stop
/// rule first held.
pub(crate) fn checked(
    panel: &Value,
    turns: &Value,
) -> Result<(Value, Vec<Value>, Vec<Value>), Error> {
    let (panel, turns) = session(panel, turns)?;
    let tallies = count(&panel, &turns);
    for end in 1..tallies.len() {
        let stop = stop_of(&panel, &tallies[..end]);
        if stop["decision"] == "stop" {
            return Err(Error::Stopped {
                round: end as i64,
                reason: str_(&stop, "reason"),
            });
        }
    }
    Ok((panel, turns, tallies))
}

/// Per-round count of a session (`deliberate tally`).
///
/// # Errors
///
/// The panel, a turn or the session breaks a rule.
pub fn tally(panel: &Value, turns: &Value) -> Result<Vec<Value>, Error> {
    Ok(checked(panel, turns)?.2)
}

/// `continue` with the next round, or `stop` with the rule that stopped the session
/// (`deliberate stop`).
///
/// # Errors
///
/// The panel, a turn or the session breaks a rule.
pub fn decide_stop(panel: &Value, turns: &Value) -> Result<Value, Error> {
    let (panel, _, tallies) = checked(panel, turns)?;
    Ok(stop_of(&panel, &tallies))
}
