//! Turns (`hpp.turn/v1`), the per-round tally and the stop rules, over the typed [`Turn`],
//! [`Tally`] and [`Stop`]; a [`Session`] is a panel with its turns, checked and counted. Pure.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::panel::{Panel, normalise_panel};
use super::{ABSTAIN, Error, TURN_SCHEMA, hash_without, hex, int, repr};
use crate::record::is_sha256_hex;

/// What a claim states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// A fact: it grounds a turn when one of its references resolves.
    Fact,
    /// An inference.
    Inference,
    /// An opinion.
    Opinion,
}

impl ClaimKind {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "fact" => Some(Self::Fact),
            "inference" => Some(Self::Inference),
            "opinion" => Some(Self::Opinion),
            _ => None,
        }
    }
}

/// One claim of a turn, with the evidence ids it cites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Claim {
    /// What the claim states.
    pub kind: ClaimKind,
    /// The ids it cites, unique.
    pub refs: Vec<String>,
}

/// A normalised turn (`hpp.turn/v1`) with its `sha256`. It is made only by [`normalise_turn`],
/// against the panel whose `sha256` it carries, so every turn rule holds for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Turn {
    /// Always [`TURN_SCHEMA`].
    pub schema: &'static str,
    /// The panel it belongs to.
    pub panel_sha256: String,
    /// The participant seat that spoke.
    pub seat: String,
    /// The round, from 1.
    pub round: i64,
    /// An option of the question, or [`ABSTAIN`].
    pub position: String,
    /// The seat's confidence in 0..=1, or null.
    pub confidence: Option<f64>,
    /// The claims, in the seat's order.
    pub claims: Vec<Claim>,
    /// The sha256 of the verbatim text.
    pub text_sha256: String,
    /// The verbatim text's length in characters.
    pub chars: i64,
    /// The hashes of the turns the seat had read (none in round 1).
    pub seen_turns: Vec<String>,
    /// The sha256 of the canonical JSON of every field above.
    pub sha256: String,
}

/// Validates a turn document against a normalised panel and returns it normalised with its
/// `sha256`.
///
/// # Errors
///
/// The first broken rule, as [`Error`].
pub fn normalise_turn(turn: &Value, panel: &Panel) -> Result<Turn, Error> {
    let map = turn.as_object().ok_or(Error::TurnNotObject)?;
    if map.get("schema").and_then(Value::as_str) != Some(TURN_SCHEMA) {
        return Err(Error::TurnSchema);
    }
    if map.get("panel_sha256").and_then(Value::as_str) != Some(panel.sha256.as_str()) {
        return Err(Error::TurnPanel);
    }
    let seat = match map.get("seat") {
        Some(Value::String(s)) if panel.participant_ids().contains(&s.as_str()) => s.clone(),
        other => return Err(Error::NotParticipant(repr(other))),
    };
    let max_rounds = panel.budget.max_rounds;
    let round = int(map.get("round"))
        .filter(|r| (1..=max_rounds).contains(r))
        .ok_or(Error::TurnRound(max_rounds))?;
    let position = match map.get("position") {
        Some(Value::String(p)) if p == ABSTAIN || panel.options().contains(p) => p.clone(),
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
    let raw_claims: &[Value] = match map.get("claims") {
        None => &[],
        Some(Value::Array(items)) => items,
        Some(_) => return Err(Error::Claims),
    };
    let claims = raw_claims
        .iter()
        .map(claim)
        .collect::<Result<Vec<_>, _>>()?;
    let text_sha256 = hex(map.get("text_sha256"), "text_sha256")?;
    let chars = int(map.get("chars"))
        .filter(|c| *c >= 0)
        .ok_or(Error::Chars)?;
    let seen_turns: Vec<String> = match map.get("seen_turns") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) if is_sha256_hex(s) => Ok(s.clone()),
                _ => Err(Error::SeenTurns),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(Error::SeenTurns),
    };
    if seen_turns.iter().collect::<HashSet<_>>().len() != seen_turns.len() {
        return Err(Error::SeenTurns);
    }
    if round == 1 && !seen_turns.is_empty() {
        return Err(Error::NotBlind);
    }
    let mut normalised = Turn {
        schema: TURN_SCHEMA,
        panel_sha256: panel.sha256.clone(),
        seat,
        round,
        position,
        confidence,
        claims,
        text_sha256,
        chars,
        seen_turns,
        sha256: String::new(),
    };
    let computed = hash_without(&normalised, &["sha256"]);
    if let Some(given) = map.get("sha256")
        && given.as_str() != Some(computed.as_str())
    {
        return Err(Error::TurnHash);
    }
    normalised.sha256 = computed;
    Ok(normalised)
}

fn claim(raw: &Value) -> Result<Claim, Error> {
    let kind = raw
        .as_object()
        .and_then(|c| c.get("kind"))
        .and_then(Value::as_str)
        .and_then(ClaimKind::parse)
        .ok_or(Error::ClaimKind)?;
    let refs = match raw.get("refs") {
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
    Ok(Claim { kind, refs })
}

fn resolves(reference: &str, known: Option<&BTreeSet<String>>) -> bool {
    known.is_none_or(|k| k.contains(reference))
}

fn claim_refs(turn: &Turn) -> impl Iterator<Item = &str> {
    turn.claims
        .iter()
        .flat_map(|c| c.refs.iter().map(String::as_str))
}

/// Tells whether a turn is grounded: it states a `fact` through at least one reference that
/// resolves (any reference when the panel declared no evidence).
pub fn grounded(turn: &Turn, known: Option<&BTreeSet<String>>) -> bool {
    turn.claims
        .iter()
        .any(|c| c.kind == ClaimKind::Fact && c.refs.iter().any(|r| resolves(r, known)))
}

/// The resolving references of a turn: an id nobody declared is not evidence, so it can neither
/// keep a session going nor excuse a change of position.
fn turn_refs(turn: &Turn, known: Option<&BTreeSet<String>>) -> BTreeSet<String> {
    claim_refs(turn)
        .filter(|r| resolves(r, known))
        .map(str::to_owned)
        .collect()
}

fn unsupported(turn: &Turn, known: &BTreeSet<String>) -> Vec<String> {
    claim_refs(turn)
        .filter(|r| !known.contains(*r))
        .map(str::to_owned)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The votes an option got in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Votes {
    /// From grounded turns.
    pub grounded: u64,
    /// From turns without a resolving fact.
    pub ungrounded: u64,
}

/// A seat's references that resolve to no declared id in a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unsupported {
    /// The seat.
    pub seat: String,
    /// The references, sorted.
    pub refs: Vec<String>,
}

/// The count of one round (`hpp.deliberation-tally/v1` lists one per round).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// The round.
    pub round: i64,
    /// The votes per option.
    pub votes: BTreeMap<String, Votes>,
    /// The seats that abstained, in seat order.
    pub abstained: Vec<String>,
    /// The seats that gave no turn, in seat order.
    pub not_judged: Vec<String>,
    /// The option with the most grounded votes, when one leads alone.
    pub leading: Option<String>,
    /// Every seat answered, none abstained, and all hold the leader on grounded turns.
    pub grounded_convergence: bool,
    /// The seats holding another option than the leader on grounded turns.
    pub dissent: Vec<String>,
    /// The seats whose position changed since their last turn.
    pub moved: Vec<String>,
    /// The seats that moved citing no reference they had not cited before.
    pub flips_without_new_evidence: Vec<String>,
    /// The resolving references first cited in this round, sorted.
    pub new_refs: Vec<String>,
    /// The characters the round's turns used.
    pub chars: i64,
    /// The references that resolve to no declared id, per seat (only when evidence is declared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<Vec<Unsupported>>,
}

/// Why a session stopped, in the order the rules are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// A seat gave no turn.
    NotJudged,
    /// Every seat holds the leader on grounded turns.
    GroundedConvergence,
    /// The characters used reached the budget.
    PausedBudget,
    /// From round 2, no new reference and nobody moved.
    NoNewEvidence,
    /// The last round of the budget.
    MaxRounds,
}

impl StopReason {
    /// Returns the reason as records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotJudged => "not-judged",
            Self::GroundedConvergence => "grounded-convergence",
            Self::PausedBudget => "paused-budget",
            Self::NoNewEvidence => "no-new-evidence",
            Self::MaxRounds => "max-rounds",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a session goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContinueReason {
    /// Nobody spoke yet.
    NoTurnsYet,
    /// No stop rule holds.
    NotConverged,
}

/// How a session stopped: `{"decision": "stop", "reason", "round", "escalate"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// The first rule that held.
    pub reason: StopReason,
    /// The round it held in.
    pub round: i64,
    /// Whether it goes to a person: the budget, the rounds or the evidence ran out with more
    /// than one grounded position standing.
    pub escalate: bool,
}

/// The stop decision after the rounds so far (`deliberate stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `{"decision": "continue", "next_round", "reason", "escalate": false}`.
    Continue {
        /// The round to run next.
        next_round: i64,
        /// Why.
        reason: ContinueReason,
    },
    /// The session stopped.
    Stop(Stopped),
}

/// The stop decision as records spell it, whichever way it went.
#[derive(Serialize)]
struct StopDocument {
    decision: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_round: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    round: Option<i64>,
    reason: &'static str,
    escalate: bool,
}

impl Serialize for Stopped {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        StopDocument {
            decision: "stop",
            next_round: None,
            round: Some(self.round),
            reason: self.reason.as_str(),
            escalate: self.escalate,
        }
        .serialize(serializer)
    }
}

impl Serialize for Stop {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Stop(stopped) => stopped.serialize(serializer),
            Self::Continue { next_round, reason } => StopDocument {
                decision: "continue",
                next_round: Some(*next_round),
                round: None,
                reason: match reason {
                    ContinueReason::NoTurnsYet => "no-turns-yet",
                    ContinueReason::NotConverged => "not-converged",
                },
                escalate: false,
            }
            .serialize(serializer),
        }
    }
}

/// A panel with its turns, checked: one turn per seat per round, seen turns only of earlier
/// rounds of this session, rounds without gaps, and no turn after the round where a stop rule
/// first held; with every round counted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Session {
    /// The normalised panel.
    pub panel: Panel,
    /// Its turns, in (round, seat order) order.
    pub turns: Vec<Turn>,
    /// The count of each round.
    pub tally: Vec<Tally>,
}

impl Session {
    /// Validates a panel document and its turns (a JSON list) and counts the session.
    ///
    /// # Errors
    ///
    /// The panel, a turn or the session breaks a rule.
    pub fn parse(panel: &Value, turns: &Value) -> Result<Self, Error> {
        let panel = normalise_panel(panel)?;
        let turns = turns
            .as_array()
            .ok_or(Error::Turns)?
            .iter()
            .map(|t| normalise_turn(t, &panel))
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(panel, turns)
    }

    /// Checks normalised turns as one session of `panel` and counts it.
    ///
    /// # Errors
    ///
    /// A turn of another panel, or the session breaks a rule.
    pub fn new(panel: Panel, mut turns: Vec<Turn>) -> Result<Self, Error> {
        if turns.iter().any(|t| t.panel_sha256 != panel.sha256) {
            return Err(Error::TurnPanel);
        }
        let order: HashMap<&str, usize> = panel
            .participant_ids()
            .into_iter()
            .enumerate()
            .map(|(i, s)| (s, i))
            .collect();
        let position = |seat: &str| order.get(seat).copied().unwrap_or(usize::MAX);
        turns.sort_by_key(|t| (t.round, position(&t.seat)));
        let round_of: HashMap<&str, i64> =
            turns.iter().map(|t| (t.sha256.as_str(), t.round)).collect();
        let mut pairs = HashSet::new();
        for turn in &turns {
            let (seat, round) = (turn.seat.clone(), turn.round);
            if !pairs.insert((turn.seat.as_str(), round)) {
                return Err(Error::SpokeTwice { seat, round });
            }
            for seen in &turn.seen_turns {
                match round_of.get(seen.as_str()) {
                    None => return Err(Error::SeenUnknown { seat, round }),
                    Some(r) if *r >= round => return Err(Error::SeenLater { seat, round }),
                    Some(_) => {}
                }
            }
        }
        let rounds: BTreeSet<i64> = turns.iter().map(|t| t.round).collect();
        if let Some(last) = rounds.last()
            && rounds.iter().copied().ne(1..=*last)
        {
            let found: Vec<String> = rounds.iter().map(i64::to_string).collect();
            return Err(Error::RoundGaps(format!("[{}]", found.join(", "))));
        }
        let tally = count(&panel, &turns);
        for end in 1..tally.len() {
            if let Stop::Stop(stopped) = stop_of(&panel, &tally[..end]) {
                return Err(Error::Stopped {
                    round: end as i64,
                    reason: stopped.reason,
                });
            }
        }
        Ok(Self {
            panel,
            turns,
            tally,
        })
    }

    /// Returns the stop decision after the session's rounds.
    pub fn stop(&self) -> Stop {
        stop_of(&self.panel, &self.tally)
    }
}

/// Counts each round: grounded and ungrounded votes per option, abstentions, seats not judged,
/// the unique leader, grounded convergence, dissent, moves, flips without new evidence, new
/// references and characters.
fn count(panel: &Panel, turns: &[Turn]) -> Vec<Tally> {
    let seats = panel.participant_ids();
    let options = panel.options();
    let known = panel.known_ids();
    let last = turns.iter().map(|t| t.round).max().unwrap_or(0);
    let index = |seat: &str| seats.iter().position(|s| *s == seat).unwrap_or(usize::MAX);
    let mut tallies = Vec::new();
    let mut earlier: BTreeSet<String> = BTreeSet::new();
    let mut by_seat: HashMap<&str, BTreeSet<String>> = HashMap::new();
    let mut previous: HashMap<&str, &str> = HashMap::new();
    for round in 1..=last {
        let current: BTreeMap<usize, &Turn> = turns
            .iter()
            .filter(|t| t.round == round)
            .map(|t| (index(&t.seat), t))
            .collect();
        let mut votes: BTreeMap<String, Votes> = options
            .iter()
            .map(|o| (o.clone(), Votes::default()))
            .collect();
        let (mut abstained, mut not_judged) = (Vec::new(), Vec::new());
        for (i, seat) in seats.iter().enumerate() {
            match current.get(&i) {
                None => not_judged.push((*seat).to_owned()),
                Some(t) if t.position == ABSTAIN => abstained.push((*seat).to_owned()),
                Some(t) => {
                    let entry = votes.get_mut(&t.position).expect(
                        "a normalised position is an option, because normalise_turn checks it",
                    );
                    if grounded(t, known) {
                        entry.grounded += 1;
                    } else {
                        entry.ungrounded += 1;
                    }
                }
            }
        }
        let best = options.iter().map(|o| votes[o].grounded).max().unwrap_or(0);
        let top: Vec<&String> = options
            .iter()
            .filter(|o| votes[*o].grounded == best)
            .collect();
        let leading = (best > 0 && top.len() == 1).then(|| top[0].clone());
        let answered: Vec<&Turn> = current.values().copied().collect();
        let convergence = not_judged.is_empty()
            && abstained.is_empty()
            && leading.as_ref().is_some_and(|lead| {
                answered
                    .iter()
                    .all(|t| t.position == *lead && grounded(t, known))
            });
        let dissent: Vec<String> = match &leading {
            Some(lead) => answered
                .iter()
                .filter(|t| grounded(t, known) && t.position != *lead && t.position != ABSTAIN)
                .map(|t| t.seat.clone())
                .collect(),
            None => Vec::new(),
        };
        let moved: Vec<String> = answered
            .iter()
            .filter(|t| {
                previous
                    .get(t.seat.as_str())
                    .is_some_and(|p| *p != t.position)
            })
            .map(|t| t.seat.clone())
            .collect();
        let flips: Vec<String> = answered
            .iter()
            .filter(|t| moved.contains(&t.seat))
            .filter(|t| {
                let before = by_seat.get(t.seat.as_str()).cloned().unwrap_or_default();
                turn_refs(t, known).difference(&before).next().is_none()
            })
            .map(|t| t.seat.clone())
            .collect();
        let round_refs: BTreeSet<String> =
            answered.iter().flat_map(|t| turn_refs(t, known)).collect();
        let chars: i64 = answered.iter().map(|t| t.chars).sum();
        let unsupported = known.map(|known| {
            answered
                .iter()
                .filter_map(|t| {
                    let refs = unsupported(t, known);
                    (!refs.is_empty()).then(|| Unsupported {
                        seat: t.seat.clone(),
                        refs,
                    })
                })
                .collect()
        });
        tallies.push(Tally {
            round,
            votes,
            abstained,
            not_judged,
            leading,
            grounded_convergence: convergence,
            dissent,
            moved,
            flips_without_new_evidence: flips,
            new_refs: round_refs.difference(&earlier).cloned().collect(),
            chars,
            unsupported,
        });
        earlier.extend(round_refs);
        for t in &answered {
            by_seat
                .entry(t.seat.as_str())
                .or_default()
                .extend(turn_refs(t, known));
            previous.insert(t.seat.as_str(), t.position.as_str());
        }
    }
    tallies
}

/// The stop decision after `tallies`: `continue` with the next round, or `stop` with the first
/// rule that holds, in order: not-judged, grounded-convergence, paused-budget, no-new-evidence,
/// max-rounds.
fn stop_of(panel: &Panel, tallies: &[Tally]) -> Stop {
    let Some(last) = tallies.last() else {
        return Stop::Continue {
            next_round: 1,
            reason: ContinueReason::NoTurnsYet,
        };
    };
    let round = last.round;
    let used: i64 = tallies.iter().map(|t| t.chars).sum();
    let reason = if !last.not_judged.is_empty() {
        StopReason::NotJudged
    } else if last.grounded_convergence {
        StopReason::GroundedConvergence
    } else if used >= panel.budget.max_chars {
        StopReason::PausedBudget
    } else if round >= 2 && last.new_refs.is_empty() && last.moved.is_empty() {
        StopReason::NoNewEvidence
    } else if round >= panel.budget.max_rounds {
        StopReason::MaxRounds
    } else {
        return Stop::Continue {
            next_round: round + 1,
            reason: ContinueReason::NotConverged,
        };
    };
    // Two grounded positions standing at the end go to a person, with the dissent kept; a
    // grounded split with no leader (1-1-1) counts too.
    let grounded_positions = last.votes.values().filter(|v| v.grounded > 0).count();
    let escalate = matches!(
        reason,
        StopReason::NoNewEvidence | StopReason::MaxRounds | StopReason::PausedBudget
    ) && grounded_positions > 1;
    Stop::Stop(Stopped {
        reason,
        round,
        escalate,
    })
}

/// Per-round count of a session given as documents (`deliberate tally`).
///
/// # Errors
///
/// The panel, a turn or the session breaks a rule.
pub fn tally(panel: &Value, turns: &Value) -> Result<Vec<Tally>, Error> {
    Ok(Session::parse(panel, turns)?.tally)
}

/// `continue` with the next round, or `stop` with the rule that stopped the session given as
/// documents (`deliberate stop`).
///
/// # Errors
///
/// The panel, a turn or the session breaks a rule.
pub fn decide_stop(panel: &Value, turns: &Value) -> Result<Stop, Error> {
    Ok(Session::parse(panel, turns)?.stop())
}
