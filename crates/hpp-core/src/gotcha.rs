//! Gotcha memory (CONCEPTS.md "module": gotcha-memory): failures recorded by error family, and
//! promoted to a *gotcha* only when the same failure recurs.
//!
//! A failure is classified into one of the reference's families (fatal 100, manual 90,
//! instrument 85, dependency 75, state 70, config 65, ratelimit 55, lock 50, transient 40,
//! unknown 35), each with a strategy. Its message is redacted by shape before it is stored:
//! every secret-shaped span becomes `[REDACTED:<kind>:<len>]` (private-key, url-credential,
//! basic-credential, auth-header, provider-token, jwt, assignment, high-entropy), and a message
//! that still looks secret to [`crate::secrets`] is replaced whole. When `min_count` (3) failures
//! of the same task key and family fall within `window_hours` (24), the pair becomes a gotcha;
//! the top five gotchas (by family priority, then occurrences, then recency) are the preamble
//! injected before the next run.
//!
//! Pure: values in, values out.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// The failure record's schema.
pub const FAILURE_SCHEMA: &str = "hpp.failure/v1";
/// The gotcha record's schema.
pub const GOTCHA_SCHEMA: &str = "hpp.gotcha/v1";
/// Failures needed to promote a gotcha, by default.
pub const DEFAULT_MIN_COUNT: usize = 3;
/// The blob of each commit of the failures log (`refs/hpp/gotchas/failures`).
pub const FAILURE_FILE: &str = "failure.json";
/// The blob of each commit of the promoted log (`refs/hpp/gotchas/promoted`).
pub const GOTCHA_FILE: &str = "gotcha.json";
/// The recurrence window in hours, by default.
pub const DEFAULT_WINDOW_HOURS: i64 = 24;
/// How many gotchas the preamble shows, by default.
pub const PREAMBLE_LIMIT: usize = 5;
/// Longest stored message, in characters (the rest is cut).
pub const MAX_MESSAGE_CHARS: usize = 2000;

/// Why a failure was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The task key is empty, too long or multi-line.
    #[error("invalid task key {0:?}: 1-200 characters on one line")]
    InvalidTask(String),
    /// The task key has the shape of a secret.
    #[error(
        "the task key looks like a secret; gotchas are pushed with the repository, so it is refused"
    )]
    SecretTask,
    /// The message is empty.
    #[error("the failure message is empty")]
    EmptyMessage,
    /// The recurrence settings make no sense.
    #[error("invalid recurrence: min_count must be at least 1 and window_hours at least 1")]
    InvalidRecurrence,
    /// A stored record does not follow its schema.
    #[error("invalid gotcha-memory record: {0}")]
    Invalid(String),
}

/// An error family, from the reference's error strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// A crash or a panic.
    Fatal,
    /// Needs a person: credentials, permissions, approvals.
    Manual,
    /// The measuring instrument itself failed: a tool that is missing or cannot start.
    Instrument,
    /// A package, module or version that cannot be resolved.
    Dependency,
    /// Repository or workspace state: conflicts, rejected pushes, stale state.
    State,
    /// Configuration: unknown options, unset variables.
    Config,
    /// Rate limits and quotas.
    Ratelimit,
    /// Locks held by another process.
    Lock,
    /// Network hiccups and timeouts.
    Transient,
    /// None of the above.
    Unknown,
}

/// What to do about a family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Try again as it is.
    Retry,
    /// Undo the partial change, then try again.
    RollbackAndRetry,
    /// Skip it and move on.
    Skip,
    /// Stop and ask a person.
    Escalate,
    /// Follow the recovery steps for it (install, configure, resolve).
    RecoveryWorkflow,
    /// Measure again with a working instrument before trusting any verdict.
    Remeasure,
}

impl Family {
    /// Every family, highest priority first.
    pub const ALL: [Family; 10] = [
        Family::Fatal,
        Family::Manual,
        Family::Instrument,
        Family::Dependency,
        Family::State,
        Family::Config,
        Family::Ratelimit,
        Family::Lock,
        Family::Transient,
        Family::Unknown,
    ];

    /// The family's priority (higher is shown first).
    pub fn priority(self) -> u32 {
        match self {
            Family::Fatal => 100,
            Family::Manual => 90,
            Family::Instrument => 85,
            Family::Dependency => 75,
            Family::State => 70,
            Family::Config => 65,
            Family::Ratelimit => 55,
            Family::Lock => 50,
            Family::Transient => 40,
            Family::Unknown => 35,
        }
    }

    /// The strategy for the family.
    pub fn strategy(self) -> Strategy {
        match self {
            Family::Fatal | Family::Manual | Family::Unknown => Strategy::Escalate,
            Family::Instrument => Strategy::Remeasure,
            Family::Dependency | Family::Config => Strategy::RecoveryWorkflow,
            Family::State => Strategy::RollbackAndRetry,
            Family::Ratelimit | Family::Lock | Family::Transient => Strategy::Retry,
        }
    }

    /// The family's name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Fatal => "fatal",
            Family::Manual => "manual",
            Family::Instrument => "instrument",
            Family::Dependency => "dependency",
            Family::State => "state",
            Family::Config => "config",
            Family::Ratelimit => "ratelimit",
            Family::Lock => "lock",
            Family::Transient => "transient",
            Family::Unknown => "unknown",
        }
    }

    fn pattern(self) -> Option<&'static str> {
        Some(match self {
            Family::Fatal => {
                r"(?i)segmentation fault|panicked at|out of memory|core dumped|fatal runtime error|stack overflow|\bSIGSEGV\b|\bSIGABRT\b"
            }
            Family::Manual => {
                r"(?i)permission denied|unauthori[sz]ed|authentication (failed|required)|\b401\b|\b403\b|forbidden|login required|approval required|access denied"
            }
            Family::Instrument => {
                r"(?i)command not found|not found in path|could not start|exec format error|no such command|is not recognized as|cannot execute"
            }
            Family::Dependency => {
                r"(?i)could not resolve|failed to resolve|no matching (package|version)|module not found|cannot find module|modulenotfounderror|unresolved import|failed to download|version solving failed|missing dependency"
            }
            Family::State => {
                r"(?i)merge conflict|\bconflict\b|non-fast-forward|\[rejected\]|detached head|not a git repository|already exists|uncommitted changes|would be overwritten|out of date"
            }
            Family::Config => {
                r"(?i)unknown (option|flag|argument)|unrecognized (option|argument)|unexpected argument|invalid (config|configuration|value)|environment variable \S+ (is )?not set|missing (config|configuration|required (option|argument))"
            }
            Family::Ratelimit => r"(?i)rate limit|too many requests|\b429\b|quota exceeded|throttl",
            Family::Lock => {
                r"(?i)\.lock\b|\block(ed)? by another|could not (acquire|obtain) (a |the )?lock|resource busy|\bEBUSY\b|used by another process|waiting for file lock"
            }
            Family::Transient => {
                r"(?i)connection (reset|refused|closed)|temporar(il)?y (unavailable|failure)|timed? ?out|\bETIMEDOUT\b|\bECONNRESET\b|\b50[234]\b|network (is )?unreachable|try again"
            }
            Family::Unknown => return None,
        })
    }
}

static FAMILY_PATTERNS: LazyLock<Vec<(Family, Regex)>> = LazyLock::new(|| {
    Family::ALL
        .iter()
        .filter_map(|f| {
            f.pattern().map(|p| {
                (
                    *f,
                    Regex::new(p).expect("family patterns are valid regexes"),
                )
            })
        })
        .collect()
});

/// Classifies a failure message: the highest-priority family whose shape it has.
pub fn classify(message: &str) -> Family {
    FAMILY_PATTERNS
        .iter()
        .find(|(_, re)| re.is_match(message))
        .map_or(Family::Unknown, |(f, _)| *f)
}

/// The redaction shapes, in the order they are applied.
static REDACTIONS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        (
            "private-key",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
        ),
        ("url-credential", r"[^\s:/@]+:[^\s@/]+@"),
        (
            "auth-header",
            r"(?i)(?:proxy-)?authorization\s*:\s*(?:bearer|basic|token|digest)?\s*[^\s,;]+",
        ),
        ("basic-credential", r"(?i)\bbasic\s+[A-Za-z0-9+/]{8,}={0,2}"),
        (
            "jwt",
            r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        ),
        (
            "assignment",
            r#"(?i)[A-Za-z0-9_.-]*(?:api[_-]?key|access[_-]?key|private[_-]?key|secret|token|password|passwd|pwd)[A-Za-z0-9_.-]*\s*[:=]\s*(?:"[^"]*"|'[^']*'|\S+)"#,
        ),
        (
            "provider-token",
            r"(?i:\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*)|\bsk-[A-Za-z0-9_-]{8,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_-]{20,}|\bxox[abposr]-[A-Za-z0-9-]{10,}|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{35}",
        ),
        ("high-entropy", r"[A-Za-z0-9+/_-]{32,}={0,2}"),
    ]
    .into_iter()
    .map(|(kind, p)| (kind, Regex::new(p).expect("redaction patterns are valid regexes")))
    .collect()
});

fn high_entropy(span: &str) -> bool {
    let hex_only = span.bytes().all(|b| b.is_ascii_hexdigit());
    let lower = span.bytes().any(|b| b.is_ascii_lowercase());
    let upper = span.bytes().any(|b| b.is_ascii_uppercase());
    let digit = span.bytes().any(|b| b.is_ascii_digit());
    !hex_only && lower && upper && digit
}

/// A redacted text and the kinds of what was taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    /// The text with every secret-shaped span replaced by `[REDACTED:<kind>:<len>]`.
    pub text: String,
    /// The kinds replaced, in order, one per span.
    pub kinds: Vec<String>,
}

/// Replaces every secret-shaped span with `[REDACTED:<kind>:<len>]` (len in characters). A text
/// that still looks secret afterwards is replaced whole (`[REDACTED:message:<len>]`).
pub fn redact(text: &str) -> Redacted {
    let mut out = text.to_owned();
    let mut kinds = Vec::new();
    for (kind, re) in REDACTIONS.iter() {
        let mut next = String::with_capacity(out.len());
        let mut last = 0;
        for m in re.find_iter(&out) {
            let span = m.as_str();
            let before = &out[..m.start()];
            let is_marker = span.contains("[REDACTED:")
                || before
                    .rfind("[REDACTED:")
                    .is_some_and(|open| before.rfind(']').is_none_or(|close| close < open));
            let keep = is_marker
                || (*kind == "high-entropy" && !high_entropy(span))
                || (*kind == "url-credential" && !out[..m.start()].ends_with("//"));
            next.push_str(&out[last..m.start()]);
            if keep {
                next.push_str(span);
            } else {
                let len = span.trim_end_matches('@').chars().count();
                next.push_str(&format!("[REDACTED:{kind}:{len}]"));
                if *kind == "url-credential" {
                    next.push('@');
                }
                kinds.push((*kind).to_owned());
            }
            last = m.end();
        }
        next.push_str(&out[last..]);
        out = next;
    }
    if crate::secrets::looks_secret(&out) {
        return Redacted {
            text: format!("[REDACTED:message:{}]", text.chars().count()),
            kinds: vec!["message".to_owned()],
        };
    }
    Redacted { text: out, kinds }
}

/// One recorded failure (`hpp.failure/v1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// Always [`FAILURE_SCHEMA`].
    pub schema: String,
    /// What was being done (`Bash:cargo test`, a task name).
    pub task_key: String,
    /// The error family.
    pub family: Family,
    /// The family's priority.
    pub priority: u32,
    /// The family's strategy.
    pub strategy: Strategy,
    /// The redacted message.
    pub message: String,
    /// The kinds redacted out of it.
    pub redactions: Vec<String>,
    /// When it failed, RFC 3339 UTC.
    pub at: String,
    /// Who recorded it: `cli` or `hook`.
    pub source: String,
    /// The host's tool call id, when recorded by a hook (for de-duplication).
    pub tool_use_id: Option<String>,
}

/// A promoted gotcha (`hpp.gotcha/v1`), written once when a failure first recurs enough.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gotcha {
    /// Always [`GOTCHA_SCHEMA`].
    pub schema: String,
    /// The task key.
    pub task_key: String,
    /// The family.
    pub family: Family,
    /// The family's priority.
    pub priority: u32,
    /// The family's strategy.
    pub strategy: Strategy,
    /// Failures in the window when it was promoted.
    pub occurrences: usize,
    /// The rule it passed.
    pub min_count: usize,
    /// The window of that rule, in hours.
    pub window_hours: i64,
    /// The first failure in that window.
    pub first_at: String,
    /// The failure that promoted it.
    pub promoted_at: String,
    /// The redacted message of that failure.
    pub message: String,
}

fn rfc3339(t: OffsetDateTime) -> String {
    crate::timestamp::utc_seconds(t)
}

fn parse_time(text: &str) -> Option<OffsetDateTime> {
    crate::timestamp::parse(text)
}

/// Builds a failure record: checks the task key, classifies and redacts the message.
pub fn failure(
    task_key: &str,
    message: &str,
    at: OffsetDateTime,
    source: &str,
    tool_use_id: Option<String>,
) -> Result<Failure, Error> {
    let task = task_key.trim();
    if task.is_empty() || task.chars().count() > 200 || task.contains(['\n', '\r']) {
        return Err(Error::InvalidTask(task_key.to_owned()));
    }
    if crate::secrets::looks_secret(task) || redact(task).text != task {
        return Err(Error::SecretTask);
    }
    if message.trim().is_empty() {
        return Err(Error::EmptyMessage);
    }
    // Classify the raw text, so a redaction cannot hide the family; store only the redacted one.
    let family = classify(message);
    let redacted = redact(message.trim());
    let mut text: String = redacted.text.chars().take(MAX_MESSAGE_CHARS).collect();
    if text.chars().count() < redacted.text.chars().count() {
        text.push('…');
    }
    Ok(Failure {
        schema: FAILURE_SCHEMA.to_owned(),
        task_key: task.to_owned(),
        family,
        priority: family.priority(),
        strategy: family.strategy(),
        message: text,
        redactions: redacted.kinds,
        at: rfc3339(at),
        source: source.to_owned(),
        tool_use_id: tool_use_id.filter(|id| !id.is_empty()),
    })
}

/// Parses a stored failure.
pub fn parse_failure(bytes: &[u8]) -> Result<Failure, Error> {
    let f: Failure = serde_json::from_slice(bytes).map_err(|e| Error::Invalid(e.to_string()))?;
    if f.schema != FAILURE_SCHEMA || parse_time(&f.at).is_none() {
        return Err(Error::Invalid(format!(
            "not an {FAILURE_SCHEMA} record with an RFC 3339 time"
        )));
    }
    Ok(f)
}

/// Parses a stored gotcha.
pub fn parse_gotcha(bytes: &[u8]) -> Result<Gotcha, Error> {
    let g: Gotcha = serde_json::from_slice(bytes).map_err(|e| Error::Invalid(e.to_string()))?;
    if g.schema != GOTCHA_SCHEMA {
        return Err(Error::Invalid(format!("not an {GOTCHA_SCHEMA} record")));
    }
    Ok(g)
}

/// The recurrence rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recurrence {
    /// Failures needed.
    pub min_count: usize,
    /// Within this many hours.
    pub window_hours: i64,
}

impl Default for Recurrence {
    fn default() -> Self {
        Self {
            min_count: DEFAULT_MIN_COUNT,
            window_hours: DEFAULT_WINDOW_HOURS,
        }
    }
}

impl Recurrence {
    /// Checks the rule.
    pub fn new(min_count: usize, window_hours: i64) -> Result<Self, Error> {
        if min_count == 0 || window_hours < 1 {
            return Err(Error::InvalidRecurrence);
        }
        Ok(Self {
            min_count,
            window_hours,
        })
    }
}

/// Decides whether `latest` (already among `failures`) promotes its task key and family to a
/// gotcha: the failures of that pair in the window ending at `latest.at` reach `min_count`, and
/// no gotcha exists for the pair yet.
pub fn promote(
    failures: &[Failure],
    gotchas: &[Gotcha],
    latest: &Failure,
    rule: Recurrence,
) -> Option<Gotcha> {
    if gotchas
        .iter()
        .any(|g| g.task_key == latest.task_key && g.family == latest.family)
    {
        return None;
    }
    let end = parse_time(&latest.at)?;
    let start = end - time::Duration::hours(rule.window_hours);
    let mut in_window: Vec<OffsetDateTime> = failures
        .iter()
        .filter(|f| f.task_key == latest.task_key && f.family == latest.family)
        .filter_map(|f| parse_time(&f.at))
        .filter(|t| *t > start && *t <= end)
        .collect();
    if in_window.len() < rule.min_count {
        return None;
    }
    in_window.sort();
    Some(Gotcha {
        schema: GOTCHA_SCHEMA.to_owned(),
        task_key: latest.task_key.clone(),
        family: latest.family,
        priority: latest.priority,
        strategy: latest.strategy,
        occurrences: in_window.len(),
        min_count: rule.min_count,
        window_hours: rule.window_hours,
        first_at: rfc3339(in_window[0]),
        promoted_at: latest.at.clone(),
        message: latest.message.clone(),
    })
}

/// A gotcha with what is known of it now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ranked {
    /// The gotcha as promoted.
    pub gotcha: Gotcha,
    /// Every recorded failure of its task key and family.
    pub occurrences: usize,
    /// The latest of them.
    pub last_at: String,
    /// The latest message.
    pub last_message: String,
}

/// Ranks gotchas: family priority, then occurrences, then the latest failure, highest first;
/// only those of `task` when given.
pub fn rank(gotchas: &[Gotcha], failures: &[Failure], task: Option<&str>) -> Vec<Ranked> {
    let mut ranked: Vec<Ranked> = gotchas
        .iter()
        .filter(|g| task.is_none_or(|t| g.task_key == t))
        .map(|g| {
            let mine: Vec<&Failure> = failures
                .iter()
                .filter(|f| f.task_key == g.task_key && f.family == g.family)
                .collect();
            let last = mine.iter().max_by(|a, b| a.at.cmp(&b.at));
            Ranked {
                gotcha: g.clone(),
                occurrences: mine.len().max(g.occurrences),
                last_at: last.map_or_else(|| g.promoted_at.clone(), |f| f.at.clone()),
                last_message: last.map_or_else(|| g.message.clone(), |f| f.message.clone()),
            }
        })
        .collect();
    ranked.sort_by(|a, b| {
        (b.gotcha.priority, b.occurrences, &b.last_at).cmp(&(
            a.gotcha.priority,
            a.occurrences,
            &a.last_at,
        ))
    });
    ranked
}

/// Renders the preamble injected before the next run (empty when there is no gotcha).
pub fn preamble(ranked: &[Ranked], limit: usize) -> String {
    if ranked.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "Known gotchas in this repository (git hpp gotcha-memory; failures that recurred):\n",
    );
    for (i, r) in ranked.iter().take(limit).enumerate() {
        let first_line = r.last_message.lines().next().unwrap_or_default();
        let shown: String = first_line.chars().take(300).collect();
        out.push_str(&format!(
            "{}. [{} · {}x · strategy {}] {}: {}\n",
            i + 1,
            r.gotcha.family.name(),
            r.occurrences,
            serde_json::to_value(r.gotcha.strategy)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            r.gotcha.task_key,
            shown
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> OffsetDateTime {
        crate::timestamp::parse(text).unwrap()
    }

    #[test]
    fn families_follow_the_reference_priorities() {
        assert_eq!(
            classify("thread 'main' panicked at src/x.rs"),
            Family::Fatal
        );
        assert_eq!(
            classify("bash: cargoo: command not found"),
            Family::Instrument
        );
        assert_eq!(
            classify("fatal: Unable to create '.git/index.lock': File exists"),
            Family::Lock
        );
        assert_eq!(
            classify("! [rejected] main -> main (non-fast-forward)"),
            Family::State
        );
        assert_eq!(classify("HTTP 429 Too Many Requests"), Family::Ratelimit);
        assert_eq!(classify("connection reset by peer"), Family::Transient);
        assert_eq!(
            classify("error: unexpected argument '--frob'"),
            Family::Config
        );
        assert_eq!(classify("assertion failed: left == right"), Family::Unknown);
        let priorities: Vec<u32> = Family::ALL.iter().map(|f| f.priority()).collect();
        assert_eq!(priorities, [100, 90, 85, 75, 70, 65, 55, 50, 40, 35]);
    }

    #[test]
    fn secrets_are_redacted_by_shape_with_kind_and_length() {
        let cases = [
            (
                "curl https://bob:hunter22@example.com/x",
                "url-credential",
                "hunter22",
            ),
            (
                "Authorization: Bearer abcdefghijklmnop0123456789",
                "auth-header",
                "abcdefghijklmnop",
            ),
            (
                "export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ",
                "assignment",
                "ghp_0123",
            ),
            (
                "key ghp_0123456789abcdefghijABCDEFGHIJ used",
                "provider-token",
                "ghp_0123",
            ),
            (
                "key sk-abcdefgh12345678 rejected",
                "provider-token",
                "sk-abcdefgh",
            ),
            ("password=hunter2 failed", "assignment", "hunter2"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz",
                "jwt",
                "eyJhbGci",
            ),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
                "private-key",
                "b3BlbnNzaC1rZXk",
            ),
            (
                "token Zq8XvB3nR7tYp2LmK9wQ4sD6fH1jA5cE0gU in header",
                "high-entropy",
                "Zq8XvB3n",
            ),
        ];
        for (text, kind, secret) in cases {
            let r = redact(text);
            assert!(!r.text.contains(secret), "{text} -> {}", r.text);
            assert!(
                r.text.contains(&format!("[REDACTED:{kind}:")),
                "{text} -> {}",
                r.text
            );
            assert!(!crate::secrets::looks_secret(&r.text), "{}", r.text);
        }
        let r = redact("password=hunter2");
        assert_eq!(r.text, "[REDACTED:assignment:16]");
    }

    #[test]
    fn control_plain_errors_are_not_redacted() {
        for text in [
            "error[E0425]: cannot find value `x` in this scope",
            "commit 0123456789abcdef0123456789abcdef01234567 not found",
            "our secret sauce is that no password is involved",
        ] {
            assert_eq!(redact(text).text, text);
        }
    }

    #[test]
    fn a_gotcha_is_promoted_only_on_recurrence_within_the_window() {
        let rule = Recurrence::default();
        let mk = |t: &str| {
            failure(
                "Bash:cargo test",
                "connection reset by peer",
                at(t),
                "cli",
                None,
            )
            .unwrap()
        };
        let mut failures = vec![mk("2026-01-01T00:00:00Z"), mk("2026-01-01T01:00:00Z")];
        assert!(promote(&failures, &[], &failures[1].clone(), rule).is_none());
        // The third is 30 hours after the first: only two fall in the window.
        failures.push(mk("2026-01-02T06:00:00Z"));
        assert!(promote(&failures, &[], &failures[2].clone(), rule).is_none());
        failures.push(mk("2026-01-02T07:00:00Z"));
        failures.push(mk("2026-01-02T08:00:00Z"));
        let g = promote(&failures, &[], &failures[4].clone(), rule).expect("three in 24 h");
        assert_eq!((g.occurrences, g.family), (3, Family::Transient));
        assert!(
            promote(
                &failures,
                std::slice::from_ref(&g),
                &failures[4].clone(),
                rule
            )
            .is_none()
        );
        let other = failure(
            "other",
            "connection reset",
            at("2026-01-02T08:00:00Z"),
            "cli",
            None,
        )
        .unwrap();
        let ranked = rank(&[g], &failures, None);
        assert_eq!(ranked[0].occurrences, 5);
        let text = preamble(&ranked, PREAMBLE_LIMIT);
        assert!(text.contains("1. [transient · 5x · strategy retry] Bash:cargo test"));
        assert!(rank(&[], &[other], None).is_empty());
    }

    #[test]
    fn control_bad_failures_are_refused() {
        let now = at("2026-01-01T00:00:00Z");
        assert!(matches!(
            failure("", "x", now, "cli", None),
            Err(Error::InvalidTask(_))
        ));
        assert!(matches!(
            failure("a\nb", "x", now, "cli", None),
            Err(Error::InvalidTask(_))
        ));
        assert_eq!(
            failure("password=x", "x", now, "cli", None),
            Err(Error::SecretTask)
        );
        assert_eq!(
            failure("t", "  ", now, "cli", None),
            Err(Error::EmptyMessage)
        );
        assert_eq!(Recurrence::new(0, 24), Err(Error::InvalidRecurrence));
        assert!(parse_failure(b"{\"schema\":\"x\"}").is_err());
    }
}
