//! A small shell reader: words, quotes, operators and nested commands — enough to see which
//! programs a command line runs with which arguments, never enough to run it. It accepts
//! any text (an unclosed quote runs to the end) and never fails.

/// Nesting (`$(...)`, `(...)`, `<(...)`, `sh -c`) deeper than this is read flat.
pub(super) const MAX_DEPTH: usize = 24;

/// One word after quote removal, with the commands substituted inside it.
#[derive(Debug, Default)]
pub(super) struct Word {
    /// The word's text; a substitution leaves a placeholder.
    pub(super) text: String,
    /// `$(...)` and backtick commands inside the word.
    pub(super) nested: Vec<Script>,
    /// Whether the shell would change the text before the program sees it: an unquoted glob
    /// (`*`, `?`, `[`, `{`), a leading `~`, a variable or a substitution. Such a word names no
    /// path the policy can read for certain.
    pub(super) dynamic: bool,
}

/// One simple command.
#[derive(Debug, Default)]
pub(super) struct Command {
    /// Its words, prefixes included, redirections excluded.
    pub(super) words: Vec<Word>,
    /// Subshells, groups and commands inside redirection targets.
    pub(super) groups: Vec<Script>,
    /// Here-documents and here-strings given to it.
    pub(super) stdin: Vec<String>,
    /// The targets of its output redirections (`>`, `>>`, `>|`, `&>`), in order.
    pub(super) writes: Vec<Word>,
}

impl Command {
    /// Returns the texts of its words.
    pub(super) fn texts(&self) -> Vec<&str> {
        self.words.iter().map(|w| w.text.as_str()).collect()
    }

    /// Tells, for each word, whether it is [`Word::dynamic`].
    pub(super) fn dynamic(&self) -> Vec<bool> {
        self.words
            .iter()
            .map(|w| w.dynamic || !w.nested.is_empty())
            .collect()
    }

    /// Returns every script nested in it.
    pub(super) fn nested(&self) -> impl Iterator<Item = &Script> {
        self.words
            .iter()
            .flat_map(|w| &w.nested)
            .chain(&self.groups)
    }
}

/// Commands joined by `|`.
#[derive(Debug, Default)]
pub(super) struct Pipeline {
    /// The commands, in order.
    pub(super) commands: Vec<Command>,
}

/// Pipelines separated by `;`, `&&`, `||`, `&` or newlines.
#[derive(Debug, Default)]
pub(super) struct Script {
    /// The pipelines, in order.
    pub(super) pipelines: Vec<Pipeline>,
}

/// Reads `text` as a script found at nesting `depth`.
pub(super) fn parse(text: &str, depth: usize) -> Script {
    let mut reader = Reader {
        chars: text.chars().collect(),
        pos: 0,
    };
    reader.script(depth, false)
}

#[derive(Default)]
struct Builder {
    script: Script,
    pipeline: Pipeline,
    command: Command,
}

impl Builder {
    fn end_command(&mut self) {
        let command = std::mem::take(&mut self.command);
        if !command.words.is_empty()
            || !command.groups.is_empty()
            || !command.stdin.is_empty()
            || !command.writes.is_empty()
        {
            self.pipeline.commands.push(command);
        }
    }

    fn end_pipeline(&mut self) {
        self.end_command();
        let pipeline = std::mem::take(&mut self.pipeline);
        if !pipeline.commands.is_empty() {
            self.script.pipelines.push(pipeline);
        }
    }
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
}

enum Redirect {
    HereDoc {
        strip_tabs: bool,
    },
    HereString,
    /// `>`, `>>`, `>|`, `&>`: into a file named by the target.
    Output,
    /// `<`, `<>`, or a descriptor duplicated (`>&2`).
    Other,
}

impl Reader {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// Reads until the end, or until the `)` that closes a nested script.
    fn script(&mut self, depth: usize, nested: bool) -> Script {
        let mut b = Builder::default();
        while let Some(c) = self.peek(0) {
            match c {
                ')' => {
                    self.pos += 1;
                    if nested {
                        break;
                    }
                    b.end_pipeline();
                }
                ' ' | '\t' | '\r' => self.pos += 1,
                '\n' | ';' => {
                    self.pos += 1;
                    b.end_pipeline();
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '&' if self.peek(1) == Some('>') => {
                    self.pos += 1;
                    self.redirect(&mut b, depth);
                }
                '&' => {
                    self.pos += if self.peek(1) == Some('&') { 2 } else { 1 };
                    b.end_pipeline();
                }
                '|' if self.peek(1) == Some('|') => {
                    self.pos += 2;
                    b.end_pipeline();
                }
                '|' => {
                    self.pos += if self.peek(1) == Some('&') { 2 } else { 1 };
                    b.end_command();
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    self.pos += 2;
                    if depth < MAX_DEPTH {
                        let nested = vec![self.script(depth + 1, true)];
                        let text = "/dev/fd/63".to_owned();
                        b.command.words.push(Word {
                            text,
                            nested,
                            dynamic: true,
                        });
                    } else {
                        b.end_pipeline();
                    }
                }
                '<' | '>' => self.redirect(&mut b, depth),
                '(' if self.peek(1) == Some('(') => {
                    // `(( x << 2 ))` is arithmetic, not two subshells and a here-document.
                    let text = self.arithmetic();
                    b.command.words.push(Word {
                        text,
                        nested: Vec::new(),
                        dynamic: true,
                    });
                }
                '(' => {
                    self.pos += 1;
                    if depth < MAX_DEPTH {
                        // A group is a command of its own: `f() { rm -rf x; }` runs rm.
                        b.end_command();
                        let group = self.script(depth + 1, true);
                        b.command.groups.push(group);
                        b.end_command();
                    } else {
                        b.end_pipeline();
                    }
                }
                _ => {
                    let word = self.word(depth);
                    let fd = !word.text.is_empty()
                        && word.text.chars().all(|c| c.is_ascii_digit())
                        && matches!(self.peek(0), Some('<' | '>'));
                    if !fd {
                        b.command.words.push(word);
                    }
                }
            }
        }
        b.end_pipeline();
        b.script
    }

    /// Reads a redirection operator at `<` or `>` and its target.
    fn redirect(&mut self, b: &mut Builder, depth: usize) {
        let rest: String = self.chars[self.pos..].iter().take(3).collect();
        let kind = if rest.starts_with("<<<") {
            self.pos += 3;
            Redirect::HereString
        } else if rest.starts_with("<<-") {
            self.pos += 3;
            Redirect::HereDoc { strip_tabs: true }
        } else if rest.starts_with("<<") {
            self.pos += 2;
            Redirect::HereDoc { strip_tabs: false }
        } else {
            let output = self.peek(0) == Some('>');
            self.pos += 1;
            let second = self.peek(0);
            if matches!(second, Some('>' | '&' | '|')) {
                self.pos += 1;
            }
            // `>&2` and `>&-` duplicate or close a descriptor; `>& file` is bash's `&>`.
            let duplicates =
                second == Some('&') && self.peek(0).is_some_and(|c| c.is_ascii_digit() || c == '-');
            if output && !duplicates {
                Redirect::Output
            } else {
                Redirect::Other
            }
        };
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let at_word = self.peek(0).is_some_and(|c| {
            !matches!(
                c,
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')'
            )
        });
        if !at_word {
            return;
        }
        let target = self.word(depth);
        match kind {
            Redirect::HereDoc { strip_tabs } => {
                let body = self.here_doc(&target.text, strip_tabs);
                b.command.stdin.push(body);
            }
            Redirect::HereString => b.command.stdin.push(target.text),
            Redirect::Output => {
                let dynamic = target.dynamic || !target.nested.is_empty();
                b.command.groups.extend(target.nested);
                b.command.writes.push(Word {
                    text: target.text,
                    nested: Vec::new(),
                    dynamic,
                });
                return;
            }
            Redirect::Other => {}
        }
        b.command.groups.extend(target.nested);
    }

    /// Takes the body of a here-document out of the input: the lines after the current
    /// one, up to the delimiter line (or the end).
    fn here_doc(&mut self, delimiter: &str, strip_tabs: bool) -> String {
        let len = self.chars.len();
        let Some(line_end) = (self.pos..len).find(|&i| self.chars[i] == '\n') else {
            return String::new();
        };
        let start = line_end + 1;
        let mut body = String::new();
        let mut at = start;
        let mut end = len;
        while at < len {
            let next = (at..len).find(|&i| self.chars[i] == '\n').unwrap_or(len);
            let line: String = self.chars[at..next].iter().collect();
            let bare = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                &line
            };
            if bare.trim_end_matches('\r') == delimiter {
                end = (next + 1).min(len);
                break;
            }
            body.push_str(&line);
            body.push('\n');
            at = next + 1;
        }
        self.chars.drain(start..end);
        body
    }

    /// Reads one word: quotes removed, substitutions parsed.
    fn word(&mut self, depth: usize) -> Word {
        let mut w = Word::default();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\\' => {
                    match self.peek(1) {
                        Some('\n') | None => {}
                        Some(next) => w.text.push(next),
                    }
                    self.pos += 2;
                }
                '\'' => {
                    self.pos += 1;
                    while let Some(q) = self.peek(0) {
                        self.pos += 1;
                        if q == '\'' {
                            break;
                        }
                        w.text.push(q);
                    }
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut w, depth);
                }
                '`' => {
                    self.pos += 1;
                    self.backticks(&mut w, depth);
                }
                '$' if self.peek(1) == Some('(') && self.peek(2) == Some('(') => {
                    self.pos += 1;
                    let text = self.arithmetic();
                    w.dynamic = true;
                    w.text.push('$');
                    w.text.push_str(&text);
                }
                '$' if self.peek(1) == Some('(') => {
                    if depth >= MAX_DEPTH {
                        // Read flat: the `(` ends this word and starts a new piece.
                        self.pos += 1;
                        w.text.push('$');
                        break;
                    }
                    self.pos += 2;
                    w.nested.push(self.script(depth + 1, true));
                    w.text.push_str("$()");
                }
                '$' if self.peek(1) == Some('\'') => {
                    self.pos += 2;
                    self.ansi_c(&mut w);
                }
                _ => {
                    w.dynamic |=
                        matches!(c, '$' | '*' | '?' | '[' | '{') || (c == '~' && w.text.is_empty());
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        self.pos = self.pos.min(self.chars.len());
        w
    }

    /// Reads `((...))` at `((` as text, up to the parenthesis that balances the first.
    fn arithmetic(&mut self) -> String {
        let mut text = String::new();
        let mut open = 0usize;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            text.push(c);
            match c {
                '(' => open += 1,
                ')' => {
                    open = open.saturating_sub(1);
                    if open == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        text
    }

    fn double_quoted(&mut self, w: &mut Word, depth: usize) {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => match self.peek(1) {
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        w.text.push(next);
                        self.pos += 2;
                    }
                    Some('\n') => self.pos += 2,
                    _ => {
                        w.text.push('\\');
                        self.pos += 1;
                    }
                },
                '`' => {
                    self.pos += 1;
                    self.backticks(w, depth);
                }
                '$' if self.peek(1) == Some('(') && depth < MAX_DEPTH => {
                    self.pos += 2;
                    w.nested.push(self.script(depth + 1, true));
                    w.text.push_str("$()");
                }
                _ => {
                    w.dynamic |= c == '$';
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn backticks(&mut self, w: &mut Word, depth: usize) {
        let mut inner = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => match self.peek(0) {
                    Some(next @ ('`' | '\\' | '$')) => {
                        inner.push(next);
                        self.pos += 1;
                    }
                    _ => inner.push('\\'),
                },
                _ => inner.push(c),
            }
        }
        // Each level of nested backticks doubles its backslashes, so this recursion is
        // logarithmic in the input's length.
        w.nested.push(parse(&inner, depth + 1));
        w.text.push_str("``");
    }

    /// `$'...'`: the escapes a command might hide an option behind (`$'\x2drf'`).
    fn ansi_c(&mut self, w: &mut Word) {
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == '\'' {
                return;
            }
            if c != '\\' {
                w.text.push(c);
                continue;
            }
            let Some(escape) = self.peek(0) else {
                return;
            };
            self.pos += 1;
            let (radix, max) = match escape {
                'x' => (16, 2),
                '0'..='7' => {
                    self.pos -= 1;
                    (8, 3)
                }
                'n' => {
                    w.text.push('\n');
                    continue;
                }
                't' => {
                    w.text.push('\t');
                    continue;
                }
                other => {
                    w.text.push(other);
                    continue;
                }
            };
            let mut value = 0u32;
            let mut digits = 0;
            while digits < max {
                let Some(d) = self.peek(0).and_then(|c| c.to_digit(radix)) else {
                    break;
                };
                value = value * radix + d;
                self.pos += 1;
                digits += 1;
            }
            if let Some(ch) = char::from_u32(value).filter(|_| digits > 0) {
                w.text.push(ch);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(text: &str) -> Vec<Vec<String>> {
        parse(text, 0)
            .pipelines
            .iter()
            .flat_map(|p| &p.commands)
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn quotes_and_backslashes_are_removed_as_a_shell_removes_them() {
        let got = commands(r#"a 'b c' "d \"e\"" f\ g $'\x2drf' h"i"'j'"#);
        assert_eq!(got, [["a", "b c", r#"d "e""#, "f g", "-rf", "hij"]]);
    }

    #[test]
    fn operators_split_commands_and_redirections_are_not_words() {
        let got = commands("a>out 2>&1 && b|c; d & e || f\ng < in");
        let want: Vec<Vec<&str>> = vec![
            vec!["a"],
            vec!["b"],
            vec!["c"],
            vec!["d"],
            vec!["e"],
            vec!["f"],
            vec!["g"],
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn control_an_unclosed_quote_runs_to_the_end_instead_of_failing() {
        assert_eq!(commands("echo 'rm -rf x"), [["echo", "rm -rf x"]]);
        assert_eq!(commands("echo \"$(rm"), [["echo", "$()"]]);
    }

    #[test]
    fn substitutions_are_parsed_as_nested_scripts() {
        let script = parse("echo \"$(rm -rf x)\" `ls`", 0);
        let words = &script.pipelines[0].commands[0].words;
        assert_eq!(words[1].nested.len(), 1);
        assert_eq!(words[2].nested.len(), 1);
    }
}
