//! The Hop workflow: the protocol's commands on the store and the bounded runner.
//!
//! Every state is a commit pinned at `refs/hpp/hop/states/<ID>` whose tree is the workspace
//! snapshot and whose message carries the metadata as trailers ([`super::trailers`]). Each
//! attempt has a head ref (`refs/hpp/hop/attempts/<AT_ID>`, moved by compare-and-swap), each
//! prompt keeps its exact bytes in a record of its own (`refs/hpp/hop/prompts/<P_ID>`), each
//! check run is a record (`refs/hpp/hop/checks/<EVIDENCE_ID>`), and accepted states form the
//! chain at `refs/hpp/hop/accepted`, moved only by compare-and-swap. Attempt workspaces and the
//! disposable check and validation worktrees are linked worktrees under `<git dir>/hop/`,
//! outside the user's working tree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::ids::{AttemptId, CheckId, Kind, StateId, TaskId};
use super::states::{self, Launch, Parent, Role, State};
use super::{overlap, trailers};
use crate::process;
use crate::store::{self, Checkout, CommitId, Store, TreeId};

/// The schema of a check record.
pub const CHECK_SCHEMA: &str = "hop.check/v1";

/// How many times `land` recomposes on a new accepted head after losing the compare-and-swap.
pub const LAND_RETRIES: usize = 8;

/// Why a hop command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A refused value (bad id, bad launch, nothing to undo).
    #[error(transparent)]
    Hop(#[from] super::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// A command could not be run.
    #[error(transparent)]
    Process(#[from] process::Error),
    /// `hop init` has not run in this repository.
    #[error("hop is not initialised in this repository: run `hop init`")]
    NotInitialised,
    /// No state has this id.
    #[error("unknown state {0}")]
    UnknownState(String),
    /// The state is of another kind than the command needs.
    #[error("{id} is a {found} state; this needs a {expected} state")]
    WrongKind {
        /// The state.
        id: String,
        /// What the command needs.
        expected: &'static str,
        /// What it is.
        found: Kind,
    },
    /// The state belongs to no attempt (an accepted state).
    #[error("{0} belongs to no attempt: start one with `hop start --agent NAME \"<prompt>\"`")]
    NoAttempt(String),
    /// The attempt's workspace is gone.
    #[error("the workspace of {attempt} is missing: {path}")]
    WorkspaceMissing {
        /// The attempt.
        attempt: String,
        /// Where it should be.
        path: String,
    },
    /// A prompt must be one non-empty argument.
    #[error("the prompt is empty: pass the exact instruction as one argument")]
    EmptyPrompt,
    /// A command to run is empty.
    #[error("the command is empty: give it after --")]
    EmptyCommand,
    /// Changed paths overlap paths accepted since the proposal's base.
    #[error("{proposal} overlaps changes accepted since its base {base}")]
    Overlap {
        /// The proposal.
        proposal: String,
        /// Its base.
        base: String,
        /// The colliding paths, sorted.
        paths: Vec<String>,
    },
    /// The three-way merge left conflicts.
    #[error("{proposal} does not compose with the accepted tree")]
    Conflict {
        /// The proposal.
        proposal: String,
        /// The conflicting paths, sorted.
        paths: Vec<String>,
    },
    /// A head moved during compare-and-swap.
    #[error("{name} moved during compare-and-swap: {detail}")]
    HeadMoved {
        /// The ref (or accepted head) that moved.
        name: String,
        /// What was expected and found.
        detail: String,
    },
    /// `--branch` names a branch the accepted commit does not fast-forward.
    #[error("branch {branch} is at {tip}, which the accepted commit does not contain: not a fast-forward")]
    NotFastForward {
        /// The branch.
        branch: String,
        /// Where it is.
        tip: String,
    },
    /// `--branch` names a branch checked out in a worktree.
    #[error("branch {branch} is checked out in {path}: moving it would leave that worktree behind")]
    BranchCheckedOut {
        /// The branch.
        branch: String,
        /// The worktree.
        path: String,
    },
    /// `--branch` names something that is not a branch name.
    #[error("invalid branch name {0:?}")]
    InvalidBranch(String),
    /// The repository is bare.
    #[error("hop needs a repository with a working tree")]
    Bare,
}

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
    /// `active`, `proposed`, `changes_requested`, `cancelled`.
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

/// The Hop controller on one repository.
pub struct Hop<'a> {
    store: &'a Store,
    root: PathBuf,
    hop_dir: PathBuf,
}

static IDS: AtomicU64 = AtomicU64::new(0);

fn stamp() -> (u64, [u8; 8]) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let seed = format!(
        "{}-{}-{}-{:?}",
        std::process::id(),
        now.as_nanos(),
        IDS.fetch_add(1, Ordering::Relaxed),
        std::thread::current().id()
    );
    let digest = Sha256::digest(seed.as_bytes());
    let mut entropy = [0u8; 8];
    entropy.copy_from_slice(&digest[..8]);
    (u64::try_from(now.as_millis()).unwrap_or(u64::MAX), entropy)
}

fn new_state_id(kind: Kind) -> StateId {
    let (ms, e) = stamp();
    StateId::new(kind, ms, e)
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn moved(e: store::Error) -> Error {
    match e {
        store::Error::Moved {
            name,
            expected,
            actual,
        } => Error::HeadMoved {
            name,
            detail: format!(
                "expected {}, found {}",
                expected.as_ref().map_or("nothing", CommitId::as_str),
                actual.as_ref().map_or("nothing", CommitId::as_str)
            ),
        },
        other => Error::Store(other),
    }
}

impl<'a> Hop<'a> {
    /// Opens the controller on `store` (which must have a working tree).
    pub fn new(store: &'a Store) -> Result<Self, Error> {
        let root = store.hop_main_root().ok_or(Error::Bare)?;
        let common = std::fs::canonicalize(store.common_dir())
            .unwrap_or_else(|_| store.common_dir().to_path_buf());
        Ok(Self {
            store,
            root: std::fs::canonicalize(&root).unwrap_or(root),
            hop_dir: common.join("hop"),
        })
    }

    /// Returns the canonical project root (`HOP_ROOT`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Returns the workspace directory of `attempt`.
    pub fn workspace(&self, attempt: &AttemptId) -> PathBuf {
        self.hop_dir.join("workspaces").join(attempt.as_str())
    }

    fn attempt_ref(attempt: &AttemptId) -> String {
        format!("{}{attempt}", Store::hop_attempts_prefix())
    }

    fn prompt_ref(id: &StateId) -> String {
        format!("{}{id}", Store::hop_prompts_prefix())
    }

    fn check_ref(id: &CheckId) -> String {
        format!("{}{id}", Store::hop_checks_prefix())
    }

    /// Reads the state carried by `commit`.
    pub fn load_commit(&self, commit: &CommitId) -> Result<Loaded, Error> {
        let (_tree, _parents, message) = self.store.hop_read_commit(commit)?;
        let parsed = trailers::parse(&message)?;
        Ok(Loaded {
            kind: parsed.state.kind(),
            state: parsed.state,
            commit: commit.clone(),
            recorded_digest: parsed.recorded_digest,
        })
    }

    /// Reads state `id` through its ref.
    pub fn load(&self, id: &StateId) -> Result<Loaded, Error> {
        let commit = self
            .store
            .hop_ref(&Store::hop_state_ref(id.as_str()))?
            .ok_or_else(|| Error::UnknownState(id.to_string()))?;
        self.load_commit(&commit)
    }

    /// Returns the accepted head.
    pub fn accepted(&self) -> Result<Loaded, Error> {
        let commit = self
            .store
            .hop_ref(Store::hop_accepted_ref())?
            .ok_or(Error::NotInitialised)?;
        self.load_commit(&commit)
    }

    fn attempt_head(&self, attempt: &AttemptId) -> Result<Loaded, Error> {
        let commit = self
            .store
            .hop_ref(&Self::attempt_ref(attempt))?
            .ok_or_else(|| Error::UnknownState(attempt.to_string()))?;
        self.load_commit(&commit)
    }

    /// Writes `state` as a commit on `git_parents` (no ref moved yet).
    fn write(&self, state: &State, git_parents: &[CommitId]) -> Result<Loaded, Error> {
        let tree = TreeId::parse(&state.tree).ok_or_else(|| store::Error::Corrupt {
            name: state.id.to_string(),
            detail: "has no valid tree id".into(),
        })?;
        let mut parents: Vec<CommitId> = Vec::new();
        for p in git_parents {
            if !parents.contains(p) {
                parents.push(p.clone());
            }
        }
        let commit = self
            .store
            .hop_write_commit(&tree, &parents, &trailers::render(state))?;
        Ok(Loaded {
            kind: state.kind(),
            state: state.clone(),
            commit,
            recorded_digest: Some(state.digest()),
        })
    }

    fn pin(&self, loaded: &Loaded) -> Result<(), Error> {
        self.store
            .hop_create_ref(&Store::hop_state_ref(loaded.state.id.as_str()), &loaded.commit)?;
        Ok(())
    }

    fn env_for(&self, state: &State) -> Result<Env, Error> {
        let (Some(task), Some(attempt)) = (&state.task, &state.attempt) else {
            return Err(Error::NoAttempt(state.id.to_string()));
        };
        Ok(Env {
            root: self.root.display().to_string(),
            state: state.id.to_string(),
            task: task.to_string(),
            attempt: attempt.to_string(),
            workspace: self.workspace(attempt).display().to_string(),
        })
    }

    /// `hop init`: records the initial accepted state (HEAD's tree, HEAD as its parent) unless
    /// one exists. HEAD, the branch, the index and the working tree are not touched.
    pub fn init(&self) -> Result<Initialised, Error> {
        if let Some(commit) = self.store.hop_ref(Store::hop_accepted_ref())? {
            return Ok(Initialised {
                created: false,
                accepted: self.load_commit(&commit)?,
            });
        }
        let head = self.store.head_commit()?;
        let tree = match &head {
            Some(commit) => self.store.commit_tree(commit)?,
            None => self.store.hop_empty_tree(),
        };
        let state = State {
            id: new_state_id(Kind::Accepted),
            task: None,
            attempt: None,
            base: None,
            agent: None,
            tree: tree.to_string(),
            parents: Vec::new(),
            prompt_digest: None,
            summary: Some("initial accepted state".into()),
            created_at: now_rfc3339(),
        };
        let loaded = self.write(&state, &head.into_iter().collect::<Vec<_>>())?;
        self.store
            .hop_create_ref(Store::hop_accepted_ref(), &loaded.commit)
            .map_err(moved)?;
        self.pin(&loaded)?;
        Ok(Initialised {
            created: true,
            accepted: loaded,
        })
    }

    fn record_prompt(&self, id: &StateId, prompt: &[u8]) -> Result<(), Error> {
        self.store.hop_create_blobs(
            &Self::prompt_ref(id),
            &[("prompt", prompt)],
            None,
            &format!("hop: prompt bytes of {id}"),
        )?;
        Ok(())
    }

    /// `hop start`: creates the task, the attempt, the prompt state (pinned, with its exact
    /// bytes) and then the attempt's detached workspace at the accepted commit.
    pub fn start(&self, agent: &str, prompt: &[u8]) -> Result<Prompted, Error> {
        if prompt.is_empty() {
            return Err(Error::EmptyPrompt);
        }
        let head = self.accepted()?;
        let (ms, e) = stamp();
        let task = TaskId::new(ms, e);
        let (ms, e) = stamp();
        let attempt = AttemptId::new(ms, e);
        let state = State {
            id: new_state_id(Kind::Prompt),
            task: Some(task),
            attempt: Some(attempt.clone()),
            base: Some(head.state.id.clone()),
            agent: Some(agent.to_owned()),
            tree: head.state.tree.clone(),
            parents: vec![
                Parent {
                    role: Role::RunParent,
                    state: head.state.id.clone(),
                },
                Parent {
                    role: Role::CanonicalAnchor,
                    state: head.state.id.clone(),
                },
            ],
            prompt_digest: Some(states::prompt_digest(prompt)),
            summary: None,
            created_at: now_rfc3339(),
        };
        let loaded = self.write(&state, std::slice::from_ref(&head.commit))?;
        // The prompt is durable before any effect: bytes, state, attempt head, then workspace.
        self.record_prompt(&state.id, prompt)?;
        self.pin(&loaded)?;
        self.store
            .hop_create_ref(&Self::attempt_ref(&attempt), &loaded.commit)
            .map_err(moved)?;
        let workspace = self.workspace(&attempt);
        self.store
            .add_worktree(&workspace, Checkout::Detached(&head.commit))?;
        Ok(Prompted {
            env: self.env_for(&state)?,
            state: loaded,
            checkpoint: None,
        })
    }

    /// `hop env`: the launch environment of a prompt state.
    pub fn env(&self, id: &StateId) -> Result<Env, Error> {
        let loaded = self.load(id)?;
        if loaded.kind != Kind::Prompt {
            return Err(Error::WrongKind {
                id: id.to_string(),
                expected: "prompt",
                found: loaded.kind,
            });
        }
        self.env_for(&loaded.state)
    }

    fn live_workspace(&self, attempt: &AttemptId) -> Result<PathBuf, Error> {
        let dir = self.workspace(attempt);
        if dir.is_dir() {
            Ok(dir)
        } else {
            Err(Error::WorkspaceMissing {
                attempt: attempt.to_string(),
                path: dir.display().to_string(),
            })
        }
    }

    /// Appends an attempt state after `head` (run_parent = head, plus `extra` parents) and moves
    /// the attempt's head ref to it by compare-and-swap.
    fn append(
        &self,
        head: &Loaded,
        kind: Kind,
        tree: &TreeId,
        extra: Vec<Parent>,
        git_extra: &[CommitId],
        summary: Option<String>,
    ) -> Result<Loaded, Error> {
        let attempt = head
            .state
            .attempt
            .clone()
            .ok_or_else(|| Error::NoAttempt(head.state.id.to_string()))?;
        let mut parents = vec![Parent {
            role: Role::RunParent,
            state: head.state.id.clone(),
        }];
        parents.extend(extra);
        let state = State {
            id: new_state_id(kind),
            task: head.state.task.clone(),
            attempt: Some(attempt.clone()),
            base: head.state.base.clone(),
            agent: head.state.agent.clone(),
            tree: tree.to_string(),
            parents,
            prompt_digest: None,
            summary,
            created_at: now_rfc3339(),
        };
        let mut git_parents = vec![head.commit.clone()];
        git_parents.extend_from_slice(git_extra);
        let loaded = self.write(&state, &git_parents)?;
        self.pin(&loaded)?;
        self.store
            .hop_move_ref(&Self::attempt_ref(&attempt), &head.commit, &loaded.commit)
            .map_err(moved)?;
        Ok(loaded)
    }

    /// Snapshots the attempt's live workspace as a checkpoint after its head.
    fn checkpoint(&self, attempt: &AttemptId) -> Result<Loaded, Error> {
        let head = self.attempt_head(attempt)?;
        let tree = Store::hop_snapshot_of(&self.live_workspace(attempt)?)?;
        self.append(&head, Kind::Checkpoint, &tree, Vec::new(), &[], None)
    }

    fn attempt_of(&self, loaded: &Loaded) -> Result<AttemptId, Error> {
        loaded
            .state
            .attempt
            .clone()
            .ok_or_else(|| Error::NoAttempt(loaded.state.id.to_string()))
    }

    /// `hop prompt --from STATE`: checkpoints the attempt's workspace, then records the
    /// follow-up prompt against the current accepted state.
    pub fn prompt(&self, from: &StateId, prompt: &[u8]) -> Result<Prompted, Error> {
        if prompt.is_empty() {
            return Err(Error::EmptyPrompt);
        }
        let from = self.load(from)?;
        let attempt = self.attempt_of(&from)?;
        let checkpoint = self.checkpoint(&attempt)?;
        let accepted = self.accepted()?;
        let id = new_state_id(Kind::Prompt);
        let state = State {
            id: id.clone(),
            task: checkpoint.state.task.clone(),
            attempt: Some(attempt.clone()),
            base: checkpoint.state.base.clone(),
            agent: checkpoint.state.agent.clone(),
            tree: checkpoint.state.tree.clone(),
            parents: vec![
                Parent {
                    role: Role::RunParent,
                    state: checkpoint.state.id.clone(),
                },
                Parent {
                    role: Role::CanonicalAnchor,
                    state: accepted.state.id.clone(),
                },
            ],
            prompt_digest: Some(states::prompt_digest(prompt)),
            summary: None,
            created_at: now_rfc3339(),
        };
        let loaded = self.write(&state, &[checkpoint.commit.clone(), accepted.commit.clone()])?;
        self.record_prompt(&id, prompt)?;
        self.pin(&loaded)?;
        self.store
            .hop_move_ref(
                &Self::attempt_ref(&attempt),
                &checkpoint.commit,
                &loaded.commit,
            )
            .map_err(moved)?;
        Ok(Prompted {
            env: self.env_for(&state)?,
            state: loaded,
            checkpoint: Some(checkpoint.state.id),
        })
    }

    /// Checks that `launch` is the agent launch of `id` and returns the state.
    fn launched(&self, id: &StateId, launch: &Launch) -> Result<Loaded, Error> {
        let loaded = self.load(id)?;
        launch.matches(&loaded.state)?;
        Ok(loaded)
    }

    /// Runs `argv` in a disposable detached worktree of `commit` and removes it afterwards.
    fn run_in_worktree(
        &self,
        commit: &CommitId,
        dir: &Path,
        argv: &[String],
        env: &[(String, String)],
        timeout: Duration,
    ) -> Result<(Option<i32>, Vec<u8>, Vec<u8>), Error> {
        if argv.is_empty() {
            return Err(Error::EmptyCommand);
        }
        self.store.add_worktree(dir, Checkout::Detached(commit))?;
        let mut env = env.to_vec();
        env.push(("HOP_WORKSPACE".into(), dir.display().to_string()));
        let result = process::run_bounded(&process::Request {
            argv,
            cwd: dir,
            timeout,
            stdin: None,
            env: &env,
        });
        let removed = self.store.remove_worktree(dir, true);
        let out = match result {
            Ok(done) => (done.exit_code, done.stdout, done.stderr),
            Err(e @ process::Error::CouldNotStart { .. }) => {
                (None, Vec::new(), e.to_string().into_bytes())
            }
            Err(e) => return Err(e.into()),
        };
        removed?;
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn record_check(
        &self,
        id: &CheckId,
        state: &StateId,
        tested: &Loaded,
        attempt: Option<&AttemptId>,
        argv: &[String],
        (exit_code, stdout, stderr): (Option<i32>, Vec<u8>, Vec<u8>),
        purpose: &str,
    ) -> Result<CheckRun, Error> {
        let run = CheckRun {
            id: id.clone(),
            state: state.clone(),
            checkpoint: tested.state.id.clone(),
            tree: tested.state.tree.clone(),
            command: argv.to_vec(),
            exit_code,
            passed: exit_code == Some(0),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        };
        let record = json!({
            "schema": CHECK_SCHEMA,
            "id": id,
            "purpose": purpose,
            "state": state,
            "checkpoint": tested.state.id,
            "attempt": attempt,
            "tree": tested.state.tree,
            "command": argv,
            "exit_code": exit_code,
            "passed": run.passed,
            "created_at": now_rfc3339(),
        });
        let tree = TreeId::parse(&tested.state.tree).ok_or_else(|| store::Error::Corrupt {
            name: tested.state.id.to_string(),
            detail: "has no valid tree id".into(),
        })?;
        self.store.hop_create_blobs(
            &Self::check_ref(id),
            &[
                ("check.json", &crate::record::canonical_json(&record)),
                ("stdout", &stdout),
                ("stderr", &stderr),
            ],
            Some(("snapshot", &tree)),
            &format!("hop: check {id} of {}", tested.state.id),
        )?;
        Ok(run)
    }

    /// `hop check STATE -- COMMAND`: checkpoints the attempt, runs the command in a disposable
    /// worktree of that exact checkpoint (so live edits cannot change what is tested), records
    /// the run whatever its outcome, and returns it.
    pub fn check(
        &self,
        id: &StateId,
        launch: &Launch,
        argv: &[String],
        timeout: Duration,
    ) -> Result<CheckRun, Error> {
        if argv.is_empty() {
            return Err(Error::EmptyCommand);
        }
        let state = self.launched(id, launch)?;
        let attempt = self.attempt_of(&state)?;
        let checkpoint = self.checkpoint(&attempt)?;
        let (ms, e) = stamp();
        let check_id = CheckId::new(ms, e);
        let dir = self.hop_dir.join("checks").join(check_id.as_str());
        let env = vec![
            ("HOP_ROOT".into(), self.root.display().to_string()),
            ("HOP_STATE_ID".into(), id.to_string()),
            ("HOP_TASK_ID".into(), launch.task.clone()),
            ("HOP_ATTEMPT_ID".into(), launch.attempt.clone()),
        ];
        let out = self.run_in_worktree(&checkpoint.commit, &dir, argv, &env, timeout)?;
        self.record_check(&check_id, id, &checkpoint, Some(&attempt), argv, out, "check")
    }

    /// Returns the check records whose tested tree is `tree`.
    fn checks_for(&self, tree: &str) -> Result<Vec<Value>, Error> {
        let mut out = Vec::new();
        for (_name, commit) in self.store.list(&Store::hop_checks_prefix())? {
            let Some(bytes) = self.store.hop_read_blob(&commit, "check.json")? else {
                continue;
            };
            if let Ok(value) = serde_json::from_slice::<Value>(&bytes)
                && value.get("tree").and_then(Value::as_str) == Some(tree)
            {
                out.push(value);
            }
        }
        Ok(out)
    }

    /// `hop propose`: freezes the live workspace's tree as a proposal.
    pub fn propose(
        &self,
        id: &StateId,
        launch: &Launch,
        summary: Option<String>,
    ) -> Result<Proposed, Error> {
        let state = self.launched(id, launch)?;
        let attempt = self.attempt_of(&state)?;
        let head = self.attempt_head(&attempt)?;
        let tree = Store::hop_snapshot_of(&self.live_workspace(&attempt)?)?;
        let base = head
            .state
            .base
            .clone()
            .ok_or_else(|| Error::NoAttempt(head.state.id.to_string()))?;
        let proposal = self.append(
            &head,
            Kind::Proposal,
            &tree,
            vec![Parent {
                role: Role::CanonicalAnchor,
                state: base,
            }],
            &[],
            summary,
        )?;
        Ok(Proposed {
            checks: self.checks_for(&proposal.state.tree)?,
            state: proposal,
        })
    }

    fn tree_of(loaded: &Loaded) -> Result<TreeId, Error> {
        TreeId::parse(&loaded.state.tree).ok_or_else(|| {
            Error::Store(store::Error::Corrupt {
                name: loaded.state.id.to_string(),
                detail: "has no valid tree id".into(),
            })
        })
    }

    /// Refuses a `--branch` the accepted commit would not fast-forward, or one checked out.
    fn check_branch(&self, branch: &str, head: &Loaded) -> Result<(String, CommitId), Error> {
        let name = format!("refs/heads/{branch}");
        if branch.is_empty() || branch.starts_with('-') || gix_ref_invalid(branch) {
            return Err(Error::InvalidBranch(branch.to_owned()));
        }
        for wt in self.store.list_worktrees()? {
            if wt.branch.as_deref() == Some(name.as_str()) {
                return Err(Error::BranchCheckedOut {
                    branch: branch.to_owned(),
                    path: wt.path.display().to_string(),
                });
            }
        }
        let tip = self
            .store
            .hop_ref(&name)?
            .ok_or_else(|| Error::InvalidBranch(branch.to_owned()))?;
        if !self.store.hop_is_ancestor(&tip, &head.commit)? {
            return Err(Error::NotFastForward {
                branch: branch.to_owned(),
                tip: tip.to_string(),
            });
        }
        Ok((name, tip))
    }

    /// `hop land`: lands a proposal on the accepted head.
    ///
    /// Blocks when the proposal's changed paths collide with paths accepted since its base
    /// ([`overlap::overlapping`]); composes with a three-way tree merge; validates the composed
    /// tree in a disposable worktree when `validation` is given (a failure records an `F_`
    /// state and leaves the head); then moves the accepted ref by compare-and-swap. A lost
    /// swap recomposes on the new head (up to [`LAND_RETRIES`] times) unless `expect_head`
    /// pins the head, in which case it fails with [`Error::HeadMoved`].
    pub fn land(
        &self,
        proposal_id: &StateId,
        branch: Option<&str>,
        validation: Option<&[String]>,
        expect_head: Option<&StateId>,
        timeout: Duration,
    ) -> Result<Landing, Error> {
        let proposal = self.load(proposal_id)?;
        if proposal.kind != Kind::Proposal {
            return Err(Error::WrongKind {
                id: proposal_id.to_string(),
                expected: "proposal",
                found: proposal.kind,
            });
        }
        let base_id = proposal
            .state
            .parent(Role::CanonicalAnchor)
            .cloned()
            .ok_or_else(|| Error::NoAttempt(proposal_id.to_string()))?;
        let base = self.load(&base_id)?;
        let base_tree = Self::tree_of(&base)?;
        let proposal_tree = Self::tree_of(&proposal)?;
        let changed = self.store.hop_changed_paths(&base_tree, &proposal_tree)?;
        let mut retries = 0;
        loop {
            let head = self.accepted()?;
            if let Some(expected) = expect_head
                && *expected != head.state.id
            {
                return Err(Error::HeadMoved {
                    name: Store::hop_accepted_ref().to_owned(),
                    detail: format!("expected {expected}, found {}", head.state.id),
                });
            }
            let head_tree = Self::tree_of(&head)?;
            let accepted_since = self.store.hop_changed_paths(&base_tree, &head_tree)?;
            let paths = overlap::overlapping(&changed, &accepted_since);
            if !paths.is_empty() {
                return Err(Error::Overlap {
                    proposal: proposal_id.to_string(),
                    base: base_id.to_string(),
                    paths,
                });
            }
            let composed = match self
                .store
                .hop_merge_trees(&base_tree, &head_tree, &proposal_tree)?
            {
                Ok(tree) => tree,
                Err(paths) => {
                    return Err(Error::Conflict {
                        proposal: proposal_id.to_string(),
                        paths,
                    });
                }
            };
            let branch_plan = branch.map(|b| self.check_branch(b, &head)).transpose()?;
            let state = State {
                id: new_state_id(Kind::Accepted),
                task: proposal.state.task.clone(),
                attempt: proposal.state.attempt.clone(),
                base: None,
                agent: proposal.state.agent.clone(),
                tree: composed.to_string(),
                parents: vec![
                    Parent {
                        role: Role::CanonicalParent,
                        state: head.state.id.clone(),
                    },
                    Parent {
                        role: Role::ProposalParent,
                        state: proposal_id.clone(),
                    },
                ],
                prompt_digest: None,
                summary: Some(
                    proposal
                        .state
                        .summary
                        .clone()
                        .unwrap_or_else(|| format!("land {proposal_id}")),
                ),
                created_at: now_rfc3339(),
            };
            let candidate = self.write(&state, std::slice::from_ref(&head.commit))?;
            let validation_run = match validation {
                None => None,
                Some(argv) => {
                    let (ms, e) = stamp();
                    let check_id = CheckId::new(ms, e);
                    let dir = self.hop_dir.join("integration").join(check_id.as_str());
                    let env = vec![
                        ("HOP_ROOT".into(), self.root.display().to_string()),
                        ("HOP_STATE_ID".into(), state.id.to_string()),
                        (
                            "HOP_TASK_ID".into(),
                            state.task.as_ref().map(ToString::to_string).unwrap_or_default(),
                        ),
                        (
                            "HOP_ATTEMPT_ID".into(),
                            state
                                .attempt
                                .as_ref()
                                .map(ToString::to_string)
                                .unwrap_or_default(),
                        ),
                    ];
                    let out =
                        self.run_in_worktree(&candidate.commit, &dir, argv, &env, timeout)?;
                    if out.0 != Some(0) {
                        let failed = self.record_failed(&proposal, &head, &composed)?;
                        let run = self.record_check(
                            &check_id,
                            &failed.state.id,
                            &failed,
                            proposal.state.attempt.as_ref(),
                            argv,
                            out,
                            "land",
                        )?;
                        return Ok(Landing::ValidationFailed {
                            failed,
                            validation: run,
                        });
                    }
                    Some(self.record_check(
                        &check_id,
                        &state.id,
                        &candidate,
                        proposal.state.attempt.as_ref(),
                        argv,
                        out,
                        "land",
                    )?)
                }
            };
            match self
                .store
                .hop_move_ref(Store::hop_accepted_ref(), &head.commit, &candidate.commit)
            {
                Ok(()) => {}
                Err(store::Error::Moved { .. } | store::Error::Busy { .. })
                    if expect_head.is_none() && retries < LAND_RETRIES =>
                {
                    retries += 1;
                    continue;
                }
                Err(e) => return Err(moved(e)),
            }
            // The accepted ref moved first: a crash here leaves the state unpinned, which
            // `hop doctor --repair` re-derives from the chain.
            self.pin(&candidate)?;
            let branch_done = match branch_plan {
                Some((name, tip)) => {
                    self.store
                        .hop_move_ref(&name, &tip, &candidate.commit)
                        .map_err(moved)?;
                    branch.map(str::to_owned)
                }
                None => None,
            };
            return Ok(Landing::Landed {
                accepted: candidate,
                previous: head.state.id,
                proposal: proposal_id.clone(),
                retries,
                validation: validation_run,
                branch: branch_done,
            });
        }
    }

    /// Records the `F_` state of a failed landing validation: the composed tree, after the
    /// proposal, composed on `head`. The attempt's head moves to it if the proposal is still
    /// the attempt's head.
    fn record_failed(
        &self,
        proposal: &Loaded,
        head: &Loaded,
        composed: &TreeId,
    ) -> Result<Loaded, Error> {
        let extra = vec![Parent {
            role: Role::IntegrationParent,
            state: head.state.id.clone(),
        }];
        let attempt = self.attempt_of(proposal)?;
        let current = self.attempt_head(&attempt)?;
        if current.commit == proposal.commit {
            match self.append(
                proposal,
                Kind::Failed,
                composed,
                extra.clone(),
                std::slice::from_ref(&head.commit),
                Some("final validation failed".into()),
            ) {
                Ok(failed) => return Ok(failed),
                Err(Error::HeadMoved { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        // The attempt moved on: record the failure without moving its head.
        let mut parents = vec![Parent {
            role: Role::RunParent,
            state: proposal.state.id.clone(),
        }];
        parents.extend(extra);
        let state = State {
            id: new_state_id(Kind::Failed),
            task: proposal.state.task.clone(),
            attempt: proposal.state.attempt.clone(),
            base: proposal.state.base.clone(),
            agent: proposal.state.agent.clone(),
            tree: composed.to_string(),
            parents,
            prompt_digest: None,
            summary: Some("final validation failed".into()),
            created_at: now_rfc3339(),
        };
        let loaded = self.write(&state, &[proposal.commit.clone(), head.commit.clone()])?;
        self.pin(&loaded)?;
        Ok(loaded)
    }

    /// `hop undo`: records a new accepted state whose tree is the one before the last landing
    /// not yet undone (forward-only: the chain only grows).
    pub fn undo(&self) -> Result<Undone, Error> {
        let head = self.accepted()?;
        let plan = states::undo_plan(&head.state, |id| self.load(id).ok().map(|l| l.state))?;
        let restores = self.load(&plan.restores)?;
        let state = State {
            id: new_state_id(Kind::Accepted),
            task: None,
            attempt: None,
            base: None,
            agent: None,
            tree: restores.state.tree.clone(),
            parents: vec![
                Parent {
                    role: Role::CanonicalParent,
                    state: head.state.id.clone(),
                },
                Parent {
                    role: Role::Reverts,
                    state: plan.reverts.clone(),
                },
                Parent {
                    role: Role::Restores,
                    state: plan.restores.clone(),
                },
            ],
            prompt_digest: None,
            summary: Some(format!("undo {}", plan.reverts)),
            created_at: now_rfc3339(),
        };
        let loaded = self.write(&state, std::slice::from_ref(&head.commit))?;
        self.store
            .hop_move_ref(Store::hop_accepted_ref(), &head.commit, &loaded.commit)
            .map_err(moved)?;
        self.pin(&loaded)?;
        Ok(Undone {
            accepted: loaded,
            reverts: plan.reverts,
            restores: plan.restores,
        })
    }

    /// Returns the exact prompt bytes of a prompt state.
    pub fn prompt_bytes(&self, id: &StateId) -> Result<Option<Vec<u8>>, Error> {
        match self.store.hop_ref(&Self::prompt_ref(id))? {
            Some(commit) => Ok(self.store.hop_read_blob(&commit, "prompt")?),
            None => Ok(None),
        }
    }

    /// `hop state`: one state with its prompt and checks.
    pub fn state(&self, id: &StateId) -> Result<StateView, Error> {
        let loaded = self.load(id)?;
        let prompt = self
            .prompt_bytes(id)?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        Ok(StateView {
            pin: Store::hop_state_ref(id.as_str()),
            prompt,
            digest_ok: loaded.recorded_digest.as_deref() == Some(&loaded.state.digest()),
            checks: self.checks_for(&loaded.state.tree)?,
            loaded,
        })
    }

    /// Returns the accepted chain from `head`, newest first.
    pub fn history(&self, head: &Loaded) -> Result<Vec<Loaded>, Error> {
        let mut out = vec![head.clone()];
        let mut current = head.clone();
        while let Some(parent) = current.state.parent(Role::CanonicalParent).cloned() {
            current = self.load(&parent)?;
            out.push(current.clone());
        }
        Ok(out)
    }

    /// `hop status`: the accepted head, its history and every attempt.
    pub fn status(&self) -> Result<Status, Error> {
        let accepted = self.accepted()?;
        let history = self
            .history(&accepted)?
            .into_iter()
            .map(|l| l.state.id)
            .collect();
        let mut attempts = Vec::new();
        for (name, commit) in self.store.list(&Store::hop_attempts_prefix())? {
            let head = self.load_commit(&commit)?;
            let attempt = name
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            let workspace = attempt
                .parse::<AttemptId>()
                .map(|a| self.workspace(&a))
                .unwrap_or_default();
            attempts.push(AttemptView {
                attempt,
                task: head.state.task.clone(),
                agent: head.state.agent.clone(),
                base: head.state.base.clone(),
                status: states::attempt_status(head.kind),
                head_kind: head.kind,
                head: head.state.id,
                workspace_exists: workspace.is_dir(),
                workspace: workspace.display().to_string(),
            });
        }
        Ok(Status {
            accepted,
            history,
            attempts,
            states: self.store.list(refs_states())?.len(),
        })
    }

    /// `hop doctor`: checks every state reachable from hop's refs; with `repair`, re-creates
    /// the refs that can be re-derived (unpinned states found through the chain or their
    /// children, a missing accepted ref) and checks again.
    pub fn doctor(&self, repair: bool) -> Result<Doctor, Error> {
        let first = self.diagnose()?;
        if !repair || first.problems.iter().all(|p| !p.repairable) {
            return Ok(first);
        }
        let mut repaired = Vec::new();
        for problem in &first.problems {
            if let (true, Some(name), Some(commit)) =
                (problem.repairable, &problem.pin, &problem.commit)
                && let Some(commit) = self.store.hop_commit_id(commit)
                && self.store.hop_create_ref(name, &commit).is_ok()
            {
                repaired.push(name.clone());
            }
        }
        let mut again = self.diagnose()?;
        again.repaired = repaired;
        Ok(again)
    }

    fn diagnose(&self) -> Result<Doctor, Error> {
        let mut problems: Vec<Problem> = Vec::new();
        let mut found: BTreeMap<StateId, (CommitId, trailers::Parsed, TreeId, Vec<CommitId>)> =
            BTreeMap::new();
        let mut pinned: BTreeMap<StateId, CommitId> = BTreeMap::new();
        let mut queue: Vec<CommitId> = Vec::new();
        for (name, commit) in self.store.list(refs_states())? {
            let id_text = name.rsplit('/').next().unwrap_or_default().to_owned();
            match id_text.parse::<StateId>() {
                Ok(id) => {
                    pinned.insert(id, commit.clone());
                }
                Err(e) => problems.push(Problem::new(Some(&id_text), &e.to_string())),
            }
            queue.push(commit);
        }
        let accepted = self.store.hop_ref(Store::hop_accepted_ref())?;
        queue.extend(accepted.iter().cloned());
        for (_name, commit) in self.store.list(&Store::hop_attempts_prefix())? {
            queue.push(commit);
        }
        let mut seen = BTreeSet::new();
        while let Some(commit) = queue.pop() {
            if !seen.insert(commit.clone()) {
                continue;
            }
            let Ok((tree, parents, message)) = self.store.hop_read_commit(&commit) else {
                problems.push(Problem::new(None, &format!("commit {commit} is missing")));
                continue;
            };
            let Ok(parsed) = trailers::parse(&message) else {
                // A user commit (the parent of the initial accepted state) ends the walk.
                continue;
            };
            queue.extend(parents.iter().cloned());
            found.insert(parsed.state.id.clone(), (commit, parsed, tree, parents));
        }
        for (id, commit) in &pinned {
            match found.get(id) {
                Some((c, ..)) if c == commit => {}
                _ => problems.push(Problem::new(
                    Some(id.as_str()),
                    &format!(
                        "{} pins {commit}, which does not carry state {id}",
                        Store::hop_state_ref(id.as_str())
                    ),
                )),
            }
        }
        for (id, (commit, parsed, tree, parents)) in &found {
            let state = &parsed.state;
            let mut say = |text: String| problems.push(Problem::new(Some(id.as_str()), &text));
            if !self.store.hop_has_tree(tree) {
                say(format!("tree {tree} is missing"));
            }
            if tree.as_str() != state.tree {
                say(format!(
                    "commit tree {tree} does not match the recorded tree {}",
                    state.tree
                ));
            }
            if parsed.recorded_digest.as_deref() != Some(&state.digest()) {
                say("digest does not recompute".into());
            }
            let initial = state.kind() == Kind::Accepted
                && state.parent(Role::CanonicalParent).is_none()
                && parents
                    .first()
                    .is_none_or(|p| !found.values().any(|(c, ..)| c == p));
            for role in state.missing_provenance(initial) {
                say(format!("missing required provenance: {role}"));
            }
            for parent in &state.parents {
                if !found.contains_key(&parent.state) && !pinned.contains_key(&parent.state) {
                    say(format!("parent {} ({}) is missing", parent.state, parent.role.name()));
                }
            }
            if state.kind() == Kind::Prompt {
                match self.prompt_bytes(id)? {
                    None => say("the exact prompt bytes are missing".into()),
                    Some(bytes) => {
                        if state.prompt_digest.as_deref() != Some(&states::prompt_digest(&bytes)) {
                            say("the prompt bytes do not match the prompt digest".into());
                        }
                    }
                }
            }
            if !pinned.contains_key(id) {
                problems.push(Problem {
                    state: Some(id.to_string()),
                    problem: format!("{} is missing", Store::hop_state_ref(id.as_str())),
                    repairable: true,
                    pin: Some(Store::hop_state_ref(id.as_str())),
                    commit: Some(commit.to_string()),
                });
            }
        }
        match &accepted {
            None => {
                // Re-derivable when exactly one pinned accepted state has no successor.
                let named: BTreeSet<&StateId> = found
                    .values()
                    .filter_map(|(_, p, ..)| p.state.parent(Role::CanonicalParent))
                    .collect();
                let tips: Vec<(&StateId, &CommitId)> = found
                    .iter()
                    .filter(|(id, _)| id.kind() == Kind::Accepted && !named.contains(id))
                    .map(|(id, (c, ..))| (id, c))
                    .collect();
                if !found.is_empty() || !pinned.is_empty() {
                    problems.push(Problem {
                        state: tips.first().map(|(id, _)| id.to_string()),
                        problem: format!("{} is missing", Store::hop_accepted_ref()),
                        repairable: tips.len() == 1,
                        pin: Some(Store::hop_accepted_ref().to_owned()),
                        commit: tips.first().map(|(_, c)| c.to_string()),
                    });
                }
            }
            Some(commit) => match self.load_commit(commit) {
                Ok(head) if head.kind == Kind::Accepted => {}
                _ => problems.push(Problem::new(
                    None,
                    &format!(
                        "{} points at {commit}, which is not an accepted state",
                        Store::hop_accepted_ref()
                    ),
                )),
            },
        }
        Ok(Doctor {
            ok: problems.is_empty(),
            states: found.len(),
            problems,
            repaired: Vec::new(),
        })
    }
}

fn refs_states() -> &'static str {
    store::refs::HOP_STATES_PREFIX
}

fn gix_ref_invalid(name: &str) -> bool {
    name.parse::<store::refs::LoopId>().is_err()
}

/// One problem `hop doctor` found.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// The state involved, if any.
    pub state: Option<String>,
    /// What is wrong.
    pub problem: String,
    /// Whether `--repair` can re-derive it.
    pub repairable: bool,
    /// The ref a repair would create.
    #[serde(skip_serializing_if = "Option::is_none", rename = "ref")]
    pub pin: Option<String>,
    /// The commit it would point at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl Problem {
    fn new(state: Option<&str>, problem: &str) -> Self {
        Self {
            state: state.map(str::to_owned),
            problem: problem.to_owned(),
            repairable: false,
            pin: None,
            commit: None,
        }
    }
}

/// What `hop doctor` found.
#[derive(Debug, Clone, Serialize)]
pub struct Doctor {
    /// Whether nothing is wrong.
    pub ok: bool,
    /// How many states were checked.
    pub states: usize,
    /// What is wrong.
    pub problems: Vec<Problem>,
    /// The refs `--repair` re-created.
    pub repaired: Vec<String>,
}
