//! The README and the book under `docs/src/` (issue 58): every relative link and anchor in them
//! resolves, and every `git hpp` and `hop` command line in their shell blocks parses with the
//! binary's own parser, as the manual pages' EXAMPLES do (`help.rs`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The README and every page of the book.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![Path::new(ROOT).join("README.md")];
    let book = Path::new(ROOT).join("docs/src");
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(&book)
        .expect("the book is there")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    pages.extend(chapters);
    pages
}

/// The lines of `text` outside fenced code blocks, and the fenced blocks with their info string.
fn split_fences(text: &str) -> (Vec<&str>, Vec<(String, Vec<&str>)>) {
    let mut prose = Vec::new();
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        let fence = line.trim_start().strip_prefix("```");
        match (fence, open.take()) {
            (Some(info), None) => open = Some((info.trim().to_owned(), Vec::new())),
            (Some(_), Some(block)) => blocks.push(block),
            (None, Some(mut block)) => {
                block.1.push(line);
                open = Some(block);
            }
            (None, None) => prose.push(line),
        }
    }
    (prose, blocks)
}

/// The anchors a forge gives the headings of `text`: lowercase, punctuation dropped, spaces as
/// hyphens, a repeated one numbered.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for line in split_fences(text).0 {
        let Some(title) = line.strip_prefix('#').map(|t| t.trim_start_matches('#')) else {
            continue;
        };
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut candidate = slug.clone();
        let mut n = 0;
        while !seen.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{slug}-{n}");
        }
    }
    seen
}

/// Every link target of `text`'s prose: `[text](target)`.
fn links(text: &str) -> Vec<String> {
    let pattern = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("a valid pattern");
    split_fences(text)
        .0
        .iter()
        .flat_map(|line| {
            pattern
                .captures_iter(line)
                .map(|c| c[1].to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What is wrong with the relative links of `page` (holding `text`): a file that is not there,
/// an anchor no heading of its target has.
fn broken_links(page: &Path, text: &str) -> Vec<String> {
    let dir = page.parent().expect("a page has a directory");
    let mut broken = Vec::new();
    for target in links(text) {
        if target.starts_with("http://")
            || target.starts_with("https://")
            || target.starts_with("mailto:")
        {
            continue;
        }
        let (file, anchor) = target
            .split_once('#')
            .map_or((target.as_str(), None), |(f, a)| (f, Some(a)));
        let path = if file.is_empty() {
            page.to_path_buf()
        } else {
            dir.join(file)
        };
        let same_page = file.is_empty();
        if !path.exists() {
            broken.push(format!("{}: {target}: no such file", page.display()));
            continue;
        }
        if let Some(anchor) = anchor {
            let target_text = if same_page {
                text.to_owned()
            } else {
                std::fs::read_to_string(&path).unwrap_or_default()
            };
            if !anchors(&target_text).contains(anchor) {
                broken.push(format!("{}: {target}: no such heading", page.display()));
            }
        }
    }
    broken
}

/// Splits a shell line into words as the shell would for our purpose: single and double quotes,
/// a comment ended, and only the first command of `&&`, `||`, `;` or `|`, up to a redirection.
fn command_words(line: &str) -> Vec<Vec<String>> {
    let mut commands = vec![Vec::new()];
    let mut word = String::new();
    let (mut single, mut double, mut started) = (false, false, false);
    let mut chars = line.chars().peekable();
    let mut redirected = false;
    let end_word = |word: &mut String,
                    started: &mut bool,
                    commands: &mut Vec<Vec<String>>,
                    redirected: bool| {
        if *started && !redirected {
            commands
                .last_mut()
                .expect("one command at least")
                .push(std::mem::take(word));
        }
        word.clear();
        *started = false;
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                started = true;
            }
            '"' if !single => {
                double = !double;
                started = true;
            }
            ' ' | '\t' if !single && !double => {
                end_word(&mut word, &mut started, &mut commands, redirected)
            }
            '#' if !single && !double && !started => break,
            '&' | '|' | ';' if !single && !double => {
                end_word(&mut word, &mut started, &mut commands, redirected);
                if chars.peek().is_some_and(|n| *n == c) {
                    chars.next();
                }
                commands.push(Vec::new());
                redirected = false;
            }
            '>' | '<' if !single && !double => {
                if word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                    started = false;
                }
                end_word(&mut word, &mut started, &mut commands, redirected);
                redirected = true;
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    end_word(&mut word, &mut started, &mut commands, redirected);
    commands.retain(|c| !c.is_empty());
    commands
}

/// The `git hpp` and `hop` command lines of `text`'s shell blocks that do not parse.
fn unparsed_commands(page: &Path, text: &str) -> Vec<String> {
    let mut broken = Vec::new();
    for (info, block) in split_fences(text).1 {
        if !matches!(info.as_str(), "sh" | "bash" | "shell" | "console") {
            continue;
        }
        // A line ending in `\` goes on on the next.
        let mut lines = Vec::new();
        let mut held = String::new();
        for line in block {
            let line = line.trim().trim_start_matches("$ ");
            match line.strip_suffix('\\') {
                Some(start) => held.push_str(start),
                None => lines.push(std::mem::take(&mut held) + line),
            }
        }
        for line in &lines {
            for words in command_words(line) {
                let ours = matches!(words.as_slice(), [git, hpp, ..] if git == "git" && hpp == "hpp")
                    || words.first().is_some_and(|w| w == "hop");
                // A template (`$STATE`, `R_...`, `[--repair]`, `<file>`) stands for a value the
                // reader fills in: not a command line as written.
                let template = words.iter().any(|w| {
                    w.contains('$') || w.contains("...") || w.starts_with('[') || w.starts_with('<')
                });
                // The reference's special form, answered before the parser (`cli::run`).
                let self_test = words == ["git", "hpp", "--self-test"];
                if !ours || template || self_test {
                    continue;
                }
                if let Err(e) = crate::help::parses_words(line, &words) {
                    broken.push(format!("{}: {e}", page.display()));
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_and_anchor_of_the_readme_and_the_book_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("readable");
        broken.extend(broken_links(&page, &text));
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_command_line_of_the_readme_and_the_book_parses() {
    let mut broken = Vec::new();
    let mut seen = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("readable");
        seen += split_fences(&text).1.len();
        broken.extend(unparsed_commands(&page, &text));
    }
    assert!(seen > 20, "the pages have {seen} code blocks");
    assert!(
        broken.is_empty(),
        "command lines that do not parse:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_chapter_is_in_the_summary_and_the_readme_is_short() {
    let summary =
        std::fs::read_to_string(Path::new(ROOT).join("docs/src/SUMMARY.md")).expect("the summary");
    for page in pages().iter().skip(1) {
        let name = page.file_name().and_then(|n| n.to_str()).expect("a name");
        if name != "SUMMARY.md" {
            assert!(
                summary.contains(&format!("({name})")),
                "{name} is not in SUMMARY.md"
            );
        }
    }
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).expect("the README");
    assert!(
        readme.lines().count() <= 400,
        "the README has {} lines",
        readme.lines().count()
    );
    let first_screen: String = readme.lines().take(50).collect::<Vec<_>>().join("\n");
    assert!(
        first_screen.contains("## Quick start")
            && first_screen.contains("## In your own repository"),
        "the quick start and the own-repository block are on the first screen"
    );
}

#[test]
fn control_a_broken_link_an_unknown_anchor_and_a_bad_flag_are_caught() {
    let page = Path::new(ROOT).join("README.md");
    let text = "# Title\n\nSee [a](no-such-file.md), [b](#no-such-heading), [c](#title).\n\n```sh\ngit hpp status --no-such-flag\ngit hpp status --json | head # fine\nhop no-such-command\n```\n";
    let links = broken_links(&page, text);
    assert_eq!(links.len(), 2, "{links:?}");
    let commands = unparsed_commands(&page, text);
    assert_eq!(commands.len(), 2, "{commands:?}");
}
