//! What the hop workflow returns: states as read, launches, check runs, landings, status.

use serde::Serialize;
use serde_json::Value;

use hpp_core::hop::ids::{CheckId, Kind, StateId, TaskId};
use hpp_core::hop::states::State;
use hpp_store::CommitId;

/// A state as read from the store.
#[derive(Debug, Clone, Serialize)]
pub struct Loaded {
    /// The state.
    #[serde(flatten)]
    pub state: State,
    /// The kind.
    pub kind: Kind,
    /// The commit that carries it.
    pub commit: CommitId,
    /// The digest its commit records.
    pub recorded_digest: Option<String>,
}

/// The five `HOP_*` values for one prompt state.
#[derive(Debug, Clone, Serialize)]
pub struct Env {
    /// `HOP_ROOT`.
    #[serde(rename = "HOP_ROOT")]
    pub root: String,
    /// `HOP_STATE_ID`.
    #[serde(rename = "HOP_STATE_ID")]
    pub state: String,
    /// `HOP_TASK_ID`.
    #[serde(rename = "HOP_TASK_ID")]
    pub task: String,
    /// `HOP_ATTEMPT_ID`.
    #[serde(rename = "HOP_ATTEMPT_ID")]
    pub attempt: String,
    /// `HOP_WORKSPACE`.
    #[serde(rename = "HOP_WORKSPACE")]
    pub workspace: String,
}

impl Env {
    /// Returns `(name, value)` pairs in `hop env` order.
    pub fn pairs(&self) -> [(&'static str, &str); 5] {
        [
            ("HOP_ROOT", &self.root),
            ("HOP_STATE_ID", &self.state),
            ("HOP_TASK_ID", &self.task),
            ("HOP_ATTEMPT_ID", &self.attempt),
            ("HOP_WORKSPACE", &self.workspace),
        ]
    }
}

/// What `hop init` did.
#[derive(Debug, Clone, Serialize)]
pub struct Initialised {
    /// Whether this run created the initial accepted state.
    pub created: bool,
    /// The accepted head.
    pub accepted: Loaded,
}

/// A new prompt state and the launch it authorises.
#[derive(Debug, Clone, Serialize)]
pub struct Prompted {
    /// The prompt state.
    pub state: Loaded,
    /// The checkpoint taken first (follow-up prompts only).
    pub checkpoint: Option<StateId>,
    /// The environment to launch the agent with.
    pub env: Env,
}

/// One recorded check run.
#[derive(Debug, Clone, Serialize)]
pub struct CheckRun {
    /// The check's id.
    pub id: CheckId,
    /// The prompt state it ran under.
    pub state: StateId,
    /// The checkpoint whose exact tree was tested.
    pub checkpoint: StateId,
    /// That tree.
    pub tree: String,
    /// The command.
    pub command: Vec<String>,
    /// Its exit code (`None`: killed, timed out or could not start).
    pub exit_code: Option<i32>,
    /// Whether it exited 0.
    pub passed: bool,
    /// Its stdout (lossy UTF-8).
    pub stdout: String,
    /// Its stderr (lossy UTF-8), or why it could not start.
    pub stderr: String,
    /// The `hpp.evidence/v1` bundle recording the run (`git hpp evidence verify` checks it).
    pub evidence: Option<String>,
}

/// A frozen proposal.
#[derive(Debug, Clone, Serialize)]
pub struct Proposed {
    /// The proposal state.
    pub state: Loaded,
    /// The checks recorded for exactly this tree.
    pub checks: Vec<Value>,
}

/// What `hop land` did.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Landing {
    /// The accepted head moved to a new accepted state.
    Landed {
        /// The new accepted state.
        accepted: Loaded,
        /// The head it replaced.
        previous: StateId,
        /// The proposal.
        proposal: StateId,
        /// How many times the compare-and-swap was lost and the landing recomposed.
        retries: usize,
        /// The validation run, if a command was given.
        validation: Option<CheckRun>,
        /// The branch fast-forwarded to the accepted commit.
        branch: Option<String>,
    },
    /// The validation command failed on the composed tree: an `F_` state records it and the
    /// head did not move.
    ValidationFailed {
        /// The failed state.
        failed: Loaded,
        /// The validation run.
        validation: CheckRun,
    },
}

/// What `hop undo` did.
#[derive(Debug, Clone, Serialize)]
pub struct Undone {
    /// The new accepted state.
    pub accepted: Loaded,
    /// The landing taken back.
    pub reverts: StateId,
    /// The state whose tree is current again.
    pub restores: StateId,
}

/// One attempt as `hop status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct AttemptView {
    /// The attempt.
    pub attempt: String,
    /// Its task.
    pub task: Option<TaskId>,
    /// Its agent.
    pub agent: Option<String>,
    /// The accepted state its workspace started from.
    pub base: Option<StateId>,
    /// Its head state.
    pub head: StateId,
    /// The head's kind.
    pub head_kind: Kind,
    /// `active`, `proposed`, `landed`, `changes_requested`, `cancelled`.
    pub status: &'static str,
    /// Its workspace.
    pub workspace: String,
    /// Whether the workspace exists on this machine.
    pub workspace_exists: bool,
}

/// What `hop status` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The accepted head.
    pub accepted: Loaded,
    /// The accepted chain, newest first.
    pub history: Vec<StateId>,
    /// Every attempt.
    pub attempts: Vec<AttemptView>,
    /// Number of pinned states.
    pub states: usize,
}

/// A state with what `hop state` shows beside it.
#[derive(Debug, Clone, Serialize)]
pub struct StateView {
    /// The state.
    #[serde(flatten)]
    pub loaded: Loaded,
    /// The ref pinning it.
    #[serde(rename = "ref")]
    pub pin: String,
    /// The exact prompt, for prompt states (lossy only if not UTF-8; see `prompt_sha256`).
    pub prompt: Option<String>,
    /// Whether the recorded digest recomputes.
    pub digest_ok: bool,
    /// Checks recorded against this state's tree.
    pub checks: Vec<Value>,
}
