//! Canonical JSON and sha256 helpers shared by every record.
//!
//! Canonical JSON is what the reference harness hashes and signs: keys sorted, compact
//! separators (`,` and `:`), UTF-8 without ASCII escaping. `serde_json::Value` keeps object keys
//! in a `BTreeMap`, whose byte order equals the code-point order Python's `sort_keys` uses, so
//! serialising a `Value` compactly is canonical.

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The sha256 of nothing: the link of the first event of a hash-chained log.
pub const GENESIS_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Returns the canonical bytes of a JSON value: sorted keys, compact, UTF-8.
///
/// ```
/// let v = serde_json::json!({"b": 1, "a": "é"});
/// assert_eq!(hpp_core::record::canonical_json(&v), "{\"a\":\"é\",\"b\":1}".as_bytes());
/// ```
pub fn canonical_json(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("serialising a serde_json::Value cannot fail")
}

/// Returns a typed record as the JSON object it is stored as. The record goes through
/// `serde_json::to_value` first, so its keys end up sorted the way [`canonical_json`] sorts a
/// value's, whatever order its struct declares them in.
///
/// ```
/// #[derive(serde::Serialize)]
/// struct Record { z: u8, a: Option<u8> }
/// let object = hpp_core::record::to_object(&Record { z: 1, a: None });
/// assert_eq!(object.keys().collect::<Vec<_>>(), ["a", "z"]);
/// ```
pub fn to_object<T: Serialize + ?Sized>(record: &T) -> Map<String, Value> {
    let value =
        serde_json::to_value(record).expect("a record serialises: its map keys are strings");
    match value {
        Value::Object(object) => Some(object),
        _ => None,
    }
    .expect("a record is a struct, so it serialises to a JSON object")
}

/// Returns the canonical bytes of a typed record: [`canonical_json`] of its [`to_object`].
pub fn canonical_record<T: Serialize + ?Sized>(record: &T) -> Vec<u8> {
    canonical_json(&Value::Object(to_object(record)))
}

/// Returns the lowercase hex sha256 of `bytes`.
///
/// ```
/// assert_eq!(hpp_core::record::sha256_hex(b""), hpp_core::record::GENESIS_SHA256);
/// ```
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from_digit(u32::from(byte >> 4), 16).expect("a nibble is a hex digit"));
        out.push(char::from_digit(u32::from(byte & 0xf), 16).expect("a nibble is a hex digit"));
    }
    out
}

/// Tells whether `text` is a lowercase hex sha256 digest (exactly 64 of `[0-9a-f]`).
pub fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Renders a value the way every `--json` output is rendered: pretty, two-space indent,
/// sorted keys, UTF-8, with a trailing newline.
pub fn pretty_json(value: &Value) -> String {
    let mut text =
        serde_json::to_string_pretty(value).expect("serialising a serde_json::Value cannot fail");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_nested_keys_and_keeps_unicode_raw() {
        let v = json!({"z": {"y": 1, "x": [true, null]}, "a": "ação", "m": "tab\there"});
        let text = String::from_utf8(canonical_json(&v)).unwrap();
        assert_eq!(
            text,
            r#"{"a":"ação","m":"tab\there","z":{"x":[true,null],"y":1}}"#
        );
    }

    #[test]
    fn canonical_json_escapes_control_characters_like_python() {
        // json.dumps("\x01", ensure_ascii=False) == '"\\u0001"'
        let text = String::from_utf8(canonical_json(&json!("\u{1}"))).unwrap();
        assert_eq!(text, "\"\\u0001\"");
    }

    #[test]
    fn sha256_hex_matches_a_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn control_is_sha256_hex_rejects_uppercase_short_and_non_hex() {
        assert!(is_sha256_hex(GENESIS_SHA256));
        assert!(!is_sha256_hex(&GENESIS_SHA256.to_uppercase()));
        assert!(!is_sha256_hex(&GENESIS_SHA256[..63]));
        assert!(!is_sha256_hex(&format!("{}g", &GENESIS_SHA256[..63])));
    }
}
