//! `git hpp route`: risk and context set a floor, fallback only moves upward; no repository
//! needed.

use crate::harness::Sandbox;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/routing/");

fn example(name: &str) -> String {
    format!("{EXAMPLES}{name}.json")
}

fn route(sandbox: &Sandbox, request: &str, policy: &str) -> crate::harness::Run {
    let request = example(request);
    let providers = example("providers");
    sandbox.hpp([
        "route",
        "--request",
        &request,
        "--providers",
        &providers,
        "--policy",
        policy,
    ])
}

#[test]
fn low_stakes_work_goes_to_the_policy_tier() {
    let sandbox = Sandbox::empty();
    let economy = route(&sandbox, "inspect-low", "economy").json(0);
    assert_eq!(economy["schema"], "hpp.route/v1");
    assert_eq!(economy["requested_tier"], "economy");
    assert_eq!(economy["selection"]["provider"], "workstation-small");
    assert_eq!(economy["selection"]["tier"], "economy");
    assert!(economy["fallback"].is_null());
    assert_eq!(
        economy["eligible_providers"],
        serde_json::json!(["team-server", "workstation-small"])
    );
    assert_eq!(economy["rationale"]["context"], 3000);
    let balanced = route(&sandbox, "inspect-low", "balanced").json(0);
    assert_eq!(balanced["selection"]["provider"], "team-server");
    assert_eq!(balanced["policy"], "balanced");
}

#[test]
fn the_policy_defaults_to_balanced() {
    let sandbox = Sandbox::empty();
    let request = example("inspect-low");
    let providers = example("providers");
    let chosen = sandbox
        .hpp(["route", "--request", &request, "--providers", &providers])
        .json(0);
    assert_eq!(chosen["policy"], "balanced");
    assert_eq!(chosen["requested_tier"], "balanced");
}

#[test]
fn without_a_provider_at_the_requested_tier_the_route_moves_up_and_says_so() {
    let sandbox = Sandbox::empty();
    let chosen = route(&sandbox, "review-low", "economy").json(0);
    assert_eq!(chosen["requested_tier"], "economy");
    assert_eq!(chosen["selection"]["tier"], "balanced");
    // hosted-large and team-server both serve balanced: the tie goes by id.
    assert_eq!(chosen["selection"]["provider"], "hosted-large");
    assert_eq!(
        chosen["fallback"],
        serde_json::json!({"reason": "upgraded-above-requested-tier", "requested_tier": "economy"})
    );
}

#[test]
fn high_risk_sets_a_frontier_floor_whatever_the_policy() {
    let sandbox = Sandbox::empty();
    let chosen = route(&sandbox, "build-high-risk", "economy").json(0);
    assert_eq!(chosen["requested_tier"], "frontier");
    assert_eq!(chosen["selection"]["provider"], "hosted-large");
    assert_eq!(chosen["selection"]["tier"], "frontier");
    assert!(chosen["fallback"].is_null());
}

#[test]
fn control_a_floor_no_provider_reaches_is_refused_never_lowered() {
    let sandbox = Sandbox::empty();
    let reason = route(&sandbox, "inspect-high-risk", "economy").refused();
    assert_eq!(reason, "no provider satisfies the frontier risk floor");
    let reason = route(&sandbox, "inspect-huge-context", "balanced").refused();
    assert_eq!(
        reason,
        "no provider supports the requested stage and context"
    );
}

#[test]
fn malformed_requests_and_providers_are_refused() {
    let sandbox = Sandbox::empty();
    std::fs::write(sandbox.root.join("list.json"), "[]").expect("the sandbox is writable");
    std::fs::write(
        sandbox.root.join("bad.json"),
        r#"{"stage": "build", "risk": "severe", "complexity": "low", "context": 1}"#,
    )
    .expect("the sandbox is writable");
    let providers = example("providers");
    let reason = sandbox
        .hpp(["route", "--request", "list.json", "--providers", &providers])
        .refused();
    assert_eq!(reason, "JSON root in list.json must be an object");
    let reason = sandbox
        .hpp(["route", "--request", "bad.json", "--providers", &providers])
        .refused();
    assert_eq!(reason, "risk and complexity must be low, medium or high");
    let request = example("inspect-low");
    let reason = sandbox
        .hpp(["route", "--request", &request, "--providers", "list.json"])
        .refused();
    assert_eq!(reason, "providers must be a non-empty list");
}

/// Routes `inspect-low` (risk low) with a sealed plan session.
fn route_with(sandbox: &Sandbox, session: &str, family: &str) -> crate::harness::Run {
    let request = example("inspect-low");
    let providers = example("providers");
    sandbox.hpp_in(
        &sandbox.root,
        &[
            "route",
            "--request",
            &request,
            "--providers",
            &providers,
            "--deliberation",
            session,
            "--maker-family",
            family,
            "--policy",
            "economy",
        ],
    )
}

#[test]
fn a_plan_panel_raises_the_risk_and_the_route_says_so() {
    let sandbox = Sandbox::repo();
    let session = crate::deliberate::converged_session(
        &sandbox,
        "plan",
        &["low", "medium", "high"],
        "medium",
        "llama",
        None,
    );
    let chosen = route_with(&sandbox, &session, "gpt").json(0);
    assert_eq!(chosen["rationale"]["risk"], "medium");
    assert_eq!(
        chosen["requested_tier"], "balanced",
        "economy without the panel"
    );
    assert_eq!(chosen["deliberation"]["applied"], true);
    assert_eq!(chosen["deliberation"]["raised_from"], "low");
    assert_eq!(chosen["deliberation"]["verdict"], "medium");
    assert_eq!(chosen["deliberation"]["status"], "recommendation");
    let id = session.trim_start_matches("refs/hpp/deliberations/");
    let by_id = route_with(&sandbox, id, "gpt").json(0);
    assert_eq!(by_id["deliberation"], chosen["deliberation"]);
}

#[test]
fn a_plan_panel_never_lowers_the_risk() {
    let sandbox = Sandbox::repo();
    let session = crate::deliberate::converged_session(
        &sandbox,
        "plan",
        &["low", "medium", "high"],
        "low",
        "llama",
        None,
    );
    let request = example("build-high-risk");
    let providers = example("providers");
    let chosen = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "route",
                "--request",
                &request,
                "--providers",
                &providers,
                "--deliberation",
                &session,
                "--maker-family",
                "gpt",
            ],
        )
        .json(0);
    assert_eq!(chosen["rationale"]["risk"], "high");
    assert_eq!(chosen["deliberation"]["applied"], false);
    assert!(chosen["deliberation"]["raised_from"].is_null());
}

#[test]
fn control_a_plan_panel_judged_by_the_makers_family_is_refused() {
    let sandbox = Sandbox::repo();
    let session = crate::deliberate::converged_session(
        &sandbox,
        "plan",
        &["low", "medium", "high"],
        "high",
        "claude",
        None,
    );
    for maker in ["claude", "anthropic", "claude-opus-4-1"] {
        assert_eq!(
            route_with(&sandbox, &session, maker).refused(),
            "the judge is of the same family as the maker (claude); a panel cannot be judged by the family it is checking",
            "{maker}"
        );
    }
    let request = example("inspect-low");
    let providers = example("providers");
    let missing = sandbox
        .hpp([
            "route",
            "--request",
            &request,
            "--providers",
            &providers,
            "--deliberation",
            &session,
        ])
        .refused();
    assert_eq!(
        missing,
        "--deliberation needs --maker-family: a judge of the maker's family is refused"
    );
}
