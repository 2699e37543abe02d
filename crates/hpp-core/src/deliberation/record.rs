//! The sealed record, `hpp.deliberation/v2` (and v1 verification): the judge's decision, the
//! verdict, the dissent kept, the rationale, the seal, its verification, and what a consumer
//! may act on. Pure.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::panel::{judge_seat, known_ids, options};
use super::session::{checked, grounded, stop_of};
use super::{
    ABSTAIN, Error, RATIONALE_SCHEMA, SCHEMA, SCHEMA_V1, hash, hex, repr, repr_list, str_of,
};
use crate::decision::{self, Method};
use crate::family::model_family;

fn agreement(tally: &Value) -> Value {
    let counts: Vec<u64> = tally["votes"]
        .as_object()
        .into_iter()
        .flat_map(|v| v.values())
        .map(|c| c["grounded"].as_u64().unwrap_or(0) + c["ungrounded"].as_u64().unwrap_or(0))
        .collect();
    let voters: u64 = counts.iter().sum();
    if voters == 0 {
        return Value::Null;
    }
    json!(*counts.iter().max().unwrap_or(&0) as f64 / voters as f64)
}

fn judge(panel: &Value, raw: &Value) -> Result<Value, Error> {
    let record = decision::validate(raw).map_err(Error::Judge)?;
    if record.question.sha256 != str_of(&panel["question"], "sha256") {
        return Err(Error::JudgeQuestion);
    }
    if record.state_sha256 != str_of(panel, "state_sha256") {
        return Err(Error::JudgeState);
    }
    let seat = judge_seat(panel);
    if !matches!(record.method, Method::LocalModel | Method::ExternalModel) {
        return Err(Error::JudgeMethod(repr(Some(&json!(
            record.method.as_str()
        )))));
    }
    let provider = record
        .provider
        .clone()
        .expect("a model decision names its provider");
    if provider.id != str_of(seat, "provider") {
        return Err(Error::JudgeProvider {
            given: repr(Some(&json!(provider.id))),
            seat: repr(seat.get("provider")),
        });
    }
    if provider.model_served.as_deref() != Some(str_of(seat, "model_served")) {
        return Err(Error::JudgeModel {
            given: repr(Some(&json!(provider.model_served))),
            seat: repr(seat.get("model_served")),
        });
    }
    Ok(serde_json::to_value(&record).expect("a decision record serialises"))
}

fn hashed_texts(raw: Option<&Value>, label: &'static str) -> Result<Vec<Value>, Error> {
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
        let chars = super::int(map.get("chars"))
            .filter(|c| *c >= 1)
            .ok_or(Error::RationaleChars(label))?;
        let mut entry = Map::new();
        entry.insert(
            "text_sha256".into(),
            json!(hex(
                map.get("text_sha256"),
                &format!("rationale {label} text_sha256")
            )?),
        );
        entry.insert("chars".into(), json!(chars));
        if let Some(position) = map.get("position") {
            entry.insert("position".into(), position.clone());
        }
        out.push(Value::Object(entry));
    }
    Ok(out)
}

fn rationale(panel: &Value, raw: Option<&Value>, dissent: &[Value]) -> Result<Value, Error> {
    let positions: Vec<String> = dissent
        .iter()
        .map(|d| str_of(d, "position").to_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let Some(raw) = raw.filter(|r| !r.is_null()) else {
        if !positions.is_empty() {
            return Err(Error::RationaleMissing(positions.join(", ")));
        }
        return Ok(Value::Null);
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
    if map.get("panel_sha256") != Some(&panel["sha256"]) {
        return Err(Error::RationalePanel);
    }
    let judge = str_of(panel, "judge").to_owned();
    if map.get("author").and_then(Value::as_str) != Some(judge.as_str()) {
        return Err(Error::RationaleAuthor {
            judge,
            given: repr(map.get("author")),
        });
    }
    let mut steelman = hashed_texts(map.get("steelman"), "steelman")?;
    let written: Vec<Option<&str>> = steelman.iter().map(|s| s["position"].as_str()).collect();
    let all_text = written.iter().all(Option::is_some);
    let mut names: Vec<String> = written.iter().flatten().map(|s| (*s).to_owned()).collect();
    let unique = names.iter().collect::<BTreeSet<_>>().len() == names.len();
    names.sort();
    if !all_text || !unique || names != positions {
        let got: Vec<Value> = steelman
            .iter()
            .map(|s| s.get("position").cloned().unwrap_or(Value::Null))
            .collect();
        let got: Vec<String> = got.iter().map(|v| repr(Some(v))).collect();
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
    if would_change_if.iter().any(|w| w.get("position").is_some()) {
        return Err(Error::WouldChangePosition);
    }
    if !positions.is_empty() && would_change_if.is_empty() {
        return Err(Error::WouldChangeEmpty);
    }
    steelman.sort_by(|a, b| str_of(a, "position").cmp(str_of(b, "position")));
    Ok(json!({
        "schema": RATIONALE_SCHEMA, "panel_sha256": panel["sha256"], "author": judge,
        "steelman": steelman, "would_change_if": would_change_if,
    }))
}

/// Assembles the body of a sealed record (everything but `record_sha256` and `human_decision`)
/// under the rules of `schema`.
fn body(
    panel: &Value,
    turns: &Value,
    judge_raw: Option<&Value>,
    rationale_raw: Option<&Value>,
    schema: &str,
) -> Result<Map<String, Value>, Error> {
    let (panel, turns, tallies) = checked(panel, turns)?;
    let known = known_ids(&panel);
    let stop = stop_of(&panel, &tallies);
    if stop["decision"] != "stop" {
        return Err(Error::NotStopped(stop["next_round"].as_i64().unwrap_or(1)));
    }
    let last = tallies.last().expect("a stopped session has a round");
    let (judged, verdict) = if stop["reason"] == "not-judged" {
        let seats: Vec<&str> = last["not_judged"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        (
            Value::Null,
            json!({"status": "blocked", "value": null, "reason": format!("not judged: {}", seats.join(", "))}),
        )
    } else {
        let raw = judge_raw
            .filter(|j| !j.is_null())
            .ok_or(Error::JudgeMissing)?;
        let judged = judge(&panel, raw)?;
        let outcome = &judged["outcome"];
        let mut verdict =
            json!({"status": outcome["status"], "value": outcome["value"], "reason": "judge"});
        if outcome["status"] == "instrument-failure" {
            verdict["error"] = outcome["error"].clone();
        }
        (judged, verdict)
    };
    let round = last["round"].clone();
    let dissent: Vec<Value> = match verdict["value"].as_str() {
        Some(value) => turns
            .iter()
            .filter(|t| t["round"] == round && grounded(t, known.as_ref()))
            .filter(|t| t["position"] != value && t["position"] != ABSTAIN)
            .map(|t| json!({"seat": t["seat"], "position": t["position"], "grounded": true}))
            .collect(),
        None => Vec::new(),
    };
    let (mut total, mut ungrounded) = (0u64, 0u64);
    for tally in &tallies {
        for counts in tally["votes"]
            .as_object()
            .into_iter()
            .flat_map(|v| v.values())
        {
            let (g, u) = (
                counts["grounded"].as_u64().unwrap_or(0),
                counts["ungrounded"].as_u64().unwrap_or(0),
            );
            total += g + u;
            ungrounded += u;
        }
    }
    let flips: usize = tallies
        .iter()
        .map(|t| {
            t["flips_without_new_evidence"]
                .as_array()
                .map_or(0, Vec::len)
        })
        .sum();
    let metrics = json!({
        "blind_agreement": agreement(&tallies[0]),
        "final_agreement": agreement(last),
        "flips_without_new_evidence": flips,
        "ungrounded_share": if total == 0 { Value::Null } else { json!(ungrounded as f64 / total as f64) },
        "families": panel["families"].as_array().map_or(0, Vec::len),
    });
    let chars: i64 = tallies.iter().filter_map(|t| t["chars"].as_i64()).sum();
    let usage = json!({
        "rounds": round, "chars": chars,
        "max_rounds": panel["budget"]["max_rounds"], "max_chars": panel["budget"]["max_chars"],
    });
    let mut out = Map::new();
    out.insert("schema".into(), json!(schema));
    out.insert(
        "judge_independence".into(),
        panel["judge_independence"].clone(),
    );
    out.insert("panel".into(), panel.clone());
    out.insert("turns".into(), Value::Array(turns.clone()));
    out.insert("tally".into(), Value::Array(tallies.clone()));
    out.insert("stop".into(), stop);
    out.insert("usage".into(), usage);
    out.insert("judge".into(), judged);
    out.insert("verdict".into(), verdict);
    out.insert("dissent".into(), Value::Array(dissent.clone()));
    out.insert("metrics".into(), metrics);
    if schema == SCHEMA_V1 {
        if rationale_raw.is_some_and(|r| !r.is_null()) {
            return Err(Error::V1Rationale);
        }
        // A v1 session never sealed a panel with evidence: one that does is a v2 session
        // relabelled to skip the rationale rule.
        if panel.get("evidence").is_some() {
            return Err(Error::V1Evidence);
        }
        return Ok(out);
    }
    let gate = match panel.get("evidence") {
        None | Some(Value::Null) => "not-declared",
        Some(e) if e["sources"].as_array().is_some_and(|s| !s.is_empty()) => "resolved",
        Some(_) => "declared-unsourced",
    };
    out.insert("evidence_gate".into(), json!(gate));
    out.insert(
        "rationale".into(),
        rationale(&panel, rationale_raw, &dissent)?,
    );
    Ok(out)
}

/// Assembles and seals an `hpp.deliberation/v2` record; `human_decision` is null, outside the
/// seal.
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
) -> Result<Value, Error> {
    let mut record = body(panel, turns, judge, rationale, SCHEMA)?;
    let sha = hash(&Value::Object(record.clone()));
    record.insert("record_sha256".into(), json!(sha));
    record.insert("human_decision".into(), Value::Null);
    Ok(Value::Object(record))
}

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
        /// The verdict.
        verdict: Value,
        /// The stop.
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

/// Verifies a sealed record: the seal, then every key re-derived from the panel, the turns, the
/// judge and the rationale it holds; extra keys are refused; a v1 record verifies under v1
/// rules.
pub fn verify_record(record: &Value) -> Verification {
    let Some(map) = record.as_object() else {
        return Verification::broken(format!("schema must be one of {SCHEMA_V1}, {SCHEMA}"));
    };
    let schema = match map.get("schema").and_then(Value::as_str) {
        Some(s) if s == SCHEMA || s == SCHEMA_V1 => s.to_owned(),
        _ => return Verification::broken(format!("schema must be one of {SCHEMA_V1}, {SCHEMA}")),
    };
    if let Err(e) = check_human(map) {
        return Verification::broken(e.to_string());
    }
    let mut sealed = map.clone();
    sealed.remove("record_sha256");
    sealed.remove("human_decision");
    if map.get("record_sha256").and_then(Value::as_str)
        != Some(hash(&Value::Object(sealed.clone())).as_str())
    {
        return Verification::broken(
            "record_sha256 does not match: the record was edited after it was sealed",
        );
    }
    let null = Value::Null;
    let rebuilt = match body(
        sealed.get("panel").unwrap_or(&null),
        sealed.get("turns").unwrap_or(&null),
        sealed.get("judge"),
        sealed.get("rationale"),
        &schema,
    ) {
        Ok(rebuilt) => rebuilt,
        Err(e) => return Verification::broken(format!("the record does not re-derive: {e}")),
    };
    for (key, value) in &rebuilt {
        if crate::record::canonical_json(value)
            != crate::record::canonical_json(sealed.get(key).unwrap_or(&null))
        {
            return Verification::broken(format!(
                "the record does not re-derive from its own turns and judge: '{key}' differs"
            ));
        }
    }
    let extra: Vec<&String> = sealed
        .keys()
        .filter(|k| !rebuilt.contains_key(*k))
        .collect();
    if !extra.is_empty() {
        return Verification::broken(format!(
            "the record carries fields the contract does not define: {}",
            repr_list(&extra)
        ));
    }
    Verification::Intact {
        status: "intact",
        schema,
        record_sha256: str_of(record, "record_sha256").to_owned(),
        verdict: record["verdict"].clone(),
        stop: record["stop"].clone(),
    }
}

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
    /// Returns the status a sealed record's verdict spells, if it spells one of the four. The
    /// record stays JSON (its verification re-derives every key from it); only the status is
    /// read as a value.
    pub fn of(record: &Value) -> Option<Self> {
        Self::deserialize(&record["verdict"]["status"]).ok()
    }
}

/// Tells whether `record`'s verdict lets `deliberate record` exit 0: a recommendation or an
/// abstention (the panel reached its judge); a blocked verdict or a judge failure exit 1.
pub fn record_exit_is_ok(record: &Value) -> bool {
    matches!(
        VerdictStatus::of(record),
        Some(VerdictStatus::Recommendation | VerdictStatus::Abstention)
    )
}

/// What a consumer (route, attest) may act on from a sealed session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PanelVerdict {
    /// The verdict's status.
    pub status: String,
    /// The verdict's value, if any.
    pub value: Option<String>,
    /// The seal.
    pub record_sha256: String,
    /// The judge seat's declared family.
    pub judge_family: String,
    /// The session type the consumer asked for.
    pub session_type: String,
}

/// The folded names a family or model goes by: itself, case-folded, and its provider family.
fn family_names(names: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for name in names {
        let trimmed = name.trim().to_lowercase();
        if !trimmed.is_empty() {
            out.insert(trimmed);
        }
        if let Some(family) = model_family(name) {
            out.insert(family);
        }
    }
    out
}

/// Returns the verdict of a sealed session for a command that acts on it. Refused unless the
/// record verifies, is of `session_type`, asks only options among `allowed`, and was judged
/// outside the maker's family: the judge seat's declared family and its pinned model are folded
/// ([`crate::family`]) and compared with the folded `maker_family`. With
/// `evidence_records_only` (a release gate), the panel must have grounded its facts on declared
/// evidence bundles only. A panel can only make an outcome stricter; the consumer decides.
///
/// # Errors
///
/// [`Error::NotIntact`], [`Error::SessionNeeded`], [`Error::ConsumerOptions`],
/// [`Error::MakerFamily`], [`Error::SameFamily`] or [`Error::ReleaseEvidence`].
pub fn panel_verdict(
    record: &Value,
    session_type: &str,
    allowed: &[&str],
    maker_family: &str,
    evidence_records_only: bool,
) -> Result<PanelVerdict, Error> {
    if let Verification::Broken { reason, .. } = verify_record(record) {
        return Err(Error::NotIntact(reason));
    }
    let panel = &record["panel"];
    let got = str_of(panel, "session_type");
    if got != session_type {
        return Err(Error::SessionNeeded {
            needed: session_type.to_owned(),
            got: got.to_owned(),
        });
    }
    let asked: BTreeSet<String> = options(panel).into_iter().collect();
    if !asked.iter().all(|o| allowed.contains(&o.as_str())) {
        let mut allowed: Vec<&str> = allowed.to_vec();
        allowed.sort_unstable();
        return Err(Error::ConsumerOptions {
            asked: repr_list(&asked.iter().collect::<Vec<_>>()),
            allowed: repr_list(&allowed),
        });
    }
    let judge = judge_seat(panel);
    let judge_family = str_of(judge, "family").to_owned();
    if maker_family.trim().is_empty() {
        return Err(Error::MakerFamily);
    }
    let judge_names = family_names(&[&judge_family, str_of(judge, "model_served")]);
    let maker_names = family_names(&[maker_family]);
    if judge_names.intersection(&maker_names).next().is_some() {
        return Err(Error::SameFamily(judge_family));
    }
    if evidence_records_only {
        let sources = panel
            .get("evidence")
            .and_then(|e| e.get("sources"))
            .and_then(Value::as_array);
        let only_bundles = sources
            .is_some_and(|s| !s.is_empty() && s.iter().all(|src| src["kind"] == "evidence-record"));
        if record["evidence_gate"] != "resolved" || !only_bundles {
            return Err(Error::ReleaseEvidence);
        }
    }
    Ok(PanelVerdict {
        status: str_of(&record["verdict"], "status").to_owned(),
        value: record["verdict"]["value"].as_str().map(str::to_owned),
        record_sha256: str_of(record, "record_sha256").to_owned(),
        judge_family,
        session_type: session_type.to_owned(),
    })
}

/// The whole panel as one `hpp.decision/v1` record (method `panel`, provider the panel id and
/// the judge seat's model, confidence null, raw response hash = the seal), so `decide eval`
/// measures it like any decider. A blocked verdict is an instrument failure.
pub fn as_decision(record: &Value) -> Value {
    let panel = &record["panel"];
    let verdict = &record["verdict"];
    let outcome = match verdict["status"].as_str() {
        Some("blocked") => {
            json!({"status": "instrument-failure", "value": null, "confidence": null,
            "error": format!("panel blocked: {}", str_of(verdict, "reason"))})
        }
        Some("instrument-failure") => {
            json!({"status": "instrument-failure", "value": null, "confidence": null,
            "error": format!("judge failed: {}", verdict["error"].as_str().unwrap_or("unknown"))})
        }
        _ => json!({"status": verdict["status"], "value": verdict["value"], "confidence": null}),
    };
    let judge = &record["judge"];
    let mut decision = json!({
        "schema": decision::SCHEMA, "question": panel["question"], "state_sha256": panel["state_sha256"],
        "method": "panel",
        "provider": {"id": panel["id"], "model_served": judge_seat(panel)["model_served"]},
        "outcome": outcome, "authority": "advisory",
        "direction": judge.get("direction").cloned().unwrap_or(json!("informational")),
        "raw_response_sha256": record["record_sha256"],
    });
    if let Some(declared) = judge.get("declared").filter(|d| !d.is_null()) {
        decision["declared"] = declared.clone();
    }
    decision
}
