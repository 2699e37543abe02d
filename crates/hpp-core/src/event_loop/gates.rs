//! The loop's gates as conditions (CONCEPTS.md "gate": "a named condition, with a measurable
//! answer"): what each gate requires of the records an event names, read from the manifest's
//! `loop.gates` block so a team can harden them. Pure: the application resolves the records an
//! event names into [`Facts`] and this decides.
//!
//! | gate | event | condition |
//! |---|---|---|
//! | scope | `work_started` | names the work item and the maker; the loop's maker is fixed from here on |
//! | fresh-evidence | `evidence_recorded` | names at least `at_least` evidence bundles that verify, passed, and ran on the workspace tree the loop is at now |
//! | read-only-checker | `check_passed` | names an approved attestation of that same tree whose checker is not the loop's maker (signed when signatures are required, or always with `"signed": "always"`) |
//! | human | `human_approved` | names a person (`by`), and when signatures are required the event is signed by that person, whom the allowed-signers file marks as a person (a line that lists `namespaces="hpp-human"`) |
//! | closure | `verified` | every gate it lists still holds for the loop's current tree |

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// The SSH signature namespace a person's approval is signed in; an allowed-signers line that
/// lists it explicitly (`namespaces="hpp-human"`) marks its principal as a person.
pub const PERSON_NAMESPACE: &str = "hpp-human";

/// When a gate requires a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Signed {
    /// When the verifier requires signatures (an allowed-signers file is configured).
    WhenRequired,
    /// Always: a team that hardened the gate.
    Always,
}

/// What a gate requires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "check", rename_all = "kebab-case")]
pub enum Condition {
    /// The event names the work item (`work`) and the maker (`maker`).
    Scope,
    /// The event names at least `at_least` evidence bundles that verify, passed, on the current
    /// tree.
    Evidence {
        /// How many bundles at least.
        at_least: usize,
    },
    /// The event names (or the tree has) an approved attestation of the current tree by a
    /// checker who is not the loop's maker.
    Checker {
        /// When the attestation must be signed.
        signed: Signed,
    },
    /// The event names a person, signed by them when signatures are required.
    Person {
        /// When the event must be signed.
        signed: Signed,
    },
    /// The gates listed still hold for the loop's current tree.
    Closure {
        /// The gates that must still hold.
        holds: Vec<String>,
    },
}

impl Condition {
    /// Reads one gate's condition from the manifest (`{"check": "evidence", "at_least": 2}`).
    pub fn from_json(gate: &str, value: &Value) -> Result<Self, String> {
        let obj = value
            .as_object()
            .ok_or_else(|| format!("gates.{gate} must be an object"))?;
        let signed = |obj: &Map<String, Value>| -> Result<Signed, String> {
            match obj.get("signed").and_then(Value::as_str) {
                None | Some("when-required") => Ok(Signed::WhenRequired),
                Some("always") => Ok(Signed::Always),
                Some(other) => Err(format!(
                    "gates.{gate}.signed must be when-required or always, not {other:?}"
                )),
            }
        };
        match obj.get("check").and_then(Value::as_str) {
            Some("scope") => Ok(Condition::Scope),
            Some("evidence") => {
                let at_least = match obj.get("at_least") {
                    None => 1,
                    Some(n) => n
                        .as_u64()
                        .filter(|n| *n >= 1)
                        .and_then(|n| usize::try_from(n).ok())
                        .ok_or_else(|| {
                            format!("gates.{gate}.at_least must be a whole number >= 1")
                        })?,
                };
                Ok(Condition::Evidence { at_least })
            }
            Some("checker") => Ok(Condition::Checker {
                signed: signed(obj)?,
            }),
            Some("person") => Ok(Condition::Person {
                signed: signed(obj)?,
            }),
            Some("closure") => {
                let holds = obj
                    .get("holds")
                    .and_then(Value::as_array)
                    .ok_or_else(|| {
                        format!("gates.{gate}.holds must list the gates closure re-checks")
                    })?
                    .iter()
                    .map(|g| {
                        g.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| format!("gates.{gate}.holds must list gate names"))
                    })
                    .collect::<Result<_, _>>()?;
                Ok(Condition::Closure { holds })
            }
            other => Err(format!(
                "gates.{gate}.check must be scope, evidence, checker, person or closure, not {}",
                other.map_or_else(|| "missing".to_owned(), |o| format!("{o:?}"))
            )),
        }
    }

    /// Says what the condition requires, in a sentence (for refusals and status).
    pub fn describe(&self) -> String {
        match self {
            Condition::Scope => "names the work item and the maker".to_owned(),
            Condition::Evidence { at_least } => format!(
                "names {at_least} or more evidence bundles that verify, passed, on the tree the loop is at now"
            ),
            Condition::Checker { .. } => {
                "an approved attestation of that tree by a checker who is not the maker".to_owned()
            }
            Condition::Person { .. } => {
                "names a person, signed by them when signatures are required".to_owned()
            }
            Condition::Closure { holds } => format!("{} still hold", holds.join(", ")),
        }
    }
}

/// Reads the `gates` block of a loop block (absent: no gate has a condition, and the loop
/// checks only the order of events, as the Python reference does).
pub fn from_block(block: &Map<String, Value>) -> Result<BTreeMap<String, Condition>, String> {
    let Some(gates) = block.get("gates") else {
        return Ok(BTreeMap::new());
    };
    let gates = gates
        .as_object()
        .ok_or("gates must be an object mapping each gate to its condition")?;
    gates
        .iter()
        .map(|(gate, value)| Ok((gate.clone(), Condition::from_json(gate, value)?)))
        .collect()
}

/// What an event names, read from its data: the references its gate checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Named {
    /// The work item (`work`).
    pub work: Option<String>,
    /// The maker (`maker`).
    pub maker: Option<String>,
    /// Evidence bundles (`evidence`, one or a list; ids or refs).
    pub evidence: Vec<String>,
    /// An attestation (`attestation`, an id or a ref).
    pub attestation: Option<String>,
    /// A person (`by`).
    pub by: Option<String>,
}

impl Named {
    /// Reads the references out of an event's data; anything else in it is left alone.
    pub fn from_data(data: &Map<String, Value>) -> Self {
        let text = |key: &str| {
            data.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let evidence = match data.get("evidence") {
            Some(Value::String(one)) if !one.trim().is_empty() => vec![one.trim().to_owned()],
            Some(Value::Array(many)) => many
                .iter()
                .filter_map(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        Self {
            work: text("work"),
            maker: text("maker"),
            evidence,
            attestation: text("attestation"),
            by: text("by"),
        }
    }

    /// Tells whether the event names anything a gate checks: an event with no reference (one
    /// imported from the Python harness, or written before gates measured) is legacy.
    pub fn is_empty(&self) -> bool {
        self.work.is_none()
            && self.maker.is_none()
            && self.evidence.is_empty()
            && self.attestation.is_none()
            && self.by.is_none()
    }
}

/// The key under which a gated event's data records the gate it passed and the tree it was on.
pub const STAMP_KEY: &str = "gate";

/// What a gated event records of its gate: which gate it passed and the workspace tree the loop
/// was at. An event without it was written before gates measured (or imported).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Stamp {
    /// The gate passed.
    pub name: String,
    /// The workspace snapshot tree when it passed.
    pub tree: String,
}

impl Stamp {
    /// Reads the stamp of an event's data, if it has a well-formed one.
    pub fn of(data: &Map<String, Value>) -> Option<Self> {
        serde_json::from_value(data.get(STAMP_KEY)?.clone()).ok()
    }

    /// Writes the stamp into an event's data.
    pub fn put(&self, data: &mut Map<String, Value>) {
        data.insert(
            STAMP_KEY.to_owned(),
            serde_json::to_value(self).expect("a stamp serialises"),
        );
    }
}

/// Says, in words a person acts on, what passes `condition` for `event` next on loop `name`
/// (whose maker, once fixed, is `maker`).
pub fn instruction(condition: &Condition, event: &str, name: &str, maker: Option<&str>) -> String {
    let maker = maker.unwrap_or("MAKER");
    match condition {
        Condition::Scope => format!(
            "run `git hpp event append --loop {name} --type {event} --work ITEM --maker NAME`"
        ),
        Condition::Evidence { .. } => format!(
            "run `git hpp evidence run --loop {name} --id ID --artifact GLOB --record-event -- COMMAND` on this tree"
        ),
        Condition::Checker { .. } => format!(
            "a checker other than {maker} runs `git hpp attest create --spec FILE --maker {maker} --checker NAME --session ID --verdict approved --loop {name}`, then `git hpp event append --loop {name} --type {event}`"
        ),
        Condition::Person { .. } => format!(
            "a person runs `git hpp event append --loop {name} --type {event} --by NAME` (signed with --sign-key KEY when signatures are required)"
        ),
        Condition::Closure { .. } => {
            format!("run `git hpp event append --loop {name} --type {event}`")
        }
    }
}

/// Why a gate refused an event: the gate, what it requires, the record it looked at, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("gate {gate} refused: {reason}")]
pub struct Refusal {
    /// The gate.
    pub gate: String,
    /// What it requires ([`Condition::describe`]).
    pub requires: String,
    /// The record it looked at, if any.
    pub record: Option<String>,
    /// Why it does not hold, in a sentence a person acts on.
    pub reason: String,
}

/// How one gate stands for one event or for the loop now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
pub enum Standing {
    /// Every record it names holds.
    Ok,
    /// A record it names is not in this repository (not fetched, or never written).
    ReferenceMissing {
        /// The record.
        record: String,
    },
    /// A record it names no longer holds (revoked, edited, or about another tree now).
    NoLongerHolds {
        /// Why.
        reason: String,
    },
    /// The event names nothing a gate can check: imported, or written before gates measured.
    UncheckedLegacy,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_five_conditions_read_from_their_block() {
        let block = json!({"gates": {
            "scope": {"check": "scope"},
            "fresh-evidence": {"check": "evidence", "at_least": 2},
            "read-only-checker": {"check": "checker", "signed": "always"},
            "human": {"check": "person"},
            "closure": {"check": "closure", "holds": ["fresh-evidence", "human"]},
        }});
        let gates = from_block(block.as_object().expect("object")).expect("valid");
        assert_eq!(gates["fresh-evidence"], Condition::Evidence { at_least: 2 });
        assert_eq!(
            gates["read-only-checker"],
            Condition::Checker {
                signed: Signed::Always
            }
        );
        assert_eq!(
            gates["human"],
            Condition::Person {
                signed: Signed::WhenRequired
            }
        );
        assert!(matches!(&gates["closure"], Condition::Closure { holds } if holds.len() == 2));
        assert!(from_block(&Map::new()).expect("no gates").is_empty());
    }

    #[test]
    fn control_a_malformed_condition_is_refused_naming_the_gate() {
        for bad in [
            json!({"gates": {"x": {"check": "vibes"}}}),
            json!({"gates": {"x": {"check": "evidence", "at_least": 0}}}),
            json!({"gates": {"x": {"check": "person", "signed": "sometimes"}}}),
            json!({"gates": {"x": {"check": "closure"}}}),
            json!({"gates": ["x"]}),
        ] {
            let err = from_block(bad.as_object().expect("object")).expect_err("refused");
            assert!(err.contains("gates"), "{err}");
        }
    }

    #[test]
    fn a_stamp_round_trips_through_event_data() {
        let stamp = Stamp {
            name: "fresh-evidence".into(),
            tree: "a".repeat(40),
        };
        let mut data = Map::new();
        stamp.put(&mut data);
        assert_eq!(Stamp::of(&data), Some(stamp));
        assert_eq!(Stamp::of(&Map::new()), None);
    }

    #[test]
    fn control_each_instruction_names_the_command_that_passes_its_gate() {
        let spec: Value = serde_json::from_str(crate::manifest::BUILT_IN).expect("JSON");
        let gates = from_block(spec["loop"].as_object().expect("object")).expect("valid");
        let evidence = instruction(&gates["fresh-evidence"], "evidence_recorded", "main", None);
        assert!(
            evidence.contains("git hpp evidence run --loop main"),
            "{evidence}"
        );
        let checker = instruction(
            &gates["read-only-checker"],
            "check_passed",
            "main",
            Some("agent-a"),
        );
        assert!(checker.contains("other than agent-a"), "{checker}");
        assert!(!instruction(&gates["human"], "human_approved", "main", None).contains("evidence"));
    }

    #[test]
    fn an_event_names_its_references_and_a_bare_one_is_legacy() {
        let named = Named::from_data(
            json!({"work": "ITEM-1", "maker": "maker-a", "evidence": ["a", " ", "b"]})
                .as_object()
                .expect("object"),
        );
        assert_eq!(named.work.as_deref(), Some("ITEM-1"));
        assert_eq!(named.evidence, ["a", "b"]);
        let one = Named::from_data(json!({"evidence": "a"}).as_object().expect("object"));
        assert_eq!(one.evidence, ["a"]);
        assert!(Named::from_data(&Map::new()).is_empty());
        assert!(Named::from_data(json!({"note": "x"}).as_object().expect("object")).is_empty());
    }
}
