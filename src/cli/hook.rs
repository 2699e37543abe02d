//! `git hpp hook pre-push|pre-receive|loop-gate|evidence-gate|secret-guard|turn-checkpoint`: what
//! the installed git hooks and the modules' agent-host hook scripts call.

use clap::Subcommand;

use crate::attest::VerifyOptions;
use crate::cli::ctx::Ctx;
use crate::cli::exit::CliError;
use crate::cli::output::Outcome;
use crate::gates::push::{self as gate, Refusal};
use hpp_core::gate::{Scope, Update};
use hpp_store::PendingUpdate;

/// The hooks git runs.
#[derive(Debug, Subcommand)]
#[allow(
    missing_docs,
    reason = "each verb\'s help is the doc comment of its Args struct, which a variant doc would replace"
)]
pub enum HookCommand {
    PrePush(PrePushArgs),
    PreReceive(PreReceiveArgs),
    LoopGate(LoopGateArgs),
    EvidenceGate(EvidenceGateArgs),
    SecretGuard(SecretGuardArgs),
    TurnCheckpoint(TurnCheckpointArgs),
}

/// The `--host` of an agent-host hook whose answer Claude Code and Codex read alike: taken so
/// every module script calls its hook the same way, and not needed to answer.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct SameAnswer {
    /// The host the hook runs under (both read the same answer to this hook)
    #[arg(long = "host", id = "host", value_name = "HOST", value_enum)]
    _host: crate::cli::HostArg,
}

/// An agent host's Stop hook: keep the workspace as it is after this turn
///
/// What continuity-kit's turn-checkpoint.sh runs. Reads the host's Stop JSON on stdin (its
/// session_id names the session, else `solo`) and, unless the workspace is the tree the last
/// checkpoint kept, writes refs/hpp/checkpoints/<session>/turn/<n>: checkpoint.json
/// (hpp.turn-checkpoint/v1) and the workspace snapshot tree, without touching the index or
/// HEAD. Restore one with `git restore --source=<ref>:snapshot --worktree -- .`. Observe-only:
/// prints nothing, exits 0 (a problem is a warning on stderr).
#[derive(Debug, clap::Args)]
pub struct TurnCheckpointArgs {
    #[command(flatten)]
    _host: SameAnswer,
}

/// An agent host's PreToolUse hook: refuse a write that would put a secret in the workspace
///
/// What operator-kit's secret-guard.sh runs. Reads the host's PreToolUse JSON on stdin (Write,
/// Edit, NotebookEdit; Codex's apply_patch) and denies the call when the text it writes has the
/// shape of a secret (a private key block, a live token: the detector that keeps secrets out
/// of snapshots and records), naming the file and the shape, never the value. Allows anything
/// else silently. Exits 0 (the answer is in the JSON).
#[derive(Debug, clap::Args)]
pub struct SecretGuardArgs {
    #[command(flatten)]
    _host: SameAnswer,
}

/// An agent host's Stop hook: block finishing while the loop has started but is not verified
///
/// What operator-kit's loop-gate.sh runs. Reads the host's Stop JSON on stdin. Prints
/// {"decision":"block","reason":...} (both hosts read it) naming the loop, its state and its
/// next step when the current loop has events and is not verified; prints nothing when no loop
/// was started, the loop is verified, outside a repository or on a detached HEAD, and always
/// when the host says a Stop hook already continued this turn (stop_hook_active), so it can
/// never keep an agent running forever. Exits 0.
#[derive(Debug, clap::Args)]
pub struct LoopGateArgs {
    #[command(flatten)]
    _host: SameAnswer,
}

/// An agent host's Stop hook: block finishing while a configured criterion does not pass
///
/// What operator-kit's evidence-gate.sh runs. Runs every criterion in git config hpp.criterion
/// (multi-valued; each value an argv as a JSON array of strings, e.g. ["cargo","test","--quiet"])
/// through `evidence run` (ids stop-criterion-<n>), so each run is an evidence bundle, and
/// prints {"decision":"block","reason":...} while any does not pass, with the end of its
/// output. With no criterion configured it prints a systemMessage saying nothing was checked.
/// Exits 0.
#[derive(Debug, clap::Args)]
pub struct EvidenceGateArgs {
    #[command(flatten)]
    _host: SameAnswer,
}

/// Refuse a push of a protected ref whose commits do not pass `git hpp verify`
///
/// Reads git's pre-push lines on stdin. Protected refs come from git config hpp.protect (ref
/// patterns; default refs/heads/main and refs/heads/master); git config hpp.verify says whether
/// the pushed tip (tip, the default) or every commit the push brings (each) must verify;
/// signatures are required as `git hpp verify` requires them (an allowed-signers file
/// configured, unless hpp.requireSigned=false). Deleting a ref passes; refs/hpp/* records pass
/// unless one keeps a secret-shaped line its branch does not hold (as `git hpp push` refuses).
/// Exits 0 to let the push go, 2 to refuse it (with the commit, what is missing, and the command
/// that would fix it). A client hook can be skipped (--no-verify): the server's pre-receive gate
/// is the one that holds.
#[derive(Debug, clap::Args)]
pub struct PrePushArgs {
    /// The remote's name, as git passes it
    remote: Option<String>,
    /// The remote's URL, as git passes it
    url: Option<String>,
}

/// Refuse, on the server, an update of a protected ref whose commits do not verify
///
/// What `git hpp hooks install --server` installs as hooks/pre-receive in the repository others
/// push to. Reads git's pre-receive lines (<old> <new> <ref>) on stdin; the push's objects are
/// read from git's quarantine and its refs/hpp/* updates count as landed, so an atomic push of
/// the records and the branch together passes. Protected refs, hpp.verify and the signature
/// requirement are read from the server repository's config, as for pre-push. A refs/hpp/*
/// record that keeps a secret-shaped line its branch does not hold is refused too, as by
/// `git hpp push`. Exits 0 to accept the push, 2 to refuse all of it (git then updates no ref).
#[derive(Debug, clap::Args)]
pub struct PreReceiveArgs {}

/// Runs one hook.
pub fn dispatch(ctx: &Ctx, command: HookCommand) -> Result<Outcome, CliError> {
    match command {
        HookCommand::PrePush(args) => cmd_hook_pre_push(ctx, &args),
        HookCommand::PreReceive(args) => cmd_hook_pre_receive(ctx, &args),
        HookCommand::LoopGate(_) => cmd_hook_loop_gate(ctx),
        HookCommand::EvidenceGate(_) => cmd_hook_evidence_gate(ctx),
        HookCommand::SecretGuard(_) => cmd_hook_secret_guard(ctx),
        HookCommand::TurnCheckpoint(_) => cmd_hook_turn_checkpoint(ctx),
    }
}

fn cmd_hook_turn_checkpoint(ctx: &Ctx) -> Result<Outcome, CliError> {
    let written = (|| -> Result<(), String> {
        let input = crate::cli::input::read_hook_input(
            ctx,
            hpp_core::host::Blank::Empty,
            crate::cli::input::HookNoun::Input,
        )
        .map_err(|e| e.message)?;
        let session = input
            .session_id
            .clone()
            .unwrap_or_else(|| "solo".to_owned());
        let store = ctx.store().map_err(|e| e.message)?;
        let at = hpp_core::timestamp::rfc3339(time::OffsetDateTime::now_utc());
        crate::continuity_checkpoint::write(store, &session, &at).map_err(|e| e.to_string())?;
        Ok(())
    })();
    Ok(match written {
        Ok(()) => Outcome::raw(Vec::new()),
        Err(why) => Outcome::raw(Vec::new()).warn(format!("turn checkpoint: {why}")),
    })
}

fn cmd_hook_secret_guard(ctx: &Ctx) -> Result<Outcome, CliError> {
    let input = crate::cli::input::read_hook_input(
        ctx,
        hpp_core::host::Blank::Refused,
        crate::cli::input::HookNoun::Input,
    )?;
    let text = input.written_text();
    let Some(shape) = hpp_core::secrets::shape_in_file(text.as_bytes()) else {
        return Outcome::answer(hpp_core::host::Answer::Silent);
    };
    let paths: Vec<String> = input
        .edited_paths()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let target = if paths.is_empty() {
        "the file".to_owned()
    } else {
        paths.join(", ")
    };
    Outcome::answer(hpp_core::host::Answer::permission(
        hpp_core::host::Permission::Deny,
        format!(
            "secret guard: this write puts {shape} into {target}; keep secrets out of the workspace (read them from the environment or a secrets manager): snapshots and records are pushed with the repository"
        ),
    ))
}

/// The Stop answer both hosts read: block with a reason.
fn stop_block(reason: &str) -> Outcome {
    Outcome::json(
        &serde_json::json!({"decision": "block", "reason": reason}),
        crate::cli::exit::Exit::Ok,
    )
}

/// What a Stop gate found: let the stop go with this answer, or block it with a reason.
enum StopCheck {
    Go(Outcome),
    Block(String),
}

/// Runs a Stop gate so that it always ends: a stop the host says a Stop hook already continued
/// (`stop_hook_active`) goes through unchecked, and after [`crate::gates::stop::CAP`] blocks of
/// the same session in a row the next stop goes through with a systemMessage saying why (a
/// host that caps nothing, as Codex, would otherwise run forever on a criterion that never
/// passes). Outside a repository nothing is counted and the check answers alone.
fn stop_gate(
    ctx: &Ctx,
    gate: &str,
    input: &hpp_core::host::HookInput,
    check: impl FnOnce() -> Result<StopCheck, CliError>,
) -> Result<Outcome, CliError> {
    use crate::gates::stop;
    let session = input.session_id.as_deref().unwrap_or("solo");
    let store = ctx.store().ok();
    // Let go unchecked: the person is told what is still running.
    let said = |message: String| {
        Outcome::json(
            &serde_json::json!({ "systemMessage": message }),
            crate::cli::exit::Exit::Ok,
        )
    };
    if input.stop_hook_active {
        if let Some(store) = store {
            stop::reset(store, gate, session);
        }
        return Ok(unchecked(ctx).map_or_else(|| Outcome::raw(Vec::new()), said));
    }
    if let Some(store) = store
        && stop::blocks_in_a_row(store, gate, session) >= stop::CAP
    {
        stop::reset(store, gate, session);
        let mut message = format!(
            "{gate}: blocked this session's stop {} times in a row, so this stop goes through; the work may not be done (the next stop is checked again)",
            stop::CAP
        );
        if let Some(running) = unchecked(ctx) {
            message = format!("{message}. {running}");
        }
        return Ok(said(message));
    }
    match check()? {
        StopCheck::Go(answer) => {
            if let Some(store) = store {
                stop::reset(store, gate, session);
            }
            Ok(answer)
        }
        StopCheck::Block(reason) => {
            if let Some(store) = store
                && let Err(e) = stop::count_block(store, gate, session)
            {
                return Ok(stop_block(&reason).warn(format!(
                    "{gate}: the count of blocks in a row could not be written: {e}"
                )));
            }
            Ok(stop_block(&reason))
        }
    }
}

fn cmd_hook_loop_gate(ctx: &Ctx) -> Result<Outcome, CliError> {
    let input = crate::cli::input::read_hook_input(
        ctx,
        hpp_core::host::Blank::Empty,
        crate::cli::input::HookNoun::Input,
    )?;
    stop_gate(ctx, "loop gate", &input, || loop_gate_check(ctx))
}

fn loop_gate_check(ctx: &Ctx) -> Result<StopCheck, CliError> {
    let standing = (|| -> Result<Option<(String, String, usize, String)>, CliError> {
        let store = ctx.store()?;
        let manifest = ctx.manifest()?;
        let id = ctx.loop_id(None)?;
        let state = crate::events::cache::read_standing(store, manifest.loop_spec(), &id)?;
        let p = state.require_intact()?;
        Ok(Some((
            id.to_string(),
            p.state.clone(),
            p.event_count,
            p.next_step.clone(),
        )))
    })();
    match standing {
        Ok(Some((loop_id, state, count, next))) if count > 0 && state != "verified" => {
            Ok(StopCheck::Block(format!(
                "Loop {loop_id} is {state}, not verified. Next step: {next}. Do it and record it with git hpp (git hpp status --loop {loop_id} shows where the loop stands) before finishing, or say plainly that the work is not done."
            )))
        }
        Ok(_) => Ok(StopCheck::Go(Outcome::raw(Vec::new()))),
        Err(e)
            if e.message.contains("not a git repository")
                || e.message.contains("HEAD is detached") =>
        {
            Ok(StopCheck::Go(Outcome::raw(Vec::new())))
        }
        Err(e) => Ok(StopCheck::Block(format!(
            "The loop gate could not read the loop: {}. Fix it before finishing (run: git hpp status).",
            e.message
        ))),
    }
}

fn cmd_hook_evidence_gate(ctx: &Ctx) -> Result<Outcome, CliError> {
    // The gate needs the session and stop_hook_active; input it cannot read counts as neither,
    // as before, so a criterion still decides.
    let input = crate::cli::input::read_hook_input(
        ctx,
        hpp_core::host::Blank::Empty,
        crate::cli::input::HookNoun::Input,
    )
    .unwrap_or_default();
    ctx.store()?;
    stop_gate(ctx, "evidence gate", &input, || evidence_gate_check(ctx))
}

fn evidence_gate_check(ctx: &Ctx) -> Result<StopCheck, CliError> {
    use crate::gates::criteria::{self, Judged};
    let store = ctx.store()?;
    let criteria = store.config_strings("hpp.criterion");
    if criteria.is_empty() {
        return Ok(StopCheck::Go(Outcome::json(
            &serde_json::json!({"systemMessage": "evidence gate: no criterion is configured (git config --add hpp.criterion '[\"cargo\",\"test\"]'), so nothing was checked"}),
            crate::cli::exit::Exit::Ok,
        )));
    }
    let mut failed = Vec::new();
    let mut argvs = Vec::new();
    for (n, text) in criteria.iter().enumerate() {
        match serde_json::from_str::<Vec<String>>(text) {
            Ok(argv) if !argv.is_empty() => argvs.push(argv),
            _ => failed.push(format!(
                "criterion {} ({text}) is not a JSON array of strings",
                n + 1
            )),
        }
    }
    if !failed.is_empty() {
        return Ok(StopCheck::Block(format!(
            "Not done: a criterion cannot be read. {}. Fix git config hpp.criterion and stop again.",
            failed.join("; ")
        )));
    }
    let budget = match store.config_string("hpp.evidenceGate.budgetSeconds") {
        None => criteria::BUDGET,
        Some(text) => match text.parse::<u64>() {
            Ok(s) if (1..=criteria::BUDGET.as_secs()).contains(&s) => {
                std::time::Duration::from_secs(s)
            }
            _ => {
                return Ok(StopCheck::Block(format!(
                    "The evidence gate cannot read git config hpp.evidenceGate.budgetSeconds ({text:?}): a whole number of seconds from 1 to {}. Fix it and stop again.",
                    criteria::BUDGET.as_secs()
                )));
            }
        },
    };
    let exe = std::env::current_exe()
        .map_err(|e| CliError::internal("cannot find this git-hpp binary", &e))?;
    let judged = criteria::judge(store, &argvs, budget, &exe)?;
    let mut unchecked = Vec::new();
    for (n, (argv, judged)) in argvs.iter().zip(&judged).enumerate() {
        let n = n + 1;
        let command = argv.join(" ");
        match judged {
            Judged::Passed => {}
            Judged::Failed(why) => failed.push(format!("criterion {n} ({command}) {why}")),
            Judged::Broken(why) => {
                failed.push(format!("criterion {n} ({command}) could not run: {why}"));
            }
            Judged::Running(at) => unchecked.push(format!(
                "criterion {n} ({command}) is still running in the background (started {at}); it records its evidence when it ends"
            )),
            Judged::Waiting => unchecked.push(format!(
                "criterion {n} ({command}) waits for the one before it"
            )),
        }
    }
    if !failed.is_empty() {
        return Ok(StopCheck::Block(format!(
            "Not done: a criterion does not pass. {}. Fix the cause and stop again; each run is recorded (git hpp evidence list).",
            failed.join("; ")
        )));
    }
    if !unchecked.is_empty() {
        return Ok(StopCheck::Block(format!(
            "Not checked yet: {}. It did not finish within the stop's budget of {} s (git config hpp.evidenceGate.budgetSeconds). Go on with other work or stop again later; the next stop answers from its evidence.",
            unchecked.join("; "),
            budget.as_secs()
        )));
    }
    Ok(StopCheck::Go(Outcome::raw(Vec::new())))
}

/// What a Stop gate that lets the stop go must tell the person: the criteria still running in
/// the background, whose verdict this turn ends without.
fn unchecked(ctx: &Ctx) -> Option<String> {
    let store = ctx.store().ok()?;
    let running = crate::gates::criteria::running(store);
    (!running.is_empty()).then(|| {
        let list: Vec<String> = running
            .iter()
            .map(|(n, at)| format!("criterion {n} (started {at})"))
            .collect();
        format!(
            "evidence gate: UNCHECKED: {} still running in the background; this turn ends without its verdict (git hpp evidence list shows it when it ends)",
            list.join(", ")
        )
    })
}

/// Checks the push, on the client.
pub fn cmd_hook_pre_push(ctx: &Ctx, args: &PrePushArgs) -> Result<Outcome, CliError> {
    let input = ctx.read_stdin(crate::cli::input::PUSH_INPUT_CAP, "the pre-push input")?;
    let updates = hpp_core::gate::parse(&input)?;
    let destination = args
        .remote
        .as_deref()
        .or(args.url.as_deref())
        .unwrap_or("the remote")
        .to_owned();
    // The records the push brings must not publish a secret their branch does not hold.
    crate::gates::secrets::check(ctx.store()?, &updates)?;
    check(ctx, &updates, &destination)
}

/// Checks the push, on the server.
pub fn cmd_hook_pre_receive(ctx: &Ctx, _args: &PreReceiveArgs) -> Result<Outcome, CliError> {
    let input = ctx.read_stdin(crate::cli::input::PUSH_INPUT_CAP, "the pre-receive input")?;
    let updates = hpp_core::gate::parse_receive(&input)?;
    // The roots already here decide: the policy this repository holds before the push is
    // verified, pinned and remembered, so a policy pushed now must follow it in its place.
    let here = hpp_store::Store::discover(ctx.cwd())?;
    crate::trust::in_force(&here)?;
    drop(here);
    let pending: Vec<PendingUpdate> = updates
        .iter()
        .map(|u| PendingUpdate {
            name: u.remote_ref.clone(),
            new: pending_new(&u.local_oid),
        })
        .collect();
    let store = ctx.receive(&pending)?;
    // A record that would publish a secret is refused for that, whatever else is wrong with it.
    crate::gates::secrets::check(store, &updates)?;
    // The records next: what the push does under refs/hpp/ is read as a fetch reads it.
    let received: Vec<crate::reconcile::Received> = updates
        .iter()
        .map(|u| crate::reconcile::Received {
            name: u.remote_ref.clone(),
            old: u.old().map(str::to_owned),
            new: pending_new(&u.local_oid),
        })
        .collect();
    let manifest = ctx.manifest()?;
    let refused = crate::reconcile::receive(store, manifest.loop_spec(), &received)?;
    if let Some((first, rest)) = refused.split_first() {
        let mut error = CliError::refused(format!(
            "push to this repository refused: {}: {}",
            first.name, first.reason
        ));
        for other in rest {
            error = error.hint(format!("also {}: {}", other.name, other.reason));
        }
        return Err(error);
    }
    check(ctx, &updates, "this repository")
}

/// The new value of a pushed ref, `None` for a deletion (all zeros).
fn pending_new(oid: &str) -> Option<String> {
    (!oid.bytes().all(|b| b == b'0')).then(|| oid.to_owned())
}

/// Runs the gate over `updates` with the repository's configuration; a refusal names the first
/// commit that does not verify, what is missing, the fix, and every other one after it.
fn check(ctx: &Ctx, updates: &[Update], destination: &str) -> Result<Outcome, CliError> {
    let store = ctx.store()?;
    let trust = ctx.trust(None, false, false)?;
    // The policy's settings, when it has them, are what every clone and server guards.
    let settings = trust.policy.as_ref().map(|v| &v.policy.settings);
    let verify = settings
        .and_then(|s| s.verify.clone())
        .or_else(|| store.config_string("hpp.verify"));
    let scope = Scope::from_config(verify.as_deref())?;
    let protect = settings
        .map(|s| s.protect.clone())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| store.config_strings("hpp.protect"));
    let options = VerifyOptions::of(&trust);
    let refused = gate::check(store, updates, &protect, scope, options)?;
    match refused.first() {
        None => Ok(Outcome::raw(Vec::new())),
        Some(first) => Err(refusal(first, &refused[1..], destination)),
    }
}

fn refusal(first: &Refusal, rest: &[Refusal], destination: &str) -> CliError {
    let Refusal { reference, verdict } = first;
    let mut error = CliError::refused(format!(
        "push to {destination} refused: {reference} at {} was never verified: {}",
        &verdict.commit.as_str()[..12],
        verdict.missing.as_deref().unwrap_or_default()
    ));
    error = error.hint(verdict.fix.clone().unwrap_or_default());
    for other in rest {
        error = error.hint(format!(
            "also {} at {}: {}",
            other.reference,
            &other.verdict.commit.as_str()[..12],
            other.verdict.missing.as_deref().unwrap_or_default()
        ));
    }
    error
}
