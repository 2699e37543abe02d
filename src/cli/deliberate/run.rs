//! `git hpp deliberate run`: drive a House Session through the seats' declared commands, then
//! the judge's, and seal it at `refs/hpp/deliberations/<id>` with each seat's verbatim text.

use std::path::PathBuf;

use serde_json::json;

use super::plan::check_schema;
use super::record::SealArgs;
use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::input::{JsonRoot, read_json};
use crate::cli::output::Outcome;
use crate::deliberation::run::{self, Ended, Request};
use crate::process;
use hpp_core::deliberation::{normalise_panel, seat};

/// Run a House Session through the seats' commands and seal it
///
/// The panel (hpp.panel/v1) is validated as by `plan`. --seats gives each participant seat's
/// command and the judge's as argvs (run directly, never through a shell, each in its own
/// process group, stopped at --timeout): {"schema": "hpp.seats/v1", "seats": {"<seat>":
/// ["prog", "arg", ...]}, "judge": ["prog", ...], "judge_method"?: "local-model" or
/// "external-model"}. Every participant needs a command, and no other seat may be named.
///
/// Rounds run from 1, each seat in panel order, in the current directory. A seat reads one JSON
/// object on stdin (ASCII-escaped): {"panel": <normalised panel>, "seat", "round",
/// "seen_turns": [turn sha256s], "turns": [{"turn": <hpp.turn/v1>, "text"}]}. Round 1 is blind
/// (no turns, empty seen_turns); a later round shows every turn of earlier rounds with its
/// text, and nothing of its own round. The seat answers one JSON object on stdout with only the
/// keys position, confidence, claims and text; the runner builds its hpp.turn/v1 (text_sha256
/// and chars from the text, seen_turns, panel_sha256) by the turn rules. A text that is an
/// hpp.findings document must pass `findings check`. A seat that exits non-zero, times out,
/// prints more than 4 MiB or answers anything else gives no turn that round: it is not judged
/// (why, on stderr), and the session stops not-judged with a blocked verdict. After each round
/// the stop rules apply (as `stop`); no round runs after the session stopped.
///
/// Unless it stopped not-judged, the judge reads {"panel", "turns", "tally", "stop"} and
/// answers {"decision": <hpp.decision/v1>, "rationale"?: <hpp.rationale/v1>}, checked as
/// `record` checks --judge and --rationale. A judge that fails, or whose records those rules
/// refuse, is sealed as the judge seat's instrument failure (method judge_method, default
/// external-model; the error says what happened), exit 1.
///
/// Seats and the judge are read-only: git's view of the repository (status with untracked
/// files, the diff against HEAD, untracked contents, HEAD and where it points, every ref
/// including refs/hpp, worktrees, config, hooks, info/exclude) is fingerprinted before the
/// first command and after each; a change is refused, naming the command and what changed, and
/// nothing is sealed. Ignored files are not seen.
///
/// The session is sealed as by `record` at refs/hpp/deliberations/<panel id>-<hash>, whose tree
/// also keeps texts/<n>.txt, the verbatim text turns/<n>.json hashes (`verify` checks them).
/// Prints {"status": "recorded", "ref", "record", "record_sha256", "stop", "verdict",
/// "dissent", "decision", "rounds", "failures": [{"seat", "round", "reason"}]}. When no seat
/// answered in a round there is no round to seal: prints {"status": "not-recorded", "round",
/// "failures"} and writes nothing.
///
/// Exit codes: 0 a recommendation or an abstention, 1 a blocked verdict, a judge failure or
/// nothing to seal, 2 refused (bad panel or seats file, a command that changed the repository;
/// nothing written).
#[derive(Debug, clap::Args)]
pub struct DeliberateRunArgs {
    /// The panel (hpp.panel/v1)
    #[arg(long, value_name = "PANEL.json")]
    panel: PathBuf,
    /// The seats' and the judge's commands (hpp.seats/v1)
    #[arg(long, value_name = "SEATS.json")]
    seats: PathBuf,
    /// Seconds each seat's or the judge's command may run
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    timeout: f64,
    #[command(flatten)]
    seal: SealArgs,
}

/// `git hpp deliberate run`.
pub fn cmd_deliberate_run(ctx: &Ctx, args: &DeliberateRunArgs) -> Result<Outcome, CliError> {
    let timeout = process::valid_timeout(args.timeout)?;
    let document = read_json(ctx, &args.panel, JsonRoot::Object)?;
    check_schema(&document)?;
    let panel = normalise_panel(&document)?;
    let seats = seat::parse_seats(&read_json(ctx, &args.seats, JsonRoot::Object)?, &panel)?;
    // Refuse a signer the seal would refuse before any seat spends a round.
    if let Some(problem) = args.seal.signer().and_then(|s| panel.signer_problem(s)) {
        return Err(CliError::refused(format!(
            "the signer must be the judge's seat: {problem}"
        )));
    }
    let signing = args.seal.signing(ctx)?;
    let store = ctx.store()?;
    let request = Request {
        panel: &panel,
        seats: &seats,
        cwd: ctx.cwd(),
        timeout,
    };
    let judge = panel.judge.as_str();
    let (record, texts, failures) = match run::run_session(store, &request)? {
        Ended::Sealed {
            record,
            texts,
            failures,
        } => (record, texts, failures),
        Ended::NoTurns { round, failures } => {
            let document = json!({"status": "not-recorded", "round": round, "failures": failures});
            let outcome = Outcome::json(&document, Exit::Warn);
            return Ok(run::describe(&failures, judge)
                .into_iter()
                .fold(outcome, Outcome::warn));
        }
    };
    let stored = crate::deliberation::store_record(store, &record, &texts, signing.as_ref())?;
    let (mut document, exit) = args.seal.recorded(ctx, &record, &stored)?;
    document["rounds"] = json!(record.usage.rounds);
    document["failures"] = json!(failures);
    let outcome = run::describe(&failures, judge)
        .into_iter()
        .fold(Outcome::json(&document, exit), Outcome::warn);
    super::record::unsigned_said(ctx, signing.as_ref(), outcome)
}
