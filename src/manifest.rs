//! The protocol manifest, `hpp.manifest.json`: what this module reads of it so far.
//!
//! CONCEPTS.md "manifest": the single declaration of the protocol (roles, the loop and its
//! gates, exit codes). The copy at the root of this crate is compiled into the binary as
//! [`BUILT_IN`], which plays the part of the reference harness's packaged manifest: a repository
//! without its own `hpp.manifest.json` uses it. This module is pure; finding and reading the file
//! is the caller's job.

use serde_json::Value;

use crate::event_loop::{self, LoopSpec};

/// The protocol version this implementation speaks.
pub const PROTOCOL_VERSION: &str = "2.1";

/// The manifest compiled into the binary.
pub const BUILT_IN: &str = include_str!("../hpp.manifest.json");

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
}
