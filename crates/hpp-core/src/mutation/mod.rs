//! Criterion sensitivity (CONCEPTS.md "criterion sensitivity"): mutants a criterion command
//! must kill, and the `hpp.mutation/v1` record of how many it did.
//!
//! A mutant is one small change that makes the code wrong: replace `find` by `replace` in one
//! file. Mutants are declared in an `hpp.mutants/v1` file ([`parse_mutants`]) or generated from
//! the tokens of a Python or Rust source ([`generate()`]) with a fixed operator table, stated in
//! the [`generate`](mod@generate) module: comparisons flipped across their boundary (`<`↔`<=`,
//! `>`↔`>=`, `==`↔`!=`), arithmetic swapped (`+`↔`-`, `*`↔`/`), boolean operators and literals
//! swapped (`and`↔`or`, `&&`↔`||`, `True`↔`False`, `true`↔`false`) and decimal integer literals
//! bumped (`n`→`n+1`), never inside strings or comments ([`tokenize`]).
//!
//! [`apply`] locates a mutant in a source text (universal newlines); a mutant whose text is not
//! there is not-applied, never killed. [`classify`] turns a criterion run on a mutated copy into
//! an [`Outcome`]; [`Metrics`] counts them (score = killed ÷ (killed + survived), `None` when
//! nothing was measured) and [`Status`] is the verdict. [`record`] assembles the record.
//! This module is pure: no files, no processes, no git; the workflow lives in
//! `evidence::mutate`.
//!
//! ```
//! use hpp_core::mutation::{apply, generate};
//! let source = "def ok(x):\n    return x < 10\n";
//! let mutants = generate("m.py", source).expect("Python tokenizes");
//! assert_eq!(mutants[0].id, "m.py:2:13:<-><=");
//! let applied = apply(source, &mutants[0]).expect("the token is there");
//! assert_eq!(applied.text, "def ok(x):\n    return x <= 10\n");
//! ```

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::record::to_object;

pub mod generate;

pub use generate::{Language, Token, TokenKind, generate, tokenize};

/// The schema of a mutants file.
pub const MUTANTS_SCHEMA: &str = "hpp.mutants/v1";

/// The schema of the record.
pub const SCHEMA: &str = "hpp.mutation/v1";

/// Directories a mutant never touches and a workspace copy leaves out.
pub const UNTOUCHED_DIRS: &[&str] = &[
    ".git",
    ".hpp",
    "__pycache__",
    "node_modules",
    ".venv",
    "venv",
    ".tox",
];

/// Why a mutation input was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Neither `--mutants` nor `--generate` was given.
    #[error("evidence mutate needs --mutants FILE or --generate FILE (or both)")]
    NothingToMutate,
    /// The mutants file is not a `hpp.mutants/v1` object with a `mutants` list.
    #[error("{file} must be an hpp.mutants/v1 object with a mutants list")]
    NotMutants {
        /// The mutants file, as given.
        file: String,
    },
    /// One declared mutant breaks a rule.
    #[error("{file}: mutants[{index}] {problem}")]
    BadMutant {
        /// The mutants file, as given.
        file: String,
        /// The mutant's position in the list, from 0.
        index: usize,
        /// The rule it breaks.
        problem: Problem,
    },
    /// Two mutants share an id.
    #[error("mutant id {id} appears twice")]
    DuplicateId {
        /// The id.
        id: String,
    },
    /// A mutated file's path is not a plain relative path inside the workspace.
    #[error("{path} {problem}")]
    Path {
        /// The path, as given.
        path: String,
        /// What is wrong with it.
        problem: PathProblem,
    },
    /// `--generate` was given a file in a language it has no tokenizer for.
    #[error("{file}: --generate reads Python (.py) and Rust (.rs) sources")]
    Language {
        /// The file.
        file: String,
    },
    /// The source starts with a byte-order mark.
    #[error("{file} starts with a byte-order mark; save it without one")]
    Bom {
        /// The file.
        file: String,
    },
    /// The source could not be tokenized.
    #[error("{file}:{line}: cannot tokenize: {problem}")]
    Tokenize {
        /// The file.
        file: String,
        /// Where the bad token starts (from 1).
        line: u32,
        /// What is wrong.
        problem: TokenProblem,
    },
}

/// The rule a declared mutant breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The entry is not a JSON object.
    NotAnObject,
    /// `id` is missing, empty or not a string.
    Id,
    /// `file` is missing or not a string.
    File,
    /// `find` is missing, empty or not a string.
    Find,
    /// `replace` is missing, not a string, or equal to `find`.
    Replace,
    /// `occurrence` is not an integer of at least 1.
    Occurrence,
    /// `line` is not an integer of at least 1.
    Line,
    /// `column` is not an integer of at least 0.
    Column,
    /// `column` without `line`.
    ColumnWithoutLine,
    /// Both `occurrence` and `line`.
    OccurrenceAndLine,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotAnObject => "must be an object",
            Self::Id => "needs a non-empty string id",
            Self::File => "needs a file: a path relative to the workspace",
            Self::Find => "needs a non-empty find text",
            Self::Replace => "needs a replace text that differs from find",
            Self::Occurrence => "occurrence must be an integer of at least 1",
            Self::Line => "line must be an integer of at least 1",
            Self::Column => "column must be an integer of at least 0",
            Self::ColumnWithoutLine => "column needs a line",
            Self::OccurrenceAndLine => "takes occurrence or line/column, not both",
        })
    }
}

/// What is wrong with a mutated file's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathProblem {
    /// The path is empty.
    Empty,
    /// The path is absolute or climbs out with `..`.
    Outside,
    /// The path runs through a directory mutation never touches.
    Untouched(&'static str),
}

impl fmt::Display for PathProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("is empty: give a path relative to the workspace"),
            Self::Outside => {
                f.write_str("is outside the workspace: give a path relative to the workspace")
            }
            Self::Untouched(dir) => write!(f, "is under {dir}, which mutation never touches"),
        }
    }
}

/// Why a source could not be tokenized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenProblem {
    /// A string or character literal does not end.
    UnterminatedString,
    /// A block comment does not end.
    UnterminatedComment,
}

impl fmt::Display for TokenProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::UnterminatedString => "a string does not end",
            Self::UnterminatedComment => "a block comment does not end",
        })
    }
}

/// Where in its file a mutant applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locator {
    /// The n-th (from 1) non-overlapping occurrence of `find` in the file.
    Occurrence(u32),
    /// The first occurrence of `find` that starts on this line (from 1).
    Line(u32),
    /// `find` must start exactly here: line from 1, column from 0, in characters.
    Position {
        /// The line.
        line: u32,
        /// The column.
        column: u32,
    },
}

/// One mutant: replace `find` by `replace` in `file`, at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// Its id, unique in a run.
    pub id: String,
    /// The file, relative to the workspace, `/`-separated.
    pub file: String,
    /// The text to find.
    pub find: String,
    /// The text to put in its place.
    pub replace: String,
    /// Which occurrence.
    pub at: Locator,
}

/// Checks that `path` is a plain relative path inside the workspace: not empty, not absolute,
/// no `..`, and not through one of [`UNTOUCHED_DIRS`]. Returns it normalised (`./` dropped,
/// `/`-separated).
pub fn check_path(path: &str) -> Result<String, Error> {
    let refuse = |problem| Error::Path {
        path: path.to_owned(),
        problem,
    };
    if path.is_empty() {
        return Err(refuse(PathProblem::Empty));
    }
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(refuse(PathProblem::Outside));
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(refuse(PathProblem::Outside)),
            other => {
                if let Some(dir) = UNTOUCHED_DIRS.iter().find(|d| **d == other) {
                    return Err(refuse(PathProblem::Untouched(dir)));
                }
                parts.push(other);
            }
        }
    }
    if parts.is_empty() {
        return Err(refuse(PathProblem::Empty));
    }
    Ok(parts.join("/"))
}

/// Parses an `hpp.mutants/v1` document. `file` names it in refusals.
///
/// # Errors
///
/// [`Error::NotMutants`] for a document of another shape, [`Error::BadMutant`] for an entry
/// that breaks a rule, [`Error::Path`] for a bad `file`, [`Error::DuplicateId`].
pub fn parse_mutants(file: &str, document: &Value) -> Result<Vec<Mutant>, Error> {
    let list = document
        .as_object()
        .filter(|o| o.get("schema").and_then(Value::as_str) == Some(MUTANTS_SCHEMA))
        .and_then(|o| o.get("mutants"))
        .and_then(Value::as_array)
        .ok_or_else(|| Error::NotMutants {
            file: file.to_owned(),
        })?;
    let mut out = Vec::with_capacity(list.len());
    for (index, entry) in list.iter().enumerate() {
        let bad = |problem| Error::BadMutant {
            file: file.to_owned(),
            index,
            problem,
        };
        let entry = entry.as_object().ok_or_else(|| bad(Problem::NotAnObject))?;
        let text = |key: &str| entry.get(key).and_then(Value::as_str);
        let id = text("id")
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| bad(Problem::Id))?;
        let path = text("file").ok_or_else(|| bad(Problem::File))?;
        let path = check_path(path)?;
        let find = text("find")
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad(Problem::Find))?;
        let replace = text("replace")
            .filter(|s| *s != find)
            .ok_or_else(|| bad(Problem::Replace))?;
        let number = |key: &str, min: u64, problem: Problem| match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| *n >= min)
                .and_then(|n| u32::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| bad(problem)),
        };
        let occurrence = number("occurrence", 1, Problem::Occurrence)?;
        let line = number("line", 1, Problem::Line)?;
        let column = number("column", 0, Problem::Column)?;
        let at = match (occurrence, line, column) {
            (Some(_), Some(_), _) | (Some(_), None, Some(_)) => {
                return Err(bad(Problem::OccurrenceAndLine));
            }
            (None, None, Some(_)) => return Err(bad(Problem::ColumnWithoutLine)),
            (Some(n), None, None) => Locator::Occurrence(n),
            (None, Some(line), Some(column)) => Locator::Position { line, column },
            (None, Some(line), None) => Locator::Line(line),
            (None, None, None) => Locator::Occurrence(1),
        };
        out.push(Mutant {
            id: id.to_owned(),
            file: path,
            find: find.to_owned(),
            replace: replace.to_owned(),
            at,
        });
    }
    check_unique(&out)?;
    Ok(out)
}

/// Refuses two mutants with the same id.
pub fn check_unique(mutants: &[Mutant]) -> Result<(), Error> {
    let mut seen = BTreeSet::new();
    for m in mutants {
        if !seen.insert(m.id.as_str()) {
            return Err(Error::DuplicateId { id: m.id.clone() });
        }
    }
    Ok(())
}

/// A mutant applied to a source text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The mutated text.
    pub text: String,
    /// The line where `find` was found (from 1).
    pub line: u32,
    /// Its column (from 0, in characters).
    pub column: u32,
}

/// Byte offsets where each line starts, with `\n`, `\r\n` and `\r` all ending a line.
fn line_starts(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                i += 2;
                starts.push(i);
            }
            b'\r' | b'\n' => {
                i += 1;
                starts.push(i);
            }
            _ => i += 1,
        }
    }
    starts
}

/// Returns the line (from 1) and column (from 0, in characters) of a byte offset.
fn position(text: &str, starts: &[usize], offset: usize) -> (u32, u32) {
    let index = starts.partition_point(|s| *s <= offset).saturating_sub(1);
    let column = text[starts[index]..offset].chars().count();
    (
        u32::try_from(index + 1).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

/// Applies a mutant to `source`; `None` when its text is not where it says (not-applied).
pub fn apply(source: &str, mutant: &Mutant) -> Option<Applied> {
    let starts = line_starts(source);
    let offset = match mutant.at {
        Locator::Occurrence(n) => source
            .match_indices(mutant.find.as_str())
            .nth(usize::try_from(n).ok()?.checked_sub(1)?)
            .map(|(i, _)| i)?,
        Locator::Line(line) => {
            let start = *starts.get(usize::try_from(line).ok()?.checked_sub(1)?)?;
            let end = starts
                .get(usize::try_from(line).ok()?)
                .copied()
                .unwrap_or(source.len());
            let found = start + source[start..].find(mutant.find.as_str())?;
            (found < end).then_some(found)?
        }
        Locator::Position { line, column } => {
            let start = *starts.get(usize::try_from(line).ok()?.checked_sub(1)?)?;
            let column = usize::try_from(column).ok()?;
            let rest = &source[start..];
            let within = match rest.char_indices().nth(column) {
                Some((i, _)) => i,
                None if rest.chars().count() == column => rest.len(),
                None => return None,
            };
            let found = start + within;
            source[found..]
                .starts_with(mutant.find.as_str())
                .then_some(found)?
        }
    };
    let (line, column) = position(source, &starts, offset);
    let mut text = String::with_capacity(source.len() + mutant.replace.len());
    text.push_str(&source[..offset]);
    text.push_str(&mutant.replace);
    text.push_str(&source[offset + mutant.find.len()..]);
    Some(Applied { text, line, column })
}

/// How a criterion run on a copy ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunVerdict {
    /// It exited 0.
    Passed,
    /// It exited non-zero or was killed by a signal.
    Failed,
    /// It ran past its timeout and its process group was stopped.
    Timeout,
    /// It could not be started.
    CouldNotStart,
}

impl RunVerdict {
    /// Returns the verdict as the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Timeout => "timeout",
            Self::CouldNotStart => "could-not-start",
        }
    }
}

/// What became of one mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The criterion failed on it: it noticed.
    Killed,
    /// The criterion passed on it: a blind spot (or an equivalent mutant).
    Survived,
    /// Its text is not in the file, so nothing was measured.
    NotApplied,
    /// The run could not be judged (could not start, the copy failed).
    Error,
}

impl Outcome {
    /// Returns the outcome as the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Killed => "killed",
            Self::Survived => "survived",
            Self::NotApplied => "not-applied",
            Self::Error => "error",
        }
    }
}

/// Turns a run on a mutated copy into an outcome: passed → survived, failed → killed, timeout →
/// killed (with a note), could-not-start → error (with a note).
pub fn classify(verdict: RunVerdict) -> (Outcome, Option<&'static str>) {
    match verdict {
        RunVerdict::Passed => (Outcome::Survived, None),
        RunVerdict::Failed => (Outcome::Killed, None),
        RunVerdict::Timeout => (
            Outcome::Killed,
            Some("killed by the timeout: the criterion did not finish"),
        ),
        RunVerdict::CouldNotStart => (Outcome::Error, Some("the criterion could not start")),
    }
}

/// One mutant and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutantResult {
    /// The mutant.
    pub mutant: Mutant,
    /// Where it applied (`None` when not applied).
    pub line: Option<u32>,
    /// Its column (`None` when not applied).
    pub column: Option<u32>,
    /// What became of it.
    pub outcome: Outcome,
    /// The criterion's exit code, when it ran and exited.
    pub exit_code: Option<i32>,
    /// Why, when the outcome needs a word.
    pub note: Option<String>,
}

/// One mutant as the record lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MutantEntry {
    /// The mutant's id.
    pub id: String,
    /// Its file.
    pub file: String,
    /// The text it finds.
    pub find: String,
    /// The text it puts in its place.
    pub replace: String,
    /// Where it applied; `null` when it did not.
    pub line: Option<u32>,
    /// Its column; `null` when it did not apply.
    pub column: Option<u32>,
    /// What became of it.
    pub outcome: Outcome,
    /// The criterion's exit code, when it ran and exited.
    pub exit_code: Option<i32>,
    /// Why, when the outcome needs a word; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl From<&MutantResult> for MutantEntry {
    fn from(result: &MutantResult) -> Self {
        Self {
            id: result.mutant.id.clone(),
            file: result.mutant.file.clone(),
            find: result.mutant.find.clone(),
            replace: result.mutant.replace.clone(),
            line: result.line,
            column: result.column,
            outcome: result.outcome,
            exit_code: result.exit_code,
            note: result.note.clone(),
        }
    }
}

/// The counts and the score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Every mutant.
    pub total: usize,
    /// Mutants the criterion killed.
    pub killed: usize,
    /// Mutants it let through.
    pub survived: usize,
    /// Mutants whose text was not found.
    pub not_applied: usize,
    /// Mutants that could not be judged.
    pub errors: usize,
    /// killed ÷ (killed + survived); `None` when nothing was measured.
    pub score: Option<f64>,
}

impl Metrics {
    /// Counts the outcomes.
    pub fn of(results: &[MutantResult]) -> Self {
        let count = |o: Outcome| results.iter().filter(|r| r.outcome == o).count();
        let (killed, survived) = (count(Outcome::Killed), count(Outcome::Survived));
        let measured = killed + survived;
        Self {
            total: results.len(),
            killed,
            survived,
            not_applied: count(Outcome::NotApplied),
            errors: count(Outcome::Error),
            score: (measured > 0).then(|| killed as f64 / measured as f64),
        }
    }
}

/// The verdict of a mutation run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The clean run passed and the criterion killed every measured mutant.
    Sensitive,
    /// Some mutant survived.
    BlindSpots,
    /// The criterion does not pass on the unmutated code, so nothing it says about mutants
    /// means anything.
    NoControl,
    /// Nothing survived, but some mutant could not be judged.
    Incomplete,
    /// Nothing was measured (no mutant applied).
    NoMutants,
}

impl Status {
    /// Derives the verdict, in the reference's order: no-control, no-mutants, blind-spots,
    /// incomplete, sensitive.
    pub fn derive(clean: RunVerdict, metrics: &Metrics) -> Self {
        if clean != RunVerdict::Passed {
            Self::NoControl
        } else if metrics.killed + metrics.survived == 0 {
            Self::NoMutants
        } else if metrics.survived > 0 {
            Self::BlindSpots
        } else if metrics.errors > 0 {
            Self::Incomplete
        } else {
            Self::Sensitive
        }
    }

    /// Returns the verdict as the record spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sensitive => "sensitive",
            Self::BlindSpots => "blind-spots",
            Self::NoControl => "no-control",
            Self::Incomplete => "incomplete",
            Self::NoMutants => "no-mutants",
        }
    }
}

/// Names every survivor: `<file>:<line> <find> -> <replace>`.
pub fn survivors(results: &[MutantResult]) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.outcome == Outcome::Survived)
        .map(|r| {
            let line = r.line.map_or_else(|| "?".to_owned(), |l| l.to_string());
            format!(
                "{}:{line} {} -> {}",
                r.mutant.file, r.mutant.find, r.mutant.replace
            )
        })
        .collect()
}

/// The clean run: the criterion on an unmutated copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CleanRun {
    /// How it ended.
    pub verdict: RunVerdict,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// Seconds it took.
    pub duration_s: f64,
}

/// What the record says about the run as a whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The record's id.
    pub id: String,
    /// The criterion command, as an argv.
    pub command: Vec<String>,
    /// HEAD when the run started, if there is one.
    pub base_commit: Option<String>,
    /// When the run started, UTC, RFC 3339 to the second.
    pub started_at: String,
    /// The per-run timeout, in seconds.
    pub timeout_s: f64,
}

/// An `hpp.mutation/v1` record, as `evidence mutate` writes it. `record_ref` and
/// `record_sha256` are set by [`MutationRecord::seal`] when it is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MutationRecord {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The record's id.
    pub id: String,
    /// The criterion command, as an argv.
    pub command: Vec<String>,
    /// HEAD when the run started; `null` on an unborn branch.
    pub base_commit: Option<String>,
    /// When the run started, UTC, RFC 3339 to the second.
    pub started_at: String,
    /// The per-run timeout, in seconds.
    pub timeout_s: f64,
    /// The clean run.
    pub clean: CleanEntry,
    /// Every mutant and what became of it, in plan order.
    pub mutants: Vec<MutantEntry>,
    /// The counts and the score.
    pub metrics: Metrics,
    /// The verdict.
    pub verdict: Status,
    /// Every survivor, named ([`survivors`]).
    pub survivors: Vec<String>,
    /// The ref the record is stored at (hashed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_ref: Option<String>,
    /// The self-hash ([`crate::record::self_hash`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_sha256: Option<String>,
}

/// The clean run as the record states it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CleanEntry {
    /// How it ended.
    pub verdict: RunVerdict,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// Seconds it took, to the millisecond.
    pub duration_s: f64,
}

impl MutationRecord {
    /// Assembles the record of a run: metrics, verdict and survivors derived from the results.
    pub fn assemble(header: &Header, clean: &CleanRun, results: &[MutantResult]) -> Self {
        let metrics = Metrics::of(results);
        Self {
            schema: SCHEMA.to_owned(),
            id: header.id.clone(),
            command: header.command.clone(),
            base_commit: header.base_commit.clone(),
            started_at: header.started_at.clone(),
            timeout_s: header.timeout_s,
            clean: CleanEntry {
                verdict: clean.verdict,
                exit_code: clean.exit_code,
                duration_s: (clean.duration_s * 1000.0).round() / 1000.0,
            },
            mutants: results.iter().map(MutantEntry::from).collect(),
            verdict: Status::derive(clean.verdict, &metrics),
            metrics,
            survivors: survivors(results),
            record_ref: None,
            record_sha256: None,
        }
    }

    /// Names the ref the record is stored at, computes its self-hash over that (as an evidence
    /// bundle's), and returns the canonical bytes to store.
    pub fn seal(&mut self, record_ref: String) -> Vec<u8> {
        crate::record::seal(self, record_ref, |record| {
            (&mut record.record_ref, &mut record.record_sha256)
        })
    }
}

/// Assembles the `hpp.mutation/v1` record (without `record_ref` and `record_sha256`, which
/// the store adds) as JSON, and returns it with its verdict ([`MutationRecord::assemble`]).
pub fn record(
    header: &Header,
    clean: &CleanRun,
    results: &[MutantResult],
) -> (Map<String, Value>, Status) {
    let record = MutationRecord::assemble(header, clean, results);
    (to_object(&record), record.verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::self_hash;
    use proptest::prelude::*;
    use serde_json::json;

    fn declared(at: Locator) -> Mutant {
        Mutant {
            id: "m".into(),
            file: "f.py".into(),
            find: "x".into(),
            replace: "y".into(),
            at,
        }
    }

    #[test]
    fn declared_mutants_apply_by_occurrence_line_or_position() {
        let source = "x\nax x\n";
        let second = apply(source, &declared(Locator::Occurrence(2))).expect("applies");
        assert_eq!(
            (second.text.as_str(), second.line, second.column),
            ("x\nay x\n", 2, 1)
        );
        let line = apply(source, &declared(Locator::Line(2))).expect("applies");
        assert_eq!(line.text, "x\nay x\n");
        let exact =
            apply(source, &declared(Locator::Position { line: 2, column: 3 })).expect("applies");
        assert_eq!(exact.text, "x\nax y\n");
    }

    #[test]
    fn control_a_mutant_whose_text_is_absent_is_not_applied() {
        let source = "x\nax x\n";
        assert_eq!(apply(source, &declared(Locator::Occurrence(4))), None);
        assert_eq!(apply(source, &declared(Locator::Line(3))), None);
        assert_eq!(apply(source, &declared(Locator::Line(9))), None);
        assert_eq!(
            apply(source, &declared(Locator::Position { line: 2, column: 0 })),
            None
        );
        assert_eq!(
            apply(
                source,
                &declared(Locator::Position {
                    line: 1,
                    column: 40
                })
            ),
            None
        );
    }

    #[test]
    fn a_mutants_file_parses_with_its_locators() {
        let doc = json!({"schema": "hpp.mutants/v1", "mutants": [
            {"id": "a", "file": "./src/f.py", "find": "<", "replace": "<="},
            {"id": "b", "file": "f.py", "find": "<", "replace": "<=", "occurrence": 2},
            {"id": "c", "file": "f.py", "find": "<", "replace": "<=", "line": 3, "column": 0},
        ]});
        let mutants = parse_mutants("m.json", &doc).expect("valid");
        assert_eq!(mutants[0].file, "src/f.py");
        assert_eq!(mutants[0].at, Locator::Occurrence(1));
        assert_eq!(mutants[1].at, Locator::Occurrence(2));
        assert_eq!(mutants[2].at, Locator::Position { line: 3, column: 0 });
    }

    #[test]
    fn control_bad_mutants_files_are_refused_with_the_reference_sentences() {
        for doc in [
            json!([]),
            json!({"schema": "hpp.mutants/v2", "mutants": []}),
            json!({"schema": "hpp.mutants/v1"}),
            json!({"schema": "hpp.mutants/v1", "mutants": {}}),
        ] {
            assert_eq!(
                parse_mutants("m.json", &doc)
                    .expect_err("refused")
                    .to_string(),
                "m.json must be an hpp.mutants/v1 object with a mutants list"
            );
        }
        let one = |m: Value| {
            parse_mutants(
                "m.json",
                &json!({"schema": "hpp.mutants/v1", "mutants": [m]}),
            )
            .expect_err("refused")
            .to_string()
        };
        let base = json!({"id": "a", "file": "f.py", "find": "<", "replace": "<="});
        let with = |k: &str, v: Value| {
            let mut m = base.clone();
            m[k] = v;
            m
        };
        assert_eq!(one(json!(3)), "m.json: mutants[0] must be an object");
        assert_eq!(
            one(with("id", json!(""))),
            "m.json: mutants[0] needs a non-empty string id"
        );
        assert_eq!(
            one(with("find", json!(""))),
            "m.json: mutants[0] needs a non-empty find text"
        );
        assert_eq!(
            one(with("replace", json!("<"))),
            "m.json: mutants[0] needs a replace text that differs from find"
        );
        assert_eq!(
            one(with("occurrence", json!(0))),
            "m.json: mutants[0] occurrence must be an integer of at least 1"
        );
        assert_eq!(
            one(with("column", json!(1))),
            "m.json: mutants[0] column needs a line"
        );
        assert_eq!(
            one(with("file", json!("../f.py"))),
            "../f.py is outside the workspace: give a path relative to the workspace"
        );
        assert_eq!(
            one(with("file", json!("/etc/passwd"))),
            "/etc/passwd is outside the workspace: give a path relative to the workspace"
        );
        assert_eq!(
            one(with("file", json!("a/.git/config"))),
            "a/.git/config is under .git, which mutation never touches"
        );
        let twice = json!({"schema": "hpp.mutants/v1", "mutants": [base.clone(), base]});
        assert_eq!(
            parse_mutants("m.json", &twice)
                .expect_err("refused")
                .to_string(),
            "mutant id a appears twice"
        );
    }

    fn result(outcome: Outcome) -> MutantResult {
        MutantResult {
            mutant: declared(Locator::Occurrence(1)),
            line: Some(4),
            column: Some(2),
            outcome,
            exit_code: None,
            note: None,
        }
    }

    #[test]
    fn the_score_is_killed_over_measured_and_null_when_nothing_was_measured() {
        let all = [
            result(Outcome::Killed),
            result(Outcome::Killed),
            result(Outcome::Survived),
            result(Outcome::NotApplied),
            result(Outcome::Error),
        ];
        let m = Metrics::of(&all);
        assert_eq!(
            (m.total, m.killed, m.survived, m.not_applied, m.errors),
            (5, 2, 1, 1, 1)
        );
        assert_eq!(m.score, Some(2.0 / 3.0));
        let none = Metrics::of(&[result(Outcome::NotApplied), result(Outcome::Error)]);
        assert_eq!(none.score, None);
        assert_eq!(survivors(&all), ["f.py:4 x -> y"]);
    }

    #[test]
    fn the_verdict_follows_the_reference_order() {
        let of = |clean, outcomes: &[Outcome]| {
            let results: Vec<_> = outcomes.iter().map(|o| result(*o)).collect();
            Status::derive(clean, &Metrics::of(&results))
        };
        use Outcome::*;
        assert_eq!(of(RunVerdict::Failed, &[Killed]), Status::NoControl);
        assert_eq!(of(RunVerdict::Timeout, &[]), Status::NoControl);
        assert_eq!(
            of(RunVerdict::Passed, &[NotApplied, Error]),
            Status::NoMutants
        );
        assert_eq!(
            of(RunVerdict::Passed, &[Survived, Error]),
            Status::BlindSpots
        );
        assert_eq!(of(RunVerdict::Passed, &[Killed, Error]), Status::Incomplete);
        assert_eq!(
            of(RunVerdict::Passed, &[Killed, NotApplied]),
            Status::Sensitive
        );
    }

    #[test]
    fn runs_classify_as_the_reference_says() {
        assert_eq!(classify(RunVerdict::Passed).0, Outcome::Survived);
        assert_eq!(classify(RunVerdict::Failed).0, Outcome::Killed);
        assert_eq!(classify(RunVerdict::Timeout).0, Outcome::Killed);
        assert!(classify(RunVerdict::Timeout).1.is_some());
        assert_eq!(classify(RunVerdict::CouldNotStart).0, Outcome::Error);
    }

    /// The record as `evidence mutate` built it before it was typed: a `json!` literal, then
    /// `record_ref` and `record_sha256` inserted by the store.
    fn untyped(
        header: &Header,
        clean: &CleanRun,
        results: &[MutantResult],
        record_ref: &str,
    ) -> Value {
        let metrics = Metrics::of(results);
        let status = Status::derive(clean.verdict, &metrics);
        let mutants: Vec<Value> = results
            .iter()
            .map(|r| {
                let mut value = json!({
                    "id": r.mutant.id, "file": r.mutant.file, "find": r.mutant.find,
                    "replace": r.mutant.replace, "line": r.line, "column": r.column,
                    "outcome": r.outcome.as_str(), "exit_code": r.exit_code,
                });
                if let Some(note) = &r.note {
                    value["note"] = json!(note);
                }
                value
            })
            .collect();
        let value = json!({
            "schema": SCHEMA,
            "id": header.id,
            "command": header.command,
            "base_commit": header.base_commit,
            "started_at": header.started_at,
            "timeout_s": header.timeout_s,
            "clean": {
                "verdict": clean.verdict.as_str(),
                "exit_code": clean.exit_code,
                "duration_s": (clean.duration_s * 1000.0).round() / 1000.0,
            },
            "mutants": mutants,
            "metrics": metrics,
            "verdict": status.as_str(),
            "survivors": survivors(results),
        });
        let mut record = value.as_object().cloned().expect("an object");
        record.insert("record_ref".into(), json!(record_ref));
        record.remove("record_sha256");
        let hash = self_hash(&record);
        record.insert("record_sha256".into(), json!(hash));
        Value::Object(record)
    }

    #[test]
    fn the_typed_record_has_the_bytes_and_self_hash_of_the_untyped_one() {
        use crate::record::canonical_json;
        let header = Header {
            id: "weak".into(),
            command: vec!["python3".into(), "check.py".into()],
            base_commit: Some("c".repeat(40)),
            started_at: "2026-01-01T00:00:00Z".into(),
            timeout_s: 0.25,
        };
        let clean = |verdict| CleanRun {
            verdict,
            exit_code: (verdict == RunVerdict::Passed).then_some(0),
            duration_s: 0.12345,
        };
        let mut noted = result(Outcome::Error);
        noted.note = Some("the criterion could not start".into());
        let mut not_applied = result(Outcome::NotApplied);
        (not_applied.line, not_applied.column) = (None, None);
        let cases = [
            (clean(RunVerdict::Passed), vec![result(Outcome::Killed)]),
            (
                clean(RunVerdict::Passed),
                vec![result(Outcome::Survived), noted, not_applied],
            ),
            (clean(RunVerdict::Passed), Vec::new()),
            (clean(RunVerdict::CouldNotStart), Vec::new()),
        ];
        let record_ref = "refs/hpp/evidence/weak-20260101T000000Z";
        for (clean, results) in cases {
            let old = untyped(&header, &clean, &results, record_ref);
            let mut typed = MutationRecord::assemble(&header, &clean, &results);
            assert_eq!(typed.seal(record_ref.into()), canonical_json(&old), "{old}");
            let read: MutationRecord = serde_json::from_value(old).expect("reads back");
            assert_eq!(read, typed);
        }
    }

    #[test]
    fn control_a_note_left_as_null_is_not_the_record_written() {
        use crate::record::canonical_json;
        let header = Header {
            id: "weak".into(),
            command: vec!["true".into()],
            base_commit: None,
            started_at: "2026-01-01T00:00:00Z".into(),
            timeout_s: 600.0,
        };
        let clean = CleanRun {
            verdict: RunVerdict::Passed,
            exit_code: Some(0),
            duration_s: 0.0,
        };
        let results = [result(Outcome::Killed)];
        let mut old = untyped(&header, &clean, &results, "r");
        let mut typed = MutationRecord::assemble(&header, &clean, &results);
        assert_eq!(typed.seal("r".into()), canonical_json(&old));
        old["mutants"][0]["note"] = Value::Null;
        assert_ne!(typed.seal("r".into()), canonical_json(&old));
    }

    #[test]
    fn the_record_carries_the_reference_fields() {
        let header = Header {
            id: "weak".into(),
            command: vec!["python3".into(), "check.py".into()],
            base_commit: None,
            started_at: "2026-01-01T00:00:00Z".into(),
            timeout_s: 600.0,
        };
        let clean = CleanRun {
            verdict: RunVerdict::Passed,
            exit_code: Some(0),
            duration_s: 0.12345,
        };
        let (record, status) = record(&header, &clean, &[result(Outcome::Survived)]);
        assert_eq!(status, Status::BlindSpots);
        let keys: Vec<&str> = record.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "base_commit",
                "clean",
                "command",
                "id",
                "metrics",
                "mutants",
                "schema",
                "started_at",
                "survivors",
                "timeout_s",
                "verdict"
            ]
        );
        assert_eq!(record["clean"]["duration_s"], json!(0.123));
        assert_eq!(record["mutants"][0]["outcome"], json!("survived"));
        assert_eq!(record["metrics"]["score"], json!(0.0));
    }

    proptest! {
        #[test]
        fn no_document_makes_the_parser_panic(id in ".{0,8}", file in ".{0,12}", n in any::<i64>()) {
            let doc = json!({"schema": "hpp.mutants/v1", "mutants": [
                {"id": id, "file": file, "find": "a", "replace": "b", "line": n}
            ]});
            if let Err(e) = parse_mutants("m.json", &doc) {
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }
}
