//! Routing: a risk floor and upward-only fallback across tiers (CONCEPTS.md "routing").
//!
//! A request declares its stage, risk, complexity and context size; the routing policy
//! (economy, balanced or frontier) says where low-stakes work goes. Risk, complexity and context
//! set a floor: high anything, or more than 16,000 characters of context, is frontier work;
//! medium, or more than 8,000, is at least balanced. A provider declares the tiers it serves,
//! the stages it takes and the context it holds. The route prefers a provider at exactly the
//! requested tier; with none, it falls back only upward, to the lowest tier above, and says so.
//! It never moves below the floor, and it never names a vendor, a model or a price: providers
//! are the caller's own labels. Pure: touches no refs.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

/// The schema name of a route.
pub const SCHEMA: &str = "hpp.route/v1";

/// Context above this many characters is at least balanced work.
pub const BALANCED_CONTEXT: u64 = 8_000;
/// Context above this many characters is frontier work.
pub const FRONTIER_CONTEXT: u64 = 16_000;

/// Why a request or a provider list was refused, or no route exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The request is not a JSON object.
    #[error("routing request must be an object")]
    RequestNotAnObject,
    /// Risk or complexity is not one of low, medium, high.
    #[error("risk and complexity must be low, medium or high")]
    BadLevel,
    /// Context is not a non-negative integer.
    #[error("context must be a non-negative integer")]
    BadContext,
    /// Stage is missing or empty.
    #[error("stage must be a non-empty string")]
    BadStage,
    /// The providers are not a non-empty list.
    #[error("providers must be a non-empty list")]
    NoProviders,
    /// A provider has no id.
    #[error("every provider needs an id")]
    ProviderWithoutId,
    /// Two providers share an id.
    #[error("duplicate provider: {0}")]
    DuplicateProvider(String),
    /// A provider's tiers are missing, empty or unknown.
    #[error("provider {0} has invalid tiers")]
    BadTiers(String),
    /// A provider's stages are missing, empty or not strings.
    #[error("provider {0} has invalid stages")]
    BadStages(String),
    /// A provider's max_context is not a non-negative integer.
    #[error("provider {0} has invalid max_context")]
    BadMaxContext(String),
    /// No provider takes the stage with that much context.
    #[error("no provider supports the requested stage and context")]
    NoEligibleProvider,
    /// Eligible providers exist, but none at or above the requested tier.
    #[error("no provider satisfies the {0} risk floor")]
    BelowFloor(Tier),
}

/// The tiers a route moves between are the WorkGraph's: the tier a unit asks for.
pub use crate::workgraph::Tier;

/// A level of risk or complexity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
}

impl Level {
    fn parse(value: Option<&Value>) -> Option<Self> {
        match value?.as_str()? {
            "low" => Some(Level::Low),
            "medium" => Some(Level::Medium),
            "high" => Some(Level::High),
            _ => None,
        }
    }
}

/// A validated routing request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Request {
    /// The stage of work (`inspect`, `build`, `review`, ...).
    pub stage: String,
    /// How bad a wrong answer would be.
    pub risk: Level,
    /// How hard the work is.
    pub complexity: Level,
    /// Characters of context the work needs.
    pub context: u64,
}

/// A validated provider declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// The caller's label for the provider.
    pub id: String,
    /// The tiers it serves, deduplicated and ordered.
    pub tiers: BTreeSet<Tier>,
    /// The stages it takes.
    pub stages: BTreeSet<String>,
    /// The most context it holds, in characters.
    pub max_context: u64,
}

/// The provider and tier chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Selection {
    /// The chosen provider's id.
    pub provider: String,
    /// The tier it serves the request at.
    pub tier: Tier,
}

/// Why the selection is above the requested tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fallback {
    /// Always `upgraded-above-requested-tier`: fallback only moves upward.
    pub reason: &'static str,
    /// The tier the request asked for.
    pub requested_tier: Tier,
}

/// A route, `hpp.route/v1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The routing policy applied.
    pub policy: Tier,
    /// The floor the request set under the policy.
    pub requested_tier: Tier,
    /// The provider and tier chosen.
    pub selection: Selection,
    /// `null` when the requested tier was served; otherwise why it was not.
    pub fallback: Option<Fallback>,
    /// Ids of every provider that takes the stage and context, sorted.
    pub eligible_providers: Vec<String>,
    /// The request, as read.
    pub rationale: Request,
    /// What a plan panel's verdict did to the request's risk (only with `--deliberation`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deliberation: Option<PanelRisk>,
}

/// What a sealed plan session's verdict did to a request's risk: it can only raise it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PanelRisk {
    /// The seal of the session.
    pub record_sha256: String,
    /// The verdict's value (`low`, `medium`, `high`), if any.
    pub verdict: Option<String>,
    /// The verdict's status (`recommendation`, `abstention`, `blocked`, ...).
    pub status: String,
    /// Whether the risk was raised.
    pub applied: bool,
    /// The declared risk, when it was raised.
    pub raised_from: Option<Level>,
}

/// Raises `request.risk` to a plan panel's verdict when the verdict is a recommendation that
/// ranks higher; never lowers it (a panel must not talk a risky change into a cheaper tier).
///
/// ```
/// use hpp_core::routing::{parse_request, raise_risk, Level};
/// let mut request = parse_request(&serde_json::json!(
///     {"stage": "build", "risk": "medium", "complexity": "low", "context": 10})).unwrap();
/// let lower = raise_risk(&mut request, "s", "recommendation", Some("low"));
/// assert!(!lower.applied);
/// assert_eq!(request.risk, Level::Medium);
/// let higher = raise_risk(&mut request, "s", "recommendation", Some("high"));
/// assert_eq!((higher.applied, request.risk), (true, Level::High));
/// ```
pub fn raise_risk(
    request: &mut Request,
    record_sha256: &str,
    status: &str,
    value: Option<&str>,
) -> PanelRisk {
    let declared = request.risk;
    let advised = (status == "recommendation")
        .then(|| Level::parse(value.map(|v| Value::String(v.to_owned())).as_ref()))
        .flatten();
    let applied = advised.is_some_and(|advised| advised > declared);
    if let (true, Some(advised)) = (applied, advised) {
        request.risk = advised;
    }
    PanelRisk {
        record_sha256: record_sha256.to_owned(),
        verdict: value.map(str::to_owned),
        status: status.to_owned(),
        applied,
        raised_from: applied.then_some(declared),
    }
}

/// Reads a request object `{"stage", "risk", "complexity", "context"}`.
pub fn parse_request(value: &Value) -> Result<Request, Error> {
    let object = value.as_object().ok_or(Error::RequestNotAnObject)?;
    let (Some(risk), Some(complexity)) = (
        Level::parse(object.get("risk")),
        Level::parse(object.get("complexity")),
    ) else {
        return Err(Error::BadLevel);
    };
    let context = object
        .get("context")
        .and_then(Value::as_u64)
        .ok_or(Error::BadContext)?;
    let stage = match object.get("stage") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(Error::BadStage),
    };
    Ok(Request {
        stage,
        risk,
        complexity,
        context,
    })
}

/// Reads a provider list `[{"id", "tiers", "stages", "max_context"}]`, sorted by id.
pub fn parse_providers(value: &Value) -> Result<Vec<Provider>, Error> {
    let items = value
        .as_array()
        .filter(|items| !items.is_empty())
        .ok_or(Error::NoProviders)?;
    let mut providers: Vec<Provider> = Vec::with_capacity(items.len());
    for item in items {
        let object = item.as_object().ok_or(Error::ProviderWithoutId)?;
        let id = match object.get("id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(Error::ProviderWithoutId),
        };
        if providers.iter().any(|p| p.id == id) {
            return Err(Error::DuplicateProvider(id));
        }
        let tiers: Option<BTreeSet<Tier>> = object
            .get("tiers")
            .and_then(Value::as_array)
            .filter(|tiers| !tiers.is_empty())
            .and_then(|tiers| {
                tiers
                    .iter()
                    .map(|t| t.as_str().and_then(Tier::parse))
                    .collect()
            });
        let Some(tiers) = tiers else {
            return Err(Error::BadTiers(id));
        };
        let stages: Option<BTreeSet<String>> = object
            .get("stages")
            .and_then(Value::as_array)
            .filter(|stages| !stages.is_empty())
            .and_then(|stages| {
                stages
                    .iter()
                    .map(|s| s.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                    .collect()
            });
        let Some(stages) = stages else {
            return Err(Error::BadStages(id));
        };
        let Some(max_context) = object.get("max_context").and_then(Value::as_u64) else {
            return Err(Error::BadMaxContext(id));
        };
        providers.push(Provider {
            id,
            tiers,
            stages,
            max_context,
        });
    }
    providers.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(providers)
}

/// Returns the tier a request asks for under `policy`: the floor its risk, complexity and
/// context set, or the policy's own tier when they set none.
pub fn requested_tier(request: &Request, policy: Tier) -> Tier {
    let any = |level: Level| request.risk == level || request.complexity == level;
    if any(Level::High) || request.context > FRONTIER_CONTEXT {
        Tier::Frontier
    } else if any(Level::Medium) || request.context > BALANCED_CONTEXT {
        if policy == Tier::Frontier {
            Tier::Frontier
        } else {
            Tier::Balanced
        }
    } else {
        policy
    }
}

/// Routes a request: the requested tier if some eligible provider serves it, else the lowest
/// tier above it; never below.
///
/// ```
/// use hpp_core::routing::{parse_providers, parse_request, route, Tier};
/// let request = parse_request(&serde_json::json!(
///     {"stage": "build", "risk": "high", "complexity": "low", "context": 100}
/// )).unwrap();
/// let providers = parse_providers(&serde_json::json!([
///     {"id": "small", "tiers": ["economy"], "stages": ["build"], "max_context": 9000},
///     {"id": "large", "tiers": ["frontier"], "stages": ["build"], "max_context": 9000},
/// ])).unwrap();
/// let chosen = route(&request, Tier::Economy, &providers).unwrap();
/// assert_eq!(chosen.selection.provider, "large");
/// ```
pub fn route(request: &Request, policy: Tier, providers: &[Provider]) -> Result<Route, Error> {
    let floor = requested_tier(request, policy);
    let eligible: Vec<&Provider> = providers
        .iter()
        .filter(|p| p.stages.contains(&request.stage) && request.context <= p.max_context)
        .collect();
    if eligible.is_empty() {
        return Err(Error::NoEligibleProvider);
    }
    let exact = eligible.iter().any(|p| p.tiers.contains(&floor));
    // The lowest tier at or above the floor each provider serves; providers are sorted by id,
    // so the first minimum is the tie-break by id.
    let (tier, provider) = eligible
        .iter()
        .filter_map(|p| p.tiers.range(floor..).next().map(|t| (*t, *p)))
        .min_by_key(|(t, _)| *t)
        .ok_or(Error::BelowFloor(floor))?;
    let fallback = (!exact).then_some(Fallback {
        reason: "upgraded-above-requested-tier",
        requested_tier: floor,
    });
    Ok(Route {
        schema: SCHEMA,
        policy,
        requested_tier: floor,
        selection: Selection {
            provider: provider.id.clone(),
            tier,
        },
        fallback,
        eligible_providers: eligible.iter().map(|p| p.id.clone()).collect(),
        rationale: request.clone(),
        deliberation: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn request(risk: &str, complexity: &str, context: u64, stage: &str) -> Request {
        parse_request(
            &json!({"risk": risk, "complexity": complexity, "context": context, "stage": stage}),
        )
        .unwrap()
    }

    fn providers() -> Vec<Provider> {
        parse_providers(&json!([
            {"id": "mid", "tiers": ["balanced"], "stages": ["build", "review"], "max_context": 32000},
            {"id": "small", "tiers": ["economy"], "stages": ["build"], "max_context": 8000},
            {"id": "big", "tiers": ["frontier", "balanced"], "stages": ["review"], "max_context": 64000},
        ]))
        .unwrap()
    }

    #[test]
    fn risk_complexity_and_context_set_the_floor() {
        let r = |risk, complexity, context| request(risk, complexity, context, "build");
        assert_eq!(
            requested_tier(&r("low", "low", 0), Tier::Economy),
            Tier::Economy
        );
        assert_eq!(
            requested_tier(&r("medium", "low", 0), Tier::Economy),
            Tier::Balanced
        );
        assert_eq!(
            requested_tier(&r("low", "medium", 0), Tier::Frontier),
            Tier::Frontier
        );
        assert_eq!(
            requested_tier(&r("low", "low", 8001), Tier::Economy),
            Tier::Balanced
        );
        assert_eq!(
            requested_tier(&r("low", "low", 8000), Tier::Economy),
            Tier::Economy
        );
        assert_eq!(
            requested_tier(&r("low", "high", 0), Tier::Economy),
            Tier::Frontier
        );
        assert_eq!(
            requested_tier(&r("low", "low", 16001), Tier::Economy),
            Tier::Frontier
        );
    }

    #[test]
    fn an_exact_tier_wins_and_ties_go_by_id() {
        let chosen = route(
            &request("low", "low", 100, "review"),
            Tier::Balanced,
            &providers(),
        )
        .unwrap();
        assert_eq!(chosen.selection.provider, "big");
        assert_eq!(chosen.selection.tier, Tier::Balanced);
        assert_eq!(chosen.fallback, None);
        assert_eq!(chosen.eligible_providers, ["big", "mid"]);
    }

    #[test]
    fn fallback_moves_only_upward_to_the_lowest_tier_above() {
        let chosen = route(
            &request("low", "low", 100, "review"),
            Tier::Economy,
            &providers(),
        )
        .unwrap();
        assert_eq!(chosen.selection.tier, Tier::Balanced);
        assert_eq!(
            chosen.fallback.unwrap().requested_tier,
            Tier::Economy,
            "the fallback names the tier asked for"
        );
    }

    #[test]
    fn control_a_floor_no_provider_reaches_is_refused_not_lowered() {
        let err = route(
            &request("high", "low", 100, "build"),
            Tier::Economy,
            &providers(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "no provider satisfies the frontier risk floor"
        );
        let err = route(
            &request("low", "low", 100_000, "build"),
            Tier::Economy,
            &providers(),
        )
        .unwrap_err();
        assert_eq!(err, Error::NoEligibleProvider);
    }

    #[test]
    fn control_malformed_declarations_are_refused() {
        let cases = [
            (json!([]), "providers must be a non-empty list"),
            (json!([{"tiers": []}]), "every provider needs an id"),
            (
                json!([{"id": "a", "tiers": ["gold"], "stages": ["x"], "max_context": 1}]),
                "provider a has invalid tiers",
            ),
            (
                json!([{"id": "a", "tiers": ["economy"], "stages": [""], "max_context": 1}]),
                "provider a has invalid stages",
            ),
            (
                json!([{"id": "a", "tiers": ["economy"], "stages": ["x"], "max_context": -1}]),
                "provider a has invalid max_context",
            ),
            (
                json!([
                    {"id": "a", "tiers": ["economy"], "stages": ["x"], "max_context": 1},
                    {"id": "a", "tiers": ["economy"], "stages": ["x"], "max_context": 1}
                ]),
                "duplicate provider: a",
            ),
        ];
        for (value, message) in cases {
            assert_eq!(parse_providers(&value).unwrap_err().to_string(), message);
        }
        let bad_requests = [
            (json!([]), "routing request must be an object"),
            (
                json!({"risk": "extreme", "complexity": "low", "context": 1, "stage": "x"}),
                "risk and complexity must be low, medium or high",
            ),
            (
                json!({"risk": "low", "complexity": "low", "context": -1, "stage": "x"}),
                "context must be a non-negative integer",
            ),
            (
                json!({"risk": "low", "complexity": "low", "context": 1, "stage": ""}),
                "stage must be a non-empty string",
            ),
        ];
        for (value, message) in bad_requests {
            assert_eq!(parse_request(&value).unwrap_err().to_string(), message);
        }
    }

    proptest! {
        #[test]
        fn a_route_is_never_below_the_floor(
            risk in 0usize..3, complexity in 0usize..3, context in 0u64..40_000,
            policy in 0usize..3,
            declared in prop::collection::vec((0u8..8, 0u64..40_000), 1..5),
        ) {
            let levels = ["low", "medium", "high"];
            let tiers = [Tier::Economy, Tier::Balanced, Tier::Frontier];
            let req = request(levels[risk], levels[complexity], context, "s");
            let value = Value::Array(declared.iter().enumerate().map(|(i, (mask, max))| {
                let t: Vec<&str> = tiers.iter().enumerate()
                    .filter(|(bit, _)| mask & (1 << bit) != 0).map(|(_, t)| t.as_str()).collect();
                json!({"id": format!("p{i}"), "tiers": t, "stages": ["s"], "max_context": max})
            }).collect());
            if let Ok(list) = parse_providers(&value) {
                match route(&req, tiers[policy], &list) {
                    Ok(r) => {
                        prop_assert!(r.selection.tier >= r.requested_tier);
                        prop_assert_eq!(r.fallback.is_some(), r.selection.tier > r.requested_tier);
                    }
                    Err(e) => prop_assert!(!e.to_string().is_empty()),
                }
            }
        }
    }
}
