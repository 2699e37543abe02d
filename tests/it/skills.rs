//! Every `git hpp` command the shipped modules teach — in their skills, their review agents and
//! their READMEs — run for real, in the order a user of that text would run it, with the exit
//! code the text implies: an agent following a shipped text must never be stuck.
//!
//! [`TAUGHT`] lists each command as the texts spell it (whitespace normalised) and how it is
//! covered: run by one scenario below, or a bare mention (a family name or an elided form such
//! as `git hpp evidence run ...`). A command added to a text without a row fails
//! `every_taught_command_has_a_row_and_every_row_is_taught`; a row whose scenario does not run
//! it fails that scenario.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use assert_fs::prelude::*;
use serde_json::{Value, json};

use crate::harness::{BIN, Run, Sandbox, sha256_hex};

const MODULES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/modules");

/// The scenario that runs a taught command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// hpp-loop: work_started to verified.
    Loop,
    /// hpp-evidence: a real `cargo test` as the criterion.
    Evidence,
    /// hpp-attest: freeze the change, check the lenses' findings, attest, check_passed.
    Attest,
    /// The review lenses' answers through `findings check`.
    Lenses,
    /// hpp-verify: verify HEAD and a range, push, fetch into a clone, the pre-push gate.
    Verify,
    /// hpp-board: claim to merged, a fix, a deferral, a red item.
    Board,
    /// hpp-best-of-n: compete, withdraw, select, merge the winner.
    BestOfN,
    /// hpp-lanes and the lane-kit hooks: start, collide, heartbeat, review-guard, close.
    Lanes,
    /// hpp-handoff and the continuity-kit hooks.
    Handoff,
    /// hpp-gotchas and the gotcha-memory hooks.
    Gotchas,
    /// The operator-kit README: the policy hook, status, policy check.
    Operator,
    /// The module READMEs' install commands.
    Install,
}

/// How a taught command is covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cover {
    /// Run by this scenario, with an asserted exit code.
    By(Scenario),
    /// A family name or an elided form, not a runnable command.
    Mention,
}

use Cover::{By, Mention};
use Scenario::*;

/// Every `git hpp` command the shipped texts teach, and how it is covered.
const TAUGHT: &[(&str, Cover)] = &[
    // Mentions: a family name or an elided form.
    ("git hpp", Mention),
    ("git hpp board", Mention),
    ("git hpp board claim", Mention),
    ("git hpp board compete", Mention),
    ("git hpp event append", Mention),
    ("git hpp evidence run", Mention),
    ("git hpp evidence run ...", Mention),
    ("git hpp evidence verify", Mention),
    ("git hpp findings check", Mention),
    ("git hpp lane start", Mention),
    // hpp-loop
    ("git hpp status", By(Loop)),
    (
        "git hpp event append --type work_started --work <item> --maker <you>",
        By(Loop),
    ),
    (
        "git hpp evidence run --id <name> --artifact <glob> --record-event -- <cmd...>",
        By(Loop),
    ),
    ("git hpp event append --type check_passed", By(Loop)),
    (
        "git hpp event append --type human_approved --by <name>",
        By(Loop),
    ),
    ("git hpp event append --type verified", By(Loop)),
    // hpp-evidence
    (
        "git hpp evidence run --id unit-tests --artifact target/test-report.txt --record-event -- sh -c 'mkdir -p target && cargo test --quiet > target/test-report.txt 2>&1'",
        By(Evidence),
    ),
    ("git hpp evidence verify <id>", By(Evidence)),
    ("git hpp evidence list", By(Evidence)),
    // hpp-attest
    (
        r#"git hpp findings check "$R"/findings-*.json --subject "$R/change.diff""#,
        By(Attest),
    ),
    (
        "git hpp attest create --spec SPEC.md --maker <you> --checker <reviewer> --session <review-id> --verdict approved --evidence unit-tests",
        By(Attest),
    ),
    // The review lenses
    (
        "git hpp findings check FILE --subject change.diff",
        By(Lenses),
    ),
    // hpp-verify
    ("git hpp verify", By(Verify)),
    ("git hpp verify main..HEAD", By(Verify)),
    ("git hpp push", By(Verify)),
    ("git hpp push [remote]", By(Verify)),
    ("git hpp fetch [remote]", By(Verify)),
    ("git hpp hooks install --apply", By(Verify)),
    // hpp-board
    (
        "git hpp board claim ITEM --lane <lane> --model <model>",
        By(Board),
    ),
    (
        "git hpp board set ITEM BUILDING --lane <lane> --role executor --model <model>",
        By(Board),
    ),
    (
        "git hpp evidence run --id <id> --artifact <glob> -- <test command>",
        By(Board),
    ),
    (
        "git hpp board set ITEM CHECKPOINT-READY --lane <lane> --role executor --model <model> --evidence-record <id>",
        By(Board),
    ),
    ("git hpp checker route --maker <your provider>", By(Board)),
    (
        "git hpp board start-review ITEM --target-lane <checker lane> --target-model <its model> --lane <you> --model <model>",
        By(Board),
    ),
    (
        "git hpp board set ITEM VERIFIED --lane <you> --role reviewer --model <model> --verdict-by-lane <you> --verdict-by-model <model>",
        By(Board),
    ),
    (
        "git hpp board set ITEM DEFERRED --lane <you> --role reviewer --model <model> --checker-unavailable",
        By(Board),
    ),
    (
        "git hpp board release-fix ITEM --target-lane <lane> --lane <you> --model <model>",
        By(Board),
    ),
    ("git hpp board approve ITEM --lane <person>", By(Board)),
    (
        "git hpp board set ITEM MERGED --lane <lane> --role executor --model <model> --branch <branch>",
        By(Board),
    ),
    ("git hpp board status ITEM", By(Board)),
    ("git hpp board render", By(Board)),
    // hpp-best-of-n
    (
        "git hpp board claim <task>-<lane> --lane <lane> --model <model>",
        By(BestOfN),
    ),
    (
        "git hpp board compete --task <task> --items A,B[,C...] --lane <you> --model <model>",
        By(BestOfN),
    ),
    (
        r#"git hpp board withdraw --task <task> --item <item> --lane <you> --model <model> --reason "<why>""#,
        By(BestOfN),
    ),
    ("git hpp checker route --maker <provider>", By(BestOfN)),
    (
        "git hpp board select --task <task> --checker-unavailable --lane <you> --model <model>",
        By(BestOfN),
    ),
    (
        r#"git hpp board select --task <task> --winner <item> --lane <checker> --model <model> --reason "<why>""#,
        By(BestOfN),
    ),
    ("git hpp board status <task>", By(BestOfN)),
    // hpp-lanes and the lane-kit README
    ("git hpp lane list", By(Lanes)),
    (
        "git hpp lane start <id> --territory <path>... --role maker --model <your model>",
        By(Lanes),
    ),
    ("git hpp lane heartbeat", By(Lanes)),
    ("git hpp lane heartbeat --hook <host>", By(Lanes)),
    ("git hpp lane guard --host <host>", By(Lanes)),
    ("git hpp lane review-guard -- <command...>", By(Lanes)),
    ("git hpp lane review-guard -- cargo test", By(Lanes)),
    ("git hpp lane close <id>", By(Lanes)),
    // hpp-handoff and the continuity-kit README
    ("git hpp handoff show", By(Handoff)),
    (
        r#"git hpp handoff write --summary "Parser done; CLI half wired (flags parsed, not yet dispatched)." --next "wire handoff show into the dispatcher" --verify-first "cargo test --test it handoff::""#,
        By(Handoff),
    ),
    (
        "git hpp handoff write --summary ... --next ... --verify-first ...",
        By(Handoff),
    ),
    ("git hpp handoff write ...", By(Handoff)),
    (
        "git hpp handoff hook --host <host> --event Stop|PreCompact",
        By(Handoff),
    ),
    (
        "git hpp handoff hook --host <host> --event SessionStart",
        By(Handoff),
    ),
    // hpp-gotchas and the gotcha-memory README
    (
        r#"git hpp gotcha preamble --task "<task key>""#,
        By(Gotchas),
    ),
    (
        r#"git hpp gotcha record --task "<task key>" --message "<error text>""#,
        By(Gotchas),
    ),
    ("git hpp gotcha list", By(Gotchas)),
    ("git hpp gotcha preamble", By(Gotchas)),
    ("git hpp gotcha preamble --task KEY", By(Gotchas)),
    (
        "git hpp gotcha record --task KEY --message TEXT",
        By(Gotchas),
    ),
    (
        "git hpp gotcha hook --host <host> --event <event>",
        By(Gotchas),
    ),
    // The operator-kit README
    ("git hpp policy hook --host <host>", By(Operator)),
    ("git hpp status --json", By(Operator)),
    (
        "git hpp policy check --mode enforce --command ...",
        By(Operator),
    ),
    // The module READMEs' installs
    (
        "git hpp install --host claude-code --module continuity-kit --apply",
        By(Install),
    ),
    (
        "git hpp install --host claude-code --module gotcha-memory --apply",
        By(Install),
    ),
    (
        "git hpp install --host claude-code --module health-kit --apply",
        By(Install),
    ),
    (
        "git hpp install --host claude-code --module lane-kit --apply",
        By(Install),
    ),
    (
        "git hpp install --host claude-code --module operator-kit --apply",
        By(Install),
    ),
    (
        "git hpp install --host codex --module lane-kit --apply",
        By(Install),
    ),
    (
        "git hpp install --host codex --module operator-kit --apply",
        By(Install),
    ),
];

// ---------------------------------------------------------------------------------------------
// Extraction
// ---------------------------------------------------------------------------------------------

/// The shipped texts that teach commands, as (path under modules/, text): each module's README,
/// its skills and its agents.
fn shipped_texts() -> Vec<(String, String)> {
    fn sorted(dir: &Path) -> Vec<PathBuf> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.map(|e| e.expect("a directory entry").path()).collect())
            .unwrap_or_default();
        entries.sort();
        entries
    }
    let mut files = Vec::new();
    for kit in sorted(Path::new(MODULES)) {
        if !kit.is_dir() {
            continue;
        }
        files.push(kit.join("README.md"));
        files.extend(
            sorted(&kit.join("skills"))
                .into_iter()
                .map(|s| s.join("SKILL.md")),
        );
        files.extend(
            sorted(&kit.join("agents"))
                .into_iter()
                .filter(|a| a.extension().is_some_and(|e| e == "md")),
        );
    }
    files
        .into_iter()
        .filter(|f| f.is_file())
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("a shipped text is UTF-8");
            let rel = f
                .strip_prefix(MODULES)
                .expect("under modules/")
                .display()
                .to_string();
            (rel, text)
        })
        .collect()
}

fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_hpp(command: &str) -> bool {
    command == "git hpp" || command.starts_with("git hpp ")
}

/// Cuts a shell comment (`#` after whitespace, outside quotes) off a command line.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => return &line[..at],
            _ => {}
        }
        previous = c;
    }
    line
}

/// Every `git hpp` command `text` teaches: each line of a fenced block that starts with
/// `git hpp` (backslash-continued lines joined, a trailing `# comment` cut), and each inline
/// code span that does (`\|`, a pipe escaped in a table, read as `|`); whitespace normalised.
fn taught_commands(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut prose = String::new();
    let mut fenced = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            pending.clear();
            // A fence ends any code span: the spans are paired within the prose between fences.
            prose.push_str("\n\n");
            continue;
        }
        if !fenced {
            prose.push_str(line);
            prose.push('\n');
            continue;
        }
        if let Some(head) = line.trim_end().strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        let command = normalise(strip_comment(&pending));
        pending.clear();
        if is_hpp(&command) {
            found.push(command);
        }
    }
    for block in prose.split("\n\n") {
        assert!(
            block.matches('`').count() % 2 == 0,
            "an unpaired backtick in a paragraph:\n{block}"
        );
        for (at, span) in block.split('`').enumerate() {
            let command = normalise(&span.replace("\\|", "|"));
            if at % 2 == 1 && is_hpp(&command) {
                found.push(command);
            }
        }
    }
    found
}

/// The commands of `texts` the table does not cover, each with the texts that teach it.
fn untested(texts: &[(String, String)], table: &[(&str, Cover)]) -> BTreeMap<String, Vec<String>> {
    let covered: BTreeSet<&str> = table.iter().map(|(t, _)| *t).collect();
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, text) in texts {
        for command in taught_commands(text) {
            if !covered.contains(command.as_str()) {
                missing.entry(command).or_default().push(path.clone());
            }
        }
    }
    missing
}

#[test]
fn every_taught_command_has_a_row_and_every_row_is_taught() {
    let texts = shipped_texts();
    let paths: Vec<&str> = texts.iter().map(|(p, _)| p.as_str()).collect();
    for expected in [
        "operator-kit/skills/hpp-loop/SKILL.md",
        "operator-kit/agents/lens-deletion.md",
        "lane-kit/skills/hpp-board/SKILL.md",
        "continuity-kit/README.md",
    ] {
        assert!(paths.contains(&expected), "{expected} is read: {paths:?}");
    }
    let taught: BTreeSet<String> = texts
        .iter()
        .flat_map(|(_, text)| taught_commands(text))
        .collect();
    let table: BTreeSet<String> = TAUGHT.iter().map(|(t, _)| (*t).to_owned()).collect();
    assert_eq!(table.len(), TAUGHT.len(), "a row is listed twice");
    let missing = untested(&texts, TAUGHT);
    assert!(
        missing.is_empty(),
        "taught but not in TAUGHT (add a row and run it in a scenario): {missing:#?}"
    );
    let stale: Vec<&String> = table.difference(&taught).collect();
    assert!(
        stale.is_empty(),
        "rows no shipped text teaches any more: {stale:#?}"
    );
    assert_eq!(taught, table);
    // A mention can only be a family name or an elided form: at most two words after `git hpp`,
    // no flag, no placeholder, no argument. Anything else must run.
    for (text, cover) in TAUGHT {
        if *cover == Mention {
            let words: Vec<&str> = text.trim_end_matches(" ...").split(' ').skip(2).collect();
            assert!(
                words.len() <= 2
                    && words
                        .iter()
                        .all(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-')),
                "{text:?} is runnable: run it in a scenario instead of calling it a mention"
            );
        }
    }
}

#[test]
fn control_a_command_added_to_a_skill_without_a_row_is_reported_untested() {
    let skill = "---\nname: hpp-made-up\n---\n\n\
        Start with `git hpp status`, then:\n\n\
        ```sh\n\
        git hpp board claim ITEM --lane <lane> --model <model> \\\n  --tag red   # red needs a person\n\
        git hpp status\n\
        ```\n\n\
        and `git hpp lane list`, never `git status`.\n";
    let texts = vec![(
        "made-up/skills/hpp-made-up/SKILL.md".to_owned(),
        skill.to_owned(),
    )];
    assert_eq!(
        taught_commands(skill),
        [
            "git hpp board claim ITEM --lane <lane> --model <model> --tag red",
            "git hpp status",
            "git hpp status",
            "git hpp lane list",
        ]
    );
    let missing = untested(&texts, TAUGHT);
    assert_eq!(
        missing.keys().collect::<Vec<_>>(),
        ["git hpp board claim ITEM --lane <lane> --model <model> --tag red"],
        "the continued line with its new flag has no row; the others have"
    );
    assert_eq!(
        missing.values().next().expect("one"),
        &["made-up/skills/hpp-made-up/SKILL.md"]
    );
}

#[test]
fn control_a_pipe_escaped_in_a_table_and_an_unpaired_backtick_are_read_as_markdown() {
    assert_eq!(
        taught_commands("| a | `git hpp handoff hook --host <host> --event Stop\\|PreCompact` |\n"),
        ["git hpp handoff hook --host <host> --event Stop|PreCompact"]
    );
    let unpaired = std::panic::catch_unwind(|| taught_commands("`git hpp status\n"));
    assert!(unpaired.is_err(), "an unpaired backtick is not guessed at");
}

// ---------------------------------------------------------------------------------------------
// Running a taught command
// ---------------------------------------------------------------------------------------------

/// Splits a command line as sh does for plain words, '...' and "..." (no expansion).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut open = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                open = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                open = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(q),
                    }
                }
            }
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                if open || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                open = false;
            }
            c => word.push(c),
        }
    }
    if open || !word.is_empty() {
        words.push(word);
    }
    words
}

/// Follows the shipped texts in one sandbox, recording which taught commands it ran.
struct Follow<'a> {
    sandbox: &'a Sandbox,
    scenario: Scenario,
    ran: BTreeSet<&'static str>,
}

impl<'a> Follow<'a> {
    fn new(sandbox: &'a Sandbox, scenario: Scenario) -> Self {
        Self {
            sandbox,
            scenario,
            ran: BTreeSet::new(),
        }
    }

    /// Starts running the taught command `text` (a row of [`TAUGHT`] that some scenario runs).
    fn step(&mut self, text: &'static str) -> Step<'_, 'a> {
        let row = TAUGHT
            .iter()
            .find(|(t, _)| *t == text)
            .unwrap_or_else(|| panic!("no row in TAUGHT for {text:?}"));
        assert_ne!(row.1, Mention, "{text:?} is a mention: it is not run");
        Step {
            follow: self,
            text,
            subs: Vec::new(),
            plus: Vec::new(),
            stdin: None,
            cwd: None,
        }
    }

    /// Asserts that every row of this scenario ran.
    fn done(self) {
        let owned: BTreeSet<&str> = TAUGHT
            .iter()
            .filter(|(_, c)| *c == By(self.scenario))
            .map(|(t, _)| *t)
            .collect();
        let not_run: Vec<&&str> = owned.difference(&self.ran).collect();
        assert!(
            not_run.is_empty(),
            "{:?} did not run its rows: {not_run:#?}",
            self.scenario
        );
    }
}

/// What a taught command printed (its exit code already asserted).
struct Ran {
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}--- stderr ---\n{}", self.stdout, self.stderr)
    }
}

/// One taught command on its way to running.
#[must_use = "run it with .exit(code)"]
struct Step<'f, 'a> {
    follow: &'f mut Follow<'a>,
    text: &'static str,
    subs: Vec<(String, String)>,
    plus: Vec<String>,
    stdin: Option<String>,
    cwd: Option<PathBuf>,
}

impl Step<'_, '_> {
    /// Replaces the placeholder `from` (which the text must contain) by `to`, which is then
    /// split as sh would split it (quote a value with spaces).
    fn sub(mut self, from: &str, to: &str) -> Self {
        assert!(
            self.text.contains(from),
            "{from:?} is not in {:?}",
            self.text
        );
        self.subs.push((from.to_owned(), to.to_owned()));
        self
    }

    /// Appends the flags the text says to add (`add --tag red`, `and --reason`).
    fn plus(mut self, args: &[&str]) -> Self {
        self.plus.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// Feeds `payload` on stdin, as a host feeds a hook.
    fn stdin(mut self, payload: &Value) -> Self {
        self.stdin = Some(payload.to_string());
        self
    }

    /// Runs in `dir` instead of the repository's root.
    fn cwd(mut self, dir: &Path) -> Self {
        self.cwd = Some(dir.to_path_buf());
        self
    }

    /// Runs it and asserts exit `code`.
    #[track_caller]
    fn exit(self, code: i32) -> Ran {
        let mut line = self.text.to_owned();
        for (from, to) in &self.subs {
            line = line.replace(from, to);
        }
        for left in ["<", "[", "...", "$"] {
            assert!(
                !line.contains(left),
                "a placeholder ({left}) is left in {line:?}, from {:?}",
                self.text
            );
        }
        let mut argv = shell_words(&line);
        for word in ["ITEM", "FILE", "KEY", "TEXT"] {
            assert!(
                !argv.iter().any(|a| a == word),
                "{word} is left in {line:?}"
            );
        }
        assert_eq!(argv[..2], ["git", "hpp"], "{line}");
        argv.extend(self.plus.iter().cloned());
        let sandbox = self.follow.sandbox;
        let cwd = self.cwd.unwrap_or_else(|| sandbox.root.clone());
        let args: Vec<&str> = argv[2..].iter().map(String::as_str).collect();
        let mut cmd = sandbox.hpp_command(&cwd, &args);
        let run = match &self.stdin {
            None => Run::from_output(&cmd.output().expect("git-hpp runs")),
            Some(input) => Run::fed(cmd, input),
        };
        assert_eq!(
            run.code,
            code,
            "`{}` (taught as `{}`) in {}:\n{run}",
            argv.join(" "),
            self.text,
            cwd.display()
        );
        self.follow.ran.insert(self.text);
        Ran {
            stdout: run.stdout,
            stderr: run.stderr,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sandboxes
// ---------------------------------------------------------------------------------------------

/// PATH with `dirs` first, then the built binaries and this process's PATH.
fn path_with(dirs: &[PathBuf]) -> String {
    let mut all = dirs.to_vec();
    all.push(
        Path::new(BIN)
            .parent()
            .expect("the binary has a directory")
            .to_path_buf(),
    );
    if let Some(path) = std::env::var_os("PATH") {
        all.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(all)
        .expect("PATH entries join")
        .into_string()
        .expect("PATH is UTF-8")
}

/// A repository with SPEC.md committed and `hpp-out/` ignored (where the criteria below write).
fn spec_repo() -> Sandbox {
    let sandbox = Sandbox::repo();
    sandbox
        .child("SPEC.md")
        .write_str("The parser accepts empty input.\n")
        .expect("writable");
    sandbox.git(["add", "SPEC.md"]);
    sandbox.git(["commit", "-q", "-m", "spec"]);
    sandbox.ignore_outputs();
    sandbox
}

/// A repository holding a small Rust crate with one passing test (its lock file committed,
/// `target/` ignored as Rust projects do, and never built), whose commands find the toolchain
/// that builds this project first on PATH.
fn crate_repo() -> Sandbox {
    let mut sandbox = spec_repo();
    let toolchain = Path::new(env!("CARGO"))
        .parent()
        .expect("cargo has a directory")
        .to_path_buf();
    sandbox
        .env
        .insert("PATH".into(), path_with(std::slice::from_ref(&toolchain)));
    for var in ["RUSTUP_HOME", "RUSTUP_TOOLCHAIN"] {
        if let Ok(value) = std::env::var(var) {
            sandbox.env.insert(var.into(), value);
        }
    }
    sandbox
        .child("Cargo.toml")
        .write_str("[package]\nname = \"parser\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
        .expect("writable");
    sandbox
        .child("src/lib.rs")
        .write_str(LIB_RS)
        .expect("writable");
    sandbox
        .child(".gitignore")
        .write_str("/target\n")
        .expect("writable");
    let lock = sandbox
        .command(
            &toolchain.join("cargo").display().to_string(),
            &sandbox.root,
        )
        .args(["generate-lockfile", "--offline"])
        .output()
        .expect("cargo runs");
    assert!(
        lock.status.success(),
        "cargo generate-lockfile:\n{}",
        Run::from_output(&lock)
    );
    sandbox.git(["add", "."]);
    sandbox.git(["commit", "-q", "-m", "the parser crate"]);
    assert!(!sandbox.root.join("target").exists());
    sandbox
}

const LIB_RS: &str = "/// Counts the bytes of the input.\npub fn parse(input: &str) -> usize {\n    input.len()\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn empty_input_parses() {\n        assert_eq!(super::parse(\"\"), 0);\n    }\n}\n";

/// A criterion that writes `artifact` (under the ignored `hpp-out/`) and exits `code`.
fn criterion(artifact: &str, code: i32) -> String {
    format!("sh -c 'mkdir -p hpp-out && echo run > {artifact} && exit {code}'")
}

/// The types of the current branch's loop events, in order.
fn loop_events(sandbox: &Sandbox) -> Vec<String> {
    let log = sandbox.hpp(["event", "log", "--json"]).json(0);
    log["events"]
        .as_array()
        .expect("a list of events")
        .iter()
        .map(|e| e["type"].as_str().expect("a type").to_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// operator-kit: hpp-loop, hpp-evidence, hpp-attest, the lenses, hpp-verify
// ---------------------------------------------------------------------------------------------

const WORK_STARTED: &str = "git hpp event append --type work_started --work <item> --maker <you>";
const LOOP_EVIDENCE: &str =
    "git hpp evidence run --id <name> --artifact <glob> --record-event -- <cmd...>";
const CHECK_PASSED: &str = "git hpp event append --type check_passed";
const HUMAN_APPROVED: &str = "git hpp event append --type human_approved --by <name>";
const VERIFIED: &str = "git hpp event append --type verified";
const ATTEST: &str = "git hpp attest create --spec SPEC.md --maker <you> --checker <reviewer> --session <review-id> --verdict approved --evidence unit-tests";

/// hpp-loop's first two rows: the work starts, and the criterion `unit-tests` passes.
fn start_and_evidence(f: &mut Follow<'_>) {
    f.step(WORK_STARTED)
        .sub("<item>", "parser")
        .sub("<you>", "agent-a")
        .exit(0);
    f.step(LOOP_EVIDENCE)
        .sub("<name>", "unit-tests")
        .sub("<glob>", "hpp-out/report.txt")
        .sub("<cmd...>", &criterion("hpp-out/report.txt", 0))
        .exit(0);
}

/// hpp-attest's record: reviewer-b approves agent-a's work.
fn attest(f: &mut Follow<'_>, verdict: &str, checker: &str, code: i32) -> Ran {
    f.step(ATTEST)
        .sub("<you>", "agent-a")
        .sub("<reviewer>", checker)
        .sub("<review-id>", "review-1")
        .sub("--verdict approved", &format!("--verdict {verdict}"))
        .exit(code)
}

#[test]
fn the_loop_skill_walks_a_task_from_start_to_verified() {
    let sandbox = spec_repo();
    let mut f = Follow::new(&sandbox, Loop);
    let planned = f.step("git hpp status").exit(0);
    assert!(planned.stdout.contains("planned"), "{planned}");
    f.step(WORK_STARTED)
        .sub("<item>", "parser")
        .sub("<you>", "agent-a")
        .exit(0);
    // Out of order: refused, nothing written.
    let refused = f.step(CHECK_PASSED).exit(2);
    assert!(refused.stdout.is_empty(), "{refused}");
    assert_eq!(loop_events(&sandbox), ["work_started"]);
    // A criterion that fails records no event.
    f.step(LOOP_EVIDENCE)
        .sub("<name>", "unit-tests")
        .sub("<glob>", "hpp-out/report.txt")
        .sub("<cmd...>", &criterion("hpp-out/report.txt", 1))
        .exit(1);
    assert_eq!(loop_events(&sandbox), ["work_started"]);
    f.step(LOOP_EVIDENCE)
        .sub("<name>", "unit-tests")
        .sub("<glob>", "hpp-out/report.txt")
        .sub("<cmd...>", &criterion("hpp-out/report.txt", 0))
        .exit(0);
    // A checker who is not the maker approves this tree (hpp-attest).
    attest(&mut f, "approved", "reviewer-b", 0);
    f.step(CHECK_PASSED).exit(0);
    f.step(HUMAN_APPROVED).sub("<name>", "alice").exit(0);
    f.step(VERIFIED).exit(0);
    assert_eq!(
        loop_events(&sandbox),
        [
            "work_started",
            "evidence_recorded",
            "check_passed",
            "human_approved",
            "verified"
        ]
    );
    let status = f.step("git hpp status").exit(0);
    assert!(status.stdout.contains("verified"), "{status}");
    f.done();
}

#[test]
fn the_loop_skill_refuses_the_makers_own_attestation_at_the_checker_gate() {
    let sandbox = spec_repo();
    let mut f = Follow::new(&sandbox, Loop);
    start_and_evidence(&mut f);
    // Maker and checker must differ ignoring case: the attestation itself is refused.
    let refused = attest(&mut f, "approved", "Agent-A", 2);
    assert!(
        refused
            .stderr
            .contains("maker and checker must be different"),
        "{refused}"
    );
    f.step(CHECK_PASSED).exit(2);
    assert_eq!(loop_events(&sandbox), ["work_started", "evidence_recorded"]);
}

#[test]
fn the_evidence_skill_records_a_real_cargo_test_in_a_fresh_checkout() {
    let sandbox = crate_repo();
    let mut f = Follow::new(&sandbox, Evidence);
    f.step(WORK_STARTED)
        .sub("<item>", "parser")
        .sub("<you>", "agent-a")
        .exit(0);
    const CRITERION: &str = "git hpp evidence run --id unit-tests --artifact target/test-report.txt --record-event -- sh -c 'mkdir -p target && cargo test --quiet > target/test-report.txt 2>&1'";
    f.step(CRITERION).exit(0);
    let report =
        std::fs::read_to_string(sandbox.root.join("target/test-report.txt")).expect("a report");
    assert!(report.contains("test result: ok. 1 passed"), "{report}");
    assert_eq!(loop_events(&sandbox), ["work_started", "evidence_recorded"]);
    f.step("git hpp evidence verify <id>")
        .sub("<id>", "unit-tests")
        .exit(0);
    let list = f.step("git hpp evidence list").exit(0);
    assert!(list.stdout.contains("unit-tests"), "{list}");

    // A broken test: the same command exits 1 and records no event.
    sandbox
        .child("src/lib.rs")
        .write_str(&LIB_RS.replace("parse(\"\"), 0", "parse(\"\"), 1"))
        .expect("writable");
    f.step(CRITERION).exit(1);
    let report =
        std::fs::read_to_string(sandbox.root.join("target/test-report.txt")).expect("a report");
    assert!(report.contains("empty_input_parses"), "{report}");
    assert_eq!(loop_events(&sandbox), ["work_started", "evidence_recorded"]);
    f.done();
}

/// Writes what hpp-attest's first step freezes: `git diff HEAD` into `$R/change.diff`, with
/// `R=$(git rev-parse --absolute-git-dir)/hpp-review`; returns `$R` and the diff's sha256.
fn freeze_change(sandbox: &Sandbox) -> (PathBuf, String) {
    let review = PathBuf::from(sandbox.git(["rev-parse", "--absolute-git-dir"])).join("hpp-review");
    std::fs::create_dir_all(&review).expect("writable");
    let diff = sandbox
        .command("git", &sandbox.root)
        .args(["diff", "HEAD"])
        .output()
        .expect("git diff runs");
    assert!(diff.status.success() && !diff.stdout.is_empty());
    std::fs::write(review.join("change.diff"), &diff.stdout).expect("writable");
    (review, sha256_hex(&diff.stdout))
}

const LENSES: [&str; 4] = [
    "verification-gap",
    "partial-set",
    "deletion",
    "stale-evidence",
];

/// The answer a lens's text shows, filled in for `subject`; without its example finding when
/// `clean`.
fn lens_answer(lens: &str, subject: &str, clean: bool) -> Value {
    let text = std::fs::read_to_string(format!("{MODULES}/operator-kit/agents/lens-{lens}.md"))
        .expect("the lens exists");
    let start = text.find("```json\n").expect("an example answer") + "```json\n".len();
    let end = start + text[start..].find("```").expect("closed");
    let mut answer: Value = serde_json::from_str(&text[start..end]).expect("the example is JSON");
    answer["subject_sha256"] = json!(subject);
    answer["inspected"] = json!(["README"]);
    if clean {
        answer["findings"] = json!([]);
    }
    answer
}

#[test]
fn the_attest_skill_checks_the_lenses_and_records_an_approval_the_loop_accepts() {
    let sandbox = spec_repo();
    sandbox
        .child("README")
        .write_str("hello\nworld\n")
        .expect("writable");
    let mut f = Follow::new(&sandbox, Attest);
    start_and_evidence(&mut f);

    // 1. Freeze the change outside the worktree; 2. the lenses' answers beside it.
    let (review, subject) = freeze_change(&sandbox);
    let mut files = Vec::new();
    for lens in LENSES {
        let path = review.join(format!("findings-{lens}.json"));
        std::fs::write(&path, lens_answer(lens, &subject, true).to_string()).expect("writable");
        files.push(path.display().to_string());
    }
    assert_eq!(
        sandbox.git(["status", "--porcelain"]),
        " M README",
        "nothing the review wrote is in the worktree"
    );
    // 3. Check them (the shell expands the glob).
    const CHECK: &str = r#"git hpp findings check "$R"/findings-*.json --subject "$R/change.diff""#;
    let diff = review.join("change.diff").display().to_string();
    let report = f
        .step(CHECK)
        .sub(r#""$R"/findings-*.json"#, &files.join(" "))
        .sub(r#""$R/change.diff""#, &diff)
        .exit(0);
    assert_eq!(report.stdout.matches("\"verdict\": \"pass\"").count(), 4);
    // A high finding means revise: exit 1.
    std::fs::write(
        review.join("findings-deletion.json"),
        lens_answer("deletion", &subject, false).to_string(),
    )
    .expect("writable");
    f.step(CHECK)
        .sub(r#""$R"/findings-*.json"#, &files.join(" "))
        .sub(r#""$R/change.diff""#, &diff)
        .exit(1);

    // 4. The verdict: revise is recorded with exit 2 and passes no gate; approved does.
    attest(&mut f, "revise", "reviewer-b", 2);
    f.step(CHECK_PASSED).exit(2);
    attest(&mut f, "approved", "reviewer-b", 0);
    f.step(CHECK_PASSED).exit(0);
    // The tree the evidence ran on is still the workspace's: the person and closure follow.
    f.step(HUMAN_APPROVED).sub("<name>", "alice").exit(0);
    f.step(VERIFIED).exit(0);
    f.done();
}

#[test]
fn control_a_change_frozen_inside_the_worktree_moves_the_tree_and_the_attestation_is_refused() {
    let sandbox = spec_repo();
    sandbox
        .child("README")
        .write_str("hello\nworld\n")
        .expect("writable");
    let mut f = Follow::new(&sandbox, Attest);
    start_and_evidence(&mut f);
    // What the skill said before: `git diff HEAD > change.diff` in the worktree.
    let (review, _) = freeze_change(&sandbox);
    std::fs::copy(review.join("change.diff"), sandbox.root.join("change.diff")).expect("copy");
    let refused = attest(&mut f, "approved", "reviewer-b", 2);
    assert!(refused.stderr.contains("ran on tree"), "{refused}");
    f.step(CHECK_PASSED).exit(2);
}

#[test]
fn each_review_lens_answer_passes_findings_check_as_the_lens_text_says() {
    let sandbox = Sandbox::repo();
    let dir = sandbox.path("review");
    std::fs::create_dir_all(&dir).expect("writable");
    std::fs::write(dir.join("change.diff"), "--- a/README\n+++ b/README\n").expect("writable");
    let subject =
        sha256_hex(&std::fs::read(dir.join("change.diff")).expect("the diff is readable"));
    let mut f = Follow::new(&sandbox, Lenses);
    for lens in LENSES {
        let file = format!("findings-{lens}.json");
        // Its example finding is high: the verdict is fail, exit 1.
        std::fs::write(
            dir.join(&file),
            lens_answer(lens, &subject, false).to_string(),
        )
        .expect("writable");
        let report = f
            .step("git hpp findings check FILE --subject change.diff")
            .sub("FILE", &file)
            .cwd(&dir)
            .exit(1);
        assert!(report.stdout.contains("\"verdict\": \"fail\""), "{report}");
        // No finding is an answer too: pass, exit 0.
        std::fs::write(
            dir.join(&file),
            lens_answer(lens, &subject, true).to_string(),
        )
        .expect("writable");
        f.step("git hpp findings check FILE --subject change.diff")
            .sub("FILE", &file)
            .cwd(&dir)
            .exit(0);
        // Another subject than the one the lens was given: refused.
        std::fs::write(
            dir.join(&file),
            lens_answer(lens, &"0".repeat(64), true).to_string(),
        )
        .expect("writable");
        f.step("git hpp findings check FILE --subject change.diff")
            .sub("FILE", &file)
            .cwd(&dir)
            .exit(2);
    }
    f.done();
}

#[test]
fn the_verify_skill_verifies_head_and_a_range_pushes_and_verifies_from_a_clone() {
    let sandbox = spec_repo();
    let mut f = Follow::new(&sandbox, Verify);
    let missing = f.step("git hpp verify").exit(2);
    assert!(missing.stdout.contains("no attestation"), "{missing}");
    // The loop on the committed tree, up to the person's approval (hpp-loop, hpp-attest).
    start_and_evidence(&mut f);
    attest(&mut f, "approved", "reviewer-b", 0);
    f.step(CHECK_PASSED).exit(0);
    f.step(HUMAN_APPROVED).sub("<name>", "alice").exit(0);
    f.step("git hpp verify").exit(0);
    f.step(VERIFIED).exit(0);

    // A branch with one more commit: the range fails until that commit's tree is attested.
    sandbox.git(["checkout", "-q", "-b", "feature"]);
    sandbox
        .child("README")
        .write_str("hello\nfeature\n")
        .expect("writable");
    sandbox.git(["commit", "-q", "-am", "feature"]);
    f.step("git hpp verify main..HEAD").exit(2);
    f.step("git hpp evidence run --id <id> --artifact <glob> -- <test command>")
        .sub("<id>", "unit-tests")
        .sub("<glob>", "hpp-out/feature.txt")
        .sub("<test command>", &criterion("hpp-out/feature.txt", 0))
        .exit(0);
    attest(&mut f, "approved", "reviewer-b", 0);
    f.step("git hpp verify main..HEAD").exit(0);

    // Records travel: push them to a bare remote, fetch them into a clone, verify there.
    let remote = sandbox.path("remote.git");
    let remote = remote.to_str().expect("UTF-8");
    sandbox.git(["init", "-q", "--bare", "-b", "main", remote]);
    sandbox.git(["remote", "add", "origin", remote]);
    sandbox.git(["push", "-q", "origin", "main", "feature"]);
    f.step("git hpp push [remote]")
        .sub("[remote]", "origin")
        .exit(0);
    f.step("git hpp push").exit(0);
    let clone = sandbox.path("clone");
    let clone_str = clone.to_str().expect("UTF-8");
    sandbox.git(["clone", "-q", remote, clone_str]);
    let before = sandbox.hpp_in(&clone, &["verify"]).exit(2);
    assert!(before.stdout.contains("no attestation"), "{before}");
    f.step("git hpp fetch [remote]")
        .sub("[remote]", "origin")
        .cwd(&clone)
        .exit(0);
    f.step("git hpp verify").cwd(&clone).exit(0);

    // The pre-push gate refuses a protected branch whose tip does not verify.
    f.step("git hpp hooks install --apply").exit(0);
    sandbox.git(["checkout", "-q", "main"]);
    sandbox
        .child("README")
        .write_str("hello\nunchecked\n")
        .expect("writable");
    sandbox.git(["commit", "-q", "-am", "unchecked"]);
    let push = sandbox
        .command("git", &sandbox.root)
        .args(["push", "-q", "origin", "main"])
        .output()
        .expect("git push runs");
    let push = Run::from_output(&push);
    assert_ne!(push.code, 0, "the gate refused the push:\n{push}");
    assert_ne!(
        sandbox.git(["rev-parse", "main"]),
        sandbox.git(["--git-dir", remote, "rev-parse", "main"]),
        "the remote's main did not move"
    );
    f.done();
}

// ---------------------------------------------------------------------------------------------
// lane-kit: hpp-board, hpp-best-of-n, hpp-lanes and the lane-kit hooks
// ---------------------------------------------------------------------------------------------

const CLAIM: &str = "git hpp board claim ITEM --lane <lane> --model <model>";
const BUILDING: &str =
    "git hpp board set ITEM BUILDING --lane <lane> --role executor --model <model>";
const BOARD_EVIDENCE: &str = "git hpp evidence run --id <id> --artifact <glob> -- <test command>";
const CHECKPOINT: &str = "git hpp board set ITEM CHECKPOINT-READY --lane <lane> --role executor --model <model> --evidence-record <id>";
const START_REVIEW: &str = "git hpp board start-review ITEM --target-lane <checker lane> --target-model <its model> --lane <you> --model <model>";
const VERDICT: &str = "git hpp board set ITEM VERIFIED --lane <you> --role reviewer --model <model> --verdict-by-lane <you> --verdict-by-model <model>";
const MERGED: &str =
    "git hpp board set ITEM MERGED --lane <lane> --role executor --model <model> --branch <branch>";
const STATUS_ITEM: &str = "git hpp board status ITEM";

/// The lanes of the board scenarios: two builders, a checker of another family, a coordinator.
const BUILDER: (&str, &str) = ("lane-a", "gpt-5");
const RIVAL: (&str, &str) = ("lane-b", "gemini-2.5-pro");
const CHECKER: (&str, &str) = ("lane-c", "claude-opus-4");
const COORDINATOR: (&str, &str) = ("coord", "claude-sonnet-4");

/// A repository whose PATH holds `codex` and `claude` CLIs (scripts that exit 0), so
/// `checker route` finds the same checker on every machine.
fn board_repo() -> Sandbox {
    let mut sandbox = spec_repo();
    let bin = sandbox.path("fake-bin");
    std::fs::create_dir_all(&bin).expect("writable");
    for cli in ["codex", "claude"] {
        let path = bin.join(cli);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("writable");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    sandbox.env.insert("PATH".into(), path_with(&[bin]));
    sandbox
}

/// hpp-board's build rows for `item` by `lane`: BUILDING, a criterion, CHECKPOINT-READY.
fn build(f: &mut Follow<'_>, item: &str, (lane, model): (&str, &str)) {
    f.step(BUILDING)
        .sub("ITEM", item)
        .sub("<lane>", lane)
        .sub("<model>", model)
        .exit(0);
    checkpoint(f, item, (lane, model));
}

/// A passing criterion recorded for `item`, then CHECKPOINT-READY with it.
fn checkpoint(f: &mut Follow<'_>, item: &str, (lane, model): (&str, &str)) {
    let id = format!("ev-{}", item.to_lowercase());
    let glob = format!("hpp-out/{id}.txt");
    f.step(BOARD_EVIDENCE)
        .sub("<id>", &id)
        .sub("<glob>", &glob)
        .sub("<test command>", &criterion(&glob, 0))
        .exit(0);
    f.step(CHECKPOINT)
        .sub("ITEM", item)
        .sub("<lane>", lane)
        .sub("<model>", model)
        .sub("<id>", &id)
        .exit(0);
}

/// The coordinator hands `item` to the checker lane.
fn start_review(f: &mut Follow<'_>, item: &str) {
    f.step(START_REVIEW)
        .sub("ITEM", item)
        .sub("<checker lane>", CHECKER.0)
        .sub("<its model>", CHECKER.1)
        .sub("<you>", COORDINATOR.0)
        .sub("<model>", COORDINATOR.1)
        .exit(0);
}

/// The checker's verdict on `item`: `VERIFIED`, or another state with `extra` flags.
fn verdict(f: &mut Follow<'_>, item: &str, state: &str, extra: &[&str], code: i32) -> Ran {
    f.step(VERDICT)
        .sub("ITEM", item)
        .sub("VERIFIED", state)
        .sub("<you>", CHECKER.0)
        .sub("<model>", CHECKER.1)
        .plus(extra)
        .exit(code)
}

fn merge(f: &mut Follow<'_>, item: &str, (lane, model): (&str, &str), code: i32) -> Ran {
    f.step(MERGED)
        .sub("ITEM", item)
        .sub("<lane>", lane)
        .sub("<model>", model)
        .sub("<branch>", "main")
        .exit(code)
}

/// The state of `item` after its last event, by `board status`.
fn state_of(f: &mut Follow<'_>, item: &str) -> String {
    let run = f.step(STATUS_ITEM).sub("ITEM", item).exit(0);
    let events: Value = serde_json::from_str(&run.stdout).expect("status prints JSON");
    events
        .as_array()
        .and_then(|e| e.last())
        .and_then(|e| e["state"].as_str())
        .expect("the item has events")
        .to_owned()
}

#[test]
fn the_board_skill_moves_items_from_claim_to_merge_through_review_fix_and_deferral() {
    let sandbox = board_repo();
    let mut f = Follow::new(&sandbox, Board);
    let claim = |f: &mut Follow<'_>, item: &str, extra: &[&str]| {
        f.step(CLAIM)
            .sub("ITEM", item)
            .sub("<lane>", BUILDER.0)
            .sub("<model>", BUILDER.1)
            .plus(extra)
            .exit(0);
    };

    // A: the happy path, with a failing criterion first.
    claim(&mut f, "A", &[]);
    f.step(BUILDING)
        .sub("ITEM", "A")
        .sub("<lane>", BUILDER.0)
        .sub("<model>", BUILDER.1)
        .exit(0);
    f.step(BOARD_EVIDENCE)
        .sub("<id>", "ev-a")
        .sub("<glob>", "hpp-out/ev-a.txt")
        .sub("<test command>", &criterion("hpp-out/ev-a.txt", 1))
        .exit(1);
    let refused = f
        .step(CHECKPOINT)
        .sub("ITEM", "A")
        .sub("<lane>", BUILDER.0)
        .sub("<model>", BUILDER.1)
        .sub("<id>", "ev-a")
        .exit(1);
    assert!(refused.stderr.contains("does not verify"), "{refused}");
    checkpoint(&mut f, "A", BUILDER);
    let route = f
        .step("git hpp checker route --maker <your provider>")
        .sub("<your provider>", "codex")
        .exit(0);
    assert!(route.stdout.contains("claude"), "{route}");
    start_review(&mut f, "A");
    verdict(&mut f, "A", "VERIFIED", &[], 0);
    merge(&mut f, "A", BUILDER, 0);
    assert_eq!(state_of(&mut f, "A"), "MERGED");

    // B: defects found; the fix is released to the builder's lane, and only it builds again.
    claim(&mut f, "B", &[]);
    build(&mut f, "B", BUILDER);
    start_review(&mut f, "B");
    verdict(
        &mut f,
        "B",
        "NEEDS-FIX",
        &["--reason", "empty input panics"],
        0,
    );
    f.step("git hpp board release-fix ITEM --target-lane <lane> --lane <you> --model <model>")
        .sub("ITEM", "B")
        .sub("<lane>", BUILDER.0)
        .sub("<you>", COORDINATOR.0)
        .sub("<model>", COORDINATOR.1)
        .exit(0);
    f.step(BUILDING)
        .sub("ITEM", "B")
        .sub("<lane>", RIVAL.0)
        .sub("<model>", RIVAL.1)
        .exit(1);
    build(&mut f, "B", BUILDER);
    assert_eq!(state_of(&mut f, "B"), "CHECKPOINT-READY");

    // C: no checker of another family; later it goes under review again.
    claim(&mut f, "C", &[]);
    build(&mut f, "C", BUILDER);
    start_review(&mut f, "C");
    f.step("git hpp board set ITEM DEFERRED --lane <you> --role reviewer --model <model> --checker-unavailable")
        .sub("ITEM", "C")
        .sub("<you>", CHECKER.0)
        .sub("<model>", CHECKER.1)
        .exit(0);
    // "later `set ITEM UNDER-REVIEW` again"
    sandbox
        .hpp([
            "board",
            "set",
            "C",
            "UNDER-REVIEW",
            "--lane",
            COORDINATOR.0,
            "--role",
            "coordinator",
            "--model",
            COORDINATOR.1,
        ])
        .ok();
    assert_eq!(state_of(&mut f, "C"), "UNDER-REVIEW");

    // R: red; verified, it merges only after a person approves.
    claim(&mut f, "R", &["--tag", "red"]);
    build(&mut f, "R", BUILDER);
    start_review(&mut f, "R");
    verdict(&mut f, "R", "VERIFIED", &[], 0);
    merge(&mut f, "R", BUILDER, 1);
    f.step("git hpp board approve ITEM --lane <person>")
        .sub("ITEM", "R")
        .sub("<person>", "alice")
        .exit(0);
    merge(&mut f, "R", BUILDER, 0);

    let board = f.step("git hpp board render").exit(0);
    for item in ["A", "B", "C", "R"] {
        assert!(board.stdout.contains(item), "{board}");
    }
    f.done();
}

const COMPETE: &str =
    "git hpp board compete --task <task> --items A,B[,C...] --lane <you> --model <model>";
const SELECT: &str = r#"git hpp board select --task <task> --winner <item> --lane <checker> --model <model> --reason "<why>""#;

fn select(f: &mut Follow<'_>, winner: &str, (lane, model): (&str, &str), code: i32) -> Ran {
    f.step(SELECT)
        .sub("<task>", "parser")
        .sub("<item>", winner)
        .sub("<checker>", lane)
        .sub("<model>", model)
        .sub("<why>", "the smaller diff, the same evidence")
        .exit(code)
}

#[test]
fn the_best_of_n_skill_competes_withdraws_selects_and_merges_the_winner() {
    let sandbox = board_repo();
    let mut f = Follow::new(&sandbox, BestOfN);
    let third = ("lane-d", "gpt-5-mini");
    for (lane, model) in [BUILDER, RIVAL, third] {
        f.step("git hpp board claim <task>-<lane> --lane <lane> --model <model>")
            .sub("<task>", "parser")
            .sub("<lane>", lane)
            .sub("<model>", model)
            .exit(0);
    }
    let (a, b, d) = ("parser-lane-a", "parser-lane-b", "parser-lane-d");
    f.step(COMPETE)
        .sub("<task>", "parser")
        .sub("A,B[,C...]", &format!("{a},{b},{d}"))
        .sub("<you>", COORDINATOR.0)
        .sub("<model>", COORDINATOR.1)
        .exit(0);
    build(&mut f, a, BUILDER);
    build(&mut f, b, RIVAL);
    f.step(BUILDING)
        .sub("ITEM", d)
        .sub("<lane>", third.0)
        .sub("<model>", third.1)
        .exit(0);
    // Refused while a candidate is BUILDING, and for a lane that built a candidate.
    let building = select(&mut f, b, CHECKER, 1);
    assert!(
        building
            .stderr
            .contains(&format!("candidate {d} is BUILDING")),
        "{building}"
    );
    select(&mut f, b, BUILDER, 1);
    // The stuck attempt stops for good.
    f.step(r#"git hpp board withdraw --task <task> --item <item> --lane <you> --model <model> --reason "<why>""#)
        .sub("<task>", "parser")
        .sub("<item>", d)
        .sub("<you>", COORDINATOR.0)
        .sub("<model>", COORDINATOR.1)
        .sub("<why>", "out of scope")
        .exit(0);
    // No checker of another family yet: DEFERRED, no winner; then one is found.
    f.step("git hpp board select --task <task> --checker-unavailable --lane <you> --model <model>")
        .sub("<task>", "parser")
        .sub("<you>", COORDINATOR.0)
        .sub("<model>", COORDINATOR.1)
        .exit(0);
    let route = f
        .step("git hpp checker route --maker <provider>")
        .sub("<provider>", "codex")
        .exit(0);
    assert!(route.stdout.contains("claude"), "{route}");
    select(&mut f, b, CHECKER, 0);
    // The winner is reviewed and merged as any item; the loser never moves again.
    start_review(&mut f, b);
    verdict(&mut f, b, "VERIFIED", &[], 0);
    merge(&mut f, b, RIVAL, 0);
    assert_eq!(state_of(&mut f, a), "NOT-SELECTED");
    f.step(BUILDING)
        .sub("ITEM", a)
        .sub("<lane>", BUILDER.0)
        .sub("<model>", BUILDER.1)
        .exit(1);
    let events = f
        .step("git hpp board status <task>")
        .sub("<task>", "parser")
        .exit(0);
    assert!(events.stdout.contains(b), "{events}");
    let board = f.step("git hpp board render").exit(0);
    assert!(board.stdout.contains("## COMPETITIONS"), "{board}");
    f.done();
}

const LANE_START: &str =
    "git hpp lane start <id> --territory <path>... --role maker --model <your model>";

fn start_lane(f: &mut Follow<'_>, id: &str, path: &str, extra: &[&str], code: i32) -> Ran {
    f.step(LANE_START)
        .sub("<id>", id)
        .sub("<path>...", path)
        .sub("<your model>", "gpt-5")
        .plus(extra)
        .exit(code)
}

/// A PreToolUse payload for an edit of `file`, from a session in `cwd`.
fn edit(file: &Path, cwd: &Path) -> Value {
    json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Edit",
           "tool_input": {"file_path": file, "old_string": "a", "new_string": "b"}, "cwd": cwd})
}

#[test]
fn the_lanes_skill_starts_guards_reviews_and_closes_a_lane() {
    let sandbox = crate_repo();
    let mut f = Follow::new(&sandbox, Lanes);
    let nobody = f.step("git hpp lane list").exit(0);
    assert!(!nobody.stdout.contains("parser"), "{nobody}");
    let started = start_lane(&mut f, "parser", "src", &[], 0);
    let dir = sandbox.path("work.lanes/parser");
    assert!(
        started.stdout.contains(dir.to_str().expect("UTF-8")),
        "the worktree to cd into is printed:\n{started}"
    );
    let collides = start_lane(&mut f, "api", "src/api", &[], 2);
    assert!(
        collides.stderr.contains("would collide with") && collides.stderr.contains("parser"),
        "{collides}"
    );
    // Shared lanes never block each other.
    start_lane(&mut f, "docs-1", "docs", &["--shared"], 0);
    start_lane(&mut f, "docs-2", "docs", &["--shared"], 0);
    let list = f.step("git hpp lane list").exit(0);
    assert!(
        list.stdout.contains("parser") && list.stdout.contains("docs-2"),
        "{list}"
    );
    f.step("git hpp lane heartbeat").cwd(&dir).exit(0);

    // The lane-kit hooks, fed what the host sends.
    let session = f
        .step("git hpp lane heartbeat --hook <host>")
        .sub("<host>", "claude-code")
        .stdin(
            &json!({"session_id": "s1", "hook_event_name": "SessionStart",
                       "source": "startup", "cwd": dir}),
        )
        .cwd(&dir)
        .exit(0);
    assert!(
        session.stdout.contains("You work in lane parser"),
        "{session}"
    );
    let inside = f
        .step("git hpp lane guard --host <host>")
        .sub("<host>", "claude-code")
        .stdin(&edit(&dir.join("src/lib.rs"), &dir))
        .cwd(&dir)
        .exit(0);
    assert_eq!(inside.stdout, "", "an edit inside the territory passes");
    let outside = f
        .step("git hpp lane guard --host <host>")
        .sub("<host>", "claude-code")
        .stdin(&edit(&dir.join("SPEC.md"), &dir))
        .cwd(&dir)
        .exit(0);
    assert!(outside.stdout.contains("\"deny\""), "{outside}");
    let codex = f
        .step("git hpp lane guard --host <host>")
        .sub("<host>", "codex")
        .stdin(
            &json!({"tool_name": "apply_patch", "cwd": dir, "tool_input": {"command":
            "*** Begin Patch\n*** Add File: SPEC2.md\n+x\n*** End Patch\n"}}),
        )
        .cwd(&dir)
        .exit(2);
    assert!(codex.stderr.contains("outside lane parser"), "{codex}");

    // The maker's change; a checker reviews it read-only.
    std::fs::write(
        dir.join("src/lib.rs"),
        LIB_RS.replace("Counts the bytes", "Counts the bytes (UTF-8)"),
    )
    .expect("writable");
    f.step("git hpp lane review-guard -- <command...>")
        .sub("<command...>", "git diff --stat")
        .cwd(&dir)
        .exit(0);
    f.step("git hpp lane review-guard -- cargo test")
        .cwd(&dir)
        .exit(0);
    let void = f
        .step("git hpp lane review-guard -- <command...>")
        .sub("<command...>", "sh -c 'echo notes > review-notes.txt'")
        .cwd(&dir)
        .exit(2);
    assert!(
        void.stdout.contains("void") || void.stderr.contains("void"),
        "{void}"
    );
    std::fs::remove_file(dir.join("review-notes.txt")).expect("removable");

    // Close: refused while the work is unsaved; then committed, merged, closed.
    let unsaved = f
        .step("git hpp lane close <id>")
        .sub("<id>", "parser")
        .exit(2);
    assert!(
        unsaved.stderr.contains("holds unsaved work") && unsaved.stderr.contains("src/lib.rs"),
        "{unsaved}"
    );
    sandbox.git_in(&dir, &["commit", "-q", "-am", "document parse"]);
    sandbox.git(["merge", "-q", "--ff-only", "hpp/lane/parser"]);
    f.step("git hpp lane close <id>")
        .sub("<id>", "parser")
        .exit(0);
    assert!(!dir.exists(), "the worktree is removed");
    for id in ["docs-1", "docs-2"] {
        f.step("git hpp lane close <id>").sub("<id>", id).exit(0);
    }
    f.done();
}

// ---------------------------------------------------------------------------------------------
// continuity-kit and gotcha-memory
// ---------------------------------------------------------------------------------------------

#[test]
fn the_handoff_skill_writes_and_shows_handoffs_and_its_hooks_answer_the_host() {
    let sandbox = spec_repo();
    let mut f = Follow::new(&sandbox, Handoff);
    // Nothing to resume yet: "not yet", exit 1.
    let none = f.step("git hpp handoff show").exit(1);
    assert!(none.stdout.contains("no handoff recorded"), "{none}");
    f.step(r#"git hpp handoff write --summary "Parser done; CLI half wired (flags parsed, not yet dispatched)." --next "wire handoff show into the dispatcher" --verify-first "cargo test --test it handoff::""#)
        .exit(0);
    let shown = f.step("git hpp handoff show").exit(0);
    assert!(
        shown.stdout.contains("Parser done")
            && shown.stdout.contains("cargo test --test it handoff::"),
        "{shown}"
    );
    // Text shaped like a secret is refused: handoffs are pushed.
    f.step("git hpp handoff write --summary ... --next ... --verify-first ...")
        .sub(
            "--summary ...",
            "--summary 'token ghp_0123456789abcdefghijABCDEFGHIJ'",
        )
        .sub("--next ...", "--next 'push it'")
        .sub("--verify-first ...", "--verify-first 'git status'")
        .exit(2);
    f.step("git hpp handoff write --summary ... --next ... --verify-first ...")
        .sub("--summary ...", "--summary 'CLI wired'")
        .sub("--next ...", "--next 'document the flags'")
        .sub("--verify-first ...", "--verify-first 'git hpp status'")
        .exit(0);
    f.step("git hpp handoff write ...")
        .sub("...", "--summary 'stopping for today' --trigger stop")
        .exit(0);
    sandbox
        .child("README")
        .write_str("hello\nmoved\n")
        .expect("writable");
    sandbox.git(["commit", "-q", "-am", "moved"]);
    let moved = sandbox.hpp(["handoff", "show", "--json"]).json(0);
    assert_eq!(moved["head_moved"], true, "{moved}");

    // The hooks: a measured handoff at Stop and PreCompact, the latest injected at SessionStart.
    sandbox
        .child("wip.txt")
        .write_str("half\n")
        .expect("writable");
    let handoffs = || sandbox.git(["rev-list", "--count", "refs/hpp/handoffs/solo"]);
    assert_eq!(handoffs(), "3");
    let hook = "git hpp handoff hook --host <host> --event Stop|PreCompact";
    f.step(hook)
        .sub("<host>", "claude-code")
        .sub("Stop|PreCompact", "Stop")
        .stdin(&json!({"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": false}))
        .exit(0);
    assert_eq!(handoffs(), "4");
    sandbox.git(["add", "wip.txt"]);
    f.step(hook)
        .sub("<host>", "claude-code")
        .sub("Stop|PreCompact", "PreCompact")
        .stdin(&json!({"session_id": "s1", "hook_event_name": "PreCompact", "trigger": "auto"}))
        .exit(0);
    assert_eq!(handoffs(), "5");
    let injected = f
        .step("git hpp handoff hook --host <host> --event SessionStart")
        .sub("<host>", "claude-code")
        .stdin(&json!({"session_id": "s2", "hook_event_name": "SessionStart", "source": "startup"}))
        .exit(0);
    let injected: Value = serde_json::from_str(&injected.stdout).expect("the hook answers JSON");
    let context = injected["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context text");
    assert!(
        context.contains("precompact") && context.contains("degraded-auto"),
        "the latest handoff, the hook's own: {context}"
    );
    f.done();
}

#[test]
fn the_gotchas_skill_records_a_recurring_failure_and_its_hooks_answer_the_host() {
    let sandbox = spec_repo();
    let mut f = Follow::new(&sandbox, Gotchas);
    const PREAMBLE: &str = r#"git hpp gotcha preamble --task "<task key>""#;
    let nothing = f.step(PREAMBLE).sub("<task key>", "deploy staging").exit(0);
    assert!(!nothing.stdout.contains("deploy staging"), "{nothing}");
    for _ in 0..3 {
        f.step(r#"git hpp gotcha record --task "<task key>" --message "<error text>""#)
            .sub("<task key>", "deploy staging")
            .sub("<error text>", "connection refused: staging:5432")
            .exit(0);
    }
    let gotcha = f.step(PREAMBLE).sub("<task key>", "deploy staging").exit(0);
    assert!(gotcha.stdout.contains("deploy staging"), "{gotcha}");
    let ranked = f.step("git hpp gotcha list").exit(0);
    assert!(ranked.stdout.contains("deploy staging"), "{ranked}");

    // The README's Codex path: the same commands with KEY and TEXT.
    for _ in 0..3 {
        f.step("git hpp gotcha record --task KEY --message TEXT")
            .sub("KEY", "'Bash:cargo build'")
            .sub("TEXT", "'error: failed to download crate serde'")
            .exit(0);
    }
    let by_key = f
        .step("git hpp gotcha preamble --task KEY")
        .sub("KEY", "'Bash:cargo build'")
        .exit(0);
    assert!(by_key.stdout.contains("Bash:cargo build"), "{by_key}");
    let top = f.step("git hpp gotcha preamble").exit(0);
    assert!(
        top.stdout.contains("deploy staging") && top.stdout.contains("Bash:cargo build"),
        "{top}"
    );

    // The hooks: a failed tool call is recorded; the preamble is injected at SessionStart.
    let hook = "git hpp gotcha hook --host <host> --event <event>";
    f.step(hook)
        .sub("<host>", "claude-code")
        .sub("<event>", "PostToolUseFailure")
        .stdin(
            &json!({"session_id": "s1", "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash", "tool_use_id": "toolu_1",
            "tool_input": {"command": "npm test"}, "error": "npm ERR! missing script: test"}),
        )
        .exit(0);
    assert_eq!(
        sandbox.git(["rev-list", "--count", "refs/hpp/gotchas/failures"]),
        "7"
    );
    let injected = f
        .step(hook)
        .sub("<host>", "claude-code")
        .sub("<event>", "SessionStart")
        .stdin(&json!({"session_id": "s2", "hook_event_name": "SessionStart", "source": "startup"}))
        .exit(0);
    assert!(
        injected.stdout.contains("additionalContext") && injected.stdout.contains("deploy staging"),
        "{injected}"
    );
    f.done();
}

// ---------------------------------------------------------------------------------------------
// The operator-kit README and the module installs
// ---------------------------------------------------------------------------------------------

#[test]
fn the_operator_kit_readme_commands_answer_as_it_says() {
    let sandbox = spec_repo();
    let mut f = Follow::new(&sandbox, Operator);
    let pre_tool_use = |command: &str| {
        json!({"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}, "tool_use_id": "toolu_1", "cwd": "."})
    };
    let denied = f
        .step("git hpp policy hook --host <host>")
        .sub("<host>", "claude-code")
        .stdin(&pre_tool_use("rm -rf src"))
        .exit(0);
    assert!(denied.stdout.contains("\"deny\""), "{denied}");
    let allowed = f
        .step("git hpp policy hook --host <host>")
        .sub("<host>", "claude-code")
        .stdin(&pre_tool_use("cargo test"))
        .exit(0);
    assert_eq!(allowed.stdout, "", "ALLOW answers nothing");
    let status = f.step("git hpp status --json").exit(0);
    let status: Value = serde_json::from_str(&status.stdout).expect("status prints JSON");
    assert_eq!(status["state"], "planned", "{status}");
    f.step("git hpp policy check --mode enforce --command ...")
        .sub("...", "'cargo test'")
        .exit(0);
    f.step("git hpp policy check --mode enforce --command ...")
        .sub("...", "'rm -rf src'")
        .exit(2);
    f.done();
}

#[test]
fn each_module_readme_install_copies_its_skills_for_the_host() {
    let sandbox = Sandbox::repo();
    let mut f = Follow::new(&sandbox, Install);
    for (host, module, dir) in [
        ("claude-code", "continuity-kit", ".claude"),
        ("claude-code", "gotcha-memory", ".claude"),
        ("claude-code", "health-kit", ".claude"),
        ("claude-code", "lane-kit", ".claude"),
        ("claude-code", "operator-kit", ".claude"),
        ("codex", "lane-kit", ".agents"),
        ("codex", "operator-kit", ".agents"),
    ] {
        let text = TAUGHT
            .iter()
            .map(|(t, _)| *t)
            .find(|t| *t == format!("git hpp install --host {host} --module {module} --apply"))
            .expect("a row for each README's install");
        f.step(text).exit(0);
        let copied = sandbox
            .root
            .join(dir)
            .join("hpp")
            .join(module)
            .join("README.md");
        assert_eq!(
            std::fs::read_to_string(&copied).unwrap_or_default(),
            std::fs::read_to_string(format!("{MODULES}/{module}/README.md")).expect("readable"),
            "{host}: {}",
            copied.display()
        );
    }
    let skill = sandbox.root.join(".claude/skills/hpp-loop/SKILL.md");
    assert_eq!(
        std::fs::read_to_string(&skill).unwrap_or_default(),
        std::fs::read_to_string(format!("{MODULES}/operator-kit/skills/hpp-loop/SKILL.md"))
            .expect("readable")
    );
    f.done();
}
