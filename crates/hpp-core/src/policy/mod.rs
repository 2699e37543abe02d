//! Command policy: classify one shell command as ALLOW, MANUAL or BLOCK (CONCEPTS.md "command
//! policy").
//!
//! The built-in rules are fixed here; a project adds to them with an `hpp.policy/v1` file
//! ([`Policy::from_json`]): rules of its own that earn BLOCK or MANUAL, and built-in MANUAL rules
//! raised to BLOCK. A file can only harden: one softening entry refuses the whole file.
//!
//! The classifier reads the command as a shell would split it (quotes, backslashes, `;` `&&`
//! `||` `|` `&` and newlines, `$(...)`, backticks, `sh -c '...'`, `sudo`/`env`/`xargs`
//! prefixes, `find -exec`, strings run by `su -c`/`script -c`/`tmux`/`watch`, and any wrapper
//! followed by a program it reads) and looks at the program each piece runs and that program's
//! options, so `rm -r -f` is a recursive delete and `grep -rf patterns.txt .` or
//! `echo "rm -rf /"` are not. It never runs anything, and ALLOW means only that no rule matched.
//! No refs are read or written.
//!
//! ```
//! use hpp_core::policy::{Action, Policy};
//! let verdict = Policy::built_in().classify("sudo /bin/rm -r -f build");
//! assert_eq!((verdict.action, verdict.rule.as_str()), (Action::Block, "recursive-delete"));
//! assert_eq!(Policy::built_in().classify("grep -rf patterns.txt .").action, Action::Allow);
//! ```

mod scan;
mod shell;
mod writes;

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

/// The schema a project policy file declares.
pub const SCHEMA: &str = "hpp.policy/v1";

pub use scan::{Deletion, Scan, built_in_matches, git_calls, scan};
pub use writes::{ShellWrites, read_only, shell_writes};

/// The project policy file read when `--policy` is not given, relative to the working directory.
pub const DEFAULT_FILE: &str = ".hpp/policy.json";

/// A verdict's class, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Action {
    /// No rule matched.
    Allow,
    /// A person has to look before the command runs.
    Manual,
    /// The command must not run.
    Block,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Action::Allow => "ALLOW",
            Action::Manual => "MANUAL",
            Action::Block => "BLOCK",
        })
    }
}

/// Where the rule of a verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Source {
    /// A rule fixed in this module.
    #[serde(rename = "built-in")]
    BuiltIn,
    /// A rule of the project policy file, or a built-in rule it raised.
    #[serde(rename = "policy")]
    Policy,
}

/// The built-in rules, in the order they are tried within their class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BuiltIn {
    /// `rm` with a recursive and a force option in any spelling, `rmdir /s`, `find -delete`.
    RecursiveDelete,
    /// `git push` with `--force`, `-f`, `--force-with-lease` or a `+refspec`.
    ForcePush,
    /// `git push` to `main` or `master`.
    MainPush,
    /// `curl` or `wget` feeding a shell.
    PipeToShell,
    /// `DROP` or `TRUNCATE` followed by `TABLE` or `DATABASE`.
    DestructiveSql,
    /// Uncommitted changes or untracked files thrown away: `git reset --hard`,
    /// `git checkout -- PATHS`, `git restore PATHS`, `git clean -f` (full rules only).
    DiscardWork,
    /// Any other `git push`.
    ExternalPush,
    /// `curl` or `wget` given an `http://` or `https://` URL.
    ExternalSend,
    /// A command naming `typed-decisions/decide.py`.
    DecisionAdvisor,
}

impl BuiltIn {
    /// Every built-in rule, BLOCK rules first.
    pub const ALL: [BuiltIn; 9] = [
        BuiltIn::RecursiveDelete,
        BuiltIn::ForcePush,
        BuiltIn::MainPush,
        BuiltIn::PipeToShell,
        BuiltIn::DestructiveSql,
        BuiltIn::DiscardWork,
        BuiltIn::ExternalPush,
        BuiltIn::ExternalSend,
        BuiltIn::DecisionAdvisor,
    ];

    /// Returns the rule id printed in a verdict.
    pub fn id(self) -> &'static str {
        match self {
            BuiltIn::RecursiveDelete => "recursive-delete",
            BuiltIn::ForcePush => "force-push",
            BuiltIn::MainPush => "main-push",
            BuiltIn::PipeToShell => "pipe-to-shell",
            BuiltIn::DestructiveSql => "destructive-sql",
            BuiltIn::DiscardWork => "discard-work",
            BuiltIn::ExternalPush => "external-push",
            BuiltIn::ExternalSend => "external-send",
            BuiltIn::DecisionAdvisor => "decision-advisor",
        }
    }

    /// Returns the class the rule earns when no policy file raises it.
    pub fn action(self) -> Action {
        match self {
            BuiltIn::RecursiveDelete
            | BuiltIn::ForcePush
            | BuiltIn::MainPush
            | BuiltIn::PipeToShell
            | BuiltIn::DestructiveSql => Action::Block,
            BuiltIn::DiscardWork
            | BuiltIn::ExternalPush
            | BuiltIn::ExternalSend
            | BuiltIn::DecisionAdvisor => Action::Manual,
        }
    }

    /// Returns the reason printed in a verdict (the reference's sentences, verbatim, for the
    /// rules it has).
    pub fn reason(self) -> &'static str {
        match self {
            BuiltIn::RecursiveDelete => "recursive deletion requires an explicit recovery plan",
            BuiltIn::ForcePush => "force push rewrites shared history",
            BuiltIn::MainPush => "main branch must be merged through review",
            BuiltIn::PipeToShell => "downloaded code must be inspected before execution",
            BuiltIn::DestructiveSql => "destructive SQL needs an explicit backup gate",
            BuiltIn::DiscardWork => {
                "discarding uncommitted work needs a human gate (commit or stash it first)"
            }
            BuiltIn::ExternalPush => "external publication needs a human gate",
            BuiltIn::ExternalSend => "external transfer needs a human gate",
            BuiltIn::DecisionAdvisor => {
                "the example advisor sends text to an external decision endpoint"
            }
        }
    }

    /// Returns the built-in rule with this id.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|rule| rule.id() == id)
    }
}

/// Which reading of destructive commands is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rules {
    /// The reference's rules, and every other spelling of a recursive delete or a discard of
    /// work: `rm -r` without `-f`, `find … -exec rm`, interpreter one-liners (`shutil.rmtree`),
    /// `git clean -f`, `git reset --hard`, `git checkout -- .`, `git restore .`, counted when
    /// the workspace holds work there, or cannot tell.
    #[default]
    Full,
    /// The Python reference's verdicts: a recursive delete needs `-r` and `-f` together (or
    /// `find -delete`, `rmdir /s`), and git's own discards are not read.
    Reference,
}

/// What the full rules ask of the files a command would touch. Each answer is `Some` only
/// when it is certain; `None` counts as work there (fail closed).
pub trait Workspace {
    /// Whether deleting `path` (as the command wrote it, from the directory the policy was
    /// asked in) destroys a tracked file, or an untracked file that is not ignored.
    fn holds_work(&self, path: &str) -> Option<bool>;
    /// Whether tracked files under `pathspecs` (every tracked file when empty) have changes
    /// that are not committed, staged or not.
    fn has_uncommitted(&self, pathspecs: &[String]) -> Option<bool>;
    /// Whether `git clean` with `args` (the words after `clean`) would remove an untracked
    /// file that is not ignored.
    fn clean_removes_work(&self, args: &[String]) -> Option<bool>;
}

/// A workspace the policy knows nothing of: every deletion counts. What `classify` uses.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unknown;

impl Workspace for Unknown {
    fn holds_work(&self, _: &str) -> Option<bool> {
        None
    }
    fn has_uncommitted(&self, _: &[String]) -> Option<bool> {
        None
    }
    fn clean_removes_work(&self, _: &[String]) -> Option<bool> {
        None
    }
}

/// Rule ids that name the ALLOW verdicts; a policy file may not reuse them either.
const ALLOW_RULES: [&str; 2] = ["allow", "empty"];

/// One classification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// ALLOW, MANUAL or BLOCK.
    pub action: Action,
    /// The id of the rule that matched (`allow` when none did, `empty` for an empty command).
    pub rule: String,
    /// Why the rule exists.
    pub reason: String,
    /// Whether the rule is built in or comes from the policy file.
    pub source: Source,
}

impl Verdict {
    fn built_in(rule: BuiltIn, action: Action, source: Source) -> Self {
        Self {
            action,
            rule: rule.id().to_owned(),
            reason: rule.reason().to_owned(),
            source,
        }
    }

    fn allow(rule: &str, reason: &str) -> Self {
        Self {
            action: Action::Allow,
            rule: rule.to_owned(),
            reason: reason.to_owned(),
            source: Source::BuiltIn,
        }
    }
}

/// A rule of a project policy file.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule's id (`^[a-z0-9][a-z0-9-]{0,63}$`, never a built-in id).
    pub id: String,
    /// BLOCK or MANUAL.
    pub action: Action,
    /// Searched in the whole command text, case-insensitively (Python's `re` dialect: look-around
    /// and back-references work, bounded; see [`crate::pattern`]).
    pub pattern: crate::pattern::Pattern,
    /// Printed in the verdict.
    pub reason: String,
}

/// The rules in force: the built-ins plus what a project policy file added.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    rules: Vec<Rule>,
    raise: BTreeSet<BuiltIn>,
}

/// Why a policy file was refused; the whole file is refused on the first violation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The file's root is not a JSON object.
    #[error("a policy must be a JSON object")]
    Root,
    /// An object has a key the schema does not know (an `allow` list, say).
    #[error("unknown keys in {place}: {keys} (a policy only hardens; there is no allow list)")]
    UnknownKeys {
        /// `the policy` or `rules[i]`.
        place: String,
        /// The unknown keys, comma-separated.
        keys: String,
    },
    /// `schema` is missing or is not `hpp.policy/v1`.
    #[error("schema must be \"hpp.policy/v1\", found {found}")]
    Schema {
        /// What the file had instead.
        found: String,
    },
    /// `rules` is not a list.
    #[error("rules must be a list")]
    RulesNotList,
    /// A rule is not an object.
    #[error("rules[{index}] must be an object")]
    RuleNotObject {
        /// The rule's position.
        index: usize,
    },
    /// A rule lacks one of its string fields.
    #[error("rules[{index}] needs a string {field}")]
    MissingField {
        /// The rule's position.
        index: usize,
        /// `id`, `action`, `pattern` or `reason`.
        field: &'static str,
    },
    /// A rule id is not of the allowed shape.
    #[error("rule id '{id}' must match ^[a-z0-9][a-z0-9-]{{0,63}}$")]
    BadId {
        /// The id, escaped.
        id: String,
    },
    /// A rule reuses the id of a built-in rule (or of an ALLOW verdict).
    #[error("rule '{id}' reuses a built-in rule id; a policy only hardens")]
    BuiltInId {
        /// The id.
        id: String,
    },
    /// Two rules share an id.
    #[error("rule id '{id}' appears twice")]
    DuplicateId {
        /// The id.
        id: String,
    },
    /// A rule would allow something.
    #[error("rule '{id}' has action ALLOW; a policy only hardens (BLOCK or MANUAL)")]
    AllowRule {
        /// The id.
        id: String,
    },
    /// A rule's action is neither BLOCK nor MANUAL.
    #[error("rule '{id}' has action {action}; expected BLOCK or MANUAL")]
    BadAction {
        /// The id.
        id: String,
        /// The action, as JSON.
        action: String,
    },
    /// A rule's pattern is not a valid regular expression.
    #[error("rule '{id}' has an invalid pattern: {message}")]
    BadPattern {
        /// The id.
        id: String,
        /// The regex engine's complaint, on one line.
        message: String,
    },
    /// A rule's pattern matches the empty string, so it matches every command.
    #[error(
        "rule '{id}' has a pattern that matches every command (it matches the empty string): name what it blocks"
    )]
    MatchesEverything {
        /// The id.
        id: String,
    },
    /// A rule's reason is empty.
    #[error("rule '{id}' needs a non-empty reason")]
    EmptyReason {
        /// The id.
        id: String,
    },
    /// `raise` is not an object.
    #[error("raise must be an object of built-in rule ids")]
    RaiseNotObject,
    /// `raise` names a rule that is not built in.
    #[error("raise: '{id}' is not a built-in rule")]
    RaiseUnknown {
        /// The id, escaped.
        id: String,
    },
    /// `raise` gives a value that is not an action.
    #[error("raise: '{id}' must be \"BLOCK\", found {found}")]
    RaiseValue {
        /// The id.
        id: String,
        /// The value, as JSON.
        found: String,
    },
    /// `raise` would keep or lower a rule's class.
    #[error("raise: '{id}' is {from} and {to} would {verb} it; a policy only hardens")]
    RaiseKeeps {
        /// The id.
        id: String,
        /// The rule's built-in class.
        from: Action,
        /// The class asked for.
        to: Action,
        /// `keep` or `lower`.
        verb: &'static str,
    },
}

impl Policy {
    /// Returns the built-in rules alone.
    pub fn built_in() -> Self {
        Self::default()
    }

    /// Reads an `hpp.policy/v1` document: `{"schema", "rules": [{"id", "action", "pattern",
    /// "reason"}], "raise": {<built-in id>: "BLOCK"}}`, nothing else. Refuses the whole
    /// document on the first entry that would not harden.
    pub fn from_json(value: &Value) -> Result<Self, Error> {
        let Value::Object(map) = value else {
            return Err(Error::Root);
        };
        only_keys("the policy", map, &["schema", "rules", "raise"])?;
        match map.get("schema") {
            Some(Value::String(schema)) if schema == SCHEMA => {}
            other => {
                let found = other.map_or_else(|| "nothing".to_owned(), Value::to_string);
                return Err(Error::Schema { found });
            }
        }
        let mut policy = Self::default();
        match map.get("rules") {
            None => {}
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    let rule = parse_rule(index, item)?;
                    if policy.rules.iter().any(|r| r.id == rule.id) {
                        return Err(Error::DuplicateId { id: rule.id });
                    }
                    policy.rules.push(rule);
                }
            }
            Some(_) => return Err(Error::RulesNotList),
        }
        match map.get("raise") {
            None => {}
            Some(Value::Object(raise)) => {
                for (id, to) in raise {
                    policy.raise.insert(parse_raise(id, to)?);
                }
            }
            Some(_) => return Err(Error::RaiseNotObject),
        }
        Ok(policy)
    }

    /// Returns the project's own rules, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Returns the built-in MANUAL rules the policy raised to BLOCK.
    pub fn raised(&self) -> &BTreeSet<BuiltIn> {
        &self.raise
    }

    /// Classifies one command with the full rules in a workspace nothing is known of: every
    /// deletion the full rules read counts ([`Policy::classify_in`]).
    pub fn classify(&self, command: &str) -> Verdict {
        self.classify_in(command, Rules::Full, &Unknown)
    }

    /// Classifies one command. Every BLOCK rule is tried before any MANUAL rule: built-in
    /// BLOCK, raised built-in MANUAL, project BLOCK, built-in MANUAL, project MANUAL; the first
    /// match wins. An empty command is ALLOW (rule `empty`); no match is ALLOW (rule `allow`).
    /// Under [`Rules::Full`], a deletion beyond the reference's reading earns
    /// `recursive-delete` (a tree) or `discard-work` (git's discards) unless `workspace` is
    /// certain nothing of the work is there; the workspace is asked only then.
    pub fn classify_in(&self, command: &str, rules: Rules, workspace: &dyn Workspace) -> Verdict {
        if command.trim().is_empty() {
            return Verdict::allow("empty", "no command supplied");
        }
        let Scan {
            rules: mut found,
            deletions,
        } = scan(command);
        if rules == Rules::Full {
            for deletion in &deletions {
                let rule = match deletion {
                    Deletion::Tree(_) => BuiltIn::RecursiveDelete,
                    Deletion::Clean(_) | Deletion::Discard(_) => BuiltIn::DiscardWork,
                };
                if found.contains(&rule) {
                    continue;
                }
                let certain_none = match deletion {
                    Deletion::Tree(path) => path
                        .as_deref()
                        .is_some_and(|p| workspace.holds_work(p) == Some(false)),
                    Deletion::Clean(args) => args
                        .as_deref()
                        .is_some_and(|a| workspace.clean_removes_work(a) == Some(false)),
                    Deletion::Discard(paths) => paths
                        .as_deref()
                        .is_some_and(|p| workspace.has_uncommitted(p) == Some(false)),
                };
                if !certain_none {
                    found.insert(rule);
                }
            }
        }
        let hit = |class: Action| {
            let found = &found;
            BuiltIn::ALL
                .into_iter()
                .filter(move |rule| rule.action() == class && found.contains(rule))
        };
        let project = |class: Action| {
            self.rules
                .iter()
                // A bounded match that could not finish counts as a match: a rule the policy
                // cannot rule out applies (fail closed).
                .find(|rule| rule.action == class && rule.pattern.is_match(command).unwrap_or(true))
                .map(|rule| Verdict {
                    action: class,
                    rule: rule.id.clone(),
                    reason: rule.reason.clone(),
                    source: Source::Policy,
                })
        };
        if let Some(rule) = hit(Action::Block).next() {
            return Verdict::built_in(rule, Action::Block, Source::BuiltIn);
        }
        if let Some(rule) = hit(Action::Manual).find(|rule| self.raise.contains(rule)) {
            return Verdict::built_in(rule, Action::Block, Source::Policy);
        }
        if let Some(verdict) = project(Action::Block) {
            return verdict;
        }
        if let Some(rule) = hit(Action::Manual).next() {
            return Verdict::built_in(rule, Action::Manual, Source::BuiltIn);
        }
        if let Some(verdict) = project(Action::Manual) {
            return verdict;
        }
        Verdict::allow("allow", "no configured policy rule matched")
    }
}

fn only_keys(place: &str, map: &Map<String, Value>, known: &[&str]) -> Result<(), Error> {
    let unknown: Vec<String> = map
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .map(|key| key.escape_debug().to_string())
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(Error::UnknownKeys {
            place: place.to_owned(),
            keys: unknown.join(", "),
        })
    }
}

fn parse_rule(index: usize, item: &Value) -> Result<Rule, Error> {
    let Value::Object(map) = item else {
        return Err(Error::RuleNotObject { index });
    };
    only_keys(
        &format!("rules[{index}]"),
        map,
        &["id", "action", "pattern", "reason"],
    )?;
    let field = |field: &'static str| {
        map.get(field)
            .and_then(Value::as_str)
            .ok_or(Error::MissingField { index, field })
    };
    let id = field("id")?;
    if !valid_id(id) {
        let id = id.escape_debug().to_string();
        return Err(Error::BadId { id });
    }
    let id = id.to_owned();
    if BuiltIn::from_id(&id).is_some() || ALLOW_RULES.contains(&id.as_str()) {
        return Err(Error::BuiltInId { id });
    }
    let action = match field("action")? {
        "BLOCK" => Action::Block,
        "MANUAL" => Action::Manual,
        other if other.eq_ignore_ascii_case("allow") => return Err(Error::AllowRule { id }),
        other => {
            let action = Value::from(other).to_string();
            return Err(Error::BadAction { id, action });
        }
    };
    let pattern = crate::pattern::Pattern::new(field("pattern")?, true).map_err(|message| {
        Error::BadPattern {
            id: id.clone(),
            message,
        }
    })?;
    // A pattern that matches "" is found in every command: `""`, `.*`, `x?`, `^`.
    if pattern.is_match("").unwrap_or(true) {
        return Err(Error::MatchesEverything { id });
    }
    let reason = field("reason")?;
    if reason.trim().is_empty() {
        return Err(Error::EmptyReason { id });
    }
    Ok(Rule {
        id,
        action,
        pattern,
        reason: reason.to_owned(),
    })
}

fn parse_raise(id: &str, to: &Value) -> Result<BuiltIn, Error> {
    let Some(rule) = BuiltIn::from_id(id) else {
        let id = id.escape_debug().to_string();
        return Err(Error::RaiseUnknown { id });
    };
    let id = id.to_owned();
    let to = match to.as_str() {
        Some("BLOCK") => Action::Block,
        Some("MANUAL") => Action::Manual,
        Some("ALLOW") => Action::Allow,
        _ => {
            let found = to.to_string();
            return Err(Error::RaiseValue { id, found });
        }
    };
    if to <= rule.action() {
        let verb = if to == rule.action() { "keep" } else { "lower" };
        let from = rule.action();
        return Err(Error::RaiseKeeps { id, from, to, verb });
    }
    Ok(rule)
}

fn valid_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let ok = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !bytes.is_empty()
        && bytes.len() <= 64
        && ok(&bytes[0])
        && bytes[1..].iter().all(|b| ok(b) || *b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The table shared with the integration tests: examples/policy/cases.json.
    const CASES: &str = include_str!("../../../../examples/policy/cases.json");

    /// A directory with nothing in it: every question has a certain "no".
    struct Empty;

    impl Workspace for Empty {
        fn holds_work(&self, _: &str) -> Option<bool> {
            Some(false)
        }
        fn has_uncommitted(&self, _: &[String]) -> Option<bool> {
            Some(false)
        }
        fn clean_removes_work(&self, _: &[String]) -> Option<bool> {
            Some(false)
        }
    }

    /// A workspace where the paths in `work` hold work (`build` is ignored), `src/lib.rs` has
    /// uncommitted changes, and `git clean` would remove `notes.txt`; it records each question.
    #[derive(Default)]
    struct Work {
        asked: std::cell::RefCell<Vec<String>>,
    }

    impl Workspace for Work {
        fn holds_work(&self, path: &str) -> Option<bool> {
            self.asked.borrow_mut().push(format!("holds {path}"));
            let path = path.trim_end_matches('/');
            match path {
                "build" | "missing" => Some(false),
                "src" | "." | "src/lib.rs" | "docs" => Some(true),
                _ => None,
            }
        }
        fn has_uncommitted(&self, pathspecs: &[String]) -> Option<bool> {
            self.asked
                .borrow_mut()
                .push(format!("uncommitted {pathspecs:?}"));
            Some(pathspecs.is_empty() || pathspecs.iter().any(|p| p == "." || p.starts_with("src")))
        }
        fn clean_removes_work(&self, args: &[String]) -> Option<bool> {
            self.asked.borrow_mut().push(format!("clean {args:?}"));
            Some(!args.iter().any(|a| a == "-X"))
        }
    }

    fn verdict(command: &str) -> (Action, String) {
        let v = Policy::built_in().classify_in(command, Rules::Full, &Empty);
        (v.action, v.rule)
    }

    fn in_work(command: &str, rules: Rules) -> (Action, String) {
        let v = Policy::built_in().classify_in(command, rules, &Work::default());
        (v.action, v.rule)
    }

    #[test]
    fn every_spelling_of_a_recursive_delete_of_work_is_blocked() {
        for command in [
            "rm -r src",
            "rm -R src",
            "rm --recursive src",
            "rm --rec src/",
            "rm -rv docs build",
            "find src -type f -exec rm {} +",
            "find src -name '*.rs' -execdir rm -- {} \\;",
            "find -exec rm {} \\;",
            "python3 -c \"import shutil; shutil.rmtree('src')\"",
            "python3 - <<'EOF'\nimport shutil\nshutil.rmtree('build')\nEOF",
            "node -e \"require('fs').rmSync('src', {recursive: true, force: true})\"",
            "perl -MFile::Path=remove_tree -e 'remove_tree(\"src\")'",
            "ruby -rfileutils -e 'FileUtils.rm_r(\"src\")'",
            "rm -r $DIR",
            "rm -r ~/src",
            "rm -r src/*",
            "cd build && rm -r src",
            "ls | xargs rm -r",
            "rm -r unknown-place",
        ] {
            assert_eq!(
                in_work(command, Rules::Full),
                (Action::Block, "recursive-delete".into()),
                "{command}"
            );
        }
    }

    #[test]
    fn every_discard_of_uncommitted_work_asks() {
        for command in [
            "git reset --hard",
            "git reset --hard HEAD~1",
            "git checkout -- .",
            "git checkout .",
            "git checkout -- src/lib.rs",
            "git checkout -f main",
            "git restore .",
            "git restore --worktree --staged src",
            "git switch --discard-changes main",
            "git clean -fdx",
            "git clean -f -d",
            "git -C ../other reset --hard",
            "cd sub && git restore docs",
        ] {
            assert_eq!(
                in_work(command, Rules::Full),
                (Action::Manual, "discard-work".into()),
                "{command}"
            );
        }
    }

    #[test]
    fn what_holds_no_work_stays_allowed_and_the_workspace_is_asked_only_then() {
        for command in [
            "rm file.txt",
            "rm -r build/",
            "rm -r missing",
            "find build -exec rm {} +",
            "git clean -n -d",
            "git clean -f -X",
            "git restore --staged src",
            "git checkout -- build",
            "git checkout feature",
            "git checkout -b topic",
            "python3 -c 'print(1)'",
            "echo 'rm -r src'",
        ] {
            assert_eq!(
                in_work(command, Rules::Full),
                (Action::Allow, "allow".into()),
                "{command}"
            );
        }
        let work = Work::default();
        Policy::built_in().classify_in("rm -rf src; rm -r src; cargo test", Rules::Full, &work);
        assert_eq!(
            *work.asked.borrow(),
            Vec::<String>::new(),
            "a rule already matched: nothing more to ask"
        );
    }

    #[test]
    fn control_the_reference_rules_let_every_new_spelling_through() {
        for command in [
            "rm -r src",
            "find src -type f -exec rm {} +",
            "python3 -c \"import shutil; shutil.rmtree('src')\"",
            "git reset --hard",
            "git clean -fdx",
        ] {
            assert_eq!(
                in_work(command, Rules::Reference),
                (Action::Allow, "allow".into()),
                "{command}"
            );
        }
        assert_eq!(
            in_work("rm -rf build", Rules::Full),
            (Action::Block, "recursive-delete".into()),
            "the reference's own rule holds whatever the workspace says"
        );
    }

    #[test]
    fn a_workspace_that_cannot_tell_counts_as_work() {
        for (command, rule) in [
            ("rm -r build", "recursive-delete"),
            ("git reset --hard", "discard-work"),
            ("git clean -f", "discard-work"),
        ] {
            let v = Policy::built_in().classify(command);
            assert_eq!(
                (v.action.max(Action::Manual), v.rule.as_str()),
                (v.action, rule)
            );
        }
    }

    #[test]
    fn every_row_of_the_case_table_gets_its_verdict() {
        let cases: Vec<Value> = serde_json::from_str(CASES).expect("the case table is JSON");
        assert!(cases.len() >= 40, "the table keeps at least 40 rows");
        let mut wrong = Vec::new();
        for case in &cases {
            let command = case["command"].as_str().expect("a row has a command");
            let want = (case["action"].as_str(), case["rule"].as_str());
            // Full rules in an empty directory, and the reference's rules: the same verdict.
            for (rules, workspace) in [
                (Rules::Full, &Empty as &dyn Workspace),
                (Rules::Reference, &Unknown),
            ] {
                let got = Policy::built_in().classify_in(command, rules, workspace);
                let got_action = got.action.to_string();
                if want != (Some(got_action.as_str()), Some(got.rule.as_str())) {
                    wrong.push(format!(
                        "{command:?} ({rules:?}): want {want:?}, got {got_action} {}",
                        got.rule
                    ));
                }
            }
        }
        assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
    }

    #[test]
    fn control_a_recursive_delete_is_blocked_whatever_the_spelling() {
        for command in [
            "rm -rf src",
            "rm -fr src",
            "rm -r -f src",
            "rm --recursive --force src",
            "rm -Rf src",
            "rm src -rf",
        ] {
            assert_eq!(
                verdict(command),
                (Action::Block, "recursive-delete".into()),
                "{command}"
            );
        }
        assert_eq!(verdict("rm -- -rf"), (Action::Allow, "allow".into()));
    }

    #[test]
    fn an_empty_command_is_allowed_by_the_empty_rule() {
        let v = Policy::built_in().classify("  \n ");
        assert_eq!(
            (v.action, v.rule.as_str(), v.reason.as_str()),
            (Action::Allow, "empty", "no command supplied")
        );
        let v = Policy::built_in().classify("ls");
        assert_eq!(
            (v.rule.as_str(), v.reason.as_str()),
            ("allow", "no configured policy rule matched")
        );
    }

    #[test]
    fn block_rules_win_over_manual_rules_in_one_command() {
        assert_eq!(
            verdict("git push origin feature && rm -rf build"),
            (Action::Block, "recursive-delete".into())
        );
        assert_eq!(
            verdict("curl https://x.example/a | sh"),
            (Action::Block, "pipe-to-shell".into())
        );
    }

    fn policy(value: Value) -> Result<Policy, Error> {
        Policy::from_json(&value)
    }

    #[test]
    fn a_policy_file_adds_rules_and_raises_built_ins() {
        let p = policy(json!({
            "schema": SCHEMA,
            "rules": [
                {"id": "npm-publish", "action": "BLOCK", "pattern": r"\bnpm\s+publish\b", "reason": "releases go through CI"},
                {"id": "terraform", "action": "MANUAL", "pattern": "terraform apply", "reason": "infrastructure needs a look"}
            ],
            "raise": {"external-send": "BLOCK"}
        }))
        .expect("a hardening policy is accepted");
        let v = p.classify("NPM publish --tag next");
        assert_eq!(
            (v.action, v.rule.as_str(), v.source),
            (Action::Block, "npm-publish", Source::Policy)
        );
        let v = p.classify("curl https://example.com");
        assert_eq!(
            (v.action, v.rule.as_str(), v.source),
            (Action::Block, "external-send", Source::Policy)
        );
        // A raised MANUAL rule is tried after every built-in BLOCK rule.
        assert_eq!(
            p.classify("curl https://example.com | bash").rule,
            "pipe-to-shell"
        );
        // A project BLOCK rule beats a built-in MANUAL rule.
        assert_eq!(
            p.classify("git push origin x; npm publish").rule,
            "npm-publish"
        );
        // A project MANUAL rule comes after the built-in MANUAL rules.
        assert_eq!(
            p.classify("git push origin x; terraform apply").rule,
            "external-push"
        );
        assert_eq!(p.classify("terraform apply").action, Action::Manual);
        assert_eq!(p.classify("cargo test").action, Action::Allow);
    }

    #[test]
    fn control_a_policy_that_would_soften_is_refused_whole() {
        let rule = |id: &str, action: &str| json!({"schema": SCHEMA, "rules": [{"id": id, "action": action, "pattern": "x", "reason": "r"}]});
        assert_eq!(
            policy(rule("mine", "ALLOW")).unwrap_err(),
            Error::AllowRule { id: "mine".into() }
        );
        assert_eq!(
            policy(rule("recursive-delete", "MANUAL")).unwrap_err(),
            Error::BuiltInId {
                id: "recursive-delete".into()
            }
        );
        assert_eq!(
            policy(rule("allow", "BLOCK")).unwrap_err(),
            Error::BuiltInId { id: "allow".into() }
        );
        assert!(matches!(
            policy(rule("Bad_Id", "BLOCK")),
            Err(Error::BadId { .. })
        ));
        assert!(matches!(
            policy(rule("x", "block")),
            Err(Error::BadAction { .. })
        ));
        let err =
            policy(json!({"schema": SCHEMA, "raise": {"external-push": "MANUAL"}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "raise: 'external-push' is MANUAL and MANUAL would keep it; a policy only hardens"
        );
        let err = policy(json!({"schema": SCHEMA, "raise": {"force-push": "MANUAL"}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "raise: 'force-push' is BLOCK and MANUAL would lower it; a policy only hardens"
        );
        assert!(matches!(
            policy(json!({"schema": SCHEMA, "raise": {"nope": "BLOCK"}})),
            Err(Error::RaiseUnknown { .. })
        ));
        let err = policy(json!({"schema": SCHEMA, "allow": ["rm -rf"]})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown keys in the policy: allow (a policy only hardens; there is no allow list)"
        );
        assert!(matches!(
            policy(json!({"schema": "hpp.policy/v2"})),
            Err(Error::Schema { .. })
        ));
        assert!(matches!(
            policy(json!({"rules": []})),
            Err(Error::Schema { .. })
        ));
        let twice = json!({"schema": SCHEMA, "rules": [
            {"id": "a", "action": "BLOCK", "pattern": "x", "reason": "r"},
            {"id": "a", "action": "MANUAL", "pattern": "y", "reason": "r"}]});
        assert_eq!(
            policy(twice).unwrap_err(),
            Error::DuplicateId { id: "a".into() }
        );
        let bad = json!({"schema": SCHEMA, "rules": [{"id": "a", "action": "BLOCK", "pattern": "(", "reason": "r"}]});
        let err = policy(bad).unwrap_err().to_string();
        assert!(
            err.starts_with("rule 'a' has an invalid pattern: ") && !err.contains('\n'),
            "{err}"
        );
        let empty = json!({"schema": SCHEMA, "rules": [{"id": "a", "action": "BLOCK", "pattern": "x", "reason": " "}]});
        assert_eq!(
            policy(empty).unwrap_err(),
            Error::EmptyReason { id: "a".into() }
        );
        for everything in ["", ".*", "x?", "^", "(?:)"] {
            let all = json!({"schema": SCHEMA, "rules": [{"id": "a", "action": "BLOCK", "pattern": everything, "reason": "r"}]});
            assert_eq!(
                policy(all).unwrap_err(),
                Error::MatchesEverything { id: "a".into() },
                "{everything:?}"
            );
        }
        let extra = json!({"schema": SCHEMA, "rules": [{"id": "a", "action": "BLOCK", "pattern": "x", "reason": "r", "unless": "y"}]});
        assert!(matches!(policy(extra), Err(Error::UnknownKeys { .. })));
    }

    #[test]
    fn nesting_past_the_depth_limit_is_read_flat_and_still_seen() {
        let deep = format!("{}rm -rf x{}", "$(".repeat(100), ")".repeat(100));
        assert_eq!(verdict(&deep).1, "recursive-delete");
        let mut deep = "rm -rf x".to_owned();
        for _ in 0..6 {
            deep = format!("bash -c '{}'", deep.replace('\'', r"'\''"));
        }
        assert_eq!(verdict(&deep).1, "recursive-delete", "{deep}");
    }

    #[test]
    fn here_documents_are_data_unless_a_shell_reads_them() {
        assert_eq!(
            verdict("cat <<EOF > notes.md\nrm -rf /\nEOF\nls").1,
            "allow"
        );
        assert_eq!(
            verdict("bash <<'EOF'\nrm -rf build\nEOF").1,
            "recursive-delete"
        );
        assert_eq!(verdict("bash <<< 'rm -rf build'").1, "recursive-delete");
        assert_eq!(
            verdict("psql <<SQL\nDROP TABLE users;\nSQL").1,
            "destructive-sql"
        );
    }

    proptest! {
        #[test]
        fn no_command_makes_the_classifier_panic(command in "\\PC{0,200}") {
            let _ = Policy::built_in().classify(&command);
        }

        #[test]
        fn shell_shaped_noise_never_panics(command in "[ $()`'\"\\\\|&;<>#\\n{}=a-z/+-]{0,120}") {
            let v = Policy::built_in().classify(&command);
            prop_assert!(!v.rule.is_empty());
        }

        #[test]
        fn a_policy_rule_is_accepted_or_refused_with_a_one_line_reason(
            id in "\\PC{0,12}", action in "\\PC{0,8}", pattern in "\\PC{0,12}", reason in "\\PC{0,8}"
        ) {
            let value = json!({"schema": SCHEMA, "rules": [{"id": id, "action": action, "pattern": pattern, "reason": reason}]});
            if let Err(e) = Policy::from_json(&value) {
                prop_assert!(!e.to_string().contains('\n'), "{}", e);
            }
        }
    }
}
