//! `git hpp decide validate|eval`: check a typed decision record, or measure a decider.
//!
//! Reads the record or suite file and runs the decider command (argv, no shell) once per case
//! through the bounded runner; the rules and the measuring are [`hpp_core::decision`]. Opens no
//! repository and touches no refs.

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::{Value, json};

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::{JsonRoot, read_json};
use super::output::Outcome;
use super::suite_eval::{self, Command, Instrument};
use hpp_core::decision::{self, Decider, Settings, Suite};
use hpp_core::run::{Finished, NotFinished};

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
    let record = decision::validate(&value)?;
    let effective = decision::effective(&record);
    let document = json!({"status": "valid", "effective": effective, "record": record});
    Ok(Outcome::json(&document, Exit::Ok))
}

/// `git hpp decide eval`.
pub fn cmd_decide_eval(ctx: &Ctx, args: &DecideEvalArgs) -> Result<Outcome, CliError> {
    let settings = Settings {
        timeout_s: args.timeout,
        min_selective_accuracy: args.min_selective_accuracy,
        max_confident_errors: args.max_confident_errors,
        max_failures: args.max_failures,
    };
    suite_eval::measure::<DeciderEval>(ctx, args.decider_command.as_deref(), &settings, &args.suite)
}

/// A decider measured against a hpp.decision-suite/v1 ([`hpp_core::decision`]).
struct DeciderEval;

impl Instrument for DeciderEval {
    type Settings = Settings;
    type Suite = Suite;
    type Report = decision::Report;
    type Failure = decision::Failure;
    type Error = decision::Error;

    const SUITE: &'static str = "decision suite";

    fn parse_command(text: &str) -> Result<Vec<String>, Self::Error> {
        decision::parse_command(text)
    }

    fn check(settings: &Settings) -> Result<(), Self::Error> {
        settings.check()
    }

    fn timeout_s(settings: &Settings) -> f64 {
        settings.timeout_s
    }

    fn parse_suite(bytes: &[u8], stem: &str) -> Result<Suite, Self::Error> {
        Suite::parse(bytes, stem)
    }

    fn answer_of_run(
        run: Result<&Finished, &NotFinished>,
        timeout_s: f64,
    ) -> Result<Value, Self::Failure> {
        decision::answer_of_run(run, timeout_s)
    }

    fn evaluate(
        suite: &Suite,
        settings: &Settings,
        command: Option<Command<'_, Self::Failure>>,
    ) -> Result<Self::Report, Self::Error> {
        let decider = match command {
            None => Decider::Replay,
            Some(Command { argv, ask }) => Decider::Command { argv, ask },
        };
        decision::evaluate(suite, settings, decider)
    }

    fn passed(report: &Self::Report) -> bool {
        report.gate.passed
    }
}
