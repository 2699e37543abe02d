//! Spec coverage: criteria cited by tests, joined to JUnit reports (CONCEPTS.md "cited and
//! executed", "spec coverage").
//!
//! A test cites an acceptance criterion of a WorkGraph with `[spec: capability/scenario]`:
//! - in Python, in a docstring (module, class or function; any other string is test data);
//! - in Rust, in the comments (`///` or `//`) directly above a `#[test]` function, attributes
//!   between allowed, a blank line ending the block; `//!` inner docs cite for their module.
//!
//! [`coverage`] links every criterion to the files that cite it (`hpp.spec-coverage/v1`):
//! covered, orphans (cited by nothing) and unknown (a citation of no declared criterion, or a
//! malformed one). [`execution`] joins each citing test to the cases a runner reported
//! (`hpp.spec-execution/v1`): a criterion is executed only when a citing test ran and passed and
//! none failed. A module or class citation, a skipped test and a test absent from the report
//! cite without running. Pure: sources and reports come in as text and bytes, nothing is read
//! here, and no ref is touched.
//!
//! ```
//! use git_hpp::coverage::{self, Language};
//! let spec = serde_json::json!({"work": [
//!     {"id": "parse", "tier": "economy", "acceptance": [{"id": "iso-date", "text": "ISO dates parse"}]},
//! ]});
//! let graph = git_hpp::workgraph::compile(&spec).expect("compiles");
//! let source = "def test_iso():\n    \"\"\"[spec: parse/iso-date]\"\"\"\n";
//! let cited = coverage::citations(Language::Python, "tests/test_parse.py", source).expect("reads");
//! let report = coverage::coverage(&graph, &cited);
//! assert!(report.complete);
//! let junit = br#"<testsuite><testcase classname="tests.test_parse" name="test_iso"/></testsuite>"#;
//! let cases = coverage::read_junit(junit).expect("a JUnit report");
//! assert!(coverage::execution(&graph, &cited, &cases).executed_every_criterion());
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use quick_xml::events::Event;
use regex::Regex;
use serde::Serialize;

use crate::workgraph::{self, WorkGraph};

/// The schema of a coverage report (citations only).
pub const COVERAGE_SCHEMA: &str = "hpp.spec-coverage/v1";
/// The schema of an execution report (citations joined to JUnit cases).
pub const EXECUTION_SCHEMA: &str = "hpp.spec-execution/v1";

static ANY_MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[spec:\s*([^\]]*?)\s*\]").expect("the marker pattern compiles"));
static XML_DECLARATIONS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)<!\s*(?:DOCTYPE|ENTITY)").expect("the declaration pattern compiles")
});
static DECLARED_ENCODING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']"#)
        .expect("the encoding pattern compiles")
});

/// Why a source or a report cannot be read truthfully.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A Python source does not tokenize into statements.
    #[error("{path} is not valid Python: {reason}")]
    InvalidPython {
        /// The source's name.
        path: String,
        /// What the scanner met.
        reason: String,
    },
    /// A Rust source does not tokenize (an unterminated string or comment, unbalanced braces).
    #[error("{path} is not valid Rust: {reason}")]
    InvalidRust {
        /// The source's name.
        path: String,
        /// What the scanner met.
        reason: String,
    },
    /// A report's bytes are not UTF-8, or hold a NUL.
    #[error("a JUnit report must be UTF-8")]
    JunitNotUtf8,
    /// A report declares an encoding other than UTF-8.
    #[error("a JUnit report must be UTF-8, this one declares '{0}'")]
    JunitEncoding(String),
    /// A report declares a DOCTYPE or an entity (how a few bytes of XML expand to gigabytes).
    #[error("a JUnit report with a DOCTYPE or ENTITY declaration is refused")]
    JunitDeclaration,
    /// A report is not well-formed XML.
    #[error("the JUnit report is not valid XML: {0}")]
    JunitXml(String),
    /// A report's root is neither `testsuites` nor `testsuite`.
    #[error("not a JUnit report: the root element is <{0}>")]
    JunitRoot(String),
    /// A `testcase` has no `name`.
    #[error("a JUnit testcase has no name")]
    JunitNameless,
}

/// The language of a test source, by its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// A `.py` file: citations in docstrings.
    Python,
    /// A `.rs` file: citations in the comments above `#[test]` functions.
    Rust,
}

impl Language {
    /// Returns the language of `path` by its extension, or `None` for any other file.
    pub fn of(path: &str) -> Option<Self> {
        if path.ends_with(".py") {
            Some(Self::Python)
        } else if path.ends_with(".rs") {
            Some(Self::Rust)
        } else {
            None
        }
    }
}

/// What carries a citation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A module docstring, or a Rust `//!` inner doc: cites, never runs.
    Module,
    /// A class docstring: cites, never runs.
    Class,
    /// A function: a test a runner may report.
    Function,
    /// A Python definition that a later binding of the same name replaces: the runner never sees it.
    Shadowed,
}

/// One citing entry: a test (or module, or class) and the criteria it cites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Citation {
    /// `path`, `path::Class`, `path::Class::function` (Python) or `path::module::function` (Rust).
    pub test: String,
    /// What carries the citation.
    pub kind: Kind,
    /// The criterion ids cited, sorted (malformed ones as `malformed:<text>`).
    pub cites: Vec<String>,
}

impl Citation {
    /// Returns the source file the citation is in.
    pub fn path(&self) -> &str {
        self.test.split("::").next().unwrap_or_default()
    }
}

/// A criterion and the sources that cite it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Linked {
    /// The criterion id (or the unknown marker).
    pub id: String,
    /// The files (coverage) or tests (execution's unknown) that cite it.
    pub sources: Vec<String>,
}

/// `hpp.spec-coverage/v1`: every criterion linked to the files that cite it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpecCoverage {
    /// Always [`COVERAGE_SCHEMA`].
    pub schema: &'static str,
    /// How many criteria the spec declares.
    pub criteria: usize,
    /// Declared criteria cited by at least one source.
    pub covered: Vec<Linked>,
    /// Declared criteria cited by nothing.
    pub orphans: Vec<String>,
    /// Citations of no declared criterion (including malformed ones).
    pub unknown: Vec<Linked>,
    /// No orphans and no unknown.
    pub complete: bool,
}

/// The outcome of one JUnit `testcase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseOutcome {
    /// No failure, error or skipped child.
    Passed,
    /// A `failure` child.
    Failed,
    /// An `error` child.
    Error,
    /// A `skipped` child.
    Skipped,
}

/// One `testcase` of a JUnit report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    /// pytest: the dotted module plus class chain; nextest: the test binary's id.
    pub classname: String,
    /// pytest: the function plus `[parameters]`; nextest: the test's path in its binary.
    pub name: String,
    /// What the runner reported.
    pub outcome: CaseOutcome,
}

/// How one citing entry fared in the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// A Python definition replaced by a later binding of its name.
    Shadowed,
    /// A module or class citation: nothing a runner executes.
    NotATest,
    /// The cases it matched name more than one module, so which one it is cannot be told.
    Ambiguous,
    /// A matched case failed or errored.
    Failed,
    /// A matched case passed and none failed.
    Passed,
    /// Every matched case was skipped.
    Skipped,
    /// No case matched.
    NotInJunit,
}

/// One citing test and how it fared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestRun {
    /// The citing entry.
    pub test: String,
    /// How it fared.
    pub outcome: RunStatus,
}

/// A declared criterion and its citing tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bucketed {
    /// The criterion id.
    pub id: String,
    /// Its citing tests, sorted.
    pub tests: Vec<TestRun>,
}

/// `hpp.spec-execution/v1` without the report metadata (see [`ExecutionRun`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpecExecution {
    /// Always [`EXECUTION_SCHEMA`].
    pub schema: &'static str,
    /// How many criteria the spec declares.
    pub criteria: usize,
    /// How many cases the reports hold.
    pub junit_testcases: usize,
    /// How many cases were joined to a citing test (zero says: wrong report or wrong root).
    pub matched_testcases: usize,
    /// Criteria a citing test ran and passed, none failing.
    pub executed: Vec<Bucketed>,
    /// Criteria a citing test failed or errored (a pass elsewhere does not cancel it).
    pub failed: Vec<Bucketed>,
    /// Criteria cited only by tests that were skipped, absent, shadowed, ambiguous or not tests.
    pub cited_not_run: Vec<Bucketed>,
    /// Declared criteria cited by nothing.
    pub orphans: Vec<String>,
    /// Citations of no declared criterion, with the tests that carry them.
    pub unknown: Vec<Linked>,
}

impl SpecExecution {
    /// Returns whether every declared criterion was executed and nothing unknown was cited.
    pub fn executed_every_criterion(&self) -> bool {
        self.executed.len() == self.criteria && self.unknown.is_empty()
    }
}

/// One JUnit report as read: its name as given, its sha256 and its modification time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportFile {
    /// The file as named on the command line.
    pub file: String,
    /// sha256 of its bytes.
    pub sha256: String,
    /// Its modification time, in seconds since the epoch.
    pub mtime: f64,
}

/// The execution report `git hpp work coverage --junit` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecutionRun {
    /// The join itself.
    #[serde(flatten)]
    pub execution: SpecExecution,
    /// The reports as named on the command line.
    pub junit: Vec<String>,
    /// The reports read.
    pub reports: Vec<ReportFile>,
    /// Citing sources modified after the oldest report: the report may not describe them.
    pub stale_sources: Vec<String>,
    /// How many test sources were read.
    pub sources: usize,
    /// Every criterion executed, nothing unknown, and no stale source.
    pub complete: bool,
}

impl ExecutionRun {
    /// Completes an execution with the reports it read and the sources that are newer than them.
    pub fn new(
        execution: SpecExecution,
        reports: Vec<ReportFile>,
        stale_sources: Vec<String>,
        sources: usize,
    ) -> Self {
        let complete = execution.executed_every_criterion() && stale_sources.is_empty();
        Self {
            junit: reports.iter().map(|r| r.file.clone()).collect(),
            execution,
            reports,
            stale_sources,
            sources,
            complete,
        }
    }
}

/// The coverage report `git hpp work coverage` prints without `--junit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoverageRun {
    /// The links.
    #[serde(flatten)]
    pub coverage: SpecCoverage,
    /// How many test sources were read.
    pub sources: usize,
}

/// Returns the criterion ids a text cites as `[spec: capability/scenario]`. A placeholder that
/// documents the form (`<...>`) and an empty marker are not citations; any other marker that is
/// not a citable id comes back as `malformed:<text>`, so a typo is a finding, not silence.
pub fn find_spec_markers(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for captures in ANY_MARKER.captures_iter(text) {
        let raw = captures.get(1).map_or("", |m| m.as_str()).trim();
        if raw.is_empty() || raw.contains('<') || raw.contains('>') {
            continue;
        }
        if workgraph::is_citable(raw) {
            found.insert(raw.to_owned());
        } else {
            found.insert(format!("malformed:{raw}"));
        }
    }
    found
}

/// Returns the citing entries of one source, read as `language`.
pub fn citations(language: Language, path: &str, source: &str) -> Result<Vec<Citation>, Error> {
    match language {
        Language::Python => {
            python::citations(path, source).map_err(|reason| Error::InvalidPython {
                path: path.to_owned(),
                reason,
            })
        }
        Language::Rust => rust::citations(path, source).map_err(|reason| Error::InvalidRust {
            path: path.to_owned(),
            reason,
        }),
    }
}

/// Links every criterion of `graph` to the files whose entries cite it.
pub fn coverage(graph: &WorkGraph, citations: &[Citation]) -> SpecCoverage {
    let mut cited: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for citation in sorted(citations) {
        let path = citation.path().to_owned();
        for marker in &citation.cites {
            let files = cited.entry(marker.clone()).or_default();
            if !files.contains(&path) {
                files.push(path.clone());
            }
        }
    }
    let declared: BTreeSet<&str> = graph.criteria.iter().map(|c| c.id.as_str()).collect();
    let orphans: Vec<String> = declared
        .iter()
        .filter(|id| !cited.contains_key(**id))
        .map(|id| (*id).to_owned())
        .collect();
    let (covered, unknown): (Vec<Linked>, Vec<Linked>) = cited
        .into_iter()
        .map(|(id, sources)| Linked { id, sources })
        .partition(|linked| declared.contains(linked.id.as_str()));
    SpecCoverage {
        schema: COVERAGE_SCHEMA,
        criteria: declared.len(),
        complete: orphans.is_empty() && unknown.is_empty(),
        covered,
        orphans,
        unknown,
    }
}

/// Joins who cites each criterion with what the runner executed.
pub fn execution(graph: &WorkGraph, citations: &[Citation], cases: &[TestCase]) -> SpecExecution {
    // Cases indexed by the last `::` segment of their name without parameters: the function name.
    let mut by_function: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, case) in cases.iter().enumerate() {
        by_function
            .entry(function_of(&case.name))
            .or_default()
            .push(index);
    }
    let mut matched: BTreeSet<usize> = BTreeSet::new();
    let mut by_criterion: BTreeMap<String, Vec<TestRun>> = BTreeMap::new();
    for citation in sorted(citations) {
        let outcome = run_status(citation, cases, &by_function, &mut matched);
        for marker in &citation.cites {
            by_criterion
                .entry(marker.clone())
                .or_default()
                .push(TestRun {
                    test: citation.test.clone(),
                    outcome,
                });
        }
    }
    let declared: BTreeSet<&str> = graph.criteria.iter().map(|c| c.id.as_str()).collect();
    let (mut executed, mut failed, mut cited_not_run) = (Vec::new(), Vec::new(), Vec::new());
    let mut unknown = Vec::new();
    for (id, tests) in by_criterion {
        if !declared.contains(id.as_str()) {
            let sources = tests.into_iter().map(|t| t.test).collect();
            unknown.push(Linked { id, sources });
            continue;
        }
        let any = |status: RunStatus| tests.iter().any(|t| t.outcome == status);
        let bucket = if any(RunStatus::Failed) {
            &mut failed
        } else if any(RunStatus::Passed) {
            &mut executed
        } else {
            &mut cited_not_run
        };
        bucket.push(Bucketed { id, tests });
    }
    let cited: BTreeSet<&str> = executed
        .iter()
        .chain(&failed)
        .chain(&cited_not_run)
        .map(|b| b.id.as_str())
        .collect();
    let orphans = declared
        .iter()
        .filter(|id| !cited.contains(**id))
        .map(|id| (*id).to_owned())
        .collect();
    SpecExecution {
        schema: EXECUTION_SCHEMA,
        criteria: declared.len(),
        junit_testcases: cases.len(),
        matched_testcases: matched.len(),
        executed,
        failed,
        cited_not_run,
        orphans,
        unknown,
    }
}

/// Returns the citing sources modified after the oldest report (`source_mtimes` holds each
/// citing file's modification time), sorted. No report, nothing stale.
pub fn stale_sources(source_mtimes: &[(String, f64)], report_mtimes: &[f64]) -> Vec<String> {
    let Some(oldest) = report_mtimes.iter().copied().reduce(f64::min) else {
        return Vec::new();
    };
    let mut stale: Vec<String> = source_mtimes
        .iter()
        .filter(|(_, mtime)| *mtime > oldest)
        .map(|(path, _)| path.clone())
        .collect();
    stale.sort();
    stale.dedup();
    stale
}

/// Returns the distinct files that carry at least one citation, sorted.
pub fn citing_sources(citations: &[Citation]) -> Vec<String> {
    let files: BTreeSet<&str> = citations.iter().map(Citation::path).collect();
    files.into_iter().map(str::to_owned).collect()
}

fn sorted(citations: &[Citation]) -> Vec<&Citation> {
    let mut sorted: Vec<&Citation> = citations.iter().collect();
    sorted.sort_by(|a, b| a.test.cmp(&b.test));
    sorted
}

fn function_of(case_name: &str) -> &str {
    let bare = case_name.split('[').next().unwrap_or_default();
    bare.rsplit("::").next().unwrap_or_default()
}

fn run_status(
    citation: &Citation,
    cases: &[TestCase],
    by_function: &BTreeMap<&str, Vec<usize>>,
    matched: &mut BTreeSet<usize>,
) -> RunStatus {
    match citation.kind {
        Kind::Shadowed => return RunStatus::Shadowed,
        Kind::Module | Kind::Class => return RunStatus::NotATest,
        Kind::Function => {}
    }
    let function = citation.test.rsplit("::").next().unwrap_or_default();
    let mut outcomes: BTreeSet<CaseOutcome> = BTreeSet::new();
    let mut modules: BTreeSet<String> = BTreeSet::new();
    for &index in by_function.get(function).into_iter().flatten() {
        if let Some(module) = case_module(&citation.test, &cases[index]) {
            matched.insert(index);
            outcomes.insert(cases[index].outcome);
            modules.insert(module);
        }
    }
    if modules.len() > 1 {
        RunStatus::Ambiguous
    } else if outcomes.contains(&CaseOutcome::Failed) || outcomes.contains(&CaseOutcome::Error) {
        RunStatus::Failed
    } else if outcomes.contains(&CaseOutcome::Passed) {
        RunStatus::Passed
    } else if outcomes.is_empty() {
        RunStatus::NotInJunit
    } else {
        RunStatus::Skipped
    }
}

impl PartialOrd for CaseOutcome {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CaseOutcome {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (*self as u8).cmp(&(*other as u8))
    }
}

/// Returns the module a report case names when it runs `test`, `None` when it does not.
fn case_module(test: &str, case: &TestCase) -> Option<String> {
    let mut parts = test.split("::");
    let path = parts.next()?;
    let qualified: Vec<&str> = parts.collect();
    if qualified.is_empty() {
        return None;
    }
    let name = case.name.split('[').next().unwrap_or_default();
    match Language::of(path) {
        Some(Language::Rust) => rust_case_module(path, &qualified, name, &case.classname),
        _ => python_case_module(path, &qualified, name, &case.classname),
    }
}

/// pytest's convention: `name` is the function (plus `[parameters]`), `classname` the dotted
/// module from the runner's root plus the class chain. The module is compared as a dotted suffix
/// at a `.` boundary, in either direction (the path given here and the runner's root need not be
/// the same directory), never by splitting on dots (a directory `kit-1.5.0` stays whole).
fn python_case_module(
    path: &str,
    qualified: &[&str],
    name: &str,
    classname: &str,
) -> Option<String> {
    let (function, classes) = qualified.split_last()?;
    if name != *function {
        return None;
    }
    let mut module_of_case = classname;
    let classes = classes.join(".");
    if !classes.is_empty() {
        module_of_case = module_of_case.strip_suffix(&format!(".{classes}"))?;
    }
    let module = module_parts(path, true).join(".");
    if module_of_case.is_empty() || module.is_empty() {
        return None;
    }
    let joined = module_of_case == module
        || module_of_case.ends_with(&format!(".{module}"))
        || module.ends_with(&format!(".{module_of_case}"));
    joined.then(|| module_of_case.to_owned())
}

/// nextest's convention: `name` is the test's path inside its binary (`module::test`),
/// `classname` the binary's id (`crate`, `crate::it`, `crate::bin/tool`). The name must end with
/// the test's inline modules and function; what precedes them is the file's module path from
/// the binary's root, which must be a `::`-suffix of the file's path (`tests/it/work.rs` is
/// `work` in binary `it`; `src/cli/work/mod.rs` is `cli::work`). When nothing precedes them,
/// the file must be a binary's root: `lib.rs`, `main.rs`, or a file named like the binary.
fn rust_case_module(path: &str, qualified: &[&str], name: &str, classname: &str) -> Option<String> {
    let segments: Vec<&str> = name.split("::").collect();
    let split = segments.len().checked_sub(qualified.len())?;
    let (prefix, tail) = segments.split_at(split);
    if tail != qualified {
        return None;
    }
    let mut file = module_parts(path, true);
    if file.last().is_some_and(|last| last == "mod") {
        file.pop();
    }
    if prefix.is_empty() {
        let stem = file.last()?.as_str();
        let binary = classname.rsplit([':', '/']).next().unwrap_or_default();
        let root = stem == "lib" || stem == "main" || stem == binary;
        return root.then(|| format!("{classname}::"));
    }
    let suffix = file.len() >= prefix.len()
        && file[file.len() - prefix.len()..]
            .iter()
            .zip(prefix)
            .all(|(a, b)| a == b);
    suffix.then(|| format!("{classname}::{}", prefix.join("::")))
}

/// `tests/test_x.py` -> `["tests", "test_x"]`, whichever separator the path was written with.
fn module_parts(path: &str, strip_suffix: bool) -> Vec<String> {
    let normalised = path.replace('\\', "/");
    let mut parts: Vec<String> = normalised
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(str::to_owned)
        .collect();
    if strip_suffix && let Some(last) = parts.last_mut() {
        // As Python's PurePath.suffix: a dot that is neither first nor last starts the suffix.
        if let Some(dot) = last.rfind('.')
            && dot > 0
            && dot < last.len() - 1
        {
            last.truncate(dot);
        }
    }
    parts.retain(|p| p != "..");
    parts
}

/// Reads every `testcase` of a JUnit XML report, in document order, with its outcome: `failed`
/// (a `failure` child), `error`, `skipped`, or `passed` when it has none of them.
///
/// Refused: bytes that are not UTF-8 or hold a NUL, another declared encoding, any DOCTYPE or
/// ENTITY declaration, XML that is not well-formed, a root other than `testsuites` or
/// `testsuite`, and a `testcase` without a name.
pub fn read_junit(bytes: &[u8]) -> Result<Vec<TestCase>, Error> {
    let text = std::str::from_utf8(bytes).map_err(|_| Error::JunitNotUtf8)?;
    if text.contains('\0') {
        return Err(Error::JunitNotUtf8);
    }
    if XML_DECLARATIONS.is_match(text) {
        return Err(Error::JunitDeclaration);
    }
    let head: String = text.chars().take(400).collect();
    if let Some(declared) = DECLARED_ENCODING.captures(&head).and_then(|c| c.get(1)) {
        let encoding = declared.as_str().trim().to_lowercase().replace('_', "-");
        if encoding != "utf-8" && encoding != "utf8" {
            return Err(Error::JunitEncoding(declared.as_str().to_owned()));
        }
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let xml = |reason: &dyn std::fmt::Display| Error::JunitXml(reason.to_string());
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_comments = true;
    // The open elements, each with the index of its case when it is a `testcase`.
    let mut open: Vec<(String, Option<usize>)> = Vec::new();
    let mut cases: Vec<TestCase> = Vec::new();
    let mut root_closed = false;
    let mut seen_root = false;
    loop {
        let event = reader.read_event().map_err(|e| xml(&e))?;
        match event {
            Event::Start(ref element) | Event::Empty(ref element) => {
                if root_closed {
                    return Err(xml(&"junk after document element"));
                }
                let tag = element.name().as_ref().to_owned();
                if !seen_root {
                    seen_root = true;
                    if tag != "testsuites" && tag != "testsuite" {
                        return Err(Error::JunitRoot(tag));
                    }
                }
                if let Some((_, Some(parent))) = open.last() {
                    let outcome = match tag.as_str() {
                        "failure" => Some(CaseOutcome::Failed),
                        "error" => Some(CaseOutcome::Error),
                        "skipped" => Some(CaseOutcome::Skipped),
                        _ => None,
                    };
                    let case = &mut cases[*parent];
                    // failure outranks error, error outranks skipped, whatever their order.
                    if let Some(outcome) = outcome
                        && (case.outcome == CaseOutcome::Passed || outcome < case.outcome)
                    {
                        case.outcome = outcome;
                    }
                }
                let mut case_index = None;
                if tag == "testcase" {
                    let mut classname = String::new();
                    let mut name = String::new();
                    for attribute in element.attributes() {
                        let attribute = attribute.map_err(|e| xml(&e))?;
                        let value = attribute
                            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .map_err(|e| xml(&e))?;
                        match attribute.key.as_ref() {
                            "name" => name = value.into_owned(),
                            "classname" => classname = value.into_owned(),
                            _ => {}
                        }
                    }
                    if name.is_empty() {
                        return Err(Error::JunitNameless);
                    }
                    cases.push(TestCase {
                        classname,
                        name,
                        outcome: CaseOutcome::Passed,
                    });
                    case_index = Some(cases.len() - 1);
                }
                if matches!(event, Event::Start(_)) {
                    open.push((tag, case_index));
                } else if open.is_empty() {
                    root_closed = true;
                }
            }
            Event::End(_) => {
                open.pop();
                if open.is_empty() {
                    root_closed = true;
                }
            }
            Event::Text(ref content) => {
                let outside = open.is_empty();
                if outside && !content.as_ref().trim().is_empty() {
                    return Err(xml(&"text outside the document element"));
                }
            }
            Event::CData(_) if open.is_empty() => {
                return Err(xml(&"text outside the document element"));
            }
            Event::GeneralRef(ref reference) => {
                if open.is_empty() {
                    return Err(xml(&"text outside the document element"));
                }
                let known = if reference.is_char_ref() {
                    reference.resolve_char_ref().map_err(|e| xml(&e))?.is_some()
                } else {
                    quick_xml::escape::resolve_predefined_entity(reference).is_some()
                };
                if !known {
                    return Err(xml(&format!("undefined entity &{};", &**reference)));
                }
            }
            Event::DocType(_) => return Err(Error::JunitDeclaration),
            Event::Eof => break,
            Event::CData(_) | Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
        }
    }
    if !seen_root {
        return Err(xml(&"no element found"));
    }
    if let Some((tag, _)) = open.last() {
        return Err(xml(&format!("unclosed element <{tag}>")));
    }
    Ok(cases)
}

/// The Python reader: a tokenizer that knows strings, comments, brackets and indentation, and
/// just enough statement shapes to find docstrings and the names each statement binds.
mod python {
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
        "==", "!=", "<=", ">=", "->", ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=",
        "**", "//", "<<", ">>", "<>",
    ];
    const COMPOUND: [&str; 10] = [
        "if", "elif", "else", "for", "while", "try", "except", "finally", "with", "async",
    ];
    const NOT_A_TARGET: [&str; 16] = [
        "and", "or", "not", "in", "is", "if", "else", "lambda", "None", "True", "False", "for",
        "await", "yield", "async", "from",
    ];
    const SIMPLE_KEYWORDS: [&str; 12] = [
        "return", "assert", "raise", "del", "pass", "break", "continue", "global", "nonlocal",
        "yield", "await", "lambda",
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
                            return Err(
                                "unexpected character after line continuation character".into()
                            );
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
}

/// The Rust reader: a tokenizer that knows comments, strings, raw strings, chars and lifetimes,
/// and tracks `mod` blocks, attributes and `fn` items.
mod rust {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn graph() -> WorkGraph {
        workgraph::compile(&json!({"work": [
            {"id": "parse", "tier": "economy", "acceptance": [
                {"id": "iso-date", "text": "ISO dates parse"},
                {"id": "empty-input", "text": "Empty input is refused"},
            ]},
            {"id": "render", "tier": "economy", "acceptance": [
                {"id": "column-width", "text": "Columns are padded"},
            ]},
        ]}))
        .expect("compiles")
    }

    fn py(source: &str) -> Vec<Citation> {
        citations(Language::Python, "tests/test_x.py", source).expect("valid Python")
    }

    fn rs(path: &str, source: &str) -> Vec<Citation> {
        citations(Language::Rust, path, source).expect("valid Rust")
    }

    fn case(classname: &str, name: &str, outcome: CaseOutcome) -> TestCase {
        TestCase {
            classname: classname.to_owned(),
            name: name.to_owned(),
            outcome,
        }
    }

    #[test]
    fn markers_keep_citations_flag_malformed_ones_and_skip_placeholders() {
        let found = find_spec_markers(
            "[spec: a/b] [spec:  c/d ] [spec: cap] [spec: a/first thing] [spec: <cap>/<s>] [spec: ]",
        );
        let found: Vec<&str> = found.iter().map(String::as_str).collect();
        assert_eq!(
            found,
            ["a/b", "c/d", "malformed:a/first thing", "malformed:cap"]
        );
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

    #[test]
    fn coverage_sorts_criteria_into_covered_orphans_and_unknown() {
        let mut cited = py("def test_a():\n    \"[spec: parse/iso-date] [spec: parse/typo]\"\n");
        cited.extend(rs(
            "t.rs",
            "// [spec: parse/iso-date]\n#[test]\nfn a() {}\n",
        ));
        let report = coverage(&graph(), &cited);
        assert_eq!(report.criteria, 3);
        assert_eq!(report.covered[0].id, "parse/iso-date");
        assert_eq!(report.covered[0].sources, ["t.rs", "tests/test_x.py"]);
        assert_eq!(report.orphans, ["parse/empty-input", "render/column-width"]);
        assert_eq!(report.unknown[0].id, "parse/typo");
        assert!(!report.complete);
    }

    #[test]
    fn pytest_cases_join_by_module_suffix_class_chain_and_parameters() {
        let cited = py(
            "class TestP:\n    def test_iso(self):\n        \"[spec: parse/iso-date]\"\ndef test_empty():\n    \"[spec: parse/empty-input]\"\ndef test_cols():\n    \"[spec: render/column-width]\"\n",
        );
        let cases = [
            case(
                "repo.tests.test_x.TestP",
                "test_iso[2024]",
                CaseOutcome::Passed,
            ),
            case(
                "repo.tests.test_x.TestP",
                "test_iso[1999]",
                CaseOutcome::Passed,
            ),
            case("test_x", "test_empty", CaseOutcome::Skipped),
            case("other.test_y", "test_cols", CaseOutcome::Passed),
        ];
        let report = execution(&graph(), &cited, &cases);
        assert_eq!(report.matched_testcases, 3);
        assert_eq!(report.executed[0].id, "parse/iso-date");
        assert_eq!(report.cited_not_run[0].id, "parse/empty-input");
        assert_eq!(report.cited_not_run[0].tests[0].outcome, RunStatus::Skipped);
        assert_eq!(
            report.cited_not_run[1].tests[0].outcome,
            RunStatus::NotInJunit
        );
        assert!(!report.executed_every_criterion());
    }

    #[test]
    fn nextest_cases_join_by_test_path_and_binary() {
        let lib = rs(
            "src/lib.rs",
            "#[cfg(test)]\nmod tests {\n    // [spec: parse/iso-date]\n    #[test]\n    fn iso() {}\n}\n",
        );
        let module = rs(
            "src/render/mod.rs",
            "// [spec: render/column-width]\n#[test]\nfn cols() {}\n",
        );
        let it = rs(
            "tests/it/parse.rs",
            "// [spec: parse/empty-input]\n#[test]\nfn empty() {}\n",
        );
        let cited: Vec<Citation> = lib.into_iter().chain(module).chain(it).collect();
        let cases = [
            case("mycrate", "tests::iso", CaseOutcome::Passed),
            case("mycrate", "render::cols", CaseOutcome::Passed),
            case("mycrate::it", "parse::empty", CaseOutcome::Failed),
            case("mycrate::it", "other::empty", CaseOutcome::Passed),
        ];
        let report = execution(&graph(), &cited, &cases);
        assert_eq!(report.matched_testcases, 3);
        let executed: Vec<&str> = report.executed.iter().map(|b| b.id.as_str()).collect();
        assert_eq!(executed, ["parse/iso-date", "render/column-width"]);
        assert_eq!(report.failed[0].id, "parse/empty-input");
    }

    #[test]
    fn control_a_case_in_two_modules_is_ambiguous_and_a_class_citation_never_runs() {
        let source = "class TestP:\n    \"[spec: parse/iso-date]\"\ndef test_a():\n    \"[spec: parse/empty-input]\"\n";
        let cited = citations(Language::Python, "test_x.py", source).expect("valid Python");
        let cases = [
            case("a.test_x", "test_a", CaseOutcome::Passed),
            case("b.test_x", "test_a", CaseOutcome::Passed),
        ];
        let report = execution(&graph(), &cited, &cases);
        let outcomes: Vec<RunStatus> = report
            .cited_not_run
            .iter()
            .map(|b| b.tests[0].outcome)
            .collect();
        assert_eq!(outcomes, [RunStatus::Ambiguous, RunStatus::NotATest]);
        assert!(report.executed.is_empty());
    }

    #[test]
    fn a_failure_outranks_a_pass_elsewhere() {
        let cited = py(
            "def test_a():\n    \"[spec: parse/iso-date]\"\ndef test_b():\n    \"[spec: parse/iso-date]\"\n",
        );
        let cases = [
            case("test_x", "test_a", CaseOutcome::Passed),
            case("test_x", "test_b", CaseOutcome::Error),
        ];
        let report = execution(&graph(), &cited, &cases);
        assert_eq!(report.failed[0].id, "parse/iso-date");
    }

    #[test]
    fn junit_outcomes_come_from_child_tags() {
        let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="s">
  <testcase classname="m" name="a &amp; b"/>
  <testcase classname="m" name="f"><system-out>x</system-out><failure message="no"/></testcase>
  <testcase classname="m" name="e"><error/></testcase>
  <testcase classname="m" name="s"><skipped/></testcase>
</testsuite></testsuites>"#;
        let cases = read_junit(xml).expect("reads");
        let outcomes: Vec<(&str, CaseOutcome)> =
            cases.iter().map(|c| (c.name.as_str(), c.outcome)).collect();
        assert_eq!(
            outcomes,
            [
                ("a & b", CaseOutcome::Passed),
                ("f", CaseOutcome::Failed),
                ("e", CaseOutcome::Error),
                ("s", CaseOutcome::Skipped)
            ]
        );
    }

    #[test]
    fn control_hostile_or_broken_reports_are_refused() {
        let refusals: [(&[u8], &str); 8] = [
            (
                b"<!DOCTYPE x [<!ENTITY a \"b\">]><testsuite/>",
                "a JUnit report with a DOCTYPE or ENTITY declaration is refused",
            ),
            (
                b"<testsuite>\xff</testsuite>",
                "a JUnit report must be UTF-8",
            ),
            (
                b"<?xml version='1.0' encoding='latin-1'?><testsuite/>",
                "a JUnit report must be UTF-8, this one declares 'latin-1'",
            ),
            (
                b"<report/>",
                "not a JUnit report: the root element is <report>",
            ),
            (
                b"<testsuite><testcase/></testsuite>",
                "a JUnit testcase has no name",
            ),
            (
                b"<testsuite><testcase name='a'></testsuite>",
                "the JUnit report is not valid XML",
            ),
            (
                b"<testsuite/><testsuite/>",
                "the JUnit report is not valid XML",
            ),
            (
                b"<testsuite>&bogus;</testsuite>",
                "the JUnit report is not valid XML",
            ),
        ];
        for (bytes, message) in refusals {
            let error = read_junit(bytes).expect_err("refused").to_string();
            assert!(error.starts_with(message), "{error}");
        }
    }

    #[test]
    fn sources_newer_than_the_oldest_report_are_stale() {
        let sources = [("a.py".to_owned(), 10.0), ("b.rs".to_owned(), 30.0)];
        assert_eq!(stale_sources(&sources, &[20.0, 40.0]), ["b.rs"]);
        assert!(stale_sources(&sources, &[]).is_empty());
    }

    proptest! {
        #[test]
        fn no_python_source_panics(source in "[a-z_ :=(){}\\[\\]'\"\\\\#@\\n\\t.,;]{0,200}") {
            let _ = citations(Language::Python, "t.py", &source);
        }

        #[test]
        fn no_rust_source_panics(source in "[a-z_ :=(){}\\[\\]'\"\\\\#!/*\\n.,;]{0,200}") {
            let _ = citations(Language::Rust, "t.rs", &source);
        }

        #[test]
        fn no_report_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = read_junit(&bytes);
        }

        #[test]
        fn no_xml_shaped_report_panics(text in "[<>/a-z =\"'&;!?\\[\\]-]{0,120}") {
            let _ = read_junit(format!("<testsuite>{text}</testsuite>").as_bytes());
        }

        #[test]
        fn a_marker_is_either_citable_or_flagged(raw in "\\PC{0,30}") {
            for marker in find_spec_markers(&format!("[spec: {raw}]")) {
                prop_assert!(workgraph::is_citable(&marker) || marker.starts_with("malformed:"));
            }
        }
    }
}
