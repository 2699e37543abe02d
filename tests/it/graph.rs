//! `git hpp graph --view ...`: views of the manifest, sorted and deduplicated, the same sha256
//! for a permuted manifest, Mermaid escaping, and refusals with exit 2.

use assert_fs::prelude::*;
use hpp_core::record::sha256_hex;
use serde_json::{Value, json};

use crate::harness::Sandbox;

const MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/hpp.manifest.json");
const VIEWS: [&str; 5] = ["capability", "operational", "agent", "evidence", "code"];

fn manifest() -> Value {
    serde_json::from_str(&std::fs::read_to_string(MANIFEST).expect("readable")).expect("JSON")
}

fn write(sandbox: &Sandbox, name: &str, value: &Value) -> String {
    let file = sandbox.beside(name);
    file.write_str(&value.to_string())
        .expect("the sandbox is writable");
    file.display().to_string()
}

#[test]
fn every_view_is_declared_in_the_manifest_and_prints_sorted_unique_nodes_and_edges() {
    let sandbox = Sandbox::empty();
    let maps = manifest()["maps"].clone();
    for view in VIEWS {
        assert!(
            maps.as_array().expect("a list").contains(&json!(view)),
            "{view} is not in the manifest's maps"
        );
        let graph = sandbox.hpp(["graph", "--view", view]).json(0);
        assert_eq!(graph["view"], view);
        assert_eq!(graph["protocol_version"], "2.1");
        let ids: Vec<&str> = graph["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| n["id"].as_str().expect("id"))
            .collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted, "{view}: nodes sorted by id and unique");
        let edges: Vec<(String, String, String)> = graph["edges"]
            .as_array()
            .expect("edges")
            .iter()
            .map(|e| {
                (
                    e["from"].as_str().expect("from").to_owned(),
                    e["to"].as_str().expect("to").to_owned(),
                    e["relation"].as_str().expect("relation").to_owned(),
                )
            })
            .collect();
        let mut sorted_edges = edges.clone();
        sorted_edges.sort();
        assert_eq!(edges, sorted_edges, "{view}: edges sorted");
        assert!(!edges.is_empty(), "{view} has edges");
    }
}

#[test]
fn the_capability_view_shows_provides_supports_integrates_and_includes() {
    let sandbox = Sandbox::empty();
    let graph = sandbox.hpp(["graph", "--view", "capability"]).json(0);
    let relations: std::collections::BTreeSet<String> = graph["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            let r = e["relation"].as_str().expect("relation");
            r.split(':').next().expect("a name").to_owned()
        })
        .collect();
    for expected in ["provides", "supports", "integrates-with", "includes"] {
        assert!(relations.contains(expected), "{expected} in {relations:?}");
    }
}

#[test]
fn graph_output_has_the_same_sha256_over_two_runs_and_over_a_permuted_manifest() {
    let sandbox = Sandbox::empty();
    let permuted = crate::harness::write_reversed(&sandbox, "permuted.json", &manifest());
    for view in VIEWS {
        for format in ["json", "mermaid"] {
            let run = |extra: &[&str]| {
                let mut args = vec!["graph", "--view", view, "--format", format];
                args.extend(extra);
                sandbox.hpp_in(&sandbox.root, &args).ok()
            };
            let first = sha256_hex(run(&[]).as_bytes());
            assert_eq!(first, sha256_hex(run(&[]).as_bytes()), "{view} {format}");
            assert_eq!(
                first,
                sha256_hex(run(&["--manifest", &permuted]).as_bytes()),
                "{view} {format} changed with a permuted manifest"
            );
        }
    }
}

#[test]
fn mermaid_escapes_quotes_bars_angle_brackets_and_newlines() {
    let sandbox = Sandbox::empty();
    let mut value = manifest();
    value["modules"] = json!([{
        "id": "say \"hi\" | <b>\nnow", "version": "1", "path": "m",
        "components": ["a|b"], "hosts": {"codex": "native"}, "capabilities": ["x>y"]
    }]);
    value["bundles"] = json!({});
    let path = write(&sandbox, "odd.json", &value);
    let text = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "graph",
                "--view",
                "capability",
                "--format",
                "mermaid",
                "--manifest",
                &path,
            ],
        )
        .ok();
    assert!(text.starts_with("flowchart LR\n"));
    assert!(text.ends_with('\n'));
    assert!(
        text.contains("[\"say #quot;hi#quot; #124; #lt;b#gt; now\"]"),
        "{text}"
    );
    assert!(text.contains("[\"x#gt;y\"]"), "{text}");
    assert!(text.contains("-->|supports:native|"), "{text}");
    let code = sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "graph",
                "--view",
                "code",
                "--format",
                "mermaid",
                "--manifest",
                &path,
            ],
        )
        .ok();
    assert!(code.contains("[\"a#124;b\"]"), "{code}");
    // Nodes are numbered by sorted id: n0 is the first id in order.
    let operational = sandbox
        .hpp(["graph", "--view", "operational", "--format", "mermaid"])
        .ok();
    assert!(operational.contains("  n0[\"closure\"]\n"), "{operational}");
}

#[test]
fn an_unknown_view_a_bad_manifest_and_a_view_missing_blocks_are_refused_with_exit_2() {
    let sandbox = Sandbox::empty();
    assert!(
        sandbox
            .hpp(["graph", "--view", "feed"])
            .refused()
            .starts_with("unknown graph view: feed")
    );
    let bad = sandbox.path("bad.json");
    std::fs::write(&bad, "{\"protocol_version\": ").expect("writable");
    sandbox
        .hpp_in(
            &sandbox.root,
            &[
                "graph",
                "--view",
                "agent",
                "--manifest",
                bad.to_str().expect("utf-8"),
            ],
        )
        .refused();
    let mut value = manifest();
    value.as_object_mut().expect("object").remove("bundles");
    let path = write(&sandbox, "nobundles.json", &value);
    assert_eq!(
        sandbox
            .hpp_in(
                &sandbox.root,
                &["graph", "--view", "capability", "--manifest", &path]
            )
            .refused(),
        "manifest bundles must be an object"
    );
}

#[test]
fn control_a_view_the_manifest_does_not_declare_is_refused() {
    let sandbox = Sandbox::empty();
    let mut value = manifest();
    value["maps"] = json!(["capability"]);
    let path = write(&sandbox, "narrow.json", &value);
    assert_eq!(
        sandbox
            .hpp_in(
                &sandbox.root,
                &["graph", "--view", "operational", "--manifest", &path]
            )
            .refused(),
        "graph view operational is not declared in the manifest's maps"
    );
    sandbox
        .hpp_in(
            &sandbox.root,
            &["graph", "--view", "capability", "--manifest", &path],
        )
        .ok();
}

#[test]
fn inside_a_repository_the_repository_manifest_is_read() {
    let sandbox = Sandbox::repo();
    let mut value = manifest();
    value["hosts"] = json!(["only-here"]);
    value["modules"] = json!([]);
    value["bundles"] = json!({});
    std::fs::write(sandbox.root.join("hpp.manifest.json"), value.to_string()).expect("writable");
    let graph = sandbox.hpp(["graph", "--view", "capability"]).json(0);
    assert_eq!(
        graph["nodes"],
        json!([{"id": "host:only-here", "kind": "host", "label": "only-here"}])
    );
}
