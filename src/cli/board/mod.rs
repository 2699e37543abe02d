//! `git hpp board`: the lane board on refs (claim, set, compete, select, withdraw, release-fix,
//! start-review, approve, status, render).

mod render;

use serde_json::Value;
use time::OffsetDateTime;

use super::ctx::Ctx;
use super::deliberate::read_sealed;
use super::exit::{CliError, Exit};
use super::output::Outcome;
use crate::board::Written;
use crate::evidence::{self, ArtifactCheck};
use hpp_core::board::{
    self, Actor, Choice, Deliberated, DeliberationRef, Event, EvidenceCheck, EvidenceRef,
    LaneRegistry, Request, SetRequest, State, VerdictBy,
};
use hpp_core::deliberation;
use hpp_core::record::canonical_json;
use hpp_core::secrets;
use hpp_store::refs;

/// The verbs of `git hpp board`.
#[derive(Debug, clap::Subcommand)]
pub enum BoardCommand {
    /// Claim an item for a lane (set ITEM CLAIMED)
    ///
    /// Prints the event as one JSON line. Exit 0 written, 1 refused by a board rule,
    /// 2 refused input, 3 usage.
    Claim(ClaimArgs),
    /// Move an item to a state, along the board's transitions only
    ///
    /// CHECKPOINT-READY needs --role executor, the owner's lane and --evidence-record naming an
    /// evidence bundle that verifies valid. VERIFIED and NEEDS-FIX need --role reviewer,
    /// --verdict-by-lane and --verdict-by-model of a lane that built nothing of the item and a
    /// model family no builder shares. DEFERRED needs --checker-unavailable. MERGED needs a prior
    /// VERIFIED, a decided competition, and for a red item --human-approved or an APPROVED event.
    /// Prints the event as one JSON line. Exit 0 written, 1 refused by a board rule, 2 refused
    /// input, 3 usage.
    Set(SetArgs),
    /// Declare a competition (best-of-N) between claimed items built by different lanes
    ///
    /// Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    Compete(CompeteArgs),
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
    Select(SelectArgs),
    /// Withdraw one candidate from an undecided competition (WITHDRAWN for good)
    ///
    /// Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    Withdraw(WithdrawArgs),
    /// Queue the fix of a NEEDS-FIX item for a lane (FIX-QUEUED)
    ///
    /// Only the target lane may then take the item back to BUILDING. Exit 0 written, 1 refused
    /// by a board rule, 2 refused input, 3 usage.
    ReleaseFix(ReleaseFixArgs),
    /// Hand a CHECKPOINT-READY or DEFERRED item to a reviewer lane (UNDER-REVIEW)
    ///
    /// Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    StartReview(StartReviewArgs),
    /// Approve a VERIFIED red item as a person (APPROVED)
    ///
    /// Exit 0 written, 1 refused by a board rule, 2 refused input, 3 usage.
    Approve(ApproveArgs),
    /// Print board events as JSON: all, one item's, or one competition's
    ///
    /// Exit 0, 2 when the board log is corrupt.
    Status(StatusArgs),
    /// Print the board as Markdown: one section per item, then the competitions
    ///
    /// Writes no file. Exit 0, 2 when the board log is corrupt.
    Render(RenderArgs),
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

/// Claim an item
#[derive(Debug, clap::Args)]
pub struct ClaimArgs {
    /// The item
    item: String,
    #[command(flatten)]
    writer: Writer,
    /// The claiming lane's role
    #[arg(long, default_value = "executor")]
    role: String,
    /// Tag the item (red: merging it needs a person's approval; sticky)
    #[arg(long, value_parser = ["red"])]
    tag: Option<String>,
    /// Why
    #[arg(long)]
    reason: Option<String>,
}

/// Move an item to a state
#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// The item
    item: String,
    /// The new state (CLAIMED, BUILDING, CHECKPOINT-READY, UNDER-REVIEW, VERIFIED, NEEDS-FIX,
    /// DEFERRED, MERGED)
    state: State,
    #[command(flatten)]
    writer: Writer,
    /// The writing lane's role (executor, reviewer, coordinator, ...)
    #[arg(long)]
    role: String,
    /// A free-text note on the evidence (CHECKPOINT-READY still needs --evidence-record)
    #[arg(long, value_name = "TEXT")]
    evidence: Option<String>,
    /// An evidence bundle: an id (its newest bundle), <id>-<stamp>, or refs/hpp/evidence/...
    #[arg(long, value_name = "ID")]
    evidence_record: Option<String>,
    /// The checker's lane (VERIFIED, NEEDS-FIX)
    #[arg(long, value_name = "LANE")]
    verdict_by_lane: Option<String>,
    /// The checker's model (VERIFIED, NEEDS-FIX)
    #[arg(long, value_name = "MODEL")]
    verdict_by_model: Option<String>,
    /// Tag the item (red: merging it needs a person's approval; sticky)
    #[arg(long, value_parser = ["red"])]
    tag: Option<String>,
    /// A person approved the merge of a red item
    #[arg(long)]
    human_approved: bool,
    /// No checker of another family was available (records DEFERRED)
    #[arg(long)]
    checker_unavailable: bool,
    /// The branch merged
    #[arg(long)]
    branch: Option<String>,
    /// Why
    #[arg(long)]
    reason: Option<String>,
}

/// Declare a competition
#[derive(Debug, clap::Args)]
pub struct CompeteArgs {
    /// The competition's id
    #[arg(long)]
    task: String,
    /// The candidate items, comma-separated (at least two)
    #[arg(long, value_delimiter = ',', required = true)]
    items: Vec<String>,
    #[command(flatten)]
    writer: Writer,
    /// The declaring lane's role
    #[arg(long, default_value = "coordinator")]
    role: String,
}

/// Decide a competition
#[derive(Debug, clap::Args)]
#[command(group(
    clap::ArgGroup::new("outcome")
        .required(true)
        .multiple(true)
        .args(["winner", "checker_unavailable", "deliberation"])
))]
pub struct SelectArgs {
    /// The competition
    #[arg(long)]
    task: String,
    /// The winning candidate
    #[arg(long)]
    winner: Option<String>,
    /// No checker of another family was available: record DEFERRED, no winner
    #[arg(long)]
    checker_unavailable: bool,
    /// A sealed design House Session decides (a file, refs/hpp/deliberations/<id> or <id>)
    #[arg(long, value_name = "REC")]
    deliberation: Option<String>,
    /// The selecting lane's id (required without --deliberation)
    #[arg(long, value_name = "LANE")]
    lane: Option<String>,
    /// The selecting lane's model (required without --deliberation)
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// The selecting lane's role
    #[arg(long, default_value = "reviewer")]
    role: String,
    /// Why
    #[arg(long)]
    reason: Option<String>,
}

/// Withdraw a candidate
#[derive(Debug, clap::Args)]
pub struct WithdrawArgs {
    /// The competition
    #[arg(long)]
    task: String,
    /// The candidate to withdraw
    #[arg(long)]
    item: String,
    #[command(flatten)]
    writer: Writer,
    /// The withdrawing lane's role
    #[arg(long, default_value = "coordinator")]
    role: String,
    /// Why (required)
    #[arg(long)]
    reason: String,
}

/// Queue a fix
#[derive(Debug, clap::Args)]
pub struct ReleaseFixArgs {
    /// The item
    item: String,
    /// The lane that builds the fix
    #[arg(long, value_name = "LANE")]
    target_lane: String,
    #[command(flatten)]
    writer: Writer,
    /// The releasing lane's role
    #[arg(long, default_value = "coordinator")]
    role: String,
    /// Released by an operator (needed to reroute a fix already queued)
    #[arg(long)]
    operator: bool,
}

/// Start a review
#[derive(Debug, clap::Args)]
pub struct StartReviewArgs {
    /// The item
    item: String,
    /// The reviewer's lane
    #[arg(long, value_name = "LANE")]
    target_lane: String,
    /// The reviewer's model (checked against the builders' families when given)
    #[arg(long, value_name = "MODEL")]
    target_model: Option<String>,
    #[command(flatten)]
    writer: Writer,
    /// The starting lane's role
    #[arg(long, default_value = "coordinator")]
    role: String,
}

/// Approve a red item
#[derive(Debug, clap::Args)]
pub struct ApproveArgs {
    /// The item
    item: String,
    /// Who approves
    #[arg(long, value_name = "LANE", default_value = "human")]
    lane: String,
    /// Why
    #[arg(long)]
    reason: Option<String>,
}

/// Print board events
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// An item or a competition id [default: every event]
    id: Option<String>,
}

/// Print the board as Markdown
#[derive(Debug, clap::Args)]
pub struct RenderArgs {}

/// Runs one verb of `git hpp board`.
pub fn dispatch(ctx: &Ctx, cmd: BoardCommand) -> Result<Outcome, CliError> {
    let request = match cmd {
        BoardCommand::Status(args) => return cmd_status(ctx, &args),
        BoardCommand::Render(_) => return cmd_render(ctx),
        BoardCommand::Claim(args) => {
            let mut set =
                SetRequest::new(&args.item, State::Claimed, args.writer.actor(&args.role));
            set.red = args.tag.is_some();
            set.reason = args.reason;
            Request::Set(set)
        }
        BoardCommand::Set(args) => Request::Set(set_request(ctx, args)?),
        BoardCommand::Compete(args) => Request::Compete {
            task: args.task,
            items: args.items.iter().map(|s| s.trim().to_owned()).collect(),
            actor: args.writer.actor(&args.role),
        },
        BoardCommand::Select(args) => select_request(ctx, args)?,
        BoardCommand::Withdraw(args) => Request::Withdraw {
            task: args.task,
            item: args.item,
            actor: args.writer.actor(&args.role),
            reason: args.reason,
        },
        BoardCommand::ReleaseFix(args) => Request::ReleaseFix {
            item: args.item,
            target_lane: args.target_lane,
            actor: args.writer.actor(&args.role),
            operator: args.operator,
            lanes: lanes(ctx)?,
        },
        BoardCommand::StartReview(args) => Request::StartReview {
            item: args.item,
            target_lane: args.target_lane,
            target_model: args.target_model,
            actor: args.writer.actor(&args.role),
            lanes: lanes(ctx)?,
        },
        BoardCommand::Approve(args) => Request::Approve {
            item: args.item,
            actor: Actor {
                lane: args.lane,
                role: "human".to_owned(),
                model: "human".to_owned(),
            },
            reason: args.reason,
        },
    };
    refuse_secrets(&request)?;
    let store = ctx.store()?;
    match crate::board::write(store, &request, &utc_now()) {
        Ok(written) => Ok(printed(&written)),
        Err(crate::board::Error::Rule(rule)) if !rule.is_input() => Ok(Outcome {
            stdout: Vec::new(),
            warnings: vec![format!("refused by the board: {rule}")],
            exit: Exit::Warn,
        }),
        Err(crate::board::Error::Store(e)) => Err(e.into()),
        Err(other) => Err(CliError::refused(other)),
    }
}

/// The request of `select`: a winner or DEFERRED by the writing lane, or the verdict of a
/// sealed House Session by its judge.
fn select_request(ctx: &Ctx, args: SelectArgs) -> Result<Request, CliError> {
    let Some(name) = args.deliberation.as_deref() else {
        if args.winner.is_some() && args.checker_unavailable {
            return Err(CliError::usage(
                "--winner and --checker-unavailable exclude each other",
            ));
        }
        let (Some(lane), Some(model)) = (args.lane, args.model) else {
            return Err(CliError::usage("select needs --lane and --model"));
        };
        let writer = Writer { lane, model };
        return Ok(Request::Select {
            task: args.task,
            choice: match args.winner {
                Some(winner) => Choice::Winner(winner),
                None => Choice::CheckerUnavailable,
            },
            actor: writer.actor(&args.role),
            reason: args.reason,
        });
    };
    let forbidden: Vec<&str> = [
        ("--winner", args.winner.is_some()),
        ("--lane", args.lane.is_some()),
        ("--model", args.model.is_some()),
        ("--checker-unavailable", args.checker_unavailable),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect();
    if !forbidden.is_empty() {
        return Err(CliError::refused(format!(
            "{} cannot be given with --deliberation: the session's recommendation is the winner \
             and its judge the selector",
            forbidden.join(", ")
        )));
    }
    let deliberated = deliberated(ctx, name)?;
    let actor = Actor {
        lane: deliberated.judge.lane.clone(),
        role: args.role,
        model: deliberated.judge.model.clone(),
    };
    Ok(Request::Select {
        task: args.task,
        choice: Choice::Deliberation(deliberated),
        actor,
        reason: args.reason,
    })
}

/// Reads a sealed House Session (a file, a ref or an id), refuses it unless it verifies, and
/// takes what `select` needs from it.
fn deliberated(ctx: &Ctx, name: &str) -> Result<Deliberated, CliError> {
    let (record, reference) = read_sealed(ctx, name)?;
    if let deliberation::Verification::Broken { reason, .. } = deliberation::verify_record(&record)
    {
        return Err(CliError::refused(format!(
            "the deliberation record does not verify: {reason}"
        )));
    }
    let panel = &record["panel"];
    let judge = deliberation::panel::judge_seat(panel);
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Ok(Deliberated {
        session_type: text(&panel["session_type"]),
        options: deliberation::panel::options(panel),
        status: text(&record["verdict"]["status"]),
        value: record["verdict"]["value"].as_str().map(str::to_owned),
        judge: VerdictBy {
            lane: text(&judge["lane"]),
            model: text(&judge["model_served"]),
        },
        record: DeliberationRef {
            id: deliberation::record_id(&record),
            record_sha256: text(&record["record_sha256"]),
            reference,
        },
    })
}

/// The lane registry now, from `refs/hpp/lanes/`.
fn lanes(ctx: &Ctx) -> Result<LaneRegistry, CliError> {
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

fn set_request(ctx: &Ctx, args: SetArgs) -> Result<SetRequest, CliError> {
    let mut set = SetRequest::new(&args.item, args.state, args.writer.actor(&args.role));
    set.evidence = args.evidence;
    set.verdict_by_lane = args.verdict_by_lane;
    set.verdict_by_model = args.verdict_by_model;
    set.red = args.tag.is_some();
    set.human_approved = args.human_approved;
    set.checker_unavailable = args.checker_unavailable;
    set.branch = args.branch;
    set.reason = args.reason;
    if let Some(name) = args.evidence_record.as_deref() {
        set.evidence_record = Some(check_evidence(ctx, name)?);
    }
    Ok(set)
}

/// Resolves and verifies an evidence bundle now; the board rule only sees the verdict. A name
/// that resolves to no bundle is refused input (exit 2).
fn check_evidence(ctx: &Ctx, name: &str) -> Result<EvidenceCheck, CliError> {
    if name.starts_with("refs/") && !name.starts_with(refs::EVIDENCE_PREFIX) {
        return Err(CliError::refused(format!(
            "--evidence-record must name a bundle under {}, not {name}",
            refs::EVIDENCE_PREFIX
        )));
    }
    let store = ctx.store()?;
    let record_ref = evidence::resolve(store, name)?;
    let allowed = ctx.allowed_signers(None)?;
    let check = store
        .workdir()
        .map_or(ArtifactCheck::RecordOnly, ArtifactCheck::Workspace);
    let report = evidence::verify(store, &record_ref, allowed.as_ref(), check)?;
    Ok(EvidenceCheck {
        record: EvidenceRef {
            record_ref,
            id: report.id,
            record_sha256: report.record_sha256,
        },
        status: report.status.to_owned(),
        problems: report.problems,
    })
}

fn read_board(ctx: &Ctx) -> Result<crate::board::Board, CliError> {
    match crate::board::read(ctx.store()?) {
        Ok(board) => Ok(board),
        Err(crate::board::Error::Store(e)) => Err(e.into()),
        Err(other) => Err(CliError::refused(other)),
    }
}

fn cmd_status(ctx: &Ctx, args: &StatusArgs) -> Result<Outcome, CliError> {
    let board = read_board(ctx)?;
    let selected: Vec<&Event> = board
        .events
        .iter()
        .filter(|e| match (&args.id, e) {
            (None, _) => true,
            (Some(id), Event::Item(e)) => &e.item_id == id,
            (Some(id), Event::Competition(e)) => &e.task_id == id,
        })
        .collect();
    let value: Value = crate::board::to_value(&selected);
    Ok(Outcome::json(&value, Exit::Ok))
}

fn cmd_render(ctx: &Ctx) -> Result<Outcome, CliError> {
    let board = read_board(ctx)?;
    Ok(Outcome::raw(render::markdown(&board.events).into_bytes()))
}
