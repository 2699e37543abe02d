//! The agent map (`hpp.map/v1`, view `agent`): roles, modules and the capabilities they provide,
//! and an execution chain of events, as a graph.

use serde::Serialize;
use serde_json::Value;

use super::{Error, SCHEMA, non_empty_str};
use crate::graph::{Edge, Graph, Node, edge, node};

/// A map that is only a graph: the agent map (`view: agent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphMap {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The view's name.
    pub view: &'static str,
    /// The nodes and edges.
    #[serde(flatten)]
    pub graph: Graph,
}

/// Projects the manifest's roles, its modules and the capabilities they provide, and the
/// `events` (a JSON array of `{"type", ...}`) as an execution chain `event:<i>:<type>` linked
/// by `then`.
pub fn agent_map(manifest: &Value, events: Option<&Value>) -> Result<GraphMap, Error> {
    let manifest = manifest
        .as_object()
        .ok_or(Error::Manifest("must be an object"))?;
    let empty = Vec::new();
    let roles = match manifest.get("roles") {
        None => &empty,
        Some(Value::Array(r)) => r,
        Some(_) => return Err(Error::Manifest("roles must be strings")),
    };
    let mut nodes: Vec<Node> = Vec::new();
    let mut edges: Vec<Edge> = Vec::new();
    for role in roles {
        let role = non_empty_str(Some(role)).ok_or(Error::Manifest("roles must be strings"))?;
        nodes.push(node(format!("role:{role}"), "role", role));
    }
    let modules = match manifest.get("modules") {
        None => &empty,
        Some(Value::Array(m)) => m,
        Some(_) => return Err(Error::Manifest("modules must be a list")),
    };
    for module in modules {
        let id = non_empty_str(module.get("id")).ok_or(Error::ModuleId)?;
        let module_node = format!("module:{id}");
        nodes.push(node(&module_node, "module", id));
        let capabilities = match module.get("capabilities") {
            None => &empty,
            Some(Value::Array(c)) => c,
            Some(_) => return Err(Error::Capability(id.to_owned())),
        };
        for capability in capabilities {
            let capability =
                non_empty_str(Some(capability)).ok_or_else(|| Error::Capability(id.to_owned()))?;
            let capability_node = format!("capability:{capability}");
            nodes.push(node(&capability_node, "capability", capability));
            edges.push(edge(&module_node, capability_node, "provides"));
        }
    }
    if let Some(events) = events {
        let events = events.as_array().ok_or(Error::NotAList("events"))?;
        let mut previous: Option<String> = None;
        for (i, event) in events.iter().enumerate() {
            let kind = non_empty_str(event.get("type")).ok_or(Error::EventType(i + 1))?;
            let event_node = format!("event:{}:{kind}", i + 1);
            nodes.push(node(&event_node, "execution", kind));
            if let Some(prev) = previous.replace(event_node.clone()) {
                edges.push(edge(prev, event_node, "then"));
            }
        }
    }
    Ok(GraphMap {
        schema: SCHEMA,
        view: "agent",
        graph: Graph::new(nodes, edges),
    })
}
