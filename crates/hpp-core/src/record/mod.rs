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
    let mut out = Vec::new();
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut out, Python(serde_json::ser::CompactFormatter));
    value
        .serialize(&mut serializer)
        .expect("serialising a serde_json::Value cannot fail");
    out
}

/// Writes numbers as Python's `json` module does, so the same value gives the same bytes (and
/// the same hash) here and in the reference: an integer exactly as it came, however many
/// digits (serde_json's `arbitrary_precision` keeps them), and a float as Python's `repr`
/// ([`python_float`]).
struct Python<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for Python<F> {
    fn write_f64<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        value: f64,
    ) -> std::io::Result<()> {
        w.write_all(python_float(value).as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        value: f32,
    ) -> std::io::Result<()> {
        w.write_all(python_float(f64::from(value)).as_bytes())
    }

    fn write_number_str<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        value: &str,
    ) -> std::io::Result<()> {
        let integer = value
            .strip_prefix('-')
            .unwrap_or(value)
            .bytes()
            .all(|b| b.is_ascii_digit());
        match value.parse::<f64>() {
            Ok(float) if !integer && float.is_finite() => {
                w.write_all(python_float(float).as_bytes())
            }
            // Python reads `-0` as the integer 0.
            _ if integer && value == "-0" => w.write_all(b"0"),
            _ => w.write_all(value.as_bytes()),
        }
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// Returns where `value` holds a number no finite float can carry (`1e400`, `-1e999`), as a
/// path of keys and indexes (`a/0/b`), if anywhere. Such a number would be stored as written
/// yet read back as infinity, or not at all, by every JSON reader that takes numbers as
/// floats; an integer of any length is exact and fine.
///
/// ```
/// use hpp_core::record::non_finite_number;
/// let bad: serde_json::Value = serde_json::from_str(r#"{"a":[1,{"b":1e400}]}"#).unwrap();
/// assert_eq!(non_finite_number(&bad).as_deref(), Some("a/1/b"));
/// let good: serde_json::Value = serde_json::from_str(r#"{"a":1e300,"n":123456789012345678901234567890}"#).unwrap();
/// assert_eq!(non_finite_number(&good), None);
/// ```
pub fn non_finite_number(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => {
            let text = n.to_string();
            let integer = text
                .strip_prefix('-')
                .unwrap_or(&text)
                .bytes()
                .all(|b| b.is_ascii_digit());
            (!integer && !text.parse::<f64>().is_ok_and(f64::is_finite)).then(String::new)
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            non_finite_number(item).map(|below| join_path(&i.to_string(), &below))
        }),
        Value::Object(map) => map
            .iter()
            .find_map(|(key, item)| non_finite_number(item).map(|below| join_path(key, &below))),
        _ => None,
    }
}

fn join_path(head: &str, below: &str) -> String {
    if below.is_empty() {
        head.to_owned()
    } else {
        format!("{head}/{below}")
    }
}

/// A float as Python's `repr` writes it: the shortest digits that read back to the same value,
/// positional when the decimal exponent is from -4 to 15 (with `.0` on a whole number),
/// otherwise scientific with a signed exponent of at least two digits (`1e-05`, `1.5e+300`).
///
/// ```
/// use hpp_core::record::python_float;
/// assert_eq!(python_float(0.00001), "1e-05");
/// assert_eq!(python_float(0.0001), "0.0001");
/// assert_eq!(python_float(1e16), "1e+16");
/// assert_eq!(python_float(1e15), "1000000000000000.0");
/// assert_eq!(python_float(-2.5), "-2.5");
/// ```
pub fn python_float(value: f64) -> String {
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .to_owned();
    }
    // Rust's `{:e}` is the shortest round-trip form too: `d[.ddd]e<exp>`.
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("a finite float formats with an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if value.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let count = i32::try_from(digits.len()).unwrap_or(i32::MAX);
        let text = if exponent < 0 {
            let zeros = usize::try_from(-exponent - 1).unwrap_or(0);
            format!("0.{}{digits}", "0".repeat(zeros))
        } else if exponent + 1 >= count {
            let zeros = usize::try_from(exponent + 1 - count).unwrap_or(0);
            format!("{digits}{}.0", "0".repeat(zeros))
        } else {
            let point = usize::try_from(exponent + 1).unwrap_or(0);
            format!("{}.{}", &digits[..point], &digits[point..])
        };
        format!("{sign}{text}")
    } else {
        let mantissa = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exp_sign}{:02}", exponent.abs())
    }
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

/// Fields a self-hashed record leaves out of its self-hash: the hash itself, and what is added
/// after sealing or lives beside the record.
pub const UNHASHED: &[&str] = &["record_sha256", "event", "event_error", "signature"];

/// Returns the self-hash of a record: sha256 of its canonical JSON without [`UNHASHED`].
pub fn self_hash(record: &Map<String, Value>) -> String {
    sha256_hex(&hashed_bytes(record))
}

/// Returns the bytes a self-hashed record's hash (and the reference's embedded signature)
/// covers: its canonical JSON without [`UNHASHED`].
pub fn hashed_bytes(record: &Map<String, Value>) -> Vec<u8> {
    let mut hashed = record.clone();
    for key in UNHASHED {
        hashed.remove(*key);
    }
    canonical_json(&Value::Object(hashed))
}

/// Seals a self-hashed record (an evidence bundle, a mutation record) and returns the canonical
/// bytes to store: names the ref it is stored at, then computes its [`self_hash`] over that, so
/// the hash also covers where the record is kept. `fields` returns the record's `record_ref`
/// and `record_sha256`; the old hash is cleared first, so sealing again never hashes a stale one.
///
/// ```
/// #[derive(serde::Serialize)]
/// struct Record { verdict: &'static str, record_ref: Option<String>, record_sha256: Option<String> }
/// let mut record = Record { verdict: "passed", record_ref: None, record_sha256: None };
/// let bytes = hpp_core::record::seal(&mut record, "refs/hpp/evidence/a".into(), |r| {
///     (&mut r.record_ref, &mut r.record_sha256)
/// });
/// let stored: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
/// let object = stored.as_object().unwrap();
/// assert_eq!(object["record_sha256"], hpp_core::record::self_hash(object));
/// ```
pub fn seal<T: Serialize>(
    record: &mut T,
    record_ref: String,
    fields: impl Fn(&mut T) -> (&mut Option<String>, &mut Option<String>),
) -> Vec<u8> {
    let (at, hash) = fields(record);
    *at = Some(record_ref);
    *hash = None;
    let sealed = self_hash(&to_object(record));
    *fields(record).1 = Some(sealed);
    canonical_record(record)
}

/// Returns the lowercase hex sha256 of `bytes`.
///
/// ```
/// assert_eq!(hpp_core::record::sha256_hex(b""), hpp_core::record::GENESIS_SHA256);
/// ```
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Returns `bytes` as lowercase hex (a digest computed elsewhere, in pieces).
///
/// ```
/// assert_eq!(hpp_core::record::hex(&[0x0a, 0xff]), "0aff");
/// ```
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
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
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(
        &mut out,
        Python(serde_json::ser::PrettyFormatter::new()),
    );
    value
        .serialize(&mut serializer)
        .expect("serialising a serde_json::Value cannot fail");
    let mut text = String::from_utf8(out).expect("serde_json writes UTF-8");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_written_as_python_writes_them() {
        let value: Value = serde_json::from_str(
            r#"{"big":123456789012345678901234567890,"neg":-98765432109876543210,"small":0.00001,
               "tiny":1e-7,"edge":0.0001,"huge":1e16,"whole":1E5,"half":2.50,"zero":-0,"nz":-0.0}"#,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(canonical_json(&value)).unwrap(),
            r#"{"big":123456789012345678901234567890,"edge":0.0001,"half":2.5,"huge":1e+16,"neg":-98765432109876543210,"nz":-0.0,"small":1e-05,"tiny":1e-07,"whole":100000.0,"zero":0}"#
        );
    }

    #[test]
    fn control_a_float_past_64_bits_of_precision_is_still_a_float() {
        // 0.1 + 0.2 is not 0.3: its shortest form has 17 digits, as in Python.
        assert_eq!(python_float(0.1 + 0.2), "0.30000000000000004");
        assert_ne!(python_float(0.1 + 0.2), python_float(0.3));
    }

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
