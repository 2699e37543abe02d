//! The Python reader: a tokenizer that knows strings, comments, brackets and indentation, and
//! just enough statement shapes to find docstrings and the names each statement binds.

use std::collections::BTreeMap;

use super::{Citation, Kind, find_spec_markers};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Str {
        /// Bytes, f-strings and t-strings are never docstrings.
        plain: bool,
        value: String,
    },
    Op(String),
    Number,
}

/// A token and the bracket depth it sits at (brackets themselves at their outer depth).
type Token = (Tok, usize);

struct Line {
    indent: usize,
    tokens: Vec<Token>,
}

const PREFIXES: [&str; 11] = ["r", "u", "b", "br", "rb", "f", "fr", "rf", "t", "tr", "rt"];
const OPS3: [&str; 5] = ["**=", "//=", ">>=", "<<=", "..."];
const OPS2: [&str; 20] = [
    "==", "!=", "<=", ">=", "->", ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", "**",
    "//", "<<", ">>", "<>",
];
const COMPOUND: [&str; 10] = [
    "if", "elif", "else", "for", "while", "try", "except", "finally", "with", "async",
];
const NOT_A_TARGET: [&str; 16] = [
    "and", "or", "not", "in", "is", "if", "else", "lambda", "None", "True", "False", "for",
    "await", "yield", "async", "from",
];
const SIMPLE_KEYWORDS: [&str; 12] = [
    "return", "assert", "raise", "del", "pass", "break", "continue", "global", "nonlocal", "yield",
    "await", "lambda",
];

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_alphabetic() || (!c.is_ascii() && !c.is_whitespace())
}

fn is_name_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric() || (!c.is_ascii() && !c.is_whitespace())
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn lines(mut self) -> Result<Vec<Line>, String> {
        let mut lines = Vec::new();
        let mut tokens: Vec<Token> = Vec::new();
        let mut depth = 0usize;
        let mut indent = 0usize;
        let mut at_line_start = true;
        while self.i < self.chars.len() {
            if at_line_start {
                let mut column = 0;
                while let Some(c) = self.peek(0) {
                    match c {
                        ' ' => column += 1,
                        '\t' => column = (column / 8 + 1) * 8,
                        '\x0c' => column = 0,
                        _ => break,
                    }
                    self.i += 1;
                }
                match self.peek(0) {
                    None => break,
                    Some('#') | Some('\n') | Some('\r') => {
                        self.skip_to_line_end();
                        self.skip_newline();
                        continue;
                    }
                    Some('\\') if matches!(self.peek(1), Some('\n' | '\r')) => {
                        // A continuation on an otherwise empty line joins the next one.
                        self.i += 1;
                        self.skip_newline();
                        continue;
                    }
                    Some(_) => {
                        indent = column;
                        at_line_start = false;
                    }
                }
            }
            let c = self.chars[self.i];
            match c {
                '\n' | '\r' => {
                    self.skip_newline();
                    if depth == 0 {
                        lines.push(Line {
                            indent,
                            tokens: std::mem::take(&mut tokens),
                        });
                        at_line_start = true;
                    }
                }
                ' ' | '\t' | '\x0c' => self.i += 1,
                '#' => self.skip_to_line_end(),
                '\\' => {
                    self.i += 1;
                    if !matches!(self.peek(0), Some('\n' | '\r')) {
                        return Err("unexpected character after line continuation character".into());
                    }
                    self.skip_newline();
                }
                '\'' | '"' => {
                    let token = self.string("")?;
                    tokens.push((token, depth));
                }
                c if is_name_start(c) => {
                    let start = self.i;
                    while self.peek(0).is_some_and(is_name_char) {
                        self.i += 1;
                    }
                    let name: String = self.chars[start..self.i].iter().collect();
                    let lower = name.to_lowercase();
                    if PREFIXES.contains(&lower.as_str())
                        && matches!(self.peek(0), Some('\'' | '"'))
                    {
                        let token = self.string(&lower)?;
                        tokens.push((token, depth));
                    } else {
                        tokens.push((Tok::Name(name), depth));
                    }
                }
                c if c.is_ascii_digit()
                    || (c == '.' && self.peek(1).is_some_and(|n| n.is_ascii_digit())) =>
                {
                    while self
                        .peek(0)
                        .is_some_and(|n| n.is_alphanumeric() || n == '_' || n == '.')
                    {
                        self.i += 1;
                    }
                    tokens.push((Tok::Number, depth));
                }
                '(' | '[' | '{' => {
                    tokens.push((Tok::Op(c.to_string()), depth));
                    depth += 1;
                    self.i += 1;
                }
                ')' | ']' | '}' => {
                    depth = depth.checked_sub(1).ok_or(format!("unmatched '{c}'"))?;
                    tokens.push((Tok::Op(c.to_string()), depth));
                    self.i += 1;
                }
                _ => {
                    let op = self.operator();
                    tokens.push((Tok::Op(op), depth));
                }
            }
        }
        if depth > 0 {
            return Err("a bracket was never closed".into());
        }
        if !tokens.is_empty() {
            lines.push(Line { indent, tokens });
        }
        Ok(lines)
    }

    fn operator(&mut self) -> String {
        let rest: String = self.chars[self.i..].iter().take(3).collect();
        for op in OPS3 {
            if rest.starts_with(op) {
                self.i += 3;
                return op.to_owned();
            }
        }
        for op in OPS2 {
            if rest.starts_with(op) {
                self.i += 2;
                return op.to_owned();
            }
        }
        self.i += 1;
        rest.chars().next().map(String::from).unwrap_or_default()
    }

    fn skip_to_line_end(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n' && c != '\r') {
            self.i += 1;
        }
    }

    fn skip_newline(&mut self) {
        match self.peek(0) {
            Some('\r') if self.peek(1) == Some('\n') => self.i += 2,
            Some('\r' | '\n') => self.i += 1,
            _ => {}
        }
    }

    /// Lexes a string literal whose (lowercased) prefix was already consumed.
    fn string(&mut self, prefix: &str) -> Result<Tok, String> {
        let raw = prefix.contains('r');
        let formatted = prefix.contains('f') || prefix.contains('t');
        let plain = !formatted && !prefix.contains('b');
        let quote = self.chars[self.i];
        let triple = self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        self.i += if triple { 3 } else { 1 };
        let mut value = String::new();
        loop {
            let Some(c) = self.peek(0) else {
                return Err(if triple {
                    "unterminated triple-quoted string literal".into()
                } else {
                    "unterminated string literal".into()
                });
            };
            if c == '\\' {
                let Some(next) = self.peek(1) else {
                    self.i += 1;
                    continue;
                };
                self.i += 2;
                if next == '\r' && self.peek(0) == Some('\n') {
                    self.i += 1;
                }
                if raw {
                    value.push('\\');
                    value.push(next);
                } else {
                    match next {
                        '\n' | '\r' => {}
                        'n' => value.push('\n'),
                        't' => value.push('\t'),
                        'r' => value.push('\r'),
                        '\\' | '\'' | '"' => value.push(next),
                        other => {
                            value.push('\\');
                            value.push(other);
                        }
                    }
                }
                continue;
            }
            if !triple && (c == '\n' || c == '\r') {
                return Err("unterminated string literal".into());
            }
            if c == quote
                && (!triple || (self.peek(1) == Some(quote) && self.peek(2) == Some(quote)))
            {
                self.i += if triple { 3 } else { 1 };
                return Ok(Tok::Str { plain, value });
            }
            if formatted && c == '{' {
                if self.peek(1) == Some('{') {
                    value.push('{');
                    self.i += 2;
                } else {
                    self.i += 1;
                    self.replacement_field()?;
                }
                continue;
            }
            value.push(c);
            self.i += 1;
        }
    }

    /// Skips an f-string's `{...}` field, whose expression may hold strings of its own.
    fn replacement_field(&mut self) -> Result<(), String> {
        let mut depth = 1usize;
        while let Some(c) = self.peek(0) {
            match c {
                '{' | '(' | '[' => {
                    depth += 1;
                    self.i += 1;
                }
                '}' | ')' | ']' => {
                    depth -= 1;
                    self.i += 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                '\'' | '"' => {
                    self.string("")?;
                }
                c if is_name_start(c) => {
                    let start = self.i;
                    while self.peek(0).is_some_and(is_name_char) {
                        self.i += 1;
                    }
                    let name: String = self.chars[start..self.i].iter().collect();
                    let lower = name.to_lowercase();
                    if PREFIXES.contains(&lower.as_str())
                        && matches!(self.peek(0), Some('\'' | '"'))
                    {
                        self.string(&lower)?;
                    }
                }
                _ => self.i += 1,
            }
        }
        Err("unterminated f-string replacement field".into())
    }
}

struct Scope {
    key: String,
    kind: Kind,
    doc: Option<String>,
    first_seen: bool,
    children: Vec<Child>,
}

enum Child {
    Def { name: String, scope: usize },
    Binds(Vec<String>),
}

struct Block {
    header_indent: usize,
    body_indent: Option<usize>,
    scope: Option<usize>,
}

fn is_op(token: Option<&Token>, op: &str) -> bool {
    matches!(token, Some((Tok::Op(o), _)) if o == op)
}

fn name_of(token: Option<&Token>) -> Option<&str> {
    match token {
        Some((Tok::Name(n), _)) => Some(n.as_str()),
        _ => None,
    }
}

/// Returns the citing entries of a Python source, read from docstrings only.
pub(super) fn citations(path: &str, source: &str) -> Result<Vec<Citation>, String> {
    let lines = Lexer {
        chars: source.chars().collect(),
        i: 0,
    }
    .lines()?;
    let mut scopes = vec![Scope {
        key: path.to_owned(),
        kind: Kind::Module,
        doc: None,
        first_seen: false,
        children: Vec::new(),
    }];
    let mut blocks = vec![Block {
        header_indent: 0,
        body_indent: Some(0),
        scope: Some(0),
    }];
    for line in &lines {
        if let Some(top) = blocks.last_mut()
            && top.body_indent.is_none()
        {
            if line.indent <= top.header_indent {
                return Err("expected an indented block".into());
            }
            top.body_indent = Some(line.indent);
        }
        while blocks
            .last()
            .and_then(|b| b.body_indent)
            .is_some_and(|body| body > line.indent)
        {
            blocks.pop();
        }
        let container = match blocks.last() {
            Some(block) if block.body_indent == Some(line.indent) => block.scope,
            Some(_) => return Err("unexpected indent".into()),
            None => return Err("unindent does not match any outer indentation level".into()),
        };
        if let Some(block) = statement(&line.tokens, line.indent, container, &mut scopes) {
            blocks.push(block);
        }
    }
    let mut found = Vec::new();
    cite(&scopes[0], scopes[0].kind, &mut found);
    walk(0, &scopes, &mut found);
    Ok(found)
}

fn cite(scope: &Scope, kind: Kind, found: &mut Vec<Citation>) {
    let markers = scope
        .doc
        .as_deref()
        .map(find_spec_markers)
        .unwrap_or_default();
    if !markers.is_empty() {
        found.push(Citation {
            test: scope.key.clone(),
            kind,
            cites: markers.into_iter().collect(),
        });
    }
}

/// Python keeps the last binding of a name, so a definition rebound further down in the
/// same scope never runs, and the case the later one produced must not be credited to it.
fn walk(index: usize, scopes: &[Scope], found: &mut Vec<Citation>) {
    let scope = &scopes[index];
    let mut last: BTreeMap<&str, usize> = BTreeMap::new();
    for (position, child) in scope.children.iter().enumerate() {
        match child {
            Child::Def { name, .. } => {
                last.insert(name, position);
            }
            Child::Binds(names) => {
                for name in names {
                    last.insert(name, position);
                }
            }
        }
    }
    for (position, child) in scope.children.iter().enumerate() {
        if let Child::Def { name, scope: inner } = child {
            let own = scopes[*inner].kind;
            let kind = if last.get(name.as_str()).is_some_and(|&l| l > position) {
                Kind::Shadowed
            } else {
                own
            };
            cite(&scopes[*inner], kind, found);
            walk(*inner, scopes, found);
        }
    }
}

/// Reads one logical line in `container` (a scope, or `None` inside another compound
/// statement) and returns the block it opens, if its body follows on the next lines.
fn statement(
    tokens: &[Token],
    indent: usize,
    container: Option<usize>,
    scopes: &mut Vec<Scope>,
) -> Option<Block> {
    let mark_seen = |scopes: &mut Vec<Scope>| {
        if let Some(s) = container {
            scopes[s].first_seen = true;
        }
    };
    if is_op(tokens.first(), "@") {
        mark_seen(scopes);
        return None;
    }
    let first = name_of(tokens.first());
    let def_at = match first {
        Some("def" | "class") => Some(0),
        Some("async") if name_of(tokens.get(1)) == Some("def") => Some(1),
        _ => None,
    };
    let colon = tokens
        .iter()
        .position(|(t, d)| *d == 0 && matches!(t, Tok::Op(o) if o == ":"));
    if let Some(at) = def_at
        && let Some(name) = name_of(tokens.get(at + 1))
        && let Some(colon) = colon
    {
        mark_seen(scopes);
        let kind = if name_of(tokens.get(at)) == Some("class") {
            Kind::Class
        } else {
            Kind::Function
        };
        let inner = container.map(|parent| {
            let key = format!("{}::{name}", scopes[parent].key);
            scopes.push(Scope {
                key,
                kind,
                doc: None,
                first_seen: false,
                children: Vec::new(),
            });
            let inner = scopes.len() - 1;
            scopes[parent].children.push(Child::Def {
                name: name.to_owned(),
                scope: inner,
            });
            inner
        });
        let body = &tokens[colon + 1..];
        if body.is_empty() {
            return Some(Block {
                header_indent: indent,
                body_indent: None,
                scope: inner,
            });
        }
        simple_statements(body, inner, scopes);
        return None;
    }
    if is_compound(tokens)
        && let Some(colon) = colon
    {
        mark_seen(scopes);
        if tokens.len() == colon + 1 {
            return Some(Block {
                header_indent: indent,
                body_indent: None,
                scope: None,
            });
        }
        return None;
    }
    simple_statements(tokens, container, scopes);
    None
}

fn is_compound(tokens: &[Token]) -> bool {
    match name_of(tokens.first()) {
        Some(word) if COMPOUND.contains(&word) => true,
        // `match` and `case` are soft keywords: `match x:` opens a block, `match = 1` binds.
        Some("match" | "case") => match tokens.get(1) {
            None => false,
            Some((Tok::Op(op), _)) => matches!(op.as_str(), "(" | "[" | "{" | "-" | "*"),
            Some(_) => true,
        },
        _ => false,
    }
}

fn simple_statements(tokens: &[Token], container: Option<usize>, scopes: &mut [Scope]) {
    let Some(s) = container else {
        return;
    };
    for statement in split_top(tokens, ";") {
        if statement.is_empty() {
            continue;
        }
        if !scopes[s].first_seen {
            scopes[s].first_seen = true;
            scopes[s].doc = docstring(statement);
        }
        let names = bound(statement);
        if !names.is_empty() {
            scopes[s].children.push(Child::Binds(names));
        }
    }
}

fn split_top<'a>(tokens: &'a [Token], op: &str) -> Vec<&'a [Token]> {
    tokens
        .split(|(t, d)| *d == 0 && matches!(t, Tok::Op(o) if o == op))
        .collect()
}

/// A statement made only of plain string literals (implicitly concatenated, perhaps in
/// parentheses) is an expression whose value is a string: a docstring when it comes first.
fn docstring(statement: &[Token]) -> Option<String> {
    let opens = statement.iter().take_while(|t| is_op(Some(t), "(")).count();
    let closes = statement
        .iter()
        .rev()
        .take_while(|t| is_op(Some(t), ")"))
        .count();
    if opens != closes || opens * 2 >= statement.len() {
        return None;
    }
    let mut value = String::new();
    for (token, _) in &statement[opens..statement.len() - closes] {
        match token {
            Tok::Str {
                plain: true,
                value: v,
            } => value.push_str(v),
            _ => return None,
        }
    }
    Some(value)
}

/// The names a statement binds in its scope (assignments and imports; definitions are
/// children of their own).
fn bound(statement: &[Token]) -> Vec<String> {
    match name_of(statement.first()) {
        Some("import") => {
            return split_top(&statement[1..], ",")
                .into_iter()
                .filter_map(|alias| alias_name(alias, true))
                .collect();
        }
        Some("from") => {
            let Some(at) = statement
                .iter()
                .position(|t| name_of(Some(t)) == Some("import"))
            else {
                return Vec::new();
            };
            let names: Vec<Token> = statement[at + 1..]
                .iter()
                .filter(|t| !is_op(Some(t), "(") && !is_op(Some(t), ")"))
                .map(|(t, _)| (t.clone(), 0))
                .collect();
            return split_top(&names, ",")
                .into_iter()
                .filter_map(|alias| alias_name(alias, false))
                .collect();
        }
        Some(word) if SIMPLE_KEYWORDS.contains(&word) => return Vec::new(),
        _ => {}
    }
    let top = |op: &str| {
        statement
            .iter()
            .position(|(t, d)| *d == 0 && matches!(t, Tok::Op(o) if o == op))
    };
    let (equals, colon) = (top("="), top(":"));
    if let Some(colon) = colon
        && equals.is_none_or(|e| colon < e)
    {
        return target_names(&statement[..colon]);
    }
    if equals.is_some() {
        let segments = split_top(statement, "=");
        let mut names = Vec::new();
        for target in &segments[..segments.len() - 1] {
            if target.iter().any(|t| name_of(Some(t)) == Some("lambda")) {
                break;
            }
            names.extend(target_names(target));
        }
        return names;
    }
    let augmented = statement.iter().position(|(t, d)| {
        *d == 0
            && matches!(t, Tok::Op(o) if o.len() >= 2 && o.ends_with('=')
                && !matches!(o.as_str(), "==" | "!=" | "<=" | ">=" | ":="))
    });
    augmented.map_or_else(Vec::new, |at| target_names(&statement[..at]))
}

fn alias_name(alias: &[Token], dotted: bool) -> Option<String> {
    if let Some(at) = alias.iter().position(|t| name_of(Some(t)) == Some("as")) {
        return name_of(alias.get(at + 1)).map(str::to_owned);
    }
    if is_op(alias.first(), "*") {
        return Some("*".to_owned());
    }
    let first = name_of(alias.first())?;
    Some(if dotted {
        first.to_owned()
    } else {
        first.split('.').next().unwrap_or(first).to_owned()
    })
}

/// Every name in an assignment target, as `ast.walk` finds them: `a.b` binds nothing but
/// reads `a`, and the reference counts `a` (kept, it only matters for a test named `a`).
fn target_names(target: &[Token]) -> Vec<String> {
    let mut names = Vec::new();
    for (position, (token, _)) in target.iter().enumerate() {
        if let Tok::Name(name) = token
            && !NOT_A_TARGET.contains(&name.as_str())
            && !(position > 0 && is_op(target.get(position - 1), "."))
        {
            names.push(name.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use crate::coverage::{Citation, Kind, Language, citations};
    use proptest::prelude::*;

    fn py(source: &str) -> Vec<Citation> {
        citations(Language::Python, "tests/test_x.py", source).expect("valid Python")
    }

    #[test]
    fn python_docstrings_cite_other_strings_do_not() {
        let source = r#""""Module [spec: parse/iso-date]"""
import os

DATA = "[spec: render/column-width]"

class TestParse:
    """[spec: parse/empty-input]"""

    def test_one(self):
        '''Checks one. [spec: parse/iso-date]'''
        text = """[spec: parse/nope]"""

    @decorated
    async def test_two(self): "[spec: parse/empty-input]"

def helper():
    x = 1
    """[spec: parse/not-a-docstring]"""
"#;
        let found = py(source);
        let summary: Vec<(String, Kind, Vec<String>)> = found
            .into_iter()
            .map(|c| (c.test, c.kind, c.cites))
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "tests/test_x.py".into(),
                    Kind::Module,
                    vec!["parse/iso-date".into()]
                ),
                (
                    "tests/test_x.py::TestParse".into(),
                    Kind::Class,
                    vec!["parse/empty-input".into()]
                ),
                (
                    "tests/test_x.py::TestParse::test_one".into(),
                    Kind::Function,
                    vec!["parse/iso-date".into()]
                ),
                (
                    "tests/test_x.py::TestParse::test_two".into(),
                    Kind::Function,
                    vec!["parse/empty-input".into()]
                ),
            ]
        );
    }

    #[test]
    fn a_python_definition_rebound_later_is_shadowed() {
        let source = "def test_a():\n    \"\"\"[spec: parse/iso-date]\"\"\"\n\ntest_a = None\n\ndef test_b():\n    \"[spec: parse/iso-date]\"\n\ndef test_b():\n    pass\n";
        let kinds: Vec<Kind> = py(source).into_iter().map(|c| c.kind).collect();
        assert_eq!(kinds, [Kind::Shadowed, Kind::Shadowed]);
    }

    #[test]
    fn python_strings_brackets_and_continuations_do_not_confuse_the_blocks() {
        let source = "x = (1,\n     2)  # [spec: parse/iso-date]\ny = f\"{d['k']}\" \\\n    + r'\\''\nif x:\n    def test_hidden():\n        \"\"\"[spec: parse/iso-date]\"\"\"\ndef test_seen(a: int = 1,\n              b=\"\"\"\n)\"\"\") -> None:\n    \"\"\"[spec: parse/empty-input]\"\"\"\n";
        let tests: Vec<String> = py(source).into_iter().map(|c| c.test).collect();
        assert_eq!(tests, ["tests/test_x.py::test_seen"]);
    }

    #[test]
    fn control_broken_python_is_refused_not_guessed() {
        for source in [
            "def f():\n    \"\"\"never closed\n",
            "x = (1,\n",
            "def f():\nreturn 1\n",
        ] {
            let error = citations(Language::Python, "t.py", source).expect_err("refused");
            assert!(
                error.to_string().starts_with("t.py is not valid Python: "),
                "{error}"
            );
        }
    }

    proptest! {
        #[test]
        fn no_python_source_panics(source in "[a-z_ :=(){}\\[\\]'\"\\\\#@\\n\\t.,;]{0,200}") {
            let _ = citations(Language::Python, "t.py", &source);
        }
    }
}
