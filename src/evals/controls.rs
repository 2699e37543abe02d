//! The packaged controls: each runs a known-good and a known-bad case through the real code, so
//! the instrument is shown to tell them apart before its verdict is trusted (CONCEPTS.md
//! "control"; the reference's benchmark controls, anchor-behaviour §6.1).
//!
//! A control passes only when both directions hold: the good case is accepted *and* the bad
//! case is refused. Controls that need git work on a throwaway repository made with
//! [`Store::init`] in a temporary directory, removed afterwards; none reads or writes the
//! repository of the working directory. Adding a control is one line in [`CONTROLS`].

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::attest::{self, CreateRequest, VerifyOptions};
use crate::events;
use crate::gates;
use hpp_core::context;
use hpp_core::evals::CaseRun;
use hpp_core::manifest::Manifest;
use hpp_core::policy::{Action, Policy};
use hpp_core::routing::{self, Tier};
use hpp_store::Store;
use hpp_store::refs::{self, LoopId};

/// One control of the packaged benchmark.
#[derive(Debug, Clone, Copy)]
pub struct Control {
    /// The case id that names it in a suite.
    pub id: &'static str,
    /// Runs both directions; `Err` says which direction failed and how.
    pub check: fn() -> Result<(), String>,
}

/// Every control, in the packaged suite's order.
pub const CONTROLS: &[Control] = &[
    runs("manifest-contract", hpp_core::manifest::contract_control),
    runs("policy-enforcement", policy_enforcement),
    runs("workgraph-waves", workgraph_waves),
    runs("lane-collision", hpp_core::maps::lane_collision_control),
    runs(
        "monitor-freshness",
        hpp_core::maps::monitor_freshness_control,
    ),
    runs("context-provenance", context_provenance),
    runs("routing-risk-floor", routing_risk_floor),
    runs("event-evidence-gate", event_evidence_gate),
    runs("graph-determinism", graph_determinism),
    runs("evidence-attestation", evidence_attestation),
];

const fn runs(id: &'static str, check: fn() -> Result<(), String>) -> Control {
    Control { id, check }
}

/// Returns the control named `id`.
pub fn find(id: &str) -> Option<&'static Control> {
    CONTROLS.iter().find(|c| c.id == id)
}

/// Runs a control `k` times (each run from scratch, on its own throwaway repository).
pub fn run(control: &Control, k: usize) -> CaseRun {
    CaseRun::from_results((0..k).map(|_| (control.check)()))
}

/// workgraph-waves: spec → build compiles to waves [spec], [build]; a ↔ b is refused as a cycle.
fn workgraph_waves() -> Result<(), String> {
    let unit = |id: &str, deps: &[&str]| serde_json::json!({"id": id, "tier": "economy", "acceptance": ["done"], "depends_on": deps});
    let good = serde_json::json!({"work": [unit("spec", &[]), unit("build", &["spec"])]});
    let graph = hpp_core::workgraph::compile(&good)
        .map_err(|e| format!("spec -> build was refused: {e}"))?;
    let waves: Vec<(usize, Vec<String>)> = graph
        .waves
        .iter()
        .map(|w| (w.index, w.work.clone()))
        .collect();
    if waves != [(1, vec!["spec".to_owned()]), (2, vec!["build".to_owned()])] {
        return Err(format!(
            "spec -> build should give [spec], [build], got {waves:?}"
        ));
    }
    let cycle = serde_json::json!({"work": [unit("a", &["b"]), unit("b", &["a"])]});
    match hpp_core::workgraph::compile(&cycle) {
        Err(e) if e.to_string().contains("dependency cycle") => Ok(()),
        Err(e) => Err(format!("a <-> b was refused for another reason: {e}")),
        Ok(_) => Err("a <-> b compiled: a cycle must be refused".into()),
    }
}

/// policy-enforcement: `python -m pytest -q` is ALLOW and `rm -rf src` is BLOCK.
fn policy_enforcement() -> Result<(), String> {
    policy_directions(&Policy::built_in(), "python -m pytest -q", "rm -rf src")
}

fn policy_directions(policy: &Policy, safe: &str, dangerous: &str) -> Result<(), String> {
    let good = policy.classify(safe);
    if good.action != Action::Allow {
        return Err(format!(
            "{safe:?} should be ALLOW, got {} ({})",
            good.action, good.rule
        ));
    }
    let bad = policy.classify(dangerous);
    if bad.action != Action::Block {
        return Err(format!(
            "{dangerous:?} should be BLOCK, got {} ({})",
            bad.action, bad.rule
        ));
    }
    Ok(())
}

/// context-provenance: an included block carries a 64-hex sha256; secret-like content is
/// refused.
fn context_provenance() -> Result<(), String> {
    context_directions(
        &json!([{"source": "spec.md", "priority": 10, "content": "The loop closes on evidence."}]),
        &json!([{"source": "env", "priority": 10, "content": "api_key=secret-value"}]),
    )
}

fn context_directions(good: &Value, bad: &Value) -> Result<(), String> {
    let compiled =
        context::compile(good, 4000).map_err(|e| format!("the clean context was refused: {e}"))?;
    let first = compiled
        .included
        .first()
        .ok_or("the clean context included nothing")?;
    if !hpp_core::record::is_sha256_hex(&first.sha256) {
        return Err(format!(
            "included block {} has no sha256 provenance: {:?}",
            first.source, first.sha256
        ));
    }
    match context::compile(bad, 4000) {
        Err(context::Error::SecretContent(_)) => Ok(()),
        Err(other) => Err(format!(
            "the secret was refused for the wrong reason: {other}"
        )),
        Ok(_) => Err("secret-like content was compiled into the context".into()),
    }
}

/// routing-risk-floor: a low-risk inspect goes to the economy provider; a high-risk inspect
/// is refused, since no provider reaches frontier for that stage.
fn routing_risk_floor() -> Result<(), String> {
    routing_directions(
        &json!({"stage": "inspect", "risk": "low", "complexity": "low", "context": 1000}),
        &json!({"stage": "inspect", "risk": "high", "complexity": "low", "context": 1000}),
    )
}

fn routing_directions(good: &Value, risky: &Value) -> Result<(), String> {
    let providers = routing::parse_providers(&json!([
        {"id": "economy", "tiers": ["economy"], "stages": ["inspect"], "max_context": 8000},
        {"id": "frontier", "tiers": ["frontier"], "stages": ["review"], "max_context": 64000},
    ]))
    .map_err(|e| format!("the control's providers were refused: {e}"))?;
    let request = routing::parse_request(good).map_err(|e| e.to_string())?;
    let route = routing::route(&request, Tier::Economy, &providers)
        .map_err(|e| format!("the low-risk request was refused: {e}"))?;
    if route.selection.tier != Tier::Economy {
        return Err(format!(
            "the low-risk request should route at economy, got {}",
            route.selection.tier
        ));
    }
    let request = routing::parse_request(risky).map_err(|e| e.to_string())?;
    match routing::route(&request, Tier::Economy, &providers) {
        Err(routing::Error::BelowFloor(Tier::Frontier)) => Ok(()),
        Err(other) => Err(format!(
            "the high-risk request was refused for the wrong reason: {other}"
        )),
        Ok(route) => Err(format!(
            "the high-risk request was routed below the frontier floor, to {} at {}",
            route.selection.provider, route.selection.tier
        )),
    }
}

/// The five events that walk the built-in loop from planned to verified.
const FULL_LOOP: [&str; 5] = [
    "work_started",
    "evidence_recorded",
    "check_passed",
    "human_approved",
    "verified",
];

/// event-evidence-gate: the five-event loop reaches verified; `verified` as the first event is
/// refused and no ref is created.
fn event_evidence_gate() -> Result<(), String> {
    event_gate_directions(&FULL_LOOP, "verified")
}

fn event_gate_directions(walk: &[&str], premature: &str) -> Result<(), String> {
    let (_dir, store) = throwaway()?;
    let manifest = Manifest::built_in();
    let gated = manifest.loop_spec();
    // The order of events, apart from what each gate measures (tested on its own).
    let spec = &gated.ungated();
    let options = gates::GateOptions::default();
    let bare = loop_id("control-bare")?;
    match gates::append(&store, gated, &bare, walk[0], Map::new(), &options) {
        Err(gates::Error::Gate(_)) => {}
        Err(e) => {
            return Err(format!(
                "a bare {} was refused for the wrong reason: {e}",
                walk[0]
            ));
        }
        Ok(_) => return Err(format!("a bare {} passed its measured gate", walk[0])),
    }
    let good = loop_id("control-good")?;
    let mut state = None;
    for kind in walk {
        let appended = gates::append(&store, spec, &good, kind, Map::new(), &options)
            .map_err(|e| format!("the valid sequence was refused at {kind}: {e}"))?;
        state = Some(appended.projection.state);
    }
    if state.as_deref() != Some("verified") {
        return Err(format!(
            "the valid sequence ended in {} instead of verified",
            state.as_deref().unwrap_or("no state")
        ));
    }
    let bad = loop_id("control-bad")?;
    let refused = gates::append(&store, spec, &bad, premature, Map::new(), &options);
    let created = store
        .tip(&refs::loop_log(&bad))
        .map_err(|e| format!("cannot read the throwaway repository: {e}"))?;
    match (refused, created) {
        (Err(gates::Error::Loop(events::Error::Transition(_))), None) => Ok(()),
        (Err(_), Some(_)) => Err(format!(
            "{premature} as the first event was refused but its log was created"
        )),
        (Err(e), None) => Err(format!(
            "{premature} as the first event was refused for the wrong reason: {e}"
        )),
        (Ok(_), _) => Err(format!("{premature} as the first event was accepted")),
    }
}

/// evidence-attestation: maker-a's work approved by checker-b verifies on its snapshot; after
/// an edit of `target.txt` the new snapshot is blocked with `snapshot_digest`.
/// Every graph view of the built-in manifest gives the same bytes for the manifest with every
/// array reversed (see [`hpp_core::graph::determinism_control`]).
fn graph_determinism() -> Result<(), String> {
    hpp_core::graph::determinism_control(Manifest::built_in().value())
}

fn evidence_attestation() -> Result<(), String> {
    attestation_directions("first version\n", "second version\n")
}

fn attestation_directions(before: &str, after: &str) -> Result<(), String> {
    let (dir, store) = throwaway()?;
    let root = dir.path();
    write(root, "target.txt", before)?;
    write(
        root,
        "SPEC.md",
        "# Spec\n\ntarget.txt holds the text the checker read.\n",
    )?;
    commit_workspace(&store)?;
    attest::create(
        &store,
        root,
        CreateRequest {
            spec: Path::new("SPEC.md"),
            maker: "maker-a",
            checker: "checker-b",
            session: "control:001",
            verdict: "approved",
            evidence: &[],
            loop_id: None,
            loop_named: false,
            signing: None,
        },
    )
    .map_err(|e| format!("the attestation was refused: {e}"))?;
    let options = VerifyOptions::default();
    let verify = |what: &str| {
        let tree = store
            .snapshot()
            .map_err(|e| format!("cannot snapshot the {what} workspace: {e}"))?;
        attest::verify_tree(&store, &tree, None, options)
            .map_err(|e| format!("cannot verify the {what} snapshot: {e}"))
    };
    let attested = verify("attested")?;
    if !attested.is_valid() {
        return Err(format!(
            "the attested snapshot does not verify: {}",
            attested.mismatches.join(", ")
        ));
    }
    write(root, "target.txt", after)?;
    let edited = verify("edited")?;
    if edited.is_valid() {
        return Err("the snapshot still verifies after target.txt was edited".into());
    }
    if !edited.mismatches.contains(&"snapshot_digest") {
        return Err(format!(
            "the edited snapshot is blocked without snapshot_digest: {}",
            edited.mismatches.join(", ")
        ));
    }
    Ok(())
}

/// Creates a throwaway repository in a fresh temporary directory (removed when dropped).
fn throwaway() -> Result<(tempfile::TempDir, Store), String> {
    let dir = tempfile::Builder::new()
        .prefix("hpp-control-")
        .tempdir()
        .map_err(|e| format!("cannot create a throwaway directory: {e}"))?;
    let store = Store::init(dir.path())
        .map_err(|e| format!("cannot create a throwaway repository: {e}"))?;
    // gix applies GIT_WORK_TREE (and friends) even to a repository it just created: a control
    // run from a git hook would then walk the caller's worktree. Refuse to run rather than
    // touch anything outside the throwaway directory.
    let inside = |path: Option<&Path>| {
        let own = dir.path().canonicalize().ok();
        path.and_then(|p| p.canonicalize().ok())
            .zip(own)
            .is_some_and(|(p, own)| p.starts_with(own))
    };
    if !inside(store.workdir()) || !inside(Some(store.common_dir())) {
        return Err(
            "the throwaway repository was redirected outside its directory by the environment \
             (GIT_WORK_TREE or GIT_DIR); run the controls without them"
                .into(),
        );
    }
    Ok((dir, store))
}

/// Commits the workspace as the first commit of the current branch: an attestation names the
/// repository by its root commit, so there must be one.
fn commit_workspace(store: &Store) -> Result<(), String> {
    let fail = |e: hpp_store::Error| format!("cannot commit the throwaway workspace: {e}");
    let tree = store.snapshot().map_err(fail)?;
    let commit = store
        .write_commit(&tree, &[], "control: the work as written\n")
        .map_err(fail)?;
    let branch = store
        .current_branch()
        .map_err(fail)?
        .ok_or("the throwaway repository has a detached HEAD")?;
    store
        .create_ref(&refs::branch(&branch), &commit)
        .map_err(fail)
}

fn loop_id(name: &str) -> Result<LoopId, String> {
    name.parse().map_err(|e: refs::InvalidLoopId| e.to_string())
}

fn write(root: &Path, name: &str, text: &str) -> Result<(), String> {
    std::fs::write(root.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passes(id: &str) {
        let control = find(id).expect("a listed control");
        assert_eq!((control.check)(), Ok(()), "{id}");
    }

    #[test]
    fn every_control_id_the_suites_accept_has_a_control_in_that_order() {
        let ids: Vec<&str> = CONTROLS.iter().map(|c| c.id).collect();
        assert_eq!(ids, hpp_core::evals::CONTROL_IDS);
    }

    #[test]
    fn the_manifest_lane_monitor_and_graph_controls_pass_in_both_directions() {
        for id in [
            "manifest-contract",
            "lane-collision",
            "monitor-freshness",
            "graph-determinism",
        ] {
            passes(id);
        }
    }

    #[test]
    fn every_control_id_is_unique() {
        let mut ids: Vec<&str> = CONTROLS.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CONTROLS.len());
        assert_eq!(CONTROLS.len(), 10);
    }

    #[test]
    fn the_workgraph_control_passes_in_both_directions() {
        assert_eq!(workgraph_waves(), Ok(()));
    }

    #[test]
    fn a_built_control_runs_k_times() {
        let CaseRun::Ran { outcomes, failures } = run(find("policy-enforcement").unwrap(), 3)
        else {
            panic!("policy-enforcement is built");
        };
        assert_eq!(outcomes, vec![true, true, true]);
        assert!(failures.is_empty());
    }

    #[test]
    fn policy_enforcement_passes_on_the_real_policy() {
        passes("policy-enforcement");
    }

    #[test]
    fn control_policy_enforcement_fails_in_each_direction() {
        let policy = Policy::built_in();
        let err = policy_directions(&policy, "rm -rf src", "rm -rf src").unwrap_err();
        assert!(err.contains("should be ALLOW, got BLOCK"), "{err}");
        let err = policy_directions(&policy, "ls", "python -m pytest -q").unwrap_err();
        assert!(err.contains("should be BLOCK, got ALLOW"), "{err}");
    }

    #[test]
    fn context_provenance_passes_on_the_real_compiler() {
        passes("context-provenance");
    }

    #[test]
    fn control_context_provenance_fails_in_each_direction() {
        let secret = json!([{"source": "env", "priority": 1, "content": "api_key=secret-value"}]);
        let clean = json!([{"source": "a", "priority": 1, "content": "plain text"}]);
        let err = context_directions(&secret, &secret).unwrap_err();
        assert!(err.contains("clean context was refused"), "{err}");
        let err = context_directions(&clean, &clean).unwrap_err();
        assert!(err.contains("compiled into the context"), "{err}");
    }

    #[test]
    fn routing_risk_floor_passes_on_the_real_router() {
        passes("routing-risk-floor");
    }

    #[test]
    fn control_routing_risk_floor_fails_in_each_direction() {
        let high =
            json!({"stage": "inspect", "risk": "high", "complexity": "low", "context": 1000});
        let low = json!({"stage": "inspect", "risk": "low", "complexity": "low", "context": 1000});
        let err = routing_directions(&high, &high).unwrap_err();
        assert!(err.contains("low-risk request was refused"), "{err}");
        let err = routing_directions(&low, &low).unwrap_err();
        assert!(err.contains("routed below the frontier floor"), "{err}");
    }

    #[test]
    fn event_evidence_gate_passes_on_the_real_loop() {
        passes("event-evidence-gate");
    }

    #[test]
    fn control_event_evidence_gate_fails_in_each_direction() {
        // Skipping the evidence event: the valid direction must fail.
        let err = event_gate_directions(&["work_started", "check_passed"], "verified").unwrap_err();
        assert!(err.contains("refused at check_passed"), "{err}");
        // A legal first event as the "premature" one: the refusal direction must fail.
        let err = event_gate_directions(&FULL_LOOP, "work_started").unwrap_err();
        assert!(err.contains("was accepted"), "{err}");
    }

    #[test]
    fn evidence_attestation_passes_on_a_throwaway_repository() {
        passes("evidence-attestation");
    }

    #[test]
    fn control_evidence_attestation_fails_when_the_edit_changes_nothing() {
        let err = attestation_directions("same\n", "same\n").unwrap_err();
        assert!(err.contains("still verifies"), "{err}");
    }
}
