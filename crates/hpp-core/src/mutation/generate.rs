//! The mutant generator of criterion sensitivity: a small tokenizer per language and a fixed
//! operator table.
//!
//! | token | becomes | languages | only where |
//! |---|---|---|---|
//! | `<` `<=` | `<=` `<` | Python, Rust | Rust: not a generic bracket |
//! | `>` `>=` | `>=` `>` | Python, Rust | Rust: not a generic bracket |
//! | `==` `!=` | `!=` `==` | Python, Rust | |
//! | `+` `-` | `-` `+` | Python, Rust | binary (after an operand) |
//! | `*` `/` | `/` `*` | Python, Rust | binary (after an operand) |
//! | `and` `or` | `or` `and` | Python | |
//! | `&&` `\|\|` | `\|\|` `&&` | Rust | binary (after an operand) |
//! | `True` `False` | `False` `True` | Python | |
//! | `true` `false` | `false` `true` | Rust | |
//! | decimal integer literal `n` | `n+1` (suffix kept) | Python, Rust | not a tuple index, not in a Rust attribute |
//!
//! Tokens inside strings, byte strings, raw strings, character literals and comments are never
//! mutated. "Binary" means the token before the operator ends an operand (a name that is not
//! a keyword, a literal, `)`, `]`), so `-1`, `*args` and `&&x` are left alone. A Rust `<`
//! opens generic arguments after `::`, `impl`, the name of an item being declared (`fn f<`), or
//! a CamelCase name (`Vec<`); its `>` closes them. A generated mutant's id is
//! `<file>:<line>:<column>:<token>-><replacement>` (line from 1, column from 0, in characters),
//! and it applies at exactly that position.

use super::{Error, Locator, Mutant, TokenProblem};
pub use crate::language::Language;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// An identifier or keyword.
    Name,
    /// A number literal.
    Number,
    /// An operator or punctuation.
    Op,
    /// A string, byte string or character literal.
    Text,
    /// A Rust lifetime or loop label (`'a`).
    Lifetime,
}

/// One token of a source text. Comments and whitespace are not tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// What it is.
    pub kind: TokenKind,
    /// Its text, as in the source.
    pub text: &'a str,
    /// Its line, from 1.
    pub line: u32,
    /// Its column, from 0, in characters.
    pub column: u32,
}

const PYTHON_OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "==", "!=", "<=", ">=", "**", "//", "<<", ">>",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=",
];

const RUST_OPS: &[&str] = &[
    "<<=", ">>=", "...", "..=", "::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "+=", "-=",
    "*=", "/=", "%=", "^=", "&=", "|=", "<<", ">>", "..",
];

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    line_start: usize,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Self {
            src,
            pos: 0,
            line: 1,
            line_start: 0,
        }
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn peek(&self, k: usize) -> Option<char> {
        self.rest().chars().nth(k)
    }

    /// Consumes one character (a `\r\n` pair counts as one newline).
    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.pos += c.len_utf8();
        if c == '\r' && self.peek(0) == Some('\n') {
            self.pos += 1;
        }
        if c == '\r' || c == '\n' {
            self.line += 1;
            self.line_start = self.pos;
        }
        Some(c)
    }

    fn bump_while(&mut self, keep: impl Fn(char) -> bool) {
        while self.peek(0).is_some_and(&keep) {
            self.bump();
        }
    }

    fn column(&self, at: usize) -> u32 {
        u32::try_from(self.src[self.line_start..at].chars().count()).unwrap_or(u32::MAX)
    }

    fn skip_line(&mut self) {
        self.bump_while(|c| c != '\n' && c != '\r');
    }

    fn op(&mut self, table: &[&str]) {
        if let Some(op) = table.iter().find(|op| self.rest().starts_with(**op)) {
            self.pos += op.len();
        } else {
            self.bump();
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Splits a source into tokens, dropping comments and whitespace.
///
/// # Errors
///
/// [`TokenProblem`] with the line where an unterminated string or block comment starts.
pub fn tokenize(language: Language, source: &str) -> Result<Vec<Token<'_>>, (u32, TokenProblem)> {
    let mut lx = Lexer::new(source);
    let mut tokens = Vec::new();
    while let Some(c) = lx.peek(0) {
        if c.is_whitespace() || (c == '\\' && language == Language::Python) {
            lx.bump();
            continue;
        }
        if language == Language::Python && c == '#' {
            lx.skip_line();
            continue;
        }
        if language == Language::Rust && c == '/' && lx.peek(1) == Some('/') {
            lx.skip_line();
            continue;
        }
        if language == Language::Rust && c == '/' && lx.peek(1) == Some('*') {
            rust_block_comment(&mut lx)?;
            continue;
        }
        let (start, line, column) = (lx.pos, lx.line, lx.column(lx.pos));
        let kind = match language {
            Language::Python => python_token(&mut lx, c)?,
            Language::Rust => rust_token(&mut lx, c)?,
        };
        tokens.push(Token {
            kind,
            text: &source[start..lx.pos],
            line,
            column,
        });
    }
    Ok(tokens)
}

fn python_token(lx: &mut Lexer<'_>, c: char) -> Result<TokenKind, (u32, TokenProblem)> {
    if is_ident_start(c) {
        let start = lx.pos;
        lx.bump_while(is_ident);
        let word = &lx.src[start..lx.pos];
        let prefix = word.len() <= 2
            && word
                .chars()
                .all(|c| matches!(c.to_ascii_lowercase(), 'r' | 'b' | 'u' | 'f'));
        if prefix && matches!(lx.peek(0), Some('"' | '\'')) {
            python_string(lx)?;
            return Ok(TokenKind::Text);
        }
        return Ok(TokenKind::Name);
    }
    if c.is_ascii_digit() || (c == '.' && lx.peek(1).is_some_and(|d| d.is_ascii_digit())) {
        number(lx, |_| false);
        return Ok(TokenKind::Number);
    }
    if c == '"' || c == '\'' {
        python_string(lx)?;
        return Ok(TokenKind::Text);
    }
    lx.op(PYTHON_OPS);
    Ok(TokenKind::Op)
}

fn python_string(lx: &mut Lexer<'_>) -> Result<(), (u32, TokenProblem)> {
    let line = lx.line;
    let unterminated = (line, TokenProblem::UnterminatedString);
    let quote = lx.bump().ok_or(unterminated)?;
    let triple = lx.peek(0) == Some(quote) && lx.peek(1) == Some(quote);
    if triple {
        lx.bump();
        lx.bump();
    }
    loop {
        let c = lx.bump().ok_or(unterminated)?;
        match c {
            '\\' => {
                lx.bump().ok_or(unterminated)?;
            }
            q if q == quote && !triple => return Ok(()),
            q if q == quote && lx.peek(0) == Some(quote) && lx.peek(1) == Some(quote) => {
                lx.bump();
                lx.bump();
                return Ok(());
            }
            '\n' | '\r' if !triple => return Err(unterminated),
            _ => {}
        }
    }
}

/// Consumes a number literal: digits, letters (prefixes, suffixes, exponents), `_`, a fraction,
/// and an exponent's sign. `dot_ends` tells when a `.` is not part of it (Rust ranges).
fn number(lx: &mut Lexer<'_>, dot_ends: impl Fn(Option<char>) -> bool) {
    let start = lx.pos;
    while let Some(c) = lx.peek(0) {
        let so_far = &lx.src[start..lx.pos];
        let hex = so_far.starts_with("0x") || so_far.starts_with("0X");
        let part = is_ident(c)
            || (c == '.' && !so_far.contains('.') && !hex && !dot_ends(lx.peek(1)))
            || (matches!(c, '+' | '-')
                && so_far.ends_with(['e', 'E'])
                && !hex
                && lx.peek(1).is_some_and(|d| d.is_ascii_digit()));
        if !part {
            break;
        }
        lx.bump();
    }
}

fn rust_block_comment(lx: &mut Lexer<'_>) -> Result<(), (u32, TokenProblem)> {
    let unterminated = (lx.line, TokenProblem::UnterminatedComment);
    lx.bump();
    lx.bump();
    let mut depth = 1usize;
    while depth > 0 {
        if lx.rest().starts_with("/*") {
            lx.bump();
            lx.bump();
            depth += 1;
        } else if lx.rest().starts_with("*/") {
            lx.bump();
            lx.bump();
            depth -= 1;
        } else {
            lx.bump().ok_or(unterminated)?;
        }
    }
    Ok(())
}

fn rust_token(lx: &mut Lexer<'_>, c: char) -> Result<TokenKind, (u32, TokenProblem)> {
    if is_ident_start(c) {
        let start = lx.pos;
        lx.bump_while(is_ident);
        let word = &lx.src[start..lx.pos];
        let next = lx.peek(0);
        if matches!(word, "r" | "br" | "cr")
            && (next == Some('"')
                || (next == Some('#') && lx.rest().trim_start_matches('#').starts_with('"')))
        {
            rust_raw_string(lx)?;
            return Ok(TokenKind::Text);
        }
        if word == "r" && next == Some('#') && lx.peek(1).is_some_and(is_ident_start) {
            lx.bump();
            lx.bump_while(is_ident);
            return Ok(TokenKind::Name);
        }
        if matches!(word, "b" | "c") && next == Some('"') {
            rust_string(lx)?;
            return Ok(TokenKind::Text);
        }
        if word == "b" && next == Some('\'') {
            rust_char(lx)?;
            return Ok(TokenKind::Text);
        }
        return Ok(TokenKind::Name);
    }
    if c.is_ascii_digit() {
        // `0..n` is a range and `1.max(2)` a method call: a `.` belongs to the number only
        // when a digit follows it.
        number(lx, |after| !after.is_some_and(|d| d.is_ascii_digit()));
        return Ok(TokenKind::Number);
    }
    if c == '"' {
        rust_string(lx)?;
        return Ok(TokenKind::Text);
    }
    if c == '\'' {
        let escaped = lx.peek(1) == Some('\\');
        if escaped || lx.peek(2) == Some('\'') {
            rust_char(lx)?;
            return Ok(TokenKind::Text);
        }
        lx.bump();
        lx.bump_while(is_ident);
        return Ok(TokenKind::Lifetime);
    }
    lx.op(RUST_OPS);
    Ok(TokenKind::Op)
}

fn rust_string(lx: &mut Lexer<'_>) -> Result<(), (u32, TokenProblem)> {
    let unterminated = (lx.line, TokenProblem::UnterminatedString);
    lx.bump();
    loop {
        match lx.bump().ok_or(unterminated)? {
            '\\' => {
                lx.bump().ok_or(unterminated)?;
            }
            '"' => return Ok(()),
            _ => {}
        }
    }
}

fn rust_raw_string(lx: &mut Lexer<'_>) -> Result<(), (u32, TokenProblem)> {
    let unterminated = (lx.line, TokenProblem::UnterminatedString);
    let mut hashes = 0usize;
    while lx.peek(0) == Some('#') {
        lx.bump();
        hashes += 1;
    }
    lx.bump();
    let close = format!("\"{}", "#".repeat(hashes));
    loop {
        if lx.rest().starts_with(close.as_str()) {
            lx.pos += close.len();
            return Ok(());
        }
        lx.bump().ok_or(unterminated)?;
    }
}

fn rust_char(lx: &mut Lexer<'_>) -> Result<(), (u32, TokenProblem)> {
    let unterminated = (lx.line, TokenProblem::UnterminatedString);
    lx.bump();
    loop {
        match lx.bump().ok_or(unterminated)? {
            '\\' => {
                lx.bump().ok_or(unterminated)?;
            }
            '\'' => return Ok(()),
            '\n' | '\r' => return Err(unterminated),
            _ => {}
        }
    }
}

const PYTHON_NOT_OPERANDS: &[&str] = &[
    "and", "or", "not", "in", "is", "if", "elif", "else", "return", "yield", "lambda", "await",
    "assert", "del", "for", "while", "with", "from", "import", "as", "raise",
];

const RUST_NOT_OPERANDS: &[&str] = &[
    "return", "in", "if", "else", "match", "let", "mut", "ref", "break", "move", "while", "for",
    "loop", "const", "static", "unsafe", "impl", "dyn", "where", "box", "fn", "pub", "use",
];

const RUST_INTEGER_SUFFIXES: &[&str] = &[
    "u128", "usize", "u8", "u16", "u32", "u64", "i128", "isize", "i8", "i16", "i32", "i64",
];

/// Tells whether a token ends an operand, so that an operator after it is binary.
fn ends_operand(language: Language, token: Option<&Token<'_>>) -> bool {
    let Some(token) = token else { return false };
    match token.kind {
        TokenKind::Number | TokenKind::Text => true,
        TokenKind::Lifetime => false,
        TokenKind::Name => match language {
            Language::Python => !PYTHON_NOT_OPERANDS.contains(&token.text),
            Language::Rust => !RUST_NOT_OPERANDS.contains(&token.text),
        },
        TokenKind::Op => match language {
            Language::Python => matches!(token.text, ")" | "]" | "}"),
            Language::Rust => matches!(token.text, ")" | "]" | "?"),
        },
    }
}

/// Returns `n+1` for a plain decimal integer literal (its Rust suffix kept), else `None`.
fn next_integer(language: Language, literal: &str) -> Option<String> {
    let (digits, suffix) = match language {
        Language::Rust => RUST_INTEGER_SUFFIXES
            .iter()
            .find_map(|s| literal.strip_suffix(s).map(|d| (d, *s)))
            .unwrap_or((literal, "")),
        Language::Python => (literal, ""),
    };
    let digits = digits.trim_end_matches('_');
    if !digits.starts_with(|c: char| c.is_ascii_digit())
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let plain: String = digits.chars().filter(|c| *c != '_').collect();
    // Python refuses `007`; only a run of zeros may start with 0.
    if language == Language::Python && plain.len() > 1 && plain.starts_with('0') {
        return None;
    }
    let n: u128 = plain.parse().ok()?;
    Some(format!("{}{suffix}", n.checked_add(1)?))
}

/// Tells whether a Rust `<` opens generic arguments rather than comparing.
fn opens_generics(prev: Option<&Token<'_>>, before: Option<&Token<'_>>) -> bool {
    let Some(prev) = prev else { return false };
    if prev.kind == TokenKind::Op {
        return prev.text == "::";
    }
    if prev.kind != TokenKind::Name {
        return false;
    }
    if prev.text == "impl" {
        return true;
    }
    if before.is_some_and(|b| {
        matches!(
            b.text,
            "fn" | "struct" | "enum" | "trait" | "type" | "union" | "impl"
        )
    }) {
        return true;
    }
    // `Vec<`, `Option<`: a type name starts upper-case and is not SCREAMING_CASE (a constant).
    prev.text.starts_with(|c: char| c.is_ascii_uppercase())
        && prev.text.chars().any(|c| c.is_ascii_lowercase())
}

/// Generates the mutants of one source with the fixed operator table (see the module docs).
/// `file` is the path recorded in each mutant (relative to the workspace); its extension picks
/// the language.
///
/// # Errors
///
/// [`Error::Language`] for a file that is neither `.py` nor `.rs`, [`Error::Bom`] for a source
/// that starts with a byte-order mark, [`Error::Tokenize`] for one that does not tokenize.
pub fn generate(file: &str, source: &str) -> Result<Vec<Mutant>, Error> {
    let language = Language::of_path(file).ok_or_else(|| Error::Language {
        file: file.to_owned(),
    })?;
    if source.starts_with('\u{feff}') {
        return Err(Error::Bom {
            file: file.to_owned(),
        });
    }
    let tokens = tokenize(language, source).map_err(|(line, problem)| Error::Tokenize {
        file: file.to_owned(),
        line,
        problem,
    })?;
    let mut mutants = Vec::new();
    let mut generic_depth = 0usize;
    let mut attribute_depth = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        let prev = i.checked_sub(1).and_then(|j| tokens.get(j));
        let before = i.checked_sub(2).and_then(|j| tokens.get(j));
        if language == Language::Rust {
            // Attributes (`#[...]`, `#![...]`) are configuration, not behaviour.
            let opens_attribute = token.text == "["
                && (prev.is_some_and(|p| p.text == "#")
                    || (prev.is_some_and(|p| p.text == "!")
                        && before.is_some_and(|b| b.text == "#")));
            if opens_attribute || (attribute_depth > 0 && token.text == "[") {
                attribute_depth += 1;
                continue;
            }
            if attribute_depth > 0 {
                if token.text == "]" {
                    attribute_depth -= 1;
                }
                continue;
            }
            if matches!(token.text, ";" | "{" | "}") {
                generic_depth = 0;
            }
        }
        let binary = ends_operand(language, prev);
        let replacement: Option<String> = match (language, token.kind, token.text) {
            (_, TokenKind::Op, "==") => Some("!=".into()),
            (_, TokenKind::Op, "!=") => Some("==".into()),
            (_, TokenKind::Op, "<=") => Some("<".into()),
            (_, TokenKind::Op, ">=") => Some(">".into()),
            (Language::Rust, TokenKind::Op, "<") if opens_generics(prev, before) => {
                generic_depth += 1;
                None
            }
            (Language::Rust, TokenKind::Op, ">") if generic_depth > 0 => {
                generic_depth -= 1;
                None
            }
            (Language::Rust, TokenKind::Op, ">>") => {
                generic_depth = generic_depth.saturating_sub(2);
                None
            }
            (_, TokenKind::Op, "<") => Some("<=".into()),
            (_, TokenKind::Op, ">") => Some(">=".into()),
            (_, TokenKind::Op, "+") if binary => Some("-".into()),
            (_, TokenKind::Op, "-") if binary => Some("+".into()),
            (_, TokenKind::Op, "*") if binary => Some("/".into()),
            (_, TokenKind::Op, "/") if binary => Some("*".into()),
            (Language::Rust, TokenKind::Op, "&&") if binary => Some("||".into()),
            (Language::Rust, TokenKind::Op, "||") if binary => Some("&&".into()),
            (Language::Python, TokenKind::Name, "and") => Some("or".into()),
            (Language::Python, TokenKind::Name, "or") => Some("and".into()),
            (Language::Python, TokenKind::Name, "True") => Some("False".into()),
            (Language::Python, TokenKind::Name, "False") => Some("True".into()),
            (Language::Rust, TokenKind::Name, "true") => Some("false".into()),
            (Language::Rust, TokenKind::Name, "false") => Some("true".into()),
            (_, TokenKind::Number, literal) if prev.is_none_or(|p| p.text != ".") => {
                next_integer(language, literal)
            }
            _ => None,
        };
        if let Some(replace) = replacement {
            mutants.push(Mutant {
                id: format!(
                    "{file}:{}:{}:{}->{replace}",
                    token.line, token.column, token.text
                ),
                file: file.to_owned(),
                find: token.text.to_owned(),
                replace,
                at: Locator::Position {
                    line: token.line,
                    column: token.column,
                },
            });
        }
    }
    Ok(mutants)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::apply;
    use proptest::prelude::*;

    fn ids(file: &str, source: &str) -> Vec<String> {
        generate(file, source)
            .expect("generates")
            .into_iter()
            .map(|m| m.id)
            .collect()
    }

    #[test]
    fn python_operators_follow_the_table() {
        let source = "def f(a, b):\n    if a < b and a >= 0 or a == b:\n        return a + b * 2\n    return a != True\n";
        assert_eq!(
            ids("f.py", source),
            [
                "f.py:2:9:<-><=",
                "f.py:2:13:and->or",
                "f.py:2:19:>=->>",
                "f.py:2:22:0->1",
                "f.py:2:24:or->and",
                "f.py:2:29:==->!=",
                "f.py:3:17:+->-",
                "f.py:3:21:*->/",
                "f.py:3:23:2->3",
                "f.py:4:13:!=->==",
                "f.py:4:16:True->False",
            ]
        );
    }

    #[test]
    fn python_strings_and_comments_are_never_mutated() {
        let source = concat!(
            "x = 'a < b and True'  # a < b or False 1\n",
            "y = \"\"\"\n 1 + 2 == 3\n\"\"\"\n",
            "z = rb'\\' < 1' + f\"{a < b}\"\n",
            "w = 'it\\'s < 3'\n",
        );
        assert_eq!(ids("s.py", source), ["s.py:5:15:+->-"]);
    }

    #[test]
    fn python_unary_signs_and_star_args_are_not_mutated() {
        let source = "def f(*args, **kw):\n    return g(-1, *args) - +2\n";
        assert_eq!(
            ids("u.py", source),
            ["u.py:2:14:1->2", "u.py:2:24:-->+", "u.py:2:27:2->3"]
        );
    }

    #[test]
    fn python_numbers_other_than_decimal_integers_are_kept() {
        assert!(
            ids("n.py", "x = 1.5 + 0x1F + 1e-3 + 2j + 007\n")
                .iter()
                .all(|id| id.contains("+->-"))
        );
        assert_eq!(ids("n.py", "x = 1_000\n"), ["n.py:1:4:1_000->1001"]);
    }

    #[test]
    fn rust_operators_follow_the_table() {
        let source = "fn f(a: u32, b: u32) -> bool {\n    a <= b && b > 3u8 || !true\n}\n";
        assert_eq!(
            ids("f.rs", source),
            [
                "f.rs:2:6:<=-><",
                "f.rs:2:11:&&->||",
                "f.rs:2:16:>->>=",
                "f.rs:2:18:3u8->4u8",
                "f.rs:2:22:||->&&",
                "f.rs:2:26:true->false",
            ]
        );
    }

    #[test]
    fn rust_strings_chars_lifetimes_and_comments_are_never_mutated() {
        let source = concat!(
            "// a < b\n",
            "/* 1 + /* nested */ 2 */\n",
            "fn f<'a>(s: &'a str) -> char {\n",
            "    let _ = (\"a < b\", r#\"x \" == \"#, b'<', '\\'', br\"1\");\n",
            "    'x'\n",
            "}\n",
        );
        assert!(ids("s.rs", source).is_empty(), "{:?}", ids("s.rs", source));
    }

    #[test]
    fn rust_generics_ranges_tuple_indices_and_attributes_are_not_mutated() {
        let source = concat!(
            "#[cfg(all(test, feature = \"x\"))]\n",
            "fn g<T: Into<u8>>(v: Vec<Option<T>>) -> HashMap<String, Vec<u8>> {\n",
            "    let n = v.iter().collect::<Vec<_>>().len();\n",
            "    for i in 0..n { x.0 < MAX; }\n",
            "    *&&v\n",
            "}\n",
        );
        assert_eq!(ids("g.rs", source), ["g.rs:4:13:0->1", "g.rs:4:24:<-><="]);
    }

    #[test]
    fn the_rust_example_gets_one_mutant_per_operator_and_none_in_comments_or_generics() {
        let source = include_str!("../../../../examples/criterion-sensitivity/clamp.rs");
        let found = ids("clamp.rs", source);
        assert_eq!(
            found,
            [
                "clamp.rs:5:13:<-><=",
                "clamp.rs:7:20:>->>=",
                "clamp.rs:7:27:&&->||",
                "clamp.rs:7:35:>=->>",
                "clamp.rs:17:24:==->!=",
                "clamp.rs:17:27:true->false",
                "clamp.rs:20:16:0->1",
                "clamp.rs:20:19:+->-",
                "clamp.rs:20:39:-->+",
                "clamp.rs:20:41:1->2",
                "clamp.rs:20:45:/->*",
                "clamp.rs:20:47:2->3",
            ]
        );
        for m in generate("clamp.rs", source).expect("tokenizes") {
            let applied = apply(source, &m).expect("every generated mutant applies");
            assert_ne!(applied.text, source);
        }
    }

    #[test]
    fn control_a_generic_looking_comparison_of_values_is_still_mutated() {
        assert_eq!(ids("c.rs", "fn f() { a < b; }\n"), ["c.rs:1:11:<-><="]);
    }

    #[test]
    fn control_unterminated_sources_are_refused_with_their_line() {
        let e = generate("u.py", "x = 1\ny = 'open\n").expect_err("unterminated");
        assert_eq!(
            e.to_string(),
            "u.py:2: cannot tokenize: a string does not end"
        );
        let e = generate("u.rs", "fn f() {}\n/* open\n").expect_err("unterminated");
        assert_eq!(
            e.to_string(),
            "u.rs:2: cannot tokenize: a block comment does not end"
        );
    }

    #[test]
    fn control_other_languages_and_boms_are_refused() {
        assert!(matches!(
            generate("x.js", "a < b"),
            Err(Error::Language { .. })
        ));
        assert!(matches!(
            generate("x.py", "\u{feff}a < b"),
            Err(Error::Bom { .. })
        ));
    }

    #[test]
    fn generated_mutants_apply_at_their_position_with_universal_newlines() {
        let source = "a = 1\r\nb = 2 < 3\rc = 'é' < 4\n";
        let mutants = generate("m.py", source).expect("tokenizes");
        let last = mutants.last().expect("some mutants");
        assert_eq!(last.id, "m.py:3:10:4->5");
        let lt = mutants
            .iter()
            .find(|m| m.id == "m.py:3:8:<-><=")
            .expect("the third line's <");
        let applied = apply(source, lt).expect("applies");
        assert_eq!(applied.text, "a = 1\r\nb = 2 < 3\rc = 'é' <= 4\n");
        assert_eq!((applied.line, applied.column), (3, 8));
    }

    proptest! {
        #[test]
        fn no_source_makes_the_generator_panic(source in "\\PC{0,200}") {
            for file in ["p.py", "r.rs"] {
                if let Ok(mutants) = generate(file, &source) {
                    for m in &mutants {
                        let applied = apply(&source, m);
                        prop_assert!(applied.is_some(), "{} does not apply", m.id);
                    }
                }
            }
        }

        #[test]
        fn operator_soup_never_panics(source in "[<>=!+*/&|'\"#a-z0-9 \\n\\r\\\\.{}()\\[\\]-]{0,120}") {
            for file in ["p.py", "r.rs"] {
                let _ = generate(file, &source);
            }
        }

    }
}
