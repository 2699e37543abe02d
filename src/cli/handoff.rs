//! `git hpp handoff write|show|hook`: the handoff a session leaves for the next one
//! (continuity-kit; see [`hpp_core::continuity`]), kept at `refs/hpp/handoffs/<lane>`.

use clap::{Subcommand, ValueEnum};
use serde_json::{Value, json};
use time::OffsetDateTime;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{HookNoun, read_hook_input};
use super::output::Outcome;
use super::{HostArg, JsonArg, LoopArg};
use crate::events;
use hpp_core::continuity::{self, GitState, Handoff, LoopSummary, Request, Trigger};
use hpp_core::host::{Answer, Blank, Event};
use hpp_store::refs::{HANDOFFS_PREFIX, LoopId};

/// The verbs of `git hpp handoff`.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb's help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum HandoffCommand {
    Write(HandoffWriteArgs),
    Show(HandoffShowArgs),
    Hook(HandoffHookArgs),
}

/// The lane flag shared by the verbs.
#[derive(Debug, Clone, clap::Args)]
pub struct LaneArg {
    /// Lane whose handoff log to use [default: $HPP_LANE, else solo]
    #[arg(long, value_name = "LANE")]
    pub lane: Option<String>,
}

/// Write a handoff: what is done, what is next, and the command to verify first
///
/// Records an hpp.handoff/v2 at refs/hpp/handoffs/<lane> with the git head, branch and dirty
/// paths and the loop's state. With --summary the handoff is `full`; without it the summary is
/// measured (`degraded-auto`). A next step needs --verify-first. Texts shaped like a secret are
/// refused. Exits 0 written, 2 refused (nothing written).
#[derive(Debug, clap::Args)]
pub struct HandoffWriteArgs {
    #[command(flatten)]
    lane: LaneArg,
    /// What made the handoff be written
    #[arg(long, default_value = "manual", value_parser = parse_trigger)]
    trigger: Trigger,
    /// What is done and where things stand
    #[arg(long, value_name = "TEXT")]
    summary: Option<String>,
    /// The next step
    #[arg(long, value_name = "TEXT")]
    next: Option<String>,
    /// The command to run before the next step, to check it still makes sense
    #[arg(long, value_name = "CMD", allow_hyphen_values = true)]
    verify_first: Option<String>,
    /// The host's session id
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    #[command(flatten)]
    target: LoopArg,
    #[command(flatten)]
    format: JsonArg,
}

/// Show the latest handoff of a lane, and whether HEAD moved since
///
/// Without --lane, falls back to the newest handoff of any lane when the default lane has
/// none. Exits 0 shown, 1 when no handoff is recorded, 2 when the record is invalid.
#[derive(Debug, clap::Args)]
pub struct HandoffShowArgs {
    #[command(flatten)]
    lane: LaneArg,
    #[command(flatten)]
    format: JsonArg,
}

/// The host events the handoff hook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookEvent {
    /// Inject the latest handoff as additional context.
    #[value(name = "SessionStart")]
    SessionStart,
    /// Write a measured handoff when the agent stops.
    #[value(name = "Stop")]
    Stop,
    /// Write a measured handoff before the context is compacted.
    #[value(name = "PreCompact")]
    PreCompact,
}

/// Answer an agent host's hook: write a handoff at Stop/PreCompact, inject it at SessionStart
///
/// Reads the hook's JSON on stdin (session_id is recorded). Stop and PreCompact write a
/// degraded-auto handoff unless the latest one already says the same (same head, same dirty
/// paths, same loop state) and print nothing. SessionStart prints
/// {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}} with the
/// handoff and whether HEAD moved, or nothing when there is none. Observe-only: always exits 0;
/// a problem is a warning on stderr.
#[derive(Debug, clap::Args)]
pub struct HandoffHookArgs {
    /// The host whose hook protocol to answer in
    #[arg(long, value_enum)]
    host: HostArg,
    /// The hook event [default: the input's hook_event_name: SessionStart, PreCompact, else
    /// Stop]
    #[arg(long, value_enum)]
    event: Option<HookEvent>,
    #[command(flatten)]
    lane: LaneArg,
}

fn parse_trigger(text: &str) -> Result<Trigger, String> {
    text.parse().map_err(|e: continuity::Error| e.to_string())
}

/// Runs one verb of `git hpp handoff`.
pub fn dispatch(ctx: &Ctx, cmd: HandoffCommand) -> Result<Outcome, CliError> {
    match cmd {
        HandoffCommand::Write(args) => cmd_handoff_write(ctx, &args),
        HandoffCommand::Show(args) => cmd_handoff_show(ctx, &args),
        HandoffCommand::Hook(args) => cmd_handoff_hook(ctx, &args),
    }
}

/// Returns the lane: `--lane`, else `$HPP_LANE`, else `solo`; checked.
fn lane(arg: &LaneArg) -> Result<(String, bool), CliError> {
    let (lane, explicit) = match &arg.lane {
        Some(lane) => (lane.clone(), true),
        None => match std::env::var("HPP_LANE") {
            Ok(lane) if !lane.is_empty() => (lane, true),
            _ => (continuity::DEFAULT_LANE.to_owned(), false),
        },
    };
    continuity::check_lane(&lane)?;
    Ok((lane, explicit))
}

/// Measures the git state of the worktree.
fn git_state(ctx: &Ctx) -> Result<GitState, CliError> {
    Ok(crate::continuity::git_state(ctx.store()?)?)
}

/// Reads the loop (`--loop`, else the current branch) when it has events.
fn loop_summary(ctx: &Ctx, explicit: Option<&LoopId>) -> Result<Option<LoopSummary>, CliError> {
    let id = match explicit {
        Some(id) => id.clone(),
        None => match ctx.loop_id(None) {
            Ok(id) => id,
            Err(_) => return Ok(None),
        },
    };
    let manifest = ctx.manifest()?;
    let state = events::read(ctx.store()?, manifest.loop_spec(), &id)?;
    let p = state.require_intact()?;
    if p.event_count == 0 {
        return Ok(None);
    }
    Ok(Some(LoopSummary {
        id: id.to_string(),
        state: p.state.clone(),
        event_count: p.event_count,
        next_step: p.next_step.clone(),
    }))
}

fn write(ctx: &Ctx, lane: &str, handoff: &Handoff) -> Result<String, CliError> {
    Ok(crate::continuity::write(ctx.store()?, lane, handoff)?.to_string())
}

/// Writes a handoff.
pub fn cmd_handoff_write(ctx: &Ctx, args: &HandoffWriteArgs) -> Result<Outcome, CliError> {
    let (lane, _) = lane(&args.lane)?;
    let next = match (&args.next, &args.verify_first) {
        (None, None) => None,
        (Some(n), None) => Some((n.clone(), String::new())),
        (None, Some(v)) => Some((String::new(), v.clone())),
        (Some(n), Some(v)) => Some((n.clone(), v.clone())),
    };
    if let Some((n, v)) = &next
        && n.trim().is_empty()
        && v.trim().is_empty()
    {
        return Err(CliError::from(continuity::Error::NextWithoutVerify));
    }
    let request = Request {
        lane: lane.clone(),
        session_id: args.session.clone(),
        trigger: args.trigger,
        summary: args.summary.clone(),
        next,
        git: git_state(ctx)?,
        loop_state: loop_summary(ctx, args.target.name.as_ref())?,
        now: OffsetDateTime::now_utc(),
    };
    let handoff = continuity::build(request)?;
    let commit = write(ctx, &lane, &handoff)?;
    let value = json!({
        "ref": format!("{HANDOFFS_PREFIX}{lane}"),
        "commit": commit,
        "handoff": handoff,
    });
    let human = format!(
        "handoff {} written to {HANDOFFS_PREFIX}{lane} ({})",
        handoff.handoff_id,
        serde_json::to_value(handoff.quality)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    );
    Ok(Outcome::document(args.format.json, &value, human, Exit::Ok))
}

/// Finds the handoff to show: the lane's latest, else (lane not named) the newest of any lane.
fn latest(ctx: &Ctx, arg: &LaneArg) -> Result<Option<(String, String, Handoff)>, CliError> {
    let (lane, explicit) = lane(arg)?;
    Ok(crate::continuity::latest(ctx.store()?, &lane, explicit)?
        .map(|found| (found.lane, found.commit.to_string(), found.handoff)))
}

fn view_value(lane: &str, commit: &str, view: &continuity::View, asked: &str) -> Value {
    json!({
        "ref": format!("{HANDOFFS_PREFIX}{lane}"),
        "commit": commit,
        "fallback": lane != asked,
        "head_moved": view.head_moved,
        "current_head": view.current_head,
        "stale": view.stale,
        "expired": view.expired,
        "handoff": view.handoff,
    })
}

/// Shows the latest handoff.
pub fn cmd_handoff_show(ctx: &Ctx, args: &HandoffShowArgs) -> Result<Outcome, CliError> {
    let (asked, _) = lane(&args.lane)?;
    let Some((lane, commit, handoff)) = latest(ctx, &args.lane)? else {
        let value = json!({"ref": format!("{HANDOFFS_PREFIX}{asked}"), "handoff": null});
        let human = format!("no handoff recorded for lane {asked}");
        return Ok(Outcome::document(
            args.format.json,
            &value,
            human,
            Exit::Warn,
        ));
    };
    let head = ctx.store()?.head_commit()?.map(|c| c.as_str().to_owned());
    let view = continuity::view(handoff, head, OffsetDateTime::now_utc());
    let value = view_value(&lane, &commit, &view, &asked);
    Ok(Outcome::document(
        args.format.json,
        &value,
        continuity::render(&view),
        Exit::Ok,
    ))
}

/// Answers a host hook; never blocks.
pub fn cmd_handoff_hook(ctx: &Ctx, args: &HandoffHookArgs) -> Result<Outcome, CliError> {
    // Both hosts read the same hookSpecificOutput, so the answer does not depend on the host.
    let _host = args.host;
    match hook(ctx, args) {
        Ok(outcome) => Ok(outcome),
        Err(e) => Ok(Outcome::raw(Vec::new()).warn(format!("handoff hook: {}", e.message))),
    }
}

fn hook(ctx: &Ctx, args: &HandoffHookArgs) -> Result<Outcome, CliError> {
    let input = read_hook_input(ctx, Blank::Empty, HookNoun::Input)?;
    let event = args
        .event
        .unwrap_or(if input.event.is(Event::SessionStart) {
            HookEvent::SessionStart
        } else if input.event.is(Event::PreCompact) {
            HookEvent::PreCompact
        } else {
            HookEvent::Stop
        });
    match event {
        HookEvent::SessionStart => {
            let Some((lane, _, handoff)) = latest(ctx, &args.lane)? else {
                return Outcome::answer(Answer::Silent);
            };
            let head = ctx.store()?.head_commit()?.map(|c| c.as_str().to_owned());
            let view = continuity::view(handoff, head, OffsetDateTime::now_utc());
            let text = format!(
                "git hpp continuity: the last handoff of lane {lane} follows. Run its verify-first command before acting on it.\n{}",
                continuity::render(&view)
            );
            Outcome::answer(Answer::additional_context(Event::SessionStart, &text))
        }
        HookEvent::Stop | HookEvent::PreCompact => {
            let (lane, _) = lane(&args.lane)?;
            let git = git_state(ctx)?;
            let loop_state = loop_summary(ctx, None)?;
            if let Some(bytes) = crate::continuity::last_bytes(ctx.store()?, &lane)?
                && let Ok(last) = continuity::parse(&bytes)
                && continuity::unchanged(&last, &git, loop_state.as_ref())
            {
                return Outcome::answer(Answer::Silent);
            }
            let trigger = if event == HookEvent::Stop {
                Trigger::Stop
            } else {
                Trigger::Precompact
            };
            let handoff = continuity::build(Request {
                lane: lane.clone(),
                session_id: input.session_id,
                trigger,
                summary: None,
                next: None,
                git,
                loop_state,
                now: OffsetDateTime::now_utc(),
            })?;
            write(ctx, &lane, &handoff)?;
            Outcome::answer(Answer::Silent)
        }
    }
}
