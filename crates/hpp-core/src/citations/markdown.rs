//! The Markdown shape of a text, as the citation check reads it: blocks (blank lines,
//! headings, list items, table rows), fenced and inline code, sentence splitting with its
//! abbreviations, and the quantitative token a sentence claims.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::{Marker, is_word, py_space, py_strip, re};

const TERMINAL: &[char] = &['.', '?', '!'];
const CLOSERS: &[char] = &['"', '\'', ')', ']', '}', '»', '”', '’'];
const OPENERS: &[char] = &['"', '\'', '(', '[', '{', '«', '“', '‘'];
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "cf.", "vs.", "al.", "approx.", "fig.", "no.", "dr.", "mr.", "mrs.", "ms.",
    "prof.", "st.", "jr.", "sr.", "inc.", "ltd.", "co.", "corp.", "jan.", "feb.", "mar.", "apr.",
    "jun.", "jul.", "aug.", "sep.", "sept.", "oct.", "nov.", "dec.",
];

static FENCE: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*(`{3,}|~{3,})"));
static HEADING: LazyLock<Regex> = LazyLock::new(|| re(r"^ {0,3}#{1,6}(?:[ \t]|$)"));
static LIST_ITEM: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+"));
static TABLE_ROW: LazyLock<Regex> = LazyLock::new(|| re(r"^[ \t]*\|"));
static INLINE_CODE: LazyLock<Regex> = LazyLock::new(|| re(r"`[^`\n]+`"));
static URL: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)https?://\S+|www\.\S+"));
static FOOTNOTE: LazyLock<Regex> = LazyLock::new(|| re(r"\[\^[^\]\s]+\]"));
// The reference's `(?<![\w.])v\d+...`: the look-behind is checked by hand (see `blank_versions`).
static VERSION: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)v\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.]+)?"));
static DIGIT: LazyLock<Regex> = LazyLock::new(|| re(r"\d"));
// The part of the reference's claim pattern from the digit on; the currency and space before
// it, and its `(?<!\w)` look-behind, are checked by hand (see `claim`).
static CLAIM_TAIL: LazyLock<Regex> = LazyLock::new(|| re(r"^\d(?:[\d.,:/-]*\d)?(?:\s?%)?"));

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    Heading,
    Table,
}

/// A sentence: characters `start..end` of the text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sentence {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) kind: Kind,
}

/// A marker: characters `start..end`, and the raw id it captured.
#[derive(Debug, Clone)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) id: String,
}

pub(super) struct Parsed {
    pub(super) sentences: Vec<Sentence>,
    pub(super) markers: Vec<Span>,
    pub(super) line_starts: Vec<usize>,
    pub(super) code: Vec<(usize, usize)>,
}

/// The text as characters, with the byte offset of each (regexes answer in bytes, the
/// heuristics count characters).
pub(super) struct Doc<'a> {
    text: &'a str,
    chars: Vec<char>,
    bytes: Vec<usize>,
}

/// Whether `position` falls inside one of `spans` (sorted, non-overlapping).
fn inside(spans: &[(usize, usize)], position: usize) -> bool {
    let index = spans.partition_point(|(a, _)| *a <= position);
    index > 0 && position < spans[index - 1].1
}

/// Python's `str.splitlines(keepends=True)`: each line's start and the start of the next.
fn line_bounds(chars: &[char]) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        let breaks = matches!(
            c,
            '\n' | '\r'
                | '\u{0b}'
                | '\u{0c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if breaks {
            if c == '\r' && chars.get(i) == Some(&'\n') {
                i += 1;
            }
            lines.push((start, i));
            start = i;
        }
    }
    if start < chars.len() {
        lines.push((start, chars.len()));
    }
    lines
}

impl<'a> Doc<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        let mut chars = Vec::with_capacity(text.len());
        let mut bytes = Vec::with_capacity(text.len() + 1);
        for (offset, c) in text.char_indices() {
            chars.push(c);
            bytes.push(offset);
        }
        bytes.push(text.len());
        Self { text, chars, bytes }
    }

    pub(super) fn slice(&self, start: usize, end: usize) -> &'a str {
        &self.text[self.bytes[start]..self.bytes[end]]
    }

    /// The character index of a byte offset that lies on a character boundary.
    fn index_of(&self, byte: usize) -> usize {
        self.bytes.partition_point(|b| *b < byte)
    }

    /// Blocks (start, end, kind), fenced-code spans, and the start of each line.
    fn structure(&self) -> (Vec<Sentence>, Vec<(usize, usize)>, Vec<usize>) {
        let mut blocks: Vec<Sentence> = Vec::new();
        let mut fenced = Vec::new();
        let mut line_starts = Vec::new();
        let mut current: Option<usize> = None;
        let mut fence: Option<(char, usize)> = None;
        for (line_start, next) in line_bounds(&self.chars) {
            line_starts.push(line_start);
            let mut start = line_start;
            let mut end = next;
            while end > start && matches!(self.chars[end - 1], '\r' | '\n') {
                end -= 1;
            }
            if start == 0 && end > 0 && self.chars[0] == '\u{feff}' {
                start = 1;
            }
            let line = self.slice(start, end);
            let chars_in = |s: &str| s.chars().count();
            let opener = FENCE.captures(line);
            if let Some((mark, width)) = fence {
                fenced.push((start, next));
                if let Some(caps) = &opener {
                    let run = caps.get(1).map_or("", |m| m.as_str());
                    let rest = &line[caps.get(0).map_or(0, |m| m.end())..];
                    if run.starts_with(mark) && run.len() >= width && py_strip(rest).is_empty() {
                        fence = None;
                    }
                }
                continue;
            }
            if let Some(caps) = opener {
                let run = caps.get(1).map_or("", |m| m.as_str());
                let mark = run.chars().next().unwrap_or('`');
                current = None;
                fence = Some((mark, run.len()));
                fenced.push((start, next));
                continue;
            }
            if py_strip(line).is_empty() {
                current = None;
                continue;
            }
            let indent = chars_in(line) - chars_in(line.trim_start_matches(py_space));
            let heading = HEADING.is_match(line);
            let table = TABLE_ROW.is_match(line);
            if heading || table {
                current = None;
                // Why: `|---|:-:|` only draws the table; counting it would inflate the count.
                let separator_row = table
                    && line
                        .trim_matches(|c| matches!(c, ' ' | '\t' | '|' | '-' | ':'))
                        .is_empty();
                if !separator_row {
                    blocks.push(Sentence {
                        start: start + indent,
                        end: start + chars_in(line.trim_end_matches(py_space)),
                        kind: if heading { Kind::Heading } else { Kind::Table },
                    });
                }
                continue;
            }
            if let Some(item) = LIST_ITEM.find(line) {
                blocks.push(Sentence {
                    start: start + chars_in(&line[..item.end()]),
                    end,
                    kind: Kind::Text,
                });
                current = Some(blocks.len() - 1);
            } else if let Some(index) = current {
                blocks[index].end = end;
            } else {
                blocks.push(Sentence {
                    start: start + indent,
                    end,
                    kind: Kind::Text,
                });
                current = Some(blocks.len() - 1);
            }
        }
        (blocks, fenced, line_starts)
    }

    pub(super) fn parse(&self, marker: &Marker) -> Parsed {
        let (blocks, fenced, line_starts) = self.structure();
        let code: Vec<(usize, usize)> = INLINE_CODE
            .find_iter(self.text)
            .map(|m| (self.index_of(m.start()), self.index_of(m.end())))
            .filter(|(a, _)| !inside(&fenced, *a))
            .collect();
        let markers: Vec<Span> =
            marker
                .regex
                .find_all(self.text)
                .into_iter()
                .filter_map(|found| {
                    let (start, end) = (self.index_of(found.whole.0), self.index_of(found.whole.1));
                    let id = found.group.map_or("", |(a, b)| &self.text[a..b]).to_owned();
                    (end > start && !inside(&fenced, start) && !inside(&code, start))
                        .then_some(Span { start, end, id })
                })
                .collect();
        let markers_at: HashMap<usize, usize> = markers.iter().map(|m| (m.start, m.end)).collect();
        let mut skip = markers_at.clone();
        skip.extend(code.iter().copied());
        let mut sentences = Vec::new();
        for block in blocks {
            if block.kind == Kind::Text {
                sentences.extend(
                    self.pieces(block.start, block.end, &skip, &markers_at)
                        .into_iter()
                        .map(|(start, end)| Sentence {
                            start,
                            end,
                            kind: Kind::Text,
                        }),
                );
            } else if block.start < block.end {
                sentences.push(block);
            }
        }
        Parsed {
            sentences,
            markers,
            line_starts,
            code,
        }
    }

    /// Whether the word ending at `stop` (a full stop) is a known abbreviation.
    fn abbreviation(&self, begin: usize, stop: usize) -> bool {
        let mut from = stop;
        while from > begin && !py_space(self.chars[from - 1]) {
            from -= 1;
        }
        let word: String = self.chars[from..stop].iter().collect();
        let word = word.trim_start_matches(OPENERS).to_lowercase();
        !word.is_empty() && ABBREVIATIONS.contains(&word.as_str())
    }

    /// Splits one text block into sentences.
    fn pieces(
        &self,
        start: usize,
        end: usize,
        skip: &HashMap<usize, usize>,
        markers_at: &HashMap<usize, usize>,
    ) -> Vec<(usize, usize)> {
        let chars = &self.chars;
        let mut pieces = Vec::new();
        let (mut begin, mut i) = (start, start);
        while i < end {
            if let Some(jump) = skip.get(&i) {
                i = (*jump).max(i + 1);
                continue;
            }
            if !TERMINAL.contains(&chars[i]) {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < end && TERMINAL.contains(&chars[j]) {
                j += 1;
            }
            while j < end && CLOSERS.contains(&chars[j]) {
                j += 1;
            }
            if (j < end && !py_space(chars[j]))
                || (chars[i] == '.' && self.abbreviation(begin, i + 1))
            {
                i = j;
                continue;
            }
            // Why: `It grew 12%. [ID:a]` is a common way to cite; the marker after the full
            // stop belongs to the sentence that just ended.
            let mut k = j;
            loop {
                let mut m = k;
                while m < end && matches!(chars[m], ' ' | '\t') {
                    m += 1;
                }
                match markers_at.get(&m) {
                    Some(stop) if *stop <= end => k = *stop,
                    _ => break,
                }
            }
            while k < end && (TERMINAL.contains(&chars[k]) || CLOSERS.contains(&chars[k])) {
                k += 1;
            }
            pieces.push((begin, k));
            begin = k;
            i = k;
        }
        pieces.push((begin, end));
        pieces
            .into_iter()
            .filter_map(|(mut a, mut b)| {
                while a < b && py_space(chars[a]) {
                    a += 1;
                }
                while b > a && py_space(chars[b - 1]) {
                    b -= 1;
                }
                (a < b).then_some((a, b))
            })
            .collect()
    }

    /// The first quantitative token of a sentence, with its markers, inline code, URLs,
    /// footnote references and `v`-versions blanked out first.
    pub(super) fn claim(
        &self,
        sentence: &Sentence,
        own: &[&Span],
        code: &[(usize, usize)],
    ) -> Option<String> {
        let (start, end) = (sentence.start, sentence.end);
        let mut chars: Vec<char> = self.chars[start..end].to_vec();
        let spans = own
            .iter()
            .map(|m| (m.start, m.end))
            .chain(code.iter().copied());
        for (a, b) in spans {
            for position in a.max(start)..b.min(end) {
                chars[position - start] = ' ';
            }
        }
        let mut scanned: String = chars.iter().collect();
        for pattern in [&*URL, &*FOOTNOTE] {
            scanned = pattern
                .replace_all(&scanned, |caps: &regex::Captures<'_>| {
                    " ".repeat(caps[0].chars().count())
                })
                .into_owned();
        }
        scanned = blank_versions(&scanned);
        claim(&scanned)
    }
}

/// Blanks `v2.5.8`-style versions not glued to a word character or a dot on their left.
fn blank_versions(text: &str) -> String {
    let mut ranges = Vec::new();
    let mut position = 0;
    while let Some(m) = VERSION.find_at(text, position) {
        let glued = text[..m.start()]
            .chars()
            .next_back()
            .is_some_and(|c| is_word(c) || c == '.');
        if glued {
            position = m.start() + text[m.start()..].chars().next().map_or(1, char::len_utf8);
        } else {
            ranges.push(m.range());
            position = m.end();
        }
        if position > text.len() {
            break;
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for range in ranges {
        out.push_str(&text[last..range.start]);
        out.push_str(&" ".repeat(text[range.clone()].chars().count()));
        last = range.end;
    }
    out.push_str(&text[last..]);
    out
}

/// The reference's claim pattern: an optional currency sign and one space, then a digit not
/// glued to a word character on its left, digits and separators, and an optional `%`.
fn claim(scanned: &str) -> Option<String> {
    let digit = DIGIT.find_iter(scanned).find(|m| {
        !scanned[..m.start()]
            .chars()
            .next_back()
            .is_some_and(is_word)
    })?;
    let tail = CLAIM_TAIL.find(&scanned[digit.start()..])?;
    let before = &scanned[..digit.start()];
    // The leftmost match includes the longest prefix the pattern allows: currency, then space.
    let spaced = before
        .chars()
        .next_back()
        .filter(|c| py_space(*c))
        .map_or(before, |c| &before[..before.len() - c.len_utf8()]);
    let start = ["US$", "R$", "$", "€", "£", "¥"]
        .iter()
        .find(|sign| spaced.ends_with(*sign))
        .map_or(digit.start(), |sign| spaced.len() - sign.len());
    Some(py_strip(&scanned[start..digit.start() + tail.end()]).to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::claim;
    use crate::citations::{
        Code, DEFAULT_MARKER, DEFAULT_MAX_PER_SENTENCE, Marker, Report, Verdict, check,
        split_sentences,
    };

    fn run(text: &str, context: Value) -> Report {
        check(text, &context, DEFAULT_MAX_PER_SENTENCE, DEFAULT_MARKER).unwrap()
    }

    fn codes(report: &Report) -> Vec<Code> {
        report.findings.iter().map(|f| f.code).collect()
    }

    fn sentences(text: &str) -> Vec<String> {
        split_sentences(text, &Marker::new(DEFAULT_MARKER).unwrap())
    }

    #[test]
    fn sentences_split_on_terminals_but_not_decimals_or_abbreviations() {
        assert_eq!(
            sentences("It is 3.5 m long, e.g. a rod. Dr. Who agrees! Really?"),
            [
                "It is 3.5 m long, e.g. a rod.",
                "Dr. Who agrees!",
                "Really?"
            ]
        );
    }

    #[test]
    fn a_marker_after_the_full_stop_belongs_to_the_sentence_before() {
        assert_eq!(
            sentences("It grew 12%. [ID:a] Then it fell."),
            ["It grew 12%. [ID:a]", "Then it fell."]
        );
        let report = run("It grew 12%. [ID:a] Then it fell.", json!(["a"]));
        assert_eq!(report.verdict, Verdict::Ok);
    }

    #[test]
    fn markdown_shape_makes_blocks_and_fenced_code_is_skipped() {
        let text = "# Title 2026\n\n- one item\n- two\n\n| a | 5 |\n|---|---|\n\n```\nx = 1. [ID:zz]\n```\nEnd `[ID:nope]` here.";
        assert_eq!(
            sentences(text),
            [
                "# Title 2026",
                "one item",
                "two",
                "| a | 5 |",
                "End `[ID:nope]` here."
            ]
        );
        let report = run(text, json!(["a"]));
        // The heading's number is not scanned; the table row's is.
        assert_eq!(codes(&report), [Code::UncitedClaim]);
        assert_eq!(report.findings[0].line, Some(6));
        assert_eq!(report.counts.markers, 0);
    }

    #[test]
    fn quantitative_tokens_keep_currency_and_percent() {
        assert_eq!(
            claim("paid US$ 1,200.50 today").as_deref(),
            Some("US$ 1,200.50")
        );
        assert_eq!(claim("rose 7 % overall").as_deref(), Some("7 %"));
        assert_eq!(claim("cost €30").as_deref(), Some("€30"));
        assert_eq!(claim("on 2026-09-24").as_deref(), Some("2026-09-24"));
        assert_eq!(claim("in Q3 only"), None);
        assert_eq!(claim("a 3x speedup").as_deref(), Some("3"));
    }

    #[test]
    fn versions_urls_and_footnotes_are_not_claims() {
        let report = run(
            "Install v2.5.8 from https://example.com/r/42 as noted[^1].",
            json!(["a"]),
        );
        assert_eq!(codes(&report), [Code::NoMarkers]);
        let bare = run("Install 2.5.8 now.", json!(["a"]));
        assert_eq!(codes(&bare), [Code::UncitedClaim]);
        assert_eq!(bare.findings[0].token.as_deref(), Some("2.5.8"));
    }

    #[test]
    fn control_what_code_hides_is_checked_once_it_is_prose() {
        let fenced = run(
            "Fine [ID:a].\n```\nCost $5 [ID:ghost].\n```\n",
            json!(["a"]),
        );
        assert_eq!(fenced.verdict, Verdict::Ok, "{fenced:?}");
        let prose = run("Fine [ID:a].\n\nCost $5 [ID:ghost].\n", json!(["a"]));
        assert_eq!(codes(&prose), [Code::UnknownId]);
        assert_eq!(prose.verdict, Verdict::Block);
        let inline = run("It costs `5` here.", json!(["a"]));
        assert_eq!(codes(&inline), [Code::NoMarkers]);
        let bare = run("It costs 5 here.", json!(["a"]));
        assert_eq!(codes(&bare), [Code::UncitedClaim]);
        assert_eq!(bare.findings[0].token.as_deref(), Some("5"));
    }
}
