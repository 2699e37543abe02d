//! The hosts' hook protocol (CONCEPTS.md "host": Claude Code or Codex CLI, the environment that
//! runs the agent): a hook's JSON input as a typed value, and each host's answer as a value.
//!
//! A host runs a hook as a command with one JSON object on its stdin (`hook_event_name`,
//! `tool_name`, `tool_input`, `cwd`, `session_id`, …) and reads the answer from what the command
//! prints and how it exits:
//!
//! | answer | stdout | exit | the host |
//! |---|---|---|---|
//! | [`Answer::Silent`] | nothing | 0 | goes on; its own permission rules decide |
//! | [`Answer::Output`] | `{"hookSpecificOutput": {…}}` | 0 | reads the decision or the context |
//! | [`Answer::Text`] | plain text | 0 | Codex adds a SessionStart hook's text to the context |
//! | [`Answer::Block`] | nothing (the reason on stderr) | 2 | blocks the call, shows the reason |
//!
//! Malformed input is refused (exit 2), so a gate that cannot read its input blocks the call
//! instead of letting it through. Pure: the application reads stdin and prints the answer; no ref
//! is touched here.
//!
//! ```
//! use hpp_core::host::{Answer, Blank, Event, Host, HookInput};
//! let input = br#"{"hook_event_name": "PreToolUse", "tool_name": "Bash",
//!                  "tool_input": {"command": "rm -rf src"}}"#;
//! let input = HookInput::parse(input, Blank::Refused).expect("a hook input");
//! assert!(input.event.is(Event::PreToolUse));
//! assert_eq!(input.bash_command(), Ok(Some("rm -rf src")));
//! let Answer::Output(output) = Host::ClaudeCode.ask("a person decides".into()) else {
//!     panic!("Claude Code asks in hookSpecificOutput");
//! };
//! let json = serde_json::to_value(&output).expect("answers serialise");
//! assert_eq!(json["hookSpecificOutput"]["permissionDecision"], "ask");
//! ```

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

/// An agent host whose hook protocol git-hpp answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Host {
    /// Claude Code: decisions and context in `hookSpecificOutput`; it can ask a person.
    ClaudeCode,
    /// Codex CLI: the same `hookSpecificOutput` shape, or exit 2 with the reason on stderr; its
    /// PreToolUse hook cannot ask.
    Codex,
}

impl Host {
    /// Every host, in the order the command line lists them.
    pub const ALL: [Host; 2] = [Host::ClaudeCode, Host::Codex];

    /// Returns the host's name on the command line and in module wiring (`claude-code`, `codex`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
        }
    }

    /// Returns the answer that asks a person about a tool call. Claude Code asks; Codex cannot,
    /// so the call is denied and the reason says a person has to run it.
    pub fn ask(self, reason: String) -> Answer {
        match self {
            Self::ClaudeCode => Answer::permission(Permission::Ask, reason),
            Self::Codex => Answer::permission(
                Permission::Deny,
                format!("{reason}; Codex hooks cannot ask, so a person has to run this command"),
            ),
        }
    }

    /// Returns a denial by each host's plainest convention, as the lane guard gives it: Claude
    /// Code reads a `permissionDecision` deny (exit 0), Codex a blocking exit 2 with the reason on
    /// stderr.
    pub fn deny(self, reason: String) -> Answer {
        match self {
            Self::ClaudeCode => Answer::permission(Permission::Deny, reason),
            Self::Codex => Answer::Block(reason),
        }
    }

    /// Returns the context a SessionStart hook gives the agent: Claude Code reads it as
    /// `additionalContext`, Codex takes the plain text on stdout (one line break added).
    pub fn session_context(self, text: &str) -> Answer {
        match self {
            Self::ClaudeCode => Answer::additional_context(Event::SessionStart, text),
            Self::Codex => Answer::Text(format!("{text}\n")),
        }
    }
}

/// The hook events git-hpp answers, named as the hosts name them in `hook_event_name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Event {
    /// Before a tool call: the hook may allow, ask or deny.
    PreToolUse,
    /// After a tool call, with its response.
    PostToolUse,
    /// After a tool call that failed (Claude Code's own event for it).
    PostToolUseFailure,
    /// A session starts (or resumes): the hook may add context.
    SessionStart,
    /// The agent is about to stop.
    Stop,
    /// The context is about to be compacted.
    PreCompact,
}

impl Event {
    /// Returns the event's name as the hosts send it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::SessionStart => "SessionStart",
            Self::Stop => "Stop",
            Self::PreCompact => "PreCompact",
        }
    }
}

/// The `hook_event_name` of an input, as it came.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum EventName {
    /// The input names no event.
    #[default]
    Absent,
    /// A name, known to [`Event`] or not.
    Named(String),
    /// A `hook_event_name` that is not a string.
    NotAString(Value),
}

impl EventName {
    /// Returns whether the input names `event`.
    pub fn is(&self, event: Event) -> bool {
        matches!(self, Self::Named(name) if name == event.as_str())
    }
}

impl std::fmt::Display for EventName {
    /// Shows the name as JSON (`"Stop"`, `3`), as a refusal quotes it; nothing when absent.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Absent => Ok(()),
            Self::Named(name) => write!(f, "{}", Value::String(name.clone())),
            Self::NotAString(value) => write!(f, "{value}"),
        }
    }
}

/// What blank input (empty, or only whitespace) means to a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blank {
    /// It is not JSON, so it is refused: a hook that decides needs its input.
    Refused,
    /// It is an empty object: an observing hook goes on with what it can measure itself.
    Empty,
}

/// Why a hook's input cannot be read, or lacks what a handler needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The input is not JSON (or is blank, under [`Blank::Refused`]); carries serde's reason.
    #[error("{0}")]
    NotJson(String),
    /// The input is JSON but not an object.
    #[error("the hook input must be a JSON object")]
    NotAnObject,
    /// A tool event names no tool (`tool_name` is missing or not a string).
    #[error("the hook input has no tool_name string")]
    NoToolName,
    /// A Bash tool call carries no command string in `tool_input.command`.
    #[error("the hook input for Bash has no tool_input.command string")]
    NoBashCommand,
}

/// The tools that edit one file, named in `tool_input` by path. Claude Code's current tools
/// are Edit, Write and NotebookEdit (the hooks' matcher names those); MultiEdit, which older
/// versions had, is still read when a payload names it.
const EDIT_TOOLS: &[&str] = &["Edit", "Write", "NotebookEdit", "MultiEdit"];

/// The headers of Codex's `apply_patch` envelope that name a file it writes.
const PATCH_HEADERS: &[&str] = &[
    "*** Add File: ",
    "*** Update File: ",
    "*** Delete File: ",
    "*** Move to: ",
];

/// The files an `apply_patch` envelope writes.
fn patch_paths(patch: &str) -> Vec<PathBuf> {
    patch
        .lines()
        .filter_map(|line| PATCH_HEADERS.iter().find_map(|p| line.strip_prefix(p)))
        .map(|p| PathBuf::from(p.trim()))
        .collect()
}

/// A hook's JSON input, as both hosts send it. A field of the wrong type reads as absent, as the
/// hosts add fields over time and a hook reads only what it needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookInput {
    /// `hook_event_name`: the event that ran the hook.
    pub event: EventName,
    /// `tool_name`: the tool of a tool event (`Bash`, `Edit`, `apply_patch`, …).
    pub tool_name: Option<String>,
    /// `tool_input`: the tool's arguments, in the tool's own shape (`Null` when absent).
    pub tool_input: Value,
    /// `tool_response`: what the tool returned, in its own shape (after a tool call).
    pub tool_response: Option<Value>,
    /// `tool_use_id`: the tool call's id.
    pub tool_use_id: Option<String>,
    /// `error`: why the tool call failed (Claude Code's PostToolUseFailure).
    pub error: Option<String>,
    /// `session_id`: the host's session.
    pub session_id: Option<String>,
    /// `cwd`: the directory the agent works in.
    pub cwd: Option<String>,
    /// `transcript_path`: the host's record of the session (a JSONL file on both hosts).
    pub transcript_path: Option<String>,
    /// `stop_hook_active`: a Stop hook already made the agent go on this turn.
    pub stop_hook_active: bool,
}

impl HookInput {
    /// Parses the bytes a host wrote on a hook's stdin.
    ///
    /// # Errors
    ///
    /// [`Error::NotJson`] for bytes that are not JSON (blank input too, under
    /// [`Blank::Refused`]), [`Error::NotAnObject`] for JSON that is not an object.
    pub fn parse(bytes: &[u8], blank: Blank) -> Result<Self, Error> {
        if blank == Blank::Empty && std::str::from_utf8(bytes).is_ok_and(|t| t.trim().is_empty()) {
            return Ok(Self::default());
        }
        match serde_json::from_slice(bytes) {
            Ok(Value::Object(map)) => Ok(Self::from_map(map)),
            Ok(_) => Err(Error::NotAnObject),
            Err(e) => Err(Error::NotJson(e.to_string())),
        }
    }

    fn from_map(mut map: Map<String, Value>) -> Self {
        let mut text = |key: &str| match map.remove(key) {
            Some(Value::String(text)) => Some(text),
            _ => None,
        };
        let tool_name = text("tool_name");
        let tool_use_id = text("tool_use_id");
        let error = text("error");
        let session_id = text("session_id");
        let cwd = text("cwd");
        let transcript_path = text("transcript_path");
        let event = match map.remove("hook_event_name") {
            None => EventName::Absent,
            Some(Value::String(name)) => EventName::Named(name),
            Some(other) => EventName::NotAString(other),
        };
        Self {
            event,
            tool_name,
            tool_input: map.remove("tool_input").unwrap_or(Value::Null),
            tool_response: map.remove("tool_response").filter(|v| !v.is_null()),
            tool_use_id,
            error,
            session_id,
            cwd,
            transcript_path,
            stop_hook_active: map
                .remove("stop_hook_active")
                .is_some_and(|v| v == Value::Bool(true)),
        }
    }

    /// Returns the string at `key` of `tool_input` (`command`, `file_path`, …).
    pub fn tool_input_str(&self, key: &str) -> Option<&str> {
        self.tool_input.get(key).and_then(Value::as_str)
    }

    /// Returns the shell command of a Bash tool call, `None` for any other tool.
    ///
    /// # Errors
    ///
    /// [`Error::NoToolName`] when the input names no tool, [`Error::NoBashCommand`] for a Bash
    /// call without a command string.
    pub fn bash_command(&self) -> Result<Option<&str>, Error> {
        let tool = self.tool_name.as_deref().ok_or(Error::NoToolName)?;
        if tool != "Bash" {
            return Ok(None);
        }
        self.tool_input_str("command")
            .map(Some)
            .ok_or(Error::NoBashCommand)
    }

    /// Returns the files a tool call would write, as the input names them (relative to
    /// [`HookInput::dir`], or absolute): the path of Claude Code's Edit, Write, MultiEdit and
    /// NotebookEdit, every file of Codex's `apply_patch`, and of a `Bash` call every file of a
    /// patch it hands to `apply_patch` and every file it names as output (`> path`, `tee path`;
    /// [`crate::policy::shell_writes`]). Empty for any other tool.
    pub fn edited_paths(&self) -> Vec<PathBuf> {
        let tool = self.tool_name.as_deref().unwrap_or_default();
        if tool == "Bash" {
            let writes = crate::policy::shell_writes(self.tool_input_str("command").unwrap_or(""));
            return writes
                .patches
                .iter()
                .flat_map(|patch| patch_paths(patch))
                .chain(writes.files.iter().map(PathBuf::from))
                .collect();
        }
        if EDIT_TOOLS.contains(&tool) {
            return ["file_path", "notebook_path", "path"]
                .iter()
                .find_map(|k| self.tool_input_str(k))
                .map(PathBuf::from)
                .into_iter()
                .collect();
        }
        if tool.eq_ignore_ascii_case("apply_patch") {
            return patch_paths(self.patch_text());
        }
        Vec::new()
    }

    /// Returns the patch text of Codex's `apply_patch` call (empty when there is none).
    fn patch_text(&self) -> &str {
        ["command", "input", "patch"]
            .iter()
            .find_map(|k| self.tool_input_str(k))
            .or_else(|| self.tool_input.as_str())
            .unwrap_or_default()
    }

    /// Returns the text a tool call would write: Write's `content`, Edit's `new_string`,
    /// NotebookEdit's `new_source`, every `new_string` of an older MultiEdit's `edits`, the
    /// added lines (`+…`) of Codex's `apply_patch`, and of a `Bash` call that writes (a patch,
    /// an output redirection, `tee`) the whole command, here-documents included. Empty for any
    /// other tool.
    pub fn written_text(&self) -> String {
        let tool = self.tool_name.as_deref().unwrap_or_default();
        if tool == "Bash" {
            let command = self.tool_input_str("command").unwrap_or("");
            let writes = crate::policy::shell_writes(command);
            return if writes.any() {
                command.to_owned()
            } else {
                String::new()
            };
        }
        if EDIT_TOOLS.contains(&tool) {
            let mut parts: Vec<&str> = ["content", "new_string", "new_source"]
                .iter()
                .filter_map(|k| self.tool_input_str(k))
                .collect();
            for edit in self
                .tool_input
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(text) = edit.get("new_string").and_then(Value::as_str) {
                    parts.push(text);
                }
            }
            return parts.join("\n");
        }
        if tool.eq_ignore_ascii_case("apply_patch") {
            let patch = self.patch_text();
            return patch
                .lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .map(|l| &l[1..])
                .collect::<Vec<_>>()
                .join("\n");
        }
        String::new()
    }

    /// Returns the directory the agent works in: the input's `cwd` taken from `working_dir`
    /// (where the hook runs), else `working_dir` itself.
    pub fn dir(&self, working_dir: &Path) -> PathBuf {
        self.cwd
            .as_deref()
            .map_or_else(|| working_dir.to_owned(), |cwd| working_dir.join(cwd))
    }

    /// Returns the message of a failed tool call, or `None` when the call did not fail. A call
    /// failed when `event` is [`Event::PostToolUseFailure`], or its response says `is_error` or a
    /// non-zero `exit_code`, `exitCode` or `returnCode`. The message is the first non-blank of
    /// `error`, the response's `stderr`, `error` and `stdout`, and the response itself, whole.
    pub fn failure_message(&self, event: Event) -> Option<String> {
        self.failure_message_given(event, None)
    }

    /// Returns the message of a failed tool call as [`HookInput::failure_message`] does, where
    /// `exit_code` is the call's exit code read elsewhere (Codex's transcript, see
    /// [`codex_exit_code`]): a non-zero one is a failure too.
    pub fn failure_message_given(&self, event: Event, exit_code: Option<i64>) -> Option<String> {
        let response = self.tool_response.as_ref();
        let failed = event == Event::PostToolUseFailure
            || exit_code.is_some_and(|c| c != 0)
            || response.is_some_and(|r| {
                r.get("is_error").and_then(Value::as_bool) == Some(true)
                    || ["exit_code", "exitCode", "returnCode"]
                        .iter()
                        .any(|k| r.get(*k).and_then(Value::as_i64).is_some_and(|c| c != 0))
            });
        if !failed {
            return None;
        }
        let text = |v: Option<&Value>| -> Option<String> {
            match v {
                Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
                _ => None,
            }
        };
        let message = self
            .error
            .clone()
            .filter(|e| !e.trim().is_empty())
            .or_else(|| text(response.and_then(|r| r.get("stderr"))))
            .or_else(|| text(response.and_then(|r| r.get("error"))))
            .or_else(|| text(response.and_then(|r| r.get("stdout"))))
            .or_else(|| text(response))
            .unwrap_or_else(|| "the tool call failed without a message".to_owned());
        Some(message)
    }
}

/// Returns the exit code Codex's transcript records for tool call `call_id`, or `None` when it
/// records none that this reader knows.
///
/// Codex's PostToolUse gives a shell call's `tool_response` as the output text alone, with no
/// exit code, and Codex has no PostToolUseFailure; its transcript (`transcript_path`, the
/// session's rollout JSONL) records each exec. The shape assumed, from Codex's rollout files:
/// one JSON object a line, `{"timestamp", "type", "payload"}`, where the call's result is either
/// an `event_msg` whose payload is `{"type": "exec_command_end", "call_id", "exit_code", …}`, or
/// a `response_item` whose payload is `{"type": "function_call_output", "call_id", "output"}`
/// with `output` a JSON text whose `metadata.exit_code` is the code, or plain text that opens
/// with `Exit code: N` or says `Process exited with code N`; or (Codex 0.171, written before the
/// PostToolUse hook runs, while the output record comes after it) an `event_msg` whose payload
/// is `{"type": "item_completed", "item": {"type": "CommandExecution", "id", "exit_code", …}}`,
/// the item's `id` being the call's id. The call is named by the hook's
/// `tool_use_id`, which Codex takes from the same `call_id`. Read defensively: any line that is
/// not JSON or not one of these shapes is skipped, the last record of the call wins, and nothing
/// is guessed without a `call_id` match (a wrong failure would teach the agent a false gotcha).
/// The caller bounds what it reads (the end of the file).
///
/// ```
/// let line = br#"{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"c1","exit_code":2}}"#;
/// assert_eq!(hpp_core::host::codex_exit_code(line, "c1"), Some(2));
/// assert_eq!(hpp_core::host::codex_exit_code(line, "c2"), None);
/// ```
pub fn codex_exit_code(transcript: &[u8], call_id: &str) -> Option<i64> {
    transcript
        .split(|b| *b == b'\n')
        .rev()
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .find_map(|record| {
            let payload = record.get("payload").unwrap_or(&record);
            if payload.get("type").and_then(Value::as_str) == Some("item_completed") {
                let item = payload.get("item")?;
                if item.get("id").and_then(Value::as_str) != Some(call_id) {
                    return None;
                }
                return item.get("exit_code").and_then(Value::as_i64);
            }
            if payload.get("call_id").and_then(Value::as_str) != Some(call_id) {
                return None;
            }
            match payload.get("type").and_then(Value::as_str) {
                Some("exec_command_end") => payload.get("exit_code").and_then(Value::as_i64),
                Some("function_call_output" | "custom_tool_call_output") => {
                    exit_code_of_output(payload.get("output")?)
                }
                _ => None,
            }
        })
}

/// The exit code in a Codex function call's `output`: JSON with `metadata.exit_code`, or text
/// naming the code in its first lines.
fn exit_code_of_output(output: &Value) -> Option<i64> {
    let text = output.as_str()?;
    if let Ok(json) = serde_json::from_str::<Value>(text)
        && let Some(code) = json.pointer("/metadata/exit_code").and_then(Value::as_i64)
    {
        return Some(code);
    }
    text.lines().take(8).find_map(|line| {
        let line = line.trim();
        line.strip_prefix("Exit code:")
            .or_else(|| line.strip_prefix("Process exited with code"))
            .and_then(|rest| rest.trim().parse().ok())
    })
}

/// A PreToolUse permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Ask a person (Claude Code only).
    Ask,
    /// Refuse the tool call.
    Deny,
}

/// The event-specific part of a hook's JSON answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Specific {
    /// A PreToolUse decision.
    Permission {
        /// Always [`Event::PreToolUse`].
        #[serde(rename = "hookEventName")]
        event: Event,
        /// Ask or deny.
        #[serde(rename = "permissionDecision")]
        decision: Permission,
        /// Why, shown to the agent (and to the person asked).
        #[serde(rename = "permissionDecisionReason")]
        reason: String,
    },
    /// Text added to the agent's context.
    Context {
        /// The event answered.
        #[serde(rename = "hookEventName")]
        event: Event,
        /// The text.
        #[serde(rename = "additionalContext")]
        text: String,
    },
}

/// A hook's JSON answer: `{"hookSpecificOutput": {…}}`, read by both hosts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Output {
    /// The event-specific answer.
    #[serde(rename = "hookSpecificOutput")]
    pub hook_specific_output: Specific,
}

/// What a hook answers the host (see the module's table for stdout and the exit code).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Nothing: the host goes on as if the hook had not answered.
    Silent,
    /// A JSON answer on stdout, exit 0.
    Output(Output),
    /// Plain text on stdout, exit 0.
    Text(String),
    /// Exit 2 with the reason on stderr: the host blocks the tool call.
    Block(String),
}

impl Answer {
    /// Returns a PreToolUse permission decision; both hosts read it (exit 0).
    pub fn permission(decision: Permission, reason: String) -> Self {
        Self::Output(Output {
            hook_specific_output: Specific::Permission {
                event: Event::PreToolUse,
                decision,
                reason,
            },
        })
    }

    /// Returns `text` as context added at `event`; both hosts read it (exit 0).
    pub fn additional_context(event: Event, text: &str) -> Self {
        Self::Output(Output {
            hook_specific_output: Specific::Context {
                event,
                text: text.to_owned(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: &Value) -> HookInput {
        HookInput::parse(value.to_string().as_bytes(), Blank::Refused).expect("an object")
    }

    fn json_of(answer: &Answer) -> Value {
        match answer {
            Answer::Output(output) => serde_json::to_value(output).expect("answers serialise"),
            other => panic!("not a JSON answer: {other:?}"),
        }
    }

    #[test]
    fn an_input_reads_its_fields_and_ignores_the_rest() {
        let input = parse(&json!({
            "session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "cargo test"}, "tool_use_id": "toolu_1", "cwd": "sub",
            "transcript_path": "/tmp/t.jsonl",
        }));
        assert!(input.event.is(Event::PreToolUse));
        assert!(!input.event.is(Event::Stop));
        assert_eq!(input.session_id.as_deref(), Some("s1"));
        assert_eq!(input.tool_use_id.as_deref(), Some("toolu_1"));
        assert_eq!(input.bash_command(), Ok(Some("cargo test")));
        assert_eq!(input.dir(Path::new("/w")), Path::new("/w/sub"));
        assert_eq!(HookInput::default().dir(Path::new("/w")), Path::new("/w"));
    }

    #[test]
    fn a_field_of_another_type_reads_as_absent_but_the_event_keeps_its_json() {
        let input = parse(&json!({"hook_event_name": 3, "session_id": 7, "tool_input": "x"}));
        assert_eq!(input.event, EventName::NotAString(json!(3)));
        assert_eq!(input.event.to_string(), "3");
        assert_eq!(EventName::Named("Stop".into()).to_string(), "\"Stop\"");
        assert_eq!(input.session_id, None);
        assert_eq!(input.tool_input_str("command"), None);
    }

    #[test]
    fn blank_input_is_an_empty_object_only_where_the_hook_says_so() {
        assert_eq!(
            HookInput::parse(b" \n", Blank::Empty),
            Ok(HookInput::default())
        );
        assert!(matches!(
            HookInput::parse(b" \n", Blank::Refused),
            Err(Error::NotJson(_))
        ));
    }

    #[test]
    fn control_input_that_is_not_a_json_object_is_refused() {
        assert_eq!(
            HookInput::parse(b"not json", Blank::Empty),
            Err(Error::NotJson("expected ident at line 1 column 2".into()))
        );
        assert_eq!(
            HookInput::parse(b"[1]", Blank::Refused),
            Err(Error::NotAnObject)
        );
        let no_tool = parse(&json!({"tool_input": {"command": "ls"}}));
        assert_eq!(no_tool.bash_command(), Err(Error::NoToolName));
        let no_command = parse(&json!({"tool_name": "Bash", "tool_input": {"command": 1}}));
        assert_eq!(no_command.bash_command(), Err(Error::NoBashCommand));
        assert_eq!(
            parse(&json!({"tool_name": "Read"})).bash_command(),
            Ok(None)
        );
    }

    #[test]
    fn edited_paths_read_edit_tools_and_codex_patches() {
        let edit = parse(
            &json!({"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "a.ipynb"}}),
        );
        assert_eq!(edit.edited_paths(), [PathBuf::from("a.ipynb")]);
        let patch = "*** Begin Patch\n*** Add File: src/a.rs\n+x\n*** Update File: b.rs\n*** Move to: c.rs\n*** End Patch";
        let codex = parse(&json!({"tool_name": "apply_patch", "tool_input": {"command": patch}}));
        assert_eq!(
            codex.edited_paths(),
            ["src/a.rs", "b.rs", "c.rs"].map(PathBuf::from)
        );
        let bare =
            parse(&json!({"tool_name": "Apply_Patch", "tool_input": "*** Delete File: d.rs"}));
        assert_eq!(bare.edited_paths(), [PathBuf::from("d.rs")]);
        assert!(
            parse(&json!({"tool_name": "Read", "tool_input": {"file_path": "x"}}))
                .edited_paths()
                .is_empty()
        );
    }

    #[test]
    fn a_failure_is_read_from_the_event_or_the_response() {
        let ok = parse(&json!({"tool_response": {"exit_code": 0, "stderr": "warn"}}));
        assert_eq!(ok.failure_message(Event::PostToolUse), None);
        assert_eq!(
            ok.failure_message(Event::PostToolUseFailure).as_deref(),
            Some("warn")
        );
        let failed = parse(&json!({"tool_response": {"exitCode": 1, "stdout": "boom"}}));
        assert_eq!(
            failed.failure_message(Event::PostToolUse).as_deref(),
            Some("boom")
        );
        let said = parse(&json!({"error": "  ", "tool_response": {"is_error": true}}));
        assert_eq!(
            said.failure_message(Event::PostToolUse).as_deref(),
            Some("the tool call failed without a message")
        );
        let text = parse(&json!({"error": "denied", "tool_response": "whole"}));
        assert_eq!(
            text.failure_message(Event::PostToolUseFailure).as_deref(),
            Some("denied")
        );
    }

    /// A Codex rollout around one failed and one passing shell call, in the shapes
    /// [`codex_exit_code`] documents (issue 30).
    const CODEX_TRANSCRIPT: &str = concat!(
        r#"{"timestamp":"2026-12-03T10:00:00.000Z","type":"session_meta","payload":{"id":"019a","cwd":"/w","originator":"codex_exec","cli_version":"0.171.0"}}"#,
        "\n",
        r#"{"timestamp":"2026-12-03T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cargo test\"]}","call_id":"call_fail"}}"#,
        "\n",
        r#"{"timestamp":"2026-12-03T10:00:02.000Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"call_fail","stdout":"","stderr":"error[E0425]","aggregated_output":"error[E0425]","exit_code":101,"duration":{"secs":1,"nanos":0}}}"#,
        "\n",
        r#"{"timestamp":"2026-12-03T10:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_fail","output":"{\"output\":\"error[E0425]\",\"metadata\":{\"exit_code\":101,\"duration_seconds\":1.0}}"}}"#,
        "\n",
        "not json, as a torn last write would leave\n",
        r#"{"timestamp":"2026-12-03T10:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_ok","output":"Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n"}}"#,
        "\n",
        r#"{"timestamp":"2026-12-03T10:00:04.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_unified","output":"Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 2\nOutput:\nno such file\n"}}"#,
        "\n",
        r#"{"timestamp":"2026-12-03T10:00:05.000Z","type":"event_msg","payload":{"type":"item_completed","thread_id":"019a","turn_id":"1","item":{"type":"CommandExecution","id":"call_item","command":["/bin/bash","-lc","ls x"],"status":"failed","aggregated_output":"ls: x: No such file","exit_code":2}}}"#,
        "\n",
    );

    #[test]
    fn codex_exit_codes_are_read_from_its_transcript_by_call_id() {
        let t = CODEX_TRANSCRIPT.as_bytes();
        assert_eq!(codex_exit_code(t, "call_fail"), Some(101));
        assert_eq!(codex_exit_code(t, "call_ok"), Some(0));
        assert_eq!(codex_exit_code(t, "call_unified"), Some(2));
        assert_eq!(codex_exit_code(t, "call_item"), Some(2));
        // Codex's own PostToolUse shape: the response is the output text, no exit code.
        let input = parse(&json!({
            "session_id": "019a", "transcript_path": "/s/rollout.jsonl", "cwd": "/w",
            "hook_event_name": "PostToolUse", "model": "gpt-5-codex", "turn_id": "1",
            "tool_name": "Bash", "tool_use_id": "call_fail",
            "tool_input": {"command": "cargo test"}, "tool_response": "error[E0425]",
        }));
        assert_eq!(input.transcript_path.as_deref(), Some("/s/rollout.jsonl"));
        assert_eq!(input.failure_message(Event::PostToolUse), None);
        assert_eq!(
            input
                .failure_message_given(Event::PostToolUse, codex_exit_code(t, "call_fail"))
                .as_deref(),
            Some("error[E0425]")
        );
    }

    #[test]
    fn control_a_codex_call_the_transcript_does_not_record_as_failed_is_no_failure() {
        let t = CODEX_TRANSCRIPT.as_bytes();
        assert_eq!(codex_exit_code(t, "call_missing"), None);
        assert_eq!(codex_exit_code(b"", "call_fail"), None);
        assert_eq!(
            codex_exit_code(b"{\"call_id\":\"call_fail\"}\n", "call_fail"),
            None
        );
        let input = parse(
            &json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                                  "tool_use_id": "call_ok", "tool_response": "warning: x"}),
        );
        assert_eq!(
            input.failure_message_given(Event::PostToolUse, codex_exit_code(t, "call_ok")),
            None
        );
    }

    #[test]
    fn each_host_answers_in_its_own_convention() {
        let ask = json_of(&Host::ClaudeCode.ask("r".into()));
        assert_eq!(
            ask,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                   "permissionDecision": "ask", "permissionDecisionReason": "r"}})
        );
        let codex = json_of(&Host::Codex.ask("r".into()));
        assert_eq!(codex["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            codex["hookSpecificOutput"]["permissionDecisionReason"],
            "r; Codex hooks cannot ask, so a person has to run this command"
        );
        assert_eq!(
            json_of(&Host::ClaudeCode.deny("no".into()))["hookSpecificOutput"]["permissionDecision"],
            "deny"
        );
        assert_eq!(Host::Codex.deny("no".into()), Answer::Block("no".into()));
        assert_eq!(
            json_of(&Host::ClaudeCode.session_context("hi")),
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "hi"}})
        );
        assert_eq!(
            Host::Codex.session_context("hi"),
            Answer::Text("hi\n".into())
        );
        assert_eq!(
            json_of(&Answer::additional_context(Event::PostToolUseFailure, "t")),
            json!({"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "t"}})
        );
        assert_eq!(Host::ALL.map(Host::as_str), ["claude-code", "codex"]);
    }
}
