//! `git hpp retrieval eval`: measure a retriever against a labelled suite.
//!
//! Reads the suite file and runs the retriever command (argv, no shell) once per case through
//! the bounded runner; the scoring is [`hpp_core::retrieval`]. Opens no repository and touches no
//! refs.

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::Value;

use super::ctx::Ctx;
use super::exit::CliError;
use super::output::Outcome;
use super::suite_eval::{self, Command, Instrument};
use hpp_core::retrieval::{self, Retriever, Settings, Suite};
use hpp_core::run::{Finished, NotFinished};

/// The `retrieval` verbs.
#[derive(Debug, Subcommand)]
pub enum RetrievalCommand {
    /// Measure a retriever against a labelled suite
    ///
    /// Scores the top k ids of each answer against the ids the suite (hpp.retrieval-suite/v1) marks
    /// relevant: hit@k, recall@k, precision@k (over k), MRR and nDCG@k, means over measured cases
    /// only. With --retriever-command each case's {"query", "k"} goes to the command's stdin and its
    /// JSON answer (a list of ids, or {"results": [{"id", "score"}]}) is scored; without it the
    /// suite's recorded results are replayed. A timeout, a non-zero exit, output that is not JSON or
    /// a duplicate id is an instrument failure, counted apart, never a miss. Prints a
    /// hpp.retrieval-eval/v1 report as JSON. Works outside any repository; writes nothing.
    ///
    /// Exit codes: 0 the gate passed, 1 it failed (including when no case was measured), 2 the
    /// suite or a flag was refused.
    Eval(RetrievalEvalArgs),
}

/// The flags of `git hpp retrieval eval` (its help text is on the command variant).
#[derive(Debug, clap::Args)]
pub struct RetrievalEvalArgs {
    /// Suite to measure against (hpp.retrieval-suite/v1)
    #[arg(value_name = "SUITE")]
    suite: PathBuf,
    /// Retriever to run per case, a JSON array of strings (argv, no shell) [default: replay the suite's results]
    #[arg(long, value_name = "JSONARGV")]
    retriever_command: Option<String>,
    /// How many ids of each answer are scored [default: the suite's k, else 5]
    #[arg(short = 'k', value_name = "N", allow_negative_numbers = true)]
    k: Option<hpp_core::int::Int>,
    /// Seconds each retriever run may take before its process group is stopped
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10.0,
        allow_negative_numbers = true
    )]
    timeout: f64,
    /// Lowest mean recall@k that passes the gate
    #[arg(
        long,
        value_name = "RATIO",
        default_value_t = 0.8,
        allow_negative_numbers = true
    )]
    min_recall: f64,
    /// Most instrument failures that pass the gate
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    max_failures: i64,
}

/// Runs one `retrieval` verb.
pub fn dispatch(ctx: &Ctx, command: RetrievalCommand) -> Result<Outcome, CliError> {
    match command {
        RetrievalCommand::Eval(args) => cmd_retrieval_eval(ctx, &args),
    }
}

/// `git hpp retrieval eval`.
pub fn cmd_retrieval_eval(ctx: &Ctx, args: &RetrievalEvalArgs) -> Result<Outcome, CliError> {
    let settings = Settings {
        k: args.k.clone(),
        timeout_s: args.timeout,
        min_recall: args.min_recall,
        max_failures: args.max_failures,
    };
    suite_eval::measure::<RetrieverEval>(
        ctx,
        args.retriever_command.as_deref(),
        &settings,
        &args.suite,
    )
}

/// A retriever measured against a hpp.retrieval-suite/v1 ([`hpp_core::retrieval`]).
struct RetrieverEval;

impl Instrument for RetrieverEval {
    type Settings = Settings;
    type Suite = Suite;
    type Report = retrieval::Report;
    type Failure = retrieval::Failure;
    type Error = retrieval::Error;

    const SUITE: &'static str = "retrieval suite";

    fn parse_command(text: &str) -> Result<Vec<String>, Self::Error> {
        retrieval::parse_command(text)
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
        retrieval::answer_of_run(run, timeout_s)
    }

    fn evaluate(
        suite: &Suite,
        settings: &Settings,
        command: Option<Command<'_, Self::Failure>>,
    ) -> Result<Self::Report, Self::Error> {
        let retriever = match command {
            None => Retriever::Replay,
            Some(Command { argv, ask }) => Retriever::Command { argv, ask },
        };
        retrieval::evaluate(suite, settings, retriever)
    }

    fn passed(report: &Self::Report) -> bool {
        report.gate.passed
    }
}
