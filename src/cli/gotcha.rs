//! `git hpp gotcha record|list|preamble|hook`: failures by error family, promoted to gotchas on
//! recurrence (gotcha-memory; see [`hpp_core::gotcha`]), kept at `refs/hpp/gotchas/`.

use clap::{Subcommand, ValueEnum};
use serde_json::json;
use time::OffsetDateTime;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{HookNoun, read_hook_input};
use super::output::Outcome;
use super::{HostArg, JsonArg};
use hpp_core::gotcha::{self, Failure, Gotcha};
use hpp_core::host::{Answer, Blank, Event, HookInput};

/// The verbs of `git hpp gotcha`.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb's help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum GotchaCommand {
    Record(GotchaRecordArgs),
    List(GotchaListArgs),
    Preamble(GotchaPreambleArgs),
    Hook(GotchaHookArgs),
}

/// Record a failure; promote it to a gotcha when it recurs
///
/// Classifies the message into an error family, redacts secret-shaped spans to
/// [REDACTED:<kind>:<len>] before anything is stored, and appends an hpp.failure/v1 to
/// refs/hpp/gotchas/failures. When git config hpp.gotcha.minCount (3) failures of the same task
/// key and family fall within hpp.gotcha.windowHours (24) of this one, an hpp.gotcha/v1 is
/// appended to refs/hpp/gotchas/promoted (once per pair). Exits 0 recorded, 2 refused.
#[derive(Debug, clap::Args)]
pub struct GotchaRecordArgs {
    /// What was being done (a task name, `Bash:cargo test`)
    #[arg(long, value_name = "KEY")]
    task: String,
    /// The failure's message (redacted before it is stored)
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    message: String,
    /// When it failed, RFC 3339 [default: now]
    #[arg(long, value_name = "TIME")]
    at: Option<String>,
    #[command(flatten)]
    format: JsonArg,
}

/// List promoted gotchas, highest priority first
///
/// Ranks by family priority, then occurrences, then the latest failure. With --failures, lists
/// the recorded failures instead. Exits 0.
#[derive(Debug, clap::Args)]
pub struct GotchaListArgs {
    /// List every recorded failure instead of the gotchas
    #[arg(long)]
    failures: bool,
    #[command(flatten)]
    format: JsonArg,
}

/// Print the preamble to inject before the next run: the top gotchas
///
/// Prints nothing when there is no gotcha. Exits 0.
#[derive(Debug, clap::Args)]
pub struct GotchaPreambleArgs {
    /// Only the gotchas of this task key
    #[arg(long, value_name = "KEY")]
    task: Option<String>,
    /// How many gotchas to show
    #[arg(long, default_value_t = gotcha::PREAMBLE_LIMIT)]
    limit: usize,
}

/// The host events the gotcha hook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookEvent {
    /// Record a failed tool call (a result with is_error or a non-zero exit code).
    #[value(name = "PostToolUse")]
    PostToolUse,
    /// Record a failed tool call (Claude Code's failure event).
    #[value(name = "PostToolUseFailure")]
    PostToolUseFailure,
    /// Inject the preamble.
    #[value(name = "SessionStart")]
    SessionStart,
}

/// Answer an agent host's hook: record failed tool calls, inject the preamble at SessionStart
///
/// Reads the hook's JSON on stdin. PostToolUse/PostToolUseFailure record a failure (task key
/// `<tool>:<first words of the command>`, de-duplicated by tool_use_id) and, when that promotes
/// a gotcha, add it as additionalContext. SessionStart prints
/// {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": <preamble>}},
/// or nothing when there is no gotcha. Observe-only: always exits 0; a problem is a warning on
/// stderr.
#[derive(Debug, clap::Args)]
pub struct GotchaHookArgs {
    /// The host whose hook protocol to answer in
    #[arg(long, value_enum)]
    host: HostArg,
    /// The hook event (the input's hook_event_name wins when it names a failure event)
    #[arg(long, value_enum)]
    event: HookEvent,
}

/// Runs one verb of `git hpp gotcha`.
pub fn dispatch(ctx: &Ctx, cmd: GotchaCommand) -> Result<Outcome, CliError> {
    match cmd {
        GotchaCommand::Record(args) => cmd_gotcha_record(ctx, &args),
        GotchaCommand::List(args) => cmd_gotcha_list(ctx, &args),
        GotchaCommand::Preamble(args) => cmd_gotcha_preamble(ctx, &args),
        GotchaCommand::Hook(args) => cmd_gotcha_hook(ctx, &args),
    }
}

/// Stores a failure and promotes it when it recurs; returns the failure's commit and the gotcha
/// it promoted.
fn record(ctx: &Ctx, failure: &Failure) -> Result<(String, Option<Gotcha>), CliError> {
    let recorded = crate::gotcha::record(ctx.store()?, failure)?;
    Ok((recorded.commit.to_string(), recorded.promoted))
}

/// Records a failure.
pub fn cmd_gotcha_record(ctx: &Ctx, args: &GotchaRecordArgs) -> Result<Outcome, CliError> {
    let at = match &args.at {
        None => OffsetDateTime::now_utc(),
        Some(text) => hpp_core::timestamp::parse(text).ok_or_else(|| {
            CliError::refused(format!(
                "--at {text:?} is not an RFC 3339 time (2026-01-02T03:04:05Z)"
            ))
        })?,
    };
    let failure = gotcha::failure(&args.task, &args.message, at, "cli", None)?;
    let (commit, promoted) = record(ctx, &failure)?;
    let value = json!({"commit": commit, "failure": failure, "promoted": promoted});
    let human = match &promoted {
        Some(g) => format!(
            "failure recorded ({}); promoted to a gotcha: {} failures of {} in {} h",
            failure.family.name(),
            g.occurrences,
            g.task_key,
            g.window_hours
        ),
        None => format!(
            "failure recorded ({}, strategy {:?})",
            failure.family.name(),
            failure.strategy
        ),
    };
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}

/// Lists gotchas or failures.
pub fn cmd_gotcha_list(ctx: &Ctx, args: &GotchaListArgs) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let failures = crate::gotcha::failures(store)?;
    if args.failures {
        let human = failures
            .iter()
            .map(|f| {
                format!(
                    "{} {} [{}] {}",
                    f.at,
                    f.task_key,
                    f.family.name(),
                    f.message
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        return Ok(Outcome::document(
            args.format.json,
            &json!({"failures": failures}),
            human,
            Exit::Ok,
        ));
    }
    let (_, gotchas) = crate::gotcha::gotchas(store)?;
    let ranked = gotcha::rank(&gotchas, &failures, None);
    let human = if ranked.is_empty() {
        "no gotcha recorded".to_owned()
    } else {
        gotcha::preamble(&ranked, ranked.len())
    };
    Ok(Outcome::document(
        args.format.json,
        &json!({"gotchas": ranked}),
        human,
        Exit::Ok,
    ))
}

fn preamble_text(ctx: &Ctx, task: Option<&str>, limit: usize) -> Result<String, CliError> {
    let store = ctx.store()?;
    let failures = crate::gotcha::failures(store)?;
    let (_, gotchas) = crate::gotcha::gotchas(store)?;
    Ok(gotcha::preamble(
        &gotcha::rank(&gotchas, &failures, task),
        limit,
    ))
}

/// Prints the preamble.
pub fn cmd_gotcha_preamble(ctx: &Ctx, args: &GotchaPreambleArgs) -> Result<Outcome, CliError> {
    Ok(Outcome::raw(
        preamble_text(ctx, args.task.as_deref(), args.limit)?.into_bytes(),
    ))
}

/// Answers a host hook; never blocks.
pub fn cmd_gotcha_hook(ctx: &Ctx, args: &GotchaHookArgs) -> Result<Outcome, CliError> {
    // Both hosts read the same hookSpecificOutput, so the answer does not depend on the host.
    let _host = args.host;
    match hook(ctx, args) {
        Ok(outcome) => Ok(outcome),
        Err(e) => Ok(Outcome::raw(Vec::new()).warn(format!("gotcha hook: {}", e.message))),
    }
}

fn hook(ctx: &Ctx, args: &GotchaHookArgs) -> Result<Outcome, CliError> {
    let input = read_hook_input(ctx, Blank::Empty, HookNoun::Input)?;
    if args.event == HookEvent::SessionStart {
        let text = preamble_text(ctx, None, gotcha::PREAMBLE_LIMIT)?;
        if text.is_empty() {
            return Outcome::answer(Answer::Silent);
        }
        return Outcome::answer(Answer::additional_context(Event::SessionStart, &text));
    }
    let event = if input.event.is(Event::PostToolUseFailure)
        || args.event == HookEvent::PostToolUseFailure
    {
        Event::PostToolUseFailure
    } else {
        Event::PostToolUse
    };
    let Some(message) = input.failure_message_given(event, codex_exit_code(ctx, &input)) else {
        return Outcome::answer(Answer::Silent);
    };
    // Errors are at the end of the output.
    let chars: Vec<char> = message.chars().collect();
    let keep = chars.len().saturating_sub(gotcha::MAX_MESSAGE_CHARS);
    let message: String = chars[keep..].iter().collect();
    let tool_use_id = input.tool_use_id.clone();
    if let Some(id) = &tool_use_id
        && crate::gotcha::failures(ctx.store()?)?
            .iter()
            .any(|f| f.tool_use_id.as_deref() == Some(id))
    {
        return Outcome::answer(Answer::Silent);
    }
    let (task, fallback) = task_key(&input);
    let now = OffsetDateTime::now_utc();
    let failure = match gotcha::failure(&task, &message, now, "hook", tool_use_id.clone()) {
        Err(gotcha::Error::SecretTask | gotcha::Error::InvalidTask(_)) => {
            gotcha::failure(&fallback, &message, now, "hook", tool_use_id)
        }
        other => other,
    }?;
    let (_, promoted) = record(ctx, &failure)?;
    match promoted {
        None => Outcome::answer(Answer::Silent),
        Some(_) => {
            let text = preamble_text(ctx, Some(&failure.task_key), 1)?;
            Outcome::answer(Answer::additional_context(event, &text))
        }
    }
}

/// Returns the exit code Codex's transcript records for the call a PostToolUse answers, when the
/// payload has Codex's shape (the response is the output text alone) and names the call and the
/// transcript; `None` otherwise, so Claude Code's payloads are read as before.
fn codex_exit_code(ctx: &Ctx, input: &HookInput) -> Option<i64> {
    if !input
        .tool_response
        .as_ref()
        .is_some_and(serde_json::Value::is_string)
    {
        return None;
    }
    let call_id = input.tool_use_id.as_deref()?;
    let path = input.dir(ctx.cwd()).join(input.transcript_path.as_deref()?);
    crate::gotcha::codex_exit_code(&path, call_id)
}

/// Returns the task key `<tool>:<first two words of the command or the file>` and the bare tool
/// name as a fallback.
fn task_key(input: &HookInput) -> (String, String) {
    let tool = input.tool_name.as_deref().unwrap_or("tool").to_owned();
    let detail = if let Some(command) = input.tool_input_str("command") {
        command
            .split_whitespace()
            .filter(|w| !w.contains('='))
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        input
            .tool_input_str("file_path")
            .unwrap_or_default()
            .to_owned()
    };
    let key = if detail.is_empty() {
        tool.clone()
    } else {
        format!("{tool}:{detail}")
    };
    (key, tool)
}
