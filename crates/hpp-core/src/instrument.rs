//! Reading a declared instrument: the command a ruler measures (a retriever in
//! [`crate::retrieval`], a decider in [`crate::decision`]) is run by the caller; this turns the finished run into a JSON answer or
//! the instrument failure that replaces it, and builds what the command reads on stdin.
//!
//! Pure: it takes the runner's result as a value and returns values.

use serde_json::Value;

use crate::run::{Finished, NotFinished};
use crate::secrets::looks_secret;

/// How many characters of an instrument's last stderr line a failure quotes.
const STDERR_CHARS: usize = 200;

/// Why a run of an instrument gave no answer. The first field names the instrument
/// (`retriever`, `decider`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunFailure {
    /// It ran past the timeout (seconds, as `%g`) and its process group was stopped.
    #[error("{0} exceeded {1}s")]
    Timeout(&'static str, String),
    /// The program could not be started.
    #[error("{0} could not start: check the command and that it is on PATH")]
    CouldNotStart(&'static str),
    /// The operating system failed while running it.
    #[error("{0} could not be run: {1}")]
    Run(&'static str, String),
    /// It exited non-zero; the last stderr line (or why it is withheld) follows the code.
    #[error("{0} exited {1}: {2}")]
    Exited(&'static str, i32, String),
    /// A signal ended it; the last stderr line (or why it is withheld) follows the signal.
    #[error("{0} was killed by signal {1}: {2}")]
    Signalled(&'static str, i32, String),
    /// It printed only whitespace.
    #[error("{0} printed nothing")]
    Empty(&'static str),
    /// Its output is not JSON.
    #[error("{0} output is not JSON: {1}")]
    NotJson(&'static str, String),
}

/// Turns one finished run of `instrument` into its JSON answer, or the instrument failure.
///
/// ```
/// use hpp_core::run::Finished;
/// use hpp_core::instrument::read_answer;
/// let run = Finished { exit_code: Some(0), signal: None, timed_out: false,
///     stdout: b"[\"a\"]".to_vec(), stderr: Vec::new(), duration: Default::default() };
/// assert_eq!(read_answer("retriever", Ok(&run), 10.0).unwrap(), serde_json::json!(["a"]));
/// ```
///
/// # Errors
///
/// A timeout, a start failure, a non-zero exit or a signal, empty output or output that is not
/// JSON, as [`RunFailure`].
pub fn read_answer(
    instrument: &'static str,
    run: Result<&Finished, &NotFinished>,
    timeout_s: f64,
) -> Result<Value, RunFailure> {
    let finished = match run {
        Ok(finished) => finished,
        Err(NotFinished::CouldNotStart) => {
            return Err(RunFailure::CouldNotStart(instrument));
        }
        Err(NotFinished::Failed(reason)) => {
            return Err(RunFailure::Run(instrument, reason.clone()));
        }
    };
    if finished.timed_out {
        return Err(RunFailure::Timeout(instrument, format_g(timeout_s)));
    }
    match (finished.exit_code, finished.signal) {
        (Some(0), _) => {}
        (Some(code), _) => {
            let tail = last_stderr_line(&finished.stderr);
            return Err(RunFailure::Exited(instrument, code, tail));
        }
        (None, signal) => {
            let tail = last_stderr_line(&finished.stderr);
            return Err(RunFailure::Signalled(
                instrument,
                signal.unwrap_or_default(),
                tail,
            ));
        }
    }
    let text = String::from_utf8_lossy(&finished.stdout);
    if text.trim().is_empty() {
        return Err(RunFailure::Empty(instrument));
    }
    serde_json::from_str(&text).map_err(|e| {
        // The position in a command's output means nothing in a report: keep the reason only.
        let message = e.to_string();
        let reason = message
            .rfind(" at line ")
            .map_or(message.as_str(), |at| &message[..at]);
        RunFailure::NotJson(instrument, reason.to_owned())
    })
}

/// Returns the last stderr line, short enough for a report, or why it is not quoted: a report is
/// kept and shared, and a connection string on stderr would travel with it.
fn last_stderr_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    match text.trim().lines().last() {
        None => "no stderr".to_owned(),
        Some(line) if looks_secret(line) => {
            "stderr withheld: it looks like it carries a secret".to_owned()
        }
        Some(line) => line.chars().take(STDERR_CHARS).collect(),
    }
}

/// Returns `value` as compact JSON with every non-ASCII character escaped as `\uXXXX`, so a
/// child that decodes stdin in a legacy codepage reads (and hashes) the same text.
///
/// ```
/// let bytes = hpp_core::instrument::ascii_json(&serde_json::json!({"q": "café"}));
/// assert_eq!(bytes, br#"{"q":"caf\u00e9"}"#);
/// ```
pub fn ascii_json(value: &Value) -> Vec<u8> {
    // Outside strings JSON is ASCII, so escaping every non-ASCII character of the text is exact.
    let text = serde_json::to_string(value).expect("serialising a serde_json::Value cannot fail");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out.into_bytes()
}

/// Returns the argv in `text` when it is a non-empty JSON array of non-empty strings.
///
/// ```
/// use hpp_core::instrument::parse_argv;
/// assert_eq!(parse_argv(r#"["python3", "r.py"]"#), Some(vec!["python3".into(), "r.py".into()]));
/// assert_eq!(parse_argv("python3 r.py"), None);
/// ```
pub fn parse_argv(text: &str) -> Option<Vec<String>> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    if items.is_empty() {
        return None;
    }
    items
        .into_iter()
        .map(|item| match item {
            Value::String(s) if !s.is_empty() => Some(s),
            _ => None,
        })
        .collect()
}

/// Formats a number as C's `%g` does (six significant digits, trailing zeros dropped), so
/// thresholds and timeouts read in messages as the user typed them: `0.8`, `10`, `2.5`.
///
/// ```
/// use hpp_core::instrument::format_g;
/// assert_eq!((format_g(0.8), format_g(10.0), format_g(0.00001)), ("0.8".into(), "10".into(), "1e-05".into()));
/// ```
pub fn format_g(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let scientific = format!("{value:.5e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("a {:e} rendering has an exponent");
    let exponent: i32 = exponent.parse().expect("a {:e} exponent is an integer");
    let trim = |text: &str| {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text.to_owned()
        }
    };
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{}e{sign}{:02}", trim(mantissa), exponent.abs());
    }
    let decimals = usize::try_from(5 - exponent).expect("the exponent is below 6 here");
    trim(&format!("{value:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn run(exit_code: Option<i32>, stdout: &str, stderr: &str, timed_out: bool) -> Finished {
        Finished {
            exit_code,
            signal: None,
            timed_out,
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
            duration: std::time::Duration::ZERO,
        }
    }

    fn failure(finished: &Finished) -> String {
        read_answer("retriever", Ok(finished), 2.5)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn control_a_run_that_did_not_answer_is_an_instrument_failure() {
        assert_eq!(failure(&run(None, "", "", true)), "retriever exceeded 2.5s");
        assert_eq!(
            failure(&run(Some(3), "", "first\nboom\n", false)),
            "retriever exited 3: boom"
        );
        assert_eq!(
            failure(&run(Some(3), "", "", false)),
            "retriever exited 3: no stderr"
        );
        assert_eq!(
            failure(&run(Some(0), " \n", "", false)),
            "retriever printed nothing"
        );
        assert_eq!(
            failure(&run(Some(0), "<html>", "", false)),
            "retriever output is not JSON: expected value"
        );
    }

    #[test]
    fn a_secret_on_stderr_is_withheld_from_the_report() {
        assert_eq!(
            failure(&run(Some(1), "", "password=hunter2", false)),
            "retriever exited 1: stderr withheld: it looks like it carries a secret"
        );
    }

    #[test]
    fn a_long_stderr_line_is_cut() {
        let long = "x".repeat(500);
        assert_eq!(
            failure(&run(Some(1), "", &long, false)).len(),
            "retriever exited 1: ".len() + 200
        );
    }

    #[test]
    fn ascii_json_escapes_astral_characters_as_surrogate_pairs() {
        assert_eq!(ascii_json(&json!("🙂")), br#""\ud83d\ude42""#);
    }

    #[test]
    fn format_g_reads_like_the_user_typed_it() {
        for (value, text) in [
            (0.8, "0.8"),
            (10.0, "10"),
            (1.0, "1"),
            (0.75, "0.75"),
            (2.5, "2.5"),
            (86400.0, "86400"),
            (1234567.0, "1.23457e+06"),
            (0.00001, "1e-05"),
        ] {
            assert_eq!(format_g(value), text);
        }
    }

    proptest! {
        #[test]
        fn ascii_json_round_trips_any_text(text in "\\PC{0,40}") {
            let bytes = ascii_json(&json!(text));
            prop_assert!(bytes.is_ascii());
            let back: Value = serde_json::from_slice(&bytes).unwrap();
            prop_assert_eq!(back, json!(text));
        }

        #[test]
        fn no_command_text_makes_the_argv_parser_panic(text in "\\PC{0,60}") {
            if let Some(argv) = parse_argv(&text) {
                prop_assert!(!argv.is_empty() && argv.iter().all(|a| !a.is_empty()));
            }
        }
    }
}
