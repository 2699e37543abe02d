//! `git hpp board`: the lane board on refs (claim, set, compete, select, withdraw, release-fix,
//! start-review, approve, status, render).

mod approve;
mod claim;
mod compete;
mod markdown;
mod release_fix;
mod render;
mod select;
mod set;
mod start_review;
mod status;
mod withdraw;

use time::OffsetDateTime;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use crate::board::Written;
use hpp_core::board::{self, Actor, LaneRegistry, Request};
use hpp_core::record::canonical_json;
use hpp_core::secrets;

/// The verbs of `git hpp board`.
#[derive(Debug, clap::Subcommand)]
pub enum BoardCommand {
    /// Claim an item for a lane (set ITEM CLAIMED)
    ///
    /// Prints the event as one JSON line. Exit 0 written, 1 refused by a board rule,
    /// 2 refused input, 3 usage.
    Claim(claim::ClaimArgs),
    /// Move an item to a state, along the board's transitions only
    ///
    /// CHECKPOINT-READY needs --role executor, the owner's lane and --evidence-record naming an
    /// evidence bundle that verifies valid. VERIFIED and NEEDS-FIX need --role reviewer,
    /// --verdict-by-lane and --verdict-by-model of a lane that built nothing of the item and a
    /// model family no builder shares. DEFERRED needs --checker-unavailable. MERGED needs a prior
    /// VERIFIED, a decided competition, and for a red item --human-approved or an APPROVED event.
    /// Prints the event as one JSON line. Exit 0 written, 1 refused by a board rule, 2 refused
    /// input, 3 usage.
    Set(set::SetArgs),
    /// Declare a competition (best-of-N) between claimed items built by different lanes
    ///
    /// Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    Compete(compete::CompeteArgs),
    /// Decide a competition: one winner, every other candidate NOT-SELECTED for good
    ///
    /// Every active candidate must be CHECKPOINT-READY with evidence or VERIFIED; the selecting
    /// lane built no candidate and its model family differs from every builder's.
    /// --checker-unavailable records DEFERRED and never a winner. --deliberation REC (a file,
    /// refs/hpp/deliberations/<id> or <id>) lets a sealed House Session decide: it must verify,
    /// be a design session whose options are exactly the remaining candidates and whose verdict
    /// is a recommendation; the recommendation wins and the judge seat's lane and model are the
    /// selector (--winner, --lane, --model and --checker-unavailable are refused with it, exit
    /// 2). Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    Select(select::SelectArgs),
    /// Withdraw one candidate from an undecided competition (WITHDRAWN for good)
    ///
    /// Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    Withdraw(withdraw::WithdrawArgs),
    /// Queue the fix of a NEEDS-FIX item for a lane (FIX-QUEUED)
    ///
    /// Only the target lane may then take the item back to BUILDING. Exit 0 written, 1 refused
    /// by a board rule, 2 refused input, 3 usage.
    ReleaseFix(release_fix::ReleaseFixArgs),
    /// Hand a CHECKPOINT-READY or DEFERRED item to a reviewer lane (UNDER-REVIEW)
    ///
    /// Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    StartReview(start_review::StartReviewArgs),
    /// Approve a VERIFIED red item as a person (APPROVED)
    ///
    /// Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    Approve(approve::ApproveArgs),
    /// Print board events as JSON: all, one item's, or one competition's
    ///
    /// Exit 0, 2 when the board log is corrupt.
    Status(status::StatusArgs),
    /// Print the board as Markdown: one section per item, then the competitions
    ///
    /// Writes no file. Exit 0, 2 when the board log is corrupt.
    Render(render::RenderArgs),
}

/// The writer of an event: `--lane`, `--model` and (where it has a default) `--role`.
#[derive(Debug, Clone, clap::Args)]
pub struct Writer {
    /// The writing lane's id
    #[arg(long, value_name = "LANE")]
    lane: String,
    /// The writing lane's model (its family is what maker/checker rules compare)
    #[arg(long, value_name = "MODEL")]
    model: String,
}

impl Writer {
    fn actor(&self, role: &str) -> Actor {
        Actor {
            lane: self.lane.clone(),
            role: role.to_owned(),
            model: self.model.clone(),
        }
    }
}

/// Runs one verb of `git hpp board`.
pub fn dispatch(ctx: &Ctx, cmd: BoardCommand) -> Result<Outcome, CliError> {
    let request = match cmd {
        BoardCommand::Status(args) => return status::cmd_board_status(ctx, &args),
        BoardCommand::Render(_) => return render::cmd_board_render(ctx),
        BoardCommand::Claim(args) => claim::request(args),
        BoardCommand::Set(args) => set::request(ctx, args)?,
        BoardCommand::Compete(args) => compete::request(args),
        BoardCommand::Select(args) => select::request(ctx, args)?,
        BoardCommand::Withdraw(args) => withdraw::request(args),
        BoardCommand::ReleaseFix(args) => release_fix::request(ctx, args)?,
        BoardCommand::StartReview(args) => start_review::request(ctx, args)?,
        BoardCommand::Approve(args) => approve::request(args),
    };
    write(ctx, &request)
}

/// Decides `request` against the board and appends what it produced: exit 0 written, 1 when a
/// board rule refused it, 2 for refused input.
fn write(ctx: &Ctx, request: &Request) -> Result<Outcome, CliError> {
    refuse_secrets(request)?;
    let store = ctx.store()?;
    match crate::board::write(store, request, &utc_now()) {
        Ok(written) => Ok(printed(&written)),
        Err(crate::board::Error::Rule(rule)) if !rule.is_input() => Ok(Outcome {
            stdout: Vec::new(),
            warnings: vec![format!("refused by the board: {rule}")],
            exit: Exit::Warn,
            chatter: false,
        }),
        Err(crate::board::Error::Store(e)) => Err(e.into()),
        Err(other) => Err(CliError::refused(other)),
    }
}

/// The lane registry now, from `refs/hpp/lanes/`.
pub(super) fn lanes(ctx: &Ctx) -> Result<LaneRegistry, CliError> {
    let source = crate::lanes::live_lane_source(ctx.store()?)?;
    Ok(board::lane_registry(
        &source,
        OffsetDateTime::now_utc().unix_timestamp(),
    ))
}

/// The current time as the board records it: UTC, ISO-8601, to the second.
fn utc_now() -> String {
    hpp_core::timestamp::utc_seconds(OffsetDateTime::now_utc())
}

/// Success prints the event as one JSON line; a write of several events prints the first
/// (the competition's), which names the others.
fn printed(written: &Written) -> Outcome {
    let first = written
        .events
        .first()
        .expect("a successful write appends at least one event");
    let value = serde_json::to_value(first).expect("board events serialise");
    let mut bytes = canonical_json(&value);
    bytes.push(b'\n');
    Outcome::raw(bytes)
}

/// Free text written to refs travels with every push: refuse anything secret-shaped.
fn refuse_secrets(request: &Request) -> Result<(), CliError> {
    let texts: Vec<&str> = match request {
        Request::Set(set) => [
            set.evidence.as_deref(),
            set.reason.as_deref(),
            set.branch.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect(),
        Request::Select { reason, .. } | Request::Approve { reason, .. } => {
            reason.as_deref().into_iter().collect()
        }
        Request::Withdraw { reason, .. } => vec![reason.as_str()],
        _ => Vec::new(),
    };
    if texts.iter().any(|t| secrets::looks_secret(t)) {
        return Err(CliError::refused(
            "the text looks like it carries a secret; the board travels with every push",
        ));
    }
    Ok(())
}

pub(super) fn read_board(ctx: &Ctx) -> Result<crate::board::Board, CliError> {
    match crate::board::read(ctx.store()?) {
        Ok(board) => Ok(board),
        Err(crate::board::Error::Store(e)) => Err(e.into()),
        Err(other) => Err(CliError::refused(other)),
    }
}
