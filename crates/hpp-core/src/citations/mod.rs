//! Citation check: every claim cites context that exists (CONCEPTS.md "citation check").
//!
//! A text written from sources marks each claim with the id of the source it rests on
//! (`[ID:<id>]` unless another marker regex is given). [`check`] reads the text and the context
//! it was written from (`[{"id", "text"}]`, or a list of bare ids) and reports,
//! deterministically, what the text claims that its context cannot back:
//!
//! - block: `UNKNOWN_ID` (a marker names an id not in the context), `RANGE` (one marker names a
//!   range or list, `1-3`, `a,b`, `a..b`), `EMPTY_MARKER` (a marker with no id);
//! - warn: `TOO_MANY` (more than `max_per_sentence` markers in one sentence), `UNCITED_CLAIM` (a
//!   sentence states a number, percentage, amount or date and carries no marker), `NO_MARKERS`
//!   (no marker anywhere and nothing else found: the text cites nothing).
//!
//! It never reads a cited source: a marker that resolves proves the id exists, not that the
//! source says what the sentence says. Context never cited is a count, not a finding.
//!
//! The heuristics, which are heuristics, not parsing (the reference's, kept as they are):
//! - Blocks come from Markdown shape: a blank line, a heading, a list item and a table row
//!   each start one (a heading or table row is one sentence; a table's separator row is none);
//!   fenced code is skipped whole (an unclosed fence runs to the end), and markers inside
//!   `inline code` are not markers.
//! - Sentences end at a run of `.`, `?`, `!` (plus closing quotes or brackets) followed by
//!   whitespace or the end of the block; `3.5` does not end one, a boundary inside a marker or
//!   inline code is ignored, and common abbreviations (`e.g.`, `Dr.`, month names) do not end
//!   one. Markers after the full stop on the same line belong to the sentence that just ended.
//! - A quantitative token is a digit not glued to a letter on its left, with an optional
//!   currency sign and `%`; headings, list numbering, inline code, URLs, footnote references
//!   and `v`-versions are not scanned. Known misses are warnings, never blocks.
//!
//! Positions are counted in characters, as the reference counts Python `str` indices. Touches
//! no refs.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::Value;

use crate::pyrepr;
use crate::record::{canonical_json, sha256_hex};
use crate::secrets::looks_secret;

mod markdown;

use markdown::{Doc, Kind, Span};

/// The schema name of a citation check report.
pub const SCHEMA: &str = "hpp.citation-check/v1";
/// The default marker: `[ID:<id>]`.
pub const DEFAULT_MARKER: &str = r"\[ID:([^\]\n]*)\]";
/// The default limit of markers in one sentence.
pub const DEFAULT_MAX_PER_SENTENCE: i64 = 4;
/// The longest excerpt a finding carries, in characters.
pub const EXCERPT_CHARS: usize = 120;

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a built-in citation pattern compiles")
}

static LIST_SEPARATOR: LazyLock<Regex> = LazyLock::new(|| re(r"[,;]"));
static RANGE_SEPARATOR: LazyLock<Regex> = LazyLock::new(|| re(r"\s*(?:\.{2,3}|…|[-–—])\s*"));
static NUMBER: LazyLock<Regex> = LazyLock::new(|| re(r"^\d+$"));

/// Why a text, a context or an option cannot be checked as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `max_per_sentence` is below 1.
    #[error("max_per_sentence must be a positive integer")]
    MaxPerSentence,
    /// The marker regex is empty.
    #[error("marker regex must be a non-empty string")]
    EmptyMarkerPattern,
    /// The marker regex does not compile.
    #[error("invalid marker regex: {0}")]
    InvalidMarker(String),
    /// The marker regex does not have exactly one capture group.
    #[error("marker regex needs exactly one capture group (the id); it has {0}")]
    MarkerGroups(usize),
    /// The marker regex matches the empty text.
    #[error("marker regex matches empty text; a marker must consume at least one character")]
    MarkerMatchesEmpty,
    /// The text is empty or only whitespace.
    #[error("text is empty: there is nothing to check")]
    EmptyText,
    /// The text has the shape of a secret.
    #[error(
        "text looks like it carries a secret; it is never checked, hashed or echoed into a report"
    )]
    SecretText,
    /// The text has no sentence outside fenced code.
    #[error("text has no sentence outside code blocks: there is nothing to check")]
    NoSentence,
    /// The context is not a list.
    #[error("context must be a list of {{\"id\", \"text\"}} objects or a list of ids")]
    ContextNotAList,
    /// The context is an empty list.
    #[error("context is empty: there is nothing to cite against")]
    ContextEmpty,
    /// The context mixes bare ids and objects.
    #[error("context mixes bare ids and objects; use one form")]
    ContextMixed,
    /// A context object has no text string.
    #[error("context item {0} needs a text string")]
    ContextNeedsText(usize),
    /// A context item is neither an object nor a string.
    #[error("context item {0} must be an object or an id string")]
    ContextBadItem(usize),
    /// A context id is not a string.
    #[error("context item {0}: ids must be strings (write \"1\", not 1)")]
    ContextIdNotString(usize),
    /// A context id is empty.
    #[error("context item {0} needs a non-empty id")]
    ContextEmptyId(usize),
    /// A context item has the shape of a secret.
    #[error("context item {0} looks like it carries a secret; it is never hashed into a report")]
    ContextSecret(usize),
    /// A context id has surrounding whitespace or a line break.
    #[error("context item {0}: an id cannot start or end with whitespace or span lines")]
    ContextIdWhitespace(usize),
    /// Two context items share an id.
    #[error("duplicate context id: {0}")]
    ContextDuplicate(String),
}

/// A validated marker regex: compiles, captures exactly one id, never matches empty text.
#[derive(Debug, Clone)]
pub struct Marker {
    pattern: String,
    pub(crate) regex: crate::pattern::Pattern,
}

impl Marker {
    /// Compiles and validates a marker regex (Python's `re` dialect as the reference takes it:
    /// look-around and back-references work, with a bound; see [`crate::pattern`]).
    pub fn new(pattern: &str) -> Result<Self, Error> {
        if pattern.is_empty() {
            return Err(Error::EmptyMarkerPattern);
        }
        let regex = crate::pattern::Pattern::new(pattern, false).map_err(Error::InvalidMarker)?;
        let groups = regex.groups();
        if groups != 1 {
            return Err(Error::MarkerGroups(groups));
        }
        // Why: a pattern that matches empty text finds a "marker" between every two characters.
        if regex.is_match("").unwrap_or(true) {
            return Err(Error::MarkerMatchesEmpty);
        }
        Ok(Self {
            pattern: pattern.to_owned(),
            regex,
        })
    }

    /// Returns the pattern as given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    /// A marker names an id not in the context (block).
    UnknownId,
    /// A marker names a range or a list (block).
    Range,
    /// A marker with no id (block).
    EmptyMarker,
    /// Too many markers in one sentence (warn).
    TooMany,
    /// A quantitative sentence with no marker (warn).
    UncitedClaim,
    /// No marker anywhere and nothing else found (warn).
    NoMarkers,
}

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Makes the verdict `block`.
    Block,
    /// Makes the verdict at least `warn`.
    Warn,
}

/// The verdict of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Nothing found: exit 0.
    Ok,
    /// Only warnings: exit 1.
    Warn,
    /// A blocking finding: exit 2.
    Block,
}

impl Verdict {
    /// Returns the exit code the reference maps the verdict to.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Ok => 0,
            Verdict::Warn => 1,
            Verdict::Block => 2,
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What it is about.
    pub code: Code,
    /// Block or warn.
    pub severity: Severity,
    /// The sentence, from 1 (`null` for a finding about the whole text).
    pub sentence: Option<usize>,
    /// The line the sentence starts on, from 1 (`null` for the whole text).
    pub line: Option<usize>,
    /// The sentence, whitespace flattened, at most [`EXCERPT_CHARS`] characters.
    pub excerpt: String,
    /// The marker as written (marker findings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    /// How many markers the sentence has (`TOO_MANY`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// The quantitative token found (`UNCITED_CLAIM`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// What to read.
    pub message: String,
}

/// What was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Sentences judged.
    pub sentences: usize,
    /// Sentences with a quantitative token.
    pub quantitative_sentences: usize,
    /// Markers found outside code.
    pub markers: usize,
    /// Markers that resolved to a context id.
    pub cited_ids: usize,
    /// Distinct context ids cited.
    pub unique_cited_ids: usize,
    /// Ids in the context.
    pub context_ids: usize,
    /// Context ids never cited.
    pub unused_context_ids: usize,
}

/// A citation check report, `hpp.citation-check/v1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The sha256 of the text's UTF-8 bytes.
    pub text_sha256: String,
    /// The sha256 of the context's canonical JSON.
    pub context_sha256: String,
    /// The marker regex used.
    pub marker_pattern: String,
    /// The limit of markers per sentence.
    pub max_per_sentence: u64,
    /// What was counted.
    pub counts: Counts,
    /// Every finding, in text order.
    pub findings: Vec<Finding>,
    /// `block` on any block finding, `warn` on any other, else `ok`.
    pub verdict: Verdict,
    /// 0, 1 or 2, from the verdict.
    pub exit_code: u8,
}

/// Returns the ids of a context (objects with `id` and `text`, or bare ids), refusing a
/// malformed, duplicate or secret-like item.
pub fn context_ids(context: &Value) -> Result<Vec<String>, Error> {
    let items = context.as_array().ok_or(Error::ContextNotAList)?;
    if items.is_empty() {
        return Err(Error::ContextEmpty);
    }
    let bare = items.iter().filter(|item| item.is_string()).count();
    if bare > 0 && bare < items.len() {
        return Err(Error::ContextMixed);
    }
    let mut ids: Vec<String> = Vec::with_capacity(items.len());
    let mut seen = BTreeSet::new();
    for (index, item) in items.iter().enumerate() {
        let ident = match item {
            Value::Object(object) => {
                if !object.get("text").is_some_and(Value::is_string) {
                    return Err(Error::ContextNeedsText(index));
                }
                object.get("id")
            }
            Value::String(_) => Some(item),
            _ => return Err(Error::ContextBadItem(index)),
        };
        let Some(Value::String(ident)) = ident else {
            return Err(Error::ContextIdNotString(index));
        };
        if ident.is_empty() {
            return Err(Error::ContextEmptyId(index));
        }
        if any_string(item, &mut |s| looks_secret(s)) {
            return Err(Error::ContextSecret(index));
        }
        if py_strip(ident) != ident.as_str() || ident.contains(['\n', '\r']) {
            return Err(Error::ContextIdWhitespace(index));
        }
        if !seen.insert(ident.as_str()) {
            return Err(Error::ContextDuplicate(pyrepr::string(ident)));
        }
        ids.push(ident.clone());
    }
    Ok(ids)
}

/// Tells whether any string in `value` (object keys included) satisfies `test`.
fn any_string(value: &Value, test: &mut impl FnMut(&str) -> bool) -> bool {
    match value {
        Value::String(s) => test(s),
        Value::Array(items) => items.iter().any(|item| any_string(item, test)),
        Value::Object(map) => map
            .iter()
            .any(|(key, item)| test(key) || any_string(item, test)),
        _ => false,
    }
}

/// Checks `text` against `context`.
///
/// ```
/// use hpp_core::citations::{check, Verdict, DEFAULT_MARKER};
/// let context = serde_json::json!(["sales-q3"]);
/// let ok = check("Sales grew 12% in the quarter [ID:sales-q3].", &context, 4, DEFAULT_MARKER).unwrap();
/// assert_eq!(ok.verdict, Verdict::Ok);
/// let uncited = check("Sales grew 12% in the quarter.", &context, 4, DEFAULT_MARKER).unwrap();
/// assert_eq!(uncited.verdict, Verdict::Warn);
/// ```
pub fn check(
    text: &str,
    context: &Value,
    max_per_sentence: i64,
    marker: &str,
) -> Result<Report, Error> {
    let limit = u64::try_from(max_per_sentence)
        .ok()
        .filter(|n| *n >= 1)
        .ok_or(Error::MaxPerSentence)?;
    let marker = Marker::new(marker)?;
    if py_strip(text).is_empty() {
        return Err(Error::EmptyText);
    }
    if looks_secret(text) {
        return Err(Error::SecretText);
    }
    let text_sha256 = sha256_hex(text.as_bytes());
    let ids = context_ids(context)?;
    let context_sha256 = sha256_hex(&canonical_json(context));
    let known: BTreeSet<&str> = ids.iter().map(String::as_str).collect();
    let doc = Doc::new(text);
    let parsed = doc.parse(&marker);
    if parsed.sentences.is_empty() {
        return Err(Error::NoSentence);
    }

    let starts: Vec<usize> = parsed.sentences.iter().map(|s| s.start).collect();
    let mut by_sentence: HashMap<usize, Vec<&Span>> = HashMap::new();
    for m in &parsed.markers {
        let index = starts.partition_point(|s| *s <= m.start).saturating_sub(1);
        by_sentence.entry(index).or_default().push(m);
    }

    let mut findings = Vec::new();
    let mut cited: Vec<String> = Vec::new();
    let mut quantitative = 0;
    for (index, sentence) in parsed.sentences.iter().enumerate() {
        let own: &[&Span] = by_sentence.get(&index).map_or(&[], Vec::as_slice);
        let line = parsed.line_starts.partition_point(|s| *s <= sentence.start);
        let shown = excerpt(doc.slice(sentence.start, sentence.end));
        let at = |code, severity, message: String| Finding {
            code,
            severity,
            sentence: Some(index + 1),
            line: Some(line),
            excerpt: shown.clone(),
            marker: None,
            count: None,
            token: None,
            message,
        };
        for m in own {
            let ident = py_strip(&m.id);
            let Some(code) = classify(&m.id, &known) else {
                cited.push(ident.to_owned());
                continue;
            };
            let message = match code {
                Code::EmptyMarker => "marker has no id".to_owned(),
                Code::Range => format!(
                    "marker cites {} as a range or a list; write one id per marker",
                    pyrepr::string(&excerpt(ident))
                ),
                _ => format!(
                    "marker cites {}, which is not in the context",
                    pyrepr::string(&excerpt(ident))
                ),
            };
            findings.push(Finding {
                marker: Some(excerpt(doc.slice(m.start, m.end))),
                ..at(code, Severity::Block, message)
            });
        }
        if own.len() as u64 > limit {
            findings.push(Finding {
                count: Some(own.len()),
                ..at(
                    Code::TooMany,
                    Severity::Warn,
                    format!(
                        "{} markers in one sentence (limit {limit}); a sentence that needs this many sources is several claims",
                        own.len()
                    ),
                )
            });
        }
        if sentence.kind == Kind::Heading {
            continue;
        }
        let Some(token) = doc.claim(sentence, own, &parsed.code) else {
            continue;
        };
        quantitative += 1;
        if own.is_empty() {
            let message = format!(
                "quantitative claim {} carries no citation",
                pyrepr::string(&token)
            );
            findings.push(Finding {
                token: Some(token),
                ..at(Code::UncitedClaim, Severity::Warn, message)
            });
        }
    }
    if parsed.markers.is_empty() && findings.is_empty() {
        // Why: with no marker and no uncited number every check passed vacuously; "ok" would
        // certify a text that cites nothing.
        findings.push(Finding {
            code: Code::NoMarkers,
            severity: Severity::Warn,
            sentence: None,
            line: None,
            excerpt: String::new(),
            marker: None,
            count: None,
            token: None,
            message: "the text cites nothing, so no citation was checked".to_owned(),
        });
    }
    let verdict = if findings.iter().any(|f| f.severity == Severity::Block) {
        Verdict::Block
    } else if findings.is_empty() {
        Verdict::Ok
    } else {
        Verdict::Warn
    };
    let unique: BTreeSet<&str> = cited.iter().map(String::as_str).collect();
    Ok(Report {
        schema: SCHEMA,
        text_sha256,
        context_sha256,
        marker_pattern: marker.pattern().to_owned(),
        max_per_sentence: limit,
        counts: Counts {
            sentences: parsed.sentences.len(),
            quantitative_sentences: quantitative,
            markers: parsed.markers.len(),
            cited_ids: cited.len(),
            unique_cited_ids: unique.len(),
            context_ids: ids.len(),
            unused_context_ids: known.difference(&unique).count(),
        },
        findings,
        verdict,
        exit_code: verdict.exit_code(),
    })
}

/// Returns the sentences [`check`] would judge, as the original text of each.
pub fn split_sentences(text: &str, marker: &Marker) -> Vec<String> {
    let doc = Doc::new(text);
    doc.parse(marker)
        .sentences
        .iter()
        .map(|s| doc.slice(s.start, s.end).to_owned())
        .collect()
}

/// `None` when the marker's id is known; otherwise why it blocks.
fn classify(raw: &str, known: &BTreeSet<&str>) -> Option<Code> {
    let ident = py_strip(raw);
    if ident.is_empty() {
        return Some(Code::EmptyMarker);
    }
    if known.contains(ident) {
        return None;
    }
    let is_number = |s: &str| NUMBER.is_match(s);
    let parts: Vec<&str> = LIST_SEPARATOR
        .split(ident)
        .map(py_strip)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() >= 2
        && (parts.iter().any(|p| known.contains(p)) || parts.iter().all(|p| is_number(p)))
    {
        return Some(Code::Range);
    }
    for sep in RANGE_SEPARATOR.find_iter(ident) {
        let (left, right) = (&ident[..sep.start()], &ident[sep.end()..]);
        if !left.is_empty()
            && !right.is_empty()
            && ((known.contains(left) && known.contains(right))
                || (is_number(left) && is_number(right)))
        {
            return Some(Code::Range);
        }
    }
    Some(Code::UnknownId)
}

/// Python's `str.isspace` (which, unlike Rust's `is_whitespace`, includes U+001C..U+001F).
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `\w`.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn py_strip(s: &str) -> &str {
    s.trim_matches(py_space)
}

/// Flattens whitespace and cuts to [`EXCERPT_CHARS`] characters, ending in `...` when cut.
fn excerpt(value: &str) -> String {
    let flat = value
        .split(py_space)
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if flat.chars().count() <= EXCERPT_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(EXCERPT_CHARS - 3).collect();
    format!("{}...", cut.trim_end_matches(py_space))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn run(text: &str, context: Value) -> Report {
        check(text, &context, DEFAULT_MAX_PER_SENTENCE, DEFAULT_MARKER).unwrap()
    }

    fn codes(report: &Report) -> Vec<Code> {
        report.findings.iter().map(|f| f.code).collect()
    }

    #[test]
    fn a_clean_text_is_ok_and_counts_what_it_cites() {
        let report = run(
            "Costs fell 4% in May [ID:a]. The team agreed [ID:b].\n",
            json!([{"id": "a", "text": "x"}, {"id": "b", "text": "y"}, {"id": "c", "text": "z"}]),
        );
        assert_eq!(report.verdict, Verdict::Ok, "{report:?}");
        assert_eq!(report.counts.sentences, 2);
        assert_eq!(report.counts.markers, 2);
        assert_eq!(report.counts.quantitative_sentences, 1);
        assert_eq!(report.counts.unused_context_ids, 1);
        assert_eq!(report.exit_code, 0);
    }

    #[test]
    fn ranges_and_lists_are_told_apart_from_unknown_ids() {
        let known: BTreeSet<&str> = ["doc-1", "a", "b"].into_iter().collect();
        assert_eq!(classify("doc-1", &known), None);
        assert_eq!(classify(" a ", &known), None);
        assert_eq!(classify("1-3", &known), Some(Code::Range));
        assert_eq!(classify("a, b", &known), Some(Code::Range));
        assert_eq!(classify("a..b", &known), Some(Code::Range));
        assert_eq!(classify("a–b", &known), Some(Code::Range));
        assert_eq!(classify("2026-09-24", &known), Some(Code::UnknownId));
        assert_eq!(classify("  ", &known), Some(Code::EmptyMarker));
    }

    #[test]
    fn too_many_markers_in_one_sentence_warn() {
        let report = check(
            "It is so [ID:a][ID:b][ID:c].",
            &json!(["a", "b", "c"]),
            2,
            DEFAULT_MARKER,
        )
        .unwrap();
        assert_eq!(codes(&report), [Code::TooMany]);
        assert_eq!(report.findings[0].count, Some(3));
    }

    #[test]
    fn a_custom_marker_with_one_group_is_used() {
        let report = check("Up 5% [[a]].", &json!(["a"]), 4, r"\[\[([^\]]*)\]\]").unwrap();
        assert_eq!(report.verdict, Verdict::Ok);
        assert_eq!(report.marker_pattern, r"\[\[([^\]]*)\]\]");
    }

    #[test]
    fn control_an_unknown_id_blocks() {
        let report = run("Revenue was $5 [ID:ghost].", json!(["real"]));
        assert_eq!(report.verdict, Verdict::Block);
        assert_eq!(codes(&report), [Code::UnknownId]);
        assert_eq!(
            report.findings[0].message,
            "marker cites 'ghost', which is not in the context"
        );
        assert_eq!(report.findings[0].marker.as_deref(), Some("[ID:ghost]"));
        assert_eq!(report.exit_code, 2);
    }

    #[test]
    fn control_unusable_inputs_are_refused() {
        let ctx = json!(["a"]);
        let refuse = |text: &str, ctx: &Value, max: i64, marker: &str| {
            check(text, ctx, max, marker).unwrap_err().to_string()
        };
        assert_eq!(
            refuse("x [ID:a].", &ctx, 0, DEFAULT_MARKER),
            Error::MaxPerSentence.to_string()
        );
        assert_eq!(
            refuse(" \n ", &ctx, 4, DEFAULT_MARKER),
            Error::EmptyText.to_string()
        );
        assert_eq!(
            refuse("password: hunter2", &ctx, 4, DEFAULT_MARKER),
            Error::SecretText.to_string()
        );
        assert_eq!(
            refuse("```\ncode\n```\n", &ctx, 4, DEFAULT_MARKER),
            Error::NoSentence.to_string()
        );
        assert_eq!(
            refuse("x.", &ctx, 4, "(a"),
            "invalid marker regex: unclosed group"
        );
        assert_eq!(
            refuse("x.", &ctx, 4, r"\[ID\]"),
            Error::MarkerGroups(0).to_string()
        );
        assert_eq!(
            refuse("x.", &ctx, 4, "(a?)"),
            Error::MarkerMatchesEmpty.to_string()
        );
        assert_eq!(
            refuse("x.", &ctx, 4, ""),
            Error::EmptyMarkerPattern.to_string()
        );
        let contexts = [
            (json!({}), Error::ContextNotAList),
            (json!([]), Error::ContextEmpty),
            (json!(["a", {"id": "b", "text": ""}]), Error::ContextMixed),
            (json!([{"id": "a"}]), Error::ContextNeedsText(0)),
            (json!([1]), Error::ContextBadItem(0)),
            (json!([{"id": 1, "text": ""}]), Error::ContextIdNotString(0)),
            (json!([""]), Error::ContextEmptyId(0)),
            (json!([" a"]), Error::ContextIdWhitespace(0)),
            (json!(["a", "a"]), Error::ContextDuplicate("'a'".into())),
            (
                json!([{"id": "a", "text": "api_key=xyz"}]),
                Error::ContextSecret(0),
            ),
        ];
        for (context, error) in contexts {
            assert_eq!(refuse("x.", &context, 4, DEFAULT_MARKER), error.to_string());
        }
    }

    #[test]
    fn excerpts_are_flat_and_cut_at_120_characters() {
        let long = "word ".repeat(40);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), 120);
        assert!(cut.ends_with("..."));
        assert_eq!(excerpt("a\n  b\tc"), "a b c");
    }

    fn markdownish() -> impl Strategy<Value = String> {
        let pieces = prop_oneof![
            Just("[ID:a]".to_owned()),
            Just("[ID:".to_owned()),
            Just("]".to_owned()),
            Just("`".to_owned()),
            Just("```".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("# ".to_owned()),
            Just("| ".to_owned()),
            Just("- ".to_owned()),
            Just(". ".to_owned()),
            Just("e.g. ".to_owned()),
            Just("$".to_owned()),
            Just("US$ 5".to_owned()),
            Just("v1.2".to_owned()),
            Just("\u{feff}".to_owned()),
            Just("\u{2028}".to_owned()),
            "[0-9]{1,4}",
            ".{0,6}",
        ];
        prop::collection::vec(pieces, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn the_parser_never_panics_on_markdownish_text(text in markdownish()) {
            match check(&text, &json!(["a", "b"]), 2, DEFAULT_MARKER) {
                Ok(report) => {
                    prop_assert_eq!(report.exit_code, report.verdict.exit_code());
                    prop_assert!(report.findings.iter().all(|f| f.excerpt.chars().count() <= EXCERPT_CHARS));
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }

        #[test]
        fn the_parser_never_panics_on_any_text(text in any::<String>()) {
            let _ = check(&text, &json!(["a"]), 4, DEFAULT_MARKER);
        }

        #[test]
        fn any_marker_regex_is_used_or_refused_without_panic(
            marker in "[\\[\\]()a-z.*+?|^$\\\\:]{0,12}",
            text in markdownish(),
        ) {
            match check(&text, &json!(["a"]), 4, &marker) {
                Ok(report) => prop_assert_eq!(report.marker_pattern, marker),
                Err(e) => prop_assert!(!e.to_string().is_empty() && !e.to_string().contains('\n')),
            }
        }
    }
}
