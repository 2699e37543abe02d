//! `git hpp decide validate|eval`: check a typed decision record, or measure a decider.
//!
//! Reads the record or suite file and runs the decider command (argv, no shell) once per case
//! through the bounded runner; the rules and the measuring are [`hpp_core::decision`]. Opens no
//! repository and touches no refs.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::json;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{JsonRoot, read_json, read_named_file, run_instrument};
use super::output::Outcome;
use crate::process;
use hpp_core::decision::{self, Decider, Settings, Suite};

/// The `decide` verbs.
#[derive(Debug, Subcommand)]
pub enum DecideCommand {
    /// Validate a typed decision record
    ///
    /// Checks a hpp.decision/v1 record: advisory authority only, raise-only on ladder questions
    /// only, the question's sha256 against its options and wording, a pinned model version (an
    /// alias such as -latest is refused) and the sha256 of the raw response for model records.
    /// Prints {"status": "valid", "effective": {...}, "record": <normalised>} as JSON, where
    /// effective.action is raised, kept, advised or none. Works outside any repository.
    ///
    /// Exit codes: 0 valid, 2 the record breaks a rule (the rule on stderr, nothing on stdout).
    Validate(DecideValidateArgs),
    /// Measure a decider against a labelled suite
    ///
    /// Asks the suite's question (hpp.decision-suite/v1) of each case and reports coverage,
    /// selective accuracy, abstentions, instrument failures and confident errors separately, with
    /// the Brier score and the coverage curve when the decider published probabilities and
    /// confidences ("not-measured" otherwise, never 0). With --decider-command each case's
    /// {"question", "state"} goes to the command's stdin and it must print one decision record;
    /// without it each case's recorded record is replayed. A timeout, a non-zero exit, output that is
    /// not JSON or an invalid record is an instrument failure, never a verdict. Prints a
    /// hpp.decision-eval/v1 report as JSON. Works outside any repository; writes nothing.
    ///
    /// Exit codes: 0 every threshold held, 1 the gate failed (including when nothing was decided),
    /// 2 the suite or a flag was refused.
    Eval(DecideEvalArgs),
}

/// The flags of `git hpp decide validate` (its help text is on the command variant).
#[derive(Debug, clap::Args)]
pub struct DecideValidateArgs {
    /// Record to validate (hpp.decision/v1 JSON)
    #[arg(value_name = "RECORD")]
    record: PathBuf,
}

/// The flags of `git hpp decide eval` (its help text is on the command variant).
#[derive(Debug, clap::Args)]
pub struct DecideEvalArgs {
    /// Suite to measure against (hpp.decision-suite/v1)
    #[arg(value_name = "SUITE")]
    suite: PathBuf,
    /// Decider to run per case, a JSON array of strings (argv, no shell) [default: replay each case's record]
    #[arg(long, value_name = "JSONARGV")]
    decider_command: Option<String>,
    /// Seconds each decider run may take before its process group is stopped
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10.0,
        allow_negative_numbers = true
    )]
    timeout: f64,
    /// Lowest selective accuracy (right over decided) that passes the gate
    #[arg(
        long,
        value_name = "RATIO",
        default_value_t = 0.9,
        allow_negative_numbers = true
    )]
    min_selective_accuracy: f64,
    /// Most wrong decisions at or above the suite's confidence floor that pass the gate
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    max_confident_errors: i64,
    /// Most instrument failures that pass the gate
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    max_failures: i64,
}

/// Runs one `decide` verb.
pub fn dispatch(ctx: &Ctx, command: DecideCommand) -> Result<Outcome, CliError> {
    match command {
        DecideCommand::Validate(args) => cmd_decide_validate(ctx, &args),
        DecideCommand::Eval(args) => cmd_decide_eval(ctx, &args),
    }
}

/// `git hpp decide validate`.
pub fn cmd_decide_validate(ctx: &Ctx, args: &DecideValidateArgs) -> Result<Outcome, CliError> {
    let value = read_json(ctx, &args.record, JsonRoot::Object)?;
    let record = decision::validate(&value).map_err(CliError::refused)?;
    let effective = decision::effective(&record);
    let document = json!({"status": "valid", "effective": effective, "record": record});
    Ok(Outcome::json(&document, Exit::Ok))
}

/// `git hpp decide eval`.
pub fn cmd_decide_eval(ctx: &Ctx, args: &DecideEvalArgs) -> Result<Outcome, CliError> {
    let argv = args
        .decider_command
        .as_deref()
        .map(decision::parse_command)
        .transpose()
        .map_err(CliError::refused)?;
    let settings = Settings {
        timeout_s: args.timeout,
        min_selective_accuracy: args.min_selective_accuracy,
        max_confident_errors: args.max_confident_errors,
        max_failures: args.max_failures,
    };
    settings.check().map_err(CliError::refused)?;
    let suite = read_suite(ctx, &args.suite)?;
    let timeout = process::valid_timeout(settings.timeout_s).map_err(CliError::refused)?;
    let report = match &argv {
        None => decision::evaluate(&suite, &settings, Decider::Replay),
        Some(argv) => {
            let mut ask = |stdin: &[u8]| {
                let run = run_instrument(ctx, argv, timeout, stdin);
                decision::answer_of_run(run.as_ref(), settings.timeout_s)
            };
            let decider = Decider::Command {
                argv,
                ask: &mut ask,
            };
            decision::evaluate(&suite, &settings, decider)
        }
    }
    .map_err(CliError::refused)?;
    let exit = if report.gate.passed {
        Exit::Ok
    } else {
        Exit::Warn
    };
    Ok(Outcome::json(&report, exit))
}

/// Reads and validates the suite; its name defaults to the file's stem.
fn read_suite(ctx: &Ctx, path: &Path) -> Result<Suite, CliError> {
    let (bytes, stem) = read_named_file(ctx, path, "decision suite")?;
    Suite::parse(&bytes, &stem).map_err(CliError::refused)
}
