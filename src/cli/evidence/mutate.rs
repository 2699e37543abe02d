//! `git hpp evidence mutate`: measure whether a criterion command notices planted bugs.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::input::{JsonRoot, read_json};
use crate::cli::output::Outcome;
use crate::evidence::mutate::{self, MutateRequest, Progress};
use hpp_core::evidence::EvidenceId;
use hpp_core::mutation::Status;

/// Measure whether a criterion command notices planted bugs
///
/// Runs the command after `--` on a fresh copy of the workspace outside it, first unmutated
/// (it must pass, or the verdict is no-control and no mutant runs), then once per mutant, where
/// it must fail. Mutants come from an hpp.mutants/v1 file and from Python (.py) or Rust (.rs)
/// sources tokenized with a fixed operator table. The user's tree is never written. Stores an
/// hpp.mutation/v1 record at refs/hpp/evidence/<id>-<UTC stamp>[-N] and prints it. Exits 0
/// when sensitive, 1 for blind-spots, incomplete or no-mutants, 2 for no-control or when
/// refused (a secret-like command line, a path outside the workspace, a file reached through a
/// symlink, a bad mutants file).
#[derive(Debug, clap::Args)]
pub struct EvidenceMutateArgs {
    /// Record id: 1-80 letters, digits, '.', '_' or '-'
    #[arg(long)]
    id: String,
    /// hpp.mutants/v1 file of declared mutants (their files are relative to the current directory)
    #[arg(long, value_name = "FILE")]
    mutants: Option<PathBuf>,
    /// Python or Rust source to generate mutants from, relative to the current directory (can be repeated)
    #[arg(long = "generate", value_name = "FILE")]
    generate: Vec<String>,
    /// Seconds before one run's whole process tree is killed
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
    /// Mutants run at once [default: the number of available cores]
    #[arg(long, value_name = "N", value_parser = parse_jobs)]
    jobs: Option<NonZeroUsize>,
    /// The criterion command, with paths relative to the workspace
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Runs the mutants and prints the record.
pub fn cmd_evidence_mutate(ctx: &Ctx, args: &EvidenceMutateArgs) -> Result<Outcome, CliError> {
    let id: EvidenceId = args.id.parse()?;
    let declared = args
        .mutants
        .as_ref()
        .map(|path| read_json(ctx, path, JsonRoot::Any).map(|v| (path.display().to_string(), v)))
        .transpose()?;
    let store = ctx.store()?;
    let request = MutateRequest {
        id,
        command: args.command.clone(),
        declared,
        generate: args.generate.clone(),
        timeout_s: args.timeout,
        jobs: args
            .jobs
            .or_else(|| std::thread::available_parallelism().ok())
            .unwrap_or(NonZeroUsize::MIN),
        cwd: ctx.cwd().to_owned(),
        temp_dir: std::env::temp_dir(),
    };
    // Drawn only when stderr is a terminal: indicatif hides a stderr target that is not one.
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    let on_progress = |event: Progress<'_>| match event {
        Progress::Clean => {
            bar.set_message("clean run");
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Progress::Mutants { total } => {
            bar.set_length(u64::try_from(total).unwrap_or(u64::MAX));
            bar.set_message("mutants");
        }
        Progress::Finished { outcome, .. } => {
            bar.inc(1);
            bar.set_message(outcome.as_str());
        }
    };
    let outcome = mutate::mutate(store, &request, &on_progress);
    bar.finish_and_clear();
    let outcome = outcome?;
    let exit = match outcome.record.verdict {
        Status::Sensitive => Exit::Ok,
        Status::NoControl => Exit::Block,
        Status::BlindSpots | Status::Incomplete | Status::NoMutants => Exit::Warn,
    };
    Ok(Outcome::json(&outcome.record, exit))
}

fn parse_jobs(text: &str) -> Result<NonZeroUsize, String> {
    text.parse()
        .map_err(|_| format!("--jobs must be a whole number of at least 1, not {text:?}"))
}
