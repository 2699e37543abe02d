//! WorkGraph: compile a spec of work units into waves (CONCEPTS.md "WorkGraph", "wave",
//! "spec-driven work", "topological order").
//!
//! A spec is a JSON object whose `work` list names each unit with an id, its `depends_on`, its
//! non-empty `acceptance` criteria and a `tier`. Compiling it names every criterion
//! (`<work id>/<scenario>`, so a test can cite it), refuses what cannot be scheduled truthfully
//! (an unknown dependency, a cycle, with the cycle's path), and orders the units into waves: a
//! unit lands in the wave after the latest of its dependencies, and a wave lists its units
//! alphabetically, so the same spec gives the same bytes on every machine.
//!
//! The WorkGraph is data only: it schedules nothing, launches nothing and touches no ref. This
//! module is pure: it takes the parsed spec and returns the compiled graph, the waves document
//! (`hpp.workgraph-waves/v1`) and its Mermaid drawing.
//!
//! ```
//! let spec = serde_json::json!({"work": [
//!     {"id": "spec", "tier": "frontier", "acceptance": ["The format is written down"]},
//!     {"id": "build", "tier": "balanced", "depends_on": ["spec"], "acceptance": ["It builds"]},
//! ]});
//! let graph = hpp_core::workgraph::compile(&spec).expect("a valid spec compiles");
//! assert_eq!(graph.waves[0].work, ["spec"]);
//! assert_eq!(graph.waves[1].work, ["build"]);
//! assert_eq!(graph.criteria[0].id, "build/it-builds");
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::Value;

use crate::pyrepr;

/// The schema of a compiled WorkGraph.
pub const SCHEMA: &str = "hpp.workgraph/v1";
/// The schema of the waves document.
pub const WAVES_SCHEMA: &str = "hpp.workgraph-waves/v1";
/// The relation every edge carries: the dependency comes first, the dependent second.
pub const DEPENDS_ON: &str = "depends-on";
/// The done gate predicates a spec may declare.
pub const DONE_GATE_PREDICATES: [&str; 4] = [
    "clean_worktree",
    "committed_changes",
    "evidence_ref_exists",
    "review_ready",
];
/// The longest scenario derived from a criterion's text.
const SCENARIO_MAX: usize = 48;

static CITABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*\z")
        .expect("the citable pattern compiles")
});
static SCENARIO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A[A-Za-z0-9][A-Za-z0-9._-]*\z").expect("the scenario pattern compiles")
});
static NOT_SLUG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[^a-z0-9]+").expect("the slug pattern compiles"));

/// Why a spec cannot be compiled truthfully. The messages are the reference's refusals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The spec's root is not a JSON object.
    #[error("workgraph spec must be an object")]
    NotAnObject,
    /// `work` is missing, not a list, or empty.
    #[error("work must be a non-empty list")]
    NoWork,
    /// A work item is not an object or has no non-empty string id.
    #[error("every work item needs a non-empty string id")]
    MissingId,
    /// Two work items share an id.
    #[error("duplicate work id: {0}")]
    DuplicateWork(String),
    /// `depends_on` is not a list of strings.
    #[error("work {0} needs a list of depends_on ids")]
    BadDependencies(String),
    /// `depends_on` names the same unit twice.
    #[error("work {0} has duplicate dependency")]
    DuplicateDependency(String),
    /// `acceptance` is missing, empty, or holds an empty or unreadable criterion.
    #[error("work {0} needs non-empty acceptance criteria")]
    NoAcceptance(String),
    /// A criterion object's `id` is not a string.
    #[error("work {0} has a criterion id that is not a string")]
    CriterionIdNotString(String),
    /// A criterion's scenario cannot be cited as `[spec: work/scenario]`.
    #[error("work {work} has an uncitable criterion id: '{scenario}'")]
    UncitableScenario {
        /// The work item.
        work: String,
        /// The scenario given or derived from the text.
        scenario: String,
    },
    /// The whole criterion id (`work/scenario`) cannot be cited.
    #[error("work {work} produces an uncitable criterion id: '{id}'")]
    UncitableCriterion {
        /// The work item.
        work: String,
        /// The criterion id it produced.
        id: String,
    },
    /// Two criteria of one unit have the same id (often two texts with the same slug).
    #[error("duplicate acceptance criterion id: {0}")]
    DuplicateCriterion(String),
    /// `tier` is not economy, balanced or frontier.
    #[error("work {work} has invalid tier: {tier}")]
    InvalidTier {
        /// The work item.
        work: String,
        /// The value given, as the reference prints it (`None` when missing).
        tier: String,
    },
    /// A done gate is not a list of names.
    #[error("{0} needs a list of done gate predicate names")]
    GateNotNames(String),
    /// A done gate is declared empty.
    #[error("{0} declares an empty done gate; an empty gate decides nothing")]
    EmptyGate(String),
    /// A done gate names a predicate twice.
    #[error("{0} repeats a done gate predicate")]
    RepeatedGatePredicate(String),
    /// A done gate names a predicate that does not exist.
    #[error("unknown done gate predicate: {0}")]
    UnknownGatePredicate(String),
    /// A unit depends on an id no unit has.
    #[error("unknown dependency: {work} -> {dependency}")]
    UnknownDependency {
        /// The dependent unit.
        work: String,
        /// The id it names.
        dependency: String,
    },
    /// The dependencies contradict each other; the path runs from a unit back to itself.
    #[error("dependency cycle: {}", .0.join(" -> "))]
    Cycle(Vec<String>),
}

/// The model tier a unit asks for (CONCEPTS.md "WorkGraph": a unit has a tier), ordered from
/// cheapest to strongest. Routing ([`crate::routing`]) moves work between the same tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The cheapest tier.
    Economy,
    /// The middle tier.
    Balanced,
    /// The strongest tier.
    Frontier,
}

impl Tier {
    /// Every tier, cheapest first.
    pub const ALL: [Tier; 3] = [Tier::Economy, Tier::Balanced, Tier::Frontier];

    /// Returns one line that describes the tier.
    pub fn about(self) -> &'static str {
        match self {
            Self::Economy => "The cheapest tier",
            Self::Balanced => "The middle tier",
            Self::Frontier => "The strongest tier",
        }
    }

    /// Returns the tier's name as a spec or a provider writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Economy => "economy",
            Self::Balanced => "balanced",
            Self::Frontier => "frontier",
        }
    }

    /// Returns the tier a name names (`economy`, `balanced`, `frontier`), if any.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        match text {
            "economy" => Some(Self::Economy),
            "balanced" => Some(Self::Balanced),
            "frontier" => Some(Self::Frontier),
            _ => None,
        }
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One named acceptance criterion: what a test cites as `[spec: <id>]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Criterion {
    /// `<work id>/<scenario>`.
    pub id: String,
    /// The unit it belongs to.
    pub work: String,
    /// The criterion's text, trimmed.
    pub text: String,
}

/// One compiled work unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unit {
    /// The unit's id.
    pub id: String,
    /// The ids it depends on, sorted.
    pub depends_on: Vec<String>,
    /// The criteria's texts, in the spec's order.
    pub acceptance: Vec<String>,
    /// The named criteria, in the spec's order.
    pub criteria: Vec<Criterion>,
    /// The tier it asks for.
    pub tier: Tier,
    /// Its done gate (the spec's `done_gate` unless it declares its own).
    pub gate: Vec<String>,
}

/// One dependency edge: `from` must close before `to` starts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    /// The dependency.
    pub from: String,
    /// The dependent.
    pub to: String,
    /// Always [`DEPENDS_ON`].
    pub relation: String,
}

/// One wave: units with no dependency among them, released together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wave {
    /// 1-based position; the barrier is the boundary between consecutive indices.
    pub index: usize,
    /// The units in it, alphabetically.
    pub work: Vec<String>,
}

/// How many units ask for each tier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TierCounts {
    /// Units on the economy tier.
    pub economy: usize,
    /// Units on the balanced tier.
    pub balanced: usize,
    /// Units on the frontier tier.
    pub frontier: usize,
}

/// A compiled spec: `hpp.workgraph/v1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkGraph {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The units, in wave order.
    pub work: Vec<Unit>,
    /// Every criterion, sorted by id.
    pub criteria: Vec<Criterion>,
    /// The spec-wide done gate (empty when none is declared).
    pub done_gate: Vec<String>,
    /// The dependency edges, sorted by (from, to).
    pub edges: Vec<Edge>,
    /// The waves, in order.
    pub waves: Vec<Wave>,
    /// Units per tier.
    pub tier_counts: TierCounts,
}

/// The waves of a compiled spec: `hpp.workgraph-waves/v1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Waves {
    /// Always [`WAVES_SCHEMA`].
    pub schema: &'static str,
    /// The waves, in order.
    pub waves: Vec<Wave>,
    /// Units per tier.
    pub tier_counts: TierCounts,
}

/// Returns whether `id` can be cited as `[spec: <id>]`: `capability/scenario`, each part
/// starting with a letter or digit, then letters, digits, `.`, `_` or `-`.
pub fn is_citable(id: &str) -> bool {
    CITABLE.is_match(id)
}

/// Compiles a parsed spec into its WorkGraph, or refuses it with the first problem found.
///
/// Items are checked in the spec's order (id, dependencies' shape, criteria, tier, gate), then
/// every dependency is resolved, then cycles are searched from the alphabetically first unit.
pub fn compile(spec: &Value) -> Result<WorkGraph, Error> {
    let spec = spec.as_object().ok_or(Error::NotAnObject)?;
    let done_gate = match spec.get("done_gate") {
        Some(raw) => gate("spec done_gate", raw)?,
        None => Vec::new(),
    };
    let units = items(spec.get("work"), &done_gate)?;
    assert_acyclic(&units)?;
    let waves = layer(&units);
    let by_id: BTreeMap<&str, &Unit> = units.iter().map(|u| (u.id.as_str(), u)).collect();
    let work: Vec<Unit> = waves
        .iter()
        .flat_map(|wave| wave.work.iter())
        .map(|id| (*by_id.get(id.as_str()).expect("every wave member is a unit")).clone())
        .collect();
    let mut edges: Vec<Edge> = units
        .iter()
        .flat_map(|unit| {
            unit.depends_on.iter().map(|dependency| Edge {
                from: dependency.clone(),
                to: unit.id.clone(),
                relation: DEPENDS_ON.to_owned(),
            })
        })
        .collect();
    edges.sort();
    let mut criteria: Vec<Criterion> = units
        .iter()
        .flat_map(|u| u.criteria.iter().cloned())
        .collect();
    criteria.sort_by(|a, b| a.id.cmp(&b.id));
    let mut tier_counts = TierCounts::default();
    for unit in &units {
        match unit.tier {
            Tier::Economy => tier_counts.economy += 1,
            Tier::Balanced => tier_counts.balanced += 1,
            Tier::Frontier => tier_counts.frontier += 1,
        }
    }
    Ok(WorkGraph {
        schema: SCHEMA,
        work,
        criteria,
        done_gate,
        edges,
        waves,
        tier_counts,
    })
}

impl WorkGraph {
    /// Returns the waves document (`hpp.workgraph-waves/v1`).
    pub fn waves_document(&self) -> Waves {
        Waves {
            schema: WAVES_SCHEMA,
            waves: self.waves.clone(),
            tier_counts: self.tier_counts,
        }
    }

    /// Returns the WorkGraph as a Mermaid flowchart: one node per unit labelled `id · tier`,
    /// numbered `n<i>` by sorted id, one `subgraph c<k>["wave N"]` per wave, and the
    /// `depends-on` edges sorted, with a trailing newline. Same graph, same bytes.
    pub fn mermaid(&self) -> String {
        let index: BTreeMap<&str, usize> = {
            let ids: BTreeSet<&str> = self.work.iter().map(|u| u.id.as_str()).collect();
            ids.into_iter().enumerate().map(|(i, id)| (id, i)).collect()
        };
        let labels: BTreeMap<&str, String> = self
            .work
            .iter()
            .map(|u| {
                let label = format!("{} · {}", u.id, u.tier.as_str());
                (u.id.as_str(), mermaid_text(&label))
            })
            .collect();
        let mut lines = vec!["flowchart LR".to_owned()];
        for (k, wave) in self.waves.iter().enumerate() {
            let label = mermaid_text(&format!("wave {}", wave.index));
            lines.push(format!("  subgraph c{k}[\"{label}\"]"));
            let mut members: Vec<&str> = wave.work.iter().map(String::as_str).collect();
            members.sort_by_key(|id| index[id]);
            for id in members {
                lines.push(format!("    n{}[\"{}\"]", index[id], labels[id]));
            }
            lines.push("  end".to_owned());
        }
        let mut edges: Vec<&Edge> = self.edges.iter().collect();
        edges.sort_by(|a, b| (&a.from, &a.to, &a.relation).cmp(&(&b.from, &b.to, &b.relation)));
        for edge in edges {
            lines.push(format!(
                "  n{} -->|{}| n{}",
                index[edge.from.as_str()],
                mermaid_text(&edge.relation),
                index[edge.to.as_str()]
            ));
        }
        let mut text = lines.join("\n");
        text.push('\n');
        text
    }
}

/// Returns a label as Mermaid reads it: the characters that would end it become entity codes
/// (`"` closes a label, `|` an edge text, `<`/`>` read as HTML) and a line break becomes a space.
pub fn mermaid_text(text: &str) -> String {
    text.replace('"', "#quot;")
        .replace('|', "#124;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
        .replace("\r\n", " ")
        .replace(['\r', '\n'], " ")
}

/// Checks every item in order and returns the units in the spec's order.
fn items(raw: Option<&Value>, done_gate: &[String]) -> Result<Vec<Unit>, Error> {
    let raw = match raw.and_then(Value::as_array) {
        Some(list) if !list.is_empty() => list,
        _ => return Err(Error::NoWork),
    };
    let mut units: Vec<Unit> = Vec::with_capacity(raw.len());
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for item in raw {
        let object = item.as_object().ok_or(Error::MissingId)?;
        let id = match object.get("id").and_then(Value::as_str) {
            Some(id) if !id.trim().is_empty() => id.to_owned(),
            _ => return Err(Error::MissingId),
        };
        if !seen.insert(id.clone()) {
            return Err(Error::DuplicateWork(id));
        }
        let depends_on = dependencies(&id, object.get("depends_on"))?;
        let criteria = criteria(&id, object.get("acceptance"))?;
        let tier = match object.get("tier") {
            Some(Value::String(text)) => Tier::parse(text),
            _ => None,
        }
        .ok_or_else(|| Error::InvalidTier {
            work: id.clone(),
            tier: pyrepr::display(object.get("tier")),
        })?;
        let gate = match object.get("gate") {
            Some(raw) => gate(&format!("work {id}"), raw)?,
            None => done_gate.to_vec(),
        };
        units.push(Unit {
            acceptance: criteria.iter().map(|c| c.text.clone()).collect(),
            id,
            depends_on,
            criteria,
            tier,
            gate,
        });
    }
    for unit in &units {
        if let Some(missing) = unit.depends_on.iter().find(|d| !seen.contains(*d)) {
            return Err(Error::UnknownDependency {
                work: unit.id.clone(),
                dependency: missing.clone(),
            });
        }
    }
    Ok(units)
}

fn dependencies(id: &str, raw: Option<&Value>) -> Result<Vec<String>, Error> {
    let list = match raw {
        None => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(Error::BadDependencies(id.to_owned())),
    };
    let mut names: Vec<String> = Vec::with_capacity(list.len());
    for value in list {
        let name = value
            .as_str()
            .ok_or_else(|| Error::BadDependencies(id.to_owned()))?;
        names.push(name.to_owned());
    }
    let distinct: BTreeSet<&String> = names.iter().collect();
    if distinct.len() != names.len() {
        return Err(Error::DuplicateDependency(id.to_owned()));
    }
    names.sort();
    Ok(names)
}

/// Names every acceptance criterion: a plain string derives its scenario from its text, an
/// object `{"id", "text"}` keeps its id when the wording is expected to change.
fn criteria(work: &str, raw: Option<&Value>) -> Result<Vec<Criterion>, Error> {
    let no_acceptance = || Error::NoAcceptance(work.to_owned());
    let list = match raw {
        Some(Value::Array(list)) if !list.is_empty() => list,
        _ => return Err(no_acceptance()),
    };
    let mut named: Vec<Criterion> = Vec::with_capacity(list.len());
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for entry in list {
        let (text, scenario) = match entry {
            Value::String(text) => (text.as_str(), ""),
            Value::Object(object) => {
                let text = object
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(no_acceptance)?;
                let scenario = match object.get("id") {
                    None => "",
                    Some(Value::String(id)) => id.as_str(),
                    Some(_) => return Err(Error::CriterionIdNotString(work.to_owned())),
                };
                (text, scenario)
            }
            _ => return Err(no_acceptance()),
        };
        let text = text.trim();
        if text.is_empty() {
            return Err(no_acceptance());
        }
        let scenario = match scenario.trim() {
            "" => slug(text),
            given => given.to_owned(),
        };
        if !SCENARIO.is_match(&scenario) {
            return Err(Error::UncitableScenario {
                work: work.to_owned(),
                scenario,
            });
        }
        let id = format!("{work}/{scenario}");
        if !is_citable(&id) {
            return Err(Error::UncitableCriterion {
                work: work.to_owned(),
                id,
            });
        }
        // Two criteria whose texts slug alike would silently become one citation, and the second
        // would look covered by the first one's test.
        if !seen.insert(id.clone()) {
            return Err(Error::DuplicateCriterion(id));
        }
        named.push(Criterion {
            id,
            work: work.to_owned(),
            text: text.to_owned(),
        });
    }
    Ok(named)
}

/// Returns the scenario derived from a criterion's text: lowercase, every run of characters
/// other than `a-z0-9` replaced by `-`, cut to 48 characters, `-` trimmed from both ends.
pub fn slug(text: &str) -> String {
    let lowered = text.trim().to_lowercase();
    let replaced = NOT_SLUG.replace_all(&lowered, "-");
    let cut: String = replaced.chars().take(SCENARIO_MAX).collect();
    cut.trim_matches('-').to_owned()
}

/// Resolves a declared done gate; an unknown or empty one is an error, never a pass.
fn gate(place: &str, raw: &Value) -> Result<Vec<String>, Error> {
    let names: Option<Vec<String>> = raw
        .as_array()
        .and_then(|list| list.iter().map(|v| v.as_str().map(str::to_owned)).collect());
    let names = names.ok_or_else(|| Error::GateNotNames(place.to_owned()))?;
    if names.is_empty() {
        return Err(Error::EmptyGate(place.to_owned()));
    }
    if names.iter().collect::<BTreeSet<_>>().len() != names.len() {
        return Err(Error::RepeatedGatePredicate(place.to_owned()));
    }
    if let Some(unknown) = names
        .iter()
        .find(|n| !DONE_GATE_PREDICATES.contains(&n.as_str()))
    {
        return Err(Error::UnknownGatePredicate(unknown.clone()));
    }
    Ok(names)
}

/// Refuses a cycle, naming its path from the first unit met twice back to itself. The search
/// starts from each unit in alphabetical order and follows dependencies in sorted order, so the
/// same spec names the same path every time. Iterative: a long chain cannot overflow the stack.
fn assert_acyclic(units: &[Unit]) -> Result<(), Error> {
    let deps: BTreeMap<&str, &[String]> = units
        .iter()
        .map(|u| (u.id.as_str(), u.depends_on.as_slice()))
        .collect();
    let mut done: BTreeSet<&str> = BTreeSet::new();
    for &start in deps.keys() {
        if done.contains(start) {
            continue;
        }
        // The path being walked, each with the index of the next dependency to visit.
        let mut path: Vec<(&str, usize)> = vec![(start, 0)];
        let mut on_path: BTreeSet<&str> = BTreeSet::from([start]);
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            let node_deps = deps[node];
            if *next == node_deps.len() {
                path.pop();
                on_path.remove(node);
                done.insert(node);
                continue;
            }
            let dependency = node_deps[*next].as_str();
            *next += 1;
            if on_path.contains(dependency) {
                let from = path
                    .iter()
                    .position(|(id, _)| *id == dependency)
                    .expect("a unit on the path is in the path");
                let mut cycle: Vec<String> = path[from..]
                    .iter()
                    .map(|(id, _)| (*id).to_owned())
                    .collect();
                cycle.push(dependency.to_owned());
                return Err(Error::Cycle(cycle));
            }
            if !done.contains(dependency) {
                path.push((dependency, 0));
                on_path.insert(dependency);
            }
        }
    }
    Ok(())
}

/// Orders an acyclic graph into waves: a unit's wave is one past the latest wave of its
/// dependencies (the same as repeatedly releasing every unit whose dependencies are resolved).
fn layer(units: &[Unit]) -> Vec<Wave> {
    let deps: BTreeMap<&str, &[String]> = units
        .iter()
        .map(|u| (u.id.as_str(), u.depends_on.as_slice()))
        .collect();
    let mut level: BTreeMap<&str, usize> = BTreeMap::new();
    for &start in deps.keys() {
        let mut stack: Vec<&str> = vec![start];
        while let Some(&node) = stack.last() {
            if level.contains_key(node) {
                stack.pop();
                continue;
            }
            let pending: Vec<&str> = deps[node]
                .iter()
                .map(String::as_str)
                .filter(|d| !level.contains_key(d))
                .collect();
            if pending.is_empty() {
                let wave = deps[node]
                    .iter()
                    .map(|d| level[d.as_str()])
                    .max()
                    .map_or(1, |latest| latest + 1);
                level.insert(node, wave);
                stack.pop();
            } else {
                stack.extend(pending);
            }
        }
    }
    let mut waves: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (id, wave) in level {
        waves.entry(wave).or_default().push(id.to_owned());
    }
    waves
        .into_iter()
        .map(|(index, work)| Wave { index, work })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn unit(id: &str, deps: &[&str]) -> Value {
        json!({"id": id, "tier": "economy", "depends_on": deps, "acceptance": [format!("{id} works")]})
    }

    fn refusal(spec: Value) -> String {
        compile(&spec).expect_err("the spec is refused").to_string()
    }

    #[test]
    fn build_and_docs_share_the_second_wave_and_verify_waits_for_both() {
        let spec = json!({"work": [
            unit("verify", &["build", "docs"]),
            unit("docs", &["spec"]),
            unit("build", &["spec"]),
            unit("spec", &[]),
        ]});
        let graph = compile(&spec).expect("compiles");
        let waves: Vec<Vec<String>> = graph.waves.iter().map(|w| w.work.clone()).collect();
        assert_eq!(waves, [vec!["spec"], vec!["build", "docs"], vec!["verify"]]);
        assert_eq!(graph.waves[2].index, 3);
        let order: Vec<&str> = graph.work.iter().map(|u| u.id.as_str()).collect();
        assert_eq!(order, ["spec", "build", "docs", "verify"]);
        assert_eq!(graph.edges.len(), 4);
        assert_eq!(graph.edges[0].from, "build");
        assert_eq!(graph.edges[0].to, "verify");
        assert_eq!(graph.tier_counts.economy, 4);
    }

    #[test]
    fn control_a_three_unit_cycle_is_refused_with_its_path() {
        let spec = json!({"work": [unit("a", &["c"]), unit("b", &["a"]), unit("c", &["b"])]});
        assert_eq!(refusal(spec), "dependency cycle: a -> c -> b -> a");
    }

    #[test]
    fn control_a_unit_depending_on_itself_is_a_cycle() {
        assert_eq!(
            refusal(json!({"work": [unit("a", &["a"])]})),
            "dependency cycle: a -> a"
        );
    }

    #[test]
    fn control_an_unknown_dependency_is_refused() {
        assert_eq!(
            refusal(json!({"work": [unit("a", &["ghost"])]})),
            "unknown dependency: a -> ghost"
        );
    }

    #[test]
    fn control_missing_or_empty_acceptance_is_refused() {
        for acceptance in [json!(null), json!([]), json!(["  "]), json!([{"id": "x"}])] {
            let mut item = unit("a", &[]);
            item["acceptance"] = acceptance;
            assert_eq!(
                refusal(json!({"work": [item]})),
                "work a needs non-empty acceptance criteria"
            );
        }
    }

    #[test]
    fn criteria_take_their_id_or_a_slug_of_their_text() {
        let spec = json!({"work": [{"id": "pay", "tier": "frontier", "acceptance": [
            "  Totals ROUND half-up, to 2 places!  ",
            {"id": "refund", "text": "Refunds never exceed the charge"},
        ]}]});
        let graph = compile(&spec).expect("compiles");
        let ids: Vec<&str> = graph.criteria.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["pay/refund", "pay/totals-round-half-up-to-2-places"]);
        assert_eq!(
            graph.work[0].acceptance[0],
            "Totals ROUND half-up, to 2 places!"
        );
        assert_eq!(slug(&"x".repeat(60)), "x".repeat(48));
    }

    #[test]
    fn slugs_that_collide_are_refused() {
        let spec = json!({"work": [{"id": "a", "tier": "economy", "acceptance": ["It works", "it works!"]}]});
        assert_eq!(
            refusal(spec),
            "duplicate acceptance criterion id: a/it-works"
        );
    }

    #[test]
    fn shape_refusals_use_the_reference_sentences() {
        assert_eq!(refusal(json!([])), "workgraph spec must be an object");
        assert_eq!(
            refusal(json!({"work": []})),
            "work must be a non-empty list"
        );
        assert_eq!(
            refusal(json!({"work": [{"id": " "}]})),
            "every work item needs a non-empty string id"
        );
        assert_eq!(
            refusal(json!({"work": [unit("a", &[]), unit("a", &[])]})),
            "duplicate work id: a"
        );
        assert_eq!(
            refusal(json!({"work": [unit("a", &["b", "b"]), unit("b", &[])]})),
            "work a has duplicate dependency"
        );
        let mut bad_tier = unit("a", &[]);
        bad_tier["tier"] = json!("premium");
        assert_eq!(
            refusal(json!({"work": [bad_tier.clone()]})),
            "work a has invalid tier: premium"
        );
        bad_tier.as_object_mut().expect("object").remove("tier");
        assert_eq!(
            refusal(json!({"work": [bad_tier]})),
            "work a has invalid tier: None"
        );
        assert_eq!(
            refusal(json!({"work": [{"id": "a b", "tier": "economy", "acceptance": ["x"]}]})),
            "work a b produces an uncitable criterion id: 'a b/x'"
        );
        assert_eq!(
            refusal(json!({"work": [unit("a", &[])], "done_gate": []})),
            "spec done_gate declares an empty done gate; an empty gate decides nothing"
        );
        assert_eq!(
            refusal(json!({"work": [unit("a", &[])], "done_gate": ["vibes"]})),
            "unknown done gate predicate: vibes"
        );
    }

    #[test]
    fn units_inherit_the_spec_done_gate_unless_they_declare_one() {
        let mut own = unit("b", &[]);
        own["gate"] = json!(["review_ready"]);
        let spec = json!({"work": [unit("a", &[]), own], "done_gate": ["clean_worktree"]});
        let graph = compile(&spec).expect("compiles");
        assert_eq!(graph.work[0].gate, ["clean_worktree"]);
        assert_eq!(graph.work[1].gate, ["review_ready"]);
        assert_eq!(graph.done_gate, ["clean_worktree"]);
    }

    #[test]
    fn mermaid_numbers_nodes_by_sorted_id_and_clusters_waves() {
        let spec = json!({"work": [unit("b", &["a"]), unit("a", &[]), unit("c", &["a"])]});
        let text = compile(&spec).expect("compiles").mermaid();
        assert_eq!(
            text,
            "flowchart LR\n  subgraph c0[\"wave 1\"]\n    n0[\"a · economy\"]\n  end\n  subgraph c1[\"wave 2\"]\n    n1[\"b · economy\"]\n    n2[\"c · economy\"]\n  end\n  n0 -->|depends-on| n1\n  n0 -->|depends-on| n2\n"
        );
    }

    #[test]
    fn mermaid_labels_escape_what_would_end_them() {
        assert_eq!(
            mermaid_text("a\"b|c<d>e\r\nf\ng"),
            "a#quot;b#124;c#lt;d#gt;e f g"
        );
    }

    #[test]
    fn a_long_chain_compiles_without_recursion() {
        let n = 20_000;
        let work: Vec<Value> = (0..n)
            .map(|i| {
                let deps: Vec<String> = if i == 0 {
                    vec![]
                } else {
                    vec![format!("u{}", i - 1)]
                };
                json!({"id": format!("u{i}"), "tier": "economy", "depends_on": deps, "acceptance": ["ok"]})
            })
            .collect();
        let graph = compile(&json!({ "work": work })).expect("compiles");
        assert_eq!(graph.waves.len(), n);
    }

    proptest! {
        #[test]
        fn no_spec_panics_and_a_compiled_graph_respects_every_edge(
            edges in proptest::collection::vec((0u8..6, 0u8..6), 0..12),
            size in 1u8..6,
        ) {
            let work: Vec<Value> = (0..size)
                .map(|i| {
                    let mut deps: Vec<String> = edges
                        .iter()
                        .filter(|(from, _)| *from == i)
                        .map(|(_, to)| format!("u{to}"))
                        .collect();
                    deps.sort();
                    deps.dedup();
                    json!({"id": format!("u{i}"), "tier": "balanced", "depends_on": deps, "acceptance": ["done"]})
                })
                .collect();
            match compile(&json!({ "work": work })) {
                Ok(graph) => {
                    let wave_of: BTreeMap<&str, usize> = graph
                        .waves
                        .iter()
                        .flat_map(|w| w.work.iter().map(move |id| (id.as_str(), w.index)))
                        .collect();
                    prop_assert_eq!(wave_of.len(), usize::from(size));
                    for edge in &graph.edges {
                        prop_assert!(wave_of[edge.from.as_str()] < wave_of[edge.to.as_str()]);
                    }
                    prop_assert!(graph.mermaid().ends_with('\n'));
                }
                Err(error) => {
                    let message = error.to_string();
                    prop_assert!(
                        message.starts_with("dependency cycle: ")
                            || message.starts_with("unknown dependency: "),
                        "{}", message
                    );
                }
            }
        }

        #[test]
        fn arbitrary_json_is_compiled_or_refused_never_panics(text in "\\PC{0,80}") {
            let spec = json!({"work": [{"id": text.clone(), "tier": text.clone(), "acceptance": [text.clone()], "depends_on": [text]}]});
            let _ = compile(&spec);
        }
    }
}
