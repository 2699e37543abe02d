//! Continuity (CONCEPTS.md "module": continuity-kit): the handoff a session leaves for the next
//! one, written at Stop or PreCompact and injected at SessionStart.
//!
//! A handoff says what is done, what is next and the command to run first to check that the
//! next step still makes sense, with the git state (head, branch, dirty paths) and the loop state
//! it was written against. The schema follows the reference's handoff v2.0 (`schema_version`
//! "2.0", `handoff_id` `HO-YYYYMMDD-HHMM-<slug>`, `trigger`, `quality`, `session`, `state`, `git`,
//! `next_step[]` with a required `verify_first_cmd`, `stale_when`, `valid_until`, at most 65536
//! bytes, no unknown keys), with a `schema` field (`hpp.handoff/v2`) like every record here and
//! one addition, `loop`: the harness loop it was written in. Whether the head moved since is
//! computed when the handoff is read, never stored.
//!
//! Pure: values in, values out. Texts the user gives are refused when they have the shape of a
//! secret ([`crate::secrets`]), because a handoff is pushed with the repository.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// The record's schema name.
pub const SCHEMA: &str = "hpp.handoff/v2";
/// The reference's schema version, kept as a field.
pub const SCHEMA_VERSION: &str = "2.0";
/// The largest handoff accepted, in bytes of canonical JSON.
pub const MAX_BYTES: usize = 65536;
/// The lane used when none is named.
pub const DEFAULT_LANE: &str = "solo";
/// The blob of each commit of a lane's handoff log (`refs/hpp/handoffs/<lane>`).
pub const FILE: &str = "handoff.json";
/// Days after which a handoff is stale, and after which it is no longer valid.
pub const STALE_DAYS: i64 = 7;
/// At most this many `git status --porcelain` lines are kept in a handoff.
pub const MAX_PORCELAIN: usize = 200;

/// Why a handoff was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The lane name cannot be a ref component.
    #[error(
        "invalid lane {0:?}: a lane is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    )]
    InvalidLane(String),
    /// The trigger is not one of the reference's.
    #[error("invalid trigger {0:?}: expected pre-clear, precompact, stop, manual or degraded-auto")]
    InvalidTrigger(String),
    /// A summary was given but is empty.
    #[error("the handoff summary is empty: say what is done")]
    EmptySummary,
    /// A next step without the command to verify first.
    #[error("--next needs --verify-first CMD: every next step names the command to verify first")]
    NextWithoutVerify,
    /// A verify-first command without a next step.
    #[error("--verify-first needs --next: it is the command to run before that next step")]
    VerifyWithoutNext,
    /// A field the user gave has the shape of a secret.
    #[error(
        "the handoff {0} looks like a secret; handoffs are pushed with the repository, so it is refused"
    )]
    Secret(&'static str),
    /// The record is larger than [`MAX_BYTES`].
    #[error("the handoff is {0} bytes; at most 65536 are allowed")]
    TooLarge(usize),
    /// A stored record does not follow the schema.
    #[error("invalid handoff record: {0}")]
    Invalid(String),
}

/// What made the handoff be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trigger {
    /// Before the user clears the context.
    PreClear,
    /// Before the host compacts the context.
    Precompact,
    /// When the agent stops.
    Stop,
    /// Written by hand.
    Manual,
    /// Written automatically with what could be measured only.
    DegradedAuto,
}

impl std::str::FromStr for Trigger {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        serde_json::from_value(serde_json::Value::String(text.to_owned()))
            .map_err(|_| Error::InvalidTrigger(text.to_owned()))
    }
}

/// How complete a handoff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quality {
    /// Written with a summary the agent gave.
    Full,
    /// Written by a hook from measured state only (git and loop), without the agent's summary.
    DegradedAuto,
}

/// The session that wrote the handoff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// The host's session id, when known.
    pub session_id: Option<String>,
    /// The lane.
    pub lane_id: String,
}

/// What is done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// One paragraph: what is done and where things stand.
    pub summary: String,
}

/// The git state the handoff was written against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitState {
    /// The HEAD commit, or `None` before the first commit.
    pub head: Option<String>,
    /// The branch, or `None` when HEAD is detached.
    pub branch: Option<String>,
    /// Whether tracked or untracked files differ from HEAD.
    pub dirty: bool,
    /// How many untracked files there are.
    pub untracked: usize,
    /// `git status --porcelain` lines (at most [`MAX_PORCELAIN`]).
    pub porcelain: Vec<String>,
}

impl GitState {
    /// Builds the state from HEAD, the branch and `git status --porcelain` lines.
    pub fn from_porcelain(
        head: Option<String>,
        branch: Option<String>,
        porcelain: Vec<String>,
    ) -> Self {
        let untracked = porcelain.iter().filter(|l| l.starts_with("??")).count();
        let mut porcelain = porcelain;
        porcelain.truncate(MAX_PORCELAIN);
        Self {
            head,
            branch,
            dirty: !porcelain.is_empty(),
            untracked,
            porcelain,
        }
    }
}

/// The harness loop the handoff was written in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSummary {
    /// The loop's name.
    pub id: String,
    /// Its state.
    pub state: String,
    /// How many events it holds.
    pub event_count: usize,
    /// The manifest's next step for that state.
    pub next_step: String,
}

/// One next step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NextStep {
    /// 1-based order.
    pub order: usize,
    /// What to do.
    pub description: String,
    /// The command to run first, to check the step still makes sense.
    pub verify_first_cmd: String,
    /// Whether doing the step twice is harmless.
    pub idempotent: bool,
}

/// When the handoff goes stale.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaleWhen {
    /// Stale when HEAD moved since it was written.
    pub head_moved: bool,
    /// Stale after this many days.
    pub days: i64,
}

/// A handoff record (`hpp.handoff/v2`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handoff {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: String,
    /// `HO-YYYYMMDD-HHMM-<slug>`.
    pub handoff_id: String,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// What made it be written.
    pub trigger: Trigger,
    /// How complete it is.
    pub quality: Quality,
    /// Who wrote it.
    pub session: Session,
    /// What is done.
    pub state: State,
    /// The git state.
    pub git: GitState,
    /// The loop state, when a loop was found.
    #[serde(rename = "loop")]
    pub loop_state: Option<LoopSummary>,
    /// What is next.
    pub next_step: Vec<NextStep>,
    /// When it goes stale.
    pub stale_when: StaleWhen,
    /// RFC 3339 UTC; after this the handoff is shown as expired.
    pub valid_until: String,
}

/// What a writer gives to build a handoff.
#[derive(Debug, Clone)]
pub struct Request {
    /// The lane.
    pub lane: String,
    /// The host's session id.
    pub session_id: Option<String>,
    /// What made it be written.
    pub trigger: Trigger,
    /// The agent's summary; `None` makes a degraded-auto handoff with a measured summary.
    pub summary: Option<String>,
    /// The next step and the command to verify first.
    pub next: Option<(String, String)>,
    /// The git state.
    pub git: GitState,
    /// The loop state.
    pub loop_state: Option<LoopSummary>,
    /// Now.
    pub now: OffsetDateTime,
}

/// Checks a lane name.
pub fn check_lane(lane: &str) -> Result<(), Error> {
    let ok = !lane.is_empty()
        && lane.len() <= 64
        && lane.as_bytes()[0].is_ascii_alphanumeric()
        && lane
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !lane.ends_with(".lock")
        && !lane.contains("..");
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidLane(lane.to_owned()))
    }
}

fn rfc3339(t: OffsetDateTime) -> String {
    crate::timestamp::utc_seconds(t)
}

fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// Builds a handoff, refusing bad or secret-shaped input.
pub fn build(request: Request) -> Result<Handoff, Error> {
    check_lane(&request.lane)?;
    let secret = |field: &'static str, text: &str| {
        if crate::secrets::looks_secret(text) {
            Err(Error::Secret(field))
        } else {
            Ok(())
        }
    };
    if let Some(summary) = &request.summary {
        if summary.trim().is_empty() {
            return Err(Error::EmptySummary);
        }
        secret("summary", summary)?;
    }
    if let Some((next, verify)) = &request.next {
        match (next.trim().is_empty(), verify.trim().is_empty()) {
            (false, true) => return Err(Error::NextWithoutVerify),
            (true, false) => return Err(Error::VerifyWithoutNext),
            _ => {}
        }
        secret("next step", next)?;
        secret("verify-first command", verify)?;
    }
    if let Some(session) = &request.session_id {
        secret("session id", session)?;
    }
    let (quality, summary) = match request.summary {
        Some(summary) => (Quality::Full, summary.trim().to_owned()),
        None => (
            Quality::DegradedAuto,
            measured_summary(request.trigger, &request.git, request.loop_state.as_ref()),
        ),
    };
    let next_step = match request.next {
        Some((next, verify)) if !next.trim().is_empty() => vec![NextStep {
            order: 1,
            description: next.trim().to_owned(),
            verify_first_cmd: verify.trim().to_owned(),
            idempotent: false,
        }],
        _ => measured_next(request.loop_state.as_ref()),
    };
    let now = request.now.to_offset(time::UtcOffset::UTC);
    let trigger_name = serde_json::to_value(request.trigger).expect("a trigger serialises");
    let handoff = Handoff {
        schema: SCHEMA.to_owned(),
        schema_version: SCHEMA_VERSION.to_owned(),
        handoff_id: format!(
            "HO-{:04}{:02}{:02}-{:02}{:02}-{}",
            now.year(),
            u8::from(now.month()),
            now.day(),
            now.hour(),
            now.minute(),
            slug(&format!(
                "{}-{}",
                request.lane,
                trigger_name.as_str().unwrap_or("manual")
            ))
        ),
        created_at: rfc3339(now),
        trigger: request.trigger,
        quality,
        session: Session {
            session_id: request.session_id,
            lane_id: request.lane,
        },
        state: State { summary },
        git: request.git,
        loop_state: request.loop_state,
        next_step,
        stale_when: StaleWhen {
            head_moved: true,
            days: STALE_DAYS,
        },
        valid_until: rfc3339(now + time::Duration::days(STALE_DAYS)),
    };
    let size = to_bytes(&handoff).len();
    if size > MAX_BYTES {
        return Err(Error::TooLarge(size));
    }
    Ok(handoff)
}

fn measured_summary(trigger: Trigger, git: &GitState, loop_state: Option<&LoopSummary>) -> String {
    let when = match trigger {
        Trigger::PreClear => "before a clear",
        Trigger::Precompact => "before compaction",
        Trigger::Stop => "at Stop",
        Trigger::Manual | Trigger::DegradedAuto => "by hand",
    };
    let loop_text = match loop_state {
        Some(l) => format!("loop {} is {} ({} events)", l.id, l.state, l.event_count),
        None => "no harness loop was found".to_owned(),
    };
    let tree = if git.dirty {
        format!(
            "{} changed paths ({} untracked) not committed",
            git.porcelain.len(),
            git.untracked
        )
    } else {
        "the working tree is clean".to_owned()
    };
    format!("Automatic handoff {when}, without the agent's summary: {loop_text}; {tree}.")
}

fn measured_next(loop_state: Option<&LoopSummary>) -> Vec<NextStep> {
    match loop_state {
        Some(l) if l.state != "verified" => vec![NextStep {
            order: 1,
            description: l.next_step.clone(),
            verify_first_cmd: format!("git hpp status --loop {}", l.id),
            idempotent: true,
        }],
        _ => Vec::new(),
    }
}

/// Returns the canonical bytes of a handoff.
pub fn to_bytes(handoff: &Handoff) -> Vec<u8> {
    let value = serde_json::to_value(handoff).expect("a handoff serialises");
    crate::record::canonical_json(&value)
}

/// Parses and checks a stored handoff.
pub fn parse(bytes: &[u8]) -> Result<Handoff, Error> {
    if bytes.len() > MAX_BYTES {
        return Err(Error::TooLarge(bytes.len()));
    }
    let handoff: Handoff =
        serde_json::from_slice(bytes).map_err(|e| Error::Invalid(e.to_string()))?;
    if handoff.schema != SCHEMA || handoff.schema_version != SCHEMA_VERSION {
        return Err(Error::Invalid(format!(
            "schema {} version {} (expected {SCHEMA} {SCHEMA_VERSION})",
            handoff.schema, handoff.schema_version
        )));
    }
    let id_ok = handoff.handoff_id.strip_prefix("HO-").is_some_and(|rest| {
        let b = rest.as_bytes();
        b.len() > 15
            && b[..8].iter().all(u8::is_ascii_digit)
            && b[8] == b'-'
            && b[9..13].iter().all(u8::is_ascii_digit)
            && b[13] == b'-'
            && b[14..]
                .iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    });
    if !id_ok {
        return Err(Error::Invalid(format!(
            "handoff_id {:?} does not match HO-YYYYMMDD-HHMM-<slug>",
            handoff.handoff_id
        )));
    }
    check_lane(&handoff.session.lane_id)?;
    for field in [&handoff.created_at, &handoff.valid_until] {
        crate::timestamp::parse(field)
            .ok_or_else(|| Error::Invalid(format!("{field:?} is not an RFC 3339 time")))?;
    }
    if handoff
        .next_step
        .iter()
        .any(|s| s.verify_first_cmd.trim().is_empty())
    {
        return Err(Error::Invalid(
            "a next step has no verify_first_cmd".to_owned(),
        ));
    }
    Ok(handoff)
}

/// Tells whether a new automatic handoff would say nothing the latest one does not: same head,
/// same working-tree state and same loop state.
pub fn unchanged(latest: &Handoff, git: &GitState, loop_state: Option<&LoopSummary>) -> bool {
    latest.git.head == git.head
        && latest.git.porcelain == git.porcelain
        && latest.loop_state.as_ref() == loop_state
}

/// A handoff as seen now: whether the head moved and whether it is stale or expired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct View {
    /// The handoff.
    pub handoff: Handoff,
    /// HEAD differs from the handoff's head.
    pub head_moved: bool,
    /// The current HEAD.
    pub current_head: Option<String>,
    /// Older than `stale_when.days`, or the head moved.
    pub stale: bool,
    /// Past `valid_until`.
    pub expired: bool,
}

/// Computes what changed since the handoff was written.
pub fn view(handoff: Handoff, current_head: Option<String>, now: OffsetDateTime) -> View {
    let head_moved = handoff.git.head != current_head;
    let created = crate::timestamp::parse(&handoff.created_at);
    let old = created.is_some_and(|c| now - c > time::Duration::days(handoff.stale_when.days));
    let expired = crate::timestamp::parse(&handoff.valid_until).is_some_and(|v| now > v);
    View {
        stale: old || (handoff.stale_when.head_moved && head_moved),
        head_moved,
        current_head,
        expired,
        handoff,
    }
}

fn short(id: Option<&str>) -> &str {
    id.map_or("(no commit)", |h| &h[..h.len().min(12)])
}

/// Renders a handoff as the context injected at SessionStart.
pub fn render(view: &View) -> String {
    let h = &view.handoff;
    let mut out = format!(
        "Handoff {} (lane {}, {}, {}, written {}):\n{}\n",
        h.handoff_id,
        h.session.lane_id,
        serde_json::to_value(h.trigger)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        serde_json::to_value(h.quality)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        h.created_at,
        h.state.summary
    );
    out.push_str(&format!(
        "Git then: head {} on {}, {}.\n",
        short(h.git.head.as_deref()),
        h.git.branch.as_deref().unwrap_or("(detached)"),
        if h.git.dirty {
            format!("{} uncommitted paths", h.git.porcelain.len())
        } else {
            "clean".to_owned()
        }
    ));
    if view.head_moved {
        out.push_str(&format!(
            "HEAD MOVED since: now {}. Re-check before acting on this handoff.\n",
            short(view.current_head.as_deref())
        ));
    }
    if view.expired {
        out.push_str("This handoff is past valid_until: treat it as history.\n");
    } else if view.stale {
        out.push_str("This handoff is stale.\n");
    }
    if let Some(l) = &h.loop_state {
        out.push_str(&format!(
            "Loop {}: {} ({} events); next: {}.\n",
            l.id, l.state, l.event_count, l.next_step
        ));
    }
    for step in &h.next_step {
        out.push_str(&format!(
            "Next {}: {} (verify first: `{}`)\n",
            step.order, step.description, step.verify_first_cmd
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> OffsetDateTime {
        crate::timestamp::parse("2026-03-04T05:06:07Z").unwrap()
    }

    fn request() -> Request {
        Request {
            lane: "solo".into(),
            session_id: Some("s1".into()),
            trigger: Trigger::Manual,
            summary: Some("parser done".into()),
            next: Some(("wire the CLI".into(), "cargo test".into())),
            git: GitState::from_porcelain(Some("a".repeat(40)), Some("main".into()), vec![]),
            loop_state: None,
            now: now(),
        }
    }

    #[test]
    fn a_built_handoff_round_trips_through_its_bytes() {
        let h = build(request()).unwrap();
        assert_eq!(h.handoff_id, "HO-20260304-0506-solo-manual");
        assert_eq!(h.quality, Quality::Full);
        assert_eq!(h.valid_until, "2026-03-11T05:06:07Z");
        assert_eq!(parse(&to_bytes(&h)).unwrap(), h);
    }

    #[test]
    fn without_a_summary_the_handoff_is_degraded_and_measured() {
        let mut r = request();
        r.summary = None;
        r.next = None;
        r.trigger = Trigger::Stop;
        r.git = GitState::from_porcelain(None, None, vec!["?? new.txt".into(), " M a".into()]);
        r.loop_state = Some(LoopSummary {
            id: "main".into(),
            state: "active".into(),
            event_count: 1,
            next_step: "record fresh evidence".into(),
        });
        let h = build(r).unwrap();
        assert_eq!(h.quality, Quality::DegradedAuto);
        assert!(h.git.dirty);
        assert_eq!(h.git.untracked, 1);
        assert!(h.state.summary.contains("loop main is active"));
        assert_eq!(
            h.next_step[0].verify_first_cmd,
            "git hpp status --loop main"
        );
    }

    #[test]
    fn head_moved_is_computed_when_read() {
        let h = build(request()).unwrap();
        let same = view(h.clone(), Some("a".repeat(40)), now());
        assert!(!same.head_moved && !same.stale && !same.expired);
        let moved = view(h.clone(), Some("b".repeat(40)), now());
        assert!(moved.head_moved && moved.stale);
        assert!(render(&moved).contains("HEAD MOVED"));
        let later = view(h, Some("a".repeat(40)), now() + time::Duration::days(8));
        assert!(later.expired);
    }

    #[test]
    fn control_bad_input_is_refused() {
        let mut r = request();
        r.lane = "../x".into();
        assert!(matches!(build(r), Err(Error::InvalidLane(_))));
        let mut r = request();
        r.next = Some(("do it".into(), String::new()));
        assert_eq!(build(r), Err(Error::NextWithoutVerify));
        let mut r = request();
        r.summary = Some("deployed with password=hunter2".into());
        assert_eq!(build(r), Err(Error::Secret("summary")));
        let mut r = request();
        r.summary = Some("x".repeat(MAX_BYTES));
        assert!(matches!(build(r), Err(Error::TooLarge(_))));
        let mut value = serde_json::to_value(build(request()).unwrap()).unwrap();
        value["extra"] = serde_json::json!(1);
        assert!(matches!(
            parse(&serde_json::to_vec(&value).unwrap()),
            Err(Error::Invalid(_))
        ));
    }
}
