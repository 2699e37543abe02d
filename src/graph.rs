//! Graph views of the manifest (capability, operational, agent, evidence, code) and mermaid.
