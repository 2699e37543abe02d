//! Reading what commands take as input, with the reference's refusal sentences: JSON files, the
//! files a command names, and an agent host's hook input on stdin.

use std::path::Path;

use serde_json::Value;

use super::ctx::Ctx;
use super::exit::CliError;
use hpp_core::host::{self, Blank, HookInput};

pub use super::caps::{
    EVENT_LOG_CAP, HOOK_INPUT_CAP, JSON_FILE_CAP, PUSH_INPUT_CAP, read_capped, size,
};

/// The JSON root a command expects in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonRoot {
    /// Any JSON value; the command checks the shape itself.
    Any,
    /// A JSON object.
    Object,
    /// A JSON array.
    Array,
}

/// Reads a JSON file (relative to the working directory), refusing with the reference's
/// sentences: `JSON file not found: P`, `invalid JSON in P: msg`, `JSON root in P must be an
/// object|array`.
pub fn read_json(ctx: &Ctx, path: &Path, root: JsonRoot) -> Result<Value, CliError> {
    let shown = path.display();
    let full = ctx.cwd().join(path);
    if !full.is_file() {
        return Err(CliError::refused(format!("JSON file not found: {shown}")));
    }
    let bytes = read_capped(&full, JSON_FILE_CAP, "JSON file")?;
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::refused(format!("invalid JSON in {shown}: not UTF-8 text")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| CliError::refused(format!("invalid JSON in {shown}: {e}")))?;
    match (root, &value) {
        (JsonRoot::Any, _)
        | (JsonRoot::Object, Value::Object(_))
        | (JsonRoot::Array, Value::Array(_)) => Ok(value),
        (JsonRoot::Object, _) => Err(CliError::refused(format!(
            "JSON root in {shown} must be an object"
        ))),
        (JsonRoot::Array, _) => Err(CliError::refused(format!(
            "JSON root in {shown} must be an array"
        ))),
    }
}

/// Reads a whole input file (relative to the working directory) that a command names as `what`
/// ("decision suite"), refusing with `<what> not found: P` or `cannot read <what> P: why`.
/// Returns the bytes and the file's stem, which suites use as their default name.
pub fn read_named_file(ctx: &Ctx, path: &Path, what: &str) -> Result<(Vec<u8>, String), CliError> {
    let shown = path.display();
    let full = ctx.cwd().join(path);
    if !full.is_file() {
        return Err(CliError::refused(format!("{what} not found: {shown}")));
    }
    let bytes = read_capped(&full, JSON_FILE_CAP, what)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok((bytes, stem))
}

/// How a hook command names its stdin in refusals. The lane verbs say "payload" and word a JSON
/// error their own way, as their tests and the lane-kit scripts' users have read it since they
/// shipped; the policy, handoff and gotcha hooks say "input".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookNoun {
    /// `the hook input on stdin`
    Input,
    /// `the hook payload on stdin`
    Payload,
}

/// Reads an agent host's hook input on stdin ([`HookInput::parse`], with `blank` for blank
/// input), refusing with `cannot read the hook <noun> on stdin: why`, the JSON error of `noun`
/// and `the hook <noun> on stdin must be a JSON object`.
pub fn read_hook_input(ctx: &Ctx, blank: Blank, noun: HookNoun) -> Result<HookInput, CliError> {
    let word = match noun {
        HookNoun::Input => "input",
        HookNoun::Payload => "payload",
    };
    let text = ctx.read_stdin(HOOK_INPUT_CAP, &format!("the hook {word}"))?;
    HookInput::parse(text.as_bytes(), blank).map_err(|e| match (e, noun) {
        (host::Error::NotJson(why), HookNoun::Input) => {
            CliError::refused(format!("invalid JSON in the hook input on stdin: {why}"))
        }
        (host::Error::NotJson(why), HookNoun::Payload) => {
            CliError::refused(format!("the hook payload on stdin is not JSON: {why}"))
        }
        (host::Error::NotAnObject, _) => {
            CliError::refused(format!("the hook {word} on stdin must be a JSON object"))
        }
        (other, _) => CliError::refused(other),
    })
}
