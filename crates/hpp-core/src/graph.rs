//! Graph views of the manifest (CONCEPTS.md "module" and "gate": `git hpp graph --view
//! capability|operational|agent|evidence|code`) and their Mermaid drawing.
//!
//! A view is a projection of `hpp.manifest.json`: nodes `{id, kind, label}` sorted by id and
//! deduplicated, edges `{from, to, relation}` sorted by `(from, to, relation)`, so the same
//! manifest gives the same bytes whatever order its arrays and objects were written in.
//! [`to_mermaid`] draws any such graph (the maps' too) as a `flowchart LR`. Pure: touches no refs.
//!
//! ```
//! let manifest = hpp_core::manifest::Manifest::built_in();
//! let view = hpp_core::graph::build(manifest.value(), hpp_core::graph::View::Operational)
//!     .expect("the built-in manifest has a loop");
//! assert!(view.graph.nodes.iter().any(|n| n.id == "gate:fresh-evidence"));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde_json::Value;

use crate::record::{canonical_json, sha256_hex};

/// Why a graph view could not be built or drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The view name is not one of [`View::ALL`].
    #[error(
        "unknown graph view: {0} (expected one of capability, operational, agent, evidence, code)"
    )]
    UnknownView(String),
    /// A block of the manifest the view reads is missing or has the wrong shape.
    #[error("manifest {field} must be {expected}")]
    Shape {
        /// The manifest field, dotted (`modules[2].hosts`).
        field: String,
        /// What it must be.
        expected: &'static str,
    },
    /// The manifest does not declare the view in its `maps` list.
    #[error("graph view {0} is not declared in the manifest's maps")]
    Undeclared(String),
    /// A cluster names a node the graph does not have.
    #[error("cluster {cluster:?} names an unknown node: {node}")]
    ClusterNode {
        /// The cluster's label.
        cluster: String,
        /// The node id.
        node: String,
    },
    /// A node is listed in two clusters.
    #[error("node {0} is in more than one cluster")]
    ClusterTwice(String),
    /// An edge names a node the graph does not have.
    #[error("edge {from} -> {to} names an unknown node")]
    EdgeNode {
        /// The edge's source.
        from: String,
        /// The edge's target.
        to: String,
    },
}

/// One node of a graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Node {
    /// Unique id, `<kind>:<name>`.
    pub id: String,
    /// What the node is (`module`, `gate`, `lane`, ...).
    pub kind: String,
    /// What a drawing shows.
    pub label: String,
}

/// One edge of a graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    /// The source node's id.
    pub from: String,
    /// The target node's id.
    pub to: String,
    /// What the edge means (`provides`, `owns:alive`, ...).
    pub relation: String,
}

/// A graph: nodes sorted by id and deduplicated, edges sorted by `(from, to, relation)`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Graph {
    /// The nodes, sorted by id.
    pub nodes: Vec<Node>,
    /// The edges, sorted.
    pub edges: Vec<Edge>,
}

impl Graph {
    /// Returns the graph of `nodes` and `edges` in canonical order: one node per id (the last
    /// one listed wins, as the reference's dict does), edges sorted; duplicate edges are kept.
    pub fn new(nodes: Vec<Node>, mut edges: Vec<Edge>) -> Self {
        let mut unique: BTreeMap<String, Node> = BTreeMap::new();
        for node in nodes {
            unique.insert(node.id.clone(), node);
        }
        edges.sort();
        Self {
            nodes: unique.into_values().collect(),
            edges,
        }
    }
}

/// Returns a node.
pub fn node(id: impl Into<String>, kind: &str, label: impl Into<String>) -> Node {
    Node {
        id: id.into(),
        kind: kind.to_owned(),
        label: label.into(),
    }
}

/// Returns an edge.
pub fn edge(from: impl Into<String>, to: impl Into<String>, relation: impl Into<String>) -> Edge {
    Edge {
        from: from.into(),
        to: to.into(),
        relation: relation.into(),
    }
}

/// The graph views of the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum View {
    /// Hosts, modules, capabilities and bundles.
    Capability,
    /// The loop's states and gates.
    Operational,
    /// The maker, checker and human-gate roles.
    Agent,
    /// A criterion, its evidence and the verdict it supports.
    Evidence,
    /// Modules and the components they declare.
    Code,
}

impl View {
    /// Every view, in the order the reference lists them.
    pub const ALL: [View; 5] = [
        View::Capability,
        View::Operational,
        View::Agent,
        View::Evidence,
        View::Code,
    ];

    /// Returns the view's name.
    pub fn as_str(self) -> &'static str {
        match self {
            View::Capability => "capability",
            View::Operational => "operational",
            View::Agent => "agent",
            View::Evidence => "evidence",
            View::Code => "code",
        }
    }
}

impl fmt::Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for View {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        View::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| Error::UnknownView(s.to_owned()))
    }
}

/// A graph view as the reference prints it: `{"protocol_version", "view", "nodes", "edges"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ViewGraph {
    /// The manifest's protocol version.
    pub protocol_version: String,
    /// The view's name.
    pub view: &'static str,
    /// The nodes and edges.
    #[serde(flatten)]
    pub graph: Graph,
}

/// Returns the graph `view` of `manifest` as the reference's JSON document
/// (`{"protocol_version","view","nodes","edges"}`).
pub fn view(manifest: &Value, view: &str) -> Result<Value, Error> {
    let built = build(manifest, view.parse()?)?;
    Ok(serde_json::to_value(built).expect("a graph view serialises to JSON"))
}

/// Refuses a view the manifest does not declare in its `maps` list (the CLI's views must be a
/// subset of it).
pub fn require_declared(manifest: &Value, view: &str) -> Result<(), Error> {
    let maps = manifest
        .get("maps")
        .and_then(Value::as_array)
        .ok_or_else(|| shape("maps", "a list of view names"))?;
    if maps.iter().any(|m| m.as_str() == Some(view)) {
        Ok(())
    } else {
        Err(Error::Undeclared(view.to_owned()))
    }
}

fn shape(field: impl Into<String>, expected: &'static str) -> Error {
    Error::Shape {
        field: field.into(),
        expected,
    }
}

fn array<'a>(value: &'a Value, key: &str, field: &str) -> Result<&'a Vec<Value>, Error> {
    value
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| shape(field, "a list"))
}

fn string(value: &Value, field: String) -> Result<&str, Error> {
    value
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| shape(field, "a non-empty string"))
}

fn strings<'a>(value: &'a Value, key: &str, field: &str) -> Result<Vec<&'a str>, Error> {
    match value.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| string(v, format!("{field}[{i}]")))
            .collect(),
        Some(_) => Err(shape(field, "a list of strings")),
    }
}

/// Builds one graph view of `manifest`; refuses a manifest without the blocks the view reads.
pub fn build(manifest: &Value, view: View) -> Result<ViewGraph, Error> {
    let protocol_version = manifest
        .get("protocol_version")
        .and_then(Value::as_str)
        .ok_or_else(|| shape("protocol_version", "a string"))?
        .to_owned();
    let (nodes, edges) = match view {
        View::Capability => capability(manifest)?,
        View::Operational => operational(manifest)?,
        View::Agent => (
            vec![
                node("role:maker", "role", "maker"),
                node("role:checker", "role", "checker (read-only)"),
                node("role:human-gate", "role", "human gate"),
            ],
            vec![
                edge("role:maker", "role:checker", "submits"),
                edge("role:checker", "role:human-gate", "reports"),
                edge("role:human-gate", "role:maker", "approves-or-returns"),
            ],
        ),
        View::Evidence => (
            vec![
                node("criterion:fresh-evidence", "criterion", "fresh evidence"),
                node("evidence:record", "evidence", "recorded evidence"),
                node("verdict:verified", "verdict", "verified"),
            ],
            vec![
                edge("criterion:fresh-evidence", "evidence:record", "requires"),
                edge("evidence:record", "verdict:verified", "supports"),
            ],
        ),
        View::Code => code(manifest)?,
    };
    Ok(ViewGraph {
        protocol_version,
        view: view.as_str(),
        graph: Graph::new(nodes, edges),
    })
}

type Parts = (Vec<Node>, Vec<Edge>);

fn capability(manifest: &Value) -> Result<Parts, Error> {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for (i, host) in array(manifest, "hosts", "hosts")?.iter().enumerate() {
        let host = string(host, format!("hosts[{i}]"))?;
        nodes.push(node(format!("host:{host}"), "host", host));
    }
    for (i, module) in array(manifest, "modules", "modules")?.iter().enumerate() {
        let field = format!("modules[{i}]");
        let id = string(
            module.get("id").unwrap_or(&Value::Null),
            format!("{field}.id"),
        )?;
        let module_node = format!("module:{id}");
        nodes.push(node(&module_node, "module", id));
        for capability in strings(module, "capabilities", &format!("{field}.capabilities"))? {
            let capability_node = format!("capability:{capability}");
            nodes.push(node(&capability_node, "capability", capability));
            edges.push(edge(&module_node, capability_node, "provides"));
        }
        let hosts = match module.get("hosts") {
            None => None,
            Some(Value::Object(hosts)) => Some(hosts),
            Some(_) => return Err(shape(format!("{field}.hosts"), "an object")),
        };
        for (host, coverage) in hosts.into_iter().flatten() {
            let coverage = string(coverage, format!("{field}.hosts.{host}"))?;
            edges.push(edge(
                &module_node,
                format!("host:{host}"),
                format!("supports:{coverage}"),
            ));
        }
        for dependency in strings(module, "requires", &format!("{field}.requires"))? {
            edges.push(edge(
                &module_node,
                format!("module:{dependency}"),
                "requires",
            ));
        }
        for other in strings(
            module,
            "integrates_with",
            &format!("{field}.integrates_with"),
        )? {
            edges.push(edge(
                &module_node,
                format!("module:{other}"),
                "integrates-with",
            ));
        }
    }
    let bundles = match manifest.get("bundles") {
        Some(Value::Object(bundles)) => bundles,
        _ => return Err(shape("bundles", "an object")),
    };
    for (name, bundle) in bundles {
        let bundle_node = format!("bundle:{name}");
        nodes.push(node(&bundle_node, "bundle", name));
        for module in strings(bundle, "modules", &format!("bundles.{name}.modules"))? {
            edges.push(edge(&bundle_node, format!("module:{module}"), "includes"));
        }
    }
    Ok((nodes, edges))
}

fn operational(manifest: &Value) -> Result<Parts, Error> {
    let block = manifest
        .get("loop")
        .ok_or_else(|| shape("loop", "an object"))?;
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for (i, t) in array(block, "transitions", "loop.transitions")?
        .iter()
        .enumerate()
    {
        let part = |key: &str| {
            string(
                t.get(key).unwrap_or(&Value::Null),
                format!("loop.transitions[{i}].{key}"),
            )
        };
        let (from, to, gate, event) = (part("from")?, part("to")?, part("gate")?, part("event")?);
        nodes.push(node(format!("state:{from}"), "state", from));
        nodes.push(node(format!("state:{to}"), "state", to));
        nodes.push(node(format!("gate:{gate}"), "gate", gate));
        edges.push(edge(format!("state:{from}"), format!("gate:{gate}"), event));
        edges.push(edge(
            format!("gate:{gate}"),
            format!("state:{to}"),
            "permits",
        ));
    }
    Ok((nodes, edges))
}

fn code(manifest: &Value) -> Result<Parts, Error> {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for (i, module) in array(manifest, "modules", "modules")?.iter().enumerate() {
        let field = format!("modules[{i}]");
        let id = string(
            module.get("id").unwrap_or(&Value::Null),
            format!("{field}.id"),
        )?;
        let module_node = format!("module:{id}");
        nodes.push(node(&module_node, "module", id));
        for component in strings(module, "components", &format!("{field}.components"))? {
            let component_node = format!("component:{id}:{component}");
            nodes.push(node(&component_node, "component", component));
            edges.push(edge(&module_node, component_node, "declares"));
        }
    }
    Ok((nodes, edges))
}

/// A group of nodes drawn as one Mermaid `subgraph`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// The subgraph's title.
    pub label: String,
    /// The ids of its nodes.
    pub nodes: Vec<String>,
}

/// Returns `text` as Mermaid reads it inside a label or an edge text: `"` `|` `<` `>` become
/// entity codes and line breaks become spaces, so no label can end its statement early.
pub fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("#quot;"),
            '|' => out.push_str("#124;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(' ');
            }
            '\n' => out.push(' '),
            other => out.push(other),
        }
    }
    out
}

/// Draws `graph` as a Mermaid `flowchart LR`: nodes numbered `n<i>` in sorted id order, each
/// cluster a `subgraph c<k>` in the order given, edges `nA -->|relation| nB` in sorted order,
/// and a trailing newline. The same graph gives the same bytes whatever order it was listed in.
pub fn to_mermaid(graph: &Graph, clusters: &[Cluster]) -> Result<String, Error> {
    let labels: BTreeMap<&str, String> = graph
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), mermaid_text(&n.label)))
        .collect();
    let index: BTreeMap<&str, usize> = labels.keys().enumerate().map(|(i, id)| (*id, i)).collect();
    let mut grouped: BTreeSet<&str> = BTreeSet::new();
    for cluster in clusters {
        for id in &cluster.nodes {
            if !index.contains_key(id.as_str()) {
                return Err(Error::ClusterNode {
                    cluster: cluster.label.clone(),
                    node: id.clone(),
                });
            }
            if !grouped.insert(id.as_str()) {
                return Err(Error::ClusterTwice(id.clone()));
            }
        }
    }
    let mut lines = vec!["flowchart LR".to_owned()];
    for (id, label) in &labels {
        if !grouped.contains(id) {
            lines.push(format!("  n{}[\"{label}\"]", index[id]));
        }
    }
    for (k, cluster) in clusters.iter().enumerate() {
        lines.push(format!(
            "  subgraph c{k}[\"{}\"]",
            mermaid_text(&cluster.label)
        ));
        let mut members: Vec<usize> = cluster.nodes.iter().map(|id| index[id.as_str()]).collect();
        members.sort_unstable();
        for i in members {
            let id = labels.keys().nth(i).expect("an index names a node");
            lines.push(format!("    n{i}[\"{}\"]", labels[id]));
        }
        lines.push("  end".to_owned());
    }
    let mut edges: Vec<&Edge> = graph.edges.iter().collect();
    edges.sort();
    for e in edges {
        let (Some(from), Some(to)) = (index.get(e.from.as_str()), index.get(e.to.as_str())) else {
            return Err(Error::EdgeNode {
                from: e.from.clone(),
                to: e.to.clone(),
            });
        };
        lines.push(format!(
            "  n{from} -->|{}| n{to}",
            mermaid_text(&e.relation)
        ));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    Ok(text)
}

/// The graph-determinism control: every view of `manifest` is non-empty and gives the same
/// canonical bytes and the same Mermaid bytes when the manifest's arrays are listed in reverse.
/// `Err` says what differed.
pub fn determinism_control(manifest: &Value) -> Result<(), String> {
    let reversed = reverse_arrays(manifest);
    for view in View::ALL {
        let a = build(manifest, view).map_err(|e| format!("{view}: {e}"))?;
        let b = build(&reversed, view).map_err(|e| format!("{view} (permuted): {e}"))?;
        if a.graph.nodes.is_empty() {
            return Err(format!("the {view} view is empty"));
        }
        let bytes = |g: &ViewGraph| {
            canonical_json(&serde_json::to_value(g).expect("a graph view serialises"))
        };
        if sha256_hex(&bytes(&a)) != sha256_hex(&bytes(&b)) {
            return Err(format!(
                "the {view} view changed when its input was permuted"
            ));
        }
        let draw = |g: &ViewGraph| to_mermaid(&g.graph, &[]).map_err(|e| e.to_string());
        if draw(&a)? != draw(&b)? {
            return Err(format!(
                "the {view} Mermaid drawing changed when its input was permuted"
            ));
        }
    }
    Ok(())
}

/// Returns `value` with every array reversed, at every depth (a permutation that keeps meaning
/// for a manifest, whose lists are sets).
pub fn reverse_arrays(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().rev().map(reverse_arrays).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), reverse_arrays(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;
    use serde_json::json;

    #[test]
    fn every_view_of_the_built_in_manifest_is_declared_and_not_empty() {
        let manifest = Manifest::built_in();
        for view in View::ALL {
            require_declared(manifest.value(), view.as_str()).expect("declared");
            let built = build(manifest.value(), view).expect("builds");
            assert!(!built.graph.nodes.is_empty(), "{view}");
            assert!(!built.graph.edges.is_empty(), "{view}");
        }
    }

    #[test]
    fn the_operational_view_routes_each_event_through_its_gate() {
        let built = build(Manifest::built_in().value(), View::Operational).expect("builds");
        assert!(built.graph.edges.contains(&edge(
            "state:active",
            "gate:fresh-evidence",
            "evidence_recorded"
        )));
        assert!(built.graph.edges.contains(&edge(
            "gate:fresh-evidence",
            "state:evidenced",
            "permits"
        )));
    }

    #[test]
    fn the_built_in_manifest_passes_the_determinism_control() {
        assert_eq!(determinism_control(Manifest::built_in().value()), Ok(()));
    }

    #[test]
    fn control_an_unknown_view_is_refused() {
        assert_eq!(
            view(Manifest::built_in().value(), "feed"),
            Err(Error::UnknownView("feed".into()))
        );
        assert!(matches!(
            build(&json!({"protocol_version": "2.1"}), View::Capability),
            Err(Error::Shape { .. })
        ));
    }

    #[test]
    fn control_the_determinism_control_fails_on_an_empty_view() {
        let manifest = json!({"protocol_version": "2.1", "hosts": [], "modules": [],
            "bundles": {}, "loop": {"transitions": []}});
        assert!(determinism_control(&manifest).is_err());
    }

    #[test]
    fn mermaid_escapes_what_would_end_a_label() {
        assert_eq!(
            mermaid_text("a\"b|c<d>e\r\nf\ng\rh"),
            "a#quot;b#124;c#lt;d#gt;e f g h"
        );
        let graph = Graph::new(
            vec![node("b", "k", "B|\"x\""), node("a", "k", "<A>")],
            vec![edge("b", "a", "r|s"), edge("a", "b", "t")],
        );
        assert_eq!(
            to_mermaid(&graph, &[]).expect("draws"),
            "flowchart LR\n  n0[\"#lt;A#gt;\"]\n  n1[\"B#124;#quot;x#quot;\"]\n  n0 -->|t| n1\n  n1 -->|r#124;s| n0\n"
        );
    }

    #[test]
    fn mermaid_clusters_hold_their_nodes_in_id_order() {
        let graph = Graph::new(
            vec![
                node("c", "k", "C"),
                node("b", "k", "B"),
                node("a", "k", "A"),
            ],
            vec![],
        );
        let clusters = [Cluster {
            label: "wave 1".into(),
            nodes: vec!["c".into(), "a".into()],
        }];
        assert_eq!(
            to_mermaid(&graph, &clusters).expect("draws"),
            "flowchart LR\n  n1[\"B\"]\n  subgraph c0[\"wave 1\"]\n    n0[\"A\"]\n    n2[\"C\"]\n  end\n"
        );
        let twice = [clusters[0].clone(), clusters[0].clone()];
        assert_eq!(
            to_mermaid(&graph, &twice),
            Err(Error::ClusterTwice("c".into()))
        );
    }
}
