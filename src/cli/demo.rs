//! `git hpp demo`: the tour. Runs the real binary, step by step, in a throwaway repository.

use std::path::Path;
use std::process::Command;

use crate::cli::ctx::Ctx;
use crate::cli::exit::{CliError, Exit};
use crate::cli::output::Outcome;
use crate::store::Store;

/// Walk a loop from work_started to verified in a throwaway repository
///
/// Creates a repository in a temporary directory, runs each step as the command a user would
/// type (this same binary, as `git hpp ...`), prints what it printed and its exit code, and
/// removes the repository at the end unless --keep is given. Exits 0 when every step behaved
/// as the tour expects, 3 otherwise.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Keep the throwaway repository and print its path
    #[arg(long)]
    keep: bool,
}

/// One step of the tour: what to run, what it shows, and the exit code it must have.
struct Step {
    args: &'static [&'static str],
    note: &'static str,
    expect: u8,
    stdout_to: Option<&'static str>,
}

const fn step(args: &'static [&'static str], note: &'static str, expect: u8) -> Step {
    Step {
        args,
        note,
        expect,
        stdout_to: None,
    }
}

const STEPS: &[Step] = &[
    step(
        &["status"],
        "A new loop is planned; the loop is named after the current branch.",
        0,
    ),
    step(
        &["event", "append", "--type", "verified"],
        "Closing a loop that never started is refused before anything is written.",
        2,
    ),
    step(
        &[
            "event",
            "append",
            "--type",
            "work_started",
            "--data",
            r#"{"work":"ITEM-1"}"#,
        ],
        "Gate scope: the maker starts work.",
        0,
    ),
    step(
        &[
            "event",
            "append",
            "--type",
            "evidence_recorded",
            "--data",
            r#"{"evidence":"tests passed"}"#,
        ],
        "Gate fresh-evidence: evidence of a real run is recorded.",
        0,
    ),
    step(
        &[
            "event",
            "append",
            "--type",
            "check_passed",
            "--data",
            r#"{"checker":"checker-b"}"#,
        ],
        "Gate read-only-checker: a checker who is not the maker passes it.",
        0,
    ),
    step(
        &[
            "event",
            "append",
            "--type",
            "human_approved",
            "--data",
            r#"{"by":"reviewer"}"#,
        ],
        "Gate human: a person approves.",
        0,
    ),
    step(
        &["event", "append", "--type", "verified"],
        "Gate closure: the loop is verified.",
        0,
    ),
    step(
        &["event", "verify"],
        "Every event is a commit on refs/hpp/loops/main; the commit chain and the hash chain both hold.",
        0,
    ),
    step(&["event", "log"], "The history, oldest first.", 0),
    Step {
        args: &["event", "export"],
        note: "The reference harness's events.jsonl, byte for byte.",
        expect: 0,
        stdout_to: Some("events.jsonl"),
    },
    step(
        &["event", "import", "events.jsonl", "--loop", "imported"],
        "A team moving from the Python harness keeps its history.",
        0,
    ),
    step(
        &["loops"],
        "Every loop in the repository; `git push origin 'refs/hpp/*:refs/hpp/*'` would publish them.",
        0,
    ),
];

/// Runs the tour.
pub fn cmd_demo(_ctx: &Ctx, args: &DemoArgs) -> Result<Outcome, CliError> {
    let exe =
        std::env::current_exe().map_err(|e| CliError::internal("finding this program", &e))?;
    let dir = tempfile::Builder::new()
        .prefix("hpp-demo-")
        .tempdir()
        .map_err(|e| CliError::internal("creating a temporary directory", &e))?;
    let repo = dir.path().join("demo");
    Store::init(&repo)?;
    let mut out = String::from(
        "git hpp demo: one loop from work_started to verified, in a throwaway repository\n",
    );
    out.push_str("$ git init demo && cd demo\n");
    let mut failed = None;
    for step in STEPS {
        let (transcript, code) = run_step(&exe, &repo, step)?;
        out.push_str(&format!("\n# {}\n", step.note));
        out.push_str(&transcript);
        if code != step.expect && failed.is_none() {
            failed = Some(format!(
                "step `git hpp {}` exited {code}, the tour expects {}",
                step.args.join(" "),
                step.expect
            ));
        }
    }
    if args.keep {
        let kept = dir.keep();
        out.push_str(&format!(
            "\nkept the repository at {}\n",
            kept.join("demo").display()
        ));
    } else {
        out.push_str("\nremoved the throwaway repository. Next: `git hpp --help`.\n");
    }
    let mut outcome = Outcome::raw(out.into_bytes());
    if let Some(why) = failed {
        outcome = outcome.warn(why);
        outcome.exit = Exit::Fault;
    }
    Ok(outcome)
}

fn run_step(exe: &Path, repo: &Path, step: &Step) -> Result<(String, u8), CliError> {
    let shown: Vec<String> = step.args.iter().map(|a| shell_quote(a)).collect();
    let mut text = format!("$ git hpp {}", shown.join(" "));
    if let Some(file) = step.stdout_to {
        text.push_str(&format!(" > {file}"));
    }
    text.push('\n');
    let output = Command::new(exe)
        .args(step.args)
        .current_dir(repo)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .map_err(|e| CliError::internal("running a tour step", &e))?;
    let code = output
        .status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(u8::MAX);
    match step.stdout_to {
        Some(file) => {
            std::fs::write(repo.join(file), &output.stdout)
                .map_err(|e| CliError::internal("writing the export", &e))?;
            text.push_str(&format!(
                "({} bytes, {} lines)\n",
                output.stdout.len(),
                output.stdout.iter().filter(|b| **b == b'\n').count()
            ));
        }
        None => text.push_str(&String::from_utf8_lossy(&output.stdout)),
    }
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    if code != 0 {
        text.push_str(&format!("[exit {code}]\n"));
    }
    Ok((text, code))
}

fn shell_quote(arg: &str) -> String {
    if arg
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
    {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}
