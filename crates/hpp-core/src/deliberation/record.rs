//! The sealed record, `hpp.deliberation/v2` (and v1 verification), as the typed [`Record`]: the
//! judge's decision, the verdict, the dissent kept, the rationale, the seal and its
//! verification. Pure.

use std::collections::BTreeSet;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::panel::{Independence, Panel};
use super::session::{Session, Stop, StopReason, Stopped, Tally, Turn, grounded};
use super::{
    ABSTAIN, Error, RATIONALE_SCHEMA, SCHEMA, SCHEMA_V1, hash, hash_without, hex, int, repr,
    repr_list, str_of,
};
use crate::decision::{self, Method};
use crate::record::{canonical_json, to_object};

/// The status of a sealed session's verdict: the judge's answer, or `blocked` when the session
/// stopped without a judgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictStatus {
    /// The judge chose an option.
    Recommendation,
    /// The judge declined to choose.
    Abstention,
    /// The judge could not answer.
    InstrumentFailure,
    /// The session stopped before a judge could rule (seats not judged).
    Blocked,
}

impl VerdictStatus {
    /// Returns the status a record document's verdict spells, if it spells one of the four.
    pub fn of(record: &Value) -> Option<Self> {
        Self::deserialize(&record["verdict"]["status"]).ok()
    }

    /// Returns the status as records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Recommendation => "recommendation",
            Self::Abstention => "abstention",
            Self::InstrumentFailure => "instrument-failure",
            Self::Blocked => "blocked",
        }
    }

    /// Tells whether the panel reached its judge and the judge answered: a recommendation or an
    /// abstention. `deliberate record` exits 0 on these, 1 otherwise.
    pub fn reached_judge(self) -> bool {
        matches!(self, Self::Recommendation | Self::Abstention)
    }
}

impl std::fmt::Display for VerdictStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<decision::Status> for VerdictStatus {
    fn from(status: decision::Status) -> Self {
        match status {
            decision::Status::Recommendation => Self::Recommendation,
            decision::Status::Abstention => Self::Abstention,
            decision::Status::InstrumentFailure => Self::InstrumentFailure,
        }
    }
}

/// Tells whether a record document's verdict lets `deliberate record` exit 0: a recommendation
/// or an abstention (the panel reached its judge); a blocked verdict, a judge failure or no
/// status at all exit 1.
pub fn record_exit_is_ok(record: &Value) -> bool {
    VerdictStatus::of(record).is_some_and(VerdictStatus::reached_judge)
}

/// A sealed session's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Its status.
    pub status: VerdictStatus,
    /// The option chosen, for a recommendation.
    pub value: Option<String>,
    /// `judge`, or `not judged: <seats>` for a blocked verdict.
    pub reason: String,
    /// What failed, for the judge's instrument failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A grounded position still standing against the verdict in the last round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dissent {
    /// The seat.
    pub seat: String,
    /// Its position.
    pub position: String,
    /// Always true: only grounded dissent is kept.
    pub grounded: bool,
}

/// What the session measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metrics {
    /// The largest share of round 1's votes on one option, or null without votes.
    pub blind_agreement: Option<f64>,
    /// The same for the last round.
    pub final_agreement: Option<f64>,
    /// The moves without new evidence, over every round.
    pub flips_without_new_evidence: usize,
    /// The share of votes from turns without a resolving fact, or null without votes.
    pub ungrounded_share: Option<f64>,
    /// The participants' families.
    pub families: usize,
}

/// What the session used of its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// The rounds run.
    pub rounds: i64,
    /// The characters the turns used.
    pub chars: i64,
    /// The panel's round budget.
    pub max_rounds: i64,
    /// The panel's character budget.
    pub max_chars: i64,
}

/// Whether the facts a v2 record rests on were declared and where they come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceGate {
    /// The panel declared no evidence: any reference grounds a fact.
    NotDeclared,
    /// The panel declared evidence with its sources.
    Resolved,
    /// The panel declared evidence ids without sources.
    DeclaredUnsourced,
}

/// The judge seat's argument for a dissenting position, by the hash and length of its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Steelman {
    /// The dissenting position argued.
    pub position: String,
    /// The sha256 of the verbatim text.
    pub text_sha256: String,
    /// Its length in characters.
    pub chars: i64,
}

/// A condition that would change the verdict, by the hash and length of its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Condition {
    /// The sha256 of the verbatim text.
    pub text_sha256: String,
    /// Its length in characters.
    pub chars: i64,
}

/// The judge seat's rationale (`hpp.rationale/v1`): a steelman of each dissenting position and
/// what would change the verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rationale {
    /// Always [`RATIONALE_SCHEMA`].
    pub schema: &'static str,
    /// The panel it belongs to.
    pub panel_sha256: String,
    /// The judge seat that wrote it.
    pub author: String,
    /// One argument per dissenting position, sorted by position.
    pub steelman: Vec<Steelman>,
    /// The conditions, in the judge's order.
    pub would_change_if: Vec<Condition>,
}

/// A record's schema, with what `hpp.deliberation/v2` added to v1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schema {
    /// `hpp.deliberation/v1`: sealed before the evidence gate and the rationale.
    V1,
    /// `hpp.deliberation/v2`.
    V2 {
        /// Whether the facts were declared and sourced.
        evidence_gate: EvidenceGate,
        /// The judge seat's rationale, when grounded dissent stands (or the judge gave one).
        rationale: Option<Rationale>,
    },
}

impl Schema {
    /// Returns the schema's name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::V1 => SCHEMA_V1,
            Self::V2 { .. } => SCHEMA,
        }
    }
}

/// A person's decision on a sealed session, kept beside the seal, never in it:
/// `{"value": an option, "by": who, "note"?: text}` and any key of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HumanDecision {
    /// The option decided.
    pub value: String,
    /// Who decided.
    pub by: String,
    /// Why, in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Keys the contract does not name, kept as they came (`deliberate decide` adds none).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl HumanDecision {
    /// Returns the decision `value` by `by`, with an optional `note`.
    pub fn new(value: String, by: String, note: Option<String>) -> Self {
        Self {
            value,
            by,
            note,
            extra: Map::new(),
        }
    }
}

/// A sealed House Session (`hpp.deliberation/v2`, or v1 read back), typed. It is made only by
/// [`build_record`] or [`Session::record`], which seal it, or by [`Record::from_sealed`] (and
/// deserialising), which verify it first: every key re-derives from its panel, turns, judge and
/// rationale, and `record_sha256` seals it. Serialised, it is the record's canonical JSON byte
/// for byte.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The schema, with the v2 keys.
    pub schema: Schema,
    /// The panel's judge independence.
    pub judge_independence: Independence,
    /// The normalised panel.
    pub panel: Panel,
    /// The normalised turns, in (round, seat order) order.
    pub turns: Vec<Turn>,
    /// The count of each round.
    pub tally: Vec<Tally>,
    /// How the session stopped.
    pub stop: Stopped,
    /// What it used of its budget.
    pub usage: Usage,
    /// The judge seat's decision record, null when the session stopped not-judged.
    pub judge: Option<decision::Record>,
    /// The verdict.
    pub verdict: Verdict,
    /// The grounded dissent standing in the last round.
    pub dissent: Vec<Dissent>,
    /// What the session measured.
    pub metrics: Metrics,
    /// The sha256 of the canonical JSON of every key above (the seal).
    pub record_sha256: String,
    /// A person's decision, outside the seal.
    pub human_decision: Option<HumanDecision>,
    /// Whether the record spells `human_decision` at all: a record written elsewhere may leave
    /// it out, and reading it back must not add it.
    spells_human_decision: bool,
}

/// The keys the seal does not cover: itself and the person's decision.
const UNSEALED: [&str; 2] = ["record_sha256", "human_decision"];

/// A record as its JSON spells it (keys sort when it becomes a value).
#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    judge_independence: Independence,
    panel: &'a Panel,
    turns: &'a [Turn],
    tally: &'a [Tally],
    stop: &'a Stopped,
    usage: &'a Usage,
    judge: Option<&'a decision::Record>,
    verdict: &'a Verdict,
    dissent: &'a [Dissent],
    metrics: &'a Metrics,
    #[serde(skip_serializing_if = "Option::is_none")]
    evidence_gate: Option<EvidenceGate>,
    // v2 spells a missing rationale as null; v1 has no key.
    #[serde(skip_serializing_if = "Option::is_none")]
    rationale: Option<Option<&'a Rationale>>,
    record_sha256: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    human_decision: Option<Option<&'a HumanDecision>>,
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (evidence_gate, rationale) = match &self.schema {
            Schema::V1 => (None, None),
            Schema::V2 {
                evidence_gate,
                rationale,
            } => (Some(*evidence_gate), Some(rationale.as_ref())),
        };
        Document {
            schema: self.schema.name(),
            judge_independence: self.judge_independence,
            panel: &self.panel,
            turns: &self.turns,
            tally: &self.tally,
            stop: &self.stop,
            usage: &self.usage,
            judge: self.judge.as_ref(),
            verdict: &self.verdict,
            dissent: &self.dissent,
            metrics: &self.metrics,
            evidence_gate,
            rationale,
            record_sha256: &self.record_sha256,
            human_decision: self
                .spells_human_decision
                .then_some(self.human_decision.as_ref()),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_sealed(&Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl Record {
    /// Returns the sealed record `record` (a document: a file, a ref's `record.json`) once it
    /// verifies, typed.
    ///
    /// # Errors
    ///
    /// [`Error::NotIntact`] with the reason [`verify_record`] gives.
    pub fn from_sealed(record: &Value) -> Result<Self, Error> {
        verified(record).map_err(Error::NotIntact)
    }

    /// Returns the id the record is kept under ([`super::record_id`]).
    pub fn id(&self) -> String {
        super::id_of(&self.panel.id, &self.record_sha256)
    }

    /// Returns the evidence gate (v2 only).
    pub fn evidence_gate(&self) -> Option<EvidenceGate> {
        match &self.schema {
            Schema::V1 => None,
            Schema::V2 { evidence_gate, .. } => Some(*evidence_gate),
        }
    }

    /// Returns the judge seat's rationale, when the record has one.
    pub fn rationale(&self) -> Option<&Rationale> {
        match &self.schema {
            Schema::V1 => None,
            Schema::V2 { rationale, .. } => rationale.as_ref(),
        }
    }

    /// Returns the record with its seal computed, and no decision yet.
    fn sealed(mut self) -> Self {
        self.spells_human_decision = true;
        self.human_decision = None;
        self.record_sha256 = hash_without(&self, &UNSEALED);
        self
    }
}

fn agreement(tally: &Tally) -> Option<f64> {
    let counts: Vec<u64> = tally
        .votes
        .values()
        .map(|v| v.grounded + v.ungrounded)
        .collect();
    let voters: u64 = counts.iter().sum();
    if voters == 0 {
        return None;
    }
    Some(*counts.iter().max().unwrap_or(&0) as f64 / voters as f64)
}

fn quoted(text: &str) -> String {
    repr(Some(&Value::String(text.to_owned())))
}

fn judge(panel: &Panel, raw: &Value) -> Result<decision::Record, Error> {
    let record = decision::validate(raw).map_err(Error::Judge)?;
    if record.question.sha256 != panel.question.sha256 {
        return Err(Error::JudgeQuestion);
    }
    if record.state_sha256 != panel.state_sha256 {
        return Err(Error::JudgeState);
    }
    let seat = panel.judge_seat();
    if !matches!(record.method, Method::LocalModel | Method::ExternalModel) {
        return Err(Error::JudgeMethod(quoted(record.method.as_str())));
    }
    let provider = record
        .provider
        .as_ref()
        .expect("a model decision names its provider, because decision::validate requires it");
    if provider.id != seat.provider {
        return Err(Error::JudgeProvider {
            given: quoted(&provider.id),
            seat: quoted(&seat.provider),
        });
    }
    if provider.model_served.as_deref() != Some(seat.model_served.as_str()) {
        return Err(Error::JudgeModel {
            given: repr(Some(
                &provider
                    .model_served
                    .clone()
                    .map_or(Value::Null, Value::String),
            )),
            seat: quoted(&seat.model_served),
        });
    }
    Ok(record)
}

/// One entry of a rationale list as given: the position kept as a document, so a refusal can
/// quote what was written.
struct Hashed {
    position: Option<Value>,
    text_sha256: String,
    chars: i64,
}

fn hashed_texts(raw: Option<&Value>, label: &'static str) -> Result<Vec<Hashed>, Error> {
    let items = raw
        .and_then(Value::as_array)
        .ok_or(Error::RationaleList(label))?;
    let mut out = Vec::new();
    for item in items {
        let map = item
            .as_object()
            .filter(|m| {
                m.keys()
                    .all(|k| matches!(k.as_str(), "position" | "text_sha256" | "chars"))
            })
            .ok_or(Error::RationaleEntry(label))?;
        let chars = int(map.get("chars"))
            .filter(|c| *c >= 1)
            .ok_or(Error::RationaleChars(label))?;
        let text_sha256 = hex(
            map.get("text_sha256"),
            &format!("rationale {label} text_sha256"),
        )?;
        out.push(Hashed {
            position: map.get("position").cloned(),
            text_sha256,
            chars,
        });
    }
    Ok(out)
}

fn rationale(
    panel: &Panel,
    raw: Option<&Value>,
    dissent: &[Dissent],
) -> Result<Option<Rationale>, Error> {
    let positions: Vec<String> = dissent
        .iter()
        .map(|d| d.position.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let Some(raw) = raw.filter(|r| !r.is_null()) else {
        if !positions.is_empty() {
            return Err(Error::RationaleMissing(positions.join(", ")));
        }
        return Ok(None);
    };
    let map = raw
        .as_object()
        .filter(|m| m.get("schema").and_then(Value::as_str) == Some(RATIONALE_SCHEMA))
        .filter(|m| {
            m.keys().all(|k| {
                matches!(
                    k.as_str(),
                    "schema" | "panel_sha256" | "author" | "steelman" | "would_change_if"
                )
            })
        })
        .ok_or(Error::RationaleShape)?;
    if map.get("panel_sha256").and_then(Value::as_str) != Some(panel.sha256.as_str()) {
        return Err(Error::RationalePanel);
    }
    if map.get("author").and_then(Value::as_str) != Some(panel.judge.as_str()) {
        return Err(Error::RationaleAuthor {
            judge: panel.judge.clone(),
            given: repr(map.get("author")),
        });
    }
    let steelman = hashed_texts(map.get("steelman"), "steelman")?;
    let written: Vec<Option<&str>> = steelman
        .iter()
        .map(|s| s.position.as_ref().and_then(Value::as_str))
        .collect();
    let all_text = written.iter().all(Option::is_some);
    let mut names: Vec<&str> = written.iter().flatten().copied().collect();
    let unique = names.iter().collect::<BTreeSet<_>>().len() == names.len();
    names.sort_unstable();
    if !all_text || !unique || names != positions {
        let got: Vec<String> = steelman
            .iter()
            .map(|s| repr(Some(s.position.as_ref().unwrap_or(&Value::Null))))
            .collect();
        return Err(Error::Steelman {
            positions: if positions.is_empty() {
                "none".into()
            } else {
                positions.join(", ")
            },
            got: format!("[{}]", got.join(", ")),
        });
    }
    let would_change_if = hashed_texts(map.get("would_change_if"), "would_change_if")?;
    if would_change_if.iter().any(|w| w.position.is_some()) {
        return Err(Error::WouldChangePosition);
    }
    if !positions.is_empty() && would_change_if.is_empty() {
        return Err(Error::WouldChangeEmpty);
    }
    let mut steelman: Vec<Steelman> = steelman
        .into_iter()
        .map(|s| Steelman {
            position: s
                .position
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            text_sha256: s.text_sha256,
            chars: s.chars,
        })
        .collect();
    steelman.sort_by(|a, b| a.position.cmp(&b.position));
    Ok(Some(Rationale {
        schema: RATIONALE_SCHEMA,
        panel_sha256: panel.sha256.clone(),
        author: panel.judge.clone(),
        steelman,
        would_change_if: would_change_if
            .into_iter()
            .map(|w| Condition {
                text_sha256: w.text_sha256,
                chars: w.chars,
            })
            .collect(),
    }))
}

/// Which schema's rules a record is assembled under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rules {
    V1,
    V2,
}

impl Session {
    /// Seals the stopped session as an `hpp.deliberation/v2` record, with the judge seat's
    /// decision record and rationale as documents (they are checked here); `human_decision` is
    /// null, outside the seal.
    ///
    /// # Errors
    ///
    /// The session has not stopped, a verdict lacks its judge record, grounded dissent lacks
    /// the rationale, or the judge's record or the rationale breaks a rule.
    pub fn record(
        &self,
        judge: Option<&Value>,
        rationale: Option<&Value>,
    ) -> Result<Record, Error> {
        Ok(self.body(judge, rationale, Rules::V2)?.sealed())
    }

    /// Assembles the record (unsealed) under the rules of `rules`.
    fn body(
        &self,
        judge_raw: Option<&Value>,
        rationale_raw: Option<&Value>,
        rules: Rules,
    ) -> Result<Record, Error> {
        let panel = &self.panel;
        let stop = match self.stop() {
            Stop::Stop(stopped) => stopped,
            Stop::Continue { next_round, .. } => return Err(Error::NotStopped(next_round)),
        };
        let last = self
            .tally
            .last()
            .expect("a stopped session has a round, because no turns means no-turns-yet");
        let (judged, verdict) = if stop.reason == StopReason::NotJudged {
            let verdict = Verdict {
                status: VerdictStatus::Blocked,
                value: None,
                reason: format!("not judged: {}", last.not_judged.join(", ")),
                error: None,
            };
            (None, verdict)
        } else {
            let raw = judge_raw
                .filter(|j| !j.is_null())
                .ok_or(Error::JudgeMissing)?;
            let judged = judge(panel, raw)?;
            let outcome = &judged.outcome;
            let verdict = Verdict {
                status: outcome.status.into(),
                value: outcome.value.clone(),
                reason: "judge".into(),
                error: outcome
                    .error
                    .clone()
                    .filter(|_| outcome.status == decision::Status::InstrumentFailure),
            };
            (Some(judged), verdict)
        };
        let known = panel.known_ids();
        let dissent: Vec<Dissent> = match verdict.value.as_deref() {
            Some(value) => self
                .turns
                .iter()
                .filter(|t| t.round == last.round && grounded(t, known))
                .filter(|t| t.position != value && t.position != ABSTAIN)
                .map(|t| Dissent {
                    seat: t.seat.clone(),
                    position: t.position.clone(),
                    grounded: true,
                })
                .collect(),
            None => Vec::new(),
        };
        let (mut total, mut ungrounded) = (0u64, 0u64);
        for votes in self.tally.iter().flat_map(|t| t.votes.values()) {
            total += votes.grounded + votes.ungrounded;
            ungrounded += votes.ungrounded;
        }
        let metrics = Metrics {
            blind_agreement: agreement(&self.tally[0]),
            final_agreement: agreement(last),
            flips_without_new_evidence: self
                .tally
                .iter()
                .map(|t| t.flips_without_new_evidence.len())
                .sum(),
            ungrounded_share: (total != 0).then(|| ungrounded as f64 / total as f64),
            families: panel.families.len(),
        };
        let usage = Usage {
            rounds: last.round,
            chars: self.tally.iter().map(|t| t.chars).sum(),
            max_rounds: panel.budget.max_rounds,
            max_chars: panel.budget.max_chars,
        };
        let schema = match rules {
            Rules::V1 => {
                if rationale_raw.is_some_and(|r| !r.is_null()) {
                    return Err(Error::V1Rationale);
                }
                // A v1 session never sealed a panel with evidence: one that does is a v2
                // session relabelled to skip the rationale rule.
                if panel.evidence.is_some() {
                    return Err(Error::V1Evidence);
                }
                Schema::V1
            }
            Rules::V2 => {
                let evidence_gate = match &panel.evidence {
                    None => EvidenceGate::NotDeclared,
                    Some(e) if e.sources.as_ref().is_some_and(|s| !s.is_empty()) => {
                        EvidenceGate::Resolved
                    }
                    Some(_) => EvidenceGate::DeclaredUnsourced,
                };
                Schema::V2 {
                    evidence_gate,
                    rationale: rationale(panel, rationale_raw, &dissent)?,
                }
            }
        };
        Ok(Record {
            schema,
            judge_independence: panel.judge_independence,
            panel: panel.clone(),
            turns: self.turns.clone(),
            tally: self.tally.clone(),
            stop,
            usage,
            judge: judged,
            verdict,
            dissent,
            metrics,
            record_sha256: String::new(),
            human_decision: None,
            spells_human_decision: false,
        })
    }
}

/// Assembles and seals an `hpp.deliberation/v2` record from documents (a panel, a JSON list of
/// turns, the judge seat's decision record and rationale); `human_decision` is null, outside
/// the seal.
///
/// # Errors
///
/// The session has not stopped, a verdict lacks its judge record, grounded dissent lacks the
/// rationale, or any input breaks a rule.
pub fn build_record(
    panel: &Value,
    turns: &Value,
    judge: Option<&Value>,
    rationale: Option<&Value>,
) -> Result<Record, Error> {
    Session::parse(panel, turns)?.record(judge, rationale)
}

/// Refuses a person's decision of the wrong shape in a record document: it must be null or
/// `{value: an option, by: who decided, note?: text}`.
fn check_human(record: &Map<String, Value>) -> Result<(), Error> {
    let human = match record.get("human_decision") {
        None | Some(Value::Null) => return Ok(()),
        Some(h) => h,
    };
    let options = record
        .get("panel")
        .and_then(|p| p.get("question"))
        .and_then(|q| q.get("options"))
        .and_then(Value::as_array)
        .ok_or(Error::HumanOptions)?;
    let ok = human.as_object().is_some_and(|h| {
        h.get("value").is_some_and(|v| options.contains(v))
            && h.get("by")
                .and_then(Value::as_str)
                .is_some_and(|b| !b.trim().is_empty())
            && h.get("note").is_none_or(Value::is_string)
    });
    if ok { Ok(()) } else { Err(Error::Human) }
}

/// Returns the person's decision of a record document that verified (so [`check_human`] held
/// and its options are text).
fn decided(record: &Map<String, Value>) -> Option<HumanDecision> {
    let mut fields = record
        .get("human_decision")
        .and_then(Value::as_object)
        .cloned()?;
    let mut take = |key: &str| match fields.remove(key) {
        Some(Value::String(text)) => Some(text),
        _ => None,
    };
    let value = take("value")
        .expect("a checked decision's value is an option, and a verified panel's options are text");
    let by = take("by").expect("a checked decision names who decided, as text");
    let note = take("note");
    Some(HumanDecision {
        value,
        by,
        note,
        extra: fields,
    })
}

/// The report of `deliberate verify`: `intact` with the schema, hash, verdict and stop, or
/// `broken` with the reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Verification {
    /// The seal holds and every key re-derives.
    Intact {
        /// Always `intact`.
        status: &'static str,
        /// The record's schema.
        schema: String,
        /// The seal.
        record_sha256: String,
        /// The verdict, as the record spells it.
        verdict: Value,
        /// The stop, as the record spells it.
        stop: Value,
    },
    /// Something does not hold.
    Broken {
        /// Always `broken`.
        status: &'static str,
        /// Why.
        reason: String,
    },
}

impl Verification {
    /// Tells whether the record is intact.
    pub fn is_intact(&self) -> bool {
        matches!(self, Self::Intact { .. })
    }

    fn broken(reason: impl Into<String>) -> Self {
        Self::Broken {
            status: "broken",
            reason: reason.into(),
        }
    }
}

/// Verifies a sealed record document: the seal, then every key re-derived from the panel, the
/// turns, the judge and the rationale it holds; extra keys are refused; a v1 record verifies
/// under v1 rules.
pub fn verify_record(record: &Value) -> Verification {
    match verified(record) {
        Ok(typed) => Verification::Intact {
            status: "intact",
            schema: typed.schema.name().to_owned(),
            record_sha256: typed.record_sha256,
            verdict: record["verdict"].clone(),
            stop: record["stop"].clone(),
        },
        Err(reason) => Verification::broken(reason),
    }
}

/// Returns the typed record a document holds when it verifies, else why it does not.
fn verified(record: &Value) -> Result<Record, String> {
    let schemas = || format!("schema must be one of {SCHEMA_V1}, {SCHEMA}");
    let map = record.as_object().ok_or_else(schemas)?;
    let rules = match map.get("schema").and_then(Value::as_str) {
        Some(SCHEMA) => Rules::V2,
        Some(SCHEMA_V1) => Rules::V1,
        _ => return Err(schemas()),
    };
    check_human(map).map_err(|e| e.to_string())?;
    let mut sealed = map.clone();
    for key in UNSEALED {
        sealed.remove(key);
    }
    if map.get("record_sha256").and_then(Value::as_str)
        != Some(hash(&Value::Object(sealed.clone())).as_str())
    {
        return Err(
            "record_sha256 does not match: the record was edited after it was sealed".into(),
        );
    }
    let null = Value::Null;
    let mut rebuilt = Session::parse(
        sealed.get("panel").unwrap_or(&null),
        sealed.get("turns").unwrap_or(&null),
    )
    .and_then(|session| session.body(sealed.get("judge"), sealed.get("rationale"), rules))
    .map_err(|e| format!("the record does not re-derive: {e}"))?;
    let mut keys = to_object(&rebuilt);
    for key in UNSEALED {
        keys.remove(key);
    }
    for (key, value) in &keys {
        if canonical_json(value) != canonical_json(sealed.get(key).unwrap_or(&null)) {
            return Err(format!(
                "the record does not re-derive from its own turns and judge: '{key}' differs"
            ));
        }
    }
    let extra: Vec<&String> = sealed.keys().filter(|k| !keys.contains_key(*k)).collect();
    if !extra.is_empty() {
        return Err(format!(
            "the record carries fields the contract does not define: {}",
            repr_list(&extra)
        ));
    }
    rebuilt.record_sha256 = str_of(record, "record_sha256").to_owned();
    rebuilt.spells_human_decision = map.contains_key("human_decision");
    rebuilt.human_decision = decided(map);
    Ok(rebuilt)
}
