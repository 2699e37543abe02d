//! Hop's own exit table and printer: the only place of the `hop` binary that writes to stdout
//! and stderr, as `cli/output.rs` is for `git hpp`.
//!
//! Exit codes: 0 success, 1 git/filesystem/internal error, 2 invalid usage (and an invalid
//! agent launch), 20 overlap or conservative conflict block, 21 accepted or attempt head changed
//! during compare-and-swap, 22 check or validation command failed.
//!
//! With `--json`, stdout is one document: `{"ok":true,"data":...}` on success, or
//! `{"ok":false,"error":"...","exit_code":N,...}` on failure (with `paths` for exit 20 and
//! `data` for exit 22); the reason is also written to stderr as `hop: <reason>`.

use std::io::Write;

use serde::Serialize;
use serde_json::{Value, json};

use crate::hop as service;
use hpp_core::record::pretty_json;

/// How `hop` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum HopExit {
    /// Success.
    Ok = 0,
    /// Git, filesystem or internal error.
    Error = 1,
    /// Invalid usage, including an invalid agent launch.
    Usage = 2,
    /// Overlap or conservative conflict block.
    Overlap = 20,
    /// The accepted or attempt head changed during compare-and-swap.
    HeadMoved = 21,
    /// The check or validation command failed.
    CheckFailed = 22,
    /// The branch to land into is checked out with local changes.
    Dirty = 23,
}

impl HopExit {
    /// Every exit, in the order of the table.
    pub const ALL: [HopExit; 7] = [
        HopExit::Ok,
        HopExit::Error,
        HopExit::Usage,
        HopExit::Overlap,
        HopExit::HeadMoved,
        HopExit::CheckFailed,
        HopExit::Dirty,
    ];

    /// Returns the process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Returns what the exit means, as `hop skill print` tells an agent.
    pub fn meaning(self) -> &'static str {
        match self {
            HopExit::Ok => "success",
            HopExit::Error => "git, filesystem or internal error; an unknown state",
            HopExit::Usage => {
                "invalid usage, or an invalid agent launch (a missing HOP_* variable)"
            }
            HopExit::Overlap => {
                "overlap or conflict: the proposal changes paths accepted since its base (listed)"
            }
            HopExit::HeadMoved => "the accepted or attempt head moved during compare-and-swap",
            HopExit::CheckFailed => "the check or validation command failed (its run is recorded)",
            HopExit::Dirty => {
                "the branch to land into is checked out with local changes (nothing was landed)"
            }
        }
    }
}

/// What a hop command produced.
#[derive(Debug)]
#[must_use = "an outcome must be printed"]
pub struct HopOutcome {
    data: Value,
    human: String,
    exit: HopExit,
    reason: Option<String>,
}

impl HopOutcome {
    /// A successful outcome: `data` for `--json`, `human` otherwise.
    pub fn ok(data: &impl Serialize, human: impl Into<String>) -> Self {
        Self {
            data: serde_json::to_value(data).expect("hop outcomes serialise to JSON"),
            human: human.into(),
            exit: HopExit::Ok,
            reason: None,
        }
    }

    /// A finished command whose verdict is a failure (a failed check): still prints its data.
    pub fn failed(
        data: &impl Serialize,
        human: impl Into<String>,
        exit: HopExit,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            data: serde_json::to_value(data).expect("hop outcomes serialise to JSON"),
            human: human.into(),
            exit,
            reason: Some(reason.into()),
        }
    }
}

/// A hop failure: the reason, extra stderr lines, and the exit code.
#[derive(Debug)]
pub struct HopError {
    /// The exit code.
    pub exit: HopExit,
    /// The one-line reason.
    pub message: String,
    /// The paths of an overlap or conflict.
    pub paths: Vec<String>,
    /// Advice, one line each.
    pub hints: Vec<String>,
}

impl HopError {
    /// A failure with `exit`.
    pub fn new(exit: HopExit, message: impl std::fmt::Display) -> Self {
        Self {
            exit,
            message: message.to_string(),
            paths: Vec::new(),
            hints: Vec::new(),
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
}

impl From<service::Error> for HopError {
    fn from(e: service::Error) -> Self {
        use hpp_core::hop::Error as Pure;
        use service::Error as E;
        let exit = match &e {
            E::Hop(Pure::NothingToUndo | Pure::BrokenChain { .. })
            | E::Hop(Pure::NotAState | Pure::MissingTrailer { .. } | Pure::BadTrailer { .. }) => {
                HopExit::Error
            }
            E::Hop(_)
            | E::WrongKind { .. }
            | E::NoAttempt(_)
            | E::EmptyPrompt
            | E::EmptyCommand
            | E::Secret(_)
            | E::SecretFile { .. }
            | E::InvalidBranch(_)
            | E::SparsePath(_) => HopExit::Usage,
            E::Overlap { .. } | E::Conflict { .. } | E::NotFastForward { .. } => HopExit::Overlap,
            E::BranchDirty { .. } => HopExit::Dirty,
            E::HeadMoved { .. } => HopExit::HeadMoved,
            E::Store(_)
            | E::Process(_)
            | E::NotInitialised
            | E::UnknownState(_)
            | E::WorkspaceMissing { .. }
            | E::BadTree(_)
            | E::Bare
            | E::Evidence(_) => HopExit::Error,
        };
        let mut error = HopError::new(exit, &e);
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            error.message.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        match e {
            E::Overlap { paths, .. } => {
                error.paths = paths;
                error.hints.push(
                    "keep both lineages and reconcile with a new prompt against the current accepted state"
                        .into(),
                );
            }
            E::Conflict { paths, .. } => error.paths = paths,
            E::HeadMoved { .. } => error.hints.push("read the new head and land again".into()),
            E::BranchDirty { files, .. } => {
                error.paths = files;
                error.hints.push(
                    "nothing was landed: commit or stash the changes in that worktree, then run the same hop land again"
                        .into(),
                );
            }
            _ => {}
        }
        error
    }
}

/// Prints a result and returns its exit code.
#[expect(
    clippy::disallowed_methods,
    reason = "the hop printer is the one place of the hop binary that owns stdout and stderr"
)]
pub fn emit(json: bool, result: Result<HopOutcome, HopError>) -> HopExit {
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    match result {
        Ok(outcome) => {
            let body = if json {
                let doc = match &outcome.reason {
                    None => json!({"ok": true, "data": outcome.data}),
                    Some(reason) => json!({
                        "ok": false,
                        "error": reason,
                        "exit_code": outcome.exit.code(),
                        "data": outcome.data,
                    }),
                };
                pretty_json(&doc)
            } else {
                let mut text = outcome.human;
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text
            };
            // A closed pipe is the reader's choice: keep the verdict's code.
            let _ = stdout
                .write_all(body.as_bytes())
                .and_then(|()| stdout.flush());
            if let Some(reason) = &outcome.reason {
                let _ = writeln!(stderr, "hop: {reason}");
            }
            outcome.exit
        }
        Err(error) => {
            if json {
                let mut doc = json!({
                    "ok": false,
                    "error": error.message,
                    "exit_code": error.exit.code(),
                });
                if !error.paths.is_empty() {
                    doc["paths"] = json!(error.paths);
                }
                let _ = stdout
                    .write_all(pretty_json(&doc).as_bytes())
                    .and_then(|()| stdout.flush());
            }
            let _ = writeln!(stderr, "hop: {}", error.message);
            if !error.paths.is_empty() {
                let _ = writeln!(stderr, "Overlapping paths:");
                for path in &error.paths {
                    let _ = writeln!(stderr, "  {path}");
                }
            }
            for hint in &error.hints {
                let _ = writeln!(stderr, "hint: {hint}");
            }
            error.exit
        }
    }
}

/// Prints clap's help, version or usage error.
pub fn emit_clap(error: &clap::Error) {
    let _ = error.print();
}
