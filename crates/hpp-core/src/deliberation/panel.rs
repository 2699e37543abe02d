//! The panel, `hpp.panel/v1`: seats, roles per session type, the budget and the declared
//! evidence, as the typed [`Panel`] a foreign panel document normalises into. Pure.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{Error, MAX_ROUNDS, PANEL_SCHEMA, hash_without, hex, int, repr, text};
use crate::decision::{Question, is_alias, normalise_question};

/// The kind of a House Session: it sets the roles a panel must seat and the rounds it may take.
/// Spelt as the reference spells it (`release-gate`, kebab-case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionType {
    /// Weighs the risk of a plan (the router reads it).
    Plan,
    /// Reviews a change.
    Review,
    /// Decides whether a change may ship, on evidence bundles (an attestation reads it).
    ReleaseGate,
    /// Diagnoses an incident.
    Incident,
    /// Chooses between designs (the board's competitions read it).
    Design,
}

impl SessionType {
    /// Every session type, in the reference's order.
    pub const ALL: [Self; 5] = [
        Self::Plan,
        Self::Review,
        Self::ReleaseGate,
        Self::Incident,
        Self::Design,
    ];

    /// Returns the type as records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Review => "review",
            Self::ReleaseGate => "release-gate",
            Self::Incident => "incident",
            Self::Design => "design",
        }
    }

    /// Returns the role minimums of the session type, in the order they are checked.
    pub fn minimums(self) -> Vec<(Role, Minimum)> {
        use Minimum::{PerOption, Seats};
        match self {
            Self::Plan => vec![
                (Role::Proponent, Seats(2)),
                (Role::Dissent, Seats(1)),
                (Role::Examiner, Seats(1)),
            ],
            Self::Review => vec![(Role::Examiner, Seats(2)), (Role::Dissent, Seats(1))],
            Self::ReleaseGate => vec![(Role::Examiner, Seats(1)), (Role::Dissent, Seats(1))],
            Self::Incident => vec![(Role::Proponent, Seats(2))],
            Self::Design => vec![(Role::Proponent, PerOption), (Role::Dissent, Seats(1))],
        }
    }

    /// Returns the most rounds the session type allows, when it caps them below [`MAX_ROUNDS`].
    pub fn round_ceiling(self) -> Option<i64> {
        // Two blind diagnoses already agree or disagree independently; a second reply rarely
        // adds evidence the first did not.
        (self == Self::Incident).then_some(2)
    }
}

impl fmt::Display for SessionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SessionType {
    type Err = Error;

    /// Reads a session type as records spell it.
    ///
    /// ```
    /// use hpp_core::deliberation::SessionType;
    /// assert_eq!("release-gate".parse(), Ok(SessionType::ReleaseGate));
    /// assert_eq!(
    ///     "chat".parse::<SessionType>().unwrap_err().to_string(),
    ///     "session_type must be one of plan, review, release-gate, incident, design"
    /// );
    /// ```
    fn from_str(text: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == text)
            .ok_or(Error::SessionType)
    }
}

/// A seat's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Argues for an option.
    Proponent,
    /// Argues against the leading option.
    Dissent,
    /// Examines the evidence.
    Examiner,
    /// Rules once the session stops; takes no turns.
    Judge,
}

impl Role {
    /// Every role, as the panel rules list them.
    pub const ALL: [Self; 4] = [Self::Proponent, Self::Dissent, Self::Examiner, Self::Judge];

    /// Returns the role as records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Proponent => "proponent",
            Self::Dissent => "dissent",
            Self::Examiner => "examiner",
            Self::Judge => "judge",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many seats of a role a session type needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Minimum {
    /// At least this many.
    Seats(usize),
    /// One per option of the question.
    PerOption,
}

/// A seat of a normalised panel: who answers, from which pinned model, family and lane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seat {
    /// The seat id.
    pub id: String,
    /// Its role.
    pub role: Role,
    /// The provider it answers through.
    pub provider: String,
    /// The pinned model it answers from (never a moving alias).
    pub model_served: String,
    /// The model family it declares.
    pub family: String,
    /// The lane it answers from.
    pub lane: String,
}

/// A panel's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Budget {
    /// The most rounds, 1 to [`MAX_ROUNDS`].
    pub max_rounds: i64,
    /// The most characters all turns together may use.
    pub max_chars: i64,
}

/// Where a declared evidence id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// A context file the seats were given.
    Context,
    /// An `hpp.evidence/v1` bundle that verified when it was declared.
    EvidenceRecord,
}

/// One source of declared evidence ids, by hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// What the source is.
    pub kind: SourceKind,
    /// The sha256 of the source (a context's canonical JSON, an evidence record's seal).
    pub sha256: String,
    /// The source's own id, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The evidence a panel declares: the ids a seat's facts must cite to be grounded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// The citable ids, sorted.
    pub ids: BTreeSet<String>,
    /// Where they come from, when the panel says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<Source>>,
}

/// Whether the judge's family is also a participant's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Independence {
    /// The judge's family argues in no seat.
    Full,
    /// A participant shares the judge's family.
    Partial,
}

/// A normalised panel (`hpp.panel/v1`) with its `sha256` and what is derived from it: the judge
/// seat's id, the participants' families and the judge's independence. It is made only by
/// [`normalise_panel`] (deserialising one normalises it), so every rule holds for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Panel {
    /// Always [`PANEL_SCHEMA`].
    pub schema: &'static str,
    /// The panel id.
    pub id: String,
    /// The session type.
    pub session_type: SessionType,
    /// The question the seats answer, normalised.
    pub question: Question,
    /// The sha256 of the state judged.
    pub state_sha256: String,
    /// The seats, in the panel's order.
    pub seats: Vec<Seat>,
    /// The budget.
    pub budget: Budget,
    /// The declared evidence; absent from the record (and its hash) when none is declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// The sha256 of the canonical JSON of every field above.
    pub sha256: String,
    /// The judge seat's id.
    pub judge: String,
    /// The participants' families, sorted.
    pub families: BTreeSet<String>,
    /// Whether the judge's family argues in a seat.
    pub judge_independence: Independence,
}

/// The keys a panel's `sha256` does not cover: itself and what is derived from the rest.
const DERIVED: [&str; 4] = ["sha256", "judge", "families", "judge_independence"];

impl<'de> Deserialize<'de> for Panel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        normalise_panel(&Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl Panel {
    /// Returns the participant seats (every seat but the judge), in seat order.
    pub fn participants(&self) -> impl Iterator<Item = &Seat> {
        self.seats.iter().filter(|s| s.role != Role::Judge)
    }

    /// Returns the participant seat ids, in seat order.
    pub fn participant_ids(&self) -> Vec<&str> {
        self.participants().map(|s| s.id.as_str()).collect()
    }

    /// Returns the judge seat.
    pub fn judge_seat(&self) -> &Seat {
        self.seats
            .iter()
            .find(|s| s.id == self.judge)
            .expect("a normalised panel seats its judge, because normalise_panel names it")
    }

    /// Returns the question's options.
    pub fn options(&self) -> &[String] {
        &self.question.options
    }

    /// Returns the ids a reference must name to resolve, or `None` when the panel declared no
    /// evidence (then any reference resolves).
    pub fn known_ids(&self) -> Option<&BTreeSet<String>> {
        self.evidence.as_ref().map(|e| &e.ids)
    }

    /// Returns the principals that may sign a session of this panel: the judge seat's lane and
    /// its id (a normalised seat declares no other principal).
    pub fn judge_principals(&self) -> Vec<String> {
        let seat = self.judge_seat();
        [&seat.lane, &seat.id]
            .into_iter()
            .filter(|v| !v.is_empty())
            .cloned()
            .collect()
    }

    /// Returns why `signer` may not sign a session of this panel, or `None` when it may.
    pub fn signer_problem(&self, signer: &str) -> Option<String> {
        principal_problem(&self.judge_principals(), signer)
    }
}

fn seat(raw: &Value) -> Result<Seat, Error> {
    let raw = raw.as_object().ok_or(Error::SeatNotObject)?;
    let id = text(raw.get("id"), "seat id")?;
    let Some(role) = raw
        .get("role")
        .and_then(Value::as_str)
        .and_then(Role::parse)
    else {
        return Err(Error::Role(id));
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
    Ok(Seat {
        id,
        role,
        provider,
        model_served: model,
        family,
        lane,
    })
}

fn evidence(raw: &Value) -> Result<Evidence, Error> {
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
    let unique: BTreeSet<String> = ids.iter().cloned().collect();
    if unique.len() != ids.len() {
        return Err(Error::EvidenceIds);
    }
    let sources = match raw.get("sources") {
        None => None,
        Some(sources) => {
            let sources = sources.as_array().ok_or(Error::EvidenceSources)?;
            Some(sources.iter().map(source).collect::<Result<Vec<_>, _>>()?)
        }
    };
    Ok(Evidence {
        ids: unique,
        sources,
    })
}

fn source(raw: &Value) -> Result<Source, Error> {
    let source = raw.as_object().ok_or(Error::EvidenceSource)?;
    let kind = match source.get("kind").and_then(Value::as_str) {
        Some("context") => SourceKind::Context,
        Some("evidence-record") => SourceKind::EvidenceRecord,
        _ => return Err(Error::EvidenceSource),
    };
    if source
        .keys()
        .any(|k| !matches!(k.as_str(), "kind" | "sha256" | "id"))
    {
        return Err(Error::EvidenceSource);
    }
    let sha256 = hex(source.get("sha256"), "evidence.sources sha256")?;
    let id = if source.contains_key("id") {
        Some(text(source.get("id"), "evidence.sources id")?)
    } else {
        None
    };
    Ok(Source { kind, sha256, id })
}

/// Validates a panel document and returns it normalised with its `sha256`, the judge seat's id,
/// the sorted participant families and `judge_independence` (`partial` when the judge's family
/// is a participant's, else `full`). A `sha256` the panel carries must match.
///
/// # Errors
///
/// The first broken rule, as [`Error`].
pub fn normalise_panel(panel: &Value) -> Result<Panel, Error> {
    let map = panel.as_object().ok_or(Error::PanelNotObject)?;
    if map.get("schema").and_then(Value::as_str) != Some(PANEL_SCHEMA) {
        return Err(Error::PanelSchema);
    }
    let id = text(map.get("id"), "panel id")?;
    let session_type: SessionType = map
        .get("session_type")
        .and_then(Value::as_str)
        .ok_or(Error::SessionType)?
        .parse()?;
    let question =
        normalise_question(map.get("question").unwrap_or(&Value::Null)).map_err(Error::Question)?;
    let state_sha256 = hex(map.get("state_sha256"), "state_sha256")?;
    let raw_seats = match map.get("seats") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => return Err(Error::NoSeats),
    };
    let seats = raw_seats.iter().map(seat).collect::<Result<Vec<_>, _>>()?;
    let ids: HashSet<&str> = seats.iter().map(|s| s.id.as_str()).collect();
    if ids.len() != seats.len() {
        return Err(Error::SeatIds);
    }
    let mut families_of: BTreeMap<&str, &str> = BTreeMap::new();
    for seat in &seats {
        let known = families_of
            .entry(&seat.model_served)
            .or_insert(&seat.family);
        if *known != seat.family {
            let quoted = |text: &str| repr(Some(&Value::String(text.to_owned())));
            return Err(Error::ModelFamilies {
                model: quoted(&seat.model_served),
                known: quoted(known),
                family: quoted(&seat.family),
            });
        }
    }
    let judges: Vec<&Seat> = seats.iter().filter(|s| s.role == Role::Judge).collect();
    let [judge] = judges.as_slice() else {
        return Err(Error::JudgeCount(judges.len()));
    };
    let participants: Vec<&Seat> = seats.iter().filter(|s| s.role != Role::Judge).collect();
    let lanes: Vec<&str> = participants.iter().map(|s| s.lane.as_str()).collect();
    if lanes.iter().collect::<HashSet<_>>().len() != lanes.len() {
        return Err(Error::SharedLane);
    }
    if lanes.contains(&judge.lane.as_str()) {
        return Err(Error::JudgeLane);
    }
    let families: BTreeSet<String> = participants.iter().map(|s| s.family.clone()).collect();
    if families.len() < 2 {
        return Err(Error::OneFamily);
    }
    for (role, minimum) in session_type.minimums() {
        let present = participants.iter().filter(|s| s.role == role).count();
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
                    role,
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
    if let Some(ceiling) = session_type.round_ceiling()
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
    // Only a panel that declares evidence carries the key, so an older panel keeps its hash.
    let evidence = map.get("evidence").map(evidence).transpose()?;
    let judge_independence = if families.contains(&judge.family) {
        Independence::Partial
    } else {
        Independence::Full
    };
    let judge = judge.id.clone();
    let mut normalised = Panel {
        schema: PANEL_SCHEMA,
        id,
        session_type,
        question,
        state_sha256,
        seats,
        budget: Budget {
            max_rounds,
            max_chars,
        },
        evidence,
        sha256: String::new(),
        judge,
        families,
        judge_independence,
    };
    let computed = hash_without(&normalised, &DERIVED);
    if let Some(given) = map.get("sha256")
        && given.as_str() != Some(computed.as_str())
    {
        return Err(Error::PanelHash);
    }
    normalised.sha256 = computed;
    Ok(normalised)
}

/// Returns the principals that may sign a session judged by the judge seat of `panel`, a panel
/// as a document (read from a ref before it verifies): the `principal` the seat declares, else
/// its lane and its seat id.
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
    let judge = panel["judge"].as_str().unwrap_or_default();
    let seat = panel["seats"]
        .as_array()
        .and_then(|seats| seats.iter().find(|s| s["id"] == judge))
        .unwrap_or(&Value::Null);
    if let Some(principal) = seat["principal"].as_str().filter(|p| !p.is_empty()) {
        return vec![principal.to_owned()];
    }
    ["lane", "id"]
        .iter()
        .filter_map(|key| seat[*key].as_str().filter(|v| !v.is_empty()))
        .map(str::to_owned)
        .collect()
}

/// Returns why `signer` may not sign a session of `panel`, a panel as a document (the signer
/// is the judge's seat or the principal it declares), or `None` when it may.
pub fn signer_problem(panel: &Value, signer: &str) -> Option<String> {
    principal_problem(&judge_principals(panel), signer)
}

fn principal_problem(allowed: &[String], signer: &str) -> Option<String> {
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

/// Returns the panel document `panel` with evidence ids added: its declared evidence (validated
/// first, so an edited panel is refused, not repaired), plus `ids` with their `sources` (as
/// documents, checked when the result is normalised); ids sorted and deduplicated, the stale
/// `sha256` dropped.
///
/// # Errors
///
/// The panel as given breaks a rule.
pub fn with_evidence(panel: &Value, ids: &[String], sources: &[Value]) -> Result<Value, Error> {
    let declared = normalise_panel(panel)?;
    let mut all_ids: BTreeSet<String> = declared.known_ids().cloned().unwrap_or_default();
    all_ids.extend(ids.iter().cloned());
    let mut all_sources: Vec<Value> = declared
        .evidence
        .and_then(|e| e.sources)
        .unwrap_or_default()
        .iter()
        .map(|s| serde_json::to_value(s).expect("a source serialises: its keys are strings"))
        .collect();
    all_sources.extend(sources.iter().cloned());
    let mut evidence = Map::new();
    evidence.insert(
        "ids".into(),
        Value::Array(all_ids.into_iter().map(Value::String).collect()),
    );
    evidence.insert("sources".into(), Value::Array(all_sources));
    let mut updated = panel.as_object().cloned().unwrap_or_default();
    updated.remove("sha256");
    updated.insert("evidence".into(), Value::Object(evidence));
    Ok(Value::Object(updated))
}
