//! Graph views of the manifest (capability, operational, agent, evidence, code) and mermaid.

use serde_json::Value;

/// Why a graph view could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The view is not built yet.
    #[error("graph views are not built yet")]
    NotBuilt,
}

/// The graph `view` of `manifest` as the reference's JSON document
/// (`{"protocol_version","view","nodes","edges"}`).
pub fn view(_manifest: &Value, _view: &str) -> Result<Value, Error> {
    Err(Error::NotBuilt)
}
