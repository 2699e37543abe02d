//! `Out`: the sole owner of stdout and stderr.
//!
//! A command's outcome is rendered whole before the first byte is written, so the exit code is
//! known up front: a closed pipe (`git hpp status | head -0`) ends quietly with that same code.

use std::io::Write;

use serde::Serialize;

use super::exit::{CliError, Exit};
use hpp_core::host::Answer;
use hpp_core::record::pretty_json;

/// What a command produced: the bytes for stdout, warnings for stderr, and the exit code.
#[derive(Debug)]
#[must_use = "an outcome must be returned to be printed"]
pub struct Outcome {
    /// The bytes for stdout.
    pub stdout: Vec<u8>,
    /// Warning lines for stderr (printed as `hpp: warning: ...`).
    pub warnings: Vec<String>,
    /// The exit code.
    pub exit: Exit,
    /// Whether stdout is the human rendering of a document (what `-q` silences on success),
    /// rather than what was asked for (JSON, an export, a hook's answer).
    pub chatter: bool,
}

impl Outcome {
    /// Renders a document: pretty sorted-key JSON with `json`, else the human text.
    pub fn document(
        json: bool,
        value: &impl Serialize,
        human: impl Into<String>,
        exit: Exit,
    ) -> Self {
        let chatter = !json;
        let stdout = if json {
            let value = serde_json::to_value(value).expect("outcome values serialise to JSON");
            pretty_json(&value).into_bytes()
        } else {
            let mut text = human.into();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.into_bytes()
        };
        Self {
            stdout,
            warnings: Vec::new(),
            exit,
            chatter,
        }
    }

    /// Always JSON, whatever the flags (for commands whose contract is JSON, like `resume`).
    pub fn json(value: &impl Serialize, exit: Exit) -> Self {
        Self::document(true, value, "", exit)
    }

    /// An agent host's hook answer: nothing, its JSON or its text on stdout with exit 0; a block
    /// is a refusal (exit 2, the reason on stderr), which the hosts read as "do not run it".
    pub fn answer(answer: Answer) -> Result<Self, CliError> {
        match answer {
            Answer::Silent => Ok(Self::raw(Vec::new())),
            Answer::Output(output) => Ok(Self::json(&output, Exit::Ok)),
            Answer::Text(text) => Ok(Self::raw(text.into_bytes())),
            Answer::Block(reason) => Err(CliError::refused(reason)),
        }
    }

    /// Raw bytes, written as they are (for `event export`).
    pub fn raw(bytes: Vec<u8>) -> Self {
        Self {
            stdout: bytes,
            warnings: Vec::new(),
            exit: Exit::Ok,
            chatter: false,
        }
    }

    /// Adds a warning line.
    pub fn warn(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }
}

/// The outcome of an import of the Python harness's records (`evidence import`, `attest
/// import`): per file, `imported` or `already imported` and its `line`, then what the records
/// cannot carry; `document` as JSON with `--json`.
pub fn imported<T: Serialize>(
    json: bool,
    document: &T,
    rows: impl IntoIterator<Item = (bool, String)>,
    not_carried: &[&str],
) -> Outcome {
    let mut human = String::new();
    for (created, line) in rows {
        let verb = if created {
            "imported"
        } else {
            "already imported"
        };
        human.push_str(&format!("{verb} {line}\n"));
    }
    if !human.is_empty() {
        human.push_str("not carried:\n");
        for what in not_carried {
            human.push_str(&format!("  {what}\n"));
        }
    }
    Outcome::document(json, document, human, Exit::Ok)
}

/// The warning a record written unsigned gets: what a reader will do with it under the
/// signature rule in force.
pub fn unsigned(what: &str, trust: &crate::trust::Trust) -> String {
    if trust.policy.is_some() {
        format!(
            "{what} is unsigned: the trust policy at refs/hpp/trust requires signatures, so no reader will count it (sign it with --sign-key KEY)"
        )
    } else if trust.require_signed {
        format!(
            "{what} is unsigned: signatures are required here, so no reader will count it (sign it with --sign-key KEY)"
        )
    } else {
        format!(
            "{what} is unsigned: it passes only where no signatures are required; a reader with a trust policy (refs/hpp/trust) or an allowed-signers file will not count it"
        )
    }
}

/// Adds the trust rule's notes (a root pinned on first use, a signers file that adds nothing
/// beside a policy) to an outcome's warnings.
pub fn with_notes(mut outcome: Outcome, trust: &crate::trust::Trust) -> Outcome {
    for note in &trust.notes {
        outcome = outcome.warn(note.clone());
    }
    outcome
}

/// Writes an outcome and returns its exit code.
pub fn emit(result: Result<Outcome, CliError>) -> Exit {
    emit_quietly(result, false)
}

/// As [`emit`]; with `quiet`, a successful outcome's human text is not written (`-q`).
#[expect(
    clippy::disallowed_methods,
    reason = "Out is the one place allowed to own stdout and stderr"
)]
pub fn emit_quietly(result: Result<Outcome, CliError>, quiet: bool) -> Exit {
    let result = result.map(|mut outcome| {
        if quiet && outcome.chatter && outcome.exit == Exit::Ok {
            outcome.stdout.clear();
        }
        outcome
    });
    match result {
        Ok(outcome) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe is the reader's choice, not our failure: keep the verdict's code.
            let _ = stdout
                .write_all(&outcome.stdout)
                .and_then(|()| stdout.flush());
            let mut stderr = std::io::stderr().lock();
            for warning in &outcome.warnings {
                let _ = writeln!(stderr, "hpp: warning: {warning}");
            }
            outcome.exit
        }
        Err(error) => {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "hpp: {}", error.message);
            for hint in &error.hints {
                let _ = writeln!(stderr, "hint: {hint}");
            }
            error.exit()
        }
    }
}

/// A sink that shows a criterion's output on stderr as it runs (stdout stays the command's
/// own report, so `--json` output is never mixed with it).
#[expect(
    clippy::disallowed_methods,
    reason = "Out is the one place allowed to own stdout and stderr"
)]
pub fn echo_to_stderr() -> crate::process::Echo {
    std::sync::Arc::new(|bytes: &[u8]| {
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(bytes);
        let _ = stderr.flush();
    })
}

/// `--color`: when the human text is coloured and marked with glyphs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, and in colour unless NO_COLOR is set (non-empty)
    #[default]
    Auto,
    /// Always, even into a pipe or a file
    Always,
    /// Never: plain text
    Never,
}

static COLOR: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// Sets the `--color` choice for this process (once; [`super::run`] does it).
pub fn set_color(choice: ColorChoice) {
    let _ = COLOR.set(choice);
}

/// Whether the human text carries glyphs (a person is reading: a terminal, or `--color=always`).
pub fn decorated() -> bool {
    match COLOR.get().copied().unwrap_or_default() {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal(),
    }
}

/// Whether the human text is coloured: as [`decorated`], and with `auto` only when NO_COLOR
/// is unset or empty (<https://no-color.org>) and the terminal is not `dumb`.
pub fn coloured() -> bool {
    match COLOR.get().copied().unwrap_or_default() {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            stdout_is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
        }
    }
}

/// What a piece of human text says, for its colour and glyph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Holds, passed, verified.
    Good,
    /// Not yet: waiting for the next step.
    Waiting,
    /// Does not hold, refused, not verified.
    Bad,
}

impl Tone {
    /// Returns the tone of a gate's status as `status` words it.
    pub fn of_gate(status: &str) -> Self {
        if status == "holds" {
            Tone::Good
        } else if status == "not yet" || status.starts_with("unchecked") {
            Tone::Waiting
        } else {
            Tone::Bad
        }
    }
}

/// Returns `text` with its tone's glyph before it when [`decorated`], coloured when
/// [`coloured`]; plain otherwise (a pipe, a file, `--color=never`).
pub fn paint(tone: Tone, text: &str) -> String {
    if !decorated() {
        return text.to_owned();
    }
    let (glyph, colour) = match tone {
        Tone::Good => ("\u{2713}", anstyle::AnsiColor::Green),
        Tone::Waiting => ("\u{2026}", anstyle::AnsiColor::Yellow),
        Tone::Bad => ("\u{2717}", anstyle::AnsiColor::Red),
    };
    if coloured() {
        let style = anstyle::Style::new().fg_color(Some(colour.into())).bold();
        format!("{style}{glyph} {text}{style:#}")
    } else {
        format!("{glyph} {text}")
    }
}

/// Whether stdout is a terminal (a person reading, not a pipe or a file).
#[expect(
    clippy::disallowed_methods,
    reason = "Out is the one place allowed to own stdout and stderr"
)]
pub fn stdout_is_terminal() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stdout())
}

/// Writes clap's own rendering of help, version or a usage error (to stdout for help and
/// version, stderr otherwise; coloured only on a terminal).
pub fn emit_clap(error: &clap::Error) {
    let _ = error.print();
}
