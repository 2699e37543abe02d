//! Context compile: whole blocks by priority under a budget, with provenance (CONCEPTS.md
//! "context budget").
//!
//! The compiler fits whole input blocks under a character budget, highest priority first (ties
//! by source name), and records for each block its source, size and sha256, whether it went in
//! or was left out. A block that does not fit is omitted entirely, never sliced, and the scan
//! goes on: a later, smaller block may still fit. Blocks are joined by `"\n\n"`, and those two
//! characters are charged to the budget, so `used` is exactly the length of `text`. Content that
//! looks like a secret is refused, not redacted. The budget counts characters (Unicode scalar
//! values, as the reference counts Python `str` length), not tokens. Touches no refs.

use serde::Serialize;
use serde_json::Value;

use crate::int::Int;
use crate::record::sha256_hex;
use crate::secrets::looks_secret;

/// The schema name of a compiled context.
pub const SCHEMA: &str = "hpp.context/v1";

/// The separator between two included blocks; it is charged to the budget.
pub const SEPARATOR: &str = "\n\n";

/// Why an input list or a budget was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The inputs are not a JSON list.
    #[error("inputs must be a list")]
    NotAList,
    /// An input is not an object.
    #[error("input {0} must be an object")]
    NotAnObject(usize),
    /// An input has no source name, or an empty one.
    #[error("input {0} needs a source")]
    MissingSource(usize),
    /// Two inputs share a source name.
    #[error("duplicate context source: {0}")]
    DuplicateSource(String),
    /// An input's priority is missing or not an integer.
    #[error("input {0} needs an integer priority")]
    BadPriority(String),
    /// An input's content is missing or not a string.
    #[error("input {0} needs string content")]
    BadContent(String),
    /// An input's content has the shape of a secret.
    #[error("secret-like material refused from source: {0}")]
    SecretContent(String),
    /// An input's source name has the shape of a secret (it would be echoed into the record).
    #[error("secret-like material refused from the source name of input {0}")]
    SecretSource(usize),
    /// The budget is negative.
    #[error("budget must be a non-negative integer")]
    NegativeBudget,
}

/// One input block, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Where the block comes from; unique among the inputs.
    pub source: String,
    /// Higher goes first; an integer of any size, as the reference's.
    pub priority: Int,
    /// The block's text, included whole or not at all.
    pub content: String,
}

/// The provenance of one block, included or omitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// The block's source.
    pub source: String,
    /// The block's priority.
    pub priority: Int,
    /// The block's length in characters.
    pub chars: usize,
    /// The sha256 of the block's UTF-8 bytes.
    pub sha256: String,
}

/// A compiled context, `hpp.context/v1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compiled {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The budget, in characters (an integer of any size).
    pub budget: Int,
    /// Characters of `text`, separators included.
    pub used: u64,
    /// `budget - used`.
    pub remaining: Int,
    /// The blocks in `text`, in the order they appear there.
    pub included: Vec<Provenance>,
    /// The blocks left out, in priority order.
    pub omitted: Vec<Provenance>,
    /// The included blocks joined by [`SEPARATOR`].
    pub text: String,
}

/// Reads the input list `[{"source", "priority", "content"}]` into blocks, sorted by
/// descending priority then source; refuses a malformed item, a duplicate source, or
/// secret-like content.
pub fn parse_inputs(inputs: &Value) -> Result<Vec<Block>, Error> {
    let items = inputs.as_array().ok_or(Error::NotAList)?;
    let mut blocks: Vec<Block> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let object = item.as_object().ok_or(Error::NotAnObject(index))?;
        let source = match object.get("source") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(Error::MissingSource(index)),
        };
        if looks_secret(&source) {
            return Err(Error::SecretSource(index));
        }
        if blocks.iter().any(|b| b.source == source) {
            return Err(Error::DuplicateSource(source));
        }
        // Why: JSON `true` is not a priority, and 1.0 and 1e30 are floats; the reference reads
        // them as refusals except Python's bool-is-int quirk, which we do not keep. An integer
        // of any size is one, as Python's int.
        let priority = object
            .get("priority")
            .and_then(Int::from_json)
            .ok_or_else(|| Error::BadPriority(source.clone()))?;
        let content = match object.get("content") {
            Some(Value::String(s)) => s.clone(),
            _ => return Err(Error::BadContent(source)),
        };
        if looks_secret(&content) {
            return Err(Error::SecretContent(source));
        }
        blocks.push(Block {
            source,
            priority,
            content,
        });
    }
    blocks.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then_with(|| a.source.cmp(&b.source))
    });
    Ok(blocks)
}

/// Compiles an input list under `budget` characters: the budget is checked first, then the
/// inputs ([`parse_inputs`]), then whole blocks are fitted ([`fit`]).
///
/// ```
/// let inputs = serde_json::json!([
///     {"source": "a", "priority": 2, "content": "aaaa"},
///     {"source": "b", "priority": 1, "content": "bbbb"},
/// ]);
/// let compiled = hpp_core::context::compile(&inputs, 9).unwrap();
/// // "aaaa" costs 4; "bbbb" would cost 4 plus the 2-char separator: 10 > 9.
/// assert_eq!(compiled.used, 4);
/// assert_eq!(compiled.omitted[0].source, "b");
/// ```
pub fn compile(inputs: &Value, budget: impl Into<Int>) -> Result<Compiled, Error> {
    let budget = budget.into();
    if budget.is_negative() {
        return Err(Error::NegativeBudget);
    }
    Ok(fit(&parse_inputs(inputs)?, budget))
}

/// Fits whole blocks, in the order given (priority order, as [`parse_inputs`] returns them),
/// under `budget` characters, charging the separator between two blocks.
pub fn fit(blocks: &[Block], budget: impl Into<Int>) -> Compiled {
    let budget = budget.into();
    // No text is longer than u64::MAX characters: a larger budget fits as much as that one.
    let room = budget
        .to_u64()
        .unwrap_or(if budget.is_negative() { 0 } else { u64::MAX });
    let separator = SEPARATOR.chars().count() as u64;
    let mut included = Vec::new();
    let mut omitted = Vec::new();
    let mut selected: Vec<&str> = Vec::new();
    let mut used: u64 = 0;
    for block in blocks {
        let record = provenance(block);
        let joint = if selected.is_empty() { 0 } else { separator };
        let cost = record.chars as u64 + joint;
        // Keep scanning after an omission: a later, smaller block may still fit.
        if used.saturating_add(cost) <= room {
            used += cost;
            selected.push(&block.content);
            included.push(record);
        } else {
            omitted.push(record);
        }
    }
    Compiled {
        schema: SCHEMA,
        remaining: &budget - &Int::from(used),
        budget,
        used,
        included,
        omitted,
        text: selected.join(SEPARATOR),
    }
}

fn provenance(block: &Block) -> Provenance {
    Provenance {
        source: block.source.clone(),
        priority: block.priority.clone(),
        chars: block.content.chars().count(),
        sha256: sha256_hex(block.content.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn blocks(value: Value) -> Vec<Block> {
        parse_inputs(&value).unwrap()
    }

    #[test]
    fn the_separator_is_charged_between_blocks() {
        let b = blocks(json!([
            {"source": "a", "priority": 3, "content": "12345"},
            {"source": "b", "priority": 2, "content": "12345"},
        ]));
        let exact = fit(&b, 12);
        assert_eq!(exact.used, 12);
        assert_eq!(exact.remaining, Int::from(0));
        assert_eq!(exact.text, "12345\n\n12345");
        assert_eq!(exact.used as usize, exact.text.chars().count());
        let short = fit(&b, 11);
        assert_eq!(short.included.len(), 1);
        assert_eq!(short.omitted[0].source, "b");
    }

    #[test]
    fn scanning_goes_on_after_an_omission() {
        let b = blocks(json!([
            {"source": "big", "priority": 9, "content": "x".repeat(50)},
            {"source": "first", "priority": 10, "content": "y".repeat(10)},
            {"source": "small", "priority": 1, "content": "z".repeat(3)},
        ]));
        let c = fit(&b, 20);
        let names: Vec<_> = c.included.iter().map(|p| p.source.as_str()).collect();
        assert_eq!(names, ["first", "small"]);
        assert_eq!(c.omitted[0].source, "big");
        assert_eq!(c.used, 15);
    }

    #[test]
    fn ties_in_priority_go_by_source_name() {
        let b = blocks(json!([
            {"source": "b", "priority": 1, "content": ""},
            {"source": "a", "priority": 1, "content": ""},
        ]));
        assert_eq!(b[0].source, "a");
    }

    #[test]
    fn provenance_counts_characters_not_bytes() {
        let b = blocks(json!([{"source": "s", "priority": 0, "content": "ação"}]));
        let c = fit(&b, 4);
        assert_eq!(c.included[0].chars, 4);
        assert_eq!(c.included[0].sha256, sha256_hex("ação".as_bytes()));
    }

    #[test]
    fn control_secret_like_content_is_refused() {
        let err = parse_inputs(&json!([
            {"source": "env", "priority": 1, "content": "API_KEY=abc123"}
        ]))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "secret-like material refused from source: env"
        );
    }

    #[test]
    fn control_malformed_inputs_are_refused() {
        let cases = [
            (json!({}), "inputs must be a list"),
            (json!([1]), "input 0 must be an object"),
            (
                json!([{"priority": 1, "content": ""}]),
                "input 0 needs a source",
            ),
            (
                json!([{"source": "a", "priority": true, "content": ""}]),
                "input a needs an integer priority",
            ),
            (
                json!([{"source": "a", "priority": 1.5, "content": ""}]),
                "input a needs an integer priority",
            ),
            (
                json!([{"source": "a", "priority": 1}]),
                "input a needs string content",
            ),
            (
                json!([
                    {"source": "a", "priority": 1, "content": ""},
                    {"source": "a", "priority": 2, "content": ""}
                ]),
                "duplicate context source: a",
            ),
        ];
        for (value, message) in cases {
            assert_eq!(parse_inputs(&value).unwrap_err().to_string(), message);
        }
        assert_eq!(
            compile(&json!([{"source": "a"}]), -1).unwrap_err(),
            Error::NegativeBudget,
            "the budget is checked before the inputs"
        );
    }

    fn arbitrary_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>().prop_map(|f| json!(f)),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("source".to_owned()),
                        Just("priority".to_owned()),
                        Just("content".to_owned()),
                        "[a-z]{1,3}",
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_compiler_never_panics_on_any_json(value in arbitrary_json(), budget in any::<i64>()) {
            match compile(&value, budget) {
                Ok(c) => prop_assert!(Int::from(c.used) <= c.budget),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }

        #[test]
        fn used_is_the_length_of_text_and_never_exceeds_the_budget(
            items in prop::collection::vec((any::<i8>(), ".{0,30}"), 0..8),
            budget in 0i64..200,
        ) {
            let value = Value::Array(items.iter().enumerate().map(|(i, (p, c))| {
                json!({"source": format!("s{i}"), "priority": p, "content": c})
            }).collect());
            match parse_inputs(&value) {
                Ok(b) => {
                    let c = fit(&b, budget);
                    prop_assert_eq!(c.used as usize, c.text.chars().count());
                    prop_assert!(Int::from(c.used) <= c.budget);
                    prop_assert_eq!(c.included.len() + c.omitted.len(), b.len());
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}
