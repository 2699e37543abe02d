//! The protocol manifest, `hpp.manifest.json`: what this module reads of it so far.
//!
//! CONCEPTS.md "manifest": the single declaration of the protocol (roles, the loop and its
//! gates, exit codes). The copy at the root of this crate is compiled into the binary as
//! [`BUILT_IN`], which plays the part of the reference harness's packaged manifest: a repository
//! without its own `hpp.manifest.json` uses it. This module is pure; finding and reading the file
//! is the caller's job.
//!
//! Two levels, on purpose: [`Manifest::parse`] checks what every command needs (a JSON object,
//! protocol 2.1, a valid loop), so a repository whose module block is half-edited can still
//! record events; [`validate`] applies the whole protocol (hosts, modules, hooks, bundles, exit
//! codes, routing, maps, installer, monitors) and is what `git hpp doctor`, `install` and `init`
//! enforce.

mod validate;

pub use validate::{
    BundleDecl, COVERAGES, Census, EXIT_CODES, EXIT_POLICIES, HookDecl, Invalid, ModuleDecl,
    ROUTING_TIERS, Validated, is_inside, validate,
};

use serde_json::Value;

use crate::event_loop::{self, LoopSpec};

/// The protocol version this implementation speaks.
pub const PROTOCOL_VERSION: &str = "2.1";

/// The manifest compiled into the binary.
pub const BUILT_IN: &str = include_str!("../../../../hpp.manifest.json");

/// The file name looked up at the root of a worktree.
pub const FILE_NAME: &str = "hpp.manifest.json";

/// Why a manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The bytes are not a JSON object.
    #[error("{origin} is not a JSON object: {detail}")]
    NotJson {
        /// Where the manifest came from.
        origin: String,
        /// The parser's message.
        detail: String,
    },
    /// `protocol_version` is not the one spoken here.
    #[error("{origin}: protocol_version must be {PROTOCOL_VERSION}")]
    ProtocolVersion {
        /// Where the manifest came from.
        origin: String,
    },
    /// The `loop` block is missing or invalid.
    #[error("{origin}: {source}")]
    Loop {
        /// Where the manifest came from.
        origin: String,
        /// What is wrong with the block.
        source: event_loop::Error,
    },
}

/// A parsed manifest, with the loop machine already validated.
#[derive(Debug, Clone)]
pub struct Manifest {
    origin: String,
    loop_spec: LoopSpec,
    value: Value,
}

impl Manifest {
    /// Parses a manifest; `origin` names it in error messages (a path, or "built-in manifest").
    pub fn parse(text: &str, origin: &str) -> Result<Self, Error> {
        let value: Value = serde_json::from_str(text).map_err(|e| Error::NotJson {
            origin: origin.to_owned(),
            detail: e.to_string(),
        })?;
        if !value.is_object() {
            return Err(Error::NotJson {
                origin: origin.to_owned(),
                detail: "root is not an object".into(),
            });
        }
        if value.get("protocol_version").and_then(Value::as_str) != Some(PROTOCOL_VERSION) {
            return Err(Error::ProtocolVersion {
                origin: origin.to_owned(),
            });
        }
        let block = value.get("loop").ok_or_else(|| Error::Loop {
            origin: origin.to_owned(),
            source: event_loop::Error::InvalidSpec("the manifest has no loop block".into()),
        })?;
        let loop_spec = LoopSpec::from_json(block).map_err(|source| Error::Loop {
            origin: origin.to_owned(),
            source,
        })?;
        Ok(Self {
            origin: origin.to_owned(),
            loop_spec,
            value,
        })
    }

    /// Returns the manifest compiled into the binary.
    pub fn built_in() -> Self {
        Self::parse(BUILT_IN, "built-in manifest")
            .expect("the built-in manifest is valid: a unit test parses it")
    }

    /// Returns where this manifest came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Returns the whole document, for readers of the blocks this module does not model
    /// (graph views, maps, the doctor).
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Returns the loop machine.
    pub fn loop_spec(&self) -> &LoopSpec {
        &self.loop_spec
    }
}

/// The `manifest-contract` control, in both directions: the built-in manifest validates, and
/// the same manifest with its first hook's capabilities removed is refused.
pub fn contract_control() -> Result<(), String> {
    let value: Value = serde_json::from_str(BUILT_IN).map_err(|e| e.to_string())?;
    contract_directions(&value)
}

/// Runs the `manifest-contract` control on `good`: it must validate, and a copy whose first hook
/// has no `capabilities` must be refused for exactly that reason.
pub fn contract_directions(good: &Value) -> Result<(), String> {
    validate(good).map_err(|e| format!("the manifest should validate: {e}"))?;
    let mut bad = good.clone();
    let hook = bad
        .get_mut("hooks")
        .and_then(Value::as_array_mut)
        .and_then(|hooks| hooks.first_mut())
        .and_then(Value::as_object_mut)
        .ok_or("the manifest declares no hook to mutate")?;
    let id = hook
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    hook.remove("capabilities");
    match validate(&bad) {
        Err(Invalid::HookCapabilities { hook }) if hook == id => Ok(()),
        Err(other) => Err(format!(
            "a hook without capabilities was refused for another reason: {other}"
        )),
        Ok(_) => Err("a hook without capabilities was accepted".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_manifest_parses() {
        assert_eq!(Manifest::built_in().loop_spec().initial(), "planned");
    }

    #[test]
    fn control_wrong_protocol_version_and_missing_loop_are_refused() {
        let err = Manifest::parse(r#"{"protocol_version":"2.0","loop":{}}"#, "m.json").unwrap_err();
        assert_eq!(err.to_string(), "m.json: protocol_version must be 2.1");
        let err = Manifest::parse(r#"{"protocol_version":"2.1"}"#, "m.json").unwrap_err();
        assert!(err.to_string().contains("no loop block"), "{err}");
        let err = Manifest::parse("[]", "m.json").unwrap_err();
        assert!(err.to_string().contains("not a JSON object"), "{err}");
    }

    fn built_in_value() -> Value {
        serde_json::from_str(BUILT_IN).unwrap()
    }

    #[test]
    fn the_built_in_manifest_passes_every_rule_and_its_census_lists_every_group() {
        let validated = validate(&built_in_value()).unwrap();
        let census = validated.census();
        assert_eq!(census.declared, validated.hooks.len());
        assert_eq!(census.by_capability.len(), validated.vocabulary.len());
        assert_eq!(census.by_capability["transcript-derived-llm-egress"], 0);
        assert_eq!(census.by_exit_policy.len(), 3);
    }

    #[test]
    fn the_manifest_contract_control_passes() {
        contract_control().unwrap();
    }

    #[test]
    fn control_every_rule_refuses_its_mutation_with_its_sentence() {
        type Mutation = fn(&mut Value);
        let cases: Vec<(Mutation, &str)> = vec![
            (
                |v| v["protocol_version"] = "2.0".into(),
                "protocol_version must be 2.1",
            ),
            (
                |v| v["exit_codes"]["error"] = 4.into(),
                "exit_codes must be exactly",
            ),
            (
                |v| {
                    v["exit_codes"]
                        .as_object_mut()
                        .unwrap()
                        .insert("extra".into(), 5.into());
                },
                "exit_codes must be exactly",
            ),
            (
                |v| v["hosts"] = serde_json::json!([]),
                "hosts must be a non-empty list",
            ),
            (
                |v| v["hosts"] = serde_json::json!(["codex", "codex"]),
                "hosts has a duplicate entry: codex",
            ),
            (
                |v| v["hook_capabilities"] = serde_json::json!([]),
                "hook_capabilities must be a non-empty list",
            ),
            (
                |v| v["modules"] = serde_json::json!([]),
                "modules must be a non-empty list",
            ),
            (
                |v| v["modules"][1]["id"] = "operator-kit".into(),
                "modules has a duplicate entry: operator-kit",
            ),
            (
                |v| v["modules"][0]["version"] = "".into(),
                "modules[operator-kit].version must be a non-empty string",
            ),
            (
                |v| v["modules"][0]["path"] = "/abs".into(),
                "modules[operator-kit].path must be a relative path",
            ),
            (
                |v| v["modules"][0]["path"] = "../out".into(),
                "modules[operator-kit].path must be a relative path",
            ),
            (
                |v| v["modules"][1]["path"] = v["modules"][0]["path"].clone(),
                "modules[].path has a duplicate entry",
            ),
            (
                |v| v["modules"][0]["capabilities"] = serde_json::json!([]),
                "modules[operator-kit].capabilities must be a non-empty list",
            ),
            (
                |v| v["modules"][0]["capabilities"] = serde_json::json!(["a", "a"]),
                "modules[operator-kit].capabilities has a duplicate entry: a",
            ),
            (
                |v| v["modules"][0]["hosts"]["cursor"] = "native".into(),
                "module operator-kit declares an unknown host: cursor",
            ),
            (
                |v| {
                    v["modules"][0]["hosts"]
                        .as_object_mut()
                        .unwrap()
                        .remove("codex");
                },
                "module operator-kit must declare hosts.codex as one of",
            ),
            (
                |v| v["modules"][0]["hosts"]["codex"] = "maybe".into(),
                "module operator-kit must declare hosts.codex as one of",
            ),
            (
                |v| v["modules"][0]["requires"] = serde_json::json!(["ghost"]),
                "modules[operator-kit].requires names an unknown module: ghost",
            ),
            (
                |v| v["modules"][0]["integrates_with"] = serde_json::json!(["ghost"]),
                "modules[operator-kit].integrates_with names an unknown module: ghost",
            ),
            (
                |v| {
                    v["modules"][0]["requires"] = serde_json::json!(["lane-kit"]);
                    v["modules"][1]["requires"] = serde_json::json!(["operator-kit"]);
                },
                "dependency cycle: operator-kit -> lane-kit -> operator-kit",
            ),
            (
                |v| v["hooks"] = serde_json::json!([]),
                "hooks must be a non-empty list",
            ),
            (
                |v| v["hooks"][1]["id"] = v["hooks"][0]["id"].clone(),
                "hooks has a duplicate entry",
            ),
            (
                |v| v["hooks"][0]["module"] = "ghost".into(),
                "hooks[operator-kit/policy-gate].module names an unknown module: ghost",
            ),
            (
                |v| v["hooks"][0]["script"] = "../x.sh".into(),
                "hooks[operator-kit/policy-gate].script must be a relative path",
            ),
            (
                |v| v["hooks"][0]["events"] = serde_json::json!([]),
                "hooks[operator-kit/policy-gate].events must be a non-empty list",
            ),
            (
                |v| {
                    v["hooks"][0]
                        .as_object_mut()
                        .unwrap()
                        .remove("capabilities");
                },
                "hook operator-kit/policy-gate needs non-empty capabilities",
            ),
            (
                |v| v["hooks"][0]["capabilities"] = serde_json::json!([]),
                "hook operator-kit/policy-gate needs non-empty capabilities",
            ),
            (
                |v| v["hooks"][0]["capabilities"] = serde_json::json!(["telepathy"]),
                "hook operator-kit/policy-gate declares unknown capability: telepathy",
            ),
            (
                |v| v["hooks"][0]["exit_policy"] = "crash".into(),
                "hooks[operator-kit/policy-gate].exit_policy must be one of observe, warn, block",
            ),
            (
                |v| {
                    let hooks: Vec<Value> = v["hooks"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|h| h["module"] != "lane-kit")
                        .cloned()
                        .collect();
                    v["hooks"] = Value::Array(hooks);
                },
                "module declares the hooks component and declares no hook: lane-kit",
            ),
            (
                |v| v["bundles"] = serde_json::json!({}),
                "bundles must be a JSON object",
            ),
            (
                |v| v["bundles"]["solo"]["modules"] = serde_json::json!([]),
                "bundles[solo].modules must be a non-empty list",
            ),
            (
                |v| v["bundles"]["solo"]["modules"] = serde_json::json!(["ghost"]),
                "bundles[solo].modules names an unknown module: ghost",
            ),
            (
                |v| v["bundles"]["solo"]["capabilities"] = serde_json::json!(["lane-isolation"]),
                "bundles[solo] expects capability lane-isolation",
            ),
            (
                |v| v["routing"]["tiers"] = serde_json::json!(["economy", "frontier"]),
                "routing.tiers must be exactly",
            ),
            (
                |v| v["maps"] = serde_json::json!(["lane", "lane"]),
                "maps has a duplicate entry: lane",
            ),
            (
                |v| v["installer"] = serde_json::json!({"command": ""}),
                "installer must name a non-empty path or command",
            ),
            (
                |v| v["monitors"] = serde_json::json!([]),
                "monitors must be a non-empty list",
            ),
            (
                |v| v["monitors"][0]["cadence"] = 0.into(),
                "monitors[harness-doctor].cadence must be a positive integer",
            ),
            (
                |v| {
                    v["monitors"][0].as_object_mut().unwrap().remove("cost");
                },
                "monitors[harness-doctor].cost must be a non-empty string",
            ),
            (
                |v| v["monitors"][1]["id"] = "harness-doctor".into(),
                "monitors has a duplicate entry: harness-doctor",
            ),
        ];
        for (mutate, expected) in cases {
            let mut value = built_in_value();
            mutate(&mut value);
            let err = validate(&value).expect_err(expected).to_string();
            assert!(err.contains(expected), "expected {expected:?}, got {err:?}");
        }
    }

    #[test]
    fn control_the_contract_control_fails_when_the_vocabulary_check_is_gone() {
        let mut value = built_in_value();
        value["hooks"] = serde_json::json!([]);
        assert!(contract_directions(&value).is_err());
    }
}
