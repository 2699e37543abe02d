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
//! use hpp_core::coverage::{self, Language};
//! let spec = serde_json::json!({"work": [
//!     {"id": "parse", "tier": "economy", "acceptance": [{"id": "iso-date", "text": "ISO dates parse"}]},
//! ]});
//! let graph = hpp_core::workgraph::compile(&spec).expect("compiles");
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

use regex::Regex;
use serde::Serialize;

pub use crate::language::Language;
use crate::workgraph::{self, WorkGraph};

mod junit;
mod python;
mod rust;

pub use junit::read_junit;

/// The schema of a coverage report (citations only).
pub const COVERAGE_SCHEMA: &str = "hpp.spec-coverage/v1";
/// The schema of an execution report (citations joined to JUnit cases).
pub const EXECUTION_SCHEMA: &str = "hpp.spec-execution/v1";

static ANY_MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[spec:\s*([^\]]*?)\s*\]").expect("the marker pattern compiles"));

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
    match Language::of_path(path) {
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
    fn sources_newer_than_the_oldest_report_are_stale() {
        let sources = [("a.py".to_owned(), 10.0), ("b.rs".to_owned(), 30.0)];
        assert_eq!(stale_sources(&sources, &[20.0, 40.0]), ["b.rs"]);
        assert!(stale_sources(&sources, &[]).is_empty());
    }

    proptest! {
        #[test]
        fn a_marker_is_either_citable_or_flagged(raw in "\\PC{0,30}") {
            for marker in find_spec_markers(&format!("[spec: {raw}]")) {
                prop_assert!(workgraph::is_citable(&marker) || marker.starts_with("malformed:"));
            }
        }
    }
}
