//! Python's `repr` (and `str`) of the values the reference's refusal sentences quote.
//!
//! The reference harness names a bad value in a message with `{value!r}`: `seat 'a\tb' is not a
//! participant`, `lens must be ... got ['a', 1]`, `duplicate context id: "it's"`. Its port here
//! keeps those sentences byte for byte, so this is the one place that knows how Python writes a
//! value back out. The values are what Python's `json.loads` gives for the JSON we are handed:
//! `None`, `True`, `False`, an `int` (any size), a `float`, a `str`, a `list` and a `dict`.
//!
//! A string is quoted as CPython's `str.__repr__` does: in `'` unless it holds a `'` and no `"`;
//! `\\`, `\n`, `\r`, `\t` and the chosen quote escaped; every other character that
//! `str.isprintable()` refuses (general categories Cc, Cf, Cs, Co, Cn, Zl, Zp, and Zs other than
//! the ASCII space) as `\xNN`, `\uNNNN` or `\UNNNNNNNN`; everything else, non-ASCII included,
//! kept as is. The categories come from the `unicode-general-category` crate, which carries
//! Unicode 16.0; CPython carries its own copy (Unicode 14.0 in 3.11, 15.0 in 3.12, 15.1 in 3.13,
//! 16.0 in 3.14), so a character assigned after the interpreter's version is printed here and
//! escaped there as unassigned (`\U0001fae8` from Python 3.11). The tests compare this module with
//! what `hpp` 2.11.1 printed (`tests/fixtures/python-harness/repr/`).
//!
//! Pure: touches no refs.
//!
//! ```
//! use hpp_core::pyrepr;
//! assert_eq!(pyrepr::string("it's"), r#""it's""#);
//! assert_eq!(pyrepr::string("a\tb\u{a0}"), r"'a\tb\xa0'");
//! assert_eq!(pyrepr::value(&serde_json::json!([null, true, 1.50, "x"])), "[None, True, 1.5, 'x']");
//! ```

use std::fmt::Write as _;

use serde_json::{Number, Value};
use unicode_general_category::{GeneralCategory, get_general_category};

use crate::record::python_float;

/// Returns a string as Python's `repr` writes it: `'abc'`, `"it's"`, `'a\x01\u200b'`.
///
/// ```
/// use hpp_core::pyrepr::string;
/// assert_eq!(string("plain"), "'plain'");
/// assert_eq!(string(r#"it's "x""#), r#"'it\'s "x"'"#);
/// assert_eq!(string("a\u{85}\u{200b}\u{e0001}"), r"'a\x85\u200b\U000e0001'");
/// assert_eq!(string("é 🎉"), "'é 🎉'");
/// ```
pub fn string(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if printable(c) => out.push(c),
            c => {
                let code = u32::from(c);
                if code <= 0xff {
                    write!(out, "\\x{code:02x}")
                } else if code <= 0xffff {
                    write!(out, "\\u{code:04x}")
                } else {
                    write!(out, "\\U{code:08x}")
                }
                .expect("writing to a String cannot fail");
            }
        }
    }
    out.push(quote);
    out
}

/// Tells whether Python's `str.isprintable()` takes the character: every character but the
/// general categories Other (Cc, Cf, Cs, Co, Cn) and Separator (Zl, Zp, Zs), where the ASCII
/// space is printable all the same.
///
/// ```
/// use hpp_core::pyrepr::printable;
/// assert!(printable(' ') && printable('é') && printable('😀'));
/// assert!(!printable('\u{a0}') && !printable('\u{200b}') && !printable('\u{7f}'));
/// ```
pub fn printable(c: char) -> bool {
    c == ' '
        || !matches!(
            get_general_category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::Surrogate
                | GeneralCategory::PrivateUse
                | GeneralCategory::Unassigned
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::SpaceSeparator
        )
}

/// Returns a JSON value as Python's `repr` writes what `json.loads` made of it: `None`, `True`,
/// `False`, an integer as written, a float in Python's shortest form (`1.5`, `1e+16`, `inf`), a
/// string as [`string`], a list as `[a, b]` and an object as `{'k': v}`.
///
/// An object's keys come in sorted order (serde_json keeps them so), where Python keeps the
/// order the document wrote them in; the two agree whenever the document's keys were sorted.
///
/// ```
/// use hpp_core::pyrepr::value;
/// use serde_json::json;
/// assert_eq!(value(&json!(null)), "None");
/// assert_eq!(value(&json!({"k": ["it's", false]})), r#"{'k': ["it's", False]}"#);
/// ```
pub fn value(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// Returns [`value`] of a value that may be absent, which Python reads as `None`
/// (`document.get("key")`).
pub fn optional(value: Option<&Value>) -> String {
    value.map_or_else(|| "None".to_owned(), self::value)
}

/// Returns a list of strings as Python's `repr` writes it: `['a', "it's"]`.
///
/// ```
/// assert_eq!(hpp_core::pyrepr::list(&["a", "it's"]), r#"['a', "it's"]"#);
/// assert_eq!(hpp_core::pyrepr::list::<&str>(&[]), "[]");
/// ```
pub fn list<S: AsRef<str>>(items: &[S]) -> String {
    let inner: Vec<String> = items.iter().map(|item| string(item.as_ref())).collect();
    format!("[{}]", inner.join(", "))
}

/// Returns a value as Python's `str()` writes it, which is what an f-string shows without
/// `!r`: a string as itself, anything else as its [`value`] repr (`None` when absent).
///
/// ```
/// use hpp_core::pyrepr::display;
/// use serde_json::json;
/// assert_eq!(display(Some(&json!("tab\there"))), "tab\there");
/// assert_eq!(display(Some(&json!(["x"]))), "['x']");
/// assert_eq!(display(None), "None");
/// ```
pub fn display(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        other => optional(other),
    }
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(number) => out.push_str(&self::number(number)),
        Value::String(text) => out.push_str(&string(text)),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            for (index, (key, item)) in object.iter().enumerate() {
                if index > 0 {
                    out.push_str(", ");
                }
                out.push_str(&string(key));
                out.push_str(": ");
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// A JSON number as Python's `repr` writes what `json.loads` made of it: a literal without a
/// fraction or an exponent is an `int`, kept digit for digit (serde_json's
/// `arbitrary_precision` keeps the text), and anything else a `float`, which overflows to `inf`.
fn number(number: &Number) -> String {
    let text = number.to_string();
    let integer = text
        .strip_prefix('-')
        .unwrap_or(&text)
        .bytes()
        .all(|b| b.is_ascii_digit());
    if integer {
        // Python reads `-0` as the integer 0.
        return if text == "-0" { "0".to_owned() } else { text };
    }
    match text.parse::<f64>() {
        Ok(float) if float.is_nan() => "nan".to_owned(),
        Ok(float) if float.is_infinite() => if float < 0.0 { "-inf" } else { "inf" }.to_owned(),
        Ok(float) => python_float(float),
        // serde_json only holds numbers it parsed, and every JSON number parses as a float.
        Err(_) => text,
    }
}

#[cfg(test)]
mod tests {
    //! Compares this module with what `hpp` 2.11.1 printed, as recorded under
    //! `tests/fixtures/python-harness/repr/` (the README there has the commands).

    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const STRINGS: &str = include_str!("../../../tests/fixtures/python-harness/repr/strings.jsonl");
    const VALUES: &str = include_str!("../../../tests/fixtures/python-harness/repr/values.jsonl");
    const KEYS: &str = include_str!("../../../tests/fixtures/python-harness/repr/keys.jsonl");
    const CITE: &str =
        include_str!("../../../tests/fixtures/python-harness/repr/cite-duplicate-id.stderr");
    const SEAT: &str =
        include_str!("../../../tests/fixtures/python-harness/repr/deliberate-seat.stderr");
    const LENS: &str =
        include_str!("../../../tests/fixtures/python-harness/repr/findings-lens.stderr");
    const FINDINGS_KEYS: &str =
        include_str!("../../../tests/fixtures/python-harness/repr/findings-keys.stderr");
    const TIER: &str = include_str!("../../../tests/fixtures/python-harness/repr/work-tier.stderr");

    /// The inputs, one JSON literal a line, parsed as the harness parses a document.
    fn inputs(lines: &str) -> Vec<Value> {
        lines
            .lines()
            .map(|line| serde_json::from_str(line).expect("each fixture line is JSON"))
            .collect()
    }

    /// What `hpp` printed on stderr for each case, the `[exit N]` line after each one cut off.
    fn cases(recorded: &str) -> Vec<&str> {
        let mut cases = Vec::new();
        let mut rest = recorded;
        while let Some(end) = rest.find("\n[exit 2]\n") {
            cases.push(&rest[..end]);
            rest = &rest[end + "\n[exit 2]\n".len()..];
        }
        assert!(rest.is_empty(), "every case ends in [exit 2]: {rest:?}");
        cases
    }

    /// The part of `line` between `prefix` and `suffix`, which both must be there.
    fn between<'a>(line: &'a str, prefix: &str, suffix: &str) -> &'a str {
        line.strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
            .unwrap_or_else(|| panic!("{line:?} reads {prefix:?} ... {suffix:?}"))
    }

    /// Pairs each input with the repr `hpp` printed for it.
    fn recorded<'a>(
        inputs: &str,
        printed: &'a str,
        prefix: &str,
        suffix: &str,
    ) -> Vec<(Value, &'a str)> {
        let inputs = self::inputs(inputs);
        let cases = cases(printed);
        assert_eq!(inputs.len(), cases.len(), "one recorded case per input");
        inputs
            .into_iter()
            .zip(cases)
            .map(|(input, case)| (input, between(case, prefix, suffix)))
            .collect()
    }

    #[test]
    fn strings_read_as_hpp_printed_them_as_duplicate_context_ids() {
        for (input, printed) in recorded(STRINGS, CITE, "hpp: duplicate context id: ", "") {
            let text = input.as_str().expect("the cite inputs are strings");
            assert_eq!(string(text), printed, "{text:?}");
        }
    }

    #[test]
    fn values_read_as_hpp_printed_them_as_a_turns_seat() {
        let suffix = " is not a participant of this panel (the judge takes no turns)";
        for (input, printed) in recorded(VALUES, SEAT, "hpp: seat ", suffix) {
            assert_eq!(value(&input), printed, "{input}");
        }
    }

    #[test]
    fn values_read_as_hpp_printed_them_as_a_findings_lens() {
        let prefix = "hpp: lens must be a lowercase slug such as 'verification-gap', got ";
        for (input, printed) in recorded(VALUES, LENS, prefix, "") {
            assert_eq!(optional(Some(&input)), printed, "{input}");
        }
    }

    #[test]
    fn values_read_as_hpp_printed_them_with_str_as_a_units_tier() {
        for (input, printed) in recorded(VALUES, TIER, "hpp: work a has invalid tier: ", "") {
            assert_eq!(display(Some(&input)), printed, "{input}");
        }
    }

    #[test]
    fn key_lists_read_as_hpp_printed_them_as_undefined_findings_keys() {
        let prefix = "hpp: the document carries keys the contract does not define: ";
        for (input, printed) in recorded(KEYS, FINDINGS_KEYS, prefix, "") {
            let object = input.as_object().expect("the key inputs are objects");
            let keys: Vec<&str> = object
                .keys()
                .map(String::as_str)
                .filter(|key| *key != "schema")
                .collect();
            assert_eq!(list(&keys), printed, "{input}");
        }
    }

    /// The rule the citation ruler had: only Cc characters escaped, so a no-break space went out
    /// raw where the reference wrote `\xa0`.
    fn control_characters_only(text: &str) -> String {
        let mut out = String::from('\'');
        for c in text.chars() {
            match c {
                '\t' => out.push_str("\\t"),
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    }

    #[test]
    fn control_escaping_only_control_characters_fails_a_recorded_string() {
        let recorded = recorded(STRINGS, CITE, "hpp: duplicate context id: ", "");
        let (input, printed) = recorded
            .iter()
            .find(|(input, _)| input == &json!("a\u{a0}b"))
            .expect("the no-break space is among the recorded strings");
        let text = input.as_str().expect("a string");
        assert_eq!(printed, &r"'a\xa0b'");
        assert_ne!(control_characters_only(text), *printed);
        assert_eq!(string(text), *printed);
        // The instrument's rule escaped no control character at all.
        assert_eq!(string("a\u{1}b"), r"'a\x01b'");
    }

    #[test]
    fn a_character_newer_than_pythons_unicode_is_printed_where_python_3_11_escaped_it() {
        // U+1FAE8 (shaking face) is in Unicode 15.0: `hpp` on Python 3.11 (Unicode 14.0) printed
        // '\U0001fae8' as unassigned; Python 3.12 and later print it as is, as this does.
        assert_eq!(string("\u{1fae8}"), "'\u{1fae8}'");
        assert_eq!(
            string("\u{378}"),
            r"'\u0378'",
            "still unassigned in Unicode 16.0"
        );
    }

    #[test]
    fn an_object_prints_its_keys_sorted() {
        // Python would keep the document's order, {'b': 1, 'a': 2}: serde_json sorts.
        let parsed: Value = serde_json::from_str(r#"{"b": 1, "a": 2}"#).expect("JSON");
        assert_eq!(value(&parsed), "{'a': 2, 'b': 1}");
    }

    proptest! {
        #[test]
        fn a_repr_is_one_line_of_printable_text_in_its_quotes(text in any::<String>()) {
            let repr = string(&text);
            let quote = repr.chars().next().expect("a quote");
            prop_assert!(quote == '\'' || quote == '"');
            prop_assert!(repr.ends_with(quote) && repr.len() >= 2);
            prop_assert!(repr.chars().all(printable), "{repr:?}");
        }
    }
}
