//! The Rust reader: a tokenizer that knows comments, strings, raw strings, chars and lifetimes,
//! and tracks `mod` blocks, attributes and `fn` items.

use std::collections::BTreeMap;

use super::{Citation, Kind, find_spec_markers};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Comment { text: String, inner_doc: bool },
    Ident(String),
    Punct(char),
    Literal,
}

struct Token {
    tok: Tok,
    first_line: usize,
    last_line: usize,
}

const QUALIFIERS: [&str; 6] = ["pub", "async", "unsafe", "const", "extern", "default"];

fn lex(source: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let count_lines =
        |from: usize, to: usize| chars[from..to].iter().filter(|c| **c == '\n').count();
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let first_line = line;
        let peek = |k: usize| chars.get(i + k).copied();
        let tok = if c.is_whitespace() {
            if c == '\n' {
                line += 1;
            }
            i += 1;
            continue;
        } else if c == '/' && peek(1) == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            let text: String = chars[start + 2..i].iter().collect();
            let inner_doc = text.starts_with('!');
            Tok::Comment { text, inner_doc }
        } else if c == '/' && peek(1) == Some('*') {
            let mut depth = 0usize;
            loop {
                match (chars.get(i), chars.get(i + 1)) {
                    (Some('/'), Some('*')) => {
                        depth += 1;
                        i += 2;
                    }
                    (Some('*'), Some('/')) => {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    }
                    (Some(_), _) => i += 1,
                    (None, _) => return Err("unterminated block comment".into()),
                }
            }
            let text: String = chars[start + 2..i - 2].iter().collect();
            let inner_doc = text.starts_with('!');
            Tok::Comment { text, inner_doc }
        } else if c == '"' {
            i = string_end(&chars, i + 1)?;
            Tok::Literal
        } else if c == '\'' {
            if peek(1) == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                if i >= chars.len() {
                    return Err("unterminated character literal".into());
                }
                i += 1;
                Tok::Literal
            } else if peek(2) == Some('\'') {
                i += 3;
                Tok::Literal
            } else {
                // A lifetime or a label.
                i += 1;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                Tok::Literal
            }
        } else if c == '_' || c.is_alphabetic() {
            while chars
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let hashes = chars[i..].iter().take_while(|c| **c == '#').count();
            let raw_capable = matches!(word.as_str(), "r" | "br" | "cr");
            if raw_capable && chars.get(i + hashes) == Some(&'"') {
                i = raw_string_end(&chars, i + hashes + 1, hashes)?;
                Tok::Literal
            } else if matches!(word.as_str(), "b" | "c") && chars.get(i) == Some(&'"') {
                i = string_end(&chars, i + 1)?;
                Tok::Literal
            } else if word == "b" && chars.get(i) == Some(&'\'') {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                Tok::Literal
            } else if word == "r"
                && hashes == 1
                && chars
                    .get(i + 1)
                    .is_some_and(|c| *c == '_' || c.is_alphabetic())
            {
                i += 1;
                let from = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                Tok::Ident(chars[from..i].iter().collect())
            } else {
                Tok::Ident(word)
            }
        } else if c.is_ascii_digit() {
            while chars
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            Tok::Literal
        } else {
            i += 1;
            Tok::Punct(c)
        };
        line += count_lines(start, i.min(chars.len()));
        let last_line = line;
        tokens.push(Token {
            tok,
            first_line,
            last_line,
        });
    }
    Ok(tokens)
}

fn string_end(chars: &[char], mut i: usize) -> Result<usize, String> {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err("unterminated double quote string".into())
}

fn raw_string_end(chars: &[char], mut i: usize, hashes: usize) -> Result<usize, String> {
    while i < chars.len() {
        if chars[i] == '"'
            && chars[i + 1..]
                .iter()
                .take(hashes)
                .filter(|c| **c == '#')
                .count()
                == hashes
        {
            return Ok(i + 1 + hashes);
        }
        i += 1;
    }
    Err("unterminated raw string".into())
}

/// Returns the citing entries of a Rust source: the comments directly above each `#[test]`
/// function (attributes between allowed, a blank line ends the block), keyed
/// `path::module::function` by the inline `mod` blocks around it, and each module's `//!`
/// inner docs keyed by the module.
pub(super) fn citations(path: &str, source: &str) -> Result<Vec<Citation>, String> {
    let tokens = lex(source)?;
    // The open braces: the name of the inline module each opens, `None` for any other block.
    let mut frames: Vec<Option<String>> = Vec::new();
    let mut comments: Vec<&str> = Vec::new();
    let mut attributes: Vec<String> = Vec::new();
    let mut module_name: Option<String> = None;
    let mut inner_docs: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut found = Vec::new();
    let mut previous_line = 0usize;
    let mut index = 0;
    let module_key = |frames: &[Option<String>]| -> Option<String> {
        let mut key = path.to_owned();
        for frame in frames {
            key.push_str("::");
            key.push_str(frame.as_deref()?);
        }
        Some(key)
    };
    while index < tokens.len() {
        let token = &tokens[index];
        if token.first_line > previous_line + 1 {
            comments.clear();
        }
        previous_line = token.last_line;
        index += 1;
        let mut keep_run = false;
        match &token.tok {
            Tok::Comment {
                inner_doc: true,
                text,
            } => {
                if let Some(key) = module_key(&frames) {
                    inner_docs.entry(key).or_default().push(text);
                }
            }
            Tok::Comment { text, .. } => {
                comments.push(text);
                keep_run = true;
            }
            Tok::Punct('#') => {
                let inner = matches!(tokens.get(index).map(|t| &t.tok), Some(Tok::Punct('!')));
                if inner {
                    index += 1;
                }
                if matches!(tokens.get(index).map(|t| &t.tok), Some(Tok::Punct('['))) {
                    let (attribute, end) = attribute_path(&tokens, index + 1);
                    previous_line = tokens
                        .get(end.saturating_sub(1))
                        .map_or(previous_line, |t| t.last_line);
                    index = end;
                    if !inner {
                        attributes.push(attribute);
                        keep_run = true;
                    }
                }
            }
            Tok::Ident(word) if word == "pub" => {
                if matches!(tokens.get(index).map(|t| &t.tok), Some(Tok::Punct('('))) {
                    while index < tokens.len() && tokens[index].tok != Tok::Punct(')') {
                        index += 1;
                    }
                    index += 1;
                }
                keep_run = true;
            }
            Tok::Ident(word) if word == "extern" => {
                if matches!(tokens.get(index).map(|t| &t.tok), Some(Tok::Literal)) {
                    index += 1;
                }
                keep_run = true;
            }
            Tok::Ident(word) if QUALIFIERS.contains(&word.as_str()) => keep_run = true,
            Tok::Ident(word) if word == "fn" => {
                if let Some(Tok::Ident(name)) = tokens.get(index).map(|t| &t.tok)
                    && attributes
                        .iter()
                        .any(|a| a == "test" || a.ends_with("::test"))
                    && let Some(key) = module_key(&frames)
                {
                    let cites = find_spec_markers(&comments.join("\n"));
                    if !cites.is_empty() {
                        found.push(Citation {
                            test: format!("{key}::{name}"),
                            kind: Kind::Function,
                            cites: cites.into_iter().collect(),
                        });
                    }
                }
            }
            Tok::Ident(word) if word == "mod" => {
                if let Some(Tok::Ident(name)) = tokens.get(index).map(|t| &t.tok) {
                    module_name = Some(name.clone());
                    index += 1;
                    previous_line = tokens[index - 1].last_line;
                }
            }
            Tok::Punct('{') => frames.push(module_name.take()),
            Tok::Punct('}') => {
                frames.pop().ok_or("unexpected closing delimiter `}`")?;
            }
            _ => {}
        }
        if !matches!(&token.tok, Tok::Ident(w) if w == "mod") {
            module_name = None;
        }
        if !keep_run {
            comments.clear();
            attributes.clear();
        }
    }
    if !frames.is_empty() {
        return Err("unclosed delimiter `{`".into());
    }
    for (key, texts) in inner_docs {
        let cites = find_spec_markers(&texts.join("\n"));
        if !cites.is_empty() {
            found.push(Citation {
                test: key,
                kind: Kind::Module,
                cites: cites.into_iter().collect(),
            });
        }
    }
    Ok(found)
}

/// Returns an attribute's path (`test`, `tokio::test`, `cfg`) and the index after its `]`.
fn attribute_path(tokens: &[Token], mut index: usize) -> (String, usize) {
    let mut path = String::new();
    let mut in_path = true;
    let mut depth = 1usize;
    while index < tokens.len() {
        match &tokens[index].tok {
            Tok::Punct('[') => depth += 1,
            Tok::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    return (path, index + 1);
                }
            }
            Tok::Ident(word) if in_path => path.push_str(word),
            Tok::Punct(':') if in_path => path.push(':'),
            _ => in_path = false,
        }
        index += 1;
    }
    (path, index)
}

#[cfg(test)]
mod tests {
    use crate::coverage::{Citation, Kind, Language, citations};
    use proptest::prelude::*;

    fn rs(path: &str, source: &str) -> Vec<Citation> {
        citations(Language::Rust, path, source).expect("valid Rust")
    }

    #[test]
    fn rust_comments_above_a_test_cite_attributes_between_allowed() {
        let source = r##"//! Render tests. [spec: render/column-width]
pub fn helper() -> &'static str { "[spec: parse/nope] }" }

/// Pads columns. [spec: render/column-width]
#[test]
#[ignore = "slow"]
fn pads() {}

#[cfg(test)]
mod tests {
    use super::*;

    // [spec: parse/iso-date]
    #[tokio::test(flavor = "current_thread")]
    pub(crate) async fn parses_iso() { let _c = '}'; let _r = r#"{"#; }

    // [spec: parse/empty-input]

    #[test]
    fn separated_by_a_blank_line() {}

    /// [spec: parse/empty-input]
    fn not_a_test() {}
}
"##;
        let found = rs("src/render.rs", source);
        let summary: Vec<(String, Kind)> = found.into_iter().map(|c| (c.test, c.kind)).collect();
        assert_eq!(
            summary,
            vec![
                ("src/render.rs::pads".into(), Kind::Function),
                ("src/render.rs::tests::parses_iso".into(), Kind::Function),
                ("src/render.rs".into(), Kind::Module),
            ]
        );
    }

    #[test]
    fn control_broken_rust_is_refused() {
        for source in ["fn f() {", "fn f() { \"open }", "}", "/* never closed"] {
            let error = citations(Language::Rust, "t.rs", source).expect_err("refused");
            assert!(
                error.to_string().starts_with("t.rs is not valid Rust: "),
                "{error}"
            );
        }
    }

    proptest! {
        #[test]
        fn no_rust_source_panics(source in "[a-z_ :=(){}\\[\\]'\"\\\\#!/*\\n.,;]{0,200}") {
            let _ = citations(Language::Rust, "t.rs", &source);
        }
    }
}
