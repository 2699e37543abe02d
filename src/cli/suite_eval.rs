//! Measuring a declared instrument (a decider, a retriever) against a labelled suite: the shape
//! `git hpp decide eval` and `git hpp retrieval eval` share (CONCEPTS.md "instrument failure").
//!
//! [`measure`] holds the steps and their order, which decides which refusal a user sees first;
//! each command implements [`Instrument`] with what is its own: its settings, its suite, its
//! scoring and its gate. Opens no repository and touches no refs.

use std::fmt::Display;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::ctx::Ctx;
use super::exit::{CliError, Exit};
use super::input::read_named_file;
use super::output::Outcome;
use crate::process;
use hpp_core::run::{Finished, NotFinished};

/// A command asked once per case: its argv (for the report) and the asking, which runs it with
/// the case's request on stdin and returns its JSON answer or the instrument failure.
pub struct Command<'a, F> {
    /// The argv, as `--<instrument>-command` gave it.
    pub argv: &'a [String],
    /// Runs the command once.
    pub ask: &'a mut dyn FnMut(&[u8]) -> Result<Value, F>,
}

/// What differs between the instruments a suite measures; the core module of each does the
/// work, and an implementation only names it.
pub trait Instrument {
    /// The flags of one evaluation.
    type Settings;
    /// A parsed, validated suite.
    type Suite;
    /// The report printed as JSON.
    type Report: Serialize;
    /// Why one run of the command is an instrument failure (counted, never a verdict).
    type Failure;
    /// Why the whole evaluation is refused.
    type Error: Display;

    /// What refusals call the suite file ("decision suite").
    const SUITE: &'static str;

    /// Parses the `--<instrument>-command` text into an argv.
    fn parse_command(text: &str) -> Result<Vec<String>, Self::Error>;

    /// Checks the flags, before anything is read or run.
    fn check(settings: &Self::Settings) -> Result<(), Self::Error>;

    /// Returns the seconds each run of the command may take.
    fn timeout_s(settings: &Self::Settings) -> f64;

    /// Parses the suite's bytes; its name defaults to `stem`, the file's stem.
    fn parse_suite(bytes: &[u8], stem: &str) -> Result<Self::Suite, Self::Error>;

    /// Turns one run of the command into its JSON answer, or the instrument failure.
    fn answer_of_run(
        run: Result<&Finished, &NotFinished>,
        timeout_s: f64,
    ) -> Result<Value, Self::Failure>;

    /// Measures the suite: with `None` the answers recorded in the suite are replayed.
    fn evaluate(
        suite: &Self::Suite,
        settings: &Self::Settings,
        command: Option<Command<'_, Self::Failure>>,
    ) -> Result<Self::Report, Self::Error>;

    /// Returns whether the report's gate passed.
    fn passed(report: &Self::Report) -> bool;
}

/// Measures an instrument against the suite at `suite`, refusing (exit 2) a bad command, a bad
/// flag or a bad suite, in that order; prints the report as JSON and exits 0 when its gate
/// passed, 1 when it failed. `command` is the `--<instrument>-command` text; without it the
/// suite's recorded answers are replayed.
pub fn measure<I: Instrument>(
    ctx: &Ctx,
    command: Option<&str>,
    settings: &I::Settings,
    suite: &Path,
) -> Result<Outcome, CliError>
where
    CliError: From<I::Error>,
{
    let argv = command.map(I::parse_command).transpose()?;
    I::check(settings)?;
    let (bytes, stem) = read_named_file(ctx, suite, I::SUITE)?;
    let suite = I::parse_suite(&bytes, &stem)?;
    let timeout_s = I::timeout_s(settings);
    let timeout = process::valid_timeout(timeout_s)?;
    let report = match &argv {
        None => I::evaluate(&suite, settings, None),
        Some(argv) => {
            let mut ask = |stdin: &[u8]| {
                let run = run_instrument(ctx, argv, timeout, stdin);
                I::answer_of_run(run.as_ref(), timeout_s)
            };
            let command = Command {
                argv,
                ask: &mut ask,
            };
            I::evaluate(&suite, settings, Some(command))
        }
    }?;
    let exit = if I::passed(&report) {
        Exit::Ok
    } else {
        Exit::Warn
    };
    Ok(Outcome::json(&report, exit))
}

/// Runs a declared instrument once, in the working directory, with `stdin` as its input: an argv
/// through the bounded runner, never a shell.
fn run_instrument(
    ctx: &Ctx,
    argv: &[String],
    timeout: Duration,
    stdin: &[u8],
) -> Result<Finished, NotFinished> {
    process::run_bounded(&process::Request {
        argv,
        cwd: ctx.cwd(),
        timeout,
        stdin: Some(stdin),
        env: &[],
    })
    .map_err(|e| e.not_finished())
}
