//! Regular expressions in the dialect the reference's users write them in (Python's `re`).
//!
//! A pattern is compiled with the `regex` crate when it can be (linear time, no bound needed).
//! One that uses what `regex` does not have, look-around (`(?=`, `(?!`, `(?<=`, `(?<!`) or a
//! back-reference (`\1`, `(?P=name)`), is compiled with `fancy-regex` instead, which
//! backtracks: its work is bounded ([`BACKTRACK_LIMIT`] steps per match, [`SIZE_LIMIT`] bytes
//! of compiled program), and a match that runs out of that bound is reported as undecided,
//! never as a silent "no".

/// The most backtracking steps one match may take.
pub const BACKTRACK_LIMIT: usize = 100_000;

/// The largest compiled program a pattern may have, in bytes.
pub const SIZE_LIMIT: usize = 1 << 20;

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    Linear(regex::Regex),
    Backtracking(Box<fancy_regex::Regex>),
}

/// One match: its span, and the span of its first group when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Byte offsets of the whole match.
    pub whole: (usize, usize),
    /// Byte offsets of group 1, when it took part.
    pub group: Option<(usize, usize)>,
}

impl Pattern {
    /// Compiles `pattern`; `case_insensitive` as Python's `re.IGNORECASE`. The error is one line.
    pub fn new(pattern: &str, case_insensitive: bool) -> Result<Self, String> {
        let linear = regex::RegexBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .size_limit(SIZE_LIMIT)
            .build();
        match linear {
            Ok(regex) => Ok(Self {
                inner: Inner::Linear(regex),
            }),
            Err(first) => {
                let text = if case_insensitive {
                    format!("(?i){pattern}")
                } else {
                    pattern.to_owned()
                };
                let fancy = fancy_regex::RegexBuilder::new(&text)
                    .backtrack_limit(BACKTRACK_LIMIT)
                    .delegate_size_limit(SIZE_LIMIT)
                    .build();
                match fancy {
                    // Only a pattern that needs backtracking goes this way; any other error is
                    // the linear engine's, which says best what is wrong.
                    Ok(regex) if needs_backtracking(pattern) => Ok(Self {
                        inner: Inner::Backtracking(Box::new(regex)),
                    }),
                    Ok(_) => Err(one_line(&first.to_string())),
                    Err(e) if needs_backtracking(pattern) => Err(one_line(&e.to_string())),
                    Err(_) => Err(one_line(&first.to_string())),
                }
            }
        }
    }

    /// Whether the pattern backtracks (uses look-around or a back-reference).
    pub fn is_backtracking(&self) -> bool {
        matches!(self.inner, Inner::Backtracking(_))
    }

    /// How many capture groups it has (not counting the whole match).
    pub fn groups(&self) -> usize {
        match &self.inner {
            Inner::Linear(r) => r.captures_len() - 1,
            Inner::Backtracking(r) => r.captures_len() - 1,
        }
    }

    /// Whether it matches somewhere in `text`; `Err` when a backtracking match ran out of its
    /// bound before it could tell.
    pub fn is_match(&self, text: &str) -> Result<bool, String> {
        match &self.inner {
            Inner::Linear(r) => Ok(r.is_match(text)),
            Inner::Backtracking(r) => r.is_match(text).map_err(|e| one_line(&e.to_string())),
        }
    }

    /// Every non-overlapping match in `text`, in order; a backtracking search that runs out of
    /// its bound stops there.
    pub fn find_all(&self, text: &str) -> Vec<Found> {
        match &self.inner {
            Inner::Linear(r) => r
                .captures_iter(text)
                .filter_map(|c| {
                    let whole = c.get(0)?;
                    Some(Found {
                        whole: (whole.start(), whole.end()),
                        group: c.get(1).map(|g| (g.start(), g.end())),
                    })
                })
                .collect(),
            Inner::Backtracking(r) => r
                .captures_iter(text)
                .map_while(Result::ok)
                .filter_map(|c| {
                    let whole = c.get(0)?;
                    Some(Found {
                        whole: (whole.start(), whole.end()),
                        group: c.get(1).map(|g| (g.start(), g.end())),
                    })
                })
                .collect(),
        }
    }
}

/// Whether `pattern` uses look-around or a back-reference (outside a character class).
fn needs_backtracking(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    let mut class = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if i + 1 < bytes.len() => {
                if !class && bytes[i + 1].is_ascii_digit() && bytes[i + 1] != b'0' {
                    return true;
                }
                i += 2;
                continue;
            }
            b'[' if !class => class = true,
            b']' if class => class = false,
            b'(' if !class => {
                let rest = &pattern[i + 1..];
                if ["?=", "?!", "?<=", "?<!", "?P="]
                    .iter()
                    .any(|p| rest.starts_with(p))
                {
                    return true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The regex crates explain an error over several lines with a caret; a refusal is one line:
/// the `error: ` line's reason, else the last line.
fn one_line(text: &str) -> String {
    if let Some(reason) = text.lines().find_map(|l| l.trim().strip_prefix("error: ")) {
        return reason.to_owned();
    }
    let last = text.lines().rev().find(|line| !line.trim().is_empty());
    last.unwrap_or(text).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_around_and_back_references_compile_and_match_as_python_does() {
        let ahead = Pattern::new(r"git push(?!.*--dry-run)", true).unwrap();
        assert!(ahead.is_backtracking());
        assert_eq!(ahead.is_match("git push origin main"), Ok(true));
        assert_eq!(ahead.is_match("git push --dry-run origin"), Ok(false));
        let behind = Pattern::new(r"(?<=rm )-rf", false).unwrap();
        assert_eq!(behind.is_match("rm -rf src"), Ok(true));
        let twice = Pattern::new(r"\b(\w+) \1\b", false).unwrap();
        assert_eq!(twice.is_match("the the cat"), Ok(true));
        assert_eq!(twice.is_match("the cat"), Ok(false));
        let plain = Pattern::new(r"\[ID:([a-z]+)\]", false).unwrap();
        assert!(!plain.is_backtracking());
        assert_eq!(plain.groups(), 1);
        let found = plain.find_all("a [ID:x] b [ID:yz]");
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].group, Some((15, 17)));
    }

    #[test]
    fn control_a_pattern_that_never_finishes_is_undecided_not_a_silent_no() {
        let runaway = Pattern::new(r"^(a+)+\1$", false).unwrap();
        let text = format!("{}b", "a".repeat(40));
        assert!(runaway.is_match(&text).is_err(), "the bound stops it");
        let broken = Pattern::new(r"(?<=a", false).unwrap_err();
        assert!(!broken.contains('\n'), "{broken}");
        assert!(Pattern::new("[unclosed", false).is_err());
    }
}
