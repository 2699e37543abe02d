//! The context map (`hpp.map/v1`, view `context`): the context compiler's provenance under a
//! budget.

use serde::Serialize;
use serde_json::Value;

use super::{Error, SCHEMA};
use crate::context;
use crate::graph::{Graph, edge, node};
use crate::int::Int;

/// One block's provenance in a context map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextProvenance {
    /// The compiler's record of the block.
    #[serde(flatten)]
    pub record: context::Provenance,
    /// `included` or `omitted`.
    pub status: &'static str,
}

/// A context map, `hpp.map/v1` view `context`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextMap {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// Always `context`.
    pub view: &'static str,
    /// Sources → `context:compiled`, `included` or `omitted`.
    #[serde(flatten)]
    pub graph: Graph,
    /// The budget, in characters (an integer of any size).
    pub budget: Int,
    /// Characters used, separators included.
    pub used: u64,
    /// `budget - used`.
    pub remaining: Int,
    /// Every block, sorted by source.
    pub provenance: Vec<ContextProvenance>,
}

/// Projects the context compiler's provenance for `inputs` under `budget`.
pub fn context_map(inputs: &Value, budget: impl Into<Int>) -> Result<ContextMap, Error> {
    let compiled = context::compile(inputs, budget)?;
    let mut nodes = vec![node("context:compiled", "context", "compiled context")];
    let mut edges = Vec::new();
    let mut provenance = Vec::new();
    for (status, records) in [
        ("included", &compiled.included),
        ("omitted", &compiled.omitted),
    ] {
        for record in records {
            let source = format!("source:{}", record.source);
            nodes.push(node(&source, "source", &record.source));
            edges.push(edge(source, "context:compiled", status));
            provenance.push(ContextProvenance {
                record: record.clone(),
                status,
            });
        }
    }
    provenance.sort_by(|a, b| a.record.source.cmp(&b.record.source));
    Ok(ContextMap {
        schema: SCHEMA,
        view: "context",
        graph: Graph::new(nodes, edges),
        budget: compiled.budget,
        used: compiled.used,
        remaining: compiled.remaining,
        provenance,
    })
}
